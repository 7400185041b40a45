//! How database errors become `StoreError`s: unique keys told apart on
//! both backends, a broken connection as unavailable, an unknown stored
//! value named by table, row and column.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use payments_domain::status_sql::UnknownStoredValue;
use payments_store::error::UNIQUE_KEYS;
use payments_store::{InRow, StoreError, StoreResult, UniqueKey};

struct Info(&'static str, Option<&'static str>);

impl diesel::result::DatabaseErrorInformation for Info {
    fn message(&self) -> &str {
        self.0
    }
    fn details(&self) -> Option<&str> {
        None
    }
    fn hint(&self) -> Option<&str> {
        None
    }
    fn table_name(&self) -> Option<&str> {
        None
    }
    fn column_name(&self) -> Option<&str> {
        None
    }
    fn constraint_name(&self) -> Option<&str> {
        self.1
    }
    fn statement_position(&self) -> Option<i32> {
        None
    }
}

fn unique(info: Info) -> StoreError {
    StoreError::from(DieselError::DatabaseError(
        DatabaseErrorKind::UniqueViolation,
        Box::new(info),
    ))
}

#[test]
fn a_unique_key_is_told_by_constraint_name_or_sqlite_columns() {
    for (key, pg, sqlite) in UNIQUE_KEYS {
        assert!(
            matches!(unique(Info("duplicate key", Some(pg))), StoreError::Conflict { key: k, .. } if k == *key)
        );
        let message: &'static str =
            Box::leak(format!("UNIQUE constraint failed: {sqlite}").into_boxed_str());
        assert!(
            matches!(unique(Info(message, None)), StoreError::Conflict { key: k, .. } if k == *key)
        );
    }
    assert!(matches!(
        unique(Info("duplicate key", Some("deposit_orders_order_no_key"))),
        StoreError::Conflict {
            key: UniqueKey::Other,
            ..
        }
    ));
}

#[test]
fn a_broken_connection_is_unavailable_and_keeps_its_source() {
    let e = StoreError::from(DieselError::DatabaseError(
        DatabaseErrorKind::UnableToSendCommand,
        Box::new("connection closed".to_string()),
    ));
    assert!(matches!(e, StoreError::Unavailable { .. }));
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn an_unknown_stored_value_names_table_row_and_column() {
    let read: StoreResult<()> = Err(StoreError::from(DieselError::DeserializationError(
        Box::new(UnknownStoredValue {
            column: "status",
            type_name: "DepositStatus",
            value: "bogus".into(),
        }),
    )));
    let e = read.in_row("deposit_orders", "order_no=D1").unwrap_err();
    assert_eq!(
        e.to_string(),
        "deposit_orders row order_no=D1: column status holds `bogus`, which is no DepositStatus"
    );
}
