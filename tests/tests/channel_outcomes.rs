//! A channel's answer decides what happens to money, and only its own word
//! fails an order: a refusal fails a payout (its funds released), while an
//! unknown outcome (a timeout, a broken connection) leaves the payout
//! approved and in doubt: the channel is asked about it, and it is sent
//! again only when the channel has no record, always under the same order
//! number; in doubt too long, it is set aside for an operator. An unknown
//! outcome stores no deposit at all. The sandbox's channel is replaced by a
//! scripted one with the same configuration.

use async_trait::async_trait;
use payments_service::app::deposits;
use payments_service::app::orders;
use payments_service::app::withdrawals::{self, Withdrawal};
use payments_service::app::App;
use payments_service::channels::{
    Channel, ChannelError, ChannelPayment, Channels, PaymentAsk, PaymentState, PayoutAsk,
    PayoutState,
};
use payments_service::clock::ManualClock;
use payments_service::config::ChannelConfig;
use payments_service::domain::error::ApiError;
use payments_service::domain::status::{Role, WithdrawalStatus};
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::{Arc, Mutex};

/// What the scripted channel answers next, and every order number it was
/// asked about, in order.
#[derive(Default)]
struct Script {
    answer: Option<ChannelError>,
    asked: Vec<String>,
    /// An unknown answer to a payout came after the channel took it (the
    /// timeout that hides a payment).
    acts_anyway: bool,
    /// What the channel answers an inquiry instead of what it has.
    inquiry: Option<ChannelError>,
    inquired: Vec<String>,
    /// The payouts the channel has, by order number.
    payouts: std::collections::BTreeMap<String, PayoutState>,
    /// A payout call hangs until this is notified (a channel that does
    /// not answer).
    hold: Option<Arc<tokio::sync::Notify>>,
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
        let hold = self.script.lock().unwrap().hold.clone();
        if let Some(hold) = hold {
            hold.notified().await;
        }
        let order_no = &ask.order_no;
        let answer = self.answer(order_no);
        let mut script = self.script.lock().unwrap();
        let reference = format!("SCRIPTPAY-{order_no}");
        if answer.is_ok() || script.acts_anyway {
            script.payouts.insert(
                order_no.clone(),
                PayoutState::Accepted {
                    reference: reference.clone(),
                },
            );
        }
        answer.map(|()| reference)
    }
    async fn inquire_payout(&self, order_no: &str) -> Result<Option<PayoutState>, ChannelError> {
        let mut script = self.script.lock().unwrap();
        script.inquired.push(order_no.to_string());
        match script.inquiry.clone() {
            Some(e) => Err(e),
            None => Ok(script.payouts.get(order_no).cloned()),
        }
    }
    /// The scripted channel's payments are never paid behind its back.
    async fn inquire_payment(&self, _order_no: &str) -> Result<Option<PaymentState>, ChannelError> {
        Ok(Some(PaymentState::Waiting))
    }
}

struct Fixture {
    _service: TestService,
    clock: ManualClock,
    code: String,
    app: Arc<App>,
    script: Arc<Mutex<Script>>,
    merchant: payments_service::app::merchants::Merchant,
}

impl Fixture {
    /// `code` names the scripted channel, so that this test's calls are
    /// told apart in the process's metrics from its neighbours'.
    async fn start(code: &str) -> Fixture {
        Fixture::start_with(code, |_| {}).await
    }

