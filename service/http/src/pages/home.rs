//! `/`: a person's browser gets a page pointing to the reference, the
//! console and the portal; an API client (anything that does not ask for
//! HTML) keeps the JSON 404 envelope every unknown path answers.

use crate::app::App;
use crate::domain::status::SessionRealm;
use crate::pages::{html, web::frame};
use dropshot::{endpoint, Body, ClientErrorStatusCode, HttpError, RequestContext};
use std::sync::Arc;

fn wants_html(request: &dropshot::RequestInfo) -> bool {
    request
        .headers()
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| {
            accept
                .split(',')
                .any(|part| part.trim().starts_with("text/html"))
        })
}

#[endpoint { method = GET, path = "/", unpublished = true }]
pub async fn home(rqctx: RequestContext<Arc<App>>) -> Result<http::Response<Body>, HttpError> {
    if !wants_html(&rqctx.request) {
        return Err(HttpError::for_client_error(
            Some("NOT_FOUND".into()),
            ClientErrorStatusCode::NOT_FOUND,
            "no endpoint has this path".into(),
        ));
    }
    let body = "<p>This is a merchant payment service.</p><ul>\
        <li><a href=\"/docs\">API reference</a>: the contract merchants build against.</li>\
        <li><a href=\"/console\">Operations console</a>: for operators.</li>\
        <li><a href=\"/portal\">Merchant portal</a>: for merchant owners.</li></ul>";
    // The console's frame and stylesheet, without a session.
    let page = frame(
        SessionRealm::Console,
        None,
        "Merchant payment service",
        body,
    )
    .replace("Operations console</a>", "Merchant payment service</a>")
    .replace(" · Operations console</title>", "</title>");
    html(http::StatusCode::OK, &page)
}
