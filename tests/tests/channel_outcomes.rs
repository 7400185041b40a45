//! A channel's answer decides what happens to money, and only its own word
//! fails an order: a refusal fails a payout (its funds released), while an
//! unknown outcome (a timeout, a broken connection) leaves the payout
//! approved to be asked again under the same order number, and stores no
//! deposit at all. The sandbox's channel is replaced by a scripted one with
//! the same configuration.

use async_trait::async_trait;
use payments_service::app::deposits;
use payments_service::app::orders;
use payments_service::app::withdrawals::{self, NewWithdrawal, Withdrawal};
use payments_service::app::App;
use payments_service::channels::{
    Channel, ChannelError, ChannelPayment, Channels, PaymentAsk, PayoutAsk,
};
use payments_service::clock::ManualClock;
use payments_service::config::ChannelConfig;
use payments_service::domain::error::ApiError;
use payments_service::domain::status::WithdrawalStatus;
use payments_service::Profile;
use payments_testing::{TestService, TEST_OPERATOR};
use rust_decimal::Decimal;
use std::sync::{Arc, Mutex};

/// What the scripted channel answers next, and every order number it was
/// asked about, in order.
#[derive(Default)]
struct Script {
    answer: Option<ChannelError>,
    asked: Vec<String>,
}

struct ScriptedChannel {
    config: ChannelConfig,
    script: Arc<Mutex<Script>>,
}

impl ScriptedChannel {
    fn answer(&self, order_no: &str) -> Result<(), ChannelError> {
        let mut script = self.script.lock().unwrap();
        script.asked.push(order_no.to_string());
        script.answer.clone().map_or(Ok(()), Err)
    }
}

#[async_trait]
impl Channel for ScriptedChannel {
    fn config(&self) -> &ChannelConfig {
        &self.config
    }
    async fn create_payment(&self, ask: &PaymentAsk) -> Result<ChannelPayment, ChannelError> {
        let order_no = &ask.order_no;
        self.answer(order_no)?;
        Ok(ChannelPayment {
            channel_order_no: format!("SCRIPT-{order_no}"),
            payment_url: format!("http://127.0.0.1:9/pay/{order_no}"),
        })
    }
    async fn dispatch_payout(&self, ask: &PayoutAsk) -> Result<String, ChannelError> {
        let order_no = &ask.order_no;
        self.answer(order_no)?;
        Ok(format!("SCRIPTPAY-{order_no}"))
    }
}

struct Fixture {
    _service: TestService,
    code: String,
    app: Arc<App>,
    script: Arc<Mutex<Script>>,
    merchant: payments_service::app::merchants::Merchant,
}

impl Fixture {
    /// `code` names the scripted channel, so that this test's calls are
    /// told apart in the process's metrics from its neighbours'.
    async fn start(code: &str) -> Fixture {
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = script.clone();
        let service = TestService::start_adjusting(
            Profile::Sandbox,
            Arc::new(ManualClock::at(1_800_000_000)),
            |_| {},
            move |app| {
                let mut config = app.config.channels[0].clone();
                config.code = code.to_string();
                app.channels = Channels::of([Arc::new(ScriptedChannel {
                    config,
                    script: shared,
                }) as Arc<dyn Channel>]);
            },
        )
        .await
        .unwrap();
        let app = service.service.app().clone();
        let merchant = service.new_merchant("Channels").await.unwrap().merchant;
        Fixture {
            _service: service,
            code: code.to_string(),
            app,
            script,
            merchant,
        }
    }

    fn next_answer(&self, answer: Option<ChannelError>) {
        self.script.lock().unwrap().answer = answer;
    }

    /// `payments_channel_calls_total` for this fixture's channel.
    fn counted(&self, call: &str, outcome: &str) -> u64 {
        let scrape = payments_service::telemetry::metrics::render().unwrap();
        let labels = [
            format!("channel=\"{}\"", self.code),
            format!("call=\"{call}\""),
            format!("outcome=\"{outcome}\""),
        ];
        scrape
            .lines()
            .filter(|l| l.starts_with("payments_channel_calls_total{"))
            .filter(|l| labels.iter().all(|label| l.contains(label.as_str())))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    }

