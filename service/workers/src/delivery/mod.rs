//! The callback delivery worker: it asks `app::callbacks::attempts` for
//! what is due, posts each through the courier, hands the answer back to
//! be judged and written, and reports. Every decision (what is due, what
//! an answer comes to, what is written) is the use case's; this module
//! holds the loop, its concurrency and its reports.
//!
//! A record waits in WAITING_RETRY until its `next_attempt_at`; a worker
//! claims it (SENDING), posts the stored body with a fresh `X-Timestamp`,
//! and the outcome and the attempt are written in one transaction: 2xx is
//! SUCCESS, 4xx is FAILED at once, anything else is retried 30 s after the
//! attempt's scheduled time until the fifth attempt fails. A sweep returns
//! records stuck in SENDING (a worker that died mid-attempt) to
//! WAITING_RETRY. Every time comes from the injected clock.

pub mod courier;

use crate::app::callbacks::attempts::{self, Answered, Attempt, Claimed, Report, Shares};
use crate::app::App;
use crate::telemetry::metrics;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

/// The longest the worker sleeps between passes (it looks at least this
/// often for callbacks other instances queued).
const LONGEST_PAUSE: Duration = Duration::from_secs(5);

/// The same, while the LISTEN connection that hears other instances is
/// down.
const UNHEARD_PAUSE: Duration = Duration::from_secs(1);

/// While someone is at their share, the loop claims again once a quarter
/// of a share's places were given back, or after this pause, whichever
/// comes first. A claim then walks their backlog (the oldest due are
/// theirs) and locks a candidate for each free place; claiming for
/// every place given back, one or two at a time, spent most of the
/// database on it in a drain of one merchant's 10,000 callbacks (issue
/// 56). Others' callbacks due meanwhile wait at most the pause.
const SHARE_PAUSE: Duration = Duration::from_millis(50);

/// While claims keep finding nothing past someone at their share, the
/// pause doubles up to this: others' callbacks wait at most this long for
/// a look (issue 55 asks 1 s at p99).
const FRUITLESS_PAUSE: Duration = Duration::from_millis(400);

/// At most this many attempts' outcomes go into one transaction.
const RECORD_BATCH: usize = 256;

/// After a claim that took some of what was due and had places left, the
/// next claim waits until this long after it. Under load every commit
/// rings the bell, and a claim (with its look at the next due time) for
/// one or two callbacks at a time was a tenth of the money path's
/// statements (15,000 callbacks, 10,672 claims, issue 56); gathered, a
/// claim takes what came in meanwhile. An idle worker claims at once; a
/// full claim (a backlog) goes on at once too.
const CLAIM_GATHER: Duration = Duration::from_millis(5);

/// What the worker has done, for whoever waits on it: readiness, and
/// tests that move their clock and wait until everything due by then was
/// attempted and written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Passes begun.
    pub started: u64,
    /// The number of the last pass that claimed, and the clock's time
    /// then: everything due by then was claimed, or is another claimer's.
    pub looked: u64,
    pub looked_at: i64,
    /// That pass found more due than it had places for.
    pub more_due: bool,
    /// Attempts claimed and not yet written.
    pub in_flight: usize,
    /// Attempts finished (written, refused or impossible) since the start.
    pub finished: u64,
}

impl Progress {
    /// A pass numbered `pass` or later found everything due by `at`, and
    /// every attempt it started has been written. Wait for the pass after
    /// `started` to know about what happened before you looked.
    pub fn settled(&self, pass: u64, at: i64) -> bool {
        self.looked >= pass && self.looked_at >= at && !self.more_due && self.in_flight == 0
    }
}

/// A running delivery worker: how to stop it, what it holds, how far it
/// got.
pub struct Worker {
    stop: watch::Sender<bool>,
    handle: Option<tokio::task::JoinHandle<()>>,
    shared: Arc<Shared>,
}

/// What the loop, its attempts and its recorder share.
struct Shared {
    claims: Claims,
    in_flight: InFlight,
    progress: watch::Sender<Progress>,
}

impl Worker {
    /// Starts the worker: it attempts what is due, sweeps every minute,
    /// and sleeps until the next due time, a commit that queued a
    /// callback, or a clock change wakes it.
    pub fn spawn(app: Arc<App>) -> Worker {
        let (stop, stopped) = watch::channel(false);
        let shared = Arc::new(Shared {
            claims: Claims::default(),
            in_flight: InFlight::default(),
            progress: watch::channel(Progress::default()).0,
        });
        let handle = tokio::spawn(run(app, stopped, shared.clone()));
        Worker {
            stop,
            handle: Some(handle),
            shared,
        }
    }

