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

use std::borrow::Cow;
use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::event::{format_rfc3339, Event, RawTime};
use crate::parse::lines::{decode, split_lines};
use crate::parse::primitives::instant;
use crate::parse::tree::{fact, join_path, norm_key, object_id, EventRecord};
use crate::parse::ParseOutput;

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

/// Which object of the document a path belongs to, and the path relative to it.
fn group_of(path: &str, list_mode: bool) -> (Option<usize>, &str) {
    let indexed = if path.starts_with('[') {
        Some(path)
    } else if list_mode {
        path.strip_prefix("items").filter(|r| r.starts_with('['))
    } else {
        None
    };
    let Some(rest) = indexed.and_then(|r| r.strip_prefix('[')) else {
        return (None, path);
    };
    let Some((idx, after)) = rest.split_once(']') else {
        return (None, path);
    };
    let Ok(idx) = idx.parse::<usize>() else {
        return (None, path);
    };
    (Some(idx), after.strip_prefix('.').unwrap_or(after))
}

#[derive(Default)]
struct Ident {
    kind: String,
    namespace: String,
    name: String,
}

fn emit_doc(doc: Vec<Leaf>, events: &mut Vec<Event>, unparsed: &mut u64) {
    let root_kind = doc
        .iter()
        .find(|l| l.path == "kind")
        .and_then(|l| l.value.as_deref());
    let list_mode = root_kind.is_none_or(|k| k.ends_with("List"))
        && doc.iter().any(|l| l.path.starts_with("items["));
    // Items of a typed list (`PodList`, `EventList`) carry no kind of their own.
    let item_kind = root_kind
        .and_then(|k| k.strip_suffix("List"))
        .filter(|k| !k.is_empty())
        .unwrap_or("");
    let mut idents: HashMap<Option<usize>, Ident> = HashMap::new();
    for leaf in &doc {
        let (group, rel) = group_of(&leaf.path, list_mode);
        if list_mode && group.is_none() {
            continue;
        }
        let ident = idents.entry(group).or_insert_with(|| Ident {
            kind: item_kind.to_string(),
            ..Ident::default()
        });
        let value = leaf.value.clone().unwrap_or_default();
        match rel {
            "kind" => ident.kind = value,
            "metadata.namespace" => ident.namespace = value,
            "metadata.name" => ident.name = value,
            _ => {}
        }
    }
    let objects: HashMap<Option<usize>, String> = idents
        .iter()
        .filter_map(|(g, i)| object_id(&i.kind, &i.namespace, &i.name).map(|o| (*g, o)))
        .collect();
    let mut idx = 0;
    while let Some(leaf) = doc.get(idx) {
        if leaf.raw {
            *unparsed += 1;
            events.push(Event::new(leaf.line, leaf.message.clone()));
            idx += 1;
            continue;
        }
        let (group, rel) = group_of(&leaf.path, list_mode);
        if rel.starts_with("metadata.managedfields.") || rel.starts_with("metadata.managedfields[")
        {
            // Skipped: the lines fold into the previous event.
            idx += 1;
            continue;
        }
        let is_event = idents.get(&group).is_some_and(|i| i.kind == "Event")
            && !(list_mode && group.is_none());
        if is_event {
            let end = doc
                .iter()
                .skip(idx)
                .position(|l| l.raw || group_of(&l.path, list_mode).0 != group)
                .map_or(doc.len(), |n| idx + n);
            let values: HashMap<&str, &str> = doc
                .get(idx..end)
                .unwrap_or(&[])
                .iter()
                .filter_map(|l| Some((group_of(&l.path, list_mode).1, l.value.as_deref()?)))
                .collect();
            events.push(record(&values).into_event(leaf.line, 1));
            idx = end.max(idx + 1);
            continue;
        }
        let object = objects.get(&group).map(String::as_str);
        events.push(fact(
            leaf.line,
            1,
            leaf.message.clone(),
            rel,
            leaf.value.clone(),
            object,
        ));
        idx += 1;
    }
}

