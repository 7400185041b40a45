//! The sandbox's out-of-process channel: with `start_channel_sim`, the
//! service starts `payments channel-sim` (this same executable) as a child
//! on a free loopback port, with a fresh secret and its journal in the data
//! directory, and points the simulator's channel at it as kind `http`, so
//! that `cargo run -p payments-service` exercises the adapter protocol
//! with nothing else to start. The child exits when the service does: it
//! watches the standard input the service holds open.

use crate::config::Config;
use anyhow::{bail, Context, Result};
use rand::RngCore;
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

/// How long the child has to print the address it listens on.
const STARTUP: Duration = Duration::from_secs(15);

/// The running child; killed when dropped.
pub struct ChildSim {
    child: Child,
    /// Held open for the child's lifetime: its end is the child's signal
    /// to exit, should this process die without dropping it.
    _stdin: ChildStdin,
    pub url: String,
    secret: String,
}

impl Drop for ChildSim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ChildSim {
    /// Starts `exe channel-sim` with its journal under `data_dir` and waits
    /// for the line that names its address.
    pub fn start(exe: &Path, data_dir: &Path) -> Result<ChildSim> {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut child = Command::new(exe)
            .arg("channel-sim")
            .args(["--bind", "127.0.0.1:0", "--exit-on-stdin-close"])
            .arg("--data-dir")
            .arg(data_dir.join("channel-sim"))
            .env("PAYMENTS_CHANNEL_SIM_SECRET", &secret)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {} channel-sim", exe.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("the channel simulator's standard input and output are not piped");
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = std::io::BufReader::new(stdout).lines();
            let first = lines.next();
            let _ = tx.send(first);
            // Keep draining, so the child never blocks on a full pipe.
            for _ in lines {}
        });
        let mut sim = ChildSim {
            child,
            _stdin: stdin,
            url: String::new(),
            secret,
        };
        let line = match rx.recv_timeout(STARTUP) {
            Ok(Some(Ok(line))) => line,
            _ => bail!(
                "the channel simulator (start_channel_sim) did not start within {} s; \
                 its error is above",
                STARTUP.as_secs()
            ),
        };
        sim.url = line
            .strip_prefix("payments-channel-sim listening on ")
            .map(str::to_string)
            .with_context(|| format!("the channel simulator printed `{line}`"))?;
        Ok(sim)
    }

    /// Points every `simulator` channel at the child, as kind `http`.
    pub fn adopt(&self, config: &mut Config) {
        for channel in config.channels.iter_mut().filter(|c| c.kind == "simulator") {
            channel.kind = "http".into();
            channel.base_url = Some(self.url.clone());
            channel.secret = Some(self.secret.clone());
            channel.request_timeout_ms.get_or_insert(5_000);
            // The child listens on the loopback address, beside the service.
            channel.private_network = true;
        }
    }
}
