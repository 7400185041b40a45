//! Steps that sign requests by hand, correctly or not.

use super::common::PaymentsWorld;
use conformance::{harness, RawRequest};
use cucumber::when;
use payments_wire::SigningFields;

const DEPOSIT_PATH: &str = "/api/v1/merchant/orders/deposit";
const BALANCE_PATH: &str = "/api/v1/merchant/balance";

fn deposit_body(merchant_order_no: &str, amount: &str, currency: &str) -> String {
    format!(
        r#"{{"merchant_order_no":"{merchant_order_no}","amount":{amount},"currency_code":"{currency}"}}"#
    )
}

async fn send(world: &mut PaymentsWorld, raw: RawRequest) {
    world.reply = Some(harness().await.send(raw).await.expect("a reply"));
}

#[when("the merchant reads its balances with the signature in upper case")]
async fn balances_upper_case(world: &mut PaymentsWorld) {
    let mut raw = RawRequest::new(world.merchant(), BALANCE_PATH);
    raw.upper_case_signature = true;
    send(world, raw).await;
}

#[when(expr = "the merchant creates a deposit {string} of {word} {word} signed with a wrong key")]
async fn deposit_wrong_key(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
) {
    let mut raw = RawRequest::new(world.merchant(), DEPOSIT_PATH);
    raw.body = Some(deposit_body(&order, &amount, &currency));
    raw.signing_key = "sk_test_not_the_merchants_key".into();
    send(world, raw).await;
}

#[when(
    expr = "the merchant creates a deposit {string} of {word} {word} whose amount is changed to {word} after signing"
)]
async fn deposit_altered(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
    altered: String,
) {
    let mut raw = RawRequest::new(world.merchant(), DEPOSIT_PATH);
    let signed = deposit_body(&order, &amount, &currency);
    raw.sign_as = Some(SigningFields::from_json_body(signed.as_bytes()).unwrap());
    raw.body = Some(deposit_body(&order, &altered, &currency));
    send(world, raw).await;
}

#[when(
    expr = "the merchant creates a deposit {string} of {word} {word} signed as if the amount were {word}"
)]
async fn deposit_signed_other_text(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
    as_if: String,
) {
    let mut raw = RawRequest::new(world.merchant(), DEPOSIT_PATH);
    let signed = deposit_body(&order, &as_if, &currency);
    raw.sign_as = Some(SigningFields::from_json_body(signed.as_bytes()).unwrap());
    raw.body = Some(deposit_body(&order, &amount, &currency));
    send(world, raw).await;
}

#[when(regex = r"^the merchant sends a deposit body (.+)$")]
async fn deposit_raw_body(world: &mut PaymentsWorld, body: String) {
    let mut raw = RawRequest::new(world.merchant(), DEPOSIT_PATH);
    raw.body = Some(body);
    send(world, raw).await;
}

#[when("the merchant reads that deposit by order_no with a signature made for another order_no")]
async fn get_deposit_signed_for_other(world: &mut PaymentsWorld) {
    let order_no = world.created()["order_no"].as_str().unwrap().to_string();
    let mut raw = RawRequest::new(
        world.merchant(),
        format!("/api/v1/merchant/query/deposit/{order_no}"),
    );
    raw.sign_as = Some(
        [("order_no", "D20260101XXXXXXXXXXXX")]
            .into_iter()
            .collect(),
    );
    send(world, raw).await;
}

#[when(
    expr = "the merchant reads deposit {string} by merchant_order_no with a signature made for {string}"
)]
async fn find_deposit_signed_for_other(world: &mut PaymentsWorld, order: String, other: String) {
    let mut raw = RawRequest::new(world.merchant(), "/api/v1/merchant/query/deposit");
    raw.query = vec![("merchant_order_no".into(), order)];
    raw.sign_as = Some([("merchant_order_no", other)].into_iter().collect());
    send(world, raw).await;
}

#[when(expr = "the merchant reads its balances with a timestamp {int} seconds from now")]
async fn balances_skewed(world: &mut PaymentsWorld, offset: i64) {
    let mut raw = RawRequest::new(world.merchant(), BALANCE_PATH);
    raw.timestamp_offset = offset;
    send(world, raw).await;
}

#[when(expr = "the merchant reads its balances with the timestamp {string}")]
async fn balances_bad_timestamp(world: &mut PaymentsWorld, timestamp: String) {
    let mut raw = RawRequest::new(world.merchant(), BALANCE_PATH);
    raw.timestamp = Some(timestamp);
    send(world, raw).await;
}

#[when(expr = "the merchant reads its balances without the {string} header")]
async fn balances_missing_header(world: &mut PaymentsWorld, header: String) {
    let mut raw = RawRequest::new(world.merchant(), BALANCE_PATH);
    raw.omit_header = Some(header);
    send(world, raw).await;
}

#[when("a caller with an unknown API key reads balances")]
async fn unknown_key(world: &mut PaymentsWorld) {
    let mut raw = RawRequest::new(world.merchant(), BALANCE_PATH);
    raw.api_key = "sk_test_000000000000000000000000000000000000000000000000".into();
    raw.signing_key = raw.api_key.clone();
    send(world, raw).await;
}
