//! The service's metrics, in Prometheus's text format. Each measurement
//! has one name here and one function that records it; `docs/operations.md`
//! says what each means and which alerts to set on it.
//!
//! One recorder per process (the `metrics` facade is process-wide):
//! `install` sets it up once, and every service started in the process
//! records into it. Label values come from bounded sets only.

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;

pub const HTTP_REQUESTS: &str = "payments_http_requests_total";
pub const HTTP_DURATION: &str = "payments_http_request_duration_seconds";
pub const ORDERS_CREATED: &str = "payments_orders_created_total";
pub const ORDER_STATE_CHANGES: &str = "payments_order_state_changes_total";
pub const CALLBACK_ATTEMPTS: &str = "payments_callback_attempts_total";
pub const CALLBACK_ATTEMPT_DURATION: &str = "payments_callback_attempt_duration_seconds";
pub const CALLBACK_DELIVERIES: &str = "payments_callback_deliveries";
pub const CALLBACK_OLDEST_DUE_AGE: &str = "payments_callback_oldest_due_age_seconds";
pub const CALLBACK_FIRST_ATTEMPT_DELAY: &str = "payments_callback_first_attempt_delay_seconds";
pub const CHANNEL_CALLS: &str = "payments_channel_calls_total";
pub const CHANNEL_CALL_DURATION: &str = "payments_channel_call_duration_seconds";
pub const CHANNEL_NOTIFICATIONS: &str = "payments_channel_notifications_total";
pub const PAYOUTS_IN_DOUBT: &str = "payments_channel_payouts_in_doubt";
pub const PAYOUT_OLDEST_IN_DOUBT: &str = "payments_channel_payout_oldest_in_doubt_seconds";
pub const CHANNEL_CIRCUIT_OPEN: &str = "payments_channel_circuit_open";
pub const CHANNEL_CIRCUIT_OPENED: &str = "payments_channel_circuit_opened_total";
pub const GROUP_COMMIT_UNITS: &str = "payments_group_commit_units";
pub const DEPOSIT_INSERT_ROWS: &str = "payments_deposit_insert_rows";
pub const ROUTING_DECISIONS: &str = "payments_routing_decisions_total";
pub const WORKER_RUNS: &str = "payments_worker_runs_total";
pub const WORKER_ERRORS: &str = "payments_worker_errors_total";
pub const WORKER_LAG: &str = "payments_worker_lag_seconds";
pub const WORKER_LAST_PASS_AGE: &str = "payments_worker_last_pass_age_seconds";
pub const DB_POOL_CONNECTIONS: &str = "payments_db_pool_connections";
pub const DB_POOL_WAITING: &str = "payments_db_pool_waiting";
pub const LEDGER_CHECK_DIFFERENCES: &str = "payments_ledger_check_differences";
pub const LEDGER_CHECK_LAST_RUN: &str = "payments_ledger_check_last_run_timestamp_seconds";
pub const BUILD_INFO: &str = "payments_build_info";
pub const READY: &str = "payments_ready";
pub const REFUSED_AT_CAPACITY: &str = "payments_requests_refused_at_capacity_total";
pub const SIGN_IN_FAILURES: &str = "payments_sign_in_failures_total";
pub const SECOND_FACTOR_REFUSED: &str = "payments_second_factor_refused_total";

/// Bucket bounds, in seconds, of every `_seconds` histogram: from a fast
/// request (1 ms) to a callback attempt at its longest timeout (60 s).
const SECONDS_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process's recorder (once; later calls return the same
/// handle). `None` when another recorder was installed first.
pub fn install() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
                .ok()?
                .set_buckets_for_metric(
                    Matcher::Full(GROUP_COMMIT_UNITS.into()),
                    &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
                )
                .ok()?
                .set_buckets_for_metric(
                    Matcher::Full(DEPOSIT_INSERT_ROWS.into()),
                    &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
                )
                .ok()?
                .install_recorder()
                .ok()?;
            describe();
            Some(handle)
        })
        .as_ref()
}

