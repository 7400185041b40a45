//! The published contract, served as it is checked in: the current
//! merchant document, every blessed version of it (embedded at build time
//! from `openapi/merchant/`), so that a merchant can fetch exactly the
//! version it generated its client from, and its callbacks as 3.1 webhooks.

use crate::app::App;
use dropshot::{endpoint, Body, HttpError, Path, RequestContext};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

mod blessed {
    include!(concat!(env!("OUT_DIR"), "/blessed.rs"));
}

/// The current merchant document, exactly as checked in under openapi/.
#[endpoint { method = GET, path = "/api/v1/merchant/openapi.json", unpublished = true }]
pub async fn current(_rqctx: RequestContext<Arc<App>>) -> Result<http::Response<Body>, HttpError> {
    json(merchant_api::merchant::OPENAPI_DOCUMENT.to_string())
}

/// The merchant callbacks as an OpenAPI 3.1 `webhooks` document, derived
/// from the current document by `cargo xtask codegen`, for generators that
/// make types from webhooks but nothing from 3.0 `callbacks`.
#[endpoint { method = GET, path = "/api/v1/merchant/webhooks.json", unpublished = true }]
pub async fn webhooks(_rqctx: RequestContext<Arc<App>>) -> Result<http::Response<Body>, HttpError> {
    json(WEBHOOKS_DOCUMENT.to_string())
}

const WEBHOOKS_DOCUMENT: &str = include_str!("../../../generated/openapi/merchant-webhooks.json");

#[derive(Deserialize, JsonSchema)]
pub struct ContractFile {
    /// `<version>.json` for a blessed version, `current.json`, or
    /// `versions.json` for the list.
    file: String,
}

/// A blessed version (`0.1.0.json`), the current one (`current.json`), or
/// the list of both (`versions.json`).
#[endpoint { method = GET, path = "/api/v1/merchant/openapi/{file}", unpublished = true }]
pub async fn version(
    _rqctx: RequestContext<Arc<App>>,
    path: Path<ContractFile>,
) -> Result<http::Response<Body>, HttpError> {
    let file = path.into_inner().file;
    let document = merchant_api::merchant::OPENAPI_DOCUMENT;
    match file.strip_suffix(".json") {
        Some("current") => json(document.to_string()),
        Some("versions") => json(
            serde_json::json!({
                "current": current_version(document),
                "blessed": blessed::BLESSED.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            })
            .to_string(),
        ),
        Some(version) => match blessed::BLESSED.iter().find(|(v, _)| *v == version) {
            Some((_, text)) => json(text.to_string()),
            None => Err(not_found(format!(
                "no published version `{version}` of the merchant contract; \
                 /api/v1/merchant/openapi/versions.json lists them"
            ))),
        },
        None => Err(not_found(
            "ask for `<version>.json`, `current.json` or `versions.json`".into(),
        )),
    }
}

/// The envelope the gate answers an unknown path with.
fn not_found(message: String) -> HttpError {
    HttpError::for_client_error(
        Some("NOT_FOUND".into()),
        dropshot::ClientErrorStatusCode::NOT_FOUND,
        message,
    )
}

fn current_version(document: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(document)
        .ok()?
        .pointer("/info/version")?
        .as_str()
        .map(String::from)
}

fn json(text: String) -> Result<http::Response<Body>, HttpError> {
    http::Response::builder()
        .status(http::StatusCode::OK)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(text))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}
