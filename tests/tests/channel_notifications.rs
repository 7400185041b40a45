//! Notifications from a channel's adapter (`openapi/channel-notifications.json`),
//! posted over HTTP through the generated client and signed with the
//! channel's secret: each moves its order along the lifecycle once, with
//! its ledger entry; a repeat changes nothing; money for an expired order
//! waits for an operator; a contradiction sets the order aside; and every
//! refused notification (unsigned, stale, wrongly signed, malformed,
//! unknown channel or order) answers 4xx with the envelope and changes
//! nothing.

#[allow(dead_code)] // each test binary uses its own part of this module
mod adapter;

use adapter::fixture::Fixture;
use merchant_client::channel_notifications::types as wire;
use merchant_client::channel_notifications::Client;
use merchant_client::ChannelSecret;
use payments_service::app::deposits::{self, Deposit};
use payments_service::app::withdrawals;
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::status::{DepositStatus, WithdrawalStatus};
use rust_decimal::Decimal;
use std::str::FromStr;
use std::sync::Arc;

const CODE: &str = "SIMULATOR";

struct Notifying {
    f: Fixture,
    clock: ManualClock,
    client: Client,
    _adapter: dropshot::HttpServer<Arc<adapter::Adapter>>,
}

impl Notifying {
    async fn start() -> Notifying {
        let (adapter, url) = adapter::start();
        let clock = ManualClock::at_system_time();
        let f = Fixture::start(&url, adapter::SECRET, Arc::new(clock.clone())).await;
        let signing_clock = clock.clone();
        let base = f.service.base_url();
        let client = Client::new(
            &base,
            ChannelSecret::new(adapter::SECRET, &base).with_clock(move || signing_clock.unix()),
        );
        Notifying {
            f,
            clock,
            client,
            _adapter: adapter,
        }
    }

    async fn deposit(&self, no: &str) -> Deposit {
        let new = payments_testing::new_deposit(no, Decimal::from(1_000), "BDT", None);
        deposits::create(&self.f.app, &self.f.merchant, new)
            .await
            .unwrap()
    }

    async fn notify(
        &self,
        body: &wire::Notification,
    ) -> Result<wire::NotificationReceipt, (u16, String)> {
        match self.client.receive_notification(CODE, body).await {
            Ok(receipt) => Ok(receipt.into_inner()),
            Err(merchant_client::channel_notifications::Error::ErrorResponse(e)) => {
                let status = e.status().as_u16();
                Err((status, e.into_inner().error_code.to_string()))
            }
            Err(other) => panic!("no answer: {other}"),
        }
    }

    async fn deposit_now(&self, order_no: &str) -> Deposit {
        deposits::find_any(&self.f.app, order_no).await.unwrap()
    }

    async fn bdt_balance(&self) -> (Decimal, Decimal) {
        payments_testing::balance(&self.f.app, &self.f.merchant.id, "BDT")
            .await
            .unwrap()
    }
}

fn note(id: &str, kind: wire::NotificationType, order_no: &str) -> wire::Notification {
    wire::Notification {
        notification_id: id.into(),
        type_: kind,
        order_no: wire::OrderNo(order_no.into()),
        channel_order_no: None,
        payout_reference: None,
        amount: None,
        channel_cost: None,
        reason: None,
        occurred_at: chrono::Utc::now(),
    }
}

fn dec(s: &str) -> payments_wire::DecimalString {
    payments_wire::DecimalString(Decimal::from_str(s).unwrap())
}

#[tokio::test]
async fn a_payment_completes_once_with_what_was_paid_and_what_the_channel_charged() {
    let n = Notifying::start().await;
    let order = n.deposit("N-PAY-1").await;

    let mut completed = note(
        "ntf-1",
        wire::NotificationType::PaymentCompleted,
        &order.order_no,
    );
    completed.amount = Some(dec("990.00"));
    completed.channel_cost = Some(dec("4.95"));
    let receipt = n.notify(&completed).await.unwrap();
    assert!(!receipt.duplicate);
    let now = n.deposit_now(&order.order_no).await;
    assert_eq!(now.status, DepositStatus::Completed);
    assert_eq!(now.actual_amount, Decimal::from(990));
    assert_eq!(
        now.actual_channel_cost,
        Some(Decimal::from_str("4.95").unwrap())
    );
    let credited = n.bdt_balance().await;
    assert_eq!(credited.0, Decimal::from(990) - now.fee);

    // The same notification again, even with another body: nothing moves.
    completed.amount = Some(dec("1.00"));
    let again = n.notify(&completed).await.unwrap();
    assert!(again.duplicate);
    // A late `payment.matched` under its own id: recorded, nothing moves.
    let late = n
        .notify(&note(
            "ntf-2",
            wire::NotificationType::PaymentMatched,
            &order.order_no,
        ))
        .await
        .unwrap();
    assert!(!late.duplicate);
    assert_eq!(n.deposit_now(&order.order_no).await, now);
    assert_eq!(n.bdt_balance().await, credited);
}

