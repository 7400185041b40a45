//! The sandbox with its channel turned into an `http` channel, for the
//! tests that talk to an adapter.

use payments_service::app::merchants::Merchant;
use payments_service::app::withdrawals::Withdrawal;
use payments_service::app::App;
use payments_service::clock::Clock;
use payments_service::config::Config;
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::Arc;

pub struct Fixture {
    pub service: TestService,
    pub app: Arc<App>,
    pub merchant: Merchant,
}

impl Fixture {
    /// The sandbox with its channel (THB and BDT) turned into an `http`
    /// channel at `base_url`, signing with `secret`.
    pub async fn start(base_url: &str, secret: &[u8], clock: Arc<dyn Clock>) -> Fixture {
        Self::start_with(base_url, secret, clock, |_| {}).await
    }

    /// Like `start`, with the configuration adjusted by `adjust` after.
    pub async fn start_with(
        base_url: &str,
        secret: &[u8],
        clock: Arc<dyn Clock>,
        adjust: impl FnOnce(&mut Config),
    ) -> Fixture {
        let (base_url, secret) = (base_url.to_string(), secret.to_vec());
        let service = TestService::start_with(Profile::Sandbox, clock, |c| {
            let channel = &mut c.channels[0];
            channel.kind = "http".into();
            channel.base_url = Some(base_url);
            channel.secret = Some(String::from_utf8(secret).unwrap());
            channel.request_timeout_ms = Some(2_000);
            adjust(c);
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
    pub async fn fund(&self) {
        self.fund_with(Decimal::from(1_000)).await
    }

    pub async fn fund_with(&self, amount: Decimal) {
        payments_testing::fund(&self.app, &self.merchant, "FUND-1", amount, "THB")
            .await
            .unwrap();
    }

    pub async fn balance(&self) -> (Decimal, Decimal) {
        payments_testing::balance(&self.app, &self.merchant.id, "THB")
            .await
            .unwrap()
    }

    pub async fn approved_withdrawal(&self, no: &str, account: &str) -> Withdrawal {
        payments_testing::approved_withdrawal(&self.app, &self.merchant, no, account)
            .await
            .unwrap()
    }
}
