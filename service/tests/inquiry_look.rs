//! The expiry worker's inquiry pass (`payment_sync::inquire_due`) reads
//! the channel deposits awaiting payment. It ran every pass over every
//! order awaiting payment, channel or account (173 ms for 239,808 pending
//! account deposits); migration 000037's partial index holds only the rows
//! it wants. Here: the look finds exactly those rows, in its order, among
//! many account deposits; and on PostgreSQL (PAYMENTS_TEST_DATABASE_URL,
//! as `.ci/run` sets it) the planner reads them through that index, with
//! the statement prepared and its values bound as diesel sends it, past the
//! executions after which PostgreSQL may switch to a generic plan.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use payments_service::clock::SystemClock;
use payments_service::store::Db;
use payments_testing::{fresh_postgres_database, TEST_DATABASE_ENV};
use std::sync::Arc;

/// Account deposits awaiting payment beside the channel ones.
const ACCOUNT_DEPOSITS: i64 = 20_000;

/// One merchant; `ACCOUNT_DEPOSITS` pending account deposits; channel
/// deposits pending (created at 30), matched (at 20), pending (at 20, a
/// later number) and completed, and one pending created after the cut.
fn seed() -> String {
    let row = |id: &str, route: &str, status: &str, created_at: i64| {
        format!(
            "INSERT INTO deposit_orders (id, order_no, merchant_id, merchant_order_no, \
             request_fingerprint, order_type, route, status, currency, requested_amount, \
             amount, fee, actual_amount, payment_snapshot, callback_status, callback_count, \
             expire_at, created_at, updated_at) VALUES ('{id}', '{id}', 'm1', '{id}', 'f', \
             'direct', '{route}', '{status}', 'THB', 100, 100, 0, 0, '', 'none', 0, 99999, \
             {created_at}, {created_at});\n"
        )
    };
    let mut sql = String::from(
        "INSERT INTO merchants (id, code, name, status, callback_timeout_seconds, created_at, \
         updated_at, auto_approval, auto_approval_limits, receiving_accounts, callback_scheme, \
         callback_secrets) VALUES ('m1', 'm1', 'M', 'active', 10, 0, 0, '', '', '', '', '');\n",
    );
    // A recursive count rather than generate_series, which SQLite lacks.
    sql.push_str(&format!(
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
         WHERE n < {ACCOUNT_DEPOSITS}) INSERT INTO deposit_orders (id, order_no, merchant_id, merchant_order_no, \
         request_fingerprint, order_type, route, status, currency, requested_amount, amount, \
         fee, actual_amount, payment_snapshot, callback_status, callback_count, expire_at, \
         created_at, updated_at) SELECT 'A' || n, 'A' || n, 'm1', 'A' || n, 'f', 'direct', \
         'account', 'pending', 'THB', 100, 100, 0, 0, '', 'none', 0, 99999, n % 50, n % 50 \
         FROM s;\n"
    ));
    sql.push_str(&row("C3", "channel", "pending", 30));
    sql.push_str(&row("C1", "channel", "matched", 20));
    sql.push_str(&row("C2", "channel", "pending", 20));
    sql.push_str(&row("C4", "channel", "completed", 10));
    sql.push_str(&row("C5", "channel", "pending", 90));
    sql
}

async fn open(url: &str) -> Db {
    Db::connect(
        url,
        1,
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(SystemClock),
    )
    .await
    .expect("the database opens and migrates")
}

async fn look(db: &Db) -> Vec<(String, i64, i64)> {
    db.run(|s| Box::pin(async move { s.channel_deposits_awaiting(50, None, 500).await }))
        .await
        .expect("the look")
}

const EXPECTED: [(&str, i64, i64); 3] = [("C1", 20, 99999), ("C2", 20, 99999), ("C3", 30, 99999)];

fn expected() -> Vec<(String, i64, i64)> {
    EXPECTED
        .iter()
        .map(|(n, c, e)| (n.to_string(), *c, *e))
        .collect()
}

#[tokio::test]
async fn the_look_finds_the_channel_deposits_awaiting_payment_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("payments-look-{}", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}", dir.join("payments.db").display());
    let db = open(&url).await;
    let mut c = diesel_async::sync_connection_wrapper::SyncConnectionWrapper::<
        diesel::SqliteConnection,
    >::establish(&url.replace("sqlite://", ""))
    .await
    .expect("a second connection");
    c.batch_execute(&seed()).await.expect("the seed");
    assert_eq!(look(&db).await, expected());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn on_postgresql_the_look_reads_only_the_rows_it_wants() {
    let Ok(server) = std::env::var(TEST_DATABASE_ENV) else {
        // SQLite's case is the test above; `.ci/run` sets the server.
        return;
    };
    let url = fresh_postgres_database(&server).await.unwrap();
    let db = open(&url).await;
    let mut c = AsyncPgConnection::establish(&url).await.unwrap();
    c.batch_execute(&seed()).await.expect("the seed");
    c.batch_execute("ANALYZE deposit_orders").await.unwrap();
    assert_eq!(look(&db).await, expected());

    // The statement's shape as diesel sends it: every value bound.
    c.batch_execute(
        "PREPARE look(text[], text, bigint, bigint) AS \
         SELECT order_no, created_at, expire_at FROM deposit_orders \
         WHERE status = ANY($1) AND route = $2 AND created_at <= $3 \
         ORDER BY created_at, order_no LIMIT $4",
    )
    .await
    .unwrap();
    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
        line: String,
    }
    // PostgreSQL weighs a generic plan after the fifth execution.
    for execution in 1..=8 {
        let plan: Vec<Line> =
            diesel::sql_query("EXPLAIN EXECUTE look('{pending,matched}', 'channel', 50, 500)")
                .load(&mut c)
                .await
                .unwrap();
        let plan: Vec<String> = plan.into_iter().map(|l| l.line).collect();
        // An index scan or a bitmap one, through this index alone.
        let reads: Vec<&String> = plan.iter().filter(|l| l.contains(" on ")).collect();
        assert!(
            reads
                .iter()
                .any(|l| l.contains(" on deposit_orders_channel_awaiting"))
                && !reads
                    .iter()
                    .any(|l| l.contains("Seq Scan") || l.contains("deposit_orders_expiry")),
            "execution {execution}: {plan:#?}"
        );
    }
}
