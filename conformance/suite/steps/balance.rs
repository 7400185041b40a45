//! Balance steps and the published spec.

use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::{then, when};
use serde_json::Value;

#[when("the merchant reads its balances")]
async fn read_balances(world: &mut PaymentsWorld) {
    let client = harness().await.client(world.merchant());
    world.keep(client.get_balances().await);
}

#[then(expr = "the balances list the currencies {string}")]
async fn currencies(world: &mut PaymentsWorld, expected: String) {
    let items = world.reply().body["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let listed: Vec<&str> = items
        .iter()
        .filter_map(|i| i["currency_code"].as_str())
        .collect();
    let expected: Vec<&str> = expected.split(',').map(str::trim).collect();
    assert_eq!(listed, expected);
}

#[then(expr = "every balance is {string} available, {string} frozen and {string} in total")]
async fn every_balance(
    world: &mut PaymentsWorld,
    available: String,
    frozen: String,
    total: String,
) {
    for item in world.reply().body["items"].as_array().into_iter().flatten() {
        assert_eq!(
            item["available_balance"].as_str(),
            Some(available.as_str()),
            "{item}"
        );
        assert_eq!(
            item["frozen_balance"].as_str(),
            Some(frozen.as_str()),
            "{item}"
        );
        assert_eq!(
            item["total_balance"].as_str(),
            Some(total.as_str()),
            "{item}"
        );
        assert!(item["version"].is_i64(), "{item}");
    }
}

#[then("the balance list names the merchant")]
async fn names_merchant(world: &mut PaymentsWorld) {
    let listed = world
        .reply()
        .str_field("merchant_id")
        .unwrap_or_default()
        .to_string();
    let merchant = world.merchant();
    if merchant.id.is_empty() {
        assert!(!listed.is_empty());
    } else {
        assert_eq!(listed, merchant.id);
    }
    for item in world.reply().body["items"].as_array().into_iter().flatten() {
        assert_eq!(item["merchant_id"].as_str(), Some(listed.as_str()));
    }
}

#[when("anyone fetches the published spec")]
async fn fetch_spec(world: &mut PaymentsWorld) {
    let h = harness().await;
    let response = h
        .http
        .get(format!("{}/api/v1/merchant/openapi.json", h.base_url()))
        .send()
        .await
        .expect("the spec is served");
    world.reply = Some(Reply::from_response(response).await.expect("a JSON spec"));
}

#[then(expr = "it is the OpenAPI 3.0.3 document of version {word} with {int} merchant operations")]
async fn spec_is(world: &mut PaymentsWorld, version: String, operations: usize) {
    let doc = &world.reply().body;
    assert_eq!(doc["openapi"], "3.0.3");
    assert_eq!(doc["info"]["version"], version.as_str());
    let count: usize = doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(path, _)| path.starts_with("/api/v1/merchant/"))
        .map(|(_, item)| {
            item.as_object().map_or(0, |m| {
                m.keys()
                    .filter(|k| ["get", "post"].contains(&k.as_str()))
                    .count()
            })
        })
        .sum();
    assert_eq!(count, operations);
    assert!(doc["paths"]
        .as_object()
        .is_some_and(|p| p.values().all(|v: &Value| v.is_object())));
}

#[then("every example in it fits the schema it illustrates")]
async fn examples_fit(world: &mut PaymentsWorld) {
    let doc = &world.reply().body;
    match conformance::examples::check(doc) {
        Ok(checked) => assert!(checked >= 20, "only {checked} examples found"),
        Err(problems) => panic!("examples that do not fit:\n  {}", problems.join("\n  ")),
    }
}

#[then(expr = "its callbacks are also published as an OpenAPI 3.1 document of {int} webhooks")]
async fn webhooks_published(world: &mut PaymentsWorld, count: usize) {
    let spec = world.reply().body.clone();
    let h = harness().await;
    let response = h
        .http
        .get(format!("{}/api/v1/merchant/webhooks.json", h.base_url()))
        .send()
        .await
        .expect("the webhooks document is served");
    let doc = Reply::from_response(response)
        .await
        .expect("a JSON document")
        .body;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], spec["info"]["version"]);
    let webhooks = doc["webhooks"].as_object().expect("webhooks");
    assert_eq!(webhooks.len(), count, "{:?}", webhooks.keys());
    // The same event schemas as the API document, by name.
    for name in ["DepositEvent", "WithdrawalEvent", "DepositCompletedEvent"] {
        assert!(doc["components"]["schemas"][name].is_object(), "{name}");
        assert!(spec["components"]["schemas"][name].is_object(), "{name}");
    }
}
