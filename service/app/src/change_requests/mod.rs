//! Change requests: an action that creates, moves or releases money
//! (`domain::four_eyes`) as one person files it, moving nothing, and a
//! second, different person's decision on it. Filing checks everything the
//! action itself would (the same errors, the same order), and records what
//! will happen in words; approving takes the action as the approver, in a
//! transaction that also marks the request approved, so that an action
//! commits only with its approval and a request is approved only once.

use crate::actor::{Actor, Operator, Target};
use crate::bank::{self, Ingested, NewBankTransaction};
use crate::callbacks::signing;
use crate::deposits::{self, Deposit};
use crate::domain::error::ApiError;
use crate::domain::fees::{Direction, RateConfig};
use crate::domain::four_eyes::{
    ChangeRequestStatus, CHANGE_REQUEST_LIFETIME_SECONDS, EXPIRED_ACTION, PENDING_PER_MAKER,
};
use crate::domain::people::Action;
use crate::domain::status::AutoApprovalMode;
use crate::domain::validate;
use crate::listings::{Listing, Page};
use crate::merchants::{self, Merchant};
use crate::store::audit::{Approving, PendingAudit};
use crate::store::queries::changes::Decision;
use crate::store::rows::AuditRow;
pub use crate::store::rows::ChangeRequestRow;
use crate::store::Store;
use crate::withdrawals::{self, Resolution, Withdrawal};
use crate::App;
use preview::{auto_approval, preview};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::BTreeMap;

mod preview;

/// What a change request will do, exactly as the direct action takes it.
#[derive(Clone, Debug)]
pub enum Change {
    CompleteDeposit {
        order_no: String,
        actual_amount: Option<Decimal>,
        remarks: Option<String>,
    },
    IngestBankTransaction(NewBankTransaction),
    MatchBankTransaction {
        transaction_id: String,
        order_no: String,
        remarks: Option<String>,
    },
    ResolveWithdrawal {
        order_no: String,
        resolution: Resolution,
        remarks: String,
        bank_reference: Option<String>,
    },
    SetMerchantFee {
        merchant_id: String,
        currency: String,
        direction: Direction,
        rate: RateConfig,
    },
    SetAutoApproval {
        merchant_id: String,
        mode: AutoApprovalMode,
        limits: BTreeMap<String, Decimal>,
    },
    SetReceivingAccount {
        merchant_id: String,
        account_id: String,
    },
    CancelDeposit {
        order_no: String,
        remarks: Option<String>,
    },
    IssueApiKey {
        merchant_id: String,
        grace_seconds: Option<i64>,
    },
    IssueCallbackSecret {
        merchant_id: String,
        overlap_seconds: Option<i64>,
    },
    SetRouting(crate::routing::NewTable),
}

/// What an approved change did (boxed: they differ much in size). Not
/// `Debug`: a key or secret issued is in it, shown once to the approver.
pub enum Done {
    Deposit(Box<Deposit>),
    BankTransaction(Box<Ingested>),
    Withdrawal(Box<Withdrawal>),
    Fee {
        merchant_id: String,
        currency: String,
        direction: Direction,
        rate: RateConfig,
    },
    AutoApproval(Box<Merchant>),
    ReceivingAccount {
        merchant_id: String,
        account_id: String,
    },
    ApiKey {
        merchant_id: String,
        issued: merchants::IssuedKey,
    },
    CallbackSecret {
        merchant_id: String,
        signing: Box<signing::Signing>,
        previous_end: Option<i64>,
    },
    Routing(Box<crate::routing::Table>),
}

