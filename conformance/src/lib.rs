//! The conformance harness: where the service under test runs, how a
//! scenario gets a merchant of its own, and a raw HTTP path for requests
//! the generated client would never send (tampered, unsigned, stale).
//!
//! What it targets comes from `settings` (the `payments-conformance`
//! binary's flags, or `CONFORMANCE_*` in the environment). Against a
//! deployment, scenarios create their merchants with its operator token,
//! or use the merchant keys handed in. `PAYMENTS_TEST_DATABASE_URL` runs
//! the in-process service on a fresh PostgreSQL database (required for
//! the production profile). `features` holds the feature files, `rules`
//! which rule each scenario checks, `report` the report people read.

pub mod examples;
pub mod features;
pub mod four_eyes;
pub mod in_process;
pub mod promptpay;
pub mod receiver;
pub mod report;
pub mod requests;
pub mod rules;
pub mod settings;
pub mod tls;

use anyhow::{anyhow, bail, ensure, Context, Result};
use in_process::InProcess;
use payments_wire::SigningFields;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::OnceCell;

pub use settings::Profile;

pub enum Target {
    InProcess(Box<dyn InProcess>),
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
    /// An operator token of the service under test, if known.
    pub operator_token: Option<String>,
    /// The name that token stands for, if known (in-process, or from
    /// the settings).
    pub operator_name: Option<String>,
    /// Production's receivers speak https with certificates the service
    /// under test trusts.
    pub tls: Option<tls::ReceiverTls>,
    /// The receiver playing the platform-managed address, and the secret
    /// the service signs platform events with: started with an in-process
    /// service (and configured into it), or on the port a deployment was
    /// configured with.
    pub platform: Option<(receiver::Receiver, String)>,
}

static HARNESS: OnceCell<Harness> = OnceCell::const_new();

pub fn profile_from_env() -> Result<Profile> {
    Ok(settings::current()?.profile)
}

pub async fn harness() -> &'static Harness {
    match HARNESS.get_or_try_init(Harness::start).await {
        Ok(h) => h,
        Err(e) => panic!("the conformance harness could not start: {e:#}"),
    }
}

impl Harness {
    async fn start() -> Result<Harness> {
        let settings = settings::current()?;
        let profile = settings.profile;
        let tls = match profile {
            Profile::Production => Some(receiver_tls(settings)?),
            Profile::Sandbox => None,
        };
        let platform_tls = match &tls {
            Some(tls) => Some(tls.signed()?),
            None => None,
        };
        let platform = match (&settings.base_url, &settings.platform_events_secret) {
            (None, _) => Some((
                receiver::Receiver::start_platform(platform_tls, None).await?,
                platform_secret(),
            )),
            (Some(_), Some(secret)) => Some((
                receiver::Receiver::start_platform(platform_tls, settings.platform_receiver_port)
                    .await?,
                secret.0.clone(),
            )),
            (Some(_), None) => None,
        };
        let target = match &settings.base_url {
            Some(base_url) => Target::Remote {
                base_url: base_url.trim_end_matches('/').to_string(),
                api_keys: settings.api_keys.clone(),
                next: AtomicUsize::new(0),
            },
            None => {
                let start = in_process::starter().ok_or_else(|| {
                    anyhow!(
                        "no deployment to run against: give the suite its base URL \
                         (--base-url, or CONFORMANCE_BASE_URL)"
                    )
                })?;
                let service = start(in_process::Start {
                    profile,
                    callback_ca_bundle: tls.as_ref().and_then(tls::ReceiverTls::bundle),
                    platform: platform
                        .as_ref()
                        .map(|(r, secret)| (r.url.clone(), secret.clone())),
                    channel_sim: settings.has_channel_sim(),
                })
                .await
                .context("starting the service in-process")?;
                Target::InProcess(service)
            }
        };
        let (operator_token, operator_name) = match &target {
            Target::InProcess(s) => {
                let (token, name) = s.operator();
                (Some(token), Some(name))
            }
            Target::Remote { .. } => (
                settings.operator_token.clone(),
                settings.operator_name.clone(),
            ),
        };
        Ok(Harness {
            profile,
            target,
            http: reqwest::Client::new(),
            operator_name,
            operator_token,
            tls,
            platform,
        })
    }

    /// The platform's receiver and secret, or why a scenario cannot have
    /// them.
    pub fn platform(&self) -> Result<&(receiver::Receiver, String)> {
        self.platform.as_ref().ok_or_else(|| {
            anyhow::anyhow!(
                "this scenario needs the platform's receiver: configure the deployment's \
                 platform_events_url to this suite's --platform-receiver-port and pass its \
                 --platform-events-secret"
            )
        })
    }

    /// A callback receiver the service under test will call: plain http
    /// for the sandbox, https with a trusted certificate for production.
    pub async fn receiver(&self) -> Result<receiver::Receiver> {
        Ok(match &self.tls {
            Some(tls) => receiver::Receiver::start_tls(tls.signed()?).await?,
            None => receiver::Receiver::start().await?,
        })
    }

