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
//! 2. `deposits::create` of BDT channel deposits, 3,000 each, with a table
//!    of one candidate and with one of three (bands and weights), one after
//!    the other, each after 300 unmeasured: the same work but the plan.
//! 3. The same with a daily limit on the candidate: the reservation is a
//!    statement of its own in the database.
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

/// Sorted microseconds of `n` runs of `work`, after `warm` unmeasured.
async fn timed<F, Fut>(warm: usize, n: usize, mut work: F) -> Vec<u32>
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
        out.push(u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX));
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
    let decisions = timed(20_000, 200_000, |_| {
        let (app, scope, code) = (&app, &scope, &merchant.code);
        async move {
            let (table, plan) = app.router.plan(app, scope, code, amount, &[]).unwrap();
            let decision = routing::decision(&table, &plan, &plan.order[0], Vec::new(), Vec::new());
            std::hint::black_box(decision.to_map());
        }
    })
    .await;

    // 2. and 3. Creates with a table of one candidate, of three, and of one
    // with a daily limit: the merchant's own table, set between the runs.
    let mut creates = Vec::new();
    for (label, candidates) in [
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
    ] {
        routing::set(
            &app,
            &payments_testing::operator(payments_service::domain::people::Action::SetRouting),
            routing::NewTable {
                currency: "BDT".into(),
                direction: RoutedDirection::Deposit,
                merchant_id: Some(merchant.id.clone()),
                candidates,
            },
        )
        .await?;
        let tag = creates.len();
        let times = timed(300, 3_000, |i| {
            let (app, merchant) = (&app, &merchant);
            async move {
                let new =
                    payments_testing::new_deposit(&format!("RB{tag}-{i}"), amount, "BDT", None);
                deposits::create(app, merchant, new).await.unwrap();
            }
        })
        .await;
        creates.push((label, times));
    }

    let us = |sorted: &[u32], q: f64| quantile_ms(sorted, q) * 1000.0;
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
