//! Embeds every blessed version of the merchant contract
//! (`openapi/merchant/merchant-<version>.json`), which the service serves
//! beside the current one.

use std::path::Path;

fn main() {
    blessed_contracts();
}

/// `$OUT_DIR/blessed.rs`: `BLESSED`, each blessed version and its text,
/// oldest first.
fn blessed_contracts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openapi/merchant");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut versions: Vec<((u64, u64, u64), String, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some(version) = name
            .strip_prefix("merchant-")
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        let parts: Vec<u64> = version.split('.').filter_map(|p| p.parse().ok()).collect();
        if let [a, b, c] = parts[..] {
            versions.push(((a, b, c), version.to_string(), path.clone()));
        }
    }
    versions.sort();
    let entries: String = versions
        .iter()
        .map(|(_, v, p)| {
            format!(
                "    ({v:?}, include_str!({:?})),\n",
                p.display().to_string()
            )
        })
        .collect();
    let out = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("blessed.rs");
    let code = format!(
        "/// Every blessed version of the merchant contract and its text, oldest first.\n\
         pub const BLESSED: &[(&str, &str)] = &[\n{entries}];\n"
    );
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=writing {}: {e}", out.display());
    }
}
