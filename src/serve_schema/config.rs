//! The Serve configs of a bundle, as trees of keys: a plain config file (`serve deploy
//! config.yaml`) read from its facts, and a RayService's `serveConfigV2`, a YAML string read
//! again with the YAML and JSON flattener.
//!
//! Both arrive as facts: one event per leaf with a normalised `path`
//! (`applications[0].deployments[0].numreplicas`) and the line as written (`numReplicas: 2`),
//! whose key keeps its case. A flow mapping (`{min_replicas: 1, maxReplicas: 3}`) is a leaf's
//! value, whose keys are read here.
//!
//! Invariant: nothing here fails or panics on input; a config that is no mapping, or a path
//! that contradicts an earlier one, leaves the tree as it was.

use crate::event::{Event, SourceKind};
use crate::parse::tree::norm_key;
use crate::parse::ParseOutput;

/// A node of a config.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Node {
    /// A scalar, or a key whose children have not been seen.
    #[default]
    Leaf,
    Map(Vec<Entry>),
    List(Vec<Node>),
}

/// A key of a mapping.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// As written (`numReplicas`), or normalised when the line did not show it.
    pub key: String,
    pub node: Node,
    /// Its scalar value, as written (unquoted), when it has one.
    pub value: Option<String>,
    /// The event that cites it: its own line in a file, the whole `serveConfigV2` fact.
    pub event: usize,
}

/// One Serve config of the bundle.
#[derive(Debug)]
pub struct Config {
    pub root: Node,
    /// `serveConfigV2` of the object that holds it (`RayService/ns/name`), or `None` for a
    /// config file.
    pub holder: Option<String>,
}

/// Deepest flow mapping read.
const MAX_FLOW_DEPTH: usize = 8;

/// One step of a normalised path.
#[derive(Debug, PartialEq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn steps(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').unwrap_or(after.len());
            match after.get(..end).and_then(|d| d.parse().ok()) {
                Some(i) => out.push(Step::Index(i)),
                None => return Vec::new(),
            }
            rest = after.get(end + 1..).unwrap_or("");
            rest = rest.strip_prefix('.').unwrap_or(rest);
            continue;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        out.push(Step::Key(&rest[..end]));
        rest = &rest[end..];
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    out
}

/// The key as the line writes it (`- "numReplicas": 2` → `numReplicas`), when it normalises
/// to the path's last step; else that step.
pub fn written_key(message: &str, step: &str) -> String {
    let mut s = message.trim_start();
    while let Some(rest) = s.strip_prefix("- ").or_else(|| s.strip_prefix("-\t")) {
        s = rest.trim_start();
    }
    let key = match s.chars().next() {
        Some(q @ ('"' | '\'')) => s.get(1..).and_then(|b| b.find(q).and_then(|e| b.get(..e))),
        _ => s.find(':').and_then(|e| s.get(..e)).map(str::trim_end),
    };
    match key {
        Some(k) if norm_key(k) == step => k.to_string(),
        _ => step.to_string(),
    }
}

/// Builds a tree from facts (path, line as written, value, citing event).
#[derive(Default)]
struct Builder {
    root: Node,
}

impl Builder {
    fn add(&mut self, path: &str, message: &str, value: Option<&str>, event: usize) {
        let steps = steps(path);
        let Some(Step::Key(last)) = steps.last() else {
            return;
        };
        let key = written_key(message, last);
        let mut node = &mut self.root;
        for (i, step) in steps.iter().enumerate() {
            let is_last = i + 1 == steps.len();
            node = match step {
                Step::Key(k) => {
                    if *node == Node::Leaf {
                        *node = Node::Map(Vec::new());
                    }
                    let Node::Map(entries) = node else {
                        return;
                    };
                    let at = match entries.iter().position(|e| norm_key(&e.key) == *k) {
                        Some(at) => at,
                        None => {
                            entries.push(Entry {
                                key: k.to_string(),
                                node: Node::Leaf,
                                value: None,
                                event,
                            });
                            entries.len() - 1
                        }
                    };
                    let entry = &mut entries[at];
                    if is_last {
                        entry.key = key.clone();
                        entry.event = event;
                        match value.and_then(|v| flow_node(v, event, 0)) {
                            Some(flow) => entry.node = flow,
                            None => entry.value = value.map(scalar),
                        }
                    }
                    &mut entry.node
                }
                Step::Index(i) => {
                    if *node == Node::Leaf {
                        *node = Node::List(Vec::new());
                    }
                    let Node::List(items) = node else {
                        return;
                    };
                    if *i > items.len() + 1024 {
                        return;
                    }
                    while items.len() <= *i {
                        items.push(Node::Leaf);
                    }
                    &mut items[*i]
                }
            };
        }
    }
}

