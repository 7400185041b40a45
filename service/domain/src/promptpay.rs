//! PromptPay, Thailand's instant-transfer scheme: which IDs it accepts and
//! the EMVCo merchant-presented QR payload a Thai bank app scans.
//!
//! The payload is a few tag-length-value fields and a CRC, written here
//! rather than taken from a crate: the crates that exist for it are
//! unmaintained single-author ones, and the format is the EMVCo QR Code
//! Specification for Payment Systems (merchant-presented mode) with the
//! Bank of Thailand's PromptPay application identifier. The CRC itself
//! comes from the `crc` crate.

use rust_decimal::Decimal;
use std::fmt;

/// The application identifier of a PromptPay credit transfer.
const PROMPTPAY_AID: &str = "A000000677010111";
/// ISO 4217 numeric code of the Thai baht.
const THB_NUMERIC: &str = "764";
/// EMVCo's "Reference Label" (tag 62, sub-tag 05) holds at most this many
/// characters.
const REFERENCE_MAX: usize = 25;

/// A PromptPay ID an account receives on: a Thai mobile number or a
/// 13-digit tax (or national ID) number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptPayId {
    /// The nine digits after the leading `0` (or `+66`).
    Mobile(String),
    /// The 13 digits, check digit verified.
    Tax(String),
}

/// Why a configured PromptPay ID was refused; says what is expected without
/// repeating the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidPromptPayId(&'static str);

impl fmt::Display for InvalidPromptPayId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::str::FromStr for PromptPayId {
    type Err = InvalidPromptPayId;

    /// Accepts `0812345678`, `+66812345678`, `66812345678` (mobile) and
    /// `1234567890121` (tax), with spaces or hyphens between digits.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let compact: String = text
            .trim()
            .chars()
            .filter(|c| *c != ' ' && *c != '-')
            .collect();
        let (plus, digits) = match compact.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, compact.as_str()),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(InvalidPromptPayId(
                "a PromptPay ID is a Thai mobile number (0 and nine digits, or +66 and nine) \
                 or a 13-digit tax number, digits only",
            ));
        }
        let mobile = match (plus, digits.len()) {
            (false, 10) => digits.strip_prefix('0'),
            (_, 11) => digits.strip_prefix("66"),
            _ => None,
        };
        if let Some(nine) = mobile {
            // Thai mobile numbers begin 06, 08 or 09.
            return if matches!(nine.as_bytes().first(), Some(b'6' | b'8' | b'9')) {
                Ok(PromptPayId::Mobile(nine.to_string()))
            } else {
                Err(InvalidPromptPayId(
                    "a Thai mobile number begins with 06, 08 or 09",
                ))
            };
        }
        if !plus && digits.len() == 13 {
            return if tax_check_digit(digits) {
                Ok(PromptPayId::Tax(digits.to_string()))
            } else {
                Err(InvalidPromptPayId(
                    "the 13-digit tax number's check digit does not match",
                ))
            };
        }
        Err(InvalidPromptPayId(
            "a PromptPay ID is a Thai mobile number (10 digits beginning with 0) \
             or a 13-digit tax number",
        ))
    }
}

/// The Thai tax and national ID check digit: the first twelve digits
/// weighted 13 down to 2, summed; the last digit is (11 − sum mod 11) mod 10.
fn tax_check_digit(digits: &str) -> bool {
    let d: Vec<u32> = digits.bytes().map(|b| u32::from(b - b'0')).collect();
    let sum: u32 = d
        .iter()
        .take(12)
        .zip((2..=13).rev())
        .map(|(x, w)| x * w)
        .sum();
    d.get(12) == Some(&((11 - sum % 11) % 10))
}

impl PromptPayId {
    /// The account field of the payload: `0066` and nine digits, or the
    /// tax number.
    fn field(&self) -> (&'static str, String) {
        match self {
            PromptPayId::Mobile(nine) => ("01", format!("0066{nine}")),
            PromptPayId::Tax(digits) => ("02", digits.clone()),
        }
    }

