//! The merchant API: the generated `MerchantApi` trait over the domain.

use super::{body_error, deposit_order, fingerprint, withdrawal_order};
use crate::app::balances::{self, Balance};
use crate::app::cashier;
use crate::app::deposits::{self, Deposit, NewDeposit, Payer};
use crate::app::merchants::Merchant;
use crate::app::withdrawals::{self, NewWithdrawal};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::SessionStatus;
use crate::domain::validate;
use crate::http::auth::authenticate;
use crate::http::observe::in_span;
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::merchant::types;
use merchant_api::merchant::{
    FindDepositQuery, FindWithdrawalQuery, GetDepositPath, GetWithdrawalPath, MerchantApi,
};
use payments_wire::server::{Query, SignatureHeaders, SignedJson};
use payments_wire::{DecimalString, SigningFields};
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub enum MerchantApiImpl {}

/// Authenticates a POST and parses its body, in the order the contract
/// promises: authentication failures before field errors.
async fn signed_body<T: DeserializeOwned>(
    app: &App,
    headers: &SignatureHeaders,
    body: &SignedJson<T>,
) -> Result<(Merchant, SigningFields, T), ApiError> {
    let (merchant, fields) = authenticate(app, headers, body.signing_fields()).await?;
    let parsed = body.parse().map_err(body_error)?;
    Ok((merchant, fields, parsed))
}

impl MerchantApi for MerchantApiImpl {
    type Context = Arc<App>;

