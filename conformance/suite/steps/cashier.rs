//! Steps for hosted cashier sessions: the merchant's create, the payer's
//! page (fetched as a browser would, following the form's redirect), and
//! the operator's view of the session.

use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::{then, when};
use merchant_client::merchant::types;
use merchant_client::{AmountNumber, MerchantOrderNo};
use serde_json::Value;
use std::collections::BTreeMap;

fn session(world: &PaymentsWorld) -> &Value {
    world
        .session
        .as_ref()
        .expect("the merchant created a cashier session")
}

pub(super) fn session_field(world: &PaymentsWorld, name: &str) -> String {
    session(world)[name]
        .as_str()
        .unwrap_or_else(|| panic!("the session has `{name}`: {}", session(world)))
        .to_string()
}

/// `KBANK:123-456-7890, SCB:0001112222` → the request's card maps.
fn cards(text: &str) -> Vec<BTreeMap<String, String>> {
    text.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| {
            let (bank, account) = c.split_once(':').unwrap_or((c, ""));
            BTreeMap::from([
                ("bank_code".to_string(), bank.to_string()),
                ("account_no".to_string(), account.to_string()),
            ])
        })
        .collect()
}

async fn create(
    world: &mut PaymentsWorld,
    order: &str,
    amount: Option<&str>,
    currency: &str,
    payer_cards: Vec<BTreeMap<String, String>>,
    return_url: Option<&str>,
) {
    let callback_url = world.receiver.as_ref().map(|r| r.url.clone());
    let client = harness().await.client(world.merchant());
    let body = types::CreateCashierDepositRequest {
        order_type: types::CreateCashierDepositRequestOrderType::Cashier,
        merchant_order_no: MerchantOrderNo::parse(order).unwrap(),
        amount: amount.map(|a| AmountNumber(a.parse().unwrap())),
        currency_code: currency.into(),
        callback_url,
        return_url: return_url.map(String::from),
        extra_data: None,
        user_id: Some("payer-42".into()),
        payer_bank_cards: payer_cards,
    };
    let reply = Reply::of(client.create_cashier_deposit(&body).await);
    if reply.status == 200 {
        let mut kept = reply.body.clone();
        kept["merchant_order_no"] = Value::String(order.to_string());
        world.session = Some(kept);
    }
    world.replies.push(reply.clone());
    world.reply = Some(reply);
}

#[when(expr = "the merchant creates a cashier session {string} of {word} {word}")]
async fn create_with_amount(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
) {
    create(world, &order, Some(&amount), &currency, Vec::new(), None).await;
}

#[when(expr = "the merchant creates a cashier session {string} in {word}")]
async fn create_without_amount(world: &mut PaymentsWorld, order: String, currency: String) {
    create(world, &order, None, &currency, Vec::new(), None).await;
}

#[when(
    expr = "the merchant creates a cashier session {string} in {word} with payer bank cards {string}"
)]
async fn create_with_cards(
    world: &mut PaymentsWorld,
    order: String,
    currency: String,
    list: String,
) {
    create(world, &order, None, &currency, cards(&list), None).await;
}

#[when(
    expr = "the merchant creates a cashier session {string} of {word} {word} with payer bank cards {string}"
)]
async fn create_with_amount_and_cards(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
    list: String,
) {
    create(world, &order, Some(&amount), &currency, cards(&list), None).await;
}

#[when(
    expr = "the merchant creates a cashier session {string} of {word} {word} returning to {string}"
)]
async fn create_returning(
    world: &mut PaymentsWorld,
    order: String,
    amount: String,
    currency: String,
    return_url: String,
) {
    create(
        world,
        &order,
        Some(&amount),
        &currency,
        Vec::new(),
        Some(&return_url),
    )
    .await;
}

#[then(expr = "the page links back to {string}")]
async fn links_back(world: &mut PaymentsWorld, url: String) {
    let (_, text) = world.page.as_ref().expect("a page was requested");
    let href = format!("id=\"return\" href=\"{}\"", url.replace('&', "&amp;"));
    assert!(text.contains(&href), "no link back to {url}: {text}");
}

