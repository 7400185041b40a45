//! A load generator for `cargo xtask bench`, run as its own process so the
//! service under load shares nothing with it but the network:
//!
//!     loadgen setup <base-url> <operator-token>          → prints an API key
//!     loadgen run <base-url> <api-key> <create|create-generated|query|balance> <clients> <seconds>
//!
//! `query-seeded` reads orders `cargo xtask bench` seeded into the database
//! (`LOADGEN_SEEDED_ORDERS` of them over 100 merchants, this merchant's
//! numbered `S<multiple of 100>`), at random, so a large table is read
//! where it is cold as well as where it is warm.
//!
//! `run` keeps `clients` signed requests in flight for `seconds` (after a
//! one-second warm-up that is not counted) and prints one JSON line:
//! requests, errors, requests per second, and the median, p99 and p99.9
//! latency in milliseconds. Queries and balances go through the generated
//! client; creates through `lean` after one through the generated client
//! (why: `lean.rs`), or all through it as `create-generated`.

use anyhow::{bail, Context, Result};
use merchant_client::merchant::types as m;
use merchant_client::{BearerToken, Credentials, MerchantOrderNo};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod lean;

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["setup", base, token] => setup(base, token).await,
        ["run", base, key, endpoint, clients, seconds] => {
            run(base, key, endpoint, clients.parse()?, seconds.parse()?).await
        }
        _ => bail!("usage: loadgen setup <base-url> <operator-token> | loadgen run <base-url> <api-key> <create|create-generated|query|query-seeded|balance> <clients> <seconds>"),
    }
}

