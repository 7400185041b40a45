//! Operators: who a bearer token names (`app::people`), and whether their
//! role may take the endpoint's action (403 if not).

use crate::app::actor::Actor;
use crate::app::{people, App};
use crate::domain::error::ApiError;
use crate::domain::four_eyes::{self, Rule};
use crate::domain::people::Action;
use crate::observe::{answered, Answer};
use dropshot::{HttpError, HttpResponseOk, RequestContext};
use payments_wire::server::{BearerToken, SignedJson};
use serde::de::DeserializeOwned;
use std::future::Future;
use std::sync::Arc;

/// Every operator endpoint: the request's span, the bearer token checked,
/// the role checked against `action`, then the work, handed the operator as
/// the `Actor` taking `action` in this request (the use cases it calls
/// append the audit row of a change), answered as 200 (its error through
/// the envelope).
pub async fn operate<T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &BearerToken,
    action: Action,
    work: impl FnOnce(Arc<App>, Actor) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    answered(rqctx, async {
        let app = rqctx.context().clone();
        let presented = headers.0.as_deref().ok_or(ApiError::UnknownOperatorToken)?;
        let who = people::authenticate(&app, presented).await?;
        // The request's span names its operator from here on, refused or not.
        tracing::Span::current().record("operator", who.name.as_str());
        who.may(action)?;
        // An action that moves money is never one person's: past its role,
        // it is taken only by approving a change request (`changes`).
        if four_eyes::rule(action).0 == Rule::SecondPerson {
            return Err(ApiError::SecondPersonRequired(action.name()));
        }
        let actor = Actor::operator(who, action, rqctx.request_id.clone());
        // On the heap: an endpoint's work is a large future, and the
        // layers above would otherwise copy it on the worker's stack.
        Box::pin(work(app, actor)).await
    })
    .await
}

/// An endpoint whose action only a change request takes: the token and the
/// role are checked as for any other, then `operate` refuses it; the body
/// is never read.
pub async fn alone<T: Answer>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &BearerToken,
    action: Action,
) -> Result<HttpResponseOk<T>, HttpError> {
    operate(rqctx, headers, action, move |_, _| async move {
        Err(ApiError::SecondPersonRequired(action.name()))
    })
    .await
}

/// The same for an endpoint with a body: parsed only once the token and
/// the role are checked, so that a caller without them learns nothing of
/// the fields.
pub async fn operate_with<B: DeserializeOwned, T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &BearerToken,
    action: Action,
    body: SignedJson<B>,
    work: impl FnOnce(Arc<App>, Actor, B) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    operate(rqctx, headers, action, |app, operator| async move {
        let parsed = body.parse().map_err(crate::body_error)?;
        work(app, operator, parsed).await
    })
    .await
}
