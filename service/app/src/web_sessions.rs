//! Sign-in to the console (operators) and the portal (merchant owners):
//! a password checked against its Argon2id hash, a session named by a
//! random cookie and stored only as the master key's keyed hash, a form
//! token derived from the cookie (so nothing more is stored), and a rate
//! limit on failures per account and per address.
//!
//! A session ends at logout, after `IDLE_SECONDS` without a request or
//! `ABSOLUTE_SECONDS` after sign-in, and as soon as its operator is
//! disabled or its owner is no longer active: each request checks.

use crate::domain::error::ApiError;
use crate::domain::status::{OperatorStatus, OwnerStatus, SessionRealm};
use crate::keys::constant_time_eq;
use crate::passwords;
use crate::people::Operator;
use crate::store::rows::{FailureTally, LoginFailureRow, OwnerRow, WebSessionRow};
use crate::telemetry::metrics;
use crate::App;
use base64::Engine;
use rand::RngCore;
use std::sync::OnceLock;

/// A session unused this long has ended.
pub const IDLE_SECONDS: i64 = 30 * 60;
/// A session this old has ended, used or not.
pub const ABSOLUTE_SECONDS: i64 = 12 * 60 * 60;
/// Failures are counted over this window…
pub const FAILURE_WINDOW_SECONDS: i64 = 15 * 60;
/// …and at this many for one account, sign-in is refused until they age out…
pub const ACCOUNT_FAILURES: i64 = 5;
/// …and at this many from one address.
pub const ADDRESS_FAILURES: i64 = 20;
/// `last_seen_at` is written at most this often, not on every page.
const TOUCH_SECONDS: i64 = 60;

/// Who a session acts for.
#[derive(Clone, Debug)]
pub enum Who {
    Operator(Operator),
    Owner(OwnerRow),
}

/// A live session: whom it names, and the token its forms must carry.
#[derive(Clone, Debug)]
pub struct Session {
    /// The session's key: the keyed hash of its cookie, never the cookie.
    pub id: String,
    pub who: Who,
    pub csrf: String,
    /// Its operator must prove a second factor and has not yet: the
    /// session opens nothing but that page and the sign-out.
    pub second_factor_pending: bool,
}

impl Session {
    pub fn operator(&self) -> Option<&Operator> {
        match &self.who {
            Who::Operator(op) => Some(op),
            Who::Owner(_) => None,
        }
    }

    pub fn owner(&self) -> Option<&OwnerRow> {
        match &self.who {
            Who::Owner(owner) => Some(owner),
            Who::Operator(_) => None,
        }
    }

    /// The owner as the actor taking `action` in the portal, in the
    /// request `request_id`.
    pub fn owner_actor(
        &self,
        action: crate::domain::people::OwnerAction,
        request_id: &str,
    ) -> Option<crate::actor::Actor> {
        self.owner().map(|o| crate::actor::Actor::Owner {
            id: o.id.clone(),
            email: o.email.clone(),
            merchant_id: o.merchant_id.clone(),
            action,
            request_id: request_id.to_string(),
        })
    }

    /// Whether a form's token is this session's (constant time).
    pub fn form_is_ours(&self, presented: &str) -> bool {
        constant_time_eq(&self.csrf, presented)
    }
}

/// Why a sign-in was refused. A wrong password and an unknown email are
/// one answer, reached in the same time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Credentials,
    TooManyAttempts,
    /// Every place to check a password is taken and the queue is full:
    /// try again in a moment (`passwords::Checks`).
    Busy,
}

/// A hash no password matches in practice, verified against when the email
/// names nobody, so that an unknown email costs what a wrong password does.
fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        passwords::hash(&hex::encode(bytes)).unwrap_or_default()
    })
}

/// Which of `hashes` `password` matches, checked in `turn`.
async fn verify_off_thread(
    turn: passwords::Turn,
    password: String,
    hashes: Vec<String>,
) -> Result<Option<usize>, ApiError> {
    turn.run(move || {
        if hashes.is_empty() {
            let _ = passwords::verify(&password, decoy_hash());
            return None;
        }
        hashes.iter().position(|h| passwords::verify(&password, h))
    })
    .await
}

fn csrf_of(app: &App, token: &str) -> String {
    app.vault.lookup_hash(&format!("form:{token}"))
}

