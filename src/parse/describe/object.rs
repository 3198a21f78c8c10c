//! The state of one describe being read: its entries in the order of their first lines,
//! the keys still open (by indent), the mode the next line is read in, and who the object
//! is (its kind, printed or recognised from its sections, its namespace and name).
//!
//! Invariant: every line read is counted in exactly one entry, either as the first line of
//! a new entry (`push`) or as one more line of an existing one (`n_lines`, through `append`,
//! `fold` or a blank line).

use std::collections::HashSet;

use crate::event::Text;
use crate::parse::row_fold::RowFolder;
use crate::parse::tree::{object_id, Columns, EventRecord};

/// How an entry extends its parent's path.
#[derive(Clone, Debug)]
pub(super) enum Seg {
    /// `parent.key` (or `parent[i].key` inside a list of maps).
    Key(String),
    /// An absolute path (`metadata.labels.<k>`).
    Abs(String),
    /// `parent[cell]` (a table row).
    Bracket(String),
    /// `parent[i]` (a list-of-scalars element).
    Bare,
}

#[derive(Clone, Debug)]
pub(super) enum Shape {
    Fact,
    Row(Vec<(Text, Text)>),
    Record(Box<EventRecord>),
    Raw,
}

#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) line: u32,
    pub(super) n_lines: u32,
    pub(super) message: String,
    pub(super) parent: Option<usize>,
    pub(super) seg: Seg,
    /// `None` for a section with nested content.
    pub(super) value: Option<String>,
    pub(super) shape: Shape,
    /// The key's value is the first of several at its value column (`Tolerations`).
    pub(super) value_list: bool,
    /// Element index inside a list of maps, set once the object is read.
    pub(super) elem: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ListKind {
    Labels,
    Annotations,
    Plain,
}

#[derive(Clone, Debug, Default)]
pub(super) enum Mode {
    #[default]
    Normal,
    /// Just read a key with an inline value.
    AfterValue {
        entry: usize,
        indent: usize,
        value_col: usize,
    },
    /// Inside a value printed raw over several lines.
    MultiLine { entry: usize, indent: usize },
    /// More values at the value column of `entry` (labels, annotations, tolerations).
    ValueList {
        entry: usize,
        value_col: usize,
        kind: ListKind,
        last: usize,
    },
    /// A table section's key: its header may follow.
    PendingTable { section: usize, indent: usize },
    Table {
        section: usize,
        indent: usize,
        cols: Columns,
        events: bool,
    },
}

#[derive(Default)]
pub(super) struct Object {
    pub(super) entries: Vec<Entry>,
    /// Open keys: (indent, entry).
    pub(super) frames: Vec<(usize, usize)>,
    pub(super) mode: Mode,
    /// A `Kind:` line was printed: the generic printer, whose keys never have children.
    pub(super) kind: Option<String>,
    pub(super) unparsed: u64,
    /// Groups of `Events:` rows, when they are folded; when they are not, the rows of a
    /// top-level `Events:` table are emitted as they are read.
    pub(super) folder: RowFolder,
    /// Entries already emitted: the first `emitted` of `entries` (rows emitted as they were
    /// read are no longer there).
    pub(super) emitted: usize,
    /// The last entry is a row still to emit: the next row or the object's end settles it
    /// (blank lines after it are its own).
    pub(super) pending_row: bool,
    /// Who the events are about, settled once rows start to go.
    pub(super) identity: Option<Identity>,
}

/// Who an object's events are about.
#[derive(Debug)]
pub(super) struct Identity {
    pub(super) kind: String,
    pub(super) namespace: String,
    pub(super) name: String,
    /// `kind/namespace/name`, when kind and name are known.
    pub(super) object: Option<String>,
}

impl Object {
    pub(super) fn push(
        &mut self,
        line: u32,
        content: &str,
        parent: Option<usize>,
        seg: Seg,
        value: Option<String>,
        shape: Shape,
    ) -> usize {
        self.pending_row = false;
        self.entries.push(Entry {
            line,
            n_lines: 1,
            message: content.to_string(),
            parent,
            seg,
            value,
            shape,
            value_list: false,
            elem: None,
        });
        self.entries.len() - 1
    }

    /// A blank line: part of a multi-line value, else folded into the previous entry.
    pub(super) fn blank(&mut self, no: u32) {
        if let Mode::MultiLine { entry, .. } = self.mode {
            self.append(entry, "");
            return;
        }
        match self.entries.last_mut() {
            Some(last) => last.n_lines += 1,
            None => {
                self.push(no, "", None, Seg::Bare, None, Shape::Raw);
            }
        }
    }

    /// A continuation line of an entry's value, kept as printed.
    pub(super) fn append(&mut self, entry: usize, text: &str) {
        let Some(e) = self.entries.get_mut(entry) else {
            return;
        };
        e.n_lines += 1;
        if e.message.len() < crate::parse::lines::MAX_MESSAGE_BYTES {
            e.message.push('\n');
            e.message.push_str(text);
            match e.value.as_mut() {
                Some(value) if !value.is_empty() => {
                    value.push('\n');
                    value.push_str(text);
                }
                // A value that starts on the line below its key (a long annotation).
                _ => e.value = Some(text.trim_start().to_string()),
            }
        }
    }

    /// A structural line (table header, `----`, a note) folded into its section.
    pub(super) fn fold(&mut self, entry: usize, content: &str) {
        if let Some(e) = self.entries.get_mut(entry) {
            e.n_lines += 1;
            e.message.push('\n');
            e.message.push_str(content);
        }
    }

    /// The key as printed on the entry's first line.
    pub(super) fn key_text(&self, entry: usize) -> &str {
        self.entries
            .get(entry)
            .and_then(|e| e.message.split(':').next())
            .unwrap_or("")
    }

    /// The kind: printed (`Kind:`), or recognised from the typed describer's sections.
    fn kind_name(&self) -> String {
        if let Some(kind) = &self.kind {
            return kind.clone();
        }
        let tops: HashSet<&str> = self
            .entries
            .iter()
            .filter(|e| e.parent.is_none() && !matches!(e.shape, Shape::Raw))
            .filter_map(|e| e.message.split(':').next())
            .collect();
        let has = |k: &str| tops.contains(k);
        let kind = if has("Containers") && (has("QoS Class") || has("Start Time") || has("IP")) {
            "Pod"
        } else if has("Capacity")
            || has("Allocatable")
            || has("Non-terminated Pods")
            || has("PodCIDR")
        {
            "Node"
        } else if has("StrategyType") {
            "Deployment"
        } else if has("Completions") || has("Pods Statuses") && has("Parallelism") {
            "Job"
        } else if has("Pod Template") && has("Replicas") {
            "ReplicaSet"
        } else if has("TargetPort") || has("IP Families") {
            "Service"
        } else {
            ""
        };
        kind.to_string()
    }

    /// Who the events are about, from what has been read.
    pub(super) fn identity(&self) -> Identity {
        let kind = self.kind_name();
        let value_of = |path: &str| {
            self.entries
                .iter()
                .find(|e| matches!(&e.seg, Seg::Abs(p) if p == path))
                .and_then(|e| e.value.clone())
                .unwrap_or_default()
        };
        let (namespace, name) = (value_of("metadata.namespace"), value_of("metadata.name"));
        let object = object_id(&kind, &namespace, &name);
        Identity {
            kind,
            namespace,
            name,
            object,
        }
    }
}
