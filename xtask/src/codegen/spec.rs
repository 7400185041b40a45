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
    /// Who implements the trait, for its doc comment.
    pub implementer: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// The merchant signature headers, set by a signing hook.
    Signature,
    /// `authorization: Bearer <token>`, set by a hook.
    Bearer,
    /// A channel's HMAC headers (`x-channel-timestamp`,
    /// `x-channel-signature`), set by a signing hook.
    ChannelSignature,
}

impl Auth {
    /// The header parameters this scheme stands for: an operation declaring
    /// them gets one extractor instead of parameters, and the client's hook
    /// sets them instead of every method taking them.
    pub fn headers(self) -> &'static [&'static str] {
        match self {
            Auth::Signature => &SIGNATURE_HEADERS,
            Auth::Bearer => &["authorization"],
            Auth::ChannelSignature => &CHANNEL_SIGNATURE_HEADERS,
        }
    }
}

pub const SPECS: &[ApiSpec] = &[
    ApiSpec {
        file: "openapi/merchant.json",
        module: "merchant",
        trait_name: "MerchantApi",
        auth: Auth::Signature,
        implementer: "the service",
    },
    ApiSpec {
        file: "openapi/operator.json",
        module: "operator",
        trait_name: "OperatorApi",
        auth: Auth::Bearer,
        implementer: "the service",
    },
    ApiSpec {
        file: "openapi/sandbox.json",
        module: "sandbox",
        trait_name: "SandboxApi",
        auth: Auth::Bearer,
        implementer: "the service",
    },
    // Implemented by a channel's adapter (and the simulator), called by
    // the service through the generated client.
    ApiSpec {
        file: "openapi/channel.json",
        module: "channel",
        trait_name: "ChannelAdapterApi",
        auth: Auth::ChannelSignature,
        implementer: "a channel's adapter",
    },
    // Implemented by the service, called by adapters (and the simulator)
    // through the generated client.
    ApiSpec {
        file: "openapi/channel-notifications.json",
        module: "channel_notifications",
        trait_name: "ChannelNotificationsApi",
        auth: Auth::ChannelSignature,
        implementer: "the service",
    },
];

pub const SIGNATURE_HEADERS: [&str; 3] = ["x-api-key", "x-timestamp", "x-signature"];
pub const CHANNEL_SIGNATURE_HEADERS: [&str; 2] = ["x-channel-signature", "x-channel-timestamp"];

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

/// The headers an operation's security requirement stands for, lowercased:
/// an `apiKey` scheme in a header is that header, an `http` bearer scheme is
/// `authorization`. The operation's own `security` wins over the document's;
/// `None` when neither declares one. An operation may offer only one
/// alternative: the service has one way to authenticate each API.
pub fn security_headers(doc: &Value, op: &Value) -> Result<Option<Vec<String>>> {
    let Some(requirements) = op
        .get("security")
        .or_else(|| doc.get("security"))
        .and_then(Value::as_array)
    else {
        return Ok(None);
    };
    let requirement = match requirements.as_slice() {
        [] => return Ok(None),
        [one] => one,
        _ => anyhow::bail!("security offers alternatives; the service authenticates one way"),
    };
    let mut headers = Vec::new();
    for name in requirement
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        let scheme = doc
            .pointer(&format!("/components/securitySchemes/{name}"))
            .with_context(|| format!("security scheme `{name}` is not declared"))?;
        let kind = scheme.get("type").and_then(Value::as_str);
        let header = match (kind, scheme.get("in").and_then(Value::as_str)) {
            (Some("apiKey"), Some("header")) => scheme
                .get("name")
                .and_then(Value::as_str)
                .with_context(|| format!("security scheme `{name}` has no header name"))?
                .to_lowercase(),
            (Some("http"), _)
                if scheme
                    .get("scheme")
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.eq_ignore_ascii_case("bearer")) =>
            {
                "authorization".to_string()
            }
            _ => anyhow::bail!(
                "security scheme `{name}`: only header API keys and bearer tokens map to the service's extractors"
            ),
        };
        headers.push(header);
    }
    headers.sort();
    Ok(Some(headers))
}

