//! A merchant's side of a callback: check the headers, the timestamp (when
//! asked) and the signature over the raw body before trusting a byte of it.

use crate::signature::{verify as verify_signature, SigningFields};
use serde_json::Value;

/// The three headers a callback carries, as the receiver's framework gives
/// them.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallbackHeaders<'a> {
    pub api_key: Option<&'a str>,
    pub timestamp: Option<&'a str>,
    pub signature: Option<&'a str>,
}

/// How strict to be beyond the signature.
#[derive(Clone, Copy, Debug, Default)]
pub struct VerifyOptions {
    /// Refuse a callback whose `X-Timestamp` is further than this from
    /// `now` (seconds). Retries carry a fresh timestamp, so a window of a
    /// few minutes is safe.
    pub max_skew_seconds: Option<i64>,
    /// The receiver's time, Unix seconds; required with a window.
    pub now: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    #[error("the `{0}` header is missing")]
    MissingHeader(&'static str),
    #[error("`x-api-key` is not this merchant's key")]
    WrongApiKey,
    #[error("`x-timestamp` is not Unix seconds")]
    BadTimestamp,
    #[error("`x-timestamp` is {skew} seconds from now; at most {allowed} is allowed")]
    StaleTimestamp { skew: i64, allowed: i64 },
    #[error("the signature does not match the body")]
    BadSignature,
    #[error("the body is not a callback: {0}")]
    Body(String),
    #[error("unknown event `{0}`")]
    UnknownEvent(String),
}

/// What every verified callback tells, whatever its event: enough to route
/// it and to deduplicate by (`order_no`, `status`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub event: String,
    pub order_no: String,
    pub status: String,
}

/// Verifies a callback. `body` must be the raw bytes as received, not a
/// re-serialization: the signature covers the numbers and strings as sent.
pub fn verify(
    headers: &CallbackHeaders<'_>,
    body: &[u8],
    api_key: &str,
    options: &VerifyOptions,
) -> Result<Verified, CallbackError> {
    let sent_key = headers
        .api_key
        .ok_or(CallbackError::MissingHeader("x-api-key"))?;
    let timestamp = headers
        .timestamp
        .ok_or(CallbackError::MissingHeader("x-timestamp"))?;
    let signature = headers
        .signature
        .ok_or(CallbackError::MissingHeader("x-signature"))?;
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        sent_key.as_bytes(),
        api_key.as_bytes(),
    )) {
        return Err(CallbackError::WrongApiKey);
    }
    let sent_at: i64 = timestamp.parse().map_err(|_| CallbackError::BadTimestamp)?;
    if let (Some(allowed), Some(now)) = (options.max_skew_seconds, options.now) {
        let skew = now.saturating_sub(sent_at).saturating_abs();
        if skew > allowed {
            return Err(CallbackError::StaleTimestamp { skew, allowed });
        }
    }
    let fields =
        SigningFields::from_json_body(body).map_err(|e| CallbackError::Body(e.to_string()))?;
    if !verify_signature(&fields, api_key, signature) {
        return Err(CallbackError::BadSignature);
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|e| CallbackError::Body(e.to_string()))?;
    let text = |name: &str| {
        value[name]
            .as_str()
            .map(String::from)
            .ok_or_else(|| CallbackError::Body(format!("no `{name}`")))
    };
    Ok(Verified {
        event: text("event")?,
        order_no: text("order_no")?,
        status: text("status")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk_test_k";
    const BODY: &[u8] = br#"{"event":"deposit.completed","order_no":"D1","merchant_order_no":"M1","amount":"100.0000","actual_amount":"100.0000","currency":"THB","status":"completed","matched_at":null,"completed_at":"2026-11-22T10:00:00Z"}"#;

    fn signed() -> String {
        crate::sign(&SigningFields::from_json_body(BODY).unwrap(), KEY)
    }

    #[test]
    fn a_true_callback_verifies_and_a_tampered_one_does_not() {
        let sig = signed();
        let headers = CallbackHeaders {
            api_key: Some(KEY),
            timestamp: Some("1800000000"),
            signature: Some(&sig),
        };
        let ok = verify(&headers, BODY, KEY, &VerifyOptions::default()).unwrap();
        assert_eq!(
            (ok.event.as_str(), ok.order_no.as_str(), ok.status.as_str()),
            ("deposit.completed", "D1", "completed")
        );
        let tampered =
            String::from_utf8_lossy(BODY).replace("100.0000\",\"currency", "900.0000\",\"currency");
        assert_eq!(
            verify(
                &headers,
                tampered.as_bytes(),
                KEY,
                &VerifyOptions::default()
            ),
            Err(CallbackError::BadSignature)
        );
        assert_eq!(
            verify(&headers, BODY, "sk_test_other", &VerifyOptions::default()),
            Err(CallbackError::WrongApiKey)
        );
        let window = VerifyOptions {
            max_skew_seconds: Some(300),
            now: Some(1_800_000_301),
        };
        assert_eq!(
            verify(&headers, BODY, KEY, &window),
            Err(CallbackError::StaleTimestamp {
                skew: 301,
                allowed: 300
            })
        );
        let missing = CallbackHeaders {
            signature: None,
            ..headers
        };
        assert_eq!(
            verify(&missing, BODY, KEY, &VerifyOptions::default()),
            Err(CallbackError::MissingHeader("x-signature"))
        );
    }
}
