//! A merchant suspended and reactivated (issue 57): refused everywhere,
//! its callbacks held (not attempted) until it is active again.

use super::callbacks::receiver;
use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::{then, when};
use merchant_client::operator::types as op;

async fn set_status(world: &mut PaymentsWorld, status: op::MerchantStatusValue, reason: &str) {
    let merchant_id = world.merchant().id.clone();
    let operator = harness().await.operator().unwrap();
    let body = op::SetMerchantStatusRequest {
        status,
        reason: reason.to_string(),
    };
    world.reply = Some(Reply::of(
        operator.set_merchant_status(&merchant_id, &body).await,
    ));
}

#[when(expr = "an operator suspends the merchant because {string}")]
async fn suspend(world: &mut PaymentsWorld, reason: String) {
    set_status(world, op::MerchantStatusValue::Suspended, &reason).await;
}

#[when(expr = "an operator reactivates the merchant because {string}")]
async fn reactivate(world: &mut PaymentsWorld, reason: String) {
    set_status(world, op::MerchantStatusValue::Active, &reason).await;
}

#[when(expr = "an operator suspends merchant {string} because {string}")]
async fn suspend_unknown(world: &mut PaymentsWorld, merchant_id: String, reason: String) {
    let operator = harness().await.operator().unwrap();
    let body = op::SetMerchantStatusRequest {
        status: op::MerchantStatusValue::Suspended,
        reason,
    };
    world.reply = Some(Reply::of(
        operator.set_merchant_status(&merchant_id, &body).await,
    ));
}

/// A fence, not a wait: the other merchant's callback is queued after the
/// held one and goes to the same receiver, and the worker claims the
/// oldest due first. Once it has arrived, the held one, had it not been
/// held, would have been claimed in the same pass or before.
#[when(
    expr = "the other merchant's deposit {string} of {word} {word} is completed with a callback to the same receiver"
)]
async fn others_deposit_completed(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
) {
    let other = world.other.clone().expect("another merchant");
    let mut body = conformance::requests::deposit(&order, &amount, &currency);
    body.callback_url = Some(receiver(world).url.clone());
    let h = harness().await;
    let created = Reply::of(h.client(&other).create_deposit(&body).await);
    assert_eq!(created.status, 200, "{}", created.body);
    let order_no = created.body["order_no"].as_str().expect("an order number");
    let completed = conformance::four_eyes::take(
        "complete_deposit",
        Some(order_no),
        serde_json::json!({"remarks": "paid"}),
    )
    .await;
    assert_eq!(completed.status, 200, "{}", completed.body);
    world.replies.push(created);
}

#[then("the receiver's one callback is the other merchant's")]
async fn only_the_others(world: &mut PaymentsWorld) {
    let got = receiver(world)
        .wait_for(1, super::callbacks::PATIENCE)
        .await;
    let others = world.replies.last().expect("the other merchant's order");
    let order_nos: Vec<String> = got
        .iter()
        .filter_map(|r| serde_json::from_str::<serde_json::Value>(&r.body).ok())
        .filter_map(|b| b["order_no"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        order_nos,
        vec![others.body["order_no"]
            .as_str()
            .unwrap_or_default()
            .to_string()],
        "only the other merchant's callback may arrive"
    );
}

#[then("the merchant's callback has not been attempted")]
async fn not_attempted(world: &mut PaymentsWorld) {
    let order_no = world.created()["order_no"]
        .as_str()
        .expect("an order")
        .to_string();
    let operator = harness().await.operator().unwrap();
    let page = Reply::of(
        operator
            .list_callback_deliveries(None, None, None, Some(10), None, Some(&order_no), None)
            .await,
    );
    let id = page.body["items"][0]["id"]
        .as_str()
        .expect("a delivery record")
        .to_string();
    let read = Reply::of(operator.read_callback_delivery(&id).await);
    assert_eq!(
        (read.body["status"].as_str(), read.body["attempts"].as_i64()),
        (Some("WAITING_RETRY"), Some(0)),
        "{}",
        read.body
    );
}
