//! The portal's pages, each read through the session's merchant.

use super::{merchant_of, owner_of, SECTIONS};
use crate::app::listings::{self, Listing};
use crate::app::{
    balance_history, balances, billing, callbacks, deposits, merchants, withdrawals, App,
};
use crate::channels::egress::coarse;
use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::domain::people::OwnerAction;
use crate::domain::status::DeliveryStatus;
use crate::pages::console::queues_money as money;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{csrf_field, facts, given, notice, paged_table, pager, table, when};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
use maud::{html, Markup};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
pub struct OrderPath {
    order_no: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct StatementPath {
    id: String,
}

fn paged(fields: &HashMap<String, String>, merchant: &str) -> Listing {
    Listing {
        limit: Some(25),
        cursor: given(fields, "cursor"),
        status: given(fields, "status"),
        merchant_id: Some(merchant.to_string()),
        ..Listing::default()
    }
}

fn select(name: &str, label: &str, options: &[&str], chosen: &str) -> Markup {
    html! {
        div {
            label for=(name) { (label) }
            select id=(name) name=(name) {
                @for o in options {
                    option value=(o) selected[*o == chosen] { (if o.is_empty() { "any" } else { o }) }
                }
            }
        }
    }
}

type Rows = (Vec<Vec<Markup>>, Option<String>, &'static [&'static str]);

fn link(no: &str) -> Markup {
    html! { a href={ "/portal/orders/" (no) } { (no) } }
}

async fn withdrawal_rows(app: &App, listing: Listing) -> Result<Rows, ApiError> {
    let listed = listings::withdrawals(app, listing).await?;
    let rows = listed
        .items
        .iter()
        .map(|(o, _)| {
            vec![
                link(&o.order_no),
                html! { (o.merchant_order_no) },
                html! { (o.status.as_str()) },
                html! { (crate::pages::console::queues_amount(&o.currency, o.amount)) },
                html! { (o.beneficiary.name) },
                html! { (when(o.created_at.timestamp())) },
            ]
        })
        .collect();
    let statuses: &[&str] = &[
        "",
        "pending",
        "approved",
        "processing",
        "completed",
        "rejected",
        "failed",
    ];
    Ok((rows, listed.next_cursor, statuses))
}

async fn deposit_rows(app: &App, listing: Listing) -> Result<Rows, ApiError> {
    let listed = listings::deposits(app, listing).await?;
    let rows = listed
        .items
        .iter()
        .map(|(o, _)| {
            vec![
                link(&o.order_no),
                html! { (o.merchant_order_no) },
                html! { (o.status.as_str()) },
                html! { (crate::pages::console::queues_amount(&o.currency, o.amount)) },
                html! {},
                html! { (when(o.created_at.timestamp())) },
            ]
        })
        .collect();
    let statuses: &[&str] = &[
        "",
        "pending",
        "matched",
        "completed",
        "expired",
        "cancelled",
    ];
    Ok((rows, listed.next_cursor, statuses))
}

/// The form that finds one order by the merchant's own number (or the
/// service's).
fn search_form(fields: &HashMap<String, String>) -> Markup {
    html! {
        form.inline method="get" action="/portal/orders" {
            div {
                label for="number" { "Your order number, or ours" }
                input type="search" id="number" name="number" maxlength="64" required value=(given(fields, "number").unwrap_or_default());
            }
            button type="submit" { "Find" }
        }
    }
}

fn date_fields(fields: &HashMap<String, String>) -> Markup {
    let input = |name: &str, label: &str| {
        html! {
            div {
                label for=(name) { (label) }
                input type="date" id=(name) name=(name) value=(given(fields, name).unwrap_or_default());
            }
        }
    };
    html! {
        (input("from", "Created from (UTC)"))
        (input("to", "Created to, inclusive (UTC)"))
    }
}

/// The listing's creation bounds from the form's dates (UTC days): from the
/// first day's start to the end of the last.
fn date_range(fields: &HashMap<String, String>) -> Result<(Option<i64>, Option<i64>), ApiError> {
    let day = |name: &str| -> Result<Option<i64>, ApiError> {
        given(fields, name)
            .map(|text| {
                chrono::NaiveDate::parse_from_str(&text, "%Y-%m-%d")
                    .ok()
                    .and_then(|d| d.and_hms_opt(0, 0, 0))
                    .map(|t| t.and_utc().timestamp())
                    .ok_or_else(|| ApiError::invalid_field(name, "must be a date as YYYY-MM-DD"))
            })
            .transpose()
    };
    let from = day("from")?;
    let to = day("to")?.map(|start| start + 86_400);
    if let (Some(f), Some(t)) = (from, to) {
        if f >= t {
            return Err(ApiError::invalid_field("to", "must not be before from"));
        }
    }
    Ok((from, to))
}

