//! Moves that time and workers make, on an injected clock, and the callback
//! records every move writes in its own transaction.

use payments_service::app::deposits::{self, NewDeposit};
use payments_service::app::merchants::Merchant;
use payments_service::app::withdrawals::{self, NewWithdrawal, WithdrawalDetails};
use payments_service::app::App;
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::error::ApiError;
use payments_service::domain::people::Action;
use payments_service::domain::status::DepositStatus;
use payments_service::{server, Profile};
use payments_testing::TestService;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::sync::Arc;

async fn start() -> (TestService, ManualClock) {
    let clock = ManualClock::at(1_800_000_000);
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    (service, clock)
}

fn new_deposit(no: &str, amount: i64, callback_url: Option<&str>) -> NewDeposit {
    payments_testing::new_deposit(no, Decimal::from(amount), "THB", callback_url)
}

async fn deliveries(app: &App, order_no: &str) -> Vec<(String, Value)> {
    let o = order_no.to_string();
    app.db
        .run(|s| Box::pin(async move { s.callback_deliveries_of(&o).await }))
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.event, serde_json::from_str(&d.body).unwrap()))
        .collect()
}

async fn merchant(service: &TestService) -> Merchant {
    service.new_merchant("Lifecycle").await.unwrap().merchant
}

#[tokio::test]
async fn a_deposit_expires_exactly_at_expire_at_with_its_callback() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let m = merchant(&service).await;
    let order = deposits::create(
        &app,
        &m,
        new_deposit("EXP-1", 100, Some("http://127.0.0.1:9/cb")),
    )
    .await
    .unwrap();
    let validity = app.config.deposit_validity_seconds;
    assert_eq!(order.expire_at.timestamp(), clock.unix() + validity);

    clock.advance(validity - 1);
    assert_eq!(
        deposits::expire_due(&app).await.unwrap(),
        0,
        "not due one second early"
    );
    clock.advance(1);
    assert_eq!(deposits::expire_due(&app).await.unwrap(), 1);
    assert_eq!(deposits::expire_due(&app).await.unwrap(), 0, "expired once");

    let expired = deposits::find_any(&app, &order.order_no).await.unwrap();
    assert_eq!(expired.status, DepositStatus::Expired);
    assert_eq!(expired.callback_status.as_str(), "pending");
    let records = deliveries(&app, &order.order_no).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].0, "deposit.expired");
    assert_eq!(
        records[0].1,
        json!({
            "event": "deposit.expired",
            "order_no": order.order_no,
            "merchant_order_no": "EXP-1",
            "amount": "100.0000",
            "actual_amount": "0.0000",
            "currency": "THB",
            "status": "expired",
            "expired_at": "2027-01-15T08:30:00Z",
        })
    );
}

#[tokio::test]
async fn a_matched_deposit_does_not_expire() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let m = merchant(&service).await;
    let order = deposits::create(&app, &m, new_deposit("EXP-2", 100, None))
        .await
        .unwrap();
    deposits::record_match(&app, &order.order_no, None)
        .await
        .unwrap();
    clock.advance(app.config.deposit_validity_seconds + 60);
    assert_eq!(deposits::expire_due(&app).await.unwrap(), 0);
    let refused = deposits::expire(&app, &order.order_no).await.unwrap_err();
    assert!(
        matches!(refused, ApiError::InvalidStateTransition { .. }),
        "{refused}"
    );
    assert_eq!(
        deposits::find_any(&app, &order.order_no)
            .await
            .unwrap()
            .status,
        DepositStatus::Matched
    );
    assert!(
        deliveries(&app, &order.order_no).await.is_empty(),
        "no callback_url, no record"
    );
}

#[tokio::test]
async fn every_event_writes_the_seed_body_and_only_with_a_callback_url() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let m = merchant(&service).await;
    let url = Some("http://127.0.0.1:9/cb");

    let order = deposits::create(&app, &m, new_deposit("CB-1", 250, url))
        .await
        .unwrap();
    clock.advance(10);
    deposits::record_match(&app, &order.order_no, None)
        .await
        .unwrap();
    clock.advance(10);
    deposits::complete(&app, &payments_testing::SET_UP, &order.order_no, None, None)
        .await
        .unwrap();
    let records = deliveries(&app, &order.order_no).await;
    let events: Vec<&str> = records.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(events, ["deposit.matched", "deposit.completed"]);
    assert_eq!(
        records[1].1,
        json!({
            "event": "deposit.completed",
            "order_no": order.order_no,
            "merchant_order_no": "CB-1",
            "amount": "250.0000",
            "actual_amount": "250.0000",
            "currency": "THB",
            "status": "completed",
            "matched_at": "2027-01-15T08:00:10Z",
            "completed_at": "2027-01-15T08:00:20Z",
        })
    );
    assert_eq!(
        records[0].1["completed_at"],
        Value::Null,
        "matched: completed_at unset"
    );

    let cancelled = deposits::create(&app, &m, new_deposit("CB-2", 10, url))
        .await
        .unwrap();
    deposits::cancel(&app, &payments_testing::SET_UP, &cancelled.order_no, None)
        .await
        .unwrap();
    let body = &deliveries(&app, &cancelled.order_no).await[0].1;
    assert_eq!(
        body["currency_code"], "THB",
        "the cancelled body carries the alias"
    );
    assert_eq!(body["actual_amount"], "0.0000");
    assert_eq!(body["status"], "cancelled");

    let w = withdrawals::create(
        &app,
        &m,
        NewWithdrawal {
            details: WithdrawalDetails {
                callback_url: url.map(String::from),
                ..Default::default()
            },
            ..payments_testing::new_withdrawal("CB-W1", Decimal::from(100), "THB", "1")
        },
    )
    .await
    .unwrap();
    withdrawals::reject(
        &app,
        &payments_testing::operator(Action::RejectWithdrawal),
        &w.order_no,
        None,
    )
    .await
    .unwrap();
    let records = deliveries(&app, &w.order_no).await;
    assert_eq!(
        records.len(),
        1,
        "pending creates no callback; rejection does"
    );
    assert_eq!(records[0].1["event"], "withdrawal.rejected");
    assert_eq!(records[0].1["amount"], "100.0000");
    assert!(records[0].1["rejected_at"].is_string());

    let silent = deposits::create(&app, &m, new_deposit("CB-3", 10, None))
        .await
        .unwrap();
    deposits::cancel(&app, &payments_testing::SET_UP, &silent.order_no, None)
        .await
        .unwrap();
    assert!(deliveries(&app, &silent.order_no).await.is_empty());
}

