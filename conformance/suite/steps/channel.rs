//! Steps against `payments-channel-sim`: the payer on the channel's page,
//! the channel paying or returning payouts (its `/control` endpoints), and
//! notifications posted to the service as the channel would, or as an
//! impostor would (unsigned, stale, wrongly signed, malformed, misaddressed).

use super::common::PaymentsWorld;
use super::money::order_no_of;
use conformance::settings::ChannelSettings;
use conformance::{harness, Reply};
use cucumber::{given, then, when};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn channel() -> ChannelSettings {
    harness()
        .await
        .channel()
        .expect("a @channel_sim scenario runs only where the suite knows the channel simulator")
}

async fn control(path: &str) -> Value {
    let sim = channel().await;
    let h = harness().await;
    h.http
        .get(format!("{}/control/{path}", sim.url))
        .send()
        .await
        .expect("the channel simulator answers")
        .json()
        .await
        .expect("JSON from the channel simulator")
}

/// The channel's record of this scenario's order (`payments` or `payouts`).
async fn record(kind: &str, order_no: &str) -> Option<Value> {
    control(kind).await[kind]
        .as_array()?
        .iter()
        .find(|r| r["order_no"] == order_no)
        .cloned()
}

/// Waits for the channel (another process), up to 30 s.
async fn until_record(kind: &str, order_no: &str, done: impl Fn(&Value) -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if record(kind, order_no).await.as_ref().is_some_and(&done) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: not within 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[then("the payment_url is on the channel's payment page")]
async fn payment_url_at_channel(world: &mut PaymentsWorld) {
    let sim = channel().await;
    let url = world.reply().str_field("payment_url").unwrap_or_default();
    assert!(
        url.starts_with(&format!("{}/pay/", sim.url)),
        "payment_url `{url}` is not the channel's page at {}",
        sim.url
    );
}

async fn pay_on_page(world: &mut PaymentsWorld, amount: &str) -> u16 {
    let url = world.created()["payment_url"]
        .as_str()
        .expect("a channel deposit's payment_url")
        .to_string();
    let h = harness().await;
    h.http
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("action=pay&amount={amount}"))
        .send()
        .await
        .expect("the channel's page answers")
        .status()
        .as_u16()
}

#[when("the payer declines on the channel's page")]
async fn declines(world: &mut PaymentsWorld) {
    let url = world.created()["payment_url"]
        .as_str()
        .expect("a channel deposit's payment_url")
        .to_string();
    let status = harness()
        .await
        .http
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("action=decline")
        .send()
        .await
        .expect("the channel's page answers")
        .status()
        .as_u16();
    assert_eq!(status, 200, "the channel's page took the decline");
}

#[when(expr = "the payer pays {word} on the channel's page")]
async fn pays(world: &mut PaymentsWorld, amount: String) {
    let status = pay_on_page(world, &amount).await;
    assert_eq!(status, 200, "the channel's page took the payment");
}

#[then(expr = "the channel's page links back to {string}")]
async fn channel_page_links_back(world: &mut PaymentsWorld, return_url: String) {
    let url = world.created()["payment_url"]
        .as_str()
        .expect("a channel deposit's payment_url")
        .to_string();
    let page = harness()
        .await
        .http
        .get(url)
        .send()
        .await
        .expect("the channel's page answers")
        .text()
        .await
        .unwrap_or_default();
    let href = format!(
        "id=\"return\" href=\"{}\"",
        return_url.replace('&', "&amp;")
    );
    assert!(page.contains(&href), "no link back to {return_url}: {page}");
}

#[given(expr = "the payer has paid {word} on the channel's page")]
async fn has_paid(world: &mut PaymentsWorld, amount: String) {
    pays(world, amount).await;
}

#[given("the channel's notification has reached the service")]
#[when("the channel's notification has reached the service")]
async fn notified(world: &mut PaymentsWorld) {
    let order_no = order_no_of(world.created());
    let kind = match order_no.starts_with('W') {
        true => "payouts",
        false => "payments",
    };
    until_record(
        kind,
        &order_no,
        |r| r["notified"] == true,
        "the service acknowledged",
    )
    .await;
}

