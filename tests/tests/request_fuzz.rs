//! Fuzzing request parsing end to end: correctly signed POSTs whose bodies
//! are valid requests with fields swapped for JSON of any type, extra fields
//! added, fields dropped, or the bytes cut short. Whatever arrives, the
//! service answers 2xx or 4xx with the error envelope, never 5xx.
//! `PROPTEST_CASES` raises the case count for a long run.

use payments_service::clock::SystemClock;
use payments_service::Profile;
use payments_testing::TestService;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::sync::{Arc, OnceLock};

struct Target {
    runtime: tokio::runtime::Runtime,
    base: String,
    key: String,
    http: reqwest::Client,
    _service: TestService,
}

fn target() -> &'static Target {
    static TARGET: OnceLock<Target> = OnceLock::new();
    TARGET.get_or_init(|| {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (service, key) = runtime.block_on(async {
            let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
                .await
                .unwrap();
            let key = service.new_merchant("Fuzz").await.unwrap().api_key;
            (service, key)
        });
        Target {
            base: service.base_url(),
            key,
            http: reqwest::Client::new(),
            runtime,
            _service: service,
        }
    })
}

const ENDPOINTS: [(&str, &str); 3] = [
    (
        "/api/v1/merchant/orders/deposit",
        r#"{"merchant_order_no":"F-1","amount":100.50,"currency_code":"THB","callback_url":"http://127.0.0.1:9/cb","user_id":"u"}"#,
    ),
    (
        "/api/v1/merchant/orders/withdrawal",
        r#"{"merchant_order_no":"F-2","amount":10,"currency_code":"THB","beneficiary_name":"A B","beneficiary_account":"0123456789","beneficiary_bank_code":"SCB"}"#,
    ),
    (
        "/api/v1/merchant/orders/deposit/cashier",
        r#"{"order_type":"cashier","merchant_order_no":"F-3","currency_code":"BDT","payer_bank_cards":[{"bank_code":"KBANK","account_no":"1234"}]}"#,
    ),
];

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1.0e30..1.0e30f64).prop_map(|f| json!(f)),
        "\\PC{0,40}".prop_map(Value::String),
        "[0-9]{1,40}(\\.[0-9]{1,12})?"
            .prop_map(|s| serde_json::from_str(&s).unwrap_or(Value::Null)),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, Value),
    Drop(usize),
    Add(String, Value),
    Cut(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (0..8usize, any_json()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        1 => (0..8usize).prop_map(Mutation::Drop),
        1 => ("[a-z_]{1,12}", any_json()).prop_map(|(k, v)| Mutation::Add(k, v)),
        1 => (0..200usize).prop_map(Mutation::Cut),
    ]
}

fn mutate(template: &str, mutations: &[Mutation], unique: u64) -> Vec<u8> {
    let mut body: Map<String, Value> = serde_json::from_str(template).unwrap();
    // A fresh merchant_order_no, so each case is a new order, not a resend.
    if let Some(no) = body.get_mut("merchant_order_no") {
        *no = json!(format!("F{unique}"));
    }
    let mut cut = None;
    for m in mutations {
        let keys: Vec<String> = body.keys().cloned().collect();
        match m {
            Mutation::Replace(i, v) if !keys.is_empty() => {
                body.insert(keys[i % keys.len()].clone(), v.clone());
            }
            Mutation::Drop(i) if !keys.is_empty() => {
                body.remove(&keys[i % keys.len()]);
            }
            Mutation::Add(k, v) => {
                body.insert(k.clone(), v.clone());
            }
            Mutation::Cut(n) => cut = Some(*n),
            _ => {}
        }
    }
    let mut bytes = serde_json::to_vec(&Value::Object(body)).unwrap();
    if let Some(n) = cut {
        bytes.truncate(n % (bytes.len() + 1));
    }
    bytes
}

proptest! {
    #[test]
    fn no_body_makes_the_service_fail(
        endpoint in 0..ENDPOINTS.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
        unique in any::<u64>(),
    ) {
        let t = target();
        let (path, template) = ENDPOINTS[endpoint];
        let body = mutate(template, &mutations, unique);
        let fields = payments_wire::SigningFields::from_json_body(&body).unwrap_or_default();
        let signature = payments_wire::sign(&fields, &t.key);
        let (status, text) = t.runtime.block_on(async {
            let response = t
                .http
                .post(format!("{}{path}", t.base))
                .header("content-type", "application/json")
                .header("x-api-key", &t.key)
                .header("x-timestamp", chrono_now())
                .header("x-signature", signature)
                .body(body.clone())
                .send()
                .await
                .unwrap();
            (response.status().as_u16(), response.text().await.unwrap_or_default())
        });
        prop_assert!(status < 500, "{status} for {}: {text}", String::from_utf8_lossy(&body));
        if status >= 400 {
            let envelope: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            for field in ["request_id", "error_code", "message"] {
                prop_assert!(envelope[field].is_string(), "no {field} in {text}");
            }
        }
    }
}

fn chrono_now() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
        .to_string()
}
