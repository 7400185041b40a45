//! What Cargo cannot see about the layers (ARCHITECTURE.md states the rule).
//!
//! Between crates Cargo holds the rule itself: a crate names only what its
//! `Cargo.toml` lists, and a dependency that closes a loop is refused. Two
//! things remain for this test:
//!
//! - **A circle between modules of one crate.** It reads every module of
//!   every crate of the workspace (from each crate root, following `mod`
//!   declarations and `#[path]`), finds every path a module names
//!   (`crate::…`, `super::…`, `self::…`, a child's name, grouped imports
//!   included), and fails naming each circle with the lines that close it.
//!   A module naming its own descendants is not counted: a folder module is
//!   the face of what it contains. Everything else is: siblings, cousins,
//!   and a child naming its parent.
//! - **Which layer may list which.** `LAYERS` places each crate of the
//!   service; a path dependency on a crate of a higher layer, or one that
//!   skips the use cases to reach the store, fails naming the line.
//!
//! `MODULE_CYCLES_ROOT` points it at another copy of the workspace
//! (`.ci/module-cycles-demo` uses that to show it failing).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module (`crate-name::a::b`), the modules it names, and where it names
/// each first.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn root() -> PathBuf {
    std::env::var("MODULE_CYCLES_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
}

/// The workspace's members, as its `Cargo.toml` lists them.
fn members(root: &Path) -> Vec<PathBuf> {
    let text =
        std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let start = text.find("members").expect("a members list");
    let list = &text[start
        ..text[start..]
            .find(']')
            .map(|e| start + e)
            .unwrap_or(text.len())];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(|m| root.join(m))
        .collect()
}

/// A crate's roots: its library, its binary, and `src/bin/*.rs`.
fn crate_roots(member: &Path) -> Vec<PathBuf> {
    let src = member.join("src");
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|r| src.join(r))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}

/// One module of a crate: its path below the crate root and its file.
#[derive(Clone, Debug)]
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

/// The code of a file without its comments and string literals, so that
/// neither a doc comment nor a message that names a path counts as a use.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' => {
                out.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if !escaped && c == '"' {
                        break;
                    }
                    escaped = !escaped && c == '\\';
                }
                out.push('"');
            }
            // A char literal that is a quote, so that it opens no string.
            '\'' if chars.peek() == Some(&'"') => {
                chars.next();
                out.push_str("'\"");
            }
            c => out.push(c),
        }
    }
    out
}

/// The modules a file declares (`mod a;`, with its `#[path]` if it has
/// one), in order.
fn declared(code: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut path_attr: Option<String> = None;
    for line in code.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("#[path = ") {
            path_attr = rest.split('"').nth(1).map(str::to_string);
            continue;
        }
        let decl = line
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ");
        if let Some(rest) = decl.strip_prefix("mod ") {
            if let Some(name) = rest.strip_suffix(';') {
                found.push((name.trim().to_string(), path_attr.take()));
                continue;
            }
        }
        if !line.starts_with("#[") {
            path_attr = None;
        }
    }
    found
}

/// The `#[path]` attributes in code_of's output lost their strings; they
/// are read from the text itself.
fn declared_in(text: &str) -> Vec<(String, Option<String>)> {
    let code = code_of(text);
    let mut found = declared(&code);
    let paths: Vec<(String, String)> = text
        .lines()
        .zip(text.lines().skip(1))
        .filter_map(|(attr, decl)| {
            let file = attr.trim().strip_prefix("#[path = \"")?.split('"').next()?;
            let name = decl
                .trim()
                .split("mod ")
                .nth(1)?
                .trim_end_matches(';')
                .trim();
            Some((name.to_string(), file.to_string()))
        })
        .collect();
    for (name, path) in &mut found {
        if let Some((_, file)) = paths.iter().find(|(n, _)| n == name) {
            *path = Some(file.clone());
        }
    }
    found
}

/// Every module of the crate at `root_file`, its root first.
fn modules(crate_name: &str, root_file: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut queue = vec![Module {
        path: vec![crate_name.to_string()],
        file: root_file.to_path_buf(),
    }];
    while let Some(module) = queue.pop() {
        let text = std::fs::read_to_string(&module.file).unwrap_or_default();
        let dir = module.file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let stem = module
            .file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("");
        // A file that is not a folder's face keeps its children in a
        // folder of its own name.
        let children_dir = match (module.path.len(), stem) {
            (1, _) | (_, "mod") => dir.clone(),
            _ => dir.join(stem),
        };
        for (name, path_attr) in declared_in(&text) {
            let file = match path_attr {
                Some(p) => dir.join(p),
                None => {
                    let flat = children_dir.join(format!("{name}.rs"));
                    if flat.is_file() {
                        flat
                    } else {
                        children_dir.join(&name).join("mod.rs")
                    }
                }
            };
            if file.is_file() {
                let mut path = module.path.clone();
                path.push(name);
                queue.push(Module { path, file });
            }
        }
        out.push(module);
    }
    out
}

