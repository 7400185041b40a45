//! The simulator as its users start it: the binary, out of process. It
//! refuses a short secret and a bad faults file by name, refuses unsigned
//! calls with the envelope, and keeps what it took across a restart asked
//! for at `/control/restart` and across SIGKILL.

use merchant_client::channel::types as wire;
use merchant_client::channel::Client;
use merchant_client::ChannelSecret;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const SECRET: &str = "a secret shared by the simulator and the service";

struct Sim {
    child: Child,
    url: String,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(secret: &str, dir: &std::path::Path, bind: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_payments-channel-sim"));
    c.args(["--bind", bind, "--settle-by-control", "--data-dir"])
        .arg(dir)
        .env("PAYMENTS_CHANNEL_SIM_SECRET", secret)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn start(dir: &std::path::Path, bind: &str) -> Sim {
    let mut child = command(SECRET, dir, bind).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("payments-channel-sim listening on ")
        .unwrap_or_else(|| panic!("unexpected first line `{line}`"))
        .to_string();
    Sim { child, url }
}

fn payout(order_no: &str) -> wire::PayoutRequest {
    wire::PayoutRequest {
        order_no: wire::OrderNo(order_no.into()),
        amount: payments_wire::DecimalString("100.0000".parse().unwrap()),
        currency_code: wire::CurrencyCode("THB".into()),
        bank_code: "SCB".into(),
        account_no: "1234567890".into(),
        account_holder: "Somchai Jaidee".into(),
        notify_url: "http://127.0.0.1:9/api/v1/channels/SIM/notifications".into(),
    }
}

/// The payout's status at the simulator, `None` when it has no record;
/// while it restarts (its port closed for a moment) asked again, for up
/// to 10 s.
async fn inquire(client: &Client, order_no: &str) -> Option<wire::PayoutStatus> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match client.inquire_payout(&wire::OrderNo(order_no.into())).await {
            Ok(p) => return Some(p.into_inner().status),
            Err(merchant_client::channel::Error::ErrorResponse(e)) if e.status() == 404 => {
                return None
            }
            Err(merchant_client::channel::Error::CommunicationError(e))
                if std::time::Instant::now() < deadline =>
            {
                eprintln!("asked again: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn a_short_secret_a_bad_faults_file_or_no_sender_stops_it_naming_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let out = command("short", dir.path(), "127.0.0.1:0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("the secret is 5 bytes; it needs at least 32"),
        "{said}"
    );

    let faults = dir.path().join("faults.json");
    std::fs::write(&faults, r#"{"drop_percent": 120}"#).unwrap();
    let out = command(SECRET, dir.path(), "127.0.0.1:0")
        .arg("--faults")
        .arg(&faults)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("drop_percent is 120; a percentage is 0 to 100"),
        "{said}"
    );

    // No sender would leave every notification waiting for ever.
    let out = command(SECRET, dir.path(), "127.0.0.1:0")
        .args(["--notify-senders", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("--notify-senders") && said.contains("0 is not in 1.."),
        "{said}"
    );
}

#[tokio::test]
async fn what_it_took_survives_a_restart_and_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = start(dir.path(), "127.0.0.1:0");
    let client = Client::new(&sim.url, ChannelSecret::new(SECRET.as_bytes(), &sim.url));
    let http = reqwest::Client::new();

    let unsigned = http
        .post(format!("{}/payouts", sim.url))
        .json(&payout("W-0"))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    let envelope: serde_json::Value = unsigned.json().await.unwrap();
    assert_eq!(envelope["error_code"], "MISSING_HEADER");

    let bad = http
        .put(format!("{}/control/faults", sim.url))
        .json(&serde_json::json!({"timeout_percent": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let envelope: serde_json::Value = bad.json().await.unwrap();
    assert!(envelope["message"].as_str().unwrap().contains("hang_ms"));

    for no in ["W-1", "W-2"] {
        let taken = client.dispatch_payout(&payout(no)).await.unwrap();
        assert_eq!(taken.status, wire::PayoutStatus::Accepted);
    }
    let settled = http
        .post(format!("{}/control/payouts/W-1/settle", sim.url))
        .send()
        .await
        .unwrap();
    assert_eq!(settled.status(), 202);
    assert_eq!(
        inquire(&client, "W-1").await,
        Some(wire::PayoutStatus::Completed)
    );

    let restarted = http
        .post(format!("{}/control/restart", sim.url))
        .send()
        .await
        .unwrap();
    assert_eq!(restarted.status(), 202);
    assert_eq!(
        inquire(&client, "W-1").await,
        Some(wire::PayoutStatus::Completed)
    );
    assert_eq!(
        inquire(&client, "W-2").await,
        Some(wire::PayoutStatus::Accepted)
    );

    let bind = sim.url.trim_start_matches("http://").to_string();
    let _ = sim.child.kill();
    let _ = sim.child.wait();
    let again = start(dir.path(), &bind);
    assert_eq!(again.url, sim.url);
    std::mem::forget(sim);
    assert_eq!(
        inquire(&client, "W-1").await,
        Some(wire::PayoutStatus::Completed)
    );
    assert_eq!(
        inquire(&client, "W-2").await,
        Some(wire::PayoutStatus::Accepted)
    );
    assert_eq!(inquire(&client, "W-3").await, None);
    // The same payout again is the same payout; other content is refused.
    let same = client.dispatch_payout(&payout("W-2")).await.unwrap();
    assert_eq!(same.payout_reference, "SIMPO-W-2");
    let mut other = payout("W-2");
    other.account_no = "9876543210".into();
    match client.dispatch_payout(&other).await {
        Err(merchant_client::channel::Error::ErrorResponse(e)) => assert_eq!(e.status(), 409),
        answer => panic!("{answer:?}"),
    }
}