/// A core/v1 or events.k8s.io/v1 Event object as a record.
fn record(values: &HashMap<&str, &str>) -> EventRecord {
    let get = |keys: &[&str]| -> String {
        keys.iter()
            .filter_map(|k| values.get(k))
            .find(|v| !v.is_empty() && **v != "null")
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    let time_of = |key: &str| -> Option<i64> {
        let v = values.get(key)?;
        match instant(v) {
            Ok(("", t)) => Some(t),
            _ => None,
        }
    };
    let kind = get(&["involvedobject.kind", "regarding.kind"]);
    let namespace = get(&["involvedobject.namespace", "regarding.namespace"]);
    let name = get(&["involvedobject.name", "regarding.name"]);
    let time = [
        "lasttimestamp",
        "deprecatedlasttimestamp",
        "eventtime",
        "series.lastobservedtime",
    ]
    .iter()
    .chain(["firsttimestamp", "deprecatedfirsttimestamp"].iter())
    .find_map(|k| time_of(k));
    let mut rec = EventRecord {
        event_type: get(&["type"]),
        reason: get(&["reason"]),
        message: get(&["message", "note"]),
        component: get(&[
            "source.component",
            "reportingcomponent",
            "reportingcontroller",
            "deprecatedsource.component",
        ]),
        object: object_id(&kind, &namespace, &name).unwrap_or_default(),
        object_kind: kind,
        object_name: name,
        namespace,
        field_path: get(&["involvedobject.fieldpath", "regarding.fieldpath"]),
        time: time.map(RawTime::Utc),
        ..EventRecord::default()
    };
    let count = get(&["count", "series.count", "deprecatedcount"]);
    rec.count = (!count.is_empty()).then_some(count);
    if let Some(first) = time_of("firsttimestamp").or(time_of("deprecatedfirsttimestamp")) {
        rec.extra
            .push(("first_seen_utc".into(), format_rfc3339(first).into()));
    }
    rec.extra
        .push(("event_name".into(), get(&["metadata.name"]).into()));
    rec
}

/// The JSON flattener: a tokenizer that keeps line numbers, driven by an explicit stack.
mod json {
    use super::{join_path, norm_key, Leaf, MAX_DEPTH};

    struct Frame {
        object: bool,
        path: String,
        key_pos: usize,
        key_line: u32,
        n: usize,
    }

    struct Cursor<'a> {
        s: &'a [u8],
        pos: usize,
        line: u32,
    }

    /// Every top-level value is a document. On a syntax error, returns what was read and
    /// the line and problem.
    pub(super) fn flatten(input: &[u8]) -> (Vec<Vec<Leaf>>, Option<(u32, String)>) {
        let mut cur = Cursor {
            s: input,
            pos: 0,
            line: 1,
        };
        let mut docs = Vec::new();
        loop {
            cur.ws();
            if cur.pos >= input.len() {
                return (docs, None);
            }
            let mut leaves = Vec::new();
            let res = cur.document(&mut leaves);
            docs.push(leaves);
            if let Err(problem) = res {
                return (docs, Some((cur.line, problem)));
            }
        }
    }

    impl Cursor<'_> {
        fn peek(&self) -> Option<u8> {
            self.s.get(self.pos).copied()
        }

        fn ws(&mut self) {
            while let Some(b) = self.peek() {
                match b {
                    b'\n' => self.line += 1,
                    b' ' | b'\t' | b'\r' => {}
                    _ => return,
                }
                self.pos += 1;
            }
        }

        fn text(&self, from: usize) -> String {
            String::from_utf8_lossy(self.s.get(from..self.pos).unwrap_or(&[])).into_owned()
        }

        fn document(&mut self, leaves: &mut Vec<Leaf>) -> Result<(), String> {
            let mut stack: Vec<Frame> = Vec::new();
            let mut path = String::new();
            let (mut key_pos, mut key_line) = (self.pos, self.line);
            loop {
                self.ws();
                match self.peek() {
                    None => return Err("JSON ends inside a value".to_string()),
                    Some(open @ (b'{' | b'[')) => {
                        if stack.len() >= MAX_DEPTH {
                            return Err(format!("JSON nested deeper than {MAX_DEPTH} levels"));
                        }
                        self.pos += 1;
                        let path = std::mem::take(&mut path);
                        let object = open == b'{';
                        stack.push(Frame {
                            object,
                            path,
                            key_pos,
                            key_line,
                            n: 0,
                        });
                    }
                    Some(b'"') => {
                        let value = self.string()?;
                        let message = self.text(key_pos);
                        leaves.push(Leaf::new(
                            std::mem::take(&mut path),
                            Some(value),
                            key_line,
                            message,
                        ));
                    }
                    Some(_) => {
                        let value = self.literal()?;
                        let message = self.text(key_pos);
                        leaves.push(Leaf::new(
                            std::mem::take(&mut path),
                            Some(value),
                            key_line,
                            message,
                        ));
                    }
                }
                // Find the next value: close finished containers, read a separator and a key.
                loop {
                    let Some(top) = stack.last_mut() else {
                        return Ok(());
                    };
                    self.ws();
                    let close = if top.object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        if let Some(done) = stack.pop() {
                            if done.n == 0 {
                                let empty = if done.object { "{}" } else { "[]" };
                                let message = self.text(done.key_pos);
                                leaves.push(Leaf::new(
                                    done.path,
                                    Some(empty.to_string()),
                                    done.key_line,
                                    message,
                                ));
                            }
                        }
                        continue;
                    }
                    if top.n > 0 {
                        if self.peek() != Some(b',') {
                            return Err(format!("expected `,` or `{}` in JSON", close as char));
                        }
                        self.pos += 1;
                        self.ws();
                        if self.peek() == Some(close) {
                            // A trailing comma: lenient.
                            continue;
                        }
                    }
                    top.n += 1;
                    (key_pos, key_line) = (self.pos, self.line);
                    if top.object {
                        if self.peek() != Some(b'"') {
                            return Err("expected a key in JSON object".to_string());
                        }
                        let key = self.string()?;
                        self.ws();
                        if self.peek() != Some(b':') {
                            return Err("expected `:` after a JSON key".to_string());
                        }
                        self.pos += 1;
                        path = join_path(&top.path, &norm_key(&key));
                    } else {
                        path = format!("{}[{}]", top.path, top.n - 1);
                    }
                    break;
                }
            }
        }

        /// A number, `true`, `false`, `null` (or any bare word: lenient).
        fn literal(&mut self) -> Result<String, String> {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' | b':') {
                    break;
                }
                self.pos += 1;
            }
            if self.pos == start {
                return Err(format!(
                    "unexpected `{}` in JSON",
                    self.peek().unwrap_or(b'?') as char
                ));
            }
            Ok(self.text(start))
        }

        /// A string with its escapes resolved. Starts at the opening quote.
        fn string(&mut self) -> Result<String, String> {
            self.pos += 1;
            let mut buf: Vec<u8> = Vec::new();
            loop {
                let Some(b) = self.peek() else {
                    return Err("JSON string not closed".to_string());
                };
                self.pos += 1;
                match b {
                    b'"' => return Ok(String::from_utf8_lossy(&buf).into_owned()),
                    b'\\' => {
                        let Some(esc) = self.peek() else { continue };
                        self.pos += 1;
                        let c = match esc {
                            b'n' => '\n',
                            b't' => '\t',
                            b'r' => '\r',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'u' => self.unicode_escape(),
                            other => other as char,
                        };
                        let mut tmp = [0u8; 4];
                        buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                    }
                    b'\n' => {
                        // Not valid JSON, but the line count must stay right.
                        self.line += 1;
                        buf.push(b);
                    }
                    _ => buf.push(b),
                }
            }
        }

        /// `\uXXXX`, joining a surrogate pair; a broken escape becomes U+FFFD.
        fn unicode_escape(&mut self) -> char {
            let hex4 = |cur: &mut Self| -> Option<u32> {
                let digits = cur.s.get(cur.pos..cur.pos + 4)?;
                let v = u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()?;
                cur.pos += 4;
                Some(v)
            };
            let Some(hi) = hex4(self) else {
                return '\u{fffd}';
            };
            if (0xd800..0xdc00).contains(&hi) && self.s.get(self.pos..self.pos + 2) == Some(b"\\u")
            {
                self.pos += 2;
                if let Some(lo) = hex4(self) {
                    let c = 0x10000 + ((hi - 0xd800) << 10) + (lo.wrapping_sub(0xdc00) & 0x3ff);
                    return char::from_u32(c).unwrap_or('\u{fffd}');
                }
            }
            char::from_u32(hi).unwrap_or('\u{fffd}')
        }
    }
}

/// The lenient YAML flattener: one pass over the lines with a stack of open containers.
mod yaml {
    use std::borrow::Cow;

    use super::{join_path, norm_key, Leaf};

    struct Frame {
        indent: usize,
        seq: bool,
        path: String,
        next: usize,
    }

    /// A key with no inline value: its children (or its value) start on a later line.
    struct Pending {
        path: String,
        indent: usize,
        leaf: usize,
    }