/// By its kind only: what was done is the answer's, and a key or secret
/// issued must not reach a log line through a `{:?}`.
impl std::fmt::Debug for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Done::Deposit(_) => "Done::Deposit",
            Done::BankTransaction(_) => "Done::BankTransaction",
            Done::Withdrawal(_) => "Done::Withdrawal",
            Done::Fee { .. } => "Done::Fee",
            Done::AutoApproval(_) => "Done::AutoApproval",
            Done::ReceivingAccount { .. } => "Done::ReceivingAccount",
            Done::ApiKey { .. } => "Done::ApiKey",
            Done::CallbackSecret { .. } => "Done::CallbackSecret",
            Done::Routing(_) => "Done::Routing",
        })
    }
}

impl Change {
    pub fn action(&self) -> Action {
        match self {
            Change::CompleteDeposit { .. } => Action::CompleteDeposit,
            Change::IngestBankTransaction(_) => Action::IngestBankTransaction,
            Change::MatchBankTransaction { .. } => Action::MatchBankTransaction,
            Change::ResolveWithdrawal { .. } => Action::ResolveWithdrawal,
            Change::SetMerchantFee { .. } => Action::SetMerchantFee,
            Change::SetAutoApproval { .. } => Action::SetAutoApproval,
            Change::SetReceivingAccount { .. } => Action::SetReceivingAccount,
            Change::CancelDeposit { .. } => Action::CancelDeposit,
            Change::IssueApiKey { .. } => Action::IssueApiKey,
            Change::IssueCallbackSecret { .. } => Action::IssueCallbackSecret,
            Change::SetRouting(_) => Action::SetRouting,
        }
    }

    /// The direct operation's path parameter: the order, the transaction,
    /// or for a transfer not yet recorded, its account and reference.
    pub fn target(&self) -> String {
        match self {
            Change::CompleteDeposit { order_no, .. }
            | Change::CancelDeposit { order_no, .. }
            | Change::ResolveWithdrawal { order_no, .. } => order_no.clone(),
            Change::MatchBankTransaction { transaction_id, .. } => transaction_id.clone(),
            Change::IngestBankTransaction(t) => format!("{}/{}", t.account_id, t.bank_reference),
            Change::SetMerchantFee { merchant_id, .. }
            | Change::SetAutoApproval { merchant_id, .. }
            | Change::SetReceivingAccount { merchant_id, .. }
            | Change::IssueApiKey { merchant_id, .. }
            | Change::IssueCallbackSecret { merchant_id, .. } => merchant_id.clone(),
            Change::SetRouting(t) => format!("{}/{}", t.currency, t.direction.as_str()),
        }
    }

    fn audit_target(&self) -> Target {
        match self {
            Change::CompleteDeposit { order_no, .. }
            | Change::CancelDeposit { order_no, .. }
            | Change::ResolveWithdrawal { order_no, .. } => Target::Order(order_no.clone()),
            Change::SetMerchantFee { .. }
            | Change::SetAutoApproval { .. }
            | Change::SetReceivingAccount { .. }
            | Change::IssueApiKey { .. }
            | Change::IssueCallbackSecret { .. } => Target::Merchant(self.target()),
            Change::SetRouting(t) => Target::RoutingTable(t.key()),
            _ => Target::BankTransaction(self.target()),
        }
    }

