//! `start_channel_sim`: the sandbox starts `payments channel-sim` as its
//! child and points its channel at it, so a channel deposit is paid on the
//! simulator's own page and completed by its signed notification, with
//! nothing else started by hand; and the child goes when the service goes,
//! even when the service is killed with SIGKILL.

mod support;

use payments_testing::channel_sim::until;
use serde_json::{json, Value};
use std::time::Duration;
use support::{database_url, free_port, merchant_post, operator_deposit, start_with, wait_ready};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_starts_the_channel_simulator_as_its_child() {
    let data = std::env::temp_dir().join(format!("payments-child-sim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).unwrap();
    let port = free_port();
    let http = reqwest::Client::new();
    let mut service = start_with(
        &data,
        port,
        &database_url().await,
        &[("PAYMENTS_START_CHANNEL_SIM", "true")],
    );
    wait_ready(&http, &service.base).await;

    let (status, deposit) = merchant_post(
        &http,
        &service.base,
        &service.key,
        "/api/v1/merchant/orders/deposit",
        &json!({"merchant_order_no": "CHILD-1", "amount": 100, "currency_code": "BDT"}),
    )
    .await
    .unwrap();
    assert_eq!(status, 200, "{deposit}");
    let page = deposit["payment_url"].as_str().unwrap().to_string();
    assert!(
        page.contains("/pay/") && !page.starts_with(&service.base),
        "the page is the child's, not the service's: {page}"
    );
    let sim_base = page[..page.find("/pay/").unwrap()].to_string();
    let paid = http
        .post(&page)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("action=pay")
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status(), 200);
    let order_no = deposit["order_no"].as_str().unwrap().to_string();
    until(
        "the deposit completed by the child's notification",
        Duration::from_secs(30),
        || async {
            let d: Value = operator_deposit(&http, &service, &order_no).await;
            d["status"] == "completed"
        },
    )
    .await;

    // SIGKILL leaves the child no goodbye but its closed standard input.
    service.child.kill().unwrap();
    service.child.wait().unwrap();
    until(
        "the child simulator exited with the service",
        Duration::from_secs(30),
        || async {
            http.get(format!("{sim_base}/control/stats"))
                .send()
                .await
                .is_err()
        },
    )
    .await;
    let _ = std::fs::remove_dir_all(&data);
}