    async fn start_with(code: &str, adjust: impl FnOnce(&mut payments_service::Config)) -> Fixture {
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = script.clone();
        let clock = ManualClock::at(1_800_000_000);
        let service = TestService::start_adjusting(
            Profile::Sandbox,
            Arc::new(clock.clone()),
            adjust,
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
            clock,
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

    fn inquired(&self) -> Vec<String> {
        self.script.lock().unwrap().inquired.clone()
    }

    /// Past the time after which a payout without an answer is asked about.
    fn wait_for_inquiry(&self) {
        self.clock
            .advance(self.app.config.payout_inquire_after_seconds);
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
        payments_testing::approved_withdrawal(&self.app, &self.merchant, no, "1234567890")
            .await
            .unwrap()
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
async fn an_unknown_payout_outcome_is_inquired_and_sent_again_only_under_the_same_order_number() {
    let f = Fixture::start("SCRIPT-UNKNOWN-PAYOUT").await;
    f.fund().await;
    let before = f.balance().await;

    f.next_answer(unknown());
    let w = f.approved_withdrawal("OUT-UNKNOWN").await;
    let order_no = w.order_no.clone();
    assert_eq!(w.status, WithdrawalStatus::Approved);
    assert_eq!(w.channel_order_no, None, "no reference without an answer");
    assert!(w.payout_sent_at.is_some(), "noted as sent before the call");
    let held = f.balance().await;
    assert_eq!(held.1 - before.1, Decimal::from(100) + w.fee);

    // Not asked again before its time.
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 0);
    assert_eq!(f.asked().len(), 1);

    // Then the channel is asked first: it has no record, so the payout is
    // sent again, under the same number; still no answer.
    f.wait_for_inquiry();
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 0);
    assert_eq!(
        f.withdrawal(&order_no).await.status,
        WithdrawalStatus::Approved
    );

    f.next_answer(None);
    f.wait_for_inquiry();
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 1);
    let dispatched = f.withdrawal(&order_no).await;
    assert_eq!(dispatched.status, WithdrawalStatus::Processing);
    assert_eq!(
        dispatched.channel_order_no.as_deref(),
        Some(format!("SCRIPTPAY-{order_no}").as_str())
    );
    assert_eq!(
        f.asked(),
        vec![order_no.clone(); 3],
        "always under {order_no}"
    );
    assert_eq!(
        f.inquired(),
        vec![order_no.clone(); 2],
        "asked before each resend"
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
async fn a_payout_the_channel_took_before_its_answer_was_lost_is_found_by_inquiry_not_sent_twice() {
    // The channel takes the payout and its answer never arrives (a timeout
    // after acting; or this process killed between the call and recording
    // the answer: the order is noted as sent before the call either way).
    let f = Fixture::start("SCRIPT-LOST-ANSWER").await;
    f.fund().await;
    f.script.lock().unwrap().acts_anyway = true;
    f.next_answer(unknown());
    let w = f.approved_withdrawal("OUT-LOST").await;
    let order_no = w.order_no.clone();
    assert_eq!(w.status, WithdrawalStatus::Approved);

    f.next_answer(None);
    f.wait_for_inquiry();
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 1);
    let found = f.withdrawal(&order_no).await;
    assert_eq!(found.status, WithdrawalStatus::Processing);
    assert_eq!(f.asked(), vec![order_no.clone()], "sent once");
    assert_eq!(f.inquired(), vec![order_no.clone()]);

    // Under way and not reported on: asked again, and the channel's word
    // that it was paid settles it, with what the channel charged.
    f.script.lock().unwrap().payouts.insert(
        order_no.clone(),
        PayoutState::Completed {
            reference: "BANK-9".into(),
            cost: Some(Decimal::new(125, 2)),
        },
    );
    assert_eq!(
        withdrawals::inquire_due(&f.app).await.unwrap(),
        0,
        "not yet due"
    );
    f.wait_for_inquiry();
    assert_eq!(withdrawals::inquire_due(&f.app).await.unwrap(), 1);
    let paid = f.withdrawal(&order_no).await;
    assert_eq!(paid.status, WithdrawalStatus::Completed);
    assert_eq!(paid.bank_reference.as_deref(), Some("BANK-9"));
    assert_eq!(paid.actual_channel_cost, Some("1.25".parse().unwrap()));
    assert_eq!(f.asked(), vec![order_no.clone()], "still sent once");
}

#[tokio::test]
async fn a_payout_in_doubt_too_long_is_set_aside_for_an_operator_and_counted() {
    let f = Fixture::start("SCRIPT-IN-DOUBT").await;
    f.fund().await;
    f.next_answer(unknown());
    f.script.lock().unwrap().inquiry = unknown();
    let w = f.approved_withdrawal("OUT-DOUBT").await;
    let order_no = w.order_no.clone();
    let gauge = |name: &str| -> f64 {
        let scrape = payments_service::telemetry::metrics::render().unwrap();
        scrape
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{channel=\"SCRIPT-IN-DOUBT\"}}")))
            .and_then(|l| l.rsplit(' ').next())
            .map_or(-1.0, |v| v.parse().unwrap())
    };

