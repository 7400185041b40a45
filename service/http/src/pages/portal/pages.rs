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
use crate::pages::console::queues_money as money;
use crate::pages::escape;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{csrf_field, facts, given, paged_table, pager, table, when};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
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

fn select(name: &str, label: &str, options: &[&str], chosen: &str) -> String {
    let mut out =
        format!("<div><label for=\"{name}\">{label}</label><select id=\"{name}\" name=\"{name}\">");
    for o in options {
        let selected = if *o == chosen { " selected" } else { "" };
        let shown = if o.is_empty() { "any" } else { o };
        out.push_str(&format!("<option value=\"{o}\"{selected}>{shown}</option>"));
    }
    out.push_str("</select></div>");
    out
}

type Rows = (Vec<Vec<String>>, Option<String>, &'static [&'static str]);

fn link(no: &str) -> String {
    format!("<a href=\"/portal/orders/{0}\">{0}</a>", escape(no))
}

async fn withdrawal_rows(app: &App, listing: Listing) -> Result<Rows, ApiError> {
    let listed = listings::withdrawals(app, listing).await?;
    let rows = listed
        .items
        .iter()
        .map(|(o, _)| {
            vec![
                link(&o.order_no),
                escape(&o.merchant_order_no),
                escape(o.status.as_str()),
                crate::pages::console::queues_amount(&o.currency, o.amount),
                escape(&o.beneficiary.name),
                when(o.created_at.timestamp()),
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
                escape(&o.merchant_order_no),
                escape(o.status.as_str()),
                format!("{} {:.4}", escape(&o.currency), o.amount),
                String::new(),
                o.created_at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
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
            let kind = given(&fields, "kind").unwrap_or_else(|| "deposit".into());
            let status = given(&fields, "status").unwrap_or_default();
            let listing = paged(&fields, &merchant);
            let (rows, next, statuses) = if kind == "withdrawal" {
                withdrawal_rows(&app, listing).await?
            } else {
                deposit_rows(&app, listing).await?
            };
            let body = format!(
                "<form class=\"inline\" method=\"get\" action=\"/portal/orders\">{}{}\
             <button type=\"submit\" class=\"secondary\">Show</button></form>{}",
                select("kind", "Kind", &["deposit", "withdrawal"], &kind),
                select("status", "Status", statuses, &status),
                paged_table(
                    "Orders",
                    &[
                        "Order",
                        "Your number",
                        "Status",
                        "Amount",
                        "Beneficiary",
                        "Created"
                    ],
                    &rows,
                    "/portal/orders",
                    &fields,
                    next.as_deref()
                )
            );
            Reply::page("Orders", body)
        },
    )
    .await
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
        |app, session, _fields| async move {
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
            let deliveries = listings::callback_deliveries(
                app,
                Listing {
                    limit: Some(50),
                    merchant_id: Some(merchant_id.clone()),
                    order_no: Some(order_no.clone()),
                    ..Listing::default()
                },
            )
            .await?;
            let mut timeline = String::new();
            for d in deliveries.items.iter().rev() {
                let attempts: Vec<Vec<String>> = callbacks::history(app, &d.id)
                    .await?
                    .iter()
                    .map(|a| {
                        vec![
                            a.attempt.to_string(),
                            when(a.started_at),
                            a.status_code.map(|c| c.to_string()).unwrap_or_default(),
                            // The owner reads the kind; the detail may name an
                            // internal address, and is the operators'.
                            a.error.as_deref().map(coarse).unwrap_or("").to_string(),
                        ]
                    })
                    .collect();
                timeline.push_str(&format!(
                    "<h3>{} · {} · {}</h3><p>Sent to {}</p><pre>{}</pre>{}",
                    escape(&d.event),
                    escape(d.status.as_str()),
                    when(d.created_at),
                    escape(&d.callback_url),
                    escape(&callbacks::shown_body(app, d)?),
                    table(
                        "Attempts",
                        &["Attempt", "Started", "Answer", "Error"],
                        &attempts
                    )
                ));
            }
            if timeline.is_empty() {
                timeline = "<p>No callback has been sent for this order.</p>".into();
            }
            Reply::page(
                format!("Order {order_no}"),
                format!("{}<h2>Callbacks</h2>{timeline}", facts(&order)),
            )
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
            let rows: Vec<Vec<String>> = all
                .iter()
                .map(|b| {
                    vec![
                        format!(
                            "<a href=\"/portal/balances?currency={0}\">{0}</a>",
                            escape(&b.currency)
                        ),
                        format!("{:.4}", b.available),
                        format!("{:.4}", b.frozen),
                        format!("{:.4}", b.total()),
                    ]
                })
                .collect();
            let mut body = table(
                "Balances",
                &["Currency", "Available", "Frozen", "Total"],
                &rows,
            );
            if let Some(currency) = given(&fields, "currency") {
                let lines = balance_history::lines(
                    &app,
                    &merchant,
                    &currency,
                    given(&fields, "cursor").as_deref(),
                    Some(25),
                )
                .await?;
                let rows: Vec<Vec<String>> = lines
                    .items
                    .iter()
                    .map(|l| {
                        vec![
                            when(l.created_at),
                            escape(&l.kind),
                            escape(&l.order_no),
                            money("", l.available_change),
                            money("", l.frozen_change),
                            money("", l.fee),
                            money("", l.available_after),
                        ]
                    })
                    .collect();
                body.push_str(&table(
                    &format!("History in {currency}"),
                    &[
                        "When",
                        "Kind",
                        "Order",
                        "Available change",
                        "Frozen change",
                        "Fee",
                        "Available after",
                    ],
                    &rows,
                ));
                body.push_str(&pager(
                    "/portal/balances",
                    &fields,
                    lines.next_cursor.as_deref(),
                ));
            }
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
            let rows: Vec<Vec<String>> = listed
                .items
                .iter()
                .map(|s| {
                    vec![
                        escape(&s.row.number),
                        escape(s.row.status.as_str()),
                        format!("{} to {}", when(s.row.period_start), when(s.row.period_end)),
                        when(s.row.issued_at),
                        format!(
                            "<a href=\"/portal/statements/{}/document\">PDF</a>",
                            escape(&s.row.id)
                        ),
                    ]
                })
                .collect();
            let body = format!(
                "{}<h2>Daily statement</h2>{}",
                paged_table(
                    "Billing statements",
                    &["Number", "Status", "Period", "Issued", "Download"],
                    &rows,
                    "/portal/statements",
                    &fields,
                    listed.next_cursor.as_deref()
                ),
                daily(&app, &merchant, &fields).await?
            );
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
) -> Result<String, ApiError> {
    let date = given(fields, "date").unwrap_or_default();
    let currency = given(fields, "currency").unwrap_or_default();
    let currencies: Vec<&str> = app.config.currencies.keys().map(String::as_str).collect();
    let mut out = format!(
        "<form class=\"inline\" method=\"get\" action=\"/portal/statements\">\
         <div><label for=\"date\">Day (UTC)</label><input type=\"date\" id=\"date\" name=\"date\" required value=\"{}\"></div>{}\
         <button type=\"submit\" class=\"secondary\">Show</button></form>",
        escape(&date),
        select("currency", "Currency", &currencies, &currency)
    );
    if date.is_empty() || currency.is_empty() {
        return Ok(out);
    }
    let statement = balance_history::statement(app, merchant, &date, &currency).await?;
    let rows: Vec<Vec<String>> = statement
        .totals
        .iter()
        .map(|t| {
            vec![
                escape(&t.kind),
                t.count.to_string(),
                money("", t.available_change),
                money("", t.frozen_change),
                money("", t.fee),
            ]
        })
        .collect();
    let csv_query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("date", &date)
        .append_pair("currency", &currency)
        .finish();
    out.push_str(&format!(
        "<dl class=\"facts\"><dt>Opening available</dt><dd>{}</dd><dt>Opening frozen</dt><dd>{}</dd>\
         <dt>Closing available</dt><dd>{}</dd><dt>Closing frozen</dt><dd>{}</dd></dl>{}\
         <p><a href=\"/portal/daily-statement.csv?{}\">Download as CSV</a></p>",
        money(&currency, statement.opening.0),
        money(&currency, statement.opening.1),
        money(&currency, statement.closing.0),
        money(&currency, statement.closing.1),
        table("The day's lines by kind", &["Kind", "Lines", "Available change", "Frozen change", "Fees"], &rows),
        escape(&csv_query)
    ));
    Ok(out)
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
        let done = given(&fields, "done")
            .map(|d| format!("<p class=\"notice\" role=\"status\">{}</p>", escape(&d)))
            .unwrap_or_default();
        let body = format!(
            "{done}<form method=\"post\" action=\"/portal/settings\">{}\
             <div class=\"field\"><label for=\"timeout\">How long your server may take to answer a callback (1 to 60 seconds)</label>\
             <input type=\"number\" id=\"timeout\" name=\"callback_timeout_seconds\" min=\"1\" max=\"60\" required value=\"{}\"></div>\
             <button type=\"submit\">Save</button></form>\
             <p class=\"muted\">Each order carries its own callback address, given when it is created.</p>",
            csrf_field(&session),
            merchant.callback_timeout_seconds
        );
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
