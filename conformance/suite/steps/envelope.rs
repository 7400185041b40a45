//! Steps that send what the framework, not a handler, would refuse: an
//! unknown path, a wrong method, a foreign content type, an oversized body,
//! a query that does not parse. Every answer is in the error envelope.

use super::common::PaymentsWorld;
use conformance::{harness, RawRequest};
use cucumber::when;

const DEPOSIT_PATH: &str = "/api/v1/merchant/orders/deposit";

async fn send(world: &mut PaymentsWorld, raw: RawRequest) {
    world.reply = Some(harness().await.send(raw).await.expect("a reply"));
}

#[when(expr = "the merchant creates a deposit {string} of {word} {word} sent as {string}")]
async fn deposit_as(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
    content_type: String,
) {
    let mut raw = RawRequest::new(world.merchant(), DEPOSIT_PATH);
    raw.body = Some(format!(
        r#"{{"merchant_order_no":"{order}","amount":{amount},"currency_code":"{currency}"}}"#
    ));
    raw.content_type = Some(match content_type.as_str() {
        "no content type" => None,
        other => Some(other.to_string()),
    });
    send(world, raw).await;
}

#[when(expr = "the merchant creates a deposit {string} whose body is {int} bytes long")]
async fn deposit_of_size(world: &mut PaymentsWorld, order: String, size: usize) {
    let head = format!(
        r#"{{"merchant_order_no":"{order}","amount":100,"currency_code":"THB","extra_data":""#
    );
    let tail = r#""}"#;
    let padding = "x".repeat(size.saturating_sub(head.len() + tail.len()));
    let mut raw = RawRequest::new(world.merchant(), DEPOSIT_PATH);
    raw.body = Some(format!("{head}{padding}{tail}"));
    send(world, raw).await;
}

#[when(expr = "the merchant sends a signed GET to {string} with the query {string}")]
async fn signed_get(world: &mut PaymentsWorld, path: String, query: String) {
    let mut raw = RawRequest::new(world.merchant(), path);
    raw.query = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    send(world, raw).await;
}

#[when(expr = "the merchant sends a signed {word} to {string}")]
async fn signed_method(world: &mut PaymentsWorld, method: String, path: String) {
    let mut raw = RawRequest::new(world.merchant(), path);
    raw.method = Some(method);
    send(world, raw).await;
}

#[when(expr = "an operator sends GET {string} with the query {string}")]
async fn operator_get(world: &mut PaymentsWorld, path: String, query: String) {
    let token = harness()
        .await
        .operator_token
        .clone()
        .expect("this scenario needs CONFORMANCE_OPERATOR_TOKEN");
    let mut raw = RawRequest::new(world.merchant(), path);
    raw.query = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    raw.headers = vec![("authorization".into(), format!("Bearer {token}"))];
    send(world, raw).await;
}
