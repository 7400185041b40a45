//! The console's and the portal's rows (sessions, sign-in failures, a
//! secret kept for one page, an operator's second factor), apart from the
//! rest of `rows` only to keep each file short.

use crate::domain::status::SessionRealm;
use crate::schema::{login_failures, operator_second_factors, secret_reveals, web_sessions};
use diesel::prelude::*;

/// A console or portal session, known by the keyed hash of its cookie.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = web_sessions, treat_none_as_default_value = false)]
pub struct WebSessionRow {
    pub id: String,
    pub realm: SessionRealm,
    pub subject_id: String,
    pub merchant_id: Option<String>,
    pub created_at: i64,
    pub last_seen_at: i64,
    pub ended_at: Option<i64>,
    /// When its operator proved the second factor in it; `None` while not
    /// (or for a person who needs none).
    pub second_factor_at: Option<i64>,
}

/// An operator's second factor: the authenticator's secret, sealed under
/// the master key, and the last time step a code was accepted for.
#[derive(Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = operator_second_factors, treat_none_as_default_value = false)]
pub struct SecondFactorRow {
    /// The operator's id.
    pub id: String,
    pub secret_sealed: String,
    pub created_at: i64,
    /// When its first code was proven: `None` while enrolment is under way.
    pub enrolled_at: Option<i64>,
    pub last_step: Option<i64>,
}

/// By its operator only: the sealed secret stays out of every log line.
impl std::fmt::Debug for SecondFactorRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecondFactorRow")
            .field("id", &self.id)
            .field("enrolled_at", &self.enrolled_at)
            .finish_non_exhaustive()
    }
}

/// A secret a form post issued, kept for the page the post redirects to:
/// known by the keyed hash of its one-time handle, bound to the session
/// (the keyed hash of its form token), encrypted under the master key.
#[derive(Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = secret_reveals, treat_none_as_default_value = false)]
pub struct SecretRevealRow {
    pub id: String,
    pub session: String,
    pub ciphertext: String,
    pub created_at: i64,
}

/// Failed sign-ins counted in a window: how many, and when the oldest of
/// them was (unix seconds), the first moment the count can fall.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailureTally {
    pub count: i64,
    pub oldest: Option<i64>,
}

/// One failed sign-in: the keyed hash of the email tried, and the address.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = login_failures, treat_none_as_default_value = false)]
pub struct LoginFailureRow {
    pub id: String,
    pub realm: SessionRealm,
    pub account: String,
    pub address: String,
    pub at: i64,
}
