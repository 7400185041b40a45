//! Server side of the generated code: the types of a document's schemas
//! (typify, with `JsonSchema` so dropshot can describe them) and a dropshot
//! API trait with one method per operation, emitted with `quote!`.

use super::spec::{resolve, ApiSpec, Auth, METHODS};
use anyhow::{anyhow, bail, Context, Result};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use serde_json::Value;

/// Schemas that map to hand-written wire types instead of generated ones,
/// shared by the server and the client so both parse amounts the same way.
pub const REPLACEMENTS: &[(&str, &str)] = &[
    ("AmountNumber", "::payments_wire::AmountNumber"),
    ("DecimalString", "::payments_wire::DecimalString"),
    ("MerchantOrderNo", "::payments_wire::MerchantOrderNo"),
];

pub fn lib_rs(specs: &[ApiSpec]) -> Result<String> {
    let mods = specs.iter().map(|api| {
        let m = Ident::new(api.module, Span::call_site());
        quote!(pub mod #m;)
    });
    let stubs = specs.iter().map(|api| {
        let m = Ident::new(api.module, Span::call_site());
        let stub_mod = Ident::new(&format!("{}_mod", to_snake(api.trait_name)), Span::call_site());
        let file = api.file;
        quote! {
            (#file, #m::#stub_mod::stub_api_description()
                .map_err(|e| e.to_string())
                .and_then(|api| api.openapi(#file, ::semver::Version::new(0, 1, 0)).json().map_err(|e| e.to_string()))),
        }
    });
    let tokens = quote! {
        //! Dropshot API traits and their types, generated from openapi/.
        #(#mods)*

        /// The OpenAPI document each trait describes without an
        /// implementation, by source file: what `cargo xtask codegen`
        /// compares with the source.
        pub fn stub_documents() -> Vec<(&'static str, Result<::serde_json::Value, String>)> {
            vec![#(#stubs)*]
        }
    };
    super::render("openapi/", tokens)
}

pub fn generate(api: &ApiSpec, doc: &Value) -> Result<String> {
    let types = types(doc)?;
    let trait_name = Ident::new(api.trait_name, Span::call_site());
    let (structs, methods, registrations) = operations(api, &trait_name, doc)?;
    let document_path = format!("../../../{}", api.file);
    let implementer = api.implementer;
    let doc_comment = format!(
        " The operations of `{}`, one method each. Implement it in {implementer};\n \
         `{}_mod::stub_api_description()` describes it without an implementation.",
        api.file,
        to_snake(api.trait_name)
    );
    let tokens = quote! {
        #![allow(clippy::all, unused_imports)]

        /// The source document, served as the published contract.
        pub const OPENAPI_DOCUMENT: &str = include_str!(#document_path);

        /// Types of the document's schemas.
        pub mod types {
            #types
        }

        #(#structs)*

        #[doc = #doc_comment]
        #[::dropshot::api_description]
        pub trait #trait_name {
            type Context;
            #(#methods)*
        }

        /// Registers every operation of the trait on `api`, so that one
        /// server can serve several traits.
        pub fn register<ServerImpl: #trait_name>(
            api: &mut ::dropshot::ApiDescription<<ServerImpl as #trait_name>::Context>,
        ) -> Result<(), ::dropshot::ApiDescriptionRegisterError>
        where
            <ServerImpl as #trait_name>::Context: ::dropshot::ServerContext,
        {
            #(#registrations)*
            Ok(())
        }
    };
    super::render(api.file, tokens)
}

fn types(doc: &Value) -> Result<TokenStream> {
    let mut settings = typify::TypeSpaceSettings::default();
    settings
        .with_derive("::schemars::JsonSchema".to_string())
        .with_struct_builder(false)
        .with_map_type("::std::collections::BTreeMap");
    for (name, path) in REPLACEMENTS {
        settings.with_replacement(*name, *path, std::iter::empty());
    }
    let mut space = typify::TypeSpace::new(&settings);
    let schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("the document has no components.schemas"))?;
    let mut defs = Vec::new();
    for (name, schema) in schemas {
        // dropshot supplies its own `Error` type for every error response.
        if name == "Error" {
            continue;
        }
        let schema = to_json_schema(&super::spec::without_bounds(schema));
        let schema: schemars::schema::Schema =
            serde_json::from_value(schema).with_context(|| format!("schema {name}"))?;
        defs.push((name.clone(), schema));
    }
    space
        .add_ref_types(defs)
        .map_err(|e| anyhow!("typify: {e}"))?;
    Ok(space.to_stream())
}

/// OpenAPI 3.0 schemas are nearly JSON Schema; `nullable` is the difference
/// typify cares about, and `$ref`s point into components.
pub fn to_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                match k.as_str() {
                    "nullable" | "example" | "discriminator" => {}
                    "$ref" => {
                        let r = v.as_str().unwrap_or_default();
                        let name = r.rsplit('/').next().unwrap_or_default();
                        out.insert(k.clone(), Value::String(format!("#/definitions/{name}")));
                    }
                    _ => {
                        out.insert(k.clone(), to_json_schema(v));
                    }
                }
            }
            if map.get("nullable") == Some(&Value::Bool(true)) {
                if let Some(t) = out.get("type").cloned() {
                    out.insert("type".into(), serde_json::json!([t, "null"]));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(to_json_schema).collect()),
        other => other.clone(),
    }
}

type Generated = (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>);

fn operations(api: &ApiSpec, trait_name: &Ident, doc: &Value) -> Result<Generated> {
    let mut structs = Vec::new();
    let mut methods = Vec::new();
    let mut registrations = Vec::new();
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("the document has no paths"))?;
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let (s, m, r) = operation(api, trait_name, doc, path, method, item, op)
                .with_context(|| format!("{} {path}", method.to_uppercase()))?;
            structs.extend(s);
            methods.push(m);
            registrations.push(r);
        }
    }
    Ok((structs, methods, registrations))
}