#[when("the channel has taken the payout")]
async fn taken(world: &mut PaymentsWorld) {
    let order_no = order_no_of(world.created());
    until_record("payouts", &order_no, |_| true, "the channel has the payout").await;
}

async fn settle(world: &mut PaymentsWorld, outcome: &str) {
    let order_no = order_no_of(world.created());
    let sim = channel().await;
    let answer = harness()
        .await
        .http
        .post(format!("{}/control/payouts/{order_no}/{outcome}", sim.url))
        .send()
        .await
        .expect("the channel simulator answers");
    assert_eq!(
        answer.status(),
        202,
        "{outcome}: {}",
        answer.text().await.unwrap_or_default()
    );
}

#[when("the channel pays the payout")]
async fn pays_out(world: &mut PaymentsWorld) {
    settle(world, "settle").await;
}

#[when("the beneficiary's bank returns the payout")]
async fn returned(world: &mut PaymentsWorld) {
    settle(world, "fail").await;
}

/// Posts `body` to the service as the channel `code` would, signed with
/// `secret` at `at` (Unix seconds), or unsigned.
async fn post(code: &str, body: &[u8], signing: Option<(&str, i64)>) -> Reply {
    let h = harness().await;
    let path = format!("/api/v1/channels/{code}/notifications");
    let mut request = h
        .http
        .post(format!("{}{path}", h.base_url()))
        .header("content-type", "application/json")
        .body(body.to_vec());
    if let Some((secret, at)) = signing {
        let signature = payments_wire::channel::sign(secret.as_bytes(), at, "POST", &path, body);
        request = request
            .header(payments_wire::channel::HEADER_TIMESTAMP, at.to_string())
            .header(payments_wire::channel::HEADER_SIGNATURE, signature);
    }
    let answer = request.send().await.expect("the service answers");
    Reply::from_response(answer).await.expect("a JSON answer")
}

#[when("the channel sends the payment's notification again")]
async fn again(world: &mut PaymentsWorld) {
    let sim = channel().await;
    let order_no = order_no_of(world.created());
    let payment = record("payments", &order_no)
        .await
        .expect("the channel's payment");
    let paid: rust_decimal::Decimal = payment["paid_amount"]
        .as_str()
        .and_then(|a| a.parse().ok())
        .expect("what the payer paid");
    let body = json!({
        "notification_id": format!("{order_no}:payment.completed"),
        "type": "payment.completed",
        "order_no": order_no,
        "channel_order_no": payment["channel_order_no"],
        "amount": format!("{:.4}", paid),
        "occurred_at": chrono::Utc::now().to_rfc3339(),
    });
    let bytes = serde_json::to_vec(&body).expect("JSON");
    let now = chrono::Utc::now().timestamp();
    world.reply = Some(post(&sim.code, &bytes, Some((&sim.secret, now))).await);
}

#[then(expr = "the service answers 200 with {string} true")]
async fn answers_true(world: &mut PaymentsWorld, field: String) {
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body[&field], true, "{}", reply.body);
}

#[when(regex = r"^a payment notification is posted (.+)$")]
async fn impostor(world: &mut PaymentsWorld, how: String) {
    let sim = channel().await;
    let order_no = order_no_of(world.created());
    let now = chrono::Utc::now().timestamp();
    let body = |order_no: &str| {
        serde_json::to_vec(&json!({
            "notification_id": format!("impostor-{}", uuid::Uuid::new_v4().simple()),
            "type": "payment.completed",
            "order_no": order_no,
            "amount": "100.0000",
            "occurred_at": chrono::Utc::now().to_rfc3339(),
        }))
        .expect("JSON")
    };
    let good = Some((sim.secret.as_str(), now));
    let reply = match how.as_str() {
        "without a signature" => post(&sim.code, &body(&order_no), None).await,
        "signed ten minutes ago" => {
            post(&sim.code, &body(&order_no), Some((&sim.secret, now - 600))).await
        }
        "signed with another secret" => {
            let other = "not the channel's secret, though just as long";
            post(&sim.code, &body(&order_no), Some((other, now))).await
        }
        "with a body that is not JSON" => post(&sim.code, b"order_no=paid", good).await,
        "to a channel code nobody configured" => {
            post("NOBODYS-CHANNEL", &body(&order_no), good).await
        }
        "for an order number nobody issued" => {
            post(&sim.code, &body("D20000101NOBODYS0ORDER"), good).await
        }
        other => panic!("no way to post a notification `{other}`"),
    };
    world.reply = Some(reply);
}

