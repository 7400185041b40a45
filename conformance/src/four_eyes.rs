//! Money actions as the service takes them since operator 0.14.0: filed by
//! one person as a change request and approved by a second. The suite
//! makes its two people once per run, with the operator token it was
//! given, and takes each money action through them.

use crate::{harness, Reply};
use anyhow::{anyhow, ensure, Context, Result};
use serde_json::{json, Value};
use tokio::sync::OnceCell;

/// A person: an operator's id and own token.
#[derive(Clone, Debug)]
pub struct Person {
    pub id: String,
    pub token: String,
}

static PEOPLE: OnceCell<(Person, Person)> = OnceCell::const_new();

async fn post(token: &str, path: &str, body: &Value) -> Result<Reply> {
    let h = harness().await;
    let response = h
        .http
        .post(format!("{}{path}", h.base_url()))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .with_context(|| format!("POST {path}"))?;
    Reply::from_response(response).await
}

/// An approver made with the suite's operator token, and a token of its own.
pub async fn new_person(role: &str, name: &str) -> Result<Person> {
    let admin = harness()
        .await
        .operator_token
        .clone()
        .ok_or_else(|| anyhow!("money actions need CONFORMANCE_OPERATOR_TOKEN"))?;
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let created = post(
        &admin,
        "/api/v1/operator/operators",
        &json!({"name": format!("{name} {}", &tag[..8]), "email": format!("{name}-{tag}@example.test"), "role": role}),
    )
    .await?;
    ensure!(created.status == 200, "creating {name}: {}", created.body);
    let id = created.body["operator_id"]
        .as_str()
        .context("operator_id")?
        .to_string();
    let issued = post(
        &admin,
        &format!("/api/v1/operator/operators/{id}/tokens"),
        &json!({"label": "conformance"}),
    )
    .await?;
    ensure!(issued.status == 200, "a token for {name}: {}", issued.body);
    let token = issued.body["token"].as_str().context("token")?.to_string();
    Ok(Person { id, token })
}

/// The suite's maker and checker, made on first use: admins, since
/// some money settings are an admin's.
pub async fn people() -> &'static (Person, Person) {
    match PEOPLE
        .get_or_try_init(|| async {
            Ok::<_, anyhow::Error>((
                new_person("admin", "maker").await?,
                new_person("admin", "checker").await?,
            ))
        })
        .await
    {
        Ok(p) => p,
        Err(e) => panic!("the suite could not make its two people: {e:#}"),
    }
}

/// Files `action` on `target` with `parameters` as `maker`.
pub async fn file(
    maker: &Person,
    action: &str,
    target: Option<&str>,
    parameters: Value,
) -> Result<Reply> {
    let mut body = json!({"action": action, "parameters": parameters});
    if let Some(t) = target {
        body["target"] = json!(t);
    }
    post(&maker.token, "/api/v1/operator/approval-requests", &body).await
}

/// Approves the change request `id` as `checker`.
pub async fn approve(checker: &Person, id: &str) -> Result<Reply> {
    post(
        &checker.token,
        &format!("/api/v1/operator/approval-requests/{id}/approve"),
        &json!({"remarks": "checked"}),
    )
    .await
}

/// Rejects the change request `id` as `who`.
pub async fn reject(who: &Person, id: &str) -> Result<Reply> {
    post(
        &who.token,
        &format!("/api/v1/operator/approval-requests/{id}/reject"),
        &json!({"remarks": "not this one"}),
    )
    .await
}

/// The money action taken by two people: the filing's refusal if it was
/// refused, else the approval's refusal, else what the action answered
/// (as the direct operation answered it before 0.14.0).
pub async fn take(action: &str, target: Option<&str>, parameters: Value) -> Reply {
    let (maker, checker) = people().await;
    let filed = file(maker, action, target, parameters)
        .await
        .expect("a reply to the filing");
    if filed.status != 200 {
        return filed;
    }
    let id = filed.body["change_request_id"]
        .as_str()
        .expect("change_request_id")
        .to_string();
    let approved = approve(checker, &id)
        .await
        .expect("a reply to the approval");
    if approved.status != 200 {
        return approved;
    }
    Reply {
        status: 200,
        body: approved.body["result"].clone(),
        retry_after: None,
    }
}

/// A routing table set by two people (operator 0.18.0): filed as a routing
/// change by the maker, approved by the checker. The filing's refusal if
/// it was refused, else the approval's answer (the change, with the table
/// in force as `result`).
pub async fn set_routing(change: Value) -> Reply {
    let (maker, checker) = people().await;
    let filed = post(&maker.token, "/api/v1/operator/routing-changes", &change)
        .await
        .expect("a reply to the filing");
    if filed.status != 200 {
        return filed;
    }
    let id = filed.body["change_request_id"]
        .as_str()
        .expect("change_request_id")
        .to_string();
    post(
        &checker.token,
        &format!("/api/v1/operator/routing-changes/{id}/approve"),
        &json!({"remarks": "checked"}),
    )
    .await
    .expect("a reply to the approval")
}

/// A bank transaction's report as a change request's parameters: its
/// amount as a decimal string, as the service reads amounts there.
pub fn body_of(request: &merchant_client::operator::types::BankTransactionRequest) -> Value {
    let mut body = serde_json::to_value(request).expect("a report serializes");
    body["amount"] = json!(request.amount.0.to_string());
    body
}
