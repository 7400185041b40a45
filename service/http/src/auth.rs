//! Authentication of a merchant request: headers present, timestamp fresh,
//! key known, signature right, merchant enabled, the key accepted from the
//! client's address and for what is asked, in that order. Nothing here logs
//! a key or a signature.

use crate::app::admission::NotAdmitted;
use crate::app::merchants::Merchant;
use crate::app::App;
use crate::domain::address;
use crate::domain::error::ApiError;
use crate::domain::status::MerchantStatus;
use crate::keys::constant_time_eq;
use dropshot::RequestContext;
use payments_wire::server::{SignatureHeaders, HEADER_API_KEY, HEADER_SIGNATURE, HEADER_TIMESTAMP};
use payments_wire::{SigningFields, SigningFieldsError};
use std::net::IpAddr;
use std::sync::Arc;

/// A merchant's request, proven, with its place among the merchant's
/// requests in flight (held until it is dropped).
pub struct Authenticated {
    pub merchant: Merchant,
    pub fields: SigningFields,
    pub place: crate::app::admission::MerchantPlace,
}

/// The address a request came from: the peer's, or, from one of the
/// `trusted_proxies`, the one it forwarded (`X-Forwarded-For`); a header
/// an untrusted peer sent is never read.
pub fn client_address(rqctx: &RequestContext<Arc<App>>) -> IpAddr {
    let forwarded: Vec<&str> = rqctx
        .request
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let forwarded = (!forwarded.is_empty()).then(|| forwarded.join(","));
    address::client_address(
        rqctx.request.remote_addr().ip(),
        forwarded.as_deref(),
        &rqctx.context().config.trusted_proxies,
    )
}

/// What a request asks of its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asks {
    /// A query, a balance, a listing, a statement.
    Read,
    /// A create.
    Write,
}

/// Authenticates a request whose signed fields are `fields` (computed by the
/// caller from the body or the path and query), and counts it among its
/// merchant's requests in flight: past `requests_in_flight.per_merchant`
/// it is refused at once with 429 and `Retry-After: 1`; then it waits for
/// its turn among the merchant's requests running
/// (`running_per_merchant`), and one whose turn does not come within
/// `database_pool_wait_ms` is answered 503.
pub async fn authenticate(
    app: &App,
    headers: &SignatureHeaders,
    fields: Result<SigningFields, SigningFieldsError>,
    client: IpAddr,
    asks: Asks,
) -> Result<Authenticated, ApiError> {
    let api_key = headers
        .api_key
        .as_deref()
        .ok_or(ApiError::MissingHeader(HEADER_API_KEY))?;
    let timestamp = headers
        .timestamp
        .as_deref()
        .ok_or(ApiError::MissingHeader(HEADER_TIMESTAMP))?;
    let signature = headers
        .signature
        .as_deref()
        .ok_or(ApiError::MissingHeader(HEADER_SIGNATURE))?;

    let sent_at: i64 = timestamp.parse().map_err(|_| ApiError::InvalidTimestamp)?;
    let now = app.now_unix();
    let skew = app.wall_unix().saturating_sub(sent_at).saturating_abs();
    if skew > app.config.timestamp_skew_seconds {
        return Err(ApiError::StaleTimestamp {
            skew,
            allowed: app.config.timestamp_skew_seconds,
        });
    }

    let key_hash = app.vault.lookup_hash(api_key);
    let signer = crate::app::credentials::signer(app, &key_hash)
        .await
        .map_err(ApiError::from)?
        .filter(|s| s.key.expires_at.is_none_or(|e| e > now))
        .ok_or(ApiError::UnknownApiKey)?;
    // The lookup matched an HMAC; confirm the key itself, in constant time.
    let stored = app
        .vault
        .decrypt(&signer.key.key_ciphertext)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    if !constant_time_eq(&stored, api_key) {
        return Err(ApiError::UnknownApiKey);
    }

    let fields = fields.map_err(|e| ApiError::InvalidBody(e.to_string()))?;
    if !payments_wire::verify(&fields, &stored, signature) {
        return Err(ApiError::InvalidSignature);
    }

    let merchant = signer.merchant.clone();
    // The request's span names its merchant from here on.
    tracing::Span::current().record("merchant_id", merchant.id.as_str());
    if merchant.status == MerchantStatus::Suspended {
        return Err(ApiError::MerchantDisabled);
    }
    crate::app::api_keys::admits(&signer.key, client, asks == Asks::Write)?;
    // Counted only once the request is proven to be the merchant's, so that
    // nobody else can spend its budget.
    let (per_minute, burst) = merchant.rate_limit.unwrap_or((
        app.config.rate_limit.requests_per_minute,
        app.config.rate_limit.burst,
    ));
    crate::app::limits::admit(app, &merchant.id, per_minute, burst).await?;
    let place = app
        .admission
        .admit_merchant(&merchant.id)
        .await
        .map_err(|why| match why {
            NotAdmitted::InFlight => ApiError::RateLimited { retry_after: 1 },
            NotAdmitted::Running => ApiError::AtCapacity("merchant's share of the payment API"),
        })?;
    Ok(Authenticated {
        merchant,
        fields,
        place,
    })
}
