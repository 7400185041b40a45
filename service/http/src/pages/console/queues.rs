//! The console's work queues: withdrawals awaiting approval, bank
//! transactions without an order, payouts in doubt at a channel, and
//! callbacks that failed or wait to be retried.

use super::{acting, SECTIONS};
use crate::app::callbacks;
use crate::app::change_requests::{self, Change, ChangeRequestRow};
use crate::app::listings::{self, Listing};
use crate::app::withdrawals::{self, approvals, Resolution};
use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::domain::people::Action;
use crate::domain::validate;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{csrf_field, given, notice, paged_table, table, when};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
use maud::{html, Markup};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

use crate::app::App;

/// A page of a listing: 25 rows, resumed by the cursor the last gave.
pub(super) fn listing(fields: &HashMap<String, String>, status: Option<&str>) -> Listing {
    Listing {
        limit: Some(25),
        cursor: given(fields, "cursor"),
        status: status.map(str::to_string),
        ..Listing::default()
    }
}

pub(crate) fn money(currency: &str, units: i64) -> String {
    amount(currency, from_units(units))
}

/// An amount as the pages print it, with its currency.
pub(crate) fn amount(currency: &str, amount: rust_decimal::Decimal) -> String {
    format!("{currency} {amount:.4}")
}

/// An amount as a person deciding on it reads it: the currency's own
/// digits, thousands grouped (`THB 600,000.00`, never `600000.0000`, which
/// reads as sixty thousand as easily as six hundred).
pub(crate) fn grouped(app: &App, currency: &str, amount: rust_decimal::Decimal) -> String {
    let digits = app
        .config
        .currency(currency)
        .map_or(4, |c| c.fraction_digits);
    // The cashier's CLDR formatter, in English.
    let shown = crate::pages::locale::Language::En.amount(amount, digits);
    format!("{currency} {shown}")
}

/// An account number as an approver needs it: enough to recognise it (its
/// last four characters), never the whole of it.
fn masked(account: &str) -> String {
    format!("•••• {}", validate::last4(account))
}

pub(super) fn remarks(fields: &HashMap<String, String>) -> Result<Option<String>, ApiError> {
    validate::optional_text("remarks", given(fields, "remarks"), 512)
}

/// Whether a decision form's button said approve (or reject).
pub(super) fn approves(fields: &HashMap<String, String>) -> Result<bool, ApiError> {
    match fields.get("decision").map(String::as_str) {
        Some("approve") => Ok(true),
        Some("reject") => Ok(false),
        _ => Err(ApiError::invalid_field(
            "decision",
            "must be approve or reject",
        )),
    }
}

/// What the console says once a money action is filed: it waits for a
/// second person, and where they find it.
pub(super) fn filed_notice(filed: &ChangeRequestRow) -> String {
    format!(
        "Filed as change request {}: {} It moves nothing until a second person approves it under Change requests.",
        filed.id, filed.summary
    )
}

pub(super) fn back(path: &str, done: &str) -> Reply {
    let q = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("done", done)
        .finish();
    Reply::Go(format!("{path}?{q}"))
}

