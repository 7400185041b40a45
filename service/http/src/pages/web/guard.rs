//! The two doors of every console and portal endpoint: a page needs a
//! live session (else the sign-in page), and a post also needs to come
//! from this service's page with the session's form token (else 403). A
//! session whose operator has still to prove a second factor opens only
//! that page and the sign-out; every other page sends it there.

use crate::app::web_sessions::Session;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::SessionRealm;
use crate::observe::in_span;
use crate::pages::web::{
    failed, failed_in, forged, form, frame, query, same_origin, session_of, to_sign_in, Nav,
};
use crate::pages::{see_other, serve};
use dropshot::{Body, HttpError, RequestContext, UntypedBody};
use maud::Markup;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// What an endpoint's work comes to.
pub enum Reply {
    /// A page in the frame, with its section's navigation.
    Page { title: String, body: Markup },
    /// Somewhere to go next (after a post: see the page again).
    Go(String),
    /// A response built whole (a download).
    Raw(http::Response<Body>),
}

impl Reply {
    pub fn page(title: impl Into<String>, body: Markup) -> Result<Reply, ApiError> {
        Ok(Reply::Page {
            title: title.into(),
            body,
        })
    }
}

/// The realm's sections, for the frame.
pub struct Sections {
    pub realm: SessionRealm,
    pub all: &'static [(&'static str, &'static str)],
}

fn answer(
    sections: &Sections,
    current: &'static str,
    session: &Session,
    reply: Result<Reply, ApiError>,
) -> Result<http::Response<Body>, HttpError> {
    let nav = Nav {
        sections: sections.all,
        current,
    };
    match reply {
        Ok(Reply::Page { title, body }) => serve(
            http::StatusCode::OK,
            frame(sections.realm, Some((&nav, session)), &title, body),
        ),
        Ok(Reply::Go(to)) => see_other(&to),
        Ok(Reply::Raw(response)) => Ok(response),
        Err(e) => failed_in(sections.realm, Some((&nav, session)), e),
    }
}

/// A page: the work gets the session and the query's fields.
pub async fn page<F>(
    rqctx: &RequestContext<Arc<App>>,
    sections: &Sections,
    current: &'static str,
    work: impl FnOnce(Arc<App>, Session, HashMap<String, String>) -> F,
) -> Result<http::Response<Body>, HttpError>
where
    F: Future<Output = Result<Reply, ApiError>>,
{
    in_span(rqctx, async {
        let session = match session_of(rqctx, sections.realm).await {
            Ok(Some(session)) if session.second_factor_pending => return to_second_factor(),
            Ok(Some(session)) => session,
            Ok(None) => return to_sign_in(sections.realm),
            Err(e) => return failed(sections.realm, e),
        };
        let fields = query(&rqctx.request);
        let reply = Box::pin(work(rqctx.context().clone(), session.clone(), fields)).await;
        answer(sections, current, &session, reply)
    })
    .await
}

/// Where a session still to prove its second factor goes.
pub fn to_second_factor() -> Result<http::Response<Body>, HttpError> {
    see_other(SECOND_FACTOR)
}

/// The console's page that asks for the second factor.
pub const SECOND_FACTOR: &str = "/console/second-factor";

/// A form post: from this service's page, in a live session, with its
/// form token; the work gets the form's fields.
pub async fn post<F>(
    rqctx: &RequestContext<Arc<App>>,
    sections: &Sections,
    current: &'static str,
    body: UntypedBody,
    work: impl FnOnce(Arc<App>, Session, HashMap<String, String>) -> F,
) -> Result<http::Response<Body>, HttpError>
where
    F: Future<Output = Result<Reply, ApiError>>,
{
    post_in(rqctx, sections, current, body, false, work).await
}

/// `post`, for the two posts a session still to prove its second factor
/// may make: the code itself, and signing out.
pub async fn post_before_second_factor<F>(
    rqctx: &RequestContext<Arc<App>>,
    sections: &Sections,
    current: &'static str,
    body: UntypedBody,
    work: impl FnOnce(Arc<App>, Session, HashMap<String, String>) -> F,
) -> Result<http::Response<Body>, HttpError>
where
    F: Future<Output = Result<Reply, ApiError>>,
{
    post_in(rqctx, sections, current, body, true, work).await
}

async fn post_in<F>(
    rqctx: &RequestContext<Arc<App>>,
    sections: &Sections,
    current: &'static str,
    body: UntypedBody,
    pending_may: bool,
    work: impl FnOnce(Arc<App>, Session, HashMap<String, String>) -> F,
) -> Result<http::Response<Body>, HttpError>
where
    F: Future<Output = Result<Reply, ApiError>>,
{
    in_span(rqctx, async {
        if !same_origin(&rqctx.request) {
            tracing::warn!("a form post from another site refused");
            return forged(sections.realm);
        }
        let session = match session_of(rqctx, sections.realm).await {
            Ok(Some(session)) if session.second_factor_pending && !pending_may => {
                return to_second_factor()
            }
            Ok(Some(session)) => session,
            Ok(None) => return to_sign_in(sections.realm),
            Err(e) => return failed(sections.realm, e),
        };
        let fields = form(body.as_bytes());
        if !fields
            .get("csrf")
            .is_some_and(|token| session.form_is_ours(token))
        {
            tracing::warn!("a form post without its session's form token refused");
            return forged(sections.realm);
        }
        let reply = Box::pin(work(rqctx.context().clone(), session.clone(), fields)).await;
        answer(sections, current, &session, reply)
    })
    .await
}
