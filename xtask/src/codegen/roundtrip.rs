//! The round trip: the OpenAPI document that a generated trait's
//! `stub_api_description()` produces must describe the same operations,
//! parameters and schemas as the document the trait was generated from.
//! What dropshot adds (error responses, descriptions, schema titles) and
//! what only the source has (callbacks, examples) is left out of the
//! comparison; schema names are compared by structure, not by name.

use super::spec::{resolve, METHODS, SPECS};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

pub fn check(root: &Path) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["run", "--quiet", "--package", "xtask-roundtrip"])
        .output()
        .context("running xtask-roundtrip")?;
    if !output.status.success() {
        bail!(
            "the generated traits do not compile or describe themselves:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stubs: BTreeMap<String, Value> =
        serde_json::from_slice(&output.stdout).context("xtask-roundtrip output")?;
    let mut problems = Vec::new();
    for api in SPECS {
        let source = super::spec::load(root, api)?;
        let stub = stubs
            .get(api.file)
            .ok_or_else(|| anyhow!("xtask-roundtrip did not describe {}", api.file))?;
        // The trait's extractors describe the headers a security scheme
        // stands for as header parameters; compare what is on the wire.
        let source = super::spec::security_as_headers(&source)?;
        let a = summarize(&source).with_context(|| api.file.to_string())?;
        let b = summarize(stub).with_context(|| format!("stub of {}", api.file))?;
        diff(api.file, &a, &b, &mut problems);
    }
    if !problems.is_empty() {
        bail!(
            "the generated traits describe a different API than the spec:\n  {}",
            problems.join("\n  ")
        );
    }
    Ok(())
}

/// One line of comparison per aspect of every operation.
fn summarize(doc: &Value) -> Result<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("no paths"))?;
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let key = format!("{} {path}", method.to_uppercase());
            out.insert(
                format!("{key} operationId"),
                op.get("operationId").cloned().unwrap_or(Value::Null),
            );
            let mut tags: Vec<Value> = op
                .get("tags")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            tags.sort_by_key(|t| t.to_string());
            out.insert(format!("{key} tags"), Value::Array(tags));
            let mut params = BTreeMap::new();
            for p in op
                .get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let p = resolve(doc, p);
                let name = p
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_lowercase();
                let location = p.get("in").and_then(Value::as_str).unwrap_or_default();
                params.insert(
                    format!("{location} {name}"),
                    json!({
                        "required": p.get("required").and_then(Value::as_bool).unwrap_or(false),
                        "schema": normalize(doc, p.get("schema").unwrap_or(&Value::Null), 0),
                    }),
                );
            }
            out.insert(format!("{key} parameters"), json!(params));
            let body = op.get("requestBody").map(|b| {
                let b = resolve(doc, b);
                json!({
                    "required": b.get("required").and_then(Value::as_bool).unwrap_or(false),
                    "content": content(doc, b),
                })
            });
            out.insert(format!("{key} requestBody"), body.unwrap_or(Value::Null));
            let mut ok = Map::new();
            for (status, r) in op
                .get("responses")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                // A document the handler builds itself (a PDF) is a
                // response dropshot cannot describe: the trait's stub has
                // none, so it is compared as absent on both sides.
                if status.starts_with('2') && !only_binary(resolve(doc, r)) {
                    ok.insert(status.clone(), content(doc, resolve(doc, r)));
                }
            }
            out.insert(format!("{key} responses"), Value::Object(ok));
        }
    }
    Ok(out)
}

fn only_binary(v: &Value) -> bool {
    v.get("content")
        .and_then(Value::as_object)
        .is_some_and(|c| {
            !c.is_empty()
                && c.iter().all(|(mime, media)| {
                    mime != "application/json"
                        && media.pointer("/schema/format").and_then(Value::as_str) == Some("binary")
                })
        })
}

fn content(doc: &Value, v: &Value) -> Value {
    let mut out = Map::new();
    for (mime, media) in v
        .get("content")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        // Bodies' bounds are not in the generated types (spec::without_bounds).
        let schema = normalize(doc, media.get("schema").unwrap_or(&Value::Null), 0);
        out.insert(mime.clone(), super::spec::without_bounds(&schema));
    }
    Value::Object(out)
}

