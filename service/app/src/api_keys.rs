//! A merchant's API keys after they are issued: listed by a hint that
//! tells them apart (never the key), and ended one at a time, at once,
//! whatever grace a rotation gave them. Issuing is `merchants::issue_api_key`.

use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
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
