//! Owner invitations from the console, and the platform events they send.
//! In the sandbox the page shows each event whole, its link included, so
//! that a first run can invite an owner and accept as them with nothing
//! configured (`app::platform_inbox`); elsewhere the link is the owner's
//! alone and the page shows only what was sent where.

use super::queues::back;
use super::{acting, SECTIONS};
use crate::app::{owners, platform_inbox, App};
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::routing::Profile;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{given, notice, table, when};
use dropshot::{endpoint, Body, HttpError, RequestContext, UntypedBody};
use maud::{html, Markup};
use std::sync::Arc;

const PAGE: &str = "/console/platform-events";

/// How many of the newest events the page lists.
const SHOWN: i64 = 50;

fn text<'a>(body: &'a serde_json::Value, field: &str) -> &'a str {
    body.get(field).and_then(|v| v.as_str()).unwrap_or("")
}

fn intro(app: &App) -> Markup {
    match (app.config.profile, platform_inbox::is_own(app)) {
        (Profile::Sandbox, true) => html! {
            p { "This sandbox has no platform address (" code { "platform_events_url" } "), so it posts its platform events to itself and lists them here. Open an invitation's link to accept it as the owner would." }
        },
        (Profile::Sandbox, false) => html! {
            p { "Platform events are posted to " (app.config.platform_events_url.as_deref().unwrap_or("")) ". The sandbox lists them here too, links included." }
        },
        (Profile::Production, _) => html! {
            p { "Platform events are posted to the platform's address. An invitation's link is the owner's alone: it is not shown here." }
        },
    }
}

/// The newest platform events, with their links in the sandbox.
#[endpoint { method = GET, path = "/console/platform-events", unpublished = true }]
pub async fn console_platform_events(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, PAGE, |app, session, fields| async move {
        // The links let whoever opens one become the owner: the people who
        // may invite one are the people who may read them.
        super::operator(&session)?.may(Action::InviteOwner)?;
        let sandbox = app.config.profile == Profile::Sandbox;
        let events = platform_inbox::recent(&app, SHOWN).await?;
        let rows: Vec<Vec<Markup>> = events
            .iter()
            .map(|e| {
                let link = text(&e.body, "link");
                vec![
                    html! { (when(e.created_at)) },
                    html! { (e.event) },
                    html! { (text(&e.body, "tenant_name")) },
                    html! { (text(&e.body, "email")) },
                    html! { (e.status) },
                    html! {
                        @if sandbox && !link.is_empty() {
                            a href=(link) { "Open the invitation" }
                        }
                    },
                ]
            })
            .collect();
        let body = html! {
            (notice(&fields))
            (intro(&app))
            (table(
                "Platform events, newest first",
                &["When", "Event", "Merchant", "To", "Delivery", "Link"],
                &rows
            ))
        };
        Reply::page("Platform events", body)
    })
    .await
}

/// Invites an owner of a merchant (the merchant's page has the form).
#[endpoint { method = POST, path = "/console/invitations", unpublished = true }]
pub async fn console_invite(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    post(
        &rqctx,
        &SECTIONS,
        PAGE,
        body,
        |app, session, fields| async move {
            let merchant_id = given(&fields, "merchant_id")
                .ok_or_else(|| ApiError::invalid_field("merchant_id", "is required"))?;
            let email = given(&fields, "email")
                .ok_or_else(|| ApiError::invalid_field("email", "is required"))?;
            let app = &*app;
            let to = merchant_id.clone();
            let invited = acting(
                &session,
                Action::InviteOwner,
                &request_id,
                |op| async move { owners::invite(app, &op, &to, email).await },
            )
            .await?;
            Ok(if app.config.profile == Profile::Sandbox {
                back(
                    PAGE,
                    &format!(
                        "Invitation sent to {}: its link is below, as the owner receives it.",
                        invited.email
                    ),
                )
            } else {
                back(
                    &format!("/console/operators?merchant_id={merchant_id}"),
                    &format!("Invitation sent to {} through the platform.", invited.email),
                )
            })
        },
    )
    .await
}
