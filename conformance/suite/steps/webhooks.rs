//! Steps for a merchant's callback signing scheme: choosing it, rotating
//! its callback secret, and checking each delivered callback's headers
//! with the Standard Webhooks specification's own library (the
//! `standardwebhooks` crate), not with code of this project.

use super::callbacks::{last, receiver};
use super::common::PaymentsWorld;
use conformance::receiver::Received;
use conformance::{harness, RawRequest, Reply};
use cucumber::{given, then, when};
use merchant_client::operator::types as op;
use serde_json::Value;

const WEBHOOK_HEADERS: [&str; 3] = ["webhook-id", "webhook-timestamp", "webhook-signature"];
const SEED_HEADERS: [&str; 3] = ["x-api-key", "x-timestamp", "x-signature"];

fn scheme_named(name: &str) -> op::CallbackSigningSchemeChoice {
    match name {
        "md5_key" => op::CallbackSigningSchemeChoice::Md5Key,
        "seed" => op::CallbackSigningSchemeChoice::Seed,
        "standard_webhooks" => op::CallbackSigningSchemeChoice::StandardWebhooks,
        other => panic!("no scheme {other} in this suite"),
    }
}

/// Keeps a secret the reply showed, so later steps verify with it.
fn keep_secret(world: &mut PaymentsWorld, reply: &Reply) {
    if let Some(secret) = reply.str_field("callback_secret") {
        world.callback_secrets.push(secret.to_string());
    }
}

#[when(expr = "an operator chooses {string} callback signing for the merchant")]
async fn choose_scheme(world: &mut PaymentsWorld, scheme: String) {
    let id = world.merchant().id.clone();
    let body = op::CallbackSigningRequest {
        scheme: scheme_named(&scheme),
    };
    let reply = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .set_callback_signing(&id, &body)
            .await,
    );
    keep_secret(world, &reply);
    world.reply = Some(reply);
}

/// The merchant's first callback secret, issued by two admins (operator
/// 0.16.0: choosing the scheme issues none), then the scheme chosen.
#[given("the merchant signs its callbacks with standard_webhooks")]
async fn signs_with_standard(world: &mut PaymentsWorld) {
    rotate(world, 0).await;
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(world.callback_secrets.len(), 1, "{}", reply.body);
    choose_scheme(world, "standard_webhooks".into()).await;
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.field("callback_secret").is_none(), "{}", reply.body);
}

#[when(expr = "an operator issues a new callback secret with an overlap of {int} seconds")]
async fn rotate(world: &mut PaymentsWorld, overlap: i64) {
    let id = world.merchant().id.clone();
    // Two people's since operator 0.15.0: filed and approved.
    let reply = conformance::four_eyes::take(
        "issue_callback_secret",
        Some(&id),
        serde_json::json!({"overlap_seconds": overlap}),
    )
    .await;
    keep_secret(world, &reply);
    world.reply = Some(reply);
}

#[when(regex = r#"^an operator sends (PUT|POST) "([^"]+)" with the body (.+)$"#)]
async fn operator_sends(world: &mut PaymentsWorld, method: String, path: String, body: String) {
    operator_raw(world, &method, path, body).await;
}

/// `{merchant_id}` in the path stands for the scenario's merchant and
/// `{order_no}` for the last order a `Given` step created; in the body,
/// `{text:N}` stands for N letters and `{unique:N}` for N letters and
/// digits no other run uses (a bound is tried at its length, not with a
/// table cell as long).
async fn operator_raw(world: &mut PaymentsWorld, method: &str, path: String, body: String) {
    let h = harness().await;
    let token = h
        .operator_token
        .clone()
        .expect("this scenario needs CONFORMANCE_OPERATOR_TOKEN");
    let mut path = path.replace("{merchant_id}", &world.merchant().id);
    if path.contains("{order_no}") {
        let created = world
            .created
            .as_ref()
            .expect("a Given step created an order");
        let order_no = created["order_no"].as_str().expect("its order_no");
        path = path.replace("{order_no}", order_no);
    }
    let mut raw = RawRequest::new(world.merchant(), path);
    raw.method = Some(method.to_string());
    raw.body = Some(expand_lengths(&body));
    raw.headers = vec![("authorization".into(), format!("Bearer {token}"))];
    let reply = h.send(raw).await.expect("a reply from the service");
    keep_secret(world, &reply);
    world.reply = Some(reply);
}

/// Replaces each `{text:N}` with N letters and each `{unique:N}` with N
/// letters and digits drawn afresh.
fn expand_lengths(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    loop {
        let next = ["{text:", "{unique:"]
            .iter()
            .filter_map(|p| rest.find(p).map(|at| (at, *p)))
            .min();
        let Some((at, prefix)) = next else { break };
        let after = &rest[at + prefix.len()..];
        let Some(close) = after.find('}') else { break };
        let n: usize = after[..close]
            .parse()
            .unwrap_or_else(|_| panic!("a length in {prefix}N}}"));
        out.push_str(&rest[..at]);
        if prefix == "{text:" {
            out.push_str(&"x".repeat(n));
        } else {
            let mut unique = String::new();
            while unique.len() < n {
                unique.push_str(&uuid::Uuid::new_v4().simple().to_string());
            }
            out.push_str(&unique[..n]);
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

#[then("the answer shows a new callback secret once")]
async fn shows_secret(world: &mut PaymentsWorld) {
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    let secret = reply
        .str_field("callback_secret")
        .expect("a callback_secret");
    assert!(secret.starts_with("whsec_"), "the Standard Webhooks prefix");
    let read = read_signing(world).await;
    assert!(
        !read.body.to_string().contains(secret),
        "a later read never shows the secret"
    );
    assert!(read.field("callback_secret").is_none(), "{}", read.body);
}

#[then("the answer shows no callback secret")]
async fn shows_no_secret(world: &mut PaymentsWorld) {
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.field("callback_secret").is_none(), "{}", reply.body);
}

#[then("the answer says when the previous secrets stop signing")]
async fn previous_end(world: &mut PaymentsWorld) {
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.str_field("previous_secrets_expire_at").is_some(),
        "{}",
        reply.body
    );
}

async fn read_signing(world: &PaymentsWorld) -> Reply {
    let id = world.merchant().id.clone();
    Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .read_callback_signing(&id)
            .await,
    )
}

