//! Bank transactions: entered, listed and matched to deposits.

use super::AsListing;
use crate::app::bank::{BankTransaction, Ingested};
use crate::app::{deposits, listings, App};
use crate::domain::error::ApiError;
use crate::domain::money;
use crate::domain::people::Action;
use crate::enums::Spelled;
use crate::operator::auth::{alone, operate};
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{types, ListBankTransactionsQuery, MatchBankTransactionPath};
use payments_wire::server::{BearerToken, Query, SignedJson};
use payments_wire::DecimalString;
use std::sync::Arc;

pub(super) async fn ingest_bank_transaction(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _body: SignedJson<types::BankTransactionRequest>,
) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
    alone(&rqctx, &headers, Action::IngestBankTransaction).await
}

pub(super) async fn list_bank_transactions(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListBankTransactionsQuery>,
) -> Result<HttpResponseOk<types::BankTransactionPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let app = &*app;
        let page = listings::bank_transactions(app, query.into_inner().listing()).await?;
        let mut items = Vec::with_capacity(page.items.len());
        for row in page.items {
            items.push(bank_view(app, Ingested { row, deposit: None }).await?);
        }
        Ok(types::BankTransactionPage {
            items,
            next_cursor: page.next_cursor,
        })
    })
    .await
}

pub(super) async fn match_bank_transaction(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<MatchBankTransactionPath>,
    _body: SignedJson<types::MatchBankTransactionRequest>,
) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
    alone(&rqctx, &headers, Action::MatchBankTransaction).await
}

pub async fn bank_view(app: &App, ingested: Ingested) -> Result<types::BankTransaction, ApiError> {
    let deposit_status = match (&ingested.deposit, &ingested.row.order_no) {
        (Some(d), _) => Some(d.status),
        (None, Some(order_no)) => Some(deposits::find_any(app, order_no).await?.status),
        (None, None) => None,
    };
    bank_transaction(ingested.row, deposit_status)
}

fn bank_transaction(
    row: BankTransaction,
    deposit_status: Option<crate::domain::status::DepositStatus>,
) -> Result<types::BankTransaction, ApiError> {
    Ok(types::BankTransaction {
        status: row.status.spelled(),
        deposit_status: deposit_status.map(Spelled::spelled),
        amount: DecimalString(money::from_units(row.amount)),
        received_at: time(row.received_at)?,
        matched_at: time_opt(row.matched_at)?,
        created_at: time(row.created_at)?,
        id: row.id,
        account_id: row.account_id,
        bank_reference: row.bank_reference,
        currency_code: row.currency,
        remark: row.remark,
        payer_name: row.payer_name,
        payer_account_last4: row.payer_account_last4,
        order_no: row.order_no,
    })
}
