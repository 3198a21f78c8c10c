//! The lines outside tables: `Key: value` lines, sections nested by indent, values printed
//! raw over several lines (an embedded serveConfigV2, a Serve traceback) and value lists
//! (labels, annotations, tolerations: more values at the key's value column). Also the
//! grammar of a key line and of a label or annotation.
//!
//! A raw multi-line value ends only at a line that reads as a key where one can be: at column
//! 0 a known top-level key (or, under the typed printers, any title-case key), deeper a key
//! at the indent of a key still open; so `ValueError: …` inside a traceback stays part of
//! the value.

use super::object::{ListKind, Mode, Object, Seg, Shape};
use super::tables::TABLE_KEYS;
use crate::parse::tree::norm_key;

/// Top-level keys of every describer; inside a raw multi-line value, only these end it at
/// column 0 (a traceback's `ValueError: …` must not).
const TOP_KEYS: &[&str] = &[
    "Name",
    "Namespace",
    "Labels",
    "Annotations",
    "API Version",
    "Kind",
    "Metadata",
    "Spec",
    "Status",
    "Events",
    "Priority",
    "Priority Class Name",
    "Runtime Class Name",
    "Service Account",
    "Node",
    "Start Time",
    "Reason",
    "Message",
    "IP",
    "IPs",
    "Controlled By",
    "Init Containers",
    "Containers",
    "Conditions",
    "Volumes",
    "QoS Class",
    "Node-Selectors",
    "Tolerations",
    "Roles",
    "CreationTimestamp",
    "Taints",
    "Unschedulable",
    "Lease",
    "Addresses",
    "Capacity",
    "Allocatable",
    "System Info",
    "PodCIDR",
    "PodCIDRs",
    "ProviderID",
    "Non-terminated Pods",
    "Allocated resources",
    "Selector",
    "Replicas",
    "StrategyType",
    "Pod Template",
    "Type",
    "Data",
    "Nominated Node Name",
    "Readiness Gates",
];

impl Object {
    /// A line read with no special context.
    pub(super) fn normal(&mut self, no: u32, indent: usize, content: &str) {
        while self.frames.last().is_some_and(|&(i, _)| i >= indent) {
            self.frames.pop();
        }
        let parent = self.frames.last().map(|&(_, e)| e);
        let Some((key, value, value_col)) = split_key(content) else {
            let under_section = parent
                .and_then(|p| self.entries.get(p))
                .is_some_and(|p| p.value.is_none());
            if under_section {
                self.push(
                    no,
                    content,
                    parent,
                    Seg::Bare,
                    Some(content.to_string()),
                    Shape::Fact,
                );
            } else {
                self.unparsed += 1;
                self.push(no, content, None, Seg::Bare, None, Shape::Raw);
            }
            return;
        };
        let value_col = indent + value_col;
        let top = indent == 0;
        let (seg, value) = match key {
            "Name" if top => (Seg::Abs("metadata.name".into()), value.to_string()),
            "Namespace" if top => (Seg::Abs("metadata.namespace".into()), value.to_string()),
            "Labels" if top => label(value),
            "Annotations" if top => annotation(value),
            _ => (Seg::Key(norm_key(key)), value.to_string()),
        };
        if top && key == "Kind" {
            self.kind = Some(value.clone());
        }
        let has_value = !value.is_empty();
        let entry = self.push(
            no,
            content,
            parent,
            seg,
            has_value.then_some(value.clone()),
            Shape::Fact,
        );
        if let Some(e) = self.entries.get_mut(entry) {
            e.line = no;
        }
        self.frames.push((indent, entry));
        let table = TABLE_KEYS.contains(&key) && (!has_value || value.starts_with('('));
        let list = match key {
            "Labels" if top => Some(ListKind::Labels),
            "Annotations" if top => Some(ListKind::Annotations),
            _ => None,
        };
        self.mode = if let Some(kind) = list.filter(|_| value_col > indent + key.len() + 1) {
            // Even `Annotations:  long-key:` (its value on the lines below) is a leaf.
            if let Some(e) = self.entries.get_mut(entry) {
                e.value.get_or_insert_with(String::new);
            }
            Mode::ValueList {
                entry,
                value_col,
                kind,
                last: entry,
            }
        } else if table {
            Mode::PendingTable {
                section: entry,
                indent,
            }
        } else if has_value {
            Mode::AfterValue {
                entry,
                indent,
                value_col,
            }
        } else {
            Mode::Normal
        };
    }

