//! Amounts: `Decimal` in the domain, integer ten-thousandths in the
//! database (exact on both backends), validated against the currency.

use crate::error::ApiError;
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::Deserialize;

/// What a currency allows: its fraction digits and the range of an amount.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrencyConfig {
    /// Fraction digits an amount may have (2 for THB and BDT); at most 4.
    pub fraction_digits: u32,
    pub min_amount: Decimal,
    pub max_amount: Decimal,
    /// A withdrawal at or above it needs two different approvers; none
    /// set, one approval moves any.
    #[serde(default)]
    pub dual_approval_threshold: Option<Decimal>,
}

/// Stored amounts are integers in units of 10^-SCALE.
pub const SCALE: u32 = 4;

/// An amount in stored units. Fails only for amounts beyond ±922 billion,
/// which validation refuses long before.
pub fn to_units(amount: Decimal) -> Option<i64> {
    let scaled = amount.checked_mul(Decimal::from(10_i64.pow(SCALE)))?;
    if scaled.fract() != Decimal::ZERO {
        return None;
    }
    scaled.to_i64()
}

pub fn from_units(units: i64) -> Decimal {
    Decimal::new(units, SCALE)
}

/// Checks a request amount against its currency: positive, no more fraction
/// digits than the currency has, within the configured limits.
pub fn validate_amount(
    field: &str,
    amount: Decimal,
    currency_code: &str,
    currency: &CurrencyConfig,
) -> Result<Decimal, ApiError> {
    if amount <= Decimal::ZERO {
        return Err(ApiError::invalid_field(field, "must be greater than zero"));
    }
    let normalized = amount.normalize();
    if normalized.scale() > currency.fraction_digits {
        return Err(ApiError::invalid_field(
            field,
            format!(
                "{currency_code} amounts have at most {} fraction digits",
                currency.fraction_digits
            ),
        ));
    }
    if normalized < currency.min_amount || normalized > currency.max_amount {
        return Err(ApiError::AmountOutOfRange {
            currency: currency_code.to_string(),
            min: currency.min_amount,
            max: currency.max_amount,
        });
    }
    Ok(normalized)
}

/// An amount as a document for people prints it: thousands grouped with
/// commas, at least the currency's `digits` fraction digits and more only
/// where the amount has them (a fee of 0.0125 is never shown as 0.01).
pub fn grouped(amount: Decimal, digits: u32) -> String {
    let normalized = amount.normalize();
    let scale = normalized.scale().max(digits);
    let mut fixed = normalized;
    fixed.rescale(scale);
    let text = fixed.abs().to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    match amount.is_sign_negative() && !fixed.is_zero() {
        true => format!("-{out}"),
        false => out,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn grouped_amounts_keep_every_digit_they_have() {
        use super::grouped;
        let d = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
        assert_eq!(grouped(d("101334.5600"), 2), "101,334.56");
        assert_eq!(grouped(d("600000"), 2), "600,000.00");
        assert_eq!(grouped(d("0.0125"), 2), "0.0125");
        assert_eq!(grouped(d("999.5"), 2), "999.50");
        assert_eq!(grouped(d("1234567.891"), 0), "1,234,567.891");
        assert_eq!(grouped(d("-2500"), 2), "-2,500.00");
        assert_eq!(grouped(d("0"), 2), "0.00");
    }

    use super::*;
    use std::str::FromStr;

    #[test]
    fn units_round_trip_exactly() {
        let d = Decimal::from_str("1234.5678").unwrap();
        assert_eq!(to_units(d), Some(12_345_678));
        assert_eq!(from_units(12_345_678), d);
        assert_eq!(to_units(Decimal::from_str("0.00001").unwrap()), None);
    }
}
