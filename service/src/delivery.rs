//! Callback delivery: claim what is due, post it, record what happened.
//!
//! A record waits in WAITING_RETRY until its `next_attempt_at`; a worker
//! claims it (SENDING), posts the stored body with a fresh `X-Timestamp`,
//! and writes the outcome and the attempt in one transaction: 2xx is
//! SUCCESS, 4xx is FAILED at once, anything else is retried 30 s after the
//! attempt's scheduled time until the fifth attempt fails. A sweep returns
//! records stuck in SENDING (a worker that died mid-attempt) to
//! WAITING_RETRY. Every time comes from the injected clock.

use crate::app::App;
use crate::callback::{FAILED, SENDING, SUCCESS, WAITING_RETRY};
use crate::config::Config;
use crate::db::rows::{CallbackAttemptRow, CallbackDeliveryRow};
use crate::error::ApiError;
use crate::merchant;
use anyhow::{Context, Result};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// The seed's discipline: five attempts, 30 s apart, measured from each
/// attempt's scheduled time; a SENDING record untouched for 5 minutes is
/// stuck; the sweep looks every minute.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    pub max_attempts: i32,
    pub retry_interval_seconds: i64,
    pub stuck_after_seconds: i64,
    pub sweep_every_seconds: i64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            max_attempts: 5,
            retry_interval_seconds: 30,
            stuck_after_seconds: 300,
            sweep_every_seconds: 60,
        }
    }
}

/// What one attempt came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// A 4xx: the receiver refused the callback; no retry.
    Rejected,
    /// Retried at `next_attempt_at`.
    Retry,
    /// The last attempt failed.
    Failed,
}

impl Outcome {
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Rejected => "rejected",
            Outcome::Retry => "retry",
            Outcome::Failed => "failed",
        }
    }
}

/// Decides an attempt's outcome from the receiver's status (or its
/// absence) and the attempt's number.
pub fn judge(status: Option<u16>, attempt: i32, schedule: &Schedule) -> Outcome {
    match status {
        Some(s) if (200..300).contains(&s) => Outcome::Success,
        Some(s) if (400..500).contains(&s) => Outcome::Rejected,
        _ if attempt >= schedule.max_attempts => Outcome::Failed,
        _ => Outcome::Retry,
    }
}

/// Posts callbacks: no redirects, https only and no private addresses in
/// production, an extra CA bundle when configured.
#[derive(Clone)]
pub struct Courier {
    client: reqwest::Client,
    guard: AddressGuard,
}

impl Courier {
    pub fn new(config: &Config) -> Result<Courier> {
        let guard = AddressGuard {
            allow_private: config.callback_allow_private_addresses,
            allowed_hosts: config
                .callback_allowed_private_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
        };
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .https_only(config.profile == crate::config::Profile::Production)
            .dns_resolver(Arc::new(guard.clone()))
            .user_agent("payments-callbacks/0.1");
        if let Some(path) = &config.callback_ca_bundle {
            let pem = std::fs::read(path)
                .with_context(|| format!("reading callback CA bundle {}", path.display()))?;
            for cert in reqwest::Certificate::from_pem_bundle(&pem)
                .with_context(|| format!("parsing callback CA bundle {}", path.display()))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        Ok(Courier {
            client: builder
                .build()
                .context("building the callback HTTP client")?,
            guard,
        })
    }

    /// Posts `body`; the receiver's status, or why there is none.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &str,
        timeout: Duration,
    ) -> Result<u16, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("bad callback URL: {e}"))?;
        // A literal address never reaches the resolver: check it here.
        if let Some(host) = parsed.host_str() {
            if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
                self.guard.check(host, ip)?;
            }
        }
        let mut request = self
            .client
            .post(parsed)
            .timeout(timeout)
            .header("content-type", "application/json")
            .body(body.to_string());
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        match request.send().await {
            Ok(response) => Ok(response.status().as_u16()),
            Err(e) if e.is_timeout() => Err(format!("timeout after {} s", timeout.as_secs())),
            Err(e) => Err(describe(&e)),
        }
    }
}

/// The error chain of a failed request, without anything secret in it (the
/// URL is the merchant's own and carries no credentials).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Refuses loopback, private, link-local, metadata and other non-public
/// addresses unless configuration allows them, at resolution time, so a
/// name that resolves to an internal address is refused too.
#[derive(Clone, Debug)]
pub struct AddressGuard {
    pub allow_private: bool,
    /// Lower-case names exempt from the check.
    pub allowed_hosts: Vec<String>,
}

impl AddressGuard {
    pub fn check(&self, host: &str, ip: IpAddr) -> Result<(), String> {
        let exempt = || {
            self.allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
        };
        if self.allow_private || is_public(ip) || exempt() {
            Ok(())
        } else {
            Err(format!("refused to call a non-public address ({ip})"))
        }
    }
}

