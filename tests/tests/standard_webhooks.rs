//! A `standard_webhooks` merchant's callback, delivered by the service's
//! own worker to a real receiver, verified with the Standard Webhooks
//! specification's library (the `standardwebhooks` crate: code nobody
//! here wrote). `.ci/clients` also hands this test, in
//! `PAYMENTS_DELIVERED_STANDARD`, a callback the released binary delivered
//! to the Python kit's receiver, so the crate checks that one too.

use conformance::receiver::{Answer, Receiver};
use payments_service::app::callbacks::signing;
use payments_service::app::deposits;
use payments_service::clock::SystemClock;
use payments_service::domain::status::CallbackScheme;
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::sync::Arc;
use std::time::Duration;

fn header_map<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        map.append(
            http::HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).unwrap(),
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}

#[tokio::test]
async fn a_delivered_callback_verifies_with_the_standard_webhooks_crate() {
    let service = TestService::start_with(Profile::Sandbox, Arc::new(SystemClock), |c| {
        c.callback_worker = true;
    })
    .await
    .unwrap();
    let app = service.service.app().clone();
    let receiver = Receiver::start().await.unwrap();
    receiver.otherwise(Answer::Status(200));
    let created = service.new_merchant("Standard").await.unwrap();
    let (issued, _) = signing::issue_secret(
        &app,
        &payments_testing::SET_UP,
        &created.merchant.id,
        Some(0),
    )
    .await
    .unwrap();
    let secret = issued.new_secret.expect("the first secret, shown once");
    signing::set_scheme(
        &app,
        &payments_testing::SET_UP,
        &created.merchant.id,
        CallbackScheme::StandardWebhooks,
    )
    .await
    .unwrap();

    let new = payments_testing::new_deposit("SW-1", Decimal::from(100), "THB", Some(&receiver.url));
    let order = deposits::create(&app, &created.merchant, new)
        .await
        .unwrap();
    deposits::complete(&app, &payments_testing::SET_UP, &order.order_no, None, None)
        .await
        .unwrap();
    let got = receiver.wait_for(1, Duration::from_secs(20)).await;
    let r = got.first().expect("the callback arrived");

    let headers = header_map(r.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    standardwebhooks::Webhook::new(&secret)
        .unwrap()
        .verify(r.body.as_bytes(), &headers)
        .expect("the crate verifies the delivered callback");
    assert!(r.header("x-api-key").is_none(), "{:?}", r.headers);
    assert!(!r.headers.iter().any(|(_, v)| v.contains(&created.api_key)));
    // An altered body does not verify: the check is not vacuous.
    let altered = format!("{} ", r.body);
    assert!(standardwebhooks::Webhook::new(&secret)
        .unwrap()
        .verify(altered.as_bytes(), &headers)
        .is_err());

    if let Ok(file) = std::env::var("PAYMENTS_DELIVERED_STANDARD") {
        verify_file(&file);
    }
}

/// `{"secret": ..., "headers": {name: value}, "body": ...}` as the Python
/// kit's smoke suite wrote it.
fn verify_file(file: &str) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let delivered: serde_json::Value = serde_json::from_str(&text).unwrap();
    let secret = delivered["secret"].as_str().unwrap();
    let body = delivered["body"].as_str().unwrap();
    let headers = header_map(
        delivered["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str().unwrap())),
    );
    standardwebhooks::Webhook::new(secret)
        .unwrap()
        .verify(body.as_bytes(), &headers)
        .expect("the crate verifies the callback the released binary delivered");
    println!("standardwebhooks (crates.io) verifies the callback in {file}");
}
