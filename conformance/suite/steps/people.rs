//! Operators by role, four-eyes approvals and the audit trail: requests
//! sent with the token of an operator the scenario created.

use super::common::PaymentsWorld;
use conformance::{harness, RawRequest, Reply};
use cucumber::{given, then, when};
use serde_json::{json, Value};

/// Sends `method path` with `token`; `{order_no}` stands for the last
/// order a `Given` step created, `{merchant_id}` for the merchant.
pub(super) async fn send_as(
    world: &mut PaymentsWorld,
    token: &str,
    method: &str,
    path: &str,
    body: Option<String>,
) -> Reply {
    let h = harness().await;
    let mut path = path.replace("{merchant_id}", &world.merchant().id);
    if path.contains("{order_no}") {
        let created = world
            .created
            .as_ref()
            .expect("a Given step created an order");
        path = path.replace(
            "{order_no}",
            created["order_no"].as_str().expect("its order_no"),
        );
    }
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (
            p.to_string(),
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        None => (path, Vec::new()),
    };
    let mut raw = RawRequest::new(world.merchant(), path);
    raw.method = Some(method.to_string());
    raw.query = query;
    raw.body = body;
    raw.headers = vec![("authorization".into(), format!("Bearer {token}"))];
    h.send(raw).await.expect("a reply from the service")
}

async fn admin_token() -> String {
    harness()
        .await
        .operator_token
        .clone()
        .expect("this scenario needs CONFORMANCE_OPERATOR_TOKEN")
}

pub(super) fn token_of(world: &PaymentsWorld, name: &str) -> String {
    world
        .operators
        .get(name)
        .unwrap_or_else(|| panic!("the scenario created operator {name:?}"))
        .1
        .clone()
}

#[given(expr = "an operator {string} with the role {string}")]
async fn operator_with_role(world: &mut PaymentsWorld, name: String, role: String) {
    let admin = admin_token().await;
    make_operator(world, &admin, name, &role).await;
}

/// An operator made by another the scenario made: one admin's doing alone.
#[given(expr = "{string} makes an operator {string} with the role {string}")]
async fn makes_operator(world: &mut PaymentsWorld, maker: String, name: String, role: String) {
    let token = token_of(world, &maker);
    make_operator(world, &token, name, &role).await;
}

