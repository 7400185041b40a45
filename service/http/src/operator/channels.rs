//! What the channels told the service: their notifications, as recorded.

use crate::app::listings::Listing;
use crate::app::notifications::Recorded;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::money;
use crate::domain::people::Action;
use crate::enums::Spelled;
use crate::operator::auth::operate;
use crate::time;
use dropshot::{HttpError, HttpResponseOk, RequestContext};
use merchant_api::operator::{types, ListChannelNotificationsQuery};
use payments_wire::server::{BearerToken, Query};
use payments_wire::DecimalString;
use std::sync::Arc;

pub(super) async fn list_channel_notifications(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
    query: Query<ListChannelNotificationsQuery>,
) -> Result<HttpResponseOk<types::ChannelNotificationPage>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        channel_notifications(&app, query.into_inner()).await
    })
    .await
}

/// A recorded notification; `channel_code` from the configuration (a
/// channel since removed shows its id).
pub fn channel_notification_view(
    app: &App,
    row: Recorded,
) -> Result<types::ChannelNotification, ApiError> {
    let channel_code = app
        .channels
        .get(&row.channel_id)
        .map_or_else(|| row.channel_id.clone(), |c| c.code().to_string());
    Ok(types::ChannelNotification {
        channel_code,
        type_: crate::enums::listed_kind(row.kind).ok_or_else(|| {
            ApiError::Internal(format!("notification {} is not of a listed kind", row.id))
        })?,
        outcome: row.outcome.spelled(),
        amount: row.amount.map(|a| DecimalString(money::from_units(a))),
        channel_cost: row
            .channel_cost
            .map(|c| DecimalString(money::from_units(c))),
        occurred_at: time(row.occurred_at)?,
        received_at: time(row.received_at)?,
        id: row.id,
        notification_id: row.notification_id,
        order_no: row.order_no,
        reference: row.reference,
        reason: row.reason,
    })
}

/// A page of channel notifications; a channel code no channel has finds
/// none.
pub async fn channel_notifications(
    app: &App,
    q: merchant_api::operator::ListChannelNotificationsQuery,
) -> Result<types::ChannelNotificationPage, ApiError> {
    let channel_id = match q.channel_code.as_deref().map(|c| app.channels.by_code(c)) {
        Some(None) => {
            return Ok(types::ChannelNotificationPage {
                items: Vec::new(),
                next_cursor: None,
            })
        }
        known => known.flatten().map(|c| c.id().to_string()),
    };
    let listing = Listing {
        limit: q.limit,
        cursor: q.cursor,
        status: q.outcome,
        order_no: q.order_no,
        channel_id,
        ..Listing::default()
    };
    let page = crate::app::listings::channel_notifications(app, listing).await?;
    Ok(types::ChannelNotificationPage {
        items: page
            .items
            .into_iter()
            .map(|r| channel_notification_view(app, r))
            .collect::<Result<_, ApiError>>()?,
        next_cursor: page.next_cursor,
    })
}