    /// Whether a line ends a raw multi-line value that started on key `entry` at `k`.
    pub(super) fn ends_value(&self, indent: usize, content: &str, entry: usize, k: usize) -> bool {
        let Some((key, value, _)) = split_key(content) else {
            return false;
        };
        if indent > k {
            return false;
        }
        if indent == 0 {
            // The typed printers have many more top-level keys; their raw values are rare.
            return TOP_KEYS.contains(&key) || (self.kind.is_none() && is_title_key(key));
        }
        if !self.frames.iter().any(|&(i, _)| i == indent) {
            return false;
        }
        if is_title_key(key) {
            return true;
        }
        // A verbatim key (`fruit_app:`, `math_app_Adder:`) ends the value only as the next
        // map key above it, or as a sibling of a verbatim key: embedded YAML such as
        // `runtime_env:` sits at the key's own indent.
        let verbatim = !key.contains(' ');
        let started_verbatim = !self.key_text(entry).contains(' ');
        verbatim && ((indent < k && value.is_empty()) || (indent == k && started_verbatim))
    }

    pub(super) fn list_kind(&self, entry: usize) -> ListKind {
        let top = self
            .frames
            .first()
            .is_some_and(|&(i, e)| i == 0 && e == entry);
        match self.key_text(entry) {
            "Labels" if top => ListKind::Labels,
            "Annotations" if top => ListKind::Annotations,
            _ => ListKind::Plain,
        }
    }

    /// One more value at a key's value column, or a continuation of the last one.
    pub(super) fn value_list_line(&mut self, no: u32, indent: usize, content: &str, text: &str) {
        let Mode::ValueList {
            entry,
            value_col,
            kind,
            last,
        } = self.mode.clone()
        else {
            return;
        };
        let new = match kind {
            _ if indent > value_col => None,
            ListKind::Labels => content.contains('=').then(|| label(content)),
            ListKind::Annotations => annotation_key(content).map(|_| annotation(content)),
            ListKind::Plain => Some((Seg::Bare, content.to_string())),
        };
        match new {
            Some((seg, value)) => {
                let parent = match kind {
                    ListKind::Plain => {
                        if let Some(e) = self.entries.get_mut(entry) {
                            e.value_list = true;
                        }
                        Some(entry)
                    }
                    _ => None,
                };
                let idx = self.push(no, content, parent, seg, Some(value), Shape::Fact);
                self.mode = Mode::ValueList {
                    entry,
                    value_col,
                    kind,
                    last: idx,
                };
            }
            None => self.append(last, text),
        }
    }
}

/// `Key:  value` → (key, value, byte offset of the value). A key is not empty, holds no
/// double space and does not start like a value (`-`, `(`, quotes, `/`).
pub(super) fn split_key(content: &str) -> Option<(&str, &str, usize)> {
    let bytes = content.as_bytes();
    let colon = (0..bytes.len())
        .find(|&i| bytes.get(i) == Some(&b':') && matches!(bytes.get(i + 1), None | Some(b' ')))?;
    let key = content.get(..colon)?;
    let first = key.chars().next()?;
    if "-([{\"'/#<*".contains(first)
        || key.contains("  ")
        || key.ends_with(' ')
        || key.len() > 100
        || !key.chars().any(|c| c.is_alphanumeric())
    {
        return None;
    }
    let rest = content.get(colon + 1..).unwrap_or("");
    let value = rest.trim_start();
    let offset = colon + 1 + (rest.len() - value.len());
    Some((key, value.trim_end(), offset))
}

/// A key as `smartLabelFor` prints it: capitalised words of letters, digits and `-`, with no
/// camel-case hump inside a word (`Last Update Time`, `Serve Config V2`, `Dashboard - Host`).
fn is_title_key(key: &str) -> bool {
    key.split(' ').all(|word| {
        let mut chars = word.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-');
        let body_ok = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        let hump = word
            .as_bytes()
            .windows(2)
            .any(|w| matches!(w, [a, b] if a.is_ascii_lowercase() && b.is_ascii_uppercase()));
        first_ok && body_ok && !hump
    })
}

/// `Labels:  k=v` → `metadata.labels.k` = v.
fn label(value: &str) -> (Seg, String) {
    match value.split_once('=') {
        Some((k, v)) if !value.starts_with('<') => {
            (Seg::Abs(format!("metadata.labels.{k}")), v.to_string())
        }
        _ => (Seg::Abs("metadata.labels".to_string()), value.to_string()),
    }
}

/// The key of an annotation line `k: v` or `k:` (no spaces in the key).
fn annotation_key(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    let ok = !k.is_empty() && !k.contains(' ') && (v.is_empty() || v.starts_with(' '));
    ok.then(|| (k, v.trim()))
}

/// `Annotations:  k: v` → `metadata.annotations.k` = v.
fn annotation(value: &str) -> (Seg, String) {
    match annotation_key(value) {
        Some((k, v)) => (Seg::Abs(format!("metadata.annotations.{k}")), v.to_string()),
        None => (
            Seg::Abs("metadata.annotations".to_string()),
            value.to_string(),
        ),
    }
}
