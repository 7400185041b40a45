//! The published signing vectors, run through the generated client's
//! signing hook: what a merchant's client sends must be what the vectors
//! (and so the server) expect.

use merchant_client::merchant::{sign_hook, PATH_TEMPLATES};
use merchant_client::Credentials;
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let doc: Value =
        serde_json::from_str(include_str!("../../openapi/signing-test-vectors.json")).unwrap();
    doc["vectors"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_client_signs_every_vector_as_published() {
    let http = reqwest::Client::new();
    for v in vectors() {
        let description = v["description"].as_str().unwrap();
        let key = v["api_key"].as_str().unwrap();
        let credentials = Credentials::new(key).with_clock(|| 1_800_000_000);
        let mut request = match (v.get("body"), v.get("params")) {
            (Some(body), _) => http
                .post("http://127.0.0.1:1/api/v1/merchant/orders/deposit")
                .body(body.as_str().unwrap().to_string())
                .build()
                .unwrap(),
            (None, Some(params)) => {
                // A vector that gives its request's path is sent as given
                // (its query percent-encoded); the older ones name a path
                // parameter or none.
                let url = match (
                    v["path"].as_str(),
                    params.get("order_no").and_then(Value::as_str),
                ) {
                    (Some(path), _) => format!("http://127.0.0.1:1{path}"),
                    (None, Some(order_no)) => {
                        format!("http://127.0.0.1:1/api/v1/merchant/query/deposit/{order_no}")
                    }
                    (None, None) => "http://127.0.0.1:1/api/v1/merchant/balance".to_string(),
                };
                http.get(url).build().unwrap()
            }
            _ => panic!("bad vector {v}"),
        };
        sign_hook(&credentials, &mut request).await.unwrap();
        let header = |name: &str| request.headers()[name].to_str().unwrap().to_string();
        assert_eq!(
            header("x-signature"),
            v["signature"].as_str().unwrap(),
            "{description}"
        );
        assert_eq!(header("x-api-key"), key, "{description}");
        assert_eq!(header("x-timestamp"), "1800000000", "{description}");
    }
    assert!(PATH_TEMPLATES.contains(&"/api/v1/merchant/query/deposit/{order_no}"));
}

#[tokio::test]
async fn query_parameters_are_signed_by_the_client() {
    let credentials = Credentials::new("k");
    let mut request = reqwest::Client::new()
        .get("http://127.0.0.1:1/api/v1/merchant/query/deposit?merchant_order_no=A-1")
        .build()
        .unwrap();
    sign_hook(&credentials, &mut request).await.unwrap();
    let fields: payments_wire::SigningFields = [("merchant_order_no", "A-1")].into_iter().collect();
    assert_eq!(
        request.headers()["x-signature"].to_str().unwrap(),
        payments_wire::sign(&fields, "k")
    );
}
