//! Callback delivery on an injected clock: the exact schedule, every
//! outcome, the sweep, the operator's retry, and two instances claiming
//! from one database. A scripted receiver plays the merchant.

use conformance::receiver::{Answer, Receiver};
use payments_service::app::deposits::{self, NewDeposit};
use payments_service::app::merchants::{self, Merchant};
use payments_service::app::App;
use payments_service::clock::ManualClock;
use payments_service::domain::schedule::Outcome;
use payments_service::store::rows::{CallbackAttemptRow, CallbackDeliveryRow};
use payments_service::{delivery, server, Profile};
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

const T0: i64 = 1_800_000_000;
const WAIT: Duration = Duration::from_secs(10);

async fn start() -> (TestService, ManualClock) {
    let clock = ManualClock::at(T0);
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    (service, clock)
}

fn new_deposit(no: &str, callback_url: Option<&str>) -> NewDeposit {
    payments_testing::new_deposit(no, Decimal::from(100), "THB", callback_url)
}

/// A completed deposit with a callback for `url`: one record, due now.
async fn completed(app: &App, m: &Merchant, no: &str, url: &str) -> String {
    let d = deposits::create(app, m, new_deposit(no, Some(url)))
        .await
        .unwrap();
    deposits::complete(app, &payments_testing::SET_UP, &d.order_no, None, None)
        .await
        .unwrap();
    d.order_no
}

async fn record(app: &App, order_no: &str) -> CallbackDeliveryRow {
    let o = order_no.to_string();
    let mut rows = app
        .db
        .run(|s| Box::pin(async move { s.callback_deliveries_of(&o).await }))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "one record per event");
    rows.remove(0)
}

async fn history(app: &App, delivery_id: &str) -> Vec<CallbackAttemptRow> {
    let id = delivery_id.to_string();
    app.db
        .run(|s| Box::pin(async move { s.callback_attempts_of(&id).await }))
        .await
        .unwrap()
}

/// The service's delivery worker, the real one, driven on the test's
/// clock: `run` wakes it and waits until a pass begun after the call has
/// attempted and written everything due by the clock's time, and says how
/// many attempts finished since the last `run`.
struct Driven {
    _worker: delivery::Worker,
    progress: watch::Receiver<delivery::Progress>,
    counted: u64,
}

impl Driven {
    fn start(app: &Arc<App>) -> Driven {
        let worker = delivery::Worker::spawn(app.clone());
        Driven {
            progress: worker.progress(),
            _worker: worker,
            counted: 0,
        }
    }

    async fn run(&mut self, app: &App) -> usize {
        let pass = self.progress.borrow().started + 1;
        let at = app.now_unix();
        app.clock_moved();
        let settled = tokio::time::timeout(WAIT, self.progress.wait_for(|p| p.settled(pass, at)))
            .await
            .expect("the worker settles")
            .expect("the worker runs")
            .finished;
        let n = settled - self.counted;
        self.counted = settled;
        usize::try_from(n).unwrap()
    }
}

