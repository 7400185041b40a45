//! The API reference at `/docs` in headless Chromium: the merchant contract
//! as a person reads it, rendered from what the service itself serves. Every
//! operation and every callback event of `openapi/merchant.json` is on the
//! page as visible text, with no host but the service's reachable. A
//! screenshot lands in `target/docs-screenshots/`.

#[allow(dead_code)] // this page is read, not clicked
mod browser;

use browser::Browser;
use payments_service::clock::SystemClock;
use payments_service::Profile;
use payments_testing::TestService;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long the renderer may take to lay the contract out.
const RENDER: Duration = Duration::from_secs(30);

fn contract() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../openapi/merchant.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Each operation's summary, and each callback event's `event` value (the
/// union's discriminator mapping names them; Redoc shows those).
fn what_a_reader_must_see(doc: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut operations = BTreeSet::new();
    let mut events = BTreeSet::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let Some(summary) = operation["summary"].as_str() else {
                continue;
            };
            operations.insert(summary.to_string());
            for callback in operation["callbacks"].as_object().into_iter().flatten() {
                for expression in callback.1.as_object().unwrap().values() {
                    let schema =
                        &expression["post"]["requestBody"]["content"]["application/json"]["schema"];
                    let union = schema["$ref"]
                        .as_str()
                        .and_then(|r| r.strip_prefix('#'))
                        .and_then(|pointer| doc.pointer(pointer))
                        .unwrap_or(schema);
                    let mapping = union["discriminator"]["mapping"].as_object();
                    events.extend(
                        mapping
                            .into_iter()
                            .flatten()
                            .map(|(event, _)| event.clone()),
                    );
                    assert_eq!(
                        mapping.map(|m| m.len()),
                        union["oneOf"].as_array().map(|v| v.len()),
                        "every variant of a callback union is named by its mapping"
                    );
                }
            }
        }
    }
    (operations, events)
}

#[tokio::test]
async fn the_reference_page_shows_every_operation_and_callback_event_from_the_service_alone() {
    let doc = contract();
    let (operations, events) = what_a_reader_must_see(&doc);
    assert!(operations.len() >= 8, "{operations:?}");
    assert!(events.len() >= 8, "{events:?}");

    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let shots = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/docs-screenshots"
    ));
    let b = Browser::start(1280, 900, 1, &shots).await.unwrap();
    b.goto(&format!("{}/docs", service.base_url()))
        .await
        .unwrap();
    let first = operations.iter().next().unwrap();
    b.wait_for_text(".api-content", first, RENDER)
        .await
        .unwrap();

    // innerText is what is laid out to be seen, not what is hidden.
    let seen = b
        .script("return document.querySelector('.api-content').innerText;")
        .await
        .unwrap();
    let seen = seen.as_str().unwrap();
    let title = doc["info"]["title"].as_str().unwrap();
    assert!(seen.contains(title), "the title {title:?}");
    for summary in &operations {
        assert!(seen.contains(summary.as_str()), "operation {summary:?}");
    }
    for event in &events {
        assert!(seen.contains(event.as_str()), "callback event {event:?}");
    }

    // The contract came from the service, and nothing on the page shows
    // anything loaded from elsewhere (a link out is no load): the browser resolves no other host, and the
    // page's policy refuses them (Redoc's own logo from its CDN is refused
    // and takes itself away).
    let loaded = b
        .script("return performance.getEntriesByType('resource').map(e => e.name);")
        .await
        .unwrap();
    assert!(
        loaded
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .any(|u| u == format!("{}/api/v1/merchant/openapi.json", service.base_url())),
        "{loaded}"
    );
    let elsewhere = b
        .script(
            "return Array.from(document.querySelectorAll('img[src],script[src],link[href],iframe[src],source[src]'))\
             .map(e => e.src || e.href)\
             .filter(u => !u.startsWith(location.origin) && !u.startsWith('data:')\
                 && !u.startsWith('blob:') && !u.startsWith('javascript:'));",
        )
        .await
        .unwrap();
    assert_eq!(elsewhere, serde_json::json!([]), "shown from elsewhere");
    b.screenshot("docs.png").await.unwrap();
    b.quit().await.unwrap();
}
