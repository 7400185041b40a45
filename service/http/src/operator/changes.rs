//! Change requests (`app::change_requests`): filed by one operator,
//! decided by a second. A request holds the direct operation's call, its
//! path parameter as `target` and its body as `parameters`, read here into
//! the same typed body the operation takes, with the same checks.

use super::bank::bank_view;
use super::{deposit_view, parse, reviewed};
use crate::app::bank::NewBankTransaction;
use crate::app::change_requests::{self, Change, ChangeRequestRow, Done};
use crate::app::listings::{self, Listing};
use crate::app::withdrawals::Resolution;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::fees::{Direction, RateConfig};
use crate::domain::money;
use crate::domain::people::Action;
use crate::domain::status::AutoApprovalMode;
use crate::domain::validate;
use crate::operator::auth::operate;
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::types;
use merchant_api::operator::{
    ApproveChangeRequestPath, ListChangeRequestsQuery, ReadChangeRequestPath,
    RejectChangeRequestPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use payments_wire::DecimalString;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The first JSON number in `v`, by its path: amounts in a change request
/// are decimal strings, since a number would pass through a binary float on
/// its way in (none of the bodies a request holds has another number).
fn a_number(v: &Value, at: &str) -> Option<String> {
    match v {
        Value::Number(_) => Some(at.to_string()),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| a_number(v, &format!("{at}.{k}"))),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| a_number(v, &format!("{at}[{i}]"))),
        _ => None,
    }
}

fn body_of<T: DeserializeOwned>(parameters: Map<String, Value>) -> Result<T, ApiError> {
    let parameters = Value::Object(parameters);
    if let Some(at) = a_number(&parameters, "parameters") {
        return Err(ApiError::invalid_field(
            at,
            "must be a decimal string, such as \"100.00\"",
        ));
    }
    serde_json::from_value(parameters)
        .map_err(|e| ApiError::invalid_field("parameters", e.to_string()))
}

fn target(given: Option<String>) -> Result<String, ApiError> {
    validate::required_text("target", given.unwrap_or_default(), 128)
}

/// The direct operation's call, checked as that operation checks it.
fn change_of(req: types::ChangeRequestCreate) -> Result<Change, ApiError> {
    let remarks = |r: Option<String>| validate::optional_text("remarks", r, 512);
    Ok(match req.action {
        types::ChangeRequestAction::CompleteDeposit => {
            let body: types::CompleteDepositRequest = body_of(req.parameters)?;
            Change::CompleteDeposit {
                order_no: target(req.target)?,
                actual_amount: body.actual_amount.map(|a| a.value()),
                remarks: remarks(body.remarks)?,
            }
        }
        types::ChangeRequestAction::IngestBankTransaction => {
            if req.target.is_some() {
                return Err(ApiError::invalid_field(
                    "target",
                    "must be absent: a transfer not yet recorded has no id",
                ));
            }
            let body: types::BankTransactionRequest = body_of(req.parameters)?;
            Change::IngestBankTransaction(NewBankTransaction {
                account_id: body.account_id,
                bank_reference: body.bank_reference,
                amount: body.amount.value(),
                currency: body.currency_code,
                remark: body.remark,
                payer_name: body.payer_name,
                payer_account_no: body.payer_account_no,
                received_at: body.received_at.map(|t| t.timestamp()),
            })
        }
        types::ChangeRequestAction::MatchBankTransaction => {
            let body: types::MatchBankTransactionRequest = body_of(req.parameters)?;
            Change::MatchBankTransaction {
                transaction_id: target(req.target)?,
                order_no: body.order_no,
                remarks: remarks(body.remarks)?,
            }
        }
        types::ChangeRequestAction::ResolveWithdrawal => {
            let body: types::ResolveWithdrawalRequest = body_of(req.parameters)?;
            Change::ResolveWithdrawal {
                order_no: target(req.target)?,
                resolution: match body.outcome {
                    types::WithdrawalResolution::Completed => Resolution::Completed,
                    types::WithdrawalResolution::Failed => Resolution::Failed,
                },
                remarks: validate::required_text("remarks", body.remarks, 512)?,
                bank_reference: validate::optional_text(
                    "bank_reference",
                    body.bank_reference,
                    128,
                )?,
            }
        }
        types::ChangeRequestAction::SetMerchantFee
        | types::ChangeRequestAction::SetAutoApproval
        | types::ChangeRequestAction::SetReceivingAccount => setting_of(req)?,
    })
}

