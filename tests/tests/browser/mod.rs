//! Just enough WebDriver to drive Debian's Chromium through chromedriver:
//! open pages, find elements by CSS, click, type, read text, run a script,
//! take screenshots. Plain HTTP and JSON, so no browser-automation crate.

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// Thai and Bangla glyphs for the screenshots (Debian's fonts-noto-core).
const FONTS: [&str; 2] = [
    "/usr/share/fonts/truetype/noto/NotoSansThai-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansBengali-Regular.ttf",
];
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

static INSTALL: Mutex<Option<Result<(), String>>> = Mutex::new(None);

/// Installs Debian's chromium, chromium-driver and fonts-noto-core when
/// they are missing, so the README's test command needs nothing else first.
fn ensure_installed() -> Result<()> {
    let mut done = INSTALL
        .lock()
        .map_err(|_| anyhow!("install lock poisoned"))?;
    if done.is_none() {
        let present = [CHROMIUM, CHROMEDRIVER]
            .iter()
            .chain(FONTS.iter())
            .all(|p| Path::new(p).exists());
        *done = Some(if present {
            Ok(())
        } else {
            eprintln!(
                "browser tests: installing chromium, chromium-driver and fonts-noto-core with apt-get (once)…"
            );
            let install = || {
                Command::new("apt-get")
                    .args([
                        "install",
                        "-y",
                        "--no-install-recommends",
                        "chromium",
                        "chromium-driver",
                        "fonts-noto-core",
                    ])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .stdout(Stdio::null())
                    .status()
            };
            let ok = install().map(|s| s.success()).unwrap_or(false)
                || (Command::new("apt-get")
                    .arg("update")
                    .stdout(Stdio::null())
                    .status()
                    .map(|s| s.success())
                    .unwrap_or(false)
                    && install().map(|s| s.success()).unwrap_or(false));
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "the browser tests need {CHROMIUM}, {CHROMEDRIVER} and Noto fonts: \
                     `apt-get install chromium chromium-driver fonts-noto-core` failed; install them and rerun"
                ))
            }
        });
    }
    match done.as_ref() {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => bail!("{e}"),
        None => bail!("not installed"),
    }
}

pub struct Browser {
    http: reqwest::Client,
    base: String,
    session: String,
    driver: Child,
    profile: PathBuf,
    shots: PathBuf,
}

/// How the browser presents itself: the payer's languages, and whether
/// pages may run scripts.
#[derive(Clone, Debug)]
pub struct Options {
    /// `Accept-Language`, e.g. `th-TH,th`; Chromium's own default when None.
    pub accept_language: Option<String>,
    pub javascript: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            accept_language: None,
            javascript: true,
        }
    }
}

impl Browser {
    /// A headless Chromium with a `width`×`height` window; screenshots go
    /// to `shots`.
    pub async fn start(width: u32, height: u32, scale: u32, shots: &Path) -> Result<Browser> {
        Browser::start_with(width, height, scale, shots, Options::default()).await
    }