/// Every path a line of code names that starts at `crate`, `super`, `self`
/// or a plain name, grouped imports expanded: `use crate::{a, b::{c, d}}`
/// gives `crate::a`, `crate::b::c`, `crate::b::d`.
fn named_paths(line: &str) -> Vec<Vec<String>> {
    fn ident(s: &str) -> &str {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    }
    /// Reads `a::b::{…}` from the start of `s` onto `prefix`.
    fn read(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let mut path = prefix;
        let mut i = 0;
        loop {
            let rest = &s[i..];
            if let Some(group) = rest.strip_prefix('{') {
                let mut j = 0;
                let mut consumed = 1;
                loop {
                    let item = &group[j..];
                    let skip = item.len() - item.trim_start().len();
                    j += skip;
                    consumed += skip;
                    let item = &group[j..];
                    if item.starts_with('}') || item.is_empty() {
                        return i + consumed + usize::from(!item.is_empty());
                    }
                    let n = read(item, path.clone(), out);
                    let n = n.max(1);
                    j += n;
                    consumed += n;
                    let after = &group[j..];
                    let comma = after.len() - after.trim_start_matches([',', ' ', '\n']).len();
                    j += comma;
                    consumed += comma;
                }
            }
            let name = ident(rest);
            if name.is_empty() {
                out.push(path);
                return i;
            }
            path.push(name.to_string());
            i += name.len();
            if s[i..].starts_with("::") {
                i += 2;
            } else {
                out.push(path);
                return i;
            }
        }
    }
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let boundary = i == 0 || {
            let c = bytes[i - 1] as char;
            !(c.is_alphanumeric() || c == '_' || c == ':' || c == '$')
        };
        let rest = &line[i..];
        let name = ident(rest);
        if boundary && !name.is_empty() && rest[name.len()..].starts_with("::") {
            let used = read(rest, Vec::new(), &mut out);
            i += used.max(name.len());
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

/// The module a path names, seen from `from`: the longest prefix that is a
/// module of the crate, if the path starts inside the crate.
fn resolve(
    from: &[String],
    path: &[String],
    known: &BTreeSet<Vec<String>>,
    children: &BTreeMap<Vec<String>, BTreeSet<String>>,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = from.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.truncate(1);
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A plain name is a module only if it is a child of this one.
            if !children.get(from).is_some_and(|c| c.contains(first)) {
                return None;
            }
        }
        None => return None,
    }
    let mut found = base.clone();
    for part in rest {
        let mut next = found.clone();
        next.push(part.clone());
        if known.contains(&next) {
            found = next;
        } else {
            break;
        }
    }
    known.contains(&found).then_some(found)
}

fn graph(root: &Path) -> Graph {
    let mut graph = Graph::new();
    for member in members(root) {
        let crate_name = member
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        for root_file in crate_roots(&member) {
            let target = match root_file.file_stem().and_then(|s| s.to_str()) {
                Some("lib") => crate_name.clone(),
                Some(other) => format!("{crate_name}[{other}]"),
                None => continue,
            };
            let modules = modules(&target, &root_file);
            let known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
            let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
            for m in &modules {
                if let Some((last, parent)) = m.path.split_last() {
                    children
                        .entry(parent.to_vec())
                        .or_default()
                        .insert(last.clone());
                }
            }
            for m in &modules {
                let name = m.path.join("::");
                let edges = graph.entry(name.clone()).or_default();
                let text = std::fs::read_to_string(&m.file).unwrap_or_default();
                let shown = m
                    .file
                    .strip_prefix(root)
                    .unwrap_or(&m.file)
                    .display()
                    .to_string();
                for (n, line) in code_of(&text).lines().enumerate() {
                    for path in named_paths(line) {
                        let Some(to) = resolve(&m.path, &path, &known, &children) else {
                            continue;
                        };
                        // Itself, or what it contains.
                        if to.starts_with(&m.path) {
                            continue;
                        }
                        edges
                            .entry(to.join("::"))
                            .or_insert_with(|| format!("{shown}:{}", n + 1));
                    }
                }
            }
        }
    }
    graph
}

/// Tarjan's strongly connected components of more than one module.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph[v].keys().filter(|w| graph.contains_key(w.as_str())) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

