//! `cargo xtask conformance`: runs the cucumber suite against one profile,
//! in-process or against a deployed service, and says where the reports
//! are. A thin front over the `conformance` test binary (what `cargo test
//! --workspace` runs), which reads the same settings from the environment.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Options {
    pub profile: String,
    pub base_url: Option<String>,
    pub features: Option<String>,
    pub tags: Option<String>,
    pub realtime: bool,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options {
            profile: "sandbox".into(),
            base_url: None,
            features: None,
            tags: None,
            realtime: false,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .cloned()
                    .with_context(|| format!("{name} needs a value"))
            };
            match arg.as_str() {
                "--profile" => options.profile = value("--profile")?,
                "--base-url" => options.base_url = Some(value("--base-url")?),
                "--features" => options.features = Some(value("--features")?),
                "--tags" => options.tags = Some(value("--tags")?),
                "--realtime" => options.realtime = true,
                other => bail!("conformance: unexpected argument `{other}`"),
            }
        }
        if !matches!(options.profile.as_str(), "sandbox" | "production") {
            bail!(
                "conformance: --profile is `sandbox` or `production`, not `{}`",
                options.profile
            );
        }
        Ok(options)
    }
}

/// Builds the suite as `cargo test --workspace` does and returns the path
/// of its binary. Building only `--test conformance` would resolve other
/// dependency features and recompile most of the tree a second time.
fn suite_binary(root: &Path) -> Result<PathBuf> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["test", "--workspace", "--no-run", "--message-format=json"])
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo test --no-run")?;
    if !out.status.success() {
        bail!("conformance: building the suite failed");
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == "conformance"
                && m["target"]["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "test"))
        })
        .and_then(|m| m["executable"].as_str().map(PathBuf::from))
        .context("conformance: cargo built no conformance test binary")
}

pub fn run(root: &Path, options: &Options) -> Result<()> {
    let mut cargo = Command::new(suite_binary(root)?);
    cargo
        // Where `cargo test` would run it: the conformance package.
        .current_dir(root.join("conformance"))
        .env("CONFORMANCE_PROFILE", &options.profile)
        .env(
            "CONFORMANCE_REPORT_DIR",
            root.join("target/conformance").join(&options.profile),
        );
    if let Some(features) = &options.features {
        cargo.env("CONFORMANCE_FEATURES", features);
    }
    if let Some(tags) = &options.tags {
        cargo.env("CONFORMANCE_TAGS", tags);
    }
    if options.realtime {
        cargo.env("CONFORMANCE_REALTIME", "1");
    }
    match &options.base_url {
        Some(url) => {
            let has_token =
                std::env::var("CONFORMANCE_OPERATOR_TOKEN").is_ok_and(|t| !t.is_empty());
            let has_keys = std::env::var("CONFORMANCE_API_KEYS").is_ok_and(|t| !t.is_empty());
            if !has_token && !has_keys {
                bail!(
                    "conformance: against {url} the suite needs credentials of that deployment: \
                     CONFORMANCE_OPERATOR_TOKEN (an operator token; a merchant is created per \
                     scenario) or CONFORMANCE_API_KEYS (merchant keys, for the merchant-only scenarios)"
                );
            }
            println!(
                "conformance: {} profile against {url} (callback receivers listen on {})",
                options.profile,
                std::env::var("CONFORMANCE_RECEIVER_HOST").unwrap_or_else(|_| "127.0.0.1".into())
            );
            cargo.env("CONFORMANCE_BASE_URL", url);
        }
        None => {
            println!(
                "conformance: {} profile, service in-process",
                options.profile
            );
            if options.profile == "production"
                && std::env::var("PAYMENTS_TEST_DATABASE_URL").is_err()
            {
                // As .ci/run: the local PostgreSQL server; each run gets a
                // fresh database on it.
                let url = "postgres://postgres@127.0.0.1:5432/test";
                println!("conformance: production needs PostgreSQL; using {url} (set PAYMENTS_TEST_DATABASE_URL to change)");
                cargo.env("PAYMENTS_TEST_DATABASE_URL", url);
            }
        }
    }
    let status = cargo.status().context("running the conformance suite")?;
    if !status.success() {
        bail!(
            "conformance: the suite failed (reports in {})",
            root.join("target/conformance")
                .join(&options.profile)
                .display()
        );
    }
    Ok(())
}
