//! The merchant API: the generated `MerchantApi` trait over the domain.

use super::reconciliation::{
    get_statement, list_balance_transactions, list_deposits, list_events, list_withdrawals,
};
use super::{body_error, deposit_order, fingerprint, withdrawal_order};
use crate::app::balances::{self, Balance};
use crate::app::cashier;
use crate::app::deposits::{self, Deposit, NewDeposit, Payer};
use crate::app::listings::Listing;
use crate::app::merchants::Merchant;
use crate::app::withdrawals::{self, NewWithdrawal, WithdrawalDetails};
use crate::app::{self, App};
use crate::auth::{authenticate, client_address, Asks};
use crate::billing;
use crate::domain::error::ApiError;
use crate::domain::status::SessionStatus;
use crate::domain::validate;
use crate::observe::{answered, Answer};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::merchant::types;
use merchant_api::merchant::{
    FindDepositQuery, FindWithdrawalQuery, GetBillingStatementDocumentPath,
    GetBillingStatementPath, GetDepositPath, GetStatementPath, GetStatementQuery,
    GetWithdrawalPath, ListBalanceTransactionsQuery, ListBillingStatementsQuery, ListDepositsQuery,
    ListEventsQuery, ListWithdrawalsQuery, MerchantApi,
};
use payments_wire::server::{Query, SignatureHeaders, SignedJson};
use payments_wire::{DecimalString, SigningFields, SigningFieldsError};
use rust_decimal::Decimal;
use serde::de::DeserializeOwned;
use std::future::Future;
use std::sync::Arc;

pub enum MerchantApiImpl {}

/// Every merchant endpoint: the request's span, the signature checked over
/// `fields`, then the work, answered as 200.
async fn as_merchant<T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &SignatureHeaders,
    fields: Result<SigningFields, SigningFieldsError>,
    asks: Asks,
    work: impl FnOnce(Arc<App>, Merchant, SigningFields) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    answered(rqctx, async {
        let app = rqctx.context().clone();
        let client = client_address(rqctx);
        let proven = authenticate(&app, headers, fields, client, asks).await?;
        let _place = proven.place;
        // On the heap: an endpoint's work is a large future, and the
        // layers above would otherwise copy it on the worker's stack.
        Box::pin(work(app, proven.merchant, proven.fields)).await
    })
    .await
}

/// A read: the signature covers the query string, and a path's fields
/// (`Path`); a query's fields are in the query string already (`Query`).
async fn signed_read<I: serde::Serialize, T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &SignatureHeaders,
    input: Read<I>,
    work: impl FnOnce(Arc<App>, Merchant, I) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    let (input, fields) = match input {
        Read::Path(path) => {
            let fields = headers.get_fields(Some(&path));
            (path, fields)
        }
        Read::Query(query) => (query, headers.get_fields::<()>(None)),
    };
    let fields = Ok(fields);
    as_merchant(rqctx, headers, fields, Asks::Read, |app, merchant, _| {
        work(app, merchant, input)
    })
    .await
}

/// What a read takes from its request.
enum Read<I> {
    Path(I),
    Query(I),
}

/// A request body that passed its signature, with the fields it was
/// signed over.
struct Signed<B> {
    fields: SigningFields,
    body: B,
}

/// The same for a signed body, parsed only once the signature holds:
/// authentication failures come before field errors, as the contract
/// promises.
async fn signed_post<B: DeserializeOwned, T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &SignatureHeaders,
    body: SignedJson<B>,
    work: impl FnOnce(Arc<App>, Merchant, Signed<B>) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    let fields = body.signing_fields();
    as_merchant(
        rqctx,
        headers,
        fields,
        Asks::Write,
        |app, merchant, fields| async move {
            let body = body.parse().map_err(body_error)?;
            work(app, merchant, Signed { fields, body }).await
        },
    )
    .await
}

/// The generated trait's methods, each handing its endpoint's work (a
/// function of the same name below) to `signed_post` or `signed_read`.
macro_rules! endpoints {
    ($(post $post:ident($body:ty) -> $pout:ty;)* $(read $read:ident($input:ident: $extract:ident<$in:ty>) -> $rout:ty;)*) => {
        $(
            async fn $post(
                rqctx: RequestContext<Arc<App>>,
                headers: SignatureHeaders,
                body: SignedJson<$body>,
            ) -> Result<HttpResponseOk<$pout>, HttpError> {
                signed_post(&rqctx, &headers, body, $post).await
            }
        )*
        $(
            async fn $read(
                rqctx: RequestContext<Arc<App>>,
                headers: SignatureHeaders,
                $input: $extract<$in>,
            ) -> Result<HttpResponseOk<$rout>, HttpError> {
                signed_read(&rqctx, &headers, Read::$extract($input.into_inner()), $read).await
            }
        )*
    };
}