    fn asked(&self) -> Vec<String> {
        self.script.lock().unwrap().asked.clone()
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

    async fn approved_withdrawal(&self, no: &str) -> Withdrawal {
        let new = NewWithdrawal {
            merchant_order_no: no.into(),
            amount: Decimal::from(100),
            currency: "THB".into(),
            beneficiary_name: "B".into(),
            beneficiary_account: "1234567890".into(),
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
        self.withdrawal(&w.row.order_no).await
    }

    async fn withdrawal(&self, order_no: &str) -> Withdrawal {
        orders::any::<Withdrawal>(&self.app, order_no)
            .await
            .unwrap()
    }
}

fn unknown() -> Option<ChannelError> {
    Some(ChannelError::Unknown {
        detail: "timed out after 10 s".into(),
    })
}

#[tokio::test]
async fn an_unknown_payout_outcome_stays_approved_and_is_asked_again_under_the_same_order_number() {
    let f = Fixture::start("SCRIPT-UNKNOWN-PAYOUT").await;
    f.fund().await;
    let before = f.balance().await;

    f.next_answer(unknown());
    let w = f.approved_withdrawal("OUT-UNKNOWN").await;
    let order_no = w.row.order_no.clone();
    assert_eq!(w.row.status, WithdrawalStatus::Approved);
    assert_eq!(
        w.row.channel_order_no, None,
        "no reference without an answer"
    );
    let held = f.balance().await;
    assert_eq!(held.1 - before.1, Decimal::from(100) + w.fee());

    // The dispatcher asks again; the order is still not failed.
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 0);
    assert_eq!(
        f.withdrawal(&order_no).await.row.status,
        WithdrawalStatus::Approved
    );

    f.next_answer(None);
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 1);
    let dispatched = f.withdrawal(&order_no).await;
    assert_eq!(dispatched.row.status, WithdrawalStatus::Processing);
    assert_eq!(
        dispatched.row.channel_order_no.as_deref(),
        Some(format!("SCRIPTPAY-{order_no}").as_str())
    );
    let payouts: Vec<String> = f.asked().into_iter().filter(|n| *n == order_no).collect();
    assert_eq!(
        payouts.len(),
        3,
        "asked three times, always under {order_no}"
    );
    assert_eq!(f.counted("dispatch_payout", "unknown"), 2);
    assert_eq!(f.counted("dispatch_payout", "accepted"), 1);
    assert_eq!(
        f.balance().await,
        held,
        "nothing moved until the channel's word"
    );
}

#[tokio::test]
async fn a_refused_payout_fails_the_order_and_releases_what_was_frozen() {
    let f = Fixture::start("SCRIPT-REFUSED-PAYOUT").await;
    f.fund().await;
    let before = f.balance().await;

    f.next_answer(Some(ChannelError::Refused {
        reason: "beneficiary account closed".into(),
    }));
    let w = f.approved_withdrawal("OUT-REFUSED").await;
    let failed = f.withdrawal(&w.row.order_no).await;
    assert_eq!(failed.row.status, WithdrawalStatus::Failed);
    assert_eq!(
        failed.row.manual_reason.as_deref(),
        Some("beneficiary account closed")
    );
    assert_eq!(
        f.balance().await,
        before,
        "the frozen amount and fee are back"
    );
    assert_eq!(f.counted("dispatch_payout", "refused"), 1);
}

#[tokio::test]
async fn a_channel_deposit_without_the_channels_answer_is_a_503_and_stores_nothing() {
    let f = Fixture::start("SCRIPT-UNKNOWN-PAYMENT").await;
    let new = || payments_testing::new_deposit("IN-UNKNOWN", Decimal::from(500), "BDT", None);

    f.next_answer(unknown());
    let refused = deposits::create(&f.app, &f.merchant, new()).await;
    assert!(
        matches!(refused, Err(ApiError::Unavailable(_))),
        "{refused:?}"
    );
    let stored =
        orders::row_by_merchant_order_no::<deposits::Deposit>(&f.app, &f.merchant.id, "IN-UNKNOWN")
            .await
            .unwrap();
    assert!(stored.is_none(), "no order without a payment to show");
    assert_eq!(f.counted("create_payment", "unknown"), 1);

    f.next_answer(None);
    let order = deposits::create(&f.app, &f.merchant, new()).await.unwrap();
    assert_eq!(
        order.payment_url.as_deref(),
        Some(format!("http://127.0.0.1:9/pay/{}", order.order_no).as_str())
    );
}
