//! Merchant owners invited, and the platform event `tenant_owner_invite`
//! the suite's platform receiver gets for each invitation.

use super::common::PaymentsWorld;
use conformance::receiver::{Answer, Received};
use conformance::{harness, witness_secret, RawRequest, Reply};
use cucumber::{given, then, when};
use merchant_client::operator::types as op;
use serde_json::{json, Value};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(15);

/// Sends `method path` as the suite's operator (or, `bearer: false`, with
/// no operator token at all).
pub(super) async fn send(
    world: &PaymentsWorld,
    method: &str,
    path: &str,
    body: Option<Value>,
    bearer: bool,
) -> Reply {
    let h = harness().await;
    let mut raw = RawRequest::new(world.merchant(), path.to_string());
    raw.method = Some(method.to_string());
    raw.body = body.map(|b| b.to_string());
    if bearer {
        let token = h
            .operator_token
            .clone()
            .expect("this scenario needs an operator token");
        raw.headers = vec![("authorization".into(), format!("Bearer {token}"))];
    }
    h.send(raw).await.expect("a reply from the service")
}

/// The scenario's invitee: an address no other scenario uses, so that the
/// platform receiver, shared by every scenario, tells its events apart.
fn invitee(world: &mut PaymentsWorld, name: &str) -> String {
    let tag = world.tag();
    world
        .invitee
        .get_or_insert_with(|| format!("{name}-{tag}@example.test"))
        .clone()
}

fn the_invitee(world: &PaymentsWorld) -> String {
    world
        .invitee
        .clone()
        .expect("the scenario invited someone (an operator invites ...)")
}

pub(super) async fn platform() -> &'static (conformance::receiver::Receiver, String) {
    harness()
        .await
        .platform()
        .unwrap_or_else(|e| panic!("{e:#}"))
}

async fn invite(world: &mut PaymentsWorld, email: String) {
    let path = format!(
        "/api/v1/operator/merchants/{}/owner-invitations",
        world.merchant().id
    );
    let reply = send(world, "POST", &path, Some(json!({ "email": email })), true).await;
    if reply.status == 200 {
        world.created = Some(reply.body.clone());
    }
    world.reply = Some(reply);
}

#[when(expr = "an operator invites {string} to own the merchant")]
async fn invites(world: &mut PaymentsWorld, name: String) {
    let email = invitee(world, &name);
    invite(world, email).await;
}

#[when(expr = "an operator invites the email {string} to own the merchant")]
async fn invites_email(world: &mut PaymentsWorld, email: String) {
    invite(world, email).await;
}

#[given(expr = "an operator has invited {string} to own the merchant")]
async fn has_invited(world: &mut PaymentsWorld, name: String) {
    invites(world, name).await;
    assert_eq!(world.reply().status, 200, "{}", world.reply().body);
}

fn invitation_id(world: &PaymentsWorld) -> String {
    world.created()["invitation_id"]
        .as_str()
        .expect("an invitation")
        .to_string()
}

#[when("an operator issues the invitation again")]
async fn resends(world: &mut PaymentsWorld) {
    let path = format!(
        "/api/v1/operator/owner-invitations/{}/resend",
        invitation_id(world)
    );
    let reply = send(world, "POST", &path, None, true).await;
    if reply.status == 200 {
        world.created = Some(reply.body.clone());
    }
    world.reply = Some(reply);
}

#[when("an operator revokes the invitation")]
async fn revokes(world: &mut PaymentsWorld) {
    let path = format!(
        "/api/v1/operator/owner-invitations/{}/revoke",
        invitation_id(world)
    );
    world.reply = Some(send(world, "POST", &path, None, true).await);
}

#[given(expr = "the platform answers {int} first for the invitee")]
async fn platform_answers(world: &mut PaymentsWorld, status: u16) {
    let email = invitee(world, "owner");
    platform()
        .await
        .0
        .script_for(&email, &[Answer::Status(status)]);
}