/// Makes an operator and a token of its own with `token` (an admin's).
async fn make_operator(world: &mut PaymentsWorld, token: &str, name: String, role: &str) {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let body = json!({"name": format!("{name} {}", &tag[..8]), "email": format!("{name}-{tag}@example.test"), "role": role});
    let created = send_as(
        world,
        token,
        "POST",
        "/api/v1/operator/operators",
        Some(body.to_string()),
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.body["operator_id"]
        .as_str()
        .expect("operator_id")
        .to_string();
    let issued = send_as(
        world,
        token,
        "POST",
        &format!("/api/v1/operator/operators/{id}/tokens"),
        Some(json!({"label": "conformance"}).to_string()),
    )
    .await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    let own = issued.body["token"].as_str().expect("token").to_string();
    world.operators.insert(name, (id, own));
}

#[when(expr = "{string} vouches for {string}")]
async fn vouches(world: &mut PaymentsWorld, voucher: String, name: String) {
    let token = token_of(world, &voucher);
    let id = world.operators[&name].0.clone();
    let path = format!("/api/v1/operator/operators/{id}/vouch");
    world.reply = Some(send_as(world, &token, "POST", &path, None).await);
}

#[when(regex = r#"^"([^"]+)" sends (GET|PUT|POST) "([^"]+)"$"#)]
async fn sends(world: &mut PaymentsWorld, name: String, method: String, path: String) {
    let token = token_of(world, &name);
    let body = (method != "GET").then(|| "{}".to_string());
    world.reply = Some(send_as(world, &token, &method, &path, body).await);
}

/// The body `-` is none (a `GET`). In the path and the body,
/// `{operator_id}` stands for the sender, `{unique}` for a value new in
/// this run, `{order_no}` for the last order created and
/// `{change_request_id}` for the change request the scenario filed.
#[when(regex = r#"^"([^"]+)" sends (GET|PUT|POST) "([^"]+)" with the body (.+)$"#)]
async fn sends_body(
    world: &mut PaymentsWorld,
    name: String,
    method: String,
    path: String,
    body: String,
) {
    let token = token_of(world, &name);
    let unique = uuid::Uuid::new_v4().simple().to_string()[..12].to_string();
    let filed = world.change_request.clone().or_else(|| {
        let reply = world.reply.as_ref()?;
        reply.str_field("change_request_id").map(str::to_string)
    });
    if path.contains("{change_request_id}") {
        // The request stays the scenario's after this reply replaces it.
        world.change_request = filed.clone();
    }
    let fill = |text: &str| {
        let mut text = text
            .replace("{operator_id}", &world.operators[&name].0)
            .replace("{merchant_id}", &world.merchant().id)
            .replace("{unique}", &unique);
        if let Some(order_no) = world.created.as_ref().and_then(|c| c["order_no"].as_str()) {
            text = text.replace("{order_no}", order_no);
        }
        if let Some(id) = &filed {
            text = text.replace("{change_request_id}", id);
        }
        text
    };
    let path = fill(&path);
    let body = (body != "-").then(|| fill(&body));
    world.reply = Some(send_as(world, &token, &method, &path, body).await);
}

/// `none`: a success, 200 without an error code; otherwise the envelope
/// with that code.
#[then(regex = r"^the answer is (\d{3}) with the error code (none|[A-Z_]+)$")]
async fn answered(world: &mut PaymentsWorld, status: u16, code: String) {
    if code == "none" {
        let reply = world.reply();
        assert_eq!(reply.status, status, "status; body: {}", reply.body);
        assert!(reply.str_field("error_code").is_none(), "{}", reply.body);
    } else {
        super::common::refused(world, status, code).await;
    }
}

#[when(expr = "{string} approves the withdrawal")]
async fn approves(world: &mut PaymentsWorld, name: String) {
    let token = token_of(world, &name);
    let body = json!({"remarks": format!("checked by {name}")}).to_string();
    world.reply = Some(
        send_as(
            world,
            &token,
            "POST",
            "/api/v1/operator/withdrawals/{order_no}/approve",
            Some(body),
        )
        .await,
    );
}

#[when(expr = "an admin disables {string}")]
async fn disables(world: &mut PaymentsWorld, name: String) {
    let admin = admin_token().await;
    let id = world.operators[&name].0.clone();
    let reply = send_as(
        world,
        &admin,
        "PUT",
        &format!("/api/v1/operator/operators/{id}"),
        Some(json!({"status": "disabled"}).to_string()),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[when(expr = "an admin revokes the token of {string}")]
async fn revokes_own(world: &mut PaymentsWorld, name: String) {
    let admin = admin_token().await;
    let id = world.operators[&name].0.clone();
    let list = send_as(
        world,
        &admin,
        "GET",
        &format!("/api/v1/operator/operators/{id}/tokens"),
        None,
    )
    .await;
    let token_id = list.body["items"][0]["token_id"]
        .as_str()
        .expect("a token")
        .to_string();
    let reply = send_as(
        world,
        &admin,
        "POST",
        &format!("/api/v1/operator/operators/{id}/tokens/{token_id}/revoke"),
        Some("{}".into()),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.body["revoked_at"].is_string(), "{}", reply.body);
}

#[then(expr = "the response lists {int} approval(s) of {int} required")]
async fn approvals(world: &mut PaymentsWorld, count: usize, required: i64) {
    let body = &world.reply().body;
    assert_eq!(
        body["approvals"].as_array().map(Vec::len),
        Some(count),
        "{body}"
    );
    assert_eq!(
        body["approvals_required"].as_i64(),
        Some(required),
        "{body}"
    );
}

/// The newest audit rows on the scenario's order (or merchant), as an
/// admin lists them.
pub(super) async fn audit_of(world: &mut PaymentsWorld, target: &str) -> Vec<Value> {
    let admin = admin_token().await;
    let reply = send_as(
        world,
        &admin,
        "GET",
        &format!("/api/v1/operator/audit-events?target_id={target}"),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["items"].as_array().cloned().unwrap_or_default()
}

/// Whether the order's trail holds `action` by the scenario's operator
/// `name` with remarks that `fit`.
async fn audited_order_by(
    world: &mut PaymentsWorld,
    action: &str,
    name: &str,
    fit: impl Fn(&str) -> bool,
) {
    let order_no = world.created.as_ref().expect("an order")["order_no"]
        .as_str()
        .expect("order_no")
        .to_string();
    let rows = audit_of(world, &order_no).await;
    let id = &world.operators[name].0;
    assert!(
        rows.iter().any(|r| r["action"] == action
            && r["operator_id"] == id.as_str()
            && r["remarks"].as_str().is_some_and(&fit)
            && r["request_id"].as_str().is_some_and(|s| !s.is_empty())),
        "no {action} by {name} with those remarks in {rows:#?}"
    );
}

#[then(expr = "the audit trail of the order holds {string} by {string} with the remarks {string}")]
async fn audited_order(world: &mut PaymentsWorld, action: String, name: String, remarks: String) {
    audited_order_by(world, &action, &name, |r| r == remarks).await;
}

#[then(
    expr = "the audit trail of the order holds {string} by {string} with the remarks containing {string}"
)]
async fn audited_order_saying(
    world: &mut PaymentsWorld,
    action: String,
    name: String,
    part: String,
) {
    audited_order_by(world, &action, &name, |r| r.contains(&part)).await;
}

#[then(expr = "the audit trail of the order holds {int} {string} row(s)")]
async fn audited_count(world: &mut PaymentsWorld, count: usize, action: String) {
    let order_no = world.created.as_ref().expect("an order")["order_no"]
        .as_str()
        .expect("order_no")
        .to_string();
    let rows = audit_of(world, &order_no).await;
    let found = rows
        .iter()
        .filter(|r| r["action"] == action.as_str())
        .count();
    assert_eq!(found, count, "{rows:#?}");
}

#[then(expr = "the audit trail of the merchant holds {string} with {string} from {int} to {int}")]
async fn audited_setting(
    world: &mut PaymentsWorld,
    action: String,
    field: String,
    from: i64,
    to: i64,
) {
    let id = world.merchant().id.clone();
    let rows = audit_of(world, &id).await;
    let row = rows
        .iter()
        .find(|r| r["action"] == action.as_str())
        .unwrap_or_else(|| panic!("no {action} in {rows:#?}"));
    assert_eq!(row["before"][&field].as_i64(), Some(from), "{row:#}");
    assert_eq!(row["after"][&field].as_i64(), Some(to), "{row:#}");
}

/// Approves the scenario's withdrawal with the suite's own operator token,
/// which must be a configuration token (`GET /api/v1/operator/me` says
/// `source: configuration`): these scenarios are about what such a token
/// may not do.
#[when("the configuration token approves the withdrawal")]
async fn configuration_token_approves(world: &mut PaymentsWorld) {
    let admin = admin_token().await;
    let me = send_as(world, &admin, "GET", "/api/v1/operator/me", None).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(
        me.body["source"], "configuration",
        "CONFORMANCE_OPERATOR_TOKEN must be one of the deployment's configuration tokens for this scenario: {}",
        me.body
    );
    let body = json!({"remarks": "approved with the configuration token"}).to_string();
    world.reply = Some(
        send_as(
            world,
            &admin,
            "POST",
            "/api/v1/operator/withdrawals/{order_no}/approve",
            Some(body),
        )
        .await,
    );
}

/// `{prefix}-1` to `{prefix}-{n}`, one after another, each created; their
/// replies are kept in order, and the last is the scenario's order.
#[when(
    expr = "the merchant creates {int} withdrawals {string} of {word} {word} each to account {string}"
)]
async fn creates_many(
    world: &mut PaymentsWorld,
    n: usize,
    prefix: String,
    value: String,
    currency: String,
    account: String,
) {
    world.replies.clear();
    for i in 1..=n {
        let order = format!("{prefix}-{i}");
        super::money::create_withdrawal_to(world, &order, &value, &currency, &account).await;
        let reply = world.reply().clone();
        assert_eq!(reply.status, 200, "creating {order}: {}", reply.body);
        world.replies.push(reply);
    }
}

