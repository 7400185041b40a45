//! Embeds the feature files and their rule mapping (`features/README.md`)
//! into the suite, so that the installed `payments-conformance` binary
//! runs with no checkout beside it.

use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../features");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "feature") || p.ends_with("README.md"))
        .map(|p| {
            println!("cargo:rerun-if-changed={}", p.display());
            let name = p
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            (name, p.display().to_string())
        })
        .collect();
    files.sort();
    let entries: String = files
        .iter()
        .map(|(name, path)| format!("    ({name:?}, include_str!({path:?})),\n"))
        .collect();
    let out = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("features.rs");
    let code = format!(
        "/// Every file of features/ (the feature files and README.md), by name.\n\
         pub const FILES: &[(&str, &str)] = &[\n{entries}];\n"
    );
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=writing {}: {e}", out.display());
    }
}
