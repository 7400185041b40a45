//! An in-process service for tests and the conformance suite: sandbox
//! profile on a free port, a throwaway SQLite file, or a fresh PostgreSQL
//! database when `PAYMENTS_TEST_DATABASE_URL` names a server.

pub mod channel_sim;

use anyhow::{Context, Result};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use payments_service::app::actor::Actor;
use payments_service::app::merchants::{self, NewMerchant};
use payments_service::app::people::Operator;
use payments_service::app::App;
use payments_service::clock::Clock;
use payments_service::config::Config;
use payments_service::domain::people::Action;
use payments_service::domain::routing::Profile;
use payments_service::domain::status::Role;
use payments_service::keys::KeyVault;
use payments_service::server::{self, Service};
use std::sync::Arc;

/// The operator token every test service accepts.
// 32 random bytes in hex, as production wants of a bootstrap token.
pub const TEST_OPERATOR_TOKEN: &str =
    "op_test_5c1d0e8f2a7b4c9d3e6f1a8b2c7d4e9f0a3b6c1d8e2f5a4b7c0d9e3f6a1b8c2d";
pub const TEST_OPERATOR: &str = "test-operator";

/// Set-up a test does itself (merchants, paid deposits): nobody's action,
/// so no audit row.
pub const SET_UP: Actor = Actor::System("test set-up");

/// The configured test operator taking `action`, as the operator API hands
/// it to a use case: the use case appends the action's audit row.
pub fn operator(action: Action) -> Actor {
    Actor::operator(
        Operator {
            id: None,
            name: TEST_OPERATOR.into(),
            role: Role::Admin,
        },
        action,
        "test",
    )
}

/// A person: an operator of `role` made as set-up, and a token of its own
/// (its id and the token). Money actions need two of them.
pub async fn person(app: &App, name: &str, role: Role) -> Result<(String, String)> {
    use payments_service::app::people::{self, NewOperator};
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let row = people::create(
        app,
        &SET_UP,
        NewOperator {
            name: name.to_string(),
            email: format!("{name}-{tag}@example.test"),
            role,
        },
    )
    .await?;
    let issued = people::issue_token(app, &SET_UP, &row.id, "test".into(), None).await?;
    Ok((row.id, issued.token))
}

/// Names a PostgreSQL server (any database on it) to run tests against.
pub const TEST_DATABASE_ENV: &str = "PAYMENTS_TEST_DATABASE_URL";

pub struct TestService {
    pub service: Service,
    pub database_url: String,
}

impl TestService {
    pub async fn start(profile: Profile, clock: Arc<dyn Clock>) -> Result<TestService> {
        Self::start_with(profile, clock, |_| {}).await
    }

    /// Like `start`, with the configuration adjusted by `adjust` first.
    pub async fn start_with(
        profile: Profile,
        clock: Arc<dyn Clock>,
        adjust: impl FnOnce(&mut Config),
    ) -> Result<TestService> {
        Self::start_adjusting(profile, clock, adjust, |_| {}).await
    }

    /// Like `start_with`, and the built application adjusted by
    /// `adjust_app` before it serves (a test's own channels, say).
    pub async fn start_adjusting(
        profile: Profile,
        clock: Arc<dyn Clock>,
        adjust: impl FnOnce(&mut Config),
        adjust_app: impl FnOnce(&mut App),
    ) -> Result<TestService> {
        let port = free_port()?;
        let mut config = Config::defaults(profile);
        let scratch = std::env::temp_dir().join(format!("payments-test-{}", uuid::Uuid::new_v4()));
        config.bind = format!("127.0.0.1:{port}");
        config.public_base_url = format!("http://127.0.0.1:{port}");
        config.master_key = Some(KeyVault::generate_master_key());
        // Tests drive expiry and delivery themselves, on their own clock,
        // unless they ask for the workers.
        config.expiry_interval_seconds = 0;
        config.callback_worker = false;
        config.operators = vec![payments_service::config::OperatorConfig {
            name: TEST_OPERATOR.into(),
            token: TEST_OPERATOR_TOKEN.into(),
        }];
        config.log_level = std::env::var("PAYMENTS_LOG_LEVEL").unwrap_or_else(|_| "warn".into());
        config.database_url = match std::env::var(TEST_DATABASE_ENV) {
            Ok(server_url) if !server_url.is_empty() => {
                fresh_postgres_database(&server_url).await?
            }
            _ if profile == Profile::Production => {
                anyhow::bail!("the production profile needs {TEST_DATABASE_ENV} (a PostgreSQL URL)")
            }
            _ => format!("sqlite://{}", scratch.join("payments.db").display()),
        };
        config.data_dir = scratch;
        let created = config.database_url.clone();
        adjust(&mut config);
        // On PostgreSQL the service runs as a role that owns nothing, as
        // production should, so every test on it proves that the grants
        // suffice; the tests themselves reach the database as its owner.
        if created.starts_with("postgres") && config.database_url == created {
            config.database_migrate_url = Some(created.clone());
            config.database_url = service_role_url(&created).await?;
        }
        config.validate()?;
        let database_url = config
            .database_migrate_url
            .clone()
            .unwrap_or_else(|| config.database_url.clone());
        let mut app = server::build_app(config, clock).await?;
        let only = Arc::get_mut(&mut app).context("the built app is shared before it serves")?;
        adjust_app(only);
        let service = server::start(app)?;
        Ok(TestService {
            service,
            database_url,
        })
    }

