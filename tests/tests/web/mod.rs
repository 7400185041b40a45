//! What the console's and the portal's tests share: a service with a low
//! four-eyes threshold and a platform address, people with passwords,
//! withdrawals awaiting review, signing in over plain HTTP, and the
//! accessibility check (axe-core from the npm registry, pinned by hash).

use anyhow::{bail, Context, Result};
use payments_service::app::merchants::Merchant;
use payments_service::app::people::{self, NewOperator};
use payments_service::app::withdrawals::{self, NewWithdrawal, Withdrawal};
use payments_service::app::App;
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::routing::Profile;
use payments_service::domain::status::Role;
use payments_testing::TestService;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

pub const PASSWORD: &str = "correct horse battery staple";
pub const PHONE: (u32, u32, u32) = (390, 844, 2);
pub const DESKTOP: (u32, u32, u32) = (1366, 900, 1);

const AXE_VERSION: &str = "4.14.1";
/// The registry's published sha512 of the tarball, in hex.
const AXE_SHA512: &str = "1477dafa598d8d065f273d6af302aa203c02e83131707b7fa648cd41bd3d6b734f8c22a0dab86ee6a6f64b8afbe804b214d36db85a2826965edfb3a0b9d546b5";

/// A sandbox service whose THB withdrawals of 1000 and more need two
/// approvers, with the platform's address set (invitations are sent).
pub async fn service(clock: Arc<dyn Clock>) -> Result<TestService> {
    TestService::start_with(Profile::Sandbox, clock, |c| {
        if let Some(thb) = c.currencies.get_mut("THB") {
            thb.dual_approval_threshold = Some(rust_decimal::Decimal::from(1000));
        }
        c.platform_events_url = Some("http://127.0.0.1:9/platform".into());
        c.platform_events_secret = Some("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into());
    })
    .await
}

/// An operator with a console password.
pub async fn operator(app: &App, name: &str, role: Role) -> Result<String> {
    let email = format!("{name}@ops.example.test");
    people::create(
        app,
        &payments_testing::SET_UP,
        NewOperator {
            name: name.into(),
            email: email.clone(),
            role,
        },
    )
    .await?;
    people::set_password(
        app,
        &payments_testing::SET_UP,
        email.clone(),
        PASSWORD.into(),
    )
    .await?;
    Ok(email)
}

/// A THB withdrawal awaiting review.
pub async fn pending(
    app: &App,
    merchant: &Merchant,
    no: &str,
    amount: i64,
    beneficiary: &str,
) -> Result<Withdrawal> {
    // Each to its own account: a day's withdrawals to one account are
    // summed against the threshold, and these stand for unrelated payouts.
    static ACCOUNTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let account = format!(
        "{:010}",
        1_234_500_000 + ACCOUNTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let new = NewWithdrawal {
        beneficiary_name: beneficiary.into(),
        ..payments_testing::new_withdrawal(no, rust_decimal::Decimal::from(amount), "THB", &account)
    };
    Ok(withdrawals::create(app, merchant, new).await?)
}

/// A form's body as a browser encodes it.
pub fn form_body(pairs: &[(&str, &str)]) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

pub const FORM: &str = "application/x-www-form-urlencoded";

/// The authenticator keys the console showed at enrolment, by email: what
/// each person's phone would hold.
static KEYS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Remembers `email`'s authenticator key (as the enrolment page showed it,
/// in groups).
pub fn keep_key(email: &str, shown: &str) {
    let key: String = shown.split_whitespace().collect();
    if let Ok(mut keys) = KEYS.lock() {
        keys.retain(|(e, _)| e != email);
        keys.push((email.to_string(), key));
    }
}

/// The code `email`'s authenticator shows at `at` (Unix seconds).
pub fn code_of(email: &str, at: i64) -> Result<String> {
    let key = KEYS
        .lock()
        .map_err(|_| anyhow::anyhow!("keys lock"))?
        .iter()
        .find(|(e, _)| e == email)
        .map(|(_, k)| k.clone())
        .with_context(|| format!("{email} has not enrolled an authenticator"))?;
    let secret = totp_rs::Secret::try_from_base32(&key).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let totp = totp_rs::Builder::new()
        .with_secret(secret)
        .build()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(totp.generate(u64::try_from(at)?).to_string())
}

/// The next code of `email`'s authenticator: the clock (the service's,
/// stopped) moves on one 30-second step first, since a step's code is
/// accepted once.
pub fn fresh_code(clock: &ManualClock, email: &str) -> Result<String> {
    clock.advance(30);
    code_of(email, clock.unix())
}

/// The key on an enrolment page, if it is one.
pub fn shown_key(page: &str) -> Option<String> {
    let (_, rest) = page.split_once("id=\"totp-secret\">")?;
    Some(rest.split('<').next()?.to_string())
}

/// The first callback record of an order (or an invitation, by its id):
/// its id, once the change that queued it has committed.
pub async fn first_delivery(app: &App, order_no: &str) -> Result<String> {
    Ok(payments_service::app::listings::callback_deliveries(
        app,
        payments_service::app::listings::Listing {
            order_no: Some(order_no.to_string()),
            ..Default::default()
        },
    )
    .await?
    .items
    .first()
    .with_context(|| format!("a callback record of {order_no}"))?
    .id
    .clone())
}

/// A browser-less session: signs in with a form post and keeps the cookie.
pub struct Http {
    pub base: String,
    pub client: reqwest::Client,
    pub cookie: String,
    pub email: String,
    /// The service's clock, which the console's codes are checked on.
    pub clock: ManualClock,
}

impl Http {
    /// Signs in with the password and, where the console asks for it, the
    /// second factor (enrolling it the first time, as a person would).
    pub async fn sign_in(
        base: &str,
        realm: &str,
        email: &str,
        password: &str,
        clock: &ManualClock,
    ) -> Result<Http> {
        let http = Self::with_password(base, realm, email, password, clock).await?;
        if realm == "console" {
            http.second_factor().await?;
        }
        Ok(http)
    }

    /// Signs in with the password only: a console session that may still
    /// have its second factor to prove.
    pub async fn with_password(
        base: &str,
        realm: &str,
        email: &str,
        password: &str,
        clock: &ManualClock,
    ) -> Result<Http> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let r = client
            .post(format!("{base}/{realm}/login"))
            .header("content-type", FORM)
            .body(form_body(&[("email", email), ("password", password)]))
            .send()
            .await?;
        if r.status() != 303 {
            bail!("sign-in answered {}", r.status());
        }
        let cookie = r
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .context("a session cookie")?
            .to_string();
        Ok(Http {
            base: base.into(),
            client,
            cookie,
            email: email.into(),
            clock: clock.clone(),
        })
    }

    /// Proves the second factor if the console asks for one.
    async fn second_factor(&self) -> Result<()> {
        let page = self.get("/console/second-factor").await?;
        if page.status() == 303 {
            return Ok(());
        }
        let text = page.text().await?;
        if let Some(key) = shown_key(&text) {
            keep_key(&self.email, &key);
        }
        let csrf = self.csrf("/console/second-factor").await?;
        let code = self.code()?;
        let r = self
            .post(
                "/console/second-factor",
                &[("csrf", &csrf), ("code", &code)],
            )
            .await?;
        if r.status() != 303 {
            bail!(
                "the second factor answered {}: {}",
                r.status(),
                r.text().await?
            );
        }
        Ok(())
    }

    /// A fresh code of this person's authenticator (for an approval).
    pub fn code(&self) -> Result<String> {
        fresh_code(&self.clock, &self.email)
    }

    pub async fn get(&self, path: &str) -> Result<reqwest::Response> {
        Ok(self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .send()
            .await?)
    }

    /// The form token on a page of the session.
    pub async fn csrf(&self, page: &str) -> Result<String> {
        let text = self.get(page).await?.text().await?;
        let (_, rest) = text
            .split_once("name=\"csrf\" value=\"")
            .context("a form token on the page")?;
        Ok(rest.split('"').next().unwrap_or_default().to_string())
    }

    /// A form post as the session's page makes it (`Origin` its own).
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Result<reqwest::Response> {
        Ok(self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .header("origin", &self.base)
            .header("content-type", FORM)
            .body(form_body(form))
            .send()
            .await?)
    }
}

/// Where this test program's log lines go, from the first call on: the
/// service's, in process, as an operator's log collector would read them.
pub fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: std::sync::OnceLock<Arc<Mutex<Vec<u8>>>> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let writer = move || Captured(sink.clone());
        let _ = tracing::subscriber::set_global_default(
            tracing_subscriber::fmt()
                .with_max_level(tracing::Level::INFO)
                .with_ansi(false)
                .with_writer(writer)
                .finish(),
        );
        buffer
    })
    .clone()
}

struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut held) = self.0.lock() {
            held.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

static AXE: Mutex<Option<String>> = Mutex::new(None);

/// axe-core's script, downloaded once into `target/` and checked against
/// the registry's hash.
pub fn axe_source() -> Result<String> {
    let mut held = AXE.lock().map_err(|_| anyhow::anyhow!("axe lock"))?;
    if let Some(source) = held.as_ref() {
        return Ok(source.clone());
    }
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/axe-core"));
    let script = dir.join(AXE_VERSION).join("package/axe.min.js");
    if !script.exists() {
        let tarball = dir.join(format!("axe-core-{AXE_VERSION}.tgz"));
        std::fs::create_dir_all(dir.join(AXE_VERSION))?;
        let url = format!("https://registry.npmjs.org/axe-core/-/axe-core-{AXE_VERSION}.tgz");
        run(Command::new("curl")
            .args(["-sSfL", "--retry", "3", "-o"])
            .arg(&tarball)
            .arg(&url))?;
        let sum = Command::new("sha512sum").arg(&tarball).output()?;
        let sum = String::from_utf8_lossy(&sum.stdout);
        if !sum.starts_with(AXE_SHA512) {
            bail!("axe-core {AXE_VERSION} from the registry does not have its published hash");
        }
        run(Command::new("tar")
            .args(["xzf"])
            .arg(&tarball)
            .arg("-C")
            .arg(dir.join(AXE_VERSION)))?;
    }
    let source = std::fs::read_to_string(&script)?;
    *held = Some(source.clone());
    Ok(source)
}

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().with_context(|| format!("running {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

/// Where screenshots go: `target/web-screenshots/<realm>/` (`.ci/run`
/// copies them to `docs/<realm>/`).
pub fn shots(realm: &str) -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/web-screenshots"
    ))
    .join(realm)
}