#[tokio::test]
async fn five_failures_are_spaced_exactly_30_s_from_the_schedule_and_end_failed() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let mut worker = Driven::start(&app);
    let receiver = Receiver::start().await.unwrap();
    receiver.otherwise(Answer::Status(500));
    let created = service.new_merchant("Retry").await.unwrap();
    let order_no = completed(&app, &created.merchant, "R-1", &receiver.url).await;
    let id = record(&app, &order_no).await.id;

    // Attempts run at T+0, T+30 (the worker 5 s late), T+60, T+90, T+120:
    // lateness does not push the schedule back.
    for (k, (due, at)) in [(0, 0), (30, 35), (60, 60), (90, 90), (120, 120)]
        .into_iter()
        .enumerate()
    {
        if k > 0 {
            clock.set(T0 + due - 1);
            assert_eq!(worker.run(&app).await, 0, "nothing due a second early");
        }
        clock.set(T0 + at);
        assert_eq!(worker.run(&app).await, 1, "attempt {} at T+{at}", k + 1);
    }
    clock.set(T0 + 3600);
    assert_eq!(worker.run(&app).await, 0, "no sixth attempt");

    let d = record(&app, &order_no).await;
    assert_eq!(
        (d.status.as_str(), d.attempts, d.next_attempt_at),
        ("FAILED", 5, None)
    );
    let h = history(&app, &id).await;
    let scheduled: Vec<i64> = h.iter().map(|a| a.scheduled_at - T0).collect();
    assert_eq!(scheduled, vec![0, 30, 60, 90, 120]);
    let outcomes: Vec<&str> = h.iter().map(|a| a.outcome.as_str()).collect();
    assert_eq!(outcomes, vec!["retry", "retry", "retry", "retry", "failed"]);
    assert!(h.iter().all(|a| a.status_code == Some(500)));

    // Same bytes and signature every time; the timestamp is each attempt's.
    let got = receiver.wait_for(5, WAIT).await;
    assert_eq!(got.len(), 5);
    assert!(got.iter().all(|r| r.body == d.body));
    let signatures: Vec<_> = got.iter().map(|r| r.header("x-signature")).collect();
    assert!(signatures.windows(2).all(|w| w[0] == w[1]));
    let stamps: Vec<i64> = got
        .iter()
        .map(|r| r.header("x-timestamp").unwrap().parse().unwrap())
        .collect();
    assert_eq!(stamps, vec![T0, T0 + 35, T0 + 60, T0 + 90, T0 + 120]);
    // The signature is the seed's, over the body's fields, with the key.
    let fields = payments_wire::SigningFields::from_json_body(d.body.as_bytes()).unwrap();
    assert!(payments_wire::verify(
        &fields,
        &created.api_key,
        got[0].header("x-signature").unwrap()
    ));
    assert_eq!(got[0].header("x-api-key"), Some(created.api_key.as_str()));
    assert_eq!(got[0].header("content-type"), Some("application/json"));

    let order = deposits::find_any(&app, &order_no).await.unwrap();
    assert_eq!(
        (order.callback_status.as_str(), order.callback_count),
        ("failed", 5)
    );
}

#[tokio::test]
async fn a_2xx_succeeds_at_once_and_a_4xx_fails_without_a_retry() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let mut worker = Driven::start(&app);
    let receiver = Receiver::start().await.unwrap();
    let m = service.new_merchant("Outcomes").await.unwrap().merchant;

    receiver.script(&[Answer::Status(204)]);
    let ok = completed(&app, &m, "O-1", &receiver.url).await;
    assert_eq!(worker.run(&app).await, 1);
    let d = record(&app, &ok).await;
    assert_eq!((d.status.as_str(), d.attempts), ("SUCCESS", 1));
    let order = deposits::find_any(&app, &ok).await.unwrap();
    assert_eq!(
        (order.callback_status.as_str(), order.callback_count),
        ("success", 1)
    );

    receiver.script(&[Answer::Status(404)]);
    let refused = completed(&app, &m, "O-2", &receiver.url).await;
    assert_eq!(worker.run(&app).await, 1);
    let d = record(&app, &refused).await;
    assert_eq!(
        (d.status.as_str(), d.attempts, d.next_attempt_at),
        ("FAILED", 1, None)
    );
    assert_eq!(history(&app, &d.id).await[0].outcome, Outcome::Rejected);
    clock.advance(600);
    assert_eq!(worker.run(&app).await, 0, "a 4xx is terminal");

    // A dropped connection counts as a failure to retry.
    receiver.script(&[Answer::Hangup]);
    let dropped = completed(&app, &m, "O-3", &receiver.url).await;
    assert_eq!(worker.run(&app).await, 1);
    let d = record(&app, &dropped).await;
    assert_eq!(d.status.as_str(), "WAITING_RETRY");
    assert!(history(&app, &d.id).await[0].error.is_some());
}

#[tokio::test]
async fn a_receiver_slower_than_the_merchants_timeout_counts_as_a_failure() {
    let (service, _clock) = start().await;
    let app = service.service.app().clone();
    let mut worker = Driven::start(&app);
    let receiver = Receiver::start().await.unwrap();
    let m = service.new_merchant("Slow").await.unwrap().merchant;
    let m = merchants::set_callback_timeout(&app, &payments_testing::SET_UP, &m.id, 1)
        .await
        .unwrap();
    receiver.script(&[Answer::Silence(Duration::from_secs(5))]);
    let order_no = completed(&app, &m, "S-1", &receiver.url).await;
    assert_eq!(worker.run(&app).await, 1);
    let d = record(&app, &order_no).await;
    assert_eq!(d.status.as_str(), "WAITING_RETRY");
    assert_eq!(d.next_attempt_at, Some(T0 + 30));
    let attempt = &history(&app, &d.id).await[0];
    assert_eq!(attempt.error.as_deref(), Some("timeout after 1 s"));
    assert!(
        attempt.duration_ms >= 1000 && attempt.duration_ms < 5000,
        "{}",
        attempt.duration_ms
    );
}