/// The order the merchant's own number names, deposit or withdrawal, or
/// the service's number of one of the merchant's orders.
async fn find_own(app: &App, merchant: &str, number: &str) -> Result<Option<String>, ApiError> {
    let found = |r: Result<String, ApiError>| match r {
        Ok(no) => Ok(Some(no)),
        Err(ApiError::OrderNotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    };
    // The merchant's own numbers first: a number of theirs that happens to
    // look like one of ours is theirs.
    if let Some(no) = found(
        deposits::find_by_merchant_order_no(app, merchant, number)
            .await
            .map(|o| o.order_no),
    )? {
        return Ok(Some(no));
    }
    if let Some(no) = found(
        withdrawals::find_by_merchant_order_no(app, merchant, number)
            .await
            .map(|o| o.order_no),
    )? {
        return Ok(Some(no));
    }
    if let Some(no) = found(
        deposits::find_by_order_no(app, merchant, number)
            .await
            .map(|o| o.order_no),
    )? {
        return Ok(Some(no));
    }
    found(
        withdrawals::find_by_order_no(app, merchant, number)
            .await
            .map(|o| o.order_no),
    )
}

/// The merchant's orders, deposits or withdrawals, by status, newest first.
#[endpoint { method = GET, path = "/portal/orders", unpublished = true }]
pub async fn portal_orders(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(
        &rqctx,
        &SECTIONS,
        "/portal/orders",
        |app, session, fields| async move {
            let merchant = merchant_of(&session)?;
            if let Some(number) = given(&fields, "number") {
                return Ok(match find_own(&app, &merchant, &number).await? {
                    Some(order_no) => Reply::Go(format!(
                        "/portal/orders/{}",
                        url::form_urlencoded::byte_serialize(order_no.as_bytes())
                            .collect::<String>()
                    )),
                    None => Reply::Page {
                        title: "Orders".into(),
                        body: html! {
                            (search_form(&fields))
                            p role="status" { "No order of yours has the number " (number) "." }
                        },
                    },
                });
            }
            let kind = given(&fields, "kind").unwrap_or_else(|| "deposit".into());
            let status = given(&fields, "status").unwrap_or_default();
            let mut listing = paged(&fields, &merchant);
            (listing.created_from, listing.created_to) = date_range(&fields)?;
            let (rows, next, statuses) = if kind == "withdrawal" {
                withdrawal_rows(&app, listing).await?
            } else {
                deposit_rows(&app, listing).await?
            };
            let body = html! {
                (search_form(&fields))
                form.inline method="get" action="/portal/orders" {
                    (select("kind", "Kind", &["deposit", "withdrawal"], &kind))
                    (select("status", "Status", statuses, &status))
                    (date_fields(&fields))
                    button type="submit" class="secondary" { "Show" }
                }
                (paged_table(
                    "Orders",
                    &["Order", "Your number", "Status", "Amount", "Beneficiary", "Created"],
                    &rows,
                    "/portal/orders",
                    &fields,
                    next.as_deref()
                ))
            };
            Reply::page("Orders", body)
        },
    )
    .await
}

/// An order as its owner reads it: the platform's own figures (what the
/// channel costs it, what it earns) are the operators', not the merchant's.
fn for_the_owner(mut order: serde_json::Value) -> serde_json::Value {
    if let Some(map) = order.as_object_mut() {
        for platform_own in [
            "estimated_channel_cost",
            "estimated_profit",
            "actual_channel_cost",
            "actual_profit",
        ] {
            map.remove(platform_own);
        }
    }
    order
}

/// The order's callbacks, oldest first: each body sent, each attempt's
/// answer, and a failed one's button to send it again.
async fn timeline(
    app: &App,
    session: &crate::app::web_sessions::Session,
    merchant_id: &str,
    order_no: &str,
) -> Result<Option<Markup>, ApiError> {
    let deliveries = listings::callback_deliveries(
        app,
        Listing {
            limit: Some(50),
            merchant_id: Some(merchant_id.to_string()),
            order_no: Some(order_no.to_string()),
            ..Listing::default()
        },
    )
    .await?;
    if deliveries.items.is_empty() {
        return Ok(None);
    }
    let mut shown = Vec::with_capacity(deliveries.items.len());
    for d in deliveries.items.iter().rev() {
        let attempts: Vec<Vec<Markup>> = callbacks::history(app, &d.id)
            .await?
            .iter()
            .map(|a| {
                vec![
                    html! { (a.attempt) },
                    html! { (when(a.started_at)) },
                    html! { @if let Some(c) = a.status_code { (c) } },
                    // The owner reads the kind; the detail may name an
                    // internal address, and is the operators'.
                    html! { (a.error.as_deref().map(coarse).unwrap_or("")) },
                ]
            })
            .collect();
        shown.push((d, callbacks::shown_body(app, d)?, attempts));
    }
    Ok(Some(html! {
        @for (d, body, attempts) in &shown {
            h3 { (d.event) " · " (d.status.as_str()) " · " (when(d.created_at)) }
            p { "Sent to " (d.callback_url) }
            pre { (body) }
            (table("Attempts", &["Attempt", "Started", "Answer", "Error"], attempts))
            @if d.status == DeliveryStatus::Failed {
                form method="post" action={ "/portal/orders/" (order_no) "/callbacks/" (d.id) "/retry" } {
                    (csrf_field(session))
                    button type="submit" { "Send this callback again" }
                }
            }
        }
    }))
}

/// One order: what it is now, and each callback with the body sent and
/// the answers received.
#[endpoint { method = GET, path = "/portal/orders/{order_no}", unpublished = true }]
pub async fn portal_order(
    rqctx: RequestContext<Arc<App>>,
    path: Path<OrderPath>,
) -> Result<http::Response<Body>, HttpError> {
    let order_no = path.into_inner().order_no;
    page(
        &rqctx,
        &SECTIONS,
        "/portal/orders",
        |app, session, fields| async move {
            let app = &*app;
            let merchant_id = merchant_of(&session)?;
            let merchant = merchants::find(app, &merchant_id).await?;
            let shown = |e: serde_json::Error| ApiError::Internal(e.to_string());
            let order = match deposits::find_by_order_no(app, &merchant_id, &order_no).await {
                Ok(d) => {
                    serde_json::to_value(crate::deposit_order(app, &merchant, &d)).map_err(shown)?
                }
                Err(ApiError::OrderNotFound { .. }) => {
                    let w = withdrawals::find_by_order_no(app, &merchant_id, &order_no).await?;
                    serde_json::to_value(crate::withdrawal_order(&merchant, &w)?).map_err(shown)?
                }
                Err(e) => return Err(e),
            };
            let callbacks = timeline(app, &session, &merchant_id, &order_no).await?;
            let history = crate::app::timeline::of_order(
                app,
                &merchant_id,
                &order_no,
                crate::pages::web::timeline::made_at(&order),
            )
            .await?;
            Reply::page(
                format!("Order {order_no}"),
                html! {
                    (notice(&fields))
                    h2 { "Timeline" }
                    (crate::pages::web::timeline::render(app, crate::pages::web::timeline::Reader::Owner, &history))
                    h2 { "The order now" }
                    (facts(&for_the_owner(order)))
                    h2 { "Callbacks" }
                    @match callbacks {
                        Some(shown) => (shown),
                        None => p { "No callback has been sent for this order." },
                    }
                },
            )
        },
    )
    .await
}

#[derive(Deserialize, JsonSchema)]
pub struct RetryPath {
    order_no: String,
    id: String,
}

/// The owner sends one of the order's failed callbacks again (audited as
/// the owner): the attempts start over, as an operator's retry does.
#[endpoint { method = POST, path = "/portal/orders/{order_no}/callbacks/{id}/retry", unpublished = true }]
pub async fn portal_retry_callback(
    rqctx: RequestContext<Arc<App>>,
    path: Path<RetryPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    let RetryPath { order_no, id } = path.into_inner();
    post(
        &rqctx,
        &SECTIONS,
        "/portal/orders",
        body,
        |app, session, _fields| async move {
            let owner = owner_of(&session, OwnerAction::RetryCallback, &request_id)?;
            let merchant_id = merchant_of(&session)?;
            let row = callbacks::retry_failed_of(&app, &owner, &merchant_id, &id).await?;
            let done = url::form_urlencoded::Serializer::new(String::new())
                .append_pair(
                    "done",
                    &format!("The {} callback is being sent again.", row.event),
                )
                .finish();
            let order =
                url::form_urlencoded::byte_serialize(order_no.as_bytes()).collect::<String>();
            Ok(Reply::Go(format!("/portal/orders/{order}?{done}")))
        },
    )
    .await
}

#[endpoint { method = GET, path = "/portal/balances", unpublished = true }]
pub async fn portal_balances(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(
        &rqctx,
        &SECTIONS,
        "/portal/balances",
        |app, session, fields| async move {
            let merchant = merchant_of(&session)?;
            let all = balances::list(&app, &merchant).await?;
            let rows: Vec<Vec<Markup>> = all
                .iter()
                .map(|b| {
                    vec![
                        html! { a href={ "/portal/balances?currency=" (b.currency) } { (b.currency) } },
                        html! { (format!("{:.4}", b.available)) },
                        html! { (format!("{:.4}", b.frozen)) },
                        html! { (format!("{:.4}", b.total())) },
                    ]
                })
                .collect();
            let balances = table("Balances", &["Currency", "Available", "Frozen", "Total"], &rows);
            let Some(currency) = given(&fields, "currency") else {
                return Reply::page("Balances", balances);
            };
            let lines = balance_history::lines(
                &app,
                &merchant,
                &currency,
                given(&fields, "cursor").as_deref(),
                Some(25),
            )
            .await?;
            let rows: Vec<Vec<Markup>> = lines
                .items
                .iter()
                .map(|l| {
                    vec![
                        html! { (when(l.created_at)) },
                        html! { (l.kind) },
                        html! { (l.order_no) },
                        html! { (money("", l.available_change)) },
                        html! { (money("", l.frozen_change)) },
                        html! { (money("", l.fee)) },
                        html! { (money("", l.available_after)) },
                    ]
                })
                .collect();
            let body = html! {
                (balances)
                (table(
                    &format!("History in {currency}"),
                    &["When", "Kind", "Order", "Available change", "Frozen change", "Fee", "Available after"],
                    &rows,
                ))
                (pager("/portal/balances", &fields, lines.next_cursor.as_deref()))
            };
            Reply::page("Balances", body)
        },
    )
    .await
}

#[endpoint { method = GET, path = "/portal/statements", unpublished = true }]
pub async fn portal_statements(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(
        &rqctx,
        &SECTIONS,
        "/portal/statements",
        |app, session, fields| async move {
            let merchant = merchant_of(&session)?;
            let mut listing = paged(&fields, &merchant);
            listing.status = None;
            let listed = billing::list(&app, listing).await?;
            let rows: Vec<Vec<Markup>> = listed
                .items
                .iter()
                .map(|s| {
                    vec![
                        html! { (s.row.number) },
                        html! { (s.row.status.as_str()) },
                        html! { (when(s.row.period_start)) " to " (when(s.row.period_end)) },
                        html! { (when(s.row.issued_at)) },
                        html! { a href={ "/portal/statements/" (s.row.id) "/document" } { "PDF" } },
                    ]
                })
                .collect();
            let day = daily(&app, &merchant, &fields).await?;
            let body = html! {
                (paged_table(
                    "Billing statements",
                    &["Number", "Status", "Period", "Issued", "Download"],
                    &rows,
                    "/portal/statements",
                    &fields,
                    listed.next_cursor.as_deref()
                ))
                h2 { "Daily statement" }
                (day)
            };
            Reply::page("Statements", body)
        },
    )
    .await
}

/// A file to save, never cached.
fn download(content_type: &str, name: &str, bytes: Vec<u8>) -> Result<Reply, ApiError> {
    http::Response::builder()
        .status(http::StatusCode::OK)
        .header(http::header::CONTENT_TYPE, content_type)
        .header(
            http::header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        )
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Body::from(bytes))
        .map(Reply::Raw)
        .map_err(|e| ApiError::Internal(e.to_string()))
}

