//! `cargo xtask clients`: regenerates every language kit in clients/ from
//! the current openapi/merchant.json, each with its pinned generator. Each
//! kit's own `generate.sh` holds its recipe (and installs its toolchain from
//! the registry it comes from), so a merchant can read it and run it alone.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The kits, in the order they are generated.
pub const KITS: &[&str] = &["python", "typescript", "go", "java"];

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let chosen: Vec<&str> = if args.is_empty() {
        KITS.to_vec()
    } else {
        args.iter().map(String::as_str).collect()
    };
    for kit in &chosen {
        if !KITS.contains(kit) {
            bail!("clients: no kit `{kit}` (the kits: {})", KITS.join(", "));
        }
    }
    for (i, kit) in chosen.iter().enumerate() {
        println!("clients: [{}/{}] {kit} …", i + 1, chosen.len());
        let started = Instant::now();
        let script = root.join("clients").join(kit).join("generate.sh");
        let status = Command::new("bash")
            .arg(&script)
            .status()
            .with_context(|| format!("running {}", script.display()))?;
        if !status.success() {
            bail!("clients: {kit}: {} failed ({status})", script.display());
        }
        println!(
            "clients: [{}/{}] {kit} done in {:.1} s",
            i + 1,
            chosen.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
