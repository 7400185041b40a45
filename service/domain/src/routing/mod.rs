//! Which rules apply where: the profile a deployment runs (sandbox or
//! production) and how deposits in a currency are collected.

use serde::Deserialize;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Sandbox,
    Production,
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sandbox" => Ok(Profile::Sandbox),
            "production" => Ok(Profile::Production),
            other => Err(format!(
                "unknown profile `{other}` (expected `sandbox` or `production`)"
            )),
        }
    }
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Sandbox => "sandbox",
            Profile::Production => "production",
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

crate::status::stored_as_text! {
    /// How deposits in a currency are collected.
    #[derive(Deserialize)]
    #[serde(rename_all = "lowercase")]
    Route in "route" {
        /// The payer transfers to a receiving bank account with a remark.
        Account => "account",
        /// The payer pays at a channel's payment page.
        Channel => "channel",
    }
}

pub mod health;
pub mod table;
