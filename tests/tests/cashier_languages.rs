//! The cashier page in English, Thai and Bangla, in headless Chromium at
//! phone and desktop widths, with JavaScript on and off: the words are the
//! language's, the time left is shown and goes down, the PromptPay QR code
//! on a THB bank transfer is read back off the screen by a decoder that is
//! not ours and checked field by field. Screenshots per language land in
//! `target/cashier-screenshots/` (`.ci/run` copies them to `docs/cashier/`).

#[allow(dead_code)] // each test binary uses its own part of this module
mod browser;

use base64::Engine;
use browser::{Browser, Options};
use merchant_client::merchant::types as m;
use merchant_client::{Credentials, MerchantOrderNo};
use payments_service::clock::{ManualClock, SystemClock};
use payments_service::Profile;
use payments_testing::TestService;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const PHONE: (u32, u32, u32, &str) = (390, 844, 2, "phone");
const DESKTOP: (u32, u32, u32, &str) = (1366, 900, 1, "desktop");
const LIVE: Duration = Duration::from_secs(20);
/// The sandbox's first THB account's PromptPay ID (a tax number no one holds).
const SANDBOX_PROMPTPAY_TAX_ID: &str = "0000000000001";

/// What each language's page must say (from its catalogue, written out
/// here so that a catalogue that lost a translation fails).
struct Words {
    tag: &'static str,
    accept: Option<&'static str>,
    heading: &'static str,
    choose: &'static str,
    waiting: &'static str,
    time_left_choose: &'static str,
    bank_heading: &'static str,
    promptpay_heading: &'static str,
    expired_heading: &'static str,
    wallet_heading: &'static str,
    /// 500.00 THB as the page writes it.
    five_hundred: &'static str,
    /// The zone a THB page's deadline is in (the payer's, Bangkok), and a
    /// BDT page's (Dhaka), each with its offset.
    bangkok_time: &'static str,
    dhaka_time: &'static str,
}

const LANGUAGES: [Words; 3] = [
    Words {
        tag: "en",
        accept: None,
        heading: "Payment",
        choose: "Choose an amount",
        waiting: "Waiting for your payment",
        time_left_choose: "Time left to choose",
        bank_heading: "Transfer exactly this amount",
        promptpay_heading: "Or scan with your bank app",
        expired_heading: "This payment page has expired",
        wallet_heading: "Pay with Sandbox simulator",
        five_hundred: "500.00",
        bangkok_time: "Bangkok time (UTC+07:00)",
        dhaka_time: "Dhaka time (UTC+06:00)",
    },
    Words {
        tag: "th",
        accept: Some("th-TH,th;q=0.9,en;q=0.5"),
        heading: "การชำระเงิน",
        choose: "เลือกจำนวนเงิน",
        waiting: "รอการชำระเงินของคุณ",
        time_left_choose: "เวลาที่เหลือในการเลือก",
        bank_heading: "โอนเงินตามจำนวนนี้พอดี",
        promptpay_heading: "หรือสแกนด้วยแอปธนาคาร",
        expired_heading: "หน้าชำระเงินนี้หมดอายุแล้ว",
        wallet_heading: "ชำระด้วย Sandbox simulator",
        five_hundred: "500.00",
        bangkok_time: "เวลาประเทศไทย UTC+07:00",
        dhaka_time: "เวลาบังกลาเทศ UTC+06:00",
    },
    Words {
        tag: "bn",
        accept: Some("bn-BD,bn;q=0.9"),
        heading: "পেমেন্ট",
        choose: "একটি পরিমাণ বেছে নিন",
        waiting: "আপনার পেমেন্টের অপেক্ষায়",
        time_left_choose: "বাছাইয়ের জন্য বাকি সময়",
        bank_heading: "ঠিক এই পরিমাণ টাকা ট্রান্সফার করুন",
        promptpay_heading: "অথবা আপনার ব্যাংক অ্যাপ দিয়ে স্ক্যান করুন",
        expired_heading: "এই পেমেন্ট পেজের মেয়াদ শেষ হয়ে গেছে",
        wallet_heading: "Sandbox simulator দিয়ে পেমেন্ট করুন",
        five_hundred: "৫০০.০০",
        bangkok_time: "থাইল্যান্ডের সময় (UTC+০৭:০০)",
        dhaka_time: "বাংলাদেশ সময় (UTC+০৬:০০)",
    },
];

