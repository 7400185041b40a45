//! Routing among several channels of one currency (issue 54).
//!
//! - 10,000 deposits over weights 70/30 land within three points of each
//!   share (two in-process simulator channels, so that only the draw is
//!   measured).
//! - Chaos: two `payments-channel-sim` processes for BDT, one failing half
//!   of its calls in every way a call can fail (a 503 before acting, a
//!   refusal, a 500 after acting, an answer later than the service waits)
//!   and killed and started again halfway; `ROUTING_CHAOS_ORDERS` deposits
//!   and as many payouts (1,000 each unless set). At least 99 % of the
//!   deposits are created; no payout is in both simulators' records; every
//!   payout ends completed, failed by a refusal, or set aside for an
//!   operator; the ledger check is clean.
//!
//! With `PAYMENTS_TEST_DATABASE_URL` they run on PostgreSQL.

use payments_service::app::{deposits, ledger, withdrawals};
use payments_service::clock::{Clock, ManualClock};
use payments_service::config::{ChannelConfig, Config, RoutingTableConfig};
use payments_service::domain::error::ApiError;
use payments_service::domain::people::Action;
use payments_service::domain::routing::table::{Candidate, RoutedDirection};
use payments_service::domain::status::WithdrawalStatus;
use payments_service::Profile;
use payments_testing::channel_sim::{until, ChannelSim};
use payments_testing::TestService;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

fn table(
    currency: &str,
    direction: RoutedDirection,
    weights: &[(&str, u32)],
) -> RoutingTableConfig {
    RoutingTableConfig {
        currency: currency.into(),
        direction,
        merchant: None,
        candidates: weights
            .iter()
            .map(|(code, w)| Candidate::plain(code, *w))
            .collect(),
    }
}

