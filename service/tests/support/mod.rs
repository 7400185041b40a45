//! What the tests that run the real binary share: starting it on a data
//! directory (and a PostgreSQL database when PAYMENTS_TEST_DATABASE_URL is
//! set), reading its banner, and calling its operator and merchant APIs.

#![allow(dead_code)]

use payments_testing::{fresh_postgres_database, TEST_DATABASE_ENV};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Service {
    pub child: Child,
    pub base: String,
    pub key: String,
    pub operator: String,
}

pub fn start(data: &std::path::Path, port: u16, database_url: &Option<String>) -> Service {
    start_with(data, port, database_url, &[])
}

/// `start`, with more environment for the service (`PAYMENTS_*` settings).
pub fn start_with(
    data: &std::path::Path,
    port: u16,
    database_url: &Option<String>,
    env: &[(&str, &str)],
) -> Service {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_payments"));
    cmd.env("PAYMENTS_DATA_DIR", data)
        .env("PAYMENTS_BIND", format!("127.0.0.1:{port}"))
        .env("PAYMENTS_PROFILE", "sandbox")
        .env(
            "PAYMENTS_LOG_LEVEL",
            std::env::var("PAYMENTS_LOG_LEVEL").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(Stdio::piped())
        .stderr(stderr_log(data));
    if let Some(url) = database_url {
        cmd.env("PAYMENTS_DATABASE_URL", url);
    }
    // Last, so that a test's own settings win over the defaults above.
    cmd.envs(env.iter().copied());
    let mut child = cmd.spawn().expect("the service starts");
    // The banner names the demo key and the operator token.
    let mut out = child.stdout.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains("operator token:") {
        use std::io::Read;
        let n = out.read(&mut buf).expect("the banner");
        assert!(n > 0, "the service exited early: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    // Keep reading what it prints, so that it never writes into a closed
    // pipe.
    std::thread::spawn(move || {
        use std::io::Read;
        let mut sink = [0u8; 4096];
        while matches!(out.read(&mut sink), Ok(n) if n > 0) {}
    });
    let field = |label: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split_whitespace().nth(2))
            .expect("a banner line")
            .to_string()
    };
    Service {
        base: format!("http://127.0.0.1:{port}"),
        key: field("API key:"),
        operator: field("operator token:"),
        child,
    }
}

pub async fn wait_ready(http: &reqwest::Client, base: &str) {
    for _ in 0..200 {
        if http
            .get(format!("{base}/api/v1/merchant/openapi.json"))
            .send()
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the service did not answer");
}

/// A deposit as the operator API shows it.
pub async fn operator_deposit(http: &reqwest::Client, s: &Service, order_no: &str) -> Value {
    let path = format!("/api/v1/operator/deposits/{order_no}");
    operator(http, s, "GET", &path, json!({})).await
}

/// The operator's ledger check: every balance equals its postings.
pub async fn assert_ledger_clean(http: &reqwest::Client, s: &Service) {
    let check = operator(http, s, "GET", "/api/v1/operator/ledger/check", json!({})).await;
    assert_eq!(check["ok"], true, "{check}");
}

pub async fn operator(
    http: &reqwest::Client,
    s: &Service,
    method: &str,
    path: &str,
    body: Value,
) -> Value {
    let url = format!("{}{path}", s.base);
    let req = match method {
        "GET" => http.get(url),
        _ => http.post(url).json(&body),
    };
    let resp = req
        .header("authorization", format!("Bearer {}", s.operator))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let v: Value = resp.json().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {v}");
    v
}

/// The service's stderr, kept in its data directory for a failing test.
fn stderr_log(data: &std::path::Path) -> Stdio {
    let _ = std::fs::create_dir_all(data);
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(data.join("stderr.log"))
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null())
}

/// A fresh PostgreSQL database when the environment names a server, else
/// None (the sandbox's SQLite file in the data directory).
pub async fn database_url() -> Option<String> {
    match std::env::var(TEST_DATABASE_ENV) {
        Ok(server) if !server.is_empty() => Some(fresh_postgres_database(&server).await.unwrap()),
        _ => None,
    }
}

pub fn free_port() -> u16 {
    payments_testing::free_port().unwrap()
}

/// A signed merchant POST; the reply's status and JSON body.
pub async fn merchant_post(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    path: &str,
    body: &Value,
) -> Result<(u16, Value), reqwest::Error> {
    let text = body.to_string();
    let fields = payments_wire::SigningFields::from_json_body(text.as_bytes()).unwrap();
    let resp = http
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header("x-api-key", key)
        .header("x-timestamp", chrono_now().to_string())
        .header("x-signature", payments_wire::sign(&fields, key))
        .body(text)
        .send()
        .await?;
    let status = resp.status().as_u16();
    Ok((status, resp.json().await.unwrap_or(Value::Null)))
}

pub fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// The order's (first) callback delivery, with its attempts, as operators
/// read it.
pub async fn delivery(http: &reqwest::Client, s: &Service, order_no: &str) -> Value {
    let page = operator(
        http,
        s,
        "GET",
        &format!("/api/v1/operator/callbacks?order_no={order_no}"),
        json!({}),
    )
    .await;
    let id = page["items"][0]["id"]
        .as_str()
        .expect("a delivery record")
        .to_string();
    operator(
        http,
        s,
        "GET",
        &format!("/api/v1/operator/callbacks/{id}"),
        json!({}),
    )
    .await
}
