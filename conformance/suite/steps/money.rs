//! Steps for what moves money: fees, payments, withdrawals and their
//! review, balances, the ledger check, and the rate limit.

use super::common::PaymentsWorld;
use conformance::{harness, RawRequest, Reply};
use cucumber::{given, then, when};
use merchant_client::merchant::types as m;
use merchant_client::operator::types as op;
use merchant_client::sandbox::types as sb;
use merchant_client::AmountNumber;
use rust_decimal::Decimal;
use serde_json::Value;
use std::str::FromStr;

fn amount(text: &str) -> AmountNumber {
    AmountNumber(Decimal::from_str(text).expect("a decimal in the scenario"))
}

pub(super) fn order_no_of(reply_body: &Value) -> String {
    reply_body["order_no"]
        .as_str()
        .expect("an order_no")
        .to_string()
}

#[given(
    expr = "the merchant's {word} fee in {word} is {word}% plus {word} with a minimum of {word}"
)]
async fn set_fee(
    world: &mut PaymentsWorld,
    direction: String,
    currency: String,
    percent: String,
    fixed: String,
    minimum: String,
) {
    assert!(
        matches!(direction.as_str(), "deposit" | "withdrawal"),
        "unknown direction {direction}"
    );
    let reply = conformance::four_eyes::take(
        "set_merchant_fee",
        Some(&world.merchant().id),
        serde_json::json!({
            "currency_code": currency, "direction": direction,
            "percent": percent, "fixed": fixed, "minimum": minimum,
        }),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[given(expr = "the merchant's withdrawals are auto-approved {word}")]
async fn set_auto_approval(world: &mut PaymentsWorld, mode: String) {
    let (mode, limits) = match mode.as_str() {
        "never" => (op::AutoApprovalMode::Off, Default::default()),
        "always" => (op::AutoApprovalMode::Always, Default::default()),
        other => panic!("unknown auto-approval `{other}`"),
    };
    auto_approval(world, mode, limits).await;
}

#[given(expr = "the merchant's withdrawals are auto-approved up to {word} {word}")]
async fn set_auto_approval_up_to(world: &mut PaymentsWorld, max: String, currency: String) {
    let limits = [(currency, amount(&max))].into_iter().collect();
    auto_approval(world, op::AutoApprovalMode::UpTo, limits).await;
}

async fn auto_approval(
    world: &mut PaymentsWorld,
    mode: op::AutoApprovalMode,
    limits: std::collections::BTreeMap<String, AmountNumber>,
) {
    let limits: serde_json::Map<String, serde_json::Value> = limits
        .into_iter()
        .map(|(c, max)| (c, serde_json::json!(max.0.to_string())))
        .collect();
    let reply = conformance::four_eyes::take(
        "set_auto_approval",
        Some(&world.merchant().id),
        serde_json::json!({"mode": mode, "limits": limits}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

/// Funds the merchant the way money really arrives: a deposit, paid. An
/// account deposit is paid by a bank transfer with its remark (a driver
/// both profiles have); a channel deposit by the sandbox's channel.
#[given(expr = "the merchant has {word} {word} available")]
async fn funded(world: &mut PaymentsWorld, value: String, currency: String) {
    let h = harness().await;
    let client = h.client(world.merchant());
    let order = format!("FUND-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let created = Reply::of(
        client
            .create_deposit(&deposit_request(&order, &value, &currency))
            .await,
    );
    assert_eq!(created.status, 200, "{}", created.body);
    let order_no = order_no_of(&created.body);
    let paid = match created.str_field("remark") {
        Some(remark) => {
            let operator = h.operator().unwrap();
            let read = Reply::of(operator.read_deposit(&order_no).await);
            let account_id = read
                .str_field("account_id")
                .expect("an account")
                .to_string();
            conformance::four_eyes::take(
                "ingest_bank_transaction",
                None,
                conformance::four_eyes::body_of(&op::BankTransactionRequest {
                    account_id,
                    bank_reference: format!("FUND-{order_no}"),
                    amount: amount(&value),
                    currency_code: currency.clone(),
                    remark: Some(remark.to_string()),
                    payer_name: None,
                    payer_account_no: None,
                    received_at: None,
                }),
            )
            .await
        }
        None => Reply::of(
            h.sandbox()
                .unwrap()
                .pay_deposit(&order_no, &sb::PayDepositRequest { amount: None })
                .await,
        ),
    };
    assert_eq!(paid.status, 200, "{}", paid.body);
}

fn deposit_request(order: &str, value: &str, currency: &str) -> m::CreateDepositRequest {
    conformance::requests::deposit(order, value, currency)
}

fn withdrawal_request(order: &str, value: &str, currency: &str) -> m::CreateWithdrawalRequest {
    conformance::requests::withdrawal(order, value, currency)
}

#[when(expr = "the merchant creates a withdrawal {string} of {word} {word}")]
async fn create_withdrawal(
    world: &mut PaymentsWorld,
    order: String,
    value: String,
    currency: String,
) {
    create_withdrawal_to(world, &order, &value, &currency, "0123456789").await;
}

/// A withdrawal to the beneficiary account `account`.
pub(super) async fn create_withdrawal_to(
    world: &mut PaymentsWorld,
    order: &str,
    value: &str,
    currency: &str,
    account: &str,
) {
    let client = harness().await.client(world.merchant());
    let mut request = withdrawal_request(order, value, currency);
    request.beneficiary_account = account.into();
    let reply = Reply::of(client.create_withdrawal(&request).await);
    if reply.status == 200 {
        world.created = Some(reply.body.clone());
    }
    world.reply = Some(reply);
}

#[given(expr = "the merchant has created a withdrawal {string} of {word} {word}")]
async fn has_created_withdrawal(
    world: &mut PaymentsWorld,
    order: String,
    value: String,
    currency: String,
) {
    create_withdrawal(world, order.clone(), value, currency).await;
    assert_eq!(
        world.reply().status,
        200,
        "creating {order}: {}",
        world.reply().body
    );
}

#[when(regex = r"^the merchant sends a withdrawal body (.+)$")]
async fn withdrawal_raw_body(world: &mut PaymentsWorld, body: String) {
    let mut raw = RawRequest::new(world.merchant(), "/api/v1/merchant/orders/withdrawal");
    raw.body = Some(body);
    world.reply = Some(harness().await.send(raw).await.expect("a reply"));
}

#[when("the payer pays the deposit in full")]
async fn pay_in_full(world: &mut PaymentsWorld) {
    pay(world, None).await;
}

#[given("the payer has paid the deposit")]
async fn has_paid(world: &mut PaymentsWorld) {
    pay(world, None).await;
    assert_eq!(world.reply().status, 200, "{}", world.reply().body);
}

#[when("someone without an operator token pays the deposit")]
async fn pay_without_token(world: &mut PaymentsWorld) {
    let h = harness().await;
    let order_no = order_no_of(world.created());
    let response = h
        .http
        .post(format!(
            "{}/api/v1/sandbox/deposits/{order_no}/pay",
            h.base_url()
        ))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("a reply");
    world.reply = Some(Reply::from_response(response).await.expect("a JSON reply"));
}

#[when("someone without an operator token checks the ledger")]
async fn ledger_without_token(world: &mut PaymentsWorld) {
    let h = harness().await;
    let response = h
        .http
        .get(format!("{}/api/v1/operator/ledger/check", h.base_url()))
        .header("authorization", "Bearer not-a-real-operator-token")
        .send()
        .await
        .expect("a reply");
    world.reply = Some(Reply::from_response(response).await.expect("a JSON reply"));
}

#[when(expr = "the payer pays {word} for the deposit")]
async fn pay_amount(world: &mut PaymentsWorld, value: String) {
    pay(world, Some(amount(&value))).await;
}

async fn pay(world: &mut PaymentsWorld, paid: Option<AmountNumber>) {
    let order_no = order_no_of(world.created());
    let reply = Reply::of(
        harness()
            .await
            .sandbox()
            .unwrap()
            .pay_deposit(&order_no, &sb::PayDepositRequest { amount: paid })
            .await,
    );
    world.reply = Some(reply);
}

#[given(expr = "an operator {word} the withdrawal")]
#[when(expr = "an operator {word} the withdrawal")]
async fn review(world: &mut PaymentsWorld, action: String) {
    let order_no = order_no_of(world.created());
    let operator = harness().await.operator().unwrap();
    let body = op::ReviewRequest {
        remarks: Some(format!("{action} by the conformance suite")),
    };
    let result = match action.as_str() {
        "approves" => operator.approve_withdrawal(&order_no, &body).await,
        "rejects" => operator.reject_withdrawal(&order_no, &body).await,
        other => panic!("unknown review `{other}`"),
    };
    world.keep(result);
}

#[when(expr = "the channel {word} the withdrawal")]
async fn channel_reports(world: &mut PaymentsWorld, outcome: String) {
    let order_no = order_no_of(world.created());
    let sandbox = harness().await.sandbox().unwrap();
    let result = match outcome.as_str() {
        "settles" => Reply::of(
            sandbox
                .settle_withdrawal(
                    &order_no,
                    &sb::SettleWithdrawalRequest {
                        bank_reference: None,
                    },
                )
                .await,
        ),
        "fails" => Reply::of(
            sandbox
                .fail_withdrawal(
                    &order_no,
                    &sb::FailWithdrawalRequest {
                        reason: Some("beneficiary account closed".into()),
                    },
                )
                .await,
        ),
        other => panic!("unknown channel outcome `{other}`"),
    };
    world.reply = Some(result);
}

#[when("the merchant reads that withdrawal by order_no")]
async fn read_withdrawal(world: &mut PaymentsWorld) {
    let order_no = order_no_of(world.created());
    let client = harness().await.client(world.merchant());
    world.keep(client.get_withdrawal(&order_no).await);
}

#[when(expr = "the merchant reads withdrawal {string} by merchant_order_no")]
async fn find_withdrawal(world: &mut PaymentsWorld, order: String) {
    let client = harness().await.client(world.merchant());
    world.keep(client.find_withdrawal(&order).await);
}

#[when("the merchant reads that deposit")]
async fn read_deposit(world: &mut PaymentsWorld) {
    let order_no = order_no_of(world.created());
    let client = harness().await.client(world.merchant());
    world.keep(client.get_deposit(&order_no).await);
}

#[then(expr = "the response field {string} is {int}")]
async fn field_is_number(world: &mut PaymentsWorld, name: String, value: i64) {
    let r = world.reply();
    assert_eq!(
        r.field(&name).and_then(Value::as_i64),
        Some(value),
        "{}",
        r.body
    );
}

#[then(expr = "the response field {string} is true")]
async fn field_true(world: &mut PaymentsWorld, field: String) {
    assert_eq!(
        world.reply().field(&field),
        Some(&Value::Bool(true)),
        "{}",
        world.reply().body
    );
}

#[then(expr = "the response field {string} is false")]
async fn field_false(world: &mut PaymentsWorld, field: String) {
    assert_eq!(
        world.reply().field(&field),
        Some(&Value::Bool(false)),
        "{}",
        world.reply().body
    );
}

#[then(expr = "the response field {string} is set")]
async fn field_set(world: &mut PaymentsWorld, field: String) {
    let v = world.reply().field(&field).cloned().unwrap_or(Value::Null);
    assert!(!v.is_null(), "{field} in {}", world.reply().body);
}

#[then("the approver is the operator who approved it")]
async fn approver(world: &mut PaymentsWorld) {
    let body = &world.reply().body;
    let by = body["approved_by"].as_str().unwrap_or_default();
    assert!(!by.is_empty(), "{body}");
    assert_eq!(body["approver"]["name"].as_str(), Some(by), "{body}");
    // Known in-process, or when QA names the deployment's operator.
    if let Some(name) = &harness().await.operator_name {
        assert_eq!(by, name, "{body}");
    }
}

#[then(expr = "the {word} balance is {string} available, {string} frozen and {string} in total")]
async fn balance_is(
    world: &mut PaymentsWorld,
    currency: String,
    available: String,
    frozen: String,
    total: String,
) {
    let item = balance_item(world, &currency).await;
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
}

async fn balance_item(world: &PaymentsWorld, currency: &str) -> Value {
    let client = harness().await.client(world.merchant());
    let reply = Reply::of(client.get_balances().await);
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["currency_code"].as_str() == Some(currency))
        .cloned()
        .unwrap_or_else(|| panic!("no {currency} balance in {}", reply.body))
}

#[then(expr = "the {word} balance version is {int}")]
async fn balance_version(world: &mut PaymentsWorld, currency: String, version: i64) {
    let item = balance_item(world, &currency).await;
    assert_eq!(item["version"].as_i64(), Some(version), "{item}");
}

#[then("the ledger check finds no difference")]
async fn ledger_ok(_world: &mut PaymentsWorld) {
    let report = Reply::of(harness().await.operator().unwrap().check_ledger().await);
    assert_eq!(report.body["ok"], Value::Bool(true), "{}", report.body);
}

#[then("every amount in the response is a decimal string with four fraction digits")]
async fn amounts_have_four_digits(world: &mut PaymentsWorld) {
    fn walk(path: &str, v: &Value, found: &mut usize) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let monetary = ["amount", "fee", "balance", "cost", "profit"]
                        .iter()
                        .any(|m| k.contains(m));
                    if monetary && !v.is_null() {
                        let text = v
                            .as_str()
                            .unwrap_or_else(|| panic!("{path}.{k} = {v} is not a string"));
                        let (int, frac) = text
                            .split_once('.')
                            .unwrap_or_else(|| panic!("{path}.{k} = `{text}`"));
                        assert!(
                            frac.len() == 4 && frac.bytes().all(|b| b.is_ascii_digit()),
                            "{path}.{k} = `{text}`"
                        );
                        assert!(
                            int.trim_start_matches('-')
                                .bytes()
                                .all(|b| b.is_ascii_digit()),
                            "{path}.{k} = `{text}`"
                        );
                        *found += 1;
                    } else {
                        walk(&format!("{path}.{k}"), v, found);
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(&format!("{path}[{i}]"), item, found);
                }
            }
            _ => {}
        }
    }
    let mut found = 0;
    walk("", &world.reply().body, &mut found);
    assert!(
        found > 0,
        "the response has amounts: {}",
        world.reply().body
    );
}

#[given(expr = "the merchant's rate limit is {int} request(s) per minute with a burst of {int}")]
async fn rate_limit(world: &mut PaymentsWorld, per_minute: i64, burst: i64) {
    let reply = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .set_rate_limit(
                &world.merchant().id,
                &op::RateLimitRequest {
                    requests_per_minute: per_minute,
                    burst,
                },
            )
            .await,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[when(expr = "the merchant reads its balances {int} times in a row")]
async fn burst_of_reads(world: &mut PaymentsWorld, times: usize) {
    let mut replies = Vec::new();
    for _ in 0..times {
        let raw = RawRequest::new(world.merchant(), "/api/v1/merchant/balance");
        replies.push(harness().await.send(raw).await.expect("a reply"));
    }
    world.replies = replies;
}

#[then(
    expr = "{int} of them succeed and {int} are refused with status 429, error code {string} and a Retry-After header"
)]
async fn some_limited(world: &mut PaymentsWorld, ok: usize, limited: usize, code: String) {
    let succeeded = world.replies.iter().filter(|r| r.status == 200).count();
    let refused: Vec<&Reply> = world.replies.iter().filter(|r| r.status == 429).collect();
    assert_eq!(succeeded, ok, "{:?}", world.replies);
    assert_eq!(refused.len(), limited, "{:?}", world.replies);
    for r in refused {
        assert_eq!(r.str_field("error_code"), Some(code.as_str()));
        let seconds: u64 = r
            .retry_after
            .as_deref()
            .and_then(|v| v.parse().ok())
            .expect("Retry-After in seconds");
        assert!(seconds >= 1, "Retry-After {seconds}");
    }
}

