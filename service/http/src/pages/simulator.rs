//! The simulator channel's payment page, where a person plays the payer of
//! a channel deposit: pay (in full or another amount), fail, or abandon.
//! Sandbox only. The page is HTML for people, so it sits outside the JSON
//! contract; the sandbox spec describes it, and paying here moves the order
//! exactly as the documented `pay_deposit` does.

use crate::app::actor::Actor;
use crate::app::deposits::{self, Deposit};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::DepositStatus;
use crate::observe::in_span;
use crate::pages::serve;
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
use maud::{html, Markup, DOCTYPE};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Deserialize;

/// The sandbox's channel page acts for the payer, as the channel would.
const SIMULATOR: Actor = Actor::System("sandbox channel page");
use std::str::FromStr;
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
pub struct PagePath {
    order_no: String,
}

/// What the payer chose on the page.
#[derive(Debug, PartialEq)]
pub enum Choice {
    Pay(Option<Decimal>),
    Fail,
    Abandon,
}

impl Choice {
    /// Reads the page's form (`action`, and `amount` when paying).
    pub fn from_form(body: &[u8]) -> Result<Choice, ApiError> {
        let mut action = None;
        let mut amount = None;
        for (key, value) in url::form_urlencoded::parse(body) {
            match key.as_ref() {
                "action" => action = Some(value.into_owned()),
                "amount" if !value.trim().is_empty() => {
                    // Plain decimal text only, read exactly, never through a
                    // float (no exponent, no sign).
                    let text = value.trim();
                    let invalid = || ApiError::invalid_field("amount", "must be a decimal number");
                    if !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                        return Err(invalid());
                    }
                    amount = Some(Decimal::from_str(text).map_err(|_| invalid())?);
                }
                _ => {}
            }
        }
        match action.as_deref() {
            Some("pay") => Ok(Choice::Pay(amount)),
            Some("fail") => Ok(Choice::Fail),
            Some("abandon") => Ok(Choice::Abandon),
            _ => Err(ApiError::invalid_field(
                "action",
                "must be `pay`, `fail` or `abandon`",
            )),
        }
    }
}

/// The payment page of a channel deposit.
#[endpoint { method = GET, path = "/sandbox/simulator/pay/{order_no}", unpublished = true }]
pub async fn payment_page(
    rqctx: RequestContext<Arc<App>>,
    path: Path<PagePath>,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        let app = rqctx.context();
        let order_no = path.into_inner().order_no;
        match simulated_order(app, &order_no).await {
            Ok(order) => serve(http::StatusCode::OK, page(&order, None)),
            Err(e) => error_page(e),
        }
    })
    .await
}

/// The page's form: the payer's choice moves the order.
#[endpoint { method = POST, path = "/sandbox/simulator/pay/{order_no}", unpublished = true }]
pub async fn payment_choice(
    rqctx: RequestContext<Arc<App>>,
    path: Path<PagePath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        let app = rqctx.context();
        let order_no = path.into_inner().order_no;
        let outcome = async {
            simulated_order(app, &order_no).await?;
            let choice = Choice::from_form(body.as_bytes())?;
            let (order, message) = match choice {
                Choice::Pay(amount) => {
                    let order = deposits::complete(app, &SIMULATOR, &order_no, amount, None).await?;
                    let message = format!(
                        "Paid {} {}. The merchant has been credited.",
                        order.actual_amount, order.currency
                    );
                    (order, message)
                }
                Choice::Fail => (
                    deposits::cancel(app, &SIMULATOR, &order_no, None).await?,
                    "The payment failed: the channel declined it and the order is cancelled."
                        .to_string(),
                ),
                Choice::Abandon => {
                    let order = deposits::find_any(app, &order_no).await?;
                    let message = format!(
                        "You left without paying. The order awaits payment until {} and then expires.",
                        order.expire_at.format("%Y-%m-%d %H:%M:%S UTC")
                    );
                    (order, message)
                }
            };
            Ok::<_, ApiError>((order, message))
        }
        .await;
        match outcome {
            Ok((order, message)) => serve(http::StatusCode::OK, page(&order, Some(&message))),
            Err(e) => error_page(e),
        }
    })
    .await
}

/// Only channel deposits of a simulator channel have this page.
async fn simulated_order(app: &App, order_no: &str) -> Result<Deposit, ApiError> {
    let order = deposits::find_any(app, order_no).await?;
    let simulated = order
        .channel_id
        .as_deref()
        .and_then(|id| app.config.channels.iter().find(|c| c.id == id))
        .is_some_and(|c| c.kind == "simulator");
    if !simulated {
        return Err(ApiError::OrderNotFound {
            kind: "simulator deposit",
            reference: order_no.to_string(),
        });
    }
    Ok(order)
}

fn page(order: &Deposit, message: Option<&str>) -> Markup {
    let awaiting = matches!(
        order.status,
        DepositStatus::Pending | DepositStatus::Matched
    );
    document(
        &format!("Sandbox payment {}", order.order_no),
        html! {
            h1 { "Sandbox payment" }
            dl {
                dt { "Order" } dd #order-no { (order.order_no) }
                dt { "Amount" } dd #amount { (order.amount) " " (order.currency) }
                dt { "Status" } dd #status { (order.status.as_str()) }
            }
            @if let Some(message) = message {
                p #message role="status" { (message) }
            }
            @if awaiting {
                form method="post" {
                    label { "Amount to pay " input name="amount" #pay-amount inputmode="decimal" value=(order.amount); }
                    button name="action" value="pay" #pay { "Pay" }
                    button name="action" value="fail" #fail { "Make the payment fail" }
                    button name="action" value="abandon" #abandon { "Abandon" }
                }
            } @else if let Some(back) = &order.return_url {
                // The merchant's `return_url`, validated as an absolute
                // http(s) URL when the order was made.
                p { a #return href=(back) { "Back to the merchant" } }
            }
        },
    )
}

/// The page's document around its body.
fn document(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                (crate::pages::head(title))
            }
            body { (body) }
        }
    }
}

fn error_page(e: ApiError) -> Result<http::Response<Body>, HttpError> {
    let status = match &e {
        ApiError::OrderNotFound { .. } => http::StatusCode::NOT_FOUND,
        ApiError::InvalidStateTransition { .. } => http::StatusCode::CONFLICT,
        ApiError::InvalidField { .. } | ApiError::InvalidBody(_) => http::StatusCode::BAD_REQUEST,
        _ => return Err(crate::error::http_error(e)),
    };
    serve(
        status,
        document(
            "Sandbox payment",
            html! {
                h1 { "Sandbox payment" }
                p #error role="alert" { (e.to_string()) }
            },
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_reads_each_choice() {
        assert_eq!(
            Choice::from_form(b"action=pay&amount=100.50").unwrap(),
            Choice::Pay(Some(Decimal::from_str("100.50").unwrap()))
        );
        assert_eq!(
            Choice::from_form(b"amount=&action=pay").unwrap(),
            Choice::Pay(None)
        );
        assert_eq!(Choice::from_form(b"action=fail").unwrap(), Choice::Fail);
        assert_eq!(
            Choice::from_form(b"action=abandon").unwrap(),
            Choice::Abandon
        );
        assert!(Choice::from_form(b"action=steal").is_err());
        assert!(Choice::from_form(b"action=pay&amount=1e3").is_err());
    }
}
