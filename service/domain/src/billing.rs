//! Billing statements as values: where a period ends, what a statement
//! charges per currency, how one is numbered. No I/O.
//!
//! A statement bills the fees the ledger took in its period: the
//! `system:fees` leg of each balance line (`balance_transactions.fee`),
//! grouped by the line's kind. Deposits are counted when completed (the
//! fee is taken then), withdrawals when completed (the fee is earned
//! then; a failed or rejected one gives its held fee back and earns none).

use crate::status::BillingPeriod;
use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};
use serde::{Deserialize, Serialize};

/// The line kinds that charge a fee, as `app::ledger` writes them.
pub const DEPOSIT_COMPLETED: &str = "deposit_completed";
pub const WITHDRAWAL_COMPLETED: &str = "withdrawal_completed";

/// Where the period that starts at `start` (Unix seconds, UTC) ends:
/// the first boundary of `period` after it (the first of a month, a
/// Monday, a midnight). A start on a boundary gives a whole period.
pub fn period_end(start: i64, period: BillingPeriod) -> Option<i64> {
    let at = Utc.timestamp_opt(start, 0).single()?;
    let day = at.date_naive();
    let next = match period {
        BillingPeriod::Day => day.succ_opt()?,
        BillingPeriod::Week => {
            let to_monday = 7 - i64::from(day.weekday().num_days_from_monday());
            day.checked_add_signed(Duration::days(to_monday))?
        }
        BillingPeriod::Month => {
            let (y, m) = match day.month() {
                12 => (day.year() + 1, 1),
                m => (day.year(), m + 1),
            };
            NaiveDate::from_ymd_opt(y, m, 1)?
        }
    };
    Some(midnight(next))
}

/// The start of the period of `period` that holds `at`: the boundary at or
/// before it.
pub fn period_start(at: i64, period: BillingPeriod) -> Option<i64> {
    let day = Utc.timestamp_opt(at, 0).single()?.date_naive();
    let first = match period {
        BillingPeriod::Day => day,
        BillingPeriod::Week => day.checked_sub_signed(Duration::days(i64::from(
            day.weekday().num_days_from_monday(),
        )))?,
        BillingPeriod::Month => day.with_day(1)?,
    };
    Some(midnight(first))
}

fn midnight(day: NaiveDate) -> i64 {
    day.and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc().timestamp())
        .unwrap_or_default()
}

/// A UTC instant as the contract writes it.
pub fn rfc3339(at: i64) -> String {
    DateTime::<Utc>::from_timestamp(at, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// A statement's first number: its period's first day, its merchant's
/// code, version 1 (`BS-20261101-siam-games-1`): short enough to quote on
/// the phone, and unique because a code names one merchant and (merchant,
/// period start, version) is unique.
pub fn number(merchant_code: &str, period_start: i64) -> String {
    let day = DateTime::<Utc>::from_timestamp(period_start, 0)
        .map(|t| t.format("%Y%m%d").to_string())
        .unwrap_or_default();
    format!("BS-{day}-{merchant_code}-1")
}

/// The number of `version` of the statement numbered `number`: the same
/// number with that version at its end. A correction keeps the number it
/// corrects, so a statement's versions read as one family whatever the
/// form its first number took (before issue 53 they named the merchant's
/// id).
pub fn numbered(number: &str, version: i32) -> String {
    let family = number.rsplit_once('-').map_or(number, |(family, _)| family);
    format!("{family}-{version}")
}

/// What one currency's lines charged in a period, in ledger units
/// (1/10 000): stored with the statement as JSON, read back strictly.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrencyTotals {
    pub currency: String,
    pub deposit_count: i64,
    /// What the payers paid: credited plus fee.
    pub deposit_amount: i64,
    pub deposit_fees: i64,
    pub withdrawal_count: i64,
    /// What was paid out, the fee apart.
    pub withdrawal_amount: i64,
    pub withdrawal_fees: i64,
    /// Every fee the ledger took in the period, of any kind.
    pub total_fees: i64,
}

/// One kind's lines summed (`store::rows::KindTotal`, without the store).
pub struct KindSum<'a> {
    pub kind: &'a str,
    pub count: i64,
    pub available_change: i64,
    pub frozen_change: i64,
    pub fee: i64,
}

