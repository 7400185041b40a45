//! The door every request passes before dropshot routes it. dropshot's
//! router answers an unknown path (404) or method (405) itself, with no
//! `error_code`; the contract says every error carries one. dropshot has no
//! hook for router errors, but it asks a version policy about every request
//! before routing, so the gate is one: it looks the request up in a router
//! built from the same API description, answers what would fail in the
//! envelope, and otherwise lets the request through unchanged.

use crate::app::App;
use dropshot::{
    ApiDescription, Body, ClientErrorStatusCode, DynamicVersionPolicy, HttpError, VersionPolicy,
};
use std::sync::Arc;

/// The only version the gate hands dropshot: every endpoint is registered
/// for all versions, so routing is exactly as if unversioned.
const VERSION: dropshot::semver::Version = dropshot::semver::Version::new(0, 1, 0);

type Lookup = dyn Fn(&http::Method, &str) -> Result<String, HttpError> + Send + Sync;

/// The served routes, looked up apart from dropshot's own router: the gate
/// asks whether a request would be routed, the log bridge which operation
/// it was.
pub struct Routes {
    lookup: Box<Lookup>,
}

impl Routes {
    /// The routes of `api`, a second copy of the served description
    /// (dropshot keeps the first).
    pub fn new(api: ApiDescription<Arc<App>>) -> Arc<Routes> {
        let router = api.into_router();
        let lookup = move |method: &http::Method, path: &str| {
            router
                .lookup_route(method, path.into(), None)
                .map(|found| found.endpoint.operation_id)
        };
        Arc::new(Routes {
            lookup: Box::new(lookup),
        })
    }

    /// The operation id of the endpoint serving `method` on `path`.
    pub fn operation(&self, method: &http::Method, path: &str) -> Option<String> {
        (self.lookup)(method, path).ok()
    }

    fn refusal(&self, method: &http::Method, path: &str) -> Option<HttpError> {
        (self.lookup)(method, path).err()
    }
}

pub struct Gate {
    routes: Arc<Routes>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate")
    }
}

impl Gate {
    pub fn policy(routes: Arc<Routes>) -> VersionPolicy {
        VersionPolicy::Dynamic(Box::new(Gate { routes }))
    }
}

impl DynamicVersionPolicy for Gate {
    fn request_extract_version(
        &self,
        request: &http::Request<Body>,
        _log: &slog::Logger,
    ) -> Result<dropshot::semver::Version, HttpError> {
        match self.routes.refusal(request.method(), request.uri().path()) {
            None => Ok(VERSION),
            Some(refused) => Err(in_envelope(refused, request.method())),
        }
    }
}

/// The router's refusal, with the code and message the contract publishes.
fn in_envelope(refused: HttpError, method: &http::Method) -> HttpError {
    let (code, status, message) = match refused.status_code.as_u16() {
        405 => (
            "METHOD_NOT_ALLOWED",
            ClientErrorStatusCode::METHOD_NOT_ALLOWED,
            format!("{method} is not allowed on this path; the `Allow` header lists what is"),
        ),
        404 => (
            "NOT_FOUND",
            ClientErrorStatusCode::NOT_FOUND,
            "no endpoint has this path".to_string(),
        ),
        _ => (
            "INVALID_PATH",
            ClientErrorStatusCode::BAD_REQUEST,
            "the path is not validly encoded".to_string(),
        ),
    };
    let mut answer = HttpError::for_client_error(Some(code.into()), status, message);
    // 405 names the methods the path has (RFC 9110 § 15.5.6).
    answer.headers = refused.headers;
    answer
}
