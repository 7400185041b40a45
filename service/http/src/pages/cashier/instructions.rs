//! The parts of the cashier page that ask the payer for something: the
//! denomination and saved-account forms, and how to pay an order (the
//! channel's page, or a bank transfer with a PromptPay QR code where the
//! account has an ID).

use crate::app::cashier::Session;
use crate::app::deposits::{Deposit, ShownAccount};
use crate::app::App;
use crate::domain::promptpay::{self, PromptPayId};
use crate::domain::routing::Route;
use crate::pages::locale::Language;
use base64::Engine;
use maud::{html, Markup};
use rust_decimal::Decimal;

pub fn choose_form(
    lang: Language,
    action: &str,
    session: &Session,
    amounts: &[Decimal],
    digits: u32,
) -> Markup {
    html! {
        form method="post" action=(action) class="choose" #choose {
            @if session.amount.is_none() {
                fieldset {
                    legend { (lang.text("choose-amount")) }
                    div.options.amounts {
                        @for (i, amount) in amounts.iter().enumerate() {
                            label.option for={ "amount-" (i) } {
                                input type="radio" name="amount" id={ "amount-" (i) } value=(amount.normalize()) required;
                                span { (lang.amount(*amount, digits)) " " (session.currency) }
                            }
                        }
                    }
                }
            }
            (card_choices(lang, session))
            button type="submit" class="primary" #continue { (lang.text("continue")) }
        }
    }
}

/// Offered once the order exists (the merchant fixed the amount): which
/// saved account the payer will pay from.
pub fn card_form(lang: Language, action: &str, session: &Session) -> Markup {
    html! {
        form method="post" action=(action) class="choose" #card-form {
            (card_choices(lang, session))
            button type="submit" class="secondary" #use-card { (lang.text("use-account")) }
        }
    }
}

fn card_choices(lang: Language, session: &Session) -> Markup {
    if session.cards.is_empty() {
        return html! {};
    }
    html! {
        fieldset {
            legend { (lang.text("pay-from")) }
            div.options.cards {
                @for (i, card) in session.cards.iter().enumerate() {
                    label.option for={ "card-" (i) } {
                        input type="radio" name="card" id={ "card-" (i) } value=(i) checked[i == 0];
                        span { (card.bank_code) " " span aria-label=(lang.text("account-ending")) { "•••• " } (card.account_last4) }
                    }
                }
                label.option for="card-other" {
                    input type="radio" name="card" id="card-other" value="";
                    span { (lang.text("another-account")) }
                }
            }
        }
    }
}

/// How to pay the order: on the channel's page, or by bank transfer.
pub fn instructions(app: &App, lang: Language, order: &Deposit, digits: u32) -> Markup {
    match (order.route, order.payment_url.as_deref()) {
        (Route::Channel, None) => problem(lang, "channel-missing"),
        (Route::Channel, Some(url)) => channel(app, lang, order, url, digits),
        (Route::Account, _) => {
            // Every account order is created with both; one without is
            // not shown half-made.
            match (&order.account, order.expected_remark.as_deref()) {
                (Some(account), Some(remark)) => {
                    bank_transfer(lang, order, account, remark, digits)
                }
                _ => problem(lang, "bank-missing"),
            }
        }
    }
}

fn problem(lang: Language, id: &str) -> Markup {
    html! { p.problem role="alert" { (lang.text(id)) } }
}

/// The channel's page, named, and what the payer will be asked there.
fn channel(app: &App, lang: Language, order: &Deposit, url: &str, digits: u32) -> Markup {
    let wallet = order
        .channel_id
        .as_deref()
        .and_then(|id| app.channels.get(id))
        .map(|c| c.name().to_string())
        .unwrap_or_else(|| order.currency.clone());
    let amount = lang.amount(order.amount, digits);
    let with = |id: &str| {
        lang.format(
            id,
            &[
                ("wallet", &wallet),
                ("amount", &amount),
                ("currency", &order.currency),
            ],
        )
    };
    html! {
        section.instructions aria-labelledby="how" {
            h2 #how { (with("channel-heading")) }
            a.primary.button #pay href=(url) rel="noopener noreferrer" { (with("channel-pay")) }
            ol.expect #expect { li { (with("channel-expect-wallet")) } li { (with("channel-expect-arrival")) } }
            p.note { (with("channel-note")) }
        }
    }
}

