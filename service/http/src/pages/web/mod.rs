//! What the console and the portal share: the session cookie, the form
//! token and the same-origin check on every post, the page's frame, tables
//! and pagers. Every page is whole HTML from the server; nothing needs a
//! script.

pub mod frame;
pub mod guard;
pub mod sign_in;
pub mod timeline;

use crate::app::web_sessions::{self, Session};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::routing::Profile;
use crate::domain::status::SessionRealm;
use crate::pages::serve;
use dropshot::{Body, HttpError, RequestContext};
use maud::{html, Markup};
use std::collections::HashMap;
use std::sync::Arc;

pub use frame::{frame, framed, Nav};

/// The cookie a realm's session travels in, scoped to the realm's path.
pub fn cookie_name(realm: SessionRealm) -> &'static str {
    match realm {
        SessionRealm::Console => "console_session",
        SessionRealm::Portal => "portal_session",
    }
}

pub fn root(realm: SessionRealm) -> &'static str {
    match realm {
        SessionRealm::Console => "/console",
        SessionRealm::Portal => "/portal",
    }
}

/// The value of cookie `name` on the request, if sent.
pub fn cookie(request: &dropshot::RequestInfo, name: &str) -> Option<String> {
    request
        .headers()
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .filter(|v| !v.is_empty())
}

/// `Set-Cookie` for a session: not readable by scripts, never sent by
/// another site, `Secure` in production (the sandbox may run on plain
/// HTTP), a session cookie (the server enforces the limits).
pub fn session_cookie(app: &App, realm: SessionRealm, value: &str) -> String {
    let secure = if app.config.profile == Profile::Production {
        "; Secure"
    } else {
        ""
    };
    format!(
        "{}={value}; Path={}; HttpOnly; SameSite=Strict{secure}",
        cookie_name(realm),
        root(realm)
    )
}

pub fn cleared_cookie(realm: SessionRealm) -> String {
    format!(
        "{}=; Path={}; HttpOnly; SameSite=Strict; Max-Age=0",
        cookie_name(realm),
        root(realm)
    )
}

/// Whether a post comes from a page of this service. Browsers say where a
/// form post comes from in `Sec-Fetch-Site`, which a page cannot set; one
/// that does not send it still sends `Origin`, except as `null` under the
/// pages' `no-referrer` policy, where the session's form token alone
/// decides.
pub fn same_origin(request: &dropshot::RequestInfo) -> bool {
    let headers = request.headers();
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site == "same-origin" || site == "none";
    }
    match headers
        .get(http::header::ORIGIN)
        .and_then(|v| v.to_str().ok())
    {
        None | Some("null") => true,
        Some(origin) => {
            let host = headers
                .get(http::header::HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let bare = origin
                .strip_prefix("https://")
                .or_else(|| origin.strip_prefix("http://"))
                .unwrap_or("");
            !host.is_empty() && bare == host
        }
    }
}

/// A posted form's fields (the first of each name).
pub fn form(body: &[u8]) -> HashMap<String, String> {
    let mut fields = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        fields
            .entry(k.into_owned())
            .or_insert_with(|| v.into_owned());
    }
    fields
}

/// The request's query fields.
pub fn query(request: &dropshot::RequestInfo) -> HashMap<String, String> {
    request
        .uri()
        .query()
        .map(|q| form(q.as_bytes()))
        .unwrap_or_default()
}