#[when("the channel reports a match for the deposit")]
async fn report_match(world: &mut PaymentsWorld) {
    report(world, None).await;
}

#[given("the channel has reported a match for the deposit")]
async fn has_reported_match(world: &mut PaymentsWorld) {
    report(world, None).await;
    assert_eq!(world.reply().status, 200, "{}", world.reply().body);
}

#[when(expr = "the channel reports a match of {word} for the deposit")]
async fn report_match_of(world: &mut PaymentsWorld, value: String) {
    report(world, Some(amount(&value))).await;
}

async fn report(world: &mut PaymentsWorld, received: Option<AmountNumber>) {
    let order_no = order_no_of(world.created());
    let reply = Reply::of(
        harness()
            .await
            .sandbox()
            .unwrap()
            .match_deposit(&order_no, &sb::PayDepositRequest { amount: received })
            .await,
    );
    world.reply = Some(reply);
}

#[when("an operator cancels the deposit")]
async fn cancel(world: &mut PaymentsWorld) {
    let order_no = order_no_of(world.created());
    cancel_order(world, &order_no).await;
}

#[given("an operator has cancelled the deposit")]
async fn has_cancelled(world: &mut PaymentsWorld) {
    cancel(world).await;
    assert_eq!(world.reply().status, 200, "{}", world.reply().body);
}

#[when(expr = "an operator cancels deposit {string}")]
async fn cancel_by_no(world: &mut PaymentsWorld, order_no: String) {
    cancel_order(world, &order_no).await;
}

/// Cancelled as the service lets anyone cancel any deposit since operator
/// 0.15.0: one person files it and a second approves (one person alone
/// may cancel only a deposit no money can be held for, proven in
/// change_requests.feature).
async fn cancel_order(world: &mut PaymentsWorld, order_no: &str) {
    let reply = conformance::four_eyes::take(
        "cancel_deposit",
        Some(order_no),
        serde_json::json!({"remarks": "payer asked"}),
    )
    .await;
    world.reply = Some(reply);
}
