//! Notifications from channels' adapters, recorded once each.

use crate::domain::status::NotificationOutcome;
use crate::paging::{newest_after, ListFilter};
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;

use super::{first_or_none, insert_one};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait NotificationQueries: Send {
    /// Records a notification; `StoreError::Conflict` with
    /// `UniqueKey::ChannelNotification` when this channel sent its id before.
    async fn insert_channel_notification(
        &mut self,
        row: &ChannelNotificationRow,
    ) -> StoreResult<()>;

    async fn channel_notification_by(
        &mut self,
        channel_id: &str,
        notification_id: &str,
    ) -> StoreResult<Option<ChannelNotificationRow>>;

    /// The notifications recorded for one order, oldest first.
    async fn channel_notifications_of(
        &mut self,
        order_no: &str,
    ) -> StoreResult<Vec<ChannelNotificationRow>>;

    /// How many notifications ended with `outcome` (what waits for an
    /// operator: `held`, `contradictory`).
    async fn count_channel_notifications(
        &mut self,
        outcome: NotificationOutcome,
    ) -> StoreResult<i64>;

    /// Newest received first; `filter.status` is the outcome.
    async fn list_channel_notifications(
        &mut self,
        filter: &ListFilter,
    ) -> StoreResult<Vec<ChannelNotificationRow>>;

    /// Deletes at most `limit` of the notifications received before
    /// `before` that moved an order or changed nothing; how many. Those
    /// that wait for an operator (`held`, `contradictory`) stay.
    async fn forget_notifications_before(&mut self, before: i64, limit: i64) -> StoreResult<usize>;
}

macro_rules! impl_notifications {
    ($conn:ty) => {
        #[async_trait]
        impl NotificationQueries for $conn {
            async fn insert_channel_notification(
                &mut self,
                row: &ChannelNotificationRow,
            ) -> StoreResult<()> {
                if let Some(deferred) = self.deferred.as_mut() {
                    deferred.notifications.push(row.clone());
                    return Ok(());
                }
                insert_one!(self.c(), channel_notifications::table, row)
            }

            async fn channel_notification_by(
                &mut self,
                channel_id: &str,
                notification_id: &str,
            ) -> StoreResult<Option<ChannelNotificationRow>> {
                let query = channel_notifications::table
                    .filter(channel_notifications::channel_id.eq(channel_id))
                    .filter(channel_notifications::notification_id.eq(notification_id));
                first_or_none!(
                    self.c(),
                    ChannelNotificationRow,
                    query,
                    "channel_notifications",
                    notification_id
                )
            }

            async fn channel_notifications_of(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Vec<ChannelNotificationRow>> {
                Ok(channel_notifications::table
                    .filter(channel_notifications::order_no.eq(order_no))
                    .order(channel_notifications::received_at.asc())
                    .select(crate::rows::columns::<ChannelNotificationRow>())
                    .load(self.c())
                    .await?)
            }

            async fn count_channel_notifications(
                &mut self,
                outcome: NotificationOutcome,
            ) -> StoreResult<i64> {
                Ok(channel_notifications::table
                    .filter(channel_notifications::outcome.eq(outcome))
                    .count()
                    .get_result(self.c())
                    .await?)
            }

            async fn list_channel_notifications(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<ChannelNotificationRow>> {
                // The operator listing's `type` names the four kinds of
                // operator 0.17; a declined payment (channel-notifications
                // 0.3.0) is recorded, and shown on its order, not listed.
                let mut q = channel_notifications::table
                    .filter(
                        channel_notifications::kind
                            .ne(crate::domain::status::NotificationKind::PaymentFailed),
                    )
                    .into_boxed();
                if let Some(outcome) = &filter.status {
                    q = q.filter(channel_notifications::outcome.eq(outcome.clone()));
                }
                if let Some(channel) = &filter.channel_id {
                    q = q.filter(channel_notifications::channel_id.eq(channel.clone()));
                }
                if let Some(order_no) = &filter.order_no {
                    q = q.filter(channel_notifications::order_no.eq(order_no.clone()));
                }
                Ok(
                    newest_after!(q, channel_notifications, received_at, id, filter)
                        .select(crate::rows::columns::<ChannelNotificationRow>())
                        .load(self.c())
                        .await?,
                )
            }

            async fn forget_notifications_before(
                &mut self,
                before: i64,
                limit: i64,
            ) -> StoreResult<usize> {
                let settled = [NotificationOutcome::Applied, NotificationOutcome::Unchanged];
                super::forget_oldest!(
                    self.c(),
                    channel_notifications,
                    received_at,
                    before,
                    limit,
                    channel_notifications::outcome.eq_any(settled)
                )
            }
        }
    };
}

impl_notifications!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_notifications!(crate::Tx<'_, crate::SqliteConn>);
