//! Steps for the drivers an operator and a bank hold: bank transactions and
//! their matching, order reads and listings, keys, callback timeouts, and
//! the simulator's payment page.

use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::{given, then, when};
use merchant_client::operator::types as op;
use merchant_client::AmountNumber;
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::HashSet;
use std::str::FromStr;

fn decimal(text: &str) -> Decimal {
    Decimal::from_str(text).expect("a decimal in the scenario")
}

pub(super) fn created_field(world: &PaymentsWorld, name: &str) -> String {
    world.created()[name]
        .as_str()
        .unwrap_or_else(|| panic!("the created order has `{name}`: {}", world.created()))
        .to_string()
}

/// Bank references are unique per account for good, so each scenario
/// qualifies its names with its own tag.
pub(super) fn reference(world: &mut PaymentsWorld, name: &str) -> String {
    format!("{name}-{}", world.tag())
}

/// The receiving account of the deposit the scenario created.
pub(super) async fn deposit_account(world: &PaymentsWorld) -> String {
    if let Some(a) = world.created()["account_id"].as_str() {
        return a.to_string();
    }
    let order_no = created_field(world, "order_no");
    let read = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .read_deposit(&order_no)
            .await,
    );
    read.body["account_id"]
        .as_str()
        .expect("an account order")
        .to_string()
}

async fn ingest(world: &mut PaymentsWorld, request: op::BankTransactionRequest) {
    let reply = conformance::four_eyes::take(
        "ingest_bank_transaction",
        None,
        conformance::four_eyes::body_of(&request),
    )
    .await;
    if reply.status == 200 {
        world.bank_transaction = Some(reply.body.clone());
    }
    world.bank_request = Some(request);
    world.reply = Some(reply);
}

pub(super) fn bank_request(
    account_id: String,
    bank_reference: String,
    value: &str,
    currency: &str,
    remark: Option<String>,
) -> op::BankTransactionRequest {
    op::BankTransactionRequest {
        account_id,
        bank_reference,
        amount: AmountNumber(decimal(value)),
        currency_code: currency.to_string(),
        remark,
        payer_name: Some("Somchai Jaidee".into()),
        payer_account_no: Some("0987654321".into()),
        received_at: None,
    }
}

#[given(expr = "the merchant's THB deposits are paid to account {string}")]
async fn assign_account(world: &mut PaymentsWorld, account_id: String) {
    let reply = conformance::four_eyes::take(
        "set_receiving_account",
        Some(&world.merchant().id),
        serde_json::json!({"account_id": account_id}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[when(expr = "the bank reports {word} {word} with the deposit's remark as {string}")]
#[given(expr = "the bank has reported {word} {word} with the deposit's remark as {string}")]
async fn bank_reports_remark(
    world: &mut PaymentsWorld,
    value: String,
    currency: String,
    name: String,
) {
    let remark = created_field(world, "remark");
    let account = deposit_account(world).await;
    let reference = reference(world, &name);
    ingest(
        world,
        bank_request(account, reference, &value, &currency, Some(remark)),
    )
    .await;
}

#[when(
    expr = "the bank reports {word} {word} with the remark {string} around the deposit's code as {string}"
)]
async fn bank_reports_free_text(
    world: &mut PaymentsWorld,
    value: String,
    currency: String,
    words: String,
    name: String,
) {
    let code = created_field(world, "remark").to_lowercase();
    let remark = words.replace("CODE", &code);
    let account = deposit_account(world).await;
    let reference = reference(world, &name);
    ingest(
        world,
        bank_request(account, reference, &value, &currency, Some(remark)),
    )
    .await;
}

#[when(expr = "the bank reports the deposit's amount without a remark as {string}")]
#[given(expr = "the bank has reported the deposit's amount without a remark as {string}")]
async fn bank_reports_amount(world: &mut PaymentsWorld, name: String) {
    let value = created_field(world, "amount");
    let currency = created_field(world, "currency_code");
    let account = deposit_account(world).await;
    let reference = reference(world, &name);
    ingest(
        world,
        bank_request(account, reference, &value, &currency, None),
    )
    .await;
}

#[when(
    expr = "the bank reports {word} {word} on account {string} with remark {string} as {string}"
)]
async fn bank_reports_on_account(
    world: &mut PaymentsWorld,
    value: String,
    currency: String,
    account: String,
    remark: String,
    name: String,
) {
    let reference = reference(world, &name);
    ingest(
        world,
        bank_request(account, reference, &value, &currency, Some(remark)),
    )
    .await;
}

