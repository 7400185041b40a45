//! The callback outbox: delivery records and their attempts.

use super::arrays::{self, column};
use super::first_or_none;
use super::merchants::held_merchants;
use super::KeepPrepared;
use crate::dialect::{self, Dialect};
use crate::domain::status::{CallbackStatus, DeliveryStatus, MerchantStatus, OrderKind};
use crate::paging::{newest_after, ListFilter};
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::BTreeMap;

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
        shares: &Shares,
    ) -> StoreResult<Vec<CallbackDeliveryRow>>;

    /// For the rest of this transaction, its prepared statements are
    /// planned once per connection (`Dialect::PLAN_ONCE`), where the
    /// backend can be told so. Only inside a transaction.
    async fn plan_once(&mut self) -> StoreResult<()>;

    /// Gives back every claim `claimer` still holds: an instance restarted
    /// after dying mid-attempt returns them at once instead of leaving
    /// them to the 5-minute sweep. Returns how many.
    async fn release_claims_of(&mut self, claimer: &str) -> StoreResult<usize>;

    /// The earliest `next_attempt_at` of a delivery waiting for an attempt,
    /// a suspended merchant's (held) aside.
    async fn next_callback_due(&mut self) -> StoreResult<Option<i64>>;

    /// Wakes the delivery workers once the unit commits, on every instance:
    /// deliveries that were held are due (a merchant reactivated).
    async fn announce_callbacks_due(&mut self) -> StoreResult<()>;

    /// Writes an attempt's outcome onto a delivery still SENDING. Returns
    /// whether it was (a sweep may have reclaimed it meanwhile).
    async fn finish_callback_attempt(
        &mut self,
        delivery: &CallbackDeliveryRow,
        attempt: &CallbackAttemptRow,
    ) -> StoreResult<bool>;

    /// What `finish_callback_attempt` and then, for each kept,
    /// `note_order_callback` would write, for many attempts, in as few
    /// statements as the backend allows. Returns, per outcome in order,
    /// whether it was kept.
    async fn finish_callback_attempts(
        &mut self,
        batch: &[AttemptOutcome],
    ) -> StoreResult<Vec<bool>>;

    /// The order's summary for merchants: `callback_status`, and one more
    /// attempt in `callback_count`.
    async fn note_order_callback(
        &mut self,
        order_kind: OrderKind,
        order_no: &str,
        status: CallbackStatus,
        now: i64,
    ) -> StoreResult<()>;

    /// Returns deliveries SENDING since `before` or earlier to WAITING_RETRY,
    /// due `now`.
    async fn sweep_stuck_callbacks(&mut self, before: i64, now: i64) -> StoreResult<usize>;

    /// Resets a delivery not being sent to its first attempt, due `now`.
    async fn reset_callback(&mut self, id: &str, now: i64) -> StoreResult<bool>;

    /// Queues again, as `reset_callback` does each, at most `limit` FAILED
    /// deliveries that `filter` matches (merchant, creation times), oldest
    /// first. How many.
    async fn reset_failed_callbacks(
        &mut self,
        filter: &ListFilter,
        now: i64,
        limit: i64,
    ) -> StoreResult<usize>;

    /// Gives back a claim whose attempt never started (the worker is
    /// stopping): WAITING_RETRY again, at its scheduled time, its attempt
    /// count unchanged. Only under the claim's own token.
    async fn release_callback(&mut self, id: &str, claim_token: &str) -> StoreResult<bool>;

    /// Deliveries not yet finished, and the oldest due time among those
    /// waiting, for the metrics. Reads only the unfinished, through the
    /// `(status, next_attempt_at)` index.
    async fn callback_backlog(&mut self, now: i64) -> StoreResult<Backlog>;

    /// Deletes at most `limit` of the attempts started before `before`,
    /// oldest first; how many. The deliveries stay, with their state and
    /// attempt count: only the per-attempt detail ages out.
    async fn forget_attempts_before(&mut self, before: i64, limit: i64) -> StoreResult<usize>;
}

/// What a claim may take of each merchant and each receiver host, so
/// that one slow receiver holds at most its share of the attempts in
/// flight: those with attempts in flight have the room named here (none
/// left: skipped), any other up to the cap.
#[derive(Clone, Debug)]
pub struct Shares {
    pub merchant_room: BTreeMap<String, i64>,
    pub merchant_cap: i64,
    pub host_room: BTreeMap<String, i64>,
    pub host_cap: i64,
}

