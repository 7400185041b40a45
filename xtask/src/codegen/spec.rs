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
    /// How the generated client authenticates its requests.
    pub auth: Auth,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// The merchant signature headers, set by a signing hook.
    Signature,
    /// `authorization: Bearer <token>`, set by a hook.
    Bearer,
}

impl Auth {
    /// The header parameters this scheme stands for: an operation declaring
    /// them gets one extractor instead of parameters, and the client's hook
    /// sets them instead of every method taking them.
    pub fn headers(self) -> &'static [&'static str] {
        match self {
            Auth::Signature => &SIGNATURE_HEADERS,
            Auth::Bearer => &["authorization"],
        }
    }
}

pub const SPECS: &[ApiSpec] = &[
    ApiSpec {
        file: "openapi/merchant.json",
        module: "merchant",
        trait_name: "MerchantApi",
        auth: Auth::Signature,
    },
    ApiSpec {
        file: "openapi/operator.json",
        module: "operator",
        trait_name: "OperatorApi",
        auth: Auth::Bearer,
    },
    ApiSpec {
        file: "openapi/sandbox.json",
        module: "sandbox",
        trait_name: "SandboxApi",
        auth: Auth::Bearer,
    },
];

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