#[tokio::test]
async fn a_delivery_stuck_in_sending_is_swept_after_five_minutes_and_redelivered() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let receiver = Receiver::start().await.unwrap();
    let m = service.new_merchant("Stuck").await.unwrap().merchant;
    let order_no = completed(&app, &m, "K-1", &receiver.url).await;
    // A worker claims it and dies before answering.
    let claimed = app
        .db
        .run(|s| {
            Box::pin(async move {
                s.claim_due_callbacks(
                    T0,
                    10,
                    "test",
                    &payments_service::app::callbacks::attempts::Shares::open(),
                )
                .await
            })
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(record(&app, &order_no).await.status.as_str(), "SENDING");

    clock.set(T0 + 299);
    assert_eq!(
        payments_service::app::callbacks::attempts::sweep(&app)
            .await
            .unwrap(),
        0,
        "not stuck yet"
    );
    clock.set(T0 + 300);
    assert_eq!(
        payments_service::app::callbacks::attempts::sweep(&app)
            .await
            .unwrap(),
        1
    );
    let d = record(&app, &order_no).await;
    assert_eq!(
        (d.status.as_str(), d.next_attempt_at),
        ("WAITING_RETRY", Some(T0 + 300))
    );
    // Started only now: on PostgreSQL the sweep's update wakes a running
    // worker (LISTEN/NOTIFY), which could claim the delivery again before
    // the record above is read.
    let mut worker = Driven::start(&app);
    assert_eq!(worker.run(&app).await, 1);
    assert_eq!(record(&app, &order_no).await.status.as_str(), "SUCCESS");
    assert_eq!(receiver.wait_for(1, WAIT).await.len(), 1);

    // The dead worker's late result cannot overwrite the redelivery.
    let late = app
        .db
        .run(|s| {
            Box::pin(async move {
                let mut row = claimed[0].clone();
                row.status = payments_service::domain::status::DeliveryStatus::Failed;
                let attempt = CallbackAttemptRow {
                    id: "late".into(),
                    delivery_id: row.id.clone(),
                    attempt: 1,
                    scheduled_at: T0,
                    started_at: T0,
                    duration_ms: 1,
                    status_code: Some(500),
                    error: None,
                    outcome: Outcome::Failed,
                    next_attempt_at: None,
                };
                s.finish_callback_attempt(&row, &attempt).await
            })
        })
        .await
        .unwrap();
    assert!(!late);
    assert_eq!(record(&app, &order_no).await.status.as_str(), "SUCCESS");
}

#[tokio::test]
async fn an_operator_retry_resets_the_count_on_the_same_record() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let mut worker = Driven::start(&app);
    let receiver = Receiver::start().await.unwrap();
    let m = service.new_merchant("Again").await.unwrap().merchant;
    receiver.script(&[Answer::Status(410)]);
    let order_no = completed(&app, &m, "A-1", &receiver.url).await;
    worker.run(&app).await;
    let failed = record(&app, &order_no).await;
    assert_eq!(failed.status.as_str(), "FAILED");

    clock.advance(1000);
    let reset =
        payments_service::app::callbacks::retry(&app, &payments_testing::SET_UP, &failed.id)
            .await
            .unwrap();
    assert_eq!(reset.id, failed.id, "the same record");
    assert_eq!(
        (reset.status.as_str(), reset.attempts),
        ("WAITING_RETRY", 0)
    );
    assert_eq!(worker.run(&app).await, 1);
    let done = record(&app, &order_no).await;
    assert_eq!((done.status.as_str(), done.attempts), ("SUCCESS", 1));
    let h = history(&app, &done.id).await;
    assert_eq!(h.len(), 2, "the first attempt stays in the history");
    assert_eq!(h[1].attempt, 1, "counting starts again");
    let got = receiver.wait_for(2, WAIT).await;
    assert_eq!(got[0].body, got[1].body);
    assert_eq!(got[0].header("x-signature"), got[1].header("x-signature"));
}

