//! Several instances on one database act as one service: a merchant's rate
//! limit is shared (not multiplied by the number of instances), and on
//! PostgreSQL a callback committed by one instance wakes every instance's
//! delivery worker through LISTEN/NOTIFY. Instances here are `App`s built
//! on the same database, on one injected clock.

use payments_service::app::{limits, merchants, App};
use payments_service::clock::ManualClock;
use payments_service::domain::error::ApiError;
use payments_service::ratelimit::lease_size;
use payments_service::store::Backend;
use payments_service::{server, Profile};
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::Arc;
use std::time::Duration;

const T0: i64 = 1_800_000_000;

/// A service and a second instance on its database.
async fn two_instances() -> (TestService, Arc<App>, ManualClock) {
    let clock = ManualClock::at(T0);
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    let config = service.service.app().config.clone();
    let second = server::build_app(config, Arc::new(clock.clone()))
        .await
        .unwrap();
    (service, second, clock)
}

/// How many of `attempts` requests, alternating between the instances,
/// are admitted.
async fn admitted(
    apps: [&App; 2],
    merchant: &str,
    per_minute: u32,
    burst: u32,
    attempts: usize,
) -> usize {
    let mut admitted = 0;
    for i in 0..attempts {
        match limits::admit(apps[i % 2], merchant, per_minute, burst).await {
            Ok(()) => admitted += 1,
            Err(ApiError::RateLimited { retry_after }) => assert!(retry_after >= 1),
            Err(other) => panic!("{other:?}"),
        }
    }
    admitted
}

#[tokio::test]
async fn a_small_limit_holds_exactly_across_instances() {
    let (service, second, clock) = two_instances().await;
    let first = service.service.app().clone();
    let merchant = service
        .new_merchant("Shared limit")
        .await
        .unwrap()
        .merchant
        .id;
    // Burst 3, one a minute: before the bucket was per instance, two
    // instances let 6 through.
    assert_eq!(admitted([&first, &second], &merchant, 1, 3, 6).await, 3);
    clock.advance(30);
    assert_eq!(admitted([&first, &second], &merchant, 1, 3, 2).await, 0);
    clock.advance(30);
    assert_eq!(admitted([&first, &second], &merchant, 1, 3, 2).await, 1);
}

