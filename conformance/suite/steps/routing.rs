//! Steps of routing among several channels: a merchant's own routing
//! table set by two people (`set_routing`), where each order went and why
//! (its `routing_` record), and what each simulator has of it.

use super::common::PaymentsWorld;
use super::money::order_no_of;
use conformance::settings::ChannelSettings;
use conformance::{harness, Reply};
use cucumber::gherkin::Step;
use cucumber::{given, then};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A channel of the run by its code: the simulator's, or one of the
/// routing scenarios' others.
async fn sim(code: &str) -> ChannelSettings {
    let h = harness().await;
    h.channel()
        .filter(|c| c.code == code)
        .or_else(|| h.routing_channels().into_iter().find(|c| c.code == code))
        .unwrap_or_else(|| panic!("no channel simulator with the code {code} in this run"))
}

/// The table's rows as the candidates `set_routing` takes: amounts as
/// decimal strings, an empty cell left out.
fn candidates(step: &Step) -> Vec<Value> {
    let table = step.table.as_ref().expect("the routing table");
    let header = &table.rows[0];
    table.rows[1..]
        .iter()
        .map(|row| {
            let mut c = serde_json::Map::new();
            for (name, cell) in header.iter().zip(row) {
                let cell = cell.trim();
                if cell.is_empty() {
                    continue;
                }
                let value = match name.as_str() {
                    "channel" => ("channel_code", json!(cell)),
                    "weight" => ("weight", json!(cell.parse::<i64>().expect("a weight"))),
                    "enabled" => ("enabled", json!(cell == "true")),
                    other => (other, json!(cell)),
                };
                c.insert(value.0.to_string(), value.1);
            }
            Value::Object(c)
        })
        .collect()
}

#[given(regex = r"^the merchant's (\w+) (deposit|withdrawal)s are routed by:$")]
async fn routed_by(world: &mut PaymentsWorld, currency: String, direction: String, step: &Step) {
    let merchant = world.merchant().id.clone();
    let reply = conformance::four_eyes::set_routing(json!({
        "currency_code": currency,
        "direction": direction,
        "merchant_id": merchant,
        "candidates": candidates(step),
    }))
    .await;
    assert_eq!(
        reply.status, 200,
        "setting the routing table: {}",
        reply.body
    );
    assert_eq!(reply.body["status"], json!("approved"), "{}", reply.body);
    assert_eq!(
        reply.body["result"]["merchant_id"],
        json!(merchant),
        "{}",
        reply.body
    );
}

/// The deposit the scenario made last: created in a `Given`, or the
/// answer to the `When` that created it.
fn deposit(world: &PaymentsWorld) -> &Value {
    match &world.created {
        Some(created) => created,
        None => &world.reply().body,
    }
}

/// The deposit as the merchant reads it back (the query answer carries
/// its `payment_snapshot`).
async fn read_deposit(world: &PaymentsWorld) -> Value {
    let order_no = order_no_of(deposit(world));
    let reply = Reply::of(
        harness()
            .await
            .client(world.merchant())
            .get_deposit(&order_no)
            .await,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

#[then(expr = "the deposit went to channel {string} as {string}")]
async fn went_to(world: &mut PaymentsWorld, code: String, rule: String) {
    let read = read_deposit(world).await;
    let s = &read["payment_snapshot"];
    assert_eq!(s["routing_channel"], json!(code), "{s}");
    assert_eq!(s["channel_code"], json!(code), "{s}");
    let said = s["routing_rule"].as_str().unwrap_or_default();
    assert!(
        said.starts_with(&rule),
        "routing_rule `{said}` is not `{rule}…`"
    );
    let url = deposit(world)["payment_url"].as_str().unwrap_or_default();
    let at = sim(&code).await.url;
    assert!(
        url.starts_with(&at),
        "payment_url {url} is not at {code} ({at})"
    );
}

#[then(expr = "the deposit's routing says {string} in {string}")]
async fn routing_says(world: &mut PaymentsWorld, words: String, key: String) {
    let read = read_deposit(world).await;
    let s = &read["payment_snapshot"];
    let said = s[&key].as_str().unwrap_or_default();
    assert!(
        said.contains(&words),
        "{key} `{said}` does not say `{words}`: {s}"
    );
}

async fn records(code: &str, kind: &str) -> Vec<Value> {
    let at = sim(code).await.url;
    let body: Value = harness()
        .await
        .http
        .get(format!("{at}/control/{kind}"))
        .send()
        .await
        .expect("the channel simulator answers")
        .json()
        .await
        .expect("JSON from the channel simulator");
    body[kind].as_array().cloned().unwrap_or_default()
}

#[then(regex = r#"^channel "([^"]+)" has no record of the (deposit|payout)$"#)]
async fn no_record(world: &mut PaymentsWorld, code: String, what: String) {
    let order_no = order_no_of(deposit(world));
    let kind = if what == "deposit" {
        "payments"
    } else {
        "payouts"
    };
    let found = records(&code, kind).await;
    assert!(
        found.iter().all(|r| r["order_no"] != json!(order_no)),
        "{code} has a record of {order_no}"
    );
}

#[then(expr = "channel {string} has the payout")]
async fn has_payout(world: &mut PaymentsWorld, code: String) {
    let order_no = order_no_of(world.created());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !records(&code, "payouts")
        .await
        .iter()
        .any(|r| r["order_no"] == json!(order_no))
    {
        assert!(
            Instant::now() < deadline,
            "{code} has not the payout within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn read_withdrawal(world: &PaymentsWorld) -> Reply {
    let order_no = order_no_of(world.created());
    Reply::of(
        harness()
            .await
            .operator()
            .expect("an operator client")
            .read_withdrawal(&order_no)
            .await,
    )
}

#[then(expr = "the operator reads the withdrawal's routing {string} as {string}")]
async fn routing_is(world: &mut PaymentsWorld, key: String, value: String) {
    let reply = read_withdrawal(world).await;
    assert_eq!(reply.body["routing"][&key], json!(value), "{}", reply.body);
}

#[then(expr = "the operator reads the withdrawal's routing {string} containing {string}")]
async fn routing_contains(world: &mut PaymentsWorld, key: String, words: String) {
    let reply = read_withdrawal(world).await;
    let said = reply.body["routing"][&key].as_str().unwrap_or_default();
    assert!(said.contains(&words), "{key} `{said}`: {}", reply.body);
}
