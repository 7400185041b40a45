//! A merchant's owners, invited by an admin. An invitation is a random
//! token, kept only as the master key's keyed hash, that can be accepted
//! once, before it expires, to set the owner's password. Issuing one (or
//! issuing it again, which supersedes the pending one) queues the
//! platform-level `tenant_owner_invite` event, whose body carries the link
//! the platform's mailer sends; that body is sealed at rest and shown to
//! operators with the link redacted (`callbacks::shown_body`).

use crate::actor::{Actor, Target};
use crate::callbacks::{self, PlatformEvent};
use crate::domain::error::ApiError;
use crate::domain::people::OwnerAction;
use crate::domain::status::{
    AuditRole, InvitationReason, InvitationStatus, OrderKind, OwnerStatus, SessionRealm,
};
use crate::domain::validate;
use crate::listings::{self, Listing, Page};
use crate::store::rows::AuditRow;
pub use crate::store::rows::{InvitationRow, OwnerRow};
use crate::store::{Store, StoreError, UniqueKey};
use crate::{passwords, App};
use base64::Engine;
use rand::RngCore;

/// The event's name, as the customer's document gives it.
pub const EVENT: &str = "tenant_owner_invite";

/// Where the link of an invitation points: the portal's page that accepts
/// it (the console issue builds the page; `POST
/// /api/v1/owner/invitations/accept` accepts it meanwhile).
pub const ACCEPT_PATH: &str = "/portal/invitations/accept";

/// An invitation with the state a reader sees: `expired` once a pending
/// one's time is up.
pub fn state(row: &InvitationRow, now: i64) -> &'static str {
    match row.status {
        InvitationStatus::Pending if now >= row.expires_at => "expired",
        status => status.as_str(),
    }
}

/// Invites `email` to own `merchant_id`: a new owner, or one invited
/// before and not yet active (its pending invitation superseded).
pub async fn invite(
    app: &App,
    by: &Actor,
    merchant_id: &str,
    email: String,
) -> Result<InvitationRow, ApiError> {
    let email = validate::email("email", email)?;
    let subject = Subject::of(app, merchant_id, email).await?;
    issue(app, by, subject, InvitationReason::Created).await
}

/// Issues the invitation again: a new link, the pending one superseded.
/// An invitation revoked or expired can be issued again; one whose owner
/// is already active cannot.
pub async fn resend(app: &App, by: &Actor, id: &str) -> Result<InvitationRow, ApiError> {
    let old = find(app, id).await?;
    let subject = Subject::of(app, &old.merchant_id, old.email).await?;
    issue(app, by, subject, InvitationReason::Resent).await
}

/// Revokes a pending invitation: its link no longer works.
pub async fn revoke(app: &App, by: &Actor, id: &str) -> Result<InvitationRow, ApiError> {
    let found = find(app, id).await?;
    let now = app.now_unix();
    // The trail names the tenant.
    let audit = by.audit(Target::Merchant(found.merchant_id), None, now);
    let key = id.to_string();
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                let row = s
                    .invitation_by_id(&key)
                    .await?
                    .ok_or_else(|| ApiError::InvitationNotFound(format!("`{key}`")))?;
                if !s
                    .end_invitation(&key, InvitationStatus::Revoked, now)
                    .await?
                {
                    return Err(ApiError::InvalidStateTransition {
                        order_no: key,
                        status: row.status.to_string(),
                        action: "revoke".into(),
                    });
                }
                Ok(InvitationRow {
                    status: InvitationStatus::Revoked,
                    ended_at: Some(now),
                    ..row
                })
            })
        })
        .await
}

pub async fn find(app: &App, id: &str) -> Result<InvitationRow, ApiError> {
    let key = id.to_string();
    app.db
        .run(|s| Box::pin(async move { s.invitation_by_id(&key).await }))
        .await?
        .ok_or_else(|| ApiError::InvitationNotFound(format!("`{id}`")))
}

/// A merchant's owner by email (the console's sign-in reads it).
pub async fn owner(
    app: &App,
    merchant_id: &str,
    email: &str,
) -> Result<Option<OwnerRow>, ApiError> {
    let (merchant, email) = (merchant_id.to_string(), email.to_lowercase());
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.owner_by_email(&merchant, &email).await }))
        .await?)
}

/// A merchant's invitations, newest first.
pub async fn list(
    app: &App,
    merchant_id: &str,
    listing: Listing,
) -> Result<Page<InvitationRow>, ApiError> {
    crate::merchants::find_row(app, merchant_id).await?;
    listings::owner_invitations(app, merchant_id, listing).await
}

/// The owner an accepted invitation made.
pub struct Accepted {
    pub owner_id: String,
    pub merchant_id: String,
    pub email: String,
}