/// `doc` with every operation's security requirement (callbacks' too)
/// written out as the required header parameters it stands for, and the
/// schemes removed: what is on the wire, whichever way a document says it.
/// The round trip and the compatibility check compare documents this way,
/// so that stating headers as a security scheme changes nothing for them.
pub fn security_as_headers(doc: &Value) -> Result<Value> {
    let mut out = doc.clone();
    if let Some(paths) = out.get_mut("paths").and_then(Value::as_object_mut) {
        rewrite_path_items(doc, paths.values_mut())?;
    }
    if let Some(map) = out.as_object_mut() {
        map.remove("security");
    }
    if let Some(components) = out.get_mut("components").and_then(Value::as_object_mut) {
        components.remove("securitySchemes");
    }
    Ok(out)
}

fn rewrite_path_items<'a>(doc: &Value, items: impl Iterator<Item = &'a mut Value>) -> Result<()> {
    for item in items {
        for method in METHODS {
            let Some(op) = item.get_mut(method) else {
                continue;
            };
            // A callback may offer alternatives (a scheme each merchant
            // chooses): the first stands for headers as a single one does;
            // the others stay as written, so a comparison sees them.
            let others = match op.get("security").and_then(Value::as_array) {
                Some(list) if list.len() > 1 => Some(list[1..].to_vec()),
                _ => None,
            };
            if let Some(list) = op.get_mut("security").and_then(Value::as_array_mut) {
                list.truncate(1);
            }
            let headers = security_headers(doc, op)?;
            let Some(op) = op.as_object_mut() else {
                continue;
            };
            match others {
                Some(others) => op.insert("security".into(), Value::Array(others)),
                None => op.remove("security"),
            };
            if let Some(headers) = headers {
                let params = op
                    .entry("parameters")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Some(list) = params.as_array_mut() {
                    for (i, name) in headers.into_iter().enumerate() {
                        list.insert(
                            i,
                            serde_json::json!({
                                "name": name,
                                "in": "header",
                                "required": true,
                                "schema": {"type": "string"},
                            }),
                        );
                    }
                }
            }
            // A callback maps expressions to path items of its own.
            if let Some(callbacks) = op.get_mut("callbacks").and_then(Value::as_object_mut) {
                for callback in callbacks.values_mut() {
                    if let Some(exprs) = callback.as_object_mut() {
                        rewrite_path_items(doc, exprs.values_mut())?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Keywords that bound a value. Request-body fields keep them in the
/// published document, where merchants' generators and Schemathesis read
/// them; the Rust types are generated without them. A typed newtype would
/// refuse an out-of-bounds value inside the body's parser, in serde's words
/// and before the use case that names the field in the envelope, and would
/// leave the conformance suite unable to send such a value to prove the
/// refusal. The service's use cases enforce each bound; the scenarios and
/// Schemathesis check from outside that they are the documented ones.
pub const BOUNDS: [&str; 7] = [
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
];

/// Names, on a request field's schema, the version since which the service
/// has enforced the bounds the schema states: writing such bounds down
/// refuses nothing new (the compatibility gate reads it; the generated
/// types, like the bounds, leave it out).
pub const ENFORCED_SINCE: &str = "x-bounds-enforced-since";

/// `schema` without its bound keywords, at any depth (a property that
/// happens to be named like one, such as a fee's `minimum`, stays).
pub fn without_bounds(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !BOUNDS.contains(&k.as_str()) && k.as_str() != ENFORCED_SINCE)
                .map(|(k, v)| {
                    let v = if k == "properties" {
                        match v {
                            Value::Object(props) => Value::Object(
                                props
                                    .iter()
                                    .map(|(name, p)| (name.clone(), without_bounds(p)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        without_bounds(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_bounds).collect()),
        other => other.clone(),
    }
}

/// `doc` with every component schema [`without_bounds`]; paths (and so the
/// parameters, whose bounds the generated extractors do carry) unchanged.
pub fn components_without_bounds(doc: &Value) -> Value {
    let mut out = doc.clone();
    if let Some(schemas) = out
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        for schema in schemas.values_mut() {
            *schema = without_bounds(schema);
        }
    }
    out
}