/// A day's statement in a currency: the form, and the statement when asked.
async fn daily(
    app: &App,
    merchant: &str,
    fields: &HashMap<String, String>,
) -> Result<Markup, ApiError> {
    let date = given(fields, "date").unwrap_or_default();
    let currency = given(fields, "currency").unwrap_or_default();
    let currencies: Vec<&str> = app.config.currencies.keys().map(String::as_str).collect();
    let form = html! {
        form.inline method="get" action="/portal/statements" {
            div {
                label for="date" { "Day (UTC)" }
                input type="date" id="date" name="date" required value=(date);
            }
            (select("currency", "Currency", &currencies, &currency))
            button type="submit" class="secondary" { "Show" }
        }
    };
    if date.is_empty() || currency.is_empty() {
        return Ok(form);
    }
    let statement = balance_history::statement(app, merchant, &date, &currency).await?;
    let rows: Vec<Vec<Markup>> = statement
        .totals
        .iter()
        .map(|t| {
            vec![
                html! { (t.kind) },
                html! { (t.count) },
                html! { (money("", t.available_change)) },
                html! { (money("", t.frozen_change)) },
                html! { (money("", t.fee)) },
            ]
        })
        .collect();
    let csv_query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("date", &date)
        .append_pair("currency", &currency)
        .finish();
    Ok(html! {
        (form)
        dl.facts {
            dt { "Opening available" } dd { (money(&currency, statement.opening.0)) }
            dt { "Opening frozen" } dd { (money(&currency, statement.opening.1)) }
            dt { "Closing available" } dd { (money(&currency, statement.closing.0)) }
            dt { "Closing frozen" } dd { (money(&currency, statement.closing.1)) }
        }
        (table("The day's lines by kind", &["Kind", "Lines", "Available change", "Frozen change", "Fees"], &rows))
        p { a href={ "/portal/daily-statement.csv?" (csv_query) } { "Download as CSV" } }
    })
}

