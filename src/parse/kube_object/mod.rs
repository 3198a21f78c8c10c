//! Kubernetes objects as YAML or JSON: a single object, `---` multi-document YAML, `kind:
//! List` / `*List` with `items`, troubleshoot's bare arrays (`- apiVersion:` / `[{…}]`),
//! and flat metadata files (a generator's `metadata.json`, troubleshoot's `version.yaml`).
//!
//! Each document is flattened into leaves (normalised path, value, line), then cut into
//! objects. Every leaf of an object becomes a fact (`path` relative to the object, `object` =
//! `Kind/namespace/name`); an `Event` object becomes one Kubernetes Event record instead.
//! `metadata.managedFields` subtrees are skipped as one structural event.
//!
//! Neither flattener recurses, so deep input cannot overflow the stack; JSON deeper than
//! [`MAX_DEPTH`] stops with a diagnostic and its remaining lines are kept as raw events. The
//! YAML reader is deliberately lenient (no YAML crate): block and flow styles, quoted and
//! block scalars, comments; anchors and tags are dropped, aliases kept as text. Every
//! physical line ends in exactly one event for YAML and pretty JSON; in compact JSON
//! several facts share a line. This module knows nothing of describe text or events tables.
//!
//! The parts: this file tells JSON from YAML, runs the flattener and gives each event its
//! span of lines; `json.rs` and `yaml.rs` flatten a document into leaves; `objects.rs` cuts
//! the leaves into objects and writes their facts and Event records.

use std::borrow::Cow;

use crate::diag::Diagnostic;
use crate::event::Event;
use crate::parse::lines::{decode, split_lines};
use crate::parse::ParseOutput;

#[cfg(test)]
mod fixtures;
mod json;
mod objects;
#[cfg(test)]
mod tests;
mod yaml;

use objects::emit_doc;
pub use yaml::block_scalar_head;

/// Deepest JSON nesting accepted.
pub const MAX_DEPTH: usize = 256;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    let body = input.strip_prefix(b"\xef\xbb\xbf").unwrap_or(input);
    let is_json = matches!(
        body.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{') | Some(b'[')
    );
    let total = split_lines(input).count() as u32;
    let docs = if is_json {
        let (docs, error) = json::flatten(body);
        let mut docs = docs;
        if let Some((line, problem)) = error {
            // A newline just before the end of input counts as a line the file does not have.
            let line = line.min(total.max(1));
            out.diagnostics.push(Diagnostic::at_line(line, problem));
            let covered = docs.iter().flatten().map(|l| l.line).max().unwrap_or(0);
            let from = if covered >= line { covered + 1 } else { line };
            docs.push(raw_lines(body, from));
        }
        docs
    } else {
        let lines: Vec<(u32, Cow<str>)> = split_lines(body).map(|(n, l)| (n, decode(l))).collect();
        yaml::flatten(&lines)
    };
    let mut events = Vec::new();
    for doc in docs {
        emit_doc(doc, &mut events, &mut out.unparsed_lines);
    }
    let first_line = split_lines(body)
        .next()
        .map(|(_, l)| decode(l))
        .unwrap_or_default();
    fix_spans(&mut events, total, first_line.trim());
    out.events.extend(events);
}

/// One leaf of a flattened document, or a structural / raw line.
#[derive(Clone, Debug, PartialEq)]
struct Leaf {
    /// Normalised path from the document root (`items[0].metadata.name`).
    path: String,
    /// `None` for a structural line (a key with nested content).
    value: Option<String>,
    line: u32,
    message: String,
    /// A line neither grammar understood.
    raw: bool,
}

impl Leaf {
    fn new(path: String, value: Option<String>, line: u32, message: String) -> Leaf {
        Leaf {
            path,
            value,
            line,
            message,
            raw: false,
        }
    }
}

/// Lines from `from` on, as raw leaves (after a JSON error).
fn raw_lines(input: &[u8], from: u32) -> Vec<Leaf> {
    split_lines(input)
        .filter(|(no, l)| *no >= from && !l.trim_ascii().is_empty())
        .map(|(no, l)| Leaf {
            raw: true,
            ..Leaf::new(String::new(), None, no, decode(l).into_owned())
        })
        .collect()
}

/// Gives each event the lines up to the next one, so that lines with no leaf of their own
/// (closing braces, blank lines, comments, skipped blocks) fold into the previous event.
fn fix_spans(events: &mut Vec<Event>, total: u32, first_line: &str) {
    let first = events.first().map_or(total + 1, |e| e.line);
    if first > 1 && total > 0 {
        events.insert(0, Event::new(1, first_line.to_string()));
    }
    let starts: Vec<u32> = events.iter().map(|e| e.line).collect();
    for (idx, ev) in events.iter_mut().enumerate() {
        let end = starts.get(idx + 1).copied().unwrap_or(total + 1);
        ev.n_lines = end.saturating_sub(ev.line).max(1);
    }
}
