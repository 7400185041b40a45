//! The signature scheme of the seed: the signed fields sorted by key, joined
//! as `k=v&k=v`, the API key appended, MD5, lowercase hex.
//!
//! Which fields are signed: for a request with a JSON body, its top-level
//! fields; for a GET, its path and query parameters; for a callback, its
//! body's top-level fields. How a JSON value becomes the text `v`:
//! null is skipped, a string contributes its (unescaped) value, a number its
//! JSON text exactly as sent, a boolean `true`/`false`, an array or object its
//! JSON text as sent with the whitespace outside strings removed.

use md5::{Digest, Md5};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt;
use subtle::ConstantTimeEq;

/// The set of fields a signature covers, kept sorted by key (byte order,
/// which is ASCII order for the keys this interface uses).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SigningFields(BTreeMap<String, String>);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SigningFieldsError {
    #[error("the request body is not valid JSON: {0}")]
    InvalidJson(String),
    #[error("the request body must be a JSON object")]
    NotAnObject,
    #[error("the field `{0}` appears more than once in the request body")]
    DuplicateField(String),
}

impl SigningFields {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one field; a `None` value is skipped, as a JSON null is.
    pub fn insert(&mut self, key: impl Into<String>, value: Option<String>) {
        if let Some(value) = value {
            self.0.insert(key.into(), value);
        }
    }

    /// The top-level fields of a JSON object, each turned into its signing
    /// text. Works on the raw bytes so that a number signs as it was sent
    /// (`100.10` stays `100.10`), which a round trip through f64 would lose.
    pub fn from_json_body(body: &[u8]) -> Result<Self, SigningFieldsError> {
        let text = std::str::from_utf8(body)
            .map_err(|e| SigningFieldsError::InvalidJson(e.to_string()))?;
        let trimmed = text.trim_start();
        if !trimmed.starts_with('{') {
            // Distinguish "valid JSON of the wrong shape" from garbage.
            return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Ok(_) => Err(SigningFieldsError::NotAnObject),
                Err(e) => Err(SigningFieldsError::InvalidJson(e.to_string())),
            };
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let raw = de
            .deserialize_map(RawFieldsVisitor)
            .map_err(|e| match e.to_string() {
                m if m.starts_with(DUPLICATE_PREFIX) => SigningFieldsError::DuplicateField(
                    m.trim_start_matches(DUPLICATE_PREFIX)
                        .split(' ')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                ),
                m => SigningFieldsError::InvalidJson(m),
            })?;
        de.end()
            .map_err(|e| SigningFieldsError::InvalidJson(e.to_string()))?;
        let mut fields = SigningFields::new();
        for (key, value) in raw {
            fields.insert(key, signing_text(value.get())?);
        }
        Ok(fields)
    }

    /// `k1=v1&k2=v2&...` in ascending key order.
    pub fn canonical(&self) -> String {
        let mut out = String::new();
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push('&');
            }
            out.push_str(k);
            out.push('=');
            out.push_str(v);
        }
        out
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for SigningFields {
    fn from_iter<T: IntoIterator<Item = (K, V)>>(iter: T) -> Self {
        SigningFields(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

const DUPLICATE_PREFIX: &str = "duplicate field in signed body: ";

struct RawFieldsVisitor;

impl<'de> Visitor<'de> for RawFieldsVisitor {
    type Value = Vec<(String, &'de RawValue)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(String, &'de RawValue)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value: &'de RawValue = map.next_value()?;
            // A duplicate key could be signed as one value and parsed as
            // another; refuse it instead of choosing.
            if out.iter().any(|(k, _)| *k == key) {
                return Err(serde::de::Error::custom(format!("{DUPLICATE_PREFIX}{key}")));
            }
            out.push((key, value));
        }
        Ok(out)
    }
}

/// The text one JSON value contributes to the signing string, or `None` for
/// a null (skipped).
fn signing_text(raw: &str) -> Result<Option<String>, SigningFieldsError> {
    let raw = raw.trim();
    match raw.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(raw)
            .map(Some)
            .map_err(|e| SigningFieldsError::InvalidJson(e.to_string())),
        Some(b'[') | Some(b'{') => Ok(Some(compact_json(raw))),
        _ if raw == "null" => Ok(None),
        _ => Ok(Some(raw.to_string())),
    }
}

/// Removes the whitespace outside strings, keeping every other byte (number
/// text, escapes) exactly as sent.
fn compact_json(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in raw.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

/// The signature of `fields` under `api_key`: lowercase hex MD5 of the
/// canonical string with the key appended.
pub fn sign(fields: &SigningFields, api_key: &str) -> String {
    let mut hasher = Md5::new();
    hasher.update(fields.canonical().as_bytes());
    hasher.update(api_key.as_bytes());
    hex::encode(hasher.finalize())
}

/// Compares `provided` with the expected signature in constant time,
/// ignoring ASCII case on both sides.
pub fn verify(fields: &SigningFields, api_key: &str, provided: &str) -> bool {
    let expected = sign(fields, api_key);
    let provided = provided.trim().to_ascii_lowercase();
    // Lengths are public (always 32 for a well-formed signature); the
    // content comparison is what must not leak.
    expected.as_bytes().ct_eq(provided.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_sign_as_sent() {
        let f =
            SigningFields::from_json_body(br#"{"amount": 100.10, "b": null, "a": "x y"}"#).unwrap();
        assert_eq!(f.canonical(), "a=x y&amount=100.10");
    }

    #[test]
    fn nested_values_sign_as_compact_json() {
        let f = SigningFields::from_json_body(
            br#"{"cards": [ {"bank_code" : "KBANK", "note": "a b\" c"} ], "ok": true}"#,
        )
        .unwrap();
        assert_eq!(
            f.canonical(),
            r#"cards=[{"bank_code":"KBANK","note":"a b\" c"}]&ok=true"#
        );
    }

    #[test]
    fn duplicate_fields_are_refused() {
        assert_eq!(
            SigningFields::from_json_body(br#"{"a": "1", "a": "2"}"#),
            Err(SigningFieldsError::DuplicateField("a".into()))
        );
    }

    #[test]
    fn non_objects_are_refused() {
        assert_eq!(
            SigningFields::from_json_body(b"[1,2]"),
            Err(SigningFieldsError::NotAnObject)
        );
        assert!(matches!(
            SigningFields::from_json_body(b"{nope"),
            Err(SigningFieldsError::InvalidJson(_))
        ));
    }

    #[test]
    fn comparison_ignores_case() {
        let f: SigningFields = [("a", "1")].into_iter().collect();
        let sig = sign(&f, "k").to_ascii_uppercase();
        assert!(verify(&f, "k", &sig));
        assert!(!verify(&f, "other", &sig));
    }
}
