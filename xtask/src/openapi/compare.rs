//! The differences between two versions of one OpenAPI document, each
//! classified by what it does to a merchant already integrated.
//!
//! Direction decides: what a merchant *sends* (parameters, request bodies,
//! its answers to callbacks) breaks when the new version asks more of it;
//! what a merchant *receives* (responses, callback bodies and headers)
//! breaks when the new version takes away or changes what it may rely on,
//! or can now say something a generated client refuses (an enum value or
//! an event it has never seen). An added field in something received is
//! compatible: receivers tolerate unknown fields, as the contract tells
//! them to. Anything this comparison does not understand is breaking, so
//! that a gap in it can only make the gate stricter.
//!
//! Written here rather than taken from a library: `drift` (what Oxide's
//! dropshot-api-manager uses, checked at 0.2.0) reports changes of
//! `required`, of enums and of string bounds as "unhandled" and does not
//! compare callbacks at all, and `oasdiff` is a Go program none of this
//! project's registries ships; both would leave the cases that matter most
//! here to a second, hand-written pass anyway.

use crate::codegen::spec::{BOUNDS, ENFORCED_SINCE};

/// Marks an error code enum whose every response names the codes it may
/// answer (`only_on_new_responses`).
const CODES_PER_RESPONSE: &str = "x-codes-named-per-response";
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A merchant integrated against the old version can fail.
    Breaking,
    /// Something new a merchant may use; nothing it did stops working.
    Compatible,
    /// Words for people (descriptions, examples, summaries).
    Cosmetic,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Compatible => "compatible",
            Class::Cosmetic => "cosmetic",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    pub class: Class,
    /// Where: an operation, a schema and its property path.
    pub at: String,
    /// What changed, and for a breaking change why it breaks.
    pub what: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.class.as_str(), self.at, self.what)
    }
}

/// Who writes the data a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Dir {
    /// The merchant sends it (requests, its answers to callbacks).
    Send,
    /// The merchant receives it (responses, callbacks).
    Receive,
}

/// Every difference between `old` and `new`, each once, breaking first.
pub fn compare(old: &Value, new: &Value) -> Vec<Change> {
    // A header stated as a security scheme is the same header on the wire
    // as one stated as a parameter. A document whose schemes do not map to
    // headers cannot be rewritten; it is compared as written.
    let old = &crate::codegen::spec::security_as_headers(old).unwrap_or_else(|_| old.clone());
    let new = &crate::codegen::spec::security_as_headers(new).unwrap_or_else(|_| new.clone());
    let mut cmp = Compare {
        old,
        new,
        out: BTreeSet::new(),
        seen: HashSet::new(),
    };
    cmp.document();
    cmp.out.into_iter().collect()
}

struct Compare<'a> {
    old: &'a Value,
    new: &'a Value,
    out: BTreeSet<Change>,
    /// Schema pairs already compared (by reference), per direction.
    seen: HashSet<(String, String, Dir)>,
}

/// Keys that only carry words for people.
const WORDS: &[&str] = &[
    "description",
    "summary",
    "title",
    "example",
    "examples",
    "externalDocs",
    "tags",
    "deprecated",
    "readOnly",
    "writeOnly",
];

fn is_words(key: &str) -> bool {
    WORDS.contains(&key) || key.starts_with("x-")
}

fn obj(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.len() > 80 {
        format!("{}…", &text[..77])
    } else {
        text
    }
}

impl<'a> Compare<'a> {
    fn push(&mut self, class: Class, at: &str, what: impl Into<String>) {
        self.out.insert(Change {
            class,
            at: at.to_string(),
            what: what.into(),
        });
    }

    fn breaking(&mut self, at: &str, what: impl Into<String>) {
        self.push(Class::Breaking, at, what);
    }

    fn document(&mut self) {
        let (old, new) = (obj(self.old), obj(self.new));
        for key in union(&old, &new) {
            let (o, n) = (old.get(&key), new.get(&key));
            if same(o, n) {
                continue;
            }
            match key.as_str() {
                "paths" => self.paths(o.unwrap_or(&Value::Null), n.unwrap_or(&Value::Null)),
                // Reached through references from the operations; a
                // component nothing refers to affects no merchant.
                "components" => self.unreferenced(o, n),
                "info" => self.info(o, n),
                "servers" => self.push(
                    Class::Compatible,
                    "servers",
                    "the listed servers changed (clients choose their base URL)",
                ),
                k if is_words(k) => self.push(Class::Cosmetic, k, "changed"),
                "openapi" => self.breaking(
                    "openapi",
                    format!(
                        "the OpenAPI version changed from {} to {}: generators read them differently",
                        short(o.unwrap_or(&Value::Null)),
                        short(n.unwrap_or(&Value::Null))
                    ),
                ),
                other => self.breaking(
                    other,
                    "changed, and this check does not know what that does to merchants",
                ),
            }
        }
    }

    fn info(&mut self, old: Option<&Value>, new: Option<&Value>) {
        let (old, new) = (
            obj(old.unwrap_or(&Value::Null)),
            obj(new.unwrap_or(&Value::Null)),
        );
        for key in union(&old, &new) {
            // The version is the caller's business (`check` compares it
            // with the kind of change).
            if key != "version" && old.get(&key) != new.get(&key) {
                self.push(Class::Cosmetic, &format!("info.{key}"), "changed");
            }
        }
    }

    /// Components changed where no operation reaches them: words only
    /// (what operations reach is compared through them).
    fn unreferenced(&mut self, old: Option<&Value>, new: Option<&Value>) {
        let (old, new) = (
            obj(old.unwrap_or(&Value::Null)),
            obj(new.unwrap_or(&Value::Null)),
        );
        for kind in union(&old, &new) {
            let (o, n) = (
                obj(old.get(&kind).unwrap_or(&Value::Null)),
                obj(new.get(&kind).unwrap_or(&Value::Null)),
            );
            for name in union(&o, &n) {
                if o.get(&name) == n.get(&name) {
                    continue;
                }
                let at = format!("components.{kind}.{name}");
                match (o.contains_key(&name), n.contains_key(&name)) {
                    (false, true) => self.push(Class::Compatible, &at, "added"),
                    (true, false) if !self.referenced(&kind, &name, self.old) => {
                        self.push(Class::Compatible, &at, "removed (nothing referred to it)")
                    }
                    _ => {
                        // Compared where it is used; noted here in case
                        // nothing uses it.
                        if !self.referenced(&kind, &name, self.new) {
                            self.push(Class::Cosmetic, &at, "changed (nothing refers to it)");
                        }
                    }
                }
            }
        }
    }