    pub fn base_url(&self) -> String {
        self.service.base_url()
    }

    pub async fn new_merchant(&self, name: &str) -> Result<NewMerchant> {
        let code = format!("m{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
        Ok(merchants::create(self.service.app(), &SET_UP, &code, name).await?)
    }
}

/// A deposit request with only the required fields, for tests and
/// benchmarks that create orders directly.
pub fn new_deposit(
    merchant_order_no: &str,
    amount: rust_decimal::Decimal,
    currency: &str,
    callback_url: Option<&str>,
) -> payments_service::app::deposits::NewDeposit {
    payments_service::app::deposits::NewDeposit {
        merchant_order_no: merchant_order_no.into(),
        amount,
        currency: currency.into(),
        callback_url: callback_url.map(String::from),
        return_url: None,
        extra_data: None,
        user_id: None,
        payer: payments_service::app::deposits::Payer::default(),
        fingerprint: merchant_order_no.into(),
    }
}

/// Gives `merchant` a balance in `currency` through a completed deposit on
/// the currency's route (an account, for THB in the sandbox), numbered
/// `merchant_order_no`.
pub async fn fund(
    app: &App,
    merchant: &payments_service::app::merchants::Merchant,
    merchant_order_no: &str,
    amount: rust_decimal::Decimal,
    currency: &str,
) -> Result<()> {
    use payments_service::app::deposits;
    let new = new_deposit(merchant_order_no, amount, currency, None);
    let order = deposits::create(app, merchant, new).await?;
    deposits::complete(app, &SET_UP, &order.order_no, None, None).await?;
    Ok(())
}

/// A withdrawal request with only the required fields, to one
/// beneficiary (Somchai Jaidee at SCB) at `account`, for tests and
/// benchmarks that create orders directly. A new optional field of
/// withdrawals is added here once.
pub fn new_withdrawal(
    merchant_order_no: &str,
    amount: rust_decimal::Decimal,
    currency: &str,
    account: &str,
) -> payments_service::app::withdrawals::NewWithdrawal {
    payments_service::app::withdrawals::NewWithdrawal {
        merchant_order_no: merchant_order_no.into(),
        amount,
        currency: currency.into(),
        beneficiary_name: "Somchai Jaidee".into(),
        beneficiary_account: account.into(),
        beneficiary_bank_code: "SCB".into(),
        details: Default::default(),
        fingerprint: merchant_order_no.into(),
    }
}

/// A withdrawal of 100 THB from `merchant` to `account` at SCB, numbered
/// `merchant_order_no`, approved by the test operator (and so handed to
/// its channel), as it stands afterwards.
pub async fn approved_withdrawal(
    app: &App,
    merchant: &payments_service::app::merchants::Merchant,
    merchant_order_no: &str,
    account: &str,
) -> Result<payments_service::app::withdrawals::Withdrawal> {
    use payments_service::app::withdrawals;
    let new = new_withdrawal(
        merchant_order_no,
        rust_decimal::Decimal::from(100),
        "THB",
        account,
    );
    let w = withdrawals::create(app, merchant, new).await?;
    withdrawals::approve(app, &operator(Action::ApproveWithdrawal), &w.order_no, None).await?;
    Ok(withdrawals::find_any(app, &w.order_no).await?)
}

/// `merchant`'s (available, frozen) in `currency`.
pub async fn balance(
    app: &App,
    merchant_id: &str,
    currency: &str,
) -> Result<(rust_decimal::Decimal, rust_decimal::Decimal)> {
    let all = payments_service::app::balances::list(app, merchant_id).await?;
    let one = all
        .iter()
        .find(|b| b.currency == currency)
        .with_context(|| format!("no {currency} balance"))?;
    Ok((one.available, one.frozen))
}

/// A port to serve a test service on, free when asked. It is chosen below
/// the kernel's ephemeral range (32768 and up on Linux), because the
/// service binds it only after connecting to its database: an ephemeral
/// port freed here could meanwhile become the local end of one of the
/// pool's connections (bind then fails), a port below that range never.
/// A port is handed out once per process: tests run side by side, and two
/// that drew the same port before either bound it failed one bind (seen
/// once in CI, `delivery.rs`).
pub fn free_port() -> Result<u16> {
    static HANDED_OUT: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    for _ in 0..200 {
        let offset = (uuid::Uuid::new_v4().as_u128() % 12_000) as u16;
        let port = 20_000 + offset;
        let mut handed_out = HANDED_OUT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if handed_out.contains(&port) {
            continue;
        }
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            handed_out.insert(port);
            return Ok(port);
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// Creates `payments_test_<random>` on the server `server_url` names and
/// returns its URL. `.ci/run` drops these databases when it finishes.
pub async fn fresh_postgres_database(server_url: &str) -> Result<String> {
    let name = format!("payments_test_{}", uuid::Uuid::new_v4().simple());
    let mut admin = AsyncPgConnection::establish(server_url)
        .await
        .with_context(|| {
            format!(
                "connecting to {}",
                payments_service::config::redact_url(server_url)
            )
        })?;
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut admin)
        .await
        .context("creating a test database")?;
    let base = match server_url.rfind('/') {
        Some(i) if i > "postgres://".len() => &server_url[..i],
        _ => server_url,
    };
    Ok(format!("{base}/{name}"))
}

/// The role the service runs as in tests on PostgreSQL: it may sign in,
/// and holds only what `payments_store::privileges` grants it.
pub const SERVICE_ROLE: &str = "payments_service_test";

/// `database_url` (its owner's) signed in as `SERVICE_ROLE` instead,
/// which is created on the server if it is not there (trust
/// authentication, as on the test server).
pub async fn service_role_url(database_url: &str) -> Result<String> {
    let mut owner = AsyncPgConnection::establish(database_url)
        .await
        .context("connecting to the test database as its owner")?;
    // Tests start at once on one server: a concurrent create is a
    // duplicate (or, racing in the catalogue, a unique violation).
    diesel::sql_query(format!(
        "DO $$ BEGIN CREATE ROLE {SERVICE_ROLE} LOGIN; \
         EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
    ))
    .execute(&mut owner)
    .await
    .context("creating the service's role")?;
    with_user(database_url, SERVICE_ROLE)
}

/// `url` signing in as `user`, without a password.
pub fn with_user(url: &str, user: &str) -> Result<String> {
    let (scheme, rest) = url.split_once("://").with_context(|| {
        format!(
            "{} has no scheme",
            payments_service::config::redact_url(url)
        )
    })?;
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let host = match rest[..authority_end].rfind('@') {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    Ok(format!("{scheme}://{user}@{host}"))
}

/// Ends, from the server's side, every connection to `database_url`'s
/// database that is waiting in `LISTEN` (the delivery workers' wake-up
/// connections), as a failover or an idle-connection reaper would.
/// Returns how many it ended.
pub async fn terminate_listeners(database_url: &str) -> Result<usize> {
    #[derive(diesel::QueryableByName)]
    struct Ended {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        #[allow(dead_code)]
        ended: bool,
    }
    let mut conn = AsyncPgConnection::establish(database_url)
        .await
        .context("connecting to the test database")?;
    let ended: Vec<Ended> = diesel::sql_query(
        "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() \
         AND query LIKE 'LISTEN%'",
    )
    .load(&mut conn)
    .await
    .context("ending the LISTEN connections")?;
    Ok(ended.len())
}
