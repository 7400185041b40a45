//! A document's callbacks as an OpenAPI 3.1 document of `webhooks`: no
//! generator turns 3.0 `callbacks` into types or handlers, and several do
//! for 3.1 webhooks. Derived, never edited: the operations and schemas are
//! the source document's, with 3.0's `nullable` written the 3.1 way (a
//! `"null"` type). Two receivers: the merchant's (the merchant document's
//! callbacks) and the platform's (the operator document's platform events).

use super::spec::METHODS;
use anyhow::{anyhow, Result};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

pub const PATH: &str = "generated/openapi/merchant-webhooks.json";
pub const PLATFORM_PATH: &str = "generated/openapi/platform-webhooks.json";

/// The platform-managed receiver's document: the operator document's
/// platform events (`tenant_owner_invite`).
pub fn platform_document(operator: &Value) -> Result<String> {
    let (webhooks, components) = collect(operator)?;
    let info = operator.get("info").cloned().unwrap_or(Value::Null);
    let doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Merchant Payment Service: platform events",
            "description": "The platform-level events the service posts to the platform-managed address (`platform_events_url`), never to a merchant, as OpenAPI 3.1 webhooks. Derived from the operator API's document of the same version. Signed the Standard Webhooks way with the platform's own secret (`platform_events_secret`): `webhook-id`, `webhook-timestamp`, `webhook-signature`; verify with the `standardwebhooks` library. Delivered, retried and logged as the merchant callbacks are.",
            "version": info.get("version").cloned().unwrap_or(Value::Null),
            "contact": info.get("contact").cloned().unwrap_or(Value::Null),
            "license": info.get("license").cloned().unwrap_or(Value::Null),
        },
        "servers": [{
            "url": "{platform_events_url}",
            "description": "The platform's receiver, as the service is configured.",
            "variables": {"platform_events_url": {
                "default": "https://platform.example.com/events",
                "description": "The service's `platform_events_url`.",
            }},
        }],
        "tags": [{"name": "platform events", "description": "What the service posts to the platform-managed address."}],
        "webhooks": webhooks,
        "components": {"schemas": components},
    });
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}

pub fn document(merchant: &Value) -> Result<String> {
    let (webhooks, components) = collect(merchant)?;
    let info = merchant.get("info").cloned().unwrap_or(Value::Null);
    let doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Merchant Payment Service: callbacks",
            "description": "The signed callbacks the service posts to an order's `callback_url`, as OpenAPI 3.1 webhooks, for generators that make types or handlers from webhooks. Derived from the merchant API's document of the same version: the same operations and schemas. Each merchant's callbacks are signed by the scheme an operator chose for it (the two security alternatives of each webhook): `seed` (`X-API-Key`, `X-Timestamp`, `X-Signature`; verify as that document's description and `signing-test-vectors.json` define it) or `standard_webhooks` (`webhook-id`, `webhook-timestamp`, `webhook-signature` as the Standard Webhooks specification defines them; verify with its `standardwebhooks` library).",
            "version": info.get("version").cloned().unwrap_or(Value::Null),
            "contact": info.get("contact").cloned().unwrap_or(Value::Null),
            "license": info.get("license").cloned().unwrap_or(Value::Null),
        },
        // The receiver is the merchant's own server, at each order's
        // `callback_url`.
        "servers": [{
            "url": "{callback_url}",
            "description": "The merchant's receiver: the order's `callback_url`.",
            "variables": {"callback_url": {
                "default": "https://merchant.example.com/payments/callbacks",
                "description": "The `callback_url` given when the order was created.",
            }},
        }],
        "tags": [{"name": "callbacks", "description": "What the service posts to the merchant's `callback_url`."}],
        "webhooks": webhooks,
        "components": {
            "schemas": components,
            "securitySchemes": merchant.pointer("/components/securitySchemes").cloned().unwrap_or(Value::Null),
        },
    });
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}

/// Every callback operation of `source` by its operationId, and the
/// schemas they reach (written the 3.1 way).
fn collect(source: &Value) -> Result<(Map<String, Value>, Map<String, Value>)> {
    let mut webhooks = Map::new();
    let paths = source
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("the document has no paths"))?;
    for item in paths.values() {
        for method in METHODS {
            let Some(callbacks) = item.pointer(&format!("/{method}/callbacks")) else {
                continue;
            };
            for callback in callbacks.as_object().into_iter().flatten().map(|(_, c)| c) {
                for path_item in callback.as_object().into_iter().flatten().map(|(_, p)| p) {
                    for (m, op) in path_item.as_object().into_iter().flatten() {
                        let id = op
                            .get("operationId")
                            .and_then(Value::as_str)
                            .ok_or_else(|| anyhow!("a callback has no operationId"))?;
                        webhooks.insert(id.to_string(), json!({ m: op }));
                    }
                }
            }
        }
    }
    let schemas = source
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("the document has no schemas"))?;
    // Only what the webhooks reach, so the document is about callbacks.
    let mut reached = BTreeSet::new();
    let mut todo = Vec::new();
    refs(&Value::Object(webhooks.clone()), &mut todo);
    while let Some(name) = todo.pop() {
        if reached.insert(name.clone()) {
            if let Some(s) = schemas.get(&name) {
                refs(s, &mut todo);
            }
        }
    }
    let components: Map<String, Value> = reached
        .iter()
        .filter_map(|n| schemas.get(n).map(|s| (n.clone(), to_31(s))))
        .collect();
    Ok((webhooks, components))
}

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                out.push(name.to_string());
            }
            map.values().for_each(|c| refs(c, out));
        }
        Value::Array(items) => items.iter().for_each(|c| refs(c, out)),
        _ => {}
    }
}

/// A 3.0 schema as 3.1 reads it: `nullable: true` becomes a `"null"` type
/// (or, beside a reference, a `"null"` alternative); `example` becomes
/// `examples`.
fn to_31(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| k.as_str() != "nullable")
                .map(|(k, c)| {
                    if k == "properties" {
                        let props = c
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(p, s)| (p.clone(), to_31(s)))
                            .collect();
                        (k.clone(), Value::Object(props))
                    } else {
                        (k.clone(), to_31(c))
                    }
                })
                .collect();
            if let Some(example) = out.remove("example") {
                out.insert("examples".into(), json!([example]));
            }
            if map.get("nullable").and_then(Value::as_bool) == Some(true) {
                match out.get("type").cloned() {
                    Some(Value::String(t)) => {
                        out.insert("type".into(), json!([t, "null"]));
                        if let Some(Value::Array(e)) = out.get_mut("enum") {
                            e.push(Value::Null);
                        }
                    }
                    _ => {
                        let inner = Value::Object(std::mem::take(&mut out));
                        out.insert("anyOf".into(), json!([inner, {"type": "null"}]));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(to_31).collect()),
        other => other.clone(),
    }
}
