//! Callback deliveries: listed, read with their attempts, and retried.

use super::{acted_on_order, AsListing};
use crate::app::callbacks::{AttemptRecord, Delivery, RetryBatch};
use crate::app::{listings, App};
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::enums::Spelled;
use crate::operator::auth::{operate, operate_with};
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{
    types, ListCallbackDeliveriesQuery, ReadCallbackDeliveryPath, RetryCallbackDeliveryPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use std::sync::Arc;

pub(super) async fn list_callback_deliveries(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListCallbackDeliveriesQuery>,
) -> Result<HttpResponseOk<types::CallbackDeliveryPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let app = &*app;
        let page = listings::callback_deliveries(app, query.into_inner().listing()).await?;
        Ok(types::CallbackDeliveryPage {
            items: page
                .items
                .into_iter()
                .map(|r| delivery_view(app, r, Vec::new()))
                .collect::<Result<_, ApiError>>()?,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

pub(super) async fn retry_failed_callbacks(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::CallbackRetryBatch>,
) -> Result<HttpResponseOk<types::CallbackRetryBatchResult>, HttpError> {
    operate_with(
        &rqctx,
        &headers,
        Action::RetryCallbacks,
        body,
        |app, op, req| async move {
            let batch = RetryBatch {
                merchant_id: req.merchant_id,
                created_from: req.created_from,
                created_to: req.created_to,
                limit: req.limit,
            };
            let done = crate::app::callbacks::retry_failed(&app, &op, batch).await?;
            Ok(types::CallbackRetryBatchResult {
                retried: i64::try_from(done.retried).unwrap_or(i64::MAX),
                more: done.more,
            })
        },
    )
    .await
}

pub(super) async fn read_callback_delivery(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadCallbackDeliveryPath>,
) -> Result<HttpResponseOk<types::CallbackDelivery>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let app = &*app;
        let row = crate::app::callbacks::find(app, &path.into_inner().delivery_id).await?;
        delivery_with_history(app, row).await
    })
    .await
}

pub(super) async fn retry_callback_delivery(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RetryCallbackDeliveryPath>,
) -> Result<HttpResponseOk<types::CallbackDelivery>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::RetryCallback,
        |app, op| async move {
            let app = &*app;
            let delivery_id = path.into_inner().delivery_id;
            let row = crate::app::callbacks::retry(app, &op, &delivery_id).await?;
            acted_on_order("retry_callback", &row.order_no);
            delivery_with_history(app, row).await
        },
    )
    .await
}

/// A delivery as operators see it: a platform event's secret link
/// redacted (`callbacks::shown_body`).
pub fn delivery_view(
    app: &App,
    row: Delivery,
    history: Vec<AttemptRecord>,
) -> Result<types::CallbackDelivery, ApiError> {
    let body = crate::app::callbacks::shown_body(app, &row)?;
    let history = history
        .into_iter()
        .map(|a| {
            Ok(types::CallbackAttempt {
                attempt: i64::from(a.attempt),
                scheduled_at: time(a.scheduled_at)?,
                started_at: time(a.started_at)?,
                duration_ms: a.duration_ms,
                status_code: a.status_code.map(i64::from),
                error: a.error,
                outcome: a.outcome.spelled(),
                next_attempt_at: time_opt(a.next_attempt_at)?,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    Ok(types::CallbackDelivery {
        status: row.status.spelled(),
        attempts: i64::from(row.attempts),
        next_attempt_at: time_opt(row.next_attempt_at)?,
        created_at: time(row.created_at)?,
        updated_at: time(row.updated_at)?,
        history,
        id: row.id,
        merchant_id: row.merchant_id,
        order_kind: row.order_kind.to_string(),
        order_no: row.order_no,
        event: row.event,
        callback_url: row.callback_url,
        body,
    })
}

pub async fn delivery_with_history(
    app: &App,
    row: Delivery,
) -> Result<types::CallbackDelivery, ApiError> {
    let history = crate::app::callbacks::history(app, &row.id).await?;
    delivery_view(app, row, history)
}
