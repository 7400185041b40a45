//! The world of a scenario and the steps every feature shares.

use conformance::{harness, Merchant, Reply};
use cucumber::{given, then, World};
use serde_json::Value;

#[derive(Debug, Default, World)]
pub struct PaymentsWorld {
    /// The scenario's own merchant.
    pub merchant: Option<Merchant>,
    /// A second merchant, for isolation scenarios.
    pub other: Option<Merchant>,
    /// The reply to the last request.
    pub reply: Option<Reply>,
    /// The body of the last order a `Given` step created.
    pub created: Option<Value>,
    /// Replies to a series of requests.
    pub replies: Vec<Reply>,
    /// Distinguishes this scenario's bank references from every other run's.
    pub tag: Option<String>,
    /// The last bank transaction ingested or matched, and its request.
    pub bank_transaction: Option<Value>,
    pub bank_request: Option<merchant_client::operator::types::BankTransactionRequest>,
    /// Orders an operator listing returned, across its pages.
    pub listed: Vec<Value>,
    /// The merchant's key before the last rotation.
    pub previous_key: Option<String>,
    /// The merchant's key before its first rotation in the scenario.
    pub first_key: Option<String>,
    /// Status and text of the last page a payer saw.
    pub page: Option<(u16, String)>,
    /// The last cashier session the merchant created.
    pub session: Option<Value>,
    /// The merchant's callback endpoint, when the scenario starts one.
    pub receiver: Option<conformance::receiver::Receiver>,
    /// The merchant's callback secrets as an operator was shown them,
    /// oldest first.
    pub callback_secrets: Vec<String>,
    /// The seconds left the cashier page showed last.
    pub time_left: Option<i64>,
    /// The query of the last events feed read, to read it again.
    pub events_query: Vec<(&'static str, String)>,
    /// Where a follower of the feed stopped reading.
    pub feed_cursor: Option<String>,
    /// Operators the scenario created, by the name it gave them: their
    /// id and token.
    pub operators: std::collections::HashMap<String, (String, String)>,
    /// The last change request the scenario filed.
    pub change_request: Option<String>,
    /// A merchant the scenario created through the operator API.
    pub made_merchant: Option<Value>,
    /// The email the scenario invited to own its merchant.
    pub invitee: Option<String>,
    /// The console's or portal's session cookie a sign-in gave.
    pub web_cookie: Option<String>,
    /// Pages fetched before the last, to compare with it.
    pub earlier_pages: Vec<(u16, String)>,
}

impl PaymentsWorld {
    pub fn merchant(&self) -> &Merchant {
        self.merchant
            .as_ref()
            .expect("the scenario has a merchant (Given a fresh merchant)")
    }

    /// Keeps a generated-client call's reply as the scenario's last one.
    pub fn keep<T: serde::Serialize, E: serde::Serialize + std::fmt::Debug>(
        &mut self,
        result: Result<
            merchant_client::merchant::ResponseValue<T>,
            merchant_client::merchant::Error<E>,
        >,
    ) -> &Reply {
        self.reply.insert(Reply::of(result))
    }

    pub fn reply(&self) -> &Reply {
        self.reply.as_ref().expect("a request was sent")
    }

    pub fn tag(&mut self) -> String {
        self.tag
            .get_or_insert_with(|| uuid::Uuid::new_v4().simple().to_string()[..12].to_string())
            .clone()
    }

    pub fn created(&self) -> &Value {
        self.created
            .as_ref()
            .expect("an order was created earlier in the scenario")
    }
}

#[given("a fresh merchant")]
async fn fresh_merchant(world: &mut PaymentsWorld) {
    world.merchant = Some(
        harness()
            .await
            .fresh_merchant()
            .await
            .expect("a fresh merchant"),
    );
}

#[given("another fresh merchant")]
async fn another_fresh_merchant(world: &mut PaymentsWorld) {
    world.other = Some(
        harness()
            .await
            .fresh_merchant()
            .await
            .expect("another fresh merchant"),
    );
}

#[then("the request succeeds")]
async fn request_succeeds(world: &mut PaymentsWorld) {
    let reply = world.reply();
    assert_eq!(
        reply.status, 200,
        "expected success, got {}: {}",
        reply.status, reply.body
    );
}

#[then(expr = "the request is refused with status {int}")]
async fn refused_status(world: &mut PaymentsWorld, status: u16) {
    assert_eq!(world.reply().status, status, "{}", world.reply().body);
}

#[then(expr = "the request is refused with status {int} and error code {string}")]
pub(crate) async fn refused(world: &mut PaymentsWorld, status: u16, code: String) {
    let reply = world.reply();
    assert_eq!(reply.status, status, "status; body: {}", reply.body);
    assert_eq!(
        reply.str_field("error_code"),
        Some(code.as_str()),
        "error_code; body: {}",
        reply.body
    );
    assert!(
        reply.str_field("request_id").is_some_and(|r| !r.is_empty()),
        "the envelope has a request_id: {}",
        reply.body
    );
    assert!(
        reply.str_field("message").is_some_and(|m| !m.is_empty()),
        "the envelope has a message: {}",
        reply.body
    );
}

#[then(expr = "the error message names {string}")]
async fn message_names(world: &mut PaymentsWorld, needle: String) {
    let message = world.reply().str_field("message").unwrap_or_default();
    assert!(
        message.contains(&needle),
        "the message `{message}` should name `{needle}`"
    );
}

#[then(expr = "the response field {string} is {string}")]
async fn field_is(world: &mut PaymentsWorld, field: String, expected: String) {
    let reply = world.reply();
    assert_eq!(
        reply.str_field(&field),
        Some(expected.as_str()),
        "field {field} of {}",
        reply.body
    );
}

#[then(expr = "the response has no field {string}")]
async fn no_field(world: &mut PaymentsWorld, field: String) {
    let reply = world.reply();
    assert!(
        reply.field(&field).is_none_or(Value::is_null),
        "field {field} in {}",
        reply.body
    );
}

#[then(expr = "the response fields {string} are RFC 3339 UTC timestamps")]
async fn timestamps(world: &mut PaymentsWorld, fields: String) {
    for field in fields.split(',').map(str::trim) {
        let text = world
            .reply()
            .str_field(field)
            .unwrap_or_default()
            .to_string();
        let parsed = chrono::DateTime::parse_from_rfc3339(&text)
            .unwrap_or_else(|e| panic!("{field} = `{text}` is not RFC 3339: {e}"));
        assert_eq!(
            parsed.offset().local_minus_utc(),
            0,
            "{field} = `{text}` is not UTC"
        );
        assert!(
            text.ends_with('Z'),
            "{field} = `{text}` is written in UTC (Z)"
        );
    }
}

#[then("the response is the same order as the one created")]
async fn same_order(world: &mut PaymentsWorld) {
    let created = world.created().clone();
    let reply = world.reply();
    assert_eq!(
        reply.str_field("order_no"),
        created.get("order_no").and_then(Value::as_str),
        "{}",
        reply.body
    );
}
