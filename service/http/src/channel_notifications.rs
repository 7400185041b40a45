//! Where channels' adapters post notifications
//! (`openapi/channel-notifications.json`): the channel found by its code,
//! the signature checked under its secret over the exact bytes received,
//! then the body read and handed to `app::notifications`. The errors are
//! the service's envelope with the protocol's codes.

use crate::app::notifications::{self, Notice, Refusal};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::NotificationKind;
use crate::error::http_error;
use crate::observe::in_span;
use dropshot::{ClientErrorStatusCode, HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::channel_notifications::types;
use merchant_api::channel_notifications::{ChannelNotificationsApi, ReceiveNotificationPath};
use payments_wire::server::{ChannelSignatureHeaders, SignedJson};
use std::sync::Arc;

pub enum ChannelNotificationsApiImpl {}

fn refuse(status: ClientErrorStatusCode, code: &str, message: impl Into<String>) -> HttpError {
    HttpError::for_client_error(Some(code.to_string()), status, message.into())
}

/// A refused notification as the wire answers it.
fn refusal_error(refusal: Refusal) -> HttpError {
    {
        match refusal {
            Refusal::ChannelNotFound(_) => refuse(
                ClientErrorStatusCode::NOT_FOUND,
                "CHANNEL_NOT_FOUND",
                refusal.to_string(),
            ),
            Refusal::Contradictory(why) => refuse(
                ClientErrorStatusCode::CONFLICT,
                "CONTRADICTORY_NOTIFICATION",
                why,
            ),
            Refusal::Api(e) => match e {
                ApiError::InvalidBody(_)
                | ApiError::InvalidField { .. }
                | ApiError::OrderNotFound { .. }
                | ApiError::Unavailable(_)
                | ApiError::Internal(_) => crate::error::http_error(e),
                // The order kept moving under the notification (another
                // notification, an operator, expiry): the adapter retries a
                // 503, and the next try reads the order as it is then.
                ApiError::InvalidStateTransition { .. } => crate::error::http_error(
                    ApiError::Unavailable(format!("the order moved meanwhile: {e}")),
                ),
                // Nothing else is the adapter's doing (a currency no longer
                // configured, say): a fault of the service, in the codes
                // the protocol publishes.
                other => crate::error::http_error(ApiError::Internal(other.to_string())),
            },
        }
    }
}

/// The body's values the schema cannot bound, checked.
fn notice(n: types::Notification) -> Result<Notice, ApiError> {
    let length = n.notification_id.chars().count();
    if length == 0 || length > 128 {
        return Err(ApiError::invalid_field(
            "notification_id",
            "must be 1 to 128 characters",
        ));
    }
    let order_no = n.order_no.0;
    let order_no_ok = (1..=64).contains(&order_no.len())
        && order_no
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !order_no_ok {
        return Err(ApiError::invalid_field(
            "order_no",
            "must be 1 to 64 letters, digits, `-` or `_`",
        ));
    }
    Ok(Notice {
        notification_id: n.notification_id,
        kind: match n.type_ {
            types::NotificationType::PaymentMatched => NotificationKind::PaymentMatched,
            types::NotificationType::PaymentCompleted => NotificationKind::PaymentCompleted,
            types::NotificationType::PaymentFailed => NotificationKind::PaymentFailed,
            types::NotificationType::PayoutCompleted => NotificationKind::PayoutCompleted,
            types::NotificationType::PayoutFailed => NotificationKind::PayoutFailed,
        },
        order_no,
        channel_order_no: n.channel_order_no,
        payout_reference: n.payout_reference,
        amount: n.amount.map(|a| a.0),
        channel_cost: n.channel_cost.map(|a| a.0),
        reason: n.reason,
        occurred_at: n.occurred_at.timestamp(),
    })
}

impl ChannelNotificationsApi for ChannelNotificationsApiImpl {
    type Context = Arc<App>;

    async fn receive_notification(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        path: Path<ReceiveNotificationPath>,
        body: SignedJson<types::Notification>,
    ) -> Result<HttpResponseOk<types::NotificationReceipt>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            let code = path.into_inner().channel_code;
            let channel = notifications::channel_by_code(app, &code).map_err(refusal_error)?;
            // The configuration promises a secret on every `http` channel;
            // `channel_by_code` only finds those.
            let secret = channel.config().secret.as_deref().unwrap_or_default();
            payments_wire::channel::verify(
                secret.as_bytes(),
                headers.timestamp.as_deref(),
                headers.signature.as_deref(),
                &headers.method,
                &headers.path_and_query,
                body.bytes(),
                // The channel signs with the real time: the sandbox's clock
                // runs ahead only for the service's own schedules.
                app.wall_unix(),
            )
            .map_err(|e| refuse(ClientErrorStatusCode::UNAUTHORIZED, e.code(), e.to_string()))?;
            let parsed = body
                .parse()
                .map_err(crate::body_error)
                .map_err(http_error)?;
            let notice = notice(parsed).map_err(http_error)?;
            let notification_id = notice.notification_id.clone();
            let receipt = notifications::receive(app, channel.as_ref(), notice)
                .await
                .map_err(refusal_error)?;
            Ok(HttpResponseOk(types::NotificationReceipt {
                notification_id,
                duplicate: receipt.duplicate,
            }))
        })
        .await
    }
}