/// The orders `from` to `to` (counting from 1) of the last series, as an
/// operator reads them.
async fn series(world: &mut PaymentsWorld, from: usize, to: usize) -> Vec<Value> {
    let admin = admin_token().await;
    let order_nos: Vec<String> = world.replies[from - 1..to]
        .iter()
        .map(|r| r.body["order_no"].as_str().expect("order_no").to_string())
        .collect();
    let mut read = Vec::new();
    for order_no in order_nos {
        let reply = send_as(
            world,
            &admin,
            "GET",
            &format!("/api/v1/operator/withdrawals/{order_no}"),
            None,
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        read.push(reply.body);
    }
    read
}

#[then(expr = "withdrawals {int} to {int} of them were auto-approved")]
async fn series_auto_approved(world: &mut PaymentsWorld, from: usize, to: usize) {
    for (i, order) in (from..).zip(series(world, from, to).await) {
        assert_eq!(order["is_auto_approved"], true, "withdrawal {i}: {order}");
        assert_eq!(order["approvals_required"], 1, "withdrawal {i}: {order}");
    }
}

#[then(expr = "withdrawals {int} to {int} of them are pending, needing {int} approvers")]
async fn series_pending(world: &mut PaymentsWorld, from: usize, to: usize, needed: i64) {
    for (i, order) in (from..).zip(series(world, from, to).await) {
        assert_eq!(order["status"], "pending", "withdrawal {i}: {order}");
        assert_eq!(order["is_auto_approved"], false, "withdrawal {i}: {order}");
        assert_eq!(
            order["approvals_required"], needed,
            "withdrawal {i}: {order}"
        );
    }
}

/// How many operators the listing-order scenario made, in turn.
const IN_TURN: &str = "in-turn-";

#[when(expr = "{int} operators are made one after another, each given a token")]
async fn operators_in_turn(world: &mut PaymentsWorld, count: usize) {
    for i in 0..count {
        operator_with_role(world, format!("{IN_TURN}{i:03}"), "viewer".into()).await;
    }
}

/// The ids of the operators made in turn, in the order they were made.
fn made_in_turn(world: &PaymentsWorld) -> Vec<String> {
    let mut made: Vec<(&String, &String)> = world
        .operators
        .iter()
        .filter(|(name, _)| name.starts_with(IN_TURN))
        .map(|(name, (id, _))| (name, id))
        .collect();
    made.sort();
    made.into_iter().map(|(_, id)| id.clone()).collect()
}

/// Every item of a listing, page after page, until `enough` says stop
/// (other scenarios write beside this one, so it reads as far as needed).
async fn pages(
    world: &mut PaymentsWorld,
    path: &str,
    enough: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let admin = admin_token().await;
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = match &cursor {
            Some(c) => format!("{path}{sep}limit=200&cursor={c}"),
            None => format!("{path}{sep}limit=200"),
        };
        let reply = send_as(world, &admin, "GET", &url, None).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        items.extend(reply.body["items"].as_array().cloned().unwrap_or_default());
        cursor = reply.body["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() || enough(&items) {
            break;
        }
    }
    items
}

