//! The hosted cashier page a payer is sent to: server-rendered HTML that
//! works without JavaScript, in the payer's language (English, Thai or
//! Bangla), with the time left to pay; a small script adds copy buttons,
//! counts the time down and follows the order's status live. Nothing
//! secret reaches the browser: the page knows the session only by its URL
//! token, and shows only what the payer needs to pay.

mod instructions;
mod qr_png;

use crate::app::cashier::{self, Choice, Session};
use crate::app::deposits::Deposit;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::DepositStatus;
use crate::domain::status::SessionStatus;
use crate::observe::in_span;
use crate::pages::locale::Language;
use crate::pages::{respond, see_other, serve_localized};
use dropshot::{endpoint, Body, HttpError, Path, RequestContext, RequestInfo, UntypedBody};
use instructions::{card_form, choose_form, instructions};
use maud::{html, Markup, DOCTYPE};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Deserialize;
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

/// The page's language: `?lang=` (the page's own switcher), else
/// `Accept-Language`, else English.
fn language(request: &RequestInfo) -> Language {
    let chosen = request.uri().query().and_then(|query| {
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == "lang")
            .map(|(_, value)| value.into_owned())
    });
    let accept = request
        .headers()
        .get(http::header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    Language::negotiate(chosen.as_deref(), accept)
}

/// The page's own address in `lang`: where its form posts and its
/// switcher links.
fn address(token: &str, lang: Language) -> String {
    format!("/cashier/{token}?lang={}", lang.tag())
}

/// The page of a session.
#[endpoint { method = GET, path = "/cashier/{token}", unpublished = true }]
pub async fn cashier_page(
    rqctx: RequestContext<Arc<App>>,
    path: Path<TokenPath>,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        let app = rqctx.context();
        let lang = language(&rqctx.request);
        match cashier::by_token(app, &path.into_inner().token).await {
            Ok(Some(session)) => match held(app, &session).await {
                Ok(false) => render(app, lang, &session, None).await,
                Ok(true) => suspended(lang),
                Err(e) => failure(lang, e),
            },
            Ok(None) => not_found(lang),
            Err(e) => failure(lang, e),
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
        let lang = language(&rqctx.request);
        let token = path.into_inner().token;
        let session = match cashier::by_token(app, &token).await {
            Ok(Some(session)) => session,
            Ok(None) => return not_found(lang),
            Err(e) => return failure(lang, e),
        };
        let choice = match read_form(body.as_bytes()) {
            Ok(choice) => choice,
            Err(problem) => return render(app, lang, &session, Some(problem)).await,
        };
        match cashier::choose(app, &session, choice).await {
            // Post, redirect, get: a reload never posts twice.
            Ok(_) => see_other(&address(&token, lang)),
            Err(ApiError::InvalidField { .. }) => {
                render(app, lang, &session, Some("problem-amount")).await
            }
            Err(ApiError::InvalidStateTransition { .. }) => render(app, lang, &session, None).await,
            Err(ApiError::MerchantDisabled) => suspended(lang),
            Err(e) => failure(lang, e),
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
            Err(e) => return Err(crate::error::http_error(e)),
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
        _ => not_found(Language::En),
    }
}

/// Reads `amount` (a decimal, never through a float) and `card` (an index,
/// or empty for another account). A refusal is the catalogue's message id.
pub fn read_form(body: &[u8]) -> Result<Choice, &'static str> {
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
                        .ok_or("problem-amount")?,
                );
            }
            "card" if !value.is_empty() => {
                choice.card = Some(value.parse().map_err(|_| "problem-card")?);
            }
            _ => {}
        }
    }
    Ok(choice)
}

/// The session's state as the page shows it. An order still awaiting
/// payment past its deadline is shown expired at once, before the expiry
/// job gets to it: a payer must not be told to transfer for it any more.
fn shown_status(session: &Session, now: i64) -> SessionStatus {
    match (session.status(now), &session.order) {
        (SessionStatus::OrderCreated, Some(order))
            if order.status == DepositStatus::Pending && now >= order.expire_at.timestamp() =>
        {
            SessionStatus::Expired
        }
        (status, _) => status,
    }
}

/// Changes whenever what the page shows would: the session's state and
/// its order's.
fn page_state(app: &App, session: &Session) -> String {
    let order = session
        .order
        .as_ref()
        .map(|o| o.status.as_str())
        .unwrap_or("none");
    format!("{}:{order}", shown_status(session, app.now_unix()).as_str())
}

