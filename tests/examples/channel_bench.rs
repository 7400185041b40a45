//! The channel side of `cargo xtask bench`, run as its own process beside a
//! release-built service and `payments-channel-sim`, each a process of its
//! own:
//!
//!     channel_bench payouts <base> <api-key> <operator-token> <clients> <seconds>
//!         funds the merchant, creates withdrawals awaiting approval, then
//!         keeps `clients` approvals in flight for `seconds` (after a one-
//!         second warm-up that is not counted). An approval answers after
//!         the service sent the payout and recorded the channel's answer,
//!         so its latency is approval → the channel's acceptance, recorded
//!         (`cargo xtask bench` then checks that none is left unsent).
//!     channel_bench pay <base> <api-key> <orders> <rate|max>
//!         creates `orders` channel deposits called back at its own
//!         receiver, then pays each on the simulator's page: `rate` a
//!         second (open loop, evenly spaced), or as fast as 64 payers can
//!         (`max`). Latency is the payer's click → the completion's
//!         callback at the receiver (notification, completion with its
//!         ledger entries, delivery on the way).
//!
//! Each prints one JSON line last, for `cargo xtask bench` to read.

mod support;

use anyhow::{anyhow, bail, Context, Result};
use merchant_client::merchant as m_client;
use merchant_client::operator as o_client;
use merchant_client::operator::types as o;
use merchant_client::{BearerToken, Credentials};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::receiver::Receiver;
use support::{quantile_ms, unix_ms};

/// Requests in flight while orders are made before the clock runs.
const SETUP_CONCURRENCY: usize = 32;

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["payouts", base, key, token, clients, seconds] => {
            payouts(base, key, token, clients.parse()?, seconds.parse()?).await
        }
        ["pay", base, key, orders, rate] => {
            let rate = match rate {
                "max" => None,
                r => Some(r.parse::<u32>().context("rate is a number or `max`")?),
            };
            pay(base, key, orders.parse()?, rate).await
        }
        _ => bail!(
            "usage: channel_bench payouts <base> <api-key> <operator-token> <clients> <seconds> \
             | pay <base> <api-key> <orders> <rate|max>"
        ),
    }
}

fn clients(base: &str, key: &str, token: &str) -> (m_client::Client, o_client::Client) {
    (
        m_client::Client::new(base, Credentials::new(key.to_string())),
        o_client::Client::new(base, BearerToken::new(token.to_string())),
    )
}

/// `n` jobs, `SETUP_CONCURRENCY` at a time, each `make(i)`; their results
/// in no particular order, with a progress line every 2,000.
async fn many<T, F, Fut>(what: &str, n: usize, make: F) -> Result<Vec<T>>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Result<T>> + Send + 'static,
{
    let mut done = Vec::with_capacity(n);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        if tasks.len() >= SETUP_CONCURRENCY {
            if let Some(result) = tasks.join_next().await {
                done.push(result??);
            }
        }
        tasks.spawn(make(i));
        if (i + 1) % 2000 == 0 {
            eprintln!("channel_bench: {} of {n} {what}", i + 1);
        }
    }
    while let Some(result) = tasks.join_next().await {
        done.push(result??);
    }
    Ok(done)
}

