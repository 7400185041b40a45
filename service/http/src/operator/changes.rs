//! Change requests (`app::change_requests`): filed by one operator,
//! decided by a second. A request holds the direct operation's call, its
//! path parameter as `target` and its body as `parameters`, read here into
//! the same typed body the operation takes, with the same checks.

use super::bank::bank_view;
use super::{deposit_view, parse, reviewed};
use crate::app::actor::Actor;
use crate::app::bank::NewBankTransaction;
use crate::app::callbacks::signing;
use crate::app::change_requests::{self, Change, ChangeRequestRow, Done};
use crate::app::listings::Listing;
use crate::app::merchants;
use crate::app::withdrawals::Resolution;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::fees::{Direction, RateConfig};
use crate::domain::money;
use crate::domain::people::Action;
use crate::domain::status::AutoApprovalMode;
use crate::domain::validate;
use crate::enums::Spelled;
use crate::operator::auth::operate;
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::types;
use merchant_api::operator::{
    ApproveApprovalRequestPath, ApproveChangeRequestPath, ListApprovalRequestsQuery,
    ListChangeRequestsQuery, ReadApprovalRequestPath, ReadChangeRequestPath,
    RejectApprovalRequestPath, RejectChangeRequestPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use payments_wire::DecimalString;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The first JSON number in `v`, by its path, but for the whole seconds
/// `counts` names: amounts in a change request are decimal strings, since
/// a number would pass through a binary float on its way in.
fn a_number(v: &Value, at: &str, counts: &[&str]) -> Option<String> {
    match v {
        Value::Number(n) if n.is_i64() && counts.iter().any(|c| at.ends_with(c)) => None,
        Value::Number(_) => Some(at.to_string()),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| a_number(v, &format!("{at}.{k}"), counts)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| a_number(v, &format!("{at}[{i}]"), counts)),
        _ => None,
    }
}

fn body_of<T: DeserializeOwned>(parameters: Map<String, Value>) -> Result<T, ApiError> {
    counted_body_of(parameters, &[])
}

