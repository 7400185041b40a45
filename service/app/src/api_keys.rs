//! A merchant's API keys after they are issued: listed by a hint that
//! tells them apart (never the key), ended one at a time, at once,
//! whatever grace a rotation gave them, and restricted to the addresses
//! they are accepted from and to reading. Issuing is
//! `merchants::issue_api_key`.

use crate::actor::{Actor, Target};
use crate::domain::address;
use crate::domain::error::ApiError;
use crate::domain::status::KeyScope;
use crate::store::rows::ApiKeyRow;
use crate::{merchants, App};

/// A key as operators see it.
#[derive(Clone, Debug)]
pub struct KeyView {
    pub id: String,
    /// Its kind and last four characters: `sk_live_…a1b2`.
    pub hint: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub active: bool,
    /// The networks it is accepted from; empty: anywhere.
    pub allowed_addresses: Vec<String>,
    pub scope: KeyScope,
}

impl KeyView {
    fn of(app: &App, row: ApiKeyRow, now: i64) -> Result<KeyView, ApiError> {
        let key = app
            .vault
            .decrypt(&row.key_ciphertext)
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(KeyView {
            hint: crate::keys::key_hint(&key),
            active: row.expires_at.is_none_or(|e| e > now),
            allowed_addresses: stored_networks(&row)?
                .iter()
                .map(ToString::to_string)
                .collect(),
            scope: row.scope,
            id: row.id,
            created_at: row.created_at,
            expires_at: row.expires_at,
        })
    }
}

/// Every key of the merchant, newest first.
pub async fn list(app: &App, merchant_id: &str) -> Result<Vec<KeyView>, ApiError> {
    merchants::find_row(app, merchant_id).await?;
    let id = merchant_id.to_string();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.api_keys_of(&id).await }))
        .await?;
    let now = app.now_unix();
    rows.into_iter().map(|r| KeyView::of(app, r, now)).collect()
}

/// Ends one key now; ending one that has ended changes nothing. Audited.
pub async fn revoke(
    app: &App,
    by: &Actor,
    merchant_id: &str,
    key_id: &str,
) -> Result<KeyView, ApiError> {
    let now = app.now_unix();
    let (merchant, key) = (merchant_id.to_string(), key_id.to_string());
    let audit = by.audit(Target::Merchant(merchant.clone()), None, now);
    let row = app
        .db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move {
                if tx.merchant_by_id(&merchant).await?.is_none() {
                    return Err(ApiError::MerchantNotFound(merchant));
                }
                tx.revoke_api_key(&merchant, &key, now)
                    .await?
                    .ok_or(ApiError::ApiKeyNotFound(key))
            })
        })
        .await?;
    KeyView::of(app, row, now)
}

/// The key's allowlist as stored; a stored entry that is no network is an
/// error, never "anywhere".
pub fn stored_networks(row: &ApiKeyRow) -> Result<Vec<ipnet::IpNet>, ApiError> {
    let Some(text) = row.allowed_addresses.as_deref() else {
        return Ok(Vec::new());
    };
    text.split(',')
        .map(|n| {
            n.parse().map_err(|_| {
                ApiError::Internal(format!("api key {}: stored allowlist unreadable", row.id))
            })
        })
        .collect()
}

/// Refuses a request a key may not make: from outside its address
/// allowlist, or a create (`writes`) with a read-only key. Checked once
/// the request's signature holds.
pub fn admits(key: &ApiKeyRow, client: std::net::IpAddr, writes: bool) -> Result<(), ApiError> {
    if !address::allows(&stored_networks(key)?, client) {
        tracing::warn!(key_id = %key.id, client = %client, "a key was used from outside its allowlist");
        return Err(ApiError::KeyNotAllowedFrom(client.to_string()));
    }
    if key.scope == KeyScope::ReadOnly && writes {
        return Err(ApiError::KeyReadOnly);
    }
    Ok(())
}

/// Sets where one key of the merchant is accepted from (`addresses`, each
/// a network or an address; none: anywhere) and what it may do. Audited;
/// another instance sees it within the credential cache's second.
pub async fn restrict(
    app: &App,
    by: &Actor,
    merchant_id: &str,
    key_id: &str,
    addresses: &[String],
    scope: KeyScope,
) -> Result<KeyView, ApiError> {
    let nets = address::allowlist(addresses)
        .map_err(|why| ApiError::invalid_field("allowed_addresses", why))?;
    let stored = (!nets.is_empty()).then(|| {
        nets.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    });
    let now = app.now_unix();
    let (merchant, key) = (merchant_id.to_string(), key_id.to_string());
    let said = format!(
        "key {key_id}: {}; {}",
        stored
            .as_deref()
            .map_or("from anywhere".to_string(), |s| format!("from {s} only")),
        scope.as_str()
    );
    let audit = by.audit(Target::Merchant(merchant.clone()), Some(&said), now);
    let row = app
        .db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move {
                if tx.merchant_by_id(&merchant).await?.is_none() {
                    return Err(ApiError::MerchantNotFound(merchant));
                }
                tx.restrict_api_key(&merchant, &key, stored.as_deref(), scope)
                    .await?
                    .ok_or(ApiError::ApiKeyNotFound(key))
            })
        })
        .await?;
    KeyView::of(app, row, now)
}
