//! Merchant balances, one row per merchant and currency.

use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::store::rows::BalanceRow;
use crate::App;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

#[derive(Clone, Debug, PartialEq)]
pub struct Balance {
    pub id: String,
    pub merchant_id: String,
    pub currency: String,
    pub available: Decimal,
    pub frozen: Decimal,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Balance {
    pub fn total(&self) -> Decimal {
        self.available + self.frozen
    }

    fn from_row(row: BalanceRow) -> Result<Balance, ApiError> {
        Ok(Balance {
            id: row.id,
            merchant_id: row.merchant_id,
            currency: row.currency,
            available: from_units(row.available),
            frozen: from_units(row.frozen),
            version: row.version,
            created_at: crate::clock::from_unix(row.created_at)?,
            updated_at: crate::clock::from_unix(row.updated_at)?,
        })
    }
}

/// A zero balance row, for a currency the merchant has no row for yet.
pub fn zero_row(merchant_id: &str, currency: &str, now: i64) -> BalanceRow {
    BalanceRow {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: merchant_id.to_string(),
        currency: currency.to_string(),
        available: 0,
        frozen: 0,
        version: 0,
        created_at: now,
        updated_at: now,
    }
}

/// Zero balance rows for every configured currency.
pub fn zero_rows(app: &App, merchant_id: &str, now: i64) -> Vec<BalanceRow> {
    app.config
        .currencies
        .keys()
        .map(|currency| zero_row(merchant_id, currency, now))
        .collect()
}

/// Every balance of the merchant, one per configured currency: a currency
/// configured after the merchant was created gets its zero row here.
pub async fn list(app: &App, merchant_id: &str) -> Result<Vec<Balance>, ApiError> {
    let zero = zero_rows(app, merchant_id, app.now_unix());
    let merchant_id = merchant_id.to_string();
    // Every configured currency has its row once the merchant exists; the
    // writes below are only for a currency configured since.
    let id = merchant_id.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.balances_of(&id).await }))
        .await?;
    if zero
        .iter()
        .all(|z| rows.iter().any(|r| r.currency == z.currency))
    {
        return rows.into_iter().map(Balance::from_row).collect();
    }
    let rows = app
        .db
        .transaction::<_, ApiError, _>(|tx| {
            Box::pin(async move {
                for row in &zero {
                    tx.ensure_balance(row).await?;
                }
                Ok(tx.balances_of(&merchant_id).await?)
            })
        })
        .await?;
    rows.into_iter().map(Balance::from_row).collect()
}
