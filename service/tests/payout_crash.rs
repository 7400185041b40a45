//! kill -9 between sending a payout and recording the answer: the channel
//! (`payments-channel-sim`, a separate process) has taken the payout and
//! holds its answer; the service dies waiting. After the restart the
//! payout is inquired, found accepted and carried on, and settled once; it
//! is never sent again, under its own order number or any other.
//! Runs the real binary; on PostgreSQL when PAYMENTS_TEST_DATABASE_URL is
//! set, else on the sandbox's SQLite file.

mod support;

use payments_testing::channel_sim::{until, ChannelSim};
use serde_json::{json, Value};
use std::time::Duration;
use support::{database_url, free_port, merchant_post, operator, start_with, wait_ready};

async fn sim_get(http: &reqwest::Client, sim: &ChannelSim, path: &str) -> Value {
    http.get(format!("{}/control/{path}", sim.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn sim_send(http: &reqwest::Client, sim: &ChannelSim, method: &str, path: &str, body: Value) {
    let url = format!("{}/control/{path}", sim.url);
    let request = match method {
        "PUT" => http.put(url).json(&body),
        _ => http.post(url),
    };
    let answer = request.send().await.unwrap();
    assert!(answer.status().is_success(), "{path}: {}", answer.status());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payout_in_flight_at_kill_9_is_inquired_and_settled_once() {
    let sim = ChannelSim::start(&["--settle-by-control"]).unwrap();
    let data = std::env::temp_dir().join(format!("payments-payout-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).unwrap();
    // The sandbox's channel as an adapter at the simulator; the dispatcher
    // wakes every second.
    let config = data.join("channel.toml");
    std::fs::write(
        &config,
        format!(
            "expiry_interval_seconds = 1\n\n[[channels]]\nid = \"chan-sim-1\"\ncode = \"SIMULATOR\"\n\
             name = \"Sandbox simulator\"\nkind = \"http\"\ncurrencies = [\"THB\", \"BDT\"]\n\
             base_url = \"{}\"\nsecret = \"{}\"\nrequest_timeout_ms = 30000\nprivate_network = true\n",
            sim.url, sim.secret
        ),
    )
    .unwrap();
    let env = [("PAYMENTS_CONFIG", config.to_str().unwrap())];
    let database_url = database_url().await;
    let port = free_port();
    let http = reqwest::Client::new();
    let mut first = start_with(&data, port, &database_url, &env);
    wait_ready(&http, &first.base).await;

    // Funds, then a withdrawal waiting for approval.
    let (status, deposit) = merchant_post(
        &http,
        &first.base,
        &first.key,
        "/api/v1/merchant/orders/deposit",
        &json!({"merchant_order_no": "PC-FUND", "amount": 1000, "currency_code": "THB"}),
    )
    .await
    .unwrap();
    assert_eq!(status, 200, "{deposit}");
    let paid = format!(
        "/api/v1/sandbox/deposits/{}/pay",
        deposit["order_no"].as_str().unwrap()
    );
    operator(&http, &first, "POST", &paid, json!({})).await;
    let (status, withdrawal) = merchant_post(
        &http,
        &first.base,
        &first.key,
        "/api/v1/merchant/orders/withdrawal",
        &json!({"merchant_order_no": "PC-1", "amount": 100, "currency_code": "THB",
                "beneficiary_name": "Somchai Jaidee", "beneficiary_account": "1234567890",
                "beneficiary_bank_code": "SCB"}),
    )
    .await
    .unwrap();
    assert_eq!(status, 200, "{withdrawal}");
    let order_no = withdrawal["order_no"].as_str().unwrap().to_string();

    // The channel takes the payout and holds its answer for a minute.
    sim_send(
        &http,
        &sim,
        "PUT",
        "faults",
        json!({"timeout_percent": 100, "hang_ms": 60000}),
    )
    .await;
    let approving = {
        let (http, base, token) = (http.clone(), first.base.clone(), first.operator.clone());
        let path = format!("{base}/api/v1/operator/withdrawals/{order_no}/approve");
        tokio::spawn(async move {
            let _ = http
                .post(path)
                .header("authorization", format!("Bearer {token}"))
                .json(&json!({"remarks": "approved before the crash"}))
                .send()
                .await;
        })
    };
    until(
        "the channel took the payout",
        Duration::from_secs(60),
        || async {
            sim_get(&http, &sim, "payouts").await["payouts"]
                .as_array()
                .is_some_and(|p| p.len() == 1)
        },
    )
    .await;
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    approving.abort();
    sim_send(&http, &sim, "PUT", "faults", json!({})).await;

    let mut second = start_with(&data, port, &database_url, &env);
    wait_ready(&http, &second.base).await;
    let read = format!("/api/v1/operator/withdrawals/{order_no}");
    // Past payout_inquire_after_seconds on the sandbox's clock: the
    // dispatcher finds the order sent without an answer and asks.
    operator(
        &http,
        &second,
        "POST",
        "/api/v1/sandbox/clock/advance",
        json!({"seconds": 61}),
    )
    .await;
    until(
        "the payout was inquired and carried on",
        Duration::from_secs(60),
        || async {
            operator(&http, &second, "GET", &read, json!({})).await["status"] == "processing"
        },
    )
    .await;
    sim_send(
        &http,
        &sim,
        "POST",
        &format!("payouts/{order_no}/settle"),
        json!({}),
    )
    .await;
    until("the payout completed", Duration::from_secs(60), || async {
        operator(&http, &second, "GET", &read, json!({})).await["status"] == "completed"
    })
    .await;

    let stats = sim_get(&http, &sim, "stats").await;
    assert_eq!(
        stats["payout_dispatches"], 1,
        "sent once, never again: {stats}"
    );
    assert!(stats["payout_inquiries"].as_u64().unwrap() >= 1, "{stats}");
    let payouts = sim_get(&http, &sim, "payouts").await;
    let payouts = payouts["payouts"].as_array().unwrap();
    assert_eq!(payouts.len(), 1, "one payout at the channel: {payouts:?}");
    assert_eq!(payouts[0]["order_no"], order_no.as_str());
    assert_eq!(payouts[0]["status"], "completed");
    let order = operator(&http, &second, "GET", &read, json!({})).await;
    assert_eq!(
        order["channel_order_no"],
        format!("SIMPO-{order_no}"),
        "{order}"
    );
    support::assert_ledger_clean(&http, &second).await;
    second.child.kill().unwrap();
    second.child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}
