//! Bank transactions on the receiving accounts: ingestion, matching to a
//! deposit awaiting payment, and the operator's match by hand. A
//! transaction is never dropped: what matches nothing is kept `unmatched`.

use crate::actor::{Actor, Target};
use crate::config::ReceivingAccountConfig;
use crate::deposits::{self, Completion, Deposit, Moved};
use crate::domain::error::ApiError;
use crate::domain::lifecycle::{self, DepositEvent};
use crate::domain::money::{from_units, to_units};
use crate::domain::status::{BankTransactionStatus, DepositStatus};
use crate::domain::validate;
use crate::store::audit::PendingAudit;
use crate::store::rows::{BankTransactionRow, DepositRow};
use crate::store::{DepositKey, Store, StoreError, UniqueKey};
use crate::App;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

/// A credit as the bank reported it, before validation.
/// A reported bank transaction as the store keeps it; the operator API
/// reads it as it is.
pub use crate::store::rows::BankTransactionRow as BankTransaction;

#[derive(Clone, Debug)]
pub struct NewBankTransaction {
    pub account_id: String,
    pub bank_reference: String,
    pub amount: Decimal,
    pub currency: String,
    pub remark: Option<String>,
    pub payer_name: Option<String>,
    pub payer_account_no: Option<String>,
    pub received_at: Option<i64>,
}

/// A stored transaction and, when it matched, the deposit after the match.
#[derive(Clone, Debug)]
pub struct Ingested {
    pub row: BankTransactionRow,
    pub deposit: Option<Deposit>,
}

/// What a match does to the deposit, decided by the account's bank.
enum MatchMove {
    /// The bank reports a match first: the order waits in `matched`.
    Match { received: i64 },
    /// The order completes with what arrived.
    Complete(Completion),
}

/// What a report must be before anything is looked up: on a configured
/// account, in its currency, an amount the currency can hold, and a
/// reference. The account, the amount in units and the reference.
pub fn check_new<'a>(
    app: &'a App,
    req: &NewBankTransaction,
) -> Result<(&'a ReceivingAccountConfig, i64, String), ApiError> {
    let account = app
        .config
        .receiving_account(&req.account_id)
        .ok_or_else(|| ApiError::AccountNotFound(req.account_id.clone()))?;
    if account.currency != req.currency {
        return Err(ApiError::invalid_field(
            "currency_code",
            format!("must be the account's currency, {}", account.currency),
        ));
    }
    let currency = app.config.currency(&req.currency)?;
    let amount = validate::paid_amount("amount", req.amount, currency.fraction_digits)?;
    let amount =
        to_units(amount).ok_or_else(|| ApiError::invalid_field("amount", "is too large"))?;
    let reference = validate::required_text("bank_reference", req.bank_reference.clone(), 64)?;
    Ok((account, amount, reference))
}