    pub fn progress(&self) -> watch::Receiver<Progress> {
        self.shared.progress.subscribe()
    }

    /// Stops claiming and lets the attempts under way finish and be
    /// written, until `deadline`; then cuts off what still runs. Returns
    /// whether anything was cut off.
    pub async fn stop_by(&mut self, deadline: tokio::time::Instant) -> bool {
        let _ = self.stop.send(true);
        let Some(mut handle) = self.handle.take() else {
            return false;
        };
        if tokio::time::timeout_at(deadline, &mut handle).await.is_ok() {
            return false;
        }
        // Dropping the loop drops its attempts with it.
        handle.abort();
        let _ = handle.await;
        true
    }

    /// Gives back every claim still held (attempts cut off or never
    /// started); returns how many were.
    pub async fn release_claims(&self, app: &App) -> usize {
        self.shared.claims.release_all(app).await
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.abort();
        }
    }
}

/// The claims of attempts under way, so that a worker stopped before they
/// finished can give them back (WAITING_RETRY at their scheduled time)
/// instead of leaving them SENDING until the stuck sweep.
#[derive(Debug, Default)]
struct Claims(std::sync::Mutex<std::collections::HashMap<String, String>>);

impl Claims {
    fn hold(&self, claimed: &Claimed) {
        if let (Ok(mut held), Some(token)) = (self.0.lock(), &claimed.claim_token) {
            held.insert(claimed.id.clone(), token.clone());
        }
    }

    fn drop_claim(&self, id: &str) {
        if let Ok(mut held) = self.0.lock() {
            held.remove(id);
        }
    }

    async fn release_all(&self, app: &App) -> usize {
        let held: Vec<(String, String)> = match self.0.lock() {
            Ok(mut held) => held.drain().collect(),
            Err(_) => return 0,
        };
        let mut released = 0;
        for (id, token) in held {
            match attempts::release(app, id, token).await {
                Ok(true) => released += 1,
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(error = %e, "releasing a claimed callback failed; the sweep will return it")
                }
            }
        }
        released
    }
}

/// Whose share of the places an attempt holds.
#[derive(Clone, Debug)]
struct Holder {
    merchant: String,
    host: Option<String>,
}

/// This instance's attempts in flight per merchant and per receiver host,
/// so that each claim leaves a receiver that holds every request for its
/// whole timeout no more than its share of the places, and the others go
/// on (issue 55). Held from the claim until the outcome is written.
#[derive(Debug, Default)]
struct InFlight(std::sync::Mutex<Counts>, std::sync::atomic::AtomicU64);

#[derive(Debug, Default)]
struct Counts {
    merchants: HashMap<String, i64>,
    hosts: HashMap<String, i64>,
}

