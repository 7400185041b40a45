//! `/`: a person's browser gets a page pointing to the reference, the
//! console and the portal; an API client (anything that does not ask for
//! HTML) keeps the JSON 404 envelope every unknown path answers.

use crate::app::App;
use crate::domain::status::SessionRealm;
use crate::pages::{serve, web::framed};
use dropshot::{endpoint, Body, ClientErrorStatusCode, HttpError, RequestContext};
use maud::html;
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
    let body = html! {
        p { "This is a merchant payment service." }
        ul {
            li { a href="/docs" { "API reference" } ": the contract merchants build against." }
            li { a href="/console" { "Operations console" } ": for operators." }
            li { a href="/portal" { "Merchant portal" } ": for merchant owners." }
        }
    };
    // The console's frame and stylesheet, without a session.
    let page = framed(
        SessionRealm::Console,
        "Merchant payment service",
        None,
        "Merchant payment service",
        body,
    );
    serve(http::StatusCode::OK, page)
}
