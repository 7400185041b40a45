//! Fees and channel costs: `amount × percent / 100 + fixed`, at least
//! `minimum`, rounded half away from zero to the currency's fraction
//! digits, and never more than the amount itself.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::Deserialize;

/// `amount × percent / 100 + fixed`, at least `minimum`: a merchant's fee or
/// a channel's cost.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateConfig {
    #[serde(default)]
    pub percent: Decimal,
    #[serde(default)]
    pub fixed: Decimal,
    #[serde(default)]
    pub minimum: Decimal,
}

/// Rules per direction.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionRates {
    #[serde(default)]
    pub deposit: RateConfig,
    #[serde(default)]
    pub withdrawal: RateConfig,
}

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