    fn referenced(&self, kind: &str, name: &str, doc: &Value) -> bool {
        let target = format!("#/components/{kind}/{name}");
        let text = doc.get("paths").map(Value::to_string).unwrap_or_default();
        let components = doc
            .get("components")
            .map(Value::to_string)
            .unwrap_or_default();
        text.contains(&format!("\"{target}\"")) || components.contains(&format!("\"{target}\""))
    }

    fn paths(&mut self, old: &Value, new: &Value) {
        let (old, new) = (obj(old), obj(new));
        for path in union(&old, &new) {
            let (o, n) = (
                obj(old.get(&path).unwrap_or(&Value::Null)),
                obj(new.get(&path).unwrap_or(&Value::Null)),
            );
            for method in union(&o, &n) {
                let at = format!("{} {path}", method.to_uppercase());
                match (o.get(&method), n.get(&method)) {
                    (Some(_), None) => self.breaking(&at, "operation removed: merchants call it"),
                    (None, Some(_)) => self.push(Class::Compatible, &at, "operation added"),
                    (Some(a), Some(b)) if !same(Some(a), Some(b)) => {
                        self.operation(&at, a, b, Dir::Send)
                    }
                    _ => {}
                }
            }
        }
    }

    /// An operation. `callee` is who calls it: the merchant for the API's
    /// own operations (`Send`), the service for a callback (`Receive`),
    /// which turns every direction inside it around.
    fn operation(&mut self, at: &str, old: &Value, new: &Value, callee: Dir) {
        let (asks, answers) = match callee {
            Dir::Send => (Dir::Send, Dir::Receive),
            Dir::Receive => (Dir::Receive, Dir::Send),
        };
        let (o, n) = (obj(old), obj(new));
        for key in union(&o, &n) {
            let (a, b) = (o.get(&key), n.get(&key));
            if same(a, b) {
                continue;
            }
            let (a0, b0) = (a.unwrap_or(&Value::Null), b.unwrap_or(&Value::Null));
            match key.as_str() {
                // Generators make no code from 3.0 callbacks, so naming
                // a callback that had no operationId renames nothing.
                "operationId" if callee == Dir::Receive && a.is_none() => self.push(
                    Class::Compatible,
                    at,
                    format!("operationId {} added", short(b0)),
                ),
                "operationId" => self.breaking(
                    at,
                    format!(
                        "operationId changed from {} to {}: generated clients name their methods after it",
                        short(a0),
                        short(b0)
                    ),
                ),
                "parameters" => self.parameters(at, a0, b0, asks),
                "requestBody" => self.request_body(at, a0, b0, asks),
                "responses" => self.responses(at, a0, b0, answers),
                "callbacks" => self.callbacks(at, a0, b0),
                "security" => self.security(at, a0, b0),
                k if is_words(k) => self.push(Class::Cosmetic, at, format!("{k} changed")),
                other => self.breaking(
                    at,
                    format!("`{other}` changed, and this check does not know what that does to merchants"),
                ),
            }
        }
    }

