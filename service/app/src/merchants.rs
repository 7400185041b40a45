//! Merchants, their API keys and their settings, with the rules each
//! setting must satisfy (fee bounds, key grace, callback timeout, rate
//! limit, auto-approval limits).

use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::money;
use crate::domain::status::{AutoApprovalMode, CallbackScheme, KeyScope, MerchantStatus};
use crate::keys::new_api_key;
use crate::store::error::Key;
use crate::store::rows::{ApiKeyRow, FeeRow, MerchantChange, MerchantRow};
use crate::store::{Store, StoreError};
use crate::{balances, App};
use anyhow::{anyhow, Result};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

pub const DEFAULT_CALLBACK_TIMEOUT_SECONDS: i32 = 10;
pub const DEMO_MERCHANT_CODE: &str = "demo";

/// The most requests per minute (and burst) a merchant's limit may allow.
const RATE_LIMIT_MAX: i32 = 1_000_000;
/// The longest a rotated key may keep working: 30 days.
const KEY_GRACE_MAX_SECONDS: i64 = 30 * 24 * 3600;
/// The longest a callback attempt may be given.
const CALLBACK_TIMEOUT_MAX_SECONDS: i32 = 60;

/// Whether a merchant's withdrawals are approved at creation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoApproval {
    Off,
    Always,
    /// Up to an amount (stored units) per currency; other currencies wait.
    UpTo(BTreeMap<String, i64>),
}

impl AutoApproval {
    pub fn mode(&self) -> AutoApprovalMode {
        match self {
            AutoApproval::Off => AutoApprovalMode::Off,
            AutoApproval::Always => AutoApprovalMode::Always,
            AutoApproval::UpTo(_) => AutoApprovalMode::UpTo,
        }
    }

    pub fn limits(&self) -> BTreeMap<String, i64> {
        match self {
            AutoApproval::UpTo(limits) => limits.clone(),
            _ => BTreeMap::new(),
        }
    }

    pub fn approves(&self, currency: &str, amount: i64) -> bool {
        match self {
            AutoApproval::Off => false,
            AutoApproval::Always => true,
            AutoApproval::UpTo(limits) => limits.get(currency).is_some_and(|max| amount <= *max),
        }
    }

    /// The stored mode and, in mode `up_to`, its limits document, read
    /// strictly: a document that is not a map of currency to units is an
    /// error naming the merchant's row, never "no limits".
    fn from_row(row: &MerchantRow) -> Result<AutoApproval, StoreError> {
        Ok(match row.auto_approval {
            AutoApprovalMode::Off => AutoApproval::Off,
            AutoApprovalMode::Always => AutoApproval::Always,
            AutoApprovalMode::UpTo => AutoApproval::UpTo(setting(
                row,
                "auto_approval_limits",
                &row.auto_approval_limits,
            )?),
        })
    }
}

/// A settings document of a merchant's row, parsed strictly.
fn setting<T: serde::de::DeserializeOwned>(
    row: &MerchantRow,
    column: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::corrupt(
            "merchants",
            Key("id", &row.id),
            format!("column {column} is not a valid settings document: {e}"),
        )
    })
}

#[derive(Clone, Debug)]
pub struct Merchant {
    pub id: String,
    pub code: String,
    pub name: String,
    pub status: MerchantStatus,
    pub callback_timeout_seconds: i32,
    pub auto_approval: AutoApproval,
    /// (requests per minute, burst), when set for this merchant.
    pub rate_limit: Option<(u32, u32)>,
    /// Receiving account id per currency, where an operator assigned one.
    pub receiving_accounts: BTreeMap<String, String>,
    /// The merchant's own fee rates, when they were read in the same query
    /// as the merchant (a signed request's); `None` means not read, so a
    /// fee lookup asks the database.
    pub own_rates: Option<Vec<FeeRow>>,
}

impl Merchant {
    pub fn from_row(row: MerchantRow) -> Result<Merchant, StoreError> {
        if !(1..=CALLBACK_TIMEOUT_MAX_SECONDS).contains(&row.callback_timeout_seconds) {
            return Err(StoreError::corrupt(
                "merchants",
                Key("id", &row.id),
                format!(
                    "column callback_timeout_seconds holds {}, outside 1 to {CALLBACK_TIMEOUT_MAX_SECONDS}",
                    row.callback_timeout_seconds
                ),
            ));
        }
        Ok(Merchant {
            auto_approval: AutoApproval::from_row(&row)?,
            rate_limit: match (row.rate_limit_per_minute, row.rate_limit_burst) {
                (Some(r), Some(b)) if r > 0 && b > 0 => Some((r as u32, b as u32)),
                _ => None,
            },
            receiving_accounts: setting(&row, "receiving_accounts", &row.receiving_accounts)?,
            status: row.status,
            id: row.id,
            code: row.code,
            name: row.name,
            callback_timeout_seconds: row.callback_timeout_seconds,
            own_rates: None,
        })
    }