impl MerchantApi for MerchantApiImpl {
    type Context = Arc<App>;

    endpoints! {
        post create_deposit(types::CreateDepositRequest) -> types::CreateDepositResponse;
        post create_cashier_deposit(types::CreateCashierDepositRequest) -> types::CashierSession;
        post create_withdrawal(types::CreateWithdrawalRequest) -> types::WithdrawalOrder;
        read get_deposit(path: Path<GetDepositPath>) -> types::DepositOrder;
        read find_deposit(query: Query<FindDepositQuery>) -> types::DepositOrder;
        read get_withdrawal(path: Path<GetWithdrawalPath>) -> types::WithdrawalOrder;
        read find_withdrawal(query: Query<FindWithdrawalQuery>) -> types::WithdrawalOrder;
        read list_events(query: Query<ListEventsQuery>) -> types::EventList;
        read list_balance_transactions(query: Query<ListBalanceTransactionsQuery>) -> types::BalanceTransactionList;
        read list_deposits(query: Query<ListDepositsQuery>) -> types::DepositOrderList;
        read list_withdrawals(query: Query<ListWithdrawalsQuery>) -> types::WithdrawalOrderList;
        read list_billing_statements(query: Query<ListBillingStatementsQuery>) -> types::BillingStatementList;
        read get_billing_statement(path: Path<GetBillingStatementPath>) -> types::BillingStatement;
    }

    async fn get_billing_statement_document(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        path: Path<GetBillingStatementDocumentPath>,
    ) -> Result<http::Response<dropshot::Body>, HttpError> {
        let read = Read::Path(path.into_inner());
        billing::document(
            signed_read(&rqctx, &headers, read, |app, merchant, path| async move {
                let bytes =
                    app::billing::document(&app, Some(&merchant.id), &path.statement_id).await?;
                Ok(billing::Pdf { bytes })
            })
            .await,
        )
    }

    async fn get_statement(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        path: Path<GetStatementPath>,
        query: Query<GetStatementQuery>,
    ) -> Result<HttpResponseOk<types::DailyStatement>, HttpError> {
        let path = path.into_inner();
        let fields = Ok(headers.get_fields(Some(&path)));
        let query = query.into_inner();
        as_merchant(&rqctx, &headers, fields, Asks::Read, |app, merchant, _| {
            get_statement(app, merchant, path, query)
        })
        .await
    }

    async fn get_balances(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
    ) -> Result<HttpResponseOk<types::BalanceList>, HttpError> {
        let fields = Ok(headers.get_fields::<()>(None));
        as_merchant(
            &rqctx,
            &headers,
            fields,
            Asks::Read,
            |app, merchant, _| async move {
                let items = balances::list(&app, &merchant.id).await?;
                Ok(types::BalanceList {
                    items: items.iter().map(balance_item).collect(),
                    merchant_id: merchant.id,
                })
            },
        )
        .await
    }
}

async fn list_billing_statements(
    app: Arc<App>,
    merchant: Merchant,
    q: ListBillingStatementsQuery,
) -> Result<types::BillingStatementList, ApiError> {
    let listing = Listing {
        limit: q.limit,
        cursor: q.cursor,
        merchant_id: Some(merchant.id),
        ..Listing::default()
    };
    let (items, next_cursor) = billing::page(&app, listing).await?;
    Ok(types::BillingStatementList { items, next_cursor })
}

async fn get_billing_statement(
    app: Arc<App>,
    merchant: Merchant,
    path: GetBillingStatementPath,
) -> Result<types::BillingStatement, ApiError> {
    let found = app::billing::find(&app, Some(&merchant.id), &path.statement_id).await?;
    billing::shown(&app, &found)
}

async fn get_deposit(
    app: Arc<App>,
    merchant: Merchant,
    path: GetDepositPath,
) -> Result<types::DepositOrder, ApiError> {
    let order = deposits::find_by_order_no(&app, &merchant.id, &path.order_no).await?;
    Ok(deposit_order(&app, &merchant, &order))
}

