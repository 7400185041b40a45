//! Change requests: an action that creates, moves or releases money
//! (`domain::four_eyes`) as one person files it, moving nothing, and a
//! second, different person's decision on it. Filing checks everything the
//! action itself would (the same errors, the same order), and records what
//! will happen in words; approving takes the action as the approver, in a
//! transaction that also marks the request approved, so that an action
//! commits only with its approval and a request is approved only once.

use crate::actor::{Actor, Operator, Target};
use crate::bank::{self, Ingested, NewBankTransaction};
use crate::deposits::{self, Deposit};
use crate::domain::error::ApiError;
use crate::domain::fees::{Direction, RateConfig};
use crate::domain::four_eyes::{
    ChangeRequestStatus, CHANGE_REQUEST_LIFETIME_SECONDS, PENDING_PER_MAKER,
};
use crate::domain::money::from_units;
use crate::domain::people::Action;
use crate::domain::status::AutoApprovalMode;
use crate::domain::validate;
use crate::merchants::{self, AutoApproval, Merchant};
use crate::store::audit::{Approving, PendingAudit};
use crate::store::queries::changes::Decision;
pub use crate::store::rows::ChangeRequestRow;
use crate::withdrawals::{self, Resolution, Withdrawal};
use crate::App;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::BTreeMap;

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
}

/// What an approved change did (boxed: the three differ much in size).
#[derive(Debug)]
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
        }
    }

    /// The direct operation's path parameter: the order, the transaction,
    /// or for a transfer not yet recorded, its account and reference.
    pub fn target(&self) -> String {
        match self {
            Change::CompleteDeposit { order_no, .. }
            | Change::ResolveWithdrawal { order_no, .. } => order_no.clone(),
            Change::MatchBankTransaction { transaction_id, .. } => transaction_id.clone(),
            Change::IngestBankTransaction(t) => format!("{}/{}", t.account_id, t.bank_reference),
            Change::SetMerchantFee { merchant_id, .. }
            | Change::SetAutoApproval { merchant_id, .. }
            | Change::SetReceivingAccount { merchant_id, .. } => merchant_id.clone(),
        }
    }

    fn audit_target(&self) -> Target {
        match self {
            Change::CompleteDeposit { order_no, .. }
            | Change::ResolveWithdrawal { order_no, .. } => Target::Order(order_no.clone()),
            Change::SetMerchantFee { .. }
            | Change::SetAutoApproval { .. }
            | Change::SetReceivingAccount { .. } => Target::Merchant(self.target()),
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
            _ => return Err(bad("action")),
        })
    }
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

/// The auto-approval a request asks for, checked as the setting is.
fn auto_approval(
    app: &App,
    mode: AutoApprovalMode,
    limits: &BTreeMap<String, Decimal>,
) -> Result<AutoApproval, ApiError> {
    Ok(match mode {
        AutoApprovalMode::Off => AutoApproval::Off,
        AutoApprovalMode::Always => AutoApproval::Always,
        AutoApprovalMode::UpTo => {
            merchants::auto_approval_up_to(app, limits.iter().map(|(c, d)| (c.clone(), *d)))?
        }
    })
}

/// An auto-approval setting in words.
fn said(setting: &AutoApproval) -> String {
    match setting {
        AutoApproval::Off => "never".into(),
        AutoApproval::Always => "always (never past a dual-approval threshold)".into(),
        AutoApproval::UpTo(limits) => {
            let each: Vec<String> = limits
                .iter()
                .map(|(c, units)| shown(c, from_units(*units)))
                .collect();
            format!("up to {}", each.join(", "))
        }
    }
}

fn rate_said(rate: &RateConfig) -> String {
    format!(
        "{}% + {} (at least {})",
        rate.percent.normalize(),
        rate.fixed.normalize(),
        rate.minimum.normalize()
    )
}

/// Checks a setting's change as the setting would, and says what it does.
async fn preview_setting(app: &App, change: &Change) -> Result<(String, Option<String>), ApiError> {
    let merchant = merchants::find(app, &change.target()).await?;
    let name = &merchant.name;
    let summary = match change {
        Change::SetMerchantFee {
            currency,
            direction,
            rate,
            ..
        } => {
            let rate = crate::fees::checked(app, currency, rate.clone())?;
            let now = crate::fees::merchant_rate(app, &merchant.id, currency, *direction).await?;
            format!(
                "Set {name}'s {currency} {} fee from {} to {}.",
                direction.as_str(),
                rate_said(&now),
                rate_said(&rate)
            )
        }
        Change::SetAutoApproval { mode, limits, .. } => {
            let setting = auto_approval(app, *mode, limits)?;
            format!(
                "Auto-approve {name}'s withdrawals {} (now {}).",
                said(&setting),
                said(&merchant.auto_approval)
            )
        }
        Change::SetReceivingAccount { account_id, .. } => {
            let account = app
                .config
                .receiving_account(account_id)
                .ok_or_else(|| ApiError::AccountNotFound(account_id.clone()))?;
            let now = merchant
                .receiving_accounts
                .get(&account.currency)
                .map_or("the configured default", String::as_str);
            format!(
                "Pay {name}'s {} deposits to account {account_id} (now {now}).",
                account.currency
            )
        }
        _ => return Err(ApiError::Internal("not a setting".into())),
    };
    Ok((summary, Some(merchant.id.clone())))
}

