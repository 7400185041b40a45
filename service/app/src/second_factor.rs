//! The console's second factor: a code from an authenticator app (RFC
//! 6238, six digits every 30 s, checked by `totp-rs`), proven at sign-in
//! by everyone who may decide a money action (`Role::needs_second_factor`)
//! and again before each approval. Enrolment happens at the first sign-in:
//! the secret, sealed under the master key, is shown until its first code
//! is proven. A code's time step is accepted once per operator, so a code
//! seen over a shoulder or replayed is refused; wrong codes count with
//! the sign-in failures and stop at the same limit.
//!
//! Codes are checked against the real time (`App::wall_unix`): the
//! sandbox's clock runs ahead for its schedules, a phone's does not.

use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::status::SessionRealm;
use crate::domain::validate;
use crate::people::Operator;
use crate::store::rows::{OperatorRow, SecondFactorRow};
use crate::telemetry::metrics;
use crate::web_sessions::{
    record_failure, ACCOUNT_FAILURES, ADDRESS_FAILURES, FAILURE_WINDOW_SECONDS,
};
use crate::App;
use rand::RngCore;
use totp_rs::{Builder, Secret, Totp};

/// The name authenticator apps list the console's codes under.
pub const ISSUER: &str = "Payments console";
/// Bytes of a new secret: 160 bits, as RFC 4226 recommends.
const SECRET_BYTES: usize = 20;

/// What the person signing in is asked for.
pub enum Prompt {
    /// Enrolment under way: the key to add to an authenticator app, as the
    /// text to type (base32, in groups of four) and as the `otpauth://`
    /// link its QR code carries. Shown to this operator's half-signed-in
    /// sessions only, until a first code is proven.
    Enrol { key: String, link: String },
    /// Enrolled: a code from the app.
    Code,
}

/// When a code is asked for: what the metric and the log say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    SignIn,
    Approval,
}

impl When {
    fn as_str(self) -> &'static str {
        match self {
            When::SignIn => "sign_in",
            When::Approval => "approval",
        }
    }
}

/// Why a code was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not the code of now (or of the step either side).
    Wrong,
    /// The code of a time step accepted before: wait for the next one.
    Used,
    /// Too many failures of this operator or from this address lately.
    TooManyAttempts,
}

impl Refused {
    fn as_str(self) -> &'static str {
        match self {
            Refused::Wrong => "wrong",
            Refused::Used => "used",
            Refused::TooManyAttempts => "too_many_attempts",
        }
    }
}

fn totp(secret: &[u8], account: &str) -> Result<Totp, ApiError> {
    // An account name may not hold a colon (it separates the issuer).
    let account: String = account
        .chars()
        .map(|c| if c == ':' { ' ' } else { c })
        .collect();
    Builder::new()
        .with_secret(Secret::from(secret.to_vec()))
        .with_issuer(Some(ISSUER))
        .with_account_name(account)
        .build()
        .map_err(|e| ApiError::Internal(format!("a second factor: {e}")))
}

fn opened(app: &App, row: &SecondFactorRow, account: &str) -> Result<Totp, ApiError> {
    let key = app
        .vault
        .decrypt(&row.secret_sealed)
        .map_err(|e| ApiError::Internal(format!("operator {}'s second factor: {e}", row.id)))?;
    let secret = Secret::try_from_base32(&key).map_err(|_| {
        ApiError::Internal(format!("operator {}'s second factor: not base32", row.id))
    })?;
    totp(secret.as_ref(), account)
}

fn operator_id(operator: &Operator) -> Result<String, ApiError> {
    operator
        .id
        .clone()
        .ok_or_else(|| ApiError::Internal("a console session names a configuration token".into()))
}

/// What `operator` is asked for now: an enrolment (started here, or the
/// one under way shown again), or a code.
pub async fn prompt(app: &App, operator: &Operator) -> Result<Prompt, ApiError> {
    let id = operator_id(operator)?;
    let mut bytes = [0u8; SECRET_BYTES];
    rand::thread_rng().fill_bytes(&mut bytes);
    let key = Secret::from(bytes.to_vec()).to_base32();
    let fresh = SecondFactorRow {
        id: id.clone(),
        secret_sealed: app
            .vault
            .encrypt(&key)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        created_at: app.now_unix(),
        enrolled_at: None,
        last_step: None,
    };
    // Read first: an enrolled operator's sign-in writes nothing here.
    let row = app
        .db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                Ok(match s.second_factor(&fresh.id).await? {
                    Some(row) => row,
                    None => s.begin_second_factor(&fresh).await?,
                })
            })
        })
        .await?;
    if row.enrolled_at.is_some() {
        return Ok(Prompt::Code);
    }
    let totp = opened(app, &row, &operator.name)?;
    let key = totp.secret().to_base32();
    let link = totp
        .to_url()
        .map_err(|e| ApiError::Internal(format!("a second factor's link: {e}")))?;
    Ok(Prompt::Enrol {
        key: grouped(&key),
        link,
    })
}

