//! The simulated wallet's payment page, where a person (or a browser test)
//! plays the payer of a channel deposit: pay what was asked or another
//! amount, or decline. Paying completes the payment at the channel and
//! notifies the service; declining tells the service nothing (the protocol
//! has no such notification), so the order waits until it expires. HTML
//! without script, from `maud` templates that escape every value.

use crate::records::Entry;
use crate::{notify, Sim};
use anyhow::anyhow;
use dropshot::{endpoint, ApiDescription, Body, HttpError, Path, RequestContext, UntypedBody};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use merchant_api::channel::types as api;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Deserialize;
use std::str::FromStr;
use std::sync::Arc;

pub fn register(api: &mut ApiDescription<Arc<Sim>>) -> anyhow::Result<()> {
    api.register(payment_page)
        .and_then(|_| api.register(payment_choice))
        .map_err(|e| anyhow!("registering the payment page: {e}"))
}

#[derive(Deserialize, JsonSchema)]
pub struct PagePath {
    channel_order_no: String,
}

/// The page's own few rules, inline: the page loads nothing else.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}\
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{color:#555}\
label{display:block;margin:1rem 0 .25rem}input{font-size:1.1rem;padding:.4rem;width:100%;box-sizing:border-box}\
button{font-size:1.1rem;padding:.5rem 1rem;margin:1rem .5rem 0 0}";

fn html(
    status: http::StatusCode,
    title: &str,
    body: Markup,
) -> Result<http::Response<Body>, HttpError> {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Simulated wallet" }
                style { (PreEscaped(STYLE)) }
            }
            body { main { h1 { (title) } (body) } }
        }
    };
    http::Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(page.into_string().into())
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

fn order_details(request: &api::PaymentRequest, payment: &api::Payment) -> Markup {
    html! {
        dl {
            dt { "Order" } dd #order-no { (request.order_no.as_str()) }
            dt { "Amount" } dd #amount { (request.amount.0) " " (request.currency_code.as_str()) }
            dt { "Status" } dd #status { (payment.status) }
        }
    }
}

/// What a payment page shows: the order, and the form while it is unpaid.
fn show(sim: &Sim, channel_order_no: &str, message: Option<&str>) -> Result<Markup, HttpError> {
    let records = sim.records();
    let record = records
        .by_channel_no
        .get(channel_order_no)
        .and_then(|no| records.payments.get(no))
        .ok_or_else(|| not_found(channel_order_no))?;
    let request = &record.request;
    Ok(html! {
        @if let Some(message) = message {
            p role="status" #message { (message) }
        }
        (order_details(request, &record.payment))
        @if record.payment.status == api::PaymentStatus::Pending {
            form method="post" {
                label for="paid" { "Amount to pay (" (request.currency_code.as_str()) ")" }
                input #paid name="amount" inputmode="decimal" autocomplete="off" value=(request.amount.0.normalize());
                button type="submit" name="action" value="pay" { "Pay" }
                button type="submit" name="action" value="decline" { "Decline" }
            }
        } @else if let Some(back) = &request.return_url {
            // The service checked it is an absolute http(s) URL.
            p { a #return href=(back) { "Back to the merchant" } }
        }
    })
}

fn not_found(channel_order_no: &str) -> HttpError {
    HttpError::for_client_error(
        Some("PAYMENT_NOT_FOUND".into()),
        dropshot::ClientErrorStatusCode::NOT_FOUND,
        format!("no payment {channel_order_no} at this channel"),
    )
}

fn error_page(e: HttpError) -> Result<http::Response<Body>, HttpError> {
    let status = e.status_code.as_status();
    html(
        status,
        "Cannot do that",
        html! { p role="alert" { (e.external_message) } },
    )
}

#[endpoint { method = GET, path = "/pay/{channel_order_no}", unpublished = true }]
async fn payment_page(
    rqctx: RequestContext<Arc<Sim>>,
    path: Path<PagePath>,
) -> Result<http::Response<Body>, HttpError> {
    let channel_order_no = path.into_inner().channel_order_no;
    match show(rqctx.context(), &channel_order_no, None) {
        Ok(body) => html(http::StatusCode::OK, "Pay with the simulated wallet", body),
        Err(e) => error_page(e),
    }
}

enum Choice {
    Pay(Option<Decimal>),
    Decline,
}

fn invalid(message: &str) -> HttpError {
    HttpError::for_bad_request(Some("INVALID_FIELD".into()), message.into())
}

/// The form: `action` (`pay` or `decline`) and, to pay, `amount` as plain
/// decimal text, read exactly (never through a float).
fn choice(body: &[u8]) -> Result<Choice, HttpError> {
    let mut action = None;
    let mut amount = None;
    for (key, value) in url::form_urlencoded::parse(body) {
        match key.as_ref() {
            "action" => action = Some(value.into_owned()),
            "amount" if !value.trim().is_empty() => {
                let text = value.trim();
                let bad = || invalid("amount must be a positive decimal number, like 100 or 99.50");
                if !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                    return Err(bad());
                }
                let paid = Decimal::from_str(text).map_err(|_| bad())?;
                if paid <= Decimal::ZERO || paid.scale() > 4 {
                    return Err(bad());
                }
                amount = Some(paid);
            }
            _ => {}
        }
    }
    match action.as_deref() {
        Some("pay") => Ok(Choice::Pay(amount)),
        Some("decline") => Ok(Choice::Decline),
        _ => Err(invalid("action must be `pay` or `decline`")),
    }
}