/// Accepts the invitation `token` names, setting the owner's password.
/// Unknown, superseded, revoked, used or expired: refused, nothing
/// changed.
/// The invitation's owner chooses a password: the owner is active from
/// then on, and the trail holds the acceptance as the owner's own action
/// (`accept_owner_invitation`) in the same transaction.
/// Whom a usable invitation link is for: the email and the merchant's
/// name, for its page to say so. Refused as `accept` would refuse it.
pub async fn invitation_for(app: &App, token: &str) -> Result<(String, String), ApiError> {
    let hash = app.vault.lookup_hash(token);
    let found = app
        .db
        .run(|s| Box::pin(async move { s.invitation_by_token(&hash).await }))
        .await?;
    let row = usable(found.as_ref(), app.now_unix())?.clone();
    let merchant = crate::merchants::find_row(app, &row.merchant_id).await?;
    Ok((row.email, merchant.name))
}

pub async fn accept(
    app: &App,
    token: &str,
    password: String,
    request_id: &str,
) -> Result<Accepted, ApiError> {
    passwords::acceptable("password", &password)?;
    let hash = app.vault.lookup_hash(token);
    // Checked before the hash is computed, so that a wrong link costs no
    // hashing; checked again under the row's lock below.
    let probe = hash.clone();
    let found = app
        .db
        .run(|s| Box::pin(async move { s.invitation_by_token(&probe).await }))
        .await?;
    usable(found.as_ref(), app.now_unix())?;
    let password_hash = passwords::hash_off_thread(password).await?;
    let now = app.now_unix();
    let request_id = request_id.to_string();
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                let row = s.lock_invitation_by_hash(&hash).await?;
                let row = usable(row.as_ref(), now)?.clone();
                s.end_invitation(&row.id, InvitationStatus::Accepted, now)
                    .await?;
                s.activate_owner(&row.owner_id, &password_hash, now).await?;
                let (target_type, target_id) =
                    Target::Merchant(row.merchant_id.clone()).kind_and_id();
                s.append_audit(&AuditRow {
                    id: crate::ids::ordered(),
                    created_at: now,
                    operator_id: Some(row.owner_id.clone()),
                    operator_name: row.email.clone(),
                    role: AuditRole::Owner,
                    action: OwnerAction::AcceptInvitation.name().to_string(),
                    target_type: target_type.to_string(),
                    target_id,
                    remarks: None,
                    request_id,
                    before_state: None,
                    after_state: None,
                })
                .await?;
                Ok(Accepted {
                    owner_id: row.owner_id,
                    merchant_id: row.merchant_id,
                    email: row.email,
                })
            })
        })
        .await
}

fn usable(row: Option<&InvitationRow>, now: i64) -> Result<&InvitationRow, ApiError> {
    let row = row.ok_or_else(|| ApiError::InvitationNotFound("with this token".into()))?;
    match state(row, now) {
        "pending" => Ok(row),
        ended => Err(ApiError::InvitationEnded(ended)),
    }
}

/// Whom an invitation is for.
struct Subject {
    merchant_id: String,
    merchant_name: String,
    email: String,
}

impl Subject {
    async fn of(app: &App, merchant_id: &str, email: String) -> Result<Subject, ApiError> {
        let merchant = crate::merchants::find_row(app, merchant_id).await?;
        Ok(Subject {
            merchant_id: merchant.id,
            merchant_name: merchant.name,
            email,
        })
    }
}

async fn issue(
    app: &App,
    by: &Actor,
    subject: Subject,
    reason: InvitationReason,
) -> Result<InvitationRow, ApiError> {
    let (Some(url), Some(_)) = (
        app.config.platform_events_url.clone(),
        app.config.platform_events_secret.as_ref(),
    ) else {
        return Err(ApiError::PlatformEventsUnconfigured);
    };
    let now = app.now_unix();
    let token = new_token();
    let invitation = InvitationRow {
        id: crate::ids::ordered(),
        merchant_id: subject.merchant_id.clone(),
        owner_id: String::new(),
        email: subject.email.clone(),
        token_hash: app.vault.lookup_hash(&token),
        status: InvitationStatus::Pending,
        reason,
        issued_by: by.name().to_string(),
        issued_at: now,
        expires_at: now + app.config.owner_invitation_ttl_seconds,
        ended_at: None,
    };
    let link = format!(
        "{}{ACCEPT_PATH}?token={token}",
        app.config.public_base_url.trim_end_matches('/')
    );
    let owner = OwnerRow {
        id: crate::ids::ordered(),
        merchant_id: subject.merchant_id.clone(),
        email: subject.email.clone(),
        status: OwnerStatus::Invited,
        password_hash: None,
        created_at: now,
        updated_at: now,
    };
    // Sealed before the transaction: the body names nothing the
    // transaction decides (the owner's id is not in it).
    let sealed_body = app
        .vault
        .encrypt(&body(&invitation, &subject.merchant_name, &link)?)
        .map_err(|e| ApiError::Internal(format!("sealing a platform event: {e}")))?;
    // The trail names the tenant.
    let audit = by.audit(Target::Merchant(subject.merchant_id.clone()), None, now);
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                let owner_id = owner_of(s, owner).await?;
                s.end_pending_invitations(&owner_id, InvitationStatus::Superseded, now)
                    .await?;
                let invitation = InvitationRow {
                    owner_id,
                    ..invitation
                };
                s.insert_invitation(&invitation).await?;
                callbacks::enqueue_platform(
                    s,
                    PlatformEvent {
                        kind: OrderKind::OwnerInvitation,
                        subject_id: &invitation.id,
                        merchant_id: &invitation.merchant_id,
                        event: EVENT,
                        url: &url,
                        sealed_body,
                    },
                    now,
                )
                .await?;
                Ok(invitation)
            })
        })
        .await
}