    /// `start`, as a payer with these languages and script setting.
    pub async fn start_with(
        width: u32,
        height: u32,
        scale: u32,
        shots: &Path,
        options: Options,
    ) -> Result<Browser> {
        ensure_installed()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting chromedriver")?;
        let profile =
            std::env::temp_dir().join(format!("cashier-chromium-{}", uuid::Uuid::new_v4()));
        let mut browser = Browser {
            http: reqwest::Client::new(),
            base: format!("http://127.0.0.1:{port}"),
            session: String::new(),
            driver,
            profile,
            shots: shots.to_path_buf(),
        };
        std::fs::create_dir_all(&browser.shots)?;
        let mut ready = false;
        for _ in 0..200 {
            if let Ok(r) = browser
                .http
                .get(format!("{}/status", browser.base))
                .send()
                .await
            {
                if r.status().is_success() {
                    ready = true;
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if !ready {
            bail!("chromedriver did not answer on port {port}");
        }
        // The flags keep Chromium off the network it cannot reach here.
        let mut args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            // No host resolves but the loopback address: a page that needs
            // anything from elsewhere shows it here.
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1".into(),
            "--hide-scrollbars".into(),
            format!("--force-device-scale-factor={scale}"),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", browser.profile.display()),
        ];
        let mut prefs = serde_json::Map::new();
        if let Some(languages) = &options.accept_language {
            args.push(format!(
                "--lang={}",
                languages.split(',').next().unwrap_or("en")
            ));
            prefs.insert("intl.accept_languages".into(), json!(languages));
        }
        if !options.javascript {
            // The page's own scripts are off; WebDriver's commands still run.
            prefs.insert(
                "profile.managed_default_content_settings.javascript".into(),
                json!(2),
            );
        }
        let created = browser
            .raw(
                reqwest::Method::POST,
                "/session",
                json!({"capabilities": {"alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {"binary": CHROMIUM, "args": args, "prefs": prefs}
                }}}),
            )
            .await?;
        browser.session = created["sessionId"]
            .as_str()
            .ok_or_else(|| anyhow!("no session id in {created}"))?
            .to_string();
        // Chromium keeps headless windows at least 500 wide from the flag;
        // the window command sets the phone's width exactly.
        browser.resize(width, height).await?;
        Ok(browser)
    }

    async fn raw(&self, method: reqwest::Method, path: &str, body: Value) -> Result<Value> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if !body.is_null() {
            request = request.json(&body);
        }
        let reply: Value = request.send().await?.json().await?;
        let value = reply.get("value").cloned().unwrap_or(Value::Null);
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            bail!(
                "webdriver {path}: {error}: {}",
                value["message"].as_str().unwrap_or_default()
            );
        }
        Ok(value)
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Value) -> Result<Value> {
        self.raw(method, &format!("/session/{}{path}", self.session), body)
            .await
    }

    pub async fn goto(&self, url: &str) -> Result<()> {
        self.cmd(reqwest::Method::POST, "/url", json!({ "url": url }))
            .await
            .map(|_| ())
    }

    pub async fn url(&self) -> Result<String> {
        let v = self.cmd(reqwest::Method::GET, "/url", Value::Null).await?;
        Ok(v.as_str().unwrap_or_default().to_string())
    }

    pub async fn find(&self, css: &str) -> Result<String> {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                json!({"using": "css selector", "value": css}),
            )
            .await
            .with_context(|| format!("finding {css}"))?;
        v[ELEMENT]
            .as_str()
            .map(String::from)
            .ok_or_else(|| anyhow!("no element id for {css}: {v}"))
    }

    pub async fn click(&self, css: &str) -> Result<()> {
        let id = self.find(css).await?;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            json!({}),
        )
        .await
        .with_context(|| format!("clicking {css}"))
        .map(|_| ())
    }

    /// Types into the element, as keys (`\u{E00D}` is the space bar).
    pub async fn keys(&self, css: &str, text: &str) -> Result<()> {
        let id = self.find(css).await?;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            json!({ "text": text }),
        )
        .await
        .map(|_| ())
    }

    pub async fn text(&self, css: &str) -> Result<String> {
        let id = self.find(css).await?;
        let v = self
            .cmd(
                reqwest::Method::GET,
                &format!("/element/{id}/text"),
                Value::Null,
            )
            .await?;
        Ok(v.as_str().unwrap_or_default().to_string())
    }

    pub async fn script(&self, body: &str) -> Result<Value> {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            json!({"script": body, "args": []}),
        )
        .await
    }

    /// Runs `body` as an async script: it calls `arguments[0]` with its
    /// result.
    pub async fn script_async(&self, body: &str) -> Result<Value> {
        self.cmd(
            reqwest::Method::POST,
            "/execute/async",
            json!({"script": body, "args": []}),
        )
        .await
    }

    /// The value of the cookie `name` the browser holds for the page's
    /// site (an `HttpOnly` one too: WebDriver sees them all).
    pub async fn cookie(&self, name: &str) -> Result<String> {
        let v = self
            .cmd(
                reqwest::Method::GET,
                &format!("/cookie/{name}"),
                Value::Null,
            )
            .await?;
        v["value"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| anyhow!("no cookie {name}: {v}"))
    }

    pub async fn resize(&self, width: u32, height: u32) -> Result<()> {
        self.cmd(
            reqwest::Method::POST,
            "/window/rect",
            json!({"width": width, "height": height}),
        )
        .await
        .map(|_| ())
    }

    /// Waits until the element's text contains `words` (the page changes
    /// by itself: a reload after the status poll). Bounded.
    pub async fn wait_for_text(&self, css: &str, words: &str, limit: Duration) -> Result<String> {
        self.text_until(css, limit, |seen| seen.contains(words))
            .await
            .map_err(|seen| anyhow!("{css} still says {seen:?}, not {words:?}"))
    }

    /// Waits until the element's text is other than `was`: a label that a
    /// click changes only once a promise settles (the clipboard's). Bounded.
    pub async fn wait_for_change(&self, css: &str, was: &str, limit: Duration) -> Result<String> {
        self.text_until(css, limit, |seen| !seen.is_empty() && seen != was)
            .await
            .map_err(|seen| anyhow!("{css} still says {seen:?}"))
    }

    /// The element's text once `done` holds of it, or the last text seen
    /// when `limit` passed first.
    async fn text_until(
        &self,
        css: &str,
        limit: Duration,
        done: impl Fn(&str) -> bool,
    ) -> std::result::Result<String, String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let seen = self.text(css).await.unwrap_or_default();
            if done(&seen) {
                return Ok(seen);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(seen);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the page's address contains `part`: a click that
    /// navigates may answer before the next page is there, and an element
    /// found meanwhile is the old page's.
    pub async fn wait_for_url(&self, part: &str, limit: Duration) -> Result<String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let url = self.url().await.unwrap_or_default();
            if url.contains(part) {
                return Ok(url);
            }
            if tokio::time::Instant::now() > deadline {
                bail!("the page is still {url:?}, not one with {part:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A PNG of the whole page (not only the window), saved as `name`.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let size = self
            .script(
                "window.scrollTo(0, 0); \
                 return [document.documentElement.scrollWidth, document.documentElement.scrollHeight];",
            )
            .await?;
        let rect = self
            .cmd(reqwest::Method::GET, "/window/rect", Value::Null)
            .await?;
        let (w, h) = (
            rect["width"].as_u64().unwrap_or(800),
            rect["height"].as_u64().unwrap_or(600),
        );
        let page_height = size[1].as_u64().unwrap_or(h).max(h);
        if page_height > h {
            self.resize(u32::try_from(w)?, u32::try_from(page_height)?)
                .await?;
        }
        let png = self
            .cmd(reqwest::Method::GET, "/screenshot", Value::Null)
            .await?;
        if page_height > h {
            self.resize(u32::try_from(w)?, u32::try_from(h)?).await?;
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or_default())
            .context("decoding the screenshot")?;
        let path = self.shots.join(name);
        std::fs::write(&path, bytes)?;
        Ok(path)
    }

    /// A PNG of one element as the page shows it.
    pub async fn element_png(&self, css: &str) -> Result<Vec<u8>> {
        let id = self.find(css).await?;
        let png = self
            .cmd(
                reqwest::Method::GET,
                &format!("/element/{id}/screenshot"),
                Value::Null,
            )
            .await?;
        base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or_default())
            .context("decoding the element's screenshot")
    }

    pub async fn quit(mut self) -> Result<()> {
        let _ = self.cmd(reqwest::Method::DELETE, "", Value::Null).await;
        self.session.clear();
        Ok(())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // A test that fails before `quit` leaves Chromium running after its
        // driver dies: end every process started on this profile directory.
        let _ = Command::new("pkill")
            .args(["-f", &self.profile.display().to_string()])
            .status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