    struct Flattener<'a> {
        lines: &'a [(u32, Cow<'a, str>)],
        docs: Vec<Vec<Leaf>>,
        leaves: Vec<Leaf>,
        frames: Vec<Frame>,
        pending: Option<Pending>,
    }

    pub(super) fn flatten(lines: &[(u32, Cow<str>)]) -> Vec<Vec<Leaf>> {
        let mut f = Flattener {
            lines,
            docs: Vec::new(),
            leaves: Vec::new(),
            frames: Vec::new(),
            pending: None,
        };
        let mut idx = 0;
        while let Some((_, text)) = lines.get(idx) {
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let (indent, content) = split_indent(text);
            if content.is_empty() || content.starts_with('#') {
                idx += 1;
            } else if indent == 0 && (is_marker(content, "---") || is_marker(content, "...")) {
                f.end_doc();
                idx += 1;
            } else if indent == 0 && content.starts_with('%') {
                idx += 1;
            } else {
                idx = f.line(idx, indent, content);
            }
        }
        f.end_doc();
        f.docs
    }

    fn is_marker(content: &str, marker: &str) -> bool {
        content == marker
            || content
                .strip_prefix(marker)
                .is_some_and(|r| r.starts_with(' '))
    }

    /// Leading blanks (spaces, and tabs for leniency) and the trimmed rest.
    fn split_indent(text: &str) -> (usize, &str) {
        let rest = text.trim_start_matches([' ', '\t']);
        (text.len() - rest.len(), rest.trim_end())
    }

    fn is_dash(s: &str) -> bool {
        s == "-" || s.starts_with("- ") || s.starts_with("-\t")
    }

    /// `key: rest` or `key:`; quoted keys are unquoted. Not a key: flow, comments, anchors.
    fn split_key(s: &str) -> Option<(String, &str)> {
        let first = s.chars().next()?;
        if let Some(quote @ ('"' | '\'')) = Some(first) {
            let body = s.get(1..)?;
            let close = body.find(quote)?;
            let key = body.get(..close)?;
            let after = body.get(close + 1..)?.trim_start();
            let rest = after.strip_prefix(':')?;
            if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
                return None;
            }
            return Some((key.to_string(), rest));
        }
        if "[{#&*!|>%@`".contains(first) || is_dash(s) {
            return None;
        }
        let bytes = s.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            match bytes.get(at) {
                Some(b':') if matches!(bytes.get(at + 1), None | Some(b' ') | Some(b'\t')) => {
                    let key = s.get(..at)?.trim_end();
                    return (!key.is_empty())
                        .then(|| (key.to_string(), s.get(at + 1..).unwrap_or("")));
                }
                Some(b'#') if at > 0 && matches!(bytes.get(at - 1), Some(b' ') | Some(b'\t')) => {
                    return None;
                }
                _ => {}
            }
            at += 1;
        }
        None
    }

    /// Drops anchors (`&a`) and tags (`!!str`) before a value, and a lone comment.
    fn strip_props(mut v: &str) -> &str {
        while v.starts_with(['&', '!']) {
            v = v
                .find([' ', '\t'])
                .and_then(|i| v.get(i..))
                .unwrap_or("")
                .trim_start();
        }
        if v.starts_with('#') {
            ""
        } else {
            v
        }
    }

    impl Flattener<'_> {
        fn text(&self, idx: usize) -> &str {
            self.lines.get(idx).map_or("", |(_, t)| t.as_ref())
        }

        fn line_no(&self, idx: usize) -> u32 {
            self.lines.get(idx).map_or(0, |(n, _)| *n)
        }

        fn end_doc(&mut self) {
            self.close_pending_as_null();
            self.frames.clear();
            if !self.leaves.is_empty() {
                self.docs.push(std::mem::take(&mut self.leaves));
            }
        }

        fn close_pending_as_null(&mut self) {
            if let Some(p) = self.pending.take() {
                if let Some(leaf) = self.leaves.get_mut(p.leaf) {
                    leaf.value = Some(String::new());
                }
            }
        }

        fn raw(&mut self, idx: usize, content: &str) -> usize {
            self.leaves.push(Leaf {
                raw: true,
                ..Leaf::new(String::new(), None, self.line_no(idx), content.to_string())
            });
            idx + 1
        }

        /// Reads the node starting on line `idx`; returns the index of the next line.
        fn line(&mut self, idx: usize, indent: usize, content: &str) -> usize {
            if let Some(p) = self.pending.take() {
                if is_dash(content) && indent >= p.indent {
                    self.frames.push(Frame {
                        indent,
                        seq: true,
                        path: p.path,
                        next: 0,
                    });
                } else if indent > p.indent && split_key(content).is_some() {
                    self.frames.push(Frame {
                        indent,
                        seq: false,
                        path: p.path,
                        next: 0,
                    });
                } else if indent > p.indent {
                    // `key:` with its scalar on the next line.
                    let (value, message, next) = self.scalar(idx, p.indent, content);
                    if let Some(leaf) = self.leaves.get_mut(p.leaf) {
                        leaf.value = Some(value);
                        leaf.message.push('\n');
                        leaf.message.push_str(&message);
                    }
                    return next;
                } else {
                    self.pending = Some(p);
                    self.close_pending_as_null();
                }
            }
            while let Some(top) = self.frames.last() {
                let seq_done = top.indent == indent && top.seq && !is_dash(content);
                if top.indent > indent || seq_done {
                    self.frames.pop();
                } else {
                    break;
                }
            }
            let mut col = indent;
            let mut rest = content;
            loop {
                if is_dash(rest) {
                    let in_seq = matches!(self.frames.last(), Some(f) if f.seq && f.indent == col);
                    if !in_seq {
                        if !self.frames.is_empty() {
                            return self.raw(idx, content);
                        }
                        self.frames.push(Frame {
                            indent: col,
                            seq: true,
                            path: String::new(),
                            next: 0,
                        });
                    }
                    let Some(top) = self.frames.last_mut() else {
                        return self.raw(idx, content);
                    };
                    let path = format!("{}[{}]", top.path, top.next);
                    top.next += 1;
                    let after = rest.get(1..).unwrap_or("");
                    let inner = after.trim_start_matches([' ', '\t']);
                    let inner_col = col + 1 + (after.len() - inner.len());
                    if inner.is_empty() || inner.starts_with('#') {
                        self.structural(idx, path, col, content);
                        return idx + 1;
                    }
                    if is_dash(inner) {
                        self.frames.push(Frame {
                            indent: inner_col,
                            seq: true,
                            path,
                            next: 0,
                        });
                    } else if split_key(inner).is_some() {
                        self.frames.push(Frame {
                            indent: inner_col,
                            seq: false,
                            path,
                            next: 0,
                        });
                    } else {
                        return self.scalar_leaf(idx, path, col, strip_props(inner), content);
                    }
                    col = inner_col;
                    rest = inner;
                    continue;
                }
                let Some((key, after)) = split_key(rest) else {
                    return self.raw(idx, content);
                };
                let in_map = matches!(self.frames.last(), Some(f) if !f.seq && f.indent == col);
                if !in_map {
                    if !self.frames.is_empty() {
                        return self.raw(idx, content);
                    }
                    self.frames.push(Frame {
                        indent: col,
                        seq: false,
                        path: String::new(),
                        next: 0,
                    });
                }
                let parent = self.frames.last().map_or("", |f| f.path.as_str());
                let path = join_path(parent, &norm_key(&key));
                let value = strip_props(after.trim());
                if path == "metadata.managedfields" || path.ends_with(".metadata.managedfields") {
                    return self.skip_block(idx, path, col, content);
                }
                if value.is_empty() {
                    self.structural(idx, path, col, content);
                    return idx + 1;
                }
                return self.scalar_leaf(idx, path, col, value, content);
            }
        }

        /// A key (or `-`) whose content follows on later lines.
        fn structural(&mut self, idx: usize, path: String, indent: usize, content: &str) {
            let leaf = self.leaves.len();
            self.leaves.push(Leaf::new(
                path.clone(),
                None,
                self.line_no(idx),
                content.to_string(),
            ));
            self.pending = Some(Pending { path, indent, leaf });
        }

        /// `managedFields`: one structural leaf; the block's lines fold into it.
        fn skip_block(&mut self, idx: usize, path: String, indent: usize, content: &str) -> usize {
            self.leaves.push(Leaf::new(
                path,
                None,
                self.line_no(idx),
                content.to_string(),
            ));
            let mut next = idx + 1;
            while next < self.lines.len() {
                let (ind, c) = split_indent(self.text(next));
                if c.is_empty()
                    || c.starts_with('#')
                    || ind > indent
                    || (ind == indent && is_dash(c))
                {
                    next += 1;
                } else {
                    break;
                }
            }
            next
        }

        fn scalar_leaf(
            &mut self,
            idx: usize,
            path: String,
            indent: usize,
            value: &str,
            content: &str,
        ) -> usize {
            let first = value.to_string();
            let (value, tail, next) = self.scalar_from(idx, indent, &first);
            let mut message = content.to_string();
            if !tail.is_empty() {
                message.push('\n');
                message.push_str(&tail);
            }
            self.leaves
                .push(Leaf::new(path, Some(value), self.line_no(idx), message));
            next
        }

        /// A scalar that starts on its own line (`key:` then the value below).
        fn scalar(&self, idx: usize, indent: usize, content: &str) -> (String, String, usize) {
            let (value, tail, next) = self.scalar_from(idx, indent, strip_props(content));
            let message = if tail.is_empty() {
                content.to_string()
            } else {
                format!("{content}\n{tail}")
            };
            (value, message, next)
        }

        /// Reads a scalar whose first text is `v` on line `idx`, owned by a key at `indent`.
        /// Returns the value, the raw continuation lines, and the next line index.
        fn scalar_from(&self, idx: usize, indent: usize, v: &str) -> (String, String, usize) {
            if is_block_header(v) {
                return self.block(idx, indent, v.starts_with('>'));
            }
            if let Some(quote @ ('"' | '\'')) = v.chars().next() {
                return self.quoted(idx, indent, v, quote);
            }
            if v.starts_with(['[', '{']) {
                return self.flow(idx, indent, v);
            }
            self.plain(idx, indent, v)
        }

        /// `|`, `|-`, `>+2` …: lines more indented than the key, blank lines included.
        fn block(&self, idx: usize, indent: usize, folded: bool) -> (String, String, usize) {
            let mut content_indent = None;
            let mut last = idx;
            let mut next = idx + 1;
            while next < self.lines.len() {
                let text = self.text(next);
                let (ind, c) = split_indent(text);
                if !c.is_empty() {
                    let min = *content_indent.get_or_insert(ind);
                    if ind <= indent || ind < min {
                        break;
                    }
                    last = next;
                }
                next += 1;
            }
            let strip = content_indent.unwrap_or(0);
            let body: Vec<&str> = ((idx + 1)..=last)
                .map(|i| self.text(i).get(strip..).unwrap_or("").trim_end())
                .collect();
            let value = if folded {
                fold(&body, false)
            } else {
                body.join("\n")
            };
            let tail = ((idx + 1)..=last)
                .map(|i| self.text(i).trim_end())
                .collect::<Vec<_>>()
                .join("\n");
            (value.trim_end_matches('\n').to_string(), tail, last + 1)
        }

        /// Single or double quotes, possibly folded over several lines.
        fn quoted(
            &self,
            idx: usize,
            indent: usize,
            v: &str,
            quote: char,
        ) -> (String, String, usize) {
            let mut pieces: Vec<&str> = Vec::new();
            let mut tail: Vec<&str> = Vec::new();
            let mut cur = v.get(1..).unwrap_or("");
            let mut at = idx;
            loop {
                if let Some(end) = closing_quote(cur, quote) {
                    pieces.push(cur.get(..end).unwrap_or(cur));
                    break;
                }
                pieces.push(cur);
                let next_text = self.text(at + 1);
                let (ind, c) = split_indent(next_text);
                let unterminated = at + 1 >= self.lines.len() || (!c.is_empty() && ind <= indent);
                if unterminated {
                    break;
                }
                at += 1;
                tail.push(next_text.trim_end());
                cur = c;
            }
            let folded = fold(&pieces, quote == '"');
            let value = if quote == '"' {
                unescape_double(&folded)
            } else {
                folded.replace("''", "'")
            };
            (value, tail.join("\n"), at + 1)
        }

        /// `[a, b]` / `{a: b}` kept as raw text, joined over lines until the brackets close.
        fn flow(&self, idx: usize, indent: usize, v: &str) -> (String, String, usize) {
            let mut depth = bracket_depth(0, v);
            let mut value = v.to_string();
            let mut tail: Vec<&str> = Vec::new();
            let mut at = idx;
            while depth > 0 && at + 1 < self.lines.len() {
                let next_text = self.text(at + 1);
                let (ind, c) = split_indent(next_text);
                if !c.is_empty() && ind <= indent {
                    break;
                }
                at += 1;
                tail.push(next_text.trim_end());
                if !c.is_empty() {
                    value.push(' ');
                    value.push_str(c);
                }
                depth = bracket_depth(depth, c);
            }
            (value, tail.join("\n"), at + 1)
        }

        /// A plain scalar: its continuation lines are more indented than the key.
        fn plain(&self, idx: usize, indent: usize, v: &str) -> (String, String, usize) {
            let mut pieces = vec![strip_comment(v)];
            let mut last = idx;
            let mut next = idx + 1;
            while next < self.lines.len() {
                let (ind, c) = split_indent(self.text(next));
                if c.is_empty() {
                    next += 1;
                    continue;
                }
                if ind <= indent || c.starts_with('#') {
                    break;
                }
                pieces.extend(std::iter::repeat_n("", next - last - 1));
                pieces.push(strip_comment(c));
                last = next;
                next += 1;
            }
            let tail = ((idx + 1)..=last)
                .map(|i| self.text(i).trim_end())
                .collect::<Vec<_>>()
                .join("\n");
            (fold(&pieces, false), tail, last + 1)
        }
    }

    fn is_block_header(v: &str) -> bool {
        let head = v.split(" #").next().unwrap_or(v).trim_end();
        let mut chars = head.chars();
        matches!(chars.next(), Some('|' | '>'))
            && chars.all(|c| c == '-' || c == '+' || c.is_ascii_digit())
    }

    fn strip_comment(v: &str) -> &str {
        match v.find(" #") {
            Some(at) => v.get(..at).unwrap_or(v).trim_end(),
            None => v,
        }
    }

    /// Byte index of the closing quote in `s`, skipping escapes (`\"`, `''`).
    fn closing_quote(s: &str, quote: char) -> Option<usize> {
        let mut chars = s.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if quote == '"' && c == '\\' {
                chars.next();
            } else if c == quote {
                if quote == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') {
                    chars.next();
                } else {
                    return Some(at);
                }
            }
        }
        None
    }

    fn bracket_depth(mut depth: i32, s: &str) -> i32 {
        let mut quote: Option<char> = None;
        for c in s.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '[' | '{') => depth += 1,
                (None, ']' | '}') => depth -= 1,
                _ => {}
            }
        }
        depth
    }

    /// YAML line folding: one line break is a space, each further (blank) line a newline.
    /// In double quotes a trailing `\` joins lines without a space.
    fn fold(pieces: &[&str], double: bool) -> String {
        let mut out = String::new();
        let mut blanks = 0usize;
        for (n, piece) in pieces.iter().enumerate() {
            let piece = if n == 0 {
                piece.trim_end()
            } else {
                piece.trim()
            };
            if n > 0 && piece.is_empty() {
                blanks += 1;
                continue;
            }
            if n > 0 {
                if blanks > 0 {
                    out.extend(std::iter::repeat_n('\n', blanks));
                } else if double && out.ends_with('\\') && !out.ends_with("\\\\") {
                    out.pop();
                } else {
                    out.push(' ');
                }
            }
            blanks = 0;
            out.push_str(piece);
        }
        out
    }

    fn unescape_double(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let hex = |chars: &mut std::str::Chars, n: usize| -> char {
                let digits: String = chars.take(n).collect();
                u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}')
            };
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some('e') => out.push('\u{1b}'),
                Some('x') => out.push(hex(&mut chars, 2)),
                Some('u') => out.push(hex(&mut chars, 4)),
                Some('U') => out.push(hex(&mut chars, 8)),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per event: line, n_lines, time, level, kind, component, fields | message.
    pub(crate) fn render(out: &ParseOutput) -> String {
        let mut s = String::new();
        for ev in &out.events {
            let time = match ev.raw_time {
                Some(RawTime::Utc(t)) => format_rfc3339(t),
                Some(RawTime::Age { secs }) => format!("age={secs}"),
                Some(other) => format!("{other:?}"),
                None => "-".to_string(),
            };
            let fields: Vec<String> = ev
                .fields
                .iter()
                .map(|(k, v)| format!("{k}={}", v.replace('\n', "⏎")))
                .collect();
            s.push_str(&format!(
                "{} {} {} {} {} {} [{}] | {}\n",
                ev.line,
                ev.n_lines,
                time,
                ev.level.as_str(),
                ev.kind,
                ev.component,
                fields.join(" "),
                ev.message.replace('\n', "⏎")
            ));
        }
        // Control bytes would make the expected strings unreadable.
        let mut s: String = s
            .chars()
            .map(|c| if c.is_control() && c != '\n' { '·' } else { c })
            .collect();
        if out.unparsed_lines > 0 {
            s.push_str(&format!("unparsed={}\n", out.unparsed_lines));
        }
        for d in &out.diagnostics {
            s.push_str(&format!("diag {d}\n"));
        }
        s
    }

    #[track_caller]
    fn check(input: &str, expect: &str) {
        let mut out = ParseOutput::default();
        parse(input.as_bytes(), &mut out);
        let n_physical = split_lines(input.as_bytes()).count() as u32;
        if input.trim_start().starts_with(['{', '[']) {
            // Compact JSON puts several facts on one line: check coverage instead.
            let covered: std::collections::BTreeSet<u32> = out
                .events
                .iter()
                .flat_map(|e| e.line..e.line + e.n_lines)
                .collect();
            assert_eq!(
                covered,
                (1..=n_physical).collect(),
                "every line in some event"
            );
        } else {
            let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
            assert_eq!(n_counted, n_physical, "every line in exactly one event");
        }
        let got = render(&out);
        if got.trim_end() != expect.trim() {
            println!("{got}");
        }
        assert_eq!(got.trim_end(), expect.trim());
    }

    const RAYSERVICE_YAML: &str = r#"apiVersion: ray.io/v1