/// Issue 57, acceptance 2: a key rotation with callbacks in flight. Every
/// attempt verifies with a key the merchant's receiver holds (both during
/// the grace, the new one after the old is revoked), and no callback of an
/// order created before the rotation carries the new key.
#[tokio::test]
async fn a_rotation_keeps_every_retry_verifiable_and_never_sends_the_new_key_to_an_older_order() {
    use payments_service::app::api_keys;
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let mut worker = Driven::start(&app);
    let receiver = Receiver::start().await.unwrap();
    receiver.otherwise(Answer::Status(500));
    let created = service.new_merchant("Rotation").await.unwrap();
    let (m, old) = (created.merchant, created.api_key);
    let before = completed(&app, &m, "ROT-1", &receiver.url).await;
    assert_eq!(
        worker.run(&app).await,
        1,
        "first attempt, before the rotation"
    );

    clock.set(T0 + 10);
    let new = merchants::issue_api_key(&app, &payments_testing::SET_UP, &m.id, Some(3600))
        .await
        .unwrap()
        .api_key;
    let after = completed(&app, &m, "ROT-2", &receiver.url).await;
    clock.set(T0 + 30);
    assert_eq!(worker.run(&app).await, 2, "a retry of ROT-1, ROT-2's first");

    // The old key leaked: revoked now, mid-stream.
    let old_id = api_keys::list(&app, &m.id)
        .await
        .unwrap()
        .into_iter()
        .find(|k| {
            old.ends_with(&k.hint[k.hint.len() - 4..])
                && !new.ends_with(&k.hint[k.hint.len() - 4..])
        })
        .expect("the old key listed")
        .id;
    api_keys::revoke(&app, &payments_testing::SET_UP, &m.id, &old_id)
        .await
        .unwrap();
    clock.set(T0 + 60);
    assert_eq!(worker.run(&app).await, 2, "ROT-1's third, ROT-2's second");

    let got = receiver.wait_for(5, WAIT).await;
    assert_eq!(got.len(), 5);
    let order_of = |r: &conformance::receiver::Received| -> String {
        let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        body["order_no"].as_str().unwrap().to_string()
    };
    let verifies = |r: &conformance::receiver::Received, key: &str| {
        let fields = payments_wire::SigningFields::from_json_body(r.body.as_bytes()).unwrap();
        payments_wire::verify(&fields, key, r.header("x-signature").unwrap())
    };
    let (rot1, rot2): (Vec<_>, Vec<_>) = got.iter().partition(|r| order_of(r) == before);
    assert_eq!((rot1.len(), rot2.len()), (3, 2), "{after}");
    // ROT-1: the old key signs and is carried while it works (the same
    // bytes twice); once revoked, the new key signs and only its hint goes.
    assert!(rot1[..2].iter().all(|r| verifies(r, &old)));
    assert!(rot1[..2]
        .iter()
        .all(|r| r.header("x-api-key") == Some(old.as_str())));
    assert_eq!(rot1[0].header("x-signature"), rot1[1].header("x-signature"));
    assert!(verifies(rot1[2], &new), "re-signed after the revocation");
    assert!(!verifies(rot1[2], &old));
    assert!(
        rot1.iter()
            .all(|r| r.header("x-api-key") != Some(new.as_str())),
        "an order made before the rotation never carries the new key"
    );
    assert!(rot1[2]
        .header("x-api-key")
        .unwrap()
        .ends_with(&new[new.len() - 4..]));
    assert_eq!(rot1[0].body, rot1[2].body, "the same body");
    // ROT-2, created after the rotation: the new key, carried.
    assert!(rot2
        .iter()
        .all(|r| verifies(r, &new) && r.header("x-api-key") == Some(new.as_str())));
    let d = record(&app, &before).await;
    assert_eq!(d.order_created_at, Some(T0));
    let keys = api_keys::list(&app, &m.id).await.unwrap();
    let new_id = keys.iter().find(|k| k.active).unwrap().id.clone();
    assert_eq!(
        d.signing_key_id,
        Some(new_id),
        "the record names the key that signed"
    );
}

#[tokio::test]
async fn an_order_without_callback_url_has_no_delivery_record() {
    let (service, _clock) = start().await;
    let app = service.service.app().clone();
    let mut worker = Driven::start(&app);
    let m = service.new_merchant("Quiet").await.unwrap().merchant;
    let d = deposits::create(&app, &m, new_deposit("Q-1", None))
        .await
        .unwrap();
    deposits::complete(&app, &payments_testing::SET_UP, &d.order_no, None, None)
        .await
        .unwrap();
    let o = d.order_no.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.callback_deliveries_of(&o).await }))
        .await
        .unwrap();
    assert!(rows.is_empty());
    assert_eq!(worker.run(&app).await, 0);
}

