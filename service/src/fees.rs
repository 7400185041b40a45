//! Fees and channel costs: `amount × percent / 100 + fixed`, at least
//! `minimum`, rounded half away from zero to the currency's fraction
//! digits, and never more than the amount itself.

use crate::config::RateConfig;
use crate::db::rows::FeeRow;
use rust_decimal::{Decimal, RoundingStrategy};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Deposit,
    Withdrawal,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Deposit => "deposit",
            Direction::Withdrawal => "withdrawal",
        }
    }
}

/// A rate applied to an amount.
pub fn apply(rate: &RateConfig, amount: Decimal, fraction_digits: u32) -> Decimal {
    let raw = amount * rate.percent / Decimal::ONE_HUNDRED + rate.fixed;
    raw.max(rate.minimum)
        .round_dp_with_strategy(fraction_digits, RoundingStrategy::MidpointAwayFromZero)
        .min(amount)
        .max(Decimal::ZERO)
}

/// The merchant's rate for a currency and direction: its own if an operator
/// set one, else the configured default for the currency, else zero.
pub async fn merchant_rate(
    app: &crate::app::App,
    merchant_id: &str,
    currency: &str,
    direction: Direction,
) -> Result<RateConfig, crate::error::ApiError> {
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
    app: &crate::app::App,
    merchant: &crate::merchant::Merchant,
    currency: &str,
    direction: Direction,
) -> Result<RateConfig, crate::error::ApiError> {
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
    app: &crate::app::App,
    own: Option<&FeeRow>,
    currency: &str,
    direction: Direction,
) -> Result<RateConfig, crate::error::ApiError> {
    if let Some(row) = own {
        let percent = row.percent.parse::<Decimal>().map_err(|_| {
            crate::error::ApiError::Internal(format!("stored fee percent `{}`", row.percent))
        })?;
        return Ok(RateConfig {
            percent,
            fixed: crate::money::from_units(row.fixed),
            minimum: crate::money::from_units(row.minimum),
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

/// Sets the merchant's own rate for a currency and direction.
pub async fn set_merchant_rate(
    app: &crate::app::App,
    merchant_id: &str,
    currency: &str,
    direction: Direction,
    rate: &RateConfig,
) -> Result<(), crate::error::ApiError> {
    let units = |d: Decimal, field: &str| {
        crate::money::to_units(d)
            .ok_or_else(|| crate::error::ApiError::invalid_field(field, "is too large"))
    };
    let row = crate::db::rows::FeeRow {
        merchant_id: merchant_id.to_string(),
        currency: currency.to_string(),
        direction: direction.as_str().to_string(),
        percent: rate.percent.normalize().to_string(),
        fixed: units(rate.fixed, "fixed")?,
        minimum: units(rate.minimum, "minimum")?,
        updated_at: app.now_unix(),
    };
    app.db
        .run(|s| Box::pin(async move { s.upsert_fee(&row).await }))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn rate(percent: &str, fixed: &str, minimum: &str) -> RateConfig {
        RateConfig {
            percent: d(percent),
            fixed: d(fixed),
            minimum: d(minimum),
        }
    }

    #[test]
    fn percent_plus_fixed_with_a_minimum() {
        assert_eq!(apply(&rate("1.5", "0", "0"), d("1000"), 2), d("15"));
        assert_eq!(apply(&rate("1.5", "2", "0"), d("1000"), 2), d("17"));
        assert_eq!(apply(&rate("1.5", "0", "20"), d("1000"), 2), d("20"));
        assert_eq!(apply(&rate("0", "0", "0"), d("1000"), 2), d("0"));
    }

    #[test]
    fn rounds_half_away_from_zero_to_the_currency() {
        // 0.5% of 100.10 = 0.5005 → 0.50; 0.5% of 100.90 = 0.5045 → 0.50;
        // 1% of 0.50 = 0.005 → 0.01.
        assert_eq!(apply(&rate("0.5", "0", "0"), d("100.10"), 2), d("0.50"));
        assert_eq!(apply(&rate("1", "0", "0"), d("0.50"), 2), d("0.01"));
        assert_eq!(apply(&rate("2.5", "0", "0"), d("0.30"), 2), d("0.01"));
    }

    #[test]
    fn never_more_than_the_amount() {
        assert_eq!(apply(&rate("0", "0", "50"), d("10"), 2), d("10"));
    }
}