#[derive(Deserialize, JsonSchema)]
pub struct OrderPath {
    order_no: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct IdPath {
    pub(super) id: String,
}

/// Withdrawals awaiting approval, with the four-eyes state of each.
#[endpoint { method = GET, path = "/console/withdrawals", unpublished = true }]
pub async fn console_withdrawals(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/withdrawals", |app, session, fields| async move {
        let app = &*app;
        let filters = super::queue_filters::form(app, &fields);
        let Some(asked) = super::queue_filters::pending(app, &fields).await? else {
            let body = html! {
                (filters)
                p role="status" { "No merchant has the code " (given(&fields, "merchant").unwrap_or_default()) "." }
            };
            return Reply::page("Withdrawals awaiting approval", body);
        };
        let count = listings::count_withdrawals(app, asked.clone()).await?;
        let listed = listings::withdrawals(app, asked).await?;
        let may = super::operator(&session)?.role.may(Action::ApproveWithdrawal);
        let mut rows = Vec::new();
        for (order, merchant) in &listed.items {
            let given_by = approvals::of(app, &order.order_no).await?;
            let needed = approvals::needed(app, order)?;
            let names: Vec<&str> = given_by.iter().map(|a| a.approver_name.as_str()).collect();
            let no = &order.order_no;
            let to = &order.beneficiary;
            rows.push(vec![
                html! { a href={ "/console/orders?q=" (no) } { (no) } },
                html! { (merchant.name) },
                html! { (grouped(app, &order.currency, order.amount)) },
                html! { (to.name) br; span.muted { (to.bank_code) " " (masked(&to.account)) } },
                html! { (when(order.created_at.timestamp())) },
                html! {
                    (given_by.len()) " of " (needed)
                    @if !names.is_empty() { ": " (names.join(", ")) }
                },
                match may {
                    true => html! {
                        form.inline method="post" action={ "/console/withdrawals/" (no) "/review" } {
                            (csrf_field(&session))
                            div {
                                label for={ "remarks-" (no) } { "Remarks" }
                                input type="text" id={ "remarks-" (no) } name="remarks" maxlength="512";
                            }
                            (super::second_factor::code_field(no))
                            button type="submit" name="decision" value="approve" { "Approve" }
                            button type="submit" class="danger" name="decision" value="reject" { "Reject" }
                        }
                    },
                    false => html! { span.muted { "Your role may not approve." } },
                },
            ]);
        }
        let counted = match (count, super::queue_filters::any(&fields)) {
            (1, false) => "1 withdrawal awaits approval".to_string(),
            (1, true) => "1 withdrawal that matches awaits approval".to_string(),
            (n, false) => format!("{n} withdrawals await approval"),
            (n, true) => format!("{n} withdrawals that match await approval"),
        };
        let body = html! {
            (notice(&fields))
            (filters)
            p.count role="status" { (counted) ", oldest first." }
            (paged_table("Withdrawals awaiting approval, oldest first", &["Order", "Merchant", "Amount", "Beneficiary, bank and account", "Created", "Approvals", "Decision"], &rows, "/console/withdrawals", &fields, listed.next_cursor.as_deref()))
        };
        Reply::page("Withdrawals awaiting approval", body)
    })
    .await
}

/// Approve or reject a withdrawal, with remarks.
#[endpoint { method = POST, path = "/console/withdrawals/{order_no}/review", unpublished = true }]
pub async fn console_review(
    rqctx: RequestContext<Arc<App>>,
    path: Path<OrderPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    let order_no = path.into_inner().order_no;
    let from = crate::pages::web::address(&rqctx);
    post(
        &rqctx,
        &SECTIONS,
        "/console/withdrawals",
        body,
        |app, session, fields| async move {
            let approve = approves(&fields)?;
            let action = if approve {
                Action::ApproveWithdrawal
            } else {
                Action::RejectWithdrawal
            };
            let app = &app;
            let who = super::operator(&session)?;
            let order = acting(&session, action, &request_id, |op| async move {
                let remarks = remarks(&fields)?;
                if approve {
                    super::second_factor::approval_code(app, &who, &fields, &from).await?;
                    withdrawals::approve_waiting_at_most(app, &op, &order_no, remarks)
                        .await
                        .map(|answered| answered.recorded.order)
                } else {
                    withdrawals::reject(app, &op, &order_no, remarks).await
                }
            })
            .await?;
            let done = decided(app, approve, &order).await?;
            Ok(back("/console/withdrawals", &done))
        },
    )
    .await
}

/// What the console says after a decision: a first of two approvals is
/// recorded and waits for a second person, which "is pending" did not say.
async fn decided(
    app: &App,
    approved: bool,
    order: &withdrawals::Withdrawal,
) -> Result<String, ApiError> {
    let no = &order.order_no;
    if approved && order.status == crate::domain::status::WithdrawalStatus::Pending {
        let given = approvals::of(app, no).await?.len();
        let needed = approvals::needed(app, order)?;
        return Ok(format!(
            "Your approval of {no} is recorded ({given} of {needed}); a second approver is needed."
        ));
    }
    Ok(format!("{no} is {}.", order.status.as_str()))
}

/// Bank transactions no order was found for, each with a form to match it.
#[endpoint { method = GET, path = "/console/bank", unpublished = true }]
pub async fn console_bank(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/bank", |app, session, fields| async move {
        let listed = listings::bank_transactions(&app, listing(&fields, Some("unmatched"))).await?;
        let may = super::operator(&session)?.role.may(Action::MatchBankTransaction);
        let rows: Vec<Vec<Markup>> = listed
            .items
            .iter()
            .map(|t| {
                let id = &t.id;
                vec![
                    html! { (t.bank_reference) },
                    html! { (t.account_id) },
                    html! { (money(&t.currency, t.amount)) },
                    html! { (t.payer_name.as_deref().unwrap_or("")) },
                    html! { (t.remark.as_deref().unwrap_or("")) },
                    html! { (when(t.received_at)) },
                    match may {
                        true => html! {
                            form.inline method="post" action={ "/console/bank/" (id) "/match" } {
                                (csrf_field(&session))
                                div {
                                    label for={ "order-" (id) } { "Order number" }
                                    input type="text" id={ "order-" (id) } name="order_no" required;
                                }
                                div {
                                    label for={ "remarks-" (id) } { "Remarks" }
                                    input type="text" id={ "remarks-" (id) } name="remarks" maxlength="512";
                                }
                                button type="submit" { "Match" }
                            }
                        },
                        false => html! { span.muted { "Your role may not match." } },
                    },
                ]
            })
            .collect();
        let body = html! {
            (notice(&fields))
            (paged_table("Unmatched bank transactions", &["Reference", "Account", "Amount", "Payer", "Remark", "Received", "Match"], &rows, "/console/bank", &fields, listed.next_cursor.as_deref()))
        };
        Reply::page("Unmatched bank transactions", body)
    })
    .await
}