/// The person acting: a configuration token is nobody in particular, and
/// may neither file nor decide.
fn person(by: &Actor) -> Result<(&Operator, String), ApiError> {
    let acting = by.acting().ok_or(ApiError::TokenIsNobody)?;
    let id = acting.who.id.clone().ok_or(ApiError::TokenIsNobody)?;
    Ok((&acting.who, id))
}

fn shown(currency: &str, amount: Decimal) -> String {
    format!("{currency} {}", amount.round_dp(4))
}

/// Checks the change as the action would, and says what it will do; the
/// merchant whose money it is, where one is known.
async fn preview(app: &App, change: &Change) -> Result<(String, Option<String>), ApiError> {
    match change {
        Change::CompleteDeposit {
            order_no,
            actual_amount,
            remarks,
        } => preview_completion(app, order_no, *actual_amount, remarks.as_deref()).await,
        Change::IngestBankTransaction(t) => {
            let (account, amount, reference) = bank::check_new(app, t)?;
            Ok((
                format!(
                    "Record {} received on account {} (bank reference {reference}{}); a pending deposit it matches completes with it and credits its merchant.",
                    shown(&t.currency, from_units(amount)),
                    account.id,
                    t.remark.as_deref().map(|r| format!(", remark {r}")).unwrap_or_default(),
                ),
                None,
            ))
        }
        Change::MatchBankTransaction {
            transaction_id,
            order_no,
            remarks,
        } => {
            let (row, order) =
                bank::check_match(app, transaction_id, order_no, remarks.as_deref()).await?;
            let received = from_units(row.amount);
            Ok((
                format!(
                    "Match transfer {} of {} to deposit {order_no} of {} (difference {}); the deposit completes with what arrived and credits its merchant.",
                    row.bank_reference,
                    shown(&row.currency, received),
                    shown(&order.currency, order.amount),
                    shown(&row.currency, received - order.amount),
                ),
                Some(order.merchant_id),
            ))
        }
        Change::ResolveWithdrawal {
            order_no,
            resolution,
            ..
        } => preview_resolution(app, order_no, *resolution).await,
        Change::SetMerchantFee { .. }
        | Change::SetAutoApproval { .. }
        | Change::SetReceivingAccount { .. } => preview_setting(app, change).await,
    }
}

async fn preview_completion(
    app: &App,
    order_no: &str,
    actual_amount: Option<Decimal>,
    remarks: Option<&str>,
) -> Result<(String, Option<String>), ApiError> {
    let current = deposits::find_any(app, order_no).await?;
    let plan = deposits::plan_completion(app, &current, actual_amount).await?;
    let (paid, fee) = plan.paid_and_fee();
    let (paid, fee) = (from_units(paid), from_units(fee));
    if actual_amount.is_some() {
        validate::reason_for_difference(&current.currency, current.amount, paid, remarks)?;
    }
    let c = &current.currency;
    Ok((
        format!(
            "Complete deposit {order_no}: ordered {}, paid {} (difference {}); credits the merchant {} after a fee of {}.",
            shown(c, current.amount),
            shown(c, paid),
            shown(c, paid - current.amount),
            shown(c, paid - fee),
            shown(c, fee),
        ),
        Some(current.merchant_id),
    ))
}

async fn preview_resolution(
    app: &App,
    order_no: &str,
    resolution: Resolution,
) -> Result<(String, Option<String>), ApiError> {
    let current = withdrawals::find_any(app, order_no).await?;
    if !current.needs_manual_intervention {
        return Err(crate::domain::lifecycle::refused(
            order_no,
            format!("{} (not set aside)", current.status),
            "resolve",
        ));
    }
    let amount = shown(&current.currency, current.amount);
    let theirs = current.channel_order_no.as_deref().unwrap_or("none given");
    let what = match resolution {
        Resolution::Completed => {
            format!("as paid: the merchant is debited {amount} and its fee for good")
        }
        Resolution::Failed => {
            format!("as not paid: {amount} and its fee return to the merchant's available balance")
        }
    };
    Ok((
        format!("Resolve payout {order_no} (channel order {theirs}) {what}."),
        Some(current.merchant_id),
    ))
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

/// The request as it now is: a pending one past its time is expired.
pub async fn find(app: &App, id: &str) -> Result<ChangeRequestRow, ApiError> {
    let now = app.now_unix();
    let key = id.to_string();
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                s.expire_change_requests(now).await?;
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