async fn find_deposit(
    app: Arc<App>,
    merchant: Merchant,
    query: FindDepositQuery,
) -> Result<types::DepositOrder, ApiError> {
    let order =
        deposits::find_by_merchant_order_no(&app, &merchant.id, &query.merchant_order_no).await?;
    Ok(deposit_order(&app, &merchant, &order))
}

async fn get_withdrawal(
    app: Arc<App>,
    merchant: Merchant,
    path: GetWithdrawalPath,
) -> Result<types::WithdrawalOrder, ApiError> {
    let order = withdrawals::find_by_order_no(&app, &merchant.id, &path.order_no).await?;
    withdrawal_order(&merchant, &order)
}

async fn find_withdrawal(
    app: Arc<App>,
    merchant: Merchant,
    query: FindWithdrawalQuery,
) -> Result<types::WithdrawalOrder, ApiError> {
    let order =
        withdrawals::find_by_merchant_order_no(&app, &merchant.id, &query.merchant_order_no)
            .await?;
    withdrawal_order(&merchant, &order)
}

/// A create-deposit request as the use case takes it.
fn new_deposit(
    app: &App,
    req: types::CreateDepositRequest,
    fields: &SigningFields,
) -> Result<NewDeposit, ApiError> {
    // Every field named, no `..`: a field added to the contract stops
    // the build here until it is read, instead of being dropped.
    let types::CreateDepositRequest {
        merchant_order_no,
        amount,
        currency_code,
        callback_url,
        return_url,
        extra_data,
        user_id,
        account_holder,
        mobile,
        email,
        bank_code,
        account_no,
    } = req;
    let amount = amount_in(app, amount.value(), &currency_code)?;
    Ok(NewDeposit {
        merchant_order_no: merchant_order_no.to_string(),
        amount,
        currency: currency_code,
        callback_url: validate::callback_url(app.config.profile, callback_url)?,
        return_url: validate::return_url(app.config.profile, return_url)?,
        extra_data: validate::optional_text("extra_data", extra_data, 1024)?,
        user_id: validate::optional_text("user_id", user_id, 128)?,
        payer: Payer {
            account_holder: validate::optional_text("account_holder", account_holder, 128)?,
            mobile: validate::optional_text("mobile", mobile, 32)?,
            email: validate::optional_text("email", email, 254)?,
            bank_code: validate::optional_text("bank_code", bank_code, 32)?,
            account_no: validate::optional_text("account_no", account_no, 64)?,
        },
        fingerprint: fingerprint(fields),
    })
}

/// A create-cashier-session request as the use case takes it.
fn new_session(
    app: &App,
    req: types::CreateCashierDepositRequest,
    fields: &SigningFields,
) -> Result<cashier::NewSession, ApiError> {
    let types::CreateCashierDepositRequest {
        // One value only (`cashier`); the schema has checked it.
        order_type: _,
        merchant_order_no,
        amount,
        currency_code,
        callback_url,
        return_url,
        extra_data,
        user_id,
        payer_bank_cards,
    } = req;
    let amount = amount
        .map(|a| amount_in(app, a.value(), &currency_code))
        .transpose()?;
    Ok(cashier::NewSession {
        merchant_order_no: merchant_order_no.to_string(),
        amount,
        currency: currency_code,
        callback_url: validate::callback_url(app.config.profile, callback_url)?,
        return_url: validate::return_url(app.config.profile, return_url)?,
        extra_data: validate::optional_text("extra_data", extra_data, 1024)?,
        user_id: validate::optional_text("user_id", user_id, 128)?,
        cards: cashier::saved_cards(payer_bank_cards)?,
        fingerprint: fingerprint(fields),
    })
}

/// A create-withdrawal request as the use case takes it.
fn new_withdrawal(
    app: &App,
    req: types::CreateWithdrawalRequest,
    fields: &SigningFields,
) -> Result<NewWithdrawal, ApiError> {
    let types::CreateWithdrawalRequest {
        merchant_order_no,
        amount,
        currency_code,
        beneficiary_name,
        beneficiary_account,
        beneficiary_bank_code,
        beneficiary_bank_branch,
        callback_url,
        extra_data,
    } = req;
    let amount = amount_in(app, amount.value(), &currency_code)?;
    Ok(NewWithdrawal {
        merchant_order_no: merchant_order_no.to_string(),
        amount,
        currency: currency_code,
        beneficiary_name: validate::required_text("beneficiary_name", beneficiary_name, 128)?,
        beneficiary_account: validate::account_number("beneficiary_account", beneficiary_account)?,
        beneficiary_bank_code: validate::code("beneficiary_bank_code", beneficiary_bank_code)?,
        details: WithdrawalDetails {
            beneficiary_bank_branch: validate::optional_text(
                "beneficiary_bank_branch",
                beneficiary_bank_branch,
                128,
            )?,
            callback_url: validate::callback_url(app.config.profile, callback_url)?,
            extra_data: validate::optional_text("extra_data", extra_data, 1024)?,
        },
        fingerprint: fingerprint(fields),
    })
}

