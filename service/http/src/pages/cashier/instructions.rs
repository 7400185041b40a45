//! The parts of the cashier page that ask the payer for something: the
//! denomination and saved-account forms, and how to pay an order (the
//! channel's page, or a bank transfer with a PromptPay QR code where the
//! account has an ID).

use crate::app::cashier::Session;
use crate::app::deposits::{Deposit, ShownAccount};
use crate::app::App;
use crate::domain::promptpay::{self, PromptPayId};
use crate::domain::routing::Route;
use crate::pages::escape;
use crate::pages::locale::Language;
use base64::Engine;
use rust_decimal::Decimal;
use std::fmt::Write as _;

pub fn choose_form(
    lang: Language,
    action: &str,
    session: &Session,
    amounts: &[Decimal],
    digits: u32,
) -> String {
    let mut form = format!(
        "<form method=\"post\" action=\"{}\" class=\"choose\" id=\"choose\">\n",
        escape(action)
    );
    if session.amount.is_none() {
        let _ = write!(
            form,
            "<fieldset>\n<legend>{}</legend>\n<div class=\"options amounts\">\n",
            escape(&lang.text("choose-amount"))
        );
        for (i, amount) in amounts.iter().enumerate() {
            let _ = writeln!(
                form,
                "<label class=\"option\" for=\"amount-{i}\"><input type=\"radio\" name=\"amount\" \
                 id=\"amount-{i}\" value=\"{}\" required><span>{} {}</span></label>",
                amount.normalize(),
                lang.amount(*amount, digits),
                escape(&session.currency)
            );
        }
        form.push_str("</div>\n</fieldset>\n");
    }
    form.push_str(&card_choices(lang, session));
    let _ = writeln!(
        form,
        "<button type=\"submit\" class=\"primary\" id=\"continue\">{}</button>\n</form>",
        escape(&lang.text("continue"))
    );
    form
}

/// Offered once the order exists (the merchant fixed the amount): which
/// saved account the payer will pay from.
pub fn card_form(lang: Language, action: &str, session: &Session) -> String {
    format!(
        "<form method=\"post\" action=\"{}\" class=\"choose\" id=\"card-form\">\n{}\
         <button type=\"submit\" class=\"secondary\" id=\"use-card\">{}</button>\n</form>\n",
        escape(action),
        card_choices(lang, session),
        escape(&lang.text("use-account"))
    )
}

fn card_choices(lang: Language, session: &Session) -> String {
    if session.cards.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<fieldset>\n<legend>{}</legend>\n<div class=\"options cards\">\n",
        escape(&lang.text("pay-from"))
    );
    for (i, card) in session.cards.iter().enumerate() {
        let _ = writeln!(
            out,
            "<label class=\"option\" for=\"card-{i}\"><input type=\"radio\" name=\"card\" id=\"card-{i}\" \
             value=\"{i}\"{}><span>{} <span aria-label=\"{}\">•••• </span>{}</span></label>",
            if i == 0 { " checked" } else { "" },
            escape(&card.bank_code),
            escape(&lang.text("account-ending")),
            escape(&card.account_last4)
        );
    }
    let _ = write!(
        out,
        "<label class=\"option\" for=\"card-other\"><input type=\"radio\" name=\"card\" id=\"card-other\" \
         value=\"\"><span>{}</span></label>\n</div>\n</fieldset>\n",
        escape(&lang.text("another-account"))
    );
    out
}

