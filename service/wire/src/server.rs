//! Dropshot extractors that keep what a signature check needs: the three
//! security headers, the query pairs, and the body's raw bytes. The header
//! extractors never refuse a request themselves; the service decides (and
//! answers 401 with its own error codes) because a missing header is an
//! authentication failure, not a malformed request. What the body and query
//! extractors refuse (a body that is not JSON or too large, a query that does
//! not parse) they refuse in the service's error envelope, with an
//! `error_code` from the published table: dropshot's own extractors answer
//! without one.

use crate::signature::{SigningFields, SigningFieldsError};
use async_trait::async_trait;
use dropshot::{
    ApiEndpointBodyContentType, ClientErrorStatusCode, ExclusiveExtractor, ExtractorMetadata,
    HttpError, RequestContext, ServerContext, SharedExtractor,
};
use http_body_util::BodyExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;

pub const HEADER_API_KEY: &str = "x-api-key";
pub const HEADER_TIMESTAMP: &str = "x-timestamp";
pub const HEADER_SIGNATURE: &str = "x-signature";

/// The security headers of a merchant request and its query pairs.
#[derive(Debug, Clone)]
pub struct SignatureHeaders {
    pub api_key: Option<String>,
    pub timestamp: Option<String>,
    pub signature: Option<String>,
    /// Query-string pairs, signed for requests without a body.
    pub query: SigningFields,
}

impl SignatureHeaders {
    /// The fields a GET request signs: its query pairs and its path
    /// parameters (taken from the typed path struct, so no handler lists them
    /// by hand).
    pub fn get_fields<P: Serialize>(&self, path: Option<&P>) -> SigningFields {
        let mut fields = self.query.clone();
        if let Some(path) = path {
            if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(path) {
                for (k, v) in map {
                    let text = match v {
                        serde_json::Value::Null => None,
                        serde_json::Value::String(s) => Some(s),
                        other => Some(other.to_string()),
                    };
                    fields.insert(k, text);
                }
            }
        }
        fields
    }
}

/// A header's trimmed value. One that is empty or not visible ASCII is
/// treated as absent: the caller then hears which header is wrong.
fn header(headers: &hyper::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[async_trait]
impl SharedExtractor for SignatureHeaders {
    async fn from_request<Context: ServerContext>(
        rqctx: &RequestContext<Context>,
    ) -> Result<Self, HttpError> {
        let get = |name: &str| header(rqctx.request.headers(), name);
        let query = rqctx
            .request
            .uri()
            .query()
            .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default();
        Ok(SignatureHeaders {
            api_key: get(HEADER_API_KEY),
            timestamp: get(HEADER_TIMESTAMP),
            signature: get(HEADER_SIGNATURE),
            query,
        })
    }

    fn metadata(content_type: ApiEndpointBodyContentType) -> ExtractorMetadata {
        // Described as the required headers they are, although extraction
        // itself tolerates their absence (see the module comment).
        <dropshot::Header<SecurityHeaders> as SharedExtractor>::metadata(content_type)
    }
}

/// An operator's bearer token, if the request carried one. As with the
/// signature headers, the service decides what a missing one means.
#[derive(Debug, Clone)]
pub struct BearerToken(pub Option<String>);

#[async_trait]
impl SharedExtractor for BearerToken {
    async fn from_request<Context: ServerContext>(
        rqctx: &RequestContext<Context>,
    ) -> Result<Self, HttpError> {
        let token = rqctx
            .request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| token.trim().to_string())
            })
            .filter(|t| !t.is_empty());
        Ok(BearerToken(token))
    }

    fn metadata(content_type: ApiEndpointBodyContentType) -> ExtractorMetadata {
        <dropshot::Header<AuthorizationHeader> as SharedExtractor>::metadata(content_type)
    }
}

/// What checking a channel's signature needs besides the body: its two
/// headers (absent ones as `None`: the receiver answers 401 in its own
/// envelope), the method, and the path with its query as received.
#[derive(Debug, Clone)]
pub struct ChannelSignatureHeaders {
    pub timestamp: Option<String>,
    pub signature: Option<String>,
    pub method: String,
    pub path_and_query: String,
}

#[async_trait]
impl SharedExtractor for ChannelSignatureHeaders {
    async fn from_request<Context: ServerContext>(
        rqctx: &RequestContext<Context>,
    ) -> Result<Self, HttpError> {
        let get = |name: &str| header(rqctx.request.headers(), name);
        let uri = rqctx.request.uri();
        Ok(ChannelSignatureHeaders {
            timestamp: get(crate::channel::HEADER_TIMESTAMP),
            signature: get(crate::channel::HEADER_SIGNATURE),
            method: rqctx.request.method().as_str().to_string(),
            path_and_query: uri
                .path_and_query()
                .map(|p| p.as_str().to_string())
                .unwrap_or_else(|| uri.path().to_string()),
        })
    }

