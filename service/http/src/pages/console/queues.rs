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
use crate::pages::escape;
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{csrf_field, given, paged_table, table, when};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
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
    format!("{} {:.4}", escape(currency), amount)
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
    format!("{} {}", escape(currency), escape(&shown))
}

/// An account number as an approver needs it: enough to recognise it (its
/// last four characters), never the whole of it.
fn masked(account: &str) -> String {
    format!("•••• {}", escape(&validate::last4(account)))
}

pub(super) fn remarks(fields: &HashMap<String, String>) -> Result<Option<String>, ApiError> {
    validate::optional_text("remarks", given(fields, "remarks"), 512)
}

pub(super) fn notice(fields: &HashMap<String, String>) -> String {
    given(fields, "done")
        .map(|d| format!("<p class=\"notice\" role=\"status\">{}</p>", escape(&d)))
        .unwrap_or_default()
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
        let listed = listings::withdrawals(app, listing(&fields, Some("pending"))).await?;
        let may = super::operator(&session)?.role.may(Action::ApproveWithdrawal);
        let mut rows = Vec::new();
        for (order, merchant) in &listed.items {
            let given_by = approvals::of(app, &order.order_no).await?;
            let needed = approvals::needed(app, order)?;
            let names: Vec<String> = given_by.iter().map(|a| escape(&a.approver_name)).collect();
            let state = format!(
                "{} of {needed}{}",
                given_by.len(),
                if names.is_empty() { String::new() } else { format!(": {}", names.join(", ")) }
            );
            let no = escape(&order.order_no);
            let act = if may {
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/console/withdrawals/{no}/review\">{}\
                     <div><label for=\"remarks-{no}\">Remarks</label>\
                     <input type=\"text\" id=\"remarks-{no}\" name=\"remarks\" maxlength=\"512\"></div>{}\
                     <button type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>\
                     <button type=\"submit\" class=\"danger\" name=\"decision\" value=\"reject\">Reject</button></form>",
                    csrf_field(&session),
                    super::second_factor::code_field(&order.order_no)
                )
            } else {
                "<span class=\"muted\">Your role may not approve.</span>".to_string()
            };
            let to = &order.beneficiary;
            rows.push(vec![
                format!("<a href=\"/console/orders?q={no}\">{no}</a>"),
                escape(&merchant.name),
                grouped(app, &order.currency, order.amount),
                format!(
                    "{}<br><span class=\"muted\">{} {}</span>",
                    escape(&to.name),
                    escape(&to.bank_code),
                    masked(&to.account)
                ),
                when(order.created_at.timestamp()),
                state,
                act,
            ]);
        }
        let body = format!(
            "{}{}",
            notice(&fields),
            paged_table("Withdrawals awaiting approval", &["Order", "Merchant", "Amount", "Beneficiary, bank and account", "Created", "Approvals", "Decision"], &rows, "/console/withdrawals", &fields, listed.next_cursor.as_deref())
        );
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
                    withdrawals::approve_waiting_at_most(app, &op, &order_no, remarks).await
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
        let rows: Vec<Vec<String>> = listed
            .items
            .iter()
            .map(|t| {
                let id = escape(&t.id);
                let act = if may {
                    format!(
                        "<form class=\"inline\" method=\"post\" action=\"/console/bank/{id}/match\">{}\
                         <div><label for=\"order-{id}\">Order number</label>\
                         <input type=\"text\" id=\"order-{id}\" name=\"order_no\" required></div>\
                         <div><label for=\"remarks-{id}\">Remarks</label>\
                         <input type=\"text\" id=\"remarks-{id}\" name=\"remarks\" maxlength=\"512\"></div>\
                         <button type=\"submit\">Match</button></form>",
                        csrf_field(&session)
                    )
                } else {
                    "<span class=\"muted\">Your role may not match.</span>".into()
                };
                vec![
                    escape(&t.bank_reference),
                    escape(&t.account_id),
                    money(&t.currency, t.amount),
                    escape(t.payer_name.as_deref().unwrap_or("")),
                    escape(t.remark.as_deref().unwrap_or("")),
                    when(t.received_at),
                    act,
                ]
            })
            .collect();
        let body = format!(
            "{}{}",
            notice(&fields),
            paged_table("Unmatched bank transactions", &["Reference", "Account", "Amount", "Payer", "Remark", "Received", "Match"], &rows, "/console/bank", &fields, listed.next_cursor.as_deref())
        );
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
        let per_channel: Vec<Vec<String>> = doubt
            .iter()
            .map(|(channel, n, oldest)| {
                vec![escape(channel), n.to_string(), format!("{oldest} s")]
            })
            .collect();
        let listed = listings::withdrawals(app, listing(&fields, Some("approved"))).await?;
        let may = super::operator(&session)?.role.may(Action::ResolveWithdrawal);
        let mut rows = Vec::new();
        for (order, merchant) in listed.items.iter().filter(|(o, _)| o.needs_manual_intervention) {
            let no = escape(&order.order_no);
            let act = if may {
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/console/payouts/{no}/resolve\">{}\
                     <div><label for=\"outcome-{no}\">Outcome</label><select id=\"outcome-{no}\" name=\"outcome\" required>\
                     <option value=\"\" selected disabled>Ask the channel first</option>\
                     <option value=\"completed\">Paid</option><option value=\"failed\">Not paid</option></select></div>\
                     <div><label for=\"ref-{no}\">Bank reference</label><input type=\"text\" id=\"ref-{no}\" name=\"bank_reference\" maxlength=\"128\"></div>\
                     <div><label for=\"remarks-{no}\">Remarks</label><input type=\"text\" id=\"remarks-{no}\" name=\"remarks\" required maxlength=\"512\"></div>\
                     <button type=\"submit\">Resolve</button></form>",
                    csrf_field(&session)
                )
            } else {
                "<span class=\"muted\">Your role may not resolve.</span>".into()
            };
            // What the operator quotes to the channel when asking what
            // became of the payout.
            let at_channel = match (&order.channel_id, &order.channel_order_no) {
                (Some(channel), Some(theirs)) => format!("{} {}", escape(channel), escape(theirs)),
                (Some(channel), None) => format!("{} <span class=\"muted\">(no number given)</span>", escape(channel)),
                _ => "<span class=\"muted\">none</span>".into(),
            };
            rows.push(vec![
                no.clone(),
                escape(&merchant.name),
                amount(&order.currency, order.amount),
                at_channel,
                escape(order.manual_reason.as_deref().unwrap_or("")),
                act,
            ]);
        }
        let body = format!(
            "{}{}{}",
            notice(&fields),
            table("In doubt per channel", &["Channel", "Payouts", "Oldest"], &per_channel),
            paged_table("Set aside for an operator (this page of approved withdrawals)", &["Order", "Merchant", "Amount", "Channel and its order number", "Why", "Resolve"], &rows, "/console/payouts", &fields, listed.next_cursor.as_deref())
        );
        Reply::page("Payouts in doubt", body)
    })
    .await
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