    /// How long a receiver of this merchant's callbacks may take (1 to 60
    /// seconds, as `from_row` checked).
    pub fn callback_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(u64::from(self.callback_timeout_seconds.unsigned_abs()))
    }

    pub fn with_own_rates(mut self, rates: Vec<FeeRow>) -> Merchant {
        self.own_rates = Some(rates);
        self
    }
}

/// A merchant and the only copy of its new key the caller will ever see.
pub struct NewMerchant {
    pub merchant: Merchant,
    pub api_key: String,
}

/// Creates a merchant with one API key and a zero balance per configured
/// currency, in one transaction.
pub async fn create(
    app: &App,
    actor: &Actor,
    code: &str,
    name: &str,
) -> Result<NewMerchant, ApiError> {
    let code = crate::domain::validate::code("code", code.to_string())?;
    let name = crate::domain::validate::required_text("name", name.to_string(), 128)?;
    let now = app.now_unix();
    let row = MerchantRow {
        // Sorts in the order merchants are made: the listing's tie-break.
        id: crate::ids::ordered(),
        code: code.clone(),
        name,
        status: MerchantStatus::Active,
        callback_timeout_seconds: DEFAULT_CALLBACK_TIMEOUT_SECONDS,
        created_at: now,
        updated_at: now,
        auto_approval: AutoApprovalMode::Off,
        auto_approval_limits: "{}".into(),
        rate_limit_per_minute: None,
        rate_limit_burst: None,
        receiving_accounts: "{}".into(),
        callback_scheme: CallbackScheme::Seed,
        callback_secrets: "[]".into(),
    };
    let (api_key, key_row) = new_key_row(app, &row.id, now)?;
    let balances = balances::zero_rows(app, &row.id, now);
    let merchant_row = row.clone();
    app.db
        .transaction_audited::<_, ApiError, _>(
            actor.audit(Target::NewMerchant, None, app.now_unix()),
            |tx| {
                Box::pin(async move {
                    if tx.merchant_by_code(&merchant_row.code).await?.is_some() {
                        return Err(ApiError::MerchantCodeTaken(merchant_row.code.clone()));
                    }
                    tx.insert_merchant(&merchant_row).await?;
                    tx.insert_api_key(&key_row).await?;
                    for b in &balances {
                        tx.ensure_balance(b).await?;
                    }
                    Ok(())
                })
            },
        )
        .await?;
    Ok(NewMerchant {
        merchant: Merchant::from_row(row)?,
        api_key,
    })
}

fn new_key_row(app: &App, merchant_id: &str, now: i64) -> Result<(String, ApiKeyRow), ApiError> {
    let api_key = new_api_key(app.config.profile == crate::domain::routing::Profile::Production);
    let row = ApiKeyRow {
        id: crate::ids::ordered(),
        merchant_id: merchant_id.to_string(),
        key_hash: app.vault.lookup_hash(&api_key),
        key_ciphertext: app
            .vault
            .encrypt(&api_key)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        created_at: now,
        expires_at: None,
        allowed_addresses: None,
        scope: KeyScope::Full,
    };
    Ok((api_key, row))
}

/// A new key and when the keys before it stop working.
pub struct IssuedKey {
    pub api_key: String,
    pub previous_keys_expire_at: Option<i64>,
}

/// How long a rotation leaves the older keys working: as asked (at most
/// 30 days), or the configured grace.
pub fn key_grace(app: &App, grace_seconds: Option<i64>) -> Result<i64, ApiError> {
    Ok(checked_grace(grace_seconds)?.unwrap_or(app.config.key_rotation_grace_seconds))
}

/// A grace asked for, refused past its bounds (checked where a request is
/// read, before anything else is).
pub fn checked_grace(grace_seconds: Option<i64>) -> Result<Option<i64>, ApiError> {
    match grace_seconds {
        Some(g) if !(0..=KEY_GRACE_MAX_SECONDS).contains(&g) => Err(ApiError::invalid_field(
            "grace_seconds",
            "must be between 0 and 2592000",
        )),
        other => Ok(other),
    }
}