    /// An https receiver whose certificate no one signed.
    pub async fn self_signed_receiver(&self) -> Result<receiver::Receiver> {
        let tls = match &self.tls {
            Some(tls) => tls,
            None => bail!("self-signed receivers are for the production profile"),
        };
        Ok(receiver::Receiver::start_tls(tls.self_signed()?).await?)
    }

    /// The channel simulator the service under test pays through, if any.
    pub fn channel(&self) -> Option<settings::ChannelSettings> {
        match &self.target {
            Target::InProcess(s) => s.channel(),
            Target::Remote { .. } => settings::current().ok().and_then(|s| s.channel.clone()),
        }
    }

    /// The simulators the `@routing` scenarios route among, by code.
    pub fn routing_channels(&self) -> Vec<settings::ChannelSettings> {
        match &self.target {
            Target::InProcess(s) => s.routing_channels(),
            Target::Remote { .. } => settings::current()
                .map(|s| s.routing_channels.clone())
                .unwrap_or_default(),
        }
    }

    /// Whether this run can move the service's clock: the sandbox's API
    /// moves it, and an in-process production service's harness does; a
    /// production deployment's clock is the system's.
    pub fn can_move_clock(&self) -> bool {
        self.profile == Profile::Sandbox || matches!(self.target, Target::InProcess(_))
    }

