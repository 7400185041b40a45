//! Deposit steps, through the generated client.

use super::common::PaymentsWorld;
use conformance::{harness, Merchant, Reply};
use cucumber::{given, then, when};
use merchant_client::merchant::types;

fn request(
    order: &str,
    amount: &str,
    currency: &str,
    callback_url: Option<String>,
) -> types::CreateDepositRequest {
    let mut request = conformance::requests::deposit(order, amount, currency);
    request.callback_url = callback_url;
    request
}

async fn create(merchant: &Merchant, body: &types::CreateDepositRequest) -> Reply {
    let client = harness().await.client(merchant);
    Reply::of(client.create_deposit(body).await)
}

#[given(expr = "the merchant has created a deposit {string} of {word} {word}")]
async fn has_created(world: &mut PaymentsWorld, order: String, amount: String, currency: String) {
    let reply = create(world.merchant(), &request(&order, &amount, &currency, None)).await;
    assert_eq!(reply.status, 200, "creating {order}: {}", reply.body);
    world.created = Some(reply.body);
}

#[given(
    expr = "the merchant has created a deposit {string} of {word} {word} returning to {string}"
)]
async fn has_created_returning(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
    return_url: String,
) {
    let mut body = request(&order, &amount, &currency, None);
    body.return_url = Some(return_url);
    let reply = create(world.merchant(), &body).await;
    assert_eq!(reply.status, 200, "creating {order}: {}", reply.body);
    world.created = Some(reply.body);
}

#[when(expr = "the merchant creates a deposit {string} of {word} {word}")]
async fn creates(world: &mut PaymentsWorld, order: String, amount: String, currency: String) {
    world.reply = Some(create(world.merchant(), &request(&order, &amount, &currency, None)).await);
}

#[when(
    expr = "the merchant creates a deposit {string} of {word} {word} with callback_url {string}"
)]
async fn creates_with_callback(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
    url: String,
) {
    world.reply = Some(
        create(
            world.merchant(),
            &request(&order, &amount, &currency, Some(url)),
        )
        .await,
    );
}

#[when(expr = "the other merchant creates a deposit {string} of {word} {word}")]
async fn other_creates(world: &mut PaymentsWorld, order: String, amount: String, currency: String) {
    let other = world.other.clone().expect("another merchant");
    world.reply = Some(create(&other, &request(&order, &amount, &currency, None)).await);
}

#[when("the merchant reads that deposit by order_no")]
async fn read_by_order_no(world: &mut PaymentsWorld) {
    let order_no = world.created()["order_no"].as_str().unwrap().to_string();
    let client = harness().await.client(world.merchant());
    world.keep(client.get_deposit(&order_no).await);
}

#[when("the other merchant reads the first merchant's deposit by order_no")]
async fn other_reads(world: &mut PaymentsWorld) {
    let order_no = world.created()["order_no"].as_str().unwrap().to_string();
    let client = harness()
        .await
        .client(world.other.as_ref().expect("another merchant"));
    world.keep(client.get_deposit(&order_no).await);
}

#[when(expr = "the merchant reads deposit {string} by merchant_order_no")]
async fn read_by_merchant_order_no(world: &mut PaymentsWorld, order: String) {
    let client = harness().await.client(world.merchant());
    world.keep(client.find_deposit(&order).await);
}

#[then(expr = "no deposit {string} exists")]
async fn no_deposit(world: &mut PaymentsWorld, order: String) {
    let client = harness().await.client(world.merchant());
    let reply = Reply::of(client.find_deposit(&order).await);
    assert_eq!(reply.status, 404, "{}", reply.body);
}

#[then("the response carries bank details and a remark")]
async fn bank_details(world: &mut PaymentsWorld) {
    let reply = world.reply();
    for field in [
        "bank_code",
        "bank_name",
        "account_no",
        "account_holder",
        "remark",
    ] {
        assert!(
            reply.str_field(field).is_some_and(|v| !v.is_empty()),
            "{field} in {}",
            reply.body
        );
    }
    let remark = reply.str_field("remark").unwrap_or_default();
    assert_eq!(
        reply.body["payment_info"]["remark"].as_str(),
        Some(remark),
        "payment_info repeats the remark"
    );
}

#[then("the response carries a payment_url")]
async fn payment_url(world: &mut PaymentsWorld) {
    let reply = world.reply();
    let url = reply.str_field("payment_url").unwrap_or_default();
    assert!(
        url.starts_with("http://") || url.starts_with("https://"),
        "payment_url in {}",
        reply.body
    );
}
