//! What can go wrong in the database, as the use cases need to tell it
//! apart: a conflict, an outage (a 503), or a bug.

use crate::domain::error::ApiError;
use diesel::result::{DatabaseErrorKind, Error as DieselError};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint refused the write; carries the constraint or
    /// message so the caller can tell which.
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("database error: {0}")]
    Other(String),
}

impl From<DieselError> for StoreError {
    fn from(e: DieselError) -> Self {
        match e {
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                StoreError::Conflict(info.constraint_name().unwrap_or(info.message()).to_string())
            }
            DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, info) => {
                StoreError::Unavailable(info.message().to_string())
            }
            DieselError::BrokenTransactionManager => StoreError::Unavailable(e.to_string()),
            // The driver reports a socket cut mid-query without a SQLSTATE:
            // the database went away, which is a 503, not a bug.
            other if connection_lost(&other.to_string()) => {
                StoreError::Unavailable(other.to_string())
            }
            other => StoreError::Other(other.to_string()),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Whether a driver error without a SQLSTATE says the connection is gone.
fn connection_lost(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "connection closed",
        "connection reset",
        "broken pipe",
        "communicating with the server",
        "unexpected eof",
        "server closed the connection",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(m) => ApiError::Unavailable(m),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<diesel::result::Error> for ApiError {
    fn from(e: diesel::result::Error) -> Self {
        ApiError::from(StoreError::from(e))
    }
}
