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
