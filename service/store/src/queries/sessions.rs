//! Sign-ins to the console and the portal: who a password is checked
//! against, the sessions a cookie names, and the failures the rate limit
//! counts.

use super::{first_or_none, insert_one};
use crate::domain::status::{OperatorStatus, OwnerStatus, SessionRealm};
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait SessionQueries: Send {
    /// The active operator with `email`, and its password hash if it has one.
    async fn operator_signing_in(
        &mut self,
        email: &str,
    ) -> StoreResult<Option<(OperatorRow, Option<String>)>>;

    /// Every active owner with `email` that has a password, oldest first.
    async fn owners_signing_in(&mut self, email: &str) -> StoreResult<Vec<(OwnerRow, String)>>;

    async fn owner_by_id(&mut self, id: &str) -> StoreResult<Option<OwnerRow>>;

    async fn insert_web_session(&mut self, row: &WebSessionRow) -> StoreResult<()>;

    async fn web_session(&mut self, id: &str) -> StoreResult<Option<WebSessionRow>>;

    async fn touch_web_session(&mut self, id: &str, at: i64) -> StoreResult<()>;

    async fn end_web_session(&mut self, id: &str, at: i64) -> StoreResult<()>;

    /// Keeps a secret for the page after a post, and forgets those kept
    /// before `forget_before` that were never shown.
    async fn keep_reveal(&mut self, row: &SecretRevealRow, forget_before: i64) -> StoreResult<()>;

    /// Takes (reads and deletes) the secret kept under `id` for `session`,
    /// if it was kept at or after `not_before`.
    async fn take_reveal(
        &mut self,
        id: &str,
        session: &str,
        not_before: i64,
    ) -> StoreResult<Option<SecretRevealRow>>;

    /// Ends every open session of `subject_id` in `realm` at `at` (a
    /// password reset, a person disabled); how many.
    async fn end_sessions_of(
        &mut self,
        realm: SessionRealm,
        subject_id: &str,
        at: i64,
    ) -> StoreResult<usize>;

    /// Failed sign-ins since `since`: for the account, and from the address.
    async fn login_failures_since(
        &mut self,
        realm: SessionRealm,
        account: &str,
        address: &str,
        since: i64,
    ) -> StoreResult<(FailureTally, FailureTally)>;

    async fn insert_login_failure(&mut self, row: &LoginFailureRow) -> StoreResult<()>;

    async fn prune_login_failures(&mut self, before: i64) -> StoreResult<()>;

    /// Takes back a failure counted before its password was checked, once
    /// the password turned out right.
    async fn forgive_login_failure(&mut self, id: &str) -> StoreResult<()>;

    /// Deletes at most `limit` of the sessions last used before `before`
    /// (long ended: no session outlives `ABSOLUTE_SECONDS`); how many.
    async fn forget_sessions_before(&mut self, before: i64, limit: i64) -> StoreResult<usize>;

    /// Records that the session `id` proved its operator's second factor.
    async fn pass_second_factor(&mut self, id: &str, at: i64) -> StoreResult<()>;

    /// The operator's second factor, enrolled or under way.
    async fn second_factor(&mut self, operator_id: &str) -> StoreResult<Option<SecondFactorRow>>;

    /// Starts an enrolment with `row` unless the operator has a second
    /// factor already (enrolled, or one under way that a reload shows
    /// again); the operator's second factor after it.
    async fn begin_second_factor(&mut self, row: &SecondFactorRow) -> StoreResult<SecondFactorRow>;

    /// Accepts a code of time step `step` for the operator: only a step
    /// later than every one accepted before, so that two posts of one code,
    /// even at once, are accepted once; `enrolled_at` is written with it
    /// (the first code accepted ends enrolment). Whether it was accepted.
    async fn accept_second_factor_step(
        &mut self,
        operator_id: &str,
        step: i64,
        enrolled_at: i64,
    ) -> StoreResult<bool>;

    /// Forgets the operator's second factor (a lost phone): the next
    /// sign-in enrols again. Whether there was one.
    async fn reset_second_factor(&mut self, operator_id: &str) -> StoreResult<bool>;
}

