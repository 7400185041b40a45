//! The console's records: an order by either number, operators and owner
//! invitations (admins), the ledger check and the audit trail.

use super::SECTIONS;
use crate::app::audit::{self as trail, AuditFilter};
use crate::app::listings::{self, Listing};
use crate::app::{deposits, merchants, timeline, withdrawals, App};
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::pages::console::queues::listing;
use crate::pages::web::guard::{page, Reply};
use crate::pages::web::timeline::Reader;
use crate::pages::web::{facts, given, paged_table, pager, table, when};
use dropshot::{endpoint, Body, HttpError, RequestContext};
use maud::{html, Markup};
use std::collections::HashMap;
use std::sync::Arc;

fn search_form(q: &str, merchant: &str) -> Markup {
    html! {
        form.inline method="get" action="/console/orders" {
            div {
                label for="q" { "Order number or the merchant's order number" }
                input type="search" id="q" name="q" required value=(q);
            }
            div {
                label for="merchant" { "Merchant id (for the merchant's number)" }
                input type="text" id="merchant" name="merchant_id" value=(merchant);
            }
            button type="submit" { "Find" }
        }
    }
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

/// Where the order went and why, from its routing record (a channel
/// deposit's `payment_snapshot`, a withdrawal's `routing`).
fn why_this_channel(order: &serde_json::Value) -> Markup {
    let record = match order["routing"].as_object() {
        Some(r) => r,
        None => match order["payment_snapshot"].as_object() {
            Some(s) if s.contains_key("routing_channel") => s,
            _ => return html! {},
        },
    };
    let said = |k: &str| record.get(k).and_then(|v| v.as_str()).unwrap_or("");
    html! {
        h2 { "Why this channel" }
        dl.facts {
            dt { "Channel" } dd { (said("routing_channel")) }
            dt { "Table" } dd { (said("routing_table")) }
            dt { "Rule" } dd { (said("routing_rule")) }
            @if !said("routing_fallback_from").is_empty() {
                dt { "Fell through from" } dd { (said("routing_fallback_from")) }
            }
            @if !said("routing_skipped").is_empty() {
                dt { "Passed over" } dd { (said("routing_skipped")) }
            }
        }
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
            let form = search_form(
                q.as_deref().unwrap_or(""),
                merchant.as_deref().unwrap_or(""),
            );
            let Some(q) = q else {
                return Reply::page("Find an order", form);
            };
            let body = match found(&app, &q, merchant.as_deref()).await? {
                Some(order) => {
                    let field = |k: &str| order[k].as_str().unwrap_or_default().to_string();
                    let history = timeline::of_order(
                        &app,
                        &field("merchant_id"),
                        &field("order_no"),
                        crate::pages::web::timeline::made_at(&order),
                    )
                    .await?;
                    html! {
                        (form)
                        (why_this_channel(&order))
                        h2 { "Timeline" }
                        (crate::pages::web::timeline::render(&app, Reader::Operator, &history))
                        h2 { "The order now" }
                        (facts(&order))
                    }
                }
                None => html! {
                    (form)
                    p role="status" { "No order has the number " (q) "." }
                },
            };
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
        let rows: Vec<Vec<Markup>> = listed
            .items
            .iter()
            .map(|o| {
                vec![
                    html! { (o.name) },
                    html! { (o.email) },
                    html! { (o.role.as_str()) },
                    html! { (o.status.as_str()) },
                    html! { (when(o.created_at)) },
                ]
            })
            .collect();
        let merchant = given(&fields, "merchant_id");
        let invitations = match &merchant {
            Some(m) => {
                let invitations = listings::owner_invitations(&app, m, listing(&fields, None)).await?;
                let now = app.now_unix();
                let rows: Vec<Vec<Markup>> = invitations
                    .items
                    .iter()
                    .map(|i| {
                        vec![
                            html! { (i.email) },
                            html! { (crate::app::owners::state(i, now)) },
                            html! { (i.issued_by) },
                            html! { (when(i.issued_at)) },
                            html! { (when(i.expires_at)) },
                        ]
                    })
                    .collect();
                table("Invitations", &["Email", "State", "Issued by", "Issued", "Expires"], &rows)
            }
            None => html! {},
        };
        let body = html! {
            (table("Operators", &["Name", "Email", "Role", "Status", "Since"], &rows))
            (pager("/console/operators", &fields, listed.next_cursor.as_deref()))
            h2 { "Owner invitations" }
            form.inline method="get" action="/console/operators" {
                div {
                    label for="merchant" { "Merchant id" }
                    input type="text" id="merchant" name="merchant_id" required value=(merchant.as_deref().unwrap_or(""));
                }
                button type="submit" class="secondary" { "Show invitations" }
            }
            (invitations)
        };
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
        let rows: Vec<Vec<Markup>> = report
            .differences
            .iter()
            .map(|d| vec![html! { (d.kind) }, html! { (d.reference) }, html! { (d.detail) }])
            .collect();
        let body = html! {
            @if report.ok() {
                p.notice role="status" { "The ledger balances: every entry sums to zero and every balance equals its postings." }
            } @else {
                p role="alert" { "The ledger has differences; see below." }
            }
            p { (report.entries_checked) " entries and " (report.balances_checked) " balances checked." }
            (table("Differences", &["Kind", "Reference", "Detail"], &rows))
        };
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
        let mut names = Names::default();
        let mut rows: Vec<Vec<Markup>> = Vec::with_capacity(listed.items.len());
        for a in &listed.items {
            rows.push(vec![
                html! { (when(a.created_at)) },
                html! { (a.operator_name) },
                html! { (a.role.as_str()) },
                html! { (a.action) },
                names.target(&app, &a.target_type, &a.target_id).await?,
                html! { (a.remarks.as_deref().unwrap_or("")) },
                html! { (a.request_id) },
            ]);
        }
        let input = |id: &str, label: &str, value: &Option<String>| {
            html! {
                div {
                    label for=(id) { (label) }
                    input type="text" id=(id) name=(id) value=(value.as_deref().unwrap_or(""));
                }
            }
        };
        let body = html! {
            form.inline method="get" action="/console/audit" {
                (input("operator_id", "Operator id", &filter.operator_id))
                (input("action", "Action", &filter.action))
                (input("target_id", "Target", &filter.target_id))
                button type="submit" class="secondary" { "Filter" }
            }
            (paged_table("Audit trail", &["When", "Operator", "Role", "Action", "Target", "Remarks", "Request"], &rows, "/console/audit", &fields, listed.next_cursor.as_deref()))
        };
        Reply::page("Audit trail", body)
    })
    .await
}

