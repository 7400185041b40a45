//! Dependencies between the top-level modules of `service/src` point one
//! way (ARCHITECTURE.md states the rule). This test reads the sources, finds
//! every `crate::module` a module names, and fails naming each import cycle
//! with the lines that close it, and each import that points up the layers.
//! `MODULE_CYCLES_SRC` points it at another
//! tree (`.ci/module-cycles-demo` uses that to show it failing).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module, the modules it names, and where it names each first.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            rust_files(&entry, out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The top-level modules named by `crate::…` in one line of code, grouped
/// imports (`crate::{a, b::c}`) included.
fn named_modules(line: &str) -> Vec<String> {
    let code = match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    };
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 0;
            let mut start_of_item = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start_of_item = true,
                    c if start_of_item && (c.is_alphabetic() || c == '_') => {
                        let ident: String = group[j..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        found.push(ident);
                        start_of_item = false;
                    }
                    _ => {}
                }
            }
        } else {
            let ident: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !ident.is_empty() {
                found.push(ident);
            }
        }
        rest = after;
    }
    found
}

fn graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let entries =
        std::fs::read_dir(src).unwrap_or_else(|e| panic!("reading {}: {e}", src.display()));
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = match path.file_stem().and_then(|s| s.to_str()) {
            Some(n) => n.to_string(),
            None => continue,
        };
        // The crate roots declare modules; they are no layer of their own.
        if name == "lib" || name == "main" {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&path, &mut files);
        let edges = graph.entry(name.clone()).or_default();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                for other in named_modules(line) {
                    if other != name {
                        let at = format!(
                            "{}:{}",
                            file.strip_prefix(src).unwrap_or(&file).display(),
                            n + 1
                        );
                        edges.entry(other).or_insert(at);
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
    // Breadth-first from each successor of `start` back to `start`.
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
fn top_level_modules_have_no_import_cycle() {
    let src = std::env::var("MODULE_CYCLES_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let graph = graph(&src);
    assert!(graph.len() > 5, "no modules found under {}", src.display());
    let found = cycles(&graph);
    let report: Vec<String> = found
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
        "dependencies between the modules of {} must point one way:\n{}",
        src.display(),
        report.join("\n")
    );
}

/// The layers of `service/src`, lowest first (ARCHITECTURE.md draws them).
/// A module may name modules of its own layer or below, never above; every
/// top-level module must be placed here, so a new one is placed on purpose.
const LAYERS: &[&[&str]] = &[
    &["clock", "keys", "telemetry"],
    &["domain"],
    &["config", "channels", "ratelimit"],
    &["store"],
    &["app"],
    &["http", "delivery", "jobs"],
    &["server"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn every_import_points_down_the_layers() {
    let src = std::env::var("MODULE_CYCLES_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let graph = graph(&src);
    let mut wrong = Vec::new();
    for (module, edges) in &graph {
        let Some(own) = layer_of(module) else {
            wrong.push(format!("`{module}` is in no layer: place it in LAYERS"));
            continue;
        };
        for (other, at) in edges {
            match layer_of(other) {
                Some(theirs) if theirs > own => wrong.push(format!(
                    "{module} (layer {own}) names {other} (layer {theirs}) at {at}"
                )),
                _ => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports must point down the layers:\n{}",
        wrong.join("\n")
    );
}

/// Modules that may not name a lower layer's module although the layers
/// allow it: the edges translate and call `app`, which is the only caller
/// of the store (ARCHITECTURE.md, "The one rule").
const NEVER_NAMES: &[(&str, &str)] = &[("http", "store"), ("delivery", "store"), ("jobs", "store")];

#[test]
fn only_the_use_cases_call_the_store() {
    let src = std::env::var("MODULE_CYCLES_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let graph = graph(&src);
    let wrong: Vec<String> = NEVER_NAMES
        .iter()
        .filter_map(|(module, forbidden)| {
            let at = graph.get(*module)?.get(*forbidden)?;
            Some(format!(
                "{module} names {forbidden} at {at}: go through app"
            ))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "the edges call the use cases, not the store:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn grouped_and_plain_paths_are_both_read() {
    assert_eq!(
        named_modules("use crate::{ledger, money::units, validate};"),
        ["ledger", "money", "validate"]
    );
    assert_eq!(
        named_modules("let x = crate::clock::from_unix(1); // crate::app"),
        ["clock"]
    );
}