    async fn create_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        body: SignedJson<types::CreateDepositRequest>,
    ) -> Result<HttpResponseOk<types::CreateDepositResponse>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let (merchant, fields, req) = signed_body(app, &headers, &body).await?;
            // Every field named, no `..`: a field added to the contract stops
            // the build here until it is read, instead of being dropped.
            let types::CreateDepositRequest {
                merchant_order_no,
                amount,
                currency_code,
                callback_url,
                extra_data,
                user_id,
                account_holder,
                mobile,
                email,
                bank_code,
                account_no,
            } = req;
            let currency = app.config.currency(&currency_code)?;
            let amount = crate::domain::money::validate_amount(
                "amount",
                amount.value(),
                &currency_code,
                &currency,
            )?;
            let new = NewDeposit {
                merchant_order_no: merchant_order_no.to_string(),
                amount,
                currency: currency_code,
                callback_url: validate::callback_url(app.config.profile, callback_url)?,
                extra_data: validate::optional_text("extra_data", extra_data, 1024)?,
                user_id: validate::optional_text("user_id", user_id, 128)?,
                payer: Payer {
                    account_holder: validate::optional_text("account_holder", account_holder, 128)?,
                    mobile: validate::optional_text("mobile", mobile, 32)?,
                    email: validate::optional_text("email", email, 254)?,
                    bank_code: validate::optional_text("bank_code", bank_code, 32)?,
                    account_no: validate::optional_text("account_no", account_no, 64)?,
                },
                fingerprint: fingerprint(&fields),
            };
            let order = deposits::create(app, &merchant, new).await?;
            Ok(HttpResponseOk(create_response(&order)))
        })
        .await
    }

    async fn create_cashier_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        body: SignedJson<types::CreateCashierDepositRequest>,
    ) -> Result<HttpResponseOk<types::CashierSession>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let (merchant, fields, req) = signed_body(app, &headers, &body).await?;
            let types::CreateCashierDepositRequest {
                // One value only (`cashier`); the schema has checked it.
                order_type: _,
                merchant_order_no,
                amount,
                currency_code,
                callback_url,
                extra_data,
                user_id,
                payer_bank_cards,
            } = req;
            let currency = app.config.currency(&currency_code)?;
            let amount = match amount {
                Some(a) => Some(crate::domain::money::validate_amount(
                    "amount",
                    a.value(),
                    &currency_code,
                    &currency,
                )?),
                None => None,
            };
            let new = cashier::NewSession {
                merchant_order_no: merchant_order_no.to_string(),
                amount,
                currency: currency_code,
                callback_url: validate::callback_url(app.config.profile, callback_url)?,
                extra_data: validate::optional_text("extra_data", extra_data, 1024)?,
                user_id: validate::optional_text("user_id", user_id, 128)?,
                cards: cashier::saved_cards(payer_bank_cards)?,
                fingerprint: fingerprint(&fields),
            };
            let session = cashier::create(app, &merchant, new).await?;
            Ok(HttpResponseOk(types::CashierSession {
                cashier_url: session.url(app),
                cashier_token: session.token.clone(),
                session_id: session.id.clone(),
                expire_at: crate::clock::from_unix(session.expire_at),
                status: cashier_status(session.status(app.now_unix())),
                order_no: session.order.as_ref().map(|o| o.order_no.clone()),
            }))
        })
        .await
    }

    async fn create_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        body: SignedJson<types::CreateWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let (merchant, fields, req) = signed_body(app, &headers, &body).await?;
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
            let currency = app.config.currency(&currency_code)?;
            let amount = crate::domain::money::validate_amount(
                "amount",
                amount.value(),
                &currency_code,
                &currency,
            )?;
            let new = NewWithdrawal {
                merchant_order_no: merchant_order_no.to_string(),
                amount,
                currency: currency_code,
                beneficiary_name: validate::required_text(
                    "beneficiary_name",
                    beneficiary_name,
                    128,
                )?,
                beneficiary_account: validate::account_number(
                    "beneficiary_account",
                    beneficiary_account,
                )?,
                beneficiary_bank_code: validate::code(
                    "beneficiary_bank_code",
                    beneficiary_bank_code,
                )?,
                beneficiary_bank_branch: validate::optional_text(
                    "beneficiary_bank_branch",
                    beneficiary_bank_branch,
                    128,
                )?,
                callback_url: validate::callback_url(app.config.profile, callback_url)?,
                extra_data: validate::optional_text("extra_data", extra_data, 1024)?,
                fingerprint: fingerprint(&fields),
            };
            let order = withdrawals::create(app, &merchant, new).await?;
            Ok(HttpResponseOk(withdrawal_order(&merchant, &order)))
        })
        .await
    }

    async fn get_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        path: Path<GetDepositPath>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let path = path.into_inner();
            let (merchant, _) =
                authenticate(app, &headers, Ok(headers.get_fields(Some(&path)))).await?;
            let order = deposits::find_by_order_no(app, &merchant.id, &path.order_no).await?;
            Ok(HttpResponseOk(deposit_order(app, &merchant, &order)))
        })
        .await
    }

    async fn find_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        query: Query<FindDepositQuery>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let query = query.into_inner();
            let (merchant, _) =
                authenticate(app, &headers, Ok(headers.get_fields::<()>(None))).await?;
            let order =
                deposits::find_by_merchant_order_no(app, &merchant.id, &query.merchant_order_no)
                    .await?;
            Ok(HttpResponseOk(deposit_order(app, &merchant, &order)))
        })
        .await
    }

    async fn get_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        path: Path<GetWithdrawalPath>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let path = path.into_inner();
            let (merchant, _) =
                authenticate(app, &headers, Ok(headers.get_fields(Some(&path)))).await?;
            let order = withdrawals::find_by_order_no(app, &merchant.id, &path.order_no).await?;
            Ok(HttpResponseOk(withdrawal_order(&merchant, &order)))
        })
        .await
    }

    async fn find_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
        query: Query<FindWithdrawalQuery>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let query = query.into_inner();
            let (merchant, _) =
                authenticate(app, &headers, Ok(headers.get_fields::<()>(None))).await?;
            let order =
                withdrawals::find_by_merchant_order_no(app, &merchant.id, &query.merchant_order_no)
                    .await?;
            Ok(HttpResponseOk(withdrawal_order(&merchant, &order)))
        })
        .await
    }

    async fn get_balances(
        rqctx: RequestContext<Arc<App>>,
        headers: SignatureHeaders,
    ) -> Result<HttpResponseOk<types::BalanceList>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let (merchant, _) =
                authenticate(app, &headers, Ok(headers.get_fields::<()>(None))).await?;
            let items = balances::list(app, &merchant.id).await?;
            Ok(HttpResponseOk(types::BalanceList {
                items: items.iter().map(balance_item).collect(),
                merchant_id: merchant.id,
            }))
        })
        .await
    }
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
