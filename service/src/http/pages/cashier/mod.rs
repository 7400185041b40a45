//! The hosted cashier page a payer is sent to: server-rendered HTML that
//! works without JavaScript; a small script adds copy buttons and follows
//! the order's status live. Nothing secret reaches the browser: the page
//! knows the session only by its URL token, and shows only what the payer
//! needs to pay.

use crate::app::cashier::{self, Choice, Session};
use crate::app::deposits::Deposit;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::routing::Route;
use crate::domain::status::DepositStatus;
use crate::domain::status::SessionStatus;
use crate::http::observe::in_span;
use crate::http::pages::{escape, html, respond, see_other};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, UntypedBody};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::Arc;

const STYLE: &str = include_str!("../../../assets/cashier.css");
const SCRIPT: &str = include_str!("../../../assets/cashier.js");

#[derive(Deserialize, JsonSchema)]
pub struct TokenPath {
    token: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct AssetPath {
    name: String,
}

/// The page of a session.
#[endpoint { method = GET, path = "/cashier/{token}", unpublished = true }]
pub async fn cashier_page(
    rqctx: RequestContext<Arc<App>>,
    path: Path<TokenPath>,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        let app = rqctx.context();
        match cashier::by_token(app, &path.into_inner().token).await {
            Ok(Some(session)) => render(app, &session, None).await,
            Ok(None) => not_found(),
            Err(e) => failure(e),
        }
    })
    .await
}

/// The page's form: a denomination and maybe a saved card.
#[endpoint { method = POST, path = "/cashier/{token}", unpublished = true }]
pub async fn cashier_choice(
    rqctx: RequestContext<Arc<App>>,
    path: Path<TokenPath>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        let app = rqctx.context();
        let token = path.into_inner().token;
        let session = match cashier::by_token(app, &token).await {
            Ok(Some(session)) => session,
            Ok(None) => return not_found(),
            Err(e) => return failure(e),
        };
        let choice = match read_form(body.as_bytes()) {
            Ok(choice) => choice,
            Err(message) => return render(app, &session, Some(message)).await,
        };
        match cashier::choose(app, &session, choice).await {
            // Post, redirect, get: a reload never posts twice.
            Ok(_) => see_other(&format!("/cashier/{token}")),
            Err(ApiError::InvalidField { message, .. }) => {
                render(
                    app,
                    &session,
                    Some(format!("Please choose again: the amount {message}.")),
                )
                .await
            }
            Err(ApiError::InvalidStateTransition { .. }) => render(app, &session, None).await,
            Err(e) => failure(e),
        }
    })
    .await
}

/// What the page's script polls: the page's state, nothing more.
#[endpoint { method = GET, path = "/cashier/{token}/status", unpublished = true }]
pub async fn cashier_status(
    rqctx: RequestContext<Arc<App>>,
    path: Path<TokenPath>,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        let app = rqctx.context();
        let (code, body) = match cashier::by_token(app, &path.into_inner().token).await {
            Ok(Some(session)) => (
                http::StatusCode::OK,
                serde_json::json!({
                    "status": session.status(app.now_unix()).as_str(),
                    "page": page_state(app, &session),
                }),
            ),
            Ok(None) => (
                http::StatusCode::NOT_FOUND,
                serde_json::json!({ "status": "unknown", "page": "unknown" }),
            ),
            Err(e) => return Err(e.into()),
        };
        respond(code, "application/json", body.to_string())
    })
    .await
}

/// The page's stylesheet and script, served from here so that the page's
/// content security policy can forbid everything else.
#[endpoint { method = GET, path = "/cashier-assets/{name}", unpublished = true }]
pub async fn cashier_asset(
    _rqctx: RequestContext<Arc<App>>,
    path: Path<AssetPath>,
) -> Result<http::Response<Body>, HttpError> {
    match path.into_inner().name.as_str() {
        "cashier.css" => respond(
            http::StatusCode::OK,
            "text/css; charset=utf-8",
            STYLE.into(),
        ),
        "cashier.js" => respond(
            http::StatusCode::OK,
            "text/javascript; charset=utf-8",
            SCRIPT.into(),
        ),
        _ => not_found(),
    }
}

