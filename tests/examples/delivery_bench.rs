//! Callback delivery benchmark: deliveries per second to a local receiver,
//! and the delay from a state change's commit to its first attempt.
//!
//!     PAYMENTS_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!         cargo run --release -p integration-tests --example delivery_bench -- 2000
//!
//! Without the variable it runs on SQLite.

use conformance::receiver::Receiver;
use payments_service::app::deposits;
use payments_service::clock::SystemClock;
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let service = TestService::start_with(Profile::Sandbox, Arc::new(SystemClock), |c| {
        c.callback_worker = true;
    })
    .await?;
    let app = service.service.app().clone();
    let backend = format!("{:?}", app.db.backend());
    let receiver = Receiver::start().await?;
    let merchant = service.new_merchant("Bench").await?.merchant;

    eprintln!("delivery_bench: creating {n} deposits with a callback on {backend}");
    let mut orders = Vec::with_capacity(n);
    for i in 0..n {
        let d = deposits::create(
            &app,
            &merchant,
            payments_testing::new_deposit(
                &format!("B-{i}"),
                Decimal::from(100),
                "THB",
                Some(&receiver.url),
            ),
        )
        .await?;
        orders.push(d.order_no);
        if (i + 1) % 500 == 0 {
            eprintln!("delivery_bench: {} of {n} created", i + 1);
        }
    }

    eprintln!("delivery_bench: completing them, 32 at a time; the worker delivers as they commit");
    let started = Instant::now();
    let mut committed: HashMap<String, Instant> = HashMap::with_capacity(n);
    for chunk in orders.chunks(32) {
        let mut set = tokio::task::JoinSet::new();
        for order_no in chunk {
            let (app, order_no) = (app.clone(), order_no.clone());
            set.spawn(async move {
                deposits::complete(&app, &order_no, None).await?;
                Ok::<_, payments_service::domain::error::ApiError>((order_no, Instant::now()))
            });
        }
        while let Some(done) = set.join_next().await {
            let (order_no, at) = done??;
            committed.insert(order_no, at);
        }
    }
    let got = receiver.wait_for(n, Duration::from_secs(600)).await;
    anyhow::ensure!(
        got.len() == n,
        "only {} of {n} callbacks arrived",
        got.len()
    );
    let finished = got.iter().map(|r| r.at).max().unwrap_or(started);

    let mut delays: Vec<f64> = got
        .iter()
        .filter_map(|r| {
            let body: serde_json::Value = serde_json::from_str(&r.body).ok()?;
            let at = committed.get(body["order_no"].as_str()?)?;
            Some(r.at.saturating_duration_since(*at).as_secs_f64() * 1000.0)
        })
        .collect();
    delays.sort_by(f64::total_cmp);
    let pct = |p: f64| delays[((delays.len() as f64 - 1.0) * p).round() as usize];
    let seconds = finished.duration_since(started).as_secs_f64();
    println!(
        "delivery_bench on {backend}: {n} callbacks in {seconds:.2} s = {:.0} deliveries/s; \
         commit to first attempt: median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        n as f64 / seconds,
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    // The same, for `cargo xtask bench` to read.
    println!(
        "{}",
        serde_json::json!({
            "backend": backend,
            "deliveries": n,
            "seconds": seconds,
            "per_second": n as f64 / seconds,
            "p50_ms": pct(0.5),
            "p99_ms": pct(0.99),
            "max_ms": pct(1.0),
        })
    );
    Ok(())
}
