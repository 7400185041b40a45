//! `/portal`: a merchant owner's pages. An owner arrives by an invitation
//! link (sets a password), signs in, and sees only its own merchant: every
//! page reads through the session's merchant, so another merchant's order
//! number is simply not found.

mod keys;
mod pages;

use crate::app::owners;
use crate::app::web_sessions::Session;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::SessionRealm;
use crate::observe::in_span;
use crate::pages::web::guard::Sections;
use crate::pages::web::{failed, forged, form, frame, given, query, same_origin, sign_in};
use crate::pages::{respond, see_other, serve};
use dropshot::{endpoint, Body, HttpError, RequestContext, UntypedBody};
use maud::html;
use std::sync::Arc;

pub use keys::*;
pub use pages::*;

const REALM: SessionRealm = SessionRealm::Portal;
const STYLE: &str = include_str!("../../../assets/console.css");

pub(crate) const SECTIONS: Sections = Sections {
    realm: REALM,
    all: &[
        ("/portal/orders", "Orders"),
        ("/portal/balances", "Balances"),
        ("/portal/statements", "Statements"),
        ("/portal/keys", "API keys"),
        ("/portal/settings", "Callback settings"),
    ],
};

/// The merchant a portal session may see.
fn merchant_of(session: &Session) -> Result<String, ApiError> {
    session
        .owner()
        .map(|o| o.merchant_id.clone())
        .ok_or_else(|| ApiError::Internal("a portal session names no owner".into()))
}

/// The session's owner, as the actor taking `action` here in the request
/// `request_id` (what the audit trail names).
fn owner_of(
    session: &Session,
    action: crate::domain::people::OwnerAction,
    request_id: &str,
) -> Result<crate::app::actor::Actor, ApiError> {
    session
        .owner_actor(action, request_id)
        .ok_or_else(|| ApiError::Internal("a portal session names no owner".into()))
}

#[endpoint { method = GET, path = "/portal", unpublished = true }]
pub async fn portal_home(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    let _ = rqctx;
    see_other("/portal/orders")
}

#[endpoint { method = GET, path = "/portal/style.css", unpublished = true }]
pub async fn portal_style(
    _rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    respond(
        http::StatusCode::OK,
        "text/css; charset=utf-8",
        STYLE.into(),
    )
}

#[endpoint { method = GET, path = "/portal/login", unpublished = true }]
pub async fn portal_login_page(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    sign_in::show(&rqctx, REALM).await
}

#[endpoint { method = POST, path = "/portal/login", unpublished = true }]
pub async fn portal_login(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    sign_in::submit(&rqctx, REALM, body).await
}

#[endpoint { method = POST, path = "/portal/logout", unpublished = true }]
pub async fn portal_logout(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    sign_in::sign_out(&rqctx, &SECTIONS, body).await
}

fn accept_form(
    status: http::StatusCode,
    token: &str,
    whom: Option<&(String, String)>,
    problem: Option<&str>,
) -> Result<http::Response<Body>, HttpError> {
    use crate::app::passwords::{MAX_CHARS, MIN_CHARS};
    let body = html! {
        @if let Some(p) = problem { p role="alert" { (p) } }
        @if let Some((email, merchant)) = whom {
            p { "You are invited as an owner of " strong { (merchant) } ", signing in as " strong { (email) } "." }
        }
        p { "Choose a password for the merchant portal: " (MIN_CHARS) " to " (MAX_CHARS) " characters." }
        form method="post" action=(owners::ACCEPT_PATH) {
            input type="hidden" name="token" value=(token);
            div.field {
                label for="password" { "New password" }
                input type="password" id="password" name="password" autocomplete="new-password" required minlength=(MIN_CHARS) maxlength=(MAX_CHARS);
            }
            div.field {
                label for="confirm" { "The same password again" }
                input type="password" id="confirm" name="confirm" autocomplete="new-password" required;
            }
            button type="submit" { "Set password" }
        }
    };
    serve(status, frame(REALM, None, "Accept your invitation", body))
}

/// The page an invitation link opens.
#[endpoint { method = GET, path = "/portal/invitations/accept", unpublished = true }]
pub async fn portal_accept_page(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        let token = given(&query(&rqctx.request), "token").unwrap_or_default();
        match owners::invitation_for(rqctx.context(), &token).await {
            Ok(whom) => accept_form(http::StatusCode::OK, &token, Some(&whom), None),
            Err(e) => failed(REALM, e),
        }
    })
    .await
}

#[endpoint { method = POST, path = "/portal/invitations/accept", unpublished = true }]
pub async fn portal_accept(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        if !same_origin(&rqctx.request) {
            return forged(REALM);
        }
        let fields = form(body.as_bytes());
        let token = fields.get("token").cloned().unwrap_or_default();
        let password = fields.get("password").cloned().unwrap_or_default();
        if fields.get("confirm") != Some(&password) {
            return accept_form(
                http::StatusCode::BAD_REQUEST,
                &token,
                None,
                Some("The two passwords differ."),
            );
        }
        match owners::accept(rqctx.context(), &token, password, &rqctx.request_id).await {
            Ok(accepted) => {
                tracing::info!(
                    merchant_id = accepted.merchant_id,
                    "owner invitation accepted"
                );
                let body = html! {
                    p.notice role="status" { "Your password is set. Sign in as " (accepted.email) "." }
                    p { a href="/portal/login" { "Sign in" } }
                };
                serve(
                    http::StatusCode::OK,
                    frame(REALM, None, "Invitation accepted", body),
                )
            }
            Err(e @ ApiError::InvalidField { .. }) => accept_form(
                http::StatusCode::BAD_REQUEST,
                &token,
                None,
                Some(&e.to_string()),
            ),
            Err(e) => failed(REALM, e),
        }
    })
    .await
}

/// Every portal endpoint, for the server to register.
pub fn register(api: &mut dropshot::ApiDescription<Arc<App>>) -> Result<(), String> {
    api.register(portal_home)
        .and_then(|()| api.register(portal_style))
        .and_then(|()| api.register(portal_login_page))
        .and_then(|()| api.register(portal_login))
        .and_then(|()| api.register(portal_logout))
        .and_then(|()| api.register(portal_accept_page))
        .and_then(|()| api.register(portal_accept))
        .and_then(|()| api.register(portal_orders))
        .and_then(|()| api.register(portal_order))
        .and_then(|()| api.register(portal_retry_callback))
        .and_then(|()| api.register(portal_balances))
        .and_then(|()| api.register(portal_statements))
        .and_then(|()| api.register(portal_daily_csv))
        .and_then(|()| api.register(portal_statement_document))
        .and_then(|()| api.register(portal_keys))
        .and_then(|()| api.register(portal_rotate_key))
        .and_then(|()| api.register(portal_restrict_key))
        .and_then(|()| api.register(portal_new_key))
        .and_then(|()| api.register(portal_settings))
        .and_then(|()| api.register(portal_set_timeout))
        .map_err(|e| e.to_string())
}