/// One concrete loop through a component, from its first module back to
/// it, with the line that makes each step.
fn a_loop(graph: &Graph, component: &[String]) -> String {
    let members: BTreeSet<&str> = component.iter().map(String::as_str).collect();
    let start = component[0].as_str();
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut seen = BTreeSet::from([start]);
    let mut closing = None;
    'search: while let Some(v) = queue.pop_front() {
        for w in graph[v].keys().map(String::as_str) {
            if w == start {
                closing = Some(v);
                break 'search;
            }
            if members.contains(w) && seen.insert(w) {
                previous.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut path = vec![start];
    let mut v = closing.unwrap_or(start);
    let mut back = vec![v];
    while let Some(p) = previous.get(v) {
        back.push(p);
        v = p;
    }
    back.reverse();
    path.extend(back.into_iter().skip_while(|m| *m == start));
    path.push(start);
    path.windows(2)
        .map(|w| format!("  {} → {} ({})", w[0], w[1], graph[w[0]][w[1]]))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_module_is_in_a_circle() {
    let root = root();
    let graph = graph(&root);
    assert!(
        graph.keys().filter(|m| m.starts_with("app::")).count() > 20,
        "the modules of payments-app were not found under {}",
        root.display()
    );
    let report: Vec<String> = cycles(&graph)
        .iter()
        .map(|c| {
            format!(
                "import cycle among {}:\n{}",
                c.join(", "),
                a_loop(&graph, c)
            )
        })
        .collect();
    assert!(
        report.is_empty(),
        "dependencies between modules must point one way ({} modules read):\n{}",
        graph.len(),
        report.join("\n")
    );
}

/// The service's crates by layer, lowest first (ARCHITECTURE.md draws
/// them), by their folder under `service/`: a crate may list crates of
/// lower layers only.
const LAYERS: &[&[&str]] = &[
    &["wire"],
    &["domain", "telemetry"],
    &["config"],
    &["channels", "store"],
    &["app"],
    &["http", "workers"],
    &["service"],
    &["testing"],
];

/// Pairs the layers allow but the rule does not: the edges translate and
/// call the use cases, which are the only callers of the store.
const NEVER_LISTS: &[(&str, &str)] = &[("http", "store"), ("workers", "store")];

fn layer_of(name: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&name))
}

/// The service crates a manifest lists by path, with the line of each.
fn path_dependencies(manifest: &Path) -> Vec<(String, usize)> {
    let text = std::fs::read_to_string(manifest).unwrap_or_default();
    text.lines()
        .enumerate()
        .filter_map(|(n, line)| {
            let path = line.split("path = \"").nth(1)?.split('"').next()?;
            let name = Path::new(path).file_name()?.to_str()?;
            let name = if path == ".." { "service" } else { name };
            Some((name.to_string(), n + 1))
        })
        .collect()
}

#[test]
fn crates_list_only_lower_layers() {
    let service = root().join("service");
    let mut wrong = Vec::new();
    for layer in LAYERS {
        for name in *layer {
            let manifest = match *name {
                "service" => service.join("Cargo.toml"),
                other => service.join(other).join("Cargo.toml"),
            };
            assert!(manifest.is_file(), "{} is missing", manifest.display());
            let own = layer_of(name).unwrap_or(0);
            let dev = std::fs::read_to_string(&manifest)
                .unwrap_or_default()
                .lines()
                .position(|l| l.starts_with("[dev-dependencies]"))
                .map_or(usize::MAX, |i| i + 1);
            for (dep, line) in path_dependencies(&manifest) {
                let Some(theirs) = layer_of(&dep) else {
                    continue;
                };
                let skips = NEVER_LISTS.contains(&(name, dep.as_str()));
                if line < dev && (theirs >= own || skips) && dep != *name {
                    wrong.push(format!(
                        "{}:{line}: {name} (layer {own}) lists {dep} (layer {theirs})",
                        manifest.display()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a crate lists a crate it may not:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn paths_are_read_with_their_groups() {
    let paths = |line: &str| -> Vec<String> {
        named_paths(&code_of(line))
            .into_iter()
            .map(|p| p.join("::"))
            .collect()
    };
    assert_eq!(
        paths("use crate::{ledger, money::units, validate};"),
        ["crate::ledger", "crate::money::units", "crate::validate"]
    );
    assert_eq!(
        paths("use super::{a::{b, c}, d};"),
        ["super::a::b", "super::a::c", "super::d"]
    );
    assert_eq!(
        paths("let x = crate::clock::from_unix(1); // crate::app"),
        ["crate::clock::from_unix"]
    );
    assert_eq!(paths("let s = \"crate::app::App\";"), Vec::<String>::new());
}

#[test]
fn a_circle_of_siblings_is_found_and_a_parent_naming_its_child_is_not() {
    let dir = std::env::temp_dir().join(format!("module-cycles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("demo/src/folder")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"demo\"]\n",
    )
    .unwrap();
    let write =
        |file: &str, text: &str| std::fs::write(dir.join("demo/src").join(file), text).unwrap();
    write("lib.rs", "mod a;\nmod b;\nmod folder;\n");
    write("a.rs", "use crate::b::B;\npub struct A;\n");
    write("b.rs", "pub struct B(crate::a::A);\n");
    write(
        "folder/mod.rs",
        "mod child;\npub use child::C;\npub struct F;\n",
    );
    write("folder/child.rs", "use super::F;\npub struct C(F);\n");
    let graph = graph(&dir);
    let found = cycles(&graph);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        found,
        vec![vec!["demo::a".to_string(), "demo::b".to_string()]]
    );
    assert!(graph["demo::folder::child"].contains_key("demo::folder"));
}