fn shots() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/cashier-screenshots"
    ))
}

async fn open(words: &Words, size: (u32, u32, u32, &str), javascript: bool) -> Browser {
    Browser::start_with(
        size.0,
        size.1,
        size.2,
        &shots(),
        Options {
            accept_language: words.accept.map(String::from),
            javascript,
        },
    )
    .await
    .expect("headless chromium starts")
}

async fn session(service: &TestService, merchant: &str, order: &str, currency: &str) -> String {
    let merchant = service.new_merchant(merchant).await.unwrap();
    let client = merchant_client::merchant::Client::new(
        &service.base_url(),
        Credentials::new(merchant.api_key.clone()),
    );
    client
        .create_cashier_deposit(&m::CreateCashierDepositRequest {
            order_type: m::CreateCashierDepositRequestOrderType::Cashier,
            merchant_order_no: MerchantOrderNo::parse(order).unwrap(),
            amount: None,
            currency_code: currency.into(),
            callback_url: None,
            return_url: None,
            extra_data: None,
            user_id: None,
            payer_bank_cards: Vec::new(),
        })
        .await
        .expect("the session is created")
        .into_inner()
        .cashier_url
}

/// The page's language, heading and status line, and that every control
/// has a name.
async fn says(b: &Browser, words: &Words, status: &str) {
    let page = b
        .script(
            "return { lang: document.documentElement.lang,
                      h1: [...document.querySelectorAll('h1')].map(e => e.textContent),
                      status: (document.querySelector('#status') || {}).textContent,
                      unlabelled: [...document.querySelectorAll('input')]
                        .filter(e => e.labels.length === 0).length };",
        )
        .await
        .unwrap();
    assert_eq!(page["lang"], words.tag, "{page}");
    assert_eq!(page["h1"], serde_json::json!([words.heading]), "{page}");
    assert_eq!(page["status"], status, "{page}");
    assert_eq!(page["unlabelled"], 0, "{page}");
}

/// `29:05` or `১:০২:০৯` → seconds.
fn seconds(clock: &str) -> i64 {
    const BENGALI: &str = "০১২৩৪৫৬৭৮৯";
    let ascii: String = clock
        .chars()
        .map(|c| match BENGALI.chars().position(|b| b == c) {
            Some(d) => char::from(b'0' + d as u8),
            None => c,
        })
        .collect();
    ascii.split(':').fold(0, |total, part| {
        total * 60 + part.trim().parse::<i64>().unwrap()
    })
}

async fn time_left(b: &Browser) -> i64 {
    seconds(&b.text("#time-left").await.unwrap())
}

/// Chooses 500.00 THB (the third denomination) and continues.
async fn choose_500(b: &Browser, words: &Words) {
    b.click("label[for=amount-2]").await.unwrap();
    b.click("#continue").await.unwrap();
    b.wait_for_text("#status", words.waiting, LIVE)
        .await
        .unwrap();
    let amount = b.text("#amount").await.unwrap();
    assert!(amount.starts_with(words.five_hundred), "{amount}");
    let heading = b.text("#how").await.unwrap();
    assert_eq!(heading, words.bank_heading);
}