/// Two instances claim from one database at once: every record is sent
/// exactly once (on PostgreSQL, row locks that skip locked rows; on
/// SQLite, one writer at a time).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_send_each_callback_once() {
    let (service, clock) = start().await;
    let first = service.service.app().clone();
    // Another instance, by its own name (the prefix of its claims), on the
    // same database.
    let mut config = first.config.clone();
    config.instance_id = format!("{}-second", config.instance_id);
    let second = server::build_app(config, Arc::new(clock.clone()))
        .await
        .unwrap();
    let receiver = Receiver::start().await.unwrap();
    let m = service.new_merchant("Pair").await.unwrap().merchant;
    let mut orders = Vec::new();
    for i in 0..60 {
        orders.push(completed(&first, &m, &format!("P-{i}"), &receiver.url).await);
    }
    // Both workers, the real ones, from the moment all 60 are due.
    let (one, two) = (
        delivery::Worker::spawn(first.clone()),
        delivery::Worker::spawn(second.clone()),
    );
    let (mut a_seen, mut b_seen) = (one.progress(), two.progress());
    first.clock_moved();
    second.clock_moved();
    let finished = |a: &watch::Receiver<delivery::Progress>,
                    b: &watch::Receiver<delivery::Progress>| {
        (a.borrow().finished, b.borrow().finished)
    };
    while {
        let (a, b) = finished(&a_seen, &b_seen);
        a + b < 60
    } {
        tokio::time::timeout(WAIT, async {
            tokio::select! {
                _ = a_seen.changed() => {}
                _ = b_seen.changed() => {}
            }
        })
        .await
        .expect("the workers go on");
    }
    let (a, b) = finished(&a_seen, &b_seen);
    assert_eq!(a + b, 60, "every record claimed once ({a} + {b})");
    let got = receiver.wait_for(60, WAIT).await;
    assert_eq!(got.len(), 60, "each callback sent once");
    let mut seen: Vec<String> = got
        .iter()
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["order_no"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 60);
}

/// A service whose own delivery worker runs, with `concurrency` permits.
async fn start_worker(concurrency: usize) -> (TestService, ManualClock) {
    let clock = ManualClock::at(T0);
    let service = TestService::start_with(Profile::Sandbox, Arc::new(clock.clone()), |c| {
        c.callback_worker = true;
        c.callback_concurrency = concurrency;
    })
    .await
    .unwrap();
    (service, clock)
}