    /// The direct operation's body, as the service read it: amounts as
    /// decimal strings.
    pub fn parameters(&self) -> Value {
        match self {
            Change::CompleteDeposit {
                actual_amount,
                remarks,
                ..
            } => json!({"actual_amount": actual_amount.map(|a| a.to_string()), "remarks": remarks}),
            Change::IngestBankTransaction(t) => json!({
                "account_id": t.account_id, "bank_reference": t.bank_reference,
                "amount": t.amount.to_string(), "currency_code": t.currency,
                "remark": t.remark, "payer_name": t.payer_name,
                // Listed to anyone who reads requests: the payer's account
                // by its last four only, as the bank transaction keeps it.
                "payer_account_no": t.payer_account_no.as_deref().map(validate::last4),
                "received_at": t.received_at,
            }),
            Change::MatchBankTransaction {
                order_no, remarks, ..
            } => json!({"order_no": order_no, "remarks": remarks}),
            Change::ResolveWithdrawal {
                resolution,
                remarks,
                bank_reference,
                ..
            } => json!({
                "outcome": match resolution { Resolution::Completed => "completed", Resolution::Failed => "failed" },
                "remarks": remarks, "bank_reference": bank_reference,
            }),
            Change::SetMerchantFee {
                currency,
                direction,
                rate,
                ..
            } => json!({
                "currency_code": currency, "direction": direction.as_str(),
                "percent": rate.percent.to_string(), "fixed": rate.fixed.to_string(),
                "minimum": rate.minimum.to_string(),
            }),
            Change::SetAutoApproval { mode, limits, .. } => json!({
                "mode": mode.as_str(),
                "limits": limits.iter().map(|(c, d)| (c.clone(), json!(d.to_string()))).collect::<serde_json::Map<_, _>>(),
            }),
            Change::SetReceivingAccount { account_id, .. } => json!({"account_id": account_id}),
            Change::CancelDeposit { remarks, .. } => json!({"remarks": remarks}),
            Change::IssueApiKey { grace_seconds, .. } => json!({"grace_seconds": grace_seconds}),
            Change::IssueCallbackSecret {
                overlap_seconds, ..
            } => json!({"overlap_seconds": overlap_seconds}),
            Change::SetRouting(t) => t.parameters(),
        }
    }

    /// Reads a stored request back; a stored value the code does not know
    /// is an error, never a guess.
    pub fn from_row(row: &ChangeRequestRow) -> Result<Change, ApiError> {
        let bad = |what: &str| {
            ApiError::Internal(format!(
                "change request {}: stored {what} unreadable",
                row.id
            ))
        };
        let p: Value = serde_json::from_str(&row.parameters).map_err(|_| bad("parameters"))?;
        let text = |k: &str| p[k].as_str().map(str::to_string);
        let amount = |k: &str| -> Result<Option<Decimal>, ApiError> {
            text(k).map(|a| a.parse().map_err(|_| bad(k))).transpose()
        };
        if let Some(change) = Self::on_merchant_or_cancel(row, &p) {
            return Ok(change);
        }
        Ok(match Action::parse(&row.action) {
            Some(Action::CompleteDeposit) => Change::CompleteDeposit {
                order_no: row.target.clone(),
                actual_amount: amount("actual_amount")?,
                remarks: text("remarks"),
            },
            Some(Action::IngestBankTransaction) => {
                Change::IngestBankTransaction(NewBankTransaction {
                    account_id: text("account_id").ok_or_else(|| bad("account_id"))?,
                    bank_reference: text("bank_reference").ok_or_else(|| bad("bank_reference"))?,
                    amount: amount("amount")?.ok_or_else(|| bad("amount"))?,
                    currency: text("currency_code").ok_or_else(|| bad("currency_code"))?,
                    remark: text("remark"),
                    payer_name: text("payer_name"),
                    payer_account_no: text("payer_account_no"),
                    received_at: p["received_at"].as_i64(),
                })
            }
            Some(Action::MatchBankTransaction) => Change::MatchBankTransaction {
                transaction_id: row.target.clone(),
                order_no: text("order_no").ok_or_else(|| bad("order_no"))?,
                remarks: text("remarks"),
            },
            Some(Action::ResolveWithdrawal) => Change::ResolveWithdrawal {
                order_no: row.target.clone(),
                resolution: match p["outcome"].as_str() {
                    Some("completed") => Resolution::Completed,
                    Some("failed") => Resolution::Failed,
                    _ => return Err(bad("outcome")),
                },
                remarks: text("remarks").ok_or_else(|| bad("remarks"))?,
                bank_reference: text("bank_reference"),
            },
            Some(Action::SetMerchantFee) => Change::SetMerchantFee {
                merchant_id: row.target.clone(),
                currency: text("currency_code").ok_or_else(|| bad("currency_code"))?,
                direction: match p["direction"].as_str() {
                    Some("deposit") => Direction::Deposit,
                    Some("withdrawal") => Direction::Withdrawal,
                    _ => return Err(bad("direction")),
                },
                rate: RateConfig {
                    percent: amount("percent")?.ok_or_else(|| bad("percent"))?,
                    fixed: amount("fixed")?.ok_or_else(|| bad("fixed"))?,
                    minimum: amount("minimum")?.ok_or_else(|| bad("minimum"))?,
                },
            },
            Some(Action::SetAutoApproval) => Change::SetAutoApproval {
                merchant_id: row.target.clone(),
                mode: p["mode"]
                    .as_str()
                    .and_then(AutoApprovalMode::parse)
                    .ok_or_else(|| bad("mode"))?,
                limits: stored_limits(&p["limits"]).ok_or_else(|| bad("limits"))?,
            },
            Some(Action::SetReceivingAccount) => Change::SetReceivingAccount {
                merchant_id: row.target.clone(),
                account_id: text("account_id").ok_or_else(|| bad("account_id"))?,
            },
            Some(Action::SetRouting) => routed(row, &p).ok_or_else(|| bad("routing table"))?,
            _ => return Err(bad("action")),
        })
    }
}

