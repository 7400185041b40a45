//! `/console`: the operators' pages. Each action goes through the use case
//! the operator API calls, under the operator's role and inside
//! `app::audit::acting`, so it lands in the audit trail like a request to
//! the API; each listing is paged.

mod callbacks;
mod changes;
mod platform_events;
mod queue_filters;
mod queues;
mod records;
mod routing;
mod second_factor;

use crate::app::actor::Actor;
use crate::app::people::Operator;
use crate::app::web_sessions::Session;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::status::SessionRealm;
use crate::pages::respond;
use crate::pages::web::guard::Sections;
use crate::pages::web::sign_in;
use dropshot::{endpoint, Body, HttpError, RequestContext, UntypedBody};
use std::future::Future;
use std::sync::Arc;

pub use callbacks::*;
pub use changes::*;
pub use platform_events::*;
pub use queues::*;
pub(crate) use queues::{amount as queues_amount, money as queues_money};
pub use records::*;
pub use routing::*;
pub use second_factor::*;

const REALM: SessionRealm = SessionRealm::Console;
const STYLE: &str = include_str!("../../../assets/console.css");

pub(crate) const SECTIONS: Sections = Sections {
    realm: REALM,
    all: &[
        ("/console/withdrawals", "Withdrawals"),
        ("/console/bank", "Bank transactions"),
        ("/console/payouts", "Payouts in doubt"),
        ("/console/changes", "Change requests"),
        ("/console/callbacks", "Callbacks"),
        ("/console/orders", "Orders"),
        ("/console/merchants", "Merchants"),
        ("/console/routing", "Routing"),
        ("/console/operators", "Operators"),
        ("/console/platform-events", "Platform events"),
        ("/console/ledger", "Ledger"),
        ("/console/audit", "Audit trail"),
    ],
};

/// The operator a console session acts as.
fn operator(session: &Session) -> Result<Operator, ApiError> {
    session
        .operator()
        .cloned()
        .ok_or_else(|| ApiError::Internal("a console session names no operator".into()))
}

/// An operator's action from a console form: refused below the action's
/// role (403), else run as the API runs it: the use case is handed the
/// operator as the actor taking `action` under the request's id, and
/// appends the audit row itself.
async fn acting<T, F>(
    session: &Session,
    action: Action,
    request_id: &str,
    work: impl FnOnce(Actor) -> F,
) -> Result<T, ApiError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    let op = operator(session)?;
    op.may(action)?;
    tracing::Span::current().record("operator", op.name.as_str());
    work(Actor::operator(op, action, request_id)).await
}

#[endpoint { method = GET, path = "/console", unpublished = true }]
pub async fn console_home(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    let _ = rqctx;
    crate::pages::see_other("/console/withdrawals")
}

#[endpoint { method = GET, path = "/console/style.css", unpublished = true }]
pub async fn console_style(
    _rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    respond(
        http::StatusCode::OK,
        "text/css; charset=utf-8",
        STYLE.into(),
    )
}

#[endpoint { method = GET, path = "/console/login", unpublished = true }]
pub async fn console_login_page(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    sign_in::show(&rqctx, REALM).await
}

#[endpoint { method = POST, path = "/console/login", unpublished = true }]
pub async fn console_login(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    sign_in::submit(&rqctx, REALM, body).await
}

#[endpoint { method = POST, path = "/console/logout", unpublished = true }]
pub async fn console_logout(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    sign_in::sign_out(&rqctx, &SECTIONS, body).await
}

/// Every console endpoint, for the server to register.
pub fn register(api: &mut dropshot::ApiDescription<Arc<App>>) -> Result<(), String> {
    api.register(console_home)
        .and_then(|()| api.register(console_style))
        .and_then(|()| api.register(console_login_page))
        .and_then(|()| api.register(console_login))
        .and_then(|()| api.register(console_logout))
        .and_then(|()| api.register(console_second_factor_page))
        .and_then(|()| api.register(console_second_factor))
        .and_then(|()| api.register(console_withdrawals))
        .and_then(|()| api.register(console_review))
        .and_then(|()| api.register(console_bank))
        .and_then(|()| api.register(console_match))
        .and_then(|()| api.register(console_payouts))
        .and_then(|()| api.register(console_resolve))
        .and_then(|()| api.register(console_changes))
        .and_then(|()| api.register(console_decide_change))
        .and_then(|()| api.register(console_callbacks))
        .and_then(|()| api.register(console_retry_batch))
        .and_then(|()| api.register(console_callback))
        .and_then(|()| api.register(console_retry))
        .and_then(|()| api.register(console_orders))
        .and_then(|()| api.register(console_merchants))
        .and_then(|()| api.register(console_routing))
        .and_then(|()| api.register(console_propose_routing))
        .and_then(|()| api.register(console_operators))
        .and_then(|()| api.register(console_platform_events))
        .and_then(|()| api.register(console_invite))
        .and_then(|()| api.register(console_ledger))
        .and_then(|()| api.register(console_audit))
        .map_err(|e| e.to_string())
}
