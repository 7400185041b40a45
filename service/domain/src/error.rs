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
    /// A key with an address allowlist, from an address outside it
    /// (answered as `MERCHANT_DISABLED`: the merchant may not act so).
    #[error("this API key is not accepted from the address {0} (its allowlist names the addresses it is accepted from)")]
    KeyNotAllowedFrom(String),
    /// A create signed with a read-only key (also `MERCHANT_DISABLED`).
    #[error("this API key may only read: a create needs a key of the full scope")]
    KeyReadOnly,
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
    /// Every channel the routing table lists for the currency is closed to
    /// this amount (its band or its own limit per order).
    #[error("no channel takes {currency} {direction}s of {amount}")]
    NoChannelForAmount {
        currency: String,
        direction: &'static str,
        amount: Decimal,
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
    #[error("the operator's role `{role}` may not {action} (it needs `{needs}`)")]
    RoleForbidden {
        role: &'static str,
        action: &'static str,
        needs: &'static str,
    },
    #[error("no operator `{0}`")]
    OperatorNotFound(String),
    #[error("an operator with this email exists")]
    OperatorEmailTaken,
    #[error("no token `{0}` of this operator")]
    OperatorTokenNotFound(String),
    #[error("no API key `{0}` of this merchant")]
    ApiKeyNotFound(String),
    #[error("no owner `{0}`")]
    OwnerNotFound(String),
    #[error("an operator may not change its own role or status")]
    OperatorSelfChange,
    #[error("withdrawal `{0}` already has this operator's approval; a second approver is needed")]
    AlreadyApproved(String),
    /// A configuration token is for bootstrap: it is nobody in particular,
    /// so it never counts as one of two people.
    #[error("withdrawal `{0}` needs two people; a configuration token is not one: approve with an operator's own token")]
    NotAPerson(String),
    /// An action that creates, moves or releases money is never one
    /// person's: it is filed as a change request for a second to approve.
    #[error("{0} moves money, so one person may not take it alone: file it as a change request (POST /api/v1/operator/change-requests) for a second person to approve")]
    SecondPersonRequired(&'static str),
    /// A merchant's first callback secret is issued as every later one is,
    /// by two admins: choosing `standard_webhooks` without one would show
    /// it to the one admin who chose.
    #[error("the merchant has no callback secret yet, and choosing standard_webhooks would show its first one to one admin: file `issue_callback_secret` as an approval request (POST /api/v1/operator/approval-requests), whose second admin's approval shows the secret, then choose the scheme")]
    FirstCallbackSecret,
    /// A configuration token is nobody in particular: it neither files nor
    /// decides a change request.
    #[error("a configuration token is for bootstrap and is nobody in particular: file and decide change requests with an operator's own token")]
    TokenIsNobody,
    #[error(
        "change request `{0}` was filed by this operator; a second, different person decides it"
    )]
    OwnChangeRequest(String),
    #[error("operator `{0}` was made or raised by one admin alone, so does not yet count as a second person: a second admin vouches for them (POST /api/v1/operator/operators/{{operator_id}}/vouch)")]
    NotVouched(String),
    #[error("this operator created merchant `{0}`, so does not check its money: a different person approves")]
    CreatorChecks(String),
    #[error("an admin does not vouch for an operator they made or raised, nor for themselves: a second admin does")]
    VouchForOwn,
    #[error("no change request `{0}`")]
    ChangeRequestNotFound(String),
    #[error("change request `{id}` is {status}; only a pending one can be decided")]
    ChangeRequestDecided { id: String, status: &'static str },
    #[error("no owner invitation {0}")]
    InvitationNotFound(String),
    #[error("this invitation is {0}; ask for a new one")]
    InvitationEnded(&'static str),
    #[error("the merchant's owner `{0}` has already accepted an invitation")]
    OwnerAlreadyActive(String),
    #[error("no platform_events_url is configured: an invitation's link would reach no one")]
    PlatformEventsUnconfigured,
    #[error("no billing statement `{0}`")]
    StatementNotFound(String),
    #[error("billing statement `{0}` already covers this period; re-issue it to correct it")]
    StatementAlreadyIssued(String),
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
    /// Every place for requests of this kind is taken: a moment later
    /// there will be one.
    #[error("the {0} is handling as many requests as it takes at once; retry in a moment")]
    AtCapacity(&'static str),
    #[error("internal error")]
    Internal(String),
}

impl From<crate::clock::OutOfRange> for ApiError {
    fn from(e: crate::clock::OutOfRange) -> Self {
        ApiError::Internal(e.to_string())
    }
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
            ApiError::MerchantDisabled | ApiError::KeyNotAllowedFrom(_) | ApiError::KeyReadOnly => {
                "MERCHANT_DISABLED"
            }
            ApiError::OrderNotFound { .. } => "ORDER_NOT_FOUND",
            ApiError::DuplicateMerchantOrderNo(_) => "DUPLICATE_MERCHANT_ORDER_NO",
            ApiError::UnsupportedCurrency(_) => "UNSUPPORTED_CURRENCY",
            ApiError::AmountOutOfRange { .. } | ApiError::NoChannelForAmount { .. } => {
                "AMOUNT_OUT_OF_RANGE"
            }
            ApiError::InsufficientBalance => "INSUFFICIENT_BALANCE",
            ApiError::InvalidStateTransition { .. } => "INVALID_STATE_TRANSITION",
            ApiError::UnknownOperatorToken => "UNKNOWN_OPERATOR_TOKEN",
            ApiError::RoleForbidden { .. } => "ROLE_FORBIDDEN",
            ApiError::OperatorNotFound(_) => "OPERATOR_NOT_FOUND",
            ApiError::OperatorEmailTaken => "OPERATOR_EMAIL_TAKEN",
            ApiError::OperatorTokenNotFound(_) => "OPERATOR_TOKEN_NOT_FOUND",
            ApiError::ApiKeyNotFound(_) => "API_KEY_NOT_FOUND",
            ApiError::OwnerNotFound(_) => "OWNER_NOT_FOUND",
            ApiError::OperatorSelfChange => "OPERATOR_SELF_CHANGE",
            // A state conflict as the contract has always named one: an
            // integration built before four-eyes reads it.
            ApiError::AlreadyApproved(_) => "INVALID_STATE_TRANSITION",
            // Who may act, as the contract has always named it: a token
            // that is nobody in particular may not take the second place.
            ApiError::NotAPerson(_) => "ROLE_FORBIDDEN",
            ApiError::SecondPersonRequired(_)
            | ApiError::FirstCallbackSecret
            | ApiError::TokenIsNobody
            | ApiError::OwnChangeRequest(_)
            | ApiError::NotVouched(_)
            | ApiError::VouchForOwn
            | ApiError::CreatorChecks(_) => "ROLE_FORBIDDEN",
            ApiError::ChangeRequestNotFound(_) => "CHANGE_REQUEST_NOT_FOUND",
            ApiError::ChangeRequestDecided { .. } => "INVALID_STATE_TRANSITION",
            ApiError::InvitationNotFound(_) => "INVITATION_NOT_FOUND",
            ApiError::InvitationEnded(_) => "INVITATION_ENDED",
            ApiError::OwnerAlreadyActive(_) => "OWNER_ALREADY_ACTIVE",
            ApiError::PlatformEventsUnconfigured => "PLATFORM_EVENTS_NOT_CONFIGURED",
            ApiError::StatementNotFound(_) => "STATEMENT_NOT_FOUND",
            ApiError::StatementAlreadyIssued(_) => "STATEMENT_ALREADY_ISSUED",
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
            ApiError::Unavailable(_) | ApiError::AtCapacity(_) => "SERVICE_UNAVAILABLE",
            ApiError::Internal(_) => "INTERNAL",
        }
    }
}

