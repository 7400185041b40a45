//! The operator API: merchants and their settings, withdrawal review, the
//! ledger check.

use super::{body_error, deposit_order, reshape};
use crate::app::audit::{self, Target};
use crate::app::bank::{self, Ingested};
use crate::app::callbacks::signing;
use crate::app::deposits::{self, Deposit};
use crate::app::listings::{self, Listing};
use crate::app::merchants;
use crate::app::withdrawals::{self, Withdrawal};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::validate;
use crate::http::merchant_settings;
use crate::http::observe::answered;
use crate::http::operator_auth::operate;
use crate::http::operator_views::{bank_view, delivery_view, delivery_with_history, signing_view};
use crate::http::owners;
use crate::http::people;
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::types;
use merchant_api::operator::{
    ApproveWithdrawalPath, CancelDepositPath, ChangeOperatorPath, CompleteDepositPath,
    InviteOwnerPath, IssueApiKeyPath, IssueCallbackSecretPath, IssueOperatorTokenPath,
    ListAuditEventsQuery, ListBankTransactionsQuery, ListCallbackDeliveriesQuery,
    ListChannelNotificationsQuery, ListDepositsQuery, ListOperatorTokensPath, ListOperatorsQuery,
    ListOwnerInvitationsPath, ListOwnerInvitationsQuery, ListWithdrawalsQuery,
    MatchBankTransactionPath, OperatorApi, ReadCallbackDeliveryPath, ReadCallbackSigningPath,
    ReadCashierSessionPath, ReadDepositPath, ReadWithdrawalPath, RejectWithdrawalPath,
    ResendOwnerInvitationPath, ResolveWithdrawalPath, RetryCallbackDeliveryPath,
    RevokeOperatorTokenPath, RevokeOwnerInvitationPath, SetAutoApprovalPath,
    SetCallbackSigningPath, SetCallbackTimeoutPath, SetMerchantFeePath, SetRateLimitPath,
    SetReceivingAccountPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub enum OperatorApiImpl {}

/// An operator's action on an order, at info: the request's span names the
/// operator, and `order_no` lets one search find the order's whole story.
fn acted_on_order(action: &'static str, order_no: &str) {
    tracing::info!(action, order_no, "operator action");
}

fn parse<T: DeserializeOwned>(body: &SignedJson<T>) -> Result<T, ApiError> {
    body.parse().map_err(body_error)
}

async fn reviewed(app: &App, order: Withdrawal) -> Result<types::WithdrawalOrder, ApiError> {
    let merchant = merchants::find(app, &order.row.merchant_id).await?;
    people::withdrawal_view(app, &merchant, &order).await
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
    crate::http::billing::operator_endpoints!();

    type Context = Arc<App>;

    async fn create_merchant(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::CreateMerchantRequest>,
    ) -> Result<HttpResponseOk<types::CreatedMerchant>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::CreateMerchant,
            |app, _| async move {
                let app = &*app;
                audit::on(Target::NewMerchant);
                let req = parse(&body)?;
                let created = merchants::create(app, &req.code, &req.name).await?;
                tracing::info!(action = "create_merchant", merchant_id = %created.merchant.id, "operator action");
                Ok(types::CreatedMerchant {
                    merchant_id: created.merchant.id,
                    merchant_code: created.merchant.code,
                    name: created.merchant.name,
                    api_key: created.api_key,
                })
            },
        )
        .await
    }

    async fn set_merchant_fee(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetMerchantFeePath>,
        body: SignedJson<types::FeeRuleRequest>,
    ) -> Result<HttpResponseOk<types::FeeRule>, HttpError> {
        merchant_settings::set_merchant_fee(rqctx, headers, path, body).await
    }

    async fn set_auto_approval(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetAutoApprovalPath>,
        body: SignedJson<types::AutoApprovalRequest>,
    ) -> Result<HttpResponseOk<types::AutoApproval>, HttpError> {
        merchant_settings::set_auto_approval(rqctx, headers, path, body).await
    }

    async fn set_rate_limit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetRateLimitPath>,
        body: SignedJson<types::RateLimitRequest>,
    ) -> Result<HttpResponseOk<types::RateLimit>, HttpError> {
        merchant_settings::set_rate_limit(rqctx, headers, path, body).await
    }

    async fn approve_withdrawal(
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
                let app = &*app;
                let order_no = path.into_inner().order_no;
                audit::on(Target::Order(order_no.clone()));
                let remarks = remarks(&body)?;
                audit::because(remarks.as_deref());
                let order = withdrawals::approve(app, &order_no, &op.who, remarks).await?;
                acted_on_order("approve_withdrawal", &order.row.order_no);
                reviewed(app, order).await
            },
        )
        .await
    }

    async fn resolve_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ResolveWithdrawalPath>,
        body: SignedJson<types::ResolveWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::ResolveWithdrawal,
            |app, op| async move {
                let app = &*app;
                let request = parse(&body)?;
                let resolution = match request.outcome {
                    types::WithdrawalResolution::Completed => withdrawals::Resolution::Completed,
                    types::WithdrawalResolution::Failed => withdrawals::Resolution::Failed,
                };
                let remarks = validate::required_text("remarks", request.remarks, 512)?;
                let order_no = path.into_inner().order_no;
                audit::on(Target::Order(order_no.clone()));
                audit::because(Some(&remarks));
                let reference =
                    validate::optional_text("bank_reference", request.bank_reference, 128)?;
                let order = withdrawals::resolve(
                    app,
                    &order_no,
                    &op.who.name,
                    resolution,
                    remarks,
                    reference,
                )
                .await?;
                acted_on_order("resolve_withdrawal", &order.row.order_no);
                reviewed(app, order).await
            },
        )
        .await
    }

    async fn reject_withdrawal(
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
                audit::on(Target::Order(order_no.clone()));
                let remarks = remarks(&body)?;
                audit::because(remarks.as_deref());
                let order = withdrawals::reject(app, &order_no, &op.who.name, remarks).await?;
                acted_on_order("reject_withdrawal", &order.row.order_no);
                reviewed(app, order).await
            },
        )
        .await
    }

    async fn cancel_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<CancelDepositPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::CancelDeposit,
            |app, _| async move {
                let app = &*app;
                let order_no = path.into_inner().order_no;
                audit::on(Target::Order(order_no.clone()));
                audit::because(remarks(&body)?.as_deref());
                let order = crate::app::deposits::cancel(app, &order_no).await?;
                acted_on_order("cancel_deposit", &order.order_no);
                let merchant = merchants::find(app, &order.merchant_id).await?;
                reshape(&deposit_order(app, &merchant, &order))
            },
        )
        .await
    }

    async fn check_ledger(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::LedgerReport>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            crate::http::operator_views::ledger_view(&app).await
        })
        .await
    }
    async fn list_deposits(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListDepositsQuery>,
    ) -> Result<HttpResponseOk<types::DepositPage>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
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
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
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
        operate(
            &rqctx,
            &headers,
            Action::CompleteDeposit,
            |app, _| async move {
                let app = &*app;
                let req = parse(&body)?;
                let order_no = path.into_inner().order_no;
                audit::on(Target::Order(order_no.clone()));
                audit::because(validate::optional_text("remarks", req.remarks, 512)?.as_deref());
                let order =
                    deposits::complete(app, &order_no, req.actual_amount.map(|a| a.value()))
                        .await?;
                acted_on_order("complete_deposit", &order.order_no);
                deposit_view(app, &order).await
            },
        )
        .await
    }

    async fn list_withdrawals(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListWithdrawalsQuery>,
    ) -> Result<HttpResponseOk<types::WithdrawalPage>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            let app = &*app;
            let page = listings::withdrawals(app, query.into_inner().into()).await?;
            let mut items = Vec::with_capacity(page.items.len());
            for (order, merchant) in &page.items {
                items.push(people::withdrawal_view(app, merchant, order).await?);
            }
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
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
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
        merchant_settings::issue_api_key(rqctx, headers, path, body).await
    }

    async fn read_callback_signing(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCallbackSigningPath>,
    ) -> Result<HttpResponseOk<types::CallbackSigning>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
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
        merchant_settings::set_callback_signing(rqctx, headers, path, body).await
    }

    async fn issue_callback_secret(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueCallbackSecretPath>,
        body: SignedJson<types::IssueCallbackSecretRequest>,
    ) -> Result<HttpResponseOk<types::IssuedCallbackSecret>, HttpError> {
        merchant_settings::issue_callback_secret(rqctx, headers, path, body).await
    }

    async fn set_callback_timeout(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetCallbackTimeoutPath>,
        body: SignedJson<types::CallbackTimeoutRequest>,
    ) -> Result<HttpResponseOk<types::CallbackTimeout>, HttpError> {
        merchant_settings::set_callback_timeout(rqctx, headers, path, body).await
    }

    async fn set_receiving_account(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetReceivingAccountPath>,
        body: SignedJson<types::ReceivingAccountRequest>,
    ) -> Result<HttpResponseOk<types::ReceivingAccountAssignment>, HttpError> {
        merchant_settings::set_receiving_account(rqctx, headers, path, body).await
    }

    async fn ingest_bank_transaction(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::BankTransactionRequest>,
    ) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::IngestBankTransaction,
            |app, _| async move {
                let app = &*app;
                let req = parse(&body)?;
                audit::on(Target::NewBankTransaction);
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
                // A replay of a recorded transaction wrote nothing yet: its row
                // names the transaction it answered with (a no-op otherwise).
                audit::on(Target::BankTransaction(ingested.row.id.clone()));
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

    async fn list_bank_transactions(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListBankTransactionsQuery>,
    ) -> Result<HttpResponseOk<types::BankTransactionPage>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
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
        operate(
            &rqctx,
            &headers,
            Action::MatchBankTransaction,
            |app, _| async move {
                let app = &*app;
                let req = parse(&body)?;
                let transaction_id = path.into_inner().transaction_id;
                audit::on(Target::BankTransaction(transaction_id.clone()));
                audit::because(validate::optional_text("remarks", req.remarks, 512)?.as_deref());
                let ingested = bank::match_by_hand(app, &transaction_id, &req.order_no).await?;
                acted_on_order("match_bank_transaction", &req.order_no);
                bank_view(app, ingested).await
            },
        )
        .await
    }

    async fn list_callback_deliveries(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListCallbackDeliveriesQuery>,
    ) -> Result<HttpResponseOk<types::CallbackDeliveryPage>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            let app = &*app;
            let page = listings::callback_deliveries(app, query.into_inner().into()).await?;
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

    async fn list_channel_notifications(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListChannelNotificationsQuery>,
    ) -> Result<HttpResponseOk<types::ChannelNotificationPage>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            crate::http::operator_views::channel_notifications(&app, query.into_inner()).await
        })
        .await
    }

    async fn read_callback_delivery(
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

    async fn retry_callback_delivery(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RetryCallbackDeliveryPath>,
    ) -> Result<HttpResponseOk<types::CallbackDelivery>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::RetryCallback,
            |app, _| async move {
                let app = &*app;
                let delivery_id = path.into_inner().delivery_id;
                audit::on(Target::CallbackDelivery(delivery_id.clone()));
                let row = crate::app::callbacks::retry(app, &delivery_id).await?;
                acted_on_order("retry_callback", &row.order_no);
                delivery_with_history(app, row).await
            },
        )
        .await
    }

    async fn read_cashier_session(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCashierSessionPath>,
    ) -> Result<HttpResponseOk<types::CashierSessionRecord>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            crate::http::operator_views::cashier_session_view(&app, &path.into_inner().session_id)
                .await
        })
        .await
    }

    async fn read_current_operator(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::CurrentOperator>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |_, op| async move {
            Ok(people::current(op))
        })
        .await
    }

    async fn list_operators(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListOperatorsQuery>,
    ) -> Result<HttpResponseOk<types::OperatorPage>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::ReadOperators,
            |app, _| async move { people::list(&app, query.into_inner()).await },
        )
        .await
    }

    async fn create_operator(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::CreateOperatorRequest>,
    ) -> Result<HttpResponseOk<types::OperatorIdentity>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::CreateOperator,
            |app, _| async move { people::create(&app, parse(&body)?).await },
        )
        .await
    }

    async fn change_operator(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ChangeOperatorPath>,
        body: SignedJson<types::ChangeOperatorRequest>,
    ) -> Result<HttpResponseOk<types::OperatorIdentity>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::ChangeOperator,
            |app, op| async move {
                let operator_id = path.into_inner().operator_id;
                people::change(&app, &op, operator_id, parse(&body)?).await
            },
        )
        .await
    }

    async fn list_operator_tokens(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ListOperatorTokensPath>,
    ) -> Result<HttpResponseOk<types::OperatorTokenList>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::ReadOperators,
            |app, _| async move { people::tokens(&app, &path.into_inner().operator_id).await },
        )
        .await
    }

    async fn issue_operator_token(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueOperatorTokenPath>,
        body: SignedJson<types::IssueOperatorTokenRequest>,
    ) -> Result<HttpResponseOk<types::IssuedOperatorToken>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::IssueOperatorToken,
            |app, _| async move {
                let operator_id = path.into_inner().operator_id;
                people::issue_token(&app, operator_id, parse(&body)?.label).await
            },
        )
        .await
    }

    async fn revoke_operator_token(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RevokeOperatorTokenPath>,
    ) -> Result<HttpResponseOk<types::OperatorToken>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::RevokeOperatorToken,
            |app, _| async move {
                let p = path.into_inner();
                people::revoke_token(&app, p.operator_id, p.token_id).await
            },
        )
        .await
    }

    async fn list_audit_events(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListAuditEventsQuery>,
    ) -> Result<HttpResponseOk<types::AuditEventPage>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            people::audit_events(&app, query.into_inner()).await
        })
        .await
    }

    async fn list_owner_invitations(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ListOwnerInvitationsPath>,
        query: Query<ListOwnerInvitationsQuery>,
    ) -> Result<HttpResponseOk<types::OwnerInvitationPage>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            owners::list(&app, &path.into_inner().merchant_id, query.into_inner()).await
        })
        .await
    }

    async fn invite_owner(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<InviteOwnerPath>,
        body: SignedJson<types::InviteOwnerRequest>,
    ) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
        operate(
            &rqctx,
            &headers,
            Action::InviteOwner,
            |app, op| async move {
                owners::invite(&app, &op, path.into_inner().merchant_id, parse(&body)?).await
            },
        )
        .await
    }

    async fn resend_owner_invitation(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ResendOwnerInvitationPath>,
    ) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
        let action = Action::ResendOwnerInvitation;
        operate(&rqctx, &headers, action, |app, op| async move {
            owners::resend(&app, &op, path.into_inner().invitation_id).await
        })
        .await
    }

    async fn revoke_owner_invitation(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RevokeOwnerInvitationPath>,
    ) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
        let action = Action::RevokeOwnerInvitation;
        operate(&rqctx, &headers, action, |app, _| async move {
            owners::revoke(&app, path.into_inner().invitation_id).await
        })
        .await
    }

    async fn accept_owner_invitation(
        rqctx: RequestContext<Arc<App>>,
        body: SignedJson<types::AcceptOwnerInvitationRequest>,
    ) -> Result<HttpResponseOk<types::AcceptedOwner>, HttpError> {
        let app = rqctx.context().clone();
        answered(
            &rqctx,
            async move { owners::accept(&app, parse(&body)?).await },
        )
        .await
    }
}