/// Rotates the merchant's key: the new key works at once, and every older
/// key keeps working for at most `grace_seconds` more (one already ending
/// sooner keeps its end). Both happen in one transaction, so there is no
/// moment without a working key.
/// A new key; the merchant's other keys keep working for `grace_seconds`
/// (the configured grace when not given, at most 30 days).
pub async fn issue_api_key(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    grace_seconds: Option<i64>,
) -> Result<IssuedKey, ApiError> {
    let grace_seconds = key_grace(app, grace_seconds)?;
    let now = app.now_unix();
    let (api_key, mut key_row) = new_key_row(app, merchant_id, now)?;
    let id = merchant_id.to_string();
    let expires_at = now + grace_seconds;
    let rotated = app
        .db
        .transaction_audited::<_, ApiError, _>(
            actor.audit(
                Target::Merchant(merchant_id.to_string()),
                None,
                app.now_unix(),
            ),
            move |tx| {
                Box::pin(async move {
                    if tx.merchant_by_id(&id).await?.is_none() {
                        return Err(ApiError::MerchantNotFound(id));
                    }
                    // A rotation changes the secret, not where the key is
                    // accepted from or what it may do: the new key keeps the
                    // newest working key's restrictions.
                    if let Some(newest) = tx
                        .api_keys_of(&id)
                        .await?
                        .into_iter()
                        .find(|k| k.expires_at.is_none_or(|e| e > now))
                    {
                        key_row.allowed_addresses = newest.allowed_addresses;
                        key_row.scope = newest.scope;
                    }
                    // Keys issued in the same second as the new one must not
                    // count as older: expire first, insert after.
                    let rotated = tx.expire_api_keys(&id, expires_at).await?;
                    tx.insert_api_key(&key_row).await?;
                    Ok(rotated)
                })
            },
        )
        .await?;
    Ok(IssuedKey {
        api_key,
        previous_keys_expire_at: (rotated > 0).then_some(expires_at),
    })
}

/// How long a callback attempt to this merchant may take: 1 to 60 s.
pub async fn set_callback_timeout(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    seconds: i64,
) -> Result<Merchant, ApiError> {
    let seconds = i32::try_from(seconds)
        .ok()
        .filter(|s| (1..=CALLBACK_TIMEOUT_MAX_SECONDS).contains(s))
        .ok_or_else(|| {
            ApiError::invalid_field("callback_timeout_seconds", "must be between 1 and 60")
        })?;
    let change = MerchantChange {
        callback_timeout_seconds: Some(seconds),
        ..MerchantChange::at(app.now_unix())
    };
    change_merchant(app, actor, merchant_id, change).await
}

/// Writes `change` to the merchant and reads it back as it now is.
async fn change_merchant(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    change: MerchantChange,
) -> Result<Merchant, ApiError> {
    let id = merchant_id.to_string();
    // A transaction, though one statement: an operator's change carries
    // its audit row in it.
    // Refused inside the transaction, so that nothing (no audit row
    // either) commits for a merchant that is not there.
    app.db
        .transaction_audited::<_, ApiError, _>(
            actor.audit(
                Target::Merchant(merchant_id.to_string()),
                None,
                app.now_unix(),
            ),
            |s| {
                Box::pin(async move {
                    if !s.change_merchant(&id, &change).await? {
                        return Err(ApiError::MerchantNotFound(id));
                    }
                    Ok(())
                })
            },
        )
        .await?;
    find(app, merchant_id).await
}

/// Assigns the receiving account the merchant's deposits in its currency
/// are paid to from now on; orders already created keep theirs.
pub async fn set_receiving_account(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    account_id: &str,
) -> Result<Merchant, ApiError> {
    let account = app
        .config
        .receiving_account(account_id)
        .ok_or_else(|| ApiError::AccountNotFound(account_id.to_string()))?;
    let (id, currency, account) = (
        merchant_id.to_string(),
        account.currency.clone(),
        account.id.clone(),
    );
    let now = app.now_unix();
    // Locked, read and written in one transaction, so that two assignments
    // in different currencies cannot overwrite each other.
    app.db
        .transaction_audited::<_, ApiError, _>(
            actor.audit(
                Target::Merchant(merchant_id.to_string()),
                None,
                app.now_unix(),
            ),
            move |tx| {
                Box::pin(async move {
                    let mut merchant = Merchant::from_row(locked_row(tx, &id).await?)?;
                    merchant.receiving_accounts.insert(currency, account);
                    let accounts = serde_json::to_string(&merchant.receiving_accounts)
                        .map_err(|e| ApiError::Internal(e.to_string()))?;
                    let change = MerchantChange {
                        receiving_accounts: Some(accounts),
                        ..MerchantChange::at(now)
                    };
                    tx.change_merchant(&id, &change).await?;
                    Ok(merchant)
                })
            },
        )
        .await
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
            create(
                app,
                &Actor::System("sandbox"),
                DEMO_MERCHANT_CODE,
                "Demo Merchant",
            )
            .await?,
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
            merchant: Merchant::from_row(row)?,
            api_key: app.vault.decrypt(&current.key_ciphertext)?,
        },
        false,
    ))
}