/// Base32 in groups of four, as a person types it.
fn grouped(key: &str) -> String {
    key.as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks `code` for `operator`, from `address`; a code accepted is never
/// accepted again. An operator with no second factor yet has no code to
/// prove (`prompt` starts one).
pub async fn prove(
    app: &App,
    operator: &Operator,
    code: &str,
    address: &str,
    when: When,
) -> Result<Result<(), Refused>, ApiError> {
    let id = operator_id(operator)?;
    let account = app.vault.lookup_hash(&format!("second-factor:{id}"));
    let now = app.now_unix();
    let since = now - FAILURE_WINDOW_SECONDS;
    let (key, acc, addr) = (id.clone(), account.clone(), address.to_string());
    let (row, failures) = app
        .db
        .run(move |s| {
            Box::pin(async move {
                let row = s.second_factor(&key).await?;
                let failures = s
                    .login_failures_since(SessionRealm::Console, &acc, &addr, since)
                    .await?;
                Ok((row, failures))
            })
        })
        .await?;
    let refused = |reason: Refused| {
        // Who and why, never the code.
        tracing::warn!(
            operator_id = id.as_str(),
            when = when.as_str(),
            reason = reason.as_str(),
            "a second-factor code was refused"
        );
        metrics::second_factor_refused(when.as_str(), reason.as_str());
        Ok(Err(reason))
    };
    if failures.0.count >= ACCOUNT_FAILURES || failures.1.count >= ADDRESS_FAILURES {
        return refused(Refused::TooManyAttempts);
    }
    let Some(row) = row else {
        return refused(Refused::Wrong);
    };
    let digits: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let wall = u64::try_from(app.wall_unix()).unwrap_or(0);
    let step = match opened(app, &row, &operator.name)?.check(&digits, wall) {
        Some(step) => i64::try_from(step).unwrap_or(i64::MAX),
        None => {
            record_failure(app, SessionRealm::Console, account, address, now).await?;
            return refused(Refused::Wrong);
        }
    };
    let enrolled_at = row.enrolled_at.unwrap_or(now);
    let accepted = app
        .db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                Ok(s.accept_second_factor_step(&row.id, step, enrolled_at)
                    .await?)
            })
        })
        .await?;
    if !accepted {
        record_failure(app, SessionRealm::Console, account, address, now).await?;
        return refused(Refused::Used);
    }
    Ok(Ok(()))
}

/// `prove` at sign-in: the session `session_id` (the keyed hash of its
/// cookie) counts as signed in once the code is accepted.
pub async fn prove_for_session(
    app: &App,
    session_id: &str,
    operator: &Operator,
    code: &str,
    address: &str,
) -> Result<Result<(), Refused>, ApiError> {
    if let Err(refused) = prove(app, operator, code, address, When::SignIn).await? {
        return Ok(Err(refused));
    }
    let (id, now) = (session_id.to_string(), app.now_unix());
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move { Ok(s.pass_second_factor(&id, now).await?) })
        })
        .await?;
    tracing::info!(
        operator_id = operator.id.as_deref().unwrap_or_default(),
        "second factor proven"
    );
    Ok(Ok(()))
}

/// Forgets the second factor of the operator with `email` (a lost phone),
/// so that their next sign-in enrols a new one, and ends their console
/// sessions, in one audited transaction. Whether they had one.
pub async fn reset(app: &App, by: &Actor, email: String) -> Result<(OperatorRow, bool), ApiError> {
    let email = validate::email("email", email)?;
    let wanted = email.clone();
    let (row, _) = app
        .db
        .run(move |s| Box::pin(async move { s.operator_signing_in(&wanted).await }))
        .await?
        .ok_or(ApiError::OperatorNotFound(email))?;
    let now = app.now_unix();
    let audit = by.audit(
        Target::Operator(row.id.clone()),
        Some("second factor reset"),
        now,
    );
    let id = row.id.clone();
    let had = app
        .db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                let had = s.reset_second_factor(&id).await?;
                s.end_sessions_of(SessionRealm::Console, &id, now).await?;
                Ok(had)
            })
        })
        .await?;
    Ok((row, had))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_the_rfc_6238_code_of_its_step_and_no_other() {
        // RFC 6238, appendix B: SHA-1, the ASCII secret "12345678901234567890".
        let t = totp(b"12345678901234567890", "ann").unwrap();
        assert_eq!(t.generate(59).to_string(), "287082");
        assert_eq!(t.check("287082", 59), Some(1));
        // One step either side is accepted, for a clock a little off…
        assert_eq!(t.check("287082", 59 + 30), Some(1));
        // …and no further.
        assert_eq!(t.check("287082", 59 + 60), None);
        assert_eq!(t.check("287083", 59), None);
        assert_eq!(t.check("not a code", 59), None);
    }

    #[test]
    fn a_key_is_typed_in_groups_of_four() {
        assert_eq!(grouped("ABCDEFGHIJ"), "ABCD EFGH IJ");
    }
}