#[tokio::test]
async fn a_match_then_a_completion_and_a_payment_too_late_waits_for_an_operator() {
    let n = Notifying::start().await;
    let order = n.deposit("N-PAY-2").await;
    let mut matched = note(
        "m-1",
        wire::NotificationType::PaymentMatched,
        &order.order_no,
    );
    matched.amount = Some(dec("1000"));
    n.notify(&matched).await.unwrap();
    assert_eq!(
        n.deposit_now(&order.order_no).await.status,
        DepositStatus::Matched
    );
    n.notify(&note(
        "c-1",
        wire::NotificationType::PaymentCompleted,
        &order.order_no,
    ))
    .await
    .unwrap();
    let done = n.deposit_now(&order.order_no).await;
    assert_eq!(done.status, DepositStatus::Completed);
    assert_eq!(done.actual_amount, Decimal::from(1_000));

    // Past its `expire_at` the order expires; the money is not credited.
    let late = n.deposit("N-PAY-3").await;
    let balance = n.bdt_balance().await;
    n.clock.advance(late.expire_at.timestamp() - n.clock.unix());
    let receipt = n
        .notify(&note(
            "c-2",
            wire::NotificationType::PaymentCompleted,
            &late.order_no,
        ))
        .await
        .unwrap();
    assert!(!receipt.duplicate);
    assert_eq!(
        n.deposit_now(&late.order_no).await.status,
        DepositStatus::Expired
    );
    assert_eq!(n.bdt_balance().await, balance);
}

#[tokio::test]
async fn a_payout_is_settled_or_failed_by_the_channel_s_word_and_a_contradiction_is_set_aside() {
    let n = Notifying::start().await;
    n.f.fund().await;
    let paid = n.f.approved_withdrawal("N-OUT-1", "1234567890").await;
    assert_eq!(paid.status, WithdrawalStatus::Processing);
    let mut completed = note(
        "p-1",
        wire::NotificationType::PayoutCompleted,
        &paid.order_no,
    );
    completed.payout_reference = Some("BANK-REF-77".into());
    completed.channel_cost = Some(dec("1.50"));
    n.notify(&completed).await.unwrap();
    let now = withdrawals::find_any(&n.f.app, &paid.order_no)
        .await
        .unwrap();
    assert_eq!(now.status, WithdrawalStatus::Completed);
    assert_eq!(now.bank_reference.as_deref(), Some("BANK-REF-77"));
    assert_eq!(now.actual_channel_cost, Some("1.50".parse().unwrap()));

    // The channel then says it failed: nothing moves, the order waits for
    // an operator.
    let mut failed = note("p-2", wire::NotificationType::PayoutFailed, &paid.order_no);
    failed.reason = Some("account closed".into());
    assert_eq!(
        n.notify(&failed).await.unwrap_err(),
        (409, "CONTRADICTORY_NOTIFICATION".to_string())
    );
    let flagged = withdrawals::find_any(&n.f.app, &paid.order_no)
        .await
        .unwrap();
    assert_eq!(flagged.status, WithdrawalStatus::Completed);
    assert!(flagged.needs_manual_intervention);

    let before = n.f.balance().await;
    let refused = n.f.approved_withdrawal("N-OUT-2", "1234567891").await;
    let mut failed = note(
        "p-3",
        wire::NotificationType::PayoutFailed,
        &refused.order_no,
    );
    failed.reason = Some("account closed".into());
    n.notify(&failed).await.unwrap();
    let now = withdrawals::find_any(&n.f.app, &refused.order_no)
        .await
        .unwrap();
    assert_eq!(now.status, WithdrawalStatus::Failed);
    assert_eq!(now.manual_reason.as_deref(), Some("account closed"));
    assert_eq!(n.f.balance().await, before);

    // A payment notification naming a withdrawal contradicts it too.
    let other = n.f.approved_withdrawal("N-OUT-3", "1234567892").await;
    let wrong = note(
        "p-4",
        wire::NotificationType::PaymentCompleted,
        &other.order_no,
    );
    assert_eq!(
        n.notify(&wrong).await.unwrap_err(),
        (409, "CONTRADICTORY_NOTIFICATION".to_string())
    );
    let set_aside = withdrawals::find_any(&n.f.app, &other.order_no)
        .await
        .unwrap();
    assert_eq!(set_aside.status, WithdrawalStatus::Processing);
    assert!(set_aside.needs_manual_intervention);
}

/// Posts `body` as given, signed at `at` with `secret` unless told not to.
async fn raw(
    base: &str,
    code: &str,
    body: &[u8],
    signed: Option<(&[u8], i64)>,
) -> (u16, serde_json::Value) {
    let path = format!("/api/v1/channels/{code}/notifications");
    let mut request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body.to_vec());
    if let Some((secret, at)) = signed {
        let signature = payments_wire::channel::sign(secret, at, "POST", &path, body);
        request = request
            .header("x-channel-timestamp", at.to_string())
            .header("x-channel-signature", signature);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap())
}

/// A name, the channel code, the body, how it is signed, and the answer.
type Case<'a> = (
    &'a str,
    &'a str,
    &'a [u8],
    Option<(&'a [u8], i64)>,
    u16,
    &'a str,
);

