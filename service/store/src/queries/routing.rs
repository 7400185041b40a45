//! Routing: the tables the operators set, each channel's use of its daily
//! limit, and a payout moved to the next channel after a refusal.

use crate::rows::RoutingTableRow;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Whose daily use: a channel, a currency, a direction, a day (days since
/// 1970, UTC).
#[derive(Debug, Clone, Copy)]
pub struct DailyKey<'a> {
    pub channel: &'a str,
    pub currency: &'a str,
    pub direction: &'a str,
    pub day: i64,
}

/// A payout handed from the channel that refused it to the next.
#[derive(Debug, Clone)]
pub struct Reroute<'a> {
    pub id: &'a str,
    /// The channel it is at (none: not yet routed).
    pub from_channel: Option<&'a str>,
    /// Moved only if never sent: a payout no one has sent yet, whose
    /// channel had no room for it today.
    pub unsent_only: bool,
    pub to_channel: &'a str,
    pub routing: &'a str,
    pub estimated_channel_cost: Option<i64>,
    pub estimated_profit: Option<i64>,
    pub at: i64,
}

#[async_trait]
pub trait RoutingQueries: Send {
    /// Every table the operators set.
    async fn routing_tables(&mut self) -> StoreResult<Vec<RoutingTableRow>>;

    /// Sets one table, in place of what was there.
    async fn put_routing_table(&mut self, row: &RoutingTableRow) -> StoreResult<()>;

    /// Adds `amount` to the day's use if it stays within `limit`; whether
    /// it did.
    async fn reserve_daily_use(
        &mut self,
        key: DailyKey<'_>,
        amount: i64,
        limit: i64,
    ) -> StoreResult<bool>;

    /// Gives back `amount` reserved for an order the channel did not take.
    async fn release_daily_use(&mut self, key: DailyKey<'_>, amount: i64) -> StoreResult<()>;

    /// What each channel was sent on `day`: (channel, currency, direction, used).
    async fn daily_use_on(&mut self, day: i64) -> StoreResult<Vec<(String, String, String, i64)>>;

    /// Moves an approved withdrawal from the channel that did not take its
    /// payout (or from none) to `to_channel`, noting it as sent there
    /// (before the call, as the first send is); whether it was still
    /// approved and at `from_channel` (and unsent, if asked).
    async fn reroute_payout(&mut self, r: &Reroute<'_>) -> StoreResult<bool>;
}

macro_rules! impl_routing {
    ($conn:ty) => {
        #[async_trait]
        impl RoutingQueries for $conn {
            async fn routing_tables(&mut self) -> StoreResult<Vec<RoutingTableRow>> {
                Ok(routing_tables::table
                    .order((
                        routing_tables::currency,
                        routing_tables::direction,
                        routing_tables::scope,
                    ))
                    .select(crate::rows::columns::<RoutingTableRow>())
                    .load(self.c())
                    .await?)
            }

            async fn put_routing_table(&mut self, row: &RoutingTableRow) -> StoreResult<()> {
                diesel::insert_into(routing_tables::table)
                    .values(row)
                    .on_conflict((
                        routing_tables::scope,
                        routing_tables::currency,
                        routing_tables::direction,
                    ))
                    .do_update()
                    .set(row)
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn reserve_daily_use(
                &mut self,
                key: DailyKey<'_>,
                amount: i64,
                limit: i64,
            ) -> StoreResult<bool> {
                if amount > limit {
                    return Ok(false);
                }
                // One statement, so one commit: the day's row made with
                // this amount, or raised by it only while it stays within
                // the limit (the row locked, so instances racing for the
                // last of the room never pass it).
                use diesel::query_dsl::methods::FilterDsl;
                use diesel::upsert::excluded;
                let upsert = diesel::insert_into(channel_daily_use::table)
                    .values((
                        channel_daily_use::channel.eq(key.channel),
                        channel_daily_use::currency.eq(key.currency),
                        channel_daily_use::direction.eq(key.direction),
                        channel_daily_use::day.eq(key.day),
                        channel_daily_use::used.eq(amount),
                    ))
                    .on_conflict((
                        channel_daily_use::channel,
                        channel_daily_use::currency,
                        channel_daily_use::direction,
                        channel_daily_use::day,
                    ))
                    .do_update()
                    .set(
                        channel_daily_use::used
                            .eq(channel_daily_use::used + excluded(channel_daily_use::used)),
                    );
                let raised = FilterDsl::filter(upsert, channel_daily_use::used.le(limit - amount))
                    .execute(self.c())
                    .await?;
                Ok(raised == 1)
            }

            async fn release_daily_use(
                &mut self,
                key: DailyKey<'_>,
                amount: i64,
            ) -> StoreResult<()> {
                diesel::update(
                    channel_daily_use::table
                        .filter(channel_daily_use::channel.eq(key.channel))
                        .filter(channel_daily_use::currency.eq(key.currency))
                        .filter(channel_daily_use::direction.eq(key.direction))
                        .filter(channel_daily_use::day.eq(key.day))
                        .filter(channel_daily_use::used.ge(amount)),
                )
                .set(channel_daily_use::used.eq(channel_daily_use::used - amount))
                .execute(self.c())
                .await?;
                Ok(())
            }

            async fn daily_use_on(
                &mut self,
                day: i64,
            ) -> StoreResult<Vec<(String, String, String, i64)>> {
                Ok(channel_daily_use::table
                    .filter(channel_daily_use::day.eq(day))
                    .select((
                        channel_daily_use::channel,
                        channel_daily_use::currency,
                        channel_daily_use::direction,
                        channel_daily_use::used,
                    ))
                    .load(self.c())
                    .await?)
            }

            async fn reroute_payout(&mut self, r: &Reroute<'_>) -> StoreResult<bool> {
                use crate::domain::status::WithdrawalStatus;
                use diesel::expression::AsExpression;
                use diesel::sql_types::Bool;
                // One statement for every case, so that diesel checks it on
                // both backends: the constants switch the conditions.
                let unrouted = AsExpression::<Bool>::as_expression(r.from_channel.is_none());
                let resent = AsExpression::<Bool>::as_expression(!r.unsent_only);
                // A suspended merchant's payouts are held, as `mark_payout_sent` holds them.
                let moved = diesel::update(
                    withdrawal_orders::table
                        .filter(withdrawal_orders::id.eq(r.id))
                        .filter(withdrawal_orders::status.eq(WithdrawalStatus::Approved))
                        .filter(
                            withdrawal_orders::channel_id
                                .eq(r.from_channel.unwrap_or_default())
                                .or(withdrawal_orders::channel_id.is_null().and(unrouted)),
                        )
                        .filter(withdrawal_orders::payout_sent_at.is_null().or(resent))
                        .filter(diesel::dsl::not(
                            withdrawal_orders::merchant_id
                                .eq_any(super::merchants::held_merchants()),
                        )),
                )
                .set((
                    withdrawal_orders::channel_id.eq(r.to_channel),
                    withdrawal_orders::routing.eq(r.routing),
                    withdrawal_orders::estimated_channel_cost.eq(r.estimated_channel_cost),
                    withdrawal_orders::estimated_profit.eq(r.estimated_profit),
                    withdrawal_orders::payout_sent_at.eq(Some(r.at)),
                    withdrawal_orders::payout_inquired_at.eq(None::<i64>),
                    withdrawal_orders::updated_at.eq(r.at),
                ))
                .execute(self.c())
                .await?;
                Ok(moved == 1)
            }
        }
    };
}

impl_routing!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_routing!(crate::Tx<'_, crate::SqliteConn>);
