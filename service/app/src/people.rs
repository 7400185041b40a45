//! Operators: who they are, what role each has, their API tokens, and who
//! a presented token is. Tokens are shown once and kept only as the
//! master key's lookup hash; the configuration's tokens remain for
//! bootstrap (the first admin), each acting as an admin under its name.

pub use crate::actor::Operator;
use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::status::{OperatorStatus, Role, SessionRealm};
use crate::domain::validate;
use crate::keys::constant_time_eq;
use crate::store::rows::OperatorChange;
pub use crate::store::rows::{OperatorRow, OperatorTokenRow};
use crate::store::{StoreError, UniqueKey};
use crate::App;
use rand::RngCore;

/// The operator a bearer token names: a configuration token (compared in
/// constant time against each), or an active identity's token not revoked.
pub async fn authenticate(app: &App, presented: &str) -> Result<Operator, ApiError> {
    let mut configured = None;
    for op in &app.config.operators {
        if constant_time_eq(&op.token, presented) {
            configured = Some(op.name.clone());
        }
    }
    if let Some(name) = configured {
        return Ok(Operator {
            id: None,
            name,
            role: Role::Admin,
        });
    }
    // The lookup is by keyed hash: the database never sees the token, and
    // a guessed hash is worth nothing without the master key.
    let hash = app.vault.lookup_hash(presented);
    let found = app
        .db
        .run(|s| Box::pin(async move { s.operator_token(&hash).await }))
        .await?;
    match found {
        Some((token, op))
            if token.revoked_at.is_none()
                && token.expires_at.is_none_or(|end| end > app.now_unix())
                && op.status == OperatorStatus::Active =>
        {
            Ok(Operator {
                id: Some(op.id),
                name: op.name,
                role: op.role,
            })
        }
        _ => Err(ApiError::UnknownOperatorToken),
    }
}

/// A new operator's details, as asked.
pub struct NewOperator {
    pub name: String,
    pub email: String,
    pub role: Role,
}

/// A role named in a request or on the command line.
pub fn role(field: &str, text: &str) -> Result<Role, ApiError> {
    Role::parse(text).ok_or_else(|| {
        ApiError::invalid_field(field, "must be one of viewer, support, approver, admin")
    })
}

/// The person acting, when it is one: a configuration token or the
/// command line is bootstrap, and what it makes counts at once.
fn person_id(by: &Actor) -> Option<String> {
    by.acting().and_then(|a| a.who.id.clone())
}

/// Who made (or raised) an operator, and who vouches for them now: what a
/// person makes waits for a second admin; bootstrap vouches for itself.
fn made(by: &Actor) -> (Option<String>, Option<String>) {
    match person_id(by) {
        Some(id) => (Some(id), None),
        None => (None, Some(BOOTSTRAP.to_string())),
    }
}

/// `vouched_by` of an operator made by the configuration or the command
/// line, or from before vouching.
pub const BOOTSTRAP: &str = "bootstrap";

pub async fn create(app: &App, by: &Actor, new: NewOperator) -> Result<OperatorRow, ApiError> {
    let now = app.now_unix();
    let (made_by, vouched_by) = made(by);
    let row = OperatorRow {
        id: crate::ids::ordered(),
        name: validate::required_text("name", new.name, 128)?,
        email: validate::email("email", new.email)?,
        role: new.role,
        status: OperatorStatus::Active,
        created_at: now,
        updated_at: now,
        made_by,
        vouched_at: vouched_by.as_ref().map(|_| now),
        vouched_by,
    };
    let insert = row.clone();
    app.db
        .transaction_audited::<_, StoreError, _>(by.audit(Target::NewOperator, None, now), |s| {
            Box::pin(async move { s.insert_operator(&insert).await })
        })
        .await
        .map_err(|e| match e {
            StoreError::Conflict {
                key: UniqueKey::OperatorEmail,
                ..
            } => ApiError::OperatorEmailTaken,
            other => other.into(),
        })?;
    Ok(row)
}