/// Callbacks that failed or wait for their next attempt.
#[endpoint { method = GET, path = "/console/callbacks", unpublished = true }]
pub async fn console_callbacks(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, "/console/callbacks", |app, _session, fields| async move {
        let status = given(&fields, "status").unwrap_or_else(|| "FAILED".into());
        let listed = listings::callback_deliveries(&app, listing(&fields, Some(&status))).await?;
        let rows: Vec<Vec<String>> = listed
            .items
            .iter()
            .map(|d| {
                vec![
                    format!("<a href=\"/console/callbacks/{0}\">{0}</a>", escape(&d.id)),
                    escape(&d.event),
                    escape(&d.order_no),
                    escape(&d.merchant_id),
                    d.attempts.to_string(),
                    d.next_attempt_at.map(when).unwrap_or_default(),
                ]
            })
            .collect();
        let mut options = String::new();
        for s in ["FAILED", "WAITING_RETRY", "SENDING", "SUCCESS"] {
            let selected = if s == status { " selected" } else { "" };
            options.push_str(&format!("<option{selected}>{s}</option>"));
        }
        let body = format!(
            "<form class=\"inline\" method=\"get\" action=\"/console/callbacks\">\
             <div><label for=\"status\">Status</label><select id=\"status\" name=\"status\">{options}</select></div>\
             <button type=\"submit\" class=\"secondary\">Show</button></form>{}{}",
            notice(&fields),
            paged_table("Callback deliveries", &["Delivery", "Event", "Order", "Merchant", "Attempts", "Next attempt"], &rows, "/console/callbacks", &fields, listed.next_cursor.as_deref())
        );
        Reply::page("Callbacks", body)
    })
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
        let attempts: Vec<Vec<String>> = history
            .iter()
            .map(|a| {
                vec![
                    a.attempt.to_string(),
                    when(a.started_at),
                    a.status_code.map(|c| c.to_string()).unwrap_or_default(),
                    escape(a.error.as_deref().unwrap_or("")),
                    format!("{} ms", a.duration_ms),
                ]
            })
            .collect();
        let retry = if super::operator(&session)?.role.may(Action::RetryCallback) {
            format!(
                "<form method=\"post\" action=\"/console/callbacks/{}/retry\">{}<button type=\"submit\">Retry now</button></form>",
                escape(&row.id),
                csrf_field(&session)
            )
        } else {
            String::new()
        };
        let body = format!(
            "{}<dl class=\"facts\"><dt>Event</dt><dd>{}</dd><dt>Order</dt><dd>{}</dd><dt>Status</dt><dd>{}</dd>\
             <dt>Address</dt><dd>{}</dd><dt>Body sent</dt><dd><pre>{}</pre></dd></dl>{}{retry}",
            notice(&fields),
            escape(&row.event),
            escape(&row.order_no),
            escape(row.status.as_str()),
            escape(&row.callback_url),
            escape(&shown),
            table("Attempts", &["Attempt", "Started", "Answer", "Error", "Took"], &attempts)
        );
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