pub async fn find(app: &App, merchant_id: &str) -> Result<Merchant, ApiError> {
    Ok(Merchant::from_row(find_row(app, merchant_id).await?)?)
}

/// The merchant's row as stored, for what reads more than `Merchant` holds
/// (its callback signing).
pub async fn find_row(app: &App, merchant_id: &str) -> Result<MerchantRow, ApiError> {
    let id = merchant_id.to_string();
    app.db
        .run(|s| Box::pin(async move { s.merchant_by_id(&id).await }))
        .await?
        .ok_or_else(|| ApiError::MerchantNotFound(merchant_id.to_string()))
}

/// The merchant whose code is `code`, if one is.
pub async fn find_by_code(app: &App, code: &str) -> Result<Option<MerchantRow>, ApiError> {
    let code = code.to_string();
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.merchant_by_code(&code).await }))
        .await?)
}

/// The merchant's row, held until the transaction ends: a read-modify-write
/// of a settings document starts here, so that two at once lose nothing.
pub async fn locked_row(tx: &mut dyn Store, merchant_id: &str) -> Result<MerchantRow, ApiError> {
    tx.lock_merchant(merchant_id).await?;
    tx.merchant_by_id(merchant_id)
        .await?
        .ok_or_else(|| ApiError::MerchantNotFound(merchant_id.to_string()))
}

pub async fn set_auto_approval(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    setting: AutoApproval,
) -> Result<Merchant, ApiError> {
    let limits =
        serde_json::to_string(&setting.limits()).map_err(|e| ApiError::Internal(e.to_string()))?;
    let change = MerchantChange {
        auto_approval: Some(setting.mode()),
        auto_approval_limits: Some(limits),
        ..MerchantChange::at(app.now_unix())
    };
    change_merchant(app, actor, merchant_id, change).await
}

/// A merchant's own rate limit: each figure between 1 and 1 000 000.
pub async fn set_rate_limit(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    per_minute: i64,
    burst: i64,
) -> Result<Merchant, ApiError> {
    let bounded = |field: &str, v: i64| {
        i32::try_from(v)
            .ok()
            .filter(|v| (1..=RATE_LIMIT_MAX).contains(v))
            .ok_or_else(|| ApiError::invalid_field(field, "must be between 1 and 1000000"))
    };
    let per_minute = bounded("requests_per_minute", per_minute)?;
    let change = MerchantChange {
        rate_limit_per_minute: Some(per_minute),
        rate_limit_burst: Some(bounded("burst", burst)?),
        ..MerchantChange::at(app.now_unix())
    };
    change_merchant(app, actor, merchant_id, change).await
}

/// Auto-approval up to a limit per currency: each currency configured,
/// each limit a non-negative amount below the currency's dual-approval
/// threshold, at least one.
pub fn auto_approval_up_to(
    app: &App,
    limits: impl IntoIterator<Item = (String, Decimal)>,
) -> Result<AutoApproval, ApiError> {
    let mut units = BTreeMap::new();
    for (currency, max) in limits {
        app.config.currency(&currency)?;
        let field = format!("limits.{currency}");
        let max = non_negative(&field, max)?;
        let max =
            money::to_units(max).ok_or_else(|| ApiError::invalid_field(&field, "is too large"))?;
        // Auto-approval is one approver (nobody): it never reaches what
        // needs two people.
        if let Some(threshold) = app.config.dual_approval_threshold(&currency)? {
            if max >= threshold {
                return Err(ApiError::invalid_field(
                    &field,
                    format!(
                        "must be below {currency}'s dual-approval threshold ({}): a withdrawal at or above it needs two people",
                        money::from_units(threshold)
                    ),
                ));
            }
        }
        units.insert(currency, max);
    }
    if units.is_empty() {
        return Err(ApiError::invalid_field(
            "limits",
            "`up_to` needs a limit for at least one currency",
        ));
    }
    Ok(AutoApproval::UpTo(units))
}

/// An amount a setting holds: not negative, at most 4 fraction digits.
pub(crate) fn non_negative(field: &str, value: Decimal) -> Result<Decimal, ApiError> {
    if value < Decimal::ZERO {
        return Err(ApiError::invalid_field(field, "must not be negative"));
    }
    money::to_units(value)
        .ok_or_else(|| ApiError::invalid_field(field, "has more than 4 fraction digits"))?;
    Ok(value.normalize())
}