/// The platform events for the invitee, at least `count` of them.
async fn events(world: &PaymentsWorld, count: usize) -> Vec<Received> {
    let got = platform()
        .await
        .0
        .wait_for_key(&the_invitee(world), count, PATIENCE)
        .await;
    for r in &got {
        // The link and its token are secrets: the log check looks for them.
        if let Some(link) = body_of(r)["link"].as_str() {
            witness_secret(link);
            if let Some((_, token)) = link.split_once("token=") {
                witness_secret(token);
            }
        }
    }
    got
}

pub(super) fn body_of(r: &Received) -> Value {
    serde_json::from_str(&r.body).expect("a JSON body")
}

/// The link of the `nth` (0-based) distinct invitation the platform got.
async fn link(world: &PaymentsWorld, nth: usize) -> String {
    let got = events(world, nth + 1).await;
    let mut links: Vec<String> = Vec::new();
    for r in &got {
        let l = body_of(r)["link"].as_str().expect("a link").to_string();
        if !links.contains(&l) {
            links.push(l);
        }
    }
    links
        .get(nth)
        .cloned()
        .unwrap_or_else(|| panic!("the platform got {} links", links.len()))
}

#[then(expr = "the platform receives {int} {string} for the invitee")]
async fn receives(world: &mut PaymentsWorld, count: usize, event: String) {
    let got = events(world, count).await;
    assert_eq!(got.len(), count, "{got:?}");
    for r in &got {
        assert_eq!(body_of(r)["event"], event.as_str());
        assert!(
            !r.path.contains("callback_url"),
            "the platform's address, never a merchant's"
        );
    }
}

async fn last_event_body(world: &PaymentsWorld) -> Value {
    let got = platform_received(world).await;
    body_of(got.last().expect("a platform event"))
}

async fn platform_received(world: &PaymentsWorld) -> Vec<Received> {
    platform().await.0.received_for(&the_invitee(world))
}

#[then(expr = "the platform event has exactly the fields {string}")]
async fn exact_fields(world: &mut PaymentsWorld, fields: String) {
    events(world, 1).await;
    let body = last_event_body(world).await;
    let mut got: Vec<&str> = body
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut want: Vec<&str> = fields.split(',').map(str::trim).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[then("the platform event is signed with the platform's secret and no merchant key")]
async fn signed(world: &mut PaymentsWorld) {
    let got = events(world, 1).await;
    let r = got.last().expect("a platform event");
    let (_, secret) = platform().await;
    let verifier = standardwebhooks::Webhook::new(secret).expect("a whsec_ secret");
    let mut headers = http::HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        let value = r
            .header(name)
            .unwrap_or_else(|| panic!("the platform event has no {name}"));
        headers.insert(name, value.parse().expect("a header value"));
    }
    verifier
        .verify(r.body.as_bytes(), &headers)
        .expect("the platform's secret verifies the platform event");
    for merchant_header in ["x-api-key", "x-signature", "x-timestamp"] {
        assert!(r.header(merchant_header).is_none(), "{merchant_header}");
    }
}

#[then("the platform event names the merchant, the invitee and the invitation")]
async fn names(world: &mut PaymentsWorld) {
    events(world, 1).await;
    let body = last_event_body(world).await;
    assert_eq!(body["tenant_id"], world.merchant().id.as_str());
    assert_eq!(body["email"], the_invitee(world).as_str());
    assert_eq!(body["invitation_id"], world.created()["invitation_id"]);
    assert_eq!(body["role"], "owner");
    assert_eq!(body["state"], "pending");
    let link = body["link"].as_str().expect("a link");
    assert!(link.contains("token=inv_"), "{link}");
    assert!(
        !world.created().to_string().contains(link),
        "the response to the admin never holds the link"
    );
}

#[then(expr = "the platform event expires {int} seconds after it was issued")]
async fn expires_after(world: &mut PaymentsWorld, seconds: i64) {
    events(world, 1).await;
    let body = last_event_body(world).await;
    let at = |f: &str| {
        chrono::DateTime::parse_from_rfc3339(body[f].as_str().expect("a time"))
            .expect("RFC 3339")
            .timestamp()
    };
    assert_eq!(at("expires_at") - at("issued_at"), seconds, "{body}");
}

