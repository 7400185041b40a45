//! The conformance harness: where the service under test runs, how a
//! scenario gets a merchant of its own, and a raw HTTP path for requests
//! the generated client would never send (tampered, unsigned, stale).
//!
//! Environment:
//! - `CONFORMANCE_PROFILE`: `sandbox` (default) or `production`.
//! - `CONFORMANCE_BASE_URL`: target a deployed service instead of starting
//!   one in-process; `CONFORMANCE_API_KEYS` then lists merchant keys
//!   (comma-separated) handed out one per merchant a scenario asks for.
//! - `PAYMENTS_TEST_DATABASE_URL`: run the in-process service on a fresh
//!   PostgreSQL database (required for the production profile).

use anyhow::{anyhow, bail, Context, Result};
use payments_service::clock::SystemClock;
use payments_service::testing::TestService;
use payments_service::Profile;
use payments_wire::SigningFields;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::OnceCell;

pub enum Target {
    InProcess(TestService),
    Remote {
        base_url: String,
        api_keys: Vec<String>,
        next: AtomicUsize,
    },
}

pub struct Harness {
    pub profile: Profile,
    pub target: Target,
    pub http: reqwest::Client,
}

static HARNESS: OnceCell<Harness> = OnceCell::const_new();

pub fn profile_from_env() -> Result<Profile> {
    std::env::var("CONFORMANCE_PROFILE")
        .unwrap_or_else(|_| "sandbox".into())
        .parse()
}

pub async fn harness() -> &'static Harness {
    match HARNESS.get_or_try_init(Harness::start).await {
        Ok(h) => h,
        Err(e) => panic!("the conformance harness could not start: {e:#}"),
    }
}

impl Harness {
    async fn start() -> Result<Harness> {
        let profile = profile_from_env()?;
        let target = match std::env::var("CONFORMANCE_BASE_URL") {
            Ok(base_url) if !base_url.is_empty() => Target::Remote {
                base_url: base_url.trim_end_matches('/').to_string(),
                api_keys: std::env::var("CONFORMANCE_API_KEYS")
                    .unwrap_or_default()
                    .split(',')
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .map(String::from)
                    .collect(),
                next: AtomicUsize::new(0),
            },
            _ => Target::InProcess(
                TestService::start(profile, Arc::new(SystemClock))
                    .await
                    .context("starting the service in-process")?,
            ),
        };
        Ok(Harness {
            profile,
            target,
            http: reqwest::Client::new(),
        })
    }

    pub fn base_url(&self) -> String {
        match &self.target {
            Target::InProcess(s) => s.base_url(),
            Target::Remote { base_url, .. } => base_url.clone(),
        }
    }

    /// A merchant no other scenario uses.
    pub async fn fresh_merchant(&self) -> Result<Merchant> {
        match &self.target {
            Target::InProcess(s) => {
                let m = s.new_merchant("Conformance Merchant").await?;
                Ok(Merchant {
                    id: m.merchant.id,
                    api_key: m.api_key,
                })
            }
            Target::Remote { api_keys, next, .. } => {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let key = api_keys.get(i).ok_or_else(|| {
                    anyhow!(
                        "CONFORMANCE_API_KEYS holds {} keys; scenario needs more",
                        api_keys.len()
                    )
                })?;
                Ok(Merchant {
                    id: String::new(),
                    api_key: key.clone(),
                })
            }
        }
    }

    pub fn client(&self, merchant: &Merchant) -> merchant_client::merchant::Client {
        merchant_client::merchant::Client::new(
            &self.base_url(),
            merchant_client::Credentials::new(merchant.api_key.clone()),
        )
    }

    /// Sends a request built by hand, signing it as `raw` says.
    pub async fn send(&self, raw: RawRequest) -> Result<Reply> {
        let url = format!("{}{}", self.base_url(), raw.path);
        let fields = match (&raw.sign_as, &raw.body) {
            (Some(fields), _) => fields.clone(),
            (None, Some(body)) => {
                SigningFields::from_json_body(body.as_bytes()).unwrap_or_default()
            }
            (None, None) => raw
                .query
                .iter()
                .cloned()
                .chain(raw.path_params.iter().cloned())
                .collect(),
        };
        let mut signature = payments_wire::sign(&fields, &raw.signing_key);
        if raw.upper_case_signature {
            signature = signature.to_uppercase();
        }
        let timestamp = raw
            .timestamp
            .clone()
            .unwrap_or_else(|| (chrono::Utc::now().timestamp() + raw.timestamp_offset).to_string());
        let mut builder = match raw.body {
            Some(body) => self
                .http
                .post(&url)
                .header("content-type", "application/json")
                .body(body),
            None => self.http.get(&url).query(&raw.query),
        };
        for (name, value) in [
            ("x-api-key", raw.api_key.as_str()),
            ("x-timestamp", timestamp.as_str()),
            ("x-signature", signature.as_str()),
        ] {
            if raw.omit_header.as_deref() != Some(name) {
                builder = builder.header(name, value);
            }
        }
        let response = builder.send().await.context("sending a request")?;
        Reply::from_response(response).await
    }
}

#[derive(Clone, Debug)]
pub struct Merchant {
    pub id: String,
    pub api_key: String,
}

/// A request and how to (mis)sign it.
#[derive(Clone, Debug, Default)]
pub struct RawRequest {
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Path parameters, signed for a GET.
    pub path_params: Vec<(String, String)>,
    pub body: Option<String>,
    pub api_key: String,
    pub signing_key: String,
    /// Sign these fields instead of the request's own.
    pub sign_as: Option<SigningFields>,
    pub timestamp_offset: i64,
    pub timestamp: Option<String>,
    pub omit_header: Option<String>,
    pub upper_case_signature: bool,
}

impl RawRequest {
    pub fn new(merchant: &Merchant, path: impl Into<String>) -> RawRequest {
        RawRequest {
            path: path.into(),
            api_key: merchant.api_key.clone(),
            signing_key: merchant.api_key.clone(),
            ..Default::default()
        }
    }
}

/// What came back: status and JSON body.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    pub async fn from_response(response: reqwest::Response) -> Result<Reply> {
        let status = response.status().as_u16();
        let text = response.text().await?;
        let body = serde_json::from_str(&text)
            .with_context(|| format!("status {status}: the body is not JSON: {text}"))?;
        Ok(Reply { status, body })
    }

    /// The reply of a generated-client call, in the same terms.
    pub fn from_client<T: serde::Serialize>(
        result: Result<
            merchant_client::merchant::ResponseValue<T>,
            merchant_client::merchant::Error<merchant_client::merchant::types::Error>,
        >,
    ) -> Result<Reply> {
        match result {
            Ok(v) => Ok(Reply {
                status: v.status().as_u16(),
                body: serde_json::to_value(v.into_inner())?,
            }),
            Err(merchant_client::merchant::Error::ErrorResponse(e)) => Ok(Reply {
                status: e.status().as_u16(),
                body: serde_json::to_value(e.into_inner())?,
            }),
            Err(other) => bail!("the client failed: {other}"),
        }
    }

    pub fn field(&self, name: &str) -> Option<&Value> {
        self.body.get(name)
    }

    pub fn str_field(&self, name: &str) -> Option<&str> {
        self.field(name).and_then(Value::as_str)
    }
}