/// `amount` checked against its currency's digits and bounds.
fn amount_in(app: &App, amount: Decimal, currency_code: &str) -> Result<Decimal, ApiError> {
    let currency = app.config.currency(currency_code)?;
    crate::domain::money::validate_amount("amount", amount, currency_code, &currency)
}

/// `create_deposit`, once its signature holds.
async fn create_deposit(
    app: Arc<App>,
    merchant: Merchant,
    signed: Signed<types::CreateDepositRequest>,
) -> Result<types::CreateDepositResponse, ApiError> {
    let app = &*app;
    let new = new_deposit(app, signed.body, &signed.fields)?;
    let order = deposits::create(app, &merchant, new).await?;
    Ok(create_response(&order))
}

/// `create_cashier_deposit`, once its signature holds.
async fn create_cashier_deposit(
    app: Arc<App>,
    merchant: Merchant,
    signed: Signed<types::CreateCashierDepositRequest>,
) -> Result<types::CashierSession, ApiError> {
    let app = &*app;
    let new = new_session(app, signed.body, &signed.fields)?;
    let session = cashier::create(app, &merchant, new).await?;
    Ok(types::CashierSession {
        cashier_url: session.url(app),
        cashier_token: session.token.clone(),
        session_id: session.id.clone(),
        expire_at: super::time(session.expire_at)?,
        status: cashier_status(session.status(app.now_unix())),
        order_no: session.order.as_ref().map(|o| o.order_no.clone()),
    })
}

/// `create_withdrawal`, once its signature holds.
async fn create_withdrawal(
    app: Arc<App>,
    merchant: Merchant,
    signed: Signed<types::CreateWithdrawalRequest>,
) -> Result<types::WithdrawalOrder, ApiError> {
    let app = &*app;
    let new = new_withdrawal(app, signed.body, &signed.fields)?;
    let order = withdrawals::create(app, &merchant, new).await?;
    withdrawal_order(&merchant, &order)
}

fn create_response(order: &Deposit) -> types::CreateDepositResponse {
    let account = order.account.as_ref();
    types::CreateDepositResponse {
        order_no: order.order_no.clone(),
        requested_amount: DecimalString(order.requested_amount),
        amount: DecimalString(order.amount),
        currency_code: order.currency.clone(),
        bank_code: account.map(|a| a.bank_code.clone()),
        bank_name: account.map(|a| a.bank_name.clone()),
        bank_branch: account.and_then(|a| a.bank_branch.clone()),
        account_no: account.map(|a| a.account_no.clone()),
        account_holder: account.map(|a| a.account_holder.clone()),
        remark: order.expected_remark.clone(),
        expire_at: order.expire_at,
        payment_url: order.payment_url.clone(),
        payment_info: order.payment_snapshot.clone(),
    }
}

fn cashier_status(status: SessionStatus) -> types::CashierSessionStatus {
    match status {
        SessionStatus::Open => types::CashierSessionStatus::Open,
        SessionStatus::OrderCreated => types::CashierSessionStatus::OrderCreated,
        SessionStatus::Completed => types::CashierSessionStatus::Completed,
        SessionStatus::Expired => types::CashierSessionStatus::Expired,
        SessionStatus::Cancelled => types::CashierSessionStatus::Cancelled,
    }
}

fn balance_item(b: &Balance) -> types::BalanceItem {
    types::BalanceItem {
        id: b.id.clone(),
        merchant_id: b.merchant_id.clone(),
        currency_code: b.currency.clone(),
        available_balance: DecimalString(b.available),
        frozen_balance: DecimalString(b.frozen),
        total_balance: DecimalString(b.total()),
        version: b.version,
        created_at: b.created_at,
        updated_at: b.updated_at,
    }
}