/// A flow mapping (`{a: 1, b: {c: 2}}`) or sequence (`[{name: A}]`) with what it holds;
/// `None` for anything else (a scalar, text that does not close).
fn flow_node(value: &str, event: usize, depth: usize) -> Option<Node> {
    let value = value.trim();
    if depth >= MAX_FLOW_DEPTH {
        return None;
    }
    if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
        let items = split_top(inner, ',')
            .filter(|i| !i.trim().is_empty())
            .map(|i| flow_node(i, event, depth + 1).unwrap_or(Node::Leaf))
            .collect();
        return Some(Node::List(items));
    }
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let mut entries = Vec::new();
    for item in split_top(inner, ',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, rest) = match item.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let body = item.get(1..)?;
                let end = body.find(q)?;
                let rest = body.get(end + 1..)?.trim_start().strip_prefix(':')?;
                (body.get(..end)?.to_string(), rest)
            }
            _ => {
                let colon = split_top(item, ':').next().map(str::len)?;
                let rest = item.get(colon + 1..).unwrap_or("");
                (item.get(..colon)?.trim().to_string(), rest)
            }
        };
        let (node, value) = match flow_node(rest, event, depth + 1) {
            Some(node) => (node, None),
            None => (Node::Leaf, Some(scalar(rest))),
        };
        entries.push(Entry {
            key,
            node,
            value,
            event,
        });
    }
    Some(Node::Map(entries))
}

/// A scalar as written, without its quotes.
fn scalar(text: &str) -> String {
    let t = text.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    t.to_string()
}

/// `text` split at `sep` outside brackets and quotes.
fn split_top(text: &str, sep: char) -> impl Iterator<Item = &str> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut cuts = Vec::new();
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') => depth = depth.saturating_sub(1),
            (None, c) if c == sep && depth == 0 => cuts.push(i),
            _ => {}
        }
    }
    let mut start = 0;
    let mut pieces = Vec::new();
    for cut in cuts {
        pieces.push(&text[start..cut]);
        start = cut + sep.len_utf8();
    }
    pieces.push(&text[start..]);
    pieces.into_iter()
}

/// Whether a config's root is a multi-application config: `applications` is a list. A
/// single-application config (`import_path` at the top) and `serve status` output (a map of
/// applications) are other things.
fn is_serve_config(root: &Node) -> bool {
    let Node::Map(entries) = root else {
        return false;
    };
    let has = |k: &str| entries.iter().any(|e| e.key == k);
    entries
        .iter()
        .any(|e| e.key == "applications" && matches!(e.node, Node::List(_)))
        && !has("kind")
        && !has("apiVersion")
}

/// Every Serve config of the bundle: config files (Kubernetes-object files whose facts belong
/// to no object and whose root has `applications` as a list) and each `serveConfigV2`.
pub fn configs(events: &[Event]) -> Vec<Config> {
    let mut out = Vec::new();
    // Only the files with a list of applications are built into trees: a large file of facts
    // that is no Serve config costs one look at each path.
    let is_loose_fact =
        |ev: &Event| ev.kind == SourceKind::KubeObject && ev.field("object").is_none();
    let mut files: std::collections::BTreeMap<u32, Builder> = events
        .iter()
        .filter(|ev| is_loose_fact(ev))
        .filter(|ev| {
            ev.field("path")
                .is_some_and(|p| p.starts_with("applications["))
        })
        .map(|ev| (ev.file, Builder::default()))
        .collect();
    for (i, ev) in events.iter().enumerate() {
        let Some(path) = ev.field("path") else {
            continue;
        };
        if path == "serveconfigv2" || path.ends_with(".serveconfigv2") {
            if let Some(config) = ev.field("value").and_then(|v| read_string(v, i)) {
                out.push(Config {
                    root: config,
                    holder: Some(ev.field("object").unwrap_or("serveConfigV2").to_string()),
                });
            }
            continue;
        }
        if !is_loose_fact(ev) {
            continue;
        }
        if let Some(b) = files.get_mut(&ev.file) {
            b.add(path, &ev.message, ev.field("value"), i);
        }
    }
    for (_, b) in files {
        if is_serve_config(&b.root) {
            out.push(Config {
                root: b.root,
                holder: None,
            });
        }
    }
    out
}

