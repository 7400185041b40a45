//! `cargo xtask openapi check|bless|changelog`: the published versions of
//! each OpenAPI document, kept immutable, and the gate every edit of a
//! working document passes before merchants see it.
//!
//! Layout, per document (`merchant`, `operator`, `sandbox`):
//! - `openapi/<name>.json`: the working copy, what codegen reads and the
//!   service serves as current;
//! - `openapi/<name>/<name>-<version>.json`: each blessed (published)
//!   version, never edited again; `openapi/<name>/SHA256SUMS` holds their
//!   hashes, so an edit of a blessed file is caught;
//! - `openapi/CHANGELOG.md`: what each version changed, for merchants.
//!
//! The rules `check` applies to the working copy against the newest
//! blessed version: a breaking change is refused (it needs a new major
//! version: a new document under a new path prefix, the old one kept); a
//! compatible change needs a minor version bump, words only a patch bump,
//! and either needs a changelog entry for the new version.

mod compare;

use anyhow::{anyhow, bail, Context, Result};
use compare::{Change, Class};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The documents under the gate.
pub const DOCUMENTS: &[&str] = &[
    "merchant",
    "operator",
    "sandbox",
    "channel",
    "channel-notifications",
];

pub const USAGE: &str = "\
  openapi check [--dir DIR]
                      compare each working document in openapi/ (or DIR) with
                      its newest blessed version: breaking changes fail,
                      compatible ones need a minor bump and a changelog entry
  openapi changelog [--dir DIR]
                      write openapi/CHANGELOG.md entries for versions not yet
                      blessed, from the classified differences
  openapi bless [--dir DIR]
                      after the check passes, archive each working document
                      whose version is new as openapi/<name>/<name>-<version>.json
