//! The service as an operator runs it: the real binary, its `/metrics`
//! counting exactly what happened, and SIGTERM letting work under way
//! finish (or giving back what it could not). On PostgreSQL when
//! PAYMENTS_TEST_DATABASE_URL is set, else on the sandbox's SQLite file.

mod support;

use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};
use support::{
    chrono_now, database_url, delivery, free_port, merchant_post, operator, start_with, wait_ready,
    Service,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// A callback receiver. Each request is reported on `arrived`; it is
/// answered 200 once `open` is true (at once if it already is), or never.
struct Receiver {
    url: String,
    arrived: mpsc::UnboundedReceiver<()>,
    open: watch::Sender<bool>,
}

impl Receiver {
    async fn start(open: bool) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/cb", listener.local_addr().unwrap());
        let (tell, arrived) = mpsc::unbounded_channel();
        let (gate, opened) = watch::channel(open);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let tell = tell.clone();
                let mut opened = opened.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 16384];
                    let _ = stream.read(&mut buf).await;
                    let _ = tell.send(());
                    if opened.wait_for(|open| *open).await.is_ok() {
                        let _ = stream
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                    }
                });
            }
        });
        Receiver {
            url,
            arrived,
            open: gate,
        }
    }

    async fn next_arrival(&mut self) {
        tokio::time::timeout(Duration::from_secs(20), self.arrived.recv())
            .await
            .expect("a callback arrived")
            .expect("the receiver runs");
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "payments-ops-{name}-{}-{}",
        std::process::id(),
        chrono_now()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A deposit with a callback to `url`, paid through the sandbox.
async fn paid_deposit(http: &reqwest::Client, s: &Service, name: &str, url: &str) -> String {
    let body = json!({
        "merchant_order_no": name,
        "amount": 100,
        "currency_code": "THB",
        "callback_url": url,
    });
    let (status, order) = merchant_post(
        http,
        &s.base,
        &s.key,
        "/api/v1/merchant/orders/deposit",
        &body,
    )
    .await
    .unwrap();
    assert_eq!(status, 200, "{order}");
    let order_no = order["order_no"].as_str().unwrap().to_string();
    operator(
        http,
        s,
        "POST",
        &format!("/api/v1/sandbox/deposits/{order_no}/pay"),
        json!({}),
    )
    .await;
    order_no
}

/// Every sample of a scrape, by name and sorted labels.
fn samples(text: &str) -> BTreeMap<String, Decimal> {
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, value) = line.rsplit_once(' ').expect("a sample line");
        let key = match series.split_once('{') {
            Some((name, labels)) => {
                let mut labels: Vec<&str> = labels.trim_end_matches('}').split(',').collect();
                labels.sort();
                format!("{name}{{{}}}", labels.join(","))
            }
            None => series.to_string(),
        };
        if let Ok(v) = Decimal::from_str(value) {
            out.insert(key, v);
        }
    }
    out
}

