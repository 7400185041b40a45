//! A merchant's fee rates: its own where an operator set them, else the
//! configured defaults of the currency. The arithmetic is `domain::fees`.

use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::fees::{Direction, RateConfig};
use crate::domain::money;
use crate::store::rows::FeeRow;
use crate::App;
use rust_decimal::Decimal;

/// The merchant's rate for a currency and direction: its own if an operator
/// set one, else the configured default for the currency, else zero.
pub async fn merchant_rate(
    app: &App,
    merchant_id: &str,
    currency: &str,
    direction: Direction,
) -> Result<RateConfig, ApiError> {
    let (m, c, d) = (
        merchant_id.to_string(),
        currency.to_string(),
        direction.as_str(),
    );
    let own = app
        .db
        .run(|s| Box::pin(async move { s.fee(&m, &c, d).await }))
        .await?;
    rate_or_default(app, own.as_ref(), currency, direction)
}

/// As [`merchant_rate`], from the rates read with the merchant when there
/// are any: the same answer without another round trip.
pub async fn rate_for(
    app: &App,
    merchant: &crate::merchants::Merchant,
    currency: &str,
    direction: Direction,
) -> Result<RateConfig, ApiError> {
    match &merchant.own_rates {
        Some(rows) => {
            let own = rows
                .iter()
                .find(|r| r.currency == currency && r.direction == direction.as_str());
            rate_or_default(app, own, currency, direction)
        }
        None => merchant_rate(app, &merchant.id, currency, direction).await,
    }
}

fn rate_or_default(
    app: &App,
    own: Option<&FeeRow>,
    currency: &str,
    direction: Direction,
) -> Result<RateConfig, ApiError> {
    if let Some(row) = own {
        let percent = row
            .percent
            .parse::<Decimal>()
            .map_err(|_| ApiError::Internal(format!("stored fee percent `{}`", row.percent)))?;
        return Ok(RateConfig {
            percent,
            fixed: money::from_units(row.fixed),
            minimum: money::from_units(row.minimum),
        });
    }
    Ok(app
        .config
        .default_fees
        .get(currency)
        .map(|rates| match direction {
            Direction::Deposit => rates.deposit.clone(),
            Direction::Withdrawal => rates.withdrawal.clone(),
        })
        .unwrap_or_default())
}

/// A merchant's own fee for a currency and direction: each part
/// non-negative with at most 4 fraction digits, the percent at most 100.
pub async fn set(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    currency: &str,
    direction: Direction,
    requested: RateConfig,
) -> Result<RateConfig, ApiError> {
    let rate = checked(app, currency, requested)?;
    crate::merchants::find(app, merchant_id).await?;
    set_merchant_rate(app, actor, merchant_id, currency, direction, &rate).await?;
    Ok(rate)
}

/// A rate as `set` takes it: a configured currency, no figure negative or
/// finer than 4 digits, a percent of at most 100.
pub fn checked(app: &App, currency: &str, requested: RateConfig) -> Result<RateConfig, ApiError> {
    app.config.currency(currency)?;
    let rate = RateConfig {
        percent: crate::merchants::non_negative("percent", requested.percent)?,
        fixed: crate::merchants::non_negative("fixed", requested.fixed)?,
        minimum: crate::merchants::non_negative("minimum", requested.minimum)?,
    };
    if rate.percent > Decimal::ONE_HUNDRED {
        return Err(ApiError::invalid_field("percent", "must be at most 100"));
    }
    Ok(rate)
}

/// Sets the merchant's own rate for a currency and direction.
pub async fn set_merchant_rate(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    currency: &str,
    direction: Direction,
    rate: &RateConfig,
) -> Result<(), ApiError> {
    let units = |d: Decimal, field: &str| {
        money::to_units(d).ok_or_else(|| ApiError::invalid_field(field, "is too large"))
    };
    let row = crate::store::rows::FeeRow {
        merchant_id: merchant_id.to_string(),
        currency: currency.to_string(),
        direction: direction.as_str().to_string(),
        percent: rate.percent.normalize().to_string(),
        fixed: units(rate.fixed, "fixed")?,
        minimum: units(rate.minimum, "minimum")?,
        updated_at: app.now_unix(),
    };
    // A transaction, though one statement: an operator's change carries
    // its audit row in it.
    app.db
        .transaction_audited::<_, ApiError, _>(
            actor.audit(
                Target::Merchant(merchant_id.to_string()),
                None,
                app.now_unix(),
            ),
            |s| Box::pin(async move { Ok(s.upsert_fee(&row).await?) }),
        )
        .await?;
    Ok(())
}
