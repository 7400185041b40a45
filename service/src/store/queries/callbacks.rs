//! The callback outbox: delivery records and their attempts.

use super::first_or_none;
use crate::domain::status::{CallbackStatus, DeliveryStatus};
use crate::store::dialect::Dialect;
use crate::store::paging::{newest_after, ListFilter};
use crate::store::rows::*;
use crate::store::schema::*;
use crate::store::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait CallbackQueries: Send {
    async fn insert_callback_delivery(&mut self, row: &CallbackDeliveryRow) -> StoreResult<()>;

    async fn callback_deliveries_of(
        &mut self,
        order_no: &str,
    ) -> StoreResult<Vec<CallbackDeliveryRow>>;

    async fn callback_delivery_by_id(
        &mut self,
        id: &str,
    ) -> StoreResult<Option<CallbackDeliveryRow>>;

    async fn callback_attempts_of(
        &mut self,
        delivery_id: &str,
    ) -> StoreResult<Vec<CallbackAttemptRow>>;

    async fn list_callback_deliveries(
        &mut self,
        filter: &ListFilter,
    ) -> StoreResult<Vec<CallbackDeliveryRow>>;

    /// Moves up to `limit` deliveries due by `now` from WAITING_RETRY to
    /// SENDING for `claimer` (an instance's name, the prefix of each claim
    /// token) and returns them. Concurrent claimers never get the same
    /// row: PostgreSQL skips rows another claimer holds, SQLite has one
    /// writer.
    async fn claim_due_callbacks(
        &mut self,
        now: i64,
        limit: i64,
        claimer: &str,
    ) -> StoreResult<Vec<CallbackDeliveryRow>>;

    /// Gives back every claim `claimer` still holds: an instance restarted
    /// after dying mid-attempt returns them at once instead of leaving
    /// them to the 5-minute sweep. Returns how many.
    async fn release_claims_of(&mut self, claimer: &str) -> StoreResult<usize>;

    /// The earliest `next_attempt_at` of a delivery waiting for an attempt.
    async fn next_callback_due(&mut self) -> StoreResult<Option<i64>>;

    /// Writes an attempt's outcome onto a delivery still SENDING. Returns
    /// whether it was (a sweep may have reclaimed it meanwhile).
    async fn finish_callback_attempt(
        &mut self,
        delivery: &CallbackDeliveryRow,
        attempt: &CallbackAttemptRow,
    ) -> StoreResult<bool>;

    /// The order's summary for merchants: `callback_status`, and one more
    /// attempt in `callback_count`.
    async fn note_order_callback(
        &mut self,
        order_kind: &str,
        order_no: &str,
        status: CallbackStatus,
        now: i64,
    ) -> StoreResult<()>;

    /// Returns deliveries SENDING since `before` or earlier to WAITING_RETRY,
    /// due `now`.
    async fn sweep_stuck_callbacks(&mut self, before: i64, now: i64) -> StoreResult<usize>;

    /// Resets a delivery not being sent to its first attempt, due `now`.
    async fn reset_callback(&mut self, id: &str, now: i64) -> StoreResult<bool>;

    /// Gives back a claim whose attempt never started (the worker is
    /// stopping): WAITING_RETRY again, at its scheduled time, its attempt
    /// count unchanged. Only under the claim's own token.
    async fn release_callback(&mut self, id: &str, claim_token: &str) -> StoreResult<bool>;

    /// Deliveries not yet finished, and the oldest due time among those
    /// waiting, for the metrics. Reads only the unfinished, through the
    /// `(status, next_attempt_at)` index.
    async fn callback_backlog(&mut self, now: i64) -> StoreResult<Backlog>;
}

/// The callback outbox's unfinished part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub waiting: i64,
    pub sending: i64,
    /// The earliest `next_attempt_at` at or before now among waiting ones.
    pub oldest_due_at: Option<i64>,
}

