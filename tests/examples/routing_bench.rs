//! What routing adds to creating a channel deposit, for `cargo xtask bench`
//! (part `routing`): the service in process (release build), its channels
//! the in-process simulator, so that nothing but the service's own work is
//! timed.
//!
//!     routing_bench [database-url]
//!
//! 1. The decision alone, as a create makes it: the table in force read,
//!    the plan drawn (three candidates, bands, weights, health looked up),
//!    the decision and its `routing_` record written: 200,000 times.
//! 2. `deposits::create` of BDT channel deposits for three merchants in
//!    turn, 3,000 each after 300 unmeasured: one whose table has one
//!    candidate, one with three (bands and weights): the same work but the
//!    plan.
//! 3. The third merchant's candidate has a daily limit: its reservation is
//!    a statement of its own in the database.
//!
//! With a PostgreSQL URL the service runs on it (a fresh database). Prints
//! one JSON line.

mod support;

use anyhow::Result;
use payments_service::app::{deposits, routing};
use payments_service::clock::ManualClock;
use payments_service::config::{ChannelConfig, Config, RoutingTableConfig};
use payments_service::domain::routing::table::{Candidate, RoutedDirection, Scope};
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::Arc;
use std::time::Instant;
use support::quantile_ms;

fn channel(config: &Config, code: &str) -> ChannelConfig {
    ChannelConfig {
        id: format!("chan-{}", code.to_lowercase()),
        code: code.into(),
        ..config.channels[0].clone()
    }
}

fn banded(code: &str, weight: u32, max: Option<i64>) -> Candidate {
    Candidate {
        max_amount: max.map(Decimal::from),
        ..Candidate::plain(code, weight)
    }
}

/// Sorted nanoseconds of `n` runs of `work`, after `warm` unmeasured.
async fn timed_ns<F, Fut>(warm: usize, n: usize, mut work: F) -> Vec<u64>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for i in 0..warm {
        work(i).await;
    }
    let mut out = Vec::with_capacity(n);
    for i in warm..warm + n {
        let started = Instant::now();
        work(i).await;
        out.push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    out.sort_unstable();
    out
}

#[tokio::main]
async fn main() -> Result<()> {
    if let Some(url) = std::env::args().nth(1) {
        std::env::set_var("PAYMENTS_TEST_DATABASE_URL", url);
    }
    let svc = TestService::start_with(
        Profile::Sandbox,
        Arc::new(ManualClock::at_system_time()),
        |c| {
            c.channels = vec![channel(c, "ONE"), channel(c, "TWO"), channel(c, "THREE")];
            c.routing.tables = vec![RoutingTableConfig {
                currency: "BDT".into(),
                direction: RoutedDirection::Deposit,
                merchant: None,
                candidates: vec![
                    banded("ONE", 60, Some(50_000)),
                    banded("TWO", 40, Some(50_000)),
                    banded("THREE", 0, None),
                ],
            }];
            c.callback_worker = false;
        },
    )
    .await?;
    let app = svc.service.app().clone();
    let merchant = svc.new_merchant("Routing bench").await?.merchant;
    let scope = Scope {
        currency: "BDT".into(),
        direction: RoutedDirection::Deposit,
        merchant_id: Some(merchant.id.clone()),
    };

    // 1. The decision alone.
    let amount = Decimal::from(100);
    let decisions = timed_ns(20_000, 200_000, |_| {
        let (app, scope, code) = (&app, &scope, &merchant.code);
        async move {
            let (table, plan) = app.router.plan(app, scope, code, amount, &[]).unwrap();
            let decision = routing::decision(&table, &plan, &plan.order[0], Vec::new(), Vec::new());
            std::hint::black_box(decision.to_map());
        }
    })
    .await;

    // 2. and 3. Creates with a table of one candidate, of three, and of one
    // with a daily limit: three merchants, each with a table of its own,
    // created for in turn, so that each sees the database as the others do.
    let tables = [
        ("one candidate", vec![Candidate::plain("ONE", 100)]),
        (
            "three candidates",
            vec![
                banded("ONE", 60, Some(50_000)),
                banded("TWO", 40, Some(50_000)),
                banded("THREE", 0, None),
            ],
        ),
        (
            "one candidate with a daily limit",
            vec![Candidate {
                daily_limit: Some(Decimal::from(1_000_000_000)),
                ..Candidate::plain("ONE", 100)
            }],
        ),
    ];
    let mut merchants = Vec::new();
    for (label, candidates) in tables {
        let m = svc.new_merchant(label).await?.merchant;
        routing::set(
            &app,
            &payments_testing::operator(payments_service::domain::people::Action::SetRouting),
            routing::NewTable {
                currency: "BDT".into(),
                direction: RoutedDirection::Deposit,
                merchant_id: Some(m.id.clone()),
                candidates,
            },
        )
        .await?;
        merchants.push((label, m, Vec::new()));
    }
    for i in 0..3_300 {
        for (k, (_, m, times)) in merchants.iter_mut().enumerate() {
            let new = payments_testing::new_deposit(&format!("RB{k}-{i}"), amount, "BDT", None);
            let started = Instant::now();
            deposits::create(&app, m, new).await?;
            if i >= 300 {
                times.push(u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX));
            }
        }
    }
    let creates: Vec<(&str, Vec<u32>)> = merchants
        .into_iter()
        .map(|(label, _, mut times)| {
            times.sort_unstable();
            (label, times)
        })
        .collect();

    let us = |sorted: &[u64], q: f64| {
        let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
        sorted[i] as f64 / 1000.0
    };
    let mut line = serde_json::json!({
        "decision_median_us": us(&decisions, 0.5),
        "decision_p99_us": us(&decisions, 0.99),
        "decisions": decisions.len(),
        "database": if std::env::var("PAYMENTS_TEST_DATABASE_URL").is_ok() { "postgresql" } else { "sqlite" },
    });
    for (label, times) in &creates {
        line[format!("create_median_ms {label}")] = serde_json::json!(quantile_ms(times, 0.5));
        line[format!("create_p99_ms {label}")] = serde_json::json!(quantile_ms(times, 0.99));
    }
    println!("{line}");
    Ok(())
}