impl InFlight {
    /// What the next claim may take: room left for those with attempts
    /// in flight, the cap for anyone else; and whether anyone is full.
    fn shares(&self, per_merchant: usize, per_host: usize) -> (Shares, bool) {
        let merchant_cap = i64::try_from(per_merchant).unwrap_or(i64::MAX);
        let host_cap = i64::try_from(per_host).unwrap_or(i64::MAX);
        let room = |counts: &HashMap<String, i64>, cap: i64| {
            counts
                .iter()
                .map(|(k, n)| (k.clone(), (cap - n).max(0)))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        let Ok(counts) = self.0.lock() else {
            return (Shares::open(), false);
        };
        let shares = Shares {
            merchant_room: room(&counts.merchants, merchant_cap),
            merchant_cap,
            host_room: room(&counts.hosts, host_cap),
            host_cap,
        };
        let full = shares
            .merchant_room
            .values()
            .chain(shares.host_room.values())
            .any(|r| *r == 0);
        (shares, full)
    }

    fn take(&self, holder: &Holder) {
        if let Ok(mut counts) = self.0.lock() {
            *counts.merchants.entry(holder.merchant.clone()).or_default() += 1;
            if let Some(host) = &holder.host {
                *counts.hosts.entry(host.clone()).or_default() += 1;
            }
        }
    }

    /// Places given back since the start: a claim that found nothing
    /// while someone was at their share can find more only once this moved
    /// (or someone else's callbacks became due).
    fn freed(&self) -> u64 {
        self.1.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn give_back(&self, holder: &Holder) {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        fn less(map: &mut HashMap<String, i64>, key: &str) {
            if let Some(n) = map.get_mut(key) {
                *n -= 1;
                if *n <= 0 {
                    map.remove(key);
                }
            }
        }
        if let Ok(mut counts) = self.0.lock() {
            less(&mut counts.merchants, &holder.merchant);
            if let Some(host) = &holder.host {
                less(&mut counts.hosts, host);
            }
        }
    }
}

/// An attempt answered, with its place among the concurrent attempts,
/// held until its outcome is written.
struct Finished {
    answered: Answered,
    permit: OwnedSemaphorePermit,
    holder: Holder,
}

/// Attempts run concurrently; a recorder beside the claiming loop writes
/// their outcomes, as many as finished meanwhile in one transaction, and
/// only then frees their places, so that nothing waits unwritten in
/// memory beyond `callback_concurrency` attempts.
async fn run(app: Arc<App>, stop: watch::Receiver<bool>, shared: Arc<Shared>) {
    let (finished_tx, finished_rx) = mpsc::unbounded_channel();
    tokio::join!(
        claim_and_send(app.clone(), stop, shared.clone(), finished_tx),
        recorder(app, shared, finished_rx),
    );
}

/// Writes outcomes as they come, in batches, until every attempt's sender
/// is gone; then wakes the claiming loop, whose places are free again.
async fn recorder(
    app: Arc<App>,
    shared: Arc<Shared>,
    mut finished: mpsc::UnboundedReceiver<Finished>,
) {
    let mut batch = Vec::with_capacity(RECORD_BATCH);
    while finished.recv_many(&mut batch, RECORD_BATCH).await > 0 {
        let (answered, permits): (Vec<Answered>, Vec<_>) = batch
            .drain(..)
            .map(|f| {
                let id = f.answered.delivery_id().to_string();
                (f.answered, (id, f.permit, f.holder))
            })
            .unzip();
        for (report, kept) in attempts::record(&app, answered).await {
            tell(report, kept);
        }
        let n = permits.len();
        for (id, permit, holder) in permits {
            shared.claims.drop_claim(&id);
            shared.in_flight.give_back(&holder);
            drop(permit);
        }
        shared.progress.send_modify(|p| {
            p.in_flight -= n;
            p.finished += n as u64;
        });
        app.wake.notify_one();
    }
}

/// The claiming loop's state between passes.
struct Loop {
    app: Arc<App>,
    shared: Arc<Shared>,
    permits: Arc<Semaphore>,
    attempts: JoinSet<()>,
    finished: mpsc::UnboundedSender<Finished>,
    next_sweep: i64,
    /// The last claim found a merchant or receiver at its share.
    held_back: bool,
    /// The last claim was made while, or left, someone at their share.
    held: Option<Held>,
}

/// A claim while someone was at their share: when the next one is worth
/// its cost.
#[derive(Clone, Copy)]
struct Held {
    /// `InFlight::freed` at that claim.
    freed: u64,
    at: tokio::time::Instant,
    /// How long until the next claim, unless enough places are given back.
    pause: Duration,
}

/// What one pass claimed.
#[derive(Clone, Copy, Default)]
struct Pass {
    any: bool,
    /// As many as it had places for: more are likely due.
    all: bool,
    /// Not claimed at all: someone is at their share and too few of their
    /// places came back to be worth a claim. What is due is not known.
    waited: bool,
}

async fn claim_and_send(
    app: Arc<App>,
    mut stop: watch::Receiver<bool>,
    shared: Arc<Shared>,
    finished: mpsc::UnboundedSender<Finished>,
) {
    // This instance's claims from before a crash go back at once.
    match attempts::release_own_claims(&app).await {
        Ok(0) => {}
        Ok(n) => {
            tracing::warn!(released = n, instance = %app.config.instance_id, "claims held before a restart given back")
        }
        Err(e) => {
            tracing::error!(error = %e, "giving back claims from before a restart failed; the sweep will")
        }
    }
    let mut state = Loop {
        permits: Arc::new(Semaphore::new(app.config.callback_concurrency.max(1))),
        next_sweep: app.now_unix(),
        attempts: JoinSet::new(),
        held_back: false,
        held: None,
        app,
        shared,
        finished,
    };
    let mut gathering: Option<tokio::time::Instant> = None;
    while !*stop.borrow() {
        if let Some(until) = gathering.take() {
            tokio::select! {
                _ = tokio::time::sleep_until(until) => {}
                _ = stop.changed() => {}
            }
        }
        // Without LISTEN (lost, to be reconnected) callbacks committed on
        // other instances are found by looking often.
        let longest = match state.app.db.listening() {
            Some(false) => UNHEARD_PAUSE,
            _ => LONGEST_PAUSE,
        };
        state.app.beats.delivery.beat(longest);
        let mut number = 0;
        state.shared.progress.send_modify(|p| {
            p.started += 1;
            number = p.started;
        });
        let now = state.app.now_unix();
        state.sweep_if_due(now).await;
        let claimed_at = tokio::time::Instant::now();
        let pass = state.claim_and_start().await;
        if pass.any && !pass.all {
            gathering = Some(claimed_at + CLAIM_GATHER);
        }
        while state.attempts.try_join_next().is_some() {}
        state.shared.progress.send_modify(|p| {
            p.looked = number;
            p.looked_at = now;
            p.more_due = pass.all || pass.waited;
        });
        let wait = state.pause(pass, longest).await;
        if !wait.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = state.app.wake.notified() => {}
                _ = stop.changed() => {}
            }
        }
    }
    while state.attempts.join_next().await.is_some() {}
    // Dropping the last sender ends the recorder once it has written what
    // the attempts above sent it.
}