/// `body_of` for a body with whole seconds in it, named by `counts`.
fn counted_body_of<T: DeserializeOwned>(
    parameters: Map<String, Value>,
    counts: &[&str],
) -> Result<T, ApiError> {
    let parameters = Value::Object(parameters);
    if let Some(at) = a_number(&parameters, "parameters", counts) {
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
fn change_of(req: types::ApprovalRequestCreate) -> Result<Change, ApiError> {
    let remarks = |r: Option<String>| validate::optional_text("remarks", r, 512);
    Ok(match req.action {
        types::ApprovalRequestAction::CompleteDeposit => {
            let body: types::CompleteDepositRequest = body_of(req.parameters)?;
            Change::CompleteDeposit {
                order_no: target(req.target)?,
                actual_amount: body.actual_amount.map(|a| a.value()),
                remarks: remarks(body.remarks)?,
            }
        }
        types::ApprovalRequestAction::IngestBankTransaction => {
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
        types::ApprovalRequestAction::MatchBankTransaction => {
            let body: types::MatchBankTransactionRequest = body_of(req.parameters)?;
            Change::MatchBankTransaction {
                transaction_id: target(req.target)?,
                order_no: body.order_no,
                remarks: remarks(body.remarks)?,
            }
        }
        types::ApprovalRequestAction::ResolveWithdrawal => {
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
        types::ApprovalRequestAction::CancelDeposit => {
            let body: types::ReviewRequest = body_of(req.parameters)?;
            Change::CancelDeposit {
                order_no: target(req.target)?,
                remarks: remarks(body.remarks)?,
            }
        }
        types::ApprovalRequestAction::SetMerchantFee
        | types::ApprovalRequestAction::SetAutoApproval
        | types::ApprovalRequestAction::SetReceivingAccount
        | types::ApprovalRequestAction::IssueApiKey
        | types::ApprovalRequestAction::IssueCallbackSecret => setting_of(req)?,
    })
}

/// A merchant setting's, key's or secret's call, checked as its operation
/// checks its body.
fn setting_of(req: types::ApprovalRequestCreate) -> Result<Change, ApiError> {
    Ok(match req.action {
        types::ApprovalRequestAction::SetMerchantFee => {
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
        types::ApprovalRequestAction::SetAutoApproval => {
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
        types::ApprovalRequestAction::SetReceivingAccount => {
            let body: types::ReceivingAccountRequest = body_of(req.parameters)?;
            Change::SetReceivingAccount {
                merchant_id: target(req.target)?,
                account_id: body.account_id,
            }
        }
        types::ApprovalRequestAction::IssueApiKey => {
            let body: types::IssueApiKeyRequest =
                counted_body_of(req.parameters, &[".grace_seconds"])?;
            Change::IssueApiKey {
                merchant_id: target(req.target)?,
                grace_seconds: merchants::checked_grace(body.grace_seconds)?,
            }
        }
        types::ApprovalRequestAction::IssueCallbackSecret => {
            let body: types::IssueCallbackSecretRequest =
                counted_body_of(req.parameters, &[".overlap_seconds"])?;
            signing::rotation_overlap(body.overlap_seconds)?;
            Change::IssueCallbackSecret {
                merchant_id: target(req.target)?,
                overlap_seconds: body.overlap_seconds,
            }
        }
        _ => return Err(ApiError::Internal("not a setting".into())),
    })
}

fn spelled<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, ApiError> {
    serde_json::from_value(Value::String(text.to_string()))
        .map_err(|_| ApiError::Internal(format!("stored {what} `{text}` is not in the contract")))
}

fn view(row: ChangeRequestRow) -> Result<types::ApprovalRequest, ApiError> {
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
    Ok(types::ApprovalRequest {
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
        // Approved through `routing-changes`, never answered here.
        Done::Routing(_) => Err(ApiError::Internal(
            "a routing change answered as an approval request".into(),
        )),
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
        Done::ApiKey {
            merchant_id,
            issued,
        } => object(&types::IssuedApiKey {
            merchant_id,
            api_key: issued.api_key,
            previous_keys_expire_at: time_opt(issued.previous_keys_expire_at)?,
        }),
        Done::CallbackSecret {
            merchant_id,
            signing,
            previous_end,
        } => object(&types::IssuedCallbackSecret {
            merchant_id,
            scheme: signing.scheme.spelled(),
            callback_secret: signing
                .new_secret
                .ok_or_else(|| ApiError::Internal("a rotation issued no secret".into()))?,
            previous_secrets_expire_at: time_opt(previous_end)?,
        }),
    }
}

/// Whether operator 0.14.0 named `action` (`ChangeRequestAction`): the
/// `change-requests` operations know only those, so that a client made
/// from 0.14.0 never reads an action it cannot parse; `approval-requests`
/// know every one. Read from the generated type, so it cannot drift.
fn of_0_14(action: &str) -> bool {
    spelled::<types::ChangeRequestAction>(action, "action").is_ok()
}

/// The actions `of_0_14`, to list by.
fn actions_of_0_14() -> Vec<Action> {
    Action::ALL
        .iter()
        .copied()
        .filter(|a| of_0_14(a.name()))
        .collect()
}

/// Whether the `approval-requests` operations name `action`
/// (`ApprovalRequestAction`): a routing change (0.18.0) is read and
/// decided at `routing-changes`, so that a client made from 0.15.0 to
/// 0.17.1 never reads an action it cannot parse. Read from the generated
/// type, so it cannot drift.
fn of_approvals(action: &str) -> bool {
    spelled::<types::ApprovalRequestAction>(action, "action").is_ok()
}

/// The actions `of_approvals`, to list by.
fn approval_actions() -> Vec<Action> {
    Action::ALL
        .iter()
        .copied()
        .filter(|a| of_approvals(a.name()))
        .collect()
}

/// Refuses, before anything is done, a request the `approval-requests`
/// operations do not name.
async fn known_to_approvals(app: &App, id: &str) -> Result<ChangeRequestRow, ApiError> {
    let row = change_requests::find(app, id).await?;
    if of_approvals(&row.action) {
        Ok(row)
    } else {
        Err(ApiError::ChangeRequestNotFound(id.to_string()))
    }
}

/// An approval request as a `change-requests` operation answers it; one of
/// a later action is not found there.
fn older(r: types::ApprovalRequest) -> Result<types::ChangeRequest, ApiError> {
    let id = r.change_request_id.clone();
    let v = serde_json::to_value(r).map_err(|e| ApiError::Internal(e.to_string()))?;
    serde_json::from_value(v).map_err(|_| ApiError::ChangeRequestNotFound(id))
}

/// Refuses, before anything is done, a request a `change-requests`
/// operation does not know.
async fn known_to_0_14(app: &App, id: &str) -> Result<(), ApiError> {
    let row = change_requests::find(app, id).await?;
    if of_0_14(&row.action) {
        Ok(())
    } else {
        Err(ApiError::ChangeRequestNotFound(id.to_string()))
    }
}

async fn listing(
    app: &App,
    status: Option<types::ChangeRequestStatus>,
    merchant_id: Option<String>,
    limit: Option<i64>,
    cursor: Option<String>,
    actions: Option<&[Action]>,
) -> Result<types::ApprovalRequestPage, ApiError> {
    let listing = Listing {
        limit,
        cursor,
        status: status.map(|s| s.to_string()),
        merchant_id,
        ..Listing::default()
    };
    let page = change_requests::list(app, listing, actions).await?;
    Ok(types::ApprovalRequestPage {
        items: page.items.into_iter().map(view).collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}

async fn filing(
    app: &App,
    op: &Actor,
    req: types::ApprovalRequestCreate,
) -> Result<types::ApprovalRequest, ApiError> {
    let remarks = req.remarks.clone();
    let change = change_of(req)?;
    let row = change_requests::file(app, op, change, remarks).await?;
    tracing::info!(action = "file_change_request", change_request_id = %row.id, target = %row.target, "operator action");
    view(row)
}

async fn approving(
    app: &App,
    op: &Actor,
    id: &str,
    remarks: Option<String>,
) -> Result<types::ApprovalRequest, ApiError> {
    let (row, done) = change_requests::approve(app, op, id, remarks).await?;
    tracing::info!(action = "approve_change_request", change_request_id = %row.id, target = %row.target, "operator action");
    let mut answer = view(row)?;
    answer.result = result_of(app, done).await?;
    Ok(answer)
}

pub(super) async fn list_change_requests(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListChangeRequestsQuery>,
) -> Result<HttpResponseOk<types::ChangeRequestPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let q = query.into_inner();
        let page = listing(
            &app,
            q.status,
            q.merchant_id,
            q.limit,
            q.cursor,
            Some(&actions_of_0_14()),
        )
        .await?;
        Ok(types::ChangeRequestPage {
            items: page
                .items
                .into_iter()
                .map(older)
                .collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

pub(super) async fn list_approval_requests(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListApprovalRequestsQuery>,
) -> Result<HttpResponseOk<types::ApprovalRequestPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let q = query.into_inner();
        let actions = approval_actions();
        listing(
            &app,
            q.status,
            q.merchant_id,
            q.limit,
            q.cursor,
            Some(&actions),
        )
        .await
    })
    .await
}

pub(super) async fn file_change_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::ChangeRequestCreate>,
) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::FileChangeRequest,
        |app, op| async move {
            // Every 0.14.0 action is an approval request's action too.
            let req = serde_json::to_value(parse(&body)?)
                .and_then(serde_json::from_value)
                .map_err(|e| ApiError::Internal(e.to_string()))?;
            older(filing(&app, &op, req).await?)
        },
    )
    .await
}

pub(super) async fn file_approval_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::ApprovalRequestCreate>,
) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::FileChangeRequest,
        |app, op| async move { filing(&app, &op, parse(&body)?).await },
    )
    .await
}

pub(super) async fn read_change_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadChangeRequestPath>,
) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let id = path.into_inner().change_request_id;
        known_to_0_14(&app, &id).await?;
        older(view(change_requests::find(&app, &id).await?)?)
    })
    .await
}

