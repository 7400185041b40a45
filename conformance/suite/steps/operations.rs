//! Steps that ask what a load balancer or an orchestrator asks of a
//! deployment: unauthenticated, outside the merchant contract.

use super::common::PaymentsWorld;
use conformance::{harness, Reply};
use cucumber::{then, when};

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

#[then("every published version of the merchant contract is served as it says")]
async fn every_published_version_is_served(world: &mut PaymentsWorld) {
    let list = world.reply().body.clone();
    let blessed = list["blessed"]
        .as_array()
        .expect("a list of versions")
        .clone();
    assert!(
        !blessed.is_empty(),
        "at least one published version: {list}"
    );
    let harness = harness().await;
    let get = |path: String| async move {
        harness
            .http
            .get(format!("{}{path}", harness.base_url()))
            .send()
            .await
            .expect("the deployment answers")
            .json::<serde_json::Value>()
            .await
            .expect("a JSON document")
    };
    for version in &blessed {
        let version = version.as_str().expect("a version");
        let doc = get(format!("/api/v1/merchant/openapi/{version}.json")).await;
        assert_eq!(doc["info"]["version"], version, "version {version}");
        assert_eq!(doc["openapi"], "3.0.3");
    }
    let current = get("/api/v1/merchant/openapi/current.json".into()).await;
    assert_eq!(current, get("/api/v1/merchant/openapi.json".into()).await);
    assert_eq!(current["info"]["version"], list["current"]);
}
