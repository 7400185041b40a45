//! Field checks shared by the create endpoints; each error names its field.

use crate::error::ApiError;
use crate::routing::Profile;

pub const CALLBACK_URL_MAX: usize = 2048;

/// An optional free-text field: trimmed of nothing, refused when too long
/// or holding control characters.
pub fn optional_text(
    field: &str,
    value: Option<String>,
    max: usize,
) -> Result<Option<String>, ApiError> {
    match value {
        None => Ok(None),
        Some(v) => {
            if v.chars().count() > max {
                return Err(ApiError::invalid_field(
                    field,
                    format!("must be at most {max} characters"),
                ));
            }
            if v.chars().any(|c| c.is_control()) {
                return Err(ApiError::invalid_field(
                    field,
                    "must not contain control characters",
                ));
            }
            Ok(Some(v))
        }
    }
}

/// An email address as people and mailers write one, lower-cased: a local
/// part, `@`, a domain with a dot, no white space, at most 254 characters.
pub fn email(field: &str, value: String) -> Result<String, ApiError> {
    let value = required_text(field, value, 254)?;
    let valid = value
        .split_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.'))
        && !value.chars().any(char::is_whitespace);
    if !valid {
        return Err(ApiError::invalid_field(field, "is not an email address"));
    }
    Ok(value.to_lowercase())
}

pub fn required_text(field: &str, value: String, max: usize) -> Result<String, ApiError> {
    if value.trim().is_empty() {
        return Err(ApiError::invalid_field(field, "must not be empty"));
    }
    Ok(optional_text(field, Some(value), max)?.unwrap_or_default())
}

pub fn callback_url(profile: Profile, value: Option<String>) -> Result<Option<String>, ApiError> {
    merchant_url("callback_url", profile, value)
}

/// The merchant's page the payer is sent back to: the same rule as a
/// callback URL, since production pages link only to https.
pub fn return_url(profile: Profile, value: Option<String>) -> Result<Option<String>, ApiError> {
    merchant_url("return_url", profile, value)
}