";

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let (command, rest) = args
        .split_first()
        .ok_or_else(|| anyhow!("openapi: which command?\n{USAGE}"))?;
    let dir = match rest {
        [] => root.join("openapi"),
        [flag, dir] if flag == "--dir" => PathBuf::from(dir),
        other => bail!("openapi {command}: unexpected arguments {other:?}\n{USAGE}"),
    };
    match command.as_str() {
        "check" => check(&dir).map(|_| ()),
        "changelog" => changelog(&dir),
        "bless" => bless(&dir),
        other => bail!("openapi: unknown command `{other}`\n{USAGE}"),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(u64, u64, u64);

impl Version {
    fn parse(text: &str) -> Result<Version> {
        let parts: Vec<u64> = text
            .split('.')
            .map(|p| p.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| anyhow!("`{text}` is not a version of the form MAJOR.MINOR.PATCH"))?;
        match parts[..] {
            [a, b, c] => Ok(Version(a, b, c)),
            _ => bail!("`{text}` is not a version of the form MAJOR.MINOR.PATCH"),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// One document: its working copy and its blessed versions.
struct Document {
    name: &'static str,
    working: Value,
    working_version: Version,
    blessed: Vec<(Version, PathBuf)>,
}

impl Document {
    fn load(dir: &Path, name: &'static str) -> Result<Document> {
        let path = dir.join(format!("{name}.json"));
        let working = read_json(&path)?;
        let version = working
            .pointer("/info/version")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("{}: no info.version", path.display()))?;
        let working_version =
            Version::parse(version).with_context(|| format!("{}: info.version", path.display()))?;
        let blessed = blessed_versions(dir, name)?;
        Ok(Document {
            name,
            working,
            working_version,
            blessed,
        })
    }

    fn newest(&self) -> Option<&(Version, PathBuf)> {
        self.blessed.last()
    }
}

fn read_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The blessed versions of `name`, oldest first, each checked against
/// SHA256SUMS (a blessed file is never edited).
fn blessed_versions(dir: &Path, name: &str) -> Result<Vec<(Version, PathBuf)>> {
    let archive = dir.join(name);
    let sums_path = archive.join("SHA256SUMS");
    let sums = std::fs::read_to_string(&sums_path).unwrap_or_default();
    let mut listed: Vec<(String, String)> = Vec::new();
    for line in sums.lines().filter(|l| !l.trim().is_empty()) {
        let (hash, file) = line
            .split_once("  ")
            .ok_or_else(|| anyhow!("{}: a line is not `<sha256>  <file>`", sums_path.display()))?;
        listed.push((hash.to_string(), file.to_string()));
    }
    let mut versions = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&archive) {
        for entry in entries {
            let path = entry?.path();
            let file = path
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or_default()
                .to_string();
            let Some(version) = file
                .strip_prefix(&format!("{name}-"))
                .and_then(|f| f.strip_suffix(".json"))
            else {
                continue;
            };
            let version = Version::parse(version)
                .with_context(|| format!("{}: the name's version", path.display()))?;
            let hash = sha256_hex(&std::fs::read(&path)?);
            match listed.iter().find(|(_, f)| *f == file) {
                Some((h, _)) if *h == hash => {}
                Some(_) => bail!(
                    "{}: this blessed version was edited after it was published. Blessed \
                     versions are immutable: restore it (`git checkout -- {}`) and change the \
                     working copy {name}.json instead",
                    path.display(),
                    path.display()
                ),
                None => bail!(
                    "{}: not in {}; bless versions with `cargo xtask openapi bless`",
                    path.display(),
                    sums_path.display()
                ),
            }
            versions.push((version, path));
        }
    }
    for (_, file) in &listed {
        if !archive.join(file).exists() {
            bail!(
                "{} lists {file}, which is missing: a published version was deleted",
                sums_path.display()
            );
        }
    }
    versions.sort();
    Ok(versions)
}

/// The documents the service itself answers (`channel` is the protocol it
/// calls, answered by a channel's adapter).
const SERVED: &[&str] = &["merchant", "operator", "sandbox", "channel-notifications"];

/// The refusals the server answers for any body before a handler runs
/// (`payments_wire::server`): a body too large, of another media type, or
/// not the operation's JSON. An operation that takes a body and leaves one
/// out answers a status its document never named (Schemathesis' ST103).
const BODY_REFUSALS: &[&str] = &["400", "413", "415"];

fn undocumented_body_refusals(name: &str, doc: &Value) -> Vec<String> {
    let mut missing = Vec::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return missing;
    };
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, op) in item {
            if op.get("requestBody").is_none() {
                continue;
            }
            let responses = op.get("responses");
            let absent: Vec<&str> = BODY_REFUSALS
                .iter()
                .copied()
                .filter(|code| responses.and_then(|r| r.get(*code)).is_none())
                .collect();
            if !absent.is_empty() {
                missing.push(format!(
                    "{name}.json: {} {path} takes a body but does not document {}, which the \
                     server answers for any body (too large, another media type, not this \
                     operation's JSON)",
                    method.to_uppercase(),
                    absent.join(", ")
                ));
            }
        }
    }
    missing
}

/// What `check` found for one document.
struct Verdict {
    changes: Vec<Change>,
    /// The working version is new (not yet blessed) and may be blessed.
    to_bless: bool,
}

