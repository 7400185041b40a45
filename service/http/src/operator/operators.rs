//! The operators themselves: who is calling, the list, created and changed,
//! and their tokens.

use super::parse;
use crate::app::actor::Actor;
use crate::app::listings::Listing;
use crate::app::people::{self, Changes, NewOperator, Operator, OperatorRow, OperatorTokenRow};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::status::{OperatorStatus, Role};
use crate::operator::auth::operate;
use crate::{time, time_opt};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{
    types, ChangeOperatorPath, IssueOperatorTokenPath, ListOperatorTokensPath, ListOperatorsQuery,
    RevokeOperatorTokenPath, VouchOperatorPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use std::sync::Arc;

pub(super) async fn read_current_operator(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
) -> Result<HttpResponseOk<types::CurrentOperator>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |_, op| async move {
        let acting = op
            .acting()
            .ok_or_else(|| ApiError::Internal("no operator".into()))?;
        Ok(current(&acting.who))
    })
    .await
}

pub(super) async fn list_operators(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListOperatorsQuery>,
) -> Result<HttpResponseOk<types::OperatorPage>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::ReadOperators,
        |app, _| async move { list(&app, query.into_inner()).await },
    )
    .await
}

pub(super) async fn create_operator(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    body: SignedJson<types::CreateOperatorRequest>,
) -> Result<HttpResponseOk<types::OperatorIdentity>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::CreateOperator,
        |app, op| async move { create(&app, &op, parse(&body)?).await },
    )
    .await
}

pub(super) async fn change_operator(
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
            change(&app, &op, operator_id, parse(&body)?).await
        },
    )
    .await
}

pub(super) async fn list_operator_tokens(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ListOperatorTokensPath>,
) -> Result<HttpResponseOk<types::OperatorTokenList>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::ReadOperators,
        |app, _| async move { tokens(&app, &path.into_inner().operator_id).await },
    )
    .await
}

pub(super) async fn issue_operator_token(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<IssueOperatorTokenPath>,
    body: SignedJson<types::IssueOperatorTokenRequest>,
) -> Result<HttpResponseOk<types::IssuedOperatorToken>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::IssueOperatorToken,
        |app, op| async move {
            let operator_id = path.into_inner().operator_id;
            let req = parse(&body)?;
            issue_token(&app, &op, operator_id, req.label, req.expires_in_seconds).await
        },
    )
    .await
}

pub(super) async fn revoke_operator_token(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RevokeOperatorTokenPath>,
) -> Result<HttpResponseOk<types::OperatorToken>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::RevokeOperatorToken,
        |app, op| async move {
            let p = path.into_inner();
            revoke_token(&app, &op, p.operator_id, p.token_id).await
        },
    )
    .await
}

pub(super) async fn vouch_operator(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<VouchOperatorPath>,
) -> Result<HttpResponseOk<types::OperatorIdentity>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::VouchOperator,
        |app, op| async move {
            let id = path.into_inner().operator_id;
            let row = people::vouch(&app, &op, &id).await?;
            tracing::info!(action = "vouch_operator", operator_id = %row.id, "operator action");
            identity(row)
        },
    )
    .await
}

pub(super) fn role(r: Role) -> types::Role {
    match r {
        Role::Viewer => types::Role::Viewer,
        Role::Support => types::Role::Support,
        Role::Approver => types::Role::Approver,
        Role::Admin => types::Role::Admin,
    }
}

fn role_in(r: types::Role) -> Role {
    match r {
        types::Role::Viewer => Role::Viewer,
        types::Role::Support => Role::Support,
        types::Role::Approver => Role::Approver,
        types::Role::Admin => Role::Admin,
    }
}

fn status(s: OperatorStatus) -> types::OperatorStatus {
    match s {
        OperatorStatus::Active => types::OperatorStatus::Active,
        OperatorStatus::Disabled => types::OperatorStatus::Disabled,
    }
}