#[when("the bank reports the same transaction again")]
async fn bank_reports_again(world: &mut PaymentsWorld) {
    let request = world.bank_request.clone().expect("an earlier transaction");
    ingest(world, request).await;
}

#[when(expr = "the bank reports the same reference again with amount {word}")]
async fn bank_reports_changed(world: &mut PaymentsWorld, value: String) {
    let mut request = world.bank_request.clone().expect("an earlier transaction");
    request.amount = AmountNumber(decimal(&value));
    ingest(world, request).await;
}

#[then(expr = "the bank transaction is {string}")]
async fn bank_transaction_is(world: &mut PaymentsWorld, status: String) {
    let tx = world.bank_transaction.as_ref().expect("a bank transaction");
    assert_eq!(tx["status"].as_str(), Some(status.as_str()), "{tx}");
}

#[then(expr = "the bank transaction's deposit is {string}")]
async fn bank_transaction_deposit_is(world: &mut PaymentsWorld, status: String) {
    let tx = world.bank_transaction.as_ref().expect("a bank transaction");
    assert_eq!(tx["deposit_status"].as_str(), Some(status.as_str()), "{tx}");
    assert_eq!(
        tx["order_no"].as_str(),
        world.created()["order_no"].as_str(),
        "{tx}"
    );
}

#[then("the bank transaction names no deposit")]
async fn bank_transaction_unassigned(world: &mut PaymentsWorld) {
    let tx = world.bank_transaction.as_ref().expect("a bank transaction");
    assert!(tx.get("order_no").is_none(), "{tx}");
}