    f.wait_for_inquiry();
    withdrawals::dispatch_due(&f.app).await.unwrap();
    assert!(!f.withdrawal(&order_no).await.needs_manual_intervention);
    f.clock.advance(f.app.config.payout_in_doubt_after_seconds);
    withdrawals::dispatch_due(&f.app).await.unwrap();
    let set_aside = f.withdrawal(&order_no).await;
    assert_eq!(
        set_aside.status,
        WithdrawalStatus::Approved,
        "never failed without the channel's word"
    );
    assert!(set_aside.needs_manual_intervention);
    assert!(set_aside
        .manual_reason
        .as_deref()
        .unwrap()
        .starts_with("in doubt"));
    assert_eq!(f.asked(), vec![order_no.clone()], "never sent blind");

    let in_doubt = withdrawals::payouts_in_doubt(&f.app).await.unwrap();
    let (_, count, oldest) = in_doubt
        .iter()
        .find(|(c, _, _)| c == "SCRIPT-IN-DOUBT")
        .unwrap();
    assert_eq!(*count, 1);
    assert!(*oldest >= f.app.config.payout_in_doubt_after_seconds);
    payments_service::telemetry::metrics::payouts_in_doubt("SCRIPT-IN-DOUBT", *count, *oldest);
    assert_eq!(gauge("payments_channel_payouts_in_doubt"), 1.0);

    // The operator, having read the channel's records, resolves it through
    // the operator API: not paid, so the funds come back.
    let held = f.balance().await;
    // A payout resolved is money released or kept: one approver files it,
    // a second approves it.
    let maker = payments_testing::person(&f.app, "maker", Role::Approver)
        .await
        .unwrap()
        .1;
    let checker = payments_testing::person(&f.app, "checker", Role::Approver)
        .await
        .unwrap()
        .1;
    let base = f._service.base_url();
    let resolve = |order_no: &str, body: serde_json::Value| {
        let (base, maker, checker) = (base.clone(), maker.clone(), checker.clone());
        let filing = serde_json::json!({"action": "resolve_withdrawal", "target": order_no, "parameters": body});
        async move {
            let post = |path: String, token: String, body: serde_json::Value| {
                let url = format!("{base}{path}");
                async move {
                    let answer = reqwest::Client::new()
                        .post(url)
                        .bearer_auth(token)
                        .json(&body)
                        .send()
                        .await
                        .unwrap();
                    let status = answer.status().as_u16();
                    (status, answer.json::<serde_json::Value>().await.unwrap())
                }
            };
            let (status, filed) =
                post("/api/v1/operator/change-requests".into(), maker, filing).await;
            if status != 200 {
                return (status, filed);
            }
            let id = filed["change_request_id"].as_str().unwrap();
            let path = format!("/api/v1/operator/change-requests/{id}/approve");
            let (status, approved) = post(path, checker, serde_json::json!({})).await;
            if status != 200 {
                return (status, approved);
            }
            (status, approved["result"].clone())
        }
    };
    let (status, order) = resolve(
        &order_no,
        serde_json::json!({"outcome": "failed", "remarks": "not in the channel's settlement report"}),
    )
    .await;
    assert_eq!(status, 200, "{order}");
    assert_eq!(order["status"], "failed");
    assert_eq!(order["needs_manual_intervention"], false);
    assert_eq!(
        order["manual_reason"],
        "resolved as failed by checker: not in the channel's settlement report"
    );
    assert_eq!(f.balance().await.0 - held.0, Decimal::from(100) + w.fee);
    assert_eq!(
        f.asked(),
        vec![order_no.clone()],
        "the channel was not called"
    );

