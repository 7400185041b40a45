//! The domain's enums as each contract spells them. Every conversion is an
//! exhaustive match with no wildcard, so a value added to the domain and
//! missing from a contract does not compile until the contract has it.
//!
//! A trait of this crate's (`Spelled`) rather than `From`: the domain's
//! enums and the contracts' are both other crates' types, which Rust lets
//! only a trait of this crate join.

use crate::domain::schedule::Outcome;
use crate::domain::status::{
    BankTransactionStatus, BillingPeriod, CallbackScheme, CallbackStatus, DeliveryStatus,
    DepositStatus, MerchantStatus, NotificationKind, NotificationOutcome, OrderType, PayoutMethod,
    StatementStatus, WithdrawalStatus,
};
use merchant_api::{merchant, operator, sandbox};

/// A value of the domain as a contract spells it.
pub trait Spelled<T> {
    fn spelled(self) -> T;
}

macro_rules! spelled_as {
    ($from:ident => [$($to:ty),+] $variants:tt) => {
        $(spelled_as!(@one $from => $to $variants);)+
    };
    (@one $from:ident => $to:ty { $($variant:ident => $spelled:ident),+ $(,)? }) => {
        impl Spelled<$to> for $from {
            fn spelled(self) -> $to {
                let value = self;
                match value {
                    $($from::$variant => <$to>::$spelled),+
                }
            }
        }
    };
}

spelled_as!(DepositStatus => [merchant::types::DepositStatus, operator::types::DepositStatus, sandbox::types::DepositStatus] {
    Pending => Pending,
    Matched => Matched,
    Completed => Completed,
    Expired => Expired,
    Cancelled => Cancelled,
});

spelled_as!(WithdrawalStatus => [merchant::types::WithdrawalStatus, sandbox::types::WithdrawalStatus] {
    Pending => Pending,
    Approved => Approved,
    Processing => Processing,
    Completed => Completed,
    Rejected => Rejected,
    Failed => Failed,
});

spelled_as!(CallbackStatus => [merchant::types::CallbackStatus] {
    None => None,
    Pending => Pending,
    Success => Success,
    Failed => Failed,
});

/// The operator listing's type of a notification, for the four kinds it
/// names (a declined payment is not listed there).
pub fn listed_kind(kind: NotificationKind) -> Option<operator::types::ChannelNotificationType> {
    use operator::types::ChannelNotificationType as Listed;
    match kind {
        NotificationKind::PaymentMatched => Some(Listed::PaymentMatched),
        NotificationKind::PaymentCompleted => Some(Listed::PaymentCompleted),
        NotificationKind::PaymentFailed => None,
        NotificationKind::PayoutCompleted => Some(Listed::PayoutCompleted),
        NotificationKind::PayoutFailed => Some(Listed::PayoutFailed),
    }
}

spelled_as!(NotificationOutcome => [operator::types::ChannelNotificationOutcome] {
    Applied => Applied,
    Unchanged => Unchanged,
    Held => Held,
    Contradictory => Contradictory,
});

spelled_as!(PayoutMethod => [merchant::types::PayoutMethod] {
    BankTransfer => BankTransfer,
});

spelled_as!(OrderType => [merchant::types::OrderType] {
    Direct => Direct,
    Cashier => Cashier,
});

spelled_as!(DeliveryStatus => [operator::types::CallbackDeliveryStatus] {
    Sending => Sending,
    WaitingRetry => WaitingRetry,
    Success => Success,
    Failed => Failed,
});

spelled_as!(Outcome => [operator::types::CallbackAttemptOutcome] {
    Success => Success,
    Rejected => Rejected,
    Retry => Retry,
    Failed => Failed,
});

spelled_as!(BankTransactionStatus => [operator::types::BankTransactionStatus] {
    Matched => Matched,
    Unmatched => Unmatched,
});

spelled_as!(CallbackScheme => [operator::types::CallbackSigningScheme] {
    Seed => Seed,
    StandardWebhooks => StandardWebhooks,
});

impl Spelled<CallbackScheme> for operator::types::CallbackSigningScheme {
    fn spelled(self) -> CallbackScheme {
        match self {
            operator::types::CallbackSigningScheme::Seed => CallbackScheme::Seed,
            operator::types::CallbackSigningScheme::StandardWebhooks => {
                CallbackScheme::StandardWebhooks
            }
        }
    }
}

/// A request's choice of scheme: `md5_key` (operator 0.16.0) is the name
/// the MD5-key scheme is asked for by now, `seed` the one it kept.
impl Spelled<CallbackScheme> for operator::types::CallbackSigningSchemeChoice {
    fn spelled(self) -> CallbackScheme {
        match self {
            operator::types::CallbackSigningSchemeChoice::Md5Key
            | operator::types::CallbackSigningSchemeChoice::Seed => CallbackScheme::Seed,
            operator::types::CallbackSigningSchemeChoice::StandardWebhooks => {
                CallbackScheme::StandardWebhooks
            }
        }
    }
}

spelled_as!(MerchantStatus => [operator::types::MerchantStatusValue] {
    Active => Active,
    Suspended => Suspended,
});

impl Spelled<MerchantStatus> for operator::types::MerchantStatusValue {
    fn spelled(self) -> MerchantStatus {
        match self {
            operator::types::MerchantStatusValue::Active => MerchantStatus::Active,
            operator::types::MerchantStatusValue::Suspended => MerchantStatus::Suspended,
        }
    }
}

// A statement's view is read into the generated types from its JSON
// (`http::billing::shown`); these keep the two enums it spells by name
// exhaustive against both contracts all the same.
spelled_as!(BillingPeriod => [merchant::types::BillingPeriod, operator::types::BillingPeriod] {
    Month => Month,
    Week => Week,
    Day => Day,
});

spelled_as!(StatementStatus => [merchant::types::BillingStatementStatus, operator::types::BillingStatementStatus] {
    Issued => Issued,
    Superseded => Superseded,
});
