//! `payments-channel-sim`'s payment page in headless Chromium, as a payer
//! uses it: the page a channel deposit's `payment_url` opens, another
//! amount typed in, Pay pressed; the channel notifies the service and the
//! deposit completes for what was paid. Declining leaves the order
//! awaiting payment. Screenshots in `target/channel-sim-screenshots/`.

#[allow(dead_code)] // each test binary uses its own part of this module
mod adapter;
#[allow(dead_code)]
mod browser;

use adapter::fixture::Fixture;
use browser::Browser;
use payments_service::app::deposits;
use payments_service::clock::SystemClock;
use payments_service::domain::status::DepositStatus;
use payments_testing::channel_sim::{until, ChannelSim};
use rust_decimal::Decimal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn shots() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/channel-sim-screenshots"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payer_pays_another_amount_on_the_channels_page_and_the_deposit_completes() {
    let sim = ChannelSim::start(&["--settle-by-control"]).unwrap();
    let f = Fixture::start(&sim.url, sim.secret.as_bytes(), Arc::new(SystemClock)).await;
    let new = payments_testing::new_deposit("PAGE-1", Decimal::from(1_000), "BDT", None);
    let order = deposits::create(&f.app, &f.merchant, new).await.unwrap();
    let url = order.payment_url.clone().unwrap();
    assert!(url.starts_with(&format!("{}/pay/", sim.url)), "{url}");

    let browser = Browser::start(390, 844, 2, &shots()).await.unwrap();
    browser.goto(&url).await.unwrap();
    assert!(browser
        .text("#amount")
        .await
        .unwrap()
        .contains("1000.0000 BDT"));
    browser
        .screenshot("channel-page-phone-1-open")
        .await
        .unwrap();
    browser
        .script("document.getElementById('paid').value = ''; return true;")
        .await
        .unwrap();
    browser.keys("#paid", "750.5").await.unwrap();
    browser.click("button[value=pay]").await.unwrap();
    let said = browser
        .wait_for_text("#message", "Paid 750.5", Duration::from_secs(10))
        .await
        .unwrap();
    assert!(said.contains("BDT"), "{said}");
    assert!(browser.find("form").await.is_err(), "no form once paid");
    browser
        .screenshot("channel-page-phone-2-paid")
        .await
        .unwrap();
    browser.quit().await.unwrap();

    // The channel's notification reaches the service (another process).
    until("the deposit completed", Duration::from_secs(30), || async {
        let d = deposits::find_any(&f.app, &order.order_no).await.unwrap();
        d.status == DepositStatus::Completed
    })
    .await;
    let paid = deposits::find_any(&f.app, &order.order_no).await.unwrap();
    assert_eq!(paid.actual_amount, Decimal::new(7505, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_on_the_channels_page_cancels_the_deposit() {
    let sim = ChannelSim::start(&["--settle-by-control"]).unwrap();
    let f = Fixture::start(&sim.url, sim.secret.as_bytes(), Arc::new(SystemClock)).await;
    let new = payments_testing::new_deposit("PAGE-2", Decimal::from(500), "BDT", None);
    let order = deposits::create(&f.app, &f.merchant, new).await.unwrap();

    let browser = Browser::start(1280, 900, 1, &shots()).await.unwrap();
    browser
        .goto(order.payment_url.as_deref().unwrap())
        .await
        .unwrap();
    browser.click("button[value=decline]").await.unwrap();
    let said = browser
        .wait_for_text("#message", "declined", Duration::from_secs(10))
        .await
        .unwrap();
    assert!(said.contains("Nothing was paid"), "{said}");
    assert_eq!(browser.text("#status").await.unwrap(), "failed");
    browser
        .screenshot("channel-page-desktop-declined")
        .await
        .unwrap();
    browser.quit().await.unwrap();
    // The channel's `payment.failed` reaches the service (another process)
    // and cancels the order, as the sandbox's own simulator does.
    until("the deposit cancelled", Duration::from_secs(30), || async {
        let d = deposits::find_any(&f.app, &order.order_no).await.unwrap();
        d.status == DepositStatus::Cancelled
    })
    .await;
}
