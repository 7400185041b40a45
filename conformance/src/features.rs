//! The feature files and their rule mapping, embedded at build time (see
//! `build.rs`), so the suite needs no checkout.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/features.rs"));

/// The feature files' stems (`deposit`, `callbacks`, …), sorted.
pub fn names() -> Vec<&'static str> {
    FILES
        .iter()
        .filter_map(|(name, _)| name.strip_suffix(".feature"))
        .collect()
}

/// The names (`Feature:` lines) of the feature files tagged `@tag` as a
/// whole.
pub fn tagged(tag: &str) -> Vec<&'static str> {
    let mark = format!("@{tag}");
    FILES
        .iter()
        .filter(|(name, _)| name.ends_with(".feature"))
        .filter_map(|(_, text)| {
            let mut tagged = false;
            for line in text.lines().map(str::trim) {
                if let Some(feature) = line.strip_prefix("Feature:") {
                    return tagged.then(|| feature.trim());
                }
                tagged |= line.starts_with('@') && line.split_whitespace().any(|t| t == mark);
            }
            None
        })
        .collect()
}

/// The stems of the feature files with `@tag` on the feature or on any of
/// their scenarios.
pub fn with_tag_anywhere(tag: &str) -> Vec<&'static str> {
    let mark = format!("@{tag}");
    FILES
        .iter()
        .filter(|(_, text)| {
            text.lines()
                .map(str::trim)
                .any(|l| l.starts_with('@') && l.split_whitespace().any(|t| t == mark))
        })
        .filter_map(|(name, _)| name.strip_suffix(".feature"))
        .collect()
}

/// `features/README.md`: which scenario checks which rule.
pub fn rule_map() -> &'static str {
    FILES
        .iter()
        .find(|(name, _)| *name == "README.md")
        .map_or("", |(_, text)| text)
}

/// Writes the feature files into `dir/features` (replacing what was there)
/// and returns that directory, for cucumber to read.
pub fn write_to(dir: &Path) -> Result<PathBuf> {
    let out = dir.join("features");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    for (name, text) in FILES.iter().filter(|(n, _)| n.ends_with(".feature")) {
        std::fs::write(out.join(name), text)
            .with_context(|| format!("writing {}", out.join(name).display()))?;
    }
    Ok(out)
}