#[when(expr = "the merchant creates a withdrawal {string} of {word} {word} to account {string}")]
async fn withdrawal_to(
    world: &mut PaymentsWorld,
    order: String,
    value: String,
    currency: String,
    account: String,
) {
    super::money::create_withdrawal_to(world, &order, &value, &currency, &account).await;
}

#[then(expr = "the operator's held channel notifications list the deposit's payment of {string}")]
async fn held_listed(world: &mut PaymentsWorld, amount: String) {
    let order_no = order_no_of(world.created());
    let sim = channel().await;
    let page = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .list_channel_notifications(Some(&sim.code), None, None, Some(&order_no), Some("held"))
            .await,
    );
    assert_eq!(page.status, 200, "{}", page.body);
    let items = page.body["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "{}", page.body);
    assert_eq!(items[0]["type"], "payment.completed", "{}", page.body);
    assert_eq!(items[0]["amount"], amount.as_str(), "{}", page.body);
    assert_eq!(items[0]["outcome"], "held", "{}", page.body);
}

/// Replaces the faults the channel simulator injects (every other
/// scenario's calls too: a scenario that sets them is `@serial`).
async fn set_faults(faults: Value) {
    let sim = channel().await;
    let answer = harness()
        .await
        .http
        .put(format!("{}/control/faults", sim.url))
        .json(&faults)
        .send()
        .await
        .expect("the channel simulator answers");
    assert_eq!(
        answer.status(),
        200,
        "{}",
        answer.text().await.unwrap_or_default()
    );
}

/// Every protocol call is answered 503 before the channel acts on it: the
/// service cannot tell whether a payout was taken, and the channel has no
/// record of it.
#[given("the channel answers every call 503 without acting on it")]
async fn channel_unreachable(_world: &mut PaymentsWorld) {
    set_faults(json!({"error_percent": 100})).await;
}

#[then("the channel answers calls again")]
async fn channel_back(_world: &mut PaymentsWorld) {
    set_faults(json!({})).await;
}

#[then("the channel has no record of the payout")]
async fn no_payout_record(world: &mut PaymentsWorld) {
    let order_no = order_no_of(world.created());
    let held = record("payouts", &order_no).await;
    assert!(held.is_none(), "the channel holds {held:?}");
}

/// The withdrawal as the merchant reads it now.
async fn withdrawal_now(world: &PaymentsWorld) -> Value {
    let order_no = order_no_of(world.created());
    let reply = Reply::of(
        harness()
            .await
            .client(world.merchant())
            .get_withdrawal(&order_no)
            .await,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The dispatcher sets a payout in doubt aside once it has been in doubt
/// for `payout_in_doubt_after_seconds`; it looks again when the clock
/// moves, in the service's own time (up to 30 s of real time).
#[then("the withdrawal is set aside for an operator")]
async fn set_aside(world: &mut PaymentsWorld) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let order = withdrawal_now(world).await;
        if order["needs_manual_intervention"] == true {
            assert_eq!(
                order["status"], "approved",
                "never failed without the channel's word: {order}"
            );
            assert!(
                order["manual_reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("in doubt")),
                "{order}"
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not set aside within 30 s: {order}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[then(expr = "the withdrawal is still {string}")]
async fn withdrawal_still(world: &mut PaymentsWorld, status: String) {
    let order = withdrawal_now(world).await;
    assert_eq!(order["status"], status.as_str(), "{order}");
}
