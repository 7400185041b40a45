//! The contract's examples, checked against the schemas they illustrate, so
//! that an example cannot rot while the schema moves on. OpenAPI 3.0
//! schemas are JSON Schema draft 4 but for `nullable`, which is rewritten
//! as a `"null"` type first; the validator is the `jsonschema` crate.

use serde_json::{json, Map, Value};

/// Where an example sits and what it must satisfy.
struct Example {
    at: String,
    schema: Value,
    value: Value,
}

/// Checks every example of `doc`: a schema's `example`, and a media type's
/// or parameter's `example` and `examples.*.value` against its `schema`.
/// Returns how many were checked, or one line per example that does not fit.
pub fn check(doc: &Value) -> Result<usize, Vec<String>> {
    let components = draft4(doc.pointer("/components/schemas").unwrap_or(&Value::Null));
    let mut found = Vec::new();
    collect(doc, "#", &mut found);
    let mut problems = Vec::new();
    for example in &found {
        let mut root = draft4(&example.schema);
        let Some(map) = root.as_object_mut() else {
            problems.push(format!("{}: the schema is not an object", example.at));
            continue;
        };
        // Local references resolve against this document.
        map.insert("components".into(), json!({ "schemas": components }));
        let validator = match jsonschema::options()
            .with_draft(jsonschema::Draft::Draft4)
            .build(&root)
        {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("{}: the schema does not compile: {e}", example.at));
                continue;
            }
        };
        for error in validator.iter_errors(&example.value) {
            problems.push(format!(
                "{}: {} (at `{}`)",
                example.at,
                error,
                error.instance_path()
            ));
        }
    }
    if problems.is_empty() {
        Ok(found.len())
    } else {
        Err(problems)
    }
}

fn collect(v: &Value, at: &str, out: &mut Vec<Example>) {
    match v {
        Value::Object(map) => {
            let in_schemas = at.starts_with("#/components/schemas/");
            if let Some(value) = map.get("example") {
                // A schema's own example, or a media type's / parameter's.
                let schema = if in_schemas {
                    Some(Value::Object(without(map, &["example"])))
                } else {
                    map.get("schema").cloned()
                };
                if let Some(schema) = schema {
                    out.push(Example {
                        at: format!("{at}/example"),
                        schema,
                        value: value.clone(),
                    });
                }
            }
            if !in_schemas {
                if let (Some(schema), Some(Value::Object(examples))) =
                    (map.get("schema"), map.get("examples"))
                {
                    for (name, example) in examples {
                        if let Some(value) = example.get("value") {
                            out.push(Example {
                                at: format!("{at}/examples/{name}"),
                                schema: schema.clone(),
                                value: value.clone(),
                            });
                        }
                    }
                }
            }
            for (k, child) in map {
                if k != "example" && k != "examples" {
                    collect(
                        child,
                        &format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn without(map: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `nullable: true` as draft 4 says it: a `"null"` type (or, beside a
/// reference or a combinator, a `"null"` alternative).
fn draft4(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| k.as_str() != "nullable")
                .map(|(k, c)| (k.clone(), draft4(c)))
                .collect();
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
        Value::Array(items) => Value::Array(items.iter().map(draft4).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(example: Value) -> Value {
        json!({
            "components": {"schemas": {
                "Amount": {"type": "string", "pattern": "^[0-9]+\\.[0-9]{4}$"},
                "Order": {
                    "type": "object",
                    "required": ["amount", "status"],
                    "properties": {
                        "amount": {"$ref": "#/components/schemas/Amount"},
                        "status": {"type": "string", "enum": ["pending", "completed"]},
                        "completed_at": {"type": "string", "nullable": true}
                    },
                    "example": example
                }
            }}
        })
    }

    #[test]
    fn a_fitting_example_passes_and_nullable_allows_null() {
        let ok = doc(json!({"amount": "1.0000", "status": "pending", "completed_at": null}));
        assert_eq!(check(&ok), Ok(1));
    }

    #[test]
    fn an_example_that_no_longer_fits_is_named() {
        let bad = doc(json!({"amount": "1.00", "status": "paid"}));
        let problems = check(&bad).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("#/components/schemas/Order/example") && p.contains("/amount")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("/status")),
            "{problems:?}"
        );
    }

    #[test]
    fn media_type_examples_are_checked_against_their_schema() {
        let mut d = doc(json!({"amount": "1.0000", "status": "pending"}));
        d["paths"] = json!({"/orders": {"get": {"responses": {"200": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Order"},
            "examples": {"late": {"value": {"amount": "1.0000"}}}
        }}}}}}});
        let problems = check(&d).unwrap_err();
        assert!(
            problems.iter().any(|p| p.contains("examples/late")),
            "{problems:?}"
        );
    }
}