pub(super) async fn read_approval_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadApprovalRequestPath>,
) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        view(known_to_approvals(&app, &path.into_inner().change_request_id).await?)
    })
    .await
}

pub(super) async fn approve_change_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ApproveChangeRequestPath>,
    body: SignedJson<types::ChangeRequestDecision>,
) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::ApproveChangeRequest,
        |app, op| async move {
            let remarks = parse(&body)?.remarks;
            let id = path.into_inner().change_request_id;
            known_to_0_14(&app, &id).await?;
            older(approving(&app, &op, &id, remarks).await?)
        },
    )
    .await
}

pub(super) async fn approve_approval_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ApproveApprovalRequestPath>,
    body: SignedJson<types::ChangeRequestDecision>,
) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::ApproveChangeRequest,
        |app, op| async move {
            let remarks = parse(&body)?.remarks;
            let id = path.into_inner().change_request_id;
            known_to_approvals(&app, &id).await?;
            approving(&app, &op, &id, remarks).await
        },
    )
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
            known_to_0_14(&app, &id).await?;
            older(view(
                change_requests::reject(&app, &op, &id, remarks).await?,
            )?)
        },
    )
    .await
}

pub(super) async fn reject_approval_request(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RejectApprovalRequestPath>,
    body: SignedJson<types::ChangeRequestDecision>,
) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::RejectChangeRequest,
        |app, op| async move {
            let remarks = parse(&body)?.remarks;
            let id = path.into_inner().change_request_id;
            known_to_approvals(&app, &id).await?;
            view(change_requests::reject(&app, &op, &id, remarks).await?)
        },
    )
    .await
}
