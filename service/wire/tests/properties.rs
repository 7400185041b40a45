//! Property: any change to a signed field, or to the key, makes
//! verification fail; an unsigned (null) field changes nothing.

use payments_wire::{sign, verify, SigningFields};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn body(fields: &BTreeMap<String, String>) -> String {
    serde_json::to_string(fields).unwrap()
}

fn field_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map("[a-z_]{1,12}", "\\PC{0,24}", 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn changing_a_value_breaks_the_signature(
        fields in field_map(),
        pick in any::<prop::sample::Index>(),
        replacement in "\\PC{0,24}",
        key in "[A-Za-z0-9_]{8,40}",
    ) {
        let signed = SigningFields::from_json_body(body(&fields).as_bytes()).unwrap();
        let signature = sign(&signed, &key);
        prop_assert!(verify(&signed, &key, &signature));

        let victim = pick.get(&fields.keys().cloned().collect::<Vec<_>>()).clone();
        prop_assume!(fields[&victim] != replacement);
        let mut altered = fields.clone();
        altered.insert(victim, replacement);
        let altered = SigningFields::from_json_body(body(&altered).as_bytes()).unwrap();
        prop_assert!(!verify(&altered, &key, &signature));
    }

    #[test]
    fn adding_or_removing_a_field_breaks_the_signature(
        fields in field_map(),
        extra_key in "[a-z_]{1,12}",
        extra_value in "\\PC{0,24}",
        key in "[A-Za-z0-9_]{8,40}",
    ) {
        prop_assume!(!fields.contains_key(&extra_key));
        let signed = SigningFields::from_json_body(body(&fields).as_bytes()).unwrap();
        let signature = sign(&signed, &key);
        let mut grown = fields.clone();
        grown.insert(extra_key.clone(), extra_value);
        let grown = SigningFields::from_json_body(body(&grown).as_bytes()).unwrap();
        prop_assert!(!verify(&grown, &key, &signature));
        if fields.len() > 1 {
            let mut shrunk = fields.clone();
            let first = shrunk.keys().next().cloned().unwrap();
            shrunk.remove(&first);
            let shrunk = SigningFields::from_json_body(body(&shrunk).as_bytes()).unwrap();
            prop_assert!(!verify(&shrunk, &key, &signature));
        }
    }

    #[test]
    fn changing_the_key_breaks_the_signature(
        fields in field_map(),
        key in "[A-Za-z0-9_]{8,40}",
        other in "[A-Za-z0-9_]{8,40}",
    ) {
        prop_assume!(key != other);
        let signed = SigningFields::from_json_body(body(&fields).as_bytes()).unwrap();
        prop_assert!(!verify(&signed, &other, &sign(&signed, &key)));
    }

    #[test]
    fn changing_a_number_as_sent_breaks_the_signature(
        units in 1u64..10_000_000,
        key in "[A-Za-z0-9_]{8,40}",
    ) {
        // 12.30 and 12.3 are the same amount but not the same signed text.
        let a = format!("{{\"amount\":{}.{:02}}}", units / 100, units % 100);
        let b = format!("{{\"amount\":{}.{:03}}}", units / 100, (units % 100) * 10);
        let fa = SigningFields::from_json_body(a.as_bytes()).unwrap();
        let fb = SigningFields::from_json_body(b.as_bytes()).unwrap();
        prop_assert!(!verify(&fb, &key, &sign(&fa, &key)));
    }
}