    fn metadata(content_type: ApiEndpointBodyContentType) -> ExtractorMetadata {
        <dropshot::Header<ChannelSecurityHeaders> as SharedExtractor>::metadata(content_type)
    }
}

/// The documented shape of a channel's signature headers.
#[derive(serde::Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ChannelSecurityHeaders {
    /// Unix seconds at signing time.
    #[serde(rename = "x-channel-timestamp")]
    timestamp: String,
    /// Lowercase hex HMAC-SHA256 of the request under the channel's secret.
    #[serde(rename = "x-channel-signature")]
    signature: String,
}

/// The documented shape of the operator's header.
#[derive(serde::Deserialize, JsonSchema)]
#[allow(dead_code)]
struct AuthorizationHeader {
    /// `Bearer <token>`: an operator token from the service's configuration.
    authorization: String,
}

/// The documented shape of the security headers.
#[derive(serde::Deserialize, JsonSchema)]
#[allow(dead_code)]
struct SecurityHeaders {
    /// The merchant's API key.
    #[serde(rename = "x-api-key")]
    api_key: String,
    /// Unix epoch seconds at signing time; refused outside the tolerated skew.
    #[serde(rename = "x-timestamp")]
    timestamp: String,
    /// Lowercase hex MD5 signature of the request.
    #[serde(rename = "x-signature")]
    signature: String,
}

/// A JSON body kept as bytes until its signature is checked, then parsed into
/// `T`. It documents itself exactly as `TypedBody<T>` would.
#[derive(Debug)]
pub struct SignedJson<T> {
    bytes: Vec<u8>,
    _body: PhantomData<fn() -> T>,
}

/// Why a body could not become a `T`, with the field it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyError {
    /// The path of the offending field (`amount`, `payer_bank_cards[0]`), or
    /// `None` when the body as a whole is wrong.
    pub field: Option<String>,
    /// What is wrong with it, without the field's name.
    pub message: String,
}

impl<T: DeserializeOwned> SignedJson<T> {
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        SignedJson {
            bytes: bytes.into(),
            _body: PhantomData,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn signing_fields(&self) -> Result<SigningFields, SigningFieldsError> {
        SigningFields::from_json_body(self.bytes())
    }

    pub fn parse(&self) -> Result<T, BodyError> {
        let de = &mut serde_json::Deserializer::from_slice(self.bytes());
        serde_path_to_error::deserialize(de)
            .map_err(|e| BodyError::at(e.path().to_string(), strip_location(e.inner())))
    }
}

impl BodyError {
    /// The error serde reported at `path` (`.` for the root), naming the
    /// field: serde reports a missing field at the root, in its message.
    fn at(path: String, message: String) -> BodyError {
        if path != "." {
            return BodyError {
                field: Some(path),
                message,
            };
        }
        match message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
        {
            Some(field) => BodyError {
                field: Some(field.to_string()),
                message: "is required".into(),
            },
            None => BodyError {
                field: None,
                message,
            },
        }
    }
}

/// serde_json appends "at line 1 column 42"; the field name says more.
fn strip_location(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[async_trait]
impl<T> ExclusiveExtractor for SignedJson<T>
where
    T: JsonSchema + DeserializeOwned + Send + Sync + 'static,
{
    async fn from_request<Context: ServerContext>(
        rqctx: &RequestContext<Context>,
        request: hyper::Request<dropshot::Body>,
    ) -> Result<Self, HttpError> {
        if !is_json(request.headers().get(hyper::header::CONTENT_TYPE)) {
            return Err(refusal(
                "UNSUPPORTED_MEDIA_TYPE",
                ClientErrorStatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the body must be sent as `content-type: application/json`".into(),
            ));
        }
        let limit = rqctx.request_body_max_bytes();
        let too_large = || {
            refusal(
                "PAYLOAD_TOO_LARGE",
                ClientErrorStatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is larger than {limit} bytes"),
            )
        };
        // A declared length over the limit is refused before reading.
        let declared = request
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let within = std::time::Duration::from_secs(BODY_READ_SECONDS);
        match read_body(request.into_body(), limit, within).await {
            Ok(bytes) => Ok(SignedJson::from_bytes(bytes.to_vec())),
            Err(BodyRead::TooLarge) => Err(too_large()),
            Err(BodyRead::Broken) => Err(refusal(
                "INVALID_BODY",
                ClientErrorStatusCode::BAD_REQUEST,
                "the body could not be read".into(),
            )),
            Err(BodyRead::Slow) => {
                let mut err = refusal(
                    "INVALID_BODY",
                    ClientErrorStatusCode::BAD_REQUEST,
                    format!(
                        "the body did not arrive whole within {BODY_READ_SECONDS} seconds of the request's head"
                    ),
                );
                // What is left of it is not read: the connection goes.
                let _ = err.add_header(hyper::header::CONNECTION, "close");
                Err(err)
            }
        }
    }

    fn metadata(content_type: ApiEndpointBodyContentType) -> ExtractorMetadata {
        <dropshot::TypedBody<T> as ExclusiveExtractor>::metadata(content_type)
    }
}

/// How long a request's body may take to arrive whole once its head has:
/// a client that trickles a body holds a connection (of a bounded number)
/// and nothing else bounds it. The head has hyper's 30 s; the body the same.
pub const BODY_READ_SECONDS: u64 = 30;

/// Why a body was not read.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyRead {
    /// Longer than the limit.
    TooLarge,
    /// The connection broke or the framing was wrong.
    Broken,
    /// Not whole within the time allowed.
    Slow,
}

/// Reads `body` whole: at most `limit` bytes, within `within`.
pub async fn read_body<B>(
    body: B,
    limit: usize,
    within: std::time::Duration,
) -> Result<bytes::Bytes, BodyRead>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let collect = http_body_util::Limited::new(body, limit).collect();
    match tokio::time::timeout(within, collect).await {
        Err(_) => Err(BodyRead::Slow),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(BodyRead::TooLarge),
        Ok(Err(_)) => Err(BodyRead::Broken),
    }
}

