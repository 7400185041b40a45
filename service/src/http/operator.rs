//! The operator API: merchants and their settings, withdrawal review, the
//! ledger check.

use super::{body_error, deposit_order, reshape, time, time_opt, withdrawal_order};
use crate::app::bank::{self, Ingested};
use crate::app::callbacks::signing;
use crate::app::deposits::{self, Deposit};
use crate::app::listings::{self, Listing};
use crate::app::merchants::{self, AutoApproval};
use crate::app::withdrawals::{self, Withdrawal};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::fees::Direction;
use crate::http::operator_auth::{operate, Operator};
use crate::http::operator_views::{
    bank_view, channel_notification_view, delivery_view, delivery_with_history, signing_view,
};
use crate::{app::ledger, domain::money, domain::validate};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::types;
use merchant_api::operator::{
    ApproveWithdrawalPath, CancelDepositPath, CompleteDepositPath, IssueApiKeyPath,
    IssueCallbackSecretPath, ListBankTransactionsQuery, ListCallbackDeliveriesQuery,
    ListChannelNotificationsQuery, ListDepositsQuery, ListWithdrawalsQuery,
    MatchBankTransactionPath, OperatorApi, ReadCallbackDeliveryPath, ReadCallbackSigningPath,
    ReadCashierSessionPath, ReadDepositPath, ReadWithdrawalPath, RejectWithdrawalPath,
    ResolveWithdrawalPath, RetryCallbackDeliveryPath, SetAutoApprovalPath, SetCallbackSigningPath,
    SetCallbackTimeoutPath, SetMerchantFeePath, SetRateLimitPath, SetReceivingAccountPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use payments_wire::DecimalString;
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub enum OperatorApiImpl {}

/// An operator's action on an order, at info: the request's span names the
/// operator, and `order_no` lets one search find the order's whole story.
fn acted_on_order(action: &'static str, order_no: &str) {
    tracing::info!(action, order_no, "operator action");
}

/// An operator's change to a merchant's settings or keys (never the key).
fn acted_on_merchant(action: &'static str, merchant_id: &str) {
    tracing::info!(action, merchant_id, "operator action");
}

fn parse<T: DeserializeOwned>(body: &SignedJson<T>) -> Result<T, ApiError> {
    body.parse().map_err(body_error)
}

async fn reviewed(app: &App, order: Withdrawal) -> Result<types::WithdrawalOrder, ApiError> {
    let merchant = merchants::find(app, &order.row.merchant_id).await?;
    reshape(&withdrawal_order(&merchant, &order)?)
}

fn remarks(body: &SignedJson<types::ReviewRequest>) -> Result<Option<String>, ApiError> {
    validate::optional_text("remarks", parse(body)?.remarks, 512)
}

/// A deposit in the operator contract's shape.
async fn deposit_view(app: &App, order: &Deposit) -> Result<types::DepositOrder, ApiError> {
    let merchant = merchants::find(app, &order.merchant_id).await?;
    reshape(&deposit_order(app, &merchant, order))
}

/// Each listing's query as the use case takes it: the page, and the
/// filters that listing has.
macro_rules! listing_from {
    ($($query:ty => $filter:ident),* $(,)?) => {$(
        impl From<$query> for Listing {
            fn from(q: $query) -> Listing {
                Listing {
                    limit: q.limit,
                    cursor: q.cursor,
                    status: q.status,
                    $filter: q.$filter,
                    ..Listing::default()
                }
            }
        }
    )*};
}

listing_from! {
    ListDepositsQuery => merchant_id,
    ListWithdrawalsQuery => merchant_id,
    ListBankTransactionsQuery => account_id,
    ListCallbackDeliveriesQuery => order_no,
}

impl OperatorApi for OperatorApiImpl {
    type Context = Arc<App>;

    async fn create_merchant(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::CreateMerchantRequest>,
    ) -> Result<HttpResponseOk<types::CreatedMerchant>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let req = parse(&body)?;
            let created = merchants::create(app, &req.code, &req.name).await?;
            acted_on_merchant("create_merchant", &created.merchant.id);
            Ok(types::CreatedMerchant {
                merchant_id: created.merchant.id,
                merchant_code: created.merchant.code,
                name: created.merchant.name,
                api_key: created.api_key,
            })
        })
        .await
    }

    async fn set_merchant_fee(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetMerchantFeePath>,
        body: SignedJson<types::FeeRuleRequest>,
    ) -> Result<HttpResponseOk<types::FeeRule>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let merchant_id = path.into_inner().merchant_id;
            let req = parse(&body)?;
            let direction = match req.direction {
                types::FeeDirection::Deposit => Direction::Deposit,
                types::FeeDirection::Withdrawal => Direction::Withdrawal,
            };
            let rate = merchants::set_fee(
                app,
                &merchant_id,
                &req.currency_code,
                direction,
                req.percent.value(),
                req.fixed.value(),
                req.minimum.value(),
            )
            .await?;
            acted_on_merchant("set_merchant_fee", &merchant_id);
            Ok(types::FeeRule {
                merchant_id,
                currency_code: req.currency_code,
                direction: req.direction,
                percent: DecimalString(rate.percent),
                fixed: DecimalString(rate.fixed),
                minimum: DecimalString(rate.minimum),
            })
        })
        .await
    }

    async fn set_auto_approval(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetAutoApprovalPath>,
        body: SignedJson<types::AutoApprovalRequest>,
    ) -> Result<HttpResponseOk<types::AutoApproval>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let merchant_id = path.into_inner().merchant_id;
            let req = parse(&body)?;
            let setting = match req.mode {
                types::AutoApprovalMode::Off => AutoApproval::Off,
                types::AutoApprovalMode::Always => AutoApproval::Always,
                types::AutoApprovalMode::UpTo => merchants::auto_approval_up_to(
                    app,
                    req.limits.iter().map(|(c, max)| (c.clone(), max.value())),
                )?,
            };
            let merchant = merchants::set_auto_approval(app, &merchant_id, setting).await?;
            acted_on_merchant("set_auto_approval", &merchant_id);
            Ok(types::AutoApproval {
                merchant_id,
                mode: req.mode,
                limits: merchant
                    .auto_approval
                    .limits()
                    .into_iter()
                    .map(|(c, units)| (c, DecimalString(money::from_units(units))))
                    .collect(),
            })
        })
        .await
    }

    async fn set_rate_limit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetRateLimitPath>,
        body: SignedJson<types::RateLimitRequest>,
    ) -> Result<HttpResponseOk<types::RateLimit>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let merchant_id = path.into_inner().merchant_id;
            let req = parse(&body)?;
            merchants::set_rate_limit(app, &merchant_id, req.requests_per_minute, req.burst)
                .await?;
            acted_on_merchant("set_rate_limit", &merchant_id);
            Ok(types::RateLimit {
                merchant_id,
                requests_per_minute: req.requests_per_minute,
                burst: req.burst,
            })
        })
        .await
    }

    async fn approve_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ApproveWithdrawalPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        operate(&rqctx, &headers, |app, Operator { name }| async move {
            let app = &*app;
            let order =
                withdrawals::approve(app, &path.into_inner().order_no, &name, remarks(&body)?)
                    .await?;
            acted_on_order("approve_withdrawal", &order.row.order_no);
            reviewed(app, order).await
        })
        .await
    }

    async fn resolve_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ResolveWithdrawalPath>,
        body: SignedJson<types::ResolveWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        operate(&rqctx, &headers, |app, Operator { name }| async move {
            let app = &*app;
            let request = parse(&body)?;
            let resolution = match request.outcome {
                types::WithdrawalResolution::Completed => withdrawals::Resolution::Completed,
                types::WithdrawalResolution::Failed => withdrawals::Resolution::Failed,
            };
            let remarks = validate::required_text("remarks", request.remarks, 512)?;
            let reference = validate::optional_text("bank_reference", request.bank_reference, 128)?;
            let order = withdrawals::resolve(
                app,
                &path.into_inner().order_no,
                &name,
                resolution,
                remarks,
                reference,
            )
            .await?;
            acted_on_order("resolve_withdrawal", &order.row.order_no);
            reviewed(app, order).await
        })
        .await
    }

    async fn reject_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RejectWithdrawalPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        operate(&rqctx, &headers, |app, Operator { name }| async move {
            let app = &*app;
            let order =
                withdrawals::reject(app, &path.into_inner().order_no, &name, remarks(&body)?)
                    .await?;
            acted_on_order("reject_withdrawal", &order.row.order_no);
            reviewed(app, order).await
        })
        .await
    }

    async fn cancel_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<CancelDepositPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            remarks(&body)?;
            let order = crate::app::deposits::cancel(app, &path.into_inner().order_no).await?;
            acted_on_order("cancel_deposit", &order.order_no);
            let merchant = merchants::find(app, &order.merchant_id).await?;
            reshape(&deposit_order(app, &merchant, &order))
        })
        .await
    }

    async fn check_ledger(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::LedgerReport>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let report = ledger::check(app).await?;
            Ok(types::LedgerReport {
                ok: report.ok(),
                entries_checked: report.entries_checked,
                balances_checked: report.balances_checked,
                differences: report
                    .differences
                    .into_iter()
                    .map(|d| types::LedgerDifference {
                        kind: match d.kind {
                            "unbalanced_entry" => types::LedgerDifferenceKind::UnbalancedEntry,
                            "negative_balance" => types::LedgerDifferenceKind::NegativeBalance,
                            _ => types::LedgerDifferenceKind::BalanceMismatch,
                        },
                        reference: d.reference,
                        detail: d.detail,
                    })
                    .collect(),
            })
        })
        .await
    }
    async fn list_deposits(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListDepositsQuery>,
    ) -> Result<HttpResponseOk<types::DepositPage>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let page = listings::deposits(app, query.into_inner().into()).await?;
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

    async fn read_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadDepositPath>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let order = deposits::find_any(app, &path.into_inner().order_no).await?;
            deposit_view(app, &order).await
        })
        .await
    }

    async fn complete_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<CompleteDepositPath>,
        body: SignedJson<types::CompleteDepositRequest>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let req = parse(&body)?;
            validate::optional_text("remarks", req.remarks, 512)?;
            let order = deposits::complete(
                app,
                &path.into_inner().order_no,
                req.actual_amount.map(|a| a.value()),
            )
            .await?;
            acted_on_order("complete_deposit", &order.order_no);
            deposit_view(app, &order).await
        })
        .await
    }

    async fn list_withdrawals(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListWithdrawalsQuery>,
    ) -> Result<HttpResponseOk<types::WithdrawalPage>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let page = listings::withdrawals(app, query.into_inner().into()).await?;
            let items = page
                .items
                .iter()
                .map(|(order, merchant)| reshape(&withdrawal_order(merchant, order)?))
                .collect::<Result<_, _>>()?;
            Ok(types::WithdrawalPage {
                items,
                next_cursor: page.next_cursor,
            })
        })
        .await
    }

    async fn read_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadWithdrawalPath>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let order = withdrawals::find_any(app, &path.into_inner().order_no).await?;
            reviewed(app, order).await
        })
        .await
    }

    async fn issue_api_key(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueApiKeyPath>,
        body: SignedJson<types::IssueApiKeyRequest>,
    ) -> Result<HttpResponseOk<types::IssuedApiKey>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let merchant_id = path.into_inner().merchant_id;
            let grace = parse(&body)?.grace_seconds;
            let issued = merchants::issue_api_key(app, &merchant_id, grace).await?;
            acted_on_merchant("issue_api_key", &merchant_id);
            Ok(types::IssuedApiKey {
                merchant_id,
                api_key: issued.api_key,
                previous_keys_expire_at: time_opt(issued.previous_keys_expire_at)?,
            })
        })
        .await
    }

    async fn read_callback_signing(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCallbackSigningPath>,
    ) -> Result<HttpResponseOk<types::CallbackSigning>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let merchant_id = path.into_inner().merchant_id;
            let signing = signing::read(&app, &merchant_id).await?;
            signing_view(merchant_id, signing)
        })
        .await
    }

    async fn set_callback_signing(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetCallbackSigningPath>,
        body: SignedJson<types::CallbackSigningRequest>,
    ) -> Result<HttpResponseOk<types::CallbackSigning>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let merchant_id = path.into_inner().merchant_id;
            let scheme = parse(&body)?.scheme.into();
            let signing = signing::set_scheme(&app, &merchant_id, scheme).await?;
            acted_on_merchant("set_callback_signing", &merchant_id);
            signing_view(merchant_id, signing)
        })
        .await
    }

    async fn issue_callback_secret(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueCallbackSecretPath>,
        body: SignedJson<types::IssueCallbackSecretRequest>,
    ) -> Result<HttpResponseOk<types::IssuedCallbackSecret>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let merchant_id = path.into_inner().merchant_id;
            let overlap = parse(&body)?.overlap_seconds;
            let (signing, previous_end) =
                signing::issue_secret(&app, &merchant_id, overlap).await?;
            acted_on_merchant("issue_callback_secret", &merchant_id);
            Ok(types::IssuedCallbackSecret {
                merchant_id,
                scheme: signing.scheme.into(),
                callback_secret: signing
                    .new_secret
                    .ok_or_else(|| ApiError::Internal("a rotation issued no secret".into()))?,
                previous_secrets_expire_at: time_opt(previous_end)?,
            })
        })
        .await
    }

    async fn set_callback_timeout(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetCallbackTimeoutPath>,
        body: SignedJson<types::CallbackTimeoutRequest>,
    ) -> Result<HttpResponseOk<types::CallbackTimeout>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let merchant_id = path.into_inner().merchant_id;
            let seconds = parse(&body)?.callback_timeout_seconds;
            let merchant = merchants::set_callback_timeout(app, &merchant_id, seconds).await?;
            acted_on_merchant("set_callback_timeout", &merchant_id);
            Ok(types::CallbackTimeout {
                merchant_id,
                callback_timeout_seconds: i64::from(merchant.callback_timeout_seconds),
            })
        })
        .await
    }

    async fn set_receiving_account(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetReceivingAccountPath>,
        body: SignedJson<types::ReceivingAccountRequest>,
    ) -> Result<HttpResponseOk<types::ReceivingAccountAssignment>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let merchant_id = path.into_inner().merchant_id;
            let account_id = parse(&body)?.account_id;
            merchants::set_receiving_account(app, &merchant_id, &account_id).await?;
            acted_on_merchant("set_receiving_account", &merchant_id);
            let account = app
                .config
                .receiving_account(&account_id)
                .ok_or_else(|| ApiError::AccountNotFound(account_id.clone()))?;
            Ok(types::ReceivingAccountAssignment {
                merchant_id,
                currency_code: account.currency.clone(),
                account_id: account.id.clone(),
                floating_amount: account.floating_amount,
                reports_match_first: account.reports_match_first,
            })
        })
        .await
    }

    async fn ingest_bank_transaction(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::BankTransactionRequest>,
    ) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let req = parse(&body)?;
            let ingested = bank::ingest(
                app,
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
        })
        .await
    }

    async fn list_bank_transactions(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListBankTransactionsQuery>,
    ) -> Result<HttpResponseOk<types::BankTransactionPage>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let page = listings::bank_transactions(app, query.into_inner().into()).await?;
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

    async fn match_bank_transaction(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<MatchBankTransactionPath>,
        body: SignedJson<types::MatchBankTransactionRequest>,
    ) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let req = parse(&body)?;
            validate::optional_text("remarks", req.remarks, 512)?;
            let ingested =
                bank::match_by_hand(app, &path.into_inner().transaction_id, &req.order_no).await?;
            acted_on_order("match_bank_transaction", &req.order_no);
            bank_view(app, ingested).await
        })
        .await
    }

    async fn list_callback_deliveries(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListCallbackDeliveriesQuery>,
    ) -> Result<HttpResponseOk<types::CallbackDeliveryPage>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let page = listings::callback_deliveries(app, query.into_inner().into()).await?;
            Ok(types::CallbackDeliveryPage {
                items: page
                    .items
                    .into_iter()
                    .map(|r| delivery_view(r, Vec::new()))
                    .collect::<Result<_, ApiError>>()?,
                next_cursor: page.next_cursor,
            })
        })
        .await
    }

    async fn list_channel_notifications(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListChannelNotificationsQuery>,
    ) -> Result<HttpResponseOk<types::ChannelNotificationPage>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let q = query.into_inner();
            let channel_id = match q.channel_code.as_deref().map(|c| app.channels.by_code(c)) {
                Some(None) => {
                    return Ok(types::ChannelNotificationPage {
                        items: Vec::new(),
                        next_cursor: None,
                    })
                }
                known => known.flatten().map(|c| c.id().to_string()),
            };
            let listing = Listing {
                limit: q.limit,
                cursor: q.cursor,
                status: q.outcome,
                order_no: q.order_no,
                channel_id,
                ..Listing::default()
            };
            let page = listings::channel_notifications(&app, listing).await?;
            Ok(types::ChannelNotificationPage {
                items: page
                    .items
                    .into_iter()
                    .map(|r| channel_notification_view(&app, r))
                    .collect::<Result<_, ApiError>>()?,
                next_cursor: page.next_cursor,
            })
        })
        .await
    }

    async fn read_callback_delivery(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCallbackDeliveryPath>,
    ) -> Result<HttpResponseOk<types::CallbackDelivery>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let row = crate::app::callbacks::find(app, &path.into_inner().delivery_id).await?;
            delivery_with_history(app, row).await
        })
        .await
    }

    async fn retry_callback_delivery(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RetryCallbackDeliveryPath>,
    ) -> Result<HttpResponseOk<types::CallbackDelivery>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let row = crate::app::callbacks::retry(app, &path.into_inner().delivery_id).await?;
            acted_on_order("retry_callback", &row.order_no);
            delivery_with_history(app, row).await
        })
        .await
    }

    async fn read_cashier_session(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCashierSessionPath>,
    ) -> Result<HttpResponseOk<types::CashierSessionRecord>, HttpError> {
        operate(&rqctx, &headers, |app, _| async move {
            let app = &*app;
            let session = crate::app::cashier::by_id(app, &path.into_inner().session_id).await?;
            let merchant = merchants::find(app, &session.merchant_id).await?;
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
        })
        .await
    }
}