/// Records the transaction and matches it, all in one transaction with the
/// deposit's move, its ledger entry and its callback record.
pub async fn ingest(app: &App, by: &Actor, req: NewBankTransaction) -> Result<Ingested, ApiError> {
    let (account, amount, reference) = check_new(app, &req)?;
    let remark = validate::optional_text("remark", req.remark.clone(), 256)?;
    let payer_name = validate::optional_text("payer_name", req.payer_name.clone(), 128)?;
    let payer_account_no =
        validate::optional_text("payer_account_no", req.payer_account_no.clone(), 34)?;
    let fingerprint = fingerprint(&req, amount);

    if let Some(existing) = by_reference(app, &account.id, &reference).await? {
        return replay(app, by, existing, &fingerprint).await;
    }
    let now = app.now_unix();
    let row = BankTransactionRow {
        id: uuid::Uuid::new_v4().to_string(),
        account_id: account.id.clone(),
        bank_reference: reference.clone(),
        currency: req.currency.clone(),
        amount,
        remark,
        payer_name,
        payer_account_last4: payer_account_no
            .as_deref()
            .map(crate::domain::validate::last4),
        fingerprint: fingerprint.clone(),
        status: BankTransactionStatus::Unmatched,
        order_no: None,
        received_at: req.received_at.unwrap_or(now),
        matched_at: None,
        created_at: now,
        updated_at: now,
    };

    let audit = by.audit(Target::BankTransaction(row.id.clone()), None, now);
    let outcome = match candidate(app, account, &row).await? {
        Some(order) => match settle(app, audit.clone(), account, row.clone(), &order, true).await {
            // The order moved between the lookup and the transaction (paid,
            // expired or cancelled meanwhile): keep the money unmatched.
            Err(ApiError::InvalidStateTransition { .. }) => None,
            other => Some(other),
        },
        None => None,
    };
    let result = match outcome {
        Some(result) => result,
        // No `?`: a conflict here is a concurrent report of the same
        // reference, which the replay below answers.
        None => record_unmatched(app, audit, row.clone())
            .await
            .map_err(|e| duplicate_or(e, &reference))
            .map(|()| Ingested { row, deposit: None }),
    };
    match result {
        // Another request ingested the same reference first.
        Err(ApiError::DuplicateBankReference(_)) => {
            let existing = by_reference(app, &account.id, &reference)
                .await?
                .ok_or_else(|| ApiError::Internal("duplicate reference without a row".into()))?;
            replay(app, by, existing, &fingerprint).await
        }
        other => other,
    }
}

/// An operator assigns an unmatched transaction to a deposit awaiting
/// payment on the same account and currency.
pub async fn match_by_hand(
    app: &App,
    by: &Actor,
    transaction_id: &str,
    order_no: &str,
    remarks: Option<&str>,
) -> Result<Ingested, ApiError> {
    let (row, order) = check_match(app, transaction_id, order_no, remarks).await?;
    let account = app
        .config
        .receiving_account(&row.account_id)
        .ok_or_else(|| ApiError::AccountNotFound(row.account_id.clone()))?;
    let audit = by.audit(
        Target::BankTransaction(row.id.clone()),
        remarks,
        app.now_unix(),
    );
    settle(app, audit, account, row, &order, false).await
}

/// What a match by hand must be: an unmatched transaction, a pending
/// deposit paid to its account in its currency, and a reason when the
/// amounts differ. The transaction and the deposit.
pub async fn check_match(
    app: &App,
    transaction_id: &str,
    order_no: &str,
    remarks: Option<&str>,
) -> Result<(BankTransactionRow, Deposit), ApiError> {
    let id = transaction_id.to_string();
    let row = app
        .db
        .run(|s| Box::pin(async move { s.bank_transaction_by_id(&id).await }))
        .await?
        .ok_or_else(|| ApiError::BankTransactionNotFound(transaction_id.to_string()))?;
    if row.status != BankTransactionStatus::Unmatched {
        return Err(ApiError::InvalidStateTransition {
            order_no: row.id,
            status: row.status.to_string(),
            action: "match".into(),
        });
    }
    let order = deposits::find_any(app, order_no).await?;
    if order.account_id.as_deref() != Some(row.account_id.as_str())
        || order.currency != row.currency
    {
        return Err(ApiError::invalid_field(
            "order_no",
            format!(
                "deposit {order_no} is not paid to account {} in {}",
                row.account_id, row.currency
            ),
        ));
    }
    if order.status != DepositStatus::Pending {
        return Err(lifecycle::refused(
            order_no,
            order.status.as_str(),
            DepositEvent::Match,
        ));
    }
    crate::domain::validate::reason_for_difference(
        &row.currency,
        order.amount,
        crate::domain::money::from_units(row.amount),
        remarks,
    )?;
    Ok((row, order))
}

