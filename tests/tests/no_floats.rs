//! No amount passes through a binary float: no `f32` or `f64` appears in
//! the service, the wire crate or the generated code. Request amounts are
//! read from their JSON text (`AmountNumber`), stored as integer
//! ten-thousandths, computed as `Decimal`, and written as four-digit
//! decimal strings (`DecimalString`); the conformance suite checks the last
//! on every response that carries money.
//!
//! Two places are exempt: the crate `service/telemetry`, where durations
//! and counts become the `f64` values Prometheus's format and the
//! `metrics` facade take, and the statement's page layout
//! (`service/app/src/billing/typeset.rs`), where positions and font sizes
//! are the `f32` pdf-writer takes, handed text already written. No amount
//! enters either: the second test holds them to that.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_float_types_in_money_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in [
        "service/src",
        "service/domain/src",
        "service/telemetry/src",
        "service/config/src",
        "service/channels/src",
        "service/store/src",
        "service/app/src",
        "service/http/src",
        "service/workers/src",
        "service/wire/src",
        "generated/api/src",
        "generated/client/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found the sources");
    let mut offenders = Vec::new();
    let telemetry = root.join("service/telemetry/src");
    let typeset = root.join(TYPESET);
    for file in files
        .into_iter()
        .filter(|f| !f.starts_with(&telemetry) && *f != typeset)
    {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let tokens = code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            if tokens.into_iter().any(|t| t == "f32" || t == "f64") {
                offenders.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "float types found:\n{}",
        offenders.join("\n")
    );
}

/// The statement's page layout: geometry in `f32`, and no money.
const TYPESET: &str = "service/app/src/billing/typeset.rs";

#[test]
fn no_amount_enters_the_telemetry_or_the_page_layout() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root.join("service/telemetry/src"), &mut files);
    assert!(!files.is_empty(), "found the telemetry sources");
    files.push(root.join(TYPESET));
    let mut offenders = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if ["Decimal", "amount", "money"]
                .iter()
                .any(|w| code.contains(w))
            {
                offenders.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the telemetry or the page layout names money:\n{}",
        offenders.join("\n")
    );
}
