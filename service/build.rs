//! Names the commit the binary was built from (`payments_build_info`),
//! from git when the source is a checkout, `unknown` otherwise.

use std::path::Path;
use std::process::Command;

fn main() {
    git_commit();
}

fn git_commit() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PAYMENTS_GIT_COMMIT={commit}");
    // Rebuilt when HEAD moves: HEAD itself (a checkout) and the branch it
    // names (a commit).
    let git = Path::new("../.git");
    println!("cargo:rerun-if-changed=../.git/HEAD");
    if let Ok(head) = std::fs::read_to_string(git.join("HEAD")) {
        if let Some(reference) = head.strip_prefix("ref: ") {
            // A path that does not exist would rerun this on every build.
            let loose = git.join(reference.trim());
            if loose.exists() {
                println!("cargo:rerun-if-changed=../.git/{}", reference.trim());
            } else if git.join("packed-refs").exists() {
                println!("cargo:rerun-if-changed=../.git/packed-refs");
            }
        }
    }
}