#[endpoint { method = POST, path = "/console/bank/{id}/match", unpublished = true }]
pub async fn console_match(
    rqctx: RequestContext<Arc<App>>,
    path: Path<IdPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    let id = path.into_inner().id;
    post(
        &rqctx,
        &SECTIONS,
        "/console/bank",
        body,
        |app, session, fields| async move {
            let app = &*app;
            let action = Action::FileChangeRequest;
            let filed = acting(&session, action, &request_id, |op| async move {
                let remarks = remarks(&fields)?;
                let order_no = given(&fields, "order_no")
                    .ok_or_else(|| ApiError::invalid_field("order_no", "is required"))?;
                let change = Change::MatchBankTransaction {
                    transaction_id: id,
                    order_no,
                    remarks: remarks.clone(),
                };
                change_requests::file(app, &op, change, remarks).await
            })
            .await?;
            Ok(back("/console/bank", &filed_notice(&filed)))
        },
    )
    .await
}

/// Payouts sent to a channel with no answer to trust, per channel, and the
/// withdrawals set aside for an operator to settle.
#[endpoint { method = GET, path = "/console/payouts", unpublished = true }]
pub async fn console_payouts(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/payouts", |app, session, fields| async move {
        let app = &*app;
        let doubt = withdrawals::payouts_in_doubt(app).await?;
        let per_channel: Vec<Vec<Markup>> = doubt
            .iter()
            .map(|(channel, n, oldest)| {
                vec![html! { (channel) }, html! { (n) }, html! { (oldest) " s" }]
            })
            .collect();
        let listed = listings::withdrawals(app, listing(&fields, Some("approved"))).await?;
        let may = super::operator(&session)?.role.may(Action::ResolveWithdrawal);
        let mut rows = Vec::new();
        for (order, merchant) in listed.items.iter().filter(|(o, _)| o.needs_manual_intervention) {
            let no = &order.order_no;
            rows.push(vec![
                html! { (no) },
                html! { (merchant.name) },
                html! { (amount(&order.currency, order.amount)) },
                // What the operator quotes to the channel when asking what
                // became of the payout.
                match (&order.channel_id, &order.channel_order_no) {
                    (Some(channel), Some(theirs)) => html! { (channel) " " (theirs) },
                    (Some(channel), None) => html! { (channel) " " span.muted { "(no number given)" } },
                    _ => html! { span.muted { "none" } },
                },
                html! { (order.manual_reason.as_deref().unwrap_or("")) },
                match may {
                    true => resolve_form(&session, no),
                    false => html! { span.muted { "Your role may not resolve." } },
                },
            ]);
        }
        let body = html! {
            (notice(&fields))
            (table("In doubt per channel", &["Channel", "Payouts", "Oldest"], &per_channel))
            (paged_table("Set aside for an operator (this page of approved withdrawals)", &["Order", "Merchant", "Amount", "Channel and its order number", "Why", "Resolve"], &rows, "/console/payouts", &fields, listed.next_cursor.as_deref()))
        };
        Reply::page("Payouts in doubt", body)
    })
    .await
}

/// The form that files a payout's outcome, for a second person to approve.
fn resolve_form(session: &crate::app::web_sessions::Session, no: &str) -> Markup {
    html! {
        form.inline method="post" action={ "/console/payouts/" (no) "/resolve" } {
            (csrf_field(session))
            div {
                label for={ "outcome-" (no) } { "Outcome" }
                select id={ "outcome-" (no) } name="outcome" required {
                    option value="" selected disabled { "Ask the channel first" }
                    option value="completed" { "Paid" }
                    option value="failed" { "Not paid" }
                }
            }
            div {
                label for={ "ref-" (no) } { "Bank reference" }
                input type="text" id={ "ref-" (no) } name="bank_reference" maxlength="128";
            }
            div {
                label for={ "remarks-" (no) } { "Remarks" }
                input type="text" id={ "remarks-" (no) } name="remarks" required maxlength="512";
            }
            button type="submit" { "Resolve" }
        }
    }
}