/// Reads the QR code off the page and checks it against the order.
async fn check_qr(b: &Browser, words: &Words) {
    assert_eq!(
        b.text("#promptpay h3").await.unwrap(),
        words.promptpay_heading
    );
    let png = b.element_png("#promptpay-qr").await.unwrap();
    let image = image::load_from_memory(&png).unwrap().to_luma8();
    let mut prepared = rqrr::PreparedImage::prepare(image);
    let grids = prepared.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code on the image");
    let (_, payload) = grids[0].decode().expect("the QR code decodes");

    let remark = b.text("#remark").await.unwrap();
    let amount = b.text("#pay-amount").await.unwrap();
    assert_eq!(amount, "500.00");
    conformance::promptpay::check(&payload, &amount, SANDBOX_PROMPTPAY_TAX_ID, &remark)
        .unwrap_or_else(|why| panic!("{why}: {payload}"));
    // What the page states as text is what the picture encodes.
    let stated = b
        .script("return document.querySelector('#promptpay-qr').dataset.payload;")
        .await
        .unwrap();
    assert_eq!(stated, payload.as_str());
    // The saved picture is a PNG of the same payload: what a bank app's
    // "scan from gallery" reads (issue 53).
    let saved = b
        .script(
            "const a = document.querySelector('#save-qr');
             return { name: a.getAttribute('download'), href: a.getAttribute('href') };",
        )
        .await
        .unwrap();
    assert!(saved["name"].as_str().unwrap().ends_with(".png"), "{saved}");
    let encoded = saved["href"]
        .as_str()
        .unwrap()
        .strip_prefix("data:image/png;base64,")
        .expect("a PNG data URL");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let image = image::load_from_memory(&bytes).unwrap().to_luma8();
    let mut prepared = rqrr::PreparedImage::prepare(image);
    let grids = prepared.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the saved PNG");
    let (_, from_file) = grids[0].decode().expect("the saved QR code decodes");
    assert_eq!(from_file, payload);
}

#[tokio::test]
async fn each_language_at_phone_and_desktop_widths_counts_down_and_shows_a_qr_that_reads_back() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    for words in &LANGUAGES {
        for size in [PHONE, DESKTOP] {
            let name = |step: &str| format!("{}-{}-{step}.png", words.tag, size.3);
            let order = format!("LANG-{}-{}", words.tag, size.3);
            let url = session(&service, "Siam Mobile Top-up", &order, "THB").await;
            let b = open(words, size, true).await;
            b.goto(&url).await.unwrap();
            says(&b, words, &b.text("#status").await.unwrap()).await;
            assert_eq!(b.text("legend").await.unwrap(), words.choose);
            let line = b.text("#time-left-line").await.unwrap();
            assert!(line.starts_with(words.time_left_choose), "{line}");
            // The deadline in the payer's time, not UTC.
            let expires = b.text("#expires").await.unwrap();
            assert!(expires.contains(words.bangkok_time), "{expires}");
            // The script counts down from what the server rendered.
            let first = time_left(&b).await;
            assert!((1700..=1800).contains(&first), "{first}");
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            while time_left(&b).await >= first {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the time left never went down"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            b.screenshot(&name("1-choose-amount")).await.unwrap();

            choose_500(&b, words).await;
            says(&b, words, words.waiting).await;
            assert!(time_left(&b).await > 0);
            check_qr(&b, words).await;
            b.screenshot(&name("2-bank-transfer-promptpay"))
                .await
                .unwrap();

            if size.3 == "phone" {
                // A BDT channel order: the page names the wallet and says
                // what happens there.
                let order = format!("LANG-BDT-{}", words.tag);
                let url = session(&service, "Lotus Games", &order, "BDT").await;
                b.goto(&url).await.unwrap();
                b.click("label[for=amount-1]").await.unwrap();
                b.click("#continue").await.unwrap();
                b.wait_for_text("#status", words.waiting, LIVE)
                    .await
                    .unwrap();
                assert_eq!(b.text("#how").await.unwrap(), words.wallet_heading);
                let expires = b.text("#expires").await.unwrap();
                assert!(expires.contains(words.dhaka_time), "{expires}");
                let expect = b.text("#expect").await.unwrap();
                assert!(expect.contains("Sandbox simulator"), "{expect}");
                b.screenshot(&name("3-wallet")).await.unwrap();
            }
            b.quit().await.unwrap();
        }
    }
}