#[tokio::test]
async fn a_large_limit_is_shared_within_the_stated_bound() {
    let (service, second, clock) = two_instances().await;
    let first = service.service.app().clone();
    let merchant = service.new_merchant("Leases").await.unwrap().merchant.id;
    let burst = 200;
    let lease = usize::try_from(lease_size(burst)).unwrap();
    // Never more than the bucket holds; at most one unspent lease per
    // instance less.
    let n = admitted([&first, &second], &merchant, 60, burst, 400).await;
    assert!(
        n <= 200 && n >= 200 - 2 * lease,
        "{n} admitted of a burst of 200"
    );
    // Leases expire after a second: what they held is not spent later.
    clock.advance(2);
    let later = admitted([&first, &second], &merchant, 60, burst, 10).await;
    assert!(later <= 2, "{later} admitted after 2 s at one a second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_on_one_instance_refill_one_lease_at_a_time() {
    let (service, _second, _clock) = two_instances().await;
    let first = service.service.app().clone();
    let merchant = service.new_merchant("Herd").await.unwrap().merchant.id;
    // 200 requests at once under a burst of 2,000: had each request that
    // found the lease spent taken a lease of its own, they would have
    // overwritten each other's and lost the tokens, refusing requests the
    // bucket still had room for.
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (app, merchant) = (first.clone(), merchant.clone());
            tokio::spawn(async move { limits::admit(&app, &merchant, 600, 2_000).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().expect("admitted within the burst");
    }
}

#[tokio::test]
async fn a_callback_committed_on_one_instance_wakes_the_others_worker() {
    let (service, second, _clock) = two_instances().await;
    if second.db.backend() != Backend::Postgres {
        // One process writes SQLite; the in-process bell is the wake-up
        // (tests/tests/delivery_wake.rs). .ci/run runs this on PostgreSQL.
        return;
    }
    let first = service.service.app().clone();
    let bell: Arc<tokio::sync::Notify> = Default::default();
    let listener = second
        .db
        .listen(Some(bell.clone()))
        .expect("PostgreSQL listens");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while second.db.listening() != Some(true) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the LISTEN connection came up"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The ring after connecting only says "look now": drain it.
    while tokio::time::timeout(Duration::from_millis(200), bell.notified())
        .await
        .is_ok()
    {}

    let merchant = service.new_merchant("Wake").await.unwrap().merchant;
    let order = payments_service::app::deposits::create(
        &first,
        &merchant,
        payments_testing::new_deposit(
            "WAKE-1",
            Decimal::from(100),
            "THB",
            Some("http://127.0.0.1:9/cb"),
        ),
    )
    .await
    .unwrap();
    let heard = bell.notified();
    payments_service::app::deposits::complete(
        &first,
        &payments_testing::SET_UP,
        &order.order_no,
        None,
        None,
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(10), heard)
        .await
        .expect("the other instance heard of the callback");
    listener.abort();
}

#[tokio::test]
async fn a_lost_listen_connection_is_noticed_and_made_again() {
    let (service, second, _clock) = two_instances().await;
    if second.db.backend() != Backend::Postgres {
        // SQLite has no LISTEN connection to lose; .ci/run runs this on
        // PostgreSQL.
        return;
    }
    let bell: Arc<tokio::sync::Notify> = Default::default();
    let listener = second
        .db
        .listen(Some(bell.clone()))
        .expect("PostgreSQL listens");
    let listening_is = |db: &payments_service::store::Db, want: bool| {
        let db = db.clone();
        async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            while db.listening() != Some(want) {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "listening never became {want}"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    // Both instances' LISTEN connections, each made by its own task at
    // start: the first's may still be connecting when the second's is up.
    listening_is(&service.service.app().db, true).await;
    listening_is(&second.db, true).await;
    let ended = payments_testing::terminate_listeners(&service.database_url)
        .await
        .unwrap();
    assert_eq!(
        ended, 2,
        "each instance's LISTEN connection (the service's and the second's), ended by the server"
    );
    // Noticed (the worker polls every second meanwhile), then made again.
    listening_is(&second.db, false).await;
    listening_is(&second.db, true).await;
    while tokio::time::timeout(Duration::from_millis(200), bell.notified())
        .await
        .is_ok()
    {}

    // And it hears a callback committed elsewhere again.
    let first = service.service.app().clone();
    let merchant = service.new_merchant("Relisten").await.unwrap().merchant;
    let order = payments_service::app::deposits::create(
        &first,
        &merchant,
        payments_testing::new_deposit(
            "RELISTEN-1",
            Decimal::from(100),
            "THB",
            Some("http://127.0.0.1:9/cb"),
        ),
    )
    .await
    .unwrap();
    let heard = bell.notified();
    payments_service::app::deposits::complete(
        &first,
        &payments_testing::SET_UP,
        &order.order_no,
        None,
        None,
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(10), heard)
        .await
        .expect("heard after reconnecting");
    listener.abort();
}

/// `/readyz`'s checks on `service`, once its workers have begun (each
/// reports `starting` until its first pass).
async fn ready_checks(service: &TestService) -> serde_json::Value {
    let url = format!("{}/readyz", service.base_url());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let answer = reqwest::get(&url).await.unwrap();
        let status = answer.status().as_u16();
        let body: serde_json::Value = answer.json().await.unwrap();
        if status == 200 {
            return body["checks"].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never ready: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn roles_split_the_api_from_the_workers() {
    use payments_service::config::Roles;
    let clock = ManualClock::at(T0);
    let with_roles = |api, workers| {
        move |config: &mut payments_service::config::Config| {
            config.roles = Roles { api, workers };
            config.callback_worker = true;
            config.expiry_interval_seconds = 5;
        }
    };
    let workers = TestService::start_with(
        Profile::Sandbox,
        Arc::new(clock.clone()),
        with_roles(false, true),
    )
    .await
    .unwrap();
    let api = TestService::start_with(
        Profile::Sandbox,
        Arc::new(clock.clone()),
        with_roles(true, false),
    )
    .await
    .unwrap();

    // A workers-only instance serves its health and metrics, not the API.
    let balance = |base: String| async move {
        reqwest::get(format!("{base}/api/v1/merchant/balance"))
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(balance(workers.base_url()).await, 404);
    assert_eq!(balance(api.base_url()).await, 401, "served, and unsigned");

    let checks = ready_checks(&workers).await;
    assert_eq!(checks["delivery_worker"]["status"], "ok", "{checks}");
    assert_eq!(checks["expiry_worker"]["status"], "ok", "{checks}");
    let wakeups = checks["callback_wakeups"]["status"].as_str().unwrap();
    match workers.service.app().db.backend() {
        Backend::Sqlite => assert_eq!(wakeups, "in-process"),
        Backend::Postgres => assert!(["listening", "polling"].contains(&wakeups), "{wakeups}"),
    }

    let checks = ready_checks(&api).await;
    assert_eq!(checks["delivery_worker"]["status"], "disabled", "{checks}");
    assert_eq!(checks["expiry_worker"]["status"], "disabled", "{checks}");
    assert_eq!(checks["callback_wakeups"]["status"], "disabled", "{checks}");
}

#[tokio::test]
async fn a_restarted_instance_gives_back_its_own_claims_only() {
    let (service, second, _clock) = two_instances().await;
    let first = service.service.app().clone();
    let merchant = service.new_merchant("Claims").await.unwrap().merchant;
    let order = payments_service::app::deposits::create(
        &first,
        &merchant,
        payments_testing::new_deposit(
            "CLAIM-1",
            Decimal::from(100),
            "THB",
            Some("http://127.0.0.1:9/cb"),
        ),
    )
    .await
    .unwrap();
    payments_service::app::deposits::complete(
        &first,
        &payments_testing::SET_UP,
        &order.order_no,
        None,
        None,
    )
    .await
    .unwrap();
    // The injected clock has not moved: the callback is due at T0.
    let now = T0;
    let claimed = second
        .db
        .run(move |s| {
            Box::pin(async move {
                s.claim_due_callbacks(
                    now,
                    10,
                    "axb",
                    &payments_service::app::callbacks::attempts::Shares::open(),
                )
                .await
            })
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    // `_` is a LIKE wildcard: a name with it must not match `axb`.
    for (name, expected) in [("a_b", 0), ("ax", 0), ("axb", 1)] {
        let released = second
            .db
            .run(move |s| Box::pin(async move { s.release_claims_of(name).await }))
            .await
            .unwrap();
        assert_eq!(released, expected, "{name} gave back {released}");
    }
}

/// A key rotated on one instance with no grace is seen at once by the
/// instance that made it. On PostgreSQL another instance that listens sees
/// it as soon as it hears the change announced, and one that does not
/// listen remembers nothing; on SQLite (one process in production) another
/// instance sees it once what it read is `REMEMBERED_FOR_MS` old, not
/// before. The clock never moves until the last step, so nothing here is
/// seen because of time.
#[tokio::test]
async fn a_key_rotated_on_one_instance_is_seen_there_at_once_and_elsewhere_when_heard() {
    use payments_service::app::credentials::{signer, REMEMBERED_FOR_MS};
    let (service, second, clock) = two_instances().await;
    let (first, postgres, listener) = second_listens(&service, &second).await;
    let created = service.new_merchant("Rotated").await.unwrap();
    let hash = first.vault.lookup_hash(&created.api_key);
    let expiry = |app: Arc<App>| {
        let hash = hash.clone();
        async move {
            signer(&app, &hash)
                .await
                .unwrap()
                .expect("the key is found")
                .key
                .expires_at
        }
    };
    let third = server::build_app(
        service.service.app().config.clone(),
        Arc::new(clock.clone()),
    )
    .await
    .unwrap();
    // Every instance has read the key as it was.
    assert_eq!(expiry(first.clone()).await, None);
    assert_eq!(expiry(second.clone()).await, None);
    assert_eq!(expiry(third.clone()).await, None);
    let heard_before = second.db.merchants_generation();

    merchants::issue_api_key(
        &first,
        &payments_testing::SET_UP,
        &created.merchant.id,
        Some(0),
    )
    .await
    .unwrap();
    assert_eq!(
        expiry(first.clone()).await,
        Some(T0),
        "the rotating instance"
    );
    if postgres {
        wait_until("the other instance hears the change", || {
            second.db.merchants_generation() > heard_before
        })
        .await;
        assert_eq!(
            expiry(second.clone()).await,
            Some(T0),
            "the other instance, once it heard"
        );
        listener.expect("PostgreSQL listens").abort();
        // Not listening, an instance remembers nothing it could not hear
        // about: it read the key before the rotation, and reads it again.
        assert_eq!(third.db.listening(), Some(false));
        assert_eq!(
            expiry(third.clone()).await,
            Some(T0),
            "an instance that does not listen"
        );
        return;
    }
    assert!(listener.is_none(), "SQLite has nothing to listen to");
    assert_eq!(
        expiry(second.clone()).await,
        None,
        "the other instance, inside the bound"
    );
    // The test clock counts whole seconds.
    clock.advance((REMEMBERED_FOR_MS + 999) / 1000);
    assert_eq!(
        expiry(second.clone()).await,
        Some(T0),
        "the other instance, at the bound"
    );
}

/// A merchant an approval reads by id (`credentials::merchant`) is
/// remembered as a signer's is: the instance that changes the merchant
/// reads the change on its next approval, another instance on PostgreSQL
/// once it hears it, and a merchant that does not exist is refused and
/// not remembered. The clock never moves.
#[tokio::test]
async fn a_merchant_remembered_for_approvals_is_forgotten_when_written() {
    use payments_service::app::credentials::merchant;
    let (service, second, _clock) = two_instances().await;
    let (first, postgres, listener) = second_listens(&service, &second).await;
    let created = service.new_merchant("Remembered").await.unwrap();
    let id = created.merchant.id.clone();
    let timeout = |app: Arc<App>| {
        let id = id.clone();
        async move { merchant(&app, &id).await.unwrap().callback_timeout_seconds }
    };
    let default = timeout(first.clone()).await;
    assert_eq!(timeout(second.clone()).await, default);
    let heard_before = second.db.merchants_generation();
    merchants::set_callback_timeout(&first, &payments_testing::SET_UP, &id, 42)
        .await
        .unwrap();
    assert_eq!(timeout(first.clone()).await, 42, "the writing instance");
    if postgres {
        wait_until("the other instance hears the change", || {
            second.db.merchants_generation() > heard_before
        })
        .await;
        assert_eq!(timeout(second.clone()).await, 42, "the other instance");
        listener.expect("PostgreSQL listens").abort();
    }
    for _ in 0..2 {
        assert!(matches!(
            merchant(&first, "no-such-merchant").await,
            Err(ApiError::MerchantNotFound(_))
        ));
    }
}

/// The first instance's app, whether they run on PostgreSQL, and the
/// second instance's LISTEN task, up before anything is written (`None`
/// on SQLite, which has nothing to listen to).
async fn second_listens(
    service: &TestService,
    second: &Arc<App>,
) -> (Arc<App>, bool, Option<tokio::task::JoinHandle<()>>) {
    let first = service.service.app().clone();
    let postgres = second.db.backend() == Backend::Postgres;
    let listener = second.db.listen(None);
    if postgres {
        wait_until("the LISTEN connection is up", || {
            second.db.listening() == Some(true)
        })
        .await;
    }
    (first, postgres, listener)
}

/// Waits, with a deadline, for something another task or the database
/// makes true.
async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A remembered signer must not decide money: a withdrawal created on an
/// instance that read the merchant before another instance changed its
/// auto-approval and its withdrawal fee uses what was set, at once.
#[tokio::test]
async fn a_withdrawal_uses_the_settings_another_instance_just_wrote() {
    use payments_service::app::credentials::signer;
    use payments_service::app::{deposits, withdrawals};
    use payments_service::domain::fees::Direction;
    let (service, second, _clock) = two_instances().await;
    let first = service.service.app().clone();
    let created = service.new_merchant("Settings").await.unwrap();
    let merchant_id = created.merchant.id.clone();
    // Funds, so that the withdrawal is decided on its settings alone.
    let deposit = deposits::create(
        &first,
        &created.merchant,
        payments_testing::new_deposit("FUND-1", Decimal::new(1000, 0), "THB", None),
    )
    .await
    .unwrap();
    deposits::complete(
        &first,
        &payments_testing::SET_UP,
        &deposit.order_no,
        None,
        None,
    )
    .await
    .unwrap();

    // The second instance remembers the signer as it is now.
    let hash = second.vault.lookup_hash(&created.api_key);
    let remembered = signer(&second, &hash)
        .await
        .unwrap()
        .expect("the key")
        .merchant
        .clone();

    // The first instance changes both settings.
    merchants::set_auto_approval(
        &first,
        &payments_testing::SET_UP,
        &merchant_id,
        merchants::AutoApproval::Always,
    )
    .await
    .unwrap();
    payments_service::app::fees::set(
        &first,
        &payments_testing::SET_UP,
        &merchant_id,
        "THB",
        Direction::Withdrawal,
        payments_service::domain::fees::RateConfig {
            percent: Decimal::ZERO,
            fixed: Decimal::new(7, 0),
            minimum: Decimal::ZERO,
        },
    )
    .await
    .unwrap();

    let order = withdrawals::create(
        &second,
        &remembered,
        payments_testing::new_withdrawal("W-SET-1", Decimal::new(100, 0), "THB", "1234"),
    )
    .await
    .unwrap();
    assert!(order.is_auto_approved, "auto-approval as just set");
    assert_eq!(
        order.fee,
        rust_decimal::Decimal::from(7),
        "the withdrawal fee as just set"
    );
}