/// Matches `row` to `order` in one database transaction: the record (new
/// or marked matched), the deposit's move, its ledger entry and callback.
/// An order whose `expire_at` passed while it was pending is expired in
/// that transaction instead, and the money stays unmatched for an
/// operator: a late transfer never completes an order the merchant has
/// written off.
async fn settle(
    app: &App,
    audit: Option<PendingAudit>,
    account: &ReceivingAccountConfig,
    row: BankTransactionRow,
    order: &Deposit,
    insert: bool,
) -> Result<Ingested, ApiError> {
    let planned = if account.reports_match_first {
        MatchMove::Match {
            received: row.amount,
        }
    } else {
        MatchMove::Complete(
            deposits::plan_completion(app, order, Some(from_units(row.amount))).await?,
        )
    };
    let now = app.now_unix();
    let unmatched = row.clone();
    let mut matched = row;
    matched.status = BankTransactionStatus::Matched;
    matched.order_no = Some(order.order_no.clone());
    matched.matched_at = Some(now);
    matched.updated_at = now;
    let stored = matched.clone();
    let order_no = order.order_no.clone();
    let kept = unmatched.clone();
    let moved: Moved = app
        .db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move {
                if let Some(expired) = deposits::lapse_if_due(tx, &order_no, now).await? {
                    if insert {
                        record(tx, &kept, true, now).await?;
                    }
                    return Ok(Moved::Lapsed(expired));
                }
                record(tx, &stored, insert, now).await?;
                match planned {
                    MatchMove::Match { received } => {
                        deposits::apply_match(tx, &order_no, received, now).await
                    }
                    MatchMove::Complete(plan) => {
                        deposits::apply_completion(tx, &order_no, &plan, now).await
                    }
                }
            })
        })
        .await?;
    match moved {
        Moved::Done(row) => Ok(Ingested {
            row: matched,
            deposit: Some(Deposit::from_row(row)?),
        }),
        // Answered as any unmatched transfer is, on replays too.
        Moved::Lapsed(_) if insert => Ok(Ingested {
            row: unmatched,
            deposit: None,
        }),
        Moved::Lapsed(expired) => Err(lifecycle::refused(
            &expired.order_no,
            expired.status,
            DepositEvent::Match,
        )),
    }
}

async fn record(
    tx: &mut dyn Store,
    row: &BankTransactionRow,
    insert: bool,
    now: i64,
) -> Result<(), ApiError> {
    if insert {
        return tx
            .insert_bank_transaction(row)
            .await
            .map_err(|e| duplicate_or(e, &row.bank_reference));
    }
    // Only a matched transfer is recorded this way; one without its order
    // is a bug in the caller, not a transfer to match to "".
    let order_no = row.order_no.as_deref().ok_or_else(|| {
        ApiError::Internal(format!(
            "bank transaction {} is recorded as matched without an order",
            row.id
        ))
    })?;
    if !tx
        .mark_bank_transaction_matched(&row.id, order_no, now)
        .await?
    {
        return Err(ApiError::InvalidStateTransition {
            order_no: row.id.clone(),
            status: BankTransactionStatus::Matched.to_string(),
            action: "match".into(),
        });
    }
    Ok(())
}

/// The deposit the transaction pays: by remark first, then by floating
/// amount. Only orders awaiting payment on this account qualify.
async fn candidate(
    app: &App,
    account: &ReceivingAccountConfig,
    row: &BankTransactionRow,
) -> Result<Option<Deposit>, ApiError> {
    let qualifies = |d: &DepositRow| {
        d.account_id.as_deref() == Some(account.id.as_str())
            && d.currency == account.currency
            && d.status == DepositStatus::Pending
    };
    for token in remark_tokens(row.remark.as_deref().unwrap_or_default()) {
        let found = app
            .db
            .run(|s| Box::pin(async move { s.deposit_by(DepositKey::Remark(&token)).await }))
            .await?;
        if let Some(d) = found.filter(|d| qualifies(d)) {
            return Ok(Some(Deposit::from_row(d)?));
        }
    }
    if account.floating_amount {
        let (account_id, amount) = (account.id.clone(), row.amount);
        let found = app
            .db
            .run(|s| {
                Box::pin(
                    async move { s.pending_deposit_by_match_amount(&account_id, amount).await },
                )
            })
            .await?;
        if let Some(d) = found.filter(|d| qualifies(d)) {
            return Ok(Some(Deposit::from_row(d)?));
        }
    }
    Ok(None)
}

