//! Withdrawals as operators review them: listed, read with their approvals,
//! approved (four eyes above the threshold), rejected, and resolved when
//! set aside.

use super::{acted_on_order, remarks, reviewed, AsListing};
use crate::app::merchants::Merchant;
use crate::app::withdrawals::{self, approvals, Withdrawal};
use crate::app::{listings, App};
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::operator::auth::{alone, operate};
use crate::{reshape, time, withdrawal_order};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{
    types, ApproveWithdrawalPath, ListWithdrawalsQuery, ReadWithdrawalPath, RejectWithdrawalPath,
    ResolveWithdrawalPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use std::sync::Arc;

pub(super) async fn approve_withdrawal(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ApproveWithdrawalPath>,
    body: SignedJson<types::ReviewRequest>,
) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::ApproveWithdrawal,
        |app, op| async move {
            let order_no = path.into_inner().order_no;
            let remarks = remarks(&body)?;
            let answered =
                withdrawals::approve_waiting_at_most(&app, &op, &order_no, remarks).await?;
            let (app, recorded) = (&*app, answered.recorded);
            acted_on_order("approve_withdrawal", &recorded.order.order_no);
            // Answered with the approvals the approving transaction saw.
            withdrawal_view_with(app, &answered.merchant, &recorded.order, recorded.approvals)
        },
    )
    .await
}

pub(super) async fn resolve_withdrawal(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<ResolveWithdrawalPath>,
    _body: SignedJson<types::ResolveWithdrawalRequest>,
) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
    alone(&rqctx, &headers, Action::ResolveWithdrawal).await
}

pub(super) async fn reject_withdrawal(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RejectWithdrawalPath>,
    body: SignedJson<types::ReviewRequest>,
) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::RejectWithdrawal,
        |app, op| async move {
            let app = &*app;
            let order_no = path.into_inner().order_no;
            let remarks = remarks(&body)?;
            let order = withdrawals::reject(app, &op, &order_no, remarks).await?;
            acted_on_order("reject_withdrawal", &order.order_no);
            reviewed(app, order).await
        },
    )
    .await
}

pub(super) async fn list_withdrawals(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListWithdrawalsQuery>,
) -> Result<HttpResponseOk<types::WithdrawalPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let app = &*app;
        let page = listings::withdrawals(app, query.into_inner().listing()).await?;
        let mut items = Vec::with_capacity(page.items.len());
        for (order, merchant) in &page.items {
            items.push(withdrawal_view(app, merchant, order).await?);
        }
        Ok(types::WithdrawalPage {
            items,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

pub(super) async fn read_withdrawal(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadWithdrawalPath>,
) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let app = &*app;
        let order = withdrawals::find_any(app, &path.into_inner().order_no).await?;
        reviewed(app, order).await
    })
    .await
}

/// A withdrawal as an operator sees it: the merchant's view, with the
/// approvals recorded so far and how many it needs.
pub async fn withdrawal_view(
    app: &App,
    merchant: &Merchant,
    order: &Withdrawal,
) -> Result<types::WithdrawalOrder, ApiError> {
    let approvals = approvals::of(app, &order.order_no).await?;
    withdrawal_view_with(app, merchant, order, approvals)
}

/// `withdrawal_view` with the order's approvals as already read.
pub fn withdrawal_view_with(
    app: &App,
    merchant: &Merchant,
    order: &Withdrawal,
    approvals: Vec<approvals::ApprovalRow>,
) -> Result<types::WithdrawalOrder, ApiError> {
    let mut view = serde_json::to_value(withdrawal_order(merchant, order)?)
        .map_err(|e| ApiError::Internal(format!("reshaping a withdrawal: {e}")))?;
    let shown: Vec<types::WithdrawalApproval> = approvals
        .into_iter()
        .map(|a| {
            Ok(types::WithdrawalApproval {
                approver_id: a.approver_key,
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
        if !order.routing.is_empty() {
            fields.insert(
                "routing".into(),
                serde_json::to_value(&order.routing).unwrap_or_default(),
            );
        }
    }
    reshape(&view)
}