/// The daily statement as CSV, for a spreadsheet.
#[endpoint { method = GET, path = "/portal/daily-statement.csv", unpublished = true }]
pub async fn portal_daily_csv(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(
        &rqctx,
        &SECTIONS,
        "/portal/statements",
        |app, session, fields| async move {
            let merchant = merchant_of(&session)?;
            let date = given(&fields, "date").unwrap_or_default();
            let currency = given(&fields, "currency").unwrap_or_default();
            let s = balance_history::statement(&app, &merchant, &date, &currency).await?;
            let amount = |units: i64| format!("{:.4}", from_units(units));
            let mut csv = String::from("line,kind,count,available,frozen,fee\n");
            csv.push_str(&format!(
                "opening,,,{},{},\n",
                amount(s.opening.0),
                amount(s.opening.1)
            ));
            for t in &s.totals {
                csv.push_str(&format!(
                    "change,{},{},{},{},{}\n",
                    t.kind.replace([',', '"', '\n'], " "),
                    t.count,
                    amount(t.available_change),
                    amount(t.frozen_change),
                    amount(t.fee)
                ));
            }
            csv.push_str(&format!(
                "closing,,,{},{},\n",
                amount(s.closing.0),
                amount(s.closing.1)
            ));
            let name = format!("statement-{}-{}.csv", s.date, s.currency);
            download("text/csv; charset=utf-8", &name, csv.into_bytes())
        },
    )
    .await
}

