//! Steps for callback delivery, with a receiver the suite starts and
//! scripts, the operator's view of delivery records, and the sandbox clock.

use super::common::PaymentsWorld;
use conformance::receiver::{Answer, Received, Receiver};
use conformance::{harness, Reply};
use cucumber::{given, then, when};
use merchant_client::merchant::types as m;
use merchant_client::sandbox::types as sb;
use serde_json::Value;
use std::time::Duration;

/// How long a step waits for the service to act on its own (the worker
/// is woken at once; this only bounds a failure).
pub(super) const PATIENCE: Duration = Duration::from_secs(20);

pub(super) fn receiver(world: &PaymentsWorld) -> &Receiver {
    world
        .receiver
        .as_ref()
        .expect("the scenario has a callback receiver")
}

#[given(expr = "a callback receiver that answers {int}")]
async fn receiver_answers(world: &mut PaymentsWorld, status: u16) {
    let r = harness().await.receiver().await.expect("a receiver");
    r.otherwise(Answer::Status(status));
    world.receiver = Some(r);
}

#[given(expr = "a callback receiver that answers {int} first, then {int}")]
async fn receiver_answers_then(world: &mut PaymentsWorld, first: u16, then: u16) {
    let r = harness().await.receiver().await.expect("a receiver");
    r.script(&[Answer::Status(first)]);
    r.otherwise(Answer::Status(then));
    world.receiver = Some(r);
}

#[given(expr = "a callback receiver that is silent for {int} seconds first, then answers {int}")]
async fn receiver_silent_then(world: &mut PaymentsWorld, seconds: u64, then: u16) {
    let r = harness().await.receiver().await.expect("a receiver");
    r.script(&[Answer::Silence(Duration::from_secs(seconds))]);
    r.otherwise(Answer::Status(then));
    world.receiver = Some(r);
}

#[given(expr = "a callback receiver that hangs up first, then answers {int}")]
async fn receiver_hangs_up_then(world: &mut PaymentsWorld, then: u16) {
    let r = harness().await.receiver().await.expect("a receiver");
    r.script(&[Answer::Hangup]);
    r.otherwise(Answer::Status(then));
    world.receiver = Some(r);
}

#[given("a callback receiver with a self-signed certificate")]
async fn receiver_self_signed(world: &mut PaymentsWorld) {
    let r = harness()
        .await
        .self_signed_receiver()
        .await
        .expect("a receiver");
    world.receiver = Some(r);
}

#[given(expr = "the receiver's address is given as https on {string}")]
async fn receiver_https(world: &mut PaymentsWorld, host: String) {
    let r = world.receiver.as_mut().expect("a receiver");
    let port = r.url.rsplit(':').next().unwrap_or_default().to_string();
    r.url = format!("https://{host}:{port}");
}

#[given(expr = "the merchant has created a deposit {string} of {word} {word} with a callback")]
async fn deposit_with_callback(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
) {
    let mut body = conformance::requests::deposit(&order, &amount, &currency);
    body.callback_url = Some(receiver(world).url.clone());
    let client = harness().await.client(world.merchant());
    let reply = Reply::of(client.create_deposit(&body).await);
    assert_eq!(reply.status, 200, "{}", reply.body);
    world.created = Some(reply.body);
}

#[given(expr = "the merchant has created a withdrawal {string} of {word} {word} with a callback")]
async fn withdrawal_with_callback(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
) {
    let body = m::CreateWithdrawalRequest {
        callback_url: Some(receiver(world).url.clone()),
        ..conformance::requests::withdrawal(&order, &amount, &currency)
    };
    let client = harness().await.client(world.merchant());
    let reply = Reply::of(client.create_withdrawal(&body).await);
    assert_eq!(reply.status, 200, "{}", reply.body);
    world.created = Some(reply.body);
}

