//! Operators: people (or their tools) holding a token from configuration.
//! The token names its operator, whose name lands on what they approve.

use crate::app::App;
use crate::domain::error::ApiError;
use crate::keys::constant_time_eq;
use payments_wire::server::BearerToken;

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
