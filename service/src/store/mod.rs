//! The database: PostgreSQL in production, an embedded SQLite file in the
//! sandbox, behind one pool type (`Db`) whose units of work wake the
//! delivery worker after a commit that queued a callback. Rows in `rows`,
//! queries per aggregate in `queries`, keyset paging in `paging`; each
//! backend's migrations are applied at start-up.

mod dialect;
pub mod error;
pub mod paging;
pub mod queries;
pub mod rows;
pub mod schema;
mod status_sql;

pub use error::{StoreError, StoreResult};
pub use queries::Store;

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
use std::cell::RefCell;
use std::future::Future;
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
}

#[derive(Clone)]
enum Pools {
    Postgres(Pool<AsyncPgConnection>),
    Sqlite(Pool<SqliteConn>),
}

tokio::task_local! {
    /// What the unit of work under way has done, told after its commit.
    static UNIT: RefCell<Unit>;
}

#[derive(Default)]
struct Unit {
    /// It wrote a callback that is due.
    callback_queued: bool,
    /// When it began, in milliseconds on the injected clock.
    began_ms: i64,
    /// The orders it wrote.
    orders: Vec<OrderWritten>,
}

/// The store calls this when it writes a due callback record; the unit of
/// work it runs in rings the bell after its commit. Outside a unit of work
/// (no scope) it does nothing.
pub(crate) fn callback_queued() {
    let _ = UNIT.try_with(|u| u.borrow_mut().callback_queued = true);
}

/// When the unit of work under way began, in milliseconds on the injected
/// clock: the time a callback record notes as its queueing, so that the
/// delay to its first attempt is measured finer than the seconds the rows
/// keep. `None` outside a unit of work.
pub fn unit_began_ms() -> Option<i64> {
    UNIT.try_with(|u| u.borrow().began_ms).ok()
}

/// An order the store wrote: created, or moved to `status`.
#[derive(Debug)]
pub(crate) struct OrderWritten {
    pub kind: &'static str,
    pub order_no: String,
    pub merchant_order_no: String,
    pub merchant_id: String,
    pub currency: String,
    pub status: &'static str,
    pub created: bool,
}

pub(crate) fn order_written(order: OrderWritten) {
    let _ = UNIT.try_with(|u| u.borrow_mut().orders.push(order));
}