impl Change {
    /// A cancellation, a key or a secret read back: nothing in them can be
    /// unreadable (a missing number is the operation's default).
    fn on_merchant_or_cancel(row: &ChangeRequestRow, p: &Value) -> Option<Change> {
        Some(match Action::parse(&row.action)? {
            Action::CancelDeposit => Change::CancelDeposit {
                order_no: row.target.clone(),
                remarks: p["remarks"].as_str().map(str::to_string),
            },
            Action::IssueApiKey => Change::IssueApiKey {
                merchant_id: row.target.clone(),
                grace_seconds: p["grace_seconds"].as_i64(),
            },
            Action::IssueCallbackSecret => Change::IssueCallbackSecret {
                merchant_id: row.target.clone(),
                overlap_seconds: p["overlap_seconds"].as_i64(),
            },
            _ => return None,
        })
    }
}

/// A routing change read back (`routing::NewTable::stored`).
fn routed(row: &ChangeRequestRow, p: &Value) -> Option<Change> {
    crate::routing::NewTable::stored(&row.target, p).map(Change::SetRouting)
}

/// Auto-approval limits as stored: decimal strings per currency.
fn stored_limits(v: &Value) -> Option<BTreeMap<String, Decimal>> {
    let Some(map) = v.as_object() else {
        return Some(BTreeMap::new()).filter(|_| v.is_null());
    };
    map.iter()
        .map(|(c, d)| Some((c.clone(), d.as_str()?.parse().ok()?)))
        .collect()
}

/// The person acting: a configuration token is nobody in particular, and
/// may neither file nor decide.
fn person(by: &Actor) -> Result<(&Operator, String), ApiError> {
    let acting = by.acting().ok_or(ApiError::TokenIsNobody)?;
    let id = acting.who.id.clone().ok_or(ApiError::TokenIsNobody)?;
    Ok((&acting.who, id))
}