/// The names of the merchants and operators an audit page's rows act on,
/// each read once per page.
#[derive(Default)]
struct Names {
    known: HashMap<(String, String), Option<String>>,
}

impl Names {
    /// What a row acted on, as a person finds it: a merchant or an operator
    /// by name, an order or a delivery as a link to its page; an id only
    /// where nothing names it (one since removed, or a bank transaction).
    async fn target(&mut self, app: &App, kind: &str, id: &str) -> Result<Markup, ApiError> {
        if id.is_empty() {
            return Ok(html! { (kind) });
        }
        let key = (kind.to_string(), id.to_string());
        if !self.known.contains_key(&key) {
            let name = match kind {
                "merchant" => match merchants::find(app, id).await {
                    Ok(m) => Some(format!("{} ({})", m.name, m.code)),
                    Err(ApiError::MerchantNotFound(_)) => None,
                    Err(e) => return Err(e),
                },
                "operator" => match crate::app::people::find(app, id).await {
                    Ok(o) => Some(o.name),
                    Err(ApiError::OperatorNotFound(_)) => None,
                    Err(e) => return Err(e),
                },
                _ => None,
            };
            self.known.insert(key.clone(), name);
        }
        let name = self.known.get(&key).cloned().flatten();
        Ok(match (kind, name) {
            ("merchant", Some(name)) => html! {
                "merchant " a href={ "/console/merchants?" (by_code("merchant_id", id)) } { (name) }
            },
            (_, Some(name)) => html! { (kind) " " (name) },
            ("order", None) => html! {
                "order " a href={ "/console/orders?" (by_code("q", id)) } { (id) }
            },
            ("callback_delivery", None) => html! {
                "callback " a href={ "/console/callbacks/" (id) } { (id) }
            },
            (_, None) => html! { (kind) " " (id) },
        })
    }
}

