//! kill -9 in the middle of a callback attempt loses nothing: the record
//! was committed with the state change, it stays SENDING while the process
//! is dead, and after a restart the sweep returns it and it is delivered.
//! Runs the real binary; on PostgreSQL when PAYMENTS_TEST_DATABASE_URL is
//! set, else on the sandbox's SQLite file.

mod support;

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::{
    chrono_now, database_url, delivery, free_port, operator, start_with, wait_ready, Service,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A receiver that never answers its first request (the attempt hangs
/// until the process is killed) and answers 200 afterwards.
async fn receiver() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/cb", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = stream.read(&mut buf).await;
                if n == 0 {
                    // Hold the connection open and say nothing.
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                } else {
                    let _ = stream
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                        )
                        .await;
                }
            });
        }
    });
    (url, seen)
}

/// A service killed with `kill -9` while its first callback attempt was
/// held by the receiver, and started again on the same data.
struct Killed {
    http: reqwest::Client,
    second: Service,
    order_no: String,
    seen: Arc<AtomicUsize>,
    data: std::path::PathBuf,
}

async fn killed_mid_attempt(name: &str, env: &[(&str, &str)]) -> Killed {
    let data = std::env::temp_dir().join(format!("payments-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let database_url = database_url().await;
    let port = free_port();
    let http = reqwest::Client::new();
    let (callback_url, seen) = receiver().await;

    let mut first = start_with(&data, port, &database_url, env);
    wait_ready(&http, &first.base).await;
    // A signed merchant request: the body's fields, sorted, k=v&..., key.
    let order = "CRASH-1";
    let body = json!({"merchant_order_no": order, "amount": 100, "currency_code": "THB", "callback_url": callback_url});
    let canonical = format!(
        "amount=100&callback_url={callback_url}&currency_code=THB&merchant_order_no={order}"
    );
    let fields = payments_wire::SigningFields::from_json_body(body.to_string().as_bytes()).unwrap();
    assert_eq!(fields.canonical(), canonical);
    let created: Value = http
        .post(format!("{}/api/v1/merchant/orders/deposit", first.base))
        .header("x-api-key", &first.key)
        .header("x-timestamp", chrono_now().to_string())
        .header("x-signature", payments_wire::sign(&fields, &first.key))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let order_no = created["order_no"].as_str().expect("a deposit").to_string();
    operator(
        &http,
        &first,
        "POST",
        &format!("/api/v1/sandbox/deposits/{order_no}/pay"),
        json!({}),
    )
    .await;

    // The attempt is under way (the receiver holds it): kill -9 now.
    for _ in 0..200 {
        if seen.load(Ordering::SeqCst) >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "the first attempt reached the receiver"
    );
    first.child.kill().unwrap();
    first.child.wait().unwrap();

    let second = start_with(&data, port, &database_url, env);
    wait_ready(&http, &second.base).await;
    Killed {
        http,
        second,
        order_no,
        seen,
        data,
    }
}

/// Without a stable instance name the restarted service cannot tell its
/// old claims: the stuck sweep returns the delivery after 5 minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_survives_kill_9_mid_attempt() {
    let killed = killed_mid_attempt("crash", &[]).await;
    let (http, second) = (&killed.http, &killed.second);
    let stuck = delivery(http, second, &killed.order_no).await;
    assert_eq!(stuck["status"], "SENDING", "{stuck}");
    // Five minutes later on the sandbox's clock the sweep returns it.
    let advance = json!({"seconds": 301});
    operator(
        http,
        second,
        "POST",
        "/api/v1/sandbox/clock/advance",
        advance,
    )
    .await;
    delivered_once_more(killed).await;
}

/// The delivery cut off by the crash reaches SUCCESS (polled, within 10 s)
/// with exactly one more attempt; then the instance and its data go.
async fn delivered_once_more(killed: Killed) {
    let Killed {
        http,
        mut second,
        order_no,
        seen,
        data,
    } = killed;
    let (http, order_no) = (&http, order_no.as_str());
    let mut last = Value::Null;
    for _ in 0..400 {
        last = delivery(http, &second, order_no).await;
        if last["status"] == "SUCCESS" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(last["status"], "SUCCESS", "{last}");
    assert_eq!(seen.load(Ordering::SeqCst), 2, "sent once more, not lost");
    second.child.kill().unwrap();
    second.child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}

/// With `PAYMENTS_INSTANCE_ID` the restarted instance gives back what it
/// held when it died, and the callback goes out at once, with no clock
/// moved for the sweep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_instance_gives_back_its_claims_at_once() {
    let killed = killed_mid_attempt("reclaim", &[("PAYMENTS_INSTANCE_ID", "payments-0")]).await;
    delivered_once_more(killed).await;
}