/// Waits (bounded) until the order's record reaches `status`: the
/// receiver sees a request before the worker records its answer.
async fn settles(app: &App, order_no: &str, status: &str) -> CallbackDeliveryRow {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let d = record(app, order_no).await;
        if d.status.as_str() == status || tokio::time::Instant::now() > deadline {
            assert_eq!(d.status.as_str(), status, "{order_no}");
            return d;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Issue 55, fair delivery: a receiver that holds every request takes at
/// most its merchant's share of the places, and a receiver host at most
/// its share whoever's merchants post to it; everyone else goes on.
#[tokio::test]
async fn a_slow_receiver_takes_only_its_merchants_and_its_hosts_share() {
    let clock = ManualClock::at(T0);
    let service = TestService::start_with(Profile::Sandbox, Arc::new(clock.clone()), |c| {
        c.callback_worker = true;
        c.callback_concurrency = 6;
        c.callback_in_flight_per_merchant = 2;
        c.callback_in_flight_per_host = 3;
    })
    .await
    .unwrap();
    let app = service.service.app().clone();
    let slow = Receiver::start().await.unwrap();
    slow.otherwise(Answer::Hold);
    let fast = Receiver::start().await.unwrap();
    let a = service.new_merchant("Slow A").await.unwrap();
    let c = service.new_merchant("Slow C").await.unwrap();
    let b = service.new_merchant("Fast").await.unwrap();

    // A's callbacks first, so that which merchant holds which place does
    // not hang on the order the worker claims callbacks due at one instant
    // (the clock stands still): A takes its two places and no more.
    let mut held = Vec::new();
    for i in 0..6 {
        held.push(completed(&app, &a.merchant, &format!("A-{i}"), &slow.url).await);
    }
    assert_eq!(slow.wait_for(2, WAIT).await.len(), 2);
    // C, on the same host, gets only the host's third place.
    for i in 0..6 {
        held.push(
            completed(
                &app,
                &c.merchant,
                &format!("C-{i}"),
                &format!("{}/c", slow.url),
            )
            .await,
        );
    }
    assert_eq!(slow.wait_for(3, WAIT).await.len(), 3);
    let mut quick = Vec::new();
    for i in 0..8 {
        quick.push(completed(&app, &b.merchant, &format!("B-{i}"), &fast.url).await);
    }
    assert_eq!(fast.wait_for(8, WAIT).await.len(), 8);
    for no in &quick {
        settles(&app, no, "SUCCESS").await;
    }
    assert_eq!(slow.received().len(), 3, "no more than the host's share");
    let mut sending = (0, 0);
    for no in &held {
        let d = record(&app, no).await;
        if d.status.as_str() == "SENDING" {
            match d.merchant_id == a.merchant.id {
                true => sending.0 += 1,
                false => sending.1 += 1,
            }
        }
    }
    assert_eq!(
        sending,
        (2, 1),
        "A at its merchant's share, C at the host's rest"
    );

    slow.release();
    for no in &held {
        settles(&app, no, "SUCCESS").await;
    }
    assert_eq!(slow.received().len(), 12, "each sent once");
    service.service.stop().await.unwrap();
}

#[tokio::test]
async fn a_slow_receiver_holds_no_one_else_back_and_attempts_are_bounded() {
    let (service, _clock) = start_worker(4).await;
    let app = service.service.app().clone();
    let slow = Receiver::start().await.unwrap();
    slow.otherwise(Answer::Hold);
    let fast = Receiver::start().await.unwrap();
    let a = service.new_merchant("Slow").await.unwrap();
    let b = service.new_merchant("Fast").await.unwrap();

    let mut held = Vec::new();
    for i in 0..2 {
        held.push(completed(&app, &a.merchant, &format!("S-{i}"), &slow.url).await);
    }
    assert_eq!(slow.wait_for(2, WAIT).await.len(), 2);

    // Two attempts hang on the slow receiver; the other merchant's five
    // callbacks go through the two free permits meanwhile.
    let mut quick = Vec::new();
    for i in 0..5 {
        quick.push(completed(&app, &b.merchant, &format!("F-{i}"), &fast.url).await);
    }
    assert_eq!(fast.wait_for(5, WAIT).await.len(), 5);
    for no in &quick {
        settles(&app, no, "SUCCESS").await;
    }
    for no in &held {
        assert_eq!(record(&app, no).await.status.as_str(), "SENDING");
    }

    // Bounded: six more for the slow receiver fill the two free permits
    // and no more; the rest stay due, unclaimed, until a permit frees.
    for i in 2..8 {
        held.push(completed(&app, &a.merchant, &format!("S-{i}"), &slow.url).await);
    }
    assert_eq!(slow.wait_for(4, WAIT).await.len(), 4);
    let mut sending = 0;
    for no in &held {
        if record(&app, no).await.status.as_str() == "SENDING" {
            sending += 1;
        }
    }
    assert_eq!(sending, 4, "exactly the permits' worth in flight");

    slow.release();
    for no in &held {
        settles(&app, no, "SUCCESS").await;
    }
    assert_eq!(slow.received().len(), 8, "each sent once");
    service.service.stop().await.unwrap();
}

#[tokio::test]
async fn stopping_lets_an_attempt_under_way_finish_and_records_it() {
    let (service, _clock) = start_worker(4).await;
    let app = service.service.app().clone();
    let base_url = service.base_url();
    let receiver = Receiver::start().await.unwrap();
    receiver.otherwise(Answer::Hold);
    let m = service.new_merchant("Shutdown").await.unwrap();
    let order_no = completed(&app, &m.merchant, "G-1", &receiver.url).await;
    assert_eq!(receiver.wait_for(1, WAIT).await.len(), 1);

    let stopping = tokio::spawn(service.service.stop());
    // Stop has begun once the listener is gone; the attempt is still held,
    // so stop must still be waiting for it.
    let address = base_url.trim_start_matches("http://").to_string();
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::net::TcpStream::connect(&address).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the listener closes"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !stopping.is_finished(),
        "stop waits for the attempt in flight"
    );

    receiver.release();
    stopping.await.unwrap().unwrap();
    let d = record(&app, &order_no).await;
    assert_eq!((d.status.as_str(), d.attempts), ("SUCCESS", 1));
    let h = history(&app, &d.id).await;
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].outcome, Outcome::Success);
}