#[then(expr = "the last platform event's reason is {string} and its link is new")]
async fn last_reason(world: &mut PaymentsWorld, reason: String) {
    let first = link(world, 0).await;
    let second = link(world, 1).await;
    assert_ne!(first, second);
    assert_eq!(last_event_body(world).await["reason"], reason.as_str());
}

async fn accept(world: &mut PaymentsWorld, token: String, password: String) {
    witness_secret(&password);
    let body = json!({ "token": token, "password": password });
    world.reply = Some(
        send(
            world,
            "POST",
            "/api/v1/owner/invitations/accept",
            Some(body),
            false,
        )
        .await,
    );
}

fn token_of(link: &str) -> String {
    link.split_once("token=")
        .map(|(_, t)| t.to_string())
        .expect("a link with a token")
}

#[when(expr = "the invitee accepts the link with the password {string}")]
async fn accepts(world: &mut PaymentsWorld, password: String) {
    let got = events(world, 1).await;
    let newest = body_of(got.last().expect("a platform event"))["link"]
        .as_str()
        .expect("a link")
        .to_string();
    accept(world, token_of(&newest), password).await;
}

#[when(expr = "the invitee accepts the first link with the password {string}")]
async fn accepts_first(world: &mut PaymentsWorld, password: String) {
    let first = link(world, 0).await;
    accept(world, token_of(&first), password).await;
}

#[when(expr = "someone accepts the token {string} with the password {string}")]
async fn accepts_token(world: &mut PaymentsWorld, token: String, password: String) {
    accept(world, token, password).await;
}

#[then(expr = "the merchant's invitations are {string}")]
async fn invitations_are(world: &mut PaymentsWorld, states: String) {
    let path = format!(
        "/api/v1/operator/merchants/{}/owner-invitations",
        world.merchant().id
    );
    let reply = send(world, "GET", &path, None, true).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    // As a set: two invitations issued within one second list in either
    // order (newest first by the second, then by id).
    let mut got: Vec<&str> = reply.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["state"].as_str().expect("a state"))
        .collect();
    let mut want: Vec<&str> = states
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{}", reply.body);
    assert!(
        !reply.body.to_string().contains("token="),
        "a listing never holds a link"
    );
}

/// The invitation's delivery record, as an operator reads it, once it
/// reached `status` after `attempts` attempts.
#[then(expr = "the invitation's delivery is {string} after {int} attempt(s)")]
async fn delivery_is(world: &mut PaymentsWorld, status: String, attempts: i64) {
    let id = invitation_id(world);
    delivery_reaches(world, &id, &status, attempts).await;
}

