//! Prints `{ "<spec file>": <document the stub API description builds> }`
//! for every generated trait.

use std::collections::BTreeMap;

fn main() {
    let mut out = BTreeMap::new();
    for (file, doc) in merchant_api::stub_documents() {
        match doc {
            Ok(doc) => {
                out.insert(file, doc);
            }
            Err(e) => {
                eprintln!("{file}: {e}");
                std::process::exit(1);
            }
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
