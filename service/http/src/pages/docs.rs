//! The merchant contract rendered for people at `/docs`: Redoc's
//! standalone bundle (vendored in `vendor/redoc/`, see its README)
//! reads the current document from `/api/v1/merchant/openapi.json`. Both
//! come from this service, so the page works where nothing else can be
//! reached, and its policy lets nothing else in.

use super::respond_under;
use crate::app::App;
use dropshot::{endpoint, Body, HttpError, RequestContext};
use std::sync::Arc;

const REDOC: &str = include_str!("../../../../vendor/redoc/redoc.standalone.js");

/// Redoc styles through `<style>` elements it writes and searches in a
/// worker it makes from a blob; everything else only from this origin.
const DOCS_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Merchant API reference</title>
</head>
<body>
<noscript>This page needs JavaScript to render the contract. The contract itself is
<a href="/api/v1/merchant/openapi.json">/api/v1/merchant/openapi.json</a>.</noscript>
<redoc spec-url="/api/v1/merchant/openapi.json" required-props-first="true"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
"#;

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
        PAGE.to_string(),
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
