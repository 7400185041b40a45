//! Fuzzing the signing input: any bytes are read without a panic, and for
//! any JSON object the canonical string is what an independent model of the
//! seed's steps says it is (keys sorted, nulls left out, strings decoded,
//! numbers as sent, arrays and objects as compact JSON), whatever the
//! whitespace the sender used. `PROPTEST_CASES` raises the case count for a
//! long run.

use payments_wire::SigningFields;
use proptest::prelude::*;
use serde_json::{Map, Value};

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1.0e12..1.0e12f64)
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "\\PC{0,16}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[A-Za-z0-9_]{1,12}", value(), 0..8)
        .prop_map(|m| m.into_iter().collect())
}

/// The seed's steps, written apart from the crate's code.
fn model(fields: &Map<String, Value>) -> String {
    let mut pairs: Vec<(String, String)> = fields
        .iter()
        .filter_map(|(k, v)| {
            let text = match v {
                Value::Null => return None,
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                other => serde_json::to_string(other).ok()?,
            };
            Some((k.clone(), text))
        })
        .collect();
    pairs.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

proptest! {
    #[test]
    fn any_bytes_are_read_without_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = SigningFields::from_json_body(&bytes);
    }

    #[test]
    fn almost_json_is_read_without_a_panic(text in "[{}\\[\\]\":,0-9a-z .eE+-]{0,64}") {
        let _ = SigningFields::from_json_body(text.as_bytes());
    }

    #[test]
    fn the_canonical_string_follows_the_seed_whatever_the_whitespace(fields in object(), pretty in any::<bool>()) {
        let body = if pretty {
            serde_json::to_string_pretty(&Value::Object(fields.clone())).unwrap()
        } else {
            serde_json::to_string(&Value::Object(fields.clone())).unwrap()
        };
        let parsed = SigningFields::from_json_body(body.as_bytes()).unwrap();
        prop_assert_eq!(parsed.canonical(), model(&fields));
    }

    #[test]
    fn a_duplicated_key_is_refused_not_merged(key in "[a-z]{1,8}", a in any::<i32>(), b in any::<i32>()) {
        let body = format!(r#"{{"{key}":{a},"{key}":{b}}}"#);
        prop_assert!(SigningFields::from_json_body(body.as_bytes()).is_err());
    }
}