/// Reads `amount` (a decimal, never through a float) and `card` (an index,
/// or empty for another account).
pub fn read_form(body: &[u8]) -> Result<Choice, String> {
    let mut choice = Choice::default();
    for (key, value) in url::form_urlencoded::parse(body) {
        let value = value.trim();
        match key.as_ref() {
            "amount" if !value.is_empty() => {
                let plain = value.bytes().all(|b| b.is_ascii_digit() || b == b'.');
                choice.amount = Some(
                    Decimal::from_str(value)
                        .ok()
                        .filter(|_| plain)
                        .ok_or("Please choose one of the amounts shown.")?,
                );
            }
            "card" if !value.is_empty() => {
                choice.card = Some(
                    value
                        .parse()
                        .map_err(|_| "Please choose a saved account again.")?,
                );
            }
            _ => {}
        }
    }
    Ok(choice)
}

/// Changes whenever what the page shows would: the session's state and
/// its order's.
fn page_state(app: &App, session: &Session) -> String {
    let order = session
        .order
        .as_ref()
        .map(|o| o.status.as_str())
        .unwrap_or("none");
    format!("{}:{order}", session.status(app.now_unix()).as_str())
}

async fn render(
    app: &App,
    session: &Session,
    problem: Option<String>,
) -> Result<http::Response<Body>, HttpError> {
    let merchant = match crate::app::merchants::find(app, &session.merchant_id).await {
        Ok(m) => m,
        Err(e) => return failure(e),
    };
    let status = session.status(app.now_unix());
    let digits = match app.config.currency(&session.currency) {
        Ok(c) => c.fraction_digits,
        Err(e) => return failure(e),
    };
    let money = |a: Decimal| money(a, digits);
    let mut body = String::new();
    let shown_amount = session.order.as_ref().map(|o| o.amount).or(session.amount);
    if let Some(amount) = shown_amount {
        let _ = writeln!(
            body,
            "<p class=\"amount\" id=\"amount\">{} <span class=\"currency\">{}</span></p>",
            money(amount),
            escape(&session.currency)
        );
    }
    let _ = writeln!(
        body,
        "<p class=\"status status-{}\" id=\"status\" role=\"status\" aria-live=\"polite\">{}</p>",
        status.as_str(),
        escape(&status_text(status, session.order.as_ref()))
    );
    if let Some(problem) = &problem {
        let _ = writeln!(
            body,
            "<p class=\"problem\" id=\"problem\" role=\"alert\">{}</p>",
            escape(problem)
        );
    }
    let code = section(app, session, status, &merchant, digits, &mut body);
    let code = if problem.is_some() && code == http::StatusCode::OK {
        http::StatusCode::BAD_REQUEST
    } else {
        code
    };
    let footer = match footer(session, status) {
        Ok(footer) => footer,
        Err(e) => return failure(e.into()),
    };
    let document = layout(
        &format!("Pay {}", merchant.name),
        &format!(
            "<main class=\"sheet\" data-status-url=\"/cashier/{token}/status\" data-page=\"{state}\">\n\
             <header>\n<p class=\"merchant\" id=\"merchant\">{merchant}</p>\n<h1>Payment</h1>\n</header>\n\
             {body}<footer><p id=\"expires\">{footer}</p>\n\
             <noscript><p><a href=\"/cashier/{token}\">Check the status again</a></p></noscript></footer>\n</main>\n",
            token = escape(&session.token),
            state = escape(&page_state(app, session)),
            merchant = escape(&merchant.name),
        ),
    );
    html(code, &document)
}