#[when(expr = "the sandbox clock advances {int} seconds")]
async fn advance(world: &mut PaymentsWorld, seconds: i64) {
    let reply = Reply::of(
        harness()
            .await
            .sandbox()
            .unwrap()
            .advance_clock(&sb::AdvanceClockRequest { seconds })
            .await,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    world.reply = Some(reply);
}

#[then(expr = "the receiver gets {int} callback(s)")]
async fn receiver_gets(world: &mut PaymentsWorld, count: usize) {
    let got = receiver(world).wait_for(count, PATIENCE).await;
    assert_eq!(got.len(), count, "{got:#?}");
}

pub(super) fn last(world: &PaymentsWorld) -> Received {
    receiver(world)
        .received()
        .last()
        .cloned()
        .expect("a callback arrived")
}

fn body_of(r: &Received) -> Value {
    serde_json::from_str(&r.body).expect("a JSON callback body")
}

#[then(expr = "the callback is {string} with exactly the fields {string}")]
async fn callback_fields(world: &mut PaymentsWorld, event: String, fields: String) {
    let body = body_of(&last(world));
    assert_eq!(body["event"].as_str(), Some(event.as_str()), "{body}");
    let mut got: Vec<&str> = body
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut want: Vec<&str> = fields.split(',').map(str::trim).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{body}");
    assert_eq!(
        body["order_no"].as_str(),
        world.created()["order_no"].as_str()
    );
}

#[then(expr = "the callback field {string} is {string}")]
async fn callback_field(world: &mut PaymentsWorld, name: String, value: String) {
    let body = body_of(&last(world));
    assert_eq!(body[&name].as_str(), Some(value.as_str()), "{body}");
}

#[then(expr = "the callback field {string} is null")]
async fn callback_field_null(world: &mut PaymentsWorld, name: String) {
    let body = body_of(&last(world));
    assert!(
        body.get(&name).is_some_and(Value::is_null),
        "{name} in {body}"
    );
}

#[then("the callback is signed with the merchant's key")]
async fn callback_signed(world: &mut PaymentsWorld) {
    let r = last(world);
    let key = world.merchant().api_key.clone();
    assert_eq!(r.method, "POST", "callbacks are POSTed");
    assert_eq!(r.path, "/callback", "to the callback_url's own path");
    assert_eq!(r.header("x-api-key"), Some(key.as_str()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let sig = r.header("x-signature").unwrap_or_default();
    assert!(
        sig.len() == 32
            && sig
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "x-signature is 32 lowercase hex digits: {sig}"
    );
    let stamp: i64 = r
        .header("x-timestamp")
        .and_then(|t| t.parse().ok())
        .expect("an x-timestamp in Unix seconds");
    assert!(stamp > 1_700_000_000, "{stamp}");
    // As a merchant would: the client crate's verifier, which also reads
    // the body as the spec's schema for its event.
    let headers = merchant_client::callbacks::CallbackHeaders {
        api_key: r.header("x-api-key"),
        timestamp: r.header("x-timestamp"),
        signature: r.header("x-signature"),
    };
    let (verified, _event) = merchant_client::callbacks::verify_callback(
        &headers,
        r.body.as_bytes(),
        &key,
        &merchant_client::callbacks::VerifyOptions::default(),
    )
    .unwrap_or_else(|e| panic!("the callback does not verify: {e}: {}", r.body));
    assert_eq!(
        Some(verified.order_no.as_str()),
        world.created()["order_no"].as_str()
    );
}

#[then("every attempt carried the same body and signature")]
async fn same_body(world: &mut PaymentsWorld) {
    let got = receiver(world).received();
    assert!(got.len() > 1);
    assert!(got.windows(2).all(|w| w[0].body == w[1].body));
    assert!(got
        .windows(2)
        .all(|w| w[0].header("x-signature") == w[1].header("x-signature")));
}

#[then("every attempt carried the same body and signature, and a later timestamp")]
async fn same_bytes(world: &mut PaymentsWorld) {
    let stamps = same_body_and_signature(world);
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");
}

/// Where the sandbox clock moved the schedule on, attempts follow each
/// other within a second of real time: their timestamps are the
/// receiver's time, as a merchant's freshness check needs.
#[then(
    "every attempt carried the same body and signature, and a timestamp on the receiver's clock"
)]
async fn same_bytes_receiver_clock(world: &mut PaymentsWorld) {
    let stamps = same_body_and_signature(world);
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
    // A few seconds for two machines' clocks, against a deployment.
    timestamps_within(world, 5).await;
}

#[then(expr = "every callback's timestamp is within {int} seconds of the receiver's clock")]
async fn timestamps_within(world: &mut PaymentsWorld, window: i64) {
    let got = receiver(world).received();
    assert!(!got.is_empty(), "no callback arrived");
    for r in got {
        let stamp: i64 = r
            .header("x-timestamp")
            .and_then(|t| t.parse().ok())
            .expect("an X-Timestamp in Unix seconds");
        assert!(
            (stamp - r.wall_unix).abs() <= window,
            "X-Timestamp {stamp} is {} s from the receiver's clock",
            stamp - r.wall_unix
        );
    }
}

/// The attempts' bodies and signatures are byte-identical; their
/// timestamps, in order.
fn same_body_and_signature(world: &PaymentsWorld) -> Vec<i64> {
    let got = receiver(world).received();
    assert!(got.len() > 1);
    assert!(got.windows(2).all(|w| w[0].body == w[1].body));
    assert!(got
        .windows(2)
        .all(|w| w[0].header("x-signature") == w[1].header("x-signature")));
    got.iter()
        .filter_map(|r| r.header("x-timestamp")?.parse().ok())
        .collect()
}

/// The order's delivery record, as an operator reads it, once it reached
/// `status` after `attempts` attempts (the worker runs on its own).
async fn delivery_when(world: &PaymentsWorld, status: &str, attempts: i64) -> Value {
    let order_no = world.created()["order_no"]
        .as_str()
        .expect("an order")
        .to_string();
    let operator = harness().await.operator().unwrap();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let page = Reply::of(
            operator
                .list_callback_deliveries(None, None, None, Some(10), None, Some(&order_no), None)
                .await,
        );
        let id = page.body["items"][0]["id"].as_str().map(String::from);
        if let Some(id) = id {
            let read = Reply::of(operator.read_callback_delivery(&id).await);
            if read.body["status"] == status && read.body["attempts"] == attempts {
                return read.body;
            }
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "the delivery did not reach {status} after {attempts}: {}",
                    read.body
                );
            }
        } else if tokio::time::Instant::now() > deadline {
            panic!("no delivery record for {order_no}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[then(expr = "the delivery is {string} after {int} attempt(s)")]
async fn delivery_is(world: &mut PaymentsWorld, status: String, attempts: i64) {
    let delivery = delivery_when(world, &status, attempts).await;
    world.reply = Some(Reply {
        status: 200,
        body: delivery,
        retry_after: None,
    });
}

#[then(expr = "its attempts were scheduled {int} seconds apart")]
async fn spaced(world: &mut PaymentsWorld, seconds: i64) {
    let history = world.reply().body["history"].as_array().cloned().unwrap();
    let times: Vec<i64> = history
        .iter()
        .map(|a| {
            chrono::DateTime::parse_from_rfc3339(a["scheduled_at"].as_str().unwrap())
                .unwrap()
                .timestamp()
        })
        .collect();
    let gaps: Vec<i64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|g| *g == seconds),
        "retries must be scheduled {seconds} s after the previous attempt's scheduled time; \
         the gaps were {gaps:?} s (scheduled at {times:?})"
    );
}