#[endpoint { method = POST, path = "/console/payouts/{order_no}/resolve", unpublished = true }]
pub async fn console_resolve(
    rqctx: RequestContext<Arc<App>>,
    path: Path<OrderPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    let order_no = path.into_inner().order_no;
    post(
        &rqctx,
        &SECTIONS,
        "/console/payouts",
        body,
        |app, session, fields| async move {
            let app = &*app;
            let filed = acting(
                &session,
                Action::FileChangeRequest,
                &request_id,
                |op| async move {
                    let outcome = match fields.get("outcome").map(String::as_str) {
                        Some("completed") => Resolution::Completed,
                        Some("failed") => Resolution::Failed,
                        _ => {
                            return Err(ApiError::invalid_field(
                                "outcome",
                                "must be completed or failed",
                            ))
                        }
                    };
                    let remarks = validate::required_text(
                        "remarks",
                        given(&fields, "remarks").unwrap_or_default(),
                        512,
                    )?;
                    let reference = validate::optional_text(
                        "bank_reference",
                        given(&fields, "bank_reference"),
                        128,
                    )?;
                    let change = Change::ResolveWithdrawal {
                        order_no,
                        resolution: outcome,
                        remarks: remarks.clone(),
                        bank_reference: reference,
                    };
                    change_requests::file(app, &op, change, Some(remarks)).await
                },
            )
            .await?;
            Ok(back("/console/payouts", &filed_notice(&filed)))
        },
    )
    .await
}

/// One delivery: the body sent, each attempt and the receiver's answer.
#[endpoint { method = GET, path = "/console/callbacks/{id}", unpublished = true }]
pub async fn console_callback(
    rqctx: RequestContext<Arc<App>>,
    path: Path<IdPath>,
) -> Result<http::Response<Body>, HttpError> {
    let id = path.into_inner().id;
    page(&rqctx, &SECTIONS, "/console/callbacks", |app, session, fields| async move {
        let app = &*app;
        let row = callbacks::find(app, &id).await?;
        let history = callbacks::history(app, &id).await?;
        let shown = callbacks::shown_body(app, &row)?;
        let merchant = crate::app::merchants::find(app, &row.merchant_id).await?;
        let attempts: Vec<Vec<Markup>> = history
            .iter()
            .map(|a| {
                vec![
                    html! { (a.attempt) },
                    html! { (when(a.started_at)) },
                    html! { @if let Some(c) = a.status_code { (c) } },
                    html! { (a.error.as_deref().unwrap_or("")) },
                    html! { (a.duration_ms) " ms" },
                ]
            })
            .collect();
        let may = super::operator(&session)?.role.may(Action::RetryCallback);
        let body = html! {
            (notice(&fields))
            dl.facts {
                dt { "Event" } dd { (row.event) }
                dt { "Merchant" } dd { a href={ "/console/merchants?merchant_id=" (merchant.id) } { (merchant.name) } " (" (merchant.code) ")" }
                dt { "Order" } dd { a href={ "/console/orders?q=" (row.order_no) } { (row.order_no) } }
                dt { "Status" } dd { (row.status.as_str()) }
                dt { "Address" } dd { (row.callback_url) }
                dt { "Body sent" } dd { pre { (shown) } }
            }
            (table("Attempts", &["Attempt", "Started", "Answer", "Error", "Took"], &attempts))
            @if may {
                form method="post" action={ "/console/callbacks/" (row.id) "/retry" } {
                    (csrf_field(&session))
                    button type="submit" { "Retry now" }
                }
            }
        };
        Reply::page(format!("Callback {}", row.id), body)
    })
    .await
}

#[endpoint { method = POST, path = "/console/callbacks/{id}/retry", unpublished = true }]
pub async fn console_retry(
    rqctx: RequestContext<Arc<App>>,
    path: Path<IdPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    let id = path.into_inner().id;
    post(
        &rqctx,
        &SECTIONS,
        "/console/callbacks",
        body,
        |app, session, _| async move {
            let app = &*app;
            let row = acting(
                &session,
                Action::RetryCallback,
                &request_id,
                |op| async move { callbacks::retry(app, &op, &id).await },
            )
            .await?;
            Ok(back(
                &format!("/console/callbacks/{}", row.id),
                "Queued for another attempt.",
            ))
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::masked;

    #[test]
    fn an_account_shows_its_last_four_characters_only() {
        assert_eq!(masked("1234567890"), "•••• 7890");
        assert_eq!(masked("12"), "•••• 12");
        assert_eq!(masked("<b>x</b>9876"), "•••• 9876");
    }
}