impl reqwest::dns::Resolve for AddressGuard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| guard.check(&host, a.ip()).is_ok())
                .collect();
            if allowed.is_empty() {
                let reason = match found.first() {
                    Some(a) => guard.check(&host, a.ip()).err().unwrap_or_default(),
                    None => format!("{host} has no address"),
                };
                return Err(reason.into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local() // 169.254/16, cloud metadata included
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared address space
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local, fd00:ec2::254 included
                || (first & 0xffc0) == 0xfe80) // link-local
        }
    }
}

/// Claims and attempts every delivery due now, concurrently (at most
/// `concurrency` at once), and waits for them. Returns how many it tried.
pub async fn run_due(app: &Arc<App>, concurrency: usize) -> Result<usize, ApiError> {
    let now = app.now_unix();
    let limit = i64::try_from(concurrency.max(1)).unwrap_or(64);
    let claimed = app
        .db
        .run(move |s| Box::pin(async move { s.claim_due_callbacks(now, limit).await }))
        .await?;
    let count = claimed.len();
    let mut attempts = JoinSet::new();
    for delivery in claimed {
        let app = app.clone();
        attempts.spawn(async move { attempt(&app, delivery).await });
    }
    while let Some(done) = attempts.join_next().await {
        if let Ok(Err(e)) = done {
            eprintln!("payments: a callback attempt could not be recorded: {e}");
        }
    }
    Ok(count)
}

/// One attempt of one claimed delivery, and its record.
pub async fn attempt(app: &App, mut delivery: CallbackDeliveryRow) -> Result<Outcome, ApiError> {
    let schedule = app.config.callback_schedule;
    let scheduled_at = delivery.next_attempt_at.unwrap_or(delivery.updated_at);
    let merchant = merchant::find(app, &delivery.merchant_id).await?;
    let key = merchant::signing_key(app, &delivery.merchant_id).await?;
    let signature = match &delivery.signature {
        Some(s) => s.clone(),
        None => {
            let fields = payments_wire::SigningFields::from_json_body(delivery.body.as_bytes())
                .map_err(|e| ApiError::Internal(format!("stored callback body: {e}")))?;
            payments_wire::sign(&fields, &key)
        }
    };
    let headers = [
        ("x-api-key", key),
        // The service's time: in a sandbox whose clock was advanced, the
        // advanced time, like every other time the sandbox reports.
        ("x-timestamp", app.now_unix().to_string()),
        ("x-signature", signature.clone()),
    ];
    let timeout = Duration::from_secs(
        u64::try_from(merchant.callback_timeout_seconds)
            .unwrap_or(10)
            .max(1),
    );
    let started_at = app.now_unix();
    let started = Instant::now();
    let answer = app
        .courier
        .post(&delivery.callback_url, &headers, &delivery.body, timeout)
        .await;
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let number = delivery.attempts + 1;
    let outcome = judge(answer.as_ref().ok().copied(), number, &schedule);
    let next_attempt_at =
        (outcome == Outcome::Retry).then_some(scheduled_at + schedule.retry_interval_seconds);
    let now = app.now_unix();
    delivery.status = match outcome {
        Outcome::Success => SUCCESS,
        Outcome::Rejected | Outcome::Failed => FAILED,
        Outcome::Retry => WAITING_RETRY,
    }
    .to_string();
    delivery.attempts = number;
    delivery.next_attempt_at = next_attempt_at;
    delivery.signature = Some(signature);
    delivery.updated_at = now;
    let record = CallbackAttemptRow {
        id: uuid::Uuid::new_v4().to_string(),
        delivery_id: delivery.id.clone(),
        attempt: number,
        scheduled_at,
        started_at,
        duration_ms,
        status_code: answer.as_ref().ok().map(|s| i32::from(*s)),
        error: answer.err(),
        outcome: outcome.as_str().to_string(),
        next_attempt_at,
    };
    let order_status = match outcome {
        Outcome::Success => "success",
        Outcome::Rejected | Outcome::Failed => "failed",
        Outcome::Retry => "pending",
    };
    app.db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move {
                // A sweep that reclaimed the record meanwhile owns it now;
                // this attempt's result is dropped, the record redelivered.
                if tx.finish_callback_attempt(&delivery, &record).await? {
                    tx.note_order_callback(
                        &delivery.order_kind,
                        &delivery.order_no,
                        order_status,
                        now,
                    )
                    .await?;
                }
                Ok(())
            })
        })
        .await?;
    Ok(outcome)
}

/// Returns deliveries stuck in SENDING to WAITING_RETRY, due now.
pub async fn sweep(app: &App) -> Result<usize, ApiError> {
    let now = app.now_unix();
    let before = now - app.config.callback_schedule.stuck_after_seconds;
    let swept = app
        .db
        .run(move |s| Box::pin(async move { s.sweep_stuck_callbacks(before, now).await }))
        .await?;
    Ok(swept)
}