impl Shares {
    /// No merchant or host is held to less than the whole claim.
    pub fn open() -> Shares {
        Shares {
            merchant_room: BTreeMap::new(),
            merchant_cap: i64::MAX,
            host_room: BTreeMap::new(),
            host_cap: i64::MAX,
        }
    }
}

/// One attempt's outcome, written with others by `finish_callback_attempts`.
#[derive(Clone, Debug)]
pub struct AttemptOutcome {
    /// The record as the attempt leaves it (its claim token still set).
    pub delivery: CallbackDeliveryRow,
    pub attempt: CallbackAttemptRow,
    pub order_status: CallbackStatus,
    pub now: i64,
}

/// The batch one outcome at a time: SQLite has one writer and no arrays,
/// and its statements cost no round trip.
async fn finish_each<C: CallbackQueries + ?Sized>(
    conn: &mut C,
    batch: &[AttemptOutcome],
) -> StoreResult<Vec<bool>> {
    let mut kept = Vec::with_capacity(batch.len());
    for o in batch {
        let k = conn
            .finish_callback_attempt(&o.delivery, &o.attempt)
            .await?;
        if k {
            conn.note_order_callback(
                o.delivery.order_kind,
                &o.delivery.order_no,
                o.order_status,
                o.now,
            )
            .await?;
        }
        kept.push(k);
    }
    Ok(kept)
}

/// The table an order kind's orders are in; none for a platform-level
/// subject, which has no callback summary to keep.
fn order_table(kind: OrderKind) -> Option<&'static str> {
    match kind {
        OrderKind::Deposit => Some("deposit_orders"),
        OrderKind::Withdrawal => Some("withdrawal_orders"),
        OrderKind::OwnerInvitation | OrderKind::BillingStatement => None,
    }
}

/// One column of a batch, for an array bind.
fn each<T>(batch: &[AttemptOutcome], f: impl Fn(&AttemptOutcome) -> T) -> Vec<T> {
    batch.iter().map(f).collect()
}