/// An admin's form to invite an owner of the merchant.
fn invite_form(session: &crate::app::web_sessions::Session, merchant_id: &str) -> Markup {
    html! {
        h2 { "Invite an owner" }
        form.inline method="post" action="/console/invitations" {
            (crate::pages::web::csrf_field(session))
            input type="hidden" name="merchant_id" value=(merchant_id);
            div {
                label for="invite-email" { "Owner's email" }
                input type="email" id="invite-email" name="email" required maxlength="254" autocomplete="off";
            }
            button type="submit" { "Send the invitation" }
        }
    }
}

/// The merchants, newest first, each a link to its page.
async fn merchant_list(
    app: &App,
    fields: &HashMap<String, String>,
    q: Option<String>,
) -> Result<Markup, ApiError> {
    let listing = Listing {
        limit: Some(25),
        cursor: given(fields, "cursor"),
        ..Listing::default()
    };
    let listed = listings::merchants(app, listing, q).await?;
    let rows: Vec<Vec<Markup>> = listed
        .items
        .iter()
        .map(|m| {
            vec![
                html! { a href={ "/console/merchants?merchant_id=" (m.id) } { (m.name) } },
                html! { (m.code) },
                html! { (m.status.as_str()) },
                html! { (when(m.created_at)) },
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
    page(&rqctx, &SECTIONS, "/console/merchants", |app, session, fields| async move {
        let id = given(&fields, "merchant_id");
        let q = given(&fields, "q");
        let form = html! {
            form.inline method="get" action="/console/merchants" {
                div {
                    label for="merchant-q" { "Code or part of the name" }
                    input type="search" id="merchant-q" name="q" maxlength="128" value=(q.as_deref().unwrap_or(""));
                }
                button type="submit" { "Find" }
            }
        };
        let Some(id) = id else {
            let list = merchant_list(&app, &fields, q).await?;
            return Reply::page("Merchants", html! { (form) (list) });
        };
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
            .map(|(c, a)| format!("{c}: {a}"))
            .collect();
        let period = crate::app::billing::period_of(&app, &m.id).await?;
        let may_invite = super::operator(&session)?.role.may(Action::InviteOwner);
        let body = html! {
            (form)
            dl.facts {
                dt { "Name" } dd { (m.name) }
                dt { "Code" } dd { (m.code) }
                dt { "Status" } dd { (m.status.as_str()) }
                dt { "Auto-approval" } dd { (m.auto_approval.mode().as_str()) " " (limits.join(", ")) }
                dt { "Rate limit" } dd { (rate) }
                dt { "Callback timeout" } dd { (m.callback_timeout_seconds) " s" }
                dt { "Receiving accounts" } dd { (accounts.join(", ")) }
                dt { "Billing period" } dd { (period.as_str()) }
            }
            ul.links {
                li { a #merchant-withdrawals href={ "/console/withdrawals?" (by_code("merchant", &m.code)) } { "Withdrawals awaiting approval" } }
                li { a href={ "/console/callbacks?" (by_code("merchant", &m.code)) } { "Failed callbacks" } }
                li { a href={ "/console/operators?" (by_code("merchant_id", &m.id)) } { "Owner invitations" } }
            }
            @if may_invite { (invite_form(&session, &m.id)) }
        };
        Reply::page("Merchants", body)
    })
    .await
}

/// `name=value` as a query, the value encoded.
fn by_code(name: &str, value: &str) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair(name, value)
        .finish()
}