/// Signs `email` in to `realm` with `password`, from `address`; the new
/// session's cookie value. `replacing` (the cookie the browser still had)
/// is ended: a sign-in always starts a new session.
pub async fn sign_in(
    app: &App,
    realm: SessionRealm,
    email: &str,
    password: String,
    address: &str,
    replacing: Option<&str>,
) -> Result<Result<String, Refused>, ApiError> {
    let email = email.trim().to_lowercase();
    let account = app
        .vault
        .lookup_hash(&format!("{}:{email}", realm.as_str()));
    let address_key = format!("{}:{address}", realm.as_str());
    let keys = [account.as_str(), address_key.as_str()];
    let now = app.now_unix();
    // Past the limit already, as read before: refused from memory, so a
    // crowd past it costs neither a place nor the database (`lockouts`).
    if app.lockouts.holds(&keys, now) {
        metrics::sign_in_refused(realm.as_str(), "too_many_attempts");
        return Ok(Err(Refused::TooManyAttempts));
    }
    // A place to check the password first: past the checks' bound the
    // answer is at once, before the database is read or written.
    let Ok(place) = app.password_checks.place() else {
        metrics::sign_in_refused(realm.as_str(), "busy");
        return Ok(Err(Refused::Busy));
    };
    // The database is read and written in the place's turn: a crowd of
    // sign-ins holds no more of the pool than the checks that run at once.
    let turn = place.turn().await?;
    let since = now - FAILURE_WINDOW_SECONDS;
    let (failures, candidates) = counted(app, realm, &email, &account, address, since).await?;
    if failures.0.count >= ACCOUNT_FAILURES || failures.1.count >= ADDRESS_FAILURES {
        remember_lockouts(app, &keys, failures, 0, now);
        metrics::sign_in_refused(realm.as_str(), "too_many_attempts");
        return Ok(Err(Refused::TooManyAttempts));
    }
    let hashes = candidates.iter().map(|(_, h)| h.clone()).collect();
    // Counted as a failure before the hash is checked, so that attempts
    // made at once see each other; taken back if the password is right.
    let failure = record_failure(app, realm, account.clone(), address, now).await?;
    // This one may be the failure that reaches a limit: the attempts after
    // it are refused from memory, and a right password forgets it below.
    remember_lockouts(app, &keys, failures, 1, now);
    let matched = verify_off_thread(turn, password, hashes).await?;
    let Some(who) = matched
        .and_then(|i| candidates.into_iter().nth(i))
        .map(|(w, _)| w)
    else {
        tracing::warn!(realm = realm.as_str(), "a sign-in failed");
        metrics::sign_in_refused(realm.as_str(), "credentials");
        return Ok(Err(Refused::Credentials));
    };
    app.lockouts.release(&keys);
    forgive(app, failure).await?;
    Ok(Ok(start_session(app, realm, who, replacing, now).await?))
}

/// A new session for `who`, ending the one `replacing` names: its cookie.
async fn start_session(
    app: &App,
    realm: SessionRealm,
    who: Who,
    replacing: Option<&str>,
    now: i64,
) -> Result<String, ApiError> {
    let token = new_token();
    let (subject_id, merchant_id) = match &who {
        Who::Operator(op) => (op.id.clone().unwrap_or_default(), None),
        Who::Owner(owner) => (owner.id.clone(), Some(owner.merchant_id.clone())),
    };
    let row = WebSessionRow {
        id: app.vault.lookup_hash(&token),
        realm,
        subject_id,
        merchant_id,
        created_at: now,
        last_seen_at: now,
        ended_at: None,
        second_factor_at: None,
    };
    let old = replacing.map(|t| app.vault.lookup_hash(t));
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                if let Some(old) = old {
                    s.end_web_session(&old, now).await?;
                }
                Ok(s.insert_web_session(&row).await?)
            })
        })
        .await?;
    Ok(token)
}

/// Remembers the account (`keys[0]`) or the address (`keys[1]`) locked
/// out when its failures, with `added` more recorded at `now`, reach its
/// limit: until the oldest of them leaves the window, the first moment the
/// count can fall (a failure at `t` counts while `now <= t + window`).
fn remember_lockouts(
    app: &App,
    keys: &[&str; 2],
    (account, address): (FailureTally, FailureTally),
    added: i64,
    now: i64,
) {
    for (key, tally, limit) in [
        (keys[0], account, ACCOUNT_FAILURES),
        (keys[1], address, ADDRESS_FAILURES),
    ] {
        if tally.count + added >= limit {
            let oldest = tally.oldest.unwrap_or(now).min(now);
            app.lockouts
                .lock(key, oldest + FAILURE_WINDOW_SECONDS + 1, now);
        }
    }
}

