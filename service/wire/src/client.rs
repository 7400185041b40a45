//! Signing for clients: turns an outgoing `reqwest::Request` into a signed
//! one. The generated client calls [`sign_request`] before every request, so
//! a merchant hands over its key once and never computes a signature.

use crate::signature::{sign, SigningFields};
use std::sync::Arc;

/// A merchant's key and the clock its timestamps come from.
#[derive(Clone)]
pub struct Credentials {
    api_key: String,
    clock: Arc<dyn Fn() -> i64 + Send + Sync>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("Credentials").finish_non_exhaustive()
    }
}

impl Credentials {
    pub fn new(api_key: impl Into<String>) -> Self {
        Credentials {
            api_key: api_key.into(),
            clock: system_clock(),
        }
    }

    /// Replaces the source of `x-timestamp` (Unix seconds), for clients that
    /// keep their own time or tests that need a stale one.
    pub fn with_clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    pub fn api_key(&self) -> &str {
        &self.api_key
    }
}

/// Unix seconds by the system's clock.
fn system_clock() -> Arc<dyn Fn() -> i64 + Send + Sync> {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or_default()
    })
}

#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("cannot sign a streaming request body")]
    StreamingBody,
    #[error("cannot sign the request body: {0}")]
    Body(#[from] crate::signature::SigningFieldsError),
    #[error("invalid header value: {0}")]
    Header(String),
}

/// Credentials that can authenticate an outgoing request in place.
pub trait Authenticate {
    fn apply(
        &self,
        request: &mut reqwest::Request,
        path_templates: &[&str],
    ) -> Result<(), SignError>;
}

impl Authenticate for Credentials {
    fn apply(
        &self,
        request: &mut reqwest::Request,
        path_templates: &[&str],
    ) -> Result<(), SignError> {
        sign_request(self, request, path_templates)
    }
}

/// An operator token, sent as `authorization: Bearer <token>`.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    pub fn new(token: impl Into<String>) -> Self {
        BearerToken(token.into())
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl Authenticate for BearerToken {
    fn apply(&self, request: &mut reqwest::Request, _: &[&str]) -> Result<(), SignError> {
        let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", self.0))
            .map_err(|e| SignError::Header(format!("authorization: {e}")))?;
        request
            .headers_mut()
            .insert(reqwest::header::AUTHORIZATION, value);
        Ok(())
    }
}

/// A channel's secret, for calls to its adapter: each request is signed
/// over its path relative to the adapter's base URL (see `crate::channel`).
#[derive(Clone)]
pub struct ChannelSecret {
    secret: Vec<u8>,
    base_path: String,
    clock: Arc<dyn Fn() -> i64 + Send + Sync>,
}

impl std::fmt::Debug for ChannelSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("ChannelSecret").finish_non_exhaustive()
    }
}

impl ChannelSecret {
    /// `base_url` is the adapter's, as the client is built with: its path
    /// is left out of what is signed.
    pub fn new(secret: impl Into<Vec<u8>>, base_url: &str) -> Self {
        let base_path = reqwest::Url::parse(base_url)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_default();
        ChannelSecret {
            secret: secret.into(),
            base_path,
            clock: system_clock(),
        }
    }

    /// Replaces the source of `x-channel-timestamp` (Unix seconds).
    pub fn with_clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }
}

impl Authenticate for ChannelSecret {
    fn apply(&self, request: &mut reqwest::Request, _: &[&str]) -> Result<(), SignError> {
        let url = request.url();
        let path = url
            .path()
            .strip_prefix(&self.base_path)
            .unwrap_or(url.path());
        let path = match url.query() {
            Some(query) => format!("{path}?{query}"),
            None => path.to_string(),
        };
        let body = match request.body() {
            Some(body) => body.as_bytes().ok_or(SignError::StreamingBody)?,
            None => &[],
        };
        let timestamp = (self.clock)();
        let signature = crate::channel::sign(
            &self.secret,
            timestamp,
            request.method().as_str(),
            &path,
            body,
        );
        let headers = request.headers_mut();
        for (name, value) in [
            (crate::channel::HEADER_TIMESTAMP, timestamp.to_string()),
            (crate::channel::HEADER_SIGNATURE, signature),
        ] {
            let value = reqwest::header::HeaderValue::from_str(&value)
                .map_err(|e| SignError::Header(format!("{name}: {e}")))?;
            headers.insert(name, value);
        }
        Ok(())
    }
}

/// Signs `request` in place. `path_templates` are the API's paths
/// (`/api/v1/merchant/query/deposit/{order_no}`); a bodiless request signs
/// the path parameters of the template its URL matches, plus its query.
pub fn sign_request(
    credentials: &Credentials,
    request: &mut reqwest::Request,
    path_templates: &[&str],
) -> Result<(), SignError> {
    let fields = match request.body() {
        Some(body) => {
            let bytes = body.as_bytes().ok_or(SignError::StreamingBody)?;
            SigningFields::from_json_body(bytes)?
        }
        None => {
            let url = request.url();
            let mut fields: SigningFields = url.query_pairs().into_owned().collect();
            if let Some(params) = path_templates
                .iter()
                .find_map(|t| match_path_template(t, url.path()))
            {
                for (k, v) in params {
                    fields.insert(k, Some(v));
                }
            }
            fields
        }
    };
    let signature = sign(&fields, &credentials.api_key);
    let timestamp = (credentials.clock)().to_string();
    let headers = request.headers_mut();
    for (name, value) in [
        ("x-api-key", credentials.api_key.as_str()),
        ("x-timestamp", timestamp.as_str()),
        ("x-signature", signature.as_str()),
    ] {
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|e| SignError::Header(format!("{name}: {e}")))?;
        headers.insert(name, value);
    }
    Ok(())
}

/// Matches a URL path against a template with `{name}` segments and returns
/// the decoded values of those segments.
pub fn match_path_template(template: &str, path: &str) -> Option<Vec<(String, String)>> {
    let t: Vec<&str> = template.trim_end_matches('/').split('/').collect();
    let p: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    if t.len() != p.len() {
        return None;
    }
    let mut out = Vec::new();
    for (ts, ps) in t.iter().zip(p.iter()) {
        match ts.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => {
                let value = percent_encoding::percent_decode_str(ps)
                    .decode_utf8()
                    .ok()?
                    .into_owned();
                out.push((name.to_string(), value));
            }
            None if ts == ps => {}
            None => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_by_segment() {
        let t = "/api/v1/merchant/query/deposit/{order_no}";
        assert_eq!(
            match_path_template(t, "/api/v1/merchant/query/deposit/D%2D1"),
            Some(vec![("order_no".into(), "D-1".into())])
        );
        assert_eq!(
            match_path_template(t, "/api/v1/merchant/query/deposit"),
            None
        );
        assert_eq!(
            match_path_template(t, "/api/v1/merchant/query/other/x"),
            None
        );
    }
}