/// Codes the HTTP layer answers before a use case runs: unrouted paths and
/// methods (`http::gate`), and bodies refused by the wire crate's extractors.
pub const FRAMEWORK_CODES: &[&str] = &[
    "NOT_FOUND",
    "METHOD_NOT_ALLOWED",
    "INVALID_PATH",
    "PAYLOAD_TOO_LARGE",
    "UNSUPPORTED_MEDIA_TYPE",
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// One of each variant. The match has no wildcard, so a new variant
    /// does not compile until it is listed here, and so checked below.
    fn every_variant() -> Vec<ApiError> {
        let all: Vec<ApiError> = of_requests()
            .into_iter()
            .chain(of_people_and_the_rest())
            .collect();
        all.iter().for_each(named);
        all
    }

    /// The refusals of a merchant's request: its form, its signature, its
    /// orders.
    fn of_requests() -> Vec<ApiError> {
        vec![
            ApiError::InvalidBody(String::new()),
            ApiError::invalid_field("f", "m"),
            ApiError::MissingHeader("x-api-key"),
            ApiError::InvalidTimestamp,
            ApiError::StaleTimestamp {
                skew: 1,
                allowed: 0,
            },
            ApiError::UnknownApiKey,
            ApiError::InvalidSignature,
            ApiError::MerchantDisabled,
            ApiError::KeyNotAllowedFrom("203.0.113.9".into()),
            ApiError::KeyReadOnly,
            ApiError::OrderNotFound {
                kind: "deposit",
                reference: String::new(),
            },
            ApiError::DuplicateMerchantOrderNo(String::new()),
            ApiError::UnsupportedCurrency(String::new()),
            ApiError::AmountOutOfRange {
                currency: String::new(),
                min: Decimal::ONE,
                max: Decimal::TEN,
            },
            ApiError::NoChannelForAmount {
                currency: String::new(),
                direction: "deposit",
                amount: Decimal::ONE,
            },
            ApiError::InsufficientBalance,
            ApiError::InvalidStateTransition {
                order_no: String::new(),
                status: String::new(),
                action: String::new(),
            },
        ]
    }

    /// The refusals of people (operators, owners, their requests) and of
    /// the platform's other resources.
    fn of_people_and_the_rest() -> Vec<ApiError> {
        vec![
            ApiError::UnknownOperatorToken,
            ApiError::RoleForbidden {
                role: "viewer",
                action: "x",
                needs: "admin",
            },
            ApiError::OperatorNotFound(String::new()),
            ApiError::OperatorEmailTaken,
            ApiError::OperatorTokenNotFound(String::new()),
            ApiError::ApiKeyNotFound(String::new()),
            ApiError::OwnerNotFound(String::new()),
            ApiError::OperatorSelfChange,
            ApiError::AlreadyApproved(String::new()),
            ApiError::NotAPerson(String::new()),
            ApiError::SecondPersonRequired("x"),
            ApiError::FirstCallbackSecret,
            ApiError::TokenIsNobody,
            ApiError::OwnChangeRequest(String::new()),
            ApiError::NotVouched(String::new()),
            ApiError::VouchForOwn,
            ApiError::CreatorChecks(String::new()),
            ApiError::ChangeRequestNotFound(String::new()),
            ApiError::ChangeRequestDecided {
                id: String::new(),
                status: "approved",
            },
            ApiError::InvitationNotFound(String::new()),
            ApiError::InvitationEnded("expired"),
            ApiError::OwnerAlreadyActive(String::new()),
            ApiError::PlatformEventsUnconfigured,
            ApiError::StatementNotFound(String::new()),
            ApiError::StatementAlreadyIssued(String::new()),
            ApiError::MerchantNotFound(String::new()),
            ApiError::MerchantCodeTaken(String::new()),
            ApiError::AccountNotFound(String::new()),
            ApiError::DeliveryNotFound(String::new()),
            ApiError::BankTransactionNotFound(String::new()),
            ApiError::DuplicateBankReference(String::new()),
            ApiError::CashierSessionNotFound(String::new()),
            ApiError::NoDenominations(String::new()),
            ApiError::RateLimited { retry_after: 1 },
            ApiError::NotImplemented("x"),
            ApiError::Unavailable(String::new()),
            ApiError::AtCapacity("payment API"),
            ApiError::Internal(String::new()),
        ]
    }

    /// Names every variant: a new one does not compile until
    /// `every_variant` lists it too.
    fn named(e: &ApiError) {
        match e {
            ApiError::InvalidBody(_)
            | ApiError::InvalidField { .. }
            | ApiError::MissingHeader(_)
            | ApiError::InvalidTimestamp
            | ApiError::StaleTimestamp { .. }
            | ApiError::UnknownApiKey
            | ApiError::InvalidSignature
            | ApiError::MerchantDisabled
            | ApiError::KeyNotAllowedFrom(_)
            | ApiError::KeyReadOnly
            | ApiError::OrderNotFound { .. }
            | ApiError::DuplicateMerchantOrderNo(_)
            | ApiError::UnsupportedCurrency(_)
            | ApiError::AmountOutOfRange { .. }
            | ApiError::NoChannelForAmount { .. }
            | ApiError::InsufficientBalance
            | ApiError::InvalidStateTransition { .. }
            | ApiError::UnknownOperatorToken
            | ApiError::RoleForbidden { .. }
            | ApiError::OperatorNotFound(_)
            | ApiError::OperatorEmailTaken
            | ApiError::OperatorTokenNotFound(_)
            | ApiError::ApiKeyNotFound(_)
            | ApiError::OwnerNotFound(_)
            | ApiError::OperatorSelfChange
            | ApiError::AlreadyApproved(_)
            | ApiError::NotAPerson(_)
            | ApiError::SecondPersonRequired(_)
            | ApiError::FirstCallbackSecret
            | ApiError::TokenIsNobody
            | ApiError::OwnChangeRequest(_)
            | ApiError::NotVouched(_)
            | ApiError::VouchForOwn
            | ApiError::CreatorChecks(_)
            | ApiError::ChangeRequestNotFound(_)
            | ApiError::ChangeRequestDecided { .. }
            | ApiError::InvitationNotFound(_)
            | ApiError::InvitationEnded(_)
            | ApiError::OwnerAlreadyActive(_)
            | ApiError::PlatformEventsUnconfigured
            | ApiError::StatementNotFound(_)
            | ApiError::StatementAlreadyIssued(_)
            | ApiError::MerchantNotFound(_)
            | ApiError::MerchantCodeTaken(_)
            | ApiError::AccountNotFound(_)
            | ApiError::DeliveryNotFound(_)
            | ApiError::BankTransactionNotFound(_)
            | ApiError::DuplicateBankReference(_)
            | ApiError::CashierSessionNotFound(_)
            | ApiError::NoDenominations(_)
            | ApiError::RateLimited { .. }
            | ApiError::NotImplemented(_)
            | ApiError::Unavailable(_)
            | ApiError::AtCapacity(_)
            | ApiError::Internal(_) => {}
        }
    }

    #[test]
    fn every_published_error_code_enum_is_exactly_what_the_service_answers() {
        let answered: BTreeSet<&str> = every_variant()
            .iter()
            .map(ApiError::code)
            .chain(FRAMEWORK_CODES.iter().copied())
            .collect();
        // Codes about operators and their roles: answered only by the
        // operator API (the sandbox's controls take any role).
        let operators_only: BTreeSet<&str> = [
            "ROLE_FORBIDDEN",
            "OPERATOR_NOT_FOUND",
            "OPERATOR_TOKEN_NOT_FOUND",
            "API_KEY_NOT_FOUND",
            "CHANGE_REQUEST_NOT_FOUND",
            "OWNER_NOT_FOUND",
            "OPERATOR_EMAIL_TAKEN",
            "OPERATOR_SELF_CHANGE",
            "INVITATION_NOT_FOUND",
            "INVITATION_ENDED",
            "OWNER_ALREADY_ACTIVE",
            "PLATFORM_EVENTS_NOT_CONFIGURED",
            "STATEMENT_ALREADY_ISSUED",
        ]
        .into_iter()
        .collect();
        let elsewhere: BTreeSet<&str> = answered.difference(&operators_only).copied().collect();
        // Billing statements are the merchant's and the operator's; the
        // sandbox has none to miss, and its contract does not name the code.
        let statements_only: BTreeSet<&str> = ["STATEMENT_NOT_FOUND"].into_iter().collect();
        let sandbox: BTreeSet<&str> = elsewhere.difference(&statements_only).copied().collect();
        for (file, text, answered) in [
            (
                "merchant.json",
                merchant_api::merchant::OPENAPI_DOCUMENT,
                &elsewhere,
            ),
            (
                "operator.json",
                merchant_api::operator::OPENAPI_DOCUMENT,
                &answered,
            ),
            (
                "sandbox.json",
                merchant_api::sandbox::OPENAPI_DOCUMENT,
                &sandbox,
            ),
        ] {
            let doc: serde_json::Value = serde_json::from_str(text).unwrap();
            let published: BTreeSet<&str> = doc
                .pointer("/components/schemas/ErrorCode/enum")
                .and_then(|v| v.as_array())
                .unwrap_or_else(|| panic!("{file}: ErrorCode has no enum"))
                .iter()
                .filter_map(|v| v.as_str())
                .collect();
            assert_eq!(&published, answered, "{file}: ErrorCode's enum");
        }
    }
}
