//! Expiry is a line on the injected clock: 200 deposits whose `expire_at`
//! falls on staggered seconds, the real expiry worker running, and late
//! payments arriving at the very second an order expires. The worker polls
//! only once an hour here, so nothing but its alarm (a creation, the clock
//! moving) can wake it in time.

use payments_service::app::deposits;
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::error::ApiError;
use payments_service::domain::status::DepositStatus;
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::Arc;
use std::time::Duration;

const T0: i64 = 1_800_000_000;
const ORDERS: i64 = 200;

/// Waits (in real time, bounded) until the worker has expired `order_no`.
async fn expired_soon(app: &payments_service::app::App, order_no: &str) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let order = deposits::find_any(app, order_no).await.unwrap();
        if order.status == DepositStatus::Expired {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn two_hundred_staggered_orders_each_expire_at_their_own_second() {
    let clock = ManualClock::at(T0);
    let service = TestService::start_with(Profile::Sandbox, Arc::new(clock.clone()), |c| {
        c.expiry_interval_seconds = 3600;
    })
    .await
    .unwrap();
    let app = service.service.app().clone();
    let merchant = service.new_merchant("Expiry").await.unwrap().merchant;
    let validity = app.config.deposit_validity_seconds;

    // Created over 300 seconds, one or two a second, so that their
    // expire_at fall on staggered seconds, some shared, some empty.
    let mut orders: Vec<(i64, String)> = Vec::new();
    for i in 0..ORDERS {
        clock.set(T0 + i * 3 / 2);
        let order = deposits::create(
            &app,
            &merchant,
            payments_testing::new_deposit(
                &format!("LINE-{i}"),
                Decimal::from(100),
                "THB",
                Some("http://127.0.0.1:9/cb"),
            ),
        )
        .await
        .unwrap();
        assert_eq!(order.expire_at.timestamp(), clock.unix() + validity);
        orders.push((order.expire_at.timestamp(), order.order_no));
    }
    let first = orders.first().unwrap().0;
    let last = orders.last().unwrap().0;

    let mut late_payments_refused = 0;
    for t in first..=last {
        clock.set(t);
        let due_now: Vec<&(i64, String)> = orders.iter().filter(|(at, _)| *at == t).collect();
        // Every tenth order is paid at the very second it expires, before
        // the worker is told the clock moved: the payment itself must find
        // the order expired.
        for (_, order_no) in &due_now {
            let index: usize = orders.iter().position(|(_, o)| o == order_no).unwrap();
            if index.is_multiple_of(10) {
                match deposits::complete(&app, &payments_testing::SET_UP, order_no, None, None)
                    .await
                {
                    Err(ApiError::InvalidStateTransition { status, .. }) => {
                        assert_eq!(status, "expired", "{order_no}");
                        late_payments_refused += 1;
                    }
                    other => panic!("a payment at expire_at of {order_no} answered {other:?}"),
                }
            }
        }
        app.clock_moved();
        for (at, order_no) in &due_now {
            assert!(
                expired_soon(&app, order_no).await,
                "{order_no} (expire_at {at}) still pending with the clock at {t}"
            );
        }
        // Nothing expires early: the next second's orders still wait.
        for (_, order_no) in orders.iter().filter(|(at, _)| *at == t + 1) {
            let order = deposits::find_any(&app, order_no).await.unwrap();
            assert_eq!(order.status, DepositStatus::Pending, "{order_no} at {t}");
        }
    }
    assert_eq!(late_payments_refused, 20);

    // Each expired exactly once, with its callback, and nothing was paid.
    for (_, order_no) in &orders {
        let order = deposits::find_any(&app, order_no).await.unwrap();
        assert_eq!(order.status, DepositStatus::Expired, "{order_no}");
        let o = order_no.clone();
        let events: Vec<String> = app
            .db
            .run(|s| Box::pin(async move { s.callback_deliveries_of(&o).await }))
            .await
            .unwrap()
            .into_iter()
            .map(|d| d.event)
            .collect();
        assert_eq!(events, vec!["deposit.expired".to_string()], "{order_no}");
    }
    let check = payments_service::app::ledger::check(&app).await.unwrap();
    assert!(check.differences.is_empty(), "{:?}", check.differences);
}
