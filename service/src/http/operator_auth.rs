//! Operators: people (or their tools) holding a token from configuration.
//! The token names its operator, whose name lands on what they approve.

use crate::app::App;
use crate::domain::error::ApiError;
use crate::http::observe::{answered, Answer};
use crate::keys::constant_time_eq;
use dropshot::{HttpError, HttpResponseOk, RequestContext};
use payments_wire::server::{BearerToken, SignedJson};
use serde::de::DeserializeOwned;
use std::future::Future;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operator {
    pub name: String,
}

pub fn authenticate(app: &App, token: &BearerToken) -> Result<Operator, ApiError> {
    let presented = token.0.as_deref().ok_or(ApiError::UnknownOperatorToken)?;
    // Compare against every token so the time taken does not say which
    // (or whether one) matched.
    let mut found = None;
    for op in &app.config.operators {
        if constant_time_eq(&op.token, presented) {
            found = Some(op.name.clone());
        }
    }
    let operator = found
        .map(|name| Operator { name })
        .ok_or(ApiError::UnknownOperatorToken)?;
    // The request's span names its operator from here on.
    tracing::Span::current().record("operator", operator.name.as_str());
    Ok(operator)
}

/// Every operator endpoint: the request's span, the bearer token checked,
/// then the work, answered as 200 (its error through the envelope).
pub async fn operate<T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &BearerToken,
    work: impl FnOnce(Arc<App>, Operator) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    answered(rqctx, async {
        let app = rqctx.context().clone();
        let operator = authenticate(&app, headers)?;
        // On the heap: an endpoint's work is a large future, and the
        // layers above would otherwise copy it on the worker's stack.
        Box::pin(work(app, operator)).await
    })
    .await
}

/// The same for an endpoint with a body: parsed only once the token is
/// checked, so that a caller without one learns nothing of the fields.
pub async fn operate_with<B: DeserializeOwned, T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &BearerToken,
    body: SignedJson<B>,
    work: impl FnOnce(Arc<App>, Operator, B) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    operate(rqctx, headers, |app, operator| async move {
        let parsed = body.parse().map_err(crate::http::body_error)?;
        work(app, operator, parsed).await
    })
    .await
}
