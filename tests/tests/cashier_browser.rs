//! The hosted cashier page in headless Chromium, driven as a payer would:
//! choose, read the instructions, pay through the sandbox simulator, watch
//! the page turn to paid; and the pages for an expired or unknown token.
//! Screenshots of every step land in `target/cashier-screenshots/`.

#[allow(dead_code)] // each test binary uses its own part of this module
mod browser;

use browser::Browser;
use merchant_client::merchant::types as m;
use merchant_client::sandbox::types as sb;
use merchant_client::{AmountNumber, BearerToken, Credentials, MerchantOrderNo};
use payments_service::clock::{ManualClock, SystemClock};
use payments_service::Profile;
use payments_testing::{TestService, TEST_OPERATOR_TOKEN};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const PHONE: (u32, u32, u32) = (390, 844, 2);
const DESKTOP: (u32, u32, u32) = (1366, 900, 1);
/// How long the page may take to notice a payment (it polls every 2 s).
const LIVE: Duration = Duration::from_secs(20);

fn shots() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/cashier-screenshots"
    ))
}

async fn open(service: &TestService, size: (u32, u32, u32)) -> Browser {
    let _ = service;
    Browser::start(size.0, size.1, size.2, &shots())
        .await
        .expect("headless chromium starts")
}

fn merchant_client(service: &TestService, key: &str) -> merchant_client::merchant::Client {
    merchant_client::merchant::Client::new(&service.base_url(), Credentials::new(key.to_string()))
}

async fn session(
    client: &merchant_client::merchant::Client,
    order: &str,
    amount: Option<&str>,
    currency: &str,
    cards: &[(&str, &str)],
) -> m::CashierSession {
    session_returning(client, order, amount, currency, cards, None).await
}

/// A session whose final pages lead back to `return_url`.
async fn session_returning(
    client: &merchant_client::merchant::Client,
    order: &str,
    amount: Option<&str>,
    currency: &str,
    cards: &[(&str, &str)],
    return_url: Option<&str>,
) -> m::CashierSession {
    client
        .create_cashier_deposit(&m::CreateCashierDepositRequest {
            order_type: m::CreateCashierDepositRequestOrderType::Cashier,
            merchant_order_no: MerchantOrderNo::parse(order).unwrap(),
            amount: amount.map(|a| AmountNumber(a.parse().unwrap())),
            currency_code: currency.into(),
            callback_url: None,
            return_url: return_url.map(String::from),
            extra_data: None,
            user_id: None,
            payer_bank_cards: cards
                .iter()
                .map(|(bank, no)| {
                    BTreeMap::from([
                        ("bank_code".to_string(), bank.to_string()),
                        ("account_no".to_string(), no.to_string()),
                    ])
                })
                .collect(),
        })
        .await
        .expect("the session is created")
        .into_inner()
}

/// Labels, language, one heading: what a screen reader needs first.
async fn accessible(b: &Browser) {
    let report = b
        .script(
            "const unlabelled = [...document.querySelectorAll('input, select, textarea')]
               .filter(e => e.type !== 'hidden' && e.labels.length === 0).map(e => e.id || e.name);
             const nameless = [...document.querySelectorAll('button, a')]
               .filter(e => !e.hidden && !(e.textContent.trim() || e.getAttribute('aria-label'))).length;
             return { lang: document.documentElement.lang, h1: document.querySelectorAll('h1').length,
                      unlabelled, nameless };",
        )
        .await
        .unwrap();
    assert_eq!(report["lang"], "en", "{report}");
    assert_eq!(report["h1"], 1, "{report}");
    assert_eq!(report["unlabelled"], serde_json::json!([]), "{report}");
    assert_eq!(report["nameless"], 0, "{report}");
}