/// The page's main section for the session's state, and the status code
/// it is answered with.
fn section(
    app: &App,
    session: &Session,
    status: SessionStatus,
    merchant: &crate::app::merchants::Merchant,
    digits: u32,
    body: &mut String,
) -> http::StatusCode {
    match (status, &session.order) {
        (SessionStatus::Open, _) => {
            let amounts = app
                .config
                .denominations_for(&merchant.code, &session.currency);
            body.push_str(&choose_form(session, &amounts, digits));
            http::StatusCode::OK
        }
        (SessionStatus::OrderCreated, Some(order)) => {
            if order.status == DepositStatus::Pending
                && order.payer_bank_code.is_none()
                && !session.cards.is_empty()
            {
                body.push_str(&card_form(session));
            }
            body.push_str(&instructions(order, digits));
            http::StatusCode::OK
        }
        (SessionStatus::Completed, Some(order)) => {
            let _ = write!(
                body,
                "<section class=\"outcome done\" id=\"outcome\">\n<h2>Payment received</h2>\n\
                 <p>{} {} reached {}. You can close this page or return to the merchant.</p>\n</section>\n",
                money(order.actual_amount, digits),
                escape(&order.currency),
                escape(&merchant.name)
            );
            http::StatusCode::OK
        }
        (SessionStatus::Cancelled, _) => {
            body.push_str(
                "<section class=\"outcome over\" id=\"outcome\">\n<h2>This payment was cancelled</h2>\n\
                 <p>The payment did not go through and nothing more is expected from you here. \
                 To try again, return to the merchant and start a new payment.</p>\n</section>\n",
            );
            http::StatusCode::GONE
        }
        _ => {
            body.push_str(
                "<section class=\"outcome over\" id=\"outcome\">\n<h2>This payment page has expired</h2>\n\
                 <p>The time to pay has run out. Do not transfer money for it any more. \
                 To pay, return to the merchant and start a new payment.</p>\n</section>\n",
            );
            http::StatusCode::GONE
        }
    }
}

/// What the page's footer says of the order and its deadline.
fn footer(session: &Session, status: SessionStatus) -> Result<String, crate::clock::OutOfRange> {
    let when = |t: chrono::DateTime<chrono::Utc>| t.format("%H:%M UTC, %d %b %Y").to_string();
    let deadline = crate::clock::from_unix(session.expire_at)?;
    Ok(match (&session.order, status) {
        (Some(order), SessionStatus::OrderCreated) => format!(
            "Order {} · pay before {}",
            escape(&order.order_no),
            when(order.expire_at)
        ),
        (Some(order), SessionStatus::Expired) => format!(
            "Order {} · expired at {}",
            escape(&order.order_no),
            when(order.expire_at)
        ),
        (Some(order), _) => format!("Order {}", escape(&order.order_no)),
        (None, SessionStatus::Open) => format!("Choose before {}", when(deadline)),
        (None, _) => format!("Expired at {}", when(deadline)),
    })
}

fn choose_form(session: &Session, amounts: &[Decimal], digits: u32) -> String {
    let mut form = String::from("<form method=\"post\" class=\"choose\" id=\"choose\">\n");
    if session.amount.is_none() {
        form.push_str(
            "<fieldset>\n<legend>Choose an amount</legend>\n<div class=\"options amounts\">\n",
        );
        for (i, amount) in amounts.iter().enumerate() {
            let _ = writeln!(
                form,
                "<label class=\"option\" for=\"amount-{i}\"><input type=\"radio\" name=\"amount\" \
                 id=\"amount-{i}\" value=\"{}\" required><span>{} {}</span></label>",
                amount.normalize(),
                money(*amount, digits),
                escape(&session.currency)
            );
        }
        form.push_str("</div>\n</fieldset>\n");
    }
    form.push_str(&card_choices(session));
    form.push_str(
        "<button type=\"submit\" class=\"primary\" id=\"continue\">Continue</button>\n</form>\n",
    );
    form
}