impl Loop {
    async fn sweep_if_due(&mut self, now: i64) {
        if now < self.next_sweep {
            return;
        }
        let swept = attempts::sweep(&self.app).await;
        metrics::worker_run("sweep", swept.is_ok());
        match swept {
            Ok(0) => {}
            Ok(n) => tracing::warn!(
                swept = n,
                "stuck callback deliveries returned to WAITING_RETRY"
            ),
            Err(e) => tracing::error!(error = %e, "sweeping stuck callbacks failed"),
        }
        self.next_sweep = now + self.app.config.callback_schedule.sweep_every_seconds;
    }

    /// Claims only as many as can be sent now, so that nothing claimed
    /// waits in SENDING behind a slow receiver, and starts each.
    async fn claim_and_start(&mut self) -> Pass {
        let free = self.permits.available_permits();
        if free == 0 {
            return Pass::default();
        }
        let config = &self.app.config;
        let freed = self.shared.in_flight.freed();
        if self.too_soon(freed) {
            return Pass {
                waited: true,
                ..Pass::default()
            };
        }
        let (shares, full) = self.shared.in_flight.shares(
            config.callback_in_flight_per_merchant,
            config.callback_in_flight_per_host,
        );
        self.held_back = full;
        let claimed = attempts::claim_due(&self.app, free, shares).await;
        metrics::worker_run("delivery", claimed.is_ok());
        let claimed = match claimed {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::error!(error = %e, "claiming due callbacks failed");
                return Pass::default();
            }
        };
        let pass = Pass {
            any: !claimed.is_empty(),
            all: claimed.len() == free,
            waited: false,
        };
        self.shared
            .progress
            .send_modify(|p| p.in_flight += claimed.len());
        for one in claimed {
            if !self.start(one).await {
                break;
            }
        }
        self.note_shares(freed, pass.any);
        pass
    }

    /// Someone is at their share and too few of their places came back
    /// since the last claim, which was too recent, to be worth another.
    fn too_soon(&self, freed: u64) -> bool {
        let config = &self.app.config;
        let enough = u64::try_from(
            config
                .callback_in_flight_per_merchant
                .min(config.callback_in_flight_per_host)
                .div_ceil(4),
        )
        .unwrap_or(1);
        self.held
            .is_some_and(|h| freed.saturating_sub(h.freed) < enough && h.at.elapsed() < h.pause)
    }

    /// After a claim (`claimed_any`: it took some), whether someone is at
    /// their share now, and if so when the next claim is worth making.
    fn note_shares(&mut self, freed: u64, claimed_any: bool) {
        if claimed_any {
            // What was just claimed may have filled someone's share.
            let (_, full_now) = self.shared.in_flight.shares(
                self.app.config.callback_in_flight_per_merchant,
                self.app.config.callback_in_flight_per_host,
            );
            self.held_back |= full_now;
        }
        self.held = self.held_back.then(|| Held {
            freed,
            at: tokio::time::Instant::now(),
            pause: match self.held {
                Some(h) if !claimed_any && h.freed == freed => (h.pause * 2).min(FRUITLESS_PAUSE),
                _ => SHARE_PAUSE,
            },
        });
    }

    /// Holds a place for one claimed attempt and sends it in a task of its
    /// own; false when no place can be had (the worker is stopping).
    async fn start(&mut self, one: Claimed) -> bool {
        self.shared.claims.hold(&one);
        let holder = Holder {
            merchant: one.merchant_id.clone(),
            host: one.receiver_host.clone(),
        };
        self.shared.in_flight.take(&holder);
        let Ok(permit) = self.permits.clone().acquire_owned().await else {
            return false;
        };
        let (app, shared, finished) =
            (self.app.clone(), self.shared.clone(), self.finished.clone());
        self.attempts.spawn(async move {
            match one.attempt {
                Ok(attempt) => {
                    let answered = send(&app, attempt).await;
                    // The recorder is gone only when the worker was
                    // aborted: the claim stays for the sweep (or the
                    // restart) to give back.
                    let _ = finished.send(Finished {
                        answered,
                        permit,
                        holder,
                    });
                }
                Err(e) => {
                    tracing::error!(error = %e, "a callback attempt could not be made; the sweep will return it");
                    shared.claims.drop_claim(&one.id);
                    shared.in_flight.give_back(&holder);
                    shared.progress.send_modify(|p| {
                        p.in_flight -= 1;
                        p.finished += 1;
                    });
                    drop(permit);
                    app.wake.notify_one();
                }
            }
        });
        true
    }

    /// How long to wait before the next pass.
    async fn pause(&self, pass: Pass, longest: Duration) -> Duration {
        let busy = self.permits.available_permits() == 0;
        // A full batch leaves more due, most likely: claim again as soon
        // as places free up, without asking when the next one is due.
        if pass.all {
            return if busy { longest } else { Duration::ZERO };
        }
        if busy {
            return longest;
        }
        // Someone at their share: the next claim waits for their places
        // (`SHARE_PAUSE`); finished attempts and commits wake the loop to
        // see whether enough were given back.
        if let Some(h) = self.held {
            return h.pause.saturating_sub(h.at.elapsed());
        }
        // Unknown after an error: look again at the latest by `longest`
        // (below), and say so.
        let next_due = match attempts::next_due(&self.app).await {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!(error = %e, "reading when the next callback is due failed");
                None
            }
        };
        let now = self.app.now_unix();
        // Other instances queue callbacks this one hears nothing of: look
        // at least every few seconds.
        let until = |t: i64| Duration::from_secs(u64::try_from(t - now).unwrap_or(0)).min(longest);
        match next_due {
            // Due and claimed: go on at once. Due but not claimed (another
            // instance holds it): look again shortly.
            Some(due) if due <= now && pass.any => Duration::ZERO,
            Some(due) if due <= now => Duration::from_millis(100),
            Some(due) => until(due.min(self.next_sweep)),
            None => until(self.next_sweep),
        }
    }
}

