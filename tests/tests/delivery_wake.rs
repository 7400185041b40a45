//! The delivery worker is woken by the store's unit of work, not by each
//! caller: every commit that makes a callback due rings it, and nothing
//! else does. The bell is read directly (no worker runs here), so each
//! check is exact rather than a race against the worker's 5-second nap.

use futures::FutureExt;
use payments_service::app::deposits;
use payments_service::app::withdrawals::{self, NewWithdrawal, WithdrawalDetails};
use payments_service::app::App;
use payments_service::clock::ManualClock;
use payments_service::domain::people::Action;
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::Arc;

/// Whether the bell rang since the last look (and silences it).
fn rang(app: &App) -> bool {
    app.wake.notified().now_or_never().is_some()
}

#[tokio::test]
async fn only_commits_that_queue_a_callback_wake_the_worker() {
    let clock = ManualClock::at(1_800_000_000);
    let service = TestService::start(Profile::Sandbox, Arc::new(clock))
        .await
        .unwrap();
    let app = service.service.app().clone();
    let m = service.new_merchant("Wake").await.unwrap().merchant;
    let url = Some("http://127.0.0.1:9/cb");
    let new = |no: &str, url: Option<&str>| {
        payments_testing::new_deposit(no, Decimal::from(100), "THB", url)
    };
    rang(&app);

    let quiet = deposits::create(&app, &m, new("W-1", None)).await.unwrap();
    let called = deposits::create(&app, &m, new("W-2", url)).await.unwrap();
    assert!(!rang(&app), "creating an order queues no callback");

    deposits::complete(&app, &payments_testing::SET_UP, &quiet.order_no, None, None)
        .await
        .unwrap();
    assert!(!rang(&app), "no callback_url, no record, no bell");

    deposits::complete(
        &app,
        &payments_testing::SET_UP,
        &called.order_no,
        None,
        None,
    )
    .await
    .unwrap();
    assert!(rang(&app), "a completion that queued deposit.completed");

    assert!(
        deposits::cancel(&app, &payments_testing::SET_UP, &called.order_no, None)
            .await
            .is_err()
    );
    assert!(!rang(&app), "a refused move commits nothing");

    let w = withdrawals::create(
        &app,
        &m,
        NewWithdrawal {
            details: WithdrawalDetails {
                callback_url: url.map(String::from),
                ..Default::default()
            },
            ..payments_testing::new_withdrawal("W-3", Decimal::from(10), "THB", "1")
        },
    )
    .await
    .unwrap();
    assert!(!rang(&app), "a pending withdrawal queues nothing");
    withdrawals::approve(
        &app,
        &payments_testing::operator(Action::ApproveWithdrawal),
        &w.order_no,
        None,
    )
    .await
    .unwrap();
    assert!(rang(&app), "an approval that queued withdrawal.approved");

    let o = called.order_no.clone();
    let record = app
        .db
        .run(|s| Box::pin(async move { s.callback_deliveries_of(&o).await }))
        .await
        .unwrap()
        .remove(0);
    assert!(!rang(&app), "reading records rings nothing");
    payments_service::app::callbacks::retry(&app, &payments_testing::SET_UP, &record.id)
        .await
        .unwrap();
    assert!(rang(&app), "an operator's retry makes the record due again");
}

/// Issue 53: after QA advances the sandbox's clock past a billing period's
/// end, the schedule looks at once, as the other workers do, instead of at
/// its next real minute. The bell is read directly, as above; nothing else
/// rings it.
#[tokio::test]
async fn a_moved_clock_wakes_the_billing_schedule_and_nothing_else_does() {
    let clock = ManualClock::at(1_800_000_000);
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    let app = service.service.app().clone();
    let billing_rang = |app: &App| app.billing.notified().now_or_never().is_some();
    assert!(!billing_rang(&app), "quiet at start");
    let m = service.new_merchant("Billed").await.unwrap().merchant;
    deposits::create(
        &app,
        &m,
        payments_testing::new_deposit("B-1", Decimal::from(100), "THB", None),
    )
    .await
    .unwrap();
    assert!(!billing_rang(&app), "orders do not ring it");

    clock.advance(86_400);
    app.clock_moved();
    assert!(billing_rang(&app), "the moved clock rang it");
    assert!(!billing_rang(&app), "once");
}
