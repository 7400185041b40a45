//! Why a merchant's balance is what it is: the lines that changed it
//! (`balance_transactions`, written by `ledger::post` with the entry), and
//! one UTC day of them summed (a daily statement).
//!
//! A line's `created_at` is its balance's `updated_at`, which never goes
//! back along the versions; so the lines of one day are one run of
//! versions, a day's opening is the last line before it, and a day's
//! closing (the last line before the next day) is the next day's opening.

use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::store::queries::events::LinesFilter;
use crate::store::rows::{BalanceRow, BalanceTransactionRow, KindTotal, LineSum};
use crate::store::{Store, StoreError};
use crate::App;
use chrono::{NaiveDate, NaiveTime};
use std::collections::BTreeMap;

const DEFAULT_LIMIT: i64 = 100;
pub const MAX_LIMIT: i64 = 500;

/// A page of lines, oldest first, and where the next resumes.
pub struct Lines {
    pub items: Vec<BalanceTransactionRow>,
    pub next_cursor: Option<String>,
}

fn currency_of(app: &App, currency: &str) -> Result<(), ApiError> {
    if app.config.currencies.contains_key(currency) {
        Ok(())
    } else {
        Err(ApiError::UnsupportedCurrency(currency.to_string()))
    }
}

/// The merchant's balance lines in one currency after the cursor.
pub async fn lines(
    app: &App,
    merchant_id: &str,
    currency: &str,
    after: Option<&str>,
    limit: Option<i64>,
) -> Result<Lines, ApiError> {
    currency_of(app, currency)?;
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::invalid_field(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let after = match after {
        None | Some("") => 0,
        Some(text) => text
            .strip_prefix("bt_")
            .and_then(|n| n.parse::<i64>().ok())
            .filter(|n| *n >= 0)
            .ok_or_else(|| {
                ApiError::invalid_field("after", "is not a cursor this service issued")
            })?,
    };
    let filter = LinesFilter {
        merchant_id: merchant_id.to_string(),
        currency: currency.to_string(),
        after,
        limit: limit + 1,
    };
    let mut items = app
        .db
        .run(move |s| Box::pin(async move { s.balance_lines(&filter).await }))
        .await?;
    let wanted = usize::try_from(limit).unwrap_or(usize::MAX);
    let next_cursor = if items.len() > wanted {
        items.truncate(wanted);
        items.last().map(|l| format!("bt_{}", l.version))
    } else {
        None
    };
    Ok(Lines { items, next_cursor })
}

/// One UTC day of a merchant's balance in one currency.
pub struct Statement {
    pub date: NaiveDate,
    pub currency: String,
    /// Available and frozen at the day's start.
    pub opening: (i64, i64),
    pub totals: Vec<KindTotal>,
    /// Available and frozen at the day's end (the next day's start).
    pub closing: (i64, i64),
    pub from: i64,
    pub to: i64,
}

/// The statement of `date` (`YYYY-MM-DD`, UTC) in `currency`.
pub async fn statement(
    app: &App,
    merchant_id: &str,
    date: &str,
    currency: &str,
) -> Result<Statement, ApiError> {
    let day = NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .map_err(|_| ApiError::invalid_field("date", "must be a date as YYYY-MM-DD"))?;
    currency_of(app, currency)?;
    let from = day.and_time(NaiveTime::MIN).and_utc().timestamp();
    let to = from + 86_400;
    let (m, c) = (merchant_id.to_string(), currency.to_string());
    let (opening, totals, closing) = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move {
                // The three reads must see one moment, or a line committed
                // between them would show in one and not another.
                tx.read_one_snapshot().await?;
                let opening = tx.last_line_before(&m, &c, from).await?;
                let totals = tx.day_totals(&m, &c, from, to).await?;
                let closing = tx.last_line_before(&m, &c, to).await?;
                Ok((opening, totals, closing))
            })
        })
        .await?;
    let sides = |l: Option<BalanceTransactionRow>| {
        l.map(|l| (l.available_after, l.frozen_after))
            .unwrap_or((0, 0))
    };
    Ok(Statement {
        date: day,
        currency: currency.to_string(),
        opening: sides(opening),
        totals,
        closing: sides(closing),
        from,
        to,
    })
}

/// The balance lines against the balances, read in the caller's snapshot:
/// each balance is the sum of its lines and its version their count; no
/// line is stamped before the one before it; and each day with lines
/// closes where the next one opens, its lines' changes between the two.
/// Each difference as (`merchant_id/currency`, what differs).
pub async fn check(
    tx: &mut dyn Store,
    balances: &[BalanceRow],
) -> Result<Vec<(String, String)>, StoreError> {
    let mut found = Vec::new();
    let sums: BTreeMap<(String, String), LineSum> = tx
        .line_sums()
        .await?
        .into_iter()
        .map(|s| ((s.merchant_id.clone(), s.currency.clone()), s))
        .collect();
    for b in balances {
        let key = (b.merchant_id.clone(), b.currency.clone());
        let (lines, available, frozen, last) = sums.get(&key).map_or((0, 0, 0, 0), |s| {
            (s.lines, s.available, s.frozen, s.last_version)
        });
        if available != b.available || frozen != b.frozen || lines != b.version || last != b.version
        {
            found.push((
                format!("{}/{}", b.merchant_id, b.currency),
                format!(
                    "balance says available {} frozen {} at version {}, its {lines} lines sum to \
                     {} and {} up to version {last}",
                    from_units(b.available),
                    from_units(b.frozen),
                    b.version,
                    from_units(available),
                    from_units(frozen)
                ),
            ));
        }
    }
    let back = tx.lines_back_in_time().await?;
    if back > 0 {
        found.push((
            "balance_transactions".into(),
            format!("{back} lines are stamped before the line before them"),
        ));
    }
    let mut days: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
    for d in tx.line_days().await? {
        days.entry((d.merchant_id, d.currency))
            .or_default()
            .push(d.day);
    }
    for ((merchant, currency), days) in days {
        let mut previous_closing: Option<(i64, (i64, i64))> = None;
        for day in days {
            let (from, to) = (day * 86_400, day * 86_400 + 86_400);
            let sides = |l: Option<BalanceTransactionRow>| {
                l.map_or((0, 0), |l| (l.available_after, l.frozen_after))
            };
            let opening = sides(tx.last_line_before(&merchant, &currency, from).await?);
            let totals = tx.day_totals(&merchant, &currency, from, to).await?;
            let closing = sides(tx.last_line_before(&merchant, &currency, to).await?);
            let moved = totals.iter().fold((0, 0), |(a, f), t| {
                (a + t.available_change, f + t.frozen_change)
            });
            let reference = format!("{merchant}/{currency}");
            if (opening.0 + moved.0, opening.1 + moved.1) != closing {
                found.push((
                    reference.clone(),
                    format!("day {day}: opening plus its lines is not its closing"),
                ));
            }
            if let Some((before, closed)) = previous_closing {
                if closed != opening {
                    found.push((
                        reference,
                        format!("day {day} opens where day {before} did not close"),
                    ));
                }
            }
            previous_closing = Some((day, closing));
        }
    }
    Ok(found)
}