/// The console's and the portal's refusals of people.
fn describe_sign_ins() {
    describe_counter!(
        SIGN_IN_FAILURES,
        "Console and portal sign-ins refused, by realm and reason (credentials, too_many_attempts, busy)."
    );
    describe_counter!(
        SECOND_FACTOR_REFUSED,
        "Console authenticator codes refused, by when (sign_in, approval) and reason (wrong, used, too_many_attempts)."
    );
}

/// The scrape: every metric in Prometheus's text format.
pub fn render() -> Option<String> {
    let handle = install()?;
    handle.run_upkeep();
    Some(handle.render())
}

fn describe() {
    describe_counter!(
        REFUSED_AT_CAPACITY,
        "Requests answered 503 at once because their surface (payment API, operator API, pages) had as many in flight as it takes."
    );
    describe_sign_ins();
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by operation id and status class."
    );
    describe_histogram!(
        HTTP_DURATION,
        metrics::Unit::Seconds,
        "Time from a request's arrival to its answer, by operation id."
    );
    describe_counter!(
        ORDERS_CREATED,
        "Orders created, by kind (deposit, withdrawal) and currency."
    );
    describe_counter!(
        ORDER_STATE_CHANGES,
        "Committed order state changes, by kind, currency and new status."
    );
    describe_counter!(CALLBACK_ATTEMPTS, "Callback attempts, by outcome: success (2xx), rejected (4xx, final), timeout and retry (retried later), failed (the last attempt failed).");
    describe_histogram!(
        CALLBACK_ATTEMPT_DURATION,
        metrics::Unit::Seconds,
        "Time a callback attempt took, from sending to the receiver's answer or the failure."
    );
    describe_gauge!(CALLBACK_DELIVERIES, "Callback deliveries not yet finished, by state (WAITING_RETRY, SENDING), at the last scrape.");
    describe_gauge!(CALLBACK_OLDEST_DUE_AGE, metrics::Unit::Seconds, "How long the oldest due callback delivery has been waiting for its attempt (0 when none is due).");
    describe_histogram!(
        CALLBACK_FIRST_ATTEMPT_DELAY,
        metrics::Unit::Seconds,
        "Time from the commit that queued a callback to the start of its first attempt."
    );
    describe_channels();
    describe_counter!(
        WORKER_RUNS,
        "Passes of a background worker (expiry, dispatch, delivery, sweep)."
    );
    describe_counter!(
        WORKER_ERRORS,
        "Passes of a background worker that failed (the work is retried)."
    );
    describe_histogram!(WORKER_LAG, metrics::Unit::Seconds, "For each item a worker handled: how long after it became due (expire_at, approval) the worker handled it.");
    describe_gauge!(
        WORKER_LAST_PASS_AGE,
        metrics::Unit::Seconds,
        "Seconds since a worker loop last began a pass, at the last scrape."
    );
    describe_gauge!(
        DB_POOL_CONNECTIONS,
        "Database pool connections, by state: max, open, idle, in_use."
    );
    describe_gauge!(DB_POOL_WAITING, "Tasks waiting for a database connection.");
    describe_gauge!(
        LEDGER_CHECK_DIFFERENCES,
        "Differences the last ledger check found (0: the books balance)."
    );
    describe_gauge!(
        LEDGER_CHECK_LAST_RUN,
        metrics::Unit::Seconds,
        "When the ledger check last ran, as a Unix time."
    );
    describe_gauge!(
        READY,
        "1 when the instance's last readiness evaluation (/readyz, or a scrape) passed, else 0."
    );
    describe_gauge!(
        BUILD_INFO,
        "Always 1; the labels say which build runs: version, commit, profile."
    );
}