/// Waits until the delivery of the platform event about `id` (its
/// `order_no`) is `status` after `attempts`, and keeps it as the reply.
pub(super) async fn delivery_reaches(
    world: &mut PaymentsWorld,
    id: &str,
    status: &str,
    attempts: i64,
) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let page = send(
            world,
            "GET",
            &format!("/api/v1/operator/callbacks?order_no={id}&limit=10"),
            None,
            true,
        )
        .await;
        if let Some(delivery) = page.body["items"][0]["id"].as_str() {
            let read = send(
                world,
                "GET",
                &format!("/api/v1/operator/callbacks/{delivery}"),
                None,
                true,
            )
            .await;
            if read.body["status"] == status && read.body["attempts"] == attempts {
                world.reply = Some(read);
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the delivery did not reach {status} after {attempts}: {}",
                read.body
            );
        } else {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no delivery record for invitation {id}"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[then("the delivery log shows the platform event with its link redacted")]
async fn redacted(world: &mut PaymentsWorld) {
    let delivery = &world.reply().body;
    assert_eq!(delivery["order_kind"], "owner_invitation", "{delivery}");
    assert_eq!(delivery["event"], "tenant_owner_invite");
    let shown: Value =
        serde_json::from_str(delivery["body"].as_str().expect("a body")).expect("JSON");
    assert_eq!(shown["link"], "[redacted]", "{shown}");
    assert_eq!(shown["email"], the_invitee(world).as_str());
    // The platform's address: the port of the suite's platform receiver
    // (a deployment may give it any path).
    let (receiver, _) = platform().await;
    let port = |u: &str| {
        url::Url::parse(u)
            .ok()
            .and_then(|u| u.port_or_known_default())
    };
    let sent_to = delivery["callback_url"].as_str().expect("a callback_url");
    assert_eq!(port(sent_to), port(&receiver.url), "{sent_to}");
}

#[then("every platform attempt carried the same body and webhook-id")]
async fn same_bytes(world: &mut PaymentsWorld) {
    let got = platform_received(world).await;
    assert!(got.len() > 1);
    assert!(got.windows(2).all(|w| w[0].body == w[1].body));
    assert!(got
        .windows(2)
        .all(|w| w[0].header("webhook-id") == w[1].header("webhook-id")));
}

#[then(expr = "the audit trail of the merchant holds {int} {string} row(s)")]
async fn audited_on_merchant(world: &mut PaymentsWorld, count: usize, action: String) {
    let path = format!(
        "/api/v1/operator/audit-events?target_id={}&action={action}",
        world.merchant().id
    );
    let reply = send(world, "GET", &path, None, true).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let rows = reply.body["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), count, "{rows:#?}");
    for r in &rows {
        assert_eq!(r["target_type"], "merchant", "{r}");
        assert!(!r.to_string().contains("token="), "no link in the trail");
    }
}

/// The invitee's owner id, from the operator's listing of the merchant's
/// owners.
async fn invitee_id(world: &PaymentsWorld) -> String {
    let email = world.invitee.clone().expect("an invitee");
    let merchant_id = world.merchant().id.clone();
    let listed = Reply::of(
        harness()
            .await
            .operator()
            .unwrap()
            .list_owners(&merchant_id)
            .await,
    );
    listed.body["items"]
        .as_array()
        .and_then(|items| items.iter().find(|o| o["email"] == email.as_str()))
        .and_then(|o| o["owner_id"].as_str())
        .expect("the invitee among the merchant's owners")
        .to_string()
}

async fn set_owner_status(
    world: &mut PaymentsWorld,
    status: op::SetOwnerStatusRequestStatus,
    reason: String,
) {
    let owner_id = invitee_id(world).await;
    let body = op::SetOwnerStatusRequest { status, reason };
    let operator = harness().await.operator().unwrap();
    world.reply = Some(Reply::of(operator.set_owner_status(&owner_id, &body).await));
}

#[when(expr = "an operator disables the invitee because {string}")]
async fn disable_invitee(world: &mut PaymentsWorld, reason: String) {
    set_owner_status(world, op::SetOwnerStatusRequestStatus::Disabled, reason).await;
}

#[when(expr = "an operator enables the invitee because {string}")]
async fn enable_invitee(world: &mut PaymentsWorld, reason: String) {
    set_owner_status(world, op::SetOwnerStatusRequestStatus::Active, reason).await;
}

#[when("an operator lists the merchant's owners")]
async fn list_owners(world: &mut PaymentsWorld) {
    let merchant_id = world.merchant().id.clone();
    let operator = harness().await.operator().unwrap();
    world.reply = Some(Reply::of(operator.list_owners(&merchant_id).await));
}

#[then(expr = "the listing has the invitee as {string}")]
async fn listing_has_invitee(world: &mut PaymentsWorld, status: String) {
    let email = world.invitee.clone().expect("an invitee");
    let items = world.reply().body["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let statuses: Vec<&str> = items
        .iter()
        .filter(|o| o["email"] == email.as_str())
        .filter_map(|o| o["status"].as_str())
        .collect();
    assert_eq!(statuses, vec![status.as_str()], "{items:?}");
}
