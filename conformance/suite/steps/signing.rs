//! Steps that sign requests by hand, correctly or not.

use super::common::PaymentsWorld;
use conformance::{harness, RawRequest};
use cucumber::{then, when};
use md5::{Digest, Md5};
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

/// The published vectors' bodies, signed the seed's way by this step alone
/// (its own MD5 over the vector's canonical string and the merchant's key),
/// or over the same fields in the wrong order.
async fn send_vectors(world: &mut PaymentsWorld, descending: bool) {
    let vectors: serde_json::Value =
        serde_json::from_str(include_str!("../../../openapi/signing-test-vectors.json"))
            .expect("the published vectors");
    let merchant = world.merchant().clone();
    world.replies.clear();
    for v in vectors["vectors"].as_array().into_iter().flatten() {
        let (Some(body), Some(canonical)) = (v["body"].as_str(), v["canonical"].as_str()) else {
            continue;
        };
        // The wire crate must agree with the published canonical string.
        let ours = SigningFields::from_json_body(body.as_bytes())
            .expect("a vector body parses")
            .canonical();
        assert_eq!(ours, canonical, "{}", v["description"]);
        let input = if descending {
            let mut pairs: Vec<&str> = canonical.split('&').collect();
            pairs.reverse();
            pairs.join("&")
        } else {
            canonical.to_string()
        };
        let digest = Md5::digest(format!("{input}{}", merchant.api_key).as_bytes());
        let signature: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let raw = RawRequest {
            body: Some(body.to_string()),
            signature: Some(signature),
            ..RawRequest::new(&merchant, DEPOSIT_PATH)
        };
        let reply = harness().await.send(raw).await.expect("a reply");
        world.replies.push(reply);
    }
    assert!(!world.replies.is_empty(), "the vectors hold bodies");
}

#[when("the merchant sends every published test vector's body, signed over its canonical string")]
async fn vectors_in_order(world: &mut PaymentsWorld) {
    send_vectors(world, false).await;
}

#[when("the merchant sends them signed over the same fields in descending key order")]
async fn vectors_descending(world: &mut PaymentsWorld) {
    send_vectors(world, true).await;
}

#[then("no vector is refused for its signature")]
async fn none_refused(world: &mut PaymentsWorld) {
    for r in &world.replies {
        assert_ne!(r.status, 401, "signature step order: {}", r.body);
    }
}

#[then("every vector is refused with INVALID_SIGNATURE")]
async fn all_refused(world: &mut PaymentsWorld) {
    for r in &world.replies {
        assert_eq!(r.status, 401, "{}", r.body);
        assert_eq!(
            r.str_field("error_code"),
            Some("INVALID_SIGNATURE"),
            "{}",
            r.body
        );
    }
}
