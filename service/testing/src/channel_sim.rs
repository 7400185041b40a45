//! `payments-channel-sim` as a separate process, for tests and the
//! conformance suite: started on a free port with a fresh journal and a
//! fresh secret, killed with SIGKILL and started again on the same port and
//! journal, as a crashed channel would be.

use anyhow::{bail, Context, Result};
use payments_service::config::{ChannelConfig, Config};
use payments_service::domain::routing::Profile;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub struct ChannelSim {
    child: Option<Child>,
    /// The simulator's base URL (the protocol, the payment page, `/control`).
    pub url: String,
    /// The secret it shares with the service's channel configuration.
    pub secret: String,
    data_dir: PathBuf,
    args: Vec<String>,
}

/// The simulator's executable: `PAYMENTS_CHANNEL_SIM_BIN`, or the one
/// beside this test's build (`cargo test --workspace` builds it). Not
/// built here: a `cargo test` that runs this holds the build directory's
/// lock, so a build from inside would wait for ever.
pub fn binary() -> Result<PathBuf> {
    if let Ok(path) = std::env::var("PAYMENTS_CHANNEL_SIM_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().context("locating this executable")?;
    let profile_dir = exe
        .ancestors()
        .find(|dir| dir.join("deps").is_dir())
        .context(
            "this executable is not in a cargo target directory; set PAYMENTS_CHANNEL_SIM_BIN",
        )?
        .to_path_buf();
    let sim = profile_dir.join("payments-channel-sim");
    if !sim.exists() {
        bail!(
            "{} is missing: `cargo build -p payments-channel-sim` (or `cargo test --workspace`) \
             builds it, or set PAYMENTS_CHANNEL_SIM_BIN",
            sim.display()
        );
    }
    Ok(sim)
}

impl ChannelSim {
    /// Starts one with `args` added (`--settle-after-ms 50`, `--faults f.json`, ...).
    pub fn start(args: &[&str]) -> Result<ChannelSim> {
        let data_dir =
            std::env::temp_dir().join(format!("payments-channel-sim-{}", uuid::Uuid::new_v4()));
        let secret = format!("sim-{}", uuid::Uuid::new_v4().simple());
        let mut sim = ChannelSim {
            child: None,
            url: String::new(),
            secret,
            data_dir,
            args: args.iter().map(|a| a.to_string()).collect(),
        };
        sim.spawn("127.0.0.1:0")?;
        Ok(sim)
    }

    fn spawn(&mut self, bind: &str) -> Result<()> {
        let mut child = Command::new(binary()?)
            .args(["--bind", bind, "--exit-on-stdin-close", "--data-dir"])
            .arg(&self.data_dir)
            .args(&self.args)
            .env("PAYMENTS_CHANNEL_SIM_SECRET", &self.secret)
            .env("PAYMENTS_CHANNEL_SIM_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting payments-channel-sim")?;
        let stdout = child.stdout.take().context("the simulator's stdout")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("reading the simulator's first line")?;
        let Some(url) = line
            .trim()
            .strip_prefix("payments-channel-sim listening on ")
        else {
            let _ = child.kill();
            bail!("payments-channel-sim did not start: `{}`", line.trim());
        };
        self.url = url.to_string();
        self.child = Some(child);
        Ok(())
    }

    /// The sandbox's simulator channel (same id, code, currencies and
    /// costs) as an `http` channel to this simulator: what the production
    /// profile runs the suite with.
    pub fn channel_config(&self) -> ChannelConfig {
        let mut channel = Config::defaults(Profile::Sandbox).channels.remove(0);
        channel.kind = "http".into();
        channel.base_url = Some(self.url.clone());
        channel.secret = Some(self.secret.clone());
        channel.request_timeout_ms = Some(5_000);
        // On the loopback address, beside the service.
        channel.private_network = true;
        channel
    }

    /// `channel_config`, as another channel: its own id and code.
    pub fn channel_config_as(&self, id: &str, code: &str) -> ChannelConfig {
        ChannelConfig {
            id: id.into(),
            code: code.into(),
            name: format!("Simulator {code}"),
            ..self.channel_config()
        }
    }

    /// Starts one whose faults are `faults` (JSON, as `--faults` reads it).
    pub fn start_with_faults(faults: &serde_json::Value, args: &[&str]) -> Result<ChannelSim> {
        let file =
            std::env::temp_dir().join(format!("payments-sim-faults-{}.json", uuid::Uuid::new_v4()));
        std::fs::write(&file, faults.to_string()).context("writing the faults file")?;
        let path = file.to_string_lossy().to_string();
        let mut all = vec!["--faults", path.as_str()];
        all.extend_from_slice(args);
        let sim = ChannelSim::start(&all);
        let _ = std::fs::remove_file(&file);
        sim
    }

    /// SIGKILL: no chance to finish anything in flight.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Killed and started again on the same address and journal.
    pub fn restart(&mut self) -> Result<()> {
        self.kill();
        let bind = self.url.trim_start_matches("http://").to_string();
        // The port was just released; another process may race for it,
        // which a test would see as a start-up failure naming the address.
        self.spawn(&bind)
    }
}

impl Drop for ChannelSim {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// Waits on another process (the simulator, the service as a process),
/// not on a timer of ours: checks `done` every 50 ms until it holds, and
/// fails naming `what` after `limit`.
pub async fn until<F: std::future::Future<Output = bool>>(
    what: &str,
    limit: std::time::Duration,
    mut done: impl FnMut() -> F,
) {
    let deadline = std::time::Instant::now() + limit;
    while !done().await {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within {} s",
            limit.as_secs()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
