//! Steps that move the sandbox clock to an order's `expire_at` and watch
//! what happens there.

use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::{then, when};
use merchant_client::sandbox::types as sb;
use std::time::Duration;

/// The created deposit's `expire_at`, in Unix seconds.
fn expire_at(world: &PaymentsWorld) -> i64 {
    let text = world.created()["expire_at"]
        .as_str()
        .expect("the created deposit has expire_at");
    chrono::DateTime::parse_from_rfc3339(text)
        .expect("expire_at is RFC 3339")
        .timestamp()
}

/// Moves the sandbox clock forward to `target` (Unix seconds), if it is
/// not there already.
async fn move_clock_to(world: &mut PaymentsWorld, target: i64) {
    let sandbox = harness().await.sandbox().unwrap();
    let now = sandbox
        .read_clock()
        .await
        .expect("the sandbox clock")
        .into_inner()
        .now_unix;
    if target > now {
        let reply = Reply::of(
            sandbox
                .advance_clock(&sb::AdvanceClockRequest {
                    seconds: target - now,
                })
                .await,
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        world.reply = Some(reply);
    }
}

#[when(expr = "the sandbox clock passes the deposit's expire_at by {int} second(s)")]
async fn past_expire_at(world: &mut PaymentsWorld, seconds: i64) {
    let target = expire_at(world) + seconds;
    move_clock_to(world, target).await;
}

#[when(expr = "the sandbox clock reaches {int} second(s) before the deposit's expire_at")]
async fn before_expire_at(world: &mut PaymentsWorld, seconds: i64) {
    let target = expire_at(world) - seconds;
    move_clock_to(world, target).await;
}

/// The deposit's status as the merchant reads it now.
async fn status_now(world: &PaymentsWorld) -> String {
    let order_no = world.created()["order_no"]
        .as_str()
        .expect("an order")
        .to_string();
    let client = harness().await.client(world.merchant());
    let order = client
        .get_deposit(&order_no)
        .await
        .expect("the deposit reads")
        .into_inner();
    serde_json::to_value(order.status)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

#[then(expr = "the deposit is still {string}")]
async fn still(world: &mut PaymentsWorld, status: String) {
    assert_eq!(status_now(world).await, status);
}

/// Nothing but the passing of time touches the order: the service expires
/// it at `expire_at` on its own, within a few seconds of real time (the
/// worker used to look every 15 s).
#[then(expr = "the deposit expires by itself within {int} seconds")]
async fn expires_within(world: &mut PaymentsWorld, seconds: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        let status = status_now(world).await;
        if status == "expired" {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still `{status}` {seconds} s after its expire_at"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
