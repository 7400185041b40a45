//! The portal's API keys: the merchant's keys with their restrictions (an
//! address allowlist, a read-only scope) and a form to set them, a new key
//! issued (a rotation) and shown once. Every change is the owner's action
//! in the audit trail.

use super::{merchant_of, owner_of, SECTIONS};
use crate::app::{api_keys, merchants, App};
use crate::domain::error::ApiError;
use crate::domain::people::OwnerAction;
use crate::domain::status::KeyScope;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{csrf_field, given, notice, table, when};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
use maud::{html, Markup};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

fn keys_form(session: &crate::app::web_sessions::Session) -> Markup {
    html! {
        form method="post" action="/portal/keys/rotate" {
            (csrf_field(session))
            div.field {
                label for="grace" { "Your current keys keep working for" }
                select id="grace" name="grace_seconds" {
                    option value="3600" { "1 hour" }
                    option value="86400" selected { "1 day" }
                    option value="604800" { "7 days" }
                    option value="0" { "no time: revoke them now" }
                }
            }
            button type="submit" { "Issue a new key" }
        }
    }
}

/// The form that sets where a working key is accepted from and what it may do.
fn restrict_form(csrf: &Markup, k: &api_keys::KeyView) -> Markup {
    let id = &k.id;
    html! {
        form.inline method="post" action={ "/portal/keys/restrict/" (id) } {
            (csrf)
            div {
                label for={ "addresses-" (id) } { "Accepted from (networks or addresses, separated by spaces; empty: anywhere)" }
                input type="text" id={ "addresses-" (id) } name="allowed_addresses" maxlength="2048" value=(k.allowed_addresses.join(" "));
            }
            div {
                label for={ "scope-" (id) } { "It may" }
                select id={ "scope-" (id) } name="scope" {
                    option value="full" selected[k.scope == KeyScope::Full] { "read and create orders" }
                    option value="read_only" selected[k.scope == KeyScope::ReadOnly] { "only read" }
                }
            }
            button type="submit" class="secondary" { "Save" }
        }
    }
}

/// The merchant's keys, each with where it is accepted from and what it
/// may do (a form for each key that works), and the rotation's form.
#[endpoint { method = GET, path = "/portal/keys", unpublished = true }]
pub async fn portal_keys(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(
        &rqctx,
        &SECTIONS,
        "/portal/keys",
        |app, session, fields| async move {
            let keys = api_keys::list(&app, &merchant_of(&session)?).await?;
            let csrf = csrf_field(&session);
            let rows: Vec<Vec<Markup>> = keys
                .iter()
                .map(|k| {
                    vec![
                        html! { code { (k.hint) } },
                        html! { (when(k.created_at)) },
                        html! { (k.expires_at.map(when).unwrap_or_else(|| "no end".into())) },
                        html! {
                            @if k.allowed_addresses.is_empty() { "anywhere" }
                            @else { (k.allowed_addresses.join(", ")) }
                        },
                        html! { (k.scope.as_str()) },
                        match k.active {
                            true => restrict_form(&csrf, k),
                            false => html! { span.muted { "Stopped working." } },
                        },
                    ]
                })
                .collect();
            let body = html! {
                (notice(&fields))
                (table(
                    "Your API keys",
                    &["Key", "Issued", "Stops", "Accepted from", "Scope", "Restrict"],
                    &rows
                ))
                h2 { "A new key" }
                p { "A new key works at once. It is shown once, on the next page: store it then. Your other keys keep working for the time you choose, then stop. It keeps the newest key's restrictions." }
                (keys_form(&session))
            };
            Reply::page("API keys", body)
        },
    )
    .await
}

#[derive(Deserialize, JsonSchema)]
pub struct KeyPath {
    key_id: String,
}