#[endpoint { method = GET, path = "/portal/statements/{id}/document", unpublished = true }]
pub async fn portal_statement_document(
    rqctx: RequestContext<Arc<App>>,
    path: Path<StatementPath>,
) -> Result<http::Response<Body>, HttpError> {
    let id = path.into_inner().id;
    page(
        &rqctx,
        &SECTIONS,
        "/portal/statements",
        |app, session, _| async move {
            let merchant = merchant_of(&session)?;
            let number = billing::find(&app, Some(&merchant), &id).await?.row.number;
            let pdf = (number, billing::document(&app, Some(&merchant), &id).await?);
            download("application/pdf", &format!("{}.pdf", pdf.0), pdf.1)
        },
    )
    .await
}

#[endpoint { method = GET, path = "/portal/settings", unpublished = true }]
pub async fn portal_settings(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/portal/settings", |app, session, fields| async move {
        let merchant = merchants::find(&app, &merchant_of(&session)?).await?;
        let body = html! {
            (notice(&fields))
            form method="post" action="/portal/settings" {
                (csrf_field(&session))
                div.field {
                    label for="timeout" { "How long your server may take to answer a callback (1 to 60 seconds)" }
                    input type="number" id="timeout" name="callback_timeout_seconds" min="1" max="60" required value=(merchant.callback_timeout_seconds);
                }
                button type="submit" { "Save" }
            }
            p.muted { "Each order carries its own callback address, given when it is created." }
        };
        Reply::page("Callback settings", body)
    })
    .await
}

#[endpoint { method = POST, path = "/portal/settings", unpublished = true }]
pub async fn portal_set_timeout(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    post(
        &rqctx,
        &SECTIONS,
        "/portal/settings",
        body,
        |app, session, fields| async move {
            let seconds = given(&fields, "callback_timeout_seconds")
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| {
                    ApiError::invalid_field("callback_timeout_seconds", "must be between 1 and 60")
                })?;
            let owner = owner_of(&session, OwnerAction::SetCallbackTimeout, &request_id)?;
            merchants::set_callback_timeout(&app, &owner, &merchant_of(&session)?, seconds).await?;
            Ok(Reply::Go("/portal/settings?done=Saved.".into()))
        },
    )
    .await
}