kind: RayService
metadata:
  annotations:
    ray.io/initializing-timeout: 10m
  creationTimestamp: "2024-06-07T18:15:56Z"
  generation: 1
  managedFields:
  - apiVersion: ray.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {}
    manager: kubectl
  name: rayservice-sample
  namespace: default
spec:
  serveConfigV2: |
    applications:
      - name: fruit_app
        import_path: fruit.deployment_graph

      - name: math_app
  rayClusterConfig:
    headGroupSpec:
      rayStartParams:
        dashboard-host: 0.0.0.0   # comment
    workerGroupSpecs:
    - groupName: small-group
      replicas: 1
status:
  activeServiceStatus:
    applicationStatuses:
      fruit_app:
        message: 'Deploying app ''fruit_app'' failed with exception:

          Traceback (most recent call last):

          ModuleNotFoundError: No module named ''fruit'''
        serveDeploymentStatuses:
          FruitMarket:
            status: HEALTHY
        status: DEPLOY_FAILED
  conditions:
  - lastTransitionTime: "2024-06-07T18:16:00Z"
    message: "Serve applications\n  are failing"
    reason: InitializingTimeout
    status: "False"
    type: Ready
  - lastTransitionTime: "2024-06-07T18:16:00Z"
    message: ""
    reason: NoPendingCluster
    status: "False"
    type: UpgradeInProgress
  serviceStatus: ""
"#;

    const EVENT_AND_POD_LIST_YAML: &str = r#"apiVersion: v1
items:
- apiVersion: v1
  kind: Event
  metadata:
    name: rs-head.17d8f2a1
    namespace: default
  count: 5
  firstTimestamp: "2024-06-07T18:00:00Z"
  involvedObject:
    fieldPath: spec.containers{ray-head}
    kind: Pod
    name: rs-head
    namespace: default
  lastTimestamp: "2024-06-07T18:20:00Z"
  message: Back-off restarting failed container
  reason: BackOff
  source:
    component: kubelet
  type: Warning
- apiVersion: v1
  kind: Pod
  metadata:
    name: rs-head
    namespace: default
  status:
    phase: Running
kind: List
metadata:
  resourceVersion: ""
"#;

    const TROUBLESHOOT_PODS_JSON: &str = r#"{
  "kind": "PodList",
  "apiVersion": "v1",
  "metadata": {
    "resourceVersion": "91342"
  },
  "items": [
    {
      "metadata": {
        "name": "rs-worker-qw6wv",
        "namespace": "default",
        "labels": {
          "ray.io/cluster": "rs-raycluster-nrqvj"
        },
        "managedFields": [
          {
            "manager": "kuberay-operator",
            "fieldsV1": {"f:metadata": {}}
          }
        ]
      },
      "spec": {
        "containers": [],
        "nodeName": "gke-ray-pool-2-03899cad-ccwh"
      },
      "status": {
        "phase": "Running",
        "containerStatuses": [
          {
            "name": "ray-worker",
            "state": {
              "waiting": {
                "reason": "CrashLoopBackOff",
                "message": "back-off 5m0s restarting failed container=ray-worker pod=rs-worker-qw6wv_default(f25d)"
              }
            },
            "lastState": {
              "terminated": {
                "exitCode": 137,
                "reason": "OOMKilled",
                "startedAt": "2024-06-07T18:16:28Z"
              }
            },
            "ready": false,
            "restartCount": 5
          }
        ]
      }
    }
  ]
}
"#;

    const EVENT_LIST_JSON: &str = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "count": 293,
            "firstTimestamp": "2024-06-07T18:00:00Z",
            "involvedObject": {
                "apiVersion": "ray.io/v1",
                "kind": "RayService",
                "name": "rayservice-sample",
                "namespace": "default"
            },
            "kind": "Event",
            "lastTimestamp": "2024-06-07T21:10:00Z",
            "message": "Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-nrqvj: Put \"http://rayservice-sample-raycluster-nrqvj-head-svc.default.svc.cluster.local:8265/api/serve/applications/\": dial tcp 10.96.218.65:8265: connect: connection refused",
            "metadata": {
                "name": "rayservice-sample.17d8f2a1",
                "namespace": "default"
            },
            "reason": "FailedToUpdateServeApplications",
            "source": {
                "component": "rayservice-controller"
            },
            "type": "Warning"
        },
        {
            "apiVersion": "events.k8s.io/v1",
            "deprecatedFirstTimestamp": null,
            "eventTime": "2024-06-07T21:12:00.123456Z",
            "kind": "Event",
            "metadata": {"name": "rayservice-sample.17d8f2b9", "namespace": "default"},
            "note": "Created RayCluster default/rayservice-sample-raycluster-hnz7k",
            "reason": "CreatedRayCluster",
            "regarding": {"kind": "RayService", "name": "rayservice-sample", "namespace": "default"},
            "reportingController": "rayservice-controller",
            "series": {"count": 2, "lastObservedTime": "2024-06-07T21:15:00.000001Z"},
            "type": "Normal"
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
"#;

    #[test]
    fn rayservice_yaml() {
        check(
            RAYSERVICE_YAML,
            r#"
1 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayService/default/rayservice-sample] | apiVersion: ray.io/v1
2 1 - info unknown  [path=kind value=RayService object=RayService/default/rayservice-sample] | kind: RayService
3 1 - info unknown  [path=metadata object=RayService/default/rayservice-sample] | metadata:
4 1 - info unknown  [path=metadata.annotations object=RayService/default/rayservice-sample] | annotations:
5 1 - info unknown  [path=metadata.annotations.ray.io/initializing-timeout value=10m object=RayService/default/rayservice-sample] | ray.io/initializing-timeout: 10m
6 1 - info unknown  [path=metadata.creationtimestamp value=2024-06-07T18:15:56Z object=RayService/default/rayservice-sample] | creationTimestamp: "2024-06-07T18:15:56Z"
7 1 - info unknown  [path=metadata.generation value=1 object=RayService/default/rayservice-sample] | generation: 1
8 6 - info unknown  [path=metadata.managedfields object=RayService/default/rayservice-sample] | managedFields:
14 1 - info unknown  [path=metadata.name value=rayservice-sample object=RayService/default/rayservice-sample] | name: rayservice-sample
15 1 - info unknown  [path=metadata.namespace value=default object=RayService/default/rayservice-sample] | namespace: default
16 1 - info unknown  [path=spec object=RayService/default/rayservice-sample] | spec:
17 6 - info unknown  [path=spec.serveconfigv2 value=applications:⏎  - name: fruit_app⏎    import_path: fruit.deployment_graph⏎⏎  - name: math_app object=RayService/default/rayservice-sample] | serveConfigV2: |⏎    applications:⏎      - name: fruit_app⏎        import_path: fruit.deployment_graph⏎⏎      - name: math_app
23 1 - info unknown  [path=spec.rayclusterconfig object=RayService/default/rayservice-sample] | rayClusterConfig:
24 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec object=RayService/default/rayservice-sample] | headGroupSpec:
25 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams object=RayService/default/rayservice-sample] | rayStartParams:
26 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams.dashboard-host value=0.0.0.0 object=RayService/default/rayservice-sample] | dashboard-host: 0.0.0.0   # comment
27 1 - info unknown  [path=spec.rayclusterconfig.workergroupspecs object=RayService/default/rayservice-sample] | workerGroupSpecs:
28 1 - info unknown  [path=spec.rayclusterconfig.workergroupspecs[0].groupname value=small-group object=RayService/default/rayservice-sample] | - groupName: small-group
29 1 - info unknown  [path=spec.rayclusterconfig.workergroupspecs[0].replicas value=1 object=RayService/default/rayservice-sample] | replicas: 1
30 1 - info unknown  [path=status object=RayService/default/rayservice-sample] | status:
31 1 - info unknown  [path=status.activeservicestatus object=RayService/default/rayservice-sample] | activeServiceStatus:
32 1 - info unknown  [path=status.activeservicestatus.applicationstatuses object=RayService/default/rayservice-sample] | applicationStatuses:
33 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app object=RayService/default/rayservice-sample] | fruit_app:
34 5 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.message value=Deploying app 'fruit_app' failed with exception:⏎Traceback (most recent call last):⏎ModuleNotFoundError: No module named 'fruit' object=RayService/default/rayservice-sample] | message: 'Deploying app ''fruit_app'' failed with exception:⏎⏎          Traceback (most recent call last):⏎⏎          ModuleNotFoundError: No module named ''fruit'''
39 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses object=RayService/default/rayservice-sample] | serveDeploymentStatuses:
40 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruitmarket object=RayService/default/rayservice-sample] | FruitMarket:
41 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruitmarket.status value=HEALTHY object=RayService/default/rayservice-sample] | status: HEALTHY
42 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=DEPLOY_FAILED object=RayService/default/rayservice-sample] | status: DEPLOY_FAILED
43 1 - info unknown  [path=status.conditions object=RayService/default/rayservice-sample] | conditions:
44 1 - info unknown  [path=status.conditions[0].lasttransitiontime value=2024-06-07T18:16:00Z object=RayService/default/rayservice-sample] | - lastTransitionTime: "2024-06-07T18:16:00Z"
45 1 - info unknown  [path=status.conditions[0].message value=Serve applications⏎  are failing object=RayService/default/rayservice-sample] | message: "Serve applications\n  are failing"
46 1 - info unknown  [path=status.conditions[0].reason value=InitializingTimeout object=RayService/default/rayservice-sample] | reason: InitializingTimeout
47 1 - info unknown  [path=status.conditions[0].status value=False object=RayService/default/rayservice-sample] | status: "False"
48 1 - info unknown  [path=status.conditions[0].type value=Ready object=RayService/default/rayservice-sample] | type: Ready
49 1 - info unknown  [path=status.conditions[1].lasttransitiontime value=2024-06-07T18:16:00Z object=RayService/default/rayservice-sample] | - lastTransitionTime: "2024-06-07T18:16:00Z"
50 1 - info unknown  [path=status.conditions[1].message value= object=RayService/default/rayservice-sample] | message: ""
51 1 - info unknown  [path=status.conditions[1].reason value=NoPendingCluster object=RayService/default/rayservice-sample] | reason: NoPendingCluster
52 1 - info unknown  [path=status.conditions[1].status value=False object=RayService/default/rayservice-sample] | status: "False"
53 1 - info unknown  [path=status.conditions[1].type value=UpgradeInProgress object=RayService/default/rayservice-sample] | type: UpgradeInProgress
54 1 - info unknown  [path=status.servicestatus value= object=RayService/default/rayservice-sample] | serviceStatus: ""
"#,
        );
    }

    #[test]
    fn list_with_event_and_pod() {
        check(
            EVENT_AND_POD_LIST_YAML,
            r#"
1 1 - info unknown  [path=apiversion value=v1] | apiVersion: v1
2 1 - info unknown  [path=items] | items:
3 18 2024-06-07T18:20:00.000Z warning kube_events kubelet [type=Warning reason=BackOff object=Pod/default/rs-head object_kind=Pod object_name=rs-head namespace=default count=5 field_path=spec.containers{ray-head} first_seen_utc=2024-06-07T18:00:00.000Z event_name=rs-head.17d8f2a1] | Back-off restarting failed container
21 1 - info unknown  [path=apiversion value=v1 object=Pod/default/rs-head] | - apiVersion: v1
22 1 - info unknown  [path=kind value=Pod object=Pod/default/rs-head] | kind: Pod
23 1 - info unknown  [path=metadata object=Pod/default/rs-head] | metadata:
24 1 - info unknown  [path=metadata.name value=rs-head object=Pod/default/rs-head] | name: rs-head
25 1 - info unknown  [path=metadata.namespace value=default object=Pod/default/rs-head] | namespace: default
26 1 - info unknown  [path=status object=Pod/default/rs-head] | status:
27 1 - info unknown  [path=status.phase value=Running object=Pod/default/rs-head] | phase: Running
28 1 - info unknown  [path=kind value=List] | kind: List
29 1 - info unknown  [path=metadata] | metadata:
30 1 - info unknown  [path=metadata.resourceversion value=] | resourceVersion: ""
"#,
        );
    }

    #[test]
    fn troubleshoot_pod_list_json() {
        check(
            TROUBLESHOOT_PODS_JSON,
            r#"
1 1 - info unknown  [] | {
2 1 - info unknown  [path=kind value=PodList] | "kind": "PodList"
3 2 - info unknown  [path=apiversion value=v1] | "apiVersion": "v1"
5 5 - info unknown  [path=metadata.resourceversion value=91342] | "resourceVersion": "91342"
10 1 - info unknown  [path=metadata.name value=rs-worker-qw6wv object=Pod/default/rs-worker-qw6wv] | "name": "rs-worker-qw6wv"
11 2 - info unknown  [path=metadata.namespace value=default object=Pod/default/rs-worker-qw6wv] | "namespace": "default"
13 10 - info unknown  [path=metadata.labels.ray.io/cluster value=rs-raycluster-nrqvj object=Pod/default/rs-worker-qw6wv] | "ray.io/cluster": "rs-raycluster-nrqvj"
23 1 - info unknown  [path=spec.containers value=[] object=Pod/default/rs-worker-qw6wv] | "containers": []
24 3 - info unknown  [path=spec.nodename value=gke-ray-pool-2-03899cad-ccwh object=Pod/default/rs-worker-qw6wv] | "nodeName": "gke-ray-pool-2-03899cad-ccwh"
27 3 - info unknown  [path=status.phase value=Running object=Pod/default/rs-worker-qw6wv] | "phase": "Running"
30 3 - info unknown  [path=status.containerstatuses[0].name value=ray-worker object=Pod/default/rs-worker-qw6wv] | "name": "ray-worker"
33 1 - info unknown  [path=status.containerstatuses[0].state.waiting.reason value=CrashLoopBackOff object=Pod/default/rs-worker-qw6wv] | "reason": "CrashLoopBackOff"
34 5 - info unknown  [path=status.containerstatuses[0].state.waiting.message value=back-off 5m0s restarting failed container=ray-worker pod=rs-worker-qw6wv_default(f25d) object=Pod/default/rs-worker-qw6wv] | "message": "back-off 5m0s restarting failed container=ray-worker pod=rs-worker-qw6wv_default(f25d)"
39 1 - info unknown  [path=status.containerstatuses[0].laststate.terminated.exitcode value=137 object=Pod/default/rs-worker-qw6wv] | "exitCode": 137
40 1 - info unknown  [path=status.containerstatuses[0].laststate.terminated.reason value=OOMKilled object=Pod/default/rs-worker-qw6wv] | "reason": "OOMKilled"
41 3 - info unknown  [path=status.containerstatuses[0].laststate.terminated.startedat value=2024-06-07T18:16:28Z object=Pod/default/rs-worker-qw6wv] | "startedAt": "2024-06-07T18:16:28Z"
44 1 - info unknown  [path=status.containerstatuses[0].ready value=false object=Pod/default/rs-worker-qw6wv] | "ready": false
45 7 - info unknown  [path=status.containerstatuses[0].restartcount value=5 object=Pod/default/rs-worker-qw6wv] | "restartCount": 5
"#,
        );
    }

    #[test]
    fn event_list_json() {
        check(
            EVENT_LIST_JSON,
            r#"
1 1 - info unknown  [] | {
2 3 - info unknown  [path=apiversion value=v1] | "apiVersion": "v1"
5 23 2024-06-07T21:10:00.000Z warning kube_events rayservice-controller [type=Warning reason=FailedToUpdateServeApplications object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=293 first_seen_utc=2024-06-07T18:00:00.000Z event_name=rayservice-sample.17d8f2a1] | Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-nrqvj: Put "http://rayservice-sample-raycluster-nrqvj-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.96.218.65:8265: connect: connection refused
28 13 2024-06-07T21:12:00.123456Z info kube_events rayservice-controller [type=Normal reason=CreatedRayCluster object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=2 event_name=rayservice-sample.17d8f2b9] | Created RayCluster default/rayservice-sample-raycluster-hnz7k
41 2 - info unknown  [path=kind value=List] | "kind": "List"
43 3 - info unknown  [path=metadata.resourceversion value=] | "resourceVersion": ""
"#,
        );
    }

    #[test]
    fn typed_event_list_items_have_no_kind() {
        check(
            r#"{"kind": "EventList", "items": [
  {"metadata": {"name": "e1"}, "involvedObject": {"kind": "Pod", "name": "p"},
   "reason": "OOMKilling", "type": "Warning", "message": "Memory cgroup out of memory",
   "lastTimestamp": null, "firstTimestamp": "2024-06-07T18:00:00Z"}
]}"#,
            r#"
1 1 - info unknown  [path=kind value=EventList] | "kind": "EventList"
2 4 2024-06-07T18:00:00.000Z warning kube_events  [type=Warning reason=OOMKilling object=Pod/p object_kind=Pod object_name=p first_seen_utc=2024-06-07T18:00:00.000Z event_name=e1] | Memory cgroup out of memory
"#,
        );
    }

    #[test]
    fn multi_doc_yaml() {
        check(
            "# two objects
---
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
  namespace: ns
status:
  state: ready
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
status:
  conditions:
    - type: Ready
      status: 'False'
      reason: KubeletNotReady
...
",
            r#"
1 2 - info unknown  [] | # two objects
3 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayCluster/ns/rc] | apiVersion: ray.io/v1
4 1 - info unknown  [path=kind value=RayCluster object=RayCluster/ns/rc] | kind: RayCluster
5 1 - info unknown  [path=metadata object=RayCluster/ns/rc] | metadata:
6 1 - info unknown  [path=metadata.name value=rc object=RayCluster/ns/rc] | name: rc
7 1 - info unknown  [path=metadata.namespace value=ns object=RayCluster/ns/rc] | namespace: ns
8 1 - info unknown  [path=status object=RayCluster/ns/rc] | status:
9 2 - info unknown  [path=status.state value=ready object=RayCluster/ns/rc] | state: ready
11 1 - info unknown  [path=apiversion value=v1 object=Node/node-1] | apiVersion: v1
12 1 - info unknown  [path=kind value=Node object=Node/node-1] | kind: Node
13 1 - info unknown  [path=metadata object=Node/node-1] | metadata:
14 1 - info unknown  [path=metadata.name value=node-1 object=Node/node-1] | name: node-1
15 1 - info unknown  [path=status object=Node/node-1] | status:
16 1 - info unknown  [path=status.conditions object=Node/node-1] | conditions:
17 1 - info unknown  [path=status.conditions[0].type value=Ready object=Node/node-1] | - type: Ready
18 1 - info unknown  [path=status.conditions[0].status value=False object=Node/node-1] | status: 'False'
19 2 - info unknown  [path=status.conditions[0].reason value=KubeletNotReady object=Node/node-1] | reason: KubeletNotReady
"#,
        );
    }

    #[test]
    fn troubleshoot_bare_array_yaml() {
        check(
            "- apiVersion: ray.io/v1
  kind: RayJob
  metadata:
    name: job
    namespace: default
  status:
    jobDeploymentStatus: Failed
    reason: DeadlineExceeded
- apiVersion: ray.io/v1
  kind: RayJob
  metadata: {name: job2, namespace: default}
",
            r#"
1 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayJob/default/job] | - apiVersion: ray.io/v1
2 1 - info unknown  [path=kind value=RayJob object=RayJob/default/job] | kind: RayJob
3 1 - info unknown  [path=metadata object=RayJob/default/job] | metadata:
4 1 - info unknown  [path=metadata.name value=job object=RayJob/default/job] | name: job
5 1 - info unknown  [path=metadata.namespace value=default object=RayJob/default/job] | namespace: default
6 1 - info unknown  [path=status object=RayJob/default/job] | status:
7 1 - info unknown  [path=status.jobdeploymentstatus value=Failed object=RayJob/default/job] | jobDeploymentStatus: Failed
8 1 - info unknown  [path=status.reason value=DeadlineExceeded object=RayJob/default/job] | reason: DeadlineExceeded
9 1 - info unknown  [path=apiversion value=ray.io/v1] | - apiVersion: ray.io/v1
10 1 - info unknown  [path=kind value=RayJob] | kind: RayJob
11 1 - info unknown  [path=metadata value={name: job2, namespace: default}] | metadata: {name: job2, namespace: default}
"#,
        );
    }

    #[test]
    fn bare_array_json_compact() {
        check(
            r#"[{"kind":"RayCluster","metadata":{"name":"rc","namespace":"default"},"status":{"state":"ready","conditions":[]}}]"#,
            r#"
1 1 - info unknown  [path=kind value=RayCluster object=RayCluster/default/rc] | "kind":"RayCluster"
1 1 - info unknown  [path=metadata.name value=rc object=RayCluster/default/rc] | "name":"rc"
1 1 - info unknown  [path=metadata.namespace value=default object=RayCluster/default/rc] | "namespace":"default"
1 1 - info unknown  [path=status.state value=ready object=RayCluster/default/rc] | "state":"ready"
1 1 - info unknown  [path=status.conditions value=[] object=RayCluster/default/rc] | "conditions":[]
"#,
        );
    }

    #[test]
    fn bundle_metadata() {
        check(
            r#"{
  "collected_at": "2024-06-07T21:19:09.000Z",
  "namespace": "default",
  "kuberay_operator_image": "quay.io/kuberay/operator:v1.1.1"
}"#,
            r#"
1 1 - info unknown  [] | {
2 1 - info unknown  [path=collected_at value=2024-06-07T21:19:09.000Z] | "collected_at": "2024-06-07T21:19:09.000Z"
3 1 - info unknown  [path=namespace value=default] | "namespace": "default"
4 2 - info unknown  [path=kuberay_operator_image value=quay.io/kuberay/operator:v1.1.1] | "kuberay_operator_image": "quay.io/kuberay/operator:v1.1.1"
"#,
        );
        check(
            "apiVersion: troubleshoot.sh/v1beta2
kind: SupportBundle
spec:
  versionNumber: 0.72.0
",
            r#"
1 1 - info unknown  [path=apiversion value=troubleshoot.sh/v1beta2] | apiVersion: troubleshoot.sh/v1beta2
2 1 - info unknown  [path=kind value=SupportBundle] | kind: SupportBundle
3 1 - info unknown  [path=spec] | spec:
4 1 - info unknown  [path=spec.versionnumber value=0.72.0] | versionNumber: 0.72.0
"#,
        );
    }

    #[test]
    fn yaml_scalars() {
        check(
            r#"a: plain text # comment
b: "esc \"q\" \t tab \u00e9"
c: 'it''s'
d: >-
  folded
  text

  para
e: |+
  keep

f: &anchor !!str tagged
g: *anchor
h: [a, "b, c",
  d]
i: {x: 1}
j:
k: null
l:
  value on next line
  continued
"m n": quoted key
long: "Failed to pull image: rpc error: code
  = Unknown desc \
  = x"
"#,
            r#"
1 1 - info unknown  [path=a value=plain text] | a: plain text # comment
2 1 - info unknown  [path=b value=esc "q" · tab é] | b: "esc \"q\" \t tab \u00e9"
3 1 - info unknown  [path=c value=it's] | c: 'it''s'
4 5 - info unknown  [path=d value=folded text⏎para] | d: >-⏎  folded⏎  text⏎⏎  para
9 3 - info unknown  [path=e value=keep] | e: |+⏎  keep
12 1 - info unknown  [path=f value=tagged] | f: &anchor !!str tagged
13 1 - info unknown  [path=g value=*anchor] | g: *anchor
14 2 - info unknown  [path=h value=[a, "b, c", d]] | h: [a, "b, c",⏎  d]
16 1 - info unknown  [path=i value={x: 1}] | i: {x: 1}
17 1 - info unknown  [path=j value=] | j:
18 1 - info unknown  [path=k value=null] | k: null
19 3 - info unknown  [path=l value=value on next line continued] | l:⏎value on next line⏎  continued
22 1 - info unknown  [path=mn value=quoted key] | "m n": quoted key
23 3 - info unknown  [path=long value=Failed to pull image: rpc error: code = Unknown desc = x] | long: "Failed to pull image: rpc error: code⏎  = Unknown desc \⏎  = x"
"#,
        );
    }

    #[test]
    fn nasty_inputs() {
        check("", "");
        check(
            "\n\n",
            r#"
1 2 - info unknown  [] | 
"#,
        );
        check(
            "\u{0}\u{1}\u{2}garbage\nmore: x\n",
            r#"
1 1 - info unknown  [] | ···garbage
2 1 - info unknown  [path=more value=x] | more: x
unparsed=1
"#,
        );
        check(
            "a: 1\r\nb:\r\n  - x\r\n",
            r#"
1 1 - info unknown  [path=a value=1] | a: 1
2 1 - info unknown  [path=b] | b:
3 1 - info unknown  [path=b[0] value=x] | - x
"#,
        );
        check(
            "  - a\nb: 1\n  c: 2\n",
            r#"
1 1 - info unknown  [path= value=a] | - a
2 2 - info unknown  [path=b value=1 c: 2] | b: 1⏎  c: 2
"#,
        );
        check(
            "{\"a\": [1, 2,\n",
            r#"
1 1 - info unknown  [path=a[0] value=1] | 1
1 1 - info unknown  [path=a[1] value=2] | 2
diag :1: JSON ends inside a value
"#,
        );
        check(
            "{\"a\": \"x\"} trailing\n{\"b\": 1}\n",
            r#"
1 1 - info unknown  [path=a value=x] | "a": "x"
1 1 - info unknown  [path= value=trailing] | trailing
2 1 - info unknown  [path=b value=1] | "b": 1
"#,
        );
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        check(
            &deep,
            r#"
1 1 - info unknown  [] | [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
unparsed=1
diag :1: JSON nested deeper than 256 levels
"#,
        );
        let deep_yaml: String = (0..300)
            .map(|d| format!("{}k{d}:\n", " ".repeat(d)))
            .collect();
        let mut out = ParseOutput::default();
        parse(deep_yaml.as_bytes(), &mut out);
        assert_eq!(out.events.len(), 300);
        let mut out = ParseOutput::default();
        parse(b"a: \xff\xfe\nb: \"\xc3\"\n", &mut out);
        assert_eq!(out.events.len(), 2);
        let giant = format!("{{\"a\": \"{}\"}}", "y".repeat(300_000));
        let mut out = ParseOutput::default();
        parse(giant.as_bytes(), &mut out);
        assert!(out.events.iter().all(|e| e.message.len() < 70_000));
        assert!(out
            .events
            .iter()
            .all(|e| e.field("value").map_or(0, str::len) < 70_000));
    }
    /// Every prefix of every fixture (cut anywhere, even inside a UTF-8 sequence) parses
    /// without panicking and keeps each physical line in exactly one event.
    #[test]
    fn truncated_fixtures_keep_every_line() {
        for fixture in [
            RAYSERVICE_YAML,
            EVENT_AND_POD_LIST_YAML,
            TROUBLESHOOT_PODS_JSON,
            EVENT_LIST_JSON,
        ] {
            let bytes = fixture.as_bytes();
            for cut in (0..bytes.len()).step_by(3) {
                let input = bytes.get(..cut).unwrap_or(bytes);
                let mut out = ParseOutput::default();
                parse(input, &mut out);
                let n_physical = split_lines(input).count() as u32;
                let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
                if input.trim_ascii_start().starts_with(b"{") {
                    assert!(n_counted >= n_physical, "cut at {cut}");
                } else {
                    assert_eq!(n_counted, n_physical, "cut at {cut}");
                }
            }
        }
    }
}