/// A query field given and not blank.
pub fn given(fields: &HashMap<String, String>, name: &str) -> Option<String> {
    fields
        .get(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The session the request's cookie names in `realm`, if live.
pub async fn session_of(
    rqctx: &RequestContext<Arc<App>>,
    realm: SessionRealm,
) -> Result<Option<Session>, ApiError> {
    match cookie(&rqctx.request, cookie_name(realm)) {
        Some(token) => web_sessions::current(rqctx.context(), realm, &token).await,
        None => Ok(None),
    }
}

/// Where a browser without a live session goes.
pub fn to_sign_in(realm: SessionRealm) -> Result<http::Response<Body>, HttpError> {
    crate::pages::see_other(&format!("{}/login", root(realm)))
}

/// A page that says what went wrong, with the status a client error has;
/// in the frame of the session's pages when there is one.
pub fn problem_in(
    realm: SessionRealm,
    nav: Option<(&Nav, &Session)>,
    status: http::StatusCode,
    title: &str,
    detail: &str,
) -> Result<http::Response<Body>, HttpError> {
    let body = html! {
        p role="alert" { (detail) }
        p { a href=(root(realm)) { "Back" } }
    };
    serve(status, frame(realm, nav, title, body))
}

pub fn problem(
    realm: SessionRealm,
    status: http::StatusCode,
    title: &str,
    detail: &str,
) -> Result<http::Response<Body>, HttpError> {
    problem_in(realm, None, status, title, detail)
}

/// An error of a use case as a page: its status and its message (a 5xx
/// stays the service's error, with its request id).
pub fn failed_in(
    realm: SessionRealm,
    nav: Option<(&Nav, &Session)>,
    e: ApiError,
) -> Result<http::Response<Body>, HttpError> {
    let message = e.to_string();
    let err: HttpError = crate::error::http_error(e);
    if err.status_code.is_server_error() {
        return Err(err);
    }
    let status = err.status_code.as_status();
    let title = status.canonical_reason().unwrap_or("Refused");
    problem_in(realm, nav, status, title, &message)
}

pub fn failed(realm: SessionRealm, e: ApiError) -> Result<http::Response<Body>, HttpError> {
    failed_in(realm, None, e)
}

/// Refused: a post from elsewhere, or without this session's form token.
pub fn forged(realm: SessionRealm) -> Result<http::Response<Body>, HttpError> {
    problem(
        realm,
        http::StatusCode::FORBIDDEN,
        "Refused",
        "This form did not come from your session's page. Open the page again and resubmit.",
    )
}

/// A table of `rows` under `headers`, each cell markup of its own.
pub fn table(caption: &str, headers: &[&str], rows: &[Vec<Markup>]) -> Markup {
    if rows.is_empty() {
        return html! { p { (caption) ": nothing to show." } };
    }
    html! {
        div.scroll tabindex="0" role="region" aria-label=(caption) {
            table {
                caption { (caption) }
                thead { tr { @for h in headers { th scope="col" { (h) } } } }
                tbody {
                    @for row in rows {
                        tr {
                            // The column's name, shown above the cell where a
                            // phone's width reflows the table (console.css).
                            @for (i, cell) in row.iter().enumerate() {
                                td data-label=[headers.get(i)] { (cell) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One page of a listing: its table, then the link to the next page.
pub fn paged_table(
    caption: &str,
    headers: &[&str],
    rows: &[Vec<Markup>],
    path: &str,
    fields: &HashMap<String, String>,
    next: Option<&str>,
) -> Markup {
    html! {
        (table(caption, headers, rows))
        (pager(path, fields, next))
    }
}

/// A link to the next page of a listing, keeping its filters.
pub fn pager(path: &str, fields: &HashMap<String, String>, next: Option<&str>) -> Markup {
    let Some(next) = next else {
        return html! {};
    };
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    let mut keys: Vec<_> = fields.keys().filter(|k| *k != "cursor").collect();
    keys.sort();
    for k in keys {
        query.append_pair(k, &fields[k]);
    }
    query.append_pair("cursor", next);
    html! {
        p { a.next href={ (path) "?" (query.finish()) } { "Next page" } }
    }
}

/// The hidden field every form carries.
pub fn csrf_field(session: &Session) -> Markup {
    html! { input type="hidden" name="csrf" value=(session.csrf); }
}

/// A filter's choice of an age: `ages` as (value, label, seconds) after a
/// blank choice, the one the query asked for selected.
pub fn age_select(
    (id, name, label): (&str, &str, &str),
    blank: &str,
    ages: &[(&str, &str, i64)],
    chosen: &str,
) -> Markup {
    html! {
        div {
            label for=(id) { (label) }
            select id=(id) name=(name) {
                option value="" { (blank) }
                @for (v, label, _) in ages {
                    option value=(v) selected[*v == chosen] { (label) }
                }
            }
        }
    }
}

/// The `done=` notice a page shows after a post sent it back there.
pub fn notice(fields: &HashMap<String, String>) -> Markup {
    html! {
        @if let Some(done) = given(fields, "done") {
            p.notice role="status" { (done) }
        }
    }
}

/// A time as UTC text.
pub fn when(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

/// The client's address for the sign-in limit: the connection's peer.
/// The client's address: the peer's, or, from a trusted proxy, the one it
/// forwarded (`trusted_proxies`).
pub fn address(rqctx: &RequestContext<Arc<App>>) -> String {
    crate::auth::client_address(rqctx).to_string()
}

/// A record as a person reads it: each field named in words, nested
/// records as nested lists, lists of records one under another, and empty
/// fields left out (never JSON in a cell).
pub fn facts(value: &serde_json::Value) -> Markup {
    let shown = value
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| !(v.is_null() || v.as_array().is_some_and(Vec::is_empty)));
    html! {
        dl.facts {
            @for (k, v) in shown {
                dt { (label(k)) }
                dd { (fact(v)) }
            }
        }
    }
}

/// `merchant_order_no` as `Merchant order no`.
fn label(key: &str) -> String {
    let words = key.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn fact(v: &serde_json::Value) -> Markup {
    match v {
        serde_json::Value::String(s) => html! { (s) },
        serde_json::Value::Object(_) => facts(v),
        serde_json::Value::Array(items) if items.iter().any(|i| i.is_object()) => html! {
            ol.records { @for item in items { li { (fact(item)) } } }
        },
        serde_json::Value::Array(items) => html! {
            @for (i, item) in items.iter().enumerate() {
                @if i > 0 { ", " }
                (fact(item))
            }
        },
        other => html! { (other.to_string()) },
    }
}
