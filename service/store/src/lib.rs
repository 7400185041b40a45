//! The database: PostgreSQL in production, an embedded SQLite file in the
//! sandbox, behind one pool type (`Db`) whose units of work wake the
//! delivery worker after a commit that queued a callback. Rows in `rows`,
//! queries per aggregate in `queries`, keyset paging in `paging`; each
//! backend's migrations are applied at start-up.

pub mod audit;
mod dialect;
pub mod error;
mod listen;
pub mod paging;
mod prepared;
pub mod privileges;
pub mod queries;
pub mod rows;
pub mod schema;
mod unit;

// The layers below, under the names every module of this crate uses for
// them (`crate::domain::…`): Cargo lets this crate name nothing above it.
use payments_config as config;
use payments_domain as domain;
use payments_domain::clock;
use payments_telemetry as telemetry;

pub use dialect::{raw_statements, RawKind, RawStatement};
pub use error::{InRow, StoreError, StoreResult, UniqueKey};
pub use queries::deposits::DepositKey;
pub use queries::withdrawals::BeneficiaryKey;
pub use queries::{OrderKey, Store};
pub(crate) use unit::OrderWritten;
pub use unit::{Effects, Tx, UnitOfWork};

use crate::clock::Clock;
use anyhow::{anyhow, Context, Result};
use diesel::SqliteConnection;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use futures::future::BoxFuture;
use queries::{DeferredQueries, LedgerQueries, PeopleQueries};
use std::sync::Arc;
use tokio::sync::Notify;

pub type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// The database, and the delivery worker's bell: a unit of work (`run` or
/// `transaction`) that made a callback due rings it once it has
/// committed, so no caller wakes the worker by hand and none can forget.
/// The orders it wrote are told (metrics, an info line each) only then,
/// so a rolled-back change is never counted or logged as done.
#[derive(Clone)]
pub struct Db {
    pool: Pools,
    callbacks_due: Arc<Notify>,
    clock: Arc<dyn Clock>,
    options: DbOptions,
    /// Whether the LISTEN connection for callbacks is up (PostgreSQL).
    listening: Arc<std::sync::atomic::AtomicBool>,
    /// Counts this instance's units of work that wrote a merchant, an API
    /// key or a fee rate, so that what was read of them before can be
    /// known to be stale (`merchants_generation`).
    merchants_written: Arc<std::sync::atomic::AtomicU64>,
    /// Rung after every commit that wrote a merchant event: the sequencer
    /// places it in the feed.
    events_recorded: Arc<Notify>,
}

/// How to reach the database beyond its URL.
#[derive(Clone, Debug, Default)]
pub struct DbOptions {
    /// Straight to PostgreSQL (migrations, LISTEN) when the URL goes
    /// through a pooler; once connected, the URL itself when there is
    /// none.
    pub direct_url: Option<String>,
    /// The URL is PgBouncer in transaction pooling mode (before 1.21, no
    /// prepared statements across transactions): nothing is kept
    /// prepared, and every unit of work is a transaction, so that each
    /// statement's parse and execution reach the same server connection.
    pub pgbouncer: bool,
    /// How long a unit of work waits for a free connection before it is
    /// refused as unavailable (a 503 with `Retry-After`), rather than
    /// queueing without end behind a full pool; `DEFAULT_POOL_WAIT` when
    /// not given.
    pub pool_wait: Option<std::time::Duration>,
    /// PostgreSQL as the role that owns the tables: when given, the
    /// migrations run as it and then grant the service's own role (the
    /// one `direct_url` or the URL signs in as) only what it needs
    /// (`privileges`); when not, the service's role migrates and owns.
    pub migrate_url: Option<String>,
}

/// A connection not free within this is a 503, not a longer wait.
pub const DEFAULT_POOL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Clone)]
enum Pools {
    Postgres(Pool<AsyncPgConnection>),
    Sqlite(Pool<SqliteConn>),
}

/// Runs `f` as one unit of work on `conn`: what it answered and what it
/// did, for `Db` to act on once the unit ends.
async fn in_unit<C, T, E, F>(conn: &mut C, began_ms: i64, f: F) -> (Result<T, E>, Effects)
where
    for<'x> Tx<'x, C>: Store,
    E: From<StoreError>,
    F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, Result<T, E>>,
{
    let mut tx = Tx::new(conn, began_ms);
    let result = f(&mut tx).await;
    let result = written_at_end(&mut tx, result).await;
    (result, tx.into_effects())
}