/// The batch in four statements whatever its size (deliveries, attempts,
/// deposits, withdrawals): on PostgreSQL each statement is a round trip,
/// and a drained backlog writes thousands of outcomes a second.
async fn finish_set_based(
    tx: &mut crate::Tx<'_, diesel_async::AsyncPgConnection>,
    batch: &[AttemptOutcome],
) -> StoreResult<Vec<bool>> {
    use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
    #[derive(QueryableByName)]
    struct Kept {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    tx.plan_once().await?;
    let conn = tx.c();
    let kept: Vec<Kept> = diesel::sql_query(dialect::FINISH_DELIVERIES)
        .bind::<Array<Text>, _>(each(batch, |o| o.delivery.id.clone()))
        .bind::<Array<Nullable<Text>>, _>(each(batch, |o| o.delivery.claim_token.clone()))
        .bind::<Array<Text>, _>(each(batch, |o| o.delivery.status.as_str().to_string()))
        .bind::<Array<Integer>, _>(each(batch, |o| o.delivery.attempts))
        .bind::<Array<Nullable<BigInt>>, _>(each(batch, |o| o.delivery.next_attempt_at))
        .bind::<Array<Nullable<Text>>, _>(each(batch, |o| o.delivery.signature.clone()))
        .bind::<Array<BigInt>, _>(each(batch, |o| o.delivery.updated_at))
        .bind::<Text, _>(DeliveryStatus::Sending)
        .bind::<Array<Nullable<Text>>, _>(each(batch, |o| o.delivery.signing_key_id.clone()))
        .prepared()
        .load(conn)
        .await?;
    // By position, not by id: an outcome whose claim was lost names the
    // same record as the one that holds it now.
    let mut flags = vec![false; batch.len()];
    for k in kept {
        if let Some(flag) = usize::try_from(k.n - 1).ok().and_then(|i| flags.get_mut(i)) {
            *flag = true;
        }
    }
    let attempts: Vec<&CallbackAttemptRow> = batch
        .iter()
        .zip(&flags)
        .filter(|(_, k)| **k)
        .map(|(o, _)| &o.attempt)
        .collect();
    let attempts = attempts_as_arrays(&attempts);
    if !attempts.is_empty() {
        attempts.execute(conn).await?;
    }
    note_orders_set_based(conn, batch, &flags).await?;
    Ok(flags)
}

/// A batch's attempts, one array a column: one text whatever the batch's
/// size, prepared once (`arrays`), where a `VALUES` list was parsed and
/// planned again for each size (40 texts in 10,000 paid deposits).
fn attempts_as_arrays<'a>(a: &'a [&'a CallbackAttemptRow]) -> arrays::Table<'a> {
    use arrays::Column::*;
    arrays::Table {
        name: "callback_attempts",
        columns: "id, delivery_id, attempt, scheduled_at, started_at, duration_ms, status_code, \
     error, outcome, next_attempt_at",
        in_order: false,
        values: vec![
            Text(column(a, |r| r.id.as_str())),
            Text(column(a, |r| r.delivery_id.as_str())),
            Int4(column(a, |r| r.attempt)),
            Int8(column(a, |r| r.scheduled_at)),
            Int8(column(a, |r| r.started_at)),
            Int8(column(a, |r| r.duration_ms)),
            MaybeInt4(column(a, |r| r.status_code)),
            MaybeText(column(a, |r| r.error.as_deref())),
            Text(column(a, |r| r.outcome.as_str())),
            MaybeInt8(column(a, |r| r.next_attempt_at)),
        ],
    }
}

/// Each order's summary for the kept outcomes, one statement per order
/// kind: its attempts counted, the latest outcome its status, as one
/// statement per attempt in batch order would leave it.
async fn note_orders_set_based(
    conn: &mut diesel_async::AsyncPgConnection,
    batch: &[AttemptOutcome],
    flags: &[bool],
) -> StoreResult<()> {
    use diesel::sql_types::{Array, BigInt, Integer, Text};
    // One row per order: its attempts counted, the latest outcome its
    // status, as one statement per attempt in batch order would leave it.
    let mut orders: std::collections::HashMap<(OrderKind, &str), (CallbackStatus, i32, i64)> =
        std::collections::HashMap::new();
    for (o, _) in batch.iter().zip(flags).filter(|(_, k)| **k) {
        let entry = orders
            .entry((o.delivery.order_kind, o.delivery.order_no.as_str()))
            .or_insert((o.order_status, 0, o.now));
        *entry = (o.order_status, entry.1 + 1, o.now);
    }
    for &kind in OrderKind::ALL {
        let Some(table) = order_table(kind) else {
            continue;
        };
        let mine: Vec<_> = orders.iter().filter(|((k, _), _)| *k == kind).collect();
        if mine.is_empty() {
            continue;
        }
        diesel::sql_query(dialect::note_orders(table))
            .bind::<Array<Text>, _>(
                mine.iter()
                    .map(|((_, no), _)| no.to_string())
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Text>, _>(
                mine.iter()
                    .map(|(_, (s, _, _))| s.as_str().to_string())
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Integer>, _>(mine.iter().map(|(_, (_, n, _))| *n).collect::<Vec<_>>())
            .bind::<Array<BigInt>, _>(mine.iter().map(|(_, (_, _, now))| *now).collect::<Vec<_>>())
            .prepared()
            .execute(conn)
            .await?;
    }
    Ok(())
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
    ($conn:ty, $finish_batch:ident) => {
        #[async_trait]
        impl CallbackQueries for $conn {
            async fn finish_callback_attempts(
                &mut self,
                batch: &[AttemptOutcome],
            ) -> StoreResult<Vec<bool>> {
                $finish_batch(self, batch).await
            }

            async fn insert_callback_delivery(
                &mut self,
                row: &CallbackDeliveryRow,
            ) -> StoreResult<()> {
                self.done.callback_queued = true;
                if let Some(deferred) = self.deferred.as_mut() {
                    deferred.deliveries.push(row.clone());
                    return Ok(());
                }
                diesel::insert_into(callback_deliveries::table)
                    .values(row)
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn callback_deliveries_of(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::order_no.eq(order_no))
                    .order(callback_deliveries::created_at.asc())
                    .select(crate::rows::columns::<CallbackDeliveryRow>())
                    .load(self.c())
                    .await?)
            }

            async fn callback_delivery_by_id(
                &mut self,
                id: &str,
            ) -> StoreResult<Option<CallbackDeliveryRow>> {
                first_or_none!(
                    self.c(),
                    CallbackDeliveryRow,
                    callback_deliveries::table.filter(callback_deliveries::id.eq(id)),
                    "callback_deliveries",
                    "id" = id
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
                    .select(crate::rows::columns::<CallbackAttemptRow>())
                    .load(self.c())
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
                if let Some(m) = &filter.merchant_id {
                    q = q.filter(callback_deliveries::merchant_id.eq(m.clone()));
                }
                if let Some(kinds) = &filter.order_kinds {
                    q = q.filter(callback_deliveries::order_kind.eq_any(kinds.clone()));
                }
                if let Some(from) = filter.created_from {
                    q = q.filter(callback_deliveries::created_at.ge(from));
                }
                if let Some(to) = filter.created_to {
                    q = q.filter(callback_deliveries::created_at.lt(to));
                }
                Ok(newest_after!(q, callback_deliveries, id, filter)
                    .select(crate::rows::columns::<CallbackDeliveryRow>())
                    .load(self.c())
                    .await?)
            }

            async fn plan_once(&mut self) -> StoreResult<()> {
                if let Some(plan) = <$conn as Dialect>::PLAN_ONCE {
                    diesel_async::SimpleAsyncConnection::batch_execute(self.c(), plan).await?;
                }
                Ok(())
            }

            async fn claim_due_callbacks(
                &mut self,
                now: i64,
                limit: i64,
                claimer: &str,
                shares: &Shares,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                let rooms = |m: &BTreeMap<String, i64>| {
                    serde_json::to_string(m).unwrap_or_else(|_| "{}".to_string())
                };
                Ok(diesel::sql_query(<$conn as Dialect>::CLAIM_CALLBACKS)
                    .bind::<diesel::sql_types::BigInt, _>(now)
                    .bind::<diesel::sql_types::BigInt, _>(limit)
                    .bind::<diesel::sql_types::Text, _>(claimer)
                    .bind::<diesel::sql_types::Text, _>(DeliveryStatus::Sending)
                    .bind::<diesel::sql_types::Text, _>(DeliveryStatus::WaitingRetry)
                    .bind::<diesel::sql_types::Text, _>(rooms(&shares.merchant_room))
                    .bind::<diesel::sql_types::BigInt, _>(shares.merchant_cap)
                    .bind::<diesel::sql_types::Text, _>(rooms(&shares.host_room))
                    .bind::<diesel::sql_types::BigInt, _>(shares.host_cap)
                    // The candidates looked at (and locked): as many as the
                    // claim may take. A merchant or receiver with no room is
                    // skipped by the scan itself; one with a little room and
                    // the oldest backlog may fill them, and others' records
                    // come with the next claim, once it is full. Four for
                    // each place locked four rows for every one taken, most
                    // of a one-merchant drain (issue 56).
                    .bind::<diesel::sql_types::BigInt, _>(limit)
                    .bind::<diesel::sql_types::Text, _>(MerchantStatus::Suspended)
                    .prepared()
                    .load(self.c())
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
                .execute(self.c())
                .await?;
                if n > 0 {
                    self.done.callback_queued = true;
                }
                Ok(n)
            }

            async fn next_callback_due(&mut self) -> StoreResult<Option<i64>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::status.eq(DeliveryStatus::WaitingRetry))
                    .filter(diesel::dsl::not(
                        callback_deliveries::merchant_id.eq_any(held_merchants()),
                    ))
                    .select(diesel::dsl::min(callback_deliveries::next_attempt_at))
                    .first::<Option<i64>>(self.c())
                    .await?)
            }

            async fn announce_callbacks_due(&mut self) -> StoreResult<()> {
                self.done.callback_queued = true;
                if let Some(notify) = <$conn as Dialect>::ANNOUNCE_CALLBACKS {
                    diesel::sql_query(notify).execute(self.c()).await?;
                }
                Ok(())
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
                    callback_deliveries::signing_key_id.eq(&delivery.signing_key_id),
                    callback_deliveries::updated_at.eq(delivery.updated_at),
                ))
                .prepared()
                .execute(self.c())
                .await?;
                if n == 1 {
                    diesel::insert_into(callback_attempts::table)
                        .values(attempt)
                        .execute(self.c())
                        .await?;
                }
                Ok(n == 1)
            }

            async fn note_order_callback(
                &mut self,
                order_kind: OrderKind,
                order_no: &str,
                status: CallbackStatus,
                now: i64,
            ) -> StoreResult<()> {
                // One statement per table: diesel types each table apart.
                macro_rules! note {
                    ($t:ident) => {
                        diesel::update($t::table.filter($t::order_no.eq(order_no)))
                            .set((
                                $t::callback_status.eq(status),
                                $t::callback_count.eq($t::callback_count + 1),
                                $t::updated_at.eq(now),
                            ))
                            .prepared()
                            .execute(self.c())
                            .await?
                    };
                }
                match order_kind {
                    OrderKind::Withdrawal => note!(withdrawal_orders),
                    OrderKind::Deposit => note!(deposit_orders),
                    OrderKind::OwnerInvitation | OrderKind::BillingStatement => 0,
                };
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
                .execute(self.c())
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
                .execute(self.c())
                .await?;
                if n == 1 {
                    self.done.callback_queued = true;
                }
                Ok(n == 1)
            }

            async fn reset_failed_callbacks(
                &mut self,
                filter: &ListFilter,
                now: i64,
                limit: i64,
            ) -> StoreResult<usize> {
                let mut q = callback_deliveries::table
                    .filter(callback_deliveries::status.eq(DeliveryStatus::Failed))
                    .into_boxed();
                if let Some(m) = &filter.merchant_id {
                    q = q.filter(callback_deliveries::merchant_id.eq(m.clone()));
                }
                if let Some(from) = filter.created_from {
                    q = q.filter(callback_deliveries::created_at.ge(from));
                }
                if let Some(to) = filter.created_to {
                    q = q.filter(callback_deliveries::created_at.lt(to));
                }
                let ids: Vec<String> = q
                    .order((
                        callback_deliveries::created_at.asc(),
                        callback_deliveries::id.asc(),
                    ))
                    .limit(limit)
                    .select(callback_deliveries::id)
                    .load(self.c())
                    .await?;
                if ids.is_empty() {
                    return Ok(0);
                }
                let n = diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::id.eq_any(ids))
                        .filter(callback_deliveries::status.eq(DeliveryStatus::Failed)),
                )
                .set((
                    callback_deliveries::status.eq(DeliveryStatus::WaitingRetry),
                    callback_deliveries::attempts.eq(0),
                    callback_deliveries::next_attempt_at.eq(Some(now)),
                    callback_deliveries::updated_at.eq(now),
                ))
                .execute(self.c())
                .await?;
                if n > 0 {
                    self.done.callback_queued = true;
                }
                Ok(n)
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
                .execute(self.c())
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
                    .load(self.c())
                    .await?;
                let oldest_due_at = callback_deliveries::table
                    .filter(callback_deliveries::status.eq(DeliveryStatus::WaitingRetry))
                    .filter(callback_deliveries::next_attempt_at.le(now))
                    .select(diesel::dsl::min(callback_deliveries::next_attempt_at))
                    .first::<Option<i64>>(self.c())
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

            async fn forget_attempts_before(
                &mut self,
                before: i64,
                limit: i64,
            ) -> StoreResult<usize> {
                super::forget_oldest!(self.c(), callback_attempts, started_at, before, limit)
            }
        }
    };
}