/// Offered once the order exists (the merchant fixed the amount): which
/// saved account the payer will pay from.
fn card_form(session: &Session) -> String {
    format!(
        "<form method=\"post\" class=\"choose\" id=\"card-form\">\n{}\
         <button type=\"submit\" class=\"secondary\" id=\"use-card\">Use this account</button>\n</form>\n",
        card_choices(session)
    )
}

fn card_choices(session: &Session) -> String {
    if session.cards.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("<fieldset>\n<legend>Pay from</legend>\n<div class=\"options cards\">\n");
    for (i, card) in session.cards.iter().enumerate() {
        let _ = writeln!(
            out,
            "<label class=\"option\" for=\"card-{i}\"><input type=\"radio\" name=\"card\" id=\"card-{i}\" \
             value=\"{i}\"{}><span>{} <span aria-label=\"account ending in\">•••• </span>{}</span></label>",
            if i == 0 { " checked" } else { "" },
            escape(&card.bank_code),
            escape(&card.account_last4)
        );
    }
    out.push_str(
        "<label class=\"option\" for=\"card-other\"><input type=\"radio\" name=\"card\" id=\"card-other\" \
         value=\"\"><span>Another account</span></label>\n</div>\n</fieldset>\n",
    );
    out
}

fn instructions(order: &Deposit, digits: u32) -> String {
    let amount = money(order.amount, digits);
    match (order.route, order.payment_url.as_deref()) {
        (Route::Channel, None) => {
            "<p class=\"problem\" role=\"alert\">The payment page is not available. Please contact the merchant.</p>\n".into()
        }
        (Route::Channel, Some(url)) => format!(
            "<section class=\"instructions\" aria-labelledby=\"how\">\n<h2 id=\"how\">Pay with your provider</h2>\n\
             <a class=\"primary button\" id=\"pay\" href=\"{}\" rel=\"noopener noreferrer\">Pay {amount} {}</a>\n\
             <p class=\"note\">You continue on the payment provider's page. Come back to this page afterwards: \
             it shows when the payment has arrived.</p>\n</section>\n",
            escape(url),
            escape(&order.currency)
        ),
        (Route::Account, _) => {
            // Every account order is created with both; one without is
            // not shown half-made.
            let (Some(account), Some(remark)) = (&order.account, order.expected_remark.as_deref()) else {
                return "<p class=\"problem\" role=\"alert\">The bank details are not available. Please contact the merchant.</p>\n".into();
            };
            let copy = |target: &str, what: &str| {
                format!(
                    "<button type=\"button\" class=\"copy\" data-copy=\"{target}\" aria-label=\"Copy the {what}\" hidden>Copy</button>"
                )
            };
            let mut out = String::from(
                "<section class=\"instructions\" aria-labelledby=\"how\">\n<h2 id=\"how\">Transfer exactly this amount</h2>\n<dl class=\"details\">\n",
            );
            let _ = write!(
                out,
                "<div><dt>Bank</dt><dd id=\"bank-name\">{} ({})</dd></div>\n\
                 <div><dt>Account number</dt><dd><span class=\"value\" id=\"account-no\">{}</span>{}</dd></div>\n\
                 <div><dt>Account holder</dt><dd id=\"account-holder\">{}</dd></div>\n\
                 <div><dt>Amount ({})</dt><dd><span class=\"value\" id=\"pay-amount\">{}</span>{}</dd></div>\n\
                 <div class=\"remark\"><dt>Remark</dt><dd><span class=\"value\" id=\"remark\">{}</span>{}</dd></div>\n</dl>\n",
                escape(&account.bank_name),
                escape(&account.bank_code),
                escape(&account.account_no),
                copy("account-no", "account number"),
                escape(&account.account_holder),
                escape(&order.currency),
                amount.replace(',', ""),
                copy("pay-amount", "amount"),
                escape(remark),
                copy("remark", "remark"),
            );
            let exact = if order.amount != order.requested_amount {
                " The amount includes a few extra cents that identify your payment: send it to the cent."
            } else {
                ""
            };
            let _ = write!(
                out,
                "<p class=\"note\">Write the remark in your transfer's note exactly as shown: it is how your payment is recognised.{exact}</p>\n</section>\n"
            );
            out
        }
    }
}