#[then(expr = "the delivery's next attempt is {int} seconds after the first was scheduled")]
async fn next_attempt_after(world: &mut PaymentsWorld, seconds: i64) {
    let body = &world.reply().body;
    let at = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time"))
            .expect("an RFC 3339 time")
            .timestamp()
    };
    let first = at(&body["history"][0]["scheduled_at"]);
    let next = at(&body["next_attempt_at"]);
    assert_eq!(next - first, seconds, "{body}");
}

#[then(expr = "its last attempt says {string}")]
async fn last_attempt_says(world: &mut PaymentsWorld, words: String) {
    let history = world.reply().body["history"].as_array().cloned().unwrap();
    let last = history.last().expect("an attempt");
    let text = format!(
        "{} {}",
        last["outcome"].as_str().unwrap_or_default(),
        last["error"].as_str().unwrap_or_default()
    );
    assert!(text.contains(&words), "{last}");
}

#[when("an operator retries the delivery")]
async fn operator_retries(world: &mut PaymentsWorld) {
    let id = world.reply().body["id"]
        .as_str()
        .expect("a delivery")
        .to_string();
    let reply = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .retry_callback_delivery(&id)
            .await,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.body["id"].as_str(),
        Some(id.as_str()),
        "the same record"
    );
    assert_eq!(reply.body["attempts"], 0, "{}", reply.body);
    world.reply = Some(reply);
}

#[then("the order has no delivery record")]
async fn no_record(world: &mut PaymentsWorld) {
    let order_no = world.created()["order_no"].as_str().unwrap().to_string();
    let page = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .list_callback_deliveries(None, None, None, Some(10), None, Some(&order_no), None)
            .await,
    );
    assert_eq!(page.body["items"], Value::Array(vec![]), "{}", page.body);
}

