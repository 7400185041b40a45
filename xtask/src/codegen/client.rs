//! Client side of the generated code: a progenitor client whose requests are
//! signed by a hook, so a merchant passes its key once.

use super::server::REPLACEMENTS;
use super::spec::{resolve, ApiSpec, Auth, METHODS};
use anyhow::{anyhow, Context, Result};
use proc_macro2::{Ident, Span};
use quote::quote;
use serde_json::Value;

pub fn lib_rs(modules: &[&str]) -> Result<String> {
    let mods = modules.iter().map(|m| {
        let m = Ident::new(m, Span::call_site());
        quote!(pub mod #m;)
    });
    let tokens = quote! {
        //! Clients of the service's APIs and of a channel's adapter,
        //! generated from openapi/. Every request carries what its client was
        //! built with: [`Credentials`] (merchant, signed), [`BearerToken`]
        //! (operator, sandbox) or [`ChannelSecret`] (channel adapter, signed).
        pub use ::payments_wire::client::{BearerToken, ChannelSecret, Credentials};
        pub use ::payments_wire::{AmountNumber, DecimalString, MerchantOrderNo};
        #(#mods)*
    };
    super::render("openapi/", tokens)
}

/// The oldest supported client's crate root: one merchant module, and the
/// version it speaks.
pub fn oldest_lib_rs(file: &str, version: &str) -> Result<String> {
    let doc = format!(
        " The merchant client generated from `{file}`, the oldest merchant contract \
         version still supported ({version}), kept to prove that merchants who generated \
         their client from it still work against the current service."
    );
    let tokens = quote! {
        #![doc = #doc]
        pub use ::payments_wire::client::Credentials;
        pub use ::payments_wire::{AmountNumber, DecimalString, MerchantOrderNo};
        /// The contract version this client was generated from.
        pub const CONTRACT_VERSION: &str = #version;
        pub mod merchant;
    };
    super::render(file, tokens)
}

/// A typed verifier for the callbacks `doc` declares: one variant per event
/// schema (the schema's `event` enum names it), after the signature checks
/// of `payments_wire::callback`. `None` when the spec declares none.
pub fn callbacks_rs(api: &ApiSpec, doc: &Value) -> Result<Option<String>> {
    // Only the merchant's callbacks get a typed verifier here: a channel's
    // notifications are the service's to verify.
    if api.auth != Auth::Signature {
        return Ok(None);
    }
    let mut events: Vec<(String, String)> = Vec::new();
    let schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("{}: no components/schemas", api.file))?;
    let mut refs = Vec::new();
    collect_callback_refs(doc.get("paths").unwrap_or(&Value::Null), &mut refs);
    // A named union (`DepositEvent`) stands for its variants.
    let mut variants = Vec::new();
    for name in refs {
        match schemas.get(&name).and_then(|s| s.get("oneOf")) {
            Some(union) => collect_refs(union, &mut variants),
            None => variants.push(name),
        }
    }
    variants.sort();
    variants.dedup();
    for name in variants {
        let event = schemas
            .get(&name)
            .and_then(|s| s.pointer("/properties/event/enum/0"))
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("callback schema {name} has no `event` enum"))?;
        events.push((event.to_string(), name));
    }
    if events.is_empty() {
        return Ok(None);
    }
    let module = Ident::new(api.module, Span::call_site());
    let variants = events.iter().map(|(_, schema)| {
        let variant = Ident::new(schema.trim_end_matches("Event"), Span::call_site());
        let ty = Ident::new(schema, Span::call_site());
        quote!(#variant(crate::#module::types::#ty))
    });
    let arms = events.iter().map(|(event, schema)| {
        let variant = Ident::new(schema.trim_end_matches("Event"), Span::call_site());
        quote!(#event => serde_json::from_slice(body).map(CallbackEvent::#variant))
    });
    let tokens = quote! {
        //! The callbacks the service posts, verified and typed: pass the
        //! headers, the raw body as received and your key.
        pub use ::payments_wire::callback::{CallbackError, CallbackHeaders, Verified, VerifyOptions};

        /// One callback, by its `event`.
        #[derive(Clone, Debug)]
        pub enum CallbackEvent {
            #(#variants,)*
        }

        /// Verifies a callback (headers, timestamp window if asked,
        /// signature over the raw body) and reads it as its event's type.
        /// Also returns what routing and deduplication need.
        pub fn verify_callback(
            headers: &CallbackHeaders<'_>,
            body: &[u8],
            api_key: &str,
            options: &VerifyOptions,
        ) -> Result<(Verified, CallbackEvent), CallbackError> {
            let verified = ::payments_wire::callback::verify(headers, body, api_key, options)?;
            let event = match verified.event.as_str() {
                #(#arms,)*
                other => return Err(CallbackError::UnknownEvent(other.to_string())),
            }
            .map_err(|e| CallbackError::Body(e.to_string()))?;
            Ok((verified, event))
        }
    };
    super::render("openapi/", tokens).map(Some)
}

/// Every schema a `callbacks` request body refers to, directly or in a
/// `oneOf`.
fn collect_callback_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "callbacks" {
                    collect_refs(child, out);
                } else {
                    collect_callback_refs(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_callback_refs(i, out)),
        _ => {}
    }
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                if let Some(name) = r.strip_prefix("#/components/schemas/") {
                    out.push(name.to_string());
                }
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|i| collect_refs(i, out)),
        _ => {}
    }
}

