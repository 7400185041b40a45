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
fn a_standby_that_refuses_a_write_is_unavailable_not_a_fault() {
    // What PostgreSQL answers a write on a server in recovery (SQLSTATE
    // 25006), as a connection still open to the old primary hears it after
    // a switchover.
    let e = StoreError::from(DieselError::DatabaseError(
        DatabaseErrorKind::ReadOnlyTransaction,
        Box::new("cannot execute INSERT in a read-only transaction".to_string()),
    ));
    assert!(matches!(e, StoreError::Unavailable { .. }), "{e:?}");
}

#[test]
fn a_server_going_away_behind_the_pooler_is_unavailable() {
    // What the service heard in .ci/ha while the leader died: the
    // server's last words, and PgBouncer's until a new leader answers.
    for message in [
        "terminating connection due to unexpected postmaster exit",
        "server login has been failing, try again later (server_login_retry)",
        "query_wait_timeout",
    ] {
        let e = StoreError::from(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(message.to_string()),
        ));
        assert!(
            matches!(e, StoreError::Unavailable { .. }),
            "{message}: {e:?}"
        );
    }
    let other = StoreError::from(DieselError::DatabaseError(
        DatabaseErrorKind::Unknown,
        Box::new("column \"nope\" does not exist".to_string()),
    ));
    assert!(matches!(other, StoreError::Other { .. }));
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

/// A full pool is not a queue without end: a unit of work that finds no
/// free connection within the pool's wait is refused as unavailable (a 503
/// with `Retry-After` at the edge), while the one holding the connection
/// goes on.
#[tokio::test]
async fn a_unit_of_work_waits_for_a_connection_a_bounded_time_then_is_unavailable() {
    use payments_store::{Db, DbOptions};
    use std::sync::Arc;
    let path = std::env::temp_dir().join(format!("pool-wait-{}.db", uuid::Uuid::new_v4()));
    let db = Db::open(
        &format!("sqlite://{}", path.display()),
        1,
        DbOptions {
            pool_wait: Some(std::time::Duration::from_millis(200)),
            ..DbOptions::default()
        },
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(payments_domain::clock::SystemClock),
    )
    .await
    .unwrap();
    let (release, held) = tokio::sync::oneshot::channel::<()>();
    let (taken, is_taken) = tokio::sync::oneshot::channel::<()>();
    let holder = tokio::spawn({
        let db = db.clone();
        async move {
            db.run(move |_| {
                Box::pin(async move {
                    let _ = taken.send(());
                    let _ = held.await;
                    Ok(())
                })
            })
            .await
        }
    });
    is_taken.await.unwrap();
    let waited = db.run(|_| Box::pin(async { Ok(()) })).await;
    assert!(
        matches!(waited, Err(StoreError::Unavailable { .. })),
        "{waited:?}"
    );
    release.send(()).unwrap();
    holder.await.unwrap().unwrap();
    assert!(db.run(|_| Box::pin(async { Ok(()) })).await.is_ok());
    let _ = std::fs::remove_file(&path);
}