fn bank_transfer(
    lang: Language,
    order: &Deposit,
    account: &ShownAccount,
    remark: &str,
    digits: u32,
) -> Markup {
    let copy = |target: &str, label: &str| {
        html! {
            button type="button" class="copy" data-copy=(target) aria-label=(lang.text(label))
                data-copied=(lang.text("copied")) data-selected=(lang.text("copy-selected")) hidden {
                (lang.text("copy"))
            }
        }
    };
    // What the payer copies into a bank app stays in ASCII digits without
    // grouping, whatever the page's language: that is what the app takes.
    let plain_amount = format!("{:.*}", digits as usize, order.amount.round_dp(digits));
    let exact = order.amount != order.requested_amount;
    html! {
        section.instructions aria-labelledby="how" {
            h2 #how { (lang.text("bank-heading")) }
            dl.details {
                div { dt { (lang.text("bank")) } dd #bank-name { (account.bank_name) " (" (account.bank_code) ")" } }
                div {
                    dt { (lang.text("account-number")) }
                    dd { span.value #account-no { (account.account_no) } (copy("account-no", "copy-account-number")) }
                }
                div { dt { (lang.text("account-holder")) } dd #account-holder { (account.account_holder) } }
                div {
                    dt { (lang.format("amount-in", &[("currency", &order.currency)])) }
                    dd { span.value #pay-amount { (plain_amount) } (copy("pay-amount", "copy-amount")) }
                }
                div.remark {
                    dt { (lang.text("remark")) }
                    dd { span.value #remark { (remark) } (copy("remark", "copy-remark")) }
                }
            }
            p.note {
                (lang.text("remark-note"))
                @if exact { " " (lang.text("remark-exact")) }
            }
            (promptpay_qr(lang, order, account, remark, digits))
        }
    }
}

/// A QR code a Thai bank app scans to pay this order: THB, on an account
/// with a PromptPay ID. An ID that no longer parses (it was checked when
/// configured) shows no code rather than a wrong one.
fn promptpay_qr(
    lang: Language,
    order: &Deposit,
    account: &ShownAccount,
    remark: &str,
    digits: u32,
) -> Markup {
    if order.currency != "THB" {
        return html! {};
    }
    let Some(id) = account
        .promptpay_id
        .as_deref()
        .and_then(|text| text.parse::<PromptPayId>().ok())
    else {
        return html! {};
    };
    let payload = promptpay::payload(&id, order.amount, Some(remark));
    let Ok(code) = qrcode::QrCode::with_error_correction_level(&payload, qrcode::EcLevel::M) else {
        tracing::error!(order_no = %order.order_no, "a PromptPay payload did not fit a QR code");
        return html! {};
    };
    let (image, shown_height) = match super::qr_png::png(&code) {
        // Shown 240 px wide, the frame's own proportions kept.
        Ok(f) => (
            base64::engine::general_purpose::STANDARD.encode(&f.png),
            240 * f.height / f.width.max(1),
        ),
        Err(e) => {
            tracing::error!(order_no = %order.order_no, error = e, "a PromptPay QR code could not be drawn");
            return html! {};
        }
    };
    let amount = lang.amount(order.amount, digits);
    let args = [
        ("amount", amount.as_str()),
        ("holder", &account.account_holder),
    ];
    let src = format!("data:image/png;base64,{image}");
    html! {
        figure.promptpay #promptpay {
            h3 { (lang.text("promptpay-heading")) }
            img #promptpay-qr width="240" height=(shown_height) alt=(lang.format("promptpay-alt", &args))
                data-payload=(payload) src=(src);
            figcaption { (lang.format("promptpay-note", &args)) }
            a.button.secondary.save-qr #save-qr download={ "promptpay-" (order.order_no) ".png" } href=(src) {
                (lang.text("promptpay-save"))
            }
        }
    }
}
