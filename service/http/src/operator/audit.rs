//! The audit trail, read by operators.

use crate::app::audit::{self, AuditFilter, AuditRow};
use crate::app::listings::Listing;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::operator::auth::operate;
use crate::time;
use dropshot::{HttpError, HttpResponseOk, RequestContext};
use merchant_api::operator::{types, ListAuditEventsQuery, ListAuditTrailQuery};
use payments_wire::server::{BearerToken, Query};
use std::sync::Arc;

pub(super) async fn list_audit_events(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListAuditEventsQuery>,
) -> Result<HttpResponseOk<types::AuditEventPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        audit_events(&app, query.into_inner()).await
    })
    .await
}

pub(super) async fn list_audit_trail(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListAuditTrailQuery>,
) -> Result<HttpResponseOk<types::AuditTrailPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let query = query.into_inner();
        let listing = Listing {
            limit: query.limit,
            cursor: query.cursor,
            ..Listing::default()
        };
        let filter = AuditFilter {
            operator_id: query.actor_id,
            action: query.action,
            target_id: query.target_id,
            operators_only: false,
        };
        let page = audit::list(&app, listing, filter).await?;
        Ok(types::AuditTrailPage {
            items: page
                .items
                .into_iter()
                .map(trail_entry)
                .collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

/// A setting before or after, as stored.
fn doc(text: Option<String>) -> serde_json::Map<String, serde_json::Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn trail_entry(row: AuditRow) -> Result<types::AuditTrailEntry, ApiError> {
    Ok(types::AuditTrailEntry {
        actor_kind: match row.role.of_operator() {
            Some(_) => "operator",
            None => "owner",
        }
        .to_string(),
        audit_id: row.id,
        created_at: time(row.created_at)?,
        actor_id: row.operator_id,
        actor_name: row.operator_name,
        role: row.role.as_str().to_string(),
        action: row.action,
        target_type: row.target_type,
        target_id: row.target_id,
        remarks: row.remarks,
        request_id: row.request_id,
        before: doc(row.before_state),
        after: doc(row.after_state),
    })
}

fn audit_event(row: AuditRow) -> Result<types::AuditEvent, ApiError> {
    // The listing of 0.15.0 reads operators' rows only (`operators_only`).
    let role = row.role.of_operator().ok_or_else(|| {
        ApiError::Internal(format!(
            "audit row {} is an owner's, listed as an operator's",
            row.id
        ))
    })?;
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
        role: super::operators::role(role),
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
        operators_only: true,
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
