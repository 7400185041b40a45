//! `cargo xtask codegen`: openapi/ is the source of truth; this writes
//! generated/ from it and proves the generated server traits describe the
//! same API as the documents they came from.

mod client;
mod roundtrip;
mod server;
pub mod spec;
mod webhooks;

use anyhow::{bail, Context, Result};
use std::path::Path;

pub use spec::SPECS;

/// One file this command owns under generated/.
struct Output {
    path: String,
    contents: String,
}

pub fn run(root: &Path, check: bool) -> Result<()> {
    let mut outputs = Vec::new();
    let mut api_modules = Vec::new();
    let mut client_modules = Vec::new();
    for api in SPECS {
        let doc = spec::load(root, api)?;
        println!("codegen: {} ({})", api.file, api.trait_name);
        outputs.push(Output {
            path: format!("generated/api/src/{}.rs", api.module),
            contents: server::generate(api, &doc)
                .with_context(|| format!("server code for {}", api.file))?,
        });
        api_modules.push(api.module);
        outputs.push(Output {
            path: format!("generated/client/src/{}.rs", api.module),
            contents: client::generate(api, &doc)
                .with_context(|| format!("client code for {}", api.file))?,
        });
        client_modules.push(api.module);
        // The callbacks a spec declares get a typed verifier beside its client.
        if let Some(callbacks) = client::callbacks_rs(api, &doc)? {
            outputs.push(Output {
                path: "generated/client/src/callbacks.rs".into(),
                contents: callbacks,
            });
            client_modules.push("callbacks");
        }
    }
    outputs.push(Output {
        path: webhooks::PATH.into(),
        contents: webhooks::document(&spec::load(root, &SPECS[0])?)?,
    });
    outputs.push(Output {
        path: webhooks::PLATFORM_PATH.into(),
        contents: webhooks::platform_document(&spec::load(root, &SPECS[1])?)?,
    });
    outputs.extend(oldest_client(root)?);
    outputs.push(Output {
        path: "generated/api/src/lib.rs".into(),
        contents: server::lib_rs(SPECS)?,
    });
    outputs.push(Output {
        path: "generated/client/src/lib.rs".into(),
        contents: client::lib_rs(&client_modules)?,
    });

    let mut drifted = Vec::new();
    for out in &outputs {
        let path = root.join(&out.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == out.contents {
            continue;
        }
        if check {
            drifted.push(out.path.clone());
        } else {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, &out.contents)
                .with_context(|| format!("writing {}", path.display()))?;
            println!("codegen: wrote {}", out.path);
        }
    }
    if !drifted.is_empty() {
        bail!(
            "generated/ does not match openapi/; these files differ from what the spec gives:\n  {}\n\
             run `cargo xtask codegen` and commit the result (never edit generated/ by hand)",
            drifted.join("\n  ")
        );
    }

    // The round trip compiles the generated traits, so it runs on what is now
    // on disk: after writing, or (with --check) after proving nothing drifted.
    roundtrip::check(root)?;
    println!(
        "codegen: generated/ {} the spec; the dropshot round trip matches",
        if check {
            "matches"
        } else {
            "is up to date with"
        }
    );
    Ok(())
}

/// The client of the oldest blessed merchant version still supported, so
/// that the tests can prove merchants who generated it long ago still work
/// against today's service (`tests/tests/oldest_client.rs`).
fn oldest_client(root: &Path) -> Result<Vec<Output>> {
    let blessed = crate::openapi::merchant_blessed(root)?;
    let Some((version, path)) = blessed.first() else {
        bail!("no blessed merchant version: run `cargo xtask openapi bless`");
    };
    let relative = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {relative}"))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {relative}"))?;
    let api = spec::ApiSpec {
        file: Box::leak(relative.into_boxed_str()),
        ..spec::SPECS[0]
    };
    let version = version.to_string();
    Ok(vec![
        Output {
            path: "generated/client-oldest/src/merchant.rs".into(),
            contents: client::generate(&api, &doc)
                .with_context(|| format!("client code for {}", api.file))?,
        },
        Output {
            path: "generated/client-oldest/src/lib.rs".into(),
            contents: client::oldest_lib_rs(api.file, &version)?,
        },
    ])
}

/// Formats generated tokens as a Rust file with a header saying where it
/// came from. The result goes through rustfmt too, so that `cargo fmt`
/// leaves generated/ exactly as this command writes it.
fn render(source: &str, tokens: proc_macro2::TokenStream) -> Result<String> {
    let file: syn::File = syn::parse2(tokens).context("generated code does not parse")?;
    let text = format!(
        "// GENERATED by `cargo xtask codegen` from {source}. Do not edit by hand:\n\
         // change the spec and regenerate.\n\n{}",
        prettyplease::unparse(&file)
    );
    rustfmt(&text)
}

fn rustfmt(text: &str) -> Result<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running rustfmt (install it with `rustup component add rustfmt`)")?;
    child
        .stdin
        .take()
        .context("rustfmt stdin")?
        .write_all(text.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        anyhow::bail!("rustfmt failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8(out.stdout).context("rustfmt output")
}