/// An operator's retry: the same record, its attempt count back to 0, due
/// now. Refused while an attempt is under way.
pub async fn retry(app: &App, delivery_id: &str) -> Result<CallbackDeliveryRow, ApiError> {
    let current = find(app, delivery_id).await?;
    let now = app.now_unix();
    let id = delivery_id.to_string();
    let reset = app
        .db
        .run(move |s| Box::pin(async move { s.reset_callback(&id, now).await }))
        .await?;
    if !reset {
        return Err(ApiError::InvalidStateTransition {
            order_no: current.id,
            status: SENDING.into(),
            action: "retry".into(),
        });
    }
    app.wake.notify_one();
    find(app, delivery_id).await
}

pub async fn find(app: &App, delivery_id: &str) -> Result<CallbackDeliveryRow, ApiError> {
    let id = delivery_id.to_string();
    app.db
        .run(|s| Box::pin(async move { s.callback_delivery_by_id(&id).await }))
        .await?
        .ok_or_else(|| ApiError::DeliveryNotFound(delivery_id.to_string()))
}

/// The delivery worker: attempts what is due, sweeps every minute, and
/// sleeps until the next due time, a commit that queued a callback, or a
/// clock change wakes it. Stops claiming when `stop` turns true and lets
/// the attempts under way finish.
pub async fn worker(app: Arc<App>, mut stop: tokio::sync::watch::Receiver<bool>) {
    let concurrency = app.config.callback_concurrency.max(1);
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut attempts: JoinSet<()> = JoinSet::new();
    let mut next_sweep = app.now_unix();
    loop {
        if *stop.borrow() {
            break;
        }
        let now = app.now_unix();
        if now >= next_sweep {
            if let Err(e) = sweep(&app).await {
                eprintln!("payments: sweeping stuck callbacks failed: {e}");
            }
            next_sweep = now + app.config.callback_schedule.sweep_every_seconds;
        }
        // Claim only as many as can be sent now, so nothing claimed waits
        // in SENDING behind a slow receiver.
        let free = permits.available_permits();
        let mut claimed_any = false;
        if free > 0 {
            let limit = i64::try_from(free).unwrap_or(1);
            let claimed = app
                .db
                .run(move |s| Box::pin(async move { s.claim_due_callbacks(now, limit).await }))
                .await;
            match claimed {
                Ok(claimed) => {
                    claimed_any = !claimed.is_empty();
                    for delivery in claimed {
                        let Ok(permit) = permits.clone().acquire_owned().await else {
                            break;
                        };
                        let app = app.clone();
                        attempts.spawn(async move {
                            if let Err(e) = attempt(&app, delivery).await {
                                eprintln!(
                                    "payments: a callback attempt could not be recorded: {e}"
                                );
                            }
                            drop(permit);
                            app.wake.notify_one();
                        });
                    }
                }
                Err(e) => eprintln!("payments: claiming due callbacks failed: {e}"),
            }
        }
        while attempts.try_join_next().is_some() {}
        let next_due = app
            .db
            .run(|s| Box::pin(async move { s.next_callback_due().await }))
            .await
            .ok()
            .flatten();
        let now = app.now_unix();
        // Other instances queue callbacks this one hears nothing of: look
        // at least every few seconds.
        let seconds_until =
            |t: i64| Duration::from_secs(u64::try_from(t - now).unwrap_or(0).min(5));
        let wait = if permits.available_permits() == 0 {
            Duration::from_secs(5)
        } else {
            match next_due {
                // Due and claimed: go on at once. Due but not claimed (another
                // instance holds it): look again shortly.
                Some(due) if due <= now => {
                    if claimed_any {
                        Duration::ZERO
                    } else {
                        Duration::from_millis(100)
                    }
                }
                Some(due) => seconds_until(due.min(next_sweep)),
                None => seconds_until(next_sweep),
            }
        };
        if !wait.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = app.wake.notified() => {}
                _ = stop.changed() => {}
            }
        }
    }
    while attempts.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_the_seed() {
        let s = Schedule::default();
        assert_eq!(judge(Some(200), 1, &s), Outcome::Success);
        assert_eq!(judge(Some(204), 5, &s), Outcome::Success);
        assert_eq!(judge(Some(400), 1, &s), Outcome::Rejected);
        assert_eq!(judge(Some(499), 1, &s), Outcome::Rejected);
        assert_eq!(judge(Some(500), 1, &s), Outcome::Retry);
        assert_eq!(judge(Some(503), 4, &s), Outcome::Retry);
        assert_eq!(judge(Some(500), 5, &s), Outcome::Failed);
        assert_eq!(judge(None, 1, &s), Outcome::Retry);
        assert_eq!(judge(None, 5, &s), Outcome::Failed);
        assert_eq!(judge(Some(302), 1, &s), Outcome::Retry);
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
