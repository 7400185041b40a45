//! `store/src/schema.rs` is written by hand beside the migrations; this test
//! applies the migrations to a fresh database (SQLite, and PostgreSQL when
//! `PAYMENTS_TEST_DATABASE_URL` names a server) and fails on any table or
//! column whose name or nullability differs between the two, so a
//! migration without its schema change (or the reverse) is caught before a
//! query fails at run time.

use diesel::sql_types::{Integer, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use payments_service::store::Db;
use std::collections::{BTreeMap, BTreeSet};

/// Table → its columns as (name, nullable).
type Tables = BTreeMap<String, BTreeSet<(String, bool)>>;

/// The tables `schema.rs` declares, read from its `diesel::table!` blocks.
fn declared() -> Tables {
    let text = include_str!("../store/src/schema.rs");
    let mut tables = Tables::new();
    let mut current: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some((name, _keys)) = line.split_once(" (").filter(|_| line.ends_with(") {")) {
            current = Some(name.to_string());
            tables.entry(name.to_string()).or_default();
        } else if line == "}" {
            current = None;
        } else if let (Some(table), Some((column, kind))) = (&current, line.split_once(" -> ")) {
            let nullable = kind.starts_with("Nullable<");
            tables
                .get_mut(table)
                .map(|c| c.insert((column.trim().to_string(), nullable)));
        }
    }
    tables
}

#[derive(QueryableByName)]
struct Column {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Integer)]
    not_null: i32,
}

fn collect(columns: Vec<Column>) -> Tables {
    let mut tables = Tables::new();
    for c in columns {
        if c.table_name.starts_with("__diesel") || c.table_name.starts_with("sqlite_") {
            continue;
        }
        tables
            .entry(c.table_name)
            .or_default()
            .insert((c.name, c.not_null == 0));
    }
    tables
}

fn compare(backend: &str, migrated: &Tables) {
    let declared = declared();
    assert!(declared.len() > 5, "schema.rs was not read");
    let mut differences = Vec::new();
    for (table, columns) in declared.iter() {
        match migrated.get(table) {
            None => differences.push(format!("{table}: in schema.rs, not in the migrations")),
            Some(actual) => {
                for c in columns.difference(actual) {
                    differences.push(format!(
                        "{table}.{} (nullable {}): schema.rs only",
                        c.0, c.1
                    ));
                }
                for c in actual.difference(columns) {
                    differences.push(format!(
                        "{table}.{} (nullable {}): migrations only",
                        c.0, c.1
                    ));
                }
            }
        }
    }
    for table in migrated.keys().filter(|t| !declared.contains_key(*t)) {
        differences.push(format!("{table}: in the migrations, not in schema.rs"));
    }
    assert!(
        differences.is_empty(),
        "{backend}: schema.rs and the migrations disagree:\n  {}",
        differences.join("\n  ")
    );
}

/// Applies the migrations, as the service does at start-up.
async fn migrate(url: &str) {
    let clock = std::sync::Arc::new(payments_service::clock::SystemClock);
    Db::connect(url, 1, Default::default(), clock)
        .await
        .unwrap();
}

#[tokio::test]
async fn sqlite_migrations_make_the_declared_schema() {
    let dir = std::env::temp_dir().join(format!("payments-schema-{}", uuid_like()));
    let path = dir.join("schema.db");
    let url = format!("sqlite://{}", path.display());
    migrate(&url).await;
    let mut conn = diesel_async::sync_connection_wrapper::SyncConnectionWrapper::<
        diesel::SqliteConnection,
    >::establish(path.to_str().unwrap())
    .await
    .unwrap();
    // A TEXT primary key may hold NULL in SQLite unless declared NOT NULL;
    // the schema (and every insert) treats it as required.
    let columns: Vec<Column> = diesel::sql_query(
        "SELECT m.name AS table_name, p.name AS name, \
                CASE WHEN p.\"notnull\" = 1 OR p.pk > 0 THEN 1 ELSE 0 END AS not_null \
         FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'",
    )
    .load(&mut conn)
    .await
    .unwrap();
    compare("SQLite", &collect(columns));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn postgres_migrations_make_the_declared_schema() {
    let Ok(server) = std::env::var(payments_testing::TEST_DATABASE_ENV) else {
        // Runs where the suite runs on PostgreSQL (.ci/run does both).
        return;
    };
    let url = payments_testing::fresh_postgres_database(&server)
        .await
        .unwrap();
    migrate(&url).await;
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    let columns: Vec<Column> = diesel::sql_query(
        "SELECT table_name::text AS table_name, column_name::text AS name, \
                CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS not_null \
         FROM information_schema.columns WHERE table_schema = 'public'",
    )
    .load(&mut conn)
    .await
    .unwrap();
    compare("PostgreSQL", &collect(columns));
}

fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    )
}
