//! What the HTTP layer tells operators. dropshot logs one record when a
//! request completes (and a few about connections) through `slog`; the
//! bridge here turns those records into `tracing` events (so the service
//! has one log stream, in one format) and into the request metrics,
//! naming each request by its operation id. Every request passes through
//! it, including those refused before a handler ran (unknown path, wrong
//! method, a body too large or of the wrong type), which a handler-side
//! counter would miss. Handlers run their work in `in_span`, so what they
//! log carries the request id that the client gets back as `x-request-id`.

use super::gate::Routes;
use crate::app::admission::Budget;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::telemetry::{metrics, redact};
use dropshot::{HttpError, RequestContext};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

/// Runs a handler's work in the request's span: request id, operation id,
/// and (recorded by authentication) the merchant or operator. The request
/// is counted against its surface's budget first, and refused at once with
/// 503 and `Retry-After` when that is spent (`app::admission`).
pub fn in_span<'a, T>(
    rqctx: &'a RequestContext<Arc<App>>,
    work: impl Future<Output = Result<T, HttpError>> + 'a,
) -> impl Future<Output = Result<T, HttpError>> + 'a {
    // On the heap before anything waits. Each async fn that takes a future
    // keeps two copies of it in its own (the argument, and the local the
    // argument moves into), and each layer above holds the one below
    // whole: a merchant's request, refused or admitted, held a 28 KiB
    // handler future for 5.5 KiB of authentication, and a crowd of them
    // that much memory (bench/results/abuse.md).
    let work = Box::pin(work);
    async move {
        let budget = Budget::of_path(rqctx.request.uri().path());
        let Some(_admitted) = rqctx.context().admission.admit(budget) else {
            metrics::refused_at_capacity(budget.as_str());
            return Err(crate::error::http_error(ApiError::AtCapacity(
                budget.as_str(),
            )));
        };
        let span = tracing::info_span!(
            "request",
            request_id = %rqctx.request_id,
            operation = %rqctx.endpoint.operation_id,
            merchant_id = tracing::field::Empty,
            operator = tracing::field::Empty,
        );
        work.instrument(span).await
    }
}

/// What an endpoint answers with 200: a body the contract describes.
pub trait Answer: serde::Serialize + schemars::JsonSchema + Send + Sync + 'static {}
impl<T: serde::Serialize + schemars::JsonSchema + Send + Sync + 'static> Answer for T {}

/// Runs a handler's work in the request's span and answers it: 200 with
/// its body, or its error through the envelope.
pub fn answered<'a, T: Answer>(
    rqctx: &'a RequestContext<Arc<App>>,
    work: impl Future<Output = Result<T, ApiError>> + 'a,
) -> impl Future<Output = Result<dropshot::HttpResponseOk<T>, HttpError>> + 'a {
    in_span(rqctx, async {
        Ok(dropshot::HttpResponseOk(
            work.await.map_err(crate::error::http_error)?,
        ))
    })
}

/// dropshot's logger: its records, bridged.
pub fn logger(routes: Arc<Routes>) -> slog::Logger {
    slog::Logger::root(
        Bridge {
            routes: std::panic::AssertUnwindSafe(routes),
        },
        slog::o!(),
    )
}

struct Bridge {
    // A lookup never leaves the router half-changed: nothing to unwind.
    routes: std::panic::AssertUnwindSafe<Arc<Routes>>,
}

/// The key-values of one dropshot record that the bridge reads; the rest
/// are kept as text.
#[derive(Default)]
struct Fields {
    request_id: String,
    method: String,
    uri: String,
    status: Option<u16>,
    latency_us: Option<u64>,
    internal: Option<String>,
    external: Option<String>,
    other: String,
}

impl slog::Serializer for Fields {
    fn emit_arguments(&mut self, key: slog::Key, val: &std::fmt::Arguments) -> slog::Result {
        let text = val.to_string();
        match key.as_ref() {
            "req_id" => self.request_id = text,
            "method" => self.method = text,
            // The raw URI carries a cashier page's token: masked at once.
            "uri" => self.uri = redact::path(&text).into_owned(),
            "response_code" => self.status = text.parse().ok(),
            "latency_us" => self.latency_us = text.parse().ok(),
            "error_message_internal" => self.internal = Some(text),
            "error_message_external" => self.external = Some(text),
            // Addresses of the peer are noise in every line; the request
            // id ties a line to its request.
            "remote_addr" | "local_addr" => {}
            other => {
                use std::fmt::Write;
                let _ = write!(self.other, "{other}={text} ");
            }
        }
        Ok(())
    }
}

