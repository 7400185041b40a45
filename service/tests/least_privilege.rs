//! Least privilege on PostgreSQL: the service migrates as the owning role
//! and runs as one that holds grants only. Its role is refused every way
//! of rewriting history (`UPDATE`, `DELETE`, `TRUNCATE`, `ALTER`) on the
//! audit trail, the journal and the approvals, while the service itself
//! works as it (every PostgreSQL test and the conformance suite run it so).

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use payments_service::domain::routing::Profile;
use payments_service::store::{Db, DbOptions};
use payments_testing::{service_role_url, with_user, TestService, SERVICE_ROLE};
use std::sync::Arc;

fn server() -> String {
    std::env::var(payments_testing::TEST_DATABASE_ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .expect("PAYMENTS_TEST_DATABASE_URL names a PostgreSQL server")
}

/// Each append-only table, and a column of it to `UPDATE`.
const APPEND_ONLY: &[(&str, &str)] = &[
    ("audit_events", "id"),
    ("journal_entries", "id"),
    ("postings", "id"),
    ("withdrawal_approvals", "order_no"),
    ("balance_transactions", "id"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL; .ci/run runs it with --ignored and PAYMENTS_TEST_DATABASE_URL"]
async fn the_services_role_may_not_update_delete_truncate_or_alter_the_history() {
    let _ = server();
    // Either profile runs as the service's role on PostgreSQL.
    let svc = TestService::start(
        Profile::Sandbox,
        Arc::new(payments_service::clock::SystemClock),
    )
    .await
    .unwrap();
    // The service writes as its role: a merchant and its key.
    svc.new_merchant("Least Privilege Co").await.unwrap();

    let as_service = with_user(&svc.database_url, SERVICE_ROLE).unwrap();
    let mut conn = AsyncPgConnection::establish(&as_service).await.unwrap();
    conn.batch_execute("SELECT count(*) FROM audit_events")
        .await
        .expect("the service's role reads the audit trail");
    assert_eq!(
        APPEND_ONLY.len(),
        payments_service::store::privileges::APPEND_ONLY.len(),
        "every append-only table is tried here"
    );
    let mut refused = 0;
    for (table, column) in APPEND_ONLY {
        for sql in [
            format!("UPDATE {table} SET {column} = {column}"),
            format!("DELETE FROM {table}"),
            format!("TRUNCATE {table}"),
            format!("ALTER TABLE {table} ADD COLUMN rewritten integer"),
            format!("ALTER TABLE {table} DISABLE TRIGGER ALL"),
        ] {
            let why = conn
                .batch_execute(&sql)
                .await
                .expect_err(&format!("the service's role may not run {sql}"))
                .to_string();
            assert!(
                why.contains("permission denied") || why.contains("must be owner"),
                "{sql}: refused for another reason: {why}"
            );
            refused += 1;
        }
    }
    assert_eq!(refused, 25);

    // What the service wrote as its role is there for the owner to read.
    let mut owner = AsyncPgConnection::establish(&svc.database_url)
        .await
        .unwrap();
    owner
        .batch_execute("DO $$ BEGIN IF (SELECT count(*) FROM api_keys) = 0 THEN RAISE EXCEPTION 'no API key'; END IF; END $$")
        .await
        .expect("the merchant's key, written by the service's role, is there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL; .ci/run runs it with --ignored and PAYMENTS_TEST_DATABASE_URL"]
async fn one_role_for_both_urls_is_refused_rather_than_left_owning_its_tables() {
    let owner = payments_testing::fresh_postgres_database(&server())
        .await
        .unwrap();
    let service = service_role_url(&owner).await.unwrap();
    for (url, migrate) in [(&owner, &owner), (&service, &service)] {
        let why = Db::open(
            url,
            2,
            DbOptions {
                migrate_url: Some(migrate.clone()),
                ..DbOptions::default()
            },
            Arc::new(tokio::sync::Notify::new()),
            Arc::new(payments_service::clock::SystemClock),
        )
        .await
        .err()
        .expect("one role on both URLs is refused")
        .to_string();
        assert!(why.contains("same role"), "{why}");
    }
}
