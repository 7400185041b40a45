//! The documents under openapi/ and how each is turned into code.

use anyhow::{Context, Result};
use serde_json::Value;
use std::path::Path;

pub struct ApiSpec {
    /// Path of the document, relative to the workspace root.
    pub file: &'static str,
    /// Module name in the generated crates.
    pub module: &'static str,
    /// Name of the dropshot API trait.
    pub trait_name: &'static str,
    /// Whether a progenitor client is generated for it.
    pub client: bool,
}

pub const SPECS: &[ApiSpec] = &[ApiSpec {
    file: "openapi/merchant.json",
    module: "merchant",
    trait_name: "MerchantApi",
    client: true,
}];

/// Header parameters that the signature extractor stands for. An operation
/// declaring all three gets `SignatureHeaders` instead of three parameters;
/// the client sets them in its signing hook.
pub const SIGNATURE_HEADERS: [&str; 3] = ["x-api-key", "x-timestamp", "x-signature"];

pub fn load(root: &Path, api: &ApiSpec) -> Result<Value> {
    let path = root.join(api.file);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let doc: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    // Fail early, with openapiv3's message, on a document progenitor would
    // reject later with a less helpful one.
    serde_json::from_value::<openapiv3::OpenAPI>(doc.clone())
        .with_context(|| format!("{} is not an OpenAPI 3.0 document", api.file))?;
    Ok(doc)
}

/// Follows a local `$ref` (`#/components/...`) to what it names.
pub fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    let mut cur = v;
    for _ in 0..16 {
        match cur.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix("#/").map(|p| doc.pointer(&format!("/{p}"))) {
                Some(Some(target)) => cur = target,
                _ => return cur,
            },
            None => return cur,
        }
    }
    cur
}

/// The HTTP methods an OpenAPI path item may hold, in document order.
pub const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