    /// An operation's security alternatives beyond the first (which became
    /// header parameters): one added keeps every integration working (it
    /// is one more way, taken only by whoever chooses it); one removed or
    /// changed breaks whoever took it.
    fn security(&mut self, at: &str, old: &Value, new: &Value) {
        let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
        let (old, new) = (list(old), list(new));
        if old.iter().all(|a| new.contains(a)) {
            for added in new.iter().filter(|b| !old.contains(b)) {
                let names: Vec<&str> = added
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.keys().map(String::as_str))
                    .collect();
                self.push(
                    Class::Compatible,
                    at,
                    format!("security alternative added ({})", names.join(", ")),
                );
            }
        } else {
            self.breaking(at, "a security alternative was removed or changed");
        }
    }

    fn parameters(&mut self, at: &str, old: &Value, new: &Value, dir: Dir) {
        let index = |doc: &Value, list: &Value| -> BTreeMap<String, Value> {
            list.as_array()
                .into_iter()
                .flatten()
                .map(|p| resolve(doc, p).0)
                .map(|p| {
                    let location = p.get("in").and_then(Value::as_str).unwrap_or("?");
                    let name = p.get("name").and_then(Value::as_str).unwrap_or("?");
                    // Header names are case-insensitive on the wire.
                    let name = if location == "header" {
                        name.to_lowercase()
                    } else {
                        name.to_string()
                    };
                    let key = format!("{location} parameter `{name}`");
                    (key, p)
                })
                .collect()
        };
        let (o, n) = (index(self.old, old), index(self.new, new));
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys {
            let where_ = format!("{at}: {key}");
            let required = |p: &Value| p.get("required").and_then(Value::as_bool).unwrap_or(false);
            match (o.get(key), n.get(key)) {
                (Some(_), None) => match dir {
                    Dir::Send => self.breaking(
                        &where_,
                        "removed: merchants send it and rely on what it does",
                    ),
                    Dir::Receive => self.breaking(&where_, "removed: receivers may read it"),
                },
                (None, Some(p)) => match (dir, required(p)) {
                    (Dir::Send, true) => {
                        self.breaking(&where_, "added as required: merchants do not send it")
                    }
                    _ => self.push(Class::Compatible, &where_, "added"),
                },
                (Some(a), Some(b)) if !same(Some(a), Some(b)) => {
                    match (required(a), required(b), dir) {
                        (false, true, Dir::Send) => {
                            self.breaking(&where_, "now required: merchants may not send it")
                        }
                        (true, false, Dir::Receive) => self
                            .breaking(&where_, "no longer always sent: receivers may rely on it"),
                        (x, y, _) if x != y => self.push(
                            Class::Compatible,
                            &where_,
                            format!("required changed from {x} to {y}"),
                        ),
                        _ => {}
                    }
                    let (sa, sb) = (
                        a.get("schema").unwrap_or(&Value::Null),
                        b.get("schema").unwrap_or(&Value::Null),
                    );
                    self.schema(&where_, sa, sb, dir);
                    for k in union(&obj(a), &obj(b)) {
                        if matches!(k.as_str(), "schema" | "required" | "name" | "in")
                            || a.get(&k) == b.get(&k)
                        {
                            continue;
                        }
                        if is_words(&k) {
                            self.push(Class::Cosmetic, &where_, format!("{k} changed"));
                        } else {
                            self.breaking(&where_, format!("`{k}` changed, and this check does not know what that does to merchants"));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn request_body(&mut self, at: &str, old: &Value, new: &Value, dir: Dir) {
        let (old, _) = resolve(self.old, old);
        let (new, _) = resolve(self.new, new);
        let where_ = format!("{at}: body");
        let required = |b: &Value| b.get("required").and_then(Value::as_bool).unwrap_or(false);
        match (old.is_null(), new.is_null()) {
            (true, false) => {
                if dir == Dir::Send && required(&new) {
                    self.breaking(&where_, "a required body was added: merchants send none");
                } else {
                    self.push(Class::Compatible, &where_, "an optional body was added");
                }
                return;
            }
            (false, true) => {
                self.breaking(
                    &where_,
                    "the body was removed: merchants send one and rely on it",
                );
                return;
            }
            _ => {}
        }
        match (required(&old), required(&new), dir) {
            (false, true, Dir::Send) => {
                self.breaking(&where_, "now required: merchants may send none")
            }
            (true, false, Dir::Receive) => self.breaking(&where_, "no longer always sent"),
            _ => {}
        }
        self.content(&where_, old.get("content"), new.get("content"), dir);
        for k in union(&obj(&old), &obj(&new)) {
            if matches!(k.as_str(), "content" | "required") || old.get(&k) == new.get(&k) {
                continue;
            }
            if is_words(&k) {
                self.push(Class::Cosmetic, &where_, format!("{k} changed"));
            } else {
                self.breaking(
                    &where_,
                    format!(
                        "`{k}` changed, and this check does not know what that does to merchants"
                    ),
                );
            }
        }
    }

    fn content(&mut self, at: &str, old: Option<&Value>, new: Option<&Value>, dir: Dir) {
        let (o, n) = (
            obj(old.unwrap_or(&Value::Null)),
            obj(new.unwrap_or(&Value::Null)),
        );
        for media in union(&o, &n) {
            let where_ = format!("{at} ({media})");
            match (o.get(&media), n.get(&media)) {
                (Some(_), None) => self.breaking(&where_, "media type removed"),
                (None, Some(_)) => match dir {
                    Dir::Send => self.push(Class::Compatible, &where_, "media type added"),
                    Dir::Receive => {
                        self.breaking(&where_, "media type added: receivers may not read it")
                    }
                },
                (Some(a), Some(b)) if !same(Some(a), Some(b)) => {
                    for k in union(&obj(a), &obj(b)) {
                        let (x, y) = (a.get(&k), b.get(&k));
                        if same(x, y) {
                            continue;
                        }
                        match k.as_str() {
                            "schema" => self.schema(
                                &where_,
                                x.unwrap_or(&Value::Null),
                                y.unwrap_or(&Value::Null),
                                dir,
                            ),
                            k if is_words(k) => self.push(Class::Cosmetic, &where_, format!("{k} changed")),
                            other => self.breaking(&where_, format!("`{other}` changed, and this check does not know what that does to merchants")),
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn responses(&mut self, at: &str, old: &Value, new: &Value, dir: Dir) {
        let (o, n) = (obj(old), obj(new));
        for status in union(&o, &n) {
            let where_ = format!("{at}: response {status}");
            match (o.get(&status), n.get(&status)) {
                (Some(_), None) => {
                    self.breaking(&where_, "removed: merchants may rely on this answer")
                }
                (None, Some(_)) => self.push(Class::Compatible, &where_, "added"),
                (Some(a), Some(b)) if !same(Some(a), Some(b)) => {
                    let (a, _) = resolve(self.old, a);
                    let (b, _) = resolve(self.new, b);
                    for k in union(&obj(&a), &obj(&b)) {
                        let (x, y) = (a.get(&k), b.get(&k));
                        if same(x, y) {
                            continue;
                        }
                        match k.as_str() {
                            "content" => self.content(&where_, x, y, dir),
                            "headers" => self.headers(&where_, x, y, dir),
                            k if is_words(k) => self.push(Class::Cosmetic, &where_, format!("{k} changed")),
                            other => self.breaking(&where_, format!("`{other}` changed, and this check does not know what that does to merchants")),
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn headers(&mut self, at: &str, old: Option<&Value>, new: Option<&Value>, dir: Dir) {
        let (o, n) = (
            obj(old.unwrap_or(&Value::Null)),
            obj(new.unwrap_or(&Value::Null)),
        );
        for name in union(&o, &n) {
            let where_ = format!("{at}: header {name}");
            match (o.get(&name), n.get(&name)) {
                (Some(_), None) => self.breaking(&where_, "removed: merchants may read it"),
                (None, Some(_)) => self.push(Class::Compatible, &where_, "added"),
                (Some(a), Some(b)) if !same(Some(a), Some(b)) => {
                    let (a, _) = resolve(self.old, a);
                    let (b, _) = resolve(self.new, b);
                    let (sa, sb) = (
                        a.get("schema").unwrap_or(&Value::Null),
                        b.get("schema").unwrap_or(&Value::Null),
                    );
                    self.schema(&where_, sa, sb, dir);
                }
                _ => {}
            }
        }
    }

    /// Callbacks: the service calls the merchant, so the body is received
    /// and the merchant's answer is sent.
    fn callbacks(&mut self, at: &str, old: &Value, new: &Value) {
        let (o, n) = (obj(old), obj(new));
        for name in union(&o, &n) {
            let (a, b) = (
                obj(o.get(&name).unwrap_or(&Value::Null)),
                obj(n.get(&name).unwrap_or(&Value::Null)),
            );
            let mut expressions: BTreeSet<String> = a.keys().cloned().collect();
            expressions.extend(b.keys().cloned());
            for expr in expressions {
                let (x, y) = (
                    obj(a.get(&expr).unwrap_or(&Value::Null)),
                    obj(b.get(&expr).unwrap_or(&Value::Null)),
                );
                for method in union(&x, &y) {
                    let where_ = format!(
                        "callback `{name}` ({} to {expr}, declared on {at})",
                        method.to_uppercase()
                    );
                    match (x.get(&method), y.get(&method)) {
                        (Some(_), None) => self.breaking(&where_, "removed: receivers expect it"),
                        (None, Some(_)) => self.breaking(
                            &where_,
                            "added: a receiver's generated callback types refuse a call they do not know",
                        ),
                        (Some(p), Some(q)) if !same(Some(p), Some(q)) => {
                            self.operation(&where_, p, q, Dir::Receive)
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// Two schemas at `at`, the data flowing in `dir`.
    fn schema(&mut self, at: &str, old: &Value, new: &Value, dir: Dir) {
        let (old, old_ref) = resolve(self.old, old);
        let (new, new_ref) = resolve(self.new, new);
        // Inside a named schema, changes are told by its name: a schema
        // used in many places is reported once, where it is defined.
        let at = match (&old_ref, &new_ref) {
            (Some(a), Some(b)) if a == b => {
                if !self.seen.insert((a.clone(), b.clone(), dir)) {
                    return;
                }
                format!("{a} (in {at})")
            }
            (Some(a), Some(b)) => {
                if !self.seen.insert((a.clone(), b.clone(), dir)) {
                    return;
                }
                format!("{at} ({a} → {b})")
            }
            _ => at.to_string(),
        };
        let at = at.as_str();
        if same(Some(&old), Some(&new)) {
            return;
        }
        if dir == Dir::Send && self.widened_to_variants(&old, &new) {
            self.push(
                Class::Compatible,
                at,
                "now also accepts other forms (the old schema is one of its variants)",
            );
            return;
        }
        let (o, n) = (obj(&old), obj(&new));
        let reading = match dir {
            Dir::Send => "merchants send",
            Dir::Receive => "merchants receive",
        };
        // A request field whose bounds the service enforced before they were
        // written down says since when; documenting them refuses nothing new.
        let enforced_since = match dir {
            Dir::Send => n.get(ENFORCED_SINCE).and_then(Value::as_str),
            Dir::Receive => None,
        };
        for key in union(&o, &n) {
            let (a, b) = (o.get(&key), n.get(&key));
            if same(a, b) {
                continue;
            }
            let (a0, b0) = (a.unwrap_or(&Value::Null), b.unwrap_or(&Value::Null));
            if let (Some(since), None, true) = (enforced_since, a, BOUNDS.contains(&key.as_str())) {
                self.push(
                    Class::Compatible,
                    at,
                    format!(
                        "{key} {} written down, as the service has enforced it since {since}",
                        short(b0)
                    ),
                );
                continue;
            }
            match key.as_str() {
                ENFORCED_SINCE => self.push(Class::Cosmetic, at, format!("{ENFORCED_SINCE} changed")),
                "type" | "format" => self.breaking(
                    at,
                    format!(
                        "{key} changed from {} to {}: what {reading} no longer reads the same",
                        short(a0),
                        short(b0)
                    ),
                ),
                "nullable" => {
                    let (x, y) = (a0.as_bool().unwrap_or(false), b0.as_bool().unwrap_or(false));
                    match (x, y, dir) {
                        (false, true, Dir::Receive) => self.breaking(at, "may now be null: receivers may not expect it"),
                        (true, false, Dir::Send) => self.breaking(at, "null no longer accepted: merchants may send it"),
                        _ => self.push(Class::Compatible, at, format!("nullable changed from {x} to {y}")),
                    }
                }
                "enum" => {
                    let per_response = n.get(CODES_PER_RESPONSE) == Some(&Value::Bool(true));
                    self.enumeration(at, a, b, dir, per_response)
                }
                "maxLength" | "maxItems" | "maximum" | "exclusiveMaximum" | "maxProperties" => {
                    self.bound(at, &key, a, b, dir, true)
                }
                "minLength" | "minItems" | "minimum" | "exclusiveMinimum" | "minProperties" => {
                    self.bound(at, &key, a, b, dir, false)
                }
                "pattern" => match (a, b, dir) {
                    (Some(_), None, Dir::Send) => self.push(Class::Compatible, at, "pattern removed"),
                    (None, Some(_), Dir::Receive) => self.push(Class::Compatible, at, "pattern added"),
                    _ => self.breaking(
                        at,
                        format!("pattern changed from {} to {}: {reading} values the other may refuse", short(a0), short(b0)),
                    ),
                },
                "properties" | "required" => {} // below, together
                "items" => self.schema(&format!("{at}[]"), a0, b0, dir),
                "additionalProperties" => match (a0, b0) {
                    (Value::Object(_), Value::Object(_)) => self.schema(&format!("{at}{{*}}"), a0, b0, dir),
                    _ => self.breaking(at, format!("additionalProperties changed from {} to {}", short(a0), short(b0))),
                },
                "oneOf" | "anyOf" => self.variants(at, &key, a0, b0, dir),
                "allOf" => {
                    let (x, y) = (a0.as_array().cloned().unwrap_or_default(), b0.as_array().cloned().unwrap_or_default());
                    if x.len() != y.len() {
                        self.breaking(at, "allOf changed its parts");
                    } else {
                        for (i, (p, q)) in x.iter().zip(y.iter()).enumerate() {
                            self.schema(&format!("{at} (allOf {i})"), p, q, dir);
                        }
                    }
                }
                "discriminator" if self.mapping_made_explicit(a0, b0, &new) => self.push(
                    Class::Compatible,
                    at,
                    "discriminator mapping added, naming the values each variant already had",
                ),
                "discriminator" => self.breaking(at, "discriminator changed: clients pick the variant by it"),
                "default" => match dir {
                    Dir::Send => self.breaking(
                        at,
                        format!("default changed from {} to {}: merchants that omit it get another value", short(a0), short(b0)),
                    ),
                    Dir::Receive => self.push(Class::Cosmetic, at, "default changed"),
                },
                "uniqueItems" | "multipleOf" => self.breaking(at, format!("{key} changed from {} to {}", short(a0), short(b0))),
                k if is_words(k) => self.push(Class::Cosmetic, at, format!("{k} changed")),
                other => self.breaking(at, format!("`{other}` changed, and this check does not know what that does to merchants")),
            }
        }
        if !same(o.get("properties"), n.get("properties")) || o.get("required") != n.get("required")
        {
            self.object(at, &o, &n, dir);
        }
    }

    fn object(&mut self, at: &str, old: &Map<String, Value>, new: &Map<String, Value>, dir: Dir) {
        let props = |m: &Map<String, Value>| obj(m.get("properties").unwrap_or(&Value::Null));
        let required = |m: &Map<String, Value>| -> BTreeSet<String> {
            m.get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        };
        let (po, pn) = (props(old), props(new));
        let (ro, rn) = (required(old), required(new));
        for name in union(&po, &pn) {
            let where_ = format!("{at}.{name}");
            match (po.get(&name), pn.get(&name), dir) {
                (Some(_), None, Dir::Send) => self.breaking(
                    &where_,
                    "property removed: merchants send it and rely on what it does",
                ),
                (Some(_), None, Dir::Receive) => {
                    self.breaking(&where_, "property removed: merchants may read it")
                }
                (None, Some(_), Dir::Send) if rn.contains(&name) => {
                    self.breaking(&where_, "required property added: merchants do not send it")
                }
                (None, Some(_), Dir::Send) => {
                    self.push(Class::Compatible, &where_, "optional property added")
                }
                (None, Some(_), Dir::Receive) => self.push(
                    Class::Compatible,
                    &where_,
                    "property added (receivers tolerate fields they do not know)",
                ),
                (Some(a), Some(b), _) => {
                    match (ro.contains(&name), rn.contains(&name), dir) {
                        (false, true, Dir::Send) => {
                            self.breaking(&where_, "now required: merchants may not send it")
                        }
                        (true, false, Dir::Receive) => self.breaking(
                            &where_,
                            "no longer required: it may be absent where merchants rely on it",
                        ),
                        (false, true, Dir::Receive) => {
                            self.push(Class::Compatible, &where_, "now always present")
                        }
                        (true, false, Dir::Send) => {
                            self.push(Class::Compatible, &where_, "now optional")
                        }
                        _ => {}
                    }
                    if !same(Some(a), Some(b)) {
                        self.schema(&where_, a, b, dir);
                    }
                }
                (None, None, _) => {}
            }
        }
        // `required` naming a property that is not in `properties`.
        for name in rn.difference(&ro) {
            if !pn.contains_key(name) && dir == Dir::Send {
                self.breaking(
                    &format!("{at}.{name}"),
                    "now required: merchants may not send it",
                );
            }
        }
    }

    fn enumeration(
        &mut self,
        at: &str,
        old: Option<&Value>,
        new: Option<&Value>,
        dir: Dir,
        per_response: bool,
    ) {
        let set = |v: Option<&Value>| -> Option<BTreeSet<String>> {
            v.and_then(Value::as_array)
                .map(|a| a.iter().map(Value::to_string).collect())
        };
        match (set(old), set(new)) {
            (Some(a), Some(b)) => {
                let removed: Vec<&String> = a.difference(&b).collect();
                let added: Vec<&String> = b.difference(&a).collect();
                if !removed.is_empty() {
                    let why = match dir {
                        Dir::Send => "merchants may send them",
                        Dir::Receive => "merchants may rely on them",
                    };
                    self.breaking(
                        at,
                        format!("enum narrowed: {} removed; {why}", list(&removed)),
                    );
                }
                if !added.is_empty() {
                    match dir {
                        Dir::Send => self.push(Class::Compatible, at, format!("enum widened: {} added", list(&added))),
                        Dir::Receive if per_response && self.only_on_new_responses(&added) => self.push(
                            Class::Compatible,
                            at,
                            format!(
                                "enum widened: {} added, each named only by responses the previous version did not have",
                                list(&added)
                            ),
                        ),
                        Dir::Receive => self.breaking(
                            at,
                            format!(
                                "enum widened: {} added; a generated client refuses a value it does not know",
                                list(&added)
                            ),
                        ),
                    }
                }
            }
            (Some(_), None) => match dir {
                Dir::Send => self.push(Class::Compatible, at, "enum removed: any value accepted"),
                Dir::Receive => self.breaking(at, "enum removed: any value may arrive"),
            },
            (None, Some(b)) => match dir {
                Dir::Send => self.breaking(
                    at,
                    format!(
                        "now an enum of {}: merchants may send other values",
                        list(&b.iter().collect::<Vec<_>>())
                    ),
                ),
                Dir::Receive => self.push(Class::Compatible, at, "now an enum"),
            },
            (None, None) => {}
        }
    }

    /// A numeric or length bound (`upper`: a maximum). Tightening what
    /// merchants send, or loosening what they receive (generated clients
    /// check bounds when they read), breaks.
    fn bound(
        &mut self,
        at: &str,
        key: &str,
        old: Option<&Value>,
        new: Option<&Value>,
        dir: Dir,
        upper: bool,
    ) {
        // Read exactly: a bound may be an amount limit.
        let num = |v: Option<&Value>| {
            v.and_then(|v| rust_decimal::Decimal::from_str_exact(&v.to_string()).ok())
        };
        // A missing upper bound is no bound (+∞), a missing lower one −∞.
        let tighter = match (num(old), num(new)) {
            (Some(a), Some(b)) => {
                if upper {
                    b < a
                } else {
                    b > a
                }
            }
            (None, Some(_)) => true,
            (Some(_), None) | (None, None) => false,
        };
        let what = format!(
            "{key} changed from {} to {}",
            old.map(short).unwrap_or_else(|| "none".into()),
            new.map(short).unwrap_or_else(|| "none".into())
        );
        match (tighter, dir) {
            (true, Dir::Send) => {
                self.breaking(at, format!("{what}: merchants may send values now refused"))
            }
            (false, Dir::Receive) => self.breaking(
                at,
                format!("{what}: merchants may receive values their clients refuse"),
            ),
            _ => self.push(Class::Compatible, at, what),
        }
    }

    /// Whether each added code (a JSON string, as `enumeration` lists it)
    /// is named (in backticks) by some response of the new document, and
    /// only by responses the old document did not have: an error code enum
    /// marked `x-codes-named-per-response` promises that a response answers
    /// only the codes its description names, so an integration generated
    /// from the old document never receives an added one.
    fn only_on_new_responses(&self, added: &[&String]) -> bool {
        let codes: Vec<String> = added
            .iter()
            .map(|c| format!("`{}`", c.trim_matches('"')))
            .collect();
        let mut named = vec![false; codes.len()];
        for (path, item) in obj(self.new.get("paths").unwrap_or(&Value::Null)) {
            for (method, op) in obj(&item) {
                for (status, response) in obj(op.get("responses").unwrap_or(&Value::Null)) {
                    let (response, _) = resolve(self.new, &response);
                    let words = response
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let existed = self
                        .old
                        .pointer(&format!(
                            "/paths/{}/{method}/responses/{status}",
                            path.replace('~', "~0").replace('/', "~1")
                        ))
                        .is_some();
                    for (i, code) in codes.iter().enumerate() {
                        if words.contains(code.as_str()) {
                            if existed {
                                return false;
                            }
                            named[i] = true;
                        }
                    }
                }
            }
        }
        named.iter().all(|n| *n)
    }

    /// `new` is a `oneOf`/`anyOf` of which one variant is `old` itself (words
    /// aside): what merchants sent before still fits.
    fn widened_to_variants(&self, old: &Value, new: &Value) -> bool {
        if old.get("oneOf").is_some() || old.get("anyOf").is_some() {
            return false;
        }
        let Some(variants) = new
            .get("oneOf")
            .or_else(|| new.get("anyOf"))
            .and_then(Value::as_array)
        else {
            return false;
        };
        let unworded = |v: &Value| -> Value {
            Value::Object(obj(v).into_iter().filter(|(k, _)| !is_words(k)).collect())
        };
        let outside = obj(new)
            .keys()
            .all(|k| is_words(k) || k == "oneOf" || k == "anyOf");
        outside
            && variants
                .iter()
                .any(|v| unworded(&resolve(self.new, v).0) == unworded(old))
    }

    /// A discriminator that gained a `mapping` and nothing else, where each
    /// value maps to the variant whose discriminating property already had
    /// that value as its only one: what a client picks does not change.
    fn mapping_made_explicit(&self, old: &Value, new: &Value, schema: &Value) -> bool {
        let property = old.get("propertyName");
        if property.is_none()
            || property != new.get("propertyName")
            || old.get("mapping").is_some()
            || obj(new)
                .keys()
                .any(|k| k != "propertyName" && k != "mapping")
        {
            return false;
        }
        let property = property.and_then(Value::as_str).unwrap_or_default();
        let Some(mapping) = new.get("mapping").and_then(Value::as_object) else {
            return false;
        };
        let variants: BTreeSet<String> = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("$ref").and_then(Value::as_str).map(String::from))
            .collect();
        let mapped: BTreeSet<String> = mapping
            .values()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect();
        mapped == variants
            && mapping.iter().all(|(value, target)| {
                let variant = resolve(self.new, &serde_json::json!({ "$ref": target })).0;
                variant
                    .pointer(&format!("/properties/{property}/enum"))
                    .and_then(Value::as_array)
                    .is_some_and(|e| e.len() == 1 && e[0].as_str() == Some(value))
            })
    }

    /// `oneOf`/`anyOf` variants, matched by the schema they name.
    fn variants(&mut self, at: &str, key: &str, old: &Value, new: &Value, dir: Dir) {
        let names = |doc: &Value, list: &Value| -> BTreeMap<String, Value> {
            list.as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, v)| {
                    let name = resolve(doc, v).1.unwrap_or_else(|| format!("#{i}"));
                    (name, v.clone())
                })
                .collect()
        };
        let (o, n) = (names(self.old, old), names(self.new, new));
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for name in keys {
            let where_ = format!("{at} ({key} {name})");
            match (o.get(name), n.get(name), dir) {
                (Some(_), None, Dir::Send) => {
                    self.breaking(&where_, "variant removed: merchants may send it")
                }
                (Some(_), None, Dir::Receive) => {
                    self.breaking(&where_, "variant removed: merchants may rely on it")
                }
                (None, Some(_), Dir::Send) => {
                    self.push(Class::Compatible, &where_, "variant added")
                }
                (None, Some(_), Dir::Receive) => self.breaking(
                    &where_,
                    "variant added: a generated client refuses a variant it does not know",
                ),
                (Some(a), Some(b), _) => self.schema(&where_, a, b, dir),
                (None, None, _) => {}
            }
        }
    }
}

/// Equal, and with no reference whose target may differ between the two
/// documents: only then can a comparison stop early.
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    a == b && !a.is_some_and(|v| v.to_string().contains("\"$ref\""))
}

fn list(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn union(a: &Map<String, Value>, b: &Map<String, Value>) -> BTreeSet<String> {
    a.keys().chain(b.keys()).cloned().collect()
}

/// Follows `$ref`s within `doc`; the value and the name of the last
/// component referred to.
fn resolve(doc: &Value, value: &Value) -> (Value, Option<String>) {
    let mut current = value.clone();
    let mut name = None;
    for _ in 0..32 {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            break;
        };
        name = reference.rsplit('/').next().map(String::from);
        match doc.pointer(pointer) {
            Some(target) => current = target.clone(),
            None => break,
        }
    }
    (current, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(request: Value, response: Value, event: Value) -> Value {
        json!({
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "0.1.0"},
            "paths": {"/orders": {"post": {
                "operationId": "create",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Req"}}}},
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Res"}}}}},
                "callbacks": {"changed": {"{$request.body#/callback_url}": {"post": {
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"oneOf": [{"$ref": "#/components/schemas/Ev"}]}}}},
                    "responses": {"200": {"description": "ok"}}
                }}}}
            }}},
            "components": {"schemas": {"Req": request, "Res": response, "Ev": event}}
        })
    }

    fn base() -> (Value, Value, Value) {
        (
            json!({"type": "object", "required": ["amount"], "properties": {
                "amount": {"type": "number", "format": "decimal"},
                "kind": {"type": "string", "enum": ["a", "b"]}}}),
            json!({"type": "object", "required": ["status", "remark"], "properties": {
                "status": {"type": "string", "enum": ["pending", "done"]},
                "remark": {"type": "string"}}}),
            json!({"type": "object", "required": ["event", "paid_at"], "properties": {
                "event": {"type": "string", "enum": ["paid"]},
                "paid_at": {"type": "string"}}}),
        )
    }

    fn classes(edit: impl FnOnce(&mut Value, &mut Value, &mut Value)) -> Vec<(Class, String)> {
        let (req, res, ev) = base();
        let old = doc(req.clone(), res.clone(), ev.clone());
        let (mut req, mut res, mut ev) = (req, res, ev);
        edit(&mut req, &mut res, &mut ev);
        let new = doc(req, res, ev);
        compare(&old, &new)
            .into_iter()
            .map(|c| (c.class, c.to_string()))
            .collect()
    }

    fn only_breaking(changes: &[(Class, String)], words: &str) {
        assert!(
            changes
                .iter()
                .any(|(c, t)| *c == Class::Breaking && t.contains(words)),
            "expected a breaking change saying `{words}`: {changes:#?}"
        );
    }

    #[test]
    fn removing_a_response_field_breaks() {
        let c = classes(|_, res, _| {
            res["properties"].as_object_mut().unwrap().remove("remark");
            res["required"] = json!(["status"]);
        });
        only_breaking(
            &c,
            "Res (in POST /orders: response 200 (application/json)).remark: property removed",
        );
    }

    #[test]
    fn a_newly_required_request_field_breaks_an_optional_one_does_not() {
        let c = classes(|req, _, _| req["required"] = json!(["amount", "kind"]));
        only_breaking(&c, ".kind: now required");
        let c = classes(|req, _, _| req["properties"]["note"] = json!({"type": "string"}));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].0, Class::Compatible, "{c:?}");
    }

    #[test]
    fn enums_break_when_narrowed_and_when_widened_where_received() {
        only_breaking(
            &classes(|req, _, _| req["properties"]["kind"]["enum"] = json!(["a"])),
            "enum narrowed: \"b\" removed",
        );
        only_breaking(
            &classes(|_, res, _| res["properties"]["status"]["enum"] = json!(["pending"])),
            "enum narrowed",
        );
        only_breaking(
            &classes(|_, res, _| {
                res["properties"]["status"]["enum"] = json!(["pending", "done", "lost"])
            }),
            "enum widened",
        );
        let c = classes(|req, _, _| req["properties"]["kind"]["enum"] = json!(["a", "b", "c"]));
        assert!(c.iter().all(|(k, _)| *k == Class::Compatible), "{c:?}");
    }

    #[test]
    fn callback_fields_may_be_added_not_removed() {
        only_breaking(
            &classes(|_, _, ev| {
                ev["properties"].as_object_mut().unwrap().remove("paid_at");
                ev["required"] = json!(["event"]);
            }),
            "paid_at: property removed: merchants may read it",
        );
        let c = classes(|_, _, ev| ev["properties"]["fee"] = json!({"type": "string"}));
        assert!(
            !c.is_empty() && c.iter().all(|(k, _)| *k == Class::Compatible),
            "{c:?}"
        );
    }

    #[test]
    fn an_amount_changing_type_breaks() {
        only_breaking(
            &classes(|req, _, _| {
                req["properties"]["amount"] = json!({"type": "string", "format": "decimal"})
            }),
            "type changed from \"number\" to \"string\"",
        );
        only_breaking(
            &classes(|req, _, _| req["properties"]["amount"]["format"] = json!("double")),
            "format changed",
        );
    }

    #[test]
    fn bounds_break_tightened_on_requests_and_loosened_on_responses() {
        only_breaking(
            &classes(|req, _, _| req["properties"]["kind"]["maxLength"] = json!(8)),
            "maxLength changed from none to 8",
        );
        let c = classes(|_, res, _| res["properties"]["remark"]["maxLength"] = json!(8));
        assert!(c.iter().all(|(k, _)| *k == Class::Compatible), "{c:?}");
    }

    #[test]
    fn bounds_the_service_enforced_already_may_be_written_down_not_tightened() {
        let c = classes(|req, _, _| {
            req["properties"]["kind"]["maxLength"] = json!(8);
            req["properties"]["kind"]["x-bounds-enforced-since"] = json!("0.1.0");
        });
        assert!(c.iter().all(|(k, _)| *k != Class::Breaking), "{c:?}");
        assert!(
            c.iter().any(|(_, t)| t.contains("enforced it since 0.1.0")),
            "{c:?}"
        );
        let (mut req, res, ev) = base();
        req["properties"]["kind"]["maxLength"] = json!(8);
        req["properties"]["kind"]["x-bounds-enforced-since"] = json!("0.1.0");
        let old = doc(req.clone(), res.clone(), ev.clone());
        req["properties"]["kind"]["maxLength"] = json!(4);
        let changes: Vec<(Class, String)> = compare(&old, &doc(req, res, ev))
            .into_iter()
            .map(|c| (c.class, c.to_string()))
            .collect();
        only_breaking(&changes, "maxLength changed from 8 to 4");
    }

    #[test]
    fn error_codes_named_only_by_new_responses_are_compatible() {
        // The response schema's `status` plays an error code enum: a 409
        // is added that names the new code `gone`.
        let (req, mut res, ev) = base();
        res["properties"]["status"]["x-codes-named-per-response"] = json!(true);
        let old = doc(req.clone(), res.clone(), ev.clone());
        let mut new = doc(req, res, ev);
        let status = "/components/schemas/Res/properties/status/enum";
        new.pointer_mut(status)
            .unwrap()
            .as_array_mut()
            .unwrap()
            .push(json!("gone"));
        let mut added = new.clone();
        added.pointer_mut("/paths/~1orders/post/responses").unwrap()["409"] =
            json!({"description": "It went (`gone`)."});
        let c = kinds(&old, &added);
        assert!(c.iter().all(|(k, _)| *k != Class::Breaking), "{c:#?}");
        assert!(
            c.iter().any(|(_, t)| t.contains("named only by responses")),
            "{c:#?}"
        );
        // Named by the 200 the old document had: it may reach old clients.
        let mut on_old = new.clone();
        on_old
            .pointer_mut("/paths/~1orders/post/responses/200")
            .unwrap()["description"] = json!("ok, or `gone`");
        only_breaking(&kinds(&old, &on_old), "a generated client refuses");
        // Named by no response at all: nothing says where it arrives.
        only_breaking(&kinds(&old, &new), "a generated client refuses");
    }

    #[test]
    fn words_are_cosmetic_and_unknown_keys_break() {
        let c = classes(|req, _, _| req["description"] = json!("new words"));
        assert!(c.iter().all(|(k, _)| *k == Class::Cosmetic), "{c:?}");
        only_breaking(
            &classes(|req, _, _| req["not"] = json!({})),
            "does not know",
        );
    }

    const EVENT_BODY: &str = "/paths/~1orders/post/callbacks/changed/{$request.body#~1callback_url}/post/requestBody/content/application~1json/schema";

    fn kinds(old: &Value, new: &Value) -> Vec<(Class, String)> {
        compare(old, new)
            .into_iter()
            .map(|c| (c.class, c.to_string()))
            .collect()
    }

    #[test]
    fn a_discriminator_mapping_naming_the_values_already_there_is_compatible() {
        let (req, res, ev) = base();
        let mut old = doc(req, res, ev);
        old.pointer_mut(EVENT_BODY).unwrap()["discriminator"] = json!({"propertyName": "event"});
        let mut new = old.clone();
        new.pointer_mut(EVENT_BODY).unwrap()["discriminator"]["mapping"] =
            json!({"paid": "#/components/schemas/Ev"});
        let c = kinds(&old, &new);
        assert!(c.iter().all(|(k, _)| *k == Class::Compatible), "{c:#?}");
        assert!(
            c.iter()
                .any(|(_, t)| t.contains("discriminator mapping added")),
            "{c:#?}"
        );

        new.pointer_mut(EVENT_BODY).unwrap()["discriminator"]["mapping"] =
            json!({"settled": "#/components/schemas/Ev"});
        only_breaking(&kinds(&old, &new), "discriminator changed");
    }

    #[test]
    fn a_request_amount_that_also_takes_a_string_is_compatible_a_response_field_is_not() {
        let c = classes(|req, _, _| {
            req["properties"]["amount"] = json!({"oneOf": [
                {"type": "number", "format": "decimal"},
                {"type": "string", "format": "decimal", "pattern": "^[0-9]+$"}]})
        });
        assert!(c.iter().all(|(k, _)| *k == Class::Compatible), "{c:#?}");
        let c = classes(|_, res, _| {
            res["properties"]["remark"] = json!({"oneOf": [{"type": "string"}, {"type": "number"}]})
        });
        assert!(c.iter().any(|(k, _)| *k == Class::Breaking), "{c:#?}");
    }

    #[test]
    fn headers_stated_as_a_security_scheme_are_the_headers_they_were() {
        let (req, res, ev) = base();
        let mut old = doc(req, res, ev);
        old["paths"]["/orders"]["post"]["parameters"] = json!([
            {"name": "x-api-key", "in": "header", "required": true, "schema": {"type": "string"}}]);
        let mut new = old.clone();
        new["paths"]["/orders"]["post"]
            .as_object_mut()
            .unwrap()
            .remove("parameters");
        new["security"] = json!([{"key": []}]);
        new["components"]["securitySchemes"] =
            json!({"key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}});
        let c = kinds(&old, &new);
        assert!(c.iter().all(|(k, _)| *k != Class::Breaking), "{c:#?}");

        new["components"]["securitySchemes"]["key"]["name"] = json!("x-token");
        only_breaking(
            &kinds(&old, &new),
            "header parameter `x-token`: added as required",
        );
    }

    #[test]
    fn a_security_alternative_added_is_compatible_and_one_removed_breaks() {
        let (req, res, ev) = base();
        let schemes = json!({
            "key": {"type": "apiKey", "in": "header", "name": "x-api-key"},
            "id": {"type": "apiKey", "in": "header", "name": "webhook-id"}});
        let mut old = doc(req, res, ev);
        old["components"]["securitySchemes"] = schemes;
        old["paths"]["/orders"]["post"]["security"] = json!([{"key": []}]);
        let mut new = old.clone();
        new["paths"]["/orders"]["post"]["security"] = json!([{"key": []}, {"id": []}]);
        let c = kinds(&old, &new);
        assert!(
            c.iter()
                .any(|(k, t)| *k == Class::Compatible
                    && t.contains("security alternative added (id)")),
            "{c:#?}"
        );
        assert!(c.iter().all(|(k, _)| *k != Class::Breaking), "{c:#?}");

        only_breaking(
            &kinds(&new, &old),
            "a security alternative was removed or changed",
        );
    }
}
