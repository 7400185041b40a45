//! Identifiers a merchant supplies, validated where they are parsed so that
//! every handler sees only acceptable values.

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Metadata, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

pub const MERCHANT_ORDER_NO_MAX: usize = 64;
pub const MERCHANT_ORDER_NO_PATTERN: &str = "^[A-Za-z0-9_-]{1,64}$";

/// The merchant's own order number: 1 to 64 characters of `[A-Za-z0-9_-]`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct MerchantOrderNo(String);

impl MerchantOrderNo {
    pub fn parse(s: &str) -> Result<Self, String> {
        let ok_chars = s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if s.is_empty() || s.len() > MERCHANT_ORDER_NO_MAX || !ok_chars {
            return Err(format!(
                "must be 1 to {MERCHANT_ORDER_NO_MAX} characters of A-Z, a-z, 0-9, `_` or `-`"
            ));
        }
        Ok(MerchantOrderNo(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for MerchantOrderNo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for MerchantOrderNo {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MerchantOrderNo::parse(s)
    }
}

impl<'de> Deserialize<'de> for MerchantOrderNo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        MerchantOrderNo::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for MerchantOrderNo {
    fn schema_name() -> String {
        "MerchantOrderNo".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some(
                    "The merchant's own order number, unique per merchant and order kind: \
                     1 to 64 characters of A-Z, a-z, 0-9, `_` or `-`."
                        .into(),
                ),
                ..Default::default()
            })),
            instance_type: Some(InstanceType::String.into()),
            string: Some(Box::new(StringValidation {
                min_length: Some(1),
                max_length: Some(MERCHANT_ORDER_NO_MAX as u32),
                pattern: Some(MERCHANT_ORDER_NO_PATTERN.into()),
            })),
            ..Default::default()
        }
        .into()
    }
}