macro_rules! impl_callbacks {
    ($conn:ty) => {
        #[async_trait]
        impl CallbackQueries for $conn {
            async fn insert_callback_delivery(
                &mut self,
                row: &CallbackDeliveryRow,
            ) -> StoreResult<()> {
                diesel::insert_into(callback_deliveries::table)
                    .values(row)
                    .execute(self)
                    .await?;
                crate::store::callback_queued();
                Ok(())
            }

            async fn callback_deliveries_of(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::order_no.eq(order_no))
                    .order(callback_deliveries::created_at.asc())
                    .select(CallbackDeliveryRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn callback_delivery_by_id(
                &mut self,
                id: &str,
            ) -> StoreResult<Option<CallbackDeliveryRow>> {
                first_or_none!(
                    self,
                    CallbackDeliveryRow,
                    callback_deliveries::table.filter(callback_deliveries::id.eq(id))
                )
            }

            async fn callback_attempts_of(
                &mut self,
                delivery_id: &str,
            ) -> StoreResult<Vec<CallbackAttemptRow>> {
                Ok(callback_attempts::table
                    .filter(callback_attempts::delivery_id.eq(delivery_id))
                    .order((
                        callback_attempts::started_at.asc(),
                        callback_attempts::attempt.asc(),
                    ))
                    .select(CallbackAttemptRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn list_callback_deliveries(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                let mut q = callback_deliveries::table.into_boxed();
                if let Some(o) = &filter.order_no {
                    q = q.filter(callback_deliveries::order_no.eq(o.clone()));
                }
                if let Some(st) = &filter.status {
                    q = q.filter(callback_deliveries::status.eq(st.clone()));
                }
                Ok(newest_after!(q, callback_deliveries, id, filter)
                    .select(CallbackDeliveryRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn claim_due_callbacks(
                &mut self,
                now: i64,
                limit: i64,
                claimer: &str,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                Ok(diesel::sql_query(<$conn as Dialect>::CLAIM_CALLBACKS)
                    .bind::<diesel::sql_types::BigInt, _>(now)
                    .bind::<diesel::sql_types::BigInt, _>(limit)
                    .bind::<diesel::sql_types::Text, _>(claimer)
                    .load(self)
                    .await?)
            }

            async fn release_claims_of(&mut self, claimer: &str) -> StoreResult<usize> {
                // `_` may be in a name and is LIKE's one-character wildcard:
                // unescaped, `a_b` would give back the claims of `axb`.
                let mine = format!(
                    "{}:%",
                    claimer
                        .replace('\\', "\\\\")
                        .replace('_', "\\_")
                        .replace('%', "\\%")
                );
                let n = diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::status.eq(DeliveryStatus::Sending))
                        .filter(callback_deliveries::claim_token.like(mine).escape('\\')),
                )
                .set((
                    callback_deliveries::status.eq(DeliveryStatus::WaitingRetry),
                    callback_deliveries::claim_token.eq(None::<String>),
                ))
                .execute(self)
                .await?;
                if n > 0 {
                    crate::store::callback_queued();
                }
                Ok(n)
            }

            async fn next_callback_due(&mut self) -> StoreResult<Option<i64>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::status.eq(DeliveryStatus::WaitingRetry))
                    .select(diesel::dsl::min(callback_deliveries::next_attempt_at))
                    .first::<Option<i64>>(self)
                    .await?)
            }

            async fn finish_callback_attempt(
                &mut self,
                delivery: &CallbackDeliveryRow,
                attempt: &CallbackAttemptRow,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::id.eq(&delivery.id))
                        .filter(callback_deliveries::status.eq(DeliveryStatus::Sending))
                        .filter(callback_deliveries::claim_token.eq(&delivery.claim_token)),
                )
                .set((
                    callback_deliveries::status.eq(&delivery.status),
                    callback_deliveries::attempts.eq(delivery.attempts),
                    callback_deliveries::next_attempt_at.eq(delivery.next_attempt_at),
                    callback_deliveries::signature.eq(&delivery.signature),
                    callback_deliveries::updated_at.eq(delivery.updated_at),
                ))
                .execute(self)
                .await?;
                if n == 1 {
                    diesel::insert_into(callback_attempts::table)
                        .values(attempt)
                        .execute(self)
                        .await?;
                }
                Ok(n == 1)
            }

            async fn note_order_callback(
                &mut self,
                order_kind: &str,
                order_no: &str,
                status: CallbackStatus,
                now: i64,
            ) -> StoreResult<()> {
                if order_kind == "withdrawal" {
                    diesel::update(
                        withdrawal_orders::table.filter(withdrawal_orders::order_no.eq(order_no)),
                    )
                    .set((
                        withdrawal_orders::callback_status.eq(status),
                        withdrawal_orders::callback_count.eq(withdrawal_orders::callback_count + 1),
                        withdrawal_orders::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                } else {
                    diesel::update(
                        deposit_orders::table.filter(deposit_orders::order_no.eq(order_no)),
                    )
                    .set((
                        deposit_orders::callback_status.eq(status),
                        deposit_orders::callback_count.eq(deposit_orders::callback_count + 1),
                        deposit_orders::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                }
                Ok(())
            }

            async fn sweep_stuck_callbacks(&mut self, before: i64, now: i64) -> StoreResult<usize> {
                Ok(diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::status.eq(DeliveryStatus::Sending))
                        .filter(callback_deliveries::updated_at.le(before)),
                )
                .set((
                    callback_deliveries::status.eq(DeliveryStatus::WaitingRetry),
                    callback_deliveries::next_attempt_at.eq(Some(now)),
                    callback_deliveries::updated_at.eq(now),
                ))
                .execute(self)
                .await?)
            }

            async fn reset_callback(&mut self, id: &str, now: i64) -> StoreResult<bool> {
                let n = diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::id.eq(id))
                        .filter(callback_deliveries::status.ne(DeliveryStatus::Sending)),
                )
                .set((
                    callback_deliveries::status.eq(DeliveryStatus::WaitingRetry),
                    callback_deliveries::attempts.eq(0),
                    callback_deliveries::next_attempt_at.eq(Some(now)),
                    callback_deliveries::updated_at.eq(now),
                ))
                .execute(self)
                .await?;
                if n == 1 {
                    crate::store::callback_queued();
                }
                Ok(n == 1)
            }

            async fn release_callback(&mut self, id: &str, claim_token: &str) -> StoreResult<bool> {
                let n = diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::id.eq(id))
                        .filter(callback_deliveries::status.eq(DeliveryStatus::Sending))
                        .filter(callback_deliveries::claim_token.eq(claim_token)),
                )
                .set((
                    callback_deliveries::status.eq(DeliveryStatus::WaitingRetry),
                    callback_deliveries::claim_token.eq(None::<String>),
                ))
                .execute(self)
                .await?;
                Ok(n == 1)
            }

            async fn callback_backlog(&mut self, now: i64) -> StoreResult<Backlog> {
                let counts: Vec<(DeliveryStatus, i64)> = callback_deliveries::table
                    .filter(
                        callback_deliveries::status
                            .eq_any([DeliveryStatus::WaitingRetry, DeliveryStatus::Sending]),
                    )
                    .group_by(callback_deliveries::status)
                    .select((callback_deliveries::status, diesel::dsl::count_star()))
                    .load(self)
                    .await?;
                let oldest_due_at = callback_deliveries::table
                    .filter(callback_deliveries::status.eq(DeliveryStatus::WaitingRetry))
                    .filter(callback_deliveries::next_attempt_at.le(now))
                    .select(diesel::dsl::min(callback_deliveries::next_attempt_at))
                    .first::<Option<i64>>(self)
                    .await?;
                let count = |s: DeliveryStatus| {
                    counts
                        .iter()
                        .find(|(st, _)| *st == s)
                        .map_or(0, |(_, n)| *n)
                };
                Ok(Backlog {
                    waiting: count(DeliveryStatus::WaitingRetry),
                    sending: count(DeliveryStatus::Sending),
                    oldest_due_at,
                })
            }
        }
    };
}

impl_callbacks!(diesel_async::AsyncPgConnection);
impl_callbacks!(crate::store::SqliteConn);
