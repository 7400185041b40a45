//! The console's records: an order by either number, operators and owner
//! invitations (admins), the ledger check and the audit trail.

use super::SECTIONS;
use crate::app::audit::{self as trail, AuditFilter};
use crate::app::listings::{self, Listing};
use crate::app::{deposits, merchants, withdrawals, App};
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::pages::console::queues::listing;
use crate::pages::escape;
use crate::pages::web::guard::{page, Reply};
use crate::pages::web::{facts, given, paged_table, pager, table, when};
use dropshot::{endpoint, Body, HttpError, RequestContext};
use std::collections::HashMap;
use std::sync::Arc;

fn search_form(q: &str, merchant: &str) -> String {
    format!(
        "<form class=\"inline\" method=\"get\" action=\"/console/orders\">\
         <div><label for=\"q\">Order number or the merchant's order number</label>\
         <input type=\"search\" id=\"q\" name=\"q\" required value=\"{}\"></div>\
         <div><label for=\"merchant\">Merchant id (for the merchant's number)</label>\
         <input type=\"text\" id=\"merchant\" name=\"merchant_id\" value=\"{}\"></div>\
         <button type=\"submit\">Find</button></form>",
        escape(q),
        escape(merchant)
    )
}

/// An order found by the service's number, or by a merchant's own number
/// with the merchant named.
async fn found(
    app: &App,
    q: &str,
    merchant: Option<&str>,
) -> Result<Option<serde_json::Value>, ApiError> {
    let shown = |e: serde_json::Error| ApiError::Internal(e.to_string());
    let deposit = match merchant {
        Some(m) => deposits::find_by_merchant_order_no(app, m, q).await,
        None => deposits::find_any(app, q).await,
    };
    match deposit {
        Ok(order) => {
            let merchant = merchants::find(app, &order.merchant_id).await?;
            let view = crate::deposit_order(app, &merchant, &order);
            return serde_json::to_value(view).map(Some).map_err(shown);
        }
        Err(ApiError::OrderNotFound { .. }) => {}
        Err(e) => return Err(e),
    }
    let withdrawal = match merchant {
        Some(m) => withdrawals::find_by_merchant_order_no(app, m, q).await,
        None => withdrawals::find_any(app, q).await,
    };
    match withdrawal {
        Ok(order) => {
            let merchant = merchants::find(app, &order.merchant_id).await?;
            let view = crate::operator::withdrawal_view(app, &merchant, &order).await?;
            serde_json::to_value(view).map(Some).map_err(shown)
        }
        Err(ApiError::OrderNotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

#[endpoint { method = GET, path = "/console/orders", unpublished = true }]
pub async fn console_orders(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(
        &rqctx,
        &SECTIONS,
        "/console/orders",
        |app, _session, fields| async move {
            let q = given(&fields, "q");
            let merchant = given(&fields, "merchant_id");
            let mut body = search_form(
                q.as_deref().unwrap_or(""),
                merchant.as_deref().unwrap_or(""),
            );
            if let Some(q) = q {
                match found(&app, &q, merchant.as_deref()).await? {
                    Some(order) => body.push_str(&format!("<h2>Order</h2>{}", facts(&order))),
                    None => body.push_str(&format!(
                        "<p role=\"status\">No order has the number {}.</p>",
                        escape(&q)
                    )),
                }
            }
            Reply::page("Find an order", body)
        },
    )
    .await
}

#[endpoint { method = GET, path = "/console/operators", unpublished = true }]
pub async fn console_operators(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/operators", |app, session, fields| async move {
        super::operator(&session)?.may(Action::ReadOperators)?;
        let listed = listings::operators(&app, listing(&fields, None)).await?;
        let rows: Vec<Vec<String>> = listed
            .items
            .iter()
            .map(|o| {
                vec![
                    escape(&o.name),
                    escape(&o.email),
                    escape(o.role.as_str()),
                    escape(o.status.as_str()),
                    when(o.created_at),
                ]
            })
            .collect();
        let mut body = table("Operators", &["Name", "Email", "Role", "Status", "Since"], &rows);
        body.push_str(&pager("/console/operators", &fields, listed.next_cursor.as_deref()));
        let merchant = given(&fields, "merchant_id");
        body.push_str(&format!(
            "<h2>Owner invitations</h2><form class=\"inline\" method=\"get\" action=\"/console/operators\">\
             <div><label for=\"merchant\">Merchant id</label>\
             <input type=\"text\" id=\"merchant\" name=\"merchant_id\" required value=\"{}\"></div>\
             <button type=\"submit\" class=\"secondary\">Show invitations</button></form>",
            escape(merchant.as_deref().unwrap_or(""))
        ));
        if let Some(m) = merchant {
            let invitations = listings::owner_invitations(&app, &m, listing(&fields, None)).await?;
            let now = app.now_unix();
            let rows: Vec<Vec<String>> = invitations
                .items
                .iter()
                .map(|i| {
                    vec![
                        escape(&i.email),
                        escape(crate::app::owners::state(i, now)),
                        escape(&i.issued_by),
                        when(i.issued_at),
                        when(i.expires_at),
                    ]
                })
                .collect();
            body.push_str(&table(
                "Invitations",
                &["Email", "State", "Issued by", "Issued", "Expires"],
                &rows,
            ));
        }
        Reply::page("Operators and invitations", body)
    })
    .await
}

#[endpoint { method = GET, path = "/console/ledger", unpublished = true }]
pub async fn console_ledger(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/ledger", |app, _session, _fields| async move {
        let report = crate::app::ledger::check(&app).await?;
        let verdict = if report.ok() {
            "<p class=\"notice\" role=\"status\">The ledger balances: every entry sums to zero and every balance equals its postings.</p>"
        } else {
            "<p role=\"alert\">The ledger has differences; see below.</p>"
        };
        let rows: Vec<Vec<String>> = report
            .differences
            .iter()
            .map(|d| vec![escape(d.kind), escape(&d.reference), escape(&d.detail)])
            .collect();
        let body = format!(
            "{verdict}<p>{} entries and {} balances checked.</p>{}",
            report.entries_checked,
            report.balances_checked,
            table("Differences", &["Kind", "Reference", "Detail"], &rows)
        );
        Reply::page("Ledger check", body)
    })
    .await
}