/// Sets the password (for the console's sign-in) of the operator with
/// `email`, hashed with Argon2id, and ends its console sessions; the
/// operator.
pub async fn set_password(
    app: &App,
    by: &Actor,
    email: String,
    password: String,
) -> Result<OperatorRow, ApiError> {
    let email = validate::email("email", email)?;
    crate::passwords::acceptable("password", &password)?;
    let hash = crate::passwords::hash_off_thread(password).await?;
    let now = app.now_unix();
    // The operator's id is known once the row is found: the store names the
    // row it wrote as the target.
    let audit = by.audit(Target::NewOperator, None, now);
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                let row = s
                    .set_operator_password(&email, &hash, now)
                    .await?
                    .ok_or(ApiError::OperatorNotFound(email))?;
                // A reset is how a stolen password is taken back: every
                // console session signed in with the old one ends with it.
                s.end_sessions_of(SessionRealm::Console, &row.id, now)
                    .await?;
                Ok(row)
            })
        })
        .await
}

pub async fn find(app: &App, id: &str) -> Result<OperatorRow, ApiError> {
    let key = id.to_string();
    app.db
        .run(|s| Box::pin(async move { s.operator_by_id(&key).await }))
        .await?
        .ok_or_else(|| ApiError::OperatorNotFound(id.to_string()))
}

/// What an admin may change of an operator.
#[derive(Default)]
pub struct Changes {
    pub name: Option<String>,
    pub role: Option<Role>,
    pub status: Option<OperatorStatus>,
}

/// Changes an operator. Nobody changes their own role or status: an
/// admin cannot lock the last door behind them by mistake, nor raise
/// themselves.
pub async fn change(
    app: &App,
    by: &Actor,
    id: &str,
    changes: Changes,
) -> Result<OperatorRow, ApiError> {
    let own = by.acting().is_some_and(|a| a.who.id.as_deref() == Some(id));
    if own && (changes.role.is_some() || changes.status.is_some()) {
        return Err(ApiError::OperatorSelfChange);
    }
    let change = OperatorChange {
        name: changes
            .name
            .map(|n| validate::required_text("name", n, 128))
            .transpose()?,
        role: changes.role,
        status: changes.status,
        ..OperatorChange::at(app.now_unix())
    };
    let key = id.to_string();
    let now = app.now_unix();
    let audit = by.audit(Target::Operator(key.clone()), None, now);
    let (made_by, vouched_by) = made(by);
    // Refused inside the transaction: nothing commits for no operator.
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                let before = s
                    .operator_by_id(&key)
                    .await?
                    .ok_or_else(|| ApiError::OperatorNotFound(key.clone()))?;
                let mut after = s
                    .change_operator(&key, &change)
                    .await?
                    .ok_or(ApiError::OperatorNotFound(key.clone()))?;
                // A role raised by one person is theirs alone again until a
                // second admin vouches.
                if after.role.outranks(before.role) {
                    s.set_vouching(&key, made_by.as_deref(), vouched_by.as_deref(), now)
                        .await?;
                    after.made_by = made_by;
                    after.vouched_at = vouched_by.as_ref().map(|_| now);
                    after.vouched_by = vouched_by;
                }
                Ok(after)
            })
        })
        .await
}

/// A second admin vouches for an operator one admin made or raised alone:
/// from now on they count as a second person. Not the admin who made or
/// raised them, not themselves, not a configuration token (bootstrap
/// vouches by making). Vouching for one who already counts changes nothing.
pub async fn vouch(app: &App, by: &Actor, id: &str) -> Result<OperatorRow, ApiError> {
    let voucher = person_id(by).ok_or(ApiError::TokenIsNobody)?;
    let current = find(app, id).await?;
    if current.vouched() {
        return Ok(current);
    }
    if current.made_by.as_deref() == Some(voucher.as_str()) || current.id == voucher {
        return Err(ApiError::VouchForOwn);
    }
    let now = app.now_unix();
    let key = id.to_string();
    let made_by = current.made_by.clone();
    let audit = by.audit(Target::Operator(key.clone()), None, now);
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                s.set_vouching(&key, made_by.as_deref(), Some(&voucher), now)
                    .await?;
                Ok(())
            })
        })
        .await?;
    find(app, id).await
}

