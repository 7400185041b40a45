//! Signing in and out of a realm: the form, the post that checks the
//! password (the same answer and the same time for an unknown email as for
//! a wrong password), and the sign-out that ends the session.

use crate::app::web_sessions::{self, Refused};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::status::SessionRealm;
use crate::observe::in_span;
use crate::pages::web::guard::{post_before_second_factor, Reply, Sections};
use crate::pages::web::{
    address, cleared_cookie, cookie, cookie_name, failed, forged, form, frame, given, root,
    same_origin, session_cookie, session_of,
};
use crate::pages::{see_other, serve};
use dropshot::{Body, HttpError, RequestContext, UntypedBody};
use maud::html;
use std::sync::Arc;

fn with_cookie(
    mut response: http::Response<Body>,
    cookie: &str,
) -> Result<http::Response<Body>, HttpError> {
    let value = http::HeaderValue::from_str(cookie)
        .map_err(|e| HttpError::for_internal_error(e.to_string()))?;
    response
        .headers_mut()
        .insert(http::header::SET_COOKIE, value);
    Ok(response)
}

/// The sign-in form, with a problem to say when there is one.
pub fn form_page(
    realm: SessionRealm,
    status: http::StatusCode,
    problem: Option<&str>,
    email: &str,
) -> Result<http::Response<Body>, HttpError> {
    let body = html! {
        @if let Some(p) = problem { p role="alert" { (p) } }
        form method="post" action={ (root(realm)) "/login" } {
            div.field {
                label for="email" { "Email" }
                input type="email" id="email" name="email" autocomplete="username" required value=(email);
            }
            div.field {
                label for="password" { "Password" }
                input type="password" id="password" name="password" autocomplete="current-password" required;
            }
            button type="submit" { "Sign in" }
        }
        @if realm == SessionRealm::Portal {
            p.muted { "New owner? Open the invitation link you were sent to set your password." }
        }
    };
    serve(status, frame(realm, None, "Sign in", body))
}

/// `GET …/login`: the form, or the realm's first page when signed in.
pub async fn show(
    rqctx: &RequestContext<Arc<App>>,
    realm: SessionRealm,
) -> Result<http::Response<Body>, HttpError> {
    in_span(rqctx, async {
        match session_of(rqctx, realm).await {
            Ok(Some(_)) => see_other(root(realm)),
            Ok(None) => form_page(realm, http::StatusCode::OK, None, ""),
            Err(e) => failed(realm, e),
        }
    })
    .await
}

/// `POST …/login`.
pub async fn submit(
    rqctx: &RequestContext<Arc<App>>,
    realm: SessionRealm,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    in_span(rqctx, async {
        if !same_origin(&rqctx.request) {
            return forged(realm);
        }
        let app = rqctx.context();
        let fields = form(body.as_bytes());
        let email = given(&fields, "email").unwrap_or_default();
        let password = fields.get("password").cloned().unwrap_or_default();
        let old = cookie(&rqctx.request, cookie_name(realm));
        let outcome = web_sessions::sign_in(
            app,
            realm,
            &email,
            password,
            &address(rqctx),
            old.as_deref(),
        )
        .await;
        match outcome {
            Ok(Ok(token)) => {
                tracing::info!(realm = realm.as_str(), "signed in");
                with_cookie(see_other(root(realm))?, &session_cookie(app, realm, &token))
            }
            Ok(Err(Refused::Credentials)) => form_page(
                realm,
                http::StatusCode::UNAUTHORIZED,
                Some("The email or the password is not right."),
                &email,
            ),
            Ok(Err(Refused::TooManyAttempts)) => form_page(
                realm,
                http::StatusCode::TOO_MANY_REQUESTS,
                Some("Too many failed sign-ins. Wait 15 minutes and try again."),
                &email,
            ),
            Ok(Err(Refused::Busy)) => form_page(
                realm,
                http::StatusCode::TOO_MANY_REQUESTS,
                Some("Many sign-ins are being checked at once. Try again in a few seconds."),
                &email,
            )
            .map(|mut r| {
                r.headers_mut().insert(
                    http::header::RETRY_AFTER,
                    http::HeaderValue::from_static("2"),
                );
                r
            }),
            Err(e) => failed(realm, e),
        }
    })
    .await
}

/// `POST …/logout`: ends the session, forgets the cookie.
pub async fn sign_out(
    rqctx: &RequestContext<Arc<App>>,
    sections: &Sections,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let realm = sections.realm;
    let token = cookie(&rqctx.request, cookie_name(realm));
    post_before_second_factor(
        rqctx,
        sections,
        "",
        body,
        |app, _session, _fields| async move {
            if let Some(token) = token {
                web_sessions::sign_out(&app, &token).await?;
            }
            see_other(&format!("{}/login", root(realm)))
                .and_then(|r| with_cookie(r, &cleared_cookie(realm)))
                .map(Reply::Raw)
                .map_err(|e| ApiError::Internal(e.internal_message))
        },
    )
    .await
}