    /// What the ID is stored as: the form it was accepted in, normalised.
    pub fn as_config(&self) -> String {
        match self {
            PromptPayId::Mobile(nine) => format!("0{nine}"),
            PromptPayId::Tax(digits) => digits.clone(),
        }
    }
}

/// A field: two-digit tag, two-digit length, value.
fn tlv(tag: &str, value: &str) -> String {
    format!("{tag}{:02}{value}", value.len())
}

/// The payload for paying `amount` baht (two decimals) to `id`, with
/// `reference` as the reference label when it fits the field (letters and
/// digits, at most 25). A dynamic ("point of initiation 12") code: it is
/// for this one payment.
pub fn payload(id: &PromptPayId, amount: Decimal, reference: Option<&str>) -> String {
    let (kind, account) = id.field();
    let merchant = tlv("00", PROMPTPAY_AID) + &tlv(kind, &account);
    let mut out = String::new();
    out += &tlv("00", "01");
    out += &tlv("01", "12");
    out += &tlv("29", &merchant);
    out += &tlv("53", THB_NUMERIC);
    out += &tlv("54", &format!("{:.2}", amount.round_dp(2)));
    out += &tlv("58", "TH");
    if let Some(reference) = reference.filter(|r| {
        !r.is_empty() && r.len() <= REFERENCE_MAX && r.bytes().all(|b| b.is_ascii_alphanumeric())
    }) {
        out += &tlv("62", &tlv("05", reference));
    }
    out += "6304";
    let crc = crc::Crc::<u16>::new(&crc::CRC_16_IBM_3740).checksum(out.as_bytes());
    out + &format!("{crc:04X}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn mobile_and_tax_numbers_are_accepted_in_their_usual_forms() {
        let mobile = PromptPayId::Mobile("812345678".into());
        for text in [
            "0812345678",
            "081-234-5678",
            "+66812345678",
            "66 81 234 5678",
        ] {
            assert_eq!(PromptPayId::from_str(text), Ok(mobile.clone()), "{text}");
        }
        assert_eq!(mobile.as_config(), "0812345678");
        assert_eq!(
            PromptPayId::from_str("1-2345-67890-12-1"),
            Ok(PromptPayId::Tax("1234567890121".into()))
        );
    }

    #[test]
    fn anything_else_is_refused_with_a_reason() {
        for text in [
            "",
            "0212345678",    // a Bangkok landline
            "081234567",     // nine digits
            "1234567890122", // check digit off by one
            "+661234567890121",
            "08123456x8",
            "๐๘๑๒๓๔๕๖๗๘", // Thai digits are not ASCII digits
        ] {
            assert!(PromptPayId::from_str(text).is_err(), "{text}");
        }
    }

    #[test]
    fn the_payload_is_the_emvco_layout_with_its_crc() {
        let id = PromptPayId::from_str("0812345678").unwrap();
        let text = payload(&id, Decimal::new(50000, 2), Some("7K8DR78PGP"));
        assert_eq!(
            &text[..text.len() - 4],
            concat!(
                "000201",
                "010212",
                "2937",
                "0016A000000677010111",
                "01130066812345678",
                "5303764",
                "5406500.00",
                "5802TH",
                "6214",
                "05107K8DR78PGP",
                "6304"
            )
        );
        // CRC-16/CCITT-FALSE's catalogue check value pins the algorithm.
        let crc = crc::Crc::<u16>::new(&crc::CRC_16_IBM_3740);
        assert_eq!(crc.checksum(b"123456789"), 0x29B1);
        assert_eq!(
            &text[text.len() - 4..],
            format!("{:04X}", crc.checksum(&text.as_bytes()[..text.len() - 4]))
        );
    }

    #[test]
    fn a_reference_that_does_not_fit_is_left_out() {
        let id = PromptPayId::from_str("1234567890121").unwrap();
        let long = "A".repeat(26);
        let text = payload(&id, Decimal::ONE, Some(&long));
        assert!(!text.contains("6230"), "{text}");
        assert!(text.contains("0213123456789012153037645404"));
    }
}