#[then("the page offers no link back")]
async fn no_link_back(world: &mut PaymentsWorld) {
    let (_, text) = world.page.as_ref().expect("a page was requested");
    assert!(!text.contains("id=\"return\""), "a link back: {text}");
}

#[then(expr = "the cashier session is {string}")]
async fn session_is(world: &mut PaymentsWorld, status: String) {
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.str_field("status"),
        Some(status.as_str()),
        "{}",
        reply.body
    );
}

#[then("the session carries a cashier URL with an unguessable token")]
async fn unguessable(world: &mut PaymentsWorld) {
    let token = session_field(world, "cashier_token");
    let url = session_field(world, "cashier_url");
    assert!(url.ends_with(&format!("/cashier/{token}")), "{url}");
    // URL-safe base64 after the prefix: six bits a character.
    let encoded = token.strip_prefix("cs_").expect("a cs_ token");
    assert!(encoded.len() * 6 >= 128, "{token} carries under 128 bits");
    assert!(encoded
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    session_field(world, "session_id");
    session_field(world, "expire_at");
}

#[then("both answers are the same session with the same token")]
async fn same_session(world: &mut PaymentsWorld) {
    let [first, second] = &world.replies[..] else {
        panic!("two answers: {:?}", world.replies)
    };
    for field in ["session_id", "cashier_token", "cashier_url", "expire_at"] {
        assert_eq!(first.body[field], second.body[field], "{field}");
    }
}

pub(super) async fn page_url(world: &PaymentsWorld) -> String {
    // The service may sit behind another address than the one it puts in
    // its URLs: keep the path, use the address the suite reaches it at.
    let url = session_field(world, "cashier_url");
    let path = url
        .split_once("/cashier/")
        .map(|(_, token)| format!("/cashier/{token}"))
        .expect("a cashier path");
    format!("{}{path}", harness().await.base_url())
}

pub(super) async fn fetch(world: &mut PaymentsWorld, request: reqwest::RequestBuilder) {
    let response = request.send().await.expect("the page answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    world.page = Some((status, text));
}

#[when("the payer opens the cashier page")]
async fn open_page(world: &mut PaymentsWorld) {
    let url = page_url(world).await;
    let request = harness().await.http.get(url);
    fetch(world, request).await;
}

#[when("the payer opens a cashier page whose token does not exist")]
async fn open_unknown(world: &mut PaymentsWorld) {
    let h = harness().await;
    let url = format!(
        "{}/cashier/cs_{}",
        h.base_url(),
        uuid::Uuid::new_v4().simple()
    );
    fetch(world, h.http.get(url)).await;
}

async fn choose(world: &mut PaymentsWorld, form: &[(&str, &str)]) {
    let url = page_url(world).await;
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    // The form answers 303 to the page, which the client follows as a
    // browser does.
    let request = harness()
        .await
        .http
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    fetch(world, request).await;
}

#[when(expr = "the payer picks {word} on the cashier page")]
async fn pick(world: &mut PaymentsWorld, amount: String) {
    choose(world, &[("amount", amount.as_str())]).await;
}

#[when(expr = "the payer picks {word} and saved card {int} on the cashier page")]
async fn pick_with_card(world: &mut PaymentsWorld, amount: String, card: usize) {
    let index = (card - 1).to_string();
    choose(
        world,
        &[("amount", amount.as_str()), ("card", index.as_str())],
    )
    .await;
}

#[when(expr = "the payer chooses saved card {int} on the cashier page")]
async fn pick_card(world: &mut PaymentsWorld, card: usize) {
    let index = (card - 1).to_string();
    choose(world, &[("card", index.as_str())]).await;
}

#[then(expr = "the page offers the amounts {string}")]
async fn offers(world: &mut PaymentsWorld, amounts: String) {
    let (status, text) = world.page.as_ref().expect("a page was requested");
    assert_eq!(*status, 200, "{text}");
    assert!(text.contains("name=\"amount\""), "no amount choice: {text}");
    for amount in amounts.split(',').map(str::trim) {
        assert!(text.contains(amount), "{amount:?} not offered: {text}");
    }
}

#[then("the page offers no amount choice")]
async fn no_amount_choice(world: &mut PaymentsWorld) {
    let (_, text) = world.page.as_ref().expect("a page was requested");
    assert!(!text.contains("name=\"amount\""), "{text}");
}

#[when("the merchant reads the session's deposit")]
async fn read_session_deposit(world: &mut PaymentsWorld) {
    let no = session_field(world, "merchant_order_no");
    let client = harness().await.client(world.merchant());
    let reply = Reply::of(client.find_deposit(&no).await);
    if reply.status == 200 {
        world.created = Some(reply.body.clone());
    }
    world.reply = Some(reply);
}

#[then("the response field \"cashier_session_id\" is the session's")]
async fn linked(world: &mut PaymentsWorld) {
    let id = session_field(world, "session_id");
    assert_eq!(
        world.reply().str_field("cashier_session_id"),
        Some(id.as_str()),
        "{}",
        world.reply().body
    );
}

#[then("the page shows the deposit's bank details, amount and remark, each with a copy button")]
async fn shows_instructions(world: &mut PaymentsWorld) {
    let (status, text) = world.page.as_ref().expect("a page was requested");
    assert_eq!(*status, 200, "{text}");
    let order = world.created();
    let field = |name: &str| order[name].as_str().unwrap_or_default().to_string();
    let remark = field("expected_remark");
    assert!(!remark.is_empty(), "the order has a remark: {order}");
    let account = order["account"]["account_no"].as_str().unwrap_or_default();
    for (id, value) in [("remark", remark.as_str()), ("account-no", account)] {
        assert!(
            text.contains(&format!("id=\"{id}\">{value}<")),
            "{id} {value:?} missing: {text}"
        );
    }
    for target in ["account-no", "pay-amount", "remark"] {
        assert!(
            text.contains(&format!("data-copy=\"{target}\"")),
            "no copy button for {target}: {text}"
        );
    }
}

#[then("the page shows a pay button to the deposit's payment_url")]
async fn shows_pay_button(world: &mut PaymentsWorld) {
    let (status, text) = world.page.as_ref().expect("a page was requested");
    assert_eq!(*status, 200, "{text}");
    let url = world.created()["payment_url"]
        .as_str()
        .expect("a channel order")
        .to_string();
    assert!(
        text.contains(&format!("id=\"pay\" href=\"{url}\"")),
        "no pay button to {url}: {text}"
    );
}

#[then("the page shows no secret")]
async fn no_secret(world: &mut PaymentsWorld) {
    let (_, text) = world.page.as_ref().expect("a page was requested");
    let key = world.merchant().api_key.clone();
    assert!(!text.contains(&key), "the API key reached the page");
    let token = harness().await.operator_token.clone().unwrap_or_default();
    assert!(
        token.is_empty() || !text.contains(&token),
        "an operator token reached the page"
    );
}

#[when("an operator reads the cashier session")]
async fn operator_reads(world: &mut PaymentsWorld) {
    let id = session_field(world, "session_id");
    let operator = harness().await.operator().unwrap();
    world.keep(operator.read_cashier_session(&id).await);
}

#[then(expr = "the response does not contain {string}")]
async fn does_not_contain(world: &mut PaymentsWorld, text: String) {
    let body = world.reply().body.to_string();
    assert!(!body.contains(&text), "{text:?} in {body}");
}

#[then(expr = "the response lists the saved cards {string}")]
async fn lists_cards(world: &mut PaymentsWorld, expected: String) {
    let got: Vec<String> = world.reply().body["payer_bank_cards"]
        .as_array()
        .expect("payer_bank_cards")
        .iter()
        .map(|c| {
            format!(
                "{}:{}",
                c["bank_code"].as_str().unwrap_or_default(),
                c["account_last4"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let want: Vec<String> = expected.split(',').map(|c| c.trim().to_string()).collect();
    assert_eq!(got, want);
}