async fn payouts(base: &str, key: &str, token: &str, clients_n: usize, seconds: u64) -> Result<()> {
    let (merchant, operator) = clients(base, key, token);
    let (merchant, operator) = (Arc::new(merchant), Arc::new(operator));
    let run = format!("{:x}", std::process::id());
    // Enough for 2,000 approvals a second; the run stops early if they
    // run out, and says so.
    let n = 2_000 * (seconds as usize + 1);
    // One deposit of the most a THB order may be funds 10 THB payouts.
    let fund = merchant
        .create_deposit(&conformance::requests::deposit(
            &format!("FUND{run}"),
            "1000000",
            "THB",
        ))
        .await
        .map_err(|e| anyhow!("creating the funding deposit: {e}"))?
        .into_inner();
    support::two_people::TwoPeople::make(base, token)
        .await?
        .complete(&fund.order_no)
        .await
        .map_err(|e| anyhow!("completing the funding deposit: {e}"))?;
    let orders = many("withdrawals created", n, |i| {
        let merchant = merchant.clone();
        let no = format!("W{run}-{i}");
        async move {
            // Each to its own account, as a payout run is: the same
            // account all day would sum past the dual-approval threshold.
            let mut request = conformance::requests::withdrawal(&no, "10", "THB");
            request.beneficiary_account = format!("{:010}", 1_000_000_000 + i);
            let order = merchant
                .create_withdrawal(&request)
                .await
                .map_err(|e| anyhow!("creating withdrawal {no}: {e}"))?
                .into_inner();
            Ok(order.order_no)
        }
    })
    .await?;
    let orders = Arc::new(orders);
    let next = Arc::new(AtomicUsize::new(0));
    let counting = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for worker in 0..clients_n {
        let (operator, orders, next, counting, stop) = (
            operator.clone(),
            orders.clone(),
            next.clone(),
            counting.clone(),
            stop.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let (mut latencies, mut errors, mut not_accepted) = (Vec::new(), 0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                let Some(order_no) = orders.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                let started = Instant::now();
                let answer = operator
                    .approve_withdrawal(order_no, &o::ReviewRequest { remarks: None })
                    .await;
                if !counting.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                    continue;
                }
                match answer {
                    // The approval answers after the dispatch; the order as
                    // approved, or as the channel's acceptance left it.
                    Ok(order)
                        if matches!(
                            order.status,
                            o::WithdrawalStatus::Approved | o::WithdrawalStatus::Processing
                        ) =>
                    {
                        let micros = started.elapsed().as_micros();
                        latencies.push(u32::try_from(micros).unwrap_or(u32::MAX));
                    }
                    Ok(order) => {
                        if not_accepted == 0 {
                            eprintln!(
                                "channel_bench: {order_no} approved but {} (client {worker})",
                                order.status
                            );
                        }
                        not_accepted += 1;
                    }
                    Err(e) => {
                        if errors == 0 {
                            eprintln!("channel_bench: approving {order_no} (client {worker}): {e}");
                        }
                        errors += 1;
                    }
                }
            }
            (latencies, errors, not_accepted)
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    counting.store(true, Ordering::Relaxed);
    let cpu_before = support::cpu::Sample::now();
    let measured = Instant::now();
    let deadline = measured + Duration::from_secs(seconds);
    while Instant::now() < deadline && next.load(Ordering::Relaxed) < orders.len() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let elapsed = measured.elapsed().as_secs_f64();
    let cpu_after = support::cpu::Sample::now();
    let (mut all, mut errors, mut not_accepted) = (Vec::new(), 0, 0);
    for t in tasks {
        let (l, e, n) = t.await.context("an approval task")?;
        all.extend(l);
        errors += e;
        not_accepted += n;
    }
    if next.load(Ordering::Relaxed) >= orders.len() {
        eprintln!("channel_bench: every prepared withdrawal was approved before the time was up");
    }
    all.sort_unstable();
    println!(
        "{}",
        serde_json::json!({
            "clients": clients_n,
            "approvals": all.len(),
            "errors": errors,
            "not_accepted": not_accepted,
            "seconds": elapsed,
            "rps": all.len() as f64 / elapsed,
            "p50_ms": quantile_ms(&all, 0.50),
            "p99_ms": quantile_ms(&all, 0.99),
            "p999_ms": quantile_ms(&all, 0.999),
            "cpu": cpu_before.per_unit(&cpu_after, all.len()),
        })
    );
    Ok(())
}

/// A deposit's completion callback, not an earlier state's.
fn completed(body: &serde_json::Value) -> bool {
    body.get("status").and_then(|s| s.as_str()) == Some("completed")
}

async fn pay(base: &str, key: &str, n: usize, rate: Option<u32>) -> Result<()> {
    let receiver = Receiver::start(0).await?;
    let merchant = Arc::new(m_client::Client::new(
        base,
        Credentials::new(key.to_string()),
    ));
    let run = format!("{:x}", std::process::id());
    let url = receiver.url.clone();
    // Channel deposits (BDT is routed to the channel): each is created at
    // the simulator, which answers with its page.
    let orders = many("channel deposits created", n, |i| {
        let (merchant, url) = (merchant.clone(), url.clone());
        let no = format!("CP{run}-{i}");
        async move {
            let mut request = conformance::requests::deposit(&no, "1000", "BDT");
            request.callback_url = Some(url);
            let order = merchant
                .create_deposit(&request)
                .await
                .map_err(|e| anyhow!("creating deposit {no}: {e}"))?
                .into_inner();
            let page = order.payment_url.ok_or_else(|| {
                anyhow!(
                    "{} has no payment_url: is BDT routed to a channel?",
                    order.order_no
                )
            })?;
            Ok((order.order_no, page))
        }
    })
    .await?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()?;
    let clicked = Arc::new(std::sync::Mutex::new(Vec::with_capacity(n)));
    let cpu_before = support::cpu::Sample::now();
    let started = Instant::now();
    let first_click = unix_ms();
    let recorded = clicked.clone();
    let click = move |order_no: String, page: String| {
        let (http, clicked) = (http.clone(), recorded.clone());
        async move {
            let at = unix_ms();
            let answer = http
                .post(&page)
                .header("content-type", "application/x-www-form-urlencoded")
                .body("action=pay")
                .send()
                .await
                .with_context(|| format!("paying {order_no}"))?;
            if !answer.status().is_success() {
                bail!("paying {order_no}: the page answered {}", answer.status());
            }
            if let Ok(mut c) = clicked.lock() {
                c.push((order_no, at));
            }
            Ok(())
        }
    };
    match rate {
        Some(rate) => {
            let mut tasks = tokio::task::JoinSet::new();
            let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate)));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            for (order_no, page) in orders {
                tick.tick().await;
                tasks.spawn(click(order_no, page));
            }
            while let Some(done) = tasks.join_next().await {
                done??;
            }
        }
        None => {
            let queue = Arc::new(std::sync::Mutex::new(orders));
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..64 {
                let (queue, click) = (queue.clone(), click.clone());
                tasks.spawn(async move {
                    loop {
                        let Some((order_no, page)) = queue.lock().ok().and_then(|mut q| q.pop())
                        else {
                            return Ok::<_, anyhow::Error>(());
                        };
                        click(order_no, page).await?;
                    }
                });
            }
            while let Some(done) = tasks.join_next().await {
                done??;
            }
        }
    }
    let paying_seconds = started.elapsed().as_secs_f64();
    let got = receiver
        .wait_for(n, Duration::from_secs(120), completed)
        .await;
    let cpu_after = support::cpu::Sample::now();
    let arrivals = receiver.first_arrivals(completed);
    if got < n {
        bail!("only {got} of {n} paid deposits were called back as completed within 120 s");
    }
    let clicked = clicked.lock().map(|c| c.clone()).unwrap_or_default();
    let mut latencies: Vec<u32> = clicked
        .iter()
        .filter_map(|(order_no, at)| arrivals.get(order_no).map(|done| done - at))
        .map(|ms| (ms.max(0.0) * 1000.0) as u32)
        .collect();
    latencies.sort_unstable();
    let last = arrivals.values().copied().fold(0.0, f64::max);
    let completion_seconds = (last - first_click) / 1000.0;
    println!(
        "{}",
        serde_json::json!({
            "orders": n,
            "offered_per_second": rate,
            "paid_per_second": n as f64 / paying_seconds,
            "completed_per_second": n as f64 / completion_seconds,
            "seconds": completion_seconds,
            "p50_ms": quantile_ms(&latencies, 0.50),
            "p99_ms": quantile_ms(&latencies, 0.99),
            "p999_ms": quantile_ms(&latencies, 0.999),
            "max_ms": quantile_ms(&latencies, 1.0),
            "cpu": cpu_before.per_unit(&cpu_after, n),
        })
    );
    Ok(())
}
