//! The double-entry ledger. Every change to a merchant balance is one
//! immutable journal entry whose postings sum to zero, written in the same
//! transaction as the order change that caused it; the balance row moves
//! by exactly the entry's postings on the merchant's two accounts.

use crate::domain::error::ApiError;
use crate::store::rows::{
    AccountSum, BalanceRow, BalanceTransactionRow, DepositRow, JournalEntryRow, PostingRow,
    WithdrawalRow,
};
use crate::store::{Store, StoreError};
use crate::App;
use std::collections::BTreeMap;

/// Where money sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Account {
    /// What the merchant can withdraw.
    Available(String),
    /// What is held for the merchant's withdrawals in flight.
    Frozen(String),
    /// Money received from payers, not yet attributed.
    Clearing,
    /// The service's fee income.
    Fees,
    /// Money paid out to beneficiaries.
    Payouts,
}

impl Account {
    pub fn key(&self) -> String {
        match self {
            Account::Available(m) => format!("merchant:{m}:available"),
            Account::Frozen(m) => format!("merchant:{m}:frozen"),
            Account::Clearing => "system:clearing".into(),
            Account::Fees => "system:fees".into(),
            Account::Payouts => "system:payouts".into(),
        }
    }
}

/// An order row names what its entries book for.
macro_rules! entry_for_row {
    ($($row:ty),+) => {$(
        impl<'a> From<&'a $row> for EntryFor<'a> {
            fn from(row: &'a $row) -> Self {
                EntryFor {
                    merchant_id: &row.merchant_id,
                    currency: &row.currency,
                    order_no: &row.order_no,
                    merchant_order_no: &row.merchant_order_no,
                }
            }
        }
    )+};
}
entry_for_row!(DepositRow, WithdrawalRow);

impl EntryFor<'_> {
    /// The merchant's available and frozen accounts.
    fn merchant_accounts(&self) -> (Account, Account) {
        let m = self.merchant_id;
        (Account::Available(m.into()), Account::Frozen(m.into()))
    }
}

/// A journal entry about to be booked. Amounts are stored units.
#[derive(Clone, Debug)]
pub struct Entry {
    pub merchant_id: String,
    pub currency: String,
    pub kind: &'static str,
    pub order_no: String,
    pub merchant_order_no: String,
    pub postings: Vec<(Account, i64)>,
}

/// The order an entry books for: whose balance, in which currency.
#[derive(Clone, Copy, Debug)]
pub struct EntryFor<'a> {
    pub merchant_id: &'a str,
    pub currency: &'a str,
    pub order_no: &'a str,
    pub merchant_order_no: &'a str,
}

impl Entry {
    fn new(order: EntryFor<'_>, kind: &'static str, postings: Vec<(Account, i64)>) -> Entry {
        Entry {
            merchant_id: order.merchant_id.to_string(),
            currency: order.currency.to_string(),
            kind,
            order_no: order.order_no.to_string(),
            merchant_order_no: order.merchant_order_no.to_string(),
            postings,
        }
    }

    /// A completed deposit: the payer's money leaves clearing, the fee goes
    /// to the service, the rest to the merchant's available balance.
    pub fn deposit_completed(order: EntryFor<'_>, actual: i64, fee: i64) -> Entry {
        let available = Account::Available(order.merchant_id.into());
        let postings = vec![
            (Account::Clearing, -actual),
            (available, actual - fee),
            (Account::Fees, fee),
        ];
        Entry::new(order, "deposit_completed", postings)
    }

    /// A withdrawal created: its amount and fee move from available to
    /// frozen.
    pub fn withdrawal_frozen(order: EntryFor<'_>, amount: i64, fee: i64) -> Entry {
        let held = amount + fee;
        let (available, frozen) = order.merchant_accounts();
        Entry::new(
            order,
            "withdrawal_frozen",
            vec![(available, -held), (frozen, held)],
        )
    }

