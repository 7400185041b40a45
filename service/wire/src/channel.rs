//! How a channel's adapter and the service sign what they send each other
//! (`openapi/channel.json`): HMAC-SHA256 under the channel's secret over the
//! timestamp, the method, the path and the body. Both sides use these two
//! functions, so neither can drift from the other.

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const HEADER_TIMESTAMP: &str = "x-channel-timestamp";
pub const HEADER_SIGNATURE: &str = "x-channel-signature";
/// How far a timestamp may be from the receiver's clock, either way.
pub const WINDOW_SECONDS: i64 = 300;

/// Why a signed request was refused; says which check failed, never the
/// values (a signature in a message is a signature in a log).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelAuthError {
    #[error("the {0} header is missing")]
    MissingHeader(&'static str),
    #[error("x-channel-timestamp is not Unix seconds or is more than {WINDOW_SECONDS} s from the receiver's clock")]
    StaleTimestamp,
    #[error("x-channel-signature does not match the request")]
    InvalidSignature,
}

impl ChannelAuthError {
    /// The protocol's `error_code` for it.
    pub fn code(&self) -> &'static str {
        match self {
            ChannelAuthError::MissingHeader(_) => "MISSING_HEADER",
            ChannelAuthError::StaleTimestamp => "STALE_TIMESTAMP",
            ChannelAuthError::InvalidSignature => "INVALID_SIGNATURE",
        }
    }
}

fn mac(secret: &[u8], timestamp: &str, method: &str, path: &str, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
    for part in [timestamp.as_bytes(), method.as_bytes(), path.as_bytes()] {
        mac.update(part);
        mac.update(b"\n");
    }
    mac.update(body);
    mac
}

/// `x-channel-signature` for a request: lowercase hex.
pub fn sign(secret: &[u8], timestamp: i64, method: &str, path: &str, body: &[u8]) -> String {
    let method = method.to_ascii_uppercase();
    hex::encode(
        mac(secret, &timestamp.to_string(), &method, path, body)
            .finalize()
            .into_bytes(),
    )
}

/// Checks a received request's headers against its method, path (with
/// query, without the adapter's base path) and body bytes, at `now` (Unix
/// seconds). The comparison is constant-time.
pub fn verify(
    secret: &[u8],
    timestamp: Option<&str>,
    signature: Option<&str>,
    method: &str,
    path: &str,
    body: &[u8],
    now: i64,
) -> Result<(), ChannelAuthError> {
    let timestamp = timestamp.ok_or(ChannelAuthError::MissingHeader(HEADER_TIMESTAMP))?;
    let signature = signature.ok_or(ChannelAuthError::MissingHeader(HEADER_SIGNATURE))?;
    let at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| ChannelAuthError::StaleTimestamp)?;
    if (now - at).abs() > WINDOW_SECONDS {
        return Err(ChannelAuthError::StaleTimestamp);
    }
    let claimed = hex::decode(signature.trim()).map_err(|_| ChannelAuthError::InvalidSignature)?;
    let method = method.to_ascii_uppercase();
    mac(secret, timestamp.trim(), &method, path, body)
        .verify_slice(&claimed)
        .map_err(|_| ChannelAuthError::InvalidSignature)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"an adapter secret of at least 32 bytes";

    #[test]
    fn a_signed_request_verifies_and_any_change_refuses_it() {
        let body = br#"{"order_no":"W1","amount":"500.0000"}"#;
        let sig = sign(SECRET, 1_700_000_000, "post", "/payouts", body);
        let ok = |sig: &str, method: &str, path: &str, body: &[u8], now: i64| {
            verify(
                SECRET,
                Some("1700000000"),
                Some(sig),
                method,
                path,
                body,
                now,
            )
        };
        assert_eq!(ok(&sig, "POST", "/payouts", body, 1_700_000_100), Ok(()));
        assert_eq!(
            ok(&sig.to_uppercase(), "POST", "/payouts", body, 1_700_000_000),
            Ok(())
        );
        let refused = Err(ChannelAuthError::InvalidSignature);
        assert_eq!(ok(&sig, "GET", "/payouts", body, 1_700_000_000), refused);
        assert_eq!(
            ok(&sig, "POST", "/payouts/W1", body, 1_700_000_000),
            refused
        );
        assert_eq!(ok(&sig, "POST", "/payouts", b"{}", 1_700_000_000), refused);
        assert_eq!(ok("zz", "POST", "/payouts", body, 1_700_000_000), refused);
        assert_eq!(
            ok(&sig, "POST", "/payouts", body, 1_700_000_301),
            Err(ChannelAuthError::StaleTimestamp)
        );
        assert_eq!(
            verify(SECRET, None, Some(&sig), "POST", "/payouts", body, 0),
            Err(ChannelAuthError::MissingHeader(HEADER_TIMESTAMP))
        );
    }

    #[test]
    fn the_signed_content_is_timestamp_method_path_and_body_on_lines() {
        // Computed independently: printf '1700000000\nGET\n/payouts/W1\n' |
        //   openssl dgst -sha256 -hmac 'an adapter secret of at least 32 bytes'
        assert_eq!(
            sign(SECRET, 1_700_000_000, "GET", "/payouts/W1", b""),
            "1ff539c8f1b6b5ae371e3c9898542403945640bf79e6bdfaca37c98d47ac6403"
        );
    }
}
