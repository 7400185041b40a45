//! Steps for what the cashier page shows a payer: its language, the time
//! left to pay and the PromptPay QR code of a THB bank transfer. They read
//! the page's HTML as any client fetching it would.

use super::cashier::{fetch, page_url, session_field};
use super::common::PaymentsWorld;
use conformance::harness;
use cucumber::{then, when};

fn page(world: &PaymentsWorld) -> (u16, &str) {
    let (status, text) = world.page.as_ref().expect("a page was requested");
    (*status, text.as_str())
}

/// The value of the first `name="…"` attribute after `anchor`.
fn attribute<'a>(text: &'a str, anchor: &str, name: &str) -> Option<&'a str> {
    let after = &text[text.find(anchor)?..];
    let start = after.find(&format!("{name}=\""))? + name.len() + 2;
    let value = &after[start..];
    Some(&value[..value.find('"')?])
}

#[when(expr = "the payer opens the cashier page with Accept-Language {string}")]
async fn open_with_language(world: &mut PaymentsWorld, accept: String) {
    let url = page_url(world).await;
    let request = harness()
        .await
        .http
        .get(url)
        .header("accept-language", accept);
    fetch(world, request).await;
}

#[when(expr = "the payer opens the cashier page in {string}")]
async fn open_in(world: &mut PaymentsWorld, lang: String) {
    let url = page_url(world).await;
    let request = harness().await.http.get(url).query(&[("lang", lang)]);
    fetch(world, request).await;
}

#[then(expr = "the page is in {string}")]
async fn page_is_in(world: &mut PaymentsWorld, lang: String) {
    let (_, text) = page(world);
    assert!(
        text.contains(&format!("<html lang=\"{lang}\">")),
        "not in {lang}: {text}"
    );
}

#[then("the page links to itself in English, Thai and Bangla")]
async fn links_languages(world: &mut PaymentsWorld) {
    let (_, text) = page(world);
    let token = session_field(world, "cashier_url")
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string();
    for (lang, name) in [("en", "English"), ("th", "ไทย"), ("bn", "বাংলা")] {
        let link = format!("href=\"/cashier/{token}?lang={lang}\" hreflang=\"{lang}\"");
        assert!(text.contains(&link), "{link} missing: {text}");
        assert!(text.contains(name), "{name} missing: {text}");
    }
}

/// The seconds left the page states, in its `data-seconds` and in the
/// machine-readable `datetime` of the same element.
fn seconds_left(text: &str) -> Option<i64> {
    let seconds: i64 = attribute(text, "id=\"time-left\"", "data-seconds")?
        .parse()
        .ok()?;
    let duration = attribute(text, "id=\"time-left\"", "datetime")?;
    assert_eq!(duration, format!("PT{seconds}S"), "{text}");
    Some(seconds)
}

#[then(expr = "the page shows the time left to pay, more than {int} and at most {int} seconds")]
async fn shows_time_left(world: &mut PaymentsWorld, above: i64, most: i64) {
    let (_, text) = page(world);
    let left = seconds_left(text).unwrap_or_else(|| panic!("no time left shown: {text}"));
    assert!(left > above && left <= most, "{left} seconds left: {text}");
    world.time_left = Some(left);
}

#[then(expr = "the time left went down by {int} seconds")]
async fn time_left_went_down(world: &mut PaymentsWorld, by: i64) {
    let before = world.time_left.expect("the time left was read before");
    let (_, text) = page(world);
    let now = seconds_left(text).unwrap_or_else(|| panic!("no time left shown: {text}"));
    // The clock the page counts on is the system's plus the sandbox's
    // offset: the real seconds between the two reads count too (a loaded
    // machine took one in CI), never more than a few.
    let went = before - now;
    assert!(
        (by..=by + 5).contains(&went),
        "went down by {went}, not {by} (and the real seconds between the two reads): {text}"
    );
    world.time_left = Some(now);
}

#[then("the page shows no time left")]
async fn no_time_left(world: &mut PaymentsWorld) {
    let (_, text) = page(world);
    assert!(!text.contains("id=\"time-left\""), "{text}");
}

#[then("the page shows a PromptPay QR code paying the deposit's amount to the account's PromptPay ID, with the remark as reference")]
async fn shows_promptpay(world: &mut PaymentsWorld) {
    let (status, text) = page(world);
    assert_eq!(status, 200, "{text}");
    let order = world.created();
    let id = order["payment_snapshot"]["promptpay_id"]
        .as_str()
        .expect("the order's snapshot names a PromptPay ID");
    let remark = order["expected_remark"].as_str().expect("a remark");
    let amount: rust_decimal::Decimal = order["amount"]
        .as_str()
        .and_then(|a| a.parse().ok())
        .expect("the order's amount");
    let payload = attribute(text, "id=\"promptpay-qr\"", "data-payload")
        .unwrap_or_else(|| panic!("no PromptPay code: {text}"));
    conformance::promptpay::check(payload, &format!("{:.2}", amount), id, remark)
        .unwrap_or_else(|why| panic!("{why}: {payload}"));
    // A PNG, which a bank app reads from a saved picture (an SVG it does
    // not); the page's save button saves the same picture.
    let image = attribute(text, "id=\"promptpay-qr\"", "src").unwrap_or_default();
    let png = image
        .strip_prefix("data:image/png;base64,")
        .and_then(|b| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(b).ok()
        })
        .unwrap_or_else(|| panic!("the code is not a PNG image: {image}"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG: {image}");
    let saved = attribute(text, "id=\"save-qr\"", "href").unwrap_or_default();
    assert_eq!(saved, image, "the save button saves another picture");
    let name = attribute(text, "id=\"save-qr\"", "download").unwrap_or_default();
    assert!(name.ends_with(".png"), "saved as {name}");
}

#[then("the page shows no PromptPay QR code")]
async fn no_promptpay(world: &mut PaymentsWorld) {
    let (_, text) = page(world);
    assert!(!text.contains("id=\"promptpay"), "{text}");
}

#[then(expr = "the page names the wallet {string} and says what to expect there")]
async fn names_wallet(world: &mut PaymentsWorld, wallet: String) {
    let (status, text) = page(world);
    assert_eq!(status, 200, "{text}");
    let heading = format!("<h2 id=\"how\">Pay with {wallet}</h2>");
    assert!(text.contains(&heading), "{heading} missing: {text}");
    let expect = &text[text.find("id=\"expect\"").expect("what to expect")..];
    assert!(expect.contains(&wallet), "{text}");
    assert!(expect.contains("approve"), "{text}");
}
