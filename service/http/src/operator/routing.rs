//! Routing (`app::routing`): the tables in force with each candidate's use
//! of its daily limit, each channel's health; a table is set only by
//! approving an approval request (`set_routing`).

use super::parse;
use crate::app::change_requests::{self, Change, ChangeRequestRow, Done};
use crate::app::listings::Listing;
use crate::app::routing::{self, NewTable, Source, Table};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::routing::health::Circuit;
use crate::domain::routing::table::{Candidate, RoutedDirection};
use crate::operator::auth::{alone, operate};
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{
    types, ApproveRoutingChangePath, ListRoutingChangesQuery, ReadRoutingChangePath,
    RejectRoutingChangePath, SetRoutingPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use payments_wire::DecimalString;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::sync::Arc;

pub(super) async fn read_routing(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
) -> Result<HttpResponseOk<types::RoutingOverview>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        overview(&app).await
    })
    .await
}

/// Never one person's: refused, to be filed as an approval request.
pub(super) async fn set_routing(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<SetRoutingPath>,
    _body: SignedJson<types::RoutingTableRequest>,
) -> Result<HttpResponseOk<types::RoutingTable>, HttpError> {
    alone(&rqctx, &headers, Action::SetRouting).await
}

pub async fn overview(app: &App) -> Result<types::RoutingOverview, ApiError> {
    let used = routing::used_today(app).await?;
    let tables = app
        .router
        .tables(app)
        .iter()
        .map(|t| table_view(t, &used))
        .collect::<Result<_, _>>()?;
    let health = &app.config.routing.health;
    Ok(types::RoutingOverview {
        tables,
        channels: app
            .router
            .health(app)
            .into_iter()
            .map(|(code, circuit, calls, failures)| types::ChannelHealth {
                channel_code: code,
                circuit: match circuit {
                    Circuit::Closed => types::ChannelCircuit::Closed,
                    Circuit::Open { .. } => types::ChannelCircuit::Open,
                    Circuit::Trial => types::ChannelCircuit::Trial,
                },
                calls: i64::from(calls),
                failures: i64::from(failures),
            })
            .collect(),
        window_seconds: health.window_seconds,
        min_calls: i64::from(health.min_calls),
        failure_percent: i64::from(health.failure_percent),
        rest_seconds: health.rest_seconds,
    })
}

fn direction(d: RoutedDirection) -> types::FeeDirection {
    match d {
        RoutedDirection::Deposit => types::FeeDirection::Deposit,
        RoutedDirection::Withdrawal => types::FeeDirection::Withdrawal,
    }
}

/// A table as the contract shows it; `used` is each candidate's use of
/// its daily limit today, by (channel, currency, direction).
pub fn table_view(
    t: &Table,
    used: &BTreeMap<(String, String, String), Decimal>,
) -> Result<types::RoutingTable, ApiError> {
    let (source, updated_at, updated_by) = match &t.source {
        Source::Operators { at, by } => (
            types::RoutingSource::Operators,
            Some(time(*at)?),
            Some(by.clone()),
        ),
        Source::Configuration => (types::RoutingSource::Configuration, None, None),
        Source::Channels => (types::RoutingSource::Channels, None, None),
    };
    let d = t.scope.direction.as_str().to_string();
    Ok(types::RoutingTable {
        currency_code: t.scope.currency.clone(),
        direction: direction(t.scope.direction),
        merchant_id: t.scope.merchant_id.clone(),
        source,
        updated_at,
        updated_by,
        candidates: t
            .candidates
            .iter()
            .map(|c| types::RoutingCandidate {
                channel_code: c.channel.clone(),
                min_amount: c.min_amount.map(DecimalString),
                max_amount: c.max_amount.map(DecimalString),
                weight: i32::try_from(c.weight).unwrap_or(i32::MAX),
                per_order_limit: c.per_order_limit.map(DecimalString),
                daily_limit: c.daily_limit.map(DecimalString),
                used_today: c.daily_limit.map(|_| {
                    DecimalString(
                        used.get(&(c.channel.clone(), t.scope.currency.clone(), d.clone()))
                            .copied()
                            .unwrap_or_default(),
                    )
                }),
                enabled: c.enabled,
            })
            .collect(),
    })
}