#[tokio::test]
async fn a_payer_completes_a_channel_deposit_through_the_pages_alone() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let merchant = service.new_merchant("Lotus Games").await.unwrap();
    let client = merchant_client(&service, &merchant.api_key);
    let s = session(&client, "CB-DESK-1", None, "BDT", &[]).await;

    let b = open(&service, DESKTOP).await;
    b.goto(&s.cashier_url).await.unwrap();
    assert_eq!(b.text("#merchant").await.unwrap(), "Lotus Games");
    accessible(&b).await;
    b.screenshot("desktop-1-choose-amount.png").await.unwrap();

    b.click("label[for=amount-1]").await.unwrap(); // 1,000.00 BDT
    b.click("#continue").await.unwrap();
    b.wait_for_text("#status", "Waiting for your payment", LIVE)
        .await
        .unwrap();
    assert!(b.text("#amount").await.unwrap().contains("1,000.00"));
    accessible(&b).await;
    b.screenshot("desktop-2-pay-with-provider.png")
        .await
        .unwrap();

    // The channel's page: the sandbox simulator.
    b.click("#pay").await.unwrap();
    assert!(b.url().await.unwrap().contains("/sandbox/simulator/pay/"));
    b.screenshot("desktop-3-simulator.png").await.unwrap();
    b.click("#pay").await.unwrap();
    b.wait_for_text("#message", "Paid 1000", LIVE)
        .await
        .unwrap();

    // Back on the cashier URL, the only address the payer was given.
    b.goto(&s.cashier_url).await.unwrap();
    b.wait_for_text("#status", "Paid", LIVE).await.unwrap();
    assert!(b
        .text("#outcome")
        .await
        .unwrap()
        .contains("Payment received"));
    b.screenshot("desktop-4-paid.png").await.unwrap();
    b.quit().await.unwrap();

    let order = client.find_deposit("CB-DESK-1").await.unwrap().into_inner();
    assert_eq!(order.status.to_string(), "completed");
    assert_eq!(order.actual_amount.to_string(), "1000.0000");
    assert_eq!(
        order.cashier_session_id.as_deref(),
        Some(s.session_id.as_str())
    );
}

#[tokio::test]
async fn a_payer_on_a_phone_picks_by_keyboard_copies_the_details_and_sees_the_payment_arrive() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let merchant = service.new_merchant("Siam Mobile Top-up").await.unwrap();
    let client = merchant_client(&service, &merchant.api_key);
    let s = session(
        &client,
        "CB-PHONE-1",
        None,
        "THB",
        &[("KBANK", "123-4-56789-0"), ("SCB", "987-6-54321-2")],
    )
    .await;

    let b = open(&service, PHONE).await;
    b.goto(&s.cashier_url).await.unwrap();
    accessible(&b).await;
    b.screenshot("phone-1-choose-amount-and-card.png")
        .await
        .unwrap();

    // Keyboard only: the space bar picks a denomination and a card.
    b.keys("#amount-2", "\u{E00D}").await.unwrap(); // 500.00 THB
    b.keys("#card-1", "\u{E00D}").await.unwrap(); // SCB •••• 3212
    let checked = b
        .script("return [document.querySelector('#amount-2').checked, document.querySelector('#card-1').checked];")
        .await
        .unwrap();
    assert_eq!(checked, serde_json::json!([true, true]));
    b.keys("#continue", "\u{E007}").await.unwrap(); // Enter
    b.wait_for_text("#status", "Waiting for your payment", LIVE)
        .await
        .unwrap();
    let remark = b.text("#remark").await.unwrap();
    assert!(
        remark.len() >= 8 && remark.bytes().all(|b| b.is_ascii_alphanumeric()),
        "{remark}"
    );
    assert_eq!(b.text("#account-no").await.unwrap(), "1234567890");
    assert_eq!(b.text("#pay-amount").await.unwrap(), "500.00");
    accessible(&b).await;
    let label = b.text("button[data-copy=remark]").await.unwrap();
    b.click("button[data-copy=remark]").await.unwrap();
    // The label changes once the clipboard's promise settles, not at the
    // click: read at once, it was still "Copy" in a CI run.
    let copied = b
        .wait_for_change("button[data-copy=remark]", &label, LIVE)
        .await
        .unwrap();
    assert!(
        copied == "Copied" || copied.starts_with("Selected"),
        "{copied}"
    );
    b.screenshot("phone-2-bank-transfer-instructions.png")
        .await
        .unwrap();
    b.resize(DESKTOP.0, DESKTOP.1).await.unwrap();
    b.screenshot("desktop-5-bank-transfer-instructions.png")
        .await
        .unwrap();
    b.resize(PHONE.0, PHONE.1).await.unwrap();

    // The bank's transfer arrives while the page is open: it follows the
    // order by itself.
    let order = client
        .find_deposit("CB-PHONE-1")
        .await
        .unwrap()
        .into_inner();
    assert_eq!(order.payer_bank_code.as_deref(), Some("SCB"));
    assert_eq!(order.payer_account_last4.as_deref(), Some("3212"));
    let sandbox = merchant_client::sandbox::Client::new(
        &service.base_url(),
        BearerToken::new(TEST_OPERATOR_TOKEN.to_string()),
    );
    sandbox
        .pay_deposit(&order.order_no, &sb::PayDepositRequest { amount: None })
        .await
        .unwrap();
    b.wait_for_text("#status", "Paid", LIVE).await.unwrap();
    b.screenshot("phone-3-paid.png").await.unwrap();
    b.quit().await.unwrap();
}

