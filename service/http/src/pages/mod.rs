//! What every HTML page the service serves shares: markup made by `maud`
//! templates, which escape every value put in them (a page is `Markup`,
//! never a string someone had to remember to escape), and the response
//! headers that keep a payer's page to itself (no framing, no outside
//! scripts, no caching, no referrer leaking a token in the URL).

pub mod cashier;
pub mod console;
pub mod docs;
pub mod home;
pub mod locale;
pub mod portal;
pub mod simulator;
pub mod web;

use dropshot::{Body, HttpError};
use maud::Markup;

/// Scripts and styles only from this origin; forms post only here.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// What every page's `head` starts with: its encoding, a phone's
/// viewport, its title.
pub fn head(title: &str) -> Markup {
    maud::html! {
        meta charset="utf-8";
        meta name="viewport" content="width=device-width, initial-scale=1";
        title { (title) }
    }
}

/// A page: only markup a template made is served as HTML.
pub fn serve(status: http::StatusCode, page: Markup) -> Result<http::Response<Body>, HttpError> {
    respond(status, "text/html; charset=utf-8", page.into_string())
}

/// A page in one language: says which, and that the language depends on
/// the request's `Accept-Language` (so no cache serves one payer's
/// language to another).
pub fn serve_localized(
    status: http::StatusCode,
    language: &str,
    page: Markup,
) -> Result<http::Response<Body>, HttpError> {
    let mut response = serve(status, page)?;
    let headers = response.headers_mut();
    if let Ok(value) = http::HeaderValue::from_str(language) {
        headers.insert(http::header::CONTENT_LANGUAGE, value);
    }
    headers.insert(
        http::header::VARY,
        http::HeaderValue::from_static("Accept-Language"),
    );
    Ok(response)
}

/// A response with the page headers; `content_type` says what `body` is.
pub fn respond(
    status: http::StatusCode,
    content_type: &str,
    body: String,
) -> Result<http::Response<Body>, HttpError> {
    respond_under(
        CONTENT_SECURITY_POLICY,
        "no-store",
        status,
        content_type,
        body,
    )
}

/// `respond`, under another content security policy and cache rule (a page
/// that holds no secret and needs more than the payer's pages allow).
pub fn respond_under(
    policy: &str,
    cache_control: &str,
    status: http::StatusCode,
    content_type: &str,
    body: String,
) -> Result<http::Response<Body>, HttpError> {
    http::Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::CONTENT_SECURITY_POLICY, policy)
        .header(http::header::X_FRAME_OPTIONS, "DENY")
        .header(http::header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(http::header::REFERRER_POLICY, "no-referrer")
        .header(http::header::CACHE_CONTROL, cache_control)
        .body(Body::from(body))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

/// After a form post: see the page again with a GET.
pub fn see_other(location: &str) -> Result<http::Response<Body>, HttpError> {
    http::Response::builder()
        .status(http::StatusCode::SEE_OTHER)
        .header(http::header::LOCATION, location)
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Body::empty())
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}