/// Refuses an operator who does not count as a second person yet; a
/// configuration token is refused before this (nobody in particular).
pub async fn counts(app: &App, who: &Operator) -> Result<(), ApiError> {
    match &who.id {
        Some(id) if !find(app, id).await?.vouched() => Err(ApiError::NotVouched(who.name.clone())),
        _ => Ok(()),
    }
}

/// A new token and the only copy of it anyone will see.
pub struct IssuedToken {
    pub token: String,
    pub row: OperatorTokenRow,
}

/// How long an operator token works unless asked otherwise: 90 days.
pub const TOKEN_DEFAULT_SECONDS: i64 = 90 * 24 * 3600;
/// The bounds of a token's life: an hour to 366 days.
const TOKEN_SECONDS: std::ops::RangeInclusive<i64> = 3600..=366 * 24 * 3600;

/// A new token for the operator, working for `expires_in` seconds (90
/// days when `None`): a token that leaks stops by itself.
pub async fn issue_token(
    app: &App,
    by: &Actor,
    operator_id: &str,
    label: String,
    expires_in: Option<i64>,
) -> Result<IssuedToken, ApiError> {
    let label = validate::required_text("label", label, 128)?;
    let expires_in = expires_in.unwrap_or(TOKEN_DEFAULT_SECONDS);
    if !TOKEN_SECONDS.contains(&expires_in) {
        return Err(ApiError::invalid_field(
            "expires_in_seconds",
            "must be between 3600 and 31622400",
        ));
    }
    find(app, operator_id).await?;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = format!("op_{}", hex::encode(bytes));
    let row = OperatorTokenRow {
        id: crate::ids::ordered(),
        operator_id: operator_id.to_string(),
        token_hash: app.vault.lookup_hash(&token),
        label,
        created_at: app.now_unix(),
        revoked_at: None,
        expires_at: Some(app.now_unix() + expires_in),
    };
    let insert = row.clone();
    let audit = by.audit(
        Target::Operator(operator_id.to_string()),
        None,
        row.created_at,
    );
    // Whoever holds a token acts as its operator: one a person issued for
    // someone else makes that someone theirs alone until a second admin
    // vouches again (else an admin with another's token is two people).
    let issuer = person_id(by).filter(|id| id != operator_id);
    let (now, key) = (row.created_at, operator_id.to_string());
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                s.insert_operator_token(&insert).await?;
                if let Some(issuer) = issuer {
                    s.set_vouching(&key, Some(&issuer), None, now).await?;
                }
                Ok(())
            })
        })
        .await?;
    Ok(IssuedToken { token, row })
}

pub async fn tokens(app: &App, operator_id: &str) -> Result<Vec<OperatorTokenRow>, ApiError> {
    find(app, operator_id).await?;
    let key = operator_id.to_string();
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.operator_tokens_of(&key).await }))
        .await?)
}

/// Revokes a token at once; revoking it again changes nothing.
pub async fn revoke_token(
    app: &App,
    by: &Actor,
    operator_id: &str,
    token_id: &str,
) -> Result<OperatorTokenRow, ApiError> {
    find(app, operator_id).await?;
    let (op, tok, now) = (
        operator_id.to_string(),
        token_id.to_string(),
        app.now_unix(),
    );
    let audit = by.audit(Target::Operator(op.clone()), None, now);
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                s.revoke_operator_token(&op, &tok, now)
                    .await?
                    .ok_or(ApiError::OperatorTokenNotFound(tok))
            })
        })
        .await
}