/// What a unit that succeeded kept to its end: the rows it held
/// (`defer_inserts`; after its audit row, which it may hold too), then
/// its balances (`coalesce_balances`), so that nothing it moved is left
/// unwritten. The balances go last because their update locks the row
/// until the commit: a batch of one merchant's completions holds that
/// row, which every other batch of the merchant waits for, only for its
/// update and its commit, not while its journal, events and callback
/// records are written too (issue 56: the held rows' statements took
/// 1.2 to 3.6 ms a batch, inside the lock, when written after it).
async fn written_at_end<C, T, E>(tx: &mut Tx<'_, C>, result: Result<T, E>) -> Result<T, E>
where
    for<'x> Tx<'x, C>: Store,
    E: From<StoreError>,
{
    let value = result?;
    tx.write_deferred().await?;
    tx.flush_balances().await?;
    Ok(value)
}

/// Why a transaction ended without committing: the work's own error, or
/// the database's at BEGIN or COMMIT.
enum Failed<E> {
    Work(E),
    Database(diesel::result::Error),
}

impl<E> From<diesel::result::Error> for Failed<E> {
    fn from(e: diesel::result::Error) -> Self {
        Failed::Database(e)
    }
}

/// Marks the change request approved, in the transaction of the action it
/// approves; refused when another decision came first.
async fn decide_approved(
    tx: &mut dyn Store,
    approving: &audit::Approving,
    at: i64,
) -> StoreResult<()> {
    let decision = queries::changes::Decision {
        status: domain::four_eyes::ChangeRequestStatus::Approved,
        by: Some((&approving.by_id, &approving.by_name)),
        remarks: approving.remarks.as_deref(),
        at,
    };
    if tx
        .decide_change_request(&approving.change_request_id, &decision)
        .await?
    {
        Ok(())
    } else {
        Err(StoreError::AlreadyDecided(
            approving.change_request_id.clone(),
        ))
    }
}

/// `in_unit` for a transaction, which also appends `pending`, the audit row
/// of the operator action it is, if any: its target's settings read before
/// `f` and after it, the row written only if `f` succeeded, so that it
/// commits or rolls back with the action.
async fn in_audited_unit<C, T, E, F>(
    conn: &mut C,
    began_ms: i64,
    pending: Option<audit::PendingAudit>,
    f: F,
) -> (Result<T, E>, Effects)
where
    for<'x> Tx<'x, C>: Store,
    E: From<StoreError>,
    F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, Result<T, E>>,
{
    let Some(pending) = pending else {
        return in_unit(conn, began_ms, f).await;
    };
    let mut tx = Tx::new(conn, began_ms);
    let audit::PendingAudit {
        mut row,
        snapshot,
        approves,
    } = pending;
    let before = match audit::snapshot(&mut tx, snapshot, &row.target_id).await {
        Ok(before) => before,
        Err(e) => return (Err(e.into()), tx.into_effects()),
    };
    let result = match f(&mut tx).await {
        Ok(value) => {
            if row.target_id.is_empty() {
                // A creation: its target is the row it created.
                row.target_id = tx.done.created.clone().unwrap_or_default();
            }
            let appended = async {
                row.after_state = audit::snapshot(&mut tx, snapshot, &row.target_id).await?;
                row.before_state = before;
                tx.append_audit(&row).await?;
                match &approves {
                    Some(a) => decide_approved(&mut tx, a, row.created_at).await,
                    None => Ok(()),
                }
            }
            .await;
            match appended {
                Ok(()) => Ok(value),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e),
    };
    let result = written_at_end(&mut tx, result).await;
    (result, tx.into_effects())
}

// Short-lived and moved once; boxing the larger variant buys nothing.
#[allow(clippy::large_enum_variant)]
enum Conn {
    Postgres(Object<AsyncPgConnection>),
    Sqlite(Object<SqliteConn>),
}

impl Db {
    /// Connects, applies pending migrations and returns a pool.
    /// Connects and migrates; `callbacks_due` is rung after every commit
    /// that queued a callback.
    pub async fn connect(
        url: &str,
        pool_size: usize,
        callbacks_due: Arc<Notify>,
        clock: Arc<dyn Clock>,
    ) -> Result<Db> {
        Self::open(url, pool_size, DbOptions::default(), callbacks_due, clock).await
    }

    /// `connect`, with how to reach the database beyond its URL.
    pub async fn open(
        url: &str,
        pool_size: usize,
        options: DbOptions,
        callbacks_due: Arc<Notify>,
        clock: Arc<dyn Clock>,
    ) -> Result<Db> {
        let pool = Self::pools(url, pool_size, &options).await?;
        let mut options = options;
        if options.direct_url.is_none() {
            options.direct_url = Some(url.to_string());
        }
        Ok(Db {
            pool,
            callbacks_due,
            clock,
            options,
            listening: Default::default(),
            merchants_written: Default::default(),
            events_recorded: Default::default(),
        })
    }

    async fn pools(url: &str, pool_size: usize, options: &DbOptions) -> Result<Pools> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let direct = options.direct_url.as_deref().unwrap_or(url);
            let conn = pg_establish(direct).await?;
            match options.migrate_url.as_deref() {
                Some(owner_url) => migrate_as_owner(conn, owner_url).await?,
                None => run_migrations(conn, PG_MIGRATIONS).await?,
            }
            let mut config = pool_config::<AsyncPgConnection>();
            if options.pgbouncer {
                config.custom_setup = Box::new(|url| Box::pin(pgbouncer_connect(url.to_string())));
            }
            let manager =
                AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config);
            let pool = Pool::builder(manager)
                .max_size(pool_size)
                .wait_timeout(Some(options.pool_wait.unwrap_or(DEFAULT_POOL_WAIT)))
                .runtime(deadpool::Runtime::Tokio1)
                .build()
                .context("building the PostgreSQL pool")?;
            Ok(Pools::Postgres(pool))
        } else {
            let path = url.strip_prefix("sqlite://").unwrap_or(url).to_string();
            if let Some(dir) = std::path::Path::new(&path).parent() {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
            }
            let conn = sqlite_connect(path.clone()).await?;
            run_migrations(conn, SQLITE_MIGRATIONS).await?;
            let mut config = pool_config::<SqliteConn>();
            config.custom_setup = Box::new(|url| {
                let url = url.to_string();
                Box::pin(async move {
                    sqlite_connect(url)
                        .await
                        .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))
                })
            });
            let manager = AsyncDieselConnectionManager::<SqliteConn>::new_with_config(path, config);
            // SQLite has one writer; a single connection serializes writes
            // instead of failing them with SQLITE_BUSY.
            let pool = Pool::builder(manager)
                .max_size(1)
                .wait_timeout(Some(options.pool_wait.unwrap_or(DEFAULT_POOL_WAIT)))
                .runtime(deadpool::Runtime::Tokio1)
                .build()
                .context("building the SQLite pool")?;
            Ok(Pools::Sqlite(pool))
        }
    }

    pub fn backend(&self) -> Backend {
        match self.pool {
            Pools::Postgres(_) => Backend::Postgres,
            Pools::Sqlite(_) => Backend::Sqlite,
        }
    }

    async fn conn(&self) -> StoreResult<Conn> {
        Ok(match &self.pool {
            Pools::Postgres(p) => Conn::Postgres(p.get().await.map_err(StoreError::unavailable)?),
            Pools::Sqlite(p) => Conn::Sqlite(p.get().await.map_err(StoreError::unavailable)?),
        })
    }

    /// Runs `f` on a connection without a transaction of its own: for
    /// single statements, reads or writes (behind PgBouncer it is wrapped
    /// in BEGIN/COMMIT sent by the simple protocol). Its effects are acted
    /// on only when it succeeded.
    pub async fn run<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, StoreResult<T>> + Send,
    {
        self.without_transaction(f).await
    }

    /// `run` for work whose own error is not the store's: statements each
    /// of which commits alone (through PgBouncer, one transaction, as
    /// every unit of work there is). For a change that is one statement,
    /// which BEGIN and COMMIT around it would only make slower.
    pub async fn without_transaction<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send,
        E: From<StoreError> + Send,
        F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, Result<T, E>> + Send,
    {
        let began = self.began_ms();
        let (result, done) = match self.conn().await? {
            Conn::Postgres(mut c) if self.options.pgbouncer => {
                // BEGIN and COMMIT go by the simple protocol, which
                // prepares nothing.
                c.batch_execute("BEGIN").await.map_err(StoreError::from)?;
                let (result, done) = in_unit(&mut *c, began, f).await;
                let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
                let ended = c.batch_execute(end).await;
                (
                    result
                        .and_then(|v| ended.map(|()| v).map_err(|e| E::from(StoreError::from(e)))),
                    done,
                )
            }
            Conn::Postgres(mut c) => in_unit(&mut *c, began, f).await,
            Conn::Sqlite(mut c) => in_unit(&mut *c, began, f).await,
        };
        self.after(done, result.is_ok());
        result
    }

    pub async fn transaction<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, Result<T, E>> + Send + 'static,
    {
        self.transaction_audited(None, f).await
    }

    /// A transaction that is an operator's action: `audit`, its row, is
    /// appended in it when `f` succeeds (`in_audited_unit`).
    pub async fn transaction_audited<T, E, F>(
        &self,
        audit: Option<audit::PendingAudit>,
        f: F,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, Result<T, E>> + Send + 'static,
    {
        let began = self.began_ms();
        let pending = audit;
        // diesel-async ends a transaction with its own error type: the
        // work's error travels beside it, untouched.
        let committed: Result<_, Failed<E>> = match self.conn().await? {
            Conn::Postgres(mut c) => {
                let c: &mut AsyncPgConnection = &mut c;
                c.transaction(async move |conn: &mut AsyncPgConnection| {
                    let (result, done) = in_audited_unit(conn, began, pending, f).await;
                    result.map(|v| (v, done)).map_err(Failed::Work)
                })
                .await
            }
            Conn::Sqlite(mut c) => {
                let c: &mut SqliteConn = &mut c;
                c.transaction(async move |conn: &mut SqliteConn| {
                    let (result, done) = in_audited_unit(conn, began, pending, f).await;
                    result.map(|v| (v, done)).map_err(Failed::Work)
                })
                .await
            }
        };
        // A rolled-back unit's effects never happened: they are dropped.
        let (value, done) = committed.map_err(|failed| match failed {
            Failed::Work(e) => e,
            Failed::Database(e) => E::from(StoreError::from(e)),
        })?;
        self.after(done, true);
        Ok(value)
    }

    fn began_ms(&self) -> i64 {
        self.clock.now().timestamp_millis()
    }

    /// Acts on what a unit of work did once it has ended: when it
    /// committed, tells the orders it wrote and, if it made a callback
    /// due, wakes the delivery worker.
    fn after(&self, done: Effects, committed: bool) {
        // Committed or not: a unit of work outside a transaction may have
        // written before it failed.
        if done.merchant_written {
            self.merchants_written
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        if committed {
            for order in done.orders {
                order.tell();
            }
            if done.callback_queued {
                self.callbacks_due.notify_one();
            }
            if done.event_recorded {
                self.events_recorded.notify_one();
            }
        }
    }

    /// The bell rung after each commit that wrote a merchant event.
    pub fn events_recorded(&self) -> Arc<Notify> {
        self.events_recorded.clone()
    }

    /// Moves on each time a unit of work on this instance has written a
    /// merchant, an API key or a fee rate, after it ended, and each time
    /// the LISTEN connection hears that another instance has, or comes
    /// back: what was read of them when it was lower may be stale. Read it
    /// before reading them.
    pub fn merchants_generation(&self) -> u64 {
        self.merchants_written
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether this instance hears other instances' callbacks and changes
    /// to merchants at once (`Some(true)`: listening), has lost the LISTEN
    /// connection or not made it yet (`Some(false)`: poll often, remember
    /// nothing), or needs no such thing (`None`: SQLite, one process).
    pub fn listening(&self) -> Option<bool> {
        match self.pool {
            Pools::Postgres(_) => Some(self.listening.load(std::sync::atomic::Ordering::SeqCst)),
            Pools::Sqlite(_) => None,
        }
    }

    /// On PostgreSQL, LISTENs over its own connection to the direct URL (a
    /// transaction pooler cannot carry LISTEN), reconnecting when it drops:
    /// for merchants, API keys and fee rates written on any instance, which
    /// move `merchants_generation` on, and, when `callbacks` is given, for
    /// callbacks becoming due on any instance, which ring it. `None` on
    /// SQLite.
    pub fn listen(&self, callbacks: Option<Arc<Notify>>) -> Option<tokio::task::JoinHandle<()>> {
        let (Pools::Postgres(_), Some(url)) = (&self.pool, self.options.direct_url.clone()) else {
            return None;
        };
        let heard = listen::Heard {
            callbacks,
            merchants_written: self.merchants_written.clone(),
            listening: self.listening.clone(),
        };
        Some(tokio::spawn(listen::listen(url, heard)))
    }

    /// The pool as deadpool sees it now.
    pub fn pool_status(&self) -> PoolStatus {
        let s = match &self.pool {
            Pools::Postgres(p) => p.status(),
            Pools::Sqlite(p) => p.status(),
        };
        PoolStatus {
            max_size: s.max_size,
            size: s.size,
            available: s.available,
            waiting: s.waiting,
        }
    }

    /// Compiles every raw statement (`raw_statements`) against this
    /// database's schema without running it: a query is prepared
    /// (PostgreSQL) or explained (SQLite), a utility statement runs in a
    /// transaction that is then rolled back. Each statement's name with
    /// what its database said; the tests run this on both backends.
    pub async fn check_raw_statements(&self) -> StoreResult<Vec<(&'static str, StoreResult<()>)>> {
        let mut checked = Vec::new();
        match self.conn().await? {
            Conn::Postgres(mut c) => {
                for s in raw_statements(Backend::Postgres) {
                    let result = match s.kind {
                        RawKind::Query => {
                            let prepared = c
                                .batch_execute(&format!("PREPARE raw_check AS {}", s.sql))
                                .await;
                            match prepared {
                                Ok(()) => c.batch_execute("DEALLOCATE raw_check").await,
                                Err(e) => Err(e),
                            }
                        }
                        RawKind::Utility => {
                            c.batch_execute("BEGIN").await?;
                            let ran = c.batch_execute(&s.sql).await;
                            c.batch_execute("ROLLBACK").await?;
                            ran
                        }
                    };
                    checked.push((s.name, result.map_err(StoreError::from)));
                }
            }
            Conn::Sqlite(mut c) => {
                for s in raw_statements(Backend::Sqlite) {
                    let result = c.batch_execute(&format!("EXPLAIN {}", s.sql)).await;
                    checked.push((s.name, result.map_err(StoreError::from)));
                }
            }
        }
        Ok(checked)
    }

    /// The newest migration the database has applied and the newest this
    /// build carries: equal when the schema is the one the code expects.
    pub async fn schema_versions(&self) -> StoreResult<SchemaVersions> {
        #[derive(diesel::QueryableByName)]
        struct Newest {
            #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
            version: Option<String>,
        }
        const NEWEST: &str = dialect::NEWEST_MIGRATION;
        use diesel_async::RunQueryDsl;
        let (applied, migrations) = match self.conn().await? {
            Conn::Postgres(mut c) => {
                // Through PgBouncer a statement needs a transaction (see
                // `pgbouncer_connect`); a read-only one costs nothing.
                c.batch_execute("BEGIN READ ONLY").await?;
                let newest = diesel::sql_query(NEWEST)
                    .get_result::<Newest>(&mut *c)
                    .await;
                let ended = c.batch_execute("COMMIT").await;
                let newest = newest?;
                ended?;
                (newest, newest_embedded::<diesel::pg::Pg>(&PG_MIGRATIONS)?)
            }
            Conn::Sqlite(mut c) => (
                diesel::sql_query(NEWEST)
                    .get_result::<Newest>(&mut *c)
                    .await?,
                newest_embedded::<diesel::sqlite::Sqlite>(&SQLITE_MIGRATIONS)?,
            ),
        };
        Ok(SchemaVersions {
            applied: applied.version,
            expected: migrations,
        })
    }
}

/// The newest version among a backend's embedded migrations.
fn newest_embedded<DB: diesel::backend::Backend>(
    migrations: &EmbeddedMigrations,
) -> StoreResult<String> {
    use diesel::migration::MigrationSource;
    let missing = |detail: String| StoreError::Corrupt {
        table: Some("__diesel_schema_migrations"),
        row: None,
        detail,
    };
    MigrationSource::<DB>::migrations(migrations)
        .map_err(|e| missing(format!("the embedded migrations cannot be listed: {e}")))?
        .iter()
        .map(|m| m.name().version().to_string())
        .max()
        .ok_or_else(|| missing("this build embeds no migrations".into()))
}

#[derive(Clone, Copy, Debug)]
pub struct PoolStatus {
    pub max_size: usize,
    pub size: usize,
    pub available: usize,
    pub waiting: usize,
}

#[derive(Clone, Debug)]
pub struct SchemaVersions {
    pub applied: Option<String>,
    pub expected: String,
}

/// A connection through PgBouncer in transaction pooling mode. diesel-async
/// sets the session's time zone and encoding with prepared statements as
/// soon as it connects, and before 1.21 PgBouncer may send a statement's
/// parse and its execution to different server connections unless a
/// transaction holds them together; so the setup runs inside one, opened
/// and closed by the simple protocol, which prepares nothing. PgBouncer
/// keeps the two settings per client from the server's answers.
async fn pgbouncer_connect(url: String) -> diesel::ConnectionResult<AsyncPgConnection> {
    let bad = |e: tokio_postgres::Error| diesel::ConnectionError::BadConnection(e.to_string());
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .map_err(bad)?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(error = %e, "a pooled connection through PgBouncer failed");
        }
    });
    client.batch_execute("BEGIN").await.map_err(bad)?;
    let mut conn = AsyncPgConnection::try_from(client).await?;
    conn.batch_execute("COMMIT")
        .await
        .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))?;
    conn.set_prepared_statement_cache_size(diesel::connection::CacheSize::Disabled);
    Ok(conn)
}

