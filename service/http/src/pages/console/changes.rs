//! The console's change requests: money actions one person filed (a
//! match, a payout resolved), waiting for a second person, who reads what
//! approving will do and decides. The one who filed a request sees it
//! too, and may withdraw it, but never approve it.

use super::queues::{approves, back, remarks, IdPath};
use super::{acting, SECTIONS};
use crate::app::change_requests::{self, ChangeRequestRow};
use crate::app::listings::Listing;
use crate::app::App;
use crate::domain::people::Action;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{csrf_field, given, notice, paged_table, when};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
use maud::{html, Markup};
use std::sync::Arc;

const HERE: &str = "/console/changes";

fn decision_form(row: &ChangeRequestRow, csrf: &Markup, own: bool) -> Markup {
    let id = &row.id;
    html! {
        form.inline method="post" action={ (HERE) "/" (id) "/decide" } {
            (csrf)
            div {
                label for={ "remarks-" (id) } { "Remarks" }
                input type="text" id={ "remarks-" (id) } name="remarks" maxlength="512";
            }
            @if own {
                p.muted { "You filed this: a second person approves it." }
                button type="submit" class="danger" name="decision" value="reject" { "Withdraw" }
            } @else {
                (super::second_factor::code_field(id))
                button type="submit" name="decision" value="approve" { "Approve" }
                button type="submit" class="danger" name="decision" value="reject" { "Reject" }
            }
        }
    }
}

/// Pending change requests, each with what approving it will do.
#[endpoint { method = GET, path = "/console/changes", unpublished = true }]
pub async fn console_changes(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, HERE, |app, session, fields| async move {
        let listing = Listing {
            limit: Some(25),
            cursor: given(&fields, "cursor"),
            status: Some("pending".into()),
            ..Listing::default()
        };
        let listed = change_requests::list(&app, listing, None).await?;
        let me = super::operator(&session)?;
        let may = me.role.may(Action::ApproveChangeRequest);
        let csrf = csrf_field(&session);
        let rows: Vec<Vec<Markup>> = listed
            .items
            .iter()
            .map(|row| {
                let own = me.id.as_deref() == Some(row.requested_by.as_str());
                vec![
                    html! { (row.action) br; span.muted { (row.target) } },
                    html! { (row.summary) },
                    html! {
                        (row.requested_by_name)
                        @if let Some(r) = &row.remarks { br; span.muted { (r) } }
                    },
                    html! { (when(row.requested_at)) },
                    html! { (when(row.expires_at)) },
                    match may && me.id.is_some() {
                        true => decision_form(row, &csrf, own),
                        false => html! { span.muted { "Your role or sign-in may not decide." } },
                    },
                ]
            })
            .collect();
        let body = html! {
            (notice(&fields))
            p { "A money action (a deposit completed or cancelled, a transfer recorded or matched, a payout resolved, a merchant's fee, auto-approval, receiving account, API key or callback secret) is one person's request until a second, different person approves it here. Nothing moves before that." }
            (paged_table("Change requests waiting for a second person", &["Action and target", "What approving does", "Filed by", "Filed", "Expires", "Decision"], &rows, HERE, &fields, listed.next_cursor.as_deref()))
        };
        Reply::page("Change requests", body)
    })
    .await
}

/// Approve or reject (the filer: withdraw) a change request.
#[endpoint { method = POST, path = "/console/changes/{id}/decide", unpublished = true }]
pub async fn console_decide_change(
    rqctx: RequestContext<Arc<App>>,
    path: Path<IdPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    let id = path.into_inner().id;
    let from = crate::pages::web::address(&rqctx);
    post(
        &rqctx,
        &SECTIONS,
        HERE,
        body,
        |app, session, fields| async move {
            let approve = approves(&fields)?;
            let action = if approve {
                Action::ApproveChangeRequest
            } else {
                Action::RejectChangeRequest
            };
            let app = &app;
            let who = super::operator(&session)?;
            let (done, issued) = acting(&session, action, &request_id, |op| async move {
                let remarks = remarks(&fields)?;
                if approve {
                    super::second_factor::approval_code(app, &who, &fields, &from).await?;
                    let (row, done) = change_requests::approve(app, &op, &id, remarks).await?;
                    let said = format!(
                        "Change request {} is approved and done: {}",
                        row.id, row.summary
                    );
                    Ok((said, issued_by(done)))
                } else {
                    let row = change_requests::reject(app, &op, &id, remarks).await?;
                    let said = format!("Change request {} is rejected; nothing moved.", row.id);
                    Ok((said, None))
                }
            })
            .await?;
            match issued {
                // Shown on this page, once: a secret never goes into the
                // address a redirect would carry it in.
                Some((what, value)) => Reply::page(
                    format!("New {what}"),
                    html! {
                        p { (done) }
                        p { "The merchant's new " (what) ", shown this once (it is kept only encrypted or hashed): " code { (value) } }
                        p { "Give it to the merchant over a channel you trust. " a href=(HERE) { "Back to the change requests" } }
                    },
                ),
                None => Ok(back(HERE, &done)),
            }
        },
    )
    .await
}

/// The key or secret an approval issued, to show its approver once.
fn issued_by(done: change_requests::Done) -> Option<(&'static str, String)> {
    match done {
        change_requests::Done::ApiKey { issued, .. } => Some(("API key", issued.api_key)),
        change_requests::Done::CallbackSecret { signing, .. } => {
            signing.new_secret.map(|s| ("callback secret", s))
        }
        _ => None,
    }
}