async fn render(
    app: &App,
    lang: Language,
    session: &Session,
    problem: Option<&str>,
) -> Result<http::Response<Body>, HttpError> {
    let merchant = match crate::app::merchants::find(app, &session.merchant_id).await {
        Ok(m) => m,
        Err(e) => return failure(lang, e),
    };
    let now = app.now_unix();
    let status = shown_status(session, now);
    let digits = match app.config.currency(&session.currency) {
        Ok(c) => c.fraction_digits,
        Err(e) => return failure(lang, e),
    };
    let shown_amount = session.order.as_ref().map(|o| o.amount).or(session.amount);
    let (code, main) = section(app, lang, session, status, &merchant, digits);
    let code = if problem.is_some() && code == http::StatusCode::OK {
        http::StatusCode::BAD_REQUEST
    } else {
        code
    };
    let footer = match footer(lang, session, status) {
        Ok(footer) => footer,
        Err(e) => return failure(lang, e.into()),
    };
    let sheet = html! {
        main.sheet data-status-url={ "/cashier/" (session.token) "/status" } data-page=(page_state(app, session)) {
            header {
                p.merchant #merchant { (merchant.name) }
                h1 { (lang.text("heading")) }
            }
            @if let Some(amount) = shown_amount {
                p.amount #amount { (lang.amount(amount, digits)) " " span.currency { (session.currency) } }
            }
            p class={ "status status-" (status.as_str()) } #status role="status" aria-live="polite" {
                (lang.text(status_text(status, session.order.as_ref())))
            }
            (time_left(lang, session, status, now))
            @if let Some(problem) = problem {
                p.problem #problem role="alert" { (lang.text(problem)) }
            }
            (main)
            footer {
                p #expires { (footer) }
                noscript { p { a href=(address(&session.token, lang)) { (lang.text("check-again")) } } }
            }
        }
    };
    let document = layout(
        lang,
        Some(&session.token),
        &lang.format("page-title", &[("merchant", &merchant.name)]),
        sheet,
    );
    serve_localized(code, lang.tag(), document)
}

/// The time left to choose or to pay, while there is any: rendered here
/// so it is right without JavaScript, counted down by the script (which
/// reloads the page at zero, when the server shows what happened).
fn time_left(lang: Language, session: &Session, status: SessionStatus, now: i64) -> Markup {
    let (deadline, label) = match (status, &session.order) {
        (SessionStatus::Open, _) => (session.expire_at, "time-left-choose"),
        (SessionStatus::OrderCreated, Some(order)) => (order.expire_at.timestamp(), "time-left"),
        _ => return html! {},
    };
    let left = (deadline - now).max(0);
    html! {
        p.time-left #time-left-line {
            (lang.text(label)) ": "
            time #time-left datetime={ "PT" (left) "S" } data-seconds=(left)
                data-digits=(lang.digit_set().iter().collect::<String>()) { (lang.time_left(left)) }
        }
    }
}

/// What a final page says happened. Every final page leads back to the
/// merchant where it said where to (`return_url`, validated as an
/// absolute http(s) URL at creation).
fn final_page(
    lang: Language,
    session: &Session,
    merchant: &crate::app::merchants::Merchant,
    kind: &str,
    heading: String,
    text: String,
) -> Markup {
    html! {
        section class={ "outcome " (kind) } #outcome {
            h2 { (heading) }
            p { (text) }
            @if let Some(url) = &session.return_url {
                p.back {
                    a.button.primary #return href=(url) {
                        (lang.format("back-to-merchant", &[("merchant", &merchant.name)]))
                    }
                }
            }
        }
    }
}

/// The page's main section for the session's state, and the status code
/// it is answered with.
fn section(
    app: &App,
    lang: Language,
    session: &Session,
    status: SessionStatus,
    merchant: &crate::app::merchants::Merchant,
    digits: u32,
) -> (http::StatusCode, Markup) {
    let action = address(&session.token, lang);
    let outcome = |kind: &str, heading: String, text: String| {
        final_page(lang, session, merchant, kind, heading, text)
    };
    match (status, &session.order) {
        (SessionStatus::Open, _) => {
            let amounts = app
                .config
                .denominations_for(&merchant.code, &session.currency);
            (
                http::StatusCode::OK,
                choose_form(lang, &action, session, &amounts, digits),
            )
        }
        (SessionStatus::OrderCreated, Some(order)) => {
            let cards = order.status == DepositStatus::Pending
                && order.payer_bank_code.is_none()
                && !session.cards.is_empty();
            (
                http::StatusCode::OK,
                html! {
                    @if cards { (card_form(lang, &action, session)) }
                    (instructions(app, lang, order, digits))
                },
            )
        }
        (SessionStatus::Completed, Some(order)) => (
            http::StatusCode::OK,
            outcome(
                "done",
                lang.text("paid-heading"),
                lang.format(
                    "paid-body",
                    &[
                        ("amount", &lang.amount(order.actual_amount, digits)),
                        ("currency", &order.currency),
                        ("merchant", &merchant.name),
                    ],
                ),
            ),
        ),
        (SessionStatus::Cancelled, _) => (
            http::StatusCode::GONE,
            outcome(
                "over",
                lang.text("cancelled-heading"),
                lang.text("cancelled-body"),
            ),
        ),
        _ => (
            http::StatusCode::GONE,
            outcome(
                "over",
                lang.text("expired-heading"),
                lang.text("expired-body"),
            ),
        ),
    }
}

