//! kill -9 at random moments of a stream of deposits, payments and
//! withdrawals, three times over, each time restarted on the same data:
//! every order the service acknowledged exists in the state it was
//! acknowledged in, every acknowledged payment's callback arrives (more than
//! once only where a crash cut an attempt short), and the ledger check
//! finds no difference. Runs the real binary; on PostgreSQL when
//! PAYMENTS_TEST_DATABASE_URL is set, else on the sandbox's SQLite file.

mod support;

use rand::Rng;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{
    assert_ledger_clean, database_url, free_port, merchant_post, operator, operator_deposit, start,
    wait_ready,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const KILLS: usize = 3;
const WORKERS: usize = 4;

/// Callbacks received, counted per (order_no, status).
type Seen = Arc<Mutex<HashMap<(String, String), usize>>>;

async fn receiver() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/cb", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let counts = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let counts = counts.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Read until the JSON body closes; the bodies are small.
                while let Ok(n) = stream.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.ends_with(b"}") {
                        break;
                    }
                }
                let text = String::from_utf8_lossy(&buf);
                if let Some(body) = text.split("\r\n\r\n").nth(1) {
                    if let Ok(v) = serde_json::from_str::<Value>(body) {
                        let key = (
                            v["order_no"].as_str().unwrap_or_default().to_string(),
                            v["status"].as_str().unwrap_or_default().to_string(),
                        );
                        if let Ok(mut c) = counts.lock() {
                            *c.entry(key).or_default() += 1;
                        }
                    }
                }
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    (url, seen)
}

#[derive(Default)]
struct Acknowledged {
    /// order_no → the status the service answered with.
    deposits: HashMap<String, String>,
    withdrawals: HashMap<String, String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_stream_loses_nothing_acknowledged() {
    let data = std::env::temp_dir().join(format!("payments-stream-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let database_url = database_url().await;
    let port = free_port();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let (callback_url, seen) = receiver().await;

    let mut service = start(&data, port, &database_url);
    wait_ready(&http, &service.base).await;
    let (key, op) = (service.key.clone(), service.operator.clone());
    let acked: Arc<Mutex<Acknowledged>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));

    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let (http, acked, stop, callback_url) = (
            http.clone(),
            acked.clone(),
            stop.clone(),
            callback_url.clone(),
        );
        let (base, key, op) = (service.base.clone(), key.clone(), op.clone());
        workers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let no = format!("S{w}-{i}");
                let body = json!({"merchant_order_no": no, "amount": 100, "currency_code": "THB", "callback_url": callback_url});
                let Ok((200, created)) =
                    merchant_post(&http, &base, &key, "/api/v1/merchant/orders/deposit", &body).await
                else {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                let order_no = created["order_no"].as_str().unwrap_or_default().to_string();
                acked.lock().unwrap().deposits.insert(order_no.clone(), "pending".into());
                let paid = http
                    .post(format!("{base}/api/v1/sandbox/deposits/{order_no}/pay"))
                    .header("authorization", format!("Bearer {op}"))
                    .json(&json!({}))
                    .send()
                    .await;
                if paid.is_ok_and(|r| r.status().is_success()) {
                    acked.lock().unwrap().deposits.insert(order_no, "completed".into());
                }
                if i % 3 == 0 {
                    let body = json!({"merchant_order_no": format!("W{w}-{i}"), "amount": 50, "currency_code": "THB",
                        "beneficiary_name": "Somchai Jaidee", "beneficiary_account": "0123456789", "beneficiary_bank_code": "SCB"});
                    if let Ok((200, w)) =
                        merchant_post(&http, &base, &key, "/api/v1/merchant/orders/withdrawal", &body).await
                    {
                        let no = w["order_no"].as_str().unwrap_or_default().to_string();
                        let status = w["status"].as_str().unwrap_or_default().to_string();
                        acked.lock().unwrap().withdrawals.insert(no, status);
                    }
                }
            }
        }));
    }

    // kill -9 at random moments, restarting on the same data each time.
    for _ in 0..KILLS {
        let pause = rand::thread_rng().gen_range(300..1500);
        tokio::time::sleep(Duration::from_millis(pause)).await;
        service.child.kill().unwrap();
        service.child.wait().unwrap();
        service = start(&data, port, &database_url);
        wait_ready(&http, &service.base).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }

    // Attempts a crash cut short are SENDING: five minutes on the sandbox's
    // clock and the sweep sends them again.
    operator(
        &http,
        &service,
        "POST",
        "/api/v1/sandbox/clock/advance",
        json!({"seconds": 301}),
    )
    .await;

    let acked = Arc::try_unwrap(acked).ok().unwrap().into_inner().unwrap();
    let completed: Vec<&String> = acked
        .deposits
        .iter()
        .filter(|(_, s)| *s == "completed")
        .map(|(no, _)| no)
        .collect();
    assert!(
        completed.len() >= 10,
        "the stream got going: {} paid",
        completed.len()
    );
    for (order_no, status) in &acked.deposits {
        let order = operator_deposit(&http, &service, order_no).await;
        // Acknowledged pending may since have been paid (the pay call died
        // with the process after its commit), never the other way round.
        let now = order["status"].as_str().unwrap_or_default();
        assert!(
            now == status || (status == "pending" && now == "completed"),
            "{order_no}: acknowledged {status}, now {now}"
        );
    }
    for (order_no, status) in &acked.withdrawals {
        let order = operator(
            &http,
            &service,
            "GET",
            &format!("/api/v1/operator/withdrawals/{order_no}"),
            json!({}),
        )
        .await;
        assert!(
            order["status"].is_string(),
            "{order_no} ({status}) exists: {order}"
        );
    }
    // Every acknowledged payment is called back; twice at most per crash.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let missing: Vec<&&String> = {
            let seen = seen.lock().unwrap();
            completed
                .iter()
                .filter(|no| !seen.contains_key(&((**no).clone(), "completed".to_string())))
                .collect()
        };
        if missing.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "callbacks never arrived for {missing:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let most = seen.lock().unwrap().values().copied().max().unwrap_or(0);
    assert!(most <= 1 + KILLS, "a callback arrived {most} times");

    assert_ledger_clean(&http, &service).await;
    println!(
        "crash stream: {KILLS} kills, {} deposits ({} paid) and {} withdrawals acknowledged, all present; callbacks: {} distinct, at most {most} each; ledger clean",
        acked.deposits.len(),
        completed.len(),
        acked.withdrawals.len(),
        seen.lock().unwrap().len()
    );
    service.child.kill().unwrap();
    service.child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}
