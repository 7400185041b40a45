//! The sandbox's own receiver of platform events. A platform event goes
//! to the address the platform that runs the service configures
//! (`platform_events_url`); a sandbox started with none posts them to
//! itself instead, so that an owner's invitation reaches somebody on a
//! first run, and the console lists what it received with the links in it.
//! The receiver checks each post as any platform's would (Standard
//! Webhooks, the platform's secret), on the service's clock: the sandbox's
//! clock may have been moved, and the events are stamped with it.

use crate::domain::error::ApiError;
use crate::listings::{self, Listing};
use crate::App;
use base64::Engine;
use rand::RngCore;

/// Where a sandbox with no platform address posts its platform events.
pub const INBOX_PATH: &str = "/sandbox/platform-events";

/// How far a post's timestamp may be from the service's clock.
const TOLERANCE_SECONDS: u64 = 5 * 60;

/// A new platform secret in the Standard Webhooks form (`whsec_` and the
/// base64 of 32 random bytes).
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// Whether platform events are posted to this service's own inbox.
pub fn is_own(app: &App) -> bool {
    app.config.platform_events_url.as_deref() == Some(own_url(&app.config.public_base_url).as_str())
}

/// The inbox's address under a public base address.
pub fn own_url(public_base_url: &str) -> String {
    format!("{}{INBOX_PATH}", public_base_url.trim_end_matches('/'))
}

/// Checks a posted platform event: signed with the configured platform
/// secret over its id, timestamp and body, stamped within five minutes of
/// the service's clock. Answers the event's id. A post that fails any
/// check is refused as a bad signature, whichever check it failed (a
/// sender learns nothing from the answer).
pub fn receive(app: &App, headers: &http::HeaderMap, body: &[u8]) -> Result<String, ApiError> {
    let secret = app
        .config
        .platform_events_secret
        .as_deref()
        .ok_or(ApiError::PlatformEventsUnconfigured)?;
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .ok_or(ApiError::InvalidSignature)
    };
    let id = header(standardwebhooks::HEADER_WEBHOOK_ID)?;
    let at: i64 = header(standardwebhooks::HEADER_WEBHOOK_TIMESTAMP)?
        .parse()
        .map_err(|_| ApiError::InvalidSignature)?;
    let signatures = header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE)?;
    // abs_diff: a stamp of i64::MIN must be refused, not overflow.
    if app.now_unix().abs_diff(at) > TOLERANCE_SECONDS {
        return Err(ApiError::InvalidSignature);
    }
    let expected = standardwebhooks::Webhook::new(secret)
        .and_then(|w| w.sign(id, at, body))
        .map_err(|_| ApiError::InvalidSignature)?;
    let matches = signatures
        .split(' ')
        .any(|s| crate::keys::constant_time_eq(s, &expected));
    if !matches {
        return Err(ApiError::InvalidSignature);
    }
    Ok(id.to_string())
}

/// A platform event as the inbox shows it.
pub struct Received {
    pub delivery_id: String,
    pub event: String,
    pub merchant_id: String,
    pub status: String,
    pub created_at: i64,
    /// The event's body, opened: its link included.
    pub body: serde_json::Value,
}

/// The newest platform events, their bodies opened.
pub async fn recent(app: &App, limit: i64) -> Result<Vec<Received>, ApiError> {
    let listing = Listing {
        limit: Some(limit),
        ..Listing::default()
    };
    let page = listings::platform_deliveries(app, listing).await?;
    page.items
        .into_iter()
        .map(|row| {
            let opened = crate::callbacks::open_body(app, &row)?;
            let body = serde_json::from_str(&opened).map_err(|e| {
                ApiError::Internal(format!("platform event {} is not JSON: {e}", row.id))
            })?;
            Ok(Received {
                delivery_id: row.id,
                event: row.event,
                merchant_id: row.merchant_id,
                status: row.status.as_str().to_string(),
                created_at: row.created_at,
                body,
            })
        })
        .collect()
}