/// An absolute http(s) URL a merchant gives: https only in production, a
/// host, no credentials, at most `CALLBACK_URL_MAX` characters.
fn merchant_url(
    field: &'static str,
    profile: Profile,
    value: Option<String>,
) -> Result<Option<String>, ApiError> {
    let Some(raw) = value else { return Ok(None) };
    if raw.len() > CALLBACK_URL_MAX {
        return Err(ApiError::invalid_field(
            field,
            format!("must be at most {CALLBACK_URL_MAX} characters"),
        ));
    }
    let url = url::Url::parse(&raw)
        .map_err(|e| ApiError::invalid_field(field, format!("must be an absolute URL ({e})")))?;
    match (url.scheme(), profile) {
        ("https", _) | ("http", Profile::Sandbox) => {}
        ("http", Profile::Production) => {
            return Err(ApiError::invalid_field(
                field,
                "must use https in production",
            ))
        }
        (other, _) => {
            return Err(ApiError::invalid_field(
                field,
                format!("must use http or https, not `{other}`"),
            ))
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ApiError::invalid_field(field, "must name a host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ApiError::invalid_field(field, "must not carry credentials"));
    }
    Ok(Some(raw))
}

/// Money that arrived: more than zero, no finer than the currency allows.
/// Not bounded by the currency's order limits: what a payer sent is what
/// arrived, and it is credited as such.
pub fn paid_amount(
    field: &str,
    value: rust_decimal::Decimal,
    fraction_digits: u32,
) -> Result<rust_decimal::Decimal, ApiError> {
    if value <= rust_decimal::Decimal::ZERO || value.normalize().scale() > fraction_digits {
        return Err(ApiError::invalid_field(
            field,
            format!("must be greater than zero with at most {fraction_digits} fraction digits"),
        ));
    }
    crate::money::to_units(value).ok_or_else(|| ApiError::invalid_field(field, "is too large"))?;
    Ok(value)
}

/// An account number: 1 to 64 characters of letters, digits or `-`.
/// A person who completes or matches a deposit for an amount other than
/// the order's says why: the refusal names the difference, so that 333
/// received against 100 ordered is seen before it is credited.
pub fn reason_for_difference(
    currency: &str,
    ordered: rust_decimal::Decimal,
    received: rust_decimal::Decimal,
    remarks: Option<&str>,
) -> Result<(), ApiError> {
    if received == ordered || remarks.is_some_and(|r| !r.trim().is_empty()) {
        return Ok(());
    }
    let four = |mut d: rust_decimal::Decimal| {
        d.rescale(4);
        d
    };
    let difference = four(received - ordered);
    let sign = if difference.is_sign_positive() {
        "+"
    } else {
        ""
    };
    Err(ApiError::invalid_field(
        "remarks",
        format!(
            "{} {currency} against the order's {} {currency} is a difference of {sign}{difference} {currency}: give the reason in remarks",
            four(received),
            four(ordered)
        ),
    ))
}

pub fn account_number(field: &str, value: String) -> Result<String, ApiError> {
    let ok = !value.is_empty()
        && value.len() <= 64
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !ok {
        return Err(ApiError::invalid_field(
            field,
            "must be 1 to 64 characters of A-Z, a-z, 0-9 or `-`",
        ));
    }
    Ok(value)
}

/// The last four characters of an account number: all that is kept of a
/// payer's, and all a log line may show of anyone's.
pub fn last4(account_no: &str) -> String {
    let skip = account_no.chars().count().saturating_sub(4);
    account_no.chars().skip(skip).collect()
}

/// A bank or similar code: 1 to 32 characters of letters, digits, `_` or `-`.
pub fn code(field: &str, value: String) -> Result<String, ApiError> {
    let ok = !value.is_empty()
        && value.len() <= 32
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !ok {
        return Err(ApiError::invalid_field(
            field,
            "must be 1 to 32 characters of A-Z, a-z, 0-9, `_` or `-`",
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_difference_needs_a_reason_and_is_named() {
        let d = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
        assert!(reason_for_difference("THB", d("100"), d("100.00"), None).is_ok());
        assert!(reason_for_difference("THB", d("100"), d("333"), Some("overpaid")).is_ok());
        let err = reason_for_difference("THB", d("100"), d("333"), Some(" ")).unwrap_err();
        assert!(err.to_string().contains("+233.0000 THB"), "{err}");
        let err = reason_for_difference("THB", d("100"), d("90"), None).unwrap_err();
        assert!(err.to_string().contains("of -10.0000 THB"), "{err}");
    }

    #[test]
    fn last_four_of_short_and_long_numbers() {
        assert_eq!(last4("1234567890"), "7890");
        assert_eq!(last4("12"), "12");
        assert_eq!(last4("๑๒๓๔๕"), "๒๓๔๕");
    }

    use super::*;

    #[test]
    fn callback_urls() {
        let ok = |p, u: &str| callback_url(p, Some(u.to_string())).is_ok();
        assert!(ok(Profile::Sandbox, "http://127.0.0.1:9000/cb"));
        assert!(!ok(Profile::Production, "http://example.com/cb"));
        assert!(ok(Profile::Production, "https://example.com/cb"));
        assert!(!ok(Profile::Sandbox, "ftp://example.com/cb"));
        assert!(!ok(Profile::Sandbox, "/relative"));
        assert!(!ok(Profile::Sandbox, "https://user:pw@example.com/"));
    }

    #[test]
    fn return_urls_are_links_only_to_web_pages() {
        let check = |p, u: &str| return_url(p, Some(u.to_string()));
        assert!(check(Profile::Sandbox, "http://127.0.0.1:9000/done").is_ok());
        assert!(check(Profile::Production, "https://shop.example/thanks?o=1").is_ok());
        // A link on the payer's page: a script or data URL must never be one.
        for bad in ["javascript:alert(1)", "data:text/html,x", "//shop.example/"] {
            let e = check(Profile::Sandbox, bad).unwrap_err();
            assert!(e.to_string().contains("return_url"), "{bad}: {e}");
        }
        assert!(check(Profile::Production, "http://shop.example/").is_err());
        assert!(check(
            Profile::Sandbox,
            &format!("https://a.example/{}", "x".repeat(2048))
        )
        .is_err());
    }
}
