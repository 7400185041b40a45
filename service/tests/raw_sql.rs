//! The SQL the store sends as text rather than building it with diesel
//! (the callback claim, the batch outcome writes, the rate bucket, the
//! ledger sums, ...): its text is snapshotted, so a change to it is seen
//! in review; it spells no stored value (statuses are bound through the
//! same mapping as diesel's); and each statement compiles against the
//! migrated schema of SQLite always and of PostgreSQL when
//! PAYMENTS_TEST_DATABASE_URL names a server (`.ci/run` sets it).

use payments_service::clock::SystemClock;
use payments_service::store::{raw_statements, Backend, Db};
use payments_testing::{fresh_postgres_database, TEST_DATABASE_ENV};
use std::sync::Arc;

fn rendered(backend: Backend) -> String {
    raw_statements(backend)
        .iter()
        .map(|s| format!("-- {} ({:?})\n{}\n", s.name, s.kind, s.sql))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_raw_statements_read_as_reviewed() {
    insta::assert_snapshot!("postgres", rendered(Backend::Postgres));
    insta::assert_snapshot!("sqlite", rendered(Backend::Sqlite));
}

/// The text between each pair of single quotes.
fn literals(sql: &str) -> Vec<&str> {
    sql.split('\'').skip(1).step_by(2).collect()
}

#[test]
fn no_raw_statement_spells_a_stored_value() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        for s in raw_statements(backend) {
            let spelled: Vec<_> = literals(&s.sql).into_iter().filter(|l| *l != ":").collect();
            assert!(
                spelled.is_empty(),
                "{backend:?} {}: literals {spelled:?}; bind them instead",
                s.name
            );
        }
    }
    assert_eq!(literals("a || ':' || b"), vec![":"]);
    assert_eq!(literals("status = 'sending'"), vec!["sending"]);
}

async fn compiles_on(url: &str, backend: Backend) {
    let db = Db::connect(
        url,
        1,
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(SystemClock),
    )
    .await
    .expect("the test database opens and migrates");
    assert_eq!(db.backend(), backend);
    let checked = db.check_raw_statements().await.expect("a connection");
    assert_eq!(checked.len(), raw_statements(backend).len());
    let refused: Vec<String> = checked
        .iter()
        .filter_map(|(name, r)| r.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(refused.is_empty(), "{backend:?} refuses {refused:#?}");
}

/// A new SQLite file's URL, and the folder to remove afterwards.
fn scratch_sqlite() -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("payments-raw-sql-{}", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}", dir.join("payments.db").display());
    (dir, url)
}

#[tokio::test]
async fn every_raw_statement_compiles_on_sqlite() {
    let (dir, url) = scratch_sqlite();
    compiles_on(&url, Backend::Sqlite).await;
    let _ = std::fs::remove_dir_all(dir);
}

/// On the server PAYMENTS_TEST_DATABASE_URL names (`.ci/run` runs the
/// tests on PostgreSQL that way), else on SQLite like the rest.
#[tokio::test]
async fn every_raw_statement_compiles_on_the_test_database() {
    match std::env::var(TEST_DATABASE_ENV) {
        Ok(server) if !server.is_empty() => {
            let url = fresh_postgres_database(&server).await.unwrap();
            compiles_on(&url, Backend::Postgres).await;
        }
        _ => {
            let (dir, url) = scratch_sqlite();
            compiles_on(&url, Backend::Sqlite).await;
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