/// A `serveConfigV2` string as a tree, every key cited by the fact `event`; `None` when it is
/// no multi-application config.
fn read_string(text: &str, event: usize) -> Option<Node> {
    let mut out = ParseOutput::default();
    crate::parse::kube_object::parse(text.as_bytes(), &mut out);
    let mut b = Builder::default();
    for ev in &out.events {
        if let Some(path) = ev.field("path") {
            b.add(path, &ev.message, ev.field("value"), event);
        }
    }
    is_serve_config(&b.root).then_some(b.root)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn keys(node: &Node) -> Vec<String> {
        match node {
            Node::Map(entries) => entries
                .iter()
                .flat_map(|e| {
                    std::iter::once(e.key.clone())
                        .chain(keys(&e.node).into_iter().map(|k| format!("{}.{k}", e.key)))
                })
                .collect(),
            Node::List(items) => items
                .iter()
                .enumerate()
                .flat_map(|(i, n)| keys(n).into_iter().map(move |k| format!("[{i}].{k}")))
                .collect(),
            Node::Leaf => Vec::new(),
        }
    }

    #[test]
    fn paths_split_into_keys_and_indices() {
        assert_eq!(
            steps("applications[0].deployments[12].numreplicas"),
            vec![
                Step::Key("applications"),
                Step::Index(0),
                Step::Key("deployments"),
                Step::Index(12),
                Step::Key("numreplicas"),
            ]
        );
        assert_eq!(steps("a[x].b"), vec![]);
        assert_eq!(steps(""), vec![]);
    }

    #[test]
    fn keys_keep_the_case_the_line_wrote() {
        assert_eq!(written_key("numReplicas: 2", "numreplicas"), "numReplicas");
        assert_eq!(written_key("- name: echo", "name"), "name");
        assert_eq!(
            written_key("- - routePrefix: /", "routeprefix"),
            "routePrefix"
        );
        assert_eq!(
            written_key("\"numReplicas\": 2,", "numreplicas"),
            "numReplicas"
        );
        assert_eq!(written_key("something else", "numreplicas"), "numreplicas");
    }

    #[test]
    fn flow_collections_give_their_keys() {
        let node = flow_node(
            "{min_replicas: 1, maxReplicas: {a: [1, 2], 'b': \"x,y\"}}",
            3,
            0,
        );
        assert_eq!(
            keys(&node.unwrap()),
            vec![
                "min_replicas",
                "maxReplicas",
                "maxReplicas.a",
                "maxReplicas.b"
            ]
        );
        let node = flow_node("[{name: A, numReplicas: 2}, {name: B}]", 3, 0);
        assert_eq!(
            keys(&node.unwrap()),
            vec!["[0].name", "[0].numReplicas", "[1].name"]
        );
        assert_eq!(flow_node("1", 0, 0), None);
        assert_eq!(flow_node("{a: 1", 0, 0), None);
        let deep = format!("{}{}", "{a: ".repeat(50), "}".repeat(50));
        assert!(flow_node(&deep, 0, 0).is_some());
    }

    #[test]
    fn a_serve_config_v2_string_reads_as_a_tree() {
        let text = "applications:\n- name: app\n  routePrefix: /x\n  import_path: m:app\n  deployments:\n  - name: D\n    numReplicas: 2\n    autoscaling_config: {maxReplicas: 3}\n";
        let root = read_string(text, 7).unwrap();
        assert_eq!(
            keys(&root),
            vec![
                "applications",
                "applications.[0].name",
                "applications.[0].routePrefix",
                "applications.[0].import_path",
                "applications.[0].deployments",
                "applications.[0].deployments.[0].name",
                "applications.[0].deployments.[0].numReplicas",
                "applications.[0].deployments.[0].autoscaling_config",
                "applications.[0].deployments.[0].autoscaling_config.maxReplicas",
            ]
        );
        // Not multi-application configs.
        assert!(read_string("import_path: m:app\nroute_prefix: /\n", 0).is_none());
        assert!(read_string("applications:\n  echo:\n    status: RUNNING\n", 0).is_none());
        assert!(read_string("applications: [\n", 0).is_none());
        assert!(read_string("", 0).is_none());
    }
}