#[then("the unmatched bank transactions include it")]
async fn unmatched_include_it(world: &mut PaymentsWorld) {
    let tx = world.bank_transaction.clone().expect("a bank transaction");
    let id = tx["id"].as_str().expect("an id").to_string();
    let account = tx["account_id"].as_str().map(String::from);
    let operator = harness().await.operator().unwrap();
    let mut cursor = None;
    // A deployment holds other runs' transactions too: page until found.
    for _ in 0..50 {
        let page = Reply::of(
            operator
                .list_bank_transactions(
                    account.as_deref(),
                    cursor.as_deref(),
                    Some(200),
                    Some("unmatched"),
                )
                .await,
        );
        assert_eq!(page.status, 200, "{}", page.body);
        let items = page.body["items"].as_array().cloned().unwrap_or_default();
        assert!(
            items.iter().all(|i| i["status"] == "unmatched"),
            "{}",
            page.body
        );
        if items.iter().any(|i| i["id"].as_str() == Some(id.as_str())) {
            return;
        }
        match page.body["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    panic!("transaction {id} is not among the unmatched ones");
}

#[when("an operator matches the bank transaction to the deposit")]
async fn operator_matches(world: &mut PaymentsWorld) {
    match_by_hand(world, Some("payer forgot the remark")).await;
}

#[when("an operator matches the bank transaction to the deposit giving no reason")]
async fn operator_matches_silently(world: &mut PaymentsWorld) {
    match_by_hand(world, None).await;
}

async fn match_by_hand(world: &mut PaymentsWorld, remarks: Option<&str>) {
    let id = world.bank_transaction.as_ref().expect("a bank transaction")["id"]
        .as_str()
        .expect("an id")
        .to_string();
    let order_no = created_field(world, "order_no");
    let reply = conformance::four_eyes::take(
        "match_bank_transaction",
        Some(&id),
        serde_json::json!({"order_no": order_no, "remarks": remarks}),
    )
    .await;
    if reply.status == 200 {
        world.bank_transaction = Some(reply.body.clone());
    }
    world.reply = Some(reply);
}

#[when("an operator completes the deposit")]
async fn operator_completes(world: &mut PaymentsWorld) {
    complete(world, None).await;
}

#[when(expr = "an operator completes the deposit with {word}")]
async fn operator_completes_with(world: &mut PaymentsWorld, value: String) {
    complete_saying(
        world,
        Some(AmountNumber(decimal(&value))),
        Some("funds confirmed"),
    )
    .await;
}

#[when(expr = "an operator completes the deposit with {word} giving no reason")]
async fn operator_completes_silently(world: &mut PaymentsWorld, value: String) {
    complete_saying(world, Some(AmountNumber(decimal(&value))), None).await;
}

async fn complete(world: &mut PaymentsWorld, actual_amount: Option<AmountNumber>) {
    complete_saying(world, actual_amount, Some("funds confirmed")).await;
}

async fn complete_saying(
    world: &mut PaymentsWorld,
    actual_amount: Option<AmountNumber>,
    remarks: Option<&str>,
) {
    let order_no = created_field(world, "order_no");
    world.reply = Some(
        conformance::four_eyes::take(
            "complete_deposit",
            Some(&order_no),
            serde_json::json!({
                "actual_amount": actual_amount.map(|a| a.0.to_string()),
                "remarks": remarks,
            }),
        )
        .await,
    );
}

#[given("the deposit's time has run out")]
async fn time_has_run_out(world: &mut PaymentsWorld) {
    time_runs_out(world).await;
    assert_eq!(world.reply().status, 200, "{}", world.reply().body);
}

#[when("the deposit's time runs out")]
async fn time_runs_out(world: &mut PaymentsWorld) {
    let order_no = created_field(world, "order_no");
    world.reply = Some(Reply::of(
        harness()
            .await
            .sandbox()
            .unwrap()
            .expire_deposit(&order_no)
            .await,
    ));
}

#[then(expr = "the response field {string} is above {word} and below {word}")]
async fn field_between(world: &mut PaymentsWorld, name: String, low: String, high: String) {
    let text = world.reply().str_field(&name).expect("a decimal field");
    let value = decimal(text);
    assert!(
        value > decimal(&low) && value < decimal(&high),
        "{name} = {value}"
    );
}

#[when("an operator reads the deposit")]
async fn operator_reads_deposit(world: &mut PaymentsWorld) {
    let order_no = created_field(world, "order_no");
    read_deposit(world, &order_no).await;
}

#[when(expr = "an operator reads deposit {string}")]
async fn operator_reads_deposit_no(world: &mut PaymentsWorld, order_no: String) {
    read_deposit(world, &order_no).await;
}

async fn read_deposit(world: &mut PaymentsWorld, order_no: &str) {
    world.reply = Some(Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .read_deposit(order_no)
            .await,
    ));
}

#[when("an operator looks up the withdrawal")]
async fn operator_reads_withdrawal(world: &mut PaymentsWorld) {
    let order_no = created_field(world, "order_no");
    world.reply = Some(Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .read_withdrawal(&order_no)
            .await,
    ));
}

#[when(expr = "an operator lists the merchant's {word} with status {string}")]
async fn operator_lists(world: &mut PaymentsWorld, kind: String, status: String) {
    let (pages, last) = list(world, &kind, Some(&status), 200).await;
    world.listed = pages;
    world.reply = Some(last);
}

#[when(expr = "an operator lists the merchant's {word} {int} at a time")]
async fn operator_lists_paged(world: &mut PaymentsWorld, kind: String, limit: i64) {
    let (pages, last) = list(world, &kind, None, limit).await;
    world.listed = pages;
    world.reply = Some(last);
}