    /// A withdrawal settled: the frozen amount is paid out and the fee
    /// earned.
    pub fn withdrawal_completed(order: EntryFor<'_>, amount: i64, fee: i64) -> Entry {
        let (_, frozen) = order.merchant_accounts();
        let postings = vec![
            (frozen, -(amount + fee)),
            (Account::Payouts, amount),
            (Account::Fees, fee),
        ];
        Entry::new(order, "withdrawal_completed", postings)
    }

    /// A withdrawal rejected or failed (`kind` says which): what was frozen
    /// returns to available.
    pub fn withdrawal_released(
        order: EntryFor<'_>,
        kind: &'static str,
        amount: i64,
        fee: i64,
    ) -> Entry {
        let held = amount + fee;
        let (available, frozen) = order.merchant_accounts();
        Entry::new(order, kind, vec![(frozen, -held), (available, held)])
    }

    fn delta(&self, account: &Account) -> i64 {
        self.postings
            .iter()
            .filter(|(a, _)| a == account)
            .map(|(_, v)| v)
            .sum()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("journal entry {kind} for {order_no} does not balance: {sum}")]
    Unbalanced {
        kind: &'static str,
        order_no: String,
        sum: i64,
    },
    #[error("the balance would go below zero")]
    Insufficient,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<LedgerError> for ApiError {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::Insufficient => ApiError::InsufficientBalance,
            LedgerError::Store(s) => s.into(),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

/// Books `entry` and moves the merchant's balance by it. Call inside the
/// transaction that changes the order.
pub async fn post(tx: &mut dyn Store, entry: &Entry, now: i64) -> Result<(), LedgerError> {
    let sum: i64 = entry.postings.iter().map(|(_, v)| v).sum();
    if sum != 0 {
        return Err(LedgerError::Unbalanced {
            kind: entry.kind,
            order_no: entry.order_no.clone(),
            sum,
        });
    }
    let row = JournalEntryRow {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: entry.merchant_id.clone(),
        currency: entry.currency.clone(),
        kind: entry.kind.to_string(),
        order_no: entry.order_no.clone(),
        created_at: now,
    };
    let postings: Vec<PostingRow> = entry
        .postings
        .iter()
        .filter(|(_, amount)| *amount != 0)
        .map(|(account, amount)| PostingRow {
            id: uuid::Uuid::new_v4().to_string(),
            entry_id: row.id.clone(),
            account: account.key(),
            currency: entry.currency.clone(),
            amount: *amount,
        })
        .collect();
    tx.insert_journal_entry(&row, &postings).await?;
    let available = entry.delta(&Account::Available(entry.merchant_id.clone()));
    let frozen = entry.delta(&Account::Frozen(entry.merchant_id.clone()));
    if available != 0 || frozen != 0 {
        tx.ensure_balance(&crate::balances::zero_row(
            &entry.merchant_id,
            &entry.currency,
            now,
        ))
        .await?;
        // The version, the balance after and the time are filled in from
        // the balance as moved.
        let line = BalanceTransactionRow {
            id: uuid::Uuid::new_v4().to_string(),
            merchant_id: entry.merchant_id.clone(),
            currency: entry.currency.clone(),
            version: 0,
            kind: entry.kind.to_string(),
            order_no: entry.order_no.clone(),
            merchant_order_no: entry.merchant_order_no.clone(),
            available_change: available,
            frozen_change: frozen,
            fee: entry.delta(&Account::Fees),
            available_after: 0,
            frozen_after: 0,
            created_at: 0,
        };
        if !tx.move_balance(line, now).await? {
            return Err(LedgerError::Insufficient);
        }
    }
    Ok(())
}

/// What the invariant check found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub entries_checked: i64,
    pub balances_checked: i64,
    pub differences: Vec<Difference>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub kind: &'static str,
    pub reference: String,
    pub detail: String,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.differences.is_empty()
    }
}

