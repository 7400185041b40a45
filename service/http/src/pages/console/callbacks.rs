//! The console's delivery log: deliveries by status, merchant and age,
//! each merchant named, and the failed ones queued again in one batch.

use super::queue_filters::merchant_of_code;
use super::queues::listing;
use super::{acting, SECTIONS};
use crate::app::callbacks::{self, RetryBatch};
use crate::app::{listings, merchants, App};
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{age_select, csrf_field, given, notice, paged_table, when};
use dropshot::{endpoint, Body, HttpError, RequestContext, UntypedBody};
use maud::{html, Markup};
use std::collections::HashMap;
use std::sync::Arc;

/// The ages the filter offers: (value, label, seconds).
const SINCE: [(&str, &str, i64); 3] = [
    ("1h", "the last hour", 3600),
    ("24h", "the last day", 86_400),
    ("7d", "the last 7 days", 7 * 86_400),
];

/// The filters a query asks for: the merchant's id (when its code names
/// one) and the earliest creation time.
struct Asked {
    merchant: Option<(String, String)>,
    created_from: Option<i64>,
}

async fn asked(app: &App, fields: &HashMap<String, String>) -> Result<Asked, ApiError> {
    let merchant = match given(fields, "merchant") {
        Some(code) => match merchant_of_code(app, &code).await? {
            Some(id) => Some((id, code)),
            None => return Err(ApiError::MerchantNotFound(code)),
        },
        None => None,
    };
    let created_from = match given(fields, "since") {
        Some(since) => {
            let (_, _, seconds) = SINCE
                .iter()
                .find(|(v, _, _)| *v == since)
                .ok_or_else(|| ApiError::invalid_field("since", "must be 1h, 24h or 7d"))?;
            Some(app.now_unix() - seconds)
        }
        None => None,
    };
    Ok(Asked {
        merchant,
        created_from,
    })
}

fn filter_form(fields: &HashMap<String, String>, status: &str) -> Markup {
    let since = given(fields, "since").unwrap_or_default();
    html! {
        form.inline method="get" action="/console/callbacks" {
            div {
                label for="status" { "Status" }
                select id="status" name="status" {
                    @for s in ["FAILED", "WAITING_RETRY", "SENDING", "SUCCESS"] {
                        option selected[s == status] { (s) }
                    }
                }
            }
            div {
                label for="cb-merchant" { "Merchant code" }
                input type="text" id="cb-merchant" name="merchant" maxlength="64"
                    value=(given(fields, "merchant").unwrap_or_default());
            }
            (age_select(("since", "since", "Created in"), "Any time", &SINCE, &since))
            button type="submit" class="secondary" { "Show" }
        }
    }
}

/// Deliveries by status (the failed ones unless asked), merchant and age.
#[endpoint { method = GET, path = "/console/callbacks", unpublished = true }]
pub async fn console_callbacks(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/callbacks", |app, session, fields| async move {
        let app = &*app;
        let status = given(&fields, "status").unwrap_or_else(|| "FAILED".into());
        let wanted = asked(app, &fields).await?;
        let mut shown = listing(&fields, Some(&status));
        shown.merchant_id = wanted.merchant.as_ref().map(|(id, _)| id.clone());
        shown.created_from = wanted.created_from;
        let listed = listings::callback_deliveries(app, shown).await?;
        let mut names: HashMap<String, String> = HashMap::new();
        let mut rows = Vec::with_capacity(listed.items.len());
        for d in &listed.items {
            if !names.contains_key(&d.merchant_id) {
                let name = merchants::find(app, &d.merchant_id).await?.name;
                names.insert(d.merchant_id.clone(), name);
            }
            rows.push(vec![
                html! { a href={ "/console/callbacks/" (d.id) } { (d.id) } },
                html! { (d.event) },
                html! { (d.order_no) },
                html! { (names.get(&d.merchant_id).map_or("", String::as_str)) },
                html! { (d.attempts) },
                html! { (when(d.created_at)) },
                html! { (d.next_attempt_at.map(when).unwrap_or_default()) },
            ]);
        }
        let may = super::operator(&session)?.role.may(Action::RetryCallbacks);
        let whose = match &wanted.merchant {
            Some((_, code)) => format!("of {code}"),
            None => "of every merchant".into(),
        };
        let body = html! {
            (filter_form(&fields, &status))
            (notice(&fields))
            (paged_table("Callback deliveries", &["Delivery", "Event", "Order", "Merchant", "Attempts", "Created", "Next attempt"], &rows, "/console/callbacks", &fields, listed.next_cursor.as_deref()))
            @if may && status == "FAILED" && !rows.is_empty() {
                form method="post" action="/console/callback-retries" {
                    (csrf_field(&session))
                    input type="hidden" name="merchant" value=(given(&fields, "merchant").unwrap_or_default());
                    input type="hidden" name="since" value=(given(&fields, "since").unwrap_or_default());
                    button type="submit" {
                        "Retry the failed deliveries " (whose) " shown by this filter (up to " (callbacks::BATCH_MOST) ")"
                    }
                }
            }
        };
        Reply::page("Callbacks", body)
    })
    .await
}

/// Queues again, in one batch, the failed deliveries the page's filter
/// shows: one audit row with the count.
#[endpoint { method = POST, path = "/console/callback-retries", unpublished = true }]
pub async fn console_retry_batch(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    post(
        &rqctx,
        &SECTIONS,
        "/console/callbacks",
        body,
        |app, session, fields| async move {
            let app = &*app;
            let wanted = asked(app, &fields).await?;
            let batch = RetryBatch {
                merchant_id: wanted.merchant.map(|(id, _)| id),
                created_from: wanted.created_from,
                ..RetryBatch::default()
            };
            let done = acting(
                &session,
                Action::RetryCallbacks,
                &request_id,
                |op| async move { callbacks::retry_failed(app, &op, batch).await },
            )
            .await?;
            let said = format!(
                "Queued again: {} failed {}{}.",
                done.retried,
                if done.retried == 1 {
                    "delivery"
                } else {
                    "deliveries"
                },
                if done.more {
                    "; more remain, retry again"
                } else {
                    ""
                }
            );
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("status", "WAITING_RETRY")
                .append_pair("merchant", &given(&fields, "merchant").unwrap_or_default())
                .append_pair("done", &said)
                .finish();
            Ok(Reply::Go(format!("/console/callbacks?{query}")))
        },
    )
    .await
}
