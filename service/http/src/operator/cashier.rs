//! Cashier sessions as operators read them.

use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::operator::auth::operate;
use crate::{reshape, time};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{types, ReadCashierSessionPath};
use payments_wire::server::BearerToken;
use payments_wire::DecimalString;
use std::sync::Arc;

pub(super) async fn read_cashier_session(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ReadCashierSessionPath>,
) -> Result<HttpResponseOk<types::CashierSessionRecord>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        cashier_session_view(&app, &path.into_inner().session_id).await
    })
    .await
}

/// A cashier session as the operator reads it, with what its page offers.
pub async fn cashier_session_view(
    app: &App,
    session_id: &str,
) -> Result<types::CashierSessionRecord, ApiError> {
    let session = crate::app::cashier::by_id(app, session_id).await?;
    let merchant = crate::app::merchants::find(app, &session.merchant_id).await?;
    let status = session.status(app.now_unix()).as_str();
    Ok(types::CashierSessionRecord {
        session_id: session.id.clone(),
        merchant_id: session.merchant_id.clone(),
        merchant_order_no: session.merchant_order_no.clone(),
        status: reshape(&status)?,
        currency: session.currency.clone(),
        amount: session.amount.map(|a| DecimalString(a).to_string()),
        denominations: match session.amount {
            Some(_) => Vec::new(),
            None => app
                .config
                .denominations_for(&merchant.code, &session.currency)
                .into_iter()
                .map(|a| DecimalString(a).to_string())
                .collect(),
        },
        payer_bank_cards: session
            .cards
            .iter()
            .map(|c| types::SavedCard {
                bank_code: c.bank_code.clone(),
                account_last4: c.account_last4.clone(),
            })
            .collect(),
        order_no: session.order.as_ref().map(|o| o.order_no.clone()),
        order_status: session
            .order
            .as_ref()
            .map(|o| o.status.as_str().to_string()),
        created_at: time(session.created_at)?,
        expire_at: time(session.expire_at)?,
    })
}
