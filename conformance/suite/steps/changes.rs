//! Change requests: a money action filed by one operator the scenario
//! made, decided by another, and what moved (or did not) in between.

use super::bank::{bank_request, created_field, deposit_account, reference};
use super::common::PaymentsWorld;
use super::people::{audit_of, send_as, token_of};
use conformance::{harness, Reply};
use cucumber::{then, when};
use serde_json::{json, Value};

async fn file_as(world: &mut PaymentsWorld, token: &str, body: Value) {
    let reply = send_as(
        world,
        token,
        "POST",
        "/api/v1/operator/approval-requests",
        Some(body.to_string()),
    )
    .await;
    if reply.status == 200 {
        world.change_request = reply.str_field("change_request_id").map(str::to_string);
    }
    world.reply = Some(reply);
}

fn completion(world: &PaymentsWorld, amount: Option<&str>) -> Value {
    let mut parameters = json!({"remarks": "counted at the branch"});
    if let Some(a) = amount {
        parameters["actual_amount"] = json!(a);
    }
    json!({
        "action": "complete_deposit",
        "target": created_field(world, "order_no"),
        "parameters": parameters,
        "remarks": "the payer showed a receipt",
    })
}

#[when(expr = "{string} files a change request to complete the deposit")]
async fn files_completion(world: &mut PaymentsWorld, name: String) {
    let body = completion(world, None);
    file_as(world, &token_of(world, &name), body).await;
}

#[when(expr = "{string} files a change request to complete the deposit with {word}")]
async fn files_completion_with(world: &mut PaymentsWorld, name: String, amount: String) {
    let body = completion(world, Some(&amount));
    file_as(world, &token_of(world, &name), body).await;
}

#[when(
    expr = "{string} files a change request to complete the deposit with {word} giving no reason"
)]
async fn files_completion_silently(world: &mut PaymentsWorld, name: String, amount: String) {
    let mut body = completion(world, Some(&amount));
    body["parameters"]
        .as_object_mut()
        .expect("parameters")
        .remove("remarks");
    file_as(world, &token_of(world, &name), body).await;
}

#[when("the configuration token files a change request to complete the deposit")]
async fn token_files(world: &mut PaymentsWorld) {
    let token = harness()
        .await
        .operator_token
        .clone()
        .expect("this scenario needs CONFORMANCE_OPERATOR_TOKEN");
    let body = completion(world, None);
    file_as(world, &token, body).await;
}

#[when(
    expr = "{string} files a change request to record {word} {word} with the deposit's remark as {string}"
)]
async fn files_record(
    world: &mut PaymentsWorld,
    name: String,
    value: String,
    currency: String,
    reference_name: String,
) {
    let remark = created_field(world, "remark");
    let account = deposit_account(world).await;
    let reference = reference(world, &reference_name);
    let request = bank_request(account, reference, &value, &currency, Some(remark));
    let body = json!({
        "action": "ingest_bank_transaction",
        "parameters": conformance::four_eyes::body_of(&request),
    });
    file_as(world, &token_of(world, &name), body).await;
}

#[when(expr = "{string} files a change request to match the bank transaction to the deposit")]
async fn files_match(world: &mut PaymentsWorld, name: String) {
    let id = world.bank_transaction.as_ref().expect("a bank transaction")["id"]
        .as_str()
        .expect("its id")
        .to_string();
    let body = json!({
        "action": "match_bank_transaction",
        "target": id,
        "parameters": {"order_no": created_field(world, "order_no"), "remarks": "the payer phoned"},
    });
    file_as(world, &token_of(world, &name), body).await;
}

#[when(expr = "{string} files a change request to resolve the payout as {string}")]
async fn files_resolution(world: &mut PaymentsWorld, name: String, outcome: String) {
    let body = json!({
        "action": "resolve_withdrawal",
        "target": created_field(world, "order_no"),
        "parameters": {"outcome": outcome, "remarks": "not in the channel's settlement report"},
    });
    file_as(world, &token_of(world, &name), body).await;
}

/// The request the scenario filed, by a step of this file or by sending the
/// operation itself.
fn current(world: &PaymentsWorld) -> String {
    world
        .change_request
        .clone()
        .or_else(|| {
            world
                .reply()
                .str_field("change_request_id")
                .map(str::to_string)
        })
        .expect("a change request was filed")
}

async fn decide(world: &mut PaymentsWorld, name: &str, decision: &str) {
    let id = current(world);
    world.change_request = Some(id.clone());
    let token = token_of(world, name);
    let body = json!({"remarks": format!("{decision} by {name}")}).to_string();
    world.reply = Some(
        send_as(
            world,
            &token,
            "POST",
            &format!("/api/v1/operator/approval-requests/{id}/{decision}"),
            Some(body),
        )
        .await,
    );
}

#[when(expr = "{string} approves the change request")]
async fn approves(world: &mut PaymentsWorld, name: String) {
    decide(world, &name, "approve").await;
}

#[when(expr = "{string} rejects the change request")]
async fn rejects(world: &mut PaymentsWorld, name: String) {
    decide(world, &name, "reject").await;
}

