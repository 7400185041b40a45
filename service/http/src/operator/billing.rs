//! A merchant's billing statements as operators handle them: listed,
//! read (and their PDF), issued, reissued, and the billing period set.

use crate::app::billing;
use crate::app::listings::Listing;
use crate::app::App;
use crate::billing::{day, document, page, shown, Pdf};
use crate::domain::people::Action;
use crate::domain::validate;
use crate::enums::Spelled;
use crate::operator::auth::{operate, operate_with};
use dropshot::{Body, HttpError, HttpResponseOk, RequestContext};
use merchant_api::operator::types;
use merchant_api::operator::ListBillingStatementsQuery;
use payments_wire::server::{BearerToken, SignedJson};
use std::sync::Arc;

type Answer<T> = Result<HttpResponseOk<T>, HttpError>;

pub(super) async fn list(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    q: ListBillingStatementsQuery,
) -> Answer<types::BillingStatementPage> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let listing = Listing {
            limit: q.limit,
            cursor: q.cursor,
            merchant_id: q.merchant_id,
            ..Listing::default()
        };
        let (items, next_cursor) = page(&app, listing).await?;
        Ok(types::BillingStatementPage { items, next_cursor })
    })
    .await
}

pub(super) async fn read(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    id: String,
) -> Answer<types::BillingStatement> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        shown(&app, &billing::find(&app, None, &id).await?)
    })
    .await
}

pub(super) async fn read_document(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    id: String,
) -> Result<http::Response<Body>, HttpError> {
    document(
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            let bytes = billing::document(&app, None, &id).await?;
            Ok(Pdf { bytes })
        })
        .await,
    )
}

pub(super) async fn issue(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    merchant_id: String,
    body: SignedJson<types::IssueBillingStatementRequest>,
) -> Answer<types::BillingStatement> {
    let action = Action::IssueBillingStatement;
    operate_with(&rqctx, &headers, action, body, |app, op, b| async move {
        let start = day("period_start", &b.period_start)?;
        let end = day("period_end", &b.period_end)?;
        let remarks = validate::optional_text("remarks", b.remarks, 512)?;
        let issued = billing::issue_for(&app, &op, &merchant_id, start, end, remarks).await?;
        shown(&app, &issued)
    })
    .await
}

pub(super) async fn reissue(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    id: String,
    body: SignedJson<types::ReissueBillingStatementRequest>,
) -> Answer<types::BillingStatement> {
    let action = Action::ReissueBillingStatement;
    operate_with(&rqctx, &headers, action, body, |app, op, b| async move {
        let remarks =
            validate::optional_text("remarks", Some(b.remarks), 512)?.ok_or_else(|| {
                crate::domain::error::ApiError::invalid_field("remarks", "must not be empty")
            })?;
        shown(
            &app,
            &billing::reissue(&app, &op, &id, Some(remarks)).await?,
        )
    })
    .await
}

pub(super) async fn set_period(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    merchant_id: String,
    body: SignedJson<types::BillingPeriodRequest>,
) -> Answer<types::BillingPeriodSetting> {
    operate_with(
        &rqctx,
        &headers,
        Action::SetBillingPeriod,
        body,
        |app, op, b| async move {
            let period = b.billing_period.to_string();
            let period = billing::set_period(&app, &op, &merchant_id, &period).await?;
            Ok(types::BillingPeriodSetting {
                billing_period: period.spelled(),
                merchant_id,
            })
        },
    )
    .await
}
