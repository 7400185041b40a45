//! Billing statements: issued by an operator, read by the merchant (its
//! PDF through the generated client), and announced to the platform with
//! `billing_statement_issued`, which the suite's platform receiver keys by
//! the statement's merchant (`tenant_id`).

use super::common::PaymentsWorld;
use super::owners::{body_of, delivery_reaches, platform, send};
use conformance::harness;
use conformance::receiver::{Answer, Received};
use cucumber::{given, then, when};
use futures::TryStreamExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(15);

fn statement(world: &PaymentsWorld) -> Value {
    world.created().clone()
}

fn statement_id(world: &PaymentsWorld) -> String {
    statement(world)["statement_id"]
        .as_str()
        .expect("a statement was issued earlier in the scenario")
        .to_string()
}

#[given(expr = "the platform answers {int} first for the merchant")]
async fn platform_answers(world: &mut PaymentsWorld, status: u16) {
    let key = world.merchant().id.clone();
    platform()
        .await
        .0
        .script_for(&key, &[Answer::Status(status)]);
}

#[when(expr = "an operator issues the merchant's billing statement from {string} to {string}")]
async fn issues(world: &mut PaymentsWorld, from: String, to: String) {
    let path = format!(
        "/api/v1/operator/merchants/{}/billing-statements",
        world.merchant().id
    );
    let body = json!({ "period_start": from, "period_end": to, "remarks": "conformance" });
    let reply = send(world, "POST", &path, Some(body), true).await;
    if reply.status == 200 {
        world.created = Some(reply.body.clone());
    }
    world.reply = Some(reply);
}

#[given(expr = "an operator has issued the merchant's billing statement from {string} to {string}")]
async fn has_issued(world: &mut PaymentsWorld, from: String, to: String) {
    issues(world, from, to).await;
    assert_eq!(world.reply().status, 200, "{}", world.reply().body);
}

#[when(expr = "an operator re-issues the statement because {string}")]
async fn reissues(world: &mut PaymentsWorld, remarks: String) {
    let path = format!(
        "/api/v1/operator/billing-statements/{}/reissue",
        statement_id(world)
    );
    let reply = send(
        world,
        "POST",
        &path,
        Some(json!({ "remarks": remarks })),
        true,
    )
    .await;
    if reply.status == 200 {
        world.created = Some(reply.body.clone());
    }
    world.reply = Some(reply);
}

/// The billing events the platform got for the merchant, at least `count`.
async fn events(world: &PaymentsWorld, count: usize) -> Vec<Received> {
    platform()
        .await
        .0
        .wait_for_key(&world.merchant().id, count, PATIENCE)
        .await
        .into_iter()
        .filter(|r| body_of(r)["event"] == "billing_statement_issued")
        // The scenarios bill periods of 2020; a run whose sandbox clock
        // crosses a month's end may also see the schedule bill the
        // merchant's own month, which is not the scenario's.
        .filter(|r| {
            body_of(r)["period_start"]
                .as_str()
                .is_some_and(|p| p.starts_with("2020-"))
        })
        .collect()
}

#[then(expr = "the platform receives {int} billing_statement_issued for the merchant")]
async fn receives(world: &mut PaymentsWorld, count: usize) {
    let got = events(world, count).await;
    assert_eq!(got.len(), count, "{got:?}");
}

#[then("the billing event is the issued statement, signed with the platform's secret")]
async fn event_is_statement(world: &mut PaymentsWorld) {
    let got = events(world, 1).await;
    let id = statement_id(world);
    let r = got
        .iter()
        .rev()
        .find(|r| body_of(r)["statement_id"] == id.as_str())
        .expect("the event of the issued statement");
    let (_, secret) = platform().await;
    let verifier = standardwebhooks::Webhook::new(secret).expect("a whsec_ secret");
    let mut headers = http::HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        let value = r.header(name).unwrap_or_else(|| panic!("no {name}"));
        headers.insert(name, value.parse().expect("a header value"));
    }
    verifier
        .verify(r.body.as_bytes(), &headers)
        .expect("the platform's secret verifies the billing event");
    assert!(r.header("x-signature").is_none(), "no merchant signature");
    let event = body_of(r);
    let shown = statement(world);
    for field in [
        "statement_id",
        "number",
        "version",
        "tenant_id",
        "billing_period",
        "period_start",
        "period_end",
        "issued_at",
        "totals",
        "document_url",
        "document_sha256",
        "document_bytes",
    ] {
        assert_eq!(event[field], shown[field], "{field}: {event}");
    }
    assert_eq!(event["tenant_id"], world.merchant().id.as_str());
    assert!(
        event.get("status").is_none() && event.get("issued_by").is_none(),
        "{event}"
    );
}