async fn read(world: &mut PaymentsWorld, name: &str) -> Reply {
    let id = current(world);
    let token = token_of(world, name);
    let path = format!("/api/v1/operator/approval-requests/{id}");
    send_as(world, &token, "GET", &path, None).await
}

#[then(expr = "{string} reads the change request as {string}")]
async fn reads_as(world: &mut PaymentsWorld, name: String, status: String) {
    let reply = read(world, &name).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.str_field("status"),
        Some(status.as_str()),
        "{}",
        reply.body
    );
}

#[then(expr = "the change request says {string}")]
async fn says(world: &mut PaymentsWorld, needle: String) {
    let summary = world
        .reply()
        .str_field("summary")
        .unwrap_or_default()
        .to_string();
    assert!(
        summary.contains(&needle),
        "the summary `{summary}` should say `{needle}`"
    );
}

#[then(expr = "the approval's result field {string} is {string}")]
async fn result_field(world: &mut PaymentsWorld, field: String, expected: String) {
    let body = &world.reply().body;
    assert_eq!(
        body["result"][&field].as_str(),
        Some(expected.as_str()),
        "{body}"
    );
}

#[then(expr = "the approval's result has the field {string}")]
async fn result_has(world: &mut PaymentsWorld, field: String) {
    let body = &world.reply().body;
    assert!(
        body["result"][&field]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{field} in {}",
        body["result"]
    );
}

/// A key or secret an approval issued is shown in that answer only: the
/// request read afterwards holds it nowhere.
#[then(expr = "the change request as {string} reads it does not show the approval's {string}")]
async fn not_shown(world: &mut PaymentsWorld, name: String, field: String) {
    let secret = world.reply().body["result"][&field]
        .as_str()
        .expect("the approval's secret")
        .to_string();
    let reply = read(world, &name).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        !reply.body.to_string().contains(&secret),
        "the request shows the {field}"
    );
}

/// The pending requests `name` lists at `resource` (`approval-requests` or
/// 0.14.0's `change-requests`), and the scenario's request id.
async fn pending_at(world: &mut PaymentsWorld, name: &str, resource: &str) -> (Vec<Value>, String) {
    let id = current(world);
    let token = token_of(world, name);
    let path = format!("/api/v1/operator/{resource}?status=pending&limit=200");
    let reply = send_as(world, &token, "GET", &path, None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let items = reply.body["items"].as_array().cloned().expect("items");
    assert!(
        items.iter().all(|r| r["status"] == "pending"),
        "{}",
        reply.body
    );
    (items, id)
}

#[then(expr = "{string} finds the change request among the pending ones")]
async fn listed(world: &mut PaymentsWorld, name: String) {
    let (items, id) = pending_at(world, &name, "approval-requests").await;
    assert!(
        items.iter().any(|r| r["change_request_id"] == id.as_str()),
        "{id} among {items:?}"
    );
}

#[then(expr = "{string} does not find the change request among the change-requests of 0.14.0")]
async fn not_listed_by_0_14(world: &mut PaymentsWorld, name: String) {
    let (items, id) = pending_at(world, &name, "change-requests").await;
    assert!(
        items.iter().all(|r| r["change_request_id"] != id.as_str()),
        "{id} listed by 0.14.0's operation"
    );
    let token = token_of(world, &name);
    let path = format!("/api/v1/operator/change-requests/{id}");
    let read = send_as(world, &token, "GET", &path, None).await;
    assert_eq!(read.status, 404, "{}", read.body);
}

/// Rows of `action` in the trail of what the change request acts on (an
/// order, a merchant, a bank transaction, or for a transfer not yet
/// recorded its account and reference), read from the request itself.
#[then(expr = "the audit trail of the change request's target holds {int} {string} row(s)")]
async fn audited_target(world: &mut PaymentsWorld, count: usize, action: String) {
    let token = harness()
        .await
        .operator_token
        .clone()
        .expect("the suite's operator token");
    let id = current(world);
    let path = format!("/api/v1/operator/approval-requests/{id}");
    let request = send_as(world, &token, "GET", &path, None).await;
    assert_eq!(request.status, 200, "{}", request.body);
    let target = request
        .str_field("target")
        .expect("the request's target")
        .to_string();
    let rows = audit_of(world, &target).await;
    let found = rows
        .iter()
        .filter(|r| r["action"] == action.as_str())
        .count();
    assert_eq!(found, count, "{target}: {rows:#?}");
}

/// The service's clock moves on: the sandbox's by its API, an in-process
/// production service's by its harness (`@clock` scenarios only).
#[when(expr = "the service's clock moves on {int} {word}")]
async fn time_passes(_world: &mut PaymentsWorld, count: i64, unit: String) {
    let seconds = match unit.trim_end_matches('s') {
        "second" => count,
        "minute" => count * 60,
        "hour" => count * 3600,
        "day" => count * 86_400,
        other => panic!("no unit `{other}` of time"),
    };
    if let Err(e) = harness().await.advance_clock(seconds).await {
        panic!("{e:#}");
    }
}
