//! A merchant and its settings and keys: created, its fees, auto-approval,
//! rate limit, callback timeout and signing, receiving account, API keys;
//! each an admin's action in the audit trail with the settings before and
//! after.

use super::parse;
use crate::app::actor::Actor;
use crate::app::callbacks::signing::{self, Signing};
use crate::app::listings::Listing;
use crate::app::merchants;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::enums::Spelled;
use crate::observe::Answer;
use crate::operator::auth::{alone, operate};
use crate::{body_error, time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{
    types, IssueApiKeyPath, IssueCallbackSecretPath, ListMerchantsQuery, ReadCallbackSigningPath,
    SetAutoApprovalPath, SetCallbackSigningPath, SetCallbackTimeoutPath, SetMerchantFeePath,
    SetMerchantStatusPath, SetRateLimitPath, SetReceivingAccountPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub(super) async fn create_merchant(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::CreateMerchantRequest>,
) -> Result<HttpResponseOk<types::CreatedMerchant>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::CreateMerchant,
        |app, op| async move {
            let app = &*app;
            let req = parse(&body)?;
            let created = merchants::create(app, &op, &req.code, &req.name).await?;
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

pub(super) async fn read_callback_signing(
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

/// An admin's change to one merchant's settings or keys: the action's
/// target named for the audit trail, the body parsed, the change logged
/// (never a key).
async fn on_merchant<B: DeserializeOwned, T: Answer, F>(
    rqctx: &RequestContext<Arc<App>>,
    headers: &BearerToken,
    action: Action,
    merchant_id: String,
    body: SignedJson<B>,
    work: impl FnOnce(Arc<App>, Actor, String, B) -> F,
) -> Result<HttpResponseOk<T>, HttpError>
where
    F: std::future::Future<Output = Result<T, ApiError>>,
{
    operate(rqctx, headers, action, |app, op| async move {
        let req = body.parse().map_err(body_error)?;
        let answer = work(app, op, merchant_id.clone(), req).await?;
        tracing::info!(action = action.name(), merchant_id, "operator action");
        Ok(answer)
    })
    .await
}

pub(super) async fn set_merchant_fee(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<SetMerchantFeePath>,
    _body: SignedJson<types::FeeRuleRequest>,
) -> Result<HttpResponseOk<types::FeeRule>, HttpError> {
    alone(&rqctx, &headers, Action::SetMerchantFee).await
}

pub(super) async fn set_auto_approval(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<SetAutoApprovalPath>,
    _body: SignedJson<types::AutoApprovalRequest>,
) -> Result<HttpResponseOk<types::AutoApproval>, HttpError> {
    alone(&rqctx, &headers, Action::SetAutoApproval).await
}

pub(super) async fn set_rate_limit(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<SetRateLimitPath>,
    body: SignedJson<types::RateLimitRequest>,
) -> Result<HttpResponseOk<types::RateLimit>, HttpError> {
    on_merchant(
        &rqctx,
        &headers,
        Action::SetRateLimit,
        path.into_inner().merchant_id,
        body,
        |app, op, merchant_id, req| async move {
            let app = &*app;
            merchants::set_rate_limit(app, &op, &merchant_id, req.requests_per_minute, req.burst)
                .await?;
            Ok(types::RateLimit {
                merchant_id,
                requests_per_minute: req.requests_per_minute,
                burst: req.burst,
            })
        },
    )
    .await
}

/// Suspends or reactivates a merchant (`app::suspension`).
pub(super) async fn set_merchant_status(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<SetMerchantStatusPath>,
    body: SignedJson<types::SetMerchantStatusRequest>,
) -> Result<HttpResponseOk<types::MerchantState>, HttpError> {
    on_merchant(
        &rqctx,
        &headers,
        Action::SetMerchantStatus,
        path.into_inner().merchant_id,
        body,
        |app, op, merchant_id, req| async move {
            let reason = crate::domain::validate::required_text("reason", req.reason, 512)?;
            let status = req.status.spelled();
            let merchant =
                crate::app::suspension::set_status(&app, &op, &merchant_id, status, &reason)
                    .await?;
            Ok(types::MerchantState {
                merchant_id: merchant.id,
                merchant_code: merchant.code,
                name: merchant.name,
                status: merchant.status.spelled(),
            })
        },
    )
    .await
}

pub(super) async fn issue_api_key(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<IssueApiKeyPath>,
    _body: SignedJson<types::IssueApiKeyRequest>,
) -> Result<HttpResponseOk<types::IssuedApiKey>, HttpError> {
    alone(&rqctx, &headers, Action::IssueApiKey).await
}

pub(super) async fn set_callback_signing(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<SetCallbackSigningPath>,
    body: SignedJson<types::CallbackSigningRequest>,
) -> Result<HttpResponseOk<types::CallbackSigning>, HttpError> {
    on_merchant(
        &rqctx,
        &headers,
        Action::SetCallbackSigning,
        path.into_inner().merchant_id,
        body,
        |app, op, merchant_id, req| async move {
            let app = &*app;
            let scheme = req.scheme.spelled();
            let signing = signing::set_scheme(app, &op, &merchant_id, scheme).await?;
            signing_view(merchant_id, signing)
        },
    )
    .await
}

pub(super) async fn issue_callback_secret(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<IssueCallbackSecretPath>,
    _body: SignedJson<types::IssueCallbackSecretRequest>,
) -> Result<HttpResponseOk<types::IssuedCallbackSecret>, HttpError> {
    alone(&rqctx, &headers, Action::IssueCallbackSecret).await
}

pub(super) async fn set_callback_timeout(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<SetCallbackTimeoutPath>,
    body: SignedJson<types::CallbackTimeoutRequest>,
) -> Result<HttpResponseOk<types::CallbackTimeout>, HttpError> {
    on_merchant(
        &rqctx,
        &headers,
        Action::SetCallbackTimeout,
        path.into_inner().merchant_id,
        body,
        |app, op, merchant_id, req| async move {
            let app = &*app;
            let seconds = req.callback_timeout_seconds;
            let merchant = merchants::set_callback_timeout(app, &op, &merchant_id, seconds).await?;
            Ok(types::CallbackTimeout {
                merchant_id,
                callback_timeout_seconds: i64::from(merchant.callback_timeout_seconds),
            })
        },
    )
    .await
}

pub(super) async fn set_receiving_account(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    _path: Path<SetReceivingAccountPath>,
    _body: SignedJson<types::ReceivingAccountRequest>,
) -> Result<HttpResponseOk<types::ReceivingAccountAssignment>, HttpError> {
    alone(&rqctx, &headers, Action::SetReceivingAccount).await
}

/// A merchant's signing in the operator contract's shape (a secret only
/// when this request created it).
pub fn signing_view(
    merchant_id: String,
    signing: Signing,
) -> Result<types::CallbackSigning, ApiError> {
    let secrets = signing
        .secrets
        .iter()
        .map(|&(created, expires)| {
            Ok(types::CallbackSecretSummary {
                created_at: time(created)?,
                expires_at: time_opt(expires)?,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    Ok(types::CallbackSigning {
        merchant_id,
        scheme: signing.scheme.spelled(),
        callback_secret: signing.new_secret,
        secrets,
    })
}

pub(super) async fn list_merchants(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListMerchantsQuery>,
) -> Result<HttpResponseOk<types::MerchantPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        let q = query.into_inner();
        let listing = Listing {
            limit: q.limit,
            cursor: q.cursor,
            status: q.status.map(|s| s.to_string()),
            ..Listing::default()
        };
        let page = crate::app::listings::merchants(&app, listing, q.q).await?;
        let mut items = Vec::with_capacity(page.items.len());
        for row in page.items {
            items.push(types::MerchantState {
                status: row.status.spelled(),
                merchant_id: row.id,
                merchant_code: row.code,
                name: row.name,
            });
        }
        Ok(types::MerchantPage {
            items,
            next_cursor: page.next_cursor,
        })
    })
    .await
}