struct Param {
    name: String,
    location: String,
    required: bool,
    description: Option<String>,
    schema: Value,
}

fn operation(
    api: &ApiSpec,
    trait_name: &Ident,
    doc: &Value,
    path: &str,
    method: &str,
    item: &Value,
    op: &Value,
) -> Result<(Vec<TokenStream>, TokenStream, TokenStream)> {
    let op_id = op
        .get("operationId")
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("operationId is required"))?;
    let fn_name = Ident::new(op_id, Span::call_site());
    let pascal = to_pascal(op_id);

    let mut params = Vec::new();
    for p in item
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .chain(op.get("parameters").and_then(Value::as_array))
        .flatten()
    {
        let p = resolve(doc, p);
        params.push(Param {
            name: str_field(p, "name")?.to_string(),
            location: str_field(p, "in")?.to_string(),
            required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
            description: p
                .get("description")
                .and_then(Value::as_str)
                .map(String::from),
            schema: p.get("schema").cloned().unwrap_or(Value::Null),
        });
    }

    let mut structs = Vec::new();
    let mut args = Vec::new();

    // Authentication headers come as a security requirement (or, in an
    // older document, as header parameters); either way they are one
    // extractor.
    let mut names: Vec<String> = params
        .iter()
        .filter(|p| p.location == "header")
        .map(|p| p.name.to_lowercase())
        .collect();
    names.extend(
        super::spec::security_headers(doc, op)
            .with_context(|| op_id.to_string())?
            .unwrap_or_default(),
    );
    names.sort();
    if !names.is_empty() {
        let mut expected: Vec<String> = api.auth.headers().iter().map(|h| h.to_string()).collect();
        expected.sort();
        if names != expected {
            bail!(
                "header parameters {names:?}: this spec's operations declare exactly {expected:?}"
            );
        }
        args.push(match api.auth {
            Auth::Signature => quote!(headers: ::payments_wire::server::SignatureHeaders),
            Auth::Bearer => quote!(headers: ::payments_wire::server::BearerToken),
            Auth::ChannelSignature => {
                quote!(headers: ::payments_wire::server::ChannelSignatureHeaders)
            }
        });
    }
    // Queries parse through the wire crate's extractor, which refuses in
    // the service's error envelope; dropshot's answers without an
    // `error_code`. Both document the parameters alike.
    for (location, suffix, extractor) in [
        ("path", "Path", quote!(::dropshot::Path)),
        ("query", "Query", quote!(::payments_wire::server::Query)),
    ] {
        let these: Vec<&Param> = params.iter().filter(|p| p.location == location).collect();
        if these.is_empty() {
            continue;
        }
        let struct_name = Ident::new(&format!("{pascal}{suffix}"), Span::call_site());
        let fields = these
            .iter()
            .map(|p| param_field(p))
            .collect::<Result<Vec<_>>>()?;
        let doc = format!(" {} parameters of `{op_id}`.", suffix);
        structs.push(quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, ::serde::Deserialize, ::serde::Serialize, ::schemars::JsonSchema)]
            pub struct #struct_name {
                #(#fields)*
            }
        });
        let arg = Ident::new(location, Span::call_site());
        args.push(quote!(#arg: #extractor<#struct_name>));
    }
    if let Some(body) = op.get("requestBody") {
        let body = resolve(doc, body);
        let schema = body
            .pointer("/content/application~1json/schema")
            .ok_or_else(|| anyhow!("only application/json request bodies are supported"))?;
        let ty = schema_type(schema)?;
        args.push(quote!(body: ::payments_wire::server::SignedJson<#ty>));
    }

    let (status, response) = success_response(doc, op)?;
    let response_ty = match (status.as_str(), response) {
        // A document (a PDF): the handler builds the whole response.
        ("200", None) if binary_success(doc, op) => {
            quote!(::http::Response<::dropshot::Body>)
        }
        ("200", Some(schema)) => {
            let ty = schema_type(schema)?;
            quote!(::dropshot::HttpResponseOk<#ty>)
        }
        ("201", Some(schema)) => {
            let ty = schema_type(schema)?;
            quote!(::dropshot::HttpResponseCreated<#ty>)
        }
        ("204", None) => quote!(::dropshot::HttpResponseUpdatedNoContent),
        (s, _) => bail!("unsupported success response {s}"),
    };

    let method_ident = Ident::new(&method.to_uppercase(), Span::call_site());
    let tags: Vec<&str> = op
        .get("tags")
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let summary = op.get("summary").and_then(Value::as_str).unwrap_or(op_id);
    let description = op.get("description").and_then(Value::as_str);
    let mut docs = vec![format!(" {summary}")];
    if let Some(d) = description {
        docs.push(String::new());
        docs.extend(d.lines().map(|l| format!(" {l}")));
    }
    let register = quote! {
        api.register(
            ::dropshot::ApiEndpoint::new(
                #op_id.to_string(),
                <ServerImpl as #trait_name>::#fn_name,
                ::http::Method::#method_ident,
                ::dropshot::CONTENT_TYPE_JSON,
                #path,
                ::dropshot::ApiEndpointVersions::All,
            )
            .summary(#summary)
            #(.tag(#tags))*
        )?;
    };
    let method = quote! {
        #(#[doc = #docs])*
        #[endpoint {
            method = #method_ident,
            path = #path,
            tags = [#(#tags),*],
        }]
        async fn #fn_name(
            rqctx: ::dropshot::RequestContext<Self::Context>,
            #(#args),*
        ) -> Result<#response_ty, ::dropshot::HttpError>;
    };
    Ok((structs, method, register))
}

fn success_response<'a>(doc: &'a Value, op: &'a Value) -> Result<(String, Option<&'a Value>)> {
    let responses = op
        .get("responses")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("no responses"))?;
    for (status, response) in responses {
        if status.starts_with('2') && status.len() == 3 && !status.ends_with("XX") {
            let response = resolve(doc, response);
            let schema = response.pointer("/content/application~1json/schema");
            return Ok((status.clone(), schema));
        }
    }
    bail!("no 2xx response")
}

/// Whether the operation's 2xx answer is a binary document
/// (`format: binary` under a media type other than JSON).
fn binary_success(doc: &Value, op: &Value) -> bool {
    op.get("responses")
        .and_then(Value::as_object)
        .and_then(|r| r.iter().find(|(s, _)| s.starts_with('2')))
        .and_then(|(_, r)| {
            resolve(doc, r)
                .get("content")
                .and_then(Value::as_object)
                .cloned()
        })
        .is_some_and(|content| {
            content.iter().any(|(media, c)| {
                media != "application/json"
                    && c.pointer("/schema/format").and_then(Value::as_str) == Some("binary")
            })
        })
}

fn param_field(p: &Param) -> Result<TokenStream> {
    let name = Ident::new(&p.name, Span::call_site());
    let mut ty = schema_type(&p.schema)?;
    if !p.required {
        ty = quote!(Option<#ty>);
    }
    let doc = p.description.as_deref().map(|d| format!(" {d}"));
    let doc = doc.map(|d| quote!(#[doc = #d]));
    // A bound the spec states reaches the trait's schema, so the
    // comparison with the spec sees it (the service enforces it).
    let bound = |k: &str| p.schema.get(k).and_then(Value::as_i64);
    let range = match (bound("minimum"), bound("maximum")) {
        (Some(min), Some(max)) => quote!(#[schemars(range(min = #min, max = #max))]),
        (Some(min), None) => quote!(#[schemars(range(min = #min))]),
        (None, Some(max)) => quote!(#[schemars(range(max = #max))]),
        (None, None) => quote!(),
    };
    let pattern = match p.schema.get("pattern").and_then(Value::as_str) {
        Some(pattern) => quote!(#[schemars(regex(pattern = #pattern))]),
        None => quote!(),
    };
    Ok(quote! {
        #doc
        #range
        #pattern
        pub #name: #ty,
    })
}

/// The Rust type of a parameter or body schema: a reference to a component
/// becomes that generated type; a few scalar schemas map directly.
fn schema_type(schema: &Value) -> Result<TokenStream> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or_default();
        if let Some((_, path)) = REPLACEMENTS.iter().find(|(n, _)| *n == name) {
            return syn::parse_str::<syn::Type>(path)
                .map(|t| quote!(#t))
                .map_err(|e| anyhow!("{e}"));
        }
        let ident = Ident::new(&to_pascal(name), Span::call_site());
        return Ok(quote!(types::#ident));
    }
    let ty = schema.get("type").and_then(Value::as_str);
    let format = schema.get("format").and_then(Value::as_str);
    Ok(match (ty, format) {
        (Some("string"), None) => quote!(String),
        (Some("integer"), Some("int64")) => quote!(i64),
        (Some("integer"), Some("int32")) => quote!(i32),
        (Some("boolean"), None) => quote!(bool),
        _ => bail!("unsupported inline schema {schema}; use a $ref to components.schemas"),
    })
}

fn str_field<'a>(v: &'a Value, key: &str) -> Result<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("parameter without `{key}`: {v}"))
}

pub fn to_pascal(s: &str) -> String {
    s.split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

pub fn to_snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