/// Checks every document; prints each difference; fails on the first
/// document that breaks a rule (after printing all of them).
fn check(dir: &Path) -> Result<Vec<(&'static str, Verdict)>> {
    let changelog = std::fs::read_to_string(dir.join("CHANGELOG.md")).unwrap_or_default();
    let mut verdicts = Vec::new();
    let mut failures = Vec::new();
    for name in DOCUMENTS {
        let doc = Document::load(dir, name)?;
        if SERVED.contains(name) {
            failures.extend(undocumented_body_refusals(name, &doc.working));
        }
        match judge(&doc, &changelog) {
            Ok(verdict) => verdicts.push((*name, verdict)),
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    if !failures.is_empty() {
        bail!("openapi check failed:\n\n{}", failures.join("\n\n"));
    }
    println!("openapi check: every document keeps its published versions' promises");
    Ok(verdicts)
}

fn judge(doc: &Document, changelog: &str) -> Result<Verdict> {
    let name = doc.name;
    let working = doc.working_version;
    let Some((newest, newest_path)) = doc.newest() else {
        println!("openapi check: {name} {working}: never blessed (the first `bless` publishes it)");
        return Ok(Verdict {
            changes: Vec::new(),
            to_bless: true,
        });
    };
    let blessed = read_json(newest_path)?;
    let changes = compare::compare(&blessed, &doc.working);
    let count = |class: Class| changes.iter().filter(|c| c.class == class).count();
    println!(
        "openapi check: {name} {working} against blessed {newest}: {} breaking, {} compatible, {} cosmetic",
        count(Class::Breaking),
        count(Class::Compatible),
        count(Class::Cosmetic)
    );
    for change in &changes {
        println!("  {change}");
    }
    let blessed_already = doc.blessed.iter().any(|(v, _)| *v == working);
    if changes.is_empty() {
        if working == *newest {
            return Ok(Verdict {
                changes,
                to_bless: false,
            });
        }
        bail!(
            "{name}.json: info.version says {working}, but nothing changed since the blessed \
             {newest}: set it back to {newest}"
        );
    }
    if count(Class::Breaking) > 0 {
        let list: Vec<String> = changes
            .iter()
            .filter(|c| c.class == Class::Breaking)
            .map(|c| format!("  - {}: {}", c.at, c.what))
            .collect();
        bail!(
            "{name}.json breaks merchants integrated against {name} {newest}:\n{}\n\
             A breaking change needs a new major version: a new document (for example \
             openapi/{name}-v2.json) under a new path prefix (/api/v2/), beside this one, which \
             merchants keep using until they move. Undo these changes here.",
            list.join("\n")
        );
    }
    if blessed_already || working <= *newest {
        bail!(
            "{name}.json differs from the blessed {newest} but its info.version is {working}: \
             a published version never changes. Set info.version to {} (a compatible change \
             needs a minor bump, words alone a patch bump) and add a changelog entry \
             (`cargo xtask openapi changelog`)",
            required_bump(*newest, &changes)
        );
    }
    if working.0 != newest.0 {
        bail!(
            "{name}.json: info.version {working} changes the major version of {newest}; a new \
             major is a new document under a new path prefix, not this one"
        );
    }
    if count(Class::Compatible) > 0 && working.1 == newest.1 {
        bail!(
            "{name}.json: compatible changes since {newest} need a minor version bump ({}), not \
             {working}",
            required_bump(*newest, &changes)
        );
    }
    if !changelog
        .lines()
        .any(|l| l.trim() == format!("## {name} {working}"))
    {
        bail!(
            "{name} {working}: openapi/CHANGELOG.md has no entry `## {name} {working}`; \
             `cargo xtask openapi changelog` writes one from the changes above"
        );
    }
    Ok(Verdict {
        changes,
        to_bless: true,
    })
}

fn required_bump(newest: Version, changes: &[Change]) -> Version {
    if changes.iter().any(|c| c.class == Class::Compatible) {
        Version(newest.0, newest.1 + 1, 0)
    } else {
        Version(newest.0, newest.1, newest.2 + 1)
    }
}

/// Writes a CHANGELOG.md section for each document whose working version
/// is not blessed yet, replacing an earlier draft of the same section.
fn changelog(dir: &Path) -> Result<()> {
    let path = dir.join("CHANGELOG.md");
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|_| CHANGELOG_HEAD.to_string());
    for name in DOCUMENTS {
        let doc = Document::load(dir, name)?;
        let version = doc.working_version;
        if doc.blessed.iter().any(|(v, _)| *v == version) {
            continue;
        }
        let changes = match doc.newest() {
            Some((_, p)) => compare::compare(&read_json(p)?, &doc.working),
            None => Vec::new(),
        };
        if changes.iter().any(|c| c.class == Class::Breaking) {
            bail!(
                "{name} {version} breaks merchants (see `cargo xtask openapi check`); no changelog \
                 entry is written for a change that must not ship"
            );
        }
        let section = section(name, version, doc.newest().map(|(v, _)| *v), &changes);
        text = replace_section(&text, name, version, &section);
        println!("openapi changelog: wrote `## {name} {version}`");
    }
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

const CHANGELOG_HEAD: &str = "# Changes to the published contract\n\n\
Each version of each document, newest first, in terms of what it means for an\n\
integration. `cargo xtask openapi changelog` drafts an entry from the\n\
classified differences; edit the words, keep the heading.\n";

fn section(name: &str, version: Version, since: Option<Version>, changes: &[Change]) -> String {
    let mut out = format!("## {name} {version}\n\n");
    match since {
        None => out.push_str("The first published version.\n"),
        Some(since) => {
            let compatible: Vec<&Change> = changes
                .iter()
                .filter(|c| c.class == Class::Compatible)
                .collect();
            let words = changes
                .iter()
                .filter(|c| c.class == Class::Cosmetic)
                .count();
            out.push_str(&format!(
                "Compatible with {name} {since}: an integration built against it keeps working.\n"
            ));
            if !compatible.is_empty() {
                out.push('\n');
                for c in compatible {
                    out.push_str(&format!("- {}: {}\n", c.at, c.what));
                }
            }
            if words > 0 {
                let places = if words == 1 { "place" } else { "places" };
                out.push_str(&format!(
                    "\nDescriptions and examples reworded in {words} {places}.\n"
                ));
            }
        }
    }
    out
}

/// `text` with the section for `name version` replaced by `section`, or
/// `section` inserted above the newest one.
fn replace_section(text: &str, name: &str, version: Version, section: &str) -> String {
    let heading = format!("## {name} {version}");
    let lines: Vec<&str> = text.lines().collect();
    if let Some(start) = lines.iter().position(|l| l.trim() == heading) {
        let end = lines[start + 1..]
            .iter()
            .position(|l| l.starts_with("## "))
            .map_or(lines.len(), |i| start + 1 + i);
        let mut out: Vec<String> = lines[..start].iter().map(|s| s.to_string()).collect();
        out.push(section.trim_end().to_string());
        out.push(String::new());
        out.extend(lines[end..].iter().map(|s| s.to_string()));
        return out.join("\n") + "\n";
    }
    match lines.iter().position(|l| l.starts_with("## ")) {
        Some(first) => {
            let mut out: Vec<String> = lines[..first].iter().map(|s| s.to_string()).collect();
            out.push(section.trim_end().to_string());
            out.push(String::new());
            out.extend(lines[first..].iter().map(|s| s.to_string()));
            out.join("\n") + "\n"
        }
        None => format!(
            "{}\n{}",
            text.trim_end_matches('\n').to_string() + "\n",
            section
        ),
    }
}

/// Archives each working document whose version is new, once the check
/// passes.
fn bless(dir: &Path) -> Result<()> {
    let verdicts = check(dir)?;
    let mut blessed = 0;
    for (name, verdict) in verdicts {
        if !verdict.to_bless {
            continue;
        }
        let doc = Document::load(dir, name)?;
        let archive = dir.join(name);
        std::fs::create_dir_all(&archive)?;
        let file = format!("{name}-{}.json", doc.working_version);
        let target = archive.join(&file);
        if target.exists() {
            bail!("{} exists already", target.display());
        }
        let bytes = std::fs::read(dir.join(format!("{name}.json")))?;
        std::fs::write(&target, &bytes)?;
        let sums = archive.join("SHA256SUMS");
        let mut text = std::fs::read_to_string(&sums).unwrap_or_default();
        text.push_str(&format!("{}  {file}\n", sha256_hex(&bytes)));
        std::fs::write(&sums, text)?;
        println!(
            "openapi bless: {name} {} is published as {} ({} changes since the last)",
            doc.working_version,
            target.display(),
            verdict.changes.len()
        );
        blessed += 1;
    }
    if blessed == 0 {
        println!("openapi bless: nothing new to bless");
    }
    Ok(())
}

/// The blessed versions of the merchant document, oldest first: codegen
/// generates the oldest supported one's client.
pub fn merchant_blessed(root: &Path) -> Result<Vec<(Version, PathBuf)>> {
    blessed_versions(&root.join("openapi"), "merchant")
}