async fn scrape(http: &reqwest::Client, url: &str) -> String {
    let resp = http.get(url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let kind = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    resp.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_count_exactly_what_a_deposit_and_its_callback_did() {
    let data = scratch("metrics");
    let db = database_url().await;
    let metrics_port = free_port();
    let metrics_bind = format!("127.0.0.1:{metrics_port}");
    let mut s = start_with(
        &data,
        free_port(),
        &db,
        &[("PAYMENTS_METRICS_BIND", metrics_bind.as_str())],
    );
    let http = http();
    wait_ready(&http, &s.base).await;
    let metrics_url = format!("http://{metrics_bind}/metrics");
    // With its own address, the scrape is not on the API's.
    let on_api = http
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(on_api.status(), 404);

    let mut receiver = Receiver::start(true).await;
    let before = samples(&scrape(&http, &metrics_url).await);
    let order_no = paid_deposit(&http, &s, "METRICS-1", &receiver.url).await;
    receiver.next_arrival().await;
    // The attempt is counted once its outcome is recorded.
    let mut reads = 0;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        reads += 1;
        if delivery(&http, &s, &order_no).await["status"] == "SUCCESS" {
            break;
        }
        assert!(Instant::now() < deadline, "the delivery succeeded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let text = scrape(&http, &metrics_url).await;
    let after = samples(&text);

    let mut expected: BTreeMap<String, Decimal> = BTreeMap::new();
    let mut expect = |key: &str, n: i64| {
        expected.insert(key.to_string(), Decimal::from(n));
    };
    // The metrics server's own requests are not counted: only the API's.
    expect(
        r#"payments_http_requests_total{operation="create_deposit",status_class="2xx"}"#,
        1,
    );
    expect(
        r#"payments_http_requests_total{operation="pay_deposit",status_class="2xx"}"#,
        1,
    );
    // Each read of the delivery lists the order's deliveries, then reads one.
    expect(
        r#"payments_http_requests_total{operation="list_callback_deliveries",status_class="2xx"}"#,
        reads,
    );
    expect(
        r#"payments_http_requests_total{operation="read_callback_delivery",status_class="2xx"}"#,
        reads,
    );
    expect(
        r#"payments_orders_created_total{currency="THB",kind="deposit"}"#,
        1,
    );
    expect(
        r#"payments_order_state_changes_total{currency="THB",kind="deposit",status="completed"}"#,
        1,
    );
    // The create's row went by one insert statement (alone: nothing else
    // waited to go with it).
    expect("payments_deposit_insert_rows_count", 1);
    expect(r#"payments_callback_attempts_total{outcome="success"}"#, 1);
    expect("payments_callback_attempt_duration_seconds_count", 1);
    expect("payments_callback_first_attempt_delay_seconds_count", 1);
    // Every counter and histogram count moved by exactly what happened;
    // only the workers' passes move with time.
    let moved: BTreeMap<String, Decimal> = after
        .iter()
        .filter(|(k, _)| {
            (k.contains("_total") || k.ends_with("_count"))
                && !k.starts_with("payments_worker_runs_total")
        })
        .filter_map(|(k, v)| {
            let delta = *v - before.get(k).copied().unwrap_or_default();
            (!delta.is_zero()).then(|| (k.clone(), delta))
        })
        .filter(|(k, _)| !k.starts_with("payments_http_request_duration_seconds_count"))
        .collect();
    assert_eq!(moved, expected, "counters that moved");
    for op in ["create_deposit", "pay_deposit"] {
        let key = format!(r#"payments_http_request_duration_seconds_count{{operation="{op}"}}"#);
        assert_eq!(
            after[&key] - before.get(&key).copied().unwrap_or_default(),
            Decimal::ONE
        );
    }
    assert_eq!(
        after[r#"payments_callback_deliveries{state="SENDING"}"#],
        Decimal::ZERO
    );
    assert_eq!(
        after["payments_callback_oldest_due_age_seconds"],
        Decimal::ZERO
    );
    assert!(text.contains(r#"payments_build_info{version=""#), "{text}");
    // No label carries an order, the merchant's own number or a key.
    for secret in [&order_no, "METRICS-1", &s.key, &s.operator] {
        assert!(!text.contains(secret), "{secret} in the scrape");
    }
    // promtool checks this scrape in .ci/run.
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/ops");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("scrape.prom"), &text).unwrap();

    s.child.kill().unwrap();
    s.child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}

/// Sends SIGTERM (or another signal) to the service.
fn signal(s: &Service, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits (bounded) for the process to exit; its exit code and how long
/// that took.
fn exit_within(s: &mut Service, limit: Duration) -> (Option<i32>, Duration) {
    let started = Instant::now();
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            return (status.code(), started.elapsed());
        }
        assert!(
            started.elapsed() < limit,
            "the service did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) until the service's log says `words`.
fn logged(data: &std::path::Path, words: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let log = std::fs::read_to_string(data.join("stderr.log")).unwrap_or_default();
        if log.contains(words) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the log never said `{words}`");
}

/// A create-deposit request sent in two halves on one connection: the
/// headers and half the body now, the rest when `finish` is called.
struct SlowRequest {
    stream: TcpStream,
    rest: Vec<u8>,
}

impl SlowRequest {
    async fn begin(s: &Service, merchant_order_no: &str) -> SlowRequest {
        let body = json!({
            "merchant_order_no": merchant_order_no,
            "amount": 100,
            "currency_code": "THB",
        })
        .to_string();
        let fields = payments_wire::SigningFields::from_json_body(body.as_bytes()).unwrap();
        let signature = payments_wire::sign(&fields, &s.key);
        let head = format!(
            "POST /api/v1/merchant/orders/deposit HTTP/1.1\r\nhost: {host}\r\n\
             content-type: application/json\r\nx-api-key: {key}\r\nx-timestamp: {ts}\r\n\
             x-signature: {signature}\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n",
            host = s.base.trim_start_matches("http://"),
            key = s.key,
            ts = chrono_now(),
            len = body.len(),
        );
        let (first, rest) = body.as_bytes().split_at(body.len() / 2);
        let mut stream = TcpStream::connect(s.base.trim_start_matches("http://"))
            .await
            .unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(first).await.unwrap();
        stream.flush().await.unwrap();
        SlowRequest {
            stream,
            rest: rest.to_vec(),
        }
    }

    /// Sends the rest; the answer's status line and body.
    async fn finish(mut self) -> (String, Value) {
        self.stream.write_all(&self.rest).await.unwrap();
        let mut answer = Vec::new();
        self.stream.read_to_end(&mut answer).await.unwrap();
        let text = String::from_utf8_lossy(&answer).to_string();
        let status = text.lines().next().unwrap_or_default().to_string();
        let body = text
            .split_once("\r\n\r\n")
            .and_then(|(_, b)| serde_json::from_str(b).ok())
            .unwrap_or(Value::Null);
        (status, body)
    }
}

/// A request on a connection opened once the server stopped accepting.
/// dropshot keeps its socket open until it has finished, so the kernel
/// completes the handshake, but nothing reads the request: once the
/// process exits the connection ends without an answer.
async fn unserved(base: &str) -> tokio::task::JoinHandle<Vec<u8>> {
    let mut stream = TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    tokio::spawn(async move {
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        answer
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_a_held_callback_and_a_slow_request_finish_and_exits_0() {
    let data = scratch("sigterm");
    let db = database_url().await;
    let port = free_port();
    let grace = Duration::from_secs(15);
    // dropshot's debug line says when a request has reached the service.
    let settings = [
        ("PAYMENTS_SHUTDOWN_GRACE_SECONDS", "15"),
        ("PAYMENTS_LOG_LEVEL", "info,dropshot=debug"),
    ];
    let mut s = start_with(&data, port, &db, &settings);
    let http = http();
    wait_ready(&http, &s.base).await;

    let mut receiver = Receiver::start(false).await;
    let order_no = paid_deposit(&http, &s, "TERM-1", &receiver.url).await;
    // The attempt is under way and held by the receiver.
    receiver.next_arrival().await;
    const ROUTED: &str = "determined request API version";
    let routed_before = s_log(&data).matches(ROUTED).count();
    let slow = SlowRequest::begin(&s, "TERM-SLOW").await;
    // The request is under way (routed, its body half read) before the
    // signal, or it would be a connection the server may simply close.
    let deadline = Instant::now() + Duration::from_secs(10);
    while s_log(&data).matches(ROUTED).count() == routed_before {
        assert!(
            Instant::now() < deadline,
            "the slow request reached the service"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let signalled = Instant::now();
    signal(&s, "TERM");
    logged(&data, "beginning graceful shutdown");
    let late = unserved(&s.base).await;
    // Both finish after the signal.
    let (status, body) = slow.finish().await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {body}");
    let slow_order = body["order_no"].as_str().expect("an order").to_string();
    receiver.open.send(true).unwrap();
    let (code, _) = exit_within(&mut s, grace + Duration::from_secs(10));
    assert_eq!(code, Some(0), "a clean exit");
    assert!(
        signalled.elapsed() < grace,
        "exited within the grace period"
    );
    let late = late.await.unwrap();
    assert!(
        late.is_empty(),
        "a connection after the signal was served: {}",
        String::from_utf8_lossy(&late)
    );

    // Nothing was left SENDING: the held attempt was recorded.
    let s = start_with(&data, port, &db, &settings);
    wait_ready(&http, &s.base).await;
    let delivery = delivery(&http, &s, &order_no).await;
    assert_eq!(delivery["status"], "SUCCESS", "{delivery}");
    assert_eq!(delivery["attempts"], 1, "{delivery}");
    let order = operator(
        &http,
        &s,
        "GET",
        &format!("/api/v1/operator/deposits/{slow_order}"),
        json!({}),
    )
    .await;
    assert_eq!(order["merchant_order_no"], "TERM-SLOW");
    stop(s);
    let _ = std::fs::remove_dir_all(&data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_outlasting_the_grace_is_cut_off_and_given_back() {
    let data = scratch("grace");
    let db = database_url().await;
    let port = free_port();
    let settings = [
        ("PAYMENTS_SHUTDOWN_GRACE_SECONDS", "2"),
        ("PAYMENTS_LOG_LEVEL", "info"),
    ];
    let mut s = start_with(&data, port, &db, &settings);
    let http = http();
    wait_ready(&http, &s.base).await;

    // The receiver holds the attempt past the grace (and the 10 s timeout
    // is longer than the grace too).
    let mut receiver = Receiver::start(false).await;
    let order_no = paid_deposit(&http, &s, "GRACE-1", &receiver.url).await;
    receiver.next_arrival().await;
    signal(&s, "TERM");
    let (code, took) = exit_within(&mut s, Duration::from_secs(15));
    assert_eq!(code, Some(0), "a clean exit");
    assert!(
        took >= Duration::from_secs(2),
        "waited for the grace: {took:?}"
    );
    let log = s_log(&data);
    assert!(log.contains("claims_released=1"), "{log}");

    // Given back, not stuck SENDING for the 5-minute sweep: after a
    // restart it is delivered at once, its cut-off attempt not counted.
    receiver.open.send(true).unwrap();
    let s = start_with(&data, port, &db, &settings);
    wait_ready(&http, &s.base).await;
    receiver.next_arrival().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let delivery = loop {
        let d = delivery(&http, &s, &order_no).await;
        if d["status"] == "SUCCESS" {
            break d;
        }
        assert!(
            Instant::now() < deadline,
            "delivered after the restart: {d}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(delivery["attempts"], 1, "{delivery}");
    stop(s);
    let _ = std::fs::remove_dir_all(&data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_exits_at_once() {
    let data = scratch("twice");
    let db = database_url().await;
    let settings = [
        ("PAYMENTS_SHUTDOWN_GRACE_SECONDS", "60"),
        ("PAYMENTS_LOG_LEVEL", "info"),
    ];
    let mut s = start_with(&data, free_port(), &db, &settings);
    let http = http();
    wait_ready(&http, &s.base).await;
    let mut receiver = Receiver::start(false).await;
    paid_deposit(&http, &s, "TWICE-1", &receiver.url).await;
    receiver.next_arrival().await;
    signal(&s, "TERM");
    logged(&data, "shutting down");
    signal(&s, "INT");
    let (code, took) = exit_within(&mut s, Duration::from_secs(10));
    assert_eq!(code, Some(1), "exited at once, not cleanly");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let _ = std::fs::remove_dir_all(&data);
}

fn s_log(data: &std::path::Path) -> String {
    std::fs::read_to_string(data.join("stderr.log")).unwrap_or_default()
}

fn stop(mut s: Service) {
    let _ = s.child.kill();
    let _ = s.child.wait();
}
