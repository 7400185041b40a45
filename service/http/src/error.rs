//! The status of each domain error on the wire, in the envelope
//! `{request_id, error_code, message}` dropshot writes for an `HttpError`.

use crate::domain::error::ApiError;
use dropshot::{ClientErrorStatusCode, HttpError};

/// A domain error as the wire answers it. A function rather than `From`:
/// both types are other crates', which Rust lets no third crate join by a
/// trait of theirs.
pub fn http_error(e: ApiError) -> HttpError {
    let code = Some(e.code().to_string());
    let client = |status: ClientErrorStatusCode| {
        HttpError::for_client_error(code.clone(), status, e.to_string())
    };
    match &e {
        ApiError::InvalidBody(_) | ApiError::InvalidField { .. } => {
            client(ClientErrorStatusCode::BAD_REQUEST)
        }
        ApiError::MissingHeader(_)
        | ApiError::InvalidTimestamp
        | ApiError::StaleTimestamp { .. }
        | ApiError::UnknownApiKey
        | ApiError::InvalidSignature
        | ApiError::UnknownOperatorToken => client(ClientErrorStatusCode::UNAUTHORIZED),
        ApiError::MerchantDisabled
        | ApiError::KeyNotAllowedFrom(_)
        | ApiError::KeyReadOnly
        | ApiError::RoleForbidden { .. }
        | ApiError::NotAPerson(_)
        | ApiError::SecondPersonRequired(_)
        | ApiError::FirstCallbackSecret
        | ApiError::TokenIsNobody
        | ApiError::OwnChangeRequest(_)
        | ApiError::NotVouched(_)
        | ApiError::VouchForOwn
        | ApiError::CreatorChecks(_) => client(ClientErrorStatusCode::FORBIDDEN),
        ApiError::OrderNotFound { .. }
        | ApiError::MerchantNotFound(_)
        | ApiError::OperatorNotFound(_)
        | ApiError::OperatorTokenNotFound(_)
        | ApiError::ApiKeyNotFound(_)
        | ApiError::ChangeRequestNotFound(_)
        | ApiError::OwnerNotFound(_)
        | ApiError::InvitationNotFound(_)
        | ApiError::StatementNotFound(_)
        | ApiError::AccountNotFound(_)
        | ApiError::BankTransactionNotFound(_)
        | ApiError::DeliveryNotFound(_)
        | ApiError::CashierSessionNotFound(_) => client(ClientErrorStatusCode::NOT_FOUND),
        ApiError::DuplicateMerchantOrderNo(_)
        | ApiError::InvalidStateTransition { .. }
        | ApiError::MerchantCodeTaken(_)
        | ApiError::OperatorEmailTaken
        | ApiError::OperatorSelfChange
        | ApiError::AlreadyApproved(_)
        | ApiError::ChangeRequestDecided { .. }
        | ApiError::OwnerAlreadyActive(_)
        | ApiError::PlatformEventsUnconfigured
        | ApiError::StatementAlreadyIssued(_)
        | ApiError::DuplicateBankReference(_) => client(ClientErrorStatusCode::CONFLICT),
        ApiError::InvitationEnded(_) => client(ClientErrorStatusCode::GONE),
        ApiError::UnsupportedCurrency(_)
        | ApiError::AmountOutOfRange { .. }
        | ApiError::NoChannelForAmount { .. }
        | ApiError::InsufficientBalance
        | ApiError::NoDenominations(_) => client(ClientErrorStatusCode::UNPROCESSABLE_ENTITY),
        ApiError::RateLimited { retry_after } => {
            let mut err = client(ClientErrorStatusCode::TOO_MANY_REQUESTS);
            let _ = err.add_header(http::header::RETRY_AFTER, retry_after.to_string());
            // A client told to wait gives its connection back: a crowd
            // refused does not keep thousands of them open.
            let _ = err.add_header(http::header::CONNECTION, "close");
            err
        }
        ApiError::NotImplemented(_) => not_implemented(code, e.to_string()),
        ApiError::Unavailable(detail) => retry_soon(
            code,
            "a dependency of the service is unavailable; retry later".into(),
            detail.clone(),
        ),
        ApiError::AtCapacity(_) => {
            let mut err = retry_soon(code, e.to_string(), e.to_string());
            let _ = err.add_header(http::header::CONNECTION, "close");
            err
        }
        ApiError::Internal(detail) => internal(code, detail.clone()),
    }
}

/// A bug: 500. dropshot's own 500 names itself `Internal`; the contract's
/// code, which generated clients parse, is `INTERNAL`. The cause stays in
/// the log, never in the answer.
fn internal(code: Option<String>, detail: String) -> HttpError {
    let mut err = HttpError::for_internal_error(detail);
    err.error_code = code;
    err
}

/// A feature this build does not have: 501, said as it is.
fn not_implemented(code: Option<String>, message: String) -> HttpError {
    HttpError {
        status_code: dropshot::ErrorStatusCode::NOT_IMPLEMENTED,
        error_code: code,
        external_message: message.clone(),
        internal_message: message,
        headers: None,
    }
}

/// A 503 worth retrying soon (a full pool, a lost database, a surface at
/// its bound): `Retry-After: 1`, so a client that is told does not hammer
/// sooner.
fn retry_soon(code: Option<String>, external: String, internal: String) -> HttpError {
    let mut err = HttpError {
        status_code: dropshot::ErrorStatusCode::SERVICE_UNAVAILABLE,
        error_code: code,
        external_message: external,
        internal_message: internal,
        headers: None,
    };
    let _ = err.add_header(http::header::RETRY_AFTER, "1");
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bug_is_answered_500_with_the_contracts_code_and_not_its_cause() {
        let err = http_error(ApiError::Internal("column x of row y".into()));
        assert_eq!(err.status_code.as_u16(), 500);
        assert_eq!(err.error_code.as_deref(), Some("INTERNAL"));
        assert!(!err.external_message.contains("column x"));
        assert_eq!(err.internal_message, "column x of row y");
    }
}
