//! Every failure a client can cause, with the `error_code` the spec
//! documents. Use cases return `ApiError`; `http::error` gives each its
//! status, and the store's errors become `Unavailable` or `Internal`.

use rust_decimal::Decimal;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("invalid body: {0}")]
    InvalidBody(String),
    #[error("invalid field `{field}`: {message}")]
    InvalidField { field: String, message: String },
    #[error("missing header `{0}`")]
    MissingHeader(&'static str),
    #[error("`x-timestamp` must be Unix epoch seconds")]
    InvalidTimestamp,
    #[error("`x-timestamp` is {skew} seconds away from the service's clock; at most {allowed} is tolerated")]
    StaleTimestamp { skew: i64, allowed: i64 },
    #[error("unknown API key")]
    UnknownApiKey,
    #[error("the signature does not match the request")]
    InvalidSignature,
    #[error("the merchant is disabled")]
    MerchantDisabled,
    #[error("no {kind} order `{reference}` for this merchant")]
    OrderNotFound {
        kind: &'static str,
        reference: String,
    },
    #[error("merchant_order_no `{0}` was already used with a different body")]
    DuplicateMerchantOrderNo(String),
    #[error("currency `{0}` is not supported")]
    UnsupportedCurrency(String),
    #[error("amount must be between {min} and {max} {currency}")]
    AmountOutOfRange {
        currency: String,
        min: Decimal,
        max: Decimal,
    },
    #[error("the available balance does not cover the amount and its fee")]
    InsufficientBalance,
    #[error("order `{order_no}` is `{status}`; {action} does not apply to it")]
    InvalidStateTransition {
        order_no: String,
        status: String,
        action: String,
    },
    #[error("missing or unknown operator token")]
    UnknownOperatorToken,
    #[error("no merchant `{0}`")]
    MerchantNotFound(String),
    #[error("merchant code `{0}` is taken")]
    MerchantCodeTaken(String),
    #[error("no receiving account `{0}`")]
    AccountNotFound(String),
    #[error("no callback delivery `{0}`")]
    DeliveryNotFound(String),
    #[error("no bank transaction `{0}`")]
    BankTransactionNotFound(String),
    #[error("bank reference `{0}` was already ingested on this account with different content")]
    DuplicateBankReference(String),
    #[error("no cashier session `{0}`")]
    CashierSessionNotFound(String),
    #[error("no denominations are configured for {0}; give `amount`")]
    NoDenominations(String),
    #[error("too many requests; retry after {retry_after} seconds")]
    RateLimited { retry_after: u64 },
    #[error("{0} is not implemented in this build")]
    NotImplemented(&'static str),
    #[error("service unavailable")]
    Unavailable(String),
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::InvalidField {
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::InvalidBody(_) => "INVALID_BODY",
            ApiError::InvalidField { .. } => "INVALID_FIELD",
            ApiError::MissingHeader(_) => "MISSING_HEADER",
            ApiError::InvalidTimestamp => "INVALID_TIMESTAMP",
            ApiError::StaleTimestamp { .. } => "STALE_TIMESTAMP",
            ApiError::UnknownApiKey => "UNKNOWN_API_KEY",
            ApiError::InvalidSignature => "INVALID_SIGNATURE",
            ApiError::MerchantDisabled => "MERCHANT_DISABLED",
            ApiError::OrderNotFound { .. } => "ORDER_NOT_FOUND",
            ApiError::DuplicateMerchantOrderNo(_) => "DUPLICATE_MERCHANT_ORDER_NO",
            ApiError::UnsupportedCurrency(_) => "UNSUPPORTED_CURRENCY",
            ApiError::AmountOutOfRange { .. } => "AMOUNT_OUT_OF_RANGE",
            ApiError::InsufficientBalance => "INSUFFICIENT_BALANCE",
            ApiError::InvalidStateTransition { .. } => "INVALID_STATE_TRANSITION",
            ApiError::UnknownOperatorToken => "UNKNOWN_OPERATOR_TOKEN",
            ApiError::MerchantNotFound(_) => "MERCHANT_NOT_FOUND",
            ApiError::MerchantCodeTaken(_) => "MERCHANT_CODE_TAKEN",
            ApiError::AccountNotFound(_) => "ACCOUNT_NOT_FOUND",
            ApiError::BankTransactionNotFound(_) => "BANK_TRANSACTION_NOT_FOUND",
            ApiError::DeliveryNotFound(_) => "DELIVERY_NOT_FOUND",
            ApiError::DuplicateBankReference(_) => "DUPLICATE_BANK_REFERENCE",
            ApiError::CashierSessionNotFound(_) => "CASHIER_SESSION_NOT_FOUND",
            ApiError::NoDenominations(_) => "NO_DENOMINATIONS",
            ApiError::RateLimited { .. } => "RATE_LIMITED",
            ApiError::NotImplemented(_) => "NOT_IMPLEMENTED",
            ApiError::Unavailable(_) => "SERVICE_UNAVAILABLE",
            ApiError::Internal(_) => "INTERNAL",
        }
    }
}
