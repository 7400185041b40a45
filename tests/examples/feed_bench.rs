//! The events feed under load, for `cargo xtask bench` (part `feed`), run
//! as its own process beside a release-built service:
//!
//!     feed_bench <base> <api-key> <operator-token> <clients> <seconds>
//!
//! `clients` writers each create a deposit and have an operator complete
//! it, again and again, for `seconds`; meanwhile a follower reads the
//! merchant's feed by its cursor (500 a page, a 2 ms pause after an empty
//! read, as a real follower polls), and a second reader reads the whole
//! feed from its start again and again (the catch-up of a follower that
//! was away). The lag of an event is from the completion's answer (its
//! commit came before it) to the follower's read that returned it, and,
//! as an upper bound, from the completion's request. Prints one JSON line.

mod support;

use anyhow::{anyhow, bail, Result};
use merchant_client::merchant as m_client;
use merchant_client::Credentials;
use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{quantile_ms, unix_ms};

/// When each completion was asked for and answered, by order number.
type Times = Arc<Mutex<HashMap<String, (f64, f64)>>>;

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, key, token, clients, seconds] = &args[..] else {
        bail!("usage: feed_bench <base> <api-key> <operator-token> <clients> <seconds>");
    };
    let merchant = m_client::Client::new(base, Credentials::new(key.clone()));
    let people = support::two_people::TwoPeople::make(base, token).await?;
    let clients: usize = clients.parse()?;
    let seconds: u64 = seconds.parse()?;
    let run = std::process::id();

    let times: Times = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let writers: Vec<_> = (0..clients)
        .map(|w| {
            let (merchant, people, times, errors) = (
                merchant.clone(),
                people.clone(),
                times.clone(),
                errors.clone(),
            );
            tokio::spawn(async move {
                let mut i = 0u64;
                while Instant::now() < deadline {
                    i += 1;
                    let no = format!("F{run}-{w}-{i}");
                    let made = merchant
                        .create_deposit(&conformance::requests::deposit(&no, "100", "THB"))
                        .await;
                    let Ok(order) = made else {
                        errors.fetch_add(1, Ordering::Relaxed);
                        continue;
                    };
                    let order_no = order.into_inner().order_no;
                    let asked = unix_ms();
                    let done = people.complete(&order_no).await;
                    let answered = unix_ms();
                    match done {
                        Ok(_) => {
                            times.lock().unwrap().insert(order_no, (asked, answered));
                        }
                        Err(_) => {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();

    let follower = {
        let (merchant, stop) = (merchant.clone(), stop.clone());
        tokio::spawn(async move {
            let mut seen: Vec<(String, f64)> = Vec::new();
            let mut cursor: Option<String> = None;
            let mut empty_after_stop = false;
            while !empty_after_stop {
                let stopping = stop.load(Ordering::SeqCst);
                let page = merchant
                    .list_events(
                        cursor.as_deref(),
                        NonZeroU64::new(500),
                        Some("deposit.completed"),
                    )
                    .await
                    .map_err(|e| anyhow!("following the feed: {e}"))?
                    .into_inner();
                let at = unix_ms();
                let empty = page.items.is_empty();
                seen.extend(page.items.into_iter().map(|e| (e.order_no, at)));
                cursor = Some(page.next_cursor);
                if page.has_more {
                    continue;
                }
                empty_after_stop = empty && stopping;
                if empty {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
            Ok::<_, anyhow::Error>(seen)
        })
    };

    let catch_up = {
        let (merchant, stop) = (merchant.clone(), stop.clone());
        tokio::spawn(async move {
            let mut read = 0u64;
            let began = Instant::now();
            while !stop.load(Ordering::SeqCst) {
                let mut cursor: Option<String> = None;
                loop {
                    let page = merchant
                        .list_events(cursor.as_deref(), NonZeroU64::new(500), None)
                        .await
                        .map_err(|e| anyhow!("reading the feed from its start: {e}"))?
                        .into_inner();
                    read += page.items.len() as u64;
                    cursor = Some(page.next_cursor);
                    if !page.has_more || stop.load(Ordering::SeqCst) {
                        break;
                    }
                }
            }
            Ok::<_, anyhow::Error>((read, began.elapsed().as_secs_f64()))
        })
    };

    for w in writers {
        w.await?;
    }
    let writing = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    let (caught_up, reading) = catch_up.await??;
    // The follower stops at its first empty read after the writers did;
    // events placed after that read would be missed, so wait a moment's
    // worth of passes by reading until every completion is seen.
    let mut seen = follower.await??;
    let times = times.lock().unwrap().clone();
    let mut cursor_tail: Option<String> = None;
    for _ in 0..200 {
        if seen.len() >= times.len() {
            break;
        }
        let page = merchant
            .list_events(
                cursor_tail.as_deref(),
                NonZeroU64::new(500),
                Some("deposit.completed"),
            )
            .await
            .map_err(|e| anyhow!("{e}"))?
            .into_inner();
        cursor_tail = Some(page.next_cursor);
        let at = unix_ms();
        for e in page.items {
            if !seen.iter().any(|(o, _)| *o == e.order_no) {
                seen.push((e.order_no, at));
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut lag = Vec::new();
    let mut upper = Vec::new();
    let mut unseen = 0u64;
    let seen_at: HashMap<&str, f64> = seen.iter().map(|(o, t)| (o.as_str(), *t)).collect();
    for (order, (asked, answered)) in &times {
        match seen_at.get(order.as_str()) {
            Some(at) => {
                lag.push(((at - answered).max(0.0) * 1000.0) as u32);
                upper.push(((at - asked).max(0.0) * 1000.0) as u32);
            }
            None => unseen += 1,
        }
    }
    lag.sort_unstable();
    upper.sort_unstable();
    let result = serde_json::json!({
        "clients": clients,
        "seconds": writing,
        "completed": times.len(),
        "completions_per_second": times.len() as f64 / writing,
        "errors": errors.load(Ordering::Relaxed),
        "followed": seen.len(),
        "unseen": unseen,
        "followed_per_second": seen.len() as f64 / writing,
        "catch_up_events": caught_up,
        "catch_up_per_second": caught_up as f64 / reading,
        "lag_p50_ms": quantile_ms(&lag, 0.50),
        "lag_p99_ms": quantile_ms(&lag, 0.99),
        "lag_max_ms": quantile_ms(&lag, 1.0),
        "lag_upper_p99_ms": quantile_ms(&upper, 0.99),
    });
    println!("{result}");
    Ok(())
}