/// One person files `change`: checked as the action would check it, and
/// recorded with what it will do. Moves nothing.
pub async fn file(
    app: &App,
    by: &Actor,
    change: Change,
    remarks: Option<String>,
) -> Result<ChangeRequestRow, ApiError> {
    let (who, maker) = person(by)?;
    who.may(change.action())?;
    let remarks = validate::optional_text("remarks", remarks, 512)?;
    let now = app.now_unix();
    let (summary, merchant_id) = preview(app, &change).await?;
    let row = ChangeRequestRow {
        id: crate::ids::ordered(),
        action: change.action().name().to_string(),
        target: change.target(),
        merchant_id,
        parameters: change.parameters().to_string(),
        summary: summary.clone(),
        remarks: remarks.clone(),
        status: ChangeRequestStatus::Pending,
        requested_by: maker.clone(),
        requested_by_name: who.name.clone(),
        requested_at: now,
        expires_at: now + CHANGE_REQUEST_LIFETIME_SECONDS,
        decided_by: None,
        decided_by_name: None,
        decided_at: None,
        decision_remarks: None,
    };
    // The trail keeps the filer's reason, or without one what it will do.
    let said = remarks.clone().unwrap_or_else(|| summary.clone());
    let audit = by.audit(change.audit_target(), Some(&said), now);
    let stored = row.clone();
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move {
                if tx.pending_change_requests_of(&maker, now).await? >= PENDING_PER_MAKER {
                    return Err(ApiError::RateLimited { retry_after: 60 });
                }
                tx.insert_change_request(&stored).await?;
                Ok(())
            })
        })
        .await?;
    Ok(row)
}

/// Inside `s`: marks every pending request past its expiry expired, each
/// with its row in the audit trail, under the filer's name, since it is
/// their request that ended. Done when requests are read rather than by a
/// worker: a request is only ever acted on through a read of it.
pub(crate) async fn expire_due(s: &mut dyn Store, now: i64) -> Result<(), ApiError> {
    const BATCH: i64 = 100;
    loop {
        let due = s.change_requests_past_due(now, BATCH).await?;
        let full = due.len() as i64 == BATCH;
        for row in due {
            let decision = Decision {
                status: ChangeRequestStatus::Expired,
                by: None,
                remarks: None,
                at: row.expires_at,
            };
            if !s.decide_change_request(&row.id, &decision).await? {
                continue;
            }
            let role = s
                .operator_by_id(&row.requested_by)
                .await?
                .ok_or_else(|| ApiError::Internal(format!("change request {}: filer", row.id)))?
                .role;
            let (target_type, target_id) = Change::from_row(&row)?.audit_target().kind_and_id();
            s.append_audit(&AuditRow {
                id: crate::ids::ordered(),
                created_at: now,
                operator_id: Some(row.requested_by.clone()),
                operator_name: row.requested_by_name.clone(),
                role: role.into(),
                action: EXPIRED_ACTION.to_string(),
                target_type: target_type.to_string(),
                target_id,
                remarks: Some(format!(
                    "change request {} expired: no second person decided it within 24 hours, and nothing was done",
                    row.id
                )),
                request_id: format!("expiry-of-{}", row.id),
                before_state: None,
                after_state: None,
            })
            .await?;
        }
        if !full {
            return Ok(());
        }
    }
}

/// Change requests, of `actions` only when given.
pub async fn list(
    app: &App,
    listing: Listing,
    actions: Option<&[Action]>,
) -> Result<Page<ChangeRequestRow>, ApiError> {
    let mut filter = listing.filter(ChangeRequestStatus::ALL)?;
    filter.actions = actions.map(|a| a.iter().map(|a| a.name().to_string()).collect());
    let now = app.now_unix();
    let query = filter.clone();
    let rows = app
        .db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                expire_due(s, now).await?;
                Ok(s.change_requests_page(&query).await?)
            })
        })
        .await?;
    Ok(crate::listings::page(rows, &filter, |r| {
        (r.requested_at, r.id.as_str())
    }))
}

/// The request as it now is: a pending one past its time is expired.
pub async fn find(app: &App, id: &str) -> Result<ChangeRequestRow, ApiError> {
    let now = app.now_unix();
    let key = id.to_string();
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                expire_due(s, now).await?;
                s.change_request(&key)
                    .await?
                    .ok_or(ApiError::ChangeRequestNotFound(key))
            })
        })
        .await
}

/// Refuses a decision on anything but a pending request.
fn pending(row: &ChangeRequestRow) -> Result<(), ApiError> {
    match row.status {
        ChangeRequestStatus::Pending => Ok(()),
        other => Err(ApiError::ChangeRequestDecided {
            id: row.id.clone(),
            status: other.as_str(),
        }),
    }
}

