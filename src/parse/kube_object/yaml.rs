//! The lenient YAML flattener: one pass over the lines with a stack of open containers, no
//! YAML crate. It reads block maps and sequences, `---` / `...` documents, plain, quoted,
//! block (`|`, `>`) and flow (`[…]`, `{…}`) scalars and comments; it drops anchors and tags,
//! keeps aliases as text, and skips a `managedFields` block as one structural leaf.
//!
//! Invariant: it never recurses, and each line goes to at most one leaf (a scalar's
//! continuation lines into its message); a line it does not understand becomes a raw leaf.

use std::borrow::Cow;

use super::Leaf;
use crate::parse::tree::{join_path, norm_key};

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
                return (!key.is_empty()).then(|| (key.to_string(), s.get(at + 1..).unwrap_or("")));
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
            if c.is_empty() || c.starts_with('#') || ind > indent || (ind == indent && is_dash(c)) {
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
    fn quoted(&self, idx: usize, indent: usize, v: &str, quote: char) -> (String, String, usize) {
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

/// The head of a line that opens a block scalar, as written (`message:` of `message: |-`,
/// `- script:` of `- script: >`); `None` for any other line. The fact such a line starts holds
/// the block's text as its value, its indicator and indentation gone: a reader that shows the
/// value puts it after this head, where the indicator stood.
pub fn block_scalar_head(line: &str) -> Option<&str> {
    let (_, content) = split_indent(line);
    let mut rest = content;
    while is_dash(rest) {
        rest = rest.get(1..)?.trim_start_matches([' ', '\t']);
    }
    let (_, after) = split_key(rest)?;
    let head = content.get(..content.len() - after.len())?;
    is_block_header(strip_props(after.trim())).then_some(head)
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