/// Failures so far (for the account, from the address) and who may be
/// signing in: the active operator, or every active owner, with `email`.
async fn counted(
    app: &App,
    realm: SessionRealm,
    email: &str,
    account: &str,
    address: &str,
    since: i64,
) -> Result<((FailureTally, FailureTally), Vec<(Who, String)>), ApiError> {
    let (acc, addr, who_email) = (account.to_string(), address.to_string(), email.to_string());
    Ok(app
        .db
        .run(move |s| {
            Box::pin(async move {
                s.prune_login_failures(since - FAILURE_WINDOW_SECONDS)
                    .await?;
                let failures = s.login_failures_since(realm, &acc, &addr, since).await?;
                let candidates = match realm {
                    SessionRealm::Console => s
                        .operator_signing_in(&who_email)
                        .await?
                        .and_then(|(op, hash)| hash.map(|h| vec![(Who::Operator(from_row(op)), h)]))
                        .unwrap_or_default(),
                    SessionRealm::Portal => s
                        .owners_signing_in(&who_email)
                        .await?
                        .into_iter()
                        .map(|(owner, h)| (Who::Owner(owner), h))
                        .collect(),
                };
                Ok((failures, candidates))
            })
        })
        .await?)
}

pub(crate) async fn record_failure(
    app: &App,
    realm: SessionRealm,
    account: String,
    address: &str,
    now: i64,
) -> Result<String, ApiError> {
    let id = uuid::Uuid::new_v4().to_string();
    let failure = LoginFailureRow {
        id: id.clone(),
        realm,
        account,
        address: address.to_string(),
        at: now,
    };
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move { Ok(s.insert_login_failure(&failure).await?) })
        })
        .await?;
    Ok(id)
}

async fn forgive(app: &App, failure: String) -> Result<(), ApiError> {
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move { Ok(s.forgive_login_failure(&failure).await?) })
        })
        .await
}

fn from_row(op: crate::store::rows::OperatorRow) -> Operator {
    Operator {
        id: Some(op.id),
        name: op.name,
        role: op.role,
    }
}

fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The live session `token` names in `realm`, if any. One that has passed
/// a limit, or whose person can no longer act, is ended here.
pub async fn current(
    app: &App,
    realm: SessionRealm,
    token: &str,
) -> Result<Option<Session>, ApiError> {
    let id = app.vault.lookup_hash(token);
    let now = app.now_unix();
    let csrf = csrf_of(app, token);
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                let Some(row) = s.web_session(&id).await? else {
                    return Ok(None);
                };
                if row.realm != realm || row.ended_at.is_some() {
                    return Ok(None);
                }
                let fresh = now - row.last_seen_at <= IDLE_SECONDS
                    && now - row.created_at <= ABSOLUTE_SECONDS;
                let who = match realm {
                    SessionRealm::Console => s
                        .operator_by_id(&row.subject_id)
                        .await?
                        .filter(|op| op.status == OperatorStatus::Active)
                        .map(|op| Who::Operator(from_row(op))),
                    SessionRealm::Portal => s
                        .owner_by_id(&row.subject_id)
                        .await?
                        .filter(|o| o.status == OwnerStatus::Active)
                        .map(Who::Owner),
                };
                match who {
                    Some(who) if fresh => {
                        if now - row.last_seen_at >= TOUCH_SECONDS {
                            s.touch_web_session(&id, now).await?;
                        }
                        let second_factor_pending = match &who {
                            Who::Operator(op) => {
                                op.role.needs_second_factor() && row.second_factor_at.is_none()
                            }
                            Who::Owner(_) => false,
                        };
                        Ok(Some(Session {
                            id,
                            who,
                            csrf,
                            second_factor_pending,
                        }))
                    }
                    _ => {
                        s.end_web_session(&id, now).await?;
                        Ok(None)
                    }
                }
            })
        })
        .await
}

/// Ends the session `token` names (logout).
pub async fn sign_out(app: &App, token: &str) -> Result<(), ApiError> {
    let id = app.vault.lookup_hash(token);
    let now = app.now_unix();
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move { Ok(s.end_web_session(&id, now).await?) })
        })
        .await
}