/// What the service says of the channels it calls and hears from.
fn describe_channels() {
    describe_gauge!(
        PAYOUTS_IN_DOUBT,
        "Approved payouts sent to a channel without an answer to trust (a timeout, a broken connection, a 5xx, a crash), by channel code, at the last scrape: inquired, and re-sent under the same order number only when the channel has no record."
    );
    describe_gauge!(
        PAYOUT_OLDEST_IN_DOUBT,
        metrics::Unit::Seconds,
        "How long the oldest payout in doubt at a channel has been, by channel code (0 when none)."
    );
    describe_counter!(
        CHANNEL_CALLS,
        "Calls to a payment channel, by channel code, call (create_payment, dispatch_payout) and outcome: accepted, refused (the channel said no), unknown (no answer to trust; asked again)."
    );
    describe_histogram!(
        CHANNEL_CALL_DURATION,
        metrics::Unit::Seconds,
        "Time a call to a payment channel took, by channel code and call."
    );
    describe_gauge!(
        CHANNEL_CIRCUIT_OPEN,
        "1 while a channel rests on this instance (its circuit open: too many of its calls were refused or had no answer to trust in the window), else 0; by channel code."
    );
    describe_counter!(
        CHANNEL_CIRCUIT_OPENED,
        "Times a channel's circuit opened on this instance, by channel code."
    );
    describe_histogram!(
        GROUP_COMMIT_UNITS,
        "Channel completions of one merchant committed in one transaction (group commit): 1 when they came one at a time, more when they queued behind the balance row."
    );
    describe_histogram!(
        DEPOSIT_INSERT_ROWS,
        "New deposit orders inserted by one statement (group insert): 1 when creates came one at a time, more when they queued behind the inserts in flight."
    );
    describe_counter!(
        ROUTING_DECISIONS,
        "Orders routed to a channel, by channel code, direction (deposit, withdrawal) and reason: only (the one candidate for the order), weight (drawn by weight), order (first of the fallbacks), fallback (after another channel refused or did not answer)."
    );
    describe_counter!(
        CHANNEL_NOTIFICATIONS,
        "Notifications taken from a channel's adapter, by channel code, type and outcome: applied, unchanged, held (a payment for an expired or cancelled order, kept for an operator), contradictory (for an operator), duplicate, refused."
    );
}

/// `2xx`, `4xx`, … of an HTTP status.
pub fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

pub fn http_request(operation: &str, status: u16, took: Duration) {
    counter!(HTTP_REQUESTS, "operation" => operation.to_string(), "status_class" => status_class(status))
        .increment(1);
    histogram!(HTTP_DURATION, "operation" => operation.to_string()).record(took.as_secs_f64());
}

pub fn order_created(kind: &'static str, currency: &str) {
    counter!(ORDERS_CREATED, "kind" => kind, "currency" => currency.to_string()).increment(1);
}

pub fn order_state_changed(kind: &'static str, currency: &str, status: &'static str) {
    counter!(ORDER_STATE_CHANGES, "kind" => kind, "currency" => currency.to_string(), "status" => status)
        .increment(1);
}

pub fn callback_attempt(outcome: &'static str, took: Duration) {
    counter!(CALLBACK_ATTEMPTS, "outcome" => outcome).increment(1);
    histogram!(CALLBACK_ATTEMPT_DURATION).record(took.as_secs_f64());
}

/// `delay_ms`: from the commit that queued the callback to its first
/// attempt, on the injected clock.
pub fn callback_first_attempt_delay(delay_ms: i64) {
    histogram!(CALLBACK_FIRST_ATTEMPT_DELAY).record(delay_ms.max(0) as f64 / 1e3);
}

pub fn callback_backlog(state: &'static str, count: i64) {
    gauge!(CALLBACK_DELIVERIES, "state" => state).set(count as f64);
}

pub fn callback_oldest_due_age(seconds: i64) {
    gauge!(CALLBACK_OLDEST_DUE_AGE).set(seconds.max(0) as f64);
}

/// `channel` is a configured channel's code, so the label set is bounded.
pub fn channel_call(channel: &str, call: &'static str, outcome: &'static str, took: Duration) {
    counter!(CHANNEL_CALLS, "channel" => channel.to_string(), "call" => call, "outcome" => outcome)
        .increment(1);
    histogram!(CHANNEL_CALL_DURATION, "channel" => channel.to_string(), "call" => call)
        .record(took.as_secs_f64());
}

/// How many units one group commit's transaction held.
pub fn group_committed(units: usize) {
    histogram!(GROUP_COMMIT_UNITS).record(units as f64);
}

/// How many new deposit orders one insert statement held.
pub fn deposits_inserted(rows: usize) {
    histogram!(DEPOSIT_INSERT_ROWS).record(rows as f64);
}