/// Posts one attempt and has its answer judged.
async fn send(app: &App, mut attempt: Attempt) -> Answered {
    let started_ms = app.clock.now().timestamp_millis();
    let started = Instant::now();
    let answer = match attempt.post(app) {
        Ok(post) => {
            app.courier
                .post(post.url, &post.headers, post.body, post.timeout)
                .await
        }
        Err(e) => Err(crate::app::PostFailure::from(e.to_string())),
    };
    attempt.answered(app, answer, started_ms, started.elapsed())
}

/// One attempt's counts, and one line naming the order. `kept`: whether
/// its outcome was written (`Some(false)`: a sweep had reclaimed the
/// record; `None`: the database refused the write).
fn tell(r: Report, kept: Option<bool>) {
    metrics::callback_attempt(r.outcome, r.took);
    if let Some(delay) = r.first_attempt_delay_ms {
        metrics::callback_first_attempt_delay(delay);
    }
    let took_ms = u64::try_from(r.took.as_millis()).unwrap_or(u64::MAX);
    match kept {
        Some(true) => tracing::info!(
            order_no = %r.order_no,
            event = %r.event,
            receiver = %r.receiver,
            attempt = r.attempt,
            outcome = r.outcome,
            status_code = r.status_code,
            error = r.error.as_deref(),
            took_ms,
            "callback attempt"
        ),
        Some(false) => tracing::warn!(
            order_no = %r.order_no,
            event = %r.event,
            attempt = r.attempt,
            outcome = r.outcome,
            "callback attempt finished after a sweep reclaimed it; it will be sent again"
        ),
        None => tracing::error!(
            order_no = %r.order_no,
            event = %r.event,
            attempt = r.attempt,
            outcome = r.outcome,
            "callback attempt could not be recorded; the sweep will send it again"
        ),
    }
}
