//! `/console/second-factor`: after the password, an operator who may
//! decide a money action proves a code from an authenticator app. The
//! first time, the page shows the key to add (a QR code and the key as
//! text) and the first code proven ends enrolment. Also the code field of
//! the approval forms, and its check before an approval.

use super::{operator, REALM};
use crate::app::people::Operator;
use crate::app::second_factor::{self, Prompt, Refused, When};
use crate::app::web_sessions::Session;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::observe::in_span;
use crate::pages::web::guard::{post_before_second_factor, Reply, SECOND_FACTOR};
use crate::pages::web::{address, csrf_field, failed, frame, given, session_of, to_sign_in};
use crate::pages::{see_other, serve};
use base64::Engine;
use dropshot::{endpoint, Body, HttpError, RequestContext, UntypedBody};
use maud::{html, Markup};
use std::collections::HashMap;
use std::sync::Arc;

/// The code field of a form that approves a money action.
pub(super) fn code_field(id: &str) -> Markup {
    html! {
        div {
            label for={ "code-" (id) } { "Authenticator code (to approve)" }
            input type="text" id={ "code-" (id) } name="code" inputmode="numeric"
                autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7";
        }
    }
}

/// Before an approval: a fresh code from the approver's authenticator,
/// when their role needs one. A refusal is the form's error, naming the
/// field.
pub(super) async fn approval_code(
    app: &App,
    op: &Operator,
    fields: &HashMap<String, String>,
    address: &str,
) -> Result<(), ApiError> {
    if !op.role.needs_second_factor() || op.id.is_none() {
        return Ok(());
    }
    let code = given(fields, "code").ok_or_else(|| {
        ApiError::invalid_field(
            "code",
            "is needed: approving asks for a fresh code from your authenticator app",
        )
    })?;
    match second_factor::prove(app, op, &code, address, When::Approval).await? {
        Ok(()) => Ok(()),
        Err(Refused::Wrong) => Err(ApiError::invalid_field(
            "code",
            "is not your authenticator's code now: nothing was approved",
        )),
        Err(Refused::Used) => Err(ApiError::invalid_field(
            "code",
            "was used already: wait for your authenticator's next code; nothing was approved",
        )),
        Err(Refused::TooManyAttempts) => Err(ApiError::RateLimited { retry_after: 900 }),
    }
}

fn code_input() -> Markup {
    html! {
        div.field {
            label for="code" { "Code from your authenticator app" }
            input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code"
                pattern="[0-9 ]{6,7}" maxlength="7" required autofocus;
        }
    }
}

/// The enrolment link as a QR code an authenticator app scans.
fn enrolment_qr(link: &str) -> Markup {
    let Ok(code) = qrcode::QrCode::with_error_correction_level(link, qrcode::EcLevel::M) else {
        return html! {};
    };
    let svg = code
        .render::<qrcode::render::svg::Color>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build();
    let src = format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(svg)
    );
    html! {
        img id="totp-qr" width="200" height="200" alt="QR code of the key below, for an authenticator app" src=(src);
    }
}

/// The page: the enrolment or the code form, with a problem when there is one.
async fn prompt_page(
    app: &App,
    session: &Session,
    status: http::StatusCode,
    problem: Option<&str>,
) -> Result<http::Response<Body>, HttpError> {
    let op = match operator(session) {
        Ok(op) => op,
        Err(e) => return failed(REALM, e),
    };
    let prompt = match second_factor::prompt(app, &op).await {
        Ok(prompt) => prompt,
        Err(e) => return failed(REALM, e),
    };
    let (title, intro) = match &prompt {
        Prompt::Enrol { key, link } => (
            "Set up your authenticator",
            html! {
                p { "Your role may approve money actions, so the console asks for a code from an authenticator app (such as Google Authenticator, Microsoft Authenticator or 1Password) each time you sign in and before each approval." }
                p { "Scan this QR code with the app, or type the key into it. Then enter the six-digit code the app shows." }
                figure {
                    (enrolment_qr(link))
                    figcaption { "Key: " code #totp-secret { (key) } " (six digits, every 30 seconds)" }
                }
            },
        ),
        Prompt::Code => (
            "Enter your code",
            html! { p { "Enter the six-digit code your authenticator app shows for the payments console." } },
        ),
    };
    let body = html! {
        @if let Some(p) = problem { p role="alert" { (p) } }
        (intro)
        form method="post" action=(SECOND_FACTOR) {
            (csrf_field(session))
            (code_input())
            button type="submit" { "Continue" }
        }
        form method="post" action="/console/logout" {
            (csrf_field(session))
            button type="submit" class="secondary" { "Sign out" }
        }
        p.muted { "Lost your phone? An administrator resets your authenticator with " code { "payments operator second-factor-reset" } "." }
    };
    serve(status, frame(REALM, None, title, body))
}

#[endpoint { method = GET, path = "/console/second-factor", unpublished = true }]
pub async fn console_second_factor_page(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    in_span(&rqctx, async {
        match session_of(&rqctx, REALM).await {
            Ok(Some(session)) if session.second_factor_pending => {
                prompt_page(rqctx.context(), &session, http::StatusCode::OK, None).await
            }
            Ok(Some(_)) => see_other("/console"),
            Ok(None) => to_sign_in(REALM),
            Err(e) => failed(REALM, e),
        }
    })
    .await
}

#[endpoint { method = POST, path = "/console/second-factor", unpublished = true }]
pub async fn console_second_factor(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let from = address(&rqctx);
    post_before_second_factor(
        &rqctx,
        &super::SECTIONS,
        SECOND_FACTOR,
        body,
        |app, session, fields| async move {
            if !session.second_factor_pending {
                return Ok(Reply::Go("/console".into()));
            }
            let op = operator(&session)?;
            let code = given(&fields, "code").unwrap_or_default();
            let refused = match second_factor::prove_for_session(&app, &session.id, &op, &code, &from).await? {
                Ok(()) => return Ok(Reply::Go("/console".into())),
                Err(refused) => refused,
            };
            let (status, said) = match refused {
                Refused::Wrong => (
                    http::StatusCode::UNAUTHORIZED,
                    "That code is not right. Enter the code your app shows now (a new one comes every 30 seconds).",
                ),
                Refused::Used => (
                    http::StatusCode::UNAUTHORIZED,
                    "That code was used already. Wait for the next one your app shows.",
                ),
                Refused::TooManyAttempts => (
                    http::StatusCode::TOO_MANY_REQUESTS,
                    "Too many wrong codes. Wait 15 minutes and try again.",
                ),
            };
            prompt_page(&app, &session, status, Some(said))
                .await
                .map(Reply::Raw)
                .map_err(|e| ApiError::Internal(e.internal_message))
        },
    )
    .await
}
