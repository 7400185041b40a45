//! Steps that ask what a load balancer or an orchestrator asks of a
//! deployment: unauthenticated, outside the merchant contract.

use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::when;

#[when(expr = "a probe asks {string}")]
async fn probe_asks(world: &mut PaymentsWorld, path: String) {
    let harness = harness().await;
    let response = harness
        .http
        .get(format!("{}{path}", harness.base_url()))
        .send()
        .await
        .expect("the deployment answers");
    world.reply = Some(Reply::from_response(response).await.expect("a JSON body"));
}
