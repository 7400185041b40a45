//! `GET …/merchants/{merchant_id}/api-keys`, `POST …/api-keys/{key_id}/revoke`
//! and `PUT …/api-keys/{key_id}/restrictions`: a merchant's keys by hint,
//! one ended at once, and one restricted to addresses and to reading
//! (issue 57).

use crate::app::api_keys::{self, KeyView};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::status::KeyScope;
use crate::operator::auth::{operate, operate_with};
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{types, ListApiKeysPath, RestrictApiKeyPath, RevokeApiKeyPath};
use payments_wire::server::{BearerToken, SignedJson};
use std::sync::Arc;

fn view(k: KeyView) -> Result<types::ApiKey, ApiError> {
    Ok(types::ApiKey {
        key_id: k.id,
        hint: k.hint,
        created_at: time(k.created_at)?,
        expires_at: time_opt(k.expires_at)?,
        active: k.active,
        allowed_addresses: k.allowed_addresses,
        scope: k.scope.as_str().to_string(),
    })
}

/// A scope as the contract spells it.
pub(crate) fn scope(s: types::ApiKeyScope) -> KeyScope {
    match s {
        types::ApiKeyScope::Full => KeyScope::Full,
        types::ApiKeyScope::ReadOnly => KeyScope::ReadOnly,
    }
}

pub(super) async fn list_api_keys(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ListApiKeysPath>,
) -> Result<HttpResponseOk<types::ApiKeyList>, HttpError> {
    operate(&rqctx, &headers, Action::ReadApiKeys, |app, _| async move {
        let keys = api_keys::list(&app, &path.into_inner().merchant_id).await?;
        Ok(types::ApiKeyList {
            items: keys.into_iter().map(view).collect::<Result<_, _>>()?,
        })
    })
    .await
}

pub(super) async fn revoke_api_key(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RevokeApiKeyPath>,
) -> Result<HttpResponseOk<types::ApiKey>, HttpError> {
    operate(&rqctx, &headers, Action::RevokeApiKey, |app, op| async move {
        let p = path.into_inner();
        let revoked = api_keys::revoke(&app, &op, &p.merchant_id, &p.key_id).await?;
        tracing::info!(action = "revoke_api_key", merchant_id = %p.merchant_id, key_id = %p.key_id, "operator action");
        view(revoked)
    })
    .await
}

pub(super) async fn restrict_api_key(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RestrictApiKeyPath>,
    body: SignedJson<types::ApiKeyRestrictions>,
) -> Result<HttpResponseOk<types::ApiKey>, HttpError> {
    operate_with(&rqctx, &headers, Action::RestrictApiKey, body, |app, op, req| async move {
        let p = path.into_inner();
        let restricted = api_keys::restrict(
            &app,
            &op,
            &p.merchant_id,
            &p.key_id,
            &req.allowed_addresses,
            scope(req.scope),
        )
        .await?;
        tracing::info!(action = "restrict_api_key", merchant_id = %p.merchant_id, key_id = %p.key_id, "operator action");
        view(restricted)
    })
    .await
}
