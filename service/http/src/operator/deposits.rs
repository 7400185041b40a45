//! Deposits as operators see them: listed, read, completed by hand and
//! cancelled.

use super::{acted_on_order, deposit_view, remarks, AsListing};
use crate::app::{deposits, listings, merchants, App};
use crate::domain::people::Action;
use crate::operator::auth::{alone, operate};
use crate::{deposit_order, reshape};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{
    types, CancelDepositPath, CompleteDepositPath, ListDepositsQuery, ReadDepositPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use std::sync::Arc;

pub(super) async fn cancel_deposit(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<CancelDepositPath>,
    body: SignedJson<types::ReviewRequest>,
) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::CancelDeposit,
        |app, op| async move {
            let app = &*app;
            let order_no = path.into_inner().order_no;
            let remarks = remarks(&body)?;
            let order =
                crate::app::deposits::cancel(app, &op, &order_no, remarks.as_deref()).await?;
            acted_on_order("cancel_deposit", &order.order_no);
            let merchant = merchants::find(app, &order.merchant_id).await?;
            reshape(&deposit_order(app, &merchant, &order))
        },
    )
    .await
}

pub(super) async fn list_deposits(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListDepositsQuery>,
) -> Result<HttpResponseOk<types::DepositPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let app = &*app;
        let page = listings::deposits(app, query.into_inner().listing()).await?;
        let items = page
            .items
            .iter()
            .map(|(order, merchant)| reshape(&deposit_order(app, merchant, order)))
            .collect::<Result<_, _>>()?;
        Ok(types::DepositPage {
            items,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

pub(super) async fn read_deposit(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadDepositPath>,
) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let app = &*app;
        let order = deposits::find_any(app, &path.into_inner().order_no).await?;
        deposit_view(app, &order).await
    })
    .await
}

pub(super) async fn complete_deposit(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<CompleteDepositPath>,
    _body: SignedJson<types::CompleteDepositRequest>,
) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
    alone(&rqctx, &headers, Action::CompleteDeposit).await
}