/// `application/json`, with or without parameters (`; charset=utf-8`), in
/// any case.
fn is_json(value: Option<&hyper::header::HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// An error in the service's envelope: `{request_id, error_code, message}`.
pub fn refusal(code: &str, status: ClientErrorStatusCode, message: String) -> HttpError {
    HttpError::for_client_error(Some(code.to_string()), status, message)
}

/// Query parameters, parsed as dropshot's `Query<T>` would and documented
/// exactly as it documents them, but refused in the service's envelope
/// (400 `INVALID_FIELD`, naming the parameter) when they do not parse.
#[derive(Debug)]
pub struct Query<T>(T);

impl<T> Query<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: DeserializeOwned> Query<T> {
    /// Parses a raw query string (without the `?`).
    pub fn parse(raw: &str) -> Result<T, BodyError> {
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(raw.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map_err(|e| BodyError::at(e.path().to_string(), e.inner().to_string()))
    }
}

#[async_trait]
impl<T> SharedExtractor for Query<T>
where
    T: JsonSchema + DeserializeOwned + Send + Sync + 'static,
{
    async fn from_request<Context: ServerContext>(
        rqctx: &RequestContext<Context>,
    ) -> Result<Self, HttpError> {
        let raw = rqctx.request.uri().query().unwrap_or("");
        Query::<T>::parse(raw).map(Query).map_err(|e| {
            let message = match e.field {
                Some(field) => format!("invalid field `{field}`: {}", e.message),
                None => format!("invalid query string: {}", e.message),
            };
            refusal("INVALID_FIELD", ClientErrorStatusCode::BAD_REQUEST, message)
        })
    }

    fn metadata(content_type: ApiEndpointBodyContentType) -> ExtractorMetadata {
        <dropshot::Query<T> as SharedExtractor>::metadata(content_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::Full;
    use hyper::body::Frame;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    /// A body whose first part arrives and whose rest never does.
    struct Trickle(Option<bytes::Bytes>);

    impl hyper::body::Body for Trickle {
        type Data = bytes::Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<bytes::Bytes>, std::io::Error>>> {
            match self.0.take() {
                Some(part) => Poll::Ready(Some(Ok(Frame::data(part)))),
                None => Poll::Pending,
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_arriving_is_refused_when_its_time_is_up() {
        let started = tokio::time::Instant::now();
        let body = Trickle(Some(bytes::Bytes::from_static(b"{\"amount\"")));
        let read = read_body(body, 1024, Duration::from_secs(BODY_READ_SECONDS)).await;
        assert_eq!(read, Err(BodyRead::Slow));
        // The paused clock moved exactly the time allowed.
        assert_eq!(started.elapsed(), Duration::from_secs(BODY_READ_SECONDS));
    }

    #[tokio::test(start_paused = true)]
    async fn a_whole_body_is_read_and_a_long_one_refused() {
        let whole = Full::new(bytes::Bytes::from_static(b"{}"));
        let read = read_body(whole, 1024, Duration::from_secs(1)).await;
        assert_eq!(read.as_deref(), Ok(&b"{}"[..]));
        let long = Full::new(bytes::Bytes::from(vec![b'x'; 2048]));
        let read = read_body(long, 1024, Duration::from_secs(1)).await;
        assert_eq!(read, Err(BodyRead::TooLarge));
    }
}
