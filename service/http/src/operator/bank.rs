//! Bank transactions: entered, listed and matched to deposits.

use super::{acted_on_order, parse, AsListing};
use crate::app::bank::{self, BankTransaction, Ingested};
use crate::app::{deposits, listings, App};
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::{money, validate};
use crate::enums::Spelled;
use crate::operator::auth::operate;
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{types, ListBankTransactionsQuery, MatchBankTransactionPath};
use payments_wire::server::{BearerToken, Query, SignedJson};
use payments_wire::DecimalString;
use std::sync::Arc;

pub(super) async fn ingest_bank_transaction(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::BankTransactionRequest>,
) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::IngestBankTransaction,
        |app, op| async move {
            let app = &*app;
            let req = parse(&body)?;
            let ingested = bank::ingest(
                app,
                &op,
                bank::NewBankTransaction {
                    account_id: req.account_id,
                    bank_reference: req.bank_reference,
                    amount: req.amount.value(),
                    currency: req.currency_code,
                    remark: req.remark,
                    payer_name: req.payer_name,
                    payer_account_no: req.payer_account_no,
                    received_at: req.received_at.map(|t| t.timestamp()),
                },
            )
            .await?;
            tracing::info!(
                action = "report_bank_transaction",
                bank_transaction_id = %ingested.row.id,
                status = %ingested.row.status,
                order_no = ingested.row.order_no.as_deref(),
                "operator action"
            );
            bank_view(app, ingested).await
        },
    )
    .await
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
    path: Path<MatchBankTransactionPath>,
    body: SignedJson<types::MatchBankTransactionRequest>,
) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::MatchBankTransaction,
        |app, op| async move {
            let app = &*app;
            let req = parse(&body)?;
            let transaction_id = path.into_inner().transaction_id;
            let remarks = validate::optional_text("remarks", req.remarks, 512)?;
            let ingested =
                bank::match_by_hand(app, &op, &transaction_id, &req.order_no, remarks.as_deref())
                    .await?;
            acted_on_order("match_bank_transaction", &req.order_no);
            bank_view(app, ingested).await
        },
    )
    .await
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