/// Recomputes every balance from the journal: each entry sums to zero, each
/// balance equals its accounts' postings, none is negative.
pub async fn check(app: &App) -> Result<Report, ApiError> {
    let (sums, unbalanced, entries, balances, lines) = app
        .db
        .transaction::<_, ApiError, _>(|tx| {
            Box::pin(async move {
                // Orders keep moving while the check reads; all four reads
                // must see the same moment or a committed move between them
                // looks like a difference.
                tx.read_one_snapshot().await?;
                let balances = tx.all_balances().await?;
                let lines = crate::balance_history::check(tx, &balances).await?;
                Ok((
                    tx.account_sums().await?,
                    tx.unbalanced_entries().await?,
                    tx.count_journal_entries().await?,
                    balances,
                    lines,
                ))
            })
        })
        .await?;
    let mut report = Report {
        entries_checked: entries,
        balances_checked: balances.len() as i64,
        differences: Vec::new(),
    };
    for e in unbalanced {
        report.differences.push(Difference {
            kind: "unbalanced_entry",
            reference: e.entry_id,
            detail: format!(
                "postings sum to {}",
                crate::domain::money::from_units(e.total)
            ),
        });
    }
    report
        .differences
        .extend(balance_differences(sums, balances));
    // What a merchant reads of its balance (its lines, its daily
    // statements) must tell the same story as the journal.
    report
        .differences
        .extend(lines.into_iter().map(|(reference, detail)| Difference {
            kind: "balance_mismatch",
            reference,
            detail,
        }));
    crate::telemetry::metrics::ledger_checked(report.differences.len(), app.now_unix());
    if report.ok() {
        tracing::info!(
            entries = report.entries_checked,
            balances = report.balances_checked,
            "ledger check: no difference"
        );
    } else {
        tracing::error!(
            entries = report.entries_checked,
            balances = report.balances_checked,
            differences = report.differences.len(),
            "ledger check found differences"
        );
    }
    Ok(report)
}

/// Each balance against its accounts' postings, and never negative.
fn balance_differences(sums: Vec<AccountSum>, balances: Vec<BalanceRow>) -> Vec<Difference> {
    let mut differences = Vec::new();
    let sums: BTreeMap<(String, String), i64> = sums
        .into_iter()
        .map(|s| ((s.account, s.currency), s.total))
        .collect();
    for b in balances {
        let expected = |account: Account| {
            sums.get(&(account.key(), b.currency.clone()))
                .copied()
                .unwrap_or(0)
        };
        let available = expected(Account::Available(b.merchant_id.clone()));
        let frozen = expected(Account::Frozen(b.merchant_id.clone()));
        let reference = format!("{}/{}", b.merchant_id, b.currency);
        if b.available != available || b.frozen != frozen {
            differences.push(Difference {
                kind: "balance_mismatch",
                reference: reference.clone(),
                detail: format!(
                    "balance says available {} frozen {}, the journal says {} and {}",
                    crate::domain::money::from_units(b.available),
                    crate::domain::money::from_units(b.frozen),
                    crate::domain::money::from_units(available),
                    crate::domain::money::from_units(frozen),
                ),
            });
        }
        if b.available < 0 || b.frozen < 0 {
            differences.push(Difference {
                kind: "negative_balance",
                reference,
                detail: format!(
                    "available {} frozen {}",
                    crate::domain::money::from_units(b.available),
                    crate::domain::money::from_units(b.frozen)
                ),
            });
        }
    }
    differences
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_kind_balances() {
        let order = |order_no| EntryFor {
            merchant_id: "m",
            currency: "THB",
            order_no,
            merchant_order_no: "M1",
        };
        for e in [
            Entry::deposit_completed(order("D1"), 10_000, 150),
            Entry::withdrawal_frozen(order("W1"), 5_000, 100),
            Entry::withdrawal_completed(order("W1"), 5_000, 100),
            Entry::withdrawal_released(order("W1"), "withdrawal_rejected", 5_000, 100),
        ] {
            assert_eq!(e.postings.iter().map(|(_, v)| v).sum::<i64>(), 0, "{e:?}");
        }
    }
}