/// How to pay the order: on the channel's page, or by bank transfer.
pub fn instructions(app: &App, lang: Language, order: &Deposit, digits: u32) -> String {
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

fn problem(lang: Language, id: &str) -> String {
    format!(
        "<p class=\"problem\" role=\"alert\">{}</p>\n",
        escape(&lang.text(id))
    )
}

/// The channel's page, named, and what the payer will be asked there.
fn channel(app: &App, lang: Language, order: &Deposit, url: &str, digits: u32) -> String {
    let wallet = order
        .channel_id
        .as_deref()
        .and_then(|id| app.channels.get(id))
        .map(|c| c.name().to_string())
        .unwrap_or_else(|| order.currency.clone());
    let amount = lang.amount(order.amount, digits);
    let with = |id: &str| {
        escape(&lang.format(
            id,
            &[
                ("wallet", &wallet),
                ("amount", &amount),
                ("currency", &order.currency),
            ],
        ))
    };
    format!(
        "<section class=\"instructions\" aria-labelledby=\"how\">\n<h2 id=\"how\">{}</h2>\n\
         <a class=\"primary button\" id=\"pay\" href=\"{}\" rel=\"noopener noreferrer\">{}</a>\n\
         <ol class=\"expect\" id=\"expect\"><li>{}</li><li>{}</li></ol>\n\
         <p class=\"note\">{}</p>\n</section>\n",
        with("channel-heading"),
        escape(url),
        with("channel-pay"),
        with("channel-expect-wallet"),
        with("channel-expect-arrival"),
        with("channel-note"),
    )
}

fn bank_transfer(
    lang: Language,
    order: &Deposit,
    account: &ShownAccount,
    remark: &str,
    digits: u32,
) -> String {
    let copy = |target: &str, label: &str| {
        format!(
            "<button type=\"button\" class=\"copy\" data-copy=\"{target}\" aria-label=\"{}\" \
             data-copied=\"{}\" data-selected=\"{}\" hidden>{}</button>",
            escape(&lang.text(label)),
            escape(&lang.text("copied")),
            escape(&lang.text("copy-selected")),
            escape(&lang.text("copy")),
        )
    };
    let mut out = format!(
        "<section class=\"instructions\" aria-labelledby=\"how\">\n<h2 id=\"how\">{}</h2>\n<dl class=\"details\">\n",
        escape(&lang.text("bank-heading"))
    );
    // What the payer copies into a bank app stays in ASCII digits without
    // grouping, whatever the page's language: that is what the app takes.
    let plain_amount = format!("{:.*}", digits as usize, order.amount.round_dp(digits));
    let _ = write!(
        out,
        "<div><dt>{}</dt><dd id=\"bank-name\">{} ({})</dd></div>\n\
         <div><dt>{}</dt><dd><span class=\"value\" id=\"account-no\">{}</span>{}</dd></div>\n\
         <div><dt>{}</dt><dd id=\"account-holder\">{}</dd></div>\n\
         <div><dt>{}</dt><dd><span class=\"value\" id=\"pay-amount\">{}</span>{}</dd></div>\n\
         <div class=\"remark\"><dt>{}</dt><dd><span class=\"value\" id=\"remark\">{}</span>{}</dd></div>\n</dl>\n",
        escape(&lang.text("bank")),
        escape(&account.bank_name),
        escape(&account.bank_code),
        escape(&lang.text("account-number")),
        escape(&account.account_no),
        copy("account-no", "copy-account-number"),
        escape(&lang.text("account-holder")),
        escape(&account.account_holder),
        escape(&lang.format("amount-in", &[("currency", &order.currency)])),
        plain_amount,
        copy("pay-amount", "copy-amount"),
        escape(&lang.text("remark")),
        escape(remark),
        copy("remark", "copy-remark"),
    );
    let exact = if order.amount != order.requested_amount {
        format!(" {}", lang.text("remark-exact"))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "<p class=\"note\">{}{}</p>",
        escape(&lang.text("remark-note")),
        escape(&exact)
    );
    out.push_str(&promptpay_qr(lang, order, account, remark, digits));
    out.push_str("</section>\n");
    out
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
) -> String {
    if order.currency != "THB" {
        return String::new();
    }
    let Some(id) = account
        .promptpay_id
        .as_deref()
        .and_then(|text| text.parse::<PromptPayId>().ok())
    else {
        return String::new();
    };
    let payload = promptpay::payload(&id, order.amount, Some(remark));
    let Ok(code) = qrcode::QrCode::with_error_correction_level(&payload, qrcode::EcLevel::M) else {
        tracing::error!(order_no = %order.order_no, "a PromptPay payload did not fit a QR code");
        return String::new();
    };
    let svg = code
        .render::<qrcode::render::svg::Color>()
        .min_dimensions(240, 240)
        .quiet_zone(true)
        .build();
    let amount = lang.amount(order.amount, digits);
    let args = [
        ("amount", amount.as_str()),
        ("holder", &account.account_holder),
    ];
    format!(
        "<figure class=\"promptpay\" id=\"promptpay\">\n<h3>{}</h3>\n\
         <img id=\"promptpay-qr\" width=\"240\" height=\"240\" alt=\"{}\" data-payload=\"{}\" \
         src=\"data:image/svg+xml;base64,{}\">\n<figcaption>{}</figcaption>\n</figure>\n",
        escape(&lang.text("promptpay-heading")),
        escape(&lang.format("promptpay-alt", &args)),
        escape(&payload),
        base64::engine::general_purpose::STANDARD.encode(svg),
        escape(&lang.format("promptpay-note", &args)),
    )
}