impl OrderWritten {
    /// The order's line in the log and its counts, once committed. A new
    /// order born past its first state (an auto-approved withdrawal) also
    /// counts the move to it.
    fn tell(self) {
        use crate::telemetry::metrics;
        let OrderWritten {
            kind,
            order_no,
            merchant_order_no,
            merchant_id,
            currency,
            status,
            created,
        } = self;
        if created {
            metrics::order_created(kind, &currency);
            if status != "pending" {
                metrics::order_state_changed(kind, &currency, status);
            }
            tracing::info!(
                kind,
                %order_no,
                %merchant_order_no,
                %merchant_id,
                %currency,
                status,
                "order created"
            );
        } else {
            metrics::order_state_changed(kind, &currency, status);
            tracing::info!(kind, %order_no, %merchant_id, %currency, status, "order state changed");
        }
    }
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
        let pool = Self::pools(url, pool_size).await?;
        Ok(Db {
            pool,
            callbacks_due,
            clock,
        })
    }

    async fn pools(url: &str, pool_size: usize) -> Result<Pools> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let conn = AsyncPgConnection::establish(url)
                .await
                .with_context(|| format!("connecting to {}", crate::config::redact_url(url)))?;
            run_migrations(conn, PG_MIGRATIONS).await?;
            let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
                url,
                pool_config(),
            );
            let pool = Pool::builder(manager)
                .max_size(pool_size)
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
        let unavailable = |e: &dyn std::fmt::Display| StoreError::Unavailable(e.to_string());
        Ok(match &self.pool {
            Pools::Postgres(p) => Conn::Postgres(p.get().await.map_err(|e| unavailable(&e))?),
            Pools::Sqlite(p) => Conn::Sqlite(p.get().await.map_err(|e| unavailable(&e))?),
        })
    }

    /// Runs `f` on a connection outside a transaction (single reads).
    pub async fn run<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, StoreResult<T>> + Send,
    {
        self.ringing(async {
            match self.conn().await? {
                Conn::Postgres(mut c) => f(&mut *c).await,
                Conn::Sqlite(mut c) => f(&mut *c).await,
            }
        })
        .await
    }

    pub async fn transaction<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<diesel::result::Error> + From<StoreError> + Send + 'static,
        F: for<'c> FnOnce(&'c mut dyn Store) -> BoxFuture<'c, Result<T, E>> + Send + 'static,
    {
        self.ringing(async {
            match self.conn().await? {
                Conn::Postgres(mut c) => {
                    let c: &mut AsyncPgConnection = &mut c;
                    c.transaction(async move |tx: &mut AsyncPgConnection| f(tx).await)
                        .await
                }
                Conn::Sqlite(mut c) => {
                    let c: &mut SqliteConn = &mut c;
                    c.transaction(async move |tx: &mut SqliteConn| f(tx).await)
                        .await
                }
            }
        })
        .await
    }

    /// Runs a unit of work and, when it succeeded (committed), tells what
    /// it wrote and, if it queued a callback, wakes the delivery worker.
    async fn ringing<T, E>(&self, work: impl Future<Output = Result<T, E>>) -> Result<T, E> {
        let unit = Unit {
            began_ms: self.clock.now().timestamp_millis(),
            ..Unit::default()
        };
        let (result, unit) = UNIT
            .scope(RefCell::new(unit), async {
                let result = work.await;
                (result, UNIT.with(|u| u.take()))
            })
            .await;
        if result.is_ok() {
            for order in unit.orders {
                order.tell();
            }
            if unit.callback_queued {
                self.callbacks_due.notify_one();
            }
        }
        result
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

    /// The newest migration the database has applied and the newest this
    /// build carries: equal when the schema is the one the code expects.
    pub async fn schema_versions(&self) -> StoreResult<SchemaVersions> {
        #[derive(diesel::QueryableByName)]
        struct Newest {
            #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
            version: Option<String>,
        }
        const NEWEST: &str = "SELECT MAX(version) AS version FROM __diesel_schema_migrations";
        use diesel_async::RunQueryDsl;
        let (applied, migrations) = match self.conn().await? {
            Conn::Postgres(mut c) => (
                diesel::sql_query(NEWEST)
                    .get_result::<Newest>(&mut *c)
                    .await?,
                newest_embedded::<diesel::pg::Pg>(&PG_MIGRATIONS),
            ),
            Conn::Sqlite(mut c) => (
                diesel::sql_query(NEWEST)
                    .get_result::<Newest>(&mut *c)
                    .await?,
                newest_embedded::<diesel::sqlite::Sqlite>(&SQLITE_MIGRATIONS),
            ),
        };
        Ok(SchemaVersions {
            applied: applied.version,
            expected: migrations,
        })
    }
}

/// The newest version among a backend's embedded migrations.
fn newest_embedded<DB: diesel::backend::Backend>(migrations: &EmbeddedMigrations) -> String {
    use diesel::migration::MigrationSource;
    MigrationSource::<DB>::migrations(migrations)
        .unwrap_or_default()
        .iter()
        .map(|m| m.name().version().to_string())
        .max()
        .unwrap_or_default()
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

fn pool_config<C: AsyncConnection + 'static>() -> ManagerConfig<C> {
    let mut config = ManagerConfig::default();
    config.recycling_method = RecyclingMethod::Fast;
    config
}

async fn sqlite_connect(path: String) -> Result<SqliteConn> {
    let mut conn = SqliteConn::establish(&path)
        .await
        .with_context(|| format!("opening SQLite database {path}"))?;
    conn.batch_execute(
        "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; \
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
