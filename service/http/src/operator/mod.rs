//! The operator API (`openapi/operator.json`): the generated trait
//! implemented by delegation, one module per tag of the contract, each
//! holding its endpoints and the views they answer with. Every endpoint
//! authenticates, checks the role and (when it writes) audits through
//! `auth::operate`.

mod api_keys;
mod audit;
pub mod auth;
mod bank;
mod billing;
mod callbacks;
mod cashier;
mod changes;
mod channels;
mod deposits;
mod ledger;
mod merchants;
mod operators;
mod owners;
pub mod routing;
mod withdrawals;

pub(crate) use withdrawals::withdrawal_view;

use crate::app::deposits::Deposit;
use crate::app::listings::Listing;
use crate::app::withdrawals::Withdrawal;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::validate;
use crate::{body_error, deposit_order, reshape};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::types;
use merchant_api::operator::{
    ApproveApprovalRequestPath, ApproveChangeRequestPath, ApproveRoutingChangePath,
    ApproveWithdrawalPath, CancelDepositPath, ChangeOperatorPath, CompleteDepositPath,
    InviteOwnerPath, IssueApiKeyPath, IssueBillingStatementPath, IssueCallbackSecretPath,
    IssueOperatorTokenPath, ListApiKeysPath, ListApprovalRequestsQuery, ListAuditEventsQuery,
    ListAuditTrailQuery, ListBankTransactionsQuery, ListBillingStatementsQuery,
    ListCallbackDeliveriesQuery, ListChangeRequestsQuery, ListChannelNotificationsQuery,
    ListDepositsQuery, ListMerchantsQuery, ListOperatorTokensPath, ListOperatorsQuery,
    ListOwnerInvitationsPath, ListOwnerInvitationsQuery, ListOwnersPath, ListRoutingChangesQuery,
    ListWithdrawalsQuery, MatchBankTransactionPath, OperatorApi, ReadApprovalRequestPath,
    ReadBillingStatementDocumentPath, ReadBillingStatementPath, ReadCallbackDeliveryPath,
    ReadCallbackSigningPath, ReadCashierSessionPath, ReadChangeRequestPath, ReadDepositPath,
    ReadRoutingChangePath, ReadWithdrawalPath, ReissueBillingStatementPath,
    RejectApprovalRequestPath, RejectChangeRequestPath, RejectRoutingChangePath,
    RejectWithdrawalPath, ResendOwnerInvitationPath, ResolveWithdrawalPath, RestrictApiKeyPath,
    RetryCallbackDeliveryPath, RevokeApiKeyPath, RevokeOperatorTokenPath,
    RevokeOwnerInvitationPath, SetAutoApprovalPath, SetBillingPeriodPath, SetCallbackSigningPath,
    SetCallbackTimeoutPath, SetMerchantFeePath, SetMerchantStatusPath, SetOwnerStatusPath,
    SetRateLimitPath, SetReceivingAccountPath, SetRoutingPath, VouchOperatorPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub enum OperatorApiImpl {}

/// An operator's action on an order, at info: the request's span names the
/// operator, and `order_no` lets one search find the order's whole story.
pub(super) fn acted_on_order(action: &'static str, order_no: &str) {
    tracing::info!(action, order_no, "operator action");
}

pub(super) fn parse<T: DeserializeOwned>(body: &SignedJson<T>) -> Result<T, ApiError> {
    body.parse().map_err(body_error)
}

pub(super) async fn reviewed(
    app: &App,
    order: Withdrawal,
) -> Result<types::WithdrawalOrder, ApiError> {
    let merchant = crate::app::merchants::find(app, &order.merchant_id).await?;
    withdrawals::withdrawal_view(app, &merchant, &order).await
}

pub(super) fn remarks(body: &SignedJson<types::ReviewRequest>) -> Result<Option<String>, ApiError> {
    validate::optional_text("remarks", parse(body)?.remarks, 512)
}

/// A deposit in the operator contract's shape.
pub(super) async fn deposit_view(
    app: &App,
    order: &Deposit,
) -> Result<types::DepositOrder, ApiError> {
    let merchant = crate::app::merchants::find(app, &order.merchant_id).await?;
    reshape(&deposit_order(app, &merchant, order))
}

/// Each listing's query as the use case takes it: the page, and the
/// filters that listing has.
/// A listing's query as the use case takes it: a trait of this crate's,
/// since both types are other crates'.
pub(super) trait AsListing {
    fn listing(self) -> Listing;
}

macro_rules! listing_from {
    ($($query:ty => $filter:ident),* $(,)?) => {$(
        impl AsListing for $query {
            fn listing(self) -> Listing {
                let q = self;
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
}

impl AsListing for ListCallbackDeliveriesQuery {
    fn listing(self) -> Listing {
        Listing {
            limit: self.limit,
            cursor: self.cursor,
            status: self.status,
            order_no: self.order_no,
            merchant_id: self.merchant_id,
            created_from: self.created_from,
            created_to: self.created_to,
            ..Listing::default()
        }
    }
}

impl OperatorApi for OperatorApiImpl {
    type Context = Arc<App>;

    async fn list_change_requests(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        query: Query<ListChangeRequestsQuery>,
    ) -> Result<HttpResponseOk<types::ChangeRequestPage>, HttpError> {
        changes::list_change_requests(rqctx, headers, query).await
    }

    async fn file_change_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        body: SignedJson<types::ChangeRequestCreate>,
    ) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
        changes::file_change_request(rqctx, headers, body).await
    }

    async fn read_change_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        path: Path<ReadChangeRequestPath>,
    ) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
        changes::read_change_request(rqctx, headers, path).await
    }

    async fn approve_change_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        path: Path<ApproveChangeRequestPath>,
        body: SignedJson<types::ChangeRequestDecision>,
    ) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
        changes::approve_change_request(rqctx, headers, path, body).await
    }

    async fn reject_change_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        path: Path<RejectChangeRequestPath>,
        body: SignedJson<types::ChangeRequestDecision>,
    ) -> Result<HttpResponseOk<types::ChangeRequest>, HttpError> {
        changes::reject_change_request(rqctx, headers, path, body).await
    }

    async fn list_approval_requests(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        query: Query<ListApprovalRequestsQuery>,
    ) -> Result<HttpResponseOk<types::ApprovalRequestPage>, HttpError> {
        changes::list_approval_requests(rqctx, headers, query).await
    }

    async fn file_approval_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        body: SignedJson<types::ApprovalRequestCreate>,
    ) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
        changes::file_approval_request(rqctx, headers, body).await
    }

    async fn read_approval_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        path: Path<ReadApprovalRequestPath>,
    ) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
        changes::read_approval_request(rqctx, headers, path).await
    }

    async fn approve_approval_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        path: Path<ApproveApprovalRequestPath>,
        body: SignedJson<types::ChangeRequestDecision>,
    ) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
        changes::approve_approval_request(rqctx, headers, path, body).await
    }

    async fn reject_approval_request(
        rqctx: RequestContext<Self::Context>,
        headers: BearerToken,
        path: Path<RejectApprovalRequestPath>,
        body: SignedJson<types::ChangeRequestDecision>,
    ) -> Result<HttpResponseOk<types::ApprovalRequest>, HttpError> {
        changes::reject_approval_request(rqctx, headers, path, body).await
    }

    async fn list_merchants(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListMerchantsQuery>,
    ) -> Result<HttpResponseOk<types::MerchantPage>, HttpError> {
        merchants::list_merchants(rqctx, headers, query).await
    }

    async fn create_merchant(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::CreateMerchantRequest>,
    ) -> Result<HttpResponseOk<types::CreatedMerchant>, HttpError> {
        merchants::create_merchant(rqctx, headers, body).await
    }

    async fn set_merchant_fee(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetMerchantFeePath>,
        body: SignedJson<types::FeeRuleRequest>,
    ) -> Result<HttpResponseOk<types::FeeRule>, HttpError> {
        merchants::set_merchant_fee(rqctx, headers, path, body).await
    }

    async fn set_auto_approval(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetAutoApprovalPath>,
        body: SignedJson<types::AutoApprovalRequest>,
    ) -> Result<HttpResponseOk<types::AutoApproval>, HttpError> {
        merchants::set_auto_approval(rqctx, headers, path, body).await
    }

    async fn set_rate_limit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetRateLimitPath>,
        body: SignedJson<types::RateLimitRequest>,
    ) -> Result<HttpResponseOk<types::RateLimit>, HttpError> {
        merchants::set_rate_limit(rqctx, headers, path, body).await
    }

    async fn set_merchant_status(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetMerchantStatusPath>,
        body: SignedJson<types::SetMerchantStatusRequest>,
    ) -> Result<HttpResponseOk<types::MerchantState>, HttpError> {
        merchants::set_merchant_status(rqctx, headers, path, body).await
    }

    async fn issue_api_key(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueApiKeyPath>,
        body: SignedJson<types::IssueApiKeyRequest>,
    ) -> Result<HttpResponseOk<types::IssuedApiKey>, HttpError> {
        merchants::issue_api_key(rqctx, headers, path, body).await
    }

    async fn list_api_keys(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ListApiKeysPath>,
    ) -> Result<HttpResponseOk<types::ApiKeyList>, HttpError> {
        api_keys::list_api_keys(rqctx, headers, path).await
    }

    async fn revoke_api_key(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RevokeApiKeyPath>,
    ) -> Result<HttpResponseOk<types::ApiKey>, HttpError> {
        api_keys::revoke_api_key(rqctx, headers, path).await
    }

    async fn restrict_api_key(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RestrictApiKeyPath>,
        body: SignedJson<types::ApiKeyRestrictions>,
    ) -> Result<HttpResponseOk<types::ApiKey>, HttpError> {
        api_keys::restrict_api_key(rqctx, headers, path, body).await
    }

    async fn read_callback_signing(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCallbackSigningPath>,
    ) -> Result<HttpResponseOk<types::CallbackSigning>, HttpError> {
        merchants::read_callback_signing(rqctx, headers, path).await
    }

    async fn set_callback_signing(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetCallbackSigningPath>,
        body: SignedJson<types::CallbackSigningRequest>,
    ) -> Result<HttpResponseOk<types::CallbackSigning>, HttpError> {
        merchants::set_callback_signing(rqctx, headers, path, body).await
    }

    async fn issue_callback_secret(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueCallbackSecretPath>,
        body: SignedJson<types::IssueCallbackSecretRequest>,
    ) -> Result<HttpResponseOk<types::IssuedCallbackSecret>, HttpError> {
        merchants::issue_callback_secret(rqctx, headers, path, body).await
    }

    async fn set_callback_timeout(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetCallbackTimeoutPath>,
        body: SignedJson<types::CallbackTimeoutRequest>,
    ) -> Result<HttpResponseOk<types::CallbackTimeout>, HttpError> {
        merchants::set_callback_timeout(rqctx, headers, path, body).await
    }

    async fn set_receiving_account(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetReceivingAccountPath>,
        body: SignedJson<types::ReceivingAccountRequest>,
    ) -> Result<HttpResponseOk<types::ReceivingAccountAssignment>, HttpError> {
        merchants::set_receiving_account(rqctx, headers, path, body).await
    }

    async fn approve_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ApproveWithdrawalPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        withdrawals::approve_withdrawal(rqctx, headers, path, body).await
    }

    async fn resolve_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ResolveWithdrawalPath>,
        body: SignedJson<types::ResolveWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        withdrawals::resolve_withdrawal(rqctx, headers, path, body).await
    }

    async fn reject_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RejectWithdrawalPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        withdrawals::reject_withdrawal(rqctx, headers, path, body).await
    }

    async fn list_withdrawals(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListWithdrawalsQuery>,
    ) -> Result<HttpResponseOk<types::WithdrawalPage>, HttpError> {
        withdrawals::list_withdrawals(rqctx, headers, query).await
    }

    async fn read_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadWithdrawalPath>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        withdrawals::read_withdrawal(rqctx, headers, path).await
    }

    async fn cancel_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<CancelDepositPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        deposits::cancel_deposit(rqctx, headers, path, body).await
    }

    async fn list_deposits(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListDepositsQuery>,
    ) -> Result<HttpResponseOk<types::DepositPage>, HttpError> {
        deposits::list_deposits(rqctx, headers, query).await
    }

    async fn read_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadDepositPath>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        deposits::read_deposit(rqctx, headers, path).await
    }

    async fn complete_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<CompleteDepositPath>,
        body: SignedJson<types::CompleteDepositRequest>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        deposits::complete_deposit(rqctx, headers, path, body).await
    }

    async fn check_ledger(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::LedgerReport>, HttpError> {
        ledger::check_ledger(rqctx, headers).await
    }

    async fn ingest_bank_transaction(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::BankTransactionRequest>,
    ) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
        bank::ingest_bank_transaction(rqctx, headers, body).await
    }

    async fn list_bank_transactions(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListBankTransactionsQuery>,
    ) -> Result<HttpResponseOk<types::BankTransactionPage>, HttpError> {
        bank::list_bank_transactions(rqctx, headers, query).await
    }

    async fn match_bank_transaction(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<MatchBankTransactionPath>,
        body: SignedJson<types::MatchBankTransactionRequest>,
    ) -> Result<HttpResponseOk<types::BankTransaction>, HttpError> {
        bank::match_bank_transaction(rqctx, headers, path, body).await
    }

    async fn list_callback_deliveries(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListCallbackDeliveriesQuery>,
    ) -> Result<HttpResponseOk<types::CallbackDeliveryPage>, HttpError> {
        callbacks::list_callback_deliveries(rqctx, headers, query).await
    }

    async fn read_callback_delivery(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCallbackDeliveryPath>,
    ) -> Result<HttpResponseOk<types::CallbackDelivery>, HttpError> {
        callbacks::read_callback_delivery(rqctx, headers, path).await
    }

    async fn retry_callback_delivery(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RetryCallbackDeliveryPath>,
    ) -> Result<HttpResponseOk<types::CallbackDelivery>, HttpError> {
        callbacks::retry_callback_delivery(rqctx, headers, path).await
    }

    async fn retry_failed_callbacks(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::CallbackRetryBatch>,
    ) -> Result<HttpResponseOk<types::CallbackRetryBatchResult>, HttpError> {
        callbacks::retry_failed_callbacks(rqctx, headers, body).await
    }

    async fn read_routing(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::RoutingOverview>, HttpError> {
        routing::read_routing(rqctx, headers).await
    }

    async fn set_routing(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetRoutingPath>,
        body: SignedJson<types::RoutingTableRequest>,
    ) -> Result<HttpResponseOk<types::RoutingTable>, HttpError> {
        routing::set_routing(rqctx, headers, path, body).await
    }

    async fn list_routing_changes(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListRoutingChangesQuery>,
    ) -> Result<HttpResponseOk<types::RoutingChangePage>, HttpError> {
        routing::list_routing_changes(rqctx, headers, query).await
    }

    async fn file_routing_change(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::RoutingChangeCreate>,
    ) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
        routing::file_routing_change(rqctx, headers, body).await
    }

    async fn read_routing_change(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadRoutingChangePath>,
    ) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
        routing::read_routing_change(rqctx, headers, path).await
    }

    async fn approve_routing_change(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ApproveRoutingChangePath>,
        body: SignedJson<types::ChangeRequestDecision>,
    ) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
        routing::approve_routing_change(rqctx, headers, path, body).await
    }

    async fn reject_routing_change(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RejectRoutingChangePath>,
        body: SignedJson<types::ChangeRequestDecision>,
    ) -> Result<HttpResponseOk<types::RoutingChange>, HttpError> {
        routing::reject_routing_change(rqctx, headers, path, body).await
    }

    async fn list_channel_notifications(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListChannelNotificationsQuery>,
    ) -> Result<HttpResponseOk<types::ChannelNotificationPage>, HttpError> {
        channels::list_channel_notifications(rqctx, headers, query).await
    }

    async fn read_cashier_session(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadCashierSessionPath>,
    ) -> Result<HttpResponseOk<types::CashierSessionRecord>, HttpError> {
        cashier::read_cashier_session(rqctx, headers, path).await
    }

    async fn read_current_operator(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::CurrentOperator>, HttpError> {
        operators::read_current_operator(rqctx, headers).await
    }

    async fn list_operators(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListOperatorsQuery>,
    ) -> Result<HttpResponseOk<types::OperatorPage>, HttpError> {
        operators::list_operators(rqctx, headers, query).await
    }

    async fn create_operator(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::CreateOperatorRequest>,
    ) -> Result<HttpResponseOk<types::OperatorIdentity>, HttpError> {
        operators::create_operator(rqctx, headers, body).await
    }

    async fn change_operator(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ChangeOperatorPath>,
        body: SignedJson<types::ChangeOperatorRequest>,
    ) -> Result<HttpResponseOk<types::OperatorIdentity>, HttpError> {
        operators::change_operator(rqctx, headers, path, body).await
    }

    async fn list_operator_tokens(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ListOperatorTokensPath>,
    ) -> Result<HttpResponseOk<types::OperatorTokenList>, HttpError> {
        operators::list_operator_tokens(rqctx, headers, path).await
    }

    async fn issue_operator_token(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueOperatorTokenPath>,
        body: SignedJson<types::IssueOperatorTokenRequest>,
    ) -> Result<HttpResponseOk<types::IssuedOperatorToken>, HttpError> {
        operators::issue_operator_token(rqctx, headers, path, body).await
    }

    async fn revoke_operator_token(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RevokeOperatorTokenPath>,
    ) -> Result<HttpResponseOk<types::OperatorToken>, HttpError> {
        operators::revoke_operator_token(rqctx, headers, path).await
    }

    async fn vouch_operator(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<VouchOperatorPath>,
    ) -> Result<HttpResponseOk<types::OperatorIdentity>, HttpError> {
        operators::vouch_operator(rqctx, headers, path).await
    }

    async fn list_audit_events(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListAuditEventsQuery>,
    ) -> Result<HttpResponseOk<types::AuditEventPage>, HttpError> {
        audit::list_audit_events(rqctx, headers, query).await
    }

    async fn list_audit_trail(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListAuditTrailQuery>,
    ) -> Result<HttpResponseOk<types::AuditTrailPage>, HttpError> {
        audit::list_audit_trail(rqctx, headers, query).await
    }

    async fn list_owner_invitations(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ListOwnerInvitationsPath>,
        query: Query<ListOwnerInvitationsQuery>,
    ) -> Result<HttpResponseOk<types::OwnerInvitationPage>, HttpError> {
        owners::list_owner_invitations(rqctx, headers, path, query).await
    }

    async fn invite_owner(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<InviteOwnerPath>,
        body: SignedJson<types::InviteOwnerRequest>,
    ) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
        owners::invite_owner(rqctx, headers, path, body).await
    }

    async fn resend_owner_invitation(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ResendOwnerInvitationPath>,
    ) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
        owners::resend_owner_invitation(rqctx, headers, path).await
    }

    async fn revoke_owner_invitation(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RevokeOwnerInvitationPath>,
    ) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
        owners::revoke_owner_invitation(rqctx, headers, path).await
    }

    async fn list_owners(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ListOwnersPath>,
    ) -> Result<HttpResponseOk<types::OwnerList>, HttpError> {
        owners::list_owners(rqctx, headers, path).await
    }

    async fn set_owner_status(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetOwnerStatusPath>,
        body: SignedJson<types::SetOwnerStatusRequest>,
    ) -> Result<HttpResponseOk<types::Owner>, HttpError> {
        owners::set_owner_status(rqctx, headers, path, body).await
    }

    async fn accept_owner_invitation(
        rqctx: RequestContext<Arc<App>>,
        body: SignedJson<types::AcceptOwnerInvitationRequest>,
    ) -> Result<HttpResponseOk<types::AcceptedOwner>, HttpError> {
        owners::accept_owner_invitation(rqctx, body).await
    }

    async fn list_billing_statements(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        query: Query<ListBillingStatementsQuery>,
    ) -> Result<HttpResponseOk<types::BillingStatementPage>, HttpError> {
        billing::list(rqctx, headers, query.into_inner()).await
    }

    async fn read_billing_statement(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadBillingStatementPath>,
    ) -> Result<HttpResponseOk<types::BillingStatement>, HttpError> {
        billing::read(rqctx, headers, path.into_inner().statement_id).await
    }

    async fn read_billing_statement_document(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReadBillingStatementDocumentPath>,
    ) -> Result<http::Response<dropshot::Body>, HttpError> {
        billing::read_document(rqctx, headers, path.into_inner().statement_id).await
    }

    async fn issue_billing_statement(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<IssueBillingStatementPath>,
        body: SignedJson<types::IssueBillingStatementRequest>,
    ) -> Result<HttpResponseOk<types::BillingStatement>, HttpError> {
        billing::issue(rqctx, headers, path.into_inner().merchant_id, body).await
    }

    async fn reissue_billing_statement(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ReissueBillingStatementPath>,
        body: SignedJson<types::ReissueBillingStatementRequest>,
    ) -> Result<HttpResponseOk<types::BillingStatement>, HttpError> {
        billing::reissue(rqctx, headers, path.into_inner().statement_id, body).await
    }

    async fn set_billing_period(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetBillingPeriodPath>,
        body: SignedJson<types::BillingPeriodRequest>,
    ) -> Result<HttpResponseOk<types::BillingPeriodSetting>, HttpError> {
        billing::set_period(rqctx, headers, path.into_inner().merchant_id, body).await
    }
}