/// A table to set, as `set_routing` takes it: `target` is its path,
/// `{currency_code}/{direction}`.
pub fn new_table(target: &str, body: types::RoutingTableRequest) -> Result<NewTable, ApiError> {
    let bad_target = || {
        ApiError::invalid_field(
            "target",
            "must be `{currency_code}/{direction}`, direction `deposit` or `withdrawal`",
        )
    };
    let (currency, d) = target.split_once('/').ok_or_else(bad_target)?;
    let direction = RoutedDirection::parse(d).ok_or_else(bad_target)?;
    let candidates = body
        .candidates
        .into_iter()
        .map(|c| {
            let weight = match c.weight {
                None => 100,
                Some(w) => u32::try_from(w)
                    .map_err(|_| ApiError::invalid_field("weight", "must be 0 to 10000"))?,
            };
            Ok(Candidate {
                channel: c.channel_code,
                min_amount: c.min_amount.map(|a| a.value()),
                max_amount: c.max_amount.map(|a| a.value()),
                weight,
                per_order_limit: c.per_order_limit.map(|a| a.value()),
                daily_limit: c.daily_limit.map(|a| a.value()),
                enabled: c.enabled.unwrap_or(true),
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(NewTable {
        currency: currency.to_string(),
        direction,
        merchant_id: body.merchant_id,
        candidates,
    })
}

/// A routing change as the contract shows it; `result` only in the answer
/// to its approval.
fn change_view(
    row: ChangeRequestRow,
    result: Option<types::RoutingTable>,
) -> Result<types::RoutingChange, ApiError> {
    let change = Change::from_row(&row)?;
    let Change::SetRouting(t) = change else {
        return Err(ApiError::ChangeRequestNotFound(row.id));
    };
    let decided_by = match (row.decided_by, row.decided_by_name) {
        (Some(id), Some(name)) => Some(types::ChangeRequestOperator { id, name }),
        _ => None,
    };
    let table = Table {
        scope: crate::domain::routing::table::Scope {
            currency: t.currency.clone(),
            direction: t.direction,
            merchant_id: t.merchant_id.clone(),
        },
        candidates: t.candidates,
        source: Source::Operators {
            at: row.requested_at,
            by: row.requested_by_name.clone(),
        },
    };
    let shown = table_view(&table, &BTreeMap::new())?;
    Ok(types::RoutingChange {
        change_request_id: row.id,
        currency_code: t.currency,
        direction: direction(t.direction),
        merchant_id: t.merchant_id,
        candidates: shown.candidates,
        summary: row.summary,
        remarks: row.remarks,
        status: serde_json::from_value(serde_json::Value::String(row.status.as_str().into()))
            .map_err(|_| ApiError::Internal(format!("stored status {}", row.status.as_str())))?,
        requested_by: types::ChangeRequestOperator {
            id: row.requested_by,
            name: row.requested_by_name,
        },
        requested_at: time(row.requested_at)?,
        expires_at: time(row.expires_at)?,
        decided_by,
        decided_at: time_opt(row.decided_at)?,
        decision_remarks: row.decision_remarks,
        result,
    })
}

/// A routing change by id; any other request is not one.
async fn routing_change(app: &App, id: &str) -> Result<ChangeRequestRow, ApiError> {
    let row = change_requests::find(app, id).await?;
    match row.action == Action::SetRouting.name() {
        true => Ok(row),
        false => Err(ApiError::ChangeRequestNotFound(id.to_string())),
    }
}

pub(super) async fn list_routing_changes(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListRoutingChangesQuery>,
) -> Result<HttpResponseOk<types::RoutingChangePage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let q = query.into_inner();
        let listing = Listing {
            limit: q.limit,
            cursor: q.cursor,
            status: q.status.map(|s| s.to_string()),
            ..Listing::default()
        };
        let page = change_requests::list(&app, listing, Some(&[Action::SetRouting])).await?;
        Ok(types::RoutingChangePage {
            items: page
                .items
                .into_iter()
                .map(|r| change_view(r, None))
                .collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

pub(super) async fn file_routing_change(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::RoutingChangeCreate>,
) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::FileChangeRequest,
        |app, op| async move {
            let req = parse(&body)?;
            let target = format!("{}/{}", req.currency_code, req.direction);
            let table = new_table(
                &target,
                types::RoutingTableRequest {
                    merchant_id: req.merchant_id,
                    candidates: req.candidates,
                },
            )?;
            let row =
                change_requests::file(&app, &op, Change::SetRouting(table), req.remarks).await?;
            tracing::info!(action = "file_change_request", change_request_id = %row.id, target = %row.target, "operator action");
            change_view(row, None)
        },
    )
    .await
}

pub(super) async fn read_routing_change(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadRoutingChangePath>,
) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        change_view(
            routing_change(&app, &path.into_inner().change_request_id).await?,
            None,
        )
    })
    .await
}

pub(super) async fn approve_routing_change(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ApproveRoutingChangePath>,
    body: SignedJson<types::ChangeRequestDecision>,
) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::ApproveChangeRequest,
        |app, op| async move {
            let remarks = parse(&body)?.remarks;
            let id = path.into_inner().change_request_id;
            routing_change(&app, &id).await?;
            let (row, done) = change_requests::approve(&app, &op, &id, remarks).await?;
            tracing::info!(action = "approve_change_request", change_request_id = %row.id, target = %row.target, "operator action");
            let Done::Routing(table) = done else {
                return Err(ApiError::Internal("a routing change did something else".into()));
            };
            let used = routing::used_today(&app).await?;
            change_view(row, Some(table_view(&table, &used)?))
        },
    )
    .await
}

pub(super) async fn reject_routing_change(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RejectRoutingChangePath>,
    body: SignedJson<types::ChangeRequestDecision>,
) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::RejectChangeRequest,
        |app, op| async move {
            let remarks = parse(&body)?.remarks;
            let id = path.into_inner().change_request_id;
            routing_change(&app, &id).await?;
            change_view(
                change_requests::reject(&app, &op, &id, remarks).await?,
                None,
            )
        },
    )
    .await
}