#[then(expr = "the statement's delivery is {string} after {int} attempt(s)")]
async fn delivery_is(world: &mut PaymentsWorld, status: String, attempts: i64) {
    let id = statement_id(world);
    delivery_reaches(world, &id, &status, attempts).await;
    let delivery = &world.reply().body;
    assert_eq!(delivery["order_kind"], "billing_statement", "{delivery}");
    assert_eq!(delivery["event"], "billing_statement_issued");
}

#[then(expr = "the statement bills {int} deposit(s) with fees {string} in {word}")]
async fn bills(world: &mut PaymentsWorld, count: i64, fees: String, currency: String) {
    let totals = statement(world)["totals"].clone();
    let line = totals
        .as_array()
        .and_then(|t| t.iter().find(|l| l["currency_code"] == currency.as_str()))
        .cloned()
        .unwrap_or_else(|| json!({ "deposit_count": 0, "total_fees": "0.0000" }));
    assert_eq!(line["deposit_count"], count, "{totals}");
    assert_eq!(line["total_fees"], fees.as_str(), "{totals}");
}

#[then("the merchant reads the statement and its PDF, whose SHA-256 the statement states")]
async fn merchant_reads(world: &mut PaymentsWorld) {
    let id = statement_id(world);
    let client = harness().await.client(world.merchant());
    let one = client
        .get_billing_statement(&id)
        .await
        .expect("the merchant reads its statement")
        .into_inner();
    let one = serde_json::to_value(one).expect("JSON");
    assert_eq!(one["number"], statement(world)["number"]);
    let list = client
        .list_billing_statements(None, std::num::NonZeroU64::new(200))
        .await
        .expect("the merchant lists its statements")
        .into_inner();
    assert!(list.items.iter().any(|s| s.statement_id == id), "listed");
    let pdf: Vec<u8> = client
        .get_billing_statement_document(&id)
        .await
        .expect("the merchant reads the PDF")
        .into_inner()
        .into_inner()
        .map_ok(|b| b.to_vec())
        .try_concat()
        .await
        .expect("the PDF's bytes");
    assert!(pdf.starts_with(b"%PDF-"), "a PDF");
    assert_eq!(
        hex::encode(Sha256::digest(&pdf)),
        statement(world)["document_sha256"]
            .as_str()
            .expect("a digest")
    );
}

#[then(expr = "the other merchant reading the statement is refused with {int} {string}")]
async fn other_refused(world: &mut PaymentsWorld, status: u16, code: String) {
    let id = statement_id(world);
    let other = world.other.clone().expect("another merchant");
    let got = harness()
        .await
        .client(&other)
        .get_billing_statement(&id)
        .await;
    match got {
        Err(merchant_client::merchant::Error::ErrorResponse(e)) => {
            assert_eq!(e.status().as_u16(), status);
            let body = serde_json::to_value(e.into_inner()).expect("JSON");
            assert_eq!(body["error_code"], code.as_str(), "{body}");
        }
        other => panic!("expected {status} {code}, got {other:?}"),
    }
}

#[then(expr = "the response field \"supersedes\" names the first version")]
async fn supersedes_first(world: &mut PaymentsWorld) {
    let body = &world.reply().body;
    let number = body["number"].as_str().expect("a number");
    let first = number.strip_suffix("-2").expect("version 2's number");
    assert_eq!(body["supersedes"], format!("{first}-1").as_str(), "{body}");
}