/// Whether `operator` created the merchant (its `create_merchant` row in
/// the trail): the one who set a merchant up does not check its money.
async fn created_merchant(app: &App, merchant: &str, operator: &str) -> Result<bool, ApiError> {
    let created = crate::audit::list(
        app,
        crate::listings::Listing {
            limit: Some(1),
            ..Default::default()
        },
        crate::audit::AuditFilter {
            operator_id: Some(operator.to_string()),
            action: Some(Action::CreateMerchant.name().to_string()),
            target_id: Some(merchant.to_string()),
            operators_only: true,
        },
    )
    .await?;
    Ok(!created.items.is_empty())
}

/// A second, different person approves: the action is taken as they take
/// it, and commits only with the request marked approved.
pub async fn approve(
    app: &App,
    by: &Actor,
    id: &str,
    remarks: Option<String>,
) -> Result<(ChangeRequestRow, Done), ApiError> {
    let (who, checker) = person(by)?;
    let remarks = validate::optional_text("remarks", remarks, 512)?;
    let row = find(app, id).await?;
    pending(&row)?;
    if row.requested_by == checker {
        return Err(ApiError::OwnChangeRequest(row.id));
    }
    crate::people::counts(app, who).await?;
    if let Some(merchant) = &row.merchant_id {
        if created_merchant(app, merchant, &checker).await? {
            return Err(ApiError::CreatorChecks(merchant.clone()));
        }
    }
    let change = Change::from_row(&row)?;
    who.may(change.action())?;
    let request_id = by
        .acting()
        .map(|a| a.request_id.clone())
        .unwrap_or_default();
    let acting = Actor::operator(who.clone(), change.action(), request_id).approving(Approving {
        change_request_id: row.id.clone(),
        by_id: checker.clone(),
        by_name: who.name.clone(),
        remarks: remarks.clone(),
    });
    let said = Some(format!(
        "change request {} filed by {}{}",
        row.id,
        row.requested_by_name,
        row.remarks
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default()
    ));
    let done = take(app, &acting, change, said).await?;
    // An action that found its work already done (a transfer recorded
    // before, replayed) commits nothing: the approval is marked alone.
    let now = find(app, id).await?;
    if now.status != ChangeRequestStatus::Pending {
        return Ok((now, done));
    }
    let approver = (checker.as_str(), who.name.as_str());
    decide(
        app,
        id,
        ChangeRequestStatus::Approved,
        approver,
        remarks,
        None,
    )
    .await?;
    Ok((find(app, id).await?, done))
}

async fn take(
    app: &App,
    by: &Actor,
    change: Change,
    said: Option<String>,
) -> Result<Done, ApiError> {
    Ok(match change {
        Change::CompleteDeposit {
            order_no,
            actual_amount,
            remarks,
        } => {
            let remarks = remarks.or(said);
            Done::Deposit(Box::new(
                deposits::complete(app, by, &order_no, actual_amount, remarks.as_deref()).await?,
            ))
        }
        Change::IngestBankTransaction(t) => {
            Done::BankTransaction(Box::new(bank::ingest(app, by, t).await?))
        }
        Change::MatchBankTransaction {
            transaction_id,
            order_no,
            remarks,
        } => {
            let remarks = remarks.or(said);
            Done::BankTransaction(Box::new(
                bank::match_by_hand(app, by, &transaction_id, &order_no, remarks.as_deref())
                    .await?,
            ))
        }
        Change::ResolveWithdrawal {
            order_no,
            resolution,
            remarks,
            bank_reference,
        } => Done::Withdrawal(Box::new(
            withdrawals::resolve(app, by, &order_no, resolution, remarks, bank_reference).await?,
        )),
        Change::SetMerchantFee { .. }
        | Change::SetAutoApproval { .. }
        | Change::SetReceivingAccount { .. }
        | Change::IssueApiKey { .. }
        | Change::IssueCallbackSecret { .. } => take_on_merchant(app, by, change).await?,
        Change::SetRouting(t) => Done::Routing(Box::new(crate::routing::set(app, by, t).await?)),
        Change::CancelDeposit { order_no, remarks } => {
            let remarks = remarks.or(said);
            Done::Deposit(Box::new(
                deposits::cancel(app, by, &order_no, remarks.as_deref()).await?,
            ))
        }
    })
}