impl slog::Drain for Bridge {
    type Ok = ();
    type Err = slog::Never;

    fn log(
        &self,
        record: &slog::Record<'_>,
        values: &slog::OwnedKVList,
    ) -> Result<(), slog::Never> {
        use slog::KV;
        let mut fields = Fields::default();
        let _ = values.serialize(record, &mut fields);
        let _ = record.kv().serialize(record, &mut fields);
        let message = record.msg().to_string();
        match (message.as_str(), fields.status) {
            ("request completed", Some(status)) => self.completed(&fields, status),
            _ => forward(record.level(), &message, &fields),
        }
        Ok(())
    }
}

impl Bridge {
    fn completed(&self, f: &Fields, status: u16) {
        let path = f.uri.split('?').next().unwrap_or_default();
        let operation = http::Method::from_bytes(f.method.as_bytes())
            .ok()
            .and_then(|m| self.routes.operation(&m, path))
            .unwrap_or_else(|| "unknown".to_string());
        let latency_us = f.latency_us.unwrap_or_default();
        metrics::http_request(&operation, status, Duration::from_micros(latency_us));
        macro_rules! line {
            ($level:ident, $error:expr, $message:literal) => {
                tracing::$level!(
                    target: "payments::http",
                    request_id = %f.request_id,
                    method = %f.method,
                    uri = %f.uri,
                    operation = %operation,
                    status,
                    latency_us,
                    error = $error,
                    $message
                )
            };
        }
        // A 5xx is the service's fault: its internal cause is logged. A
        // 4xx is the client's: what the client was told is enough.
        if status >= 500 {
            line!(error, f.internal.as_deref(), "request failed");
        } else {
            line!(info, f.external.as_deref(), "request completed");
        }
    }
}

/// Any other record of dropshot's, at its level, but for two: a new
/// connection (one per connection is noise at info), and the gate's
/// refusal of an unknown path or method, which dropshot reports as an
/// error of its version policy although the client's 404 or 405 is told
/// in full by the request's own line.
fn forward(level: slog::Level, message: &str, f: &Fields) {
    let detail = f.other.trim_end();
    let request_id = (!f.request_id.is_empty()).then_some(f.request_id.as_str());
    macro_rules! emit {
        ($level:ident) => {
            tracing::$level!(target: "dropshot", request_id, detail, "{message}")
        };
    }
    match level {
        _ if message == "failed to determine request API version" => emit!(debug),
        slog::Level::Critical | slog::Level::Error => emit!(error),
        slog::Level::Warning => emit!(warn),
        slog::Level::Info if message == "accepted connection" => emit!(debug),
        slog::Level::Info => emit!(info),
        slog::Level::Debug => emit!(debug),
        slog::Level::Trace => emit!(trace),
    }
}

/// What a connection past `connections_at_once` is answered, written once
/// its request's head has arrived (the body is not read): the service's 503 with
/// `Retry-After`, in its envelope, and the connection closed. Built here,
/// not by the server, so it reads as every other refusal at a bound.
pub fn connection_refusal(
    at_once: usize,
) -> impl Fn(std::net::SocketAddr) -> bytes::Bytes + Send + Sync + 'static {
    move |_| {
        metrics::refused_at_capacity("connections");
        refusal(format!(
            "the service holds as many connections as it takes at once ({at_once}); retry later"
        ))
    }
}

/// What a connection from an address that already holds
/// `connections_per_address` is answered, as `connection_refusal`'s.
pub fn address_refusal(most: usize) -> bytes::Bytes {
    metrics::refused_at_capacity("connections per address");
    refusal(format!(
        "this address holds as many connections as one address may ({most}); retry later"
    ))
}

/// The 503 a connection is refused with, whole: `message` in the envelope.
fn refusal(message: String) -> bytes::Bytes {
    let request_id = uuid::Uuid::new_v4().to_string();
    let body = serde_json::json!({
        "request_id": request_id,
        "error_code": ApiError::AtCapacity("connections").code(),
        "message": message,
    })
    .to_string();
    bytes::Bytes::from(format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\
         x-request-id: {request_id}\r\n\r\n{body}",
        body.len()
    ))
}
