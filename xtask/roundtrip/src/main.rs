//! Prints `{ "<spec file>": <document the stub API description builds> }`.

use std::collections::BTreeMap;

fn main() {
    let mut out = BTreeMap::new();
    match describe() {
        Ok(docs) => out.extend(docs),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    match serde_json::to_string_pretty(&out) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

fn describe() -> Result<Vec<(String, serde_json::Value)>, String> {
    let version = semver::Version::new(0, 1, 0);
    let merchant = merchant_api::merchant::merchant_api_mod::stub_api_description()
        .map_err(|e| format!("merchant: {e}"))?;
    let merchant = merchant
        .openapi("merchant", version)
        .json()
        .map_err(|e| e.to_string())?;
    Ok(vec![("openapi/merchant.json".to_string(), merchant)])
}