pub fn generate(api: &ApiSpec, doc: &Value) -> Result<String> {
    let templates = path_templates(doc);
    let doc = without_auth_headers(doc, api.auth.headers());
    let doc = super::spec::components_without_bounds(&doc);
    let spec: openapiv3::OpenAPI =
        serde_json::from_value(doc).context("progenitor needs an OpenAPI 3.0 document")?;

    let module = Ident::new(api.module, Span::call_site());
    let inner = match api.auth {
        Auth::Signature => quote!(::payments_wire::client::Credentials),
        Auth::Bearer => quote!(::payments_wire::client::BearerToken),
        Auth::ChannelSignature => quote!(::payments_wire::client::ChannelSecret),
    };
    let mut settings = progenitor::GenerationSettings::new();
    settings
        .with_interface(progenitor::InterfaceStyle::Positional)
        .with_tag(progenitor::TagStyle::Merged)
        .with_map_type("::std::collections::BTreeMap")
        .with_inner_type(inner.clone())
        .with_pre_hook_async(quote!(crate::#module::sign_hook));
    for (name, path) in REPLACEMENTS {
        settings.with_replacement(*name, *path, std::iter::empty());
    }
    let mut generator = progenitor::Generator::new(&settings);
    let client = generator
        .generate_tokens(&spec)
        .map_err(|e| anyhow!("progenitor: {e}"))?;

    let tokens = quote! {
        #![allow(clippy::all, unused_imports, mismatched_lifetime_syntaxes)]

        #client

        /// Path templates of the API: a bodiless request signs the path
        /// parameters of the template its URL matches.
        pub const PATH_TEMPLATES: &[&str] = &[#(#templates),*];

        /// Authenticates every request before it is sent.
        pub async fn sign_hook(
            credentials: &#inner,
            request: &mut reqwest::Request,
        ) -> Result<(), ::payments_wire::client::SignError> {
            ::payments_wire::client::Authenticate::apply(credentials, request, PATH_TEMPLATES)
        }
    };
    super::render(api.file, tokens)
}

fn path_templates(doc: &Value) -> Vec<String> {
    doc.get("paths")
        .and_then(Value::as_object)
        .map(|p| p.keys().filter(|k| k.contains('{')).cloned().collect())
        .unwrap_or_default()
}

/// The authentication headers are the hook's business, not parameters a
/// caller passes to every method.
fn without_auth_headers(doc: &Value, auth_headers: &[&str]) -> Value {
    let mut out = doc.clone();
    let Some(paths) = out.get_mut("paths").and_then(Value::as_object_mut) else {
        return out;
    };
    for item in paths.values_mut() {
        for method in METHODS {
            let Some(params) = item
                .get_mut(method)
                .and_then(|op| op.get_mut("parameters"))
                .and_then(Value::as_array_mut)
            else {
                continue;
            };
            params.retain(|p| {
                let p = resolve(doc, p);
                let is_header = p.get("in").and_then(Value::as_str) == Some("header");
                let name = p
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_lowercase();
                !(is_header && auth_headers.contains(&name.as_str()))
            });
        }
    }
    out
}