    // Nothing else is resolved by hand: a final order, or one not set
    // aside, is refused and does not move.
    let (status, refused) = resolve(
        &order_no,
        serde_json::json!({"outcome": "completed", "remarks": "again"}),
    )
    .await;
    assert_eq!(
        (status, refused["error_code"].as_str()),
        (409, Some("INVALID_STATE_TRANSITION"))
    );
    let (status, refused) = resolve(&order_no, serde_json::json!({"outcome": "completed"})).await;
    assert_eq!(
        (status, refused["error_code"].as_str()),
        (400, Some("INVALID_FIELD"))
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
    let failed = f.withdrawal(&w.order_no).await;
    assert_eq!(failed.status, WithdrawalStatus::Failed);
    assert_eq!(
        failed.manual_reason.as_deref(),
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

/// An adapter that answers every request with a redirect to `to`, and
/// counts what reaches `to`.
async fn redirecting_adapter() -> (String, std::net::TcpListener) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // Never accepted from: a connection to it waits in the backlog, where
    // a non-blocking accept finds it.
    let target = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let to = format!("http://{}/elsewhere", target.local_addr().unwrap());
    let adapter = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", adapter.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = adapter.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, target)
}

/// A redirect is nothing the channel protocol has: the outcome is unknown
/// (inquired, never sent elsewhere), and the call is not followed.
#[tokio::test]
async fn an_adapter_answering_a_redirect_is_an_unknown_outcome_not_a_followed_call() {
    let (url, target) = redirecting_adapter().await;
    let mut config = payments_service::Config::defaults(Profile::Sandbox)
        .channels
        .remove(0);
    config.kind = "http".into();
    config.base_url = Some(url);
    config.secret = Some("s".repeat(32));
    let channel = payments_service::channels::HttpChannel::new(
        &config,
        "http://127.0.0.1:1",
        Profile::Sandbox,
    )
    .unwrap();
    let payment = channel
        .create_payment(&PaymentAsk {
            order_no: "D-REDIRECT".into(),
            amount: Decimal::new(100, 0),
            currency: "THB".into(),
            expire_at: chrono::Utc::now(),
            return_url: None,
        })
        .await;
    assert!(
        matches!(payment, Err(ChannelError::Unknown { .. })),
        "{payment:?}"
    );
    let payout = channel
        .dispatch_payout(&PayoutAsk {
            order_no: "W-REDIRECT".into(),
            amount: Decimal::new(100, 0),
            currency: "THB".into(),
            bank_code: "KBANK".into(),
            account_no: "1234567890".into(),
            account_holder: "Somchai".into(),
        })
        .await;
    assert!(
        matches!(payout, Err(ChannelError::Unknown { .. })),
        "{payout:?}"
    );
    // Every call has answered: a followed redirect would have connected.
    target.set_nonblocking(true).unwrap();
    let followed = target.accept().map(|_| ()).map_err(|e| e.kind());
    assert_eq!(
        followed,
        Err(std::io::ErrorKind::WouldBlock),
        "the redirect was followed"
    );
}

/// A hung channel does not hold the operator: the approval answers
/// `approved` after its bounded wait, and the dispatch goes on in its own
/// task, moving the order once the channel answers.
#[tokio::test]
async fn an_approval_answers_after_a_bounded_wait_and_the_dispatch_goes_on() {
    let f = Fixture::start_with("HUNG", |c| c.approval_dispatch_wait_ms = 50).await;
    f.fund().await;
    let hold = Arc::new(tokio::sync::Notify::new());
    f.script.lock().unwrap().hold = Some(hold.clone());
    let w = withdrawals::create(
        &f.app,
        &f.merchant,
        payments_testing::new_withdrawal("W-HUNG", Decimal::from(100), "THB", "1234567890"),
    )
    .await
    .unwrap();
    let approver =
        payments_testing::operator(payments_service::domain::people::Action::ApproveWithdrawal);
    let answered = withdrawals::approve_waiting_at_most(&f.app, &approver, &w.order_no, None)
        .await
        .unwrap()
        .recorded
        .order;
    assert_eq!(
        answered.status,
        WithdrawalStatus::Approved,
        "answered before the channel"
    );
    hold.notify_one();
    let moved = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let now = f.withdrawal(&w.order_no).await;
            if now.status != WithdrawalStatus::Approved {
                return now;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the dispatch goes on after the answer");
    assert_eq!(moved.status, WithdrawalStatus::Processing);
    assert_eq!(f.asked(), vec![w.order_no.clone()], "sent once");
}

/// Issue 55: each surface has its own bound on requests in flight. With
/// the operator API's at one, an approval waiting on a hung channel holds
/// it: the next operator request is answered 503 `SERVICE_UNAVAILABLE`
/// with `Retry-After` at once, while the merchants' API answers as ever.
#[tokio::test]
async fn a_full_surface_answers_503_with_retry_after_and_the_others_go_on() {
    let f = Fixture::start_with("BUDGET", |c| {
        c.approval_dispatch_wait_ms = 60_000;
        c.requests_in_flight.operators = 1;
    })
    .await;
    f.fund().await;
    let hold = Arc::new(tokio::sync::Notify::new());
    f.script.lock().unwrap().hold = Some(hold.clone());
    let w = withdrawals::create(
        &f.app,
        &f.merchant,
        payments_testing::new_withdrawal("W-BUDGET", Decimal::from(100), "THB", "1234567890"),
    )
    .await
    .unwrap();
    let base = f._service.base_url();
    let http = reqwest::Client::new();
    let bearer = format!("Bearer {}", payments_testing::TEST_OPERATOR_TOKEN);
    let approval = tokio::spawn({
        let (http, bearer) = (http.clone(), bearer.clone());
        let url = format!("{base}/api/v1/operator/withdrawals/{}/approve", w.order_no);
        async move {
            http.post(url)
                .header("authorization", bearer)
                .json(&serde_json::json!({}))
                .send()
                .await
                .map(|r| r.status().as_u16())
        }
    });
    // The approval takes the one place once it reaches its handler.
    let refused = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let r = http
                .get(format!("{base}/api/v1/operator/me"))
                .header("authorization", &bearer)
                .send()
                .await
                .unwrap();
            if r.status() == 503 {
                return r;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the operator API refuses past its bound");
    assert_eq!(
        refused
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap()),
        Some("1")
    );
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error_code"], "SERVICE_UNAVAILABLE");

    let other = f._service.new_merchant("Budget").await.unwrap();
    // The client signs with the wall clock's time.
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    f.clock.set(i64::try_from(wall).unwrap());
    let merchant = merchant_client::merchant::Client::new(
        &base,
        merchant_client::Credentials::new(other.api_key),
    );
    merchant
        .get_balances()
        .await
        .expect("the merchants' API keeps its own places");

    hold.notify_one();
    let approved = approval.await.unwrap().unwrap();
    assert_eq!(approved, 200);
    let me = http
        .get(format!("{base}/api/v1/operator/me"))
        .header("authorization", &bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200, "the place is free again");
}

#[tokio::test]
async fn a_suspended_merchants_payouts_are_held_and_go_on_after_reactivation() {
    use payments_service::app::suspension;
    use payments_service::domain::people::Action;
    use payments_service::domain::status::MerchantStatus;
    let f = Fixture::start("SCRIPT-SUSPENDED").await;
    f.fund().await;
    let admin = payments_testing::operator(Action::SetMerchantStatus);
    suspension::set_status(
        &f.app,
        &admin,
        &f.merchant.id,
        MerchantStatus::Suspended,
        "review",
    )
    .await
    .unwrap();

    // Approved while suspended: not handed to the channel, at approval or
    // by the dispatch worker, however long it waits.
    let w = f.approved_withdrawal("OUT-HELD").await;
    assert_eq!(w.status, WithdrawalStatus::Approved);
    assert_eq!(w.payout_sent_at, None, "not even noted as sent");
    f.wait_for_inquiry();
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 0);
    assert!(
        f.asked().is_empty(),
        "the channel was asked: {:?}",
        f.asked()
    );

    suspension::set_status(
        &f.app,
        &admin,
        &f.merchant.id,
        MerchantStatus::Active,
        "done",
    )
    .await
    .unwrap();
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 1);
    assert_eq!(f.asked(), vec![w.order_no.clone()]);
    assert_eq!(
        f.withdrawal(&w.order_no).await.status,
        WithdrawalStatus::Processing
    );
}

/// Issue 56: an approval its caller sends at once notes the payout as sent
/// in its own transaction, so the send asks the channel nothing first and
/// the dispatch commits only the channel's answer. A crash between that
/// commit and the send leaves the payout in doubt: the dispatch worker asks
/// the channel about it in its time, and sends it, under the same number,
/// only when the channel has no record of it.
#[tokio::test]
async fn an_approval_notes_its_payout_as_sent_and_a_crash_before_the_send_is_resolved_by_asking() {
    use payments_service::domain::people::Action;
    let f = Fixture::start("SCRIPT-NOTED").await;
    f.fund().await;
    let approver = payments_testing::operator(Action::ApproveWithdrawal);
    let create = |no: &str| {
        withdrawals::create(
            &f.app,
            &f.merchant,
            payments_testing::new_withdrawal(no, Decimal::from(100), "THB", "1234567890"),
        )
    };

    let w = create("W-NOTED").await.unwrap();
    let answered = withdrawals::approve_waiting_at_most(&f.app, &approver, &w.order_no, None)
        .await
        .unwrap()
        .recorded;
    assert!(answered.noted_sent, "noted by the approving transaction");
    assert!(answered.order.payout_sent_at.is_some());
    assert_eq!(
        f.withdrawal(&w.order_no).await.status,
        WithdrawalStatus::Processing
    );
    assert_eq!(f.asked(), vec![w.order_no.clone()], "sent once");
    assert!(f.inquired().is_empty(), "asked about: {:?}", f.inquired());

    // Committed and noted, never sent: as after a crash between the two.
    let crashed = create("W-CRASHED").await.unwrap();
    let recorded =
        withdrawals::approvals::approve_to_send(&f.app, &approver, &crashed.order_no, None)
            .await
            .unwrap();
    assert!(recorded.noted_sent);
    assert_eq!(
        withdrawals::dispatch_due(&f.app).await.unwrap(),
        0,
        "in doubt, not yet due"
    );
    f.wait_for_inquiry();
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 1);
    assert_eq!(f.inquired(), vec![crashed.order_no.clone()], "asked first");
    assert_eq!(
        f.asked(),
        vec![w.order_no.clone(), crashed.order_no.clone()],
        "then sent once"
    );
    assert_eq!(
        f.withdrawal(&crashed.order_no).await.status,
        WithdrawalStatus::Processing
    );

