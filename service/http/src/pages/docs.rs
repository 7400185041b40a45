//! The merchant contract rendered for people at `/docs`: Redoc's
//! standalone bundle (vendored in `vendor/redoc/`, see its README)
//! reads the current document from `/api/v1/merchant/openapi.json`. Both
//! come from this service, so the page works where nothing else can be
//! reached, and its policy lets nothing else in.

use super::respond_under;
use crate::app::App;
use dropshot::{endpoint, Body, HttpError, RequestContext};
use maud::{html, Markup, DOCTYPE};
use std::sync::Arc;

const REDOC: &str = include_str!("../../../../vendor/redoc/redoc.standalone.js");

/// Redoc styles through `<style>` elements it writes and searches in a
/// worker it makes from a blob; everything else only from this origin.
const DOCS_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page: Redoc reads the contract and renders it; without script,
/// a link to the contract itself.
fn page() -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                (crate::pages::head("Merchant API reference"))
            }
            body {
                noscript {
                    "This page needs JavaScript to render the contract. The contract itself is "
                    a href="/api/v1/merchant/openapi.json" { "/api/v1/merchant/openapi.json" } "."
                }
                redoc spec-url="/api/v1/merchant/openapi.json" required-props-first="true" {}
                script src="/docs/redoc.standalone.js" {}
            }
        }
    }
}

/// The API reference page.
#[endpoint { method = GET, path = "/docs", unpublished = true }]
pub async fn docs_page(
    _rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    respond_under(
        DOCS_POLICY,
        "no-cache",
        http::StatusCode::OK,
        "text/html; charset=utf-8",
        page().into_string(),
    )
}

/// The renderer, the same for the life of the binary.
#[endpoint { method = GET, path = "/docs/redoc.standalone.js", unpublished = true }]
pub async fn docs_script(
    _rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    respond_under(
        DOCS_POLICY,
        "public, max-age=3600",
        http::StatusCode::OK,
        "text/javascript; charset=utf-8",
        REDOC.to_string(),
    )
}