fn status_text(status: SessionStatus, order: Option<&Deposit>) -> String {
    match (status, order.map(|o| o.status)) {
        (SessionStatus::Open, _) => "Waiting for you to choose".into(),
        (SessionStatus::OrderCreated, Some(DepositStatus::Matched)) => {
            "Payment found, being confirmed".into()
        }
        (SessionStatus::OrderCreated, _) => "Waiting for your payment".into(),
        (SessionStatus::Completed, _) => "Paid".into(),
        (SessionStatus::Expired, _) => "Expired".into(),
        (SessionStatus::Cancelled, _) => "Cancelled".into(),
    }
}

/// `1234.5` in a two-digit currency → `1,234.50`.
pub fn money(amount: Decimal, digits: u32) -> String {
    let fixed = format!("{:.*}", digits as usize, amount.round_dp(digits));
    let (whole, fraction) = match fixed.split_once('.') {
        Some((w, f)) => (w.to_string(), Some(f.to_string())),
        None => (fixed.clone(), None),
    };
    let (sign, digits_only) = match whole.strip_prefix('-') {
        Some(rest) => ("-", rest.to_string()),
        None => ("", whole),
    };
    let mut grouped = String::new();
    for (i, c) in digits_only.chars().enumerate() {
        if i > 0 && (digits_only.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match fraction {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

fn layout(title: &str, main: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n<title>{}</title>\n\
         <link rel=\"stylesheet\" href=\"/cashier-assets/cashier.css\">\n\
         <script src=\"/cashier-assets/cashier.js\" defer></script>\n</head>\n<body>\n{main}</body>\n</html>\n",
        escape(title)
    )
}

fn not_found() -> Result<http::Response<Body>, HttpError> {
    html(
        http::StatusCode::NOT_FOUND,
        &layout(
            "Payment page not found",
            "<main class=\"sheet\">\n<header>\n<h1>Payment page not found</h1>\n</header>\n\
             <section class=\"outcome over\" id=\"outcome\">\n<p>This link does not lead to a payment. \
             Check that it was copied whole, or return to the merchant and start the payment again.</p>\n\
             </section>\n</main>\n",
        ),
    )
}

/// Never a trace: a page that says to try again, with the details logged.
fn failure(e: ApiError) -> Result<http::Response<Body>, HttpError> {
    tracing::error!(error = ?e, "the cashier page failed");
    html(
        http::StatusCode::SERVICE_UNAVAILABLE,
        &layout(
            "Payment page unavailable",
            "<main class=\"sheet\">\n<header>\n<h1>Please try again in a moment</h1>\n</header>\n\
             <section class=\"outcome over\" id=\"outcome\">\n<p>The payment page could not be shown just now. \
             Nothing was charged by this page. Reload it in a minute.</p>\n</section>\n</main>\n",
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_grouped_with_the_currency_digits() {
        let d = |s: &str| Decimal::from_str(s).unwrap();
        assert_eq!(money(d("1234.5"), 2), "1,234.50");
        assert_eq!(money(d("100"), 2), "100.00");
        assert_eq!(money(d("1000000"), 0), "1,000,000");
        assert_eq!(money(d("999.999"), 2), "1,000.00");
    }

    #[test]
    fn the_form_reads_amount_and_card_exactly() {
        assert_eq!(
            read_form(b"amount=500&card=1").unwrap(),
            Choice {
                amount: Some(Decimal::from(500)),
                card: Some(1)
            }
        );
        assert_eq!(read_form(b"card=").unwrap(), Choice::default());
        assert!(read_form(b"amount=5e2").is_err());
        assert!(read_form(b"amount=-5").is_err());
        assert!(read_form(b"card=x").is_err());
    }
}