async fn setup(base: &str, token: &str) -> Result<()> {
    let operator =
        merchant_client::operator::Client::new(base, BearerToken::new(token.to_string()));
    let code = format!("bench{}", std::process::id());
    let created = operator
        .create_merchant(&merchant_client::operator::types::CreateMerchantRequest {
            code,
            name: "Load generator".into(),
        })
        .await
        .map_err(|e| anyhow::anyhow!("creating the bench merchant: {e}"))?
        .into_inner();
    // The load, not the default limit (1,000 a second), is what is measured.
    operator
        .set_rate_limit(
            &created.merchant_id,
            &merchant_client::operator::types::RateLimitRequest {
                requests_per_minute: 1_000_000,
                burst: 100_000,
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("lifting the bench merchant's limit: {e}"))?;
    println!("{}", created.api_key);
    Ok(())
}

/// The deposit request every create sends but for its number, with the
/// fields every request needs. Read from JSON so that an optional field
/// added to the contract needs nothing here (the suite's builders live in
/// `conformance`, which this small build leaves out); from text, not from a
/// `Value`, because amounts are read as raw JSON. Made once: the load
/// loop only clones it.
fn deposit_template() -> Result<m::CreateDepositRequest> {
    let text = serde_json::json!({
        "merchant_order_no": "template",
        "amount": "100.50",
        "currency_code": "THB",
        "user_id": "bench-user",
    })
    .to_string();
    serde_json::from_str(&text).context("a deposit request")
}

/// The template under the order number `no` (generated here, always valid).
fn deposit(template: &m::CreateDepositRequest, no: &str) -> m::CreateDepositRequest {
    let mut request = template.clone();
    if let Ok(no) = MerchantOrderNo::parse(no) {
        request.merchant_order_no = no;
    }
    request
}

/// The `q` quantile of sorted microseconds, in milliseconds.
fn quantile_ms(sorted_micros: &[u32], q: f64) -> f64 {
    if sorted_micros.is_empty() {
        return 0.0;
    }
    let i = ((sorted_micros.len() as f64 * q).ceil() as usize).clamp(1, sorted_micros.len()) - 1;
    f64::from(sorted_micros[i]) / 1000.0
}

async fn run(base: &str, key: &str, endpoint: &str, clients: usize, seconds: u64) -> Result<()> {
    if !matches!(
        endpoint,
        "create" | "create-generated" | "query" | "query-seeded" | "balance"
    ) {
        bail!(
            "endpoint is create, create-generated, query, query-seeded or balance, not {endpoint}"
        );
    }
    let seeded: u64 = match endpoint {
        "query-seeded" => {
            std::env::var("LOADGEN_SEEDED_ORDERS")
                .context("query-seeded needs LOADGEN_SEEDED_ORDERS")?
                .parse::<u64>()
                .context("LOADGEN_SEEDED_ORDERS")?
                / 100
        }
        _ => 0,
    };
    if endpoint == "query-seeded" && seeded == 0 {
        bail!("LOADGEN_SEEDED_ORDERS must be at least 100");
    }
    let client = merchant_client::merchant::Client::new(base, Credentials::new(key.to_string()));
    let client = Arc::new(client);
    let run_id = format!("{:x}", std::process::id());
    let template = Arc::new(deposit_template()?);
    // Queries read orders that exist: a hundred made before the clock runs.
    let known: Arc<Vec<String>> = Arc::new(if endpoint == "query" {
        let mut v = Vec::new();
        for i in 0..100 {
            let no = format!("Q{run_id}-{i}");
            client
                .create_deposit(&deposit(&template, &no))
                .await
                .map_err(|e| anyhow::anyhow!("seeding orders to query: {e}"))?;
            v.push(no);
        }
        v
    } else {
        Vec::new()
    });
    if endpoint == "create" {
        client
            .create_deposit(&deposit(&template, &format!("F{run_id}")))
            .await
            .map_err(|e| anyhow::anyhow!("the first create, through the generated client: {e}"))?;
    }
    let counting = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for worker in 0..clients {
        let (client, template, known, counting, stop) = (
            client.clone(),
            template.clone(),
            known.clone(),
            counting.clone(),
            stop.clone(),
        );
        let endpoint = endpoint.to_string();
        let run_id = run_id.clone();
        let mut lean = match endpoint.as_str() {
            "create" => Some(lean::Lean::connect(base, key).await?),
            _ => None,
        };
        tasks.push(tokio::spawn(async move {
            let mut latencies: Vec<u32> = Vec::new();
            let mut errors = 0u64;
            let mut seq = 0usize;
            // xorshift: which seeded order to read next, without a
            // dependency for it.
            let mut pick = 0x9E37_79B9_7F4A_7C15u64 ^ (worker as u64 + 1);
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                let started = Instant::now();
                let answer = match (endpoint.as_str(), lean.as_mut()) {
                    ("create", Some(lean)) => lean
                        .create(&format!("C{run_id}-{worker}-{seq}"))
                        .await
                        .map_err(|e| e.to_string()),
                    ("create-generated", _) => client
                        .create_deposit(&deposit(&template, &format!("C{run_id}-{worker}-{seq}")))
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string()),
                    ("query", _) => client
                        .find_deposit(&known[(worker + seq) % known.len()])
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string()),
                    ("query-seeded", _) => {
                        pick ^= pick << 13;
                        pick ^= pick >> 7;
                        pick ^= pick << 17;
                        let order = format!("S{}", (pick % seeded + 1) * 100);
                        client
                            .find_deposit(&order)
                            .await
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }
                    ("balance", _) => client
                        .get_balances()
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string()),
                    (other, _) => Err(format!("no load for {other}")),
                };
                if counting.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    match answer {
                        Ok(()) => {
                            let micros = started.elapsed().as_micros();
                            latencies.push(u32::try_from(micros).unwrap_or(u32::MAX));
                        }
                        Err(e) => {
                            // The first of each client's errors says what
                            // went wrong; the rest only count.
                            if errors == 0 {
                                eprintln!("loadgen: {endpoint} (client {worker}): {e}");
                            }
                            errors += 1;
                        }
                    }
                }
            }
            (latencies, errors)
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    counting.store(true, Ordering::Relaxed);
    let measured = Instant::now();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = measured.elapsed().as_secs_f64();
    let mut all: Vec<u32> = Vec::new();
    let mut errors = 0u64;
    for t in tasks {
        let (l, e) = t.await.context("a load task")?;
        all.extend(l);
        errors += e;
    }
    all.sort_unstable();
    let pick = |q: f64| quantile_ms(&all, q);
    println!(
        "{}",
        serde_json::json!({
            "endpoint": endpoint,
            "clients": clients,
            "requests": all.len(),
            "errors": errors,
            "seconds": elapsed,
            "rps": all.len() as f64 / elapsed,
            "p50_ms": pick(0.50),
            "p99_ms": pick(0.99),
            "p999_ms": pick(0.999),
        })
    );
    Ok(())
}