/// Two workers expire the same due orders at once: each order expires once
/// and gets one callback record. On PostgreSQL they are two service
/// instances on one database; SQLite is a single-instance store, so there
/// they are two workers of one instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_never_expire_an_order_twice() {
    let (service, clock) = start().await;
    let first = service.service.app().clone();
    let second = match first.db.backend() {
        payments_service::store::Backend::Postgres => {
            server::build_app(first.config.clone(), Arc::new(clock.clone()))
                .await
                .unwrap()
        }
        payments_service::store::Backend::Sqlite => first.clone(),
    };
    let m = merchant(&service).await;
    let mut order_nos = Vec::new();
    for i in 0..40 {
        let order = deposits::create(
            &first,
            &m,
            new_deposit(&format!("RX-{i}"), 10, Some("http://127.0.0.1:9/cb")),
        )
        .await
        .unwrap();
        order_nos.push(order.order_no);
    }
    clock.advance(first.config.deposit_validity_seconds);
    let (a, b) = tokio::join!(deposits::expire_due(&first), deposits::expire_due(&second));
    assert_eq!(
        a.unwrap() + b.unwrap(),
        40,
        "every due order expired exactly once"
    );
    for order_no in order_nos {
        let records = deliveries(&first, &order_no).await;
        assert_eq!(records.len(), 1, "{order_no}: {records:?}");
    }
}

/// Two workers dispatching waiting approved withdrawals at once: each is
/// dispatched once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_never_dispatch_a_withdrawal_twice() {
    let (service, clock) = start().await;
    let first = service.service.app().clone();
    let second = match first.db.backend() {
        payments_service::store::Backend::Postgres => {
            server::build_app(first.config.clone(), Arc::new(clock.clone()))
                .await
                .unwrap()
        }
        payments_service::store::Backend::Sqlite => first.clone(),
    };
    let m = merchant(&service).await;
    let funding = deposits::create(&first, &m, new_deposit("FUND", 10_000, None))
        .await
        .unwrap();
    deposits::complete(
        &first,
        &payments_testing::SET_UP,
        &funding.order_no,
        None,
        None,
    )
    .await
    .unwrap();
    let mut order_nos = Vec::new();
    for i in 0..30 {
        let w = withdrawals::create(
            &first,
            &m,
            payments_testing::new_withdrawal(&format!("DX-{i}"), Decimal::from(10), "THB", "1"),
        )
        .await
        .unwrap();
        order_nos.push(w.order_no);
    }
    assert_eq!(
        withdrawals::dispatch_due(&first).await.unwrap(),
        0,
        "pending orders wait"
    );
    // Approved but not dispatched, as after a crash between the two.
    for order_no in &order_nos {
        withdrawals::record_approval(
            &first,
            &payments_testing::operator(Action::ApproveWithdrawal),
            order_no,
            None,
        )
        .await
        .unwrap();
    }
    let (a, b) = tokio::join!(
        withdrawals::dispatch_due(&first),
        withdrawals::dispatch_due(&second)
    );
    assert_eq!(
        a.unwrap() + b.unwrap(),
        30,
        "every approved order dispatched exactly once"
    );
    for order_no in &order_nos {
        let order = withdrawals::find_any(&first, order_no).await.unwrap();
        assert_eq!(
            order.status,
            payments_service::domain::status::WithdrawalStatus::Processing
        );
        assert_eq!(
            order.channel_order_no.as_deref(),
            Some(format!("SIMPAY-{order_no}").as_str())
        );
    }
    assert_eq!(
        withdrawals::dispatch_due(&first).await.unwrap(),
        0,
        "nothing dispatched twice"
    );

    let approved = withdrawals::create(
        &first,
        &m,
        payments_testing::new_withdrawal("DX-direct", Decimal::from(10), "THB", "1"),
    )
    .await
    .unwrap();
    let returned = withdrawals::approve(
        &first,
        &payments_testing::operator(Action::ApproveWithdrawal),
        &approved.order_no,
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        returned.status,
        payments_service::domain::status::WithdrawalStatus::Approved,
        "the approval is what the caller hears"
    );
    let now = withdrawals::find_any(&first, &approved.order_no)
        .await
        .unwrap();
    assert_eq!(
        now.status,
        payments_service::domain::status::WithdrawalStatus::Processing,
        "dispatched right after approval"
    );
}
