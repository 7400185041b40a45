//! What can go wrong in the database, as the use cases need to tell it
//! apart: a unique key that refused a write (which one, typed), an outage
//! (a 503), a stored value the code does not know (named by table, row and
//! column), or a bug. Each keeps the driver's error as its source.

use crate::domain::error::ApiError;
use crate::domain::status_sql::UnknownStoredValue;
use diesel::result::{DatabaseErrorKind, Error as DieselError};

type Source = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique key refused the write.
    #[error("conflict on {key:?}: {source}")]
    Conflict {
        key: UniqueKey,
        #[source]
        source: DieselError,
    },
    /// The database cannot be reached or went away mid-query: a 503.
    #[error("database unavailable: {source}")]
    Unavailable {
        #[source]
        source: Source,
    },
    /// A row holds a value the code does not know: an error, never a
    /// default. `table` and `row` are set by the query that read it.
    #[error("{} row {}: {detail}", table.unwrap_or("a"), row.as_deref().unwrap_or("(unknown key)"))]
    Corrupt {
        table: Option<&'static str>,
        row: Option<String>,
        detail: String,
    },
    #[error("database error: {source}")]
    Other {
        #[source]
        source: DieselError,
    },
    /// A change request was decided by someone else first: the action its
    /// approval carried is rolled back with it.
    #[error("change request {0} is no longer pending")]
    AlreadyDecided(String),
}

impl StoreError {
    pub fn unavailable(source: impl Into<Source>) -> StoreError {
        StoreError::Unavailable {
            source: source.into(),
        }
    }

    /// A stored value the code cannot read, in a row it knows.
    pub fn corrupt(table: &'static str, row: impl std::fmt::Display, detail: String) -> StoreError {
        StoreError::Corrupt {
            table: Some(table),
            row: Some(row.to_string()),
            detail,
        }
    }
}

/// The unique keys a write can run into, by PostgreSQL's constraint name
/// and by the columns SQLite names (SQLite reports no constraint name,
/// only `UNIQUE constraint failed: table.column, …`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UniqueKey {
    DepositMerchantOrderNo,
    DepositRemark,
    DepositMatchAmount,
    DepositCashierSession,
    WithdrawalMerchantOrderNo,
    CashierSessionMerchantOrderNo,
    BankReference,
    MerchantCode,
    ChannelNotification,
    OperatorEmail,
    /// A second owner row for one merchant and email (two invitations at once).
    OwnerEmail,
    /// The same approver approving a withdrawal twice.
    WithdrawalApproval,
    /// A statement of the same merchant, period and version (issued by
    /// another instance, or before a restart).
    StatementVersion,
    /// A key no use case tells apart (an order number, a key hash, …).
    Other,
}

/// Every unique key a use case tells apart: its PostgreSQL constraint name
/// and the columns SQLite names when it is broken (public for the crate's
/// tests, which live in `tests/` so the crate is not compiled a second time
/// for them).
pub const UNIQUE_KEYS: &[(UniqueKey, &str, &str)] = &[
    (
        UniqueKey::DepositMerchantOrderNo,
        "deposit_orders_merchant_order_no",
        "deposit_orders.merchant_id, deposit_orders.merchant_order_no",
    ),
    (
        UniqueKey::DepositRemark,
        "deposit_orders_expected_remark_key",
        "deposit_orders.expected_remark",
    ),
    (
        UniqueKey::DepositMatchAmount,
        "deposit_orders_match_amount",
        "deposit_orders.account_id, deposit_orders.match_amount",
    ),
    (
        UniqueKey::DepositCashierSession,
        "deposit_orders_cashier_session",
        "deposit_orders.cashier_session_id",
    ),
    (
        UniqueKey::WithdrawalMerchantOrderNo,
        "withdrawal_orders_merchant_order_no",
        "withdrawal_orders.merchant_id, withdrawal_orders.merchant_order_no",
    ),
    (
        UniqueKey::CashierSessionMerchantOrderNo,
        "cashier_sessions_merchant_order_no",
        "cashier_sessions.merchant_id, cashier_sessions.merchant_order_no",
    ),
    (
        UniqueKey::BankReference,
        "bank_transactions_reference",
        "bank_transactions.account_id, bank_transactions.bank_reference",
    ),
    (
        UniqueKey::MerchantCode,
        "merchants_code_key",
        "merchants.code",
    ),
    (
        UniqueKey::OperatorEmail,
        "operators_email",
        "operators.email",
    ),
    (
        UniqueKey::OwnerEmail,
        "merchant_owners_email",
        "merchant_owners.merchant_id, merchant_owners.email",
    ),
    (
        UniqueKey::WithdrawalApproval,
        "withdrawal_approvals_pkey",
        "withdrawal_approvals.order_no, withdrawal_approvals.approver_key",
    ),
    (
        UniqueKey::StatementVersion,
        "billing_statements_version",
        "billing_statements.merchant_id, billing_statements.period_start, billing_statements.version",
    ),
    // The number is made of the same three, so it collides with them.
    (
        UniqueKey::StatementVersion,
        "billing_statements_number",
        "billing_statements.number",
    ),
    (
        UniqueKey::ChannelNotification,
        "channel_notifications_once",
        "channel_notifications.channel_id, channel_notifications.notification_id",
    ),
];