#[endpoint { method = GET, path = "/console/audit", unpublished = true }]
pub async fn console_audit(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/audit", |app, _session, fields| async move {
        let filter = AuditFilter {
            operator_id: given(&fields, "operator_id"),
            action: given(&fields, "action"),
            target_id: given(&fields, "target_id"),
            operators_only: false,
        };
        let listed = trail::list(&app, listing(&fields, None), filter.clone()).await?;
        let rows: Vec<Vec<String>> = listed
            .items
            .iter()
            .map(|a| {
                vec![
                    when(a.created_at),
                    escape(&a.operator_name),
                    escape(a.role.as_str()),
                    escape(&a.action),
                    format!("{} {}", escape(&a.target_type), escape(&a.target_id)),
                    escape(a.remarks.as_deref().unwrap_or("")),
                    escape(&a.request_id),
                ]
            })
            .collect();
        let input = |id: &str, label: &str, value: &Option<String>| {
            format!(
                "<div><label for=\"{id}\">{label}</label><input type=\"text\" id=\"{id}\" name=\"{id}\" value=\"{}\"></div>",
                escape(value.as_deref().unwrap_or(""))
            )
        };
        let body = format!(
            "<form class=\"inline\" method=\"get\" action=\"/console/audit\">{}{}{}\
             <button type=\"submit\" class=\"secondary\">Filter</button></form>{}",
            input("operator_id", "Operator id", &filter.operator_id),
            input("action", "Action", &filter.action),
            input("target_id", "Target", &filter.target_id),
            paged_table("Audit trail", &["When", "Operator", "Role", "Action", "Target", "Remarks", "Request"], &rows, "/console/audit", &fields, listed.next_cursor.as_deref())
        );
        Reply::page("Audit trail", body)
    })
    .await
}

/// The merchants, newest first, each a link to its page.
async fn merchant_list(
    app: &App,
    fields: &HashMap<String, String>,
    q: Option<String>,
) -> Result<String, ApiError> {
    let listing = Listing {
        limit: Some(25),
        cursor: given(fields, "cursor"),
        ..Listing::default()
    };
    let listed = listings::merchants(app, listing, q).await?;
    let rows: Vec<Vec<String>> = listed
        .items
        .iter()
        .map(|m| {
            vec![
                format!(
                    "<a href=\"/console/merchants?merchant_id={}\">{}</a>",
                    escape(&m.id),
                    escape(&m.name)
                ),
                escape(&m.code),
                escape(m.status.as_str()),
                when(m.created_at),
            ]
        })
        .collect();
    Ok(paged_table(
        "Merchants, newest first",
        &["Name", "Code", "Status", "Created"],
        &rows,
        "/console/merchants",
        fields,
        listed.next_cursor.as_deref(),
    ))
}

/// The merchants, found by code or name, and one merchant's settings.
#[endpoint { method = GET, path = "/console/merchants", unpublished = true }]
pub async fn console_merchants(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/merchants", |app, _session, fields| async move {
        let id = given(&fields, "merchant_id");
        let q = given(&fields, "q");
        let mut body = format!(
            "<form class=\"inline\" method=\"get\" action=\"/console/merchants\">\
             <div><label for=\"merchant-q\">Code or part of the name</label>\
             <input type=\"search\" id=\"merchant-q\" name=\"q\" maxlength=\"128\" value=\"{}\"></div>\
             <button type=\"submit\">Find</button></form>",
            escape(q.as_deref().unwrap_or(""))
        );
        if id.is_none() {
            body.push_str(&merchant_list(&app, &fields, q).await?);
        }
        if let Some(id) = id {
            let m = merchants::find(&app, &id).await?;
            let limits: Vec<String> = m
                .auto_approval
                .limits()
                .iter()
                .map(|(c, units)| super::queues_money(c, *units))
                .collect();
            let rate = m
                .rate_limit
                .map(|(per_minute, burst)| format!("{per_minute} a minute, bursts of {burst}"))
                .unwrap_or_else(|| "the service's default".into());
            let accounts: Vec<String> = m
                .receiving_accounts
                .iter()
                .map(|(c, a)| format!("{}: {}", escape(c), escape(a)))
                .collect();
            let period = crate::app::billing::period_of(&app, &m.id).await?;
            body.push_str(&format!(
                "<dl class=\"facts\"><dt>Name</dt><dd>{}</dd><dt>Code</dt><dd>{}</dd><dt>Status</dt><dd>{}</dd>\
                 <dt>Auto-approval</dt><dd>{} {}</dd><dt>Rate limit</dt><dd>{rate}</dd>\
                 <dt>Callback timeout</dt><dd>{} s</dd><dt>Receiving accounts</dt><dd>{}</dd>\
                 <dt>Billing period</dt><dd>{}</dd></dl>\
                 <p><a href=\"/console/operators?merchant_id={}\">Owner invitations</a></p>",
                escape(&m.name),
                escape(&m.code),
                escape(m.status.as_str()),
                escape(m.auto_approval.mode().as_str()),
                limits.join(", "),
                m.callback_timeout_seconds,
                accounts.join(", "),
                escape(period.as_str()),
                escape(&m.id)
            ));
        }
        Reply::page("Merchants", body)
    })
    .await
}