/// A merchant setting's call, checked as its operation checks its body.
fn setting_of(req: types::ChangeRequestCreate) -> Result<Change, ApiError> {
    Ok(match req.action {
        types::ChangeRequestAction::SetMerchantFee => {
            let body: types::FeeRuleRequest = body_of(req.parameters)?;
            Change::SetMerchantFee {
                merchant_id: target(req.target)?,
                currency: body.currency_code,
                direction: match body.direction {
                    types::FeeDirection::Deposit => Direction::Deposit,
                    types::FeeDirection::Withdrawal => Direction::Withdrawal,
                },
                rate: RateConfig {
                    percent: body.percent.value(),
                    fixed: body.fixed.value(),
                    minimum: body.minimum.value(),
                },
            }
        }
        types::ChangeRequestAction::SetAutoApproval => {
            let body: types::AutoApprovalRequest = body_of(req.parameters)?;
            Change::SetAutoApproval {
                merchant_id: target(req.target)?,
                mode: match body.mode {
                    types::AutoApprovalMode::Off => AutoApprovalMode::Off,
                    types::AutoApprovalMode::Always => AutoApprovalMode::Always,
                    types::AutoApprovalMode::UpTo => AutoApprovalMode::UpTo,
                },
                limits: body
                    .limits
                    .into_iter()
                    .map(|(c, d)| (c, d.value()))
                    .collect(),
            }
        }
        types::ChangeRequestAction::SetReceivingAccount => {
            let body: types::ReceivingAccountRequest = body_of(req.parameters)?;
            Change::SetReceivingAccount {
                merchant_id: target(req.target)?,
                account_id: body.account_id,
            }
        }
        _ => return Err(ApiError::Internal("not a setting".into())),
    })
}

fn spelled<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, ApiError> {
    serde_json::from_value(Value::String(text.to_string()))
        .map_err(|_| ApiError::Internal(format!("stored {what} `{text}` is not in the contract")))
}

fn view(row: ChangeRequestRow) -> Result<types::ChangeRequest, ApiError> {
    let parameters = match serde_json::from_str(&row.parameters) {
        Ok(Value::Object(map)) => map,
        _ => {
            return Err(ApiError::Internal(format!(
                "change request {}: parameters",
                row.id
            )))
        }
    };
    let decided_by = match (row.decided_by, row.decided_by_name) {
        (Some(id), Some(name)) => Some(types::ChangeRequestOperator { id, name }),
        _ => None,
    };
    Ok(types::ChangeRequest {
        action: spelled(&row.action, "action")?,
        change_request_id: row.id,
        decided_at: time_opt(row.decided_at)?,
        decided_by,
        decision_remarks: row.decision_remarks,
        expires_at: time(row.expires_at)?,
        merchant_id: row.merchant_id,
        parameters,
        remarks: row.remarks,
        requested_at: time(row.requested_at)?,
        requested_by: types::ChangeRequestOperator {
            id: row.requested_by,
            name: row.requested_by_name,
        },
        result: Map::new(),
        status: spelled(row.status.as_str(), "status")?,
        summary: row.summary,
        target: row.target,
    })
}

fn object<T: serde::Serialize>(value: &T) -> Result<Map<String, Value>, ApiError> {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(ApiError::Internal(
            "an action's answer is not an object".into(),
        )),
    }
}