#[then(
    expr = "an operator reading the merchant's callback signing sees {string} with {int} secret(s)"
)]
async fn reads_signing(world: &mut PaymentsWorld, scheme: String, count: usize) {
    let read = read_signing(world).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(
        read.str_field("scheme"),
        Some(scheme.as_str()),
        "{}",
        read.body
    );
    let secrets = read
        .field("secrets")
        .and_then(Value::as_array)
        .expect("secrets");
    assert_eq!(secrets.len(), count, "{}", read.body);
    for s in &world.callback_secrets {
        assert!(
            !read.body.to_string().contains(s.as_str()),
            "no secret value"
        );
    }
}

fn header_map(r: &Received) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in &r.headers {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(value),
        ) {
            map.append(n, v);
        }
    }
    map
}

/// Whether the Standard Webhooks library accepts the callback under
/// `secret` (its own timestamp window of 5 minutes included).
fn verifies(r: &Received, secret: &str) -> bool {
    standardwebhooks::Webhook::new(secret)
        .expect("a secret in the specification's form")
        .verify(r.body.as_bytes(), &header_map(r))
        .is_ok()
}

fn signatures(r: &Received) -> Vec<String> {
    r.header("webhook-signature")
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

#[then(
    expr = "the callback carries {int} signature(s), verifying with the newest {int} secret(s) only"
)]
async fn carries_signatures(world: &mut PaymentsWorld, count: usize, newest: usize) {
    let r = last(world);
    assert_eq!(signatures(&r).len(), count, "{:?}", r.headers);
    let secrets = &world.callback_secrets;
    assert!(secrets.len() >= newest, "the scenario issued its secrets");
    let (older, newer) = secrets.split_at(secrets.len() - newest);
    for s in newer {
        assert!(
            verifies(&r, s),
            "a signature verifies with each newer secret"
        );
    }
    for s in older {
        assert!(
            !verifies(&r, s),
            "no signature verifies with a secret past its overlap"
        );
    }
    for s in signatures(&r) {
        assert!(s.starts_with("v1,"), "a `v1,` signature: {s}");
    }
}

#[then("the callback carries the Standard Webhooks headers and no seed header")]
async fn standard_headers(world: &mut PaymentsWorld) {
    let r = last(world);
    for name in WEBHOOK_HEADERS {
        assert!(
            r.header(name).is_some_and(|v| !v.is_empty()),
            "{name}: {:?}",
            r.headers
        );
    }
    for name in SEED_HEADERS {
        assert!(r.header(name).is_none(), "no {name}: {:?}", r.headers);
    }
    let stamp: i64 = r
        .header("webhook-timestamp")
        .and_then(|t| t.parse().ok())
        .expect("webhook-timestamp in Unix seconds");
    assert!(
        (stamp - r.wall_unix).abs() <= 5,
        "{stamp} vs {}",
        r.wall_unix
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
}

#[then("the callback carries no Standard Webhooks header")]
async fn no_standard_headers(world: &mut PaymentsWorld) {
    let r = last(world);
    for name in WEBHOOK_HEADERS {
        assert!(r.header(name).is_none(), "no {name}: {:?}", r.headers);
    }
}

#[then("no header of any callback holds the merchant's API key or a callback secret")]
async fn no_secret_in_headers(world: &mut PaymentsWorld) {
    let key = world.merchant().api_key.clone();
    let mut secrets: Vec<String> = world.callback_secrets.clone();
    // The secret's bytes, as a careless implementation might send them.
    secrets.extend(
        world
            .callback_secrets
            .iter()
            .filter_map(|s| s.strip_prefix("whsec_").map(String::from)),
    );
    for r in receiver(world).received() {
        for (name, value) in &r.headers {
            assert!(!value.contains(&key), "{name} carries the API key");
            for s in &secrets {
                assert!(
                    !value.contains(s.as_str()),
                    "{name} carries a callback secret"
                );
            }
        }
    }
}

#[then("the callback's webhook-id is its delivery's id")]
async fn webhook_id_is_delivery(world: &mut PaymentsWorld) {
    let r = last(world);
    let order_no = world.created()["order_no"]
        .as_str()
        .expect("an order")
        .to_string();
    let page = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .list_callback_deliveries(None, None, None, Some(10), None, Some(&order_no), None)
            .await,
    );
    let id = page.body["items"][0]["id"]
        .as_str()
        .expect("a delivery record");
    assert_eq!(r.header("webhook-id"), Some(id), "{}", page.body);
}

#[then("every attempt carried the same webhook-id and body, each signed for its own timestamp")]
async fn same_webhook_id(world: &mut PaymentsWorld) {
    let got = receiver(world).received();
    assert!(got.len() > 1, "more than one attempt arrived");
    let secret = world.callback_secrets.last().expect("a secret").clone();
    for w in got.windows(2) {
        assert_eq!(w[0].header("webhook-id"), w[1].header("webhook-id"));
        assert_eq!(w[0].body, w[1].body, "the body is byte-identical");
    }
    for r in &got {
        assert!(
            verifies(r, &secret),
            "each attempt verifies: {:?}",
            r.headers
        );
    }
}