#[tokio::test]
async fn a_receiver_that_never_answers_holds_its_permit_only_until_the_timeout() {
    // One permit: while the silent receiver holds it, nothing else is sent.
    let (service, _clock) = start_worker(1).await;
    let app = service.service.app().clone();
    let silent = Receiver::start().await.unwrap();
    silent.otherwise(Answer::Silence(Duration::from_secs(3600)));
    let fast = Receiver::start().await.unwrap();
    let a = service.new_merchant("Silent").await.unwrap();
    let b = service.new_merchant("Waiting").await.unwrap();
    merchants::set_callback_timeout(&app, &payments_testing::SET_UP, &a.merchant.id, 1)
        .await
        .unwrap();

    let held = completed(&app, &a.merchant, "T-1", &silent.url).await;
    assert_eq!(silent.wait_for(1, WAIT).await.len(), 1);
    let queued = completed(&app, &b.merchant, "T-2", &fast.url).await;
    // The other merchant's callback goes out once the 1 s timeout frees the
    // permit, not when the silent receiver would have answered.
    let started = std::time::Instant::now();
    assert_eq!(fast.wait_for(1, WAIT).await.len(), 1);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(8), "waited {waited:?}");
    settles(&app, &queued, "SUCCESS").await;
    let d = settles(&app, &held, "WAITING_RETRY").await;
    let h = history(&app, &d.id).await;
    assert_eq!(h[0].error.as_deref(), Some("timeout after 1 s"));
    service.service.stop().await.unwrap();
}

/// The worker writes the outcomes of many attempts in one transaction
/// (set-based on PostgreSQL): each kept outcome lands on its own record,
/// attempt history and order, and a claim lost to the sweep meanwhile is
/// dropped from the batch without costing the others theirs.
#[tokio::test]
async fn a_batch_of_outcomes_keeps_each_live_claim_and_drops_a_lost_one() {
    use payments_service::domain::status::{CallbackStatus, DeliveryStatus};
    use payments_service::store::queries::callbacks::AttemptOutcome;
    let (service, _clock) = start().await;
    let app = service.service.app().clone();
    let receiver = Receiver::start().await.unwrap();
    let m = service.new_merchant("Batch").await.unwrap().merchant;
    let a = completed(&app, &m, "B-1", &receiver.url).await;
    let b = completed(&app, &m, "B-2", &receiver.url).await;
    let claimed = app
        .db
        .run(|s| {
            Box::pin(async move {
                s.claim_due_callbacks(
                    T0,
                    10,
                    "test",
                    &payments_service::app::callbacks::attempts::Shares::open(),
                )
                .await
            })
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);

    let outcome = |row: &CallbackDeliveryRow, status, id: &str, order_status| {
        let mut delivery = row.clone();
        delivery.status = status;
        delivery.attempts += 1;
        delivery.next_attempt_at = (status == DeliveryStatus::WaitingRetry).then_some(T0 + 30);
        delivery.updated_at = T0 + 1;
        AttemptOutcome {
            attempt: CallbackAttemptRow {
                id: id.into(),
                delivery_id: row.id.clone(),
                attempt: delivery.attempts,
                scheduled_at: T0,
                started_at: T0,
                duration_ms: 3,
                status_code: Some(if status == DeliveryStatus::Success {
                    200
                } else {
                    503
                }),
                error: None,
                outcome: if status == DeliveryStatus::Success {
                    Outcome::Success
                } else {
                    Outcome::Retry
                },
                next_attempt_at: delivery.next_attempt_at,
            },
            delivery,
            order_status,
            now: T0 + 1,
        }
    };
    let first = &claimed[0];
    let second = &claimed[1];
    let mut lost = outcome(
        first,
        DeliveryStatus::Failed,
        "lost",
        CallbackStatus::Failed,
    );
    lost.delivery.claim_token = Some("a claim the sweep took back".into());
    let batch = vec![
        outcome(
            first,
            DeliveryStatus::Success,
            "kept-1",
            CallbackStatus::Success,
        ),
        lost,
        outcome(
            second,
            DeliveryStatus::WaitingRetry,
            "kept-2",
            CallbackStatus::Pending,
        ),
    ];
    let kept = app
        .db
        .transaction::<_, payments_service::domain::error::ApiError, _>(move |tx| {
            Box::pin(async move { Ok(tx.finish_callback_attempts(&batch).await?) })
        })
        .await
        .unwrap();
    assert_eq!(kept, vec![true, false, true]);

    for (id, status, attempt) in [
        (&first.id, "SUCCESS", "kept-1"),
        (&second.id, "WAITING_RETRY", "kept-2"),
    ] {
        let order = if first.id == *id {
            &first.order_no
        } else {
            &second.order_no
        };
        let d = record(&app, order).await;
        assert_eq!(
            (d.id.as_str(), d.status.as_str(), d.attempts),
            (id.as_str(), status, 1)
        );
        let h = history(&app, id).await;
        let ids: Vec<&str> = h.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![attempt],
            "only the kept attempt is in the history"
        );
    }
    assert_eq!(
        record(&app, &second.order_no).await.next_attempt_at,
        Some(T0 + 30)
    );
    // Claims come back in due order, which two orders due the same second
    // need not share with their creation.
    assert_eq!(
        [&first.order_no, &second.order_no].map(|o| o == &a || o == &b),
        [true, true]
    );
    for (row, expected) in [
        (first, CallbackStatus::Success),
        (second, CallbackStatus::Pending),
    ] {
        let o = row.order_no.clone();
        let order = app
            .db
            .run(|s| {
                Box::pin(async move {
                    s.deposit_by(payments_service::store::OrderKey::AnyOrderNo(&o).into())
                        .await
                })
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (order.callback_status, order.callback_count),
            (expected, 1),
            "{}",
            row.order_no
        );
    }
}

/// Retention deletes attempts past `attempt_retention_days`, oldest first
/// in batches, and nothing else: the deliveries keep their state and count,
/// a newer attempt stays, and the ledger still checks clean.
#[tokio::test]
async fn retention_forgets_old_attempts_and_keeps_the_deliveries() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let mut worker = Driven::start(&app);
    let receiver = Receiver::start().await.unwrap();
    let m = service.new_merchant("Retained").await.unwrap().merchant;
    let mut old = Vec::new();
    for n in 0..3 {
        old.push(completed(&app, &m, &format!("RT-{n}"), &receiver.url).await);
    }
    assert_eq!(worker.run(&app).await, 3);

    let days = app.config.attempt_retention_days;
    clock.advance(days * 86_400 + 1);
    let fresh = completed(&app, &m, "RT-new", &receiver.url).await;
    assert_eq!(worker.run(&app).await, 1);

    let mut reported = Vec::new();
    let swept = payments_service::app::retention::sweep(&app, |s| reported.push(s.attempts))
        .await
        .unwrap();
    assert_eq!(swept.attempts, 3, "{swept:?}");
    assert_eq!(reported.last(), Some(&3), "progress is told");
    for order_no in &old {
        let d = record(&app, order_no).await;
        assert_eq!((d.status.as_str(), d.attempts), ("SUCCESS", 1));
        assert!(history(&app, &d.id).await.is_empty());
    }
    let d = record(&app, &fresh).await;
    assert_eq!(history(&app, &d.id).await.len(), 1, "a newer attempt stays");
    let again = payments_service::app::retention::sweep(&app, |_| {})
        .await
        .unwrap();
    assert_eq!(again.total(), 0);
    let ledger = payments_service::app::ledger::check(&app).await.unwrap();
    assert!(ledger.ok(), "{:?}", ledger.differences);
}

