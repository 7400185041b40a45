//! Money through `payments-channel-sim`, a separate process, with faults
//! injected on purpose: calls refused before acting (503), acted on and
//! answered 500, acted on and answered after the service gave up;
//! notifications duplicated, delayed, reordered and dropped (the service
//! finds out by asking); payers paying half; payouts returned by the bank; and the simulator killed with
//! SIGKILL and started again mid-run. Afterwards every withdrawal is
//! completed or failed exactly once, the channel's record of what it paid
//! is the service's completed set, every deposit the payer paid is
//! completed once for what was paid, and the ledger check is clean.
//!
//! `CHANNEL_SIM_ORDERS` sets how many of each (default 40); with
//! `PAYMENTS_TEST_DATABASE_URL` it runs on PostgreSQL.

#[allow(dead_code)] // each test binary uses its own part of this module
mod adapter;

use adapter::fixture::Fixture;
use payments_service::app::withdrawals::{self};
use payments_service::app::{deposits, ledger, payment_sync};
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::error::ApiError;
use payments_service::domain::people::Action;
use payments_service::domain::status::{DepositStatus, WithdrawalStatus};
use payments_testing::channel_sim::{until, ChannelSim};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

fn orders() -> usize {
    std::env::var("CHANNEL_SIM_ORDERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40)
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

async fn set_faults(http: &reqwest::Client, sim: &ChannelSim, faults: Value) {
    let answer = http
        .put(format!("{}/control/faults", sim.url))
        .json(&faults)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "{}", answer.text().await.unwrap());
}

/// Moves the service's clock a second on, and up to the real time: the
/// channel signs with the real time, and a service clock left behind would
/// refuse its notifications as stale.
fn tick(clock: &ManualClock) {
    let real = chrono::Utc::now().timestamp();
    clock.set(real.max(clock.unix() + 1));
}

/// Every call and notification fault at once, each kind at 20% or more:
/// three in five calls fail one way or another.
fn faults() -> Value {
    json!({
        "error_percent": 20, "error_after_percent": 20, "timeout_percent": 20, "hang_ms": 900,
        "drop_percent": 20, "duplicate_percent": 25, "delay_percent": 25, "delay_ms": 150,
        "reorder_percent": 25, "partial_percent": 25, "payout_fail_percent": 20
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn money_through_a_faulty_channel_moves_once_and_the_books_agree() {
    let n = orders();
    let mut sim = ChannelSim::start(&["--settle-after-ms", "30", "--seed", "31"]).unwrap();
    let clock = ManualClock::at_system_time();
    let f = Fixture::start_with(
        &sim.url,
        sim.secret.as_bytes(),
        Arc::new(clock.clone()),
        |c| {
            // Shorter than the simulator's hang: the service gives up first.
            c.channels[0].request_timeout_ms = Some(400);
            c.payout_inquire_after_seconds = 1;
        },
    )
    .await;
    let http = reqwest::Client::new();

    // Deposits: created at the channel (retried as a merchant would when
    // the outcome is unknown), paid on the simulator's page.
    set_faults(&http, &sim, faults()).await;
    let mut paid_orders = Vec::new();
    for i in 0..n {
        let no = format!("SIMDEP-{i}");
        let order = loop {
            let new = payments_testing::new_deposit(&no, Decimal::from(1_000), "BDT", None);
            match deposits::create(&f.app, &f.merchant, new).await {
                Ok(order) => break order,
                // The outcome at the channel is unknown: no deposit is
                // stored, and the merchant asks again.
                Err(ApiError::Unavailable(_)) => {}
                Err(e) => panic!("{e:?}"),
            }
        };
        let url = order.payment_url.clone().unwrap();
        let page = http
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("action=pay")
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200, "paying {url}");
        paid_orders.push(order.order_no);
    }
    let paid: BTreeMap<String, Decimal> = control(&http, &sim, "payments").await["payments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "completed")
        .map(|p| {
            let amount = Decimal::from_str(p["paid_amount"].as_str().unwrap()).unwrap();
            (p["order_no"].as_str().unwrap().to_string(), amount)
        })
        .collect();
    assert_eq!(
        paid.len(),
        n,
        "every page payment is on the channel's record"
    );
    // The service's recovery passes (a pass from 0 asks about every deposit
    // awaiting payment, as after a restart), with the clock kept near real
    // time so that the channel's signed notifications stay fresh: deposits
    // whose notification was dropped are found by asking the channel.
    tick(&clock);
    let waiting = std::sync::Mutex::new(paid_orders.clone());
    until(
        "every paid deposit completed",
        Duration::from_secs(300),
        || async {
            tick(&clock);
            payment_sync::inquire_due(&f.app, 0, clock.unix())
                .await
                .unwrap();
            let before = waiting.lock().unwrap().clone();
            let mut still = Vec::new();
            for no in before {
                let d = deposits::find_any(&f.app, &no).await.unwrap();
                if d.status != DepositStatus::Completed {
                    still.push(no);
                }
            }
            let done = still.is_empty();
            *waiting.lock().unwrap() = still;
            done
        },
    )
    .await;
    for no in &paid_orders {
        let d = deposits::find_any(&f.app, no).await.unwrap();
        assert_eq!(
            d.actual_amount, paid[no],
            "{no} is credited what the payer paid"
        );
    }

    // Withdrawals: approved (and so dispatched) while calls fail and
    // notifications go astray; the simulator is killed halfway.
    f.fund_with(Decimal::from(1_000 * n as i64)).await;
    set_faults(&http, &sim, faults()).await;
    let mut ours = Vec::new();
    let mut before_restart = Value::Null;
    for i in 0..n {
        if i == n / 2 {
            before_restart = control(&http, &sim, "stats").await;
            sim.restart().unwrap();
            set_faults(&http, &sim, faults()).await;
        }
        // Every tenth to a closed account: the channel refuses it.
        let account = if i % 10 == 9 {
            "0000111122"
        } else {
            "1234567890"
        };
        let new = payments_testing::new_withdrawal(
            &format!("SIMWD-{i}"),
            Decimal::from(100),
            "THB",
            account,
        );
        let w = withdrawals::create(&f.app, &f.merchant, new).await.unwrap();
        withdrawals::approve(
            &f.app,
            &payments_testing::operator(Action::ApproveWithdrawal),
            &w.order_no,
            None,
        )
        .await
        .unwrap();
        ours.push(w.order_no);
    }
    // The dispatcher's passes, on the service's clock: payouts in doubt
    // are asked about and re-sent only when the channel has no record.
    let waiting = std::sync::Mutex::new(ours.clone());
    until(
        "every withdrawal completed or failed",
        Duration::from_secs(300),
        || async {
            tick(&clock);
            withdrawals::dispatch_due(&f.app).await.unwrap();
            withdrawals::inquire_due(&f.app).await.unwrap();
            let before = waiting.lock().unwrap().clone();
            let mut still = Vec::new();
            for no in before {
                let w = withdrawals::find_any(&f.app, &no).await.unwrap();
                if !matches!(
                    w.status,
                    WithdrawalStatus::Completed | WithdrawalStatus::Failed
                ) {
                    still.push(no);
                }
            }
            let done = still.is_empty();
            *waiting.lock().unwrap() = still;
            done
        },
    )
    .await;

    let payouts = control(&http, &sim, "payouts").await;
    let channel_paid: BTreeSet<String> = payouts["payouts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "completed")
        .map(|p| p["order_no"].as_str().unwrap().to_string())
        .collect();
    let mut completed = BTreeSet::new();
    for no in &ours {
        let w = withdrawals::find_any(&f.app, no).await.unwrap();
        assert!(!w.needs_manual_intervention, "{no} was set aside");
        if w.status == WithdrawalStatus::Completed {
            completed.insert(no.clone());
        }
    }
    assert_eq!(
        channel_paid, completed,
        "paid at the channel = completed here"
    );
    assert!(
        completed.len() >= n / 2,
        "{} of {n} completed",
        completed.len()
    );

    let report = ledger::check(&f.app).await.unwrap();
    assert!(report.ok(), "{:?}", report.differences);
    let stats = control(&http, &sim, "stats").await;
    eprintln!(
        "{n} deposits, {n} withdrawals ({} completed); the simulator before its restart: \
         {before_restart}; after: {stats}",
        completed.len()
    );
}

/// A deposit paid at the channel whose notification was lost, with the
/// channel unable to answer at `expire_at`: the deposit is not expired on a
/// guess. Once the channel answers, the payment (now late) is held for an
/// operator, who finds it in the operator API's list of held notifications.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deposit_whose_payment_is_unknown_is_not_expired_and_late_money_is_listed_for_an_operator(
) {
    let sim = ChannelSim::start(&["--seed", "7"]).unwrap();
    let clock = ManualClock::at_system_time();
    let f = Fixture::start_with(
        &sim.url,
        sim.secret.as_bytes(),
        Arc::new(clock.clone()),
        |c| {
            c.deposit_validity_seconds = 600;
        },
    )
    .await;
    let http = reqwest::Client::new();
    let new = payments_testing::new_deposit("SIM-LATE-1", Decimal::from(700), "BDT", None);
    let order = deposits::create(&f.app, &f.merchant, new).await.unwrap();
    // The payer pays; the notification is lost on the way.
    set_faults(&http, &sim, json!({ "drop_percent": 100 })).await;
    let page = http
        .post(order.payment_url.clone().unwrap())
        .header("content-type", "application/x-www-form-urlencoded")
        .body("action=pay")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    // At expiry the channel cannot answer.
    set_faults(&http, &sim, json!({ "error_percent": 100 })).await;
    clock.advance(601);
    assert_eq!(
        payment_sync::expire_due(&f.app).await.unwrap(),
        (0, 1),
        "kept, not expired"
    );
    assert_eq!(
        deposits::find_any(&f.app, &order.order_no)
            .await
            .unwrap()
            .status,
        DepositStatus::Pending
    );
    let before = payments_testing::balance(&f.app, &f.merchant.id, "BDT")
        .await
        .unwrap();

    // The channel answers: paid, but the order is past its time.
    set_faults(&http, &sim, json!({})).await;
    assert_eq!(payment_sync::expire_due(&f.app).await.unwrap(), (0, 0));
    let late = deposits::find_any(&f.app, &order.order_no).await.unwrap();
    assert_eq!(late.status, DepositStatus::Expired);
    assert_eq!(
        payments_testing::balance(&f.app, &f.merchant.id, "BDT")
            .await
            .unwrap(),
        before,
        "nothing credited on its own"
    );
    let listed: Value = http
        .get(format!(
            "{}/api/v1/operator/channel-notifications?outcome=held&channel_code=SIMULATOR",
            f.service.base_url()
        ))
        .bearer_auth(payments_testing::TEST_OPERATOR_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let items = listed["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{listed}");
    assert_eq!(items[0]["order_no"], order.order_no.as_str());
    assert_eq!(items[0]["type"], "payment.completed");
    assert_eq!(items[0]["amount"], "700.0000");
    assert_eq!(items[0]["outcome"], "held");
}
