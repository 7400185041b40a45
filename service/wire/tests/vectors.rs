//! The published signing test vectors (openapi/signing-test-vectors.json),
//! checked against the verification code the server runs.

use payments_wire::{sign, verify, SigningFields};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let text = include_str!("../../../openapi/signing-test-vectors.json");
    let doc: Value = serde_json::from_str(text).expect("the vectors file is JSON");
    doc["vectors"].as_array().expect("a vectors array").clone()
}

fn fields_of(v: &Value) -> SigningFields {
    match (v.get("body"), v.get("params")) {
        (Some(body), _) => {
            SigningFields::from_json_body(body.as_str().unwrap().as_bytes()).unwrap()
        }
        (None, Some(params)) => params
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect(),
        _ => panic!("a vector has a body or params: {v}"),
    }
}

#[test]
fn every_vector_canonicalizes_signs_and_verifies() {
    let vectors = vectors();
    assert!(vectors.len() >= 8, "the file holds the published vectors");
    for v in vectors {
        let description = v["description"].as_str().unwrap();
        let key = v["api_key"].as_str().unwrap();
        let fields = fields_of(&v);
        assert_eq!(
            fields.canonical(),
            v["canonical"].as_str().unwrap(),
            "{description}"
        );
        let expected = v["signature"].as_str().unwrap();
        assert_eq!(sign(&fields, key), expected, "{description}");
        assert!(verify(&fields, key, expected), "{description}");
        assert!(
            verify(&fields, key, &expected.to_uppercase()),
            "{description}: case-insensitive"
        );
        assert!(
            !verify(&fields, "another-key", expected),
            "{description}: wrong key"
        );
    }
}
