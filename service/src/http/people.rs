//! The operator API's people: who a token is, operators and their tokens,
//! the audit trail, and a withdrawal's approvals on the operator's view.

use super::{reshape, time, time_opt, withdrawal_order};
use crate::app::audit::{self, AuditFilter, AuditRow, Target};
use crate::app::listings::Listing;
use crate::app::merchants::Merchant;
use crate::app::people::{self, Changes, NewOperator, OperatorRow, OperatorTokenRow};
use crate::app::withdrawals::{approvals, Withdrawal};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::{OperatorStatus, Role};
use crate::http::operator_auth::Operator;
use merchant_api::operator::types;
use merchant_api::operator::{ListAuditEventsQuery, ListOperatorsQuery};

/// A withdrawal as an operator sees it: the merchant's view, with the
/// approvals recorded so far and how many it needs.
pub async fn withdrawal_view(
    app: &App,
    merchant: &Merchant,
    order: &Withdrawal,
) -> Result<types::WithdrawalOrder, ApiError> {
    let mut view = serde_json::to_value(withdrawal_order(merchant, order)?)
        .map_err(|e| ApiError::Internal(format!("reshaping a withdrawal: {e}")))?;
    let approvals = approvals::of(app, &order.row.order_no).await?;
    let shown: Vec<types::WithdrawalApproval> = approvals
        .into_iter()
        .map(|a| {
            Ok(types::WithdrawalApproval {
                approver_name: a.approver_name,
                approved_at: time(a.approved_at)?,
                remarks: a.remarks,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    let needed = i32::try_from(approvals::needed(app, order)?).unwrap_or(i32::MAX);
    if let Some(fields) = view.as_object_mut() {
        fields.insert(
            "approvals".into(),
            serde_json::to_value(shown).unwrap_or_default(),
        );
        fields.insert("approvals_required".into(), needed.into());
    }
    reshape(&view)
}

fn role(r: Role) -> types::Role {
    match r {
        Role::Viewer => types::Role::Viewer,
        Role::Support => types::Role::Support,
        Role::Approver => types::Role::Approver,
        Role::Admin => types::Role::Admin,
    }
}

fn role_in(r: types::Role) -> Role {
    match r {
        types::Role::Viewer => Role::Viewer,
        types::Role::Support => Role::Support,
        types::Role::Approver => Role::Approver,
        types::Role::Admin => Role::Admin,
    }
}

fn status(s: OperatorStatus) -> types::OperatorStatus {
    match s {
        OperatorStatus::Active => types::OperatorStatus::Active,
        OperatorStatus::Disabled => types::OperatorStatus::Disabled,
    }
}

fn identity(row: OperatorRow) -> Result<types::OperatorIdentity, ApiError> {
    Ok(types::OperatorIdentity {
        operator_id: row.id,
        name: row.name,
        email: row.email,
        role: role(row.role),
        status: status(row.status),
        created_at: time(row.created_at)?,
        updated_at: time(row.updated_at)?,
    })
}

fn token(row: OperatorTokenRow) -> Result<types::OperatorToken, ApiError> {
    Ok(types::OperatorToken {
        token_id: row.id,
        label: row.label,
        created_at: time(row.created_at)?,
        revoked_at: time_opt(row.revoked_at)?,
    })
}

pub fn current(op: Operator) -> types::CurrentOperator {
    types::CurrentOperator {
        source: match op.who.id {
            Some(_) => types::CurrentOperatorSource::Identity,
            None => types::CurrentOperatorSource::Configuration,
        },
        operator_id: op.who.id,
        name: op.who.name,
        role: role(op.who.role),
    }
}

pub async fn list(app: &App, query: ListOperatorsQuery) -> Result<types::OperatorPage, ApiError> {
    let listing = Listing {
        limit: query.limit,
        cursor: query.cursor,
        ..Listing::default()
    };
    let page = crate::app::listings::operators(app, listing).await?;
    Ok(types::OperatorPage {
        items: page
            .items
            .into_iter()
            .map(identity)
            .collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}

pub async fn create(
    app: &App,
    req: types::CreateOperatorRequest,
) -> Result<types::OperatorIdentity, ApiError> {
    audit::on(Target::NewOperator);
    let row = people::create(
        app,
        NewOperator {
            name: req.name,
            email: req.email,
            role: role_in(req.role),
        },
    )
    .await?;
    tracing::info!(action = "create_operator", operator_id = %row.id, "operator action");
    identity(row)
}

pub async fn change(
    app: &App,
    by: &Operator,
    operator_id: String,
    req: types::ChangeOperatorRequest,
) -> Result<types::OperatorIdentity, ApiError> {
    audit::on(Target::Operator(operator_id.clone()));
    let changes = Changes {
        name: req.name,
        role: req.role.map(role_in),
        status: req.status.map(|s| match s {
            types::OperatorStatus::Active => OperatorStatus::Active,
            types::OperatorStatus::Disabled => OperatorStatus::Disabled,
        }),
    };
    let row = people::change(app, &by.who, &operator_id, changes).await?;
    tracing::info!(action = "change_operator", %operator_id, "operator action");
    identity(row)
}

pub async fn tokens(app: &App, operator_id: &str) -> Result<types::OperatorTokenList, ApiError> {
    let rows = people::tokens(app, operator_id).await?;
    Ok(types::OperatorTokenList {
        items: rows.into_iter().map(token).collect::<Result<_, _>>()?,
    })
}

pub async fn issue_token(
    app: &App,
    operator_id: String,
    label: String,
) -> Result<types::IssuedOperatorToken, ApiError> {
    audit::on(Target::Operator(operator_id.clone()));
    let issued = people::issue_token(app, &operator_id, label).await?;
    tracing::info!(action = "issue_operator_token", %operator_id, token_id = %issued.row.id, "operator action");
    Ok(types::IssuedOperatorToken {
        token_id: issued.row.id,
        label: issued.row.label,
        created_at: time(issued.row.created_at)?,
        token: issued.token,
    })
}

pub async fn revoke_token(
    app: &App,
    operator_id: String,
    token_id: String,
) -> Result<types::OperatorToken, ApiError> {
    audit::on(Target::Operator(operator_id.clone()));
    let row = people::revoke_token(app, &operator_id, &token_id).await?;
    tracing::info!(action = "revoke_operator_token", %operator_id, %token_id, "operator action");
    token(row)
}

fn audit_event(row: AuditRow) -> Result<types::AuditEvent, ApiError> {
    let doc = |text: Option<String>| -> serde_json::Map<String, serde_json::Value> {
        text.and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    };
    Ok(types::AuditEvent {
        target_type: match row.target_type.as_str() {
            "merchant" => types::AuditEventTargetType::Merchant,
            "operator" => types::AuditEventTargetType::Operator,
            "order" => types::AuditEventTargetType::Order,
            "bank_transaction" => types::AuditEventTargetType::BankTransaction,
            "callback_delivery" => types::AuditEventTargetType::CallbackDelivery,
            other => {
                return Err(ApiError::Internal(format!(
                    "audit row {} holds target type `{other}`",
                    row.id
                )))
            }
        },
        audit_id: row.id,
        created_at: time(row.created_at)?,
        operator_id: row.operator_id,
        operator_name: row.operator_name,
        role: role(row.role),
        action: row.action,
        target_id: row.target_id,
        remarks: row.remarks,
        request_id: row.request_id,
        before: doc(row.before_state),
        after: doc(row.after_state),
    })
}

pub async fn audit_events(
    app: &App,
    query: ListAuditEventsQuery,
) -> Result<types::AuditEventPage, ApiError> {
    let listing = Listing {
        limit: query.limit,
        cursor: query.cursor,
        ..Listing::default()
    };
    let filter = AuditFilter {
        operator_id: query.operator_id,
        action: query.action,
        target_id: query.target_id,
    };
    let page = audit::list(app, listing, filter).await?;
    Ok(types::AuditEventPage {
        items: page
            .items
            .into_iter()
            .map(audit_event)
            .collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}