/// The merchant's owners, oldest first.
pub async fn owners_of(app: &App, merchant_id: &str) -> Result<Vec<OwnerRow>, ApiError> {
    crate::merchants::find_row(app, merchant_id).await?;
    let id = merchant_id.to_string();
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.owners_of(&id).await }))
        .await?)
}

/// Disables an owner, or enables a disabled one again. Disabled, its
/// portal sessions and its pending invitation end in the same commit, so
/// nothing it holds lets it back in. Enabled, it is active if it had set
/// its password, invited otherwise; enabling one that is not disabled
/// changes nothing. Audited against its merchant (the trail's targets),
/// the owner named in the remarks.
pub async fn set_status(
    app: &App,
    by: &Actor,
    owner_id: &str,
    enable: bool,
    reason: &str,
) -> Result<OwnerRow, ApiError> {
    let now = app.now_unix();
    let id = owner_id.to_string();
    let owner = app
        .db
        .run(|s| Box::pin(async move { s.owner_by_id(&id).await }))
        .await?
        .ok_or_else(|| ApiError::OwnerNotFound(owner_id.to_string()))?;
    let verb = if enable { "enabled" } else { "disabled" };
    let remarks = format!("owner {} {verb}: {reason}", owner.id);
    let audit = by.audit(
        Target::Merchant(owner.merchant_id.clone()),
        Some(&remarks),
        now,
    );
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                let current = s
                    .owner_by_id(&owner.id)
                    .await?
                    .ok_or_else(|| ApiError::OwnerNotFound(owner.id.clone()))?;
                let status = match (enable, current.status) {
                    (false, _) => OwnerStatus::Disabled,
                    (true, OwnerStatus::Disabled) if current.password_hash.is_some() => {
                        OwnerStatus::Active
                    }
                    (true, OwnerStatus::Disabled) => OwnerStatus::Invited,
                    (true, unchanged) => unchanged,
                };
                if !enable {
                    s.end_sessions_of(SessionRealm::Portal, &current.id, now)
                        .await?;
                    s.end_pending_invitations(&current.id, InvitationStatus::Revoked, now)
                        .await?;
                }
                s.set_owner_status(&current.id, status, now)
                    .await?
                    .ok_or(ApiError::OwnerNotFound(current.id))
            })
        })
        .await
}

/// The owner row to invite: the existing one if not yet active, else
/// this new one.
async fn owner_of(s: &mut dyn Store, new: OwnerRow) -> Result<String, ApiError> {
    match s.owner_by_email(&new.merchant_id, &new.email).await? {
        Some(o) if o.status == OwnerStatus::Active => Err(ApiError::OwnerAlreadyActive(o.email)),
        Some(o) => Ok(o.id),
        None => {
            let id = new.id.clone();
            s.insert_owner(&new).await.map_err(|e| match e {
                StoreError::Conflict {
                    key: UniqueKey::OwnerEmail,
                    ..
                } => ApiError::InvalidStateTransition {
                    order_no: new.email.clone(),
                    status: "being invited".into(),
                    action: "invite".into(),
                },
                other => other.into(),
            })?;
            Ok(id)
        }
    }
}

/// `inv_` and 32 random bytes, URL-safe: it travels in a link.
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!(
        "inv_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// The event's body, as the contract publishes it (`TenantOwnerInvite`).
fn body(row: &InvitationRow, merchant_name: &str, link: &str) -> Result<String, ApiError> {
    let iso = |t: i64| {
        chrono::DateTime::from_timestamp(t, 0)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .ok_or_else(|| ApiError::Internal(format!("time {t} is out of range")))
    };
    Ok(serde_json::json!({
        "event": EVENT,
        "invitation_id": row.id,
        "tenant_id": row.merchant_id,
        "tenant_name": merchant_name,
        "email": row.email,
        "role": "owner",
        "state": row.status.as_str(),
        "reason": row.reason.as_str(),
        "issued_by": row.issued_by,
        "issued_at": iso(row.issued_at)?,
        "expires_at": iso(row.expires_at)?,
        "link": link,
    })
    .to_string())
}