impl_callbacks!(
    crate::Tx<'_, diesel_async::AsyncPgConnection>,
    finish_set_based
);
impl_callbacks!(crate::Tx<'_, crate::SqliteConn>, finish_each);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::schedule::Outcome;
    use diesel::pg::Pg;
    use diesel::query_builder::QueryFragment;

    fn attempt(i: usize) -> CallbackAttemptRow {
        CallbackAttemptRow {
            id: format!("a-{i}"),
            delivery_id: format!("d-{i}"),
            attempt: 1,
            scheduled_at: 1,
            started_at: 2,
            duration_ms: 3,
            status_code: i.is_multiple_of(2).then_some(200),
            error: (!i.is_multiple_of(2)).then(|| "connection refused".to_string()),
            outcome: Outcome::Success,
            next_attempt_at: None,
        }
    }

    /// A batch of attempts names every column of the table, in its order,
    /// and one attempt or forty are the same text, safe to keep prepared.
    #[test]
    fn a_batch_of_attempts_is_one_text_whatever_its_size_with_every_column() {
        let (one, many): (Vec<_>, Vec<_>) = (
            (0..1).map(attempt).collect(),
            (0..40).map(attempt).collect(),
        );
        let (one, many): (Vec<&CallbackAttemptRow>, Vec<&CallbackAttemptRow>) =
            (one.iter().collect(), many.iter().collect());
        let sql = |rows: &[&CallbackAttemptRow]| {
            let t = diesel::debug_query::<Pg, _>(&attempts_as_arrays(rows)).to_string();
            t[..t.find(" -- binds").unwrap()].to_string()
        };
        assert_eq!(sql(&one), sql(&many));
        assert!(attempts_as_arrays(&many)
            .is_safe_to_cache_prepared(&Pg)
            .unwrap());
        let all = arrays::selected(callback_attempts::table.select(callback_attempts::all_columns));
        let written = attempts_as_arrays(&one);
        let named = written
            .columns
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(named, all);
        assert_eq!(written.values.len(), all.split(", ").count());
        assert!(attempts_as_arrays(&[]).is_empty());
    }
}
