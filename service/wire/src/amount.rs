//! Money on the wire. A request `amount` is a JSON number or the same digits
//! as a decimal string, and a response amount is a decimal string with four
//! fraction digits; none ever passes through a binary float. The number is
//! read from its raw JSON text, so `0.1` is exactly one tenth. The string form
//! exists for clients whose JSON numbers are binary floats (JavaScript, Go's
//! `float64`, Python's `json`): they can still send exactly what they mean.

use rust_decimal::Decimal;
use schemars::gen::SchemaGenerator;
use schemars::schema::{
    InstanceType, Metadata, Schema, SchemaObject, StringValidation, SubschemaValidation,
};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::str::FromStr;

/// Fraction digits of every amount in a response.
pub const RESPONSE_SCALE: u32 = 4;

/// A request amount: a JSON number or a decimal string, read exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AmountNumber(pub Decimal);

impl AmountNumber {
    pub fn value(self) -> Decimal {
        self.0
    }
}

impl From<Decimal> for AmountNumber {
    fn from(d: Decimal) -> Self {
        AmountNumber(d)
    }
}

impl FromStr for AmountNumber {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_json_number(s).map(AmountNumber)
    }
}

/// Parses the text of a JSON number (`12`, `-0.5`, `1.25e2`) into a decimal.
pub fn parse_json_number(text: &str) -> Result<Decimal, String> {
    let is_number = text
        .bytes()
        .next()
        .is_some_and(|b| b == b'-' || b.is_ascii_digit());
    if !is_number {
        return Err(format!("expected a JSON number, found `{text}`"));
    }
    let parsed = if text.contains(['e', 'E']) {
        Decimal::from_scientific(text)
    } else {
        Decimal::from_str_exact(text)
    };
    parsed.map_err(|_| format!("`{text}` is not a number this service can represent exactly"))
}

/// Parses the decimal-string form of a request amount: digits with an
/// optional fraction (`100.10`), nothing else, so that it signs exactly as
/// the JSON number with the same text would.
pub fn parse_decimal_string(text: &str) -> Result<Decimal, String> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return Err(format!(
            "expected decimal digits with an optional fraction, found \"{text}\""
        ));
    }
    Decimal::from_str_exact(text)
        .map_err(|_| format!("\"{text}\" is not an amount this service can represent exactly"))
}

impl<'de> Deserialize<'de> for AmountNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        let text = raw.get().trim();
        if text.starts_with('"') {
            let s: String = serde_json::from_str(text).map_err(serde::de::Error::custom)?;
            return parse_decimal_string(&s)
                .map(AmountNumber)
                .map_err(serde::de::Error::custom);
        }
        parse_json_number(text)
            .map(AmountNumber)
            .map_err(serde::de::Error::custom)
    }
}

impl Serialize for AmountNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Normalize drops trailing zeros so that 100.00 and 100 sign alike
        // regardless of how the Decimal was built.
        let text = self.0.normalize().to_string();
        RawValue::from_string(text)
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl JsonSchema for AmountNumber {
    fn schema_name() -> String {
        "AmountNumber".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let number = SchemaObject {
            instance_type: Some(InstanceType::Number.into()),
            format: Some("decimal".into()),
            ..Default::default()
        };
        let string = SchemaObject {
            instance_type: Some(InstanceType::String.into()),
            format: Some("decimal".into()),
            string: Some(Box::new(StringValidation {
                pattern: Some(AMOUNT_STRING_PATTERN.into()),
                ..Default::default()
            })),
            ..Default::default()
        };
        SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some(AMOUNT_NUMBER_DOC.into()),
                ..Default::default()
            })),
            subschemas: Some(Box::new(SubschemaValidation {
                one_of: Some(vec![number.into(), string.into()]),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

/// The decimal-string form of a request amount, as the spec states it.
pub const AMOUNT_STRING_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?$";
const AMOUNT_NUMBER_DOC: &str = "A request amount, read exactly (never as a binary float): a \
JSON number such as `100.10`, or the same digits as a decimal string such as `\"100.10\"`.";

/// A response amount: a decimal string with exactly four fraction digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DecimalString(pub Decimal);

impl DecimalString {
    pub fn value(self) -> Decimal {
        self.0
    }
}

impl From<Decimal> for DecimalString {
    fn from(d: Decimal) -> Self {
        DecimalString(d)
    }
}

impl std::fmt::Display for DecimalString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rounded = self.0.round_dp_with_strategy(
            RESPONSE_SCALE,
            rust_decimal::RoundingStrategy::MidpointNearestEven,
        );
        write!(f, "{rounded:.4}")
    }
}

impl Serialize for DecimalString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DecimalString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Decimal::from_str_exact(&s)
            .map(DecimalString)
            .map_err(|_| serde::de::Error::custom(format!("`{s}` is not a decimal string")))
    }
}

impl JsonSchema for DecimalString {
    fn schema_name() -> String {
        "DecimalString".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some(DECIMAL_STRING_DOC.into()),
                examples: vec![serde_json::json!("100.0000")],
                ..Default::default()
            })),
            instance_type: Some(InstanceType::String.into()),
            format: Some("decimal".into()),
            string: Some(Box::new(StringValidation {
                pattern: Some(DECIMAL_STRING_PATTERN.into()),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

pub const DECIMAL_STRING_PATTERN: &str = r"^-?[0-9]+\.[0-9]{4}$";
const DECIMAL_STRING_DOC: &str =
    "A monetary value as a decimal string with exactly four fraction digits, e.g. `100.0000`.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amount_reads_the_exact_text() {
        let a: AmountNumber = serde_json::from_str("0.1").unwrap();
        assert_eq!(a.0, Decimal::new(1, 1));
        let a: AmountNumber = serde_json::from_str("100.10").unwrap();
        assert_eq!(a.0.to_string(), "100.10");
        let a: AmountNumber = serde_json::from_str("1.5e2").unwrap();
        assert_eq!(a.0, Decimal::new(150, 0));
        assert!(serde_json::from_str::<AmountNumber>("true").is_err());
    }

    #[test]
    fn amount_reads_a_decimal_string_exactly() {
        let a: AmountNumber = serde_json::from_str("\"100.10\"").unwrap();
        assert_eq!(a.0.to_string(), "100.10");
        let a: AmountNumber = serde_json::from_str("\"1234567.89\"").unwrap();
        assert_eq!(a.0.to_string(), "1234567.89");
        for bad in [
            "\"\"", "\"-1\"", "\"1e2\"", "\" 1\"", "\"1.\"", "\".5\"", "\"1,5\"",
        ] {
            assert!(serde_json::from_str::<AmountNumber>(bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<AmountNumber>("true").is_err());
    }

    #[test]
    fn amount_serializes_as_a_number() {
        let a = AmountNumber(Decimal::new(12345, 2));
        assert_eq!(serde_json::to_string(&a).unwrap(), "123.45");
    }

    #[test]
    fn decimal_string_has_four_digits() {
        assert_eq!(DecimalString(Decimal::new(5, 0)).to_string(), "5.0000");
        assert_eq!(DecimalString(Decimal::new(-12, 1)).to_string(), "-1.2000");
        assert_eq!(
            serde_json::to_string(&DecimalString(Decimal::new(1, 4))).unwrap(),
            "\"0.0001\""
        );
    }
}