#[tokio::test]
async fn the_page_works_with_javascript_off_in_every_language() {
    // Request timestamps are checked against real time: start there.
    let clock = ManualClock::at_system_time();
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    for words in &LANGUAGES {
        for size in [PHONE, DESKTOP] {
            let name = |step: &str| format!("{}-{}-{step}.png", words.tag, size.3);
            let order = format!("NOJS-{}-{}", words.tag, size.3);
            let url = session(&service, "Siam Mobile Top-up", &order, "THB").await;
            let b = open(words, size, false).await;
            b.goto(&url).await.unwrap();
            says(&b, words, &b.text("#status").await.unwrap()).await;
            // Without the script the copy buttons stay hidden and the time
            // left is what the server rendered: a refresh after 90 seconds
            // on the service's clock shows 90 seconds less.
            let first = time_left(&b).await;
            clock.advance(90);
            b.goto(&url).await.unwrap();
            assert_eq!(time_left(&b).await, first - 90);

            choose_500(&b, words).await;
            let hidden = b
                .script(
                    "return [...document.querySelectorAll('button[data-copy]')].every(e => e.hidden);",
                )
                .await
                .unwrap();
            assert_eq!(hidden, true);
            check_qr(&b, words).await;
            b.screenshot(&name("4-no-javascript")).await.unwrap();

            // Past the order's deadline: the page says what happened and
            // what to do, in the language.
            clock.advance(1900);
            b.goto(&url).await.unwrap();
            assert_eq!(b.text("h2").await.unwrap(), words.expired_heading);
            assert!(b.find("#time-left").await.is_err());
            b.screenshot(&name("5-expired")).await.unwrap();
            b.quit().await.unwrap();
            clock.advance(-1990);
        }
    }
}

#[tokio::test]
async fn the_switcher_changes_language_and_the_choice_survives_the_form() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let url = session(&service, "Siam Mobile Top-up", "SWITCH-1", "THB").await;
    let english = &LANGUAGES[0];
    let bangla = &LANGUAGES[2];
    let b = open(english, DESKTOP, true).await;
    b.goto(&url).await.unwrap();
    says(&b, english, "Waiting for you to choose").await;
    b.click("#lang-bn").await.unwrap();
    b.wait_for_text("h1", bangla.heading, LIVE).await.unwrap();
    choose_500(&b, bangla).await;
    says(&b, bangla, bangla.waiting).await;
    b.quit().await.unwrap();
}

#[tokio::test]
async fn a_malformed_or_unknown_language_falls_back_to_english() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let url = session(&service, "Siam Mobile Top-up", "LANG-BAD-1", "THB").await;
    let http = reqwest::Client::new();
    let page = |query: &'static str, accept: &'static str| {
        let request = http
            .get(format!("{url}{query}"))
            .header("Accept-Language", accept);
        async move {
            let reply = request.send().await.unwrap();
            assert_eq!(reply.status(), 200);
            let vary = reply.headers()["vary"].to_str().unwrap().to_string();
            assert!(vary.contains("Accept-Language"), "{vary}");
            let language = reply.headers()["content-language"]
                .to_str()
                .unwrap()
                .to_string();
            let body = reply.text().await.unwrap();
            assert!(body.contains(&format!("<html lang=\"{language}\">")));
            language
        }
    };
    assert_eq!(page("", "@@@;q=oops, ,,;").await, "en");
    assert_eq!(page("", "fr-CA, de;q=0.8").await, "en");
    assert_eq!(page("", "th-TH").await, "th");
    assert_eq!(page("?lang=x!y%FF", "").await, "en");
    assert_eq!(page("?lang=zz", "").await, "en");
    assert_eq!(page("?lang=bn", "th").await, "bn");
    assert_eq!(page("?lang=BN-bd&lang=th", "").await, "bn");
}