#[tokio::test]
async fn expired_and_unknown_tokens_show_pages_that_say_so() {
    // Request timestamps are checked against real time: start there.
    let clock = ManualClock::at_system_time();
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    let merchant = service.new_merchant("Lotus Games").await.unwrap();
    let client = merchant_client(&service, &merchant.api_key);
    let s = session(&client, "CB-EXP-1", None, "THB", &[]).await;
    clock.advance(1800);

    let http = reqwest::Client::new();
    assert_eq!(http.get(&s.cashier_url).send().await.unwrap().status(), 410);
    let unknown = format!("{}/cashier/cs_{}", service.base_url(), "A".repeat(43));
    assert_eq!(http.get(&unknown).send().await.unwrap().status(), 404);

    let b = open(&service, PHONE).await;
    b.goto(&s.cashier_url).await.unwrap();
    assert!(b
        .text("h2")
        .await
        .unwrap()
        .contains("This payment page has expired"));
    assert!(b.script("return document.forms.length;").await.unwrap() == 0);
    accessible(&b).await;
    b.screenshot("phone-4-expired.png").await.unwrap();
    b.goto(&unknown).await.unwrap();
    assert_eq!(b.text("h1").await.unwrap(), "Payment page not found");
    b.screenshot("phone-5-unknown-link.png").await.unwrap();
    b.quit().await.unwrap();
}

/// Follows the page's "back to the merchant" link (WebDriver's click
/// returns once the navigation it starts has loaded) and checks it lands on
/// the merchant's `return_url`.
async fn follow_return(b: &Browser, return_url: &str) {
    b.click("#return").await.unwrap();
    assert_eq!(b.url().await.unwrap(), return_url);
}

#[tokio::test]
async fn the_payer_is_led_back_to_the_merchant_from_the_channel_paid_and_expired_pages() {
    let clock = ManualClock::at_system_time();
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    let merchant = service.new_merchant("Lotus Games").await.unwrap();
    let client = merchant_client(&service, &merchant.api_key);
    // Any page the browser can reach stands for the merchant's.
    let back = format!("{}/healthz?shop=lotus&order=CB-RET-1", service.base_url());
    let paid = session_returning(&client, "CB-RET-1", Some("1000"), "BDT", &[], Some(&back)).await;
    // Made now: requests are signed on real time, which the clock leaves.
    let late = session_returning(&client, "CB-RET-2", None, "THB", &[], Some(&back)).await;
    let plain = session(&client, "CB-RET-3", None, "THB", &[]).await;
    let b = open(&service, PHONE).await;

    // The channel's page (the sandbox simulator), once paid.
    b.goto(&paid.cashier_url).await.unwrap();
    b.click("#pay").await.unwrap();
    b.click("#pay").await.unwrap();
    b.wait_for_text("#message", "Paid 1000", LIVE)
        .await
        .unwrap();
    follow_return(&b, &back).await;

    // The cashier's paid page.
    b.goto(&paid.cashier_url).await.unwrap();
    b.wait_for_text("#status", "Paid", LIVE).await.unwrap();
    assert_eq!(b.text("#return").await.unwrap(), "Back to Lotus Games");
    accessible(&b).await;
    b.screenshot("phone-6-paid-back-to-merchant.png")
        .await
        .unwrap();
    follow_return(&b, &back).await;

    // The expired page: the way back is the only thing left to do.
    clock.advance(1800);
    b.goto(&late.cashier_url).await.unwrap();
    assert!(b.text("h2").await.unwrap().contains("has expired"));
    accessible(&b).await;
    follow_return(&b, &back).await;

    // Without a return_url the final pages offer no link.
    b.goto(&plain.cashier_url).await.unwrap();
    assert_eq!(
        b.script("return document.querySelectorAll('#return').length;")
            .await
            .unwrap(),
        0
    );
    b.quit().await.unwrap();
}