/// A merchant's setting, key or secret, as the approver takes it.
async fn take_on_merchant(app: &App, by: &Actor, change: Change) -> Result<Done, ApiError> {
    Ok(match change {
        Change::SetMerchantFee {
            merchant_id,
            currency,
            direction,
            rate,
        } => {
            let rate = crate::fees::set(app, by, &merchant_id, &currency, direction, rate).await?;
            Done::Fee {
                merchant_id,
                currency,
                direction,
                rate,
            }
        }
        Change::SetAutoApproval {
            merchant_id,
            mode,
            limits,
        } => {
            let setting = auto_approval(app, mode, &limits)?;
            Done::AutoApproval(Box::new(
                merchants::set_auto_approval(app, by, &merchant_id, setting).await?,
            ))
        }
        Change::SetReceivingAccount {
            merchant_id,
            account_id,
        } => {
            merchants::set_receiving_account(app, by, &merchant_id, &account_id).await?;
            Done::ReceivingAccount {
                merchant_id,
                account_id,
            }
        }
        Change::IssueApiKey {
            merchant_id,
            grace_seconds,
        } => {
            let issued = merchants::issue_api_key(app, by, &merchant_id, grace_seconds).await?;
            Done::ApiKey {
                merchant_id,
                issued,
            }
        }
        Change::IssueCallbackSecret {
            merchant_id,
            overlap_seconds,
        } => {
            let (signing, previous_end) =
                signing::issue_secret(app, by, &merchant_id, overlap_seconds).await?;
            Done::CallbackSecret {
                merchant_id,
                signing: Box::new(signing),
                previous_end,
            }
        }
        _ => return Err(ApiError::Internal("not a merchant's change".into())),
    })
}

/// Marks a pending request decided, with `audit`'s row when one is given;
/// refused when another decision came first.
async fn decide(
    app: &App,
    id: &str,
    status: ChangeRequestStatus,
    by: (&str, &str),
    remarks: Option<String>,
    audit: Option<PendingAudit>,
) -> Result<(), ApiError> {
    let key = id.to_string();
    let (by_id, by_name) = (by.0.to_string(), by.1.to_string());
    let at = app.now_unix();
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                let decision = Decision {
                    status,
                    by: Some((&by_id, &by_name)),
                    remarks: remarks.as_deref(),
                    at,
                };
                if s.decide_change_request(&key, &decision).await? {
                    Ok(())
                } else {
                    Err(ApiError::ChangeRequestDecided {
                        id: key.clone(),
                        status: "decided already",
                    })
                }
            })
        })
        .await
}

/// A second person, or the filer withdrawing it, rejects: nothing moves.
pub async fn reject(
    app: &App,
    by: &Actor,
    id: &str,
    remarks: Option<String>,
) -> Result<ChangeRequestRow, ApiError> {
    let (who, decider) = person(by)?;
    let remarks = validate::optional_text("remarks", remarks, 512)?;
    let row = find(app, id).await?;
    pending(&row)?;
    let change = Change::from_row(&row)?;
    who.may(change.action())?;
    let now = app.now_unix();
    let said = format!(
        "change request {}: {}",
        row.id,
        remarks.as_deref().unwrap_or("rejected")
    );
    let audit = by.audit(change.audit_target(), Some(&said), now);
    decide(
        app,
        &row.id,
        ChangeRequestStatus::Rejected,
        (&decider, &who.name),
        remarks,
        audit,
    )
    .await?;
    find(app, id).await
}
