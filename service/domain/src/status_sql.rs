//! How the enums a row holds (statuses, order type and kind, route,
//! auto-approval mode, callback scheme, payout method, attempt outcome) are stored: as the text each
//! names, on both backends. A stored value no enum names is an error on
//! reading that names its column and value (`UnknownStoredValue`; the
//! query that read it adds the table and row), never a silent default.

use crate::four_eyes::ChangeRequestStatus;
use crate::routing::Route;
use crate::schedule::Outcome;
use crate::status::{
    AuditRole, AutoApprovalMode, BankTransactionStatus, BillingPeriod, CallbackScheme,
    CallbackStatus, DeliveryStatus, DepositStatus, InvitationReason, InvitationStatus, KeyScope,
    MerchantStatus, NotificationKind, NotificationOutcome, OperatorStatus, OrderKind, OrderType,
    OwnerStatus, PayoutMethod, Role, SessionRealm, StatementStatus, WithdrawalStatus,
};
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;
use diesel::sqlite::Sqlite;

macro_rules! stored_as_text {
    ($($status:ty),+) => {$(
        impl ToSql<Text, Pg> for $status {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
                <str as ToSql<Text, Pg>>::to_sql(self.as_str(), &mut out.reborrow())
            }
        }

        impl ToSql<Text, Sqlite> for $status {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
                out.set_value(self.as_str());
                Ok(IsNull::No)
            }
        }

        impl<DB: Backend> FromSql<Text, DB> for $status
        where
            String: FromSql<Text, DB>,
        {
            fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
                let text = String::from_sql(bytes)?;
                <$status>::parse(&text).ok_or_else(|| {
                    Box::new(UnknownStoredValue {
                        column: <$status>::COLUMN,
                        type_name: stringify!($status),
                        value: text,
                    }) as Box<dyn std::error::Error + Send + Sync>
                })
            }
        }
    )+};
}

/// A stored text that no value of the column's enum names. `column` is
/// the one the enum is stored in by convention; the query that read it
/// knows the one it selected (`in_column`).
#[derive(Clone, Debug, thiserror::Error)]
#[error("column {column} holds `{value}`, which is no {type_name}")]
pub struct UnknownStoredValue {
    pub column: &'static str,
    pub type_name: &'static str,
    pub value: String,
}

impl UnknownStoredValue {
    pub fn in_column(&self, column: &str) -> String {
        format!(
            "column {column} holds `{}`, which is no {}",
            self.value, self.type_name
        )
    }
}

stored_as_text!(
    DepositStatus,
    WithdrawalStatus,
    CallbackStatus,
    DeliveryStatus,
    BankTransactionStatus,
    MerchantStatus,
    OrderType,
    OrderKind,
    Route,
    AutoApprovalMode,
    CallbackScheme,
    PayoutMethod,
    NotificationKind,
    NotificationOutcome,
    Outcome,
    Role,
    AuditRole,
    KeyScope,
    OperatorStatus,
    OwnerStatus,
    InvitationStatus,
    InvitationReason,
    StatementStatus,
    BillingPeriod,
    SessionRealm,
    ChangeRequestStatus
);