fn pool_config<C: AsyncConnection + 'static>() -> ManagerConfig<C> {
    let mut config = ManagerConfig::default();
    config.recycling_method = RecyclingMethod::Fast;
    config
}

async fn pg_establish(url: &str) -> Result<AsyncPgConnection> {
    AsyncPgConnection::establish(url)
        .await
        .with_context(|| format!("connecting to {}", crate::config::redact_url(url)))
}

/// Migrates as the owning role, then grants the role `service` signs in
/// as. The same role on both URLs would own what it is meant only to
/// use, so that is refused rather than run with a false sense of safety.
async fn migrate_as_owner(mut service: AsyncPgConnection, owner_url: &str) -> Result<()> {
    let role = privileges::current_role(&mut service).await?;
    let mut owner = pg_establish(owner_url).await?;
    let owner_role = privileges::current_role(&mut owner).await?;
    if owner_role == role {
        return Err(anyhow!(
            "the migration URL and the service's URL sign in as the same role ({role}): \
             the service would own its tables; give it a role of its own"
        ));
    }
    run_migrations(owner, PG_MIGRATIONS).await?;
    let mut owner = pg_establish(owner_url).await?;
    privileges::grant_service_role(&mut owner, &role).await?;
    tracing::info!(service_role = %role, owner_role = %owner_role, "migrated as the owner; the service's role holds grants only");
    Ok(())
}

async fn sqlite_connect(path: String) -> Result<SqliteConn> {
    let mut conn = SqliteConn::establish(&path)
        .await
        .with_context(|| format!("opening SQLite database {path}"))?;
    // busy_timeout first: switching to WAL takes a lock, and another
    // instance on the same file may hold one (its migrations, its writes),
    // so without the timeout set the switch fails at once with "locked".
    conn.batch_execute(
        "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
    )
    .await
    .context("configuring SQLite")?;
    Ok(conn)
}

async fn run_migrations<C>(conn: C, migrations: EmbeddedMigrations) -> Result<()>
where
    C: AsyncConnection + 'static,
    diesel_async::AsyncMigrationHarness<C>: MigrationHarness<C::Backend>,
{
    // The harness blocks on the async connection, so it runs off the
    // async workers.
    tokio::task::spawn_blocking(move || {
        let mut harness = diesel_async::AsyncMigrationHarness::new(conn);
        harness
            .run_pending_migrations(migrations)
            .map(|_| ())
            .map_err(|e| anyhow!("applying migrations: {e}"))
    })
    .await
    .map_err(|e| anyhow!("migration task: {e}"))?
}