macro_rules! impl_sessions {
    ($conn:ty) => {
        #[async_trait]
        impl SessionQueries for $conn {
            async fn operator_signing_in(
                &mut self,
                email: &str,
            ) -> StoreResult<Option<(OperatorRow, Option<String>)>> {
                Ok(operators::table
                    .filter(operators::email.eq(email))
                    .filter(operators::status.eq(OperatorStatus::Active))
                    .select((
                        crate::rows::columns::<OperatorRow>(),
                        operators::password_hash,
                    ))
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn owners_signing_in(
                &mut self,
                email: &str,
            ) -> StoreResult<Vec<(OwnerRow, String)>> {
                let rows: Vec<(OwnerRow, Option<String>)> = merchant_owners::table
                    .filter(merchant_owners::email.eq(email))
                    .filter(merchant_owners::status.eq(OwnerStatus::Active))
                    .filter(merchant_owners::password_hash.is_not_null())
                    .order((merchant_owners::created_at, merchant_owners::id))
                    .select((
                        crate::rows::columns::<OwnerRow>(),
                        merchant_owners::password_hash,
                    ))
                    .load(self.c())
                    .await?;
                Ok(rows
                    .into_iter()
                    .filter_map(|(row, hash)| hash.map(|h| (row, h)))
                    .collect())
            }

            async fn owner_by_id(&mut self, id: &str) -> StoreResult<Option<OwnerRow>> {
                first_or_none!(
                    self.c(),
                    OwnerRow,
                    merchant_owners::table.filter(merchant_owners::id.eq(id)),
                    "merchant_owners",
                    "id" = id
                )
            }

            async fn insert_web_session(&mut self, row: &WebSessionRow) -> StoreResult<()> {
                insert_one!(self.c(), web_sessions::table, row)
            }

            async fn web_session(&mut self, id: &str) -> StoreResult<Option<WebSessionRow>> {
                first_or_none!(
                    self.c(),
                    WebSessionRow,
                    web_sessions::table.filter(web_sessions::id.eq(id)),
                    "web_sessions",
                    "id" = "(the session's hash)"
                )
            }

            async fn touch_web_session(&mut self, id: &str, at: i64) -> StoreResult<()> {
                diesel::update(web_sessions::table.filter(web_sessions::id.eq(id)))
                    .set(web_sessions::last_seen_at.eq(at))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn end_sessions_of(
                &mut self,
                realm: SessionRealm,
                subject_id: &str,
                at: i64,
            ) -> StoreResult<usize> {
                Ok(diesel::update(
                    web_sessions::table
                        .filter(web_sessions::realm.eq(realm))
                        .filter(web_sessions::subject_id.eq(subject_id))
                        .filter(web_sessions::ended_at.is_null()),
                )
                .set(web_sessions::ended_at.eq(Some(at)))
                .execute(self.c())
                .await?)
            }

            async fn keep_reveal(
                &mut self,
                row: &SecretRevealRow,
                forget_before: i64,
            ) -> StoreResult<()> {
                diesel::delete(
                    secret_reveals::table.filter(secret_reveals::created_at.lt(forget_before)),
                )
                .execute(self.c())
                .await?;
                insert_one!(self.c(), secret_reveals::table, row)
            }

            async fn take_reveal(
                &mut self,
                id: &str,
                session: &str,
                not_before: i64,
            ) -> StoreResult<Option<SecretRevealRow>> {
                let found: Option<SecretRevealRow> = secret_reveals::table
                    .filter(secret_reveals::id.eq(id))
                    .filter(secret_reveals::session.eq(session))
                    .filter(secret_reveals::created_at.ge(not_before))
                    .select(crate::rows::columns::<SecretRevealRow>())
                    .first(self.c())
                    .await
                    .optional()?;
                let deleted =
                    diesel::delete(secret_reveals::table.filter(secret_reveals::id.eq(id)))
                        .execute(self.c())
                        .await?;
                // Two pages taking it at once: only the one that deleted it shows it.
                Ok(found.filter(|_| deleted == 1))
            }

            async fn end_web_session(&mut self, id: &str, at: i64) -> StoreResult<()> {
                diesel::update(
                    web_sessions::table
                        .filter(web_sessions::id.eq(id))
                        .filter(web_sessions::ended_at.is_null()),
                )
                .set(web_sessions::ended_at.eq(Some(at)))
                .execute(self.c())
                .await?;
                Ok(())
            }

            async fn login_failures_since(
                &mut self,
                realm: SessionRealm,
                account: &str,
                address: &str,
                since: i64,
            ) -> StoreResult<(FailureTally, FailureTally)> {
                let tally = |(count, oldest): (i64, Option<i64>)| FailureTally { count, oldest };
                let of_account = login_failures::table
                    .filter(login_failures::realm.eq(realm))
                    .filter(login_failures::account.eq(account))
                    .filter(login_failures::at.ge(since))
                    .select((
                        diesel::dsl::count_star(),
                        diesel::dsl::min(login_failures::at),
                    ))
                    .get_result(self.c())
                    .await?;
                let from_address = login_failures::table
                    .filter(login_failures::realm.eq(realm))
                    .filter(login_failures::address.eq(address))
                    .filter(login_failures::at.ge(since))
                    .select((
                        diesel::dsl::count_star(),
                        diesel::dsl::min(login_failures::at),
                    ))
                    .get_result(self.c())
                    .await?;
                Ok((tally(of_account), tally(from_address)))
            }

            async fn insert_login_failure(&mut self, row: &LoginFailureRow) -> StoreResult<()> {
                insert_one!(self.c(), login_failures::table, row)
            }

            async fn prune_login_failures(&mut self, before: i64) -> StoreResult<()> {
                diesel::delete(login_failures::table.filter(login_failures::at.lt(before)))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn forgive_login_failure(&mut self, id: &str) -> StoreResult<()> {
                diesel::delete(login_failures::table.find(id))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn forget_sessions_before(
                &mut self,
                before: i64,
                limit: i64,
            ) -> StoreResult<usize> {
                super::forget_oldest!(self.c(), web_sessions, last_seen_at, before, limit)
            }

            async fn pass_second_factor(&mut self, id: &str, at: i64) -> StoreResult<()> {
                diesel::update(web_sessions::table.filter(web_sessions::id.eq(id)))
                    .set(web_sessions::second_factor_at.eq(Some(at)))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn second_factor(
                &mut self,
                operator_id: &str,
            ) -> StoreResult<Option<SecondFactorRow>> {
                first_or_none!(
                    self.c(),
                    SecondFactorRow,
                    operator_second_factors::table
                        .filter(operator_second_factors::id.eq(operator_id)),
                    "operator_second_factors",
                    "id" = operator_id
                )
            }

            async fn begin_second_factor(
                &mut self,
                row: &SecondFactorRow,
            ) -> StoreResult<SecondFactorRow> {
                diesel::insert_into(operator_second_factors::table)
                    .values(row)
                    .on_conflict_do_nothing()
                    .execute(self.c())
                    .await?;
                Ok(operator_second_factors::table
                    .filter(operator_second_factors::id.eq(&row.id))
                    .select(crate::rows::columns::<SecondFactorRow>())
                    .first(self.c())
                    .await?)
            }

            async fn accept_second_factor_step(
                &mut self,
                operator_id: &str,
                step: i64,
                enrolled_at: i64,
            ) -> StoreResult<bool> {
                let changed = diesel::update(
                    operator_second_factors::table
                        .filter(operator_second_factors::id.eq(operator_id))
                        .filter(
                            operator_second_factors::last_step
                                .is_null()
                                .or(operator_second_factors::last_step.lt(step)),
                        ),
                )
                .set((
                    operator_second_factors::last_step.eq(Some(step)),
                    operator_second_factors::enrolled_at.eq(Some(enrolled_at)),
                ))
                .execute(self.c())
                .await?;
                Ok(changed == 1)
            }

            async fn reset_second_factor(&mut self, operator_id: &str) -> StoreResult<bool> {
                let deleted = diesel::delete(
                    operator_second_factors::table
                        .filter(operator_second_factors::id.eq(operator_id)),
                )
                .execute(self.c())
                .await?;
                Ok(deleted == 1)
            }
        }
    };
}

impl_sessions!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_sessions!(crate::Tx<'_, crate::SqliteConn>);
