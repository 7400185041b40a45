//! Merchants and their API keys.

use crate::app::App;
use crate::balance;
use crate::db::rows::{ApiKeyRow, MerchantRow};
use crate::error::ApiError;
use crate::keys::new_api_key;
use anyhow::{anyhow, bail, Result};

pub const DEFAULT_CALLBACK_TIMEOUT_SECONDS: i32 = 10;
pub const DEMO_MERCHANT_CODE: &str = "demo";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MerchantStatus {
    Active,
    Disabled,
}

#[derive(Clone, Debug)]
pub struct Merchant {
    pub id: String,
    pub code: String,
    pub name: String,
    pub status: MerchantStatus,
    pub callback_timeout_seconds: i32,
}

impl Merchant {
    pub fn from_row(row: MerchantRow) -> Merchant {
        Merchant {
            status: if row.status == "disabled" {
                MerchantStatus::Disabled
            } else {
                MerchantStatus::Active
            },
            id: row.id,
            code: row.code,
            name: row.name,
            callback_timeout_seconds: row.callback_timeout_seconds,
        }
    }
}

/// A merchant and the only copy of its new key the caller will ever see.
pub struct NewMerchant {
    pub merchant: Merchant,
    pub api_key: String,
}

/// Creates a merchant with one API key and a zero balance per configured
/// currency, in one transaction.
pub async fn create(app: &App, code: &str, name: &str) -> Result<NewMerchant> {
    if code.is_empty()
        || code.len() > 32
        || !code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        bail!("merchant code must be 1 to 32 characters of A-Z, a-z, 0-9, `_` or `-`");
    }
    let now = app.now_unix();
    let row = MerchantRow {
        id: uuid::Uuid::new_v4().to_string(),
        code: code.to_string(),
        name: name.to_string(),
        status: "active".into(),
        callback_timeout_seconds: DEFAULT_CALLBACK_TIMEOUT_SECONDS,
        created_at: now,
        updated_at: now,
    };
    let api_key = new_api_key(app.config.profile == crate::config::Profile::Production);
    let key_row = ApiKeyRow {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: row.id.clone(),
        key_hash: app.vault.lookup_hash(&api_key),
        key_ciphertext: app.vault.encrypt(&api_key)?,
        created_at: now,
        expires_at: None,
    };
    let balances = balance::zero_rows(app, &row.id, now);
    let merchant_row = row.clone();
    app.db
        .transaction::<_, ApiError, _>(|tx| {
            Box::pin(async move {
                if tx.merchant_by_code(&merchant_row.code).await?.is_some() {
                    return Err(ApiError::invalid_field(
                        "code",
                        format!("merchant code `{}` is taken", merchant_row.code),
                    ));
                }
                tx.insert_merchant(&merchant_row).await?;
                tx.insert_api_key(&key_row).await?;
                for b in &balances {
                    tx.ensure_balance(b).await?;
                }
                Ok(())
            })
        })
        .await
        .map_err(|e| anyhow!("creating merchant `{code}`: {e}"))?;
    Ok(NewMerchant {
        merchant: Merchant::from_row(row),
        api_key,
    })
}

/// The sandbox's demo merchant and its current key, created on first run.
/// Returns whether it was created now.
pub async fn ensure_demo(app: &App) -> Result<(NewMerchant, bool)> {
    let existing = app
        .db
        .run(|s| Box::pin(async move { s.merchant_by_code(DEMO_MERCHANT_CODE).await }))
        .await?;
    let Some(row) = existing else {
        return Ok((
            create(app, DEMO_MERCHANT_CODE, "Demo Merchant").await?,
            true,
        ));
    };
    let id = row.id.clone();
    let keys = app
        .db
        .run(|s| Box::pin(async move { s.api_keys_of(&id).await }))
        .await?;
    let now = app.now_unix();
    let current = keys
        .iter()
        .find(|k| k.expires_at.is_none_or(|e| e > now))
        .ok_or_else(|| anyhow!("the demo merchant has no usable API key"))?;
    Ok((
        NewMerchant {
            merchant: Merchant::from_row(row),
            api_key: app.vault.decrypt(&current.key_ciphertext)?,
        },
        false,
    ))
}