/// The sandbox's simulator channel as another channel, `code`.
fn in_process(config: &Config, code: &str) -> ChannelConfig {
    ChannelConfig {
        id: format!("chan-{}", code.to_lowercase()),
        code: code.into(),
        ..config.channels[0].clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_deposits_split_seventy_thirty_within_three_points() {
    let clock = ManualClock::at_system_time();
    let svc = TestService::start_with(Profile::Sandbox, Arc::new(clock), |c| {
        c.channels = vec![in_process(c, "SEVENTY"), in_process(c, "THIRTY")];
        c.routing.tables = vec![table(
            "BDT",
            RoutedDirection::Deposit,
            &[("SEVENTY", 70), ("THIRTY", 30)],
        )];
    })
    .await
    .unwrap();
    let app = svc.service.app().clone();
    let merchant = svc.new_merchant("Weights").await.unwrap().merchant;
    let n = 10_000;
    let mut by_channel: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..n {
        let new = payments_testing::new_deposit(&format!("W-{i}"), Decimal::from(100), "BDT", None);
        let order = deposits::create(&app, &merchant, new).await.unwrap();
        let code = order.payment_snapshot["routing_channel"].clone();
        assert_eq!(
            order.payment_snapshot["routing_rule"].split(',').next(),
            Some("drawn by weight"),
            "{:?}",
            order.payment_snapshot
        );
        *by_channel.entry(code).or_default() += 1;
    }
    let share = |code: &str| by_channel.get(code).copied().unwrap_or(0) as f64 * 100.0 / n as f64;
    eprintln!("{n} deposits over 70/30: {by_channel:?}");
    assert!((share("SEVENTY") - 70.0).abs() <= 3.0, "{by_channel:?}");
    assert!((share("THIRTY") - 30.0).abs() <= 3.0, "{by_channel:?}");
}

fn orders() -> usize {
    std::env::var("ROUTING_CHAOS_ORDERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000)
}

async fn control(http: &reqwest::Client, sim: &ChannelSim, path: &str) -> Value {
    http.get(format!("{}/control/{path}", sim.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn set_faults(http: &reqwest::Client, sim: &ChannelSim, faults: &Value) {
    let answer = http
        .put(format!("{}/control/faults", sim.url))
        .json(faults)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "{}", answer.text().await.unwrap());
}

/// Half of the failing channel's calls fail, each way a call can: 20 % a
/// 503 before acting, 10 % refused, 10 % a 500 after acting, 10 % answered
/// after the service stopped waiting.
fn half_failing() -> Value {
    json!({
        "error_percent": 20, "refuse_percent": 10, "error_after_percent": 10,
        "timeout_percent": 10, "hang_ms": 600
    })
}

/// The service's clock a second on, and never behind the real time: the
/// simulators sign with the real time.
fn tick(clock: &ManualClock) {
    let real = chrono::Utc::now().timestamp();
    clock.set(real.max(clock.unix() + 1));
}

/// Each simulator's payouts: order number to status.
async fn payouts(http: &reqwest::Client, sim: &ChannelSim) -> BTreeMap<String, String> {
    control(http, sim, "payouts").await["payouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["order_no"].as_str().unwrap().to_string(),
                p["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_channels_one_failing_and_restarted_no_payout_twice_and_the_books_agree() {
    let n = orders();
    let mut failing = ChannelSim::start(&["--settle-after-ms", "20", "--seed", "54"]).unwrap();
    let steady = ChannelSim::start(&["--settle-after-ms", "20", "--seed", "55"]).unwrap();
    let clock = ManualClock::at_system_time();
    let svc = TestService::start_with(Profile::Sandbox, Arc::new(clock.clone()), |c| {
        let http = |sim: &ChannelSim, code: &str| ChannelConfig {
            // Shorter than the failing simulator's hang: the service gives up first.
            request_timeout_ms: Some(300),
            ..sim.channel_config_as(&format!("chan-{}", code.to_lowercase()), code)
        };
        c.channels = vec![http(&failing, "FAILING"), http(&steady, "STEADY")];
        let both = [("FAILING", 50), ("STEADY", 50)];
        c.routing.tables = vec![
            table("BDT", RoutedDirection::Deposit, &both),
            table("BDT", RoutedDirection::Withdrawal, &both),
        ];
        c.payout_inquire_after_seconds = 1;
    })
    .await
    .unwrap();
    let app = svc.service.app().clone();
    let merchant = svc.new_merchant("Chaos").await.unwrap().merchant;
    let http = reqwest::Client::new();
    set_faults(&http, &failing, &half_failing()).await;

    // Deposits: each asked once, as a merchant's one request; a channel
    // that refuses or does not answer is passed for the other within it.
    let mut created = 0;
    let mut unavailable = 0;
    for i in 0..n {
        if i == n / 2 {
            failing.restart().unwrap();
            set_faults(&http, &failing, &half_failing()).await;
        }
        tick(&clock);
        let new =
            payments_testing::new_deposit(&format!("CHAOS-D-{i}"), Decimal::from(100), "BDT", None);
        match deposits::create(&app, &merchant, new).await {
            Ok(_) => created += 1,
            Err(ApiError::Unavailable(_)) => unavailable += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    eprintln!("deposits: {created} of {n} created, {unavailable} answered 503");
    assert!(created * 100 >= n * 99, "{created} of {n} created");

    // Payouts: funded once, each created and approved (dispatched at once);
    // the failing channel is killed and started again halfway.
    let funding = loop {
        tick(&clock);
        let new =
            payments_testing::new_deposit("CHAOS-FUND", Decimal::from(200 * n as i64), "BDT", None);
        match deposits::create(&app, &merchant, new).await {
            Ok(order) => break order,
            Err(ApiError::Unavailable(_)) => {}
            Err(e) => panic!("{e:?}"),
        }
    };
    deposits::complete(
        &app,
        &payments_testing::operator(Action::CompleteDeposit),
        &funding.order_no,
        None,
        None,
    )
    .await
    .unwrap();
    let mut ours = Vec::new();
    for i in 0..n {
        if i == n / 2 {
            failing.restart().unwrap();
            set_faults(&http, &failing, &half_failing()).await;
        }
        tick(&clock);
        let new = payments_testing::new_withdrawal(
            &format!("CHAOS-W-{i}"),
            Decimal::from(100),
            "BDT",
            "1234567890",
        );
        let w = withdrawals::create(&app, &merchant, new).await.unwrap();
        withdrawals::approve(
            &app,
            &payments_testing::operator(Action::ApproveWithdrawal),
            &w.order_no,
            None,
        )
        .await
        .unwrap();
        ours.push(w.order_no);
    }
    // The dispatcher's and the inquirer's passes until each payout ends:
    // completed, failed (every channel refused it), or set aside.
    let waiting = std::sync::Mutex::new(ours.clone());
    until("every payout ended", Duration::from_secs(600), || async {
        tick(&clock);
        withdrawals::dispatch_due(&app).await.unwrap();
        withdrawals::inquire_due(&app).await.unwrap();
        let before = waiting.lock().unwrap().clone();
        let mut still = Vec::new();
        for no in before {
            let w = withdrawals::find_any(&app, &no).await.unwrap();
            let ended = matches!(
                w.status,
                WithdrawalStatus::Completed | WithdrawalStatus::Failed
            ) || w.needs_manual_intervention;
            if !ended {
                still.push(no);
            }
        }
        let done = still.is_empty();
        *waiting.lock().unwrap() = still;
        done
    })
    .await;

    let (at_failing, at_steady) = (
        payouts(&http, &failing).await,
        payouts(&http, &steady).await,
    );
    let ours_set: BTreeSet<&String> = ours.iter().collect();
    let twice: Vec<&String> = at_failing
        .keys()
        .filter(|no| at_steady.contains_key(*no))
        .collect();
    assert!(
        twice.is_empty(),
        "payouts in both channels' records: {twice:?}"
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for no in &ours {
        let w = withdrawals::find_any(&app, no).await.unwrap();
        let at = w.channel_id.as_deref().unwrap_or_default();
        let record = match at {
            "chan-failing" => at_failing.get(no),
            _ => at_steady.get(no),
        };
        let kind = match (w.status, w.needs_manual_intervention) {
            (WithdrawalStatus::Completed, _) => {
                assert_eq!(
                    record.map(String::as_str),
                    Some("completed"),
                    "{no} paid where it says"
                );
                "completed"
            }
            (WithdrawalStatus::Failed, _) => {
                assert!(
                    record.is_none(),
                    "{no} failed by a refusal, yet {at} has it"
                );
                "failed by refusals"
            }
            (_, true) => "set aside",
            (s, false) => panic!("{no} ended {s:?}"),
        };
        *counts.entry(kind).or_default() += 1;
    }
    for paid in at_failing.keys().chain(at_steady.keys()) {
        assert!(ours_set.contains(paid), "{paid} was paid but is not ours");
    }
    let report = ledger::check(&app).await.unwrap();
    assert!(report.ok(), "{:?}", report.differences);
    eprintln!(
        "{n} payouts: {counts:?}; the failing channel has {}, the steady one {}",
        at_failing.len(),
        at_steady.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_daily_limit_is_never_passed_and_the_next_channel_takes_the_rest() {
    let svc = TestService::start_with(
        Profile::Sandbox,
        Arc::new(ManualClock::at_system_time()),
        |c| {
            c.channels = vec![in_process(c, "LIMITED"), in_process(c, "OTHER")];
            let mut limited = Candidate::plain("LIMITED", 100);
            limited.daily_limit = Some(Decimal::from(1_000));
            c.routing.tables = vec![RoutingTableConfig {
                currency: "BDT".into(),
                direction: RoutedDirection::Deposit,
                merchant: None,
                candidates: vec![limited, Candidate::plain("OTHER", 0)],
            }];
        },
    )
    .await
    .unwrap();
    let app = svc.service.app().clone();
    let merchant = svc.new_merchant("Daily").await.unwrap().merchant;
    // Thirty at once, 100 each, against a limit of 1,000.
    let made = futures::future::join_all((0..30).map(|i| {
        let (app, merchant) = (app.clone(), merchant.clone());
        async move {
            let new =
                payments_testing::new_deposit(&format!("DAY-{i}"), Decimal::from(100), "BDT", None);
            deposits::create(&app, &merchant, new).await.unwrap()
        }
    }))
    .await;
    let at = |code: &str| {
        made.iter()
            .filter(|d| d.payment_snapshot["routing_channel"] == code)
            .count()
    };
    assert_eq!((at("LIMITED"), at("OTHER")), (10, 20));
    let full = made
        .iter()
        .filter(|d| {
            d.payment_snapshot
                .get("routing_skipped")
                .is_some_and(|s| s.contains("LIMITED: over_daily_limit"))
        })
        .count();
    assert_eq!(full, 20, "each that fell past it says why");
    let used = payments_service::app::routing::used_today(&app)
        .await
        .unwrap();
    assert_eq!(
        used.get(&(
            "LIMITED".to_string(),
            "BDT".to_string(),
            "deposit".to_string()
        )),
        Some(&Decimal::from(1_000))
    );
}