#[then("the operators listing shows them newest first, in the order they were made")]
async fn operators_in_order(world: &mut PaymentsWorld) {
    let made = made_in_turn(world);
    let listed = pages(world, "/api/v1/operator/operators", |items| {
        made.iter()
            .all(|id| items.iter().any(|o| o["operator_id"] == id.as_str()))
    })
    .await;
    let seen: Vec<String> = listed
        .iter()
        .filter_map(|o| o["operator_id"].as_str())
        .filter(|id| made.iter().any(|m| m == id))
        .map(str::to_string)
        .collect();
    let newest_first: Vec<String> = made.iter().rev().cloned().collect();
    assert_eq!(seen, newest_first, "the operators made in turn, as listed");
}

#[then("the audit trail lists every token after its operator was made, newest first")]
async fn trail_in_order(world: &mut PaymentsWorld) {
    let made = made_in_turn(world);
    let mut expected = Vec::new();
    for id in made.iter().rev() {
        expected.push(("issue_operator_token".to_string(), id.clone()));
        expected.push(("create_operator".to_string(), id.clone()));
    }
    let oldest = made.first().cloned().unwrap_or_default();
    let listed = pages(world, "/api/v1/operator/audit-events", |items| {
        items
            .iter()
            .any(|r| r["action"] == "create_operator" && r["target_id"] == oldest.as_str())
    })
    .await;
    let seen: Vec<(String, String)> = listed
        .iter()
        .filter_map(|r| {
            let target = r["target_id"].as_str()?;
            let action = r["action"].as_str()?;
            let ours = made.iter().any(|m| m == target)
                && matches!(action, "create_operator" | "issue_operator_token");
            ours.then(|| (action.to_string(), target.to_string()))
        })
        .collect();
    assert_eq!(seen, expected, "the trail of the operators made in turn");
}

/// The name the scenario gave `name` when it made the operator: the name
/// and the first eight characters of a tag (see `operator_with_role`).
fn made_as(name: &str, shown: &Value) -> bool {
    shown
        .as_str()
        .and_then(|s| s.strip_prefix(name))
        .is_some_and(|tag| tag.len() == 9 && tag.starts_with(' '))
}

#[then(expr = "the approvals are by {string} then {string}, each named by id")]
async fn approvals_by(world: &mut PaymentsWorld, first: String, second: String) {
    let body = world.reply().body.clone();
    let approvals = body["approvals"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = approvals
        .iter()
        .filter_map(|a| a["approver_id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [
            world.operators[&first].0.as_str(),
            world.operators[&second].0.as_str()
        ],
        "{body}"
    );
    for (a, name) in approvals.iter().zip([&first, &second]) {
        assert!(made_as(name, &a["approver_name"]), "{a}");
    }
}

#[then(expr = "the order's approver is {string}, by id and name")]
async fn approver_is(world: &mut PaymentsWorld, name: String) {
    let body = world.reply().body.clone();
    let approver = &body["approver"];
    assert_eq!(
        approver["id"].as_str(),
        Some(world.operators[&name].0.as_str()),
        "{body}"
    );
    assert!(made_as(&name, &approver["name"]), "{body}");
    assert_eq!(approver["name"], body["approved_by"], "{body}");
}