impl CurrencyTotals {
    pub fn of<'a>(currency: &str, kinds: impl IntoIterator<Item = KindSum<'a>>) -> Self {
        let mut t = CurrencyTotals {
            currency: currency.to_string(),
            ..CurrencyTotals::default()
        };
        for k in kinds {
            t.total_fees += k.fee;
            match k.kind {
                DEPOSIT_COMPLETED => {
                    t.deposit_count += k.count;
                    t.deposit_amount += k.available_change + k.fee;
                    t.deposit_fees += k.fee;
                }
                WITHDRAWAL_COMPLETED => {
                    t.withdrawal_count += k.count;
                    // The frozen side gives up amount and fee together.
                    t.withdrawal_amount += -k.frozen_change - k.fee;
                    t.withdrawal_fees += k.fee;
                }
                _ => {}
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u32, d: u32) -> i64 {
        midnight(NaiveDate::from_ymd_opt(y, m, d).unwrap())
    }

    #[test]
    fn periods_end_at_the_next_boundary_in_utc() {
        assert_eq!(
            period_end(at(2026, 11, 1), BillingPeriod::Month),
            Some(at(2026, 12, 1))
        );
        assert_eq!(
            period_end(at(2026, 12, 1), BillingPeriod::Month),
            Some(at(2027, 1, 1))
        );
        assert_eq!(
            period_end(at(2026, 11, 15) + 3600, BillingPeriod::Month),
            Some(at(2026, 12, 1))
        );
        // 2026-11-23 is a Monday.
        assert_eq!(
            period_end(at(2026, 11, 23), BillingPeriod::Week),
            Some(at(2026, 11, 30))
        );
        assert_eq!(
            period_end(at(2026, 11, 27), BillingPeriod::Week),
            Some(at(2026, 11, 30))
        );
        assert_eq!(
            period_end(at(2026, 2, 28), BillingPeriod::Day),
            Some(at(2026, 3, 1))
        );
        assert_eq!(
            period_start(at(2026, 11, 27) + 5, BillingPeriod::Month),
            Some(at(2026, 11, 1))
        );
        assert_eq!(
            period_start(at(2026, 11, 29), BillingPeriod::Week),
            Some(at(2026, 11, 23))
        );
    }

    #[test]
    fn totals_split_deposits_and_withdrawals_and_sum_every_fee() {
        let t = CurrencyTotals::of(
            "THB",
            [
                KindSum {
                    kind: DEPOSIT_COMPLETED,
                    count: 2,
                    available_change: 1_940_000,
                    frozen_change: 0,
                    fee: 60_000,
                },
                KindSum {
                    kind: "withdrawal_frozen",
                    count: 1,
                    available_change: -510_000,
                    frozen_change: 510_000,
                    fee: 0,
                },
                KindSum {
                    kind: WITHDRAWAL_COMPLETED,
                    count: 1,
                    available_change: 0,
                    frozen_change: -510_000,
                    fee: 10_000,
                },
            ],
        );
        assert_eq!(
            (t.deposit_count, t.deposit_amount, t.deposit_fees),
            (2, 2_000_000, 60_000)
        );
        assert_eq!(
            (t.withdrawal_count, t.withdrawal_amount, t.withdrawal_fees),
            (1, 500_000, 10_000)
        );
        assert_eq!(t.total_fees, 70_000);
        assert_eq!(
            number("siam-games", at(2026, 11, 1)),
            "BS-20261101-siam-games-1"
        );
        assert_eq!(
            numbered("BS-20261101-siam-games-1", 2),
            "BS-20261101-siam-games-2"
        );
        // A statement first numbered with its merchant's id keeps that form.
        let old = "BS-20261101-0b9d5c1e-7a2f-4e3b-8c6d-1f2a3b4c5d6e-1";
        assert_eq!(
            numbered(old, 3),
            "BS-20261101-0b9d5c1e-7a2f-4e3b-8c6d-1f2a3b4c5d6e-3"
        );
    }
}
