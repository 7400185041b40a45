//! PostgreSQL goes away under load and comes back: the service answers 503
//! with the error envelope while it is away (never another 5xx), recovers by
//! itself without a restart, and every order it acknowledged exists after.
//! The outage is a proxy between the service and the database that drops
//! every connection and refuses new ones, which is what a restart looks like
//! from the service, without disturbing anything else on the server.
//! Needs PostgreSQL: `.ci/run` runs it with PAYMENTS_TEST_DATABASE_URL set
//! (`cargo test --test db_outage -- --ignored`). Meanwhile `/readyz` says
//! 503 and `/healthz` stays 200, and readiness returns by itself.

mod support;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{assert_ledger_clean, free_port, merchant_post, operator_deposit, start, wait_ready};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// Forwards to the database while up; when down, cuts every connection
/// and refuses new ones.
#[derive(Clone)]
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy {
            port: listener.local_addr().unwrap().port(),
            up: Arc::new(AtomicBool::new(true)),
            links: Arc::default(),
        };
        let p = proxy.clone();
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !p.up.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let upstream = upstream.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                p.links.lock().unwrap().push(link.abort_handle());
            }
        });
        proxy
    }

    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// Asks `path` until it answers `status`, for at most 10 s.
async fn until<F, Fut>(probe: &F, path: &'static str, status: u16) -> bool
where
    F: Fn(&'static str) -> Fut,
    Fut: std::future::Future<Output = u16>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < deadline {
        if probe(path).await == status {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL; .ci/run runs it with --ignored and PAYMENTS_TEST_DATABASE_URL"]
async fn the_service_answers_503_while_postgres_is_away_and_recovers_by_itself() {
    let server = std::env::var(payments_testing::TEST_DATABASE_ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .expect("PAYMENTS_TEST_DATABASE_URL names a PostgreSQL server");
    let direct = payments_testing::fresh_postgres_database(&server)
        .await
        .unwrap();
    // postgres://user@host:port/db → the same through the proxy.
    let after_at = direct.split_once('@').map(|(_, r)| r).unwrap();
    let (host_port, db) = after_at.split_once('/').unwrap();
    let proxy = Proxy::start(host_port.to_string()).await;
    let via_proxy = direct.replace(host_port, &format!("127.0.0.1:{}", proxy.port));
    let _ = db;

    let data = std::env::temp_dir().join(format!("payments-outage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let port = free_port();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut service = start(&data, port, &Some(via_proxy));
    wait_ready(&http, &service.base).await;

    // Phases: 0 before, 1 while away, 2 after.
    let phase = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let statuses: Arc<Mutex<BTreeMap<(usize, String), usize>>> = Arc::default();
    let mut workers = Vec::new();
    for w in 0..4 {
        let (http, base, key) = (http.clone(), service.base.clone(), service.key.clone());
        let (phase, stop, acked, statuses) =
            (phase.clone(), stop.clone(), acked.clone(), statuses.clone());
        workers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let at = phase.load(Ordering::SeqCst);
                let body = json!({"merchant_order_no": format!("O{w}-{i}"), "amount": 100, "currency_code": "THB"});
                let outcome =
                    merchant_post(&http, &base, &key, "/api/v1/merchant/orders/deposit", &body).await;
                let label = match &outcome {
                    Ok((200, v)) => {
                        acked
                            .lock()
                            .unwrap()
                            .push(v["order_no"].as_str().unwrap_or_default().to_string());
                        "200".to_string()
                    }
                    Ok((503, v)) => {
                        assert_eq!(v["error_code"], "SERVICE_UNAVAILABLE", "{v}");
                        "503".to_string()
                    }
                    Ok((s, v)) => format!("{s} {}", v["error_code"]),
                    Err(e) if e.is_timeout() => "timeout".to_string(),
                    Err(e) => format!("error {e}"),
                };
                *statuses.lock().unwrap().entry((at, label)).or_default() += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
    }
    let probe = |path: &'static str| {
        let (http, base) = (http.clone(), service.base.clone());
        async move {
            http.get(format!("{base}{path}"))
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }
    };
    // Answering is not yet ready: each worker loop must have begun its
    // first pass, which under load can come after the first requests.
    let ready = until(&probe, "/readyz", 200).await;
    assert!(ready, "ready before the outage");
    tokio::time::sleep(Duration::from_secs(1)).await;
    phase.store(1, Ordering::SeqCst);
    proxy.down();
    // Away: not ready (the load balancer stops sending), but alive (no
    // restart wanted: it recovers by itself).
    let away = until(&probe, "/readyz", 503).await;
    assert!(away, "/readyz answers 503 while PostgreSQL is away");
    assert_eq!(probe("/healthz").await, 200, "/healthz stays 200");
    tokio::time::sleep(Duration::from_secs(2)).await;
    proxy.up();
    phase.store(2, Ordering::SeqCst);
    let back = until(&probe, "/readyz", 200).await;
    assert!(back, "/readyz answers 200 again once PostgreSQL is back");
    assert_eq!(probe("/healthz").await, 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }

    let statuses = statuses.lock().unwrap().clone();
    println!("db outage: answers by phase (0 before, 1 away, 2 after): {statuses:?}");
    let count = |p: usize, label: &str| statuses.get(&(p, label.to_string())).copied().unwrap_or(0);
    assert!(count(0, "200") > 0, "the load ran before the outage");
    assert!(count(1, "503") > 0, "503 while the database was away");
    assert!(count(2, "200") > 0, "recovered by itself");
    for ((p, label), n) in &statuses {
        assert!(
            label == "200" || label == "503",
            "phase {p}: {n} × {label} (only 200 and 503 are acceptable)"
        );
    }
    let acked = acked.lock().unwrap().clone();
    for order_no in &acked {
        let order = operator_deposit(&http, &service, order_no).await;
        assert_eq!(order["order_no"], Value::String(order_no.clone()));
    }
    assert_ledger_clean(&http, &service).await;
    service.child.kill().unwrap();
    service.child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}