/// Follows `next_cursor` to the end; returns every item and the last reply.
async fn list(
    world: &PaymentsWorld,
    kind: &str,
    status: Option<&str>,
    limit: i64,
) -> (Vec<Value>, Reply) {
    let operator = harness().await.operator().unwrap();
    let merchant = world.merchant().id.clone();
    let mut cursor: Option<String> = None;
    let mut items = Vec::new();
    loop {
        let result = match kind {
            "deposits" => Reply::of(
                operator
                    .list_deposits(cursor.as_deref(), Some(limit), Some(&merchant), status)
                    .await,
            ),
            "withdrawals" => Reply::of(
                operator
                    .list_withdrawals(cursor.as_deref(), Some(limit), Some(&merchant), status)
                    .await,
            ),
            other => panic!("unknown order kind {other}"),
        };
        let reply = result;
        if reply.status != 200 {
            return (items, reply);
        }
        let page = reply.body["items"].as_array().cloned().unwrap_or_default();
        assert!(page.len() as i64 <= limit, "{}", reply.body);
        items.extend(page);
        match reply.body["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return (items, reply),
        }
    }
}

#[when(expr = "an operator lists deposits with status {string}")]
async fn operator_lists_any(world: &mut PaymentsWorld, status: String) {
    world.reply = Some(Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .list_deposits(None, Some(5), None, Some(&status))
            .await,
    ));
}

#[then(expr = "the listing holds {int} order(s), each once, newest first")]
async fn listing_holds(world: &mut PaymentsWorld, count: usize) {
    let listed = &world.listed;
    assert_eq!(listed.len(), count, "{listed:?}");
    let unique: HashSet<&str> = listed
        .iter()
        .filter_map(|i| i["order_no"].as_str())
        .collect();
    assert_eq!(unique.len(), count, "{listed:?}");
    let times: Vec<&str> = listed
        .iter()
        .filter_map(|i| i["created_at"].as_str())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let merchant = world.merchant().id.clone();
    assert!(
        listed
            .iter()
            .all(|i| i["merchant_id"].as_str() == Some(merchant.as_str())),
        "{listed:?}"
    );
}

#[then(expr = "every listed order is {string}")]
async fn listed_all(world: &mut PaymentsWorld, status: String) {
    assert!(
        world
            .listed
            .iter()
            .all(|i| i["status"].as_str() == Some(status.as_str())),
        "{:?}",
        world.listed
    );
}

#[when("an operator issues a new API key for the merchant")]
async fn issue_key(world: &mut PaymentsWorld) {
    rotate(world, None).await;
}

#[when(expr = "an operator issues a new API key for the merchant with a grace of {int} seconds")]
async fn issue_key_grace(world: &mut PaymentsWorld, grace: i64) {
    rotate(world, Some(grace)).await;
}

async fn rotate(world: &mut PaymentsWorld, grace_seconds: Option<i64>) {
    let merchant_id = world.merchant().id.clone();
    // Two people's since operator 0.15.0: filed and approved.
    let reply = conformance::four_eyes::take(
        "issue_api_key",
        Some(&merchant_id),
        serde_json::json!({"grace_seconds": grace_seconds}),
    )
    .await;
    if reply.status == 200 {
        let new_key = reply.str_field("api_key").expect("a key").to_string();
        if let Some(m) = world.merchant.as_mut() {
            let replaced = std::mem::replace(&mut m.api_key, new_key);
            world.first_key.get_or_insert_with(|| replaced.clone());
            world.previous_key = Some(replaced);
        }
    }
    world.reply = Some(reply);
}

#[when("the merchant reads its balances with its previous key")]
async fn balances_with_previous_key(world: &mut PaymentsWorld) {
    let key = world.previous_key.clone().expect("a rotated key");
    balances_with(world, key).await;
}

