//! The shape of `src/`, checked by `cargo test` rather than by reviewers: every top-level
//! module sits in one layer of [`LAYERS`] and uses only modules of lower layers, and no files
//! use each other in a circle.
//!
//! The imports are read from the source text: every `crate::…`, `super::…` and `self::…` path
//! (in `use` trees, braces expanded, and inline), in code that is not a test (an item under
//! `#[cfg(test)]`, or a file declared so, is left out: a test may use anything). A path names
//! the file of the longest module prefix that exists. A folder's `mod.rs` may use its own parts
//! (that is how it shows them); everything else must form no circle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of `src/`, top layer first. A module may use the modules of the
/// layers below its own, never one of its own layer or above. `ARCHITECTURE.md` draws the
/// same table.
const LAYERS: &[(&str, &[&str])] = &[
    ("the command line", &["cli"]),
    ("the other commands", &["batch", "collect", "diff"]),
    ("the pipeline", &["analysis"]),
    ("the streamed reads", &["streamed"]),
    (
        "ranking and output",
        &["exit", "judge", "rank", "report", "report_data"],
    ),
    ("the report as data; the spill", &["model", "spill"]),
    ("what a timeline holds", &["inventory", "query", "resolve"]),
    ("the timeline", &["explain", "objects", "timeline"]),
    (
        "loading; the open world; the Serve schema",
        &["load", "open_world", "serve_schema"],
    ),
    (
        "rules; recognising files",
        &["classify", "messages", "rules"],
    ),
    (
        "reading bytes",
        &[
            "bundle",
            "collected",
            "complete",
            "history_server",
            "parse",
            "redact",
            "versions",
        ],
    ),
    ("the vocabulary", &["diag", "event", "glob", "words"]),
];

/// One source file of `src/`: its module path (`parse::describe::head`) and its text
/// without tests and comments.
struct Source {
    module: Vec<String>,
    code: String,
}

fn sources() -> BTreeMap<PathBuf, Source> {
    let src = common::root().join("src");
    let files = common::source_files();
    let mut test_files = BTreeSet::new();
    let mut out = BTreeMap::new();
    for p in files {
        let rel = p.strip_prefix(&src).unwrap().to_path_buf();
        let text = std::fs::read_to_string(&p).unwrap();
        let (code, tests) = without_tests(&text);
        let stem = rel.file_stem().unwrap().to_string_lossy().into_owned();
        let is_mod = matches!(stem.as_str(), "mod" | "lib" | "main");
        let mut module: Vec<String> = rel
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if !is_mod {
            module.push(stem);
        }
        for t in tests {
            let mut m = module.clone();
            m.push(t);
            test_files.insert(m);
        }
        out.insert(rel, Source { module, code });
    }
    // A file declared `#[cfg(test)] mod x;` is a test, and so is everything below it.
    out.retain(|_, s| !test_files.iter().any(|t| s.module.starts_with(t)));
    out
}

/// The text without comments and without the items under `#[cfg(test)]`, and the names of
/// the modules declared `#[cfg(test)] mod name;`.
fn without_tests(text: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = String::new();
    let mut tests = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if !line.starts_with("#[cfg(test)]") {
            let line = lines[i].split("//").next().unwrap_or("");
            code.push_str(line);
            code.push('\n');
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < lines.len() && lines[j].trim_start().starts_with("#[") {
            j += 1;
        }
        let item = lines.get(j).map_or("", |l| l.trim());
        let declared = item
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ")
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'));
        if let Some(name) = declared {
            tests.push(name.trim().to_string());
            i = j + 1;
            continue;
        }
        // Skip the item: to the line where its braces close (or its `;`).
        let mut depth = 0i32;
        let mut opened = false;
        while j < lines.len() {
            let l = lines[j].split("//").next().unwrap_or("");
            depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
            opened |= l.contains('{');
            if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                break;
            }
            j += 1;
        }
        i = j + 1;
    }
    (code, tests)
}