async fn result_of(app: &App, done: Done) -> Result<Map<String, Value>, ApiError> {
    match done {
        Done::Deposit(order) => object(&deposit_view(app, &order).await?),
        Done::BankTransaction(ingested) => object(&bank_view(app, *ingested).await?),
        Done::Withdrawal(order) => object(&reviewed(app, *order).await?),
        Done::Fee {
            merchant_id,
            currency,
            direction,
            rate,
        } => object(&types::FeeRule {
            merchant_id,
            currency_code: currency,
            direction: match direction {
                Direction::Deposit => types::FeeDirection::Deposit,
                Direction::Withdrawal => types::FeeDirection::Withdrawal,
            },
            percent: DecimalString(rate.percent),
            fixed: DecimalString(rate.fixed),
            minimum: DecimalString(rate.minimum),
        }),
        Done::AutoApproval(merchant) => object(&types::AutoApproval {
            mode: match merchant.auto_approval.mode() {
                AutoApprovalMode::Off => types::AutoApprovalMode::Off,
                AutoApprovalMode::Always => types::AutoApprovalMode::Always,
                AutoApprovalMode::UpTo => types::AutoApprovalMode::UpTo,
            },
            limits: merchant
                .auto_approval
                .limits()
                .into_iter()
                .map(|(c, units)| (c, DecimalString(money::from_units(units))))
                .collect(),
            merchant_id: merchant.id,
        }),
        Done::ReceivingAccount {
            merchant_id,
            account_id,
        } => {
            let account = app
                .config
                .receiving_account(&account_id)
                .ok_or_else(|| ApiError::AccountNotFound(account_id.clone()))?;
            object(&types::ReceivingAccountAssignment {
                merchant_id,
                currency_code: account.currency.clone(),
                account_id: account.id.clone(),
                floating_amount: account.floating_amount,
                reports_match_first: account.reports_match_first,
            })
        }
    }
}

pub(super) async fn list_change_requests(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListChangeRequestsQuery>,
) -> Result<HttpResponseOk<types::ChangeRequestPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let q = query.into_inner();
        let listing = Listing {
            limit: q.limit,
            cursor: q.cursor,
            status: q.status.map(|s| s.to_string()),
            merchant_id: q.merchant_id,
            ..Listing::default()
        };
        let page = listings::change_requests(&app, listing).await?;
        Ok(types::ChangeRequestPage {
            items: page.items.into_iter().map(view).collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

pub(super) async fn file_change_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::ChangeRequestCreate>,
) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
    operate(&rqctx, &headers, Action::FileChangeRequest, |app, op| async move {
        let req = parse(&body)?;
        let remarks = req.remarks.clone();
        let change = change_of(req)?;
        let row = change_requests::file(&app, &op, change, remarks).await?;
        tracing::info!(action = "file_change_request", change_request_id = %row.id, target = %row.target, "operator action");
        view(row)
    })
    .await
}

pub(super) async fn read_change_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadChangeRequestPath>,
) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        view(change_requests::find(&app, &path.into_inner().change_request_id).await?)
    })
    .await
}

pub(super) async fn approve_change_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ApproveChangeRequestPath>,
    body: SignedJson<types::ChangeRequestDecision>,
) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
    operate(&rqctx, &headers, Action::ApproveChangeRequest, |app, op| async move {
        let remarks = parse(&body)?.remarks;
        let id = path.into_inner().change_request_id;
        let (row, done) = change_requests::approve(&app, &op, &id, remarks).await?;
        tracing::info!(action = "approve_change_request", change_request_id = %row.id, target = %row.target, "operator action");
        let mut answer = view(row)?;
        answer.result = result_of(&app, done).await?;
        Ok(answer)
    })
    .await
}

pub(super) async fn reject_change_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RejectChangeRequestPath>,
    body: SignedJson<types::ChangeRequestDecision>,
) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::RejectChangeRequest,
        |app, op| async move {
            let remarks = parse(&body)?.remarks;
            let id = path.into_inner().change_request_id;
            view(change_requests::reject(&app, &op, &id, remarks).await?)
        },
    )
    .await
}