/// Remark codes a free-text remark may carry: payers add words around the
/// code, change its case or split it with spaces.
pub fn remark_tokens(remark: &str) -> Vec<String> {
    let upper = remark.to_uppercase();
    let mut tokens: Vec<String> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| t.len() == deposits::REMARK_LENGTH)
        .map(str::to_string)
        .collect();
    let joined: String = upper.chars().filter(char::is_ascii_alphanumeric).collect();
    if joined.len() == deposits::REMARK_LENGTH && !tokens.contains(&joined) {
        tokens.push(joined);
    }
    tokens
}

async fn by_reference(
    app: &App,
    account_id: &str,
    reference: &str,
) -> Result<Option<BankTransactionRow>, ApiError> {
    let (a, r) = (account_id.to_string(), reference.to_string());
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.bank_transaction_by_reference(&a, &r).await }))
        .await?)
}

/// A re-ingestion answers the stored record; different content under the
/// same reference is refused.
async fn replay(
    app: &App,
    by: &Actor,
    existing: BankTransactionRow,
    fingerprint: &str,
) -> Result<Ingested, ApiError> {
    if !crate::keys::constant_time_eq(&existing.fingerprint, fingerprint) {
        return Err(ApiError::DuplicateBankReference(existing.bank_reference));
    }
    // Nothing to write, yet an operator's report all the same: its row, on
    // the transaction it answered with, in a transaction of its own.
    if let audit @ Some(_) = by.audit(
        Target::BankTransaction(existing.id.clone()),
        None,
        app.now_unix(),
    ) {
        app.db
            .transaction_audited::<_, ApiError, _>(audit, |_| Box::pin(async { Ok(()) }))
            .await?;
    }
    let deposit = match &existing.order_no {
        Some(order_no) => Some(deposits::find_any(app, order_no).await?),
        None => None,
    };
    Ok(Ingested {
        row: existing,
        deposit,
    })
}

/// Money no order claims, kept for an operator: a transaction, though one
/// statement, as an operator's report carries its audit row in it.
async fn record_unmatched(
    app: &App,
    audit: Option<PendingAudit>,
    row: BankTransactionRow,
) -> Result<(), StoreError> {
    app.db
        .transaction_audited::<_, StoreError, _>(audit, |s| {
            Box::pin(async move { s.insert_bank_transaction(&row).await })
        })
        .await
}

fn duplicate_or(e: StoreError, reference: &str) -> ApiError {
    match e {
        StoreError::Conflict {
            key: UniqueKey::BankReference,
            ..
        } => ApiError::DuplicateBankReference(reference.to_string()),
        other => other.into(),
    }
}

fn fingerprint(req: &NewBankTransaction, amount: i64) -> String {
    let mut h = Sha256::new();
    for part in [
        Some(amount.to_string()),
        Some(req.currency.clone()),
        req.remark.clone(),
        req.payer_name.clone(),
        req.payer_account_no.clone(),
        req.received_at.map(|t| t.to_string()),
    ] {
        // Length-prefixed, so that no two different inputs concatenate alike.
        let part = part.unwrap_or_default();
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remark_codes_are_found_in_free_text() {
        assert_eq!(remark_tokens("ABCDEFGH23"), vec!["ABCDEFGH23"]);
        assert_eq!(
            remark_tokens("payment abcdefgh23 thanks"),
            vec!["ABCDEFGH23"]
        );
        assert_eq!(remark_tokens("ABCDE FGH23"), vec!["ABCDEFGH23"]);
        assert!(remark_tokens("").is_empty());
        assert!(remark_tokens("short").is_empty());
    }
}