/// A schema with references inlined and documentation stripped, so two
/// generators that name or describe types differently still compare equal.
fn normalize(doc: &Value, v: &Value, depth: usize) -> Value {
    if depth > 32 {
        return json!("<too deep>");
    }
    let v = resolve(doc, v);
    match v {
        Value::Object(map) => {
            // schemars wraps a nullable reference as `allOf: [ref]`.
            if let Some(Value::Array(all)) = map.get("allOf") {
                if all.len() == 1 {
                    return normalize(doc, &all[0], depth + 1);
                }
            }
            let mut out = Map::new();
            for (k, v) in map {
                match k.as_str() {
                    "description" | "title" | "example" | "examples" | "nullable" | "default"
                    | "readOnly" | "writeOnly" => {}
                    "properties" => {
                        let props: Map<String, Value> = v
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), normalize(doc, v, depth + 1)))
                            .collect();
                        out.insert(k.clone(), Value::Object(props));
                    }
                    "required" | "enum" => {
                        let mut items: Vec<Value> = v.as_array().cloned().unwrap_or_default();
                        items.sort_by_key(|i| i.to_string());
                        out.insert(k.clone(), Value::Array(items));
                    }
                    _ => {
                        out.insert(k.clone(), normalize(doc, v, depth + 1));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| normalize(doc, i, depth + 1)).collect())
        }
        other => other.clone(),
    }
}

fn diff(
    file: &str,
    source: &BTreeMap<String, Value>,
    stub: &BTreeMap<String, Value>,
    problems: &mut Vec<String>,
) {
    for (k, a) in source {
        match stub.get(k) {
            None => problems.push(format!("{file}: {k}: missing from the generated trait")),
            Some(b) if a != b => {
                problems.push(format!("{file}: {k}:\n    spec:  {a}\n    trait: {b}"))
            }
            Some(_) => {}
        }
    }
    for k in stub.keys() {
        if !source.contains_key(k) {
            problems.push(format!(
                "{file}: {k}: in the generated trait but not in the spec"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merchant_spec() -> Value {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        serde_json::from_str(&std::fs::read_to_string(root.join("openapi/merchant.json")).unwrap())
            .unwrap()
    }

    fn problems(a: &Value, b: &Value) -> Vec<String> {
        let mut out = Vec::new();
        diff(
            "spec",
            &summarize(a).unwrap(),
            &summarize(b).unwrap(),
            &mut out,
        );
        out
    }

    #[test]
    fn identical_documents_agree() {
        let spec = merchant_spec();
        assert!(problems(&spec, &spec).is_empty());
    }

    #[test]
    fn descriptions_and_error_responses_do_not_count() {
        let spec = merchant_spec();
        let mut other = spec.clone();
        other["paths"]["/api/v1/merchant/balance"]["get"]["description"] = json!("reworded");
        other["paths"]["/api/v1/merchant/balance"]["get"]["responses"]["4XX"] =
            json!({"description": "x"});
        assert!(problems(&spec, &other).is_empty());
    }

    #[test]
    fn a_changed_field_type_is_caught() {
        let spec = merchant_spec();
        let mut other = spec.clone();
        other["components"]["schemas"]["BalanceItem"]["properties"]["version"] =
            json!({"type": "string"});
        let found = problems(&spec, &other);
        assert!(
            found
                .iter()
                .any(|p| p.contains("GET /api/v1/merchant/balance responses")),
            "{found:?}"
        );
    }

    #[test]
    fn a_parameter_change_is_caught() {
        let spec = merchant_spec();
        let mut other = spec.clone();
        other["paths"]["/api/v1/merchant/query/deposit"]["get"]["parameters"][0]["required"] =
            json!(false);
        let found = problems(&spec, &other);
        assert!(found.iter().any(|p| p.contains("parameters")), "{found:?}");
    }

    #[test]
    fn a_security_scheme_is_compared_as_the_headers_it_stands_for() {
        let spec = merchant_spec();
        let as_headers = crate::codegen::spec::security_as_headers(&spec).unwrap();
        let balance = &as_headers["paths"]["/api/v1/merchant/balance"]["get"]["parameters"];
        let names: Vec<&str> = balance
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["x-api-key", "x-signature", "x-timestamp"]);

        let mut other = spec.clone();
        other["components"]["securitySchemes"]["signature"]["name"] = json!("x-sig");
        let other = crate::codegen::spec::security_as_headers(&other).unwrap();
        let found = problems(&as_headers, &other);
        assert!(found.iter().any(|p| p.contains("parameters")), "{found:?}");
    }

    #[test]
    fn a_missing_operation_is_caught() {
        let spec = merchant_spec();
        let mut other = spec.clone();
        other["paths"]
            .as_object_mut()
            .unwrap()
            .remove("/api/v1/merchant/balance");
        let found = problems(&spec, &other);
        assert!(
            found
                .iter()
                .any(|p| p.contains("missing from the generated trait")),
            "{found:?}"
        );
    }
}
