//! Merchant owners: listed, disabled and enabled again; their
//! invitations listed, sent, resent, revoked and accepted.

use super::parse;
use crate::app::actor::Actor;
use crate::app::listings::Listing;
use crate::app::owners::{self, InvitationRow};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::status::OwnerStatus;
use crate::observe::answered;
use crate::operator::auth::operate;
use crate::{reshape, time};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::{
    types, InviteOwnerPath, ListOwnerInvitationsPath, ListOwnerInvitationsQuery, ListOwnersPath,
    ResendOwnerInvitationPath, RevokeOwnerInvitationPath, SetOwnerStatusPath,
};
use payments_wire::server::{BearerToken, Query, SignedJson};
use std::sync::Arc;

pub(super) async fn list_owner_invitations(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ListOwnerInvitationsPath>,
    query: Query<ListOwnerInvitationsQuery>,
) -> Result<HttpResponseOk<types::OwnerInvitationPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        list(&app, &path.into_inner().merchant_id, query.into_inner()).await
    })
    .await
}

fn owner_view(o: owners::OwnerRow) -> Result<types::Owner, ApiError> {
    Ok(types::Owner {
        status: match o.status {
            OwnerStatus::Invited => types::OwnerStatus::Invited,
            OwnerStatus::Active => types::OwnerStatus::Active,
            OwnerStatus::Disabled => types::OwnerStatus::Disabled,
        },
        created_at: time(o.created_at)?,
        updated_at: time(o.updated_at)?,
        owner_id: o.id,
        merchant_id: o.merchant_id,
        email: o.email,
    })
}

pub(super) async fn list_owners(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ListOwnersPath>,
) -> Result<HttpResponseOk<types::OwnerList>, HttpError> {
    operate(&rqctx, &headers, Action::ReadOwners, |app, _| async move {
        let listed = owners::owners_of(&app, &path.into_inner().merchant_id).await?;
        Ok(types::OwnerList {
            items: listed
                .into_iter()
                .map(owner_view)
                .collect::<Result<_, _>>()?,
        })
    })
    .await
}

pub(super) async fn set_owner_status(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<SetOwnerStatusPath>,
    body: SignedJson<types::SetOwnerStatusRequest>,
) -> Result<HttpResponseOk<types::Owner>, HttpError> {
    operate(
        &rqctx,
        &headers,
        Action::SetOwnerStatus,
        |app, op| async move {
            let req: types::SetOwnerStatusRequest = parse(&body)?;
            let reason = crate::domain::validate::required_text("reason", req.reason, 512)?;
            let enable = matches!(req.status, types::SetOwnerStatusRequestStatus::Active);
            let owner_id = path.into_inner().owner_id;
            let owner = owners::set_status(&app, &op, &owner_id, enable, &reason).await?;
            tracing::info!(
                action = "set_owner_status",
                owner_id,
                enable,
                "operator action"
            );
            owner_view(owner)
        },
    )
    .await
}

pub(super) async fn invite_owner(
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
            invite(&app, &op, path.into_inner().merchant_id, parse(&body)?).await
        },
    )
    .await
}

pub(super) async fn resend_owner_invitation(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<ResendOwnerInvitationPath>,
) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
    let action = Action::ResendOwnerInvitation;
    operate(&rqctx, &headers, action, |app, op| async move {
        resend(&app, &op, path.into_inner().invitation_id).await
    })
    .await
}

pub(super) async fn revoke_owner_invitation(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    path: Path<RevokeOwnerInvitationPath>,
) -> Result<HttpResponseOk<types::OwnerInvitation>, HttpError> {
    let action = Action::RevokeOwnerInvitation;
    operate(&rqctx, &headers, action, |app, op| async move {
        revoke(&app, &op, path.into_inner().invitation_id).await
    })
    .await
}

pub(super) async fn accept_owner_invitation(
    rqctx: RequestContext<Arc<App>>,
    body: SignedJson<types::AcceptOwnerInvitationRequest>,
) -> Result<HttpResponseOk<types::AcceptedOwner>, HttpError> {
    let app = rqctx.context().clone();
    let request_id = rqctx.request_id.clone();
    answered(&rqctx, async move {
        accept(&app, parse(&body)?, &request_id).await
    })
    .await
}

fn view(app: &App, row: &InvitationRow) -> Result<types::OwnerInvitation, ApiError> {
    let mut shown = serde_json::json!({
        "invitation_id": row.id,
        "merchant_id": row.merchant_id,
        "email": row.email,
        "state": owners::state(row, app.now_unix()),
        "reason": row.reason.as_str(),
        "issued_by": row.issued_by,
        "issued_at": time(row.issued_at)?,
        "expires_at": time(row.expires_at)?,
    });
    if let (Some(at), Some(fields)) = (row.ended_at, shown.as_object_mut()) {
        fields.insert(
            "ended_at".into(),
            serde_json::to_value(time(at)?).unwrap_or_default(),
        );
    }
    reshape(&shown)
}

pub async fn list(
    app: &App,
    merchant_id: &str,
    query: ListOwnerInvitationsQuery,
) -> Result<types::OwnerInvitationPage, ApiError> {
    let listing = Listing {
        limit: query.limit,
        cursor: query.cursor,
        ..Listing::default()
    };
    let page = owners::list(app, merchant_id, listing).await?;
    Ok(types::OwnerInvitationPage {
        items: page
            .items
            .iter()
            .map(|r| view(app, r))
            .collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}

pub async fn invite(
    app: &App,
    op: &Actor,
    merchant_id: String,
    req: types::InviteOwnerRequest,
) -> Result<types::OwnerInvitation, ApiError> {
    let row = owners::invite(app, op, &merchant_id, req.email).await?;
    view(app, &row)
}

pub async fn resend(
    app: &App,
    op: &Actor,
    invitation_id: String,
) -> Result<types::OwnerInvitation, ApiError> {
    let row = owners::resend(app, op, &invitation_id).await?;
    view(app, &row)
}

pub async fn revoke(
    app: &App,
    op: &Actor,
    invitation_id: String,
) -> Result<types::OwnerInvitation, ApiError> {
    let row = owners::revoke(app, op, &invitation_id).await?;
    view(app, &row)
}

pub async fn accept(
    app: &App,
    req: types::AcceptOwnerInvitationRequest,
    request_id: &str,
) -> Result<types::AcceptedOwner, ApiError> {
    let accepted = owners::accept(app, &req.token, req.password, request_id).await?;
    reshape(&serde_json::json!({
        "owner_id": accepted.owner_id,
        "merchant_id": accepted.merchant_id,
        "email": accepted.email,
        "status": "active",
    }))
}
