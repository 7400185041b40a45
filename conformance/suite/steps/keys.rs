//! A merchant's API keys after they are issued (issue 57): listed by hint,
//! one revoked alone. Rotation itself is in `bank.rs`, beside the key
//! steps the scenarios grew up with.

use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::{then, when};

#[when("an operator lists the merchant's API keys")]
async fn list_keys(world: &mut PaymentsWorld) {
    let merchant_id = world.merchant().id.clone();
    let operator = harness().await.operator().unwrap();
    world.reply = Some(Reply::of(operator.list_api_keys(&merchant_id).await));
}

#[then(expr = "the listing has {int} keys, {int} of them active")]
async fn listing_has(world: &mut PaymentsWorld, keys: usize, active: usize) {
    let items = world
        .reply
        .as_ref()
        .and_then(|r| r.field("items"))
        .and_then(|v| v.as_array())
        .cloned()
        .expect("a listing");
    let working = items
        .iter()
        .filter(|k| k["active"].as_bool() == Some(true))
        .count();
    assert_eq!((items.len(), working), (keys, active), "{items:?}");
}

#[when("an operator revokes the merchant's previous key")]
async fn revoke_previous(world: &mut PaymentsWorld) {
    let previous = world.previous_key.clone().expect("a rotated key");
    let merchant_id = world.merchant().id.clone();
    let operator = harness().await.operator().unwrap();
    let listing = Reply::of(operator.list_api_keys(&merchant_id).await);
    // A hint ends with its key's last four characters; the current key's
    // is left out (keys issued in the same second have no order).
    let tail = |key: &str| -> String { key.chars().skip(key.chars().count() - 4).collect() };
    let (mine, current) = (tail(&previous), tail(&world.merchant().api_key));
    let key_id = listing
        .field("items")
        .and_then(|v| v.as_array())
        .and_then(|items| {
            items.iter().find(|k| {
                k["hint"]
                    .as_str()
                    .is_some_and(|h| h.ends_with(&mine) && !h.ends_with(&current))
            })
        })
        .and_then(|k| k["key_id"].as_str())
        .expect("the previous key in the listing")
        .to_string();
    revoke(world, &merchant_id, &key_id).await;
}

#[when(expr = "an operator revokes key {string} of the merchant")]
async fn revoke_named(world: &mut PaymentsWorld, key_id: String) {
    let merchant_id = world.merchant().id.clone();
    revoke(world, &merchant_id, &key_id).await;
}

async fn revoke(world: &mut PaymentsWorld, merchant_id: &str, key_id: &str) {
    let operator = harness().await.operator().unwrap();
    world.reply = Some(Reply::of(
        operator.revoke_api_key(merchant_id, key_id).await,
    ));
}

/// The key the scenario's merchant signs with, as the listing names it.
async fn current_key_id(world: &PaymentsWorld) -> String {
    let merchant_id = world.merchant().id.clone();
    let operator = harness().await.operator().unwrap();
    let listing = Reply::of(operator.list_api_keys(&merchant_id).await);
    let key = &world.merchant().api_key;
    let tail: String = key.chars().skip(key.chars().count() - 4).collect();
    listing
        .field("items")
        .and_then(|v| v.as_array())
        .and_then(|items| {
            items.iter().find(|k| {
                k["active"] == true && k["hint"].as_str().is_some_and(|h| h.ends_with(&tail))
            })
        })
        .and_then(|k| k["key_id"].as_str())
        .expect("the merchant's key in the listing")
        .to_string()
}

async fn restrict(world: &mut PaymentsWorld, addresses: Vec<String>, scope: &str) {
    let merchant_id = world.merchant().id.clone();
    let key_id = current_key_id(world).await;
    let body = serde_json::json!({"allowed_addresses": addresses, "scope": scope});
    let reply = super::people::send_as(
        world,
        &harness()
            .await
            .operator_token
            .clone()
            .expect("the suite's operator token"),
        "PUT",
        &format!("/api/v1/operator/merchants/{merchant_id}/api-keys/{key_id}/restrictions"),
        Some(body.to_string()),
    )
    .await;
    world.reply = Some(reply);
}

fn words(list: &str) -> Vec<String> {
    list.split_whitespace().map(str::to_string).collect()
}

#[when(expr = "an operator restricts the merchant's key to {string}")]
async fn restrict_to(world: &mut PaymentsWorld, list: String) {
    restrict(world, words(&list), "full").await;
}

/// The address the service saw, as its last refusal named it.
fn seen_address(world: &PaymentsWorld) -> String {
    let message = world
        .reply()
        .str_field("message")
        .unwrap_or_default()
        .to_string();
    message
        .split_once("from the address ")
        .and_then(|(_, rest)| rest.split_once(" ("))
        .map(|(address, _)| address.to_string())
        .unwrap_or_else(|| panic!("no address in `{message}`"))
}

#[when(
    expr = "an operator restricts the merchant's key to the address the service saw and {string}"
)]
async fn restrict_to_seen(world: &mut PaymentsWorld, list: String) {
    let mut addresses = words(&list);
    addresses.push(seen_address(world));
    restrict(world, addresses, "full").await;
}

#[when("an operator makes the merchant's key read-only")]
async fn read_only(world: &mut PaymentsWorld) {
    restrict(world, Vec::new(), "read_only").await;
}

#[then(expr = "the response lists the allowed addresses {string}")]
async fn lists_allowed(world: &mut PaymentsWorld, list: String) {
    let listed: Vec<String> = world
        .reply()
        .field("allowed_addresses")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(listed, words(&list), "{}", world.reply().body);
}