/// What the page's footer says of the order and its deadline.
fn footer(
    lang: Language,
    session: &Session,
    status: SessionStatus,
) -> Result<String, crate::clock::OutOfRange> {
    let deadline = crate::clock::from_unix(session.expire_at)?;
    let zone = crate::pages::locale::PayerZone::of_currency(&session.currency);
    let text = match (&session.order, status) {
        (Some(order), SessionStatus::OrderCreated) => lang.format(
            "order-pay-before",
            &[
                ("order", &order.order_no),
                ("deadline", &lang.date_time(order.expire_at, zone)),
            ],
        ),
        (Some(order), SessionStatus::Expired) => lang.format(
            "order-expired-at",
            &[
                ("order", &order.order_no),
                ("deadline", &lang.date_time(order.expire_at, zone)),
            ],
        ),
        (Some(order), _) => lang.format("order", &[("order", &order.order_no)]),
        (None, SessionStatus::Open) => lang.format(
            "choose-before",
            &[("deadline", &lang.date_time(deadline, zone))],
        ),
        (None, _) => lang.format(
            "expired-at",
            &[("deadline", &lang.date_time(deadline, zone))],
        ),
    };
    Ok(text)
}

/// The catalogue's message id for the status line.
fn status_text(status: SessionStatus, order: Option<&Deposit>) -> &'static str {
    match (status, order.map(|o| o.status)) {
        (SessionStatus::Open, _) => "status-open",
        (SessionStatus::OrderCreated, Some(DepositStatus::Matched)) => "status-matched",
        (SessionStatus::OrderCreated, _) => "status-waiting",
        (SessionStatus::Completed, _) => "status-paid",
        (SessionStatus::Expired, _) => "status-expired",
        (SessionStatus::Cancelled, _) => "status-cancelled",
    }
}

/// The document around a page's `main`; with the session's token, the
/// language switcher too.
fn layout(lang: Language, token: Option<&str>, title: &str, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(lang.tag()) {
            head {
                (crate::pages::head(title))
                meta name="referrer" content="no-referrer";
                link rel="stylesheet" href="/cashier-assets/cashier.css";
                script src="/cashier-assets/cashier.js" defer {}
            }
            body {
                @if let Some(token) = token {
                    nav.languages aria-label=(lang.text("languages-label")) {
                        @for (i, other) in Language::ALL.iter().enumerate() {
                            @if i > 0 { " " }
                            a href=(address(token, *other)) hreflang=(other.tag()) lang=(other.tag())
                                id={ "lang-" (other.tag()) } aria-current=[(*other == lang).then_some("true")] {
                                (other.text("language-name"))
                            }
                        }
                    }
                }
                (main)
            }
        }
    }
}

/// A page with only a heading and a paragraph.
fn notice(
    lang: Language,
    code: http::StatusCode,
    title: &str,
    heading: &str,
    text: &str,
) -> Result<http::Response<Body>, HttpError> {
    let main = html! {
        main.sheet {
            header { h1 { (lang.text(heading)) } }
            section.outcome.over #outcome { p { (lang.text(text)) } }
        }
    };
    serve_localized(
        code,
        lang.tag(),
        layout(lang, None, &lang.text(title), main),
    )
}

fn not_found(lang: Language) -> Result<http::Response<Body>, HttpError> {
    notice(
        lang,
        http::StatusCode::NOT_FOUND,
        "not-found-title",
        "not-found-title",
        "not-found-body",
    )
}

/// Whether the page must not offer the payment: its merchant is suspended
/// and the order is not paid already (a paid one still says so).
async fn held(app: &App, session: &Session) -> Result<bool, ApiError> {
    let paid = session
        .order
        .as_ref()
        .is_some_and(|o| o.status == DepositStatus::Completed);
    match crate::app::suspension::refuse_if_suspended(app, &session.merchant_id).await {
        Ok(()) => Ok(false),
        Err(ApiError::MerchantDisabled) => Ok(!paid),
        Err(e) => Err(e),
    }
}

/// The merchant is suspended: the payer is told not to pay.
fn suspended(lang: Language) -> Result<http::Response<Body>, HttpError> {
    notice(
        lang,
        http::StatusCode::FORBIDDEN,
        "suspended-title",
        "suspended-heading",
        "suspended-body",
    )
}

/// Never a trace: a page that says to try again, with the details logged.
fn failure(lang: Language, e: ApiError) -> Result<http::Response<Body>, HttpError> {
    tracing::error!(error = ?e, "the cashier page failed");
    notice(
        lang,
        http::StatusCode::SERVICE_UNAVAILABLE,
        "unavailable-title",
        "unavailable-heading",
        "unavailable-body",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(read_form(b"amount=5e2"), Err("problem-amount"));
        assert_eq!(read_form(b"amount=-5"), Err("problem-amount"));
        assert_eq!(read_form(b"card=x"), Err("problem-card"));
    }

    #[test]
    fn every_status_line_and_form_refusal_is_in_the_catalogues() {
        for language in Language::ALL {
            for id in [
                "status-open",
                "status-matched",
                "status-waiting",
                "status-paid",
                "status-expired",
                "status-cancelled",
                "problem-amount",
                "problem-card",
                "suspended-title",
                "suspended-heading",
                "suspended-body",
                "back-to-merchant",
            ] {
                assert_ne!(language.text(id), id, "{} {id}", language.tag());
            }
        }
    }
}