/// Every path the code names from `crate`, `super` or `self`, as segments from the crate's
/// root.
fn paths(source: &Source) -> Vec<Vec<String>> {
    let code = &source.code;
    let mut out = Vec::new();
    // `use` trees, braces expanded: statements that start a line.
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let Some(tree) = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        else {
            continue;
        };
        let mut tree = tree.to_string();
        while !tree.contains(';') {
            let Some(more) = lines.next() else { break };
            tree.push_str(more);
        }
        let tree = tree.split(';').next().unwrap_or("");
        for p in expand(tree) {
            out.extend(absolute(&p, source));
        }
    }
    // Inline paths.
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let at = from + at;
            from = at + start.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segments: Vec<String> = path
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            out.extend(absolute(&segments, source));
        }
    }
    out
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`, each as segments.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let plain = tree.split(" as ").next().unwrap_or(tree);
        return vec![plain
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        for sub in expand(part) {
            let mut p = prefix.clone();
            p.extend(sub.into_iter().filter(|s| s != "self"));
            out.push(p);
        }
    }
    out
}

/// A path made absolute from the crate's root; `None` for paths into other crates. A file
/// `a/b.rs` is the module `a::b` and `a/mod.rs` the module `a`: `super` climbs from there.
fn absolute(path: &[String], source: &Source) -> Option<Vec<String>> {
    let mut here = source.module.clone();
    let mut segs = path.iter().peekable();
    match segs.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segs.next();
            here.clear();
        }
        Some("super" | "self") => {
            while let Some(s) = segs.peek() {
                match s.as_str() {
                    "super" => {
                        here.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segs.next();
            }
        }
        _ => return None,
    }
    here.extend(segs.cloned());
    Some(here).filter(|p| !p.is_empty())
}

/// The source file a path from the crate's root lands in: its longest prefix that is a file.
fn file_of(path: &[String], files: &BTreeMap<Vec<String>, PathBuf>) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|n| files.get(&path[..n]).cloned())
}

/// Each file's uses of other files.
fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let sources = sources();
    let files: BTreeMap<Vec<String>, PathBuf> = sources
        .iter()
        .map(|(p, s)| (s.module.clone(), p.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for (p, s) in &sources {
        let used: BTreeSet<PathBuf> = paths(s)
            .iter()
            .filter_map(|path| file_of(path, &files))
            .filter(|f| f != p)
            .collect();
        graph.insert(p.clone(), used);
    }
    graph
}

/// The top-level module a file belongs to (`parse` for `parse/describe/head.rs`).
fn top(path: &Path) -> String {
    let first = path.components().next().unwrap();
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

#[test]
fn every_module_uses_only_lower_layers() {
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |m| (*m, i)))
        .collect();
    let mut problems = BTreeSet::new();
    for (file, used) in graph() {
        let from = top(&file);
        if matches!(from.as_str(), "lib" | "main") {
            continue;
        }
        let Some(&own) = layer_of.get(from.as_str()) else {
            problems.insert(format!(
                "src/{from}: a top-level module in no layer (add it to LAYERS and to ARCHITECTURE.md)"
            ));
            continue;
        };
        for u in used {
            let to = top(&u);
            if to == from {
                continue;
            }
            match layer_of.get(to.as_str()) {
                Some(&l) if l > own => {}
                Some(&l) => {
                    problems.insert(format!(
                        "src/{} uses src/{}: `{from}` ({}) may use only layers below its own, and \
                         `{to}` is in {}",
                        file.display(),
                        u.display(),
                        LAYERS[own].0,
                        LAYERS[l].0
                    ));
                }
                None => {
                    problems.insert(format!("src/{to}: a top-level module in no layer"));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{}",
        problems.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn no_files_use_each_other_in_a_circle() {
    let mut graph = graph();
    // A folder's `mod.rs` shows its parts: its uses of them are not part of a circle.
    for (file, used) in graph.iter_mut() {
        if file.file_name().is_some_and(|n| n == "mod.rs") {
            let dir = file.parent().unwrap().to_path_buf();
            used.retain(|u| !u.starts_with(&dir));
        }
    }
    let mut circles = Vec::new();
    // Depth-first search; a file met again on the current path closes a circle.
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        let mut path: Vec<&PathBuf> = Vec::new();
        visit(start, &graph, &mut path, &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "files that use each other in a circle:\n{}",
        circles.join("\n")
    );
}

fn visit<'a>(
    file: &'a PathBuf,
    graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    path: &mut Vec<&'a PathBuf>,
    done: &mut BTreeSet<&'a PathBuf>,
    circles: &mut Vec<String>,
) {
    if let Some(at) = path.iter().position(|f| *f == file) {
        let circle: Vec<String> = path[at..]
            .iter()
            .chain([&file])
            .map(|f| format!("src/{}", f.display()))
            .collect();
        circles.push(circle.join(" -> "));
        return;
    }
    if !done.insert(file) {
        return;
    }
    path.push(file);
    for next in graph.get(file).into_iter().flatten() {
        visit(next, graph, path, done, circles);
    }
    path.pop();
}

#[test]
fn the_layers_name_every_module_once() {
    let mut seen = BTreeSet::new();
    for (_, mods) in LAYERS {
        for m in *mods {
            assert!(seen.insert(*m), "{m} is in two layers");
        }
    }
    let lib = std::fs::read_to_string(common::root().join("src/lib.rs")).unwrap();
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    assert_eq!(
        declared, seen,
        "LAYERS and the modules of src/lib.rs differ"
    );
}

#[test]
fn the_checks_see_a_circle_and_an_upward_use() {
    // The reader itself: a `use` tree expands, `super` climbs, tests are left out.
    let (code, tests) = without_tests(
        "use crate::{a::{b, c as d}, e};\n#[cfg(test)]\nmod tests {\n use crate::cli;\n}\n#[cfg(test)]\nmod fixtures;\nfn f() { super::g::h(); }\n",
    );
    assert_eq!(tests, vec!["fixtures".to_string()]);
    assert!(!code.contains("cli"));
    let source = Source {
        module: vec!["x".into(), "y".into()],
        code,
    };
    let got: BTreeSet<String> = paths(&source).iter().map(|p| p.join("::")).collect();
    let want: BTreeSet<String> = ["a::b", "a::c", "e", "x::g::h"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(got, want);
}