impl UniqueKey {
    fn of(info: &dyn diesel::result::DatabaseErrorInformation) -> UniqueKey {
        let found = match info.constraint_name() {
            Some(name) => UNIQUE_KEYS.iter().find(|(_, pg, _)| *pg == name),
            None => info
                .message()
                .strip_prefix("UNIQUE constraint failed: ")
                .and_then(|columns| UNIQUE_KEYS.iter().find(|(_, _, c)| *c == columns)),
        };
        found.map_or(UniqueKey::Other, |(key, _, _)| *key)
    }
}

impl From<DieselError> for StoreError {
    fn from(e: DieselError) -> Self {
        match e {
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, ref info) => {
                StoreError::Conflict {
                    key: UniqueKey::of(info.as_ref()),
                    source: e,
                }
            }
            // diesel-async reports a PostgreSQL error without a SQLSTATE
            // (the socket broke) as UnableToSendCommand.
            DieselError::DatabaseError(
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
                _,
            )
            | DieselError::BrokenTransactionManager => StoreError::unavailable(e),
            // The service never opens a read-only transaction: a server that
            // refuses a write as read-only is a standby, reached before a
            // failover or a switchover moved the balancer to the new
            // primary. Nothing was written; the request may be sent again.
            DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _) => {
                StoreError::unavailable(e)
            }
            DieselError::DatabaseError(DatabaseErrorKind::Unknown, ref info)
                if server_going_away(info.message()) =>
            {
                StoreError::unavailable(e)
            }
            DieselError::DeserializationError(source) => match unknown_value(&source) {
                Some(detail) => StoreError::Corrupt {
                    table: None,
                    row: None,
                    detail,
                },
                None => StoreError::Other {
                    source: DieselError::DeserializationError(source),
                },
            },
            other => StoreError::Other { source: other },
        }
    }
}

/// What a value no enum names says: diesel wraps the `FromSql` error with
/// the field it was reading (the column, as selected).
fn unknown_value(source: &Source) -> Option<String> {
    if let Some(unknown) = source.downcast_ref::<UnknownStoredValue>() {
        return Some(unknown.to_string());
    }
    let field = source.downcast_ref::<diesel::result::DeserializeFieldError>()?;
    let unknown = field.error.downcast_ref::<UnknownStoredValue>()?;
    Some(match &field.field_name {
        Some(column) => unknown.in_column(column),
        None => unknown.to_string(),
    })
}

/// The messages of a server going away: PostgreSQL's for SQLSTATE class
/// 57P (operator intervention: shutting down, starting up, in recovery,
/// or the session ended, the postmaster gone included), and PgBouncer's
/// while the server behind it cannot be reached (a failover in progress).
/// diesel's `DatabaseErrorInformation` carries no SQLSTATE, only a kind,
/// and files these under `Unknown`; their messages are fixed by the
/// server, so they are matched exactly, and only under that kind.
fn server_going_away(message: &str) -> bool {
    [
        "terminating connection due to administrator command",
        "terminating connection due to unexpected postmaster exit",
        "the database system is shutting down",
        "the database system is starting up",
        "the database system is in recovery mode",
        // PgBouncer's.
        "server login has been failing, try again later",
        "query_wait_timeout",
        "server conn crashed?",
        "pgbouncer cannot connect to server",
        "no more connections allowed",
    ]
    .iter()
    .any(|m| message.starts_with(m))
}

pub type StoreResult<T> = Result<T, StoreError>;

/// A row's key, written out only when an error names it.
pub struct Key<'a, T: std::fmt::Display + ?Sized>(pub &'static str, pub &'a T);

impl<T: std::fmt::Display + ?Sized> std::fmt::Display for Key<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.0, self.1)
    }
}

/// Names the row a query read, so that a value it cannot read is reported
/// with its table and key.
pub trait InRow<T> {
    fn in_row(self, table: &'static str, row: impl std::fmt::Display) -> StoreResult<T>;
}

impl<T> InRow<T> for StoreResult<T> {
    fn in_row(self, table: &'static str, key: impl std::fmt::Display) -> StoreResult<T> {
        self.map_err(|e| match e {
            StoreError::Corrupt {
                table: None,
                row: None,
                detail,
            } => StoreError::corrupt(table, key, detail),
            other => other,
        })
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable { source } => ApiError::Unavailable(source.to_string()),
            StoreError::AlreadyDecided(id) => ApiError::ChangeRequestDecided {
                id,
                status: "decided already",
            },
            other => ApiError::Internal(other.to_string()),
        }
    }
}