#[when("the merchant reads its balances with its first key")]
async fn balances_with_first_key(world: &mut PaymentsWorld) {
    let key = world.first_key.clone().expect("a rotated key");
    balances_with(world, key).await;
}

async fn balances_with(world: &mut PaymentsWorld, key: String) {
    let mut signer = world.merchant().clone();
    signer.api_key = key;
    let client = harness().await.client(&signer);
    world.keep(client.get_balances().await);
}

#[when(expr = "an operator sets the merchant's callback timeout to {int} seconds")]
async fn set_timeout(world: &mut PaymentsWorld, seconds: i64) {
    let merchant_id = world.merchant().id.clone();
    set_timeout_of(world, &merchant_id, seconds).await;
}

#[when(expr = "an operator sets the callback timeout of merchant {string} to {int} seconds")]
async fn set_timeout_unknown(world: &mut PaymentsWorld, merchant_id: String, seconds: i64) {
    set_timeout_of(world, &merchant_id, seconds).await;
}

async fn set_timeout_of(world: &mut PaymentsWorld, merchant_id: &str, seconds: i64) {
    world.reply = Some(Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .set_callback_timeout(
                merchant_id,
                &op::CallbackTimeoutRequest {
                    callback_timeout_seconds: seconds,
                },
            )
            .await,
    ));
}

/// The payment page's path: the service may sit behind another address
/// than the one it puts in `payment_url`.
fn page_path(world: &PaymentsWorld) -> String {
    let url = created_field(world, "payment_url");
    let after_scheme = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
    after_scheme
        .find('/')
        .map(|i| after_scheme[i..].to_string())
        .expect("a payment_url with a path")
}

#[when("the payer opens the payment page")]
async fn open_page(world: &mut PaymentsWorld) {
    let h = harness().await;
    let url = format!("{}{}", h.base_url(), page_path(world));
    let response = h.http.get(url).send().await.expect("the page answers");
    world.page = Some((
        response.status().as_u16(),
        response.text().await.unwrap_or_default(),
    ));
}

#[when(expr = "the payer chooses {string} on the payment page")]
async fn choose(world: &mut PaymentsWorld, action: String) {
    post_page(world, &[("action", action.as_str())]).await;
}

#[when(expr = "the payer pays {word} on the payment page")]
async fn pay_on_page(world: &mut PaymentsWorld, value: String) {
    post_page(world, &[("action", "pay"), ("amount", value.as_str())]).await;
}

async fn post_page(world: &mut PaymentsWorld, form: &[(&str, &str)]) {
    let h = harness().await;
    let url = format!("{}{}", h.base_url(), page_path(world));
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let response = h
        .http
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("the page answers");
    world.page = Some((
        response.status().as_u16(),
        response.text().await.unwrap_or_default(),
    ));
}

#[then(expr = "the page answers {int}")]
async fn page_answers(world: &mut PaymentsWorld, status: u16) {
    let (got, text) = world.page.as_ref().expect("a page was requested");
    assert_eq!(*got, status, "{text}");
}

#[then(expr = "the page says {string}")]
async fn page_says(world: &mut PaymentsWorld, words: String) {
    let (_, text) = world.page.as_ref().expect("a page was requested");
    assert!(text.contains(&words), "{words:?} not in {text}");
}

#[then("the page shows the order with pay, fail and abandon buttons")]
async fn page_shows_order(world: &mut PaymentsWorld) {
    let order_no = created_field(world, "order_no");
    let (status, text) = world.page.as_ref().expect("a page was requested");
    assert_eq!(*status, 200, "{text}");
    assert!(text.contains(&order_no), "{text}");
    for button in ["id=\"pay\"", "id=\"fail\"", "id=\"abandon\""] {
        assert!(text.contains(button), "{button} missing from {text}");
    }
}

#[then("the page offers no payment form")]
async fn page_has_no_form(world: &mut PaymentsWorld) {
    let (_, text) = world.page.as_ref().expect("a page was requested");
    assert!(!text.contains("<form"), "{text}");
}
