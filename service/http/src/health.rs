//! What a load balancer, an orchestrator and Prometheus ask of an
//! instance, unauthenticated and outside the merchant contract
//! (`docs/operations.md` documents them):
//! - `GET /healthz`: the process answers (no dependency is consulted);
//! - `GET /readyz`: it can do its work: the database answers within a
//!   short timeout, its migrations are the ones this build expects, and
//!   the workers this instance runs are turning; 503 otherwise;
//! - `GET /metrics`: the Prometheus scrape, with the gauges read at scrape
//!   time (callback backlog, pool, worker heartbeats).

use crate::app::{callbacks, App};
use crate::telemetry::heartbeat::{Heartbeat, Pulse};
use crate::telemetry::metrics;
use dropshot::{endpoint, Body, HttpError, RequestContext};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long readiness waits for the database before calling it away.
const DATABASE_TIMEOUT: Duration = Duration::from_secs(2);

#[endpoint { method = GET, path = "/healthz", unpublished = true }]
pub async fn healthz(_rqctx: RequestContext<Arc<App>>) -> Result<http::Response<Body>, HttpError> {
    respond(http::StatusCode::OK, &json!({ "status": "ok" }))
}

#[endpoint { method = GET, path = "/readyz", unpublished = true }]
pub async fn readyz(rqctx: RequestContext<Arc<App>>) -> Result<http::Response<Body>, HttpError> {
    let app = rqctx.context();
    let (checks, ready) = readiness(app).await;
    let status = if ready {
        http::StatusCode::OK
    } else {
        http::StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "status": if ready { "ready" } else { "not_ready" },
        "checks": checks,
    });
    respond(status, &body)
}

#[endpoint { method = GET, path = "/metrics", unpublished = true }]
pub async fn scrape(rqctx: RequestContext<Arc<App>>) -> Result<http::Response<Body>, HttpError> {
    let app = rqctx.context();
    refresh_gauges(app).await;
    // The recorder is installed at start-up; a scrape without it would
    // read as "no traffic at all", so it is an error instead.
    let text = metrics::render().ok_or_else(|| {
        HttpError::for_internal_error("the metrics recorder is not installed".into())
    })?;
    http::Response::builder()
        .status(http::StatusCode::OK)
        .header(
            http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Body::from(text))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

fn respond(status: http::StatusCode, body: &Value) -> Result<http::Response<Body>, HttpError> {
    http::Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Body::from(body.to_string()))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

/// Each check's result, and whether all passed.
async fn readiness(app: &App) -> (Value, bool) {
    let mut ready = true;
    let started = std::time::Instant::now();
    let (database, migrations) =
        match tokio::time::timeout(DATABASE_TIMEOUT, app.db.schema_versions()).await {
            Ok(Ok(versions)) => {
                let latency_ms = started.elapsed().as_millis() as u64;
                let current = versions.applied.as_deref() == Some(versions.expected.as_str());
                ready &= current;
                (
                    json!({ "status": "ok", "latency_ms": latency_ms }),
                    json!({
                        "status": if current { "ok" } else { "behind" },
                        "applied": versions.applied,
                        "expected": versions.expected,
                    }),
                )
            }
            Ok(Err(e)) => {
                ready = false;
                tracing::warn!(error = %e, "readiness: the database did not answer");
                (
                    json!({ "status": "unavailable", "error": "the database did not answer" }),
                    json!({ "status": "unknown" }),
                )
            }
            Err(_) => {
                ready = false;
                tracing::warn!(
                    timeout_ms = DATABASE_TIMEOUT.as_millis() as u64,
                    "readiness: the database did not answer in time"
                );
                (
                    json!({ "status": "unavailable", "error": "no answer within the timeout" }),
                    json!({ "status": "unknown" }),
                )
            }
        };
    let mut worker = |runs: bool, beat: &Heartbeat| -> Value {
        if !runs {
            return json!({ "status": "disabled" });
        }
        match beat.pulse() {
            Pulse::Alive { age } => {
                json!({ "status": "ok", "last_pass_ms_ago": age.as_millis() as u64 })
            }
            Pulse::NotStarted => {
                ready = false;
                json!({ "status": "starting" })
            }
            Pulse::Stalled { age } => {
                ready = false;
                json!({ "status": "stalled", "last_pass_ms_ago": age.as_millis() as u64 })
            }
        }
    };
    let delivery = worker(app.runs_delivery_worker(), &app.beats.delivery);
    let expiry = worker(app.runs_expiry_worker(), &app.beats.expiry);
    // Hearing other instances' callbacks is a speed, not a readiness: a
    // worker without its LISTEN connection polls every second meanwhile.
    let callback_wakeups = match (app.runs_delivery_worker(), app.db.listening()) {
        (false, _) => "disabled",
        (true, None) => "in-process",
        (true, Some(true)) => "listening",
        (true, Some(false)) => "polling",
    };
    let checks = json!({
        "database": database,
        "migrations": migrations,
        "delivery_worker": delivery,
        "expiry_worker": expiry,
        "callback_wakeups": { "status": callback_wakeups },
    });
    metrics::ready(ready);
    (checks, ready)
}

/// The gauges that describe state rather than count events, read now
/// (readiness too: a scrape sees it even where nothing probes `/readyz`).
async fn refresh_gauges(app: &App) {
    let _ = readiness(app).await;
    let pool = app.db.pool_status();
    metrics::db_pool(pool.max_size, pool.size, pool.available, pool.waiting);
    for (worker, runs, beat) in [
        ("delivery", app.runs_delivery_worker(), &app.beats.delivery),
        ("expiry", app.runs_expiry_worker(), &app.beats.expiry),
    ] {
        match beat.pulse() {
            Pulse::Alive { age } | Pulse::Stalled { age } if runs => {
                metrics::worker_last_pass_age(worker, age)
            }
            _ => {}
        }
    }
    match callbacks::backlog(app).await {
        Ok(backlog) => {
            metrics::callback_backlog("WAITING_RETRY", backlog.waiting);
            metrics::callback_backlog("SENDING", backlog.sending);
            metrics::callback_oldest_due_age(
                backlog.oldest_due_at.map_or(0, |due| app.now_unix() - due),
            );
        }
        Err(e) => tracing::warn!(error = %e, "metrics: reading the callback backlog failed"),
    }
    match crate::app::withdrawals::payouts_in_doubt(app).await {
        Ok(channels) => {
            for (code, count, oldest) in channels {
                metrics::payouts_in_doubt(&code, count, oldest);
            }
        }
        Err(e) => tracing::warn!(error = %e, "metrics: reading the payouts in doubt failed"),
    }
}
