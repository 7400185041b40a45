//! Finding merchants without their id: by code, or by a part of the name.

use super::common::PaymentsWorld;
use conformance::{harness, RawRequest, Reply};
use cucumber::{given, then, when};
use serde_json::json;

async fn operator_call(
    world: &PaymentsWorld,
    method: &str,
    path: &str,
    query: Vec<(String, String)>,
    body: Option<String>,
) -> Reply {
    let h = harness().await;
    let token = h
        .operator_token
        .clone()
        .expect("this scenario needs CONFORMANCE_OPERATOR_TOKEN");
    let mut raw = RawRequest::new(world.merchant(), path.to_string());
    raw.method = Some(method.to_string());
    raw.query = query;
    raw.body = body;
    raw.headers = vec![("authorization".into(), format!("Bearer {token}"))];
    h.send(raw).await.expect("a reply from the service")
}

#[given(expr = "an operator has created a merchant named {string}")]
async fn made(world: &mut PaymentsWorld, name: String) {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let body = json!({"code": format!("m{}", &tag[..16]), "name": format!("{name} {}", &tag[..6])});
    let reply = operator_call(
        world,
        "POST",
        "/api/v1/operator/merchants",
        vec![],
        Some(body.to_string()),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    world.made_merchant = Some(body);
}

fn made_field(world: &PaymentsWorld, field: &str) -> String {
    world
        .made_merchant
        .as_ref()
        .expect("a merchant the scenario made")[field]
        .as_str()
        .expect("a text field")
        .to_string()
}

#[when("an operator looks for that merchant by its code")]
async fn by_code(world: &mut PaymentsWorld) {
    let code = made_field(world, "code");
    world.reply = Some(
        operator_call(
            world,
            "GET",
            "/api/v1/operator/merchants",
            vec![("q".into(), code)],
            None,
        )
        .await,
    );
}

#[when("an operator looks for that merchant by a part of its name in capitals")]
async fn by_name(world: &mut PaymentsWorld) {
    let name = made_field(world, "name");
    let part = name.rsplit(' ').next().expect("the tag").to_uppercase();
    world.reply = Some(
        operator_call(
            world,
            "GET",
            "/api/v1/operator/merchants",
            vec![("q".into(), part)],
            None,
        )
        .await,
    );
}

#[then("the merchant found is that one, and only that one")]
async fn found(world: &mut PaymentsWorld) {
    let (code, name) = (made_field(world, "code"), made_field(world, "name"));
    let reply = world.reply();
    assert_eq!(reply.status, 200, "{}", reply.body);
    let items = reply.body["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{}", reply.body);
    assert_eq!(items[0]["merchant_code"], code.as_str());
    assert_eq!(items[0]["name"], name.as_str());
    assert_eq!(items[0]["status"], "active");
}
