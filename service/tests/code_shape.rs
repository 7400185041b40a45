//! The service's code stays readable in one sitting: no file of
//! the service's crates (`service/*/src`) over 800 lines, no function over 80. The sources are
//! rustfmt's, so a function ends at the first line that closes it at its
//! own indentation.

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 80;

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap().filter_map(Result::ok) {
            rust_files(&entry.path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The name and indentation of a function that starts on `line`.
fn function_start(line: &str) -> Option<(&str, usize)> {
    let code = line.trim_start();
    let indent = line.len() - code.len();
    let mut rest = code;
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "async ",
        "const ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
        rest = rest.strip_prefix("async ").unwrap_or(rest);
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some((&name[..end], indent))
}

/// Functions longer than `MAX_FN_LINES`, as `file:line name (n lines)`.
fn long_functions(file: &Path, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((name, indent)) = function_start(line) else {
            continue;
        };
        // A declaration without a body (a trait's) ends with `;` first.
        let Some(open) = (i..lines.len()).find(|&k| {
            let l = lines[k].trim_end();
            l.ends_with('{') || l.ends_with(';')
        }) else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let close = " ".repeat(indent) + "}";
        let Some(end) = (open..lines.len()).find(|&k| lines[k].starts_with(&close)) else {
            continue;
        };
        let length = end - i + 1;
        if length > MAX_FN_LINES {
            found.push(format!(
                "{}:{} {name} ({length} lines)",
                file.display(),
                i + 1
            ));
        }
    }
    found
}

/// The service's crates, by their folder under `service/` (`.` is the
/// binary's).
const CRATES: &[&str] = &[
    ".",
    "domain",
    "telemetry",
    "config",
    "channels",
    "store",
    "app",
    "http",
    "workers",
];

#[test]
fn no_file_over_800_lines_and_no_function_over_80() {
    let service = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for krate in CRATES {
        rust_files(&service.join(krate).join("src"), &mut files);
    }
    assert!(files.len() > 100, "no sources under {}", service.display());
    let mut wrong = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let count = text.lines().count();
        if count > MAX_FILE_LINES {
            wrong.push(format!("{} ({count} lines)", file.display()));
        }
        wrong.extend(long_functions(file, &text));
    }
    assert!(
        wrong.is_empty(),
        "split these (files at most {MAX_FILE_LINES} lines, functions at most {MAX_FN_LINES}):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_long_function_is_found_and_a_declaration_is_not() {
    let body = "    x();\n".repeat(MAX_FN_LINES);
    let text = format!("trait T {{\n    fn f(&self);\n}}\n\npub async fn long() {{\n{body}}}\n");
    let found = long_functions(Path::new("x.rs"), &text);
    assert_eq!(found, [format!("x.rs:5 long ({} lines)", MAX_FN_LINES + 2)]);
}