/// Moves the payment as the payer chose; what to tell them.
fn pay(sim: &Arc<Sim>, channel_order_no: &str, body: &[u8]) -> Result<String, HttpError> {
    let choice = choice(body)?;
    let partial = sim.dice.partial();
    let mut records = sim.records();
    let order_no = records
        .by_channel_no
        .get(channel_order_no)
        .cloned()
        .ok_or_else(|| not_found(channel_order_no))?;
    let record = records
        .payments
        .get(&order_no)
        .ok_or_else(|| not_found(channel_order_no))?;
    if record.payment.status != api::PaymentStatus::Pending {
        return Err(HttpError::for_client_error(
            Some("ALREADY_SETTLED".into()),
            dropshot::ClientErrorStatusCode::CONFLICT,
            format!("this payment is already {}", record.payment.status),
        ));
    }
    let mut payment = record.payment.clone();
    payment.updated_at = chrono::Utc::now();
    let message = match choice {
        Choice::Pay(amount) => {
            let mut paid = amount.unwrap_or(record.request.amount.0);
            if partial {
                paid = (paid / Decimal::TWO).round_dp(2);
            }
            payment.status = api::PaymentStatus::Completed;
            payment.paid_amount = Some(payments_wire::DecimalString(paid.round_dp(4)));
            format!(
                "Paid {} {}.",
                paid.round_dp(4),
                record.request.currency_code.as_str()
            )
        }
        Choice::Decline => {
            payment.status = api::PaymentStatus::Failed;
            "You declined the payment. Nothing was paid.".to_string()
        }
    };
    records
        .record(Entry::PaymentChanged { payment })
        .map_err(|e| {
            HttpError::for_unavail(None, format!("the payment could not be recorded: {e}"))
        })?;
    drop(records);
    notify::send_owed(sim, order_no);
    Ok(message)
}

#[endpoint { method = POST, path = "/pay/{channel_order_no}", unpublished = true }]
async fn payment_choice(
    rqctx: RequestContext<Arc<Sim>>,
    path: Path<PagePath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let sim = rqctx.context();
    let channel_order_no = path.into_inner().channel_order_no;
    let shown = pay(sim, &channel_order_no, body.as_bytes())
        .and_then(|message| show(sim, &channel_order_no, Some(&message)));
    match shown {
        Ok(page) => html(http::StatusCode::OK, "Simulated wallet", page),
        Err(e) => error_page(e),
    }
}
