//! The sandbox's own receiver of platform events (`app::platform_inbox`):
//! posted to by the sandbox itself when no `platform_events_url` is
//! configured. Outside the JSON contract, as a platform's receiver is; the
//! sandbox spec describes it. Registered only in the sandbox profile.

use crate::app::{platform_inbox, App};
use crate::error::http_error;
use crate::observe::in_span;
use dropshot::{endpoint, HttpError, HttpResponseUpdatedNoContent, RequestContext, UntypedBody};
use std::sync::Arc;

/// A platform event, checked as the platform would check it; a post that
/// is not signed with the platform's secret is refused 401.
#[endpoint { method = POST, path = "/sandbox/platform-events", unpublished = true }]
pub async fn receive_platform_event(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<HttpResponseUpdatedNoContent, HttpError> {
    in_span(&rqctx, async {
        let app = rqctx.context();
        let id = platform_inbox::receive(app, rqctx.request.headers(), body.as_bytes())
            .map_err(http_error)?;
        tracing::info!(
            webhook_id = id,
            "platform event received by the sandbox's own inbox (the console lists it)"
        );
        Ok(HttpResponseUpdatedNoContent())
    })
    .await
}
