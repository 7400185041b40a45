//! A channel of kind `http`: the service calls an adapter out of process
//! through the generated client of `openapi/channel.json`, every call
//! signed. A channel deposit's `payment_url` comes from the adapter and an
//! approved payout is handed to it once; the adapter's refusal fails the
//! payout (funds released), while an adapter that cannot be reached or
//! refuses the service's signature leaves the outcome unknown: the payout
//! stays approved and no deposit is stored.

#[allow(dead_code)] // each test binary uses its own part of this module
mod adapter;

use payments_service::app::deposits;
use payments_service::app::orders;
use payments_service::app::withdrawals::{self, NewWithdrawal, Withdrawal};
use payments_service::app::App;
use payments_service::clock::SystemClock;
use payments_service::domain::error::ApiError;
use payments_service::domain::status::WithdrawalStatus;
use payments_service::Profile;
use payments_testing::{TestService, TEST_OPERATOR};
use rust_decimal::Decimal;
use std::sync::Arc;

struct Fixture {
    service: TestService,
    app: Arc<App>,
    merchant: payments_service::app::merchants::Merchant,
}

impl Fixture {
    /// The sandbox with its channel (THB and BDT) turned into an `http`
    /// channel at `base_url`, signing with `secret`.
    async fn start(base_url: &str, secret: &[u8]) -> Fixture {
        let (base_url, secret) = (base_url.to_string(), secret.to_vec());
        let service = TestService::start_with(Profile::Sandbox, Arc::new(SystemClock), |c| {
            let channel = &mut c.channels[0];
            channel.kind = "http".into();
            channel.base_url = Some(base_url);
            channel.secret = Some(String::from_utf8(secret).unwrap());
            channel.request_timeout_ms = Some(2_000);
        })
        .await
        .unwrap();
        let app = service.service.app().clone();
        let merchant = service.new_merchant("Adapters").await.unwrap().merchant;
        Fixture {
            service,
            app,
            merchant,
        }
    }

    /// A THB balance from a completed account deposit (no channel).
    async fn fund(&self) {
        payments_testing::fund(
            &self.app,
            &self.merchant,
            "FUND-1",
            Decimal::from(1_000),
            "THB",
        )
        .await
        .unwrap();
    }

    async fn balance(&self) -> (Decimal, Decimal) {
        payments_testing::balance(&self.app, &self.merchant.id, "THB")
            .await
            .unwrap()
    }

    async fn approved_withdrawal(&self, no: &str, account: &str) -> Withdrawal {
        let new = NewWithdrawal {
            merchant_order_no: no.into(),
            amount: Decimal::from(100),
            currency: "THB".into(),
            beneficiary_name: "Somchai Jaidee".into(),
            beneficiary_account: account.into(),
            beneficiary_bank_code: "SCB".into(),
            beneficiary_bank_branch: None,
            callback_url: None,
            extra_data: None,
            fingerprint: no.into(),
        };
        let w = withdrawals::create(&self.app, &self.merchant, new)
            .await
            .unwrap();
        withdrawals::approve(&self.app, &w.row.order_no, TEST_OPERATOR, None)
            .await
            .unwrap();
        orders::any::<Withdrawal>(&self.app, &w.row.order_no)
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn a_deposit_and_a_payout_reach_the_adapter_signed_and_once() {
    let (adapter, url) = adapter::start();
    let f = Fixture::start(&url, adapter::SECRET).await;
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
    assert_eq!(w.row.status, WithdrawalStatus::Processing);
    let records = adapter.app_private().records.lock().unwrap();
    assert_eq!(records.payouts.len(), 1);
    let (asked, payout) = &records.payouts[&w.row.order_no];
    assert_eq!(
        w.row.channel_order_no.as_deref(),
        Some(payout.payout_reference.as_str())
    );
    assert_eq!(asked.amount.to_string(), "100.0000");
    assert_eq!(asked.account_no, "1234567890");
    assert_eq!(asked.account_holder, "Somchai Jaidee");
    assert_eq!(asked.bank_code, "SCB");
}

#[tokio::test]
async fn the_adapter_s_refusal_fails_the_payout_and_releases_its_funds() {
    let (adapter, url) = adapter::start();
    let f = Fixture::start(&url, adapter::SECRET).await;
    f.fund().await;
    let before = f.balance().await;
    let w = f.approved_withdrawal("PAY-NO", "0000111122").await;
    assert_eq!(w.row.status, WithdrawalStatus::Failed);
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
    let f = Fixture::start(&url, b"a secret the adapter does not share!!").await;
    f.fund().await;
    let w = f.approved_withdrawal("PAY-401", "1234567890").await;
    assert_eq!(w.row.status, WithdrawalStatus::Approved);
    assert_eq!(w.row.channel_order_no, None);
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
    let gone = Fixture::start(&url, adapter::SECRET).await;
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