/// Issue 53: one batch retry queues at most 1000 failed deliveries (one
/// transaction); a limit past the bound, or an empty time range, is 400
/// before anything is read or written.
#[tokio::test]
async fn a_batch_retry_is_bounded_and_its_range_must_be_one() {
    use payments_service::app::callbacks::{retry_failed, RetryBatch, BATCH_MOST};
    use payments_service::domain::error::ApiError;
    let clock = ManualClock::at(T0);
    let service = TestService::start(Profile::Sandbox, Arc::new(clock))
        .await
        .unwrap();
    let app = service.service.app();
    let by = payments_testing::operator(payments_service::domain::people::Action::RetryCallbacks);
    for limit in [0, BATCH_MOST + 1] {
        let refused = retry_failed(
            app,
            &by,
            RetryBatch {
                limit: Some(limit),
                ..RetryBatch::default()
            },
        )
        .await;
        assert!(
            matches!(&refused, Err(ApiError::InvalidField { field, .. }) if field == "limit"),
            "{limit}: {:?}",
            refused.err()
        );
    }
    let backwards = retry_failed(
        app,
        &by,
        RetryBatch {
            created_from: Some(T0),
            created_to: Some(T0),
            ..RetryBatch::default()
        },
    )
    .await;
    assert!(matches!(backwards, Err(ApiError::InvalidField { .. })));
    let at_the_bound = retry_failed(
        app,
        &by,
        RetryBatch {
            limit: Some(BATCH_MOST),
            ..RetryBatch::default()
        },
    )
    .await
    .unwrap();
    assert_eq!((at_the_bound.retried, at_the_bound.more), (0, false));
}
