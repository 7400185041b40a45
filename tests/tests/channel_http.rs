//! A channel of kind `http`: the service calls an adapter out of process
//! through the generated client of `openapi/channel.json`, every call
//! signed. A channel deposit's `payment_url` comes from the adapter and an
//! approved payout is handed to it once; the adapter's refusal fails the
//! payout (funds released), while an adapter that cannot be reached or
//! refuses the service's signature leaves the outcome unknown: the payout
//! stays approved and no deposit is stored.

#[allow(dead_code)] // each test binary uses its own part of this module
mod adapter;

use adapter::fixture::Fixture;

use payments_service::app::deposits;
use payments_service::app::orders;
use payments_service::channels::PayoutState;
use payments_service::clock::SystemClock;
use payments_service::domain::error::ApiError;
use payments_service::domain::status::WithdrawalStatus;
use rust_decimal::Decimal;
use std::sync::Arc;

#[tokio::test]
async fn a_deposit_and_a_payout_reach_the_adapter_signed_and_once() {
    let (adapter, url) = adapter::start();
    let f = Fixture::start(&url, adapter::SECRET, Arc::new(SystemClock)).await;
    f.fund().await;

    let new = payments_testing::new_deposit("CH-D1", Decimal::from(1_000), "BDT", None);
    let order = deposits::create(&f.app, &f.merchant, new).await.unwrap();
    let (payment_url, channel_order_no) = {
        let records = adapter.app_private().records.lock().unwrap();
        let (asked, payment) = &records.payments[&order.order_no];
        assert_eq!(asked.amount.to_string(), "1000.0000");
        assert_eq!(asked.currency_code.to_string(), "BDT");
        assert_eq!(asked.expire_at, order.expire_at);
        assert_eq!(
            asked.notify_url,
            format!(
                "{}/api/v1/channels/SIMULATOR/notifications",
                f.service.base_url()
            )
        );
        (
            payment.payment_url.clone(),
            payment.channel_order_no.clone(),
        )
    };
    assert_eq!(order.payment_url.as_deref(), Some(payment_url.as_str()));
    assert_eq!(
        order.channel_order_no.as_deref(),
        Some(channel_order_no.as_str())
    );

    let w = f.approved_withdrawal("PAY-1", "1234567890").await;
    assert_eq!(w.status, WithdrawalStatus::Processing);
    let reference = {
        let records = adapter.app_private().records.lock().unwrap();
        assert_eq!(records.payouts.len(), 1);
        let (asked, payout) = &records.payouts[&w.order_no];
        assert_eq!(
            w.channel_order_no.as_deref(),
            Some(payout.payout_reference.as_str())
        );
        assert_eq!(asked.amount.to_string(), "100.0000");
        assert_eq!(asked.account_no, "1234567890");
        assert_eq!(asked.account_holder, "Somchai Jaidee");
        assert_eq!(asked.bank_code, "SCB");
        payout.payout_reference.clone()
    };

    // Asked about it, the adapter answers what it has; about an order it
    // never took, that it has no record (sending it is then safe).
    let channel = f.app.channels.by_code("SIMULATOR").unwrap();
    assert_eq!(
        channel.inquire_payout(&w.order_no).await.unwrap(),
        Some(PayoutState::Accepted { reference })
    );
    assert_eq!(
        channel
            .inquire_payout("W20990101NEVERSENT01")
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn the_adapter_s_refusal_fails_the_payout_and_releases_its_funds() {
    let (adapter, url) = adapter::start();
    let f = Fixture::start(&url, adapter::SECRET, Arc::new(SystemClock)).await;
    f.fund().await;
    let before = f.balance().await;
    let w = f.approved_withdrawal("PAY-NO", "0000111122").await;
    assert_eq!(w.status, WithdrawalStatus::Failed);
    assert_eq!(f.balance().await, before);
    assert!(adapter
        .app_private()
        .records
        .lock()
        .unwrap()
        .payouts
        .is_empty());
}

#[tokio::test]
async fn an_adapter_that_disagrees_or_is_gone_leaves_the_outcome_unknown() {
    // The adapter refuses the service's signature (another secret): not the
    // channel's word on the payout, so it stays approved to be asked again.
    let (adapter, url) = adapter::start();
    let f = Fixture::start(
        &url,
        b"a secret the adapter does not share!!",
        Arc::new(SystemClock),
    )
    .await;
    f.fund().await;
    let w = f.approved_withdrawal("PAY-401", "1234567890").await;
    assert_eq!(w.status, WithdrawalStatus::Approved);
    assert_eq!(w.channel_order_no, None);
    let new = payments_testing::new_deposit("CH-401", Decimal::from(500), "BDT", None);
    assert!(matches!(
        deposits::create(&f.app, &f.merchant, new).await,
        Err(ApiError::Unavailable(_))
    ));
    assert!(adapter
        .app_private()
        .records
        .lock()
        .unwrap()
        .payouts
        .is_empty());

    // Nothing listens at the adapter's address: no deposit is stored, and
    // the merchant may send the same request again.
    adapter.close().await.unwrap();
    let gone = Fixture::start(&url, adapter::SECRET, Arc::new(SystemClock)).await;
    let new = payments_testing::new_deposit("CH-GONE", Decimal::from(500), "BDT", None);
    assert!(matches!(
        deposits::create(&gone.app, &gone.merchant, new).await,
        Err(ApiError::Unavailable(_))
    ));
    assert!(matches!(
        orders::row_by_merchant_order_no::<deposits::Deposit>(
            &gone.app,
            &gone.merchant.id,
            "CH-GONE"
        )
        .await,
        Ok(None)
    ));
}