/// Sets where one of the merchant's keys is accepted from and what it may
/// do; the owner's action, in the audit trail.
#[endpoint { method = POST, path = "/portal/keys/restrict/{key_id}", unpublished = true }]
pub async fn portal_restrict_key(
    rqctx: RequestContext<Arc<App>>,
    path: Path<KeyPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    let key_id = path.into_inner().key_id;
    post(
        &rqctx,
        &SECTIONS,
        "/portal/keys",
        body,
        |app, session, fields| async move {
            let addresses: Vec<String> = fields
                .get("allowed_addresses")
                .map(|a| {
                    a.split(|c: char| c.is_whitespace() || c == ',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let scope = match given(&fields, "scope").as_deref() {
                Some("full") | None => KeyScope::Full,
                Some("read_only") => KeyScope::ReadOnly,
                Some(_) => {
                    return Err(ApiError::invalid_field(
                        "scope",
                        "must be full or read_only",
                    ))
                }
            };
            let owner = owner_of(&session, OwnerAction::RestrictApiKey, &request_id)?;
            let key = api_keys::restrict(
                &app,
                &owner,
                &merchant_of(&session)?,
                &key_id,
                &addresses,
                scope,
            )
            .await?;
            let said = format!(
                "Saved: {} is accepted from {}; it may {}.",
                key.hint,
                if key.allowed_addresses.is_empty() {
                    "anywhere".to_string()
                } else {
                    key.allowed_addresses.join(", ")
                },
                if key.scope == KeyScope::ReadOnly {
                    "only read"
                } else {
                    "read and create orders"
                }
            );
            let to: String = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("done", &said)
                .finish();
            Ok(Reply::Go(format!("/portal/keys?{to}")))
        },
    )
    .await
}

/// Issues the key and sends the browser to the page that shows it, with
/// a one-time handle: a reload of that page issues nothing
/// (`app::reveals`). The handle travels as `token`, the query parameter
/// the request log masks (`telemetry::redact::path`).
#[endpoint { method = POST, path = "/portal/keys/rotate", unpublished = true }]
pub async fn portal_rotate_key(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    post(
        &rqctx,
        &SECTIONS,
        "/portal/keys",
        body,
        |app, session, fields| async move {
            let merchant = merchant_of(&session)?;
            let grace = given(&fields, "grace_seconds")
                .map(|g| {
                    g.parse::<i64>().map_err(|_| {
                        ApiError::invalid_field(
                            "grace_seconds",
                            "must be a whole number of seconds",
                        )
                    })
                })
                .transpose()?;
            let issued = merchants::issue_api_key(
                &app,
                &owner_of(&session, OwnerAction::IssueApiKey, &request_id)?,
                &merchant,
                grace,
            )
            .await?;
            tracing::info!(merchant_id = merchant, "an owner issued an API key");
            let handle = crate::app::reveals::keep(&app, &session.csrf, &issued.api_key).await?;
            let until = issued
                .previous_keys_expire_at
                .map(|t| format!("&until={t}"))
                .unwrap_or_default();
            Ok(Reply::Go(format!("/portal/keys/new?token={handle}{until}")))
        },
    )
    .await
}

/// The key a post just issued, shown once.
#[endpoint { method = GET, path = "/portal/keys/new", unpublished = true }]
pub async fn portal_new_key(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(
        &rqctx,
        &SECTIONS,
        "/portal/keys",
        |app, session, fields| async move {
            let handle = given(&fields, "token").unwrap_or_default();
            let back = html! { p { a href="/portal/keys" { "Back to API keys" } } };
            let Some(key) = crate::app::reveals::take(&app, &session.csrf, &handle).await? else {
                return Reply::page(
                    "Your new API key",
                    html! {
                        p role="alert" { "This key was shown once already, and is not shown again. It works: if you did not copy it, issue another key." }
                        (back)
                    },
                );
            };
            let until = given(&fields, "until").and_then(|t| t.parse::<i64>().ok());
            Reply::page(
                "Your new API key",
                html! {
                    p.notice role="status" { "Copy this key now; it is not shown again." }
                    p.secret #new-key { (key) }
                    @if let Some(t) = until { p { "Your previous keys stop working at " (when(t)) "." } }
                    (back)
                },
            )
        },
    )
    .await
}