    // The approval alone notes nothing: its order is the worker's at once.
    let kept = create("W-KEPT").await.unwrap();
    let alone = withdrawals::approvals::approve(&f.app, &approver, &kept.order_no, None)
        .await
        .unwrap();
    assert!(!alone.noted_sent);
    assert_eq!(alone.order.payout_sent_at, None);
    assert_eq!(withdrawals::dispatch_due(&f.app).await.unwrap(), 1);
    assert!(!f.inquired().contains(&kept.order_no), "nothing to ask");
}

/// A channel some withdrawal table gives a daily limit is not noted by the
/// approval: the dispatch reserves the day's room first, then notes it.
#[tokio::test]
async fn an_approval_leaves_a_payout_to_a_channel_with_a_daily_limit_to_the_dispatch() {
    use payments_service::config::RoutingTableConfig;
    use payments_service::domain::people::Action;
    use payments_service::domain::routing::table::{Candidate, RoutedDirection};
    let code = "SCRIPT-LIMITED";
    let f = Fixture::start_with(code, |c| {
        c.channels[0].code = code.to_string();
        c.routing.tables.push(RoutingTableConfig {
            currency: "THB".into(),
            direction: RoutedDirection::Withdrawal,
            merchant: None,
            candidates: vec![Candidate {
                daily_limit: Some(Decimal::from(10_000)),
                ..Candidate::plain(code, 100)
            }],
        });
    })
    .await;
    f.fund().await;
    let w = withdrawals::create(
        &f.app,
        &f.merchant,
        payments_testing::new_withdrawal("W-LIMITED", Decimal::from(100), "THB", "1234567890"),
    )
    .await
    .unwrap();
    let approver = payments_testing::operator(Action::ApproveWithdrawal);
    let answered = withdrawals::approve_waiting_at_most(&f.app, &approver, &w.order_no, None)
        .await
        .unwrap()
        .recorded;
    assert!(!answered.noted_sent, "the day's room is reserved first");
    assert_eq!(answered.order.payout_sent_at, None);
    let moved = f.withdrawal(&w.order_no).await;
    assert_eq!(moved.status, WithdrawalStatus::Processing);
    assert!(moved.payout_sent_at.is_some(), "noted by the dispatch");
    assert_eq!(f.asked(), vec![w.order_no.clone()]);
    assert!(f.inquired().is_empty());
}