fn identity(row: OperatorRow) -> Result<types::OperatorIdentity, ApiError> {
    let vouched = row.vouched();
    Ok(types::OperatorIdentity {
        operator_id: row.id,
        name: row.name,
        email: row.email,
        role: role(row.role),
        status: status(row.status),
        created_at: time(row.created_at)?,
        updated_at: time(row.updated_at)?,
        vouched,
        made_by: row.made_by,
        vouched_by: row.vouched_by,
    })
}

fn token(row: OperatorTokenRow) -> Result<types::OperatorToken, ApiError> {
    Ok(types::OperatorToken {
        token_id: row.id,
        label: row.label,
        created_at: time(row.created_at)?,
        revoked_at: time_opt(row.revoked_at)?,
        expires_at: time_opt(row.expires_at)?,
    })
}

pub fn current(who: &Operator) -> types::CurrentOperator {
    types::CurrentOperator {
        source: match who.id {
            Some(_) => types::CurrentOperatorSource::Identity,
            None => types::CurrentOperatorSource::Configuration,
        },
        operator_id: who.id.clone(),
        name: who.name.clone(),
        role: role(who.role),
    }
}

pub async fn list(app: &App, query: ListOperatorsQuery) -> Result<types::OperatorPage, ApiError> {
    let listing = Listing {
        limit: query.limit,
        cursor: query.cursor,
        ..Listing::default()
    };
    let page = crate::app::listings::operators(app, listing).await?;
    Ok(types::OperatorPage {
        items: page
            .items
            .into_iter()
            .map(identity)
            .collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}

pub async fn create(
    app: &App,
    by: &Actor,
    req: types::CreateOperatorRequest,
) -> Result<types::OperatorIdentity, ApiError> {
    let row = people::create(
        app,
        by,
        NewOperator {
            name: req.name,
            email: req.email,
            role: role_in(req.role),
        },
    )
    .await?;
    tracing::info!(action = "create_operator", operator_id = %row.id, "operator action");
    identity(row)
}

pub async fn change(
    app: &App,
    by: &Actor,
    operator_id: String,
    req: types::ChangeOperatorRequest,
) -> Result<types::OperatorIdentity, ApiError> {
    let changes = Changes {
        name: req.name,
        role: req.role.map(role_in),
        status: req.status.map(|s| match s {
            types::OperatorStatus::Active => OperatorStatus::Active,
            types::OperatorStatus::Disabled => OperatorStatus::Disabled,
        }),
    };
    let row = people::change(app, by, &operator_id, changes).await?;
    tracing::info!(action = "change_operator", %operator_id, "operator action");
    identity(row)
}

pub async fn tokens(app: &App, operator_id: &str) -> Result<types::OperatorTokenList, ApiError> {
    let rows = people::tokens(app, operator_id).await?;
    Ok(types::OperatorTokenList {
        items: rows.into_iter().map(token).collect::<Result<_, _>>()?,
    })
}

pub async fn issue_token(
    app: &App,
    by: &Actor,
    operator_id: String,
    label: String,
    expires_in: Option<i64>,
) -> Result<types::IssuedOperatorToken, ApiError> {
    let issued = people::issue_token(app, by, &operator_id, label, expires_in).await?;
    tracing::info!(action = "issue_operator_token", %operator_id, token_id = %issued.row.id, "operator action");
    Ok(types::IssuedOperatorToken {
        token_id: issued.row.id,
        label: issued.row.label,
        created_at: time(issued.row.created_at)?,
        expires_at: time_opt(issued.row.expires_at)?,
        token: issued.token,
    })
}

pub async fn revoke_token(
    app: &App,
    by: &Actor,
    operator_id: String,
    token_id: String,
) -> Result<types::OperatorToken, ApiError> {
    let row = people::revoke_token(app, by, &operator_id, &token_id).await?;
    tracing::info!(action = "revoke_operator_token", %operator_id, %token_id, "operator action");
    token(row)
}