#[then("a receiver that deduplicates by order_no and status sees each status once")]
async fn deduplicated(world: &mut PaymentsWorld) {
    let got = receiver(world).received();
    let mut seen = std::collections::BTreeMap::new();
    for r in &got {
        let body = body_of(r);
        let key = (
            body["order_no"].as_str().unwrap_or_default().to_string(),
            body["status"].as_str().unwrap_or_default().to_string(),
        );
        *seen.entry(key).or_insert(0) += 1;
    }
    assert!(got.len() > seen.len(), "the scenario sent a status twice");
    assert!(seen.values().all(|n| *n >= 1));
}

#[then(expr = "the receiver gets {int} callbacks within {int} seconds")]
async fn receiver_gets_within(world: &mut PaymentsWorld, count: usize, seconds: u64) {
    let got = receiver(world)
        .wait_for(count, Duration::from_secs(seconds))
        .await;
    assert_eq!(got.len(), count, "{got:#?}");
}

#[then(expr = "they arrived {int} seconds apart, within {int} seconds each")]
async fn arrived_apart(world: &mut PaymentsWorld, seconds: u64, tolerance: u64) {
    let got = receiver(world).received();
    let gaps: Vec<f64> = got
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at).as_secs_f64())
        .collect();
    println!("gaps between attempts on the receiver's clock: {gaps:.2?}");
    assert!(
        gaps.iter()
            .all(|g| (g - seconds as f64).abs() <= tolerance as f64),
        "{gaps:?}"
    );
}

#[when("a callback body with a field the contract does not name is signed with the merchant's key")]
async fn extra_field_body(world: &mut PaymentsWorld) {
    let body = r#"{"event":"deposit.completed","order_no":"D1","merchant_order_no":"M1","amount":"100.0000","actual_amount":"100.0000","currency":"THB","status":"completed","matched_at":"2026-11-22T10:00:00Z","completed_at":"2026-11-22T10:00:05Z","risk_score":"low"}"#;
    let key = world.merchant().api_key.clone();
    let fields = payments_wire::SigningFields::from_json_body(body.as_bytes()).unwrap();
    let signature = payments_wire::sign(&fields, &key);
    world.page = Some((0, format!("{signature}\n{body}")));
}

#[then(expr = "the client crate's verifier reads it as {string}")]
async fn verifier_reads(world: &mut PaymentsWorld, event: String) {
    let (_, text) = world.page.clone().expect("a body was signed");
    let (signature, body) = text.split_once('\n').unwrap();
    let key = world.merchant().api_key.clone();
    let timestamp = chrono::Utc::now().timestamp().to_string();
    let headers = merchant_client::callbacks::CallbackHeaders {
        api_key: Some(key.as_str()),
        timestamp: Some(timestamp.as_str()),
        signature: Some(signature),
    };
    let (verified, _event) = merchant_client::callbacks::verify_callback(
        &headers,
        body.as_bytes(),
        &key,
        &merchant_client::callbacks::VerifyOptions::default(),
    )
    .unwrap_or_else(|e| panic!("a body with an unknown field must still verify: {e}"));
    assert_eq!(verified.event, event);
}

#[when("an operator retries the merchant's failed callbacks in one batch")]
async fn operator_retries_batch(world: &mut PaymentsWorld) {
    let batch = merchant_client::operator::types::CallbackRetryBatch {
        merchant_id: Some(world.merchant().id.clone()),
        created_from: None,
        created_to: None,
        limit: None,
    };
    let reply = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .retry_failed_callbacks(&batch)
            .await,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    world.reply = Some(reply);
}

#[then(expr = "the batch queued {int} delivery/deliveries again, and none remain")]
async fn batch_queued(world: &mut PaymentsWorld, retried: i64) {
    let body = &world.reply().body;
    assert_eq!(body["retried"], retried, "{body}");
    assert_eq!(body["more"], false, "{body}");
}

#[then(expr = "the merchant's deliveries list {int} {string} record(s)")]
async fn merchant_deliveries(world: &mut PaymentsWorld, count: usize, status: String) {
    let merchant_id = world.merchant().id.clone();
    let page = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .list_callback_deliveries(
                None,
                None,
                None,
                Some(50),
                Some(&merchant_id),
                None,
                Some(&status),
            )
            .await,
    );
    let items = page.body["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), count, "{}", page.body);
    assert!(
        items
            .iter()
            .all(|d| d["merchant_id"] == merchant_id.as_str()),
        "{}",
        page.body
    );
}