    /// Moves the service's clock `seconds` forward, a day at a time (the
    /// sandbox's bound on one move), waking its workers.
    pub async fn advance_clock(&self, seconds: i64) -> Result<()> {
        let mut left = seconds;
        while left > 0 {
            let step = left.min(86_400);
            match (&self.target, self.profile) {
                (_, Profile::Sandbox) => {
                    let reply = Reply::of(
                        self.sandbox()?
                            .advance_clock(&merchant_client::sandbox::types::AdvanceClockRequest {
                                seconds: step,
                            })
                            .await,
                    );
                    ensure!(
                        reply.status == 200,
                        "the sandbox clock did not move: {}",
                        reply.body
                    );
                }
                (Target::InProcess(service), Profile::Production) => {
                    ensure!(
                        service.advance_clock(step),
                        "the service's clock did not move"
                    );
                }
                (Target::Remote { .. }, Profile::Production) => {
                    bail!("a production deployment's clock cannot be moved (an @clock scenario)")
                }
            }
            left -= step;
        }
        Ok(())
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
                    id: m.id,
                    api_key: m.api_key,
                })
            }
            Target::Remote { .. } if self.operator_token.is_some() => {
                let code = format!("c{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
                let created = self
                    .operator()?
                    .create_merchant(&merchant_client::operator::types::CreateMerchantRequest {
                        code,
                        name: "Conformance Merchant".into(),
                    })
                    .await
                    .map_err(|e| anyhow!("creating a merchant through the operator API: {e}"))?
                    .into_inner();
                witness_secret(&created.api_key);
                Ok(Merchant {
                    id: created.merchant_id,
                    api_key: created.api_key,
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

    pub fn operator(&self) -> Result<merchant_client::operator::Client> {
        let token = self
            .operator_token
            .clone()
            .ok_or_else(|| anyhow!("this scenario needs CONFORMANCE_OPERATOR_TOKEN"))?;
        Ok(merchant_client::operator::Client::new(
            &self.base_url(),
            merchant_client::BearerToken::new(token),
        ))
    }

    pub fn sandbox(&self) -> Result<merchant_client::sandbox::Client> {
        let token = self
            .operator_token
            .clone()
            .ok_or_else(|| anyhow!("this scenario needs CONFORMANCE_OPERATOR_TOKEN"))?;
        Ok(merchant_client::sandbox::Client::new(
            &self.base_url(),
            merchant_client::BearerToken::new(token),
        ))
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
        let mut signature = raw
            .signature
            .clone()
            .unwrap_or_else(|| payments_wire::sign(&fields, &raw.signing_key));
        if raw.upper_case_signature {
            signature = signature.to_uppercase();
        }
        let timestamp = raw
            .timestamp
            .clone()
            .unwrap_or_else(|| (chrono::Utc::now().timestamp() + raw.timestamp_offset).to_string());
        let method = match &raw.method {
            Some(m) => reqwest::Method::from_bytes(m.as_bytes()).context("an HTTP method")?,
            None if raw.body.is_some() => reqwest::Method::POST,
            None => reqwest::Method::GET,
        };
        let mut builder = self.http.request(method, &url).query(&raw.query);
        if let Some(body) = raw.body {
            let content_type = match &raw.content_type {
                None => Some("application/json"),
                Some(declared) => declared.as_deref(),
            };
            if let Some(content_type) = content_type {
                builder = builder.header("content-type", content_type);
            }
            builder = builder.body(body);
        }
        for (name, value) in &raw.headers {
            builder = builder.header(name, value);
        }
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
    /// Send exactly this signature (computed by the step itself).
    pub signature: Option<String>,
    /// GET without a body and POST with one, unless named here.
    pub method: Option<String>,
    /// `application/json` unless given: `Some(None)` sends no content type.
    pub content_type: Option<Option<String>>,
    /// Further headers (an operator's `authorization`).
    pub headers: Vec<(String, String)>,
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

/// What came back: status, JSON body and the headers that matter.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub retry_after: Option<String>,
}

impl Reply {
    pub async fn from_response(response: reqwest::Response) -> Result<Reply> {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let text = response.text().await?;
        let body = serde_json::from_str(&text)
            .with_context(|| format!("status {status}: the body is not JSON: {text}"))?;
        witness(&body);
        Ok(Reply {
            status,
            body,
            retry_after,
        })
    }

    /// The reply of a generated-client call, in the same terms.
    pub fn from_client<T: serde::Serialize, E: serde::Serialize + std::fmt::Debug>(
        result: Result<
            merchant_client::merchant::ResponseValue<T>,
            merchant_client::merchant::Error<E>,
        >,
    ) -> Result<Reply> {
        match result {
            Ok(v) => {
                let status = v.status().as_u16();
                let body = serde_json::to_value(v.into_inner())?;
                witness(&body);
                Ok(Reply {
                    status,
                    body,
                    retry_after: None,
                })
            }
            Err(merchant_client::merchant::Error::ErrorResponse(e)) => Ok(Reply {
                status: e.status().as_u16(),
                retry_after: e
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(String::from),
                body: serde_json::to_value(e.into_inner())?,
            }),
            Err(other) => bail!("the client failed: {other}"),
        }
    }

    /// The reply of a generated-client call, which must have reached the
    /// service: the one way steps read a client call.
    pub fn of<T: serde::Serialize, E: serde::Serialize + std::fmt::Debug>(
        result: Result<
            merchant_client::merchant::ResponseValue<T>,
            merchant_client::merchant::Error<E>,
        >,
    ) -> Reply {
        Reply::from_client(result).unwrap_or_else(|e| panic!("no reply from the service: {e:#}"))
    }

    /// A field of the body; `account.account_no` reaches into objects.
    pub fn field(&self, name: &str) -> Option<&Value> {
        name.split('.').try_fold(&self.body, |v, part| v.get(part))
    }

    pub fn str_field(&self, name: &str) -> Option<&str> {
        self.field(name).and_then(Value::as_str)
    }
}

/// The receivers' certificates as the settings ask: the QA team's own, a
/// test CA kept in a directory, or one made for this run.
fn receiver_tls(settings: &settings::Settings) -> Result<tls::ReceiverTls> {
    let mut names = vec![settings.receiver_host(true)];
    if !names.contains(&"localhost".to_string()) {
        names.push("localhost".into());
    }
    Ok(
        match (
            &settings.receiver_cert,
            &settings.receiver_key,
            &settings.ca_dir,
        ) {
            (Some(cert), Some(key), _) => tls::ReceiverTls::Own {
                cert: cert.clone(),
                key: key.clone(),
                stranger: tls::TestCa::create_for(&names)?,
            },
            (_, _, Some(dir)) => tls::ReceiverTls::TestCa(tls::TestCa::kept_in(dir, &names)?),
            _ => tls::ReceiverTls::TestCa(tls::TestCa::create_for(&names)?),
        },
    )
}

/// A platform events secret for an in-process service, as Standard
/// Webhooks shapes one.
/// (Two random UUIDs: a test's secret, 244 random bits.)
fn platform_secret() -> String {
    use base64::Engine;
    let mut bytes = uuid::Uuid::new_v4().as_bytes().to_vec();
    bytes.extend(uuid::Uuid::new_v4().as_bytes());
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// Where the suite writes every secret the service issued during the run
/// (API keys, cashier tokens), one per line, so that a check afterwards
/// can prove none of them reached the service's logs.
pub const SECRETS_FILE_ENV: &str = "CONFORMANCE_SECRETS_FILE";

/// Notes the secrets a reply carries: `api_key`, `cashier_token`,
/// `callback_secret` and `token` (an operator's) fields, and the token in a `cashier_url`, at any depth.
pub fn witness(body: &Value) {
    match body {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    (
                        "api_key" | "cashier_token" | "callback_secret" | "token",
                        Value::String(secret),
                    ) => witness_secret(secret),
                    ("cashier_url", Value::String(url)) => {
                        if let Some(token) = url.rsplit('/').next() {
                            witness_secret(token);
                        }
                    }
                    _ => witness(value),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(witness),
        _ => {}
    }
}

pub fn witness_secret(secret: &str) {
    use std::io::Write;
    static FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let Ok(path) = std::env::var(SECRETS_FILE_ENV) else {
        return;
    };
    if secret.is_empty() {
        return;
    }
    let _held = FILE.lock();
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{secret}");
    }
}
