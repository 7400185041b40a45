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
        //! Clients of the service's APIs, generated from openapi/. Every
        //! request is signed with the [`Credentials`] the client was built with.
        pub use ::payments_wire::client::{BearerToken, Credentials};
        pub use ::payments_wire::{AmountNumber, DecimalString, MerchantOrderNo};
        #(#mods)*
    };
    super::render("openapi/", tokens)
}

pub fn generate(api: &ApiSpec, doc: &Value) -> Result<String> {
    let templates = path_templates(doc);
    let doc = without_auth_headers(doc, api.auth.headers());
    let spec: openapiv3::OpenAPI =
        serde_json::from_value(doc).context("progenitor needs an OpenAPI 3.0 document")?;

    let module = Ident::new(api.module, Span::call_site());
    let inner = match api.auth {
        Auth::Signature => quote!(::payments_wire::client::Credentials),
        Auth::Bearer => quote!(::payments_wire::client::BearerToken),
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