#[tokio::test]
async fn every_bad_notification_is_refused_with_the_envelope_and_changes_nothing() {
    let n = Notifying::start().await;
    let order = n.deposit("N-BAD").await;
    let base = n.f.service.base_url();
    let now = n.clock.unix();
    let good = serde_json::to_vec(&note(
        "bad-1",
        wire::NotificationType::PaymentCompleted,
        &order.order_no,
    ))
    .unwrap();
    let unknown_order = serde_json::to_vec(&note(
        "bad-2",
        wire::NotificationType::PaymentCompleted,
        "D20990101AAAAAAAAAAAA",
    ))
    .unwrap();
    let mut too_precise = note(
        "bad-3",
        wire::NotificationType::PaymentCompleted,
        &order.order_no,
    );
    too_precise.amount = Some(dec("10.001"));
    let too_precise = serde_json::to_vec(&too_precise).unwrap();
    let secret = adapter::SECRET;
    let cases: Vec<Case> = vec![
        ("unsigned", CODE, &good, None, 401, "MISSING_HEADER"),
        ("stale", CODE, &good, Some((secret, now - 301)), 401, "STALE_TIMESTAMP"),
        ("another secret", CODE, &good, Some((b"not the channel's secret at all!", now)), 401, "INVALID_SIGNATURE"),
        ("unknown channel", "NO-SUCH", &good, Some((secret, now)), 404, "CHANNEL_NOT_FOUND"),
        ("not JSON", CODE, b"not json", Some((secret, now)), 400, "INVALID_BODY"),
        ("badly encoded path", "%FF", &good, Some((secret, now)), 400, "INVALID_PATH"),
        ("unknown type", CODE, br#"{"notification_id":"x","type":"payment.refunded","order_no":"D1","occurred_at":"2026-11-25T10:00:00Z"}"#, Some((secret, now)), 400, "INVALID_FIELD"),
        ("too many digits", CODE, &too_precise, Some((secret, now)), 400, "INVALID_FIELD"),
        ("unknown order", CODE, &unknown_order, Some((secret, now)), 404, "ORDER_NOT_FOUND"),
    ];
    for (case, code, body, signed, status, error_code) in cases {
        let (got, envelope) = raw(&base, code, body, signed).await;
        assert_eq!(got, status, "{case}: {envelope}");
        assert_eq!(envelope["error_code"], error_code, "{case}: {envelope}");
        assert!(envelope["request_id"].is_string(), "{case}: {envelope}");
        assert!(envelope["message"].is_string(), "{case}: {envelope}");
    }
    assert_eq!(n.deposit_now(&order.order_no).await, order);

    // A replayed request (the same bytes, the same signature) answers the
    // first one's receipt and moves nothing more.
    let signed = Some((secret, now));
    let (first, _) = raw(&base, CODE, &good, signed).await;
    let after = n.deposit_now(&order.order_no).await;
    let balance = n.bdt_balance().await;
    let (replayed, receipt) = raw(&base, CODE, &good, signed).await;
    assert_eq!((first, replayed), (200, 200));
    assert_eq!(receipt["duplicate"], true);
    assert_eq!(after.status, DepositStatus::Completed);
    assert_eq!(n.deposit_now(&order.order_no).await, after);
    assert_eq!(n.bdt_balance().await, balance);
}

/// A channel signs with the real time: a sandbox whose clock was moved on
/// ten minutes for its own schedules (past the 300 s window, inside the
/// order's validity) still takes a notification signed now, and refuses
/// one signed at its moved time as stale.
#[tokio::test]
async fn a_moved_sandbox_clock_still_takes_a_notification_signed_with_the_real_time() {
    let (adapter, url) = adapter::start();
    let clock = payments_service::clock::OffsetClock::default();
    let f = Fixture::start(&url, adapter::SECRET, Arc::new(clock.clone())).await;
    let new = payments_testing::new_deposit("N-MOVED", Decimal::from(100), "BDT", None);
    let order = deposits::create(&f.app, &f.merchant, new).await.unwrap();
    assert!(clock.advance_by(600));
    let base = f.service.base_url();
    let mut paid = note(
        "moved-1",
        wire::NotificationType::PaymentCompleted,
        &order.order_no,
    );
    paid.amount = Some(dec("100.00"));
    let body = serde_json::to_vec(&paid).unwrap();

    let (status, refused) = raw(&base, CODE, &body, Some((adapter::SECRET, clock.unix()))).await;
    assert_eq!(
        (status, refused["error_code"].as_str()),
        (401, Some("STALE_TIMESTAMP"))
    );

    let real_now = chrono::Utc::now().timestamp();
    let (status, receipt) = raw(&base, CODE, &body, Some((adapter::SECRET, real_now))).await;
    assert_eq!(status, 200, "{receipt}");
    let now = deposits::find_any(&f.app, &order.order_no).await.unwrap();
    assert_eq!(now.status, DepositStatus::Completed);
    drop(adapter);
}