/// `channel` is a configured channel's code: 1 while it rests (its circuit
/// open), 0 once back; `opened` counts each opening.
pub fn channel_circuit(channel: &str, open: bool, opened: bool) {
    gauge!(CHANNEL_CIRCUIT_OPEN, "channel" => channel.to_string()).set(if open {
        1.0
    } else {
        0.0
    });
    if opened {
        counter!(CHANNEL_CIRCUIT_OPENED, "channel" => channel.to_string()).increment(1);
    }
}

/// An order routed: `channel` a configured code, `direction` deposit or
/// withdrawal, `reason` one of only, weight, order, fallback.
pub fn routing_decision(channel: &str, direction: &'static str, reason: &'static str) {
    counter!(ROUTING_DECISIONS, "channel" => channel.to_string(), "direction" => direction, "reason" => reason)
        .increment(1);
}

/// `channel` is a configured channel's code.
pub fn payouts_in_doubt(channel: &str, count: i64, oldest_seconds: i64) {
    gauge!(PAYOUTS_IN_DOUBT, "channel" => channel.to_string()).set(count as f64);
    gauge!(PAYOUT_OLDEST_IN_DOUBT, "channel" => channel.to_string()).set(oldest_seconds as f64);
}

/// `channel` is a configured channel's code; `kind` one of the protocol's
/// four types: the label set is bounded.
pub fn channel_notification(channel: &str, kind: &'static str, outcome: &'static str) {
    counter!(CHANNEL_NOTIFICATIONS, "channel" => channel.to_string(), "type" => kind, "outcome" => outcome)
        .increment(1);
}

pub fn refused_at_capacity(surface: &'static str) {
    counter!(REFUSED_AT_CAPACITY, "surface" => surface).increment(1);
}

pub fn sign_in_refused(realm: &'static str, reason: &'static str) {
    counter!(SIGN_IN_FAILURES, "realm" => realm, "reason" => reason).increment(1);
}

pub fn second_factor_refused(when: &'static str, reason: &'static str) {
    counter!(SECOND_FACTOR_REFUSED, "when" => when, "reason" => reason).increment(1);
}

pub fn worker_run(worker: &'static str, ok: bool) {
    counter!(WORKER_RUNS, "worker" => worker).increment(1);
    if !ok {
        counter!(WORKER_ERRORS, "worker" => worker).increment(1);
    }
}

pub fn worker_lag(worker: &'static str, seconds: i64) {
    histogram!(WORKER_LAG, "worker" => worker).record(seconds.max(0) as f64);
}

pub fn worker_last_pass_age(worker: &'static str, age: Duration) {
    gauge!(WORKER_LAST_PASS_AGE, "worker" => worker).set(age.as_secs_f64());
}

/// The pool as deadpool reports it.
pub fn db_pool(max: usize, open: usize, idle: usize, waiting: usize) {
    let in_use = open.saturating_sub(idle);
    for (state, n) in [
        ("max", max),
        ("open", open),
        ("idle", idle),
        ("in_use", in_use),
    ] {
        gauge!(DB_POOL_CONNECTIONS, "state" => state).set(n as f64);
    }
    gauge!(DB_POOL_WAITING).set(waiting as f64);
}

pub fn ledger_checked(differences: usize, at_unix: i64) {
    gauge!(LEDGER_CHECK_DIFFERENCES).set(differences as f64);
    gauge!(LEDGER_CHECK_LAST_RUN).set(at_unix as f64);
}

pub fn ready(ready: bool) {
    gauge!(READY).set(if ready { 1.0 } else { 0.0 });
}

/// `commit` is the binary's: named by its build script, so that a new
/// commit rebuilds the binary and not every crate below it.
pub fn build_info(profile: &'static str, commit: &'static str) {
    gauge!(
        BUILD_INFO,
        "version" => env!("CARGO_PKG_VERSION"),
        "commit" => commit,
        "profile" => profile
    )
    .set(1.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        assert_eq!(status_class(200), "2xx");
        assert_eq!(status_class(204), "2xx");
        assert_eq!(status_class(302), "3xx");
        assert_eq!(status_class(413), "4xx");
        assert_eq!(status_class(503), "5xx");
    }
}
