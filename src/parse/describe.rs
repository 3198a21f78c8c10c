//! `kubectl describe` of any kind: the generic printer of custom resources (RayService,
//! RayCluster, RayJob) and the typed printers of Pod, Node and the rest. A file may hold
//! several describes one after another; each starts with `Name:` in column 0.
//!
//! Every `Key: value` line becomes a fact whose `path` is the one the object's YAML gives
//! (`Status` → `status`, `Last State` → `laststate`, `Name` → `metadata.name`), so that rules
//! can read state from either. Lists the generic printer shows without `-` markers get
//! `[i]` indices (a new element starts when a key repeats, or always for well-known list
//! fields such as `conditions`). Multi-line values, which describe prints raw and not
//! re-indented (an embedded serveConfigV2, a Serve traceback), stay one fact. Tables
//! (`Conditions`, `Non-terminated Pods`, `Allocated resources`) give one fact per row with a
//! `col.<header>` field per cell; the `Events:` table gives Kubernetes Event records timed by
//! their age.
//!
//! An object's events are emitted at its end, because its kind (and so the `object` field)
//! and its list shapes are only known then; but when rows are not folded, the rows of a
//! top-level `Events:` table go as they are read, and with them everything before the table:
//! every describer prints `Events:` last, so the object's identity and what comes before it
//! are settled by then, and a table of a million rows holds one. This module does not read
//! YAML, JSON or `kubectl get events` output.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::event::{format_rfc3339, Event, Text};
use crate::parse::lines::{cap_message, decode, split_lines};
use crate::parse::primitives::rfc1123z;
use crate::parse::row_fold::{merge_record, RowFolder};
use crate::parse::tree::{fact, join_path, norm_key, object_id, Columns, EventRecord};
use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    parse_with(input, out, false);
}

/// [`parse`], folding the rows of a huge `Events:` table when `fold` (see
/// [`row_fold`](crate::parse::row_fold)). Lines are read one by one, not gathered first: a describe
/// of a million events rows holds only its objects.
pub fn parse_with(input: &[u8], out: &mut ParseOutput, fold: bool) {
    let mut reader = Reader::new(fold);
    reader.lines(input, 0, out);
    reader.finish(out);
}

/// [`parse_with`] fed its input in pieces of whole lines (`parse::Feed`): a huge describe is
/// read as it arrives, never held whole.
pub struct Reader {
    fold: bool,
    /// The describe being read.
    object: Option<Object>,
}

impl Reader {
    pub fn new(fold: bool) -> Reader {
        Reader { fold, object: None }
    }

    /// Reads the lines of `input`, numbered after the `before` lines already read.
    pub fn lines(&mut self, input: &[u8], before: u32, out: &mut ParseOutput) {
        for (no, raw) in split_lines(input) {
            let no = no.saturating_add(before);
            let text = decode(raw);
            // A `Name:` line in column 0 starts the next describe.
            if Some(&(no, text.clone())).is_none_or_name() {
                if let Some(done) = self.object.take() {
                    done.emit(out);
                }
            }
            let fold = self.fold;
            self.object
                .get_or_insert_with(|| Object {
                    folder: RowFolder::new(fold),
                    ..Object::default()
                })
                .line(no, &text, out);
        }
    }

    /// Emits the describe read last.
    pub fn finish(self, out: &mut ParseOutput) {
        if let Some(done) = self.object {
            done.emit(out);
        }
    }
}

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

/// Sections printed as tables by the typed describers.
const TABLE_KEYS: &[&str] = &[
    "Events",
    "Conditions",
    "Non-terminated Pods",
    "Allocated resources",
];

/// Fields that are lists in the API: a single element still gets `[0]`, as in YAML.
const KNOWN_LISTS: &[&str] = &[
    "conditions",
    "ownerreferences",
    "workergroupspecs",
    "containers",
    "initcontainers",
    "env",
    "envfrom",
    "ports",
    "volumemounts",
    "volumes",
    "tolerations",
    "imagepullsecrets",
    "finalizers",
    "args",
    "command",
    "items",
    "containerstatuses",
    "initcontainerstatuses",
    "hostaliases",
    "readinessgates",
    "podips",
    "managedfields",
];

trait NameBoundary {
    fn is_none_or_name(&self) -> bool;
}

impl NameBoundary for Option<&(u32, Cow<'_, str>)> {
    /// End of input, or a `Name:` line in column 0 (the first line of a describe).
    fn is_none_or_name(&self) -> bool {
        match self {
            None => true,
            Some((_, text)) => text
                .strip_prefix("Name:")
                .is_some_and(|r| r.is_empty() || r.starts_with(' ')),
        }
    }
}

/// How an entry extends its parent's path.
#[derive(Clone, Debug)]
enum Seg {
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
enum Shape {
    Fact,
    Row(Vec<(Text, Text)>),
    Record(Box<EventRecord>),
    Raw,
}

#[derive(Clone, Debug)]
struct Entry {
    line: u32,
    n_lines: u32,
    message: String,
    parent: Option<usize>,
    seg: Seg,
    /// `None` for a section with nested content.
    value: Option<String>,
    shape: Shape,
    /// The key's value is the first of several at its value column (`Tolerations`).
    value_list: bool,
    /// Element index inside a list of maps, set once the object is read.
    elem: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListKind {
    Labels,
    Annotations,
    Plain,
}

#[derive(Clone, Debug, Default)]
enum Mode {
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
struct Object {
    entries: Vec<Entry>,
    /// Open keys: (indent, entry).
    frames: Vec<(usize, usize)>,
    mode: Mode,
    /// A `Kind:` line was printed: the generic printer, whose keys never have children.
    kind: Option<String>,
    unparsed: u64,
    /// Groups of `Events:` rows, when they are folded; when they are not, the rows of a
    /// top-level `Events:` table are emitted as they are read.
    folder: RowFolder,
    /// Entries already emitted: the first `emitted` of `entries` (rows emitted as they were
    /// read are no longer there).
    emitted: usize,
    /// The last entry is a row still to emit: the next row or the object's end settles it
    /// (blank lines after it are its own).
    pending_row: bool,
    /// Who the events are about, settled once rows start to go.
    identity: Option<Identity>,
}

/// Who an object's events are about.
#[derive(Debug)]
struct Identity {
    kind: String,
    namespace: String,
    name: String,
    /// `kind/namespace/name`, when kind and name are known.
    object: Option<String>,
}

impl Object {
    fn line(&mut self, no: u32, raw: &str, out: &mut ParseOutput) {
        let text = raw.trim_end();
        if text.trim_start().is_empty() {
            self.blank(no);
            return;
        }
        let indent = text.len() - text.trim_start_matches(' ').len();
        let content = text.get(indent..).unwrap_or(text);
        match std::mem::take(&mut self.mode) {
            Mode::Normal => {}
            Mode::AfterValue {
                entry,
                indent: k,
                value_col,
            } => {
                let typed = self.kind.is_none();
                if indent == value_col && value_col > k {
                    let kind = self.list_kind(entry);
                    if kind != ListKind::Plain || typed {
                        self.mode = Mode::ValueList {
                            entry,
                            value_col,
                            kind,
                            last: entry,
                        };
                        self.value_list_line(no, indent, content, text);
                        return;
                    }
                }
                let child = typed && indent > k && split_key(content).is_some();
                if !child && !self.ends_value(indent, content, entry, k) {
                    self.append(entry, text);
                    self.mode = Mode::MultiLine { entry, indent: k };
                    return;
                }
            }
            Mode::MultiLine { entry, indent: k } => {
                if !self.ends_value(indent, content, entry, k) {
                    self.append(entry, text);
                    self.mode = Mode::MultiLine { entry, indent: k };
                    return;
                }
            }
            Mode::ValueList {
                entry,
                value_col,
                kind,
                last,
            } => {
                if indent >= value_col {
                    self.mode = Mode::ValueList {
                        entry,
                        value_col,
                        kind,
                        last,
                    };
                    self.value_list_line(no, indent, content, text);
                    return;
                }
            }
            Mode::PendingTable { section, indent: k } => {
                if indent > k && content.starts_with('(') && content.ends_with(')') {
                    self.fold(section, content);
                    self.mode = Mode::PendingTable { section, indent: k };
                    return;
                }
                if indent > k && split_key(content).is_none() {
                    if let Some(cols) = Columns::from_header(text) {
                        self.fold(section, content);
                        let events = self.key_text(section) == "Events";
                        self.mode = Mode::Table {
                            section,
                            indent: k,
                            cols,
                            events,
                        };
                        return;
                    }
                }
            }
            Mode::Table {
                section,
                indent: k,
                cols,
                events,
            } => {
                if indent > k {
                    if content.chars().all(|c| c == '-' || c == ' ') {
                        // A rule among rows already emitted with their section: the last
                        // row's.
                        let into = if section < self.emitted {
                            self.entries.len().saturating_sub(1)
                        } else {
                            section
                        };
                        self.fold(into, content);
                    } else {
                        let stream = events && k == 0 && !self.folder.enabled();
                        let after_row = self.pending_row;
                        self.row(no, section, &cols, events, text);
                        if stream {
                            self.stream_row(after_row, out);
                        }
                    }
                    self.mode = Mode::Table {
                        section,
                        indent: k,
                        cols,
                        events,
                    };
                    return;
                }
            }
        }
        self.normal(no, indent, content);
    }

    /// A line read with no special context.
    fn normal(&mut self, no: u32, indent: usize, content: &str) {
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
    fn ends_value(&self, indent: usize, content: &str, entry: usize, k: usize) -> bool {
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

    fn list_kind(&self, entry: usize) -> ListKind {
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
    fn value_list_line(&mut self, no: u32, indent: usize, content: &str, text: &str) {
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

    /// A table row: a fact with one field per column, or an event record.
    fn row(&mut self, no: u32, section: usize, cols: &Columns, events: bool, text: &str) {
        let cells = cols.split(text);
        let content = text.trim();
        if events {
            let cell = |name: &str| {
                cols.index(name)
                    .and_then(|i| cells.get(i))
                    .copied()
                    .unwrap_or("")
            };
            let rec = EventRecord::describe_row(
                cell("Type"),
                cell("Reason"),
                cell("Age"),
                cell("From"),
                cell("Message"),
            );
            if let Some(at) = self.folder.place(&rec, "", self.entries.len()) {
                if let Some(Shape::Record(into)) = self.entries.get_mut(at).map(|e| &mut e.shape) {
                    merge_record(into, &rec);
                }
                return;
            }
            self.push(
                no,
                content,
                Some(section),
                Seg::Bare,
                None,
                Shape::Record(Box::new(rec)),
            );
            return;
        }
        let first = cells.first().copied().unwrap_or("");
        let second = cells.get(1).copied().unwrap_or("");
        let by_name = cols.names.first().is_some_and(|n| n == "Namespace")
            && cols.names.get(1).is_some_and(|n| n == "Name");
        let id = if by_name {
            format!("{first}/{second}")
        } else {
            first.to_string()
        };
        let value = match cols.index("Status") {
            Some(i) => cells.get(i).copied().unwrap_or(""),
            None => second,
        };
        let fields = cols
            .names
            .iter()
            .zip(&cells)
            .map(|(n, c)| (Text::from(format!("col.{}", norm_key(n))), Text::from(*c)))
            .collect();
        self.push(
            no,
            content,
            Some(section),
            Seg::Bracket(id),
            Some(value.to_string()),
            Shape::Row(fields),
        );
    }

    /// The row just pushed sends out what came before it: the row before it (`after_row`),
    /// which nothing can lengthen now, or, for the first row of a table, everything not yet
    /// emitted (its section included).
    fn stream_row(&mut self, after_row: bool, out: &mut ParseOutput) {
        let id = self.identity.take().unwrap_or_else(|| self.identity());
        let n = self.entries.len();
        if after_row && n == self.emitted + 2 {
            // [.., the row before, the row just pushed]: the one goes, the other takes its place.
            let before = self.entries.swap_remove(n - 2);
            emit_entry(before, "", &id, out);
        } else {
            self.emit_up_to(n.saturating_sub(1), &id, out);
        }
        self.identity = Some(id);
        self.pending_row = true;
    }

    /// Emits the entries from the first not yet emitted up to `end`, their list shapes and
    /// paths resolved over every entry read so far (nothing after can change theirs).
    fn emit_up_to(&mut self, end: usize, id: &Identity, out: &mut ParseOutput) {
        if self.emitted >= end {
            return;
        }
        self.shape_lists();
        let paths = self.paths();
        for i in self.emitted..end {
            if let (Some(entry), Some(path)) = (self.entries.get(i), paths.get(i)) {
                emit_entry(entry.clone(), path, id, out);
            }
        }
        self.emitted = end;
    }

    fn push(
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
    fn blank(&mut self, no: u32) {
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
    fn append(&mut self, entry: usize, text: &str) {
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
    fn fold(&mut self, entry: usize, content: &str) {
        if let Some(e) = self.entries.get_mut(entry) {
            e.n_lines += 1;
            e.message.push('\n');
            e.message.push_str(content);
        }
    }

    /// The key as printed on the entry's first line.
    fn key_text(&self, entry: usize) -> &str {
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
    fn identity(&self) -> Identity {
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

    /// Resolves list shapes and paths, then writes the events not yet written.
    fn emit(mut self, out: &mut ParseOutput) {
        let folded: Vec<(usize, u64)> = self.folder.folded().collect();
        for (at, n) in folded {
            if let Some(Shape::Record(rec)) = self.entries.get_mut(at).map(|e| &mut e.shape) {
                rec.extra.push(("folded_rows".into(), n.to_string().into()));
            }
        }
        let id = match self.identity.take() {
            Some(id) => id,
            None => self.identity(),
        };
        self.shape_lists();
        let paths = self.paths();
        let skip = self.emitted;
        for (entry, path) in self.entries.into_iter().zip(paths).skip(skip) {
            emit_entry(entry, &path, &id, out);
        }
        out.unparsed_lines += self.unparsed;
    }

    /// Leaves a key with no value and no children a leaf with an empty value, and numbers
    /// the elements of lists of maps the generic printer shows without markers.
    fn shape_lists(&mut self) {
        let n = self.entries.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (idx, e) in self.entries.iter().enumerate() {
            if let Some(p) = e.parent.filter(|&p| p < n) {
                if let Some(list) = children.get_mut(p) {
                    list.push(idx);
                }
            }
        }
        for (p, kids) in children.iter().enumerate() {
            let Some(parent) = self.entries.get_mut(p) else {
                continue;
            };
            if kids.is_empty() && parent.value.is_none() && matches!(parent.shape, Shape::Fact) {
                parent.value = Some(String::new());
            }
            if self.kind.is_none() || parent.value.is_some() {
                continue;
            }
            let parent_key = match &parent.seg {
                Seg::Key(k) => k.clone(),
                _ => continue,
            };
            let keys: Vec<(usize, String)> = kids
                .iter()
                .filter_map(|&c| match self.entries.get(c).map(|e| &e.seg) {
                    Some(Seg::Key(k)) => Some((c, k.clone())),
                    _ => None,
                })
                .collect();
            let mut seen = HashSet::new();
            let repeats = keys.iter().any(|(_, k)| !seen.insert(k.as_str()));
            if !(repeats || KNOWN_LISTS.contains(&parent_key.as_str())) {
                continue;
            }
            let mut elem = 0;
            let mut seen = HashSet::new();
            for (c, k) in keys {
                if !seen.insert(k.clone()) {
                    elem += 1;
                    seen.clear();
                    seen.insert(k);
                }
                if let Some(child) = self.entries.get_mut(c) {
                    child.elem = Some(elem);
                }
            }
        }
    }

    fn paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = Vec::with_capacity(self.entries.len());
        let mut n_bare: Vec<usize> = vec![0; self.entries.len()];
        for e in &self.entries {
            let parent = e
                .parent
                .and_then(|p| paths.get(p))
                .map_or("", String::as_str);
            let path = match &e.seg {
                Seg::Abs(p) => p.clone(),
                Seg::Key(k) => {
                    let base = match e.elem {
                        Some(i) => format!("{parent}[{i}]"),
                        None => parent.to_string(),
                    };
                    let path = join_path(&base, k);
                    if e.value_list {
                        format!("{path}[0]")
                    } else {
                        path
                    }
                }
                Seg::Bracket(id) => format!("{parent}[{id}]"),
                Seg::Bare => match e.parent {
                    Some(p) => {
                        let first = self.entries.get(p).is_some_and(|p| p.value_list);
                        let count = n_bare.get_mut(p);
                        let i = count.map_or(0, |c| {
                            *c += 1;
                            *c - 1
                        }) + usize::from(first);
                        let own = paths.get(p).map_or("", String::as_str);
                        let own = own.strip_suffix("[0]").filter(|_| first).unwrap_or(own);
                        format!("{own}[{i}]")
                    }
                    None => String::new(),
                },
            };
            paths.push(path);
        }
        paths
    }
}

/// The event of one entry, whose path is `path`, of the object `id`.
fn emit_entry(entry: Entry, path: &str, id: &Identity, out: &mut ParseOutput) {
    let Entry {
        line,
        n_lines,
        mut message,
        value,
        shape,
        ..
    } = entry;
    match shape {
        Shape::Raw => {
            cap_message(&mut message);
            let mut ev = Event::new(line, message);
            ev.n_lines = n_lines;
            out.events.push(ev);
        }
        Shape::Record(rec) => {
            let mut rec = *rec;
            rec.object = id.object.clone().unwrap_or_default();
            rec.object_kind.clone_from(&id.kind);
            rec.object_name.clone_from(&id.name);
            rec.namespace.clone_from(&id.namespace);
            out.events.push(rec.into_event(line, n_lines));
        }
        Shape::Fact | Shape::Row(_) => {
            let value = value.map(|v| v.trim_end().to_string());
            let time = value.as_deref().and_then(|v| match rfc1123z(v) {
                Ok(("", t)) => Some(format_rfc3339(t)),
                _ => None,
            });
            let mut ev = fact(
                line,
                n_lines,
                message.trim_end().to_string(),
                path,
                value,
                id.object.as_deref(),
            );
            if let Some(time) = time {
                ev.fields.push(("time_utc".into(), time.into()));
            }
            if let Shape::Row(cols) = shape {
                ev.fields.extend(cols);
            }
            out.events.push(ev);
        }
    }
}

/// `Key:  value` → (key, value, byte offset of the value). A key is not empty, holds no
/// double space and does not start like a value (`-`, `(`, quotes, `/`).
fn split_key(content: &str) -> Option<(&str, &str, usize)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RawTime;

    /// One line per event: line, n_lines, time, level, kind, component, fields | message.
    fn render(out: &ParseOutput) -> String {
        let mut s = String::new();
        for ev in &out.events {
            let time = match ev.raw_time {
                Some(RawTime::Age { secs }) => format!("age={secs}"),
                Some(other) => format!("{other:?}"),
                None => "-".to_string(),
            };
            let fields: Vec<String> = ev
                .fields
                .iter()
                .filter(|(k, _)| k != "object" || !ev.fields.iter().any(|(k, _)| k == "path"))
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
        let objects: std::collections::BTreeSet<&str> = out
            .events
            .iter()
            .filter(|e| e.field("path").is_some())
            .filter_map(|e| e.field("object"))
            .collect();
        for o in objects {
            s.push_str(&format!("object {o}\n"));
        }
        if out.unparsed_lines > 0 {
            s.push_str(&format!("unparsed={}\n", out.unparsed_lines));
        }
        s.chars()
            .map(|c| if c.is_control() && c != '\n' { '·' } else { c })
            .collect()
    }

    #[track_caller]
    fn check(input: &str, expect: &str) {
        let mut out = ParseOutput::default();
        parse(input.as_bytes(), &mut out);
        let n_physical = split_lines(input.as_bytes()).count() as u32;
        let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
        assert_eq!(n_counted, n_physical, "every line in exactly one event");
        let got = render(&out);
        if got.trim_end() != expect.trim() {
            println!("{got}");
        }
        assert_eq!(got.trim_end(), expect.trim());
    }

    const RAYSERVICE_V1_3: &str = r#"Name:         rayservice-sample
Namespace:    default
Labels:       <none>
Annotations:  ray.io/initializing-timeout: 5m
API Version:  ray.io/v1
Kind:         RayService
Metadata:
  Creation Timestamp:  2025-01-10T09:00:00Z
  Generation:          1
  Resource Version:    12345
  UID:                 0b8e6c2a-1111-2222-3333-444455556666
Spec:
  Ray Cluster Config:
    Head Group Spec:
      Ray Start Params:
        Dashboard - Host:  0.0.0.0
    Ray Version:           2.41.0
  Serve Config V2:         applications:
- name: fruit_app
  import_path: fruit.deployment_graph
  route_prefix: /fruit
  runtime_env:
    working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da.zip"
  deployments:
  - name: MangoStand
    num_replicas: 1

Status:
  Active Service Status:
    Application Statuses:
      fruit_app:
        Message:  Deploying app 'fruit_app' failed with exception:
Traceback (most recent call last):
  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/application_state.py", line 1027, in build_serve_application
    app = call_app_builder_with_args_if_necessary(import_attr(import_path), args)
ModuleNotFoundError: No module named 'fruit'

        Serve Deployment Statuses:
          Mango Stand:
            Message:  Deployment 'MangoStand' in application 'fruit_app' has 1 replicas that have taken more than 30s to be scheduled.
            Status:   UPDATING
        Status:       DEPLOY_FAILED
      math_app:
        Status:            RUNNING
    Ray Cluster Name:  rayservice-sample-raycluster-bwrp8
  Conditions:
    Last Transition Time:  2025-01-10T09:00:05Z
    Message:               RayService is initializing and will be marked as failed if it is not ready within 5m0s
    Observed Generation:   1
    Reason:                Initializing
    Status:                False
    Type:                  Ready
    Last Transition Time:  2025-01-10T09:00:05Z
    Message:               Active Ray cluster exists and no pending Ray cluster
    Observed Generation:   1
    Reason:                NoPendingCluster
    Status:                False
    Type:                  UpgradeInProgress
  Observed Generation:     1
  Pending Service Status:
  Service Status:          
Events:
  Type     Reason                           Age                  From                   Message
  ----     ------                           ----                 ----                   -------
  Normal   CreatedRayCluster                5m                   rayservice-controller  Created RayCluster default/rayservice-sample-raycluster-bwrp8
  Warning  FailedToUpdateServeApplications  2m10s (x12 over 4m)  rayservice-controller  Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-bwrp8: Put "http://rayservice-sample-raycluster-bwrp8-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.96.1.2:8265: connect: connection refused
"#;

    const RAYSERVICE_V0_6: &str = r#"Name:         rayservice-sample
Namespace:    default
Labels:       <none>
Annotations:  <none>
API Version:  ray.io/v1alpha1
Kind:         RayService
Status:
  Active Service Status:
    Application Statuses:
      fruit_app:
        Health Last Update Time:  2023-07-11T22:21:24Z
        Last Update Time:         2023-07-11T22:21:24Z
        Serve Deployment Statuses:
          fruit_app_DAGDriver:
            Health Last Update Time:  2023-07-11T22:21:24Z
            Last Update Time:         2023-07-11T22:21:24Z
            Status:                   HEALTHY
          fruit_app_FruitMarket:
            Health Last Update Time:  2023-07-11T22:21:24Z
            Last Update Time:         2023-07-11T22:21:24Z
            Message:                  The Deployment failed to start 3 times in a row. This may be due to a problem with its constructor or initial health check failing. See controller logs for details. Error:
ray::ServeReplica:fruit_app_FruitMarket.initialize_and_get_metadata() (pid=2541, ip=10.244.0.7, actor_id=9ba0e3e5d7c1)
  File "/home/ray/anaconda3/lib/python3.8/concurrent/futures/_base.py", line 437, in result
RuntimeError: boom
            Status:                   UNHEALTHY
        Status:                       RUNNING
    Dashboard Status:
      Health Last Update Time:  2023-07-11T22:21:24Z
      Is Healthy:               true
      Last Update Time:         2023-07-11T22:21:24Z
    Ray Cluster Name:           rayservice-sample-raycluster-6mj28
  Service Status:               Running
Events:
  Type    Reason   Age                    From                   Message
  ----    ------   ----                   ----                   -------
  Normal  Running  2m15s (x29791 over 16h)  rayservice-controller  The Serve applicaton is now running and healthy.
"#;

    const RAYSERVICE_GENERATED: &str = r#"Name:         rayservice-sample
Namespace:    default
API Version:  ray.io/v1
Kind:         RayService
Spec:
  Service Unhealthy Second Threshold:      900
  Deployment Unhealthy Second Threshold:   300
  Serve Config V2:                         applications:
  - name: fruit_app
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    runtime_env:
      working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da38796123d9f9ffff59bab2792a043e95.zip"
  - name: math_app
    import_path: conditional_dag.serve_dag
    route_prefix: /calc
Status:
  Active Service Status:
    Application Statuses:
      fruit_app:
        Health Last Update Time:  2024-06-07T21:16:56Z
        Status:                   DEPLOYING
      math_app:
        Health Last Update Time:  2024-06-07T21:16:56Z
        Status:                   RUNNING
    Ray Cluster Name:             rayservice-sample-raycluster-nrqvj
  Pending Service Status:
    Ray Cluster Name:             rayservice-sample-raycluster-hnz7k
  Service Status:                 Restarting
Events:
  Type    Reason             Age  From                   Message
  ----    ------             ---  ----                   -------
  Normal  CreatedRayCluster  31m  rayservice-controller  Created RayCluster default/rayservice-sample-raycluster-hnz7k
"#;

    const RAYCLUSTER_V1_3: &str = r#"Name:         raycluster-kuberay
Namespace:    default
Labels:       app.kubernetes.io/instance=raycluster
Annotations:  <none>
API Version:  ray.io/v1
Kind:         RayCluster
Spec:
  Head Group Spec:
    Template:
      Spec:
        Containers:
          Image:  rayproject/ray:2.41.0
          Name:   ray-head
          Ports:
            Container Port:  6379
            Name:            gcs-server
            Protocol:        TCP
            Container Port:  8265
            Name:            dashboard
            Protocol:        TCP
  Suspend:  true
Status:
  Conditions:
    Last Transition Time:   2026-03-03T03:00:25Z
    Message:                RayCluster Pods are being provisioned for first time
    Reason:                 RayClusterPodsProvisioning
    Status:                 False
    Type:                   RayClusterProvisioned
    Last Transition Time:   2026-03-03T03:00:25Z
    Message:
    Reason:                 RayClusterSuspended
    Status:                 False
    Type:                   RayClusterSuspended
  Desired CPU:              0
  State:                    suspended
Events:
  Type    Reason            Age   From                   Message
  ----    ------            ----  ----                   -------
  Normal  CreatedService    43m   raycluster-controller  Created service default/raycluster-kuberay-head-svc
  Normal  CreatedHeadPod    43m   raycluster-controller  Created head Pod default/raycluster-kuberay-head-l7v7q
  Normal  CreatedWorkerPod  43m   raycluster-controller  Created worker Pod default/
"#;

    const PODS: &str = r#"Name:             rayservice-sample-raycluster-bwrp8-head-x7k2p
Namespace:        default
Priority:         0
Service Account:  default
Node:             gke-ray-pool-1-5d2a/10.128.0.9
Start Time:       Tue, 02 Jul 2024 22:16:22 +0800
Labels:           ray.io/cluster=rayservice-sample-raycluster-bwrp8
                  ray.io/node-type=head
Annotations:      <none>
Status:           Running
IP:               10.244.1.15
Controlled By:    RayCluster/rayservice-sample-raycluster-bwrp8
Init Containers:
  wait-gcs-ready:
    Image:          rayproject/ray:2.41.0
    State:          Terminated
      Reason:       Completed
      Exit Code:    0
    Ready:          True
    Restart Count:  0
Containers:
  ray-head:
    Image:          rayproject/ray:2.41.0
    Ports:          6379/TCP, 8265/TCP, 10001/TCP
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       OOMKilled
      Message:      Some Ray subprocesses exited unexpectedly:
  raylet [exit code=1]
Remaining processes will be killed.

      Exit Code:    137
      Started:      Tue, 02 Jul 2024 22:20:01 +0800
      Finished:     Tue, 02 Jul 2024 22:24:13 +0800
    Ready:          False
    Restart Count:  5
    Limits:
      memory:  2Gi
    Liveness:   exec [bash -c wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success && wget --tries 1 -T 2 -q -O- http://localhost:8265/api/gcs_healthz | grep success] delay=30s timeout=5s period=5s #success=1 #failure=120
    Environment:  <none>
Conditions:
  Type              Status
  Initialized       True 
  Ready             False 
  ContainersReady   False 
  PodScheduled      True 
QoS Class:        Burstable
Events:
  Type     Reason     Age                   From               Message
  ----     ------     ----                  ----               -------
  Normal   Scheduled  22m                   default-scheduler  Successfully assigned default/rayservice-sample-raycluster-bwrp8-head-x7k2p to gke-ray-pool-1-5d2a
  Warning  BackOff    2m26s (x87 over 20m)  kubelet            spec.containers{ray-head}: Back-off restarting failed container ray-head in pod rayservice-sample-raycluster-bwrp8-head-x7k2p_default(3f1c)
  Normal   Killing    <unknown>             kubelet, node-1    Stopping container ray-head

Name:                      rayservice-sample-raycluster-bwrp8-worker-small-zt9q4
Namespace:                 default
Status:                    Terminating (lasts 3m)
Termination Grace Period:  30s
Reason:                    Evicted
Message:                   The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi.
IP:                        
Containers:
  ray-worker:
    State:          Terminated
      Reason:       ContainerStatusUnknown
      Exit Code:    137
QoS Class:                 BestEffort
Tolerations:               node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                           node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
Events:                    <none>
"#;

    const NODE: &str = r#"Name:               gke-ray-pool-2-03899cad-ccwh
Roles:              <none>
Labels:             cloud.google.com/gke-nodepool=ray-pool-2
                    kubernetes.io/hostname=gke-ray-pool-2-03899cad-ccwh
Annotations:        node.alpha.kubernetes.io/ttl: 0
CreationTimestamp:  Fri, 07 Jun 2024 15:02:11 +0000
Taints:             node.kubernetes.io/not-ready:NoSchedule
                    node.kubernetes.io/unreachable:NoExecute
Unschedulable:      false
Lease:
  HolderIdentity:  gke-ray-pool-2-03899cad-ccwh
  RenewTime:       Fri, 07 Jun 2024 21:10:03 +0000
Conditions:
  Type             Status   LastHeartbeatTime                 LastTransitionTime                Reason                    Message
  ----             ------   -----------------                 ------------------                ------                    -------
  MemoryPressure   Unknown  Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:12:45 +0000   NodeStatusUnknown         Kubelet stopped posting node status.
  Ready            False    Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:09:40 +0000   KubeletNotReady           container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
Addresses:
  InternalIP:  10.128.0.13
  Hostname:    gke-ray-pool-2-03899cad-ccwh
Capacity:
  cpu:                8
  memory:             32880784Ki
  pods:               110
Allocatable:
  cpu:                7910m
  memory:             29094544Ki
System Info:
  Kernel Version:             6.1.75+
  Kubelet Version:            v1.29.4-gke.1043002
PodCIDR:                      10.244.3.0/24
Non-terminated Pods:          (2 in total)
  Namespace                   Name                                                          CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age
  ---------                   ----                                                          ------------  ----------  ---------------  -------------  ---
  default                     rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv   4 (50%)       4 (50%)     8Gi (28%)        8Gi (28%)      3h2m
  kube-system                 kube-proxy-gke-ray-pool-2-03899cad-ccwh                       100m (1%)     0 (0%)      0 (0%)           0 (0%)         6h8m
Allocated resources:
  (Total limits may be over 100 percent, i.e., overcommitted.)
  Resource           Requests     Limits
  --------           --------     ------
  cpu                4100m (51%)  4 (50%)
  memory             8Gi (28%)    8Gi (28%)
Events:
  Type    Reason        Age  From             Message
  ----    ------        ---  ----             -------
  Normal  NodeNotReady  9m   node-controller  Node gke-ray-pool-2-03899cad-ccwh status is now: NodeNotReady
"#;

    #[test]
    fn rayservice_v1_3_conditions_and_raw_multiline_values() {
        check(
            RAYSERVICE_V1_3,
            r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=metadata.labels value=<none>] | Labels:       <none>
4 1 - info unknown  [path=metadata.annotations.ray.io/initializing-timeout value=5m] | Annotations:  ray.io/initializing-timeout: 5m
5 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
6 1 - info unknown  [path=kind value=RayService] | Kind:         RayService
7 1 - info unknown  [path=metadata] | Metadata:
8 1 - info unknown  [path=metadata.creationtimestamp value=2025-01-10T09:00:00Z] | Creation Timestamp:  2025-01-10T09:00:00Z
9 1 - info unknown  [path=metadata.generation value=1] | Generation:          1
10 1 - info unknown  [path=metadata.resourceversion value=12345] | Resource Version:    12345
11 1 - info unknown  [path=metadata.uid value=0b8e6c2a-1111-2222-3333-444455556666] | UID:                 0b8e6c2a-1111-2222-3333-444455556666
12 1 - info unknown  [path=spec] | Spec:
13 1 - info unknown  [path=spec.rayclusterconfig] | Ray Cluster Config:
14 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec] | Head Group Spec:
15 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams] | Ray Start Params:
16 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams.dashboard-host value=0.0.0.0] | Dashboard - Host:  0.0.0.0
17 1 - info unknown  [path=spec.rayclusterconfig.rayversion value=2.41.0] | Ray Version:           2.41.0
18 10 - info unknown  [path=spec.serveconfigv2 value=applications:⏎- name: fruit_app⏎  import_path: fruit.deployment_graph⏎  route_prefix: /fruit⏎  runtime_env:⏎    working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da.zip"⏎  deployments:⏎  - name: MangoStand⏎    num_replicas: 1] | Serve Config V2:         applications:⏎- name: fruit_app⏎  import_path: fruit.deployment_graph⏎  route_prefix: /fruit⏎  runtime_env:⏎    working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da.zip"⏎  deployments:⏎  - name: MangoStand⏎    num_replicas: 1
28 1 - info unknown  [path=status] | Status:
29 1 - info unknown  [path=status.activeservicestatus] | Active Service Status:
30 1 - info unknown  [path=status.activeservicestatus.applicationstatuses] | Application Statuses:
31 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app] | fruit_app:
32 6 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.message value=Deploying app 'fruit_app' failed with exception:⏎Traceback (most recent call last):⏎  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/application_state.py", line 1027, in build_serve_application⏎    app = call_app_builder_with_args_if_necessary(import_attr(import_path), args)⏎ModuleNotFoundError: No module named 'fruit'] | Message:  Deploying app 'fruit_app' failed with exception:⏎Traceback (most recent call last):⏎  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/application_state.py", line 1027, in build_serve_application⏎    app = call_app_builder_with_args_if_necessary(import_attr(import_path), args)⏎ModuleNotFoundError: No module named 'fruit'
38 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses] | Serve Deployment Statuses:
39 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.mangostand] | Mango Stand:
40 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.mangostand.message value=Deployment 'MangoStand' in application 'fruit_app' has 1 replicas that have taken more than 30s to be scheduled.] | Message:  Deployment 'MangoStand' in application 'fruit_app' has 1 replicas that have taken more than 30s to be scheduled.
41 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.mangostand.status value=UPDATING] | Status:   UPDATING
42 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=DEPLOY_FAILED] | Status:       DEPLOY_FAILED
43 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app] | math_app:
44 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app.status value=RUNNING] | Status:            RUNNING
45 1 - info unknown  [path=status.activeservicestatus.rayclustername value=rayservice-sample-raycluster-bwrp8] | Ray Cluster Name:  rayservice-sample-raycluster-bwrp8
46 1 - info unknown  [path=status.conditions] | Conditions:
47 1 - info unknown  [path=status.conditions[0].lasttransitiontime value=2025-01-10T09:00:05Z] | Last Transition Time:  2025-01-10T09:00:05Z
48 1 - info unknown  [path=status.conditions[0].message value=RayService is initializing and will be marked as failed if it is not ready within 5m0s] | Message:               RayService is initializing and will be marked as failed if it is not ready within 5m0s
49 1 - info unknown  [path=status.conditions[0].observedgeneration value=1] | Observed Generation:   1
50 1 - info unknown  [path=status.conditions[0].reason value=Initializing] | Reason:                Initializing
51 1 - info unknown  [path=status.conditions[0].status value=False] | Status:                False
52 1 - info unknown  [path=status.conditions[0].type value=Ready] | Type:                  Ready
53 1 - info unknown  [path=status.conditions[1].lasttransitiontime value=2025-01-10T09:00:05Z] | Last Transition Time:  2025-01-10T09:00:05Z
54 1 - info unknown  [path=status.conditions[1].message value=Active Ray cluster exists and no pending Ray cluster] | Message:               Active Ray cluster exists and no pending Ray cluster
55 1 - info unknown  [path=status.conditions[1].observedgeneration value=1] | Observed Generation:   1
56 1 - info unknown  [path=status.conditions[1].reason value=NoPendingCluster] | Reason:                NoPendingCluster
57 1 - info unknown  [path=status.conditions[1].status value=False] | Status:                False
58 1 - info unknown  [path=status.conditions[1].type value=UpgradeInProgress] | Type:                  UpgradeInProgress
59 1 - info unknown  [path=status.observedgeneration value=1] | Observed Generation:     1
60 1 - info unknown  [path=status.pendingservicestatus value=] | Pending Service Status:
61 1 - info unknown  [path=status.servicestatus value=] | Service Status:
62 3 - info unknown  [path=events] | Events:⏎Type     Reason                           Age                  From                   Message⏎----     ------                           ----                 ----                   -------
65 1 age=300 info kube_events rayservice-controller [type=Normal reason=CreatedRayCluster object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=1 age=5m first_seen_age_secs=300] | Created RayCluster default/rayservice-sample-raycluster-bwrp8
66 1 age=130 warning kube_events rayservice-controller [type=Warning reason=FailedToUpdateServeApplications object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=12 age=2m10s (x12 over 4m) first_seen_age_secs=240] | Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-bwrp8: Put "http://rayservice-sample-raycluster-bwrp8-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.96.1.2:8265: connect: connection refused
object RayService/default/rayservice-sample
"#,
        );
    }

    #[test]
    fn rayservice_v0_6_application_statuses() {
        check(
            RAYSERVICE_V0_6,
            r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=metadata.labels value=<none>] | Labels:       <none>
4 1 - info unknown  [path=metadata.annotations value=<none>] | Annotations:  <none>
5 1 - info unknown  [path=apiversion value=ray.io/v1alpha1] | API Version:  ray.io/v1alpha1
6 1 - info unknown  [path=kind value=RayService] | Kind:         RayService
7 1 - info unknown  [path=status] | Status:
8 1 - info unknown  [path=status.activeservicestatus] | Active Service Status:
9 1 - info unknown  [path=status.activeservicestatus.applicationstatuses] | Application Statuses:
10 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app] | fruit_app:
11 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
12 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
13 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses] | Serve Deployment Statuses:
14 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver] | fruit_app_DAGDriver:
15 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
16 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
17 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver.status value=HEALTHY] | Status:                   HEALTHY
18 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket] | fruit_app_FruitMarket:
19 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
20 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
21 4 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.message value=The Deployment failed to start 3 times in a row. This may be due to a problem with its constructor or initial health check failing. See controller logs for details. Error:⏎ray::ServeReplica:fruit_app_FruitMarket.initialize_and_get_metadata() (pid=2541, ip=10.244.0.7, actor_id=9ba0e3e5d7c1)⏎  File "/home/ray/anaconda3/lib/python3.8/concurrent/futures/_base.py", line 437, in result⏎RuntimeError: boom] | Message:                  The Deployment failed to start 3 times in a row. This may be due to a problem with its constructor or initial health check failing. See controller logs for details. Error:⏎ray::ServeReplica:fruit_app_FruitMarket.initialize_and_get_metadata() (pid=2541, ip=10.244.0.7, actor_id=9ba0e3e5d7c1)⏎  File "/home/ray/anaconda3/lib/python3.8/concurrent/futures/_base.py", line 437, in result⏎RuntimeError: boom
25 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.status value=UNHEALTHY] | Status:                   UNHEALTHY
26 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=RUNNING] | Status:                       RUNNING
27 1 - info unknown  [path=status.activeservicestatus.dashboardstatus] | Dashboard Status:
28 1 - info unknown  [path=status.activeservicestatus.dashboardstatus.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
29 1 - info unknown  [path=status.activeservicestatus.dashboardstatus.ishealthy value=true] | Is Healthy:               true
30 1 - info unknown  [path=status.activeservicestatus.dashboardstatus.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
31 1 - info unknown  [path=status.activeservicestatus.rayclustername value=rayservice-sample-raycluster-6mj28] | Ray Cluster Name:           rayservice-sample-raycluster-6mj28
32 1 - info unknown  [path=status.servicestatus value=Running] | Service Status:               Running
33 3 - info unknown  [path=events] | Events:⏎Type    Reason   Age                    From                   Message⏎----    ------   ----                   ----                   -------
36 1 age=135 info kube_events rayservice-controller [type=Normal reason=Running object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=29791 age=2m15s (x29791 over 16h) first_seen_age_secs=57600] | The Serve applicaton is now running and healthy.
object RayService/default/rayservice-sample
"#,
        );
    }

    #[test]
    fn rayservice_generated_serve_config() {
        check(
            RAYSERVICE_GENERATED,
            r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
4 1 - info unknown  [path=kind value=RayService] | Kind:         RayService
5 1 - info unknown  [path=spec] | Spec:
6 1 - info unknown  [path=spec.serviceunhealthysecondthreshold value=900] | Service Unhealthy Second Threshold:      900
7 1 - info unknown  [path=spec.deploymentunhealthysecondthreshold value=300] | Deployment Unhealthy Second Threshold:   300
8 9 - info unknown  [path=spec.serveconfigv2 value=applications:⏎  - name: fruit_app⏎    import_path: fruit.deployment_graph⏎    route_prefix: /fruit⏎    runtime_env:⏎      working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da38796123d9f9ffff59bab2792a043e95.zip"⏎  - name: math_app⏎    import_path: conditional_dag.serve_dag⏎    route_prefix: /calc] | Serve Config V2:                         applications:⏎  - name: fruit_app⏎    import_path: fruit.deployment_graph⏎    route_prefix: /fruit⏎    runtime_env:⏎      working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da38796123d9f9ffff59bab2792a043e95.zip"⏎  - name: math_app⏎    import_path: conditional_dag.serve_dag⏎    route_prefix: /calc
17 1 - info unknown  [path=status] | Status:
18 1 - info unknown  [path=status.activeservicestatus] | Active Service Status:
19 1 - info unknown  [path=status.activeservicestatus.applicationstatuses] | Application Statuses:
20 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app] | fruit_app:
21 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.healthlastupdatetime value=2024-06-07T21:16:56Z] | Health Last Update Time:  2024-06-07T21:16:56Z
22 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=DEPLOYING] | Status:                   DEPLOYING
23 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app] | math_app:
24 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app.healthlastupdatetime value=2024-06-07T21:16:56Z] | Health Last Update Time:  2024-06-07T21:16:56Z
25 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app.status value=RUNNING] | Status:                   RUNNING
26 1 - info unknown  [path=status.activeservicestatus.rayclustername value=rayservice-sample-raycluster-nrqvj] | Ray Cluster Name:             rayservice-sample-raycluster-nrqvj
27 1 - info unknown  [path=status.pendingservicestatus] | Pending Service Status:
28 1 - info unknown  [path=status.pendingservicestatus.rayclustername value=rayservice-sample-raycluster-hnz7k] | Ray Cluster Name:             rayservice-sample-raycluster-hnz7k
29 1 - info unknown  [path=status.servicestatus value=Restarting] | Service Status:                 Restarting
30 3 - info unknown  [path=events] | Events:⏎Type    Reason             Age  From                   Message⏎----    ------             ---  ----                   -------
33 1 age=1860 info kube_events rayservice-controller [type=Normal reason=CreatedRayCluster object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=1 age=31m first_seen_age_secs=1860] | Created RayCluster default/rayservice-sample-raycluster-hnz7k
object RayService/default/rayservice-sample
"#,
        );
    }

    #[test]
    fn raycluster_conditions_list_without_markers() {
        check(
            RAYCLUSTER_V1_3,
            r#"
1 1 - info unknown  [path=metadata.name value=raycluster-kuberay] | Name:         raycluster-kuberay
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=metadata.labels.app.kubernetes.io/instance value=raycluster] | Labels:       app.kubernetes.io/instance=raycluster
4 1 - info unknown  [path=metadata.annotations value=<none>] | Annotations:  <none>
5 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
6 1 - info unknown  [path=kind value=RayCluster] | Kind:         RayCluster
7 1 - info unknown  [path=spec] | Spec:
8 1 - info unknown  [path=spec.headgroupspec] | Head Group Spec:
9 1 - info unknown  [path=spec.headgroupspec.template] | Template:
10 1 - info unknown  [path=spec.headgroupspec.template.spec] | Spec:
11 1 - info unknown  [path=spec.headgroupspec.template.spec.containers] | Containers:
12 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].image value=rayproject/ray:2.41.0] | Image:  rayproject/ray:2.41.0
13 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].name value=ray-head] | Name:   ray-head
14 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports] | Ports:
15 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[0].containerport value=6379] | Container Port:  6379
16 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[0].name value=gcs-server] | Name:            gcs-server
17 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[0].protocol value=TCP] | Protocol:        TCP
18 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[1].containerport value=8265] | Container Port:  8265
19 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[1].name value=dashboard] | Name:            dashboard
20 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[1].protocol value=TCP] | Protocol:        TCP
21 1 - info unknown  [path=spec.suspend value=true] | Suspend:  true
22 1 - info unknown  [path=status] | Status:
23 1 - info unknown  [path=status.conditions] | Conditions:
24 1 - info unknown  [path=status.conditions[0].lasttransitiontime value=2026-03-03T03:00:25Z] | Last Transition Time:   2026-03-03T03:00:25Z
25 1 - info unknown  [path=status.conditions[0].message value=RayCluster Pods are being provisioned for first time] | Message:                RayCluster Pods are being provisioned for first time
26 1 - info unknown  [path=status.conditions[0].reason value=RayClusterPodsProvisioning] | Reason:                 RayClusterPodsProvisioning
27 1 - info unknown  [path=status.conditions[0].status value=False] | Status:                 False
28 1 - info unknown  [path=status.conditions[0].type value=RayClusterProvisioned] | Type:                   RayClusterProvisioned
29 1 - info unknown  [path=status.conditions[1].lasttransitiontime value=2026-03-03T03:00:25Z] | Last Transition Time:   2026-03-03T03:00:25Z
30 1 - info unknown  [path=status.conditions[1].message value=] | Message:
31 1 - info unknown  [path=status.conditions[1].reason value=RayClusterSuspended] | Reason:                 RayClusterSuspended
32 1 - info unknown  [path=status.conditions[1].status value=False] | Status:                 False
33 1 - info unknown  [path=status.conditions[1].type value=RayClusterSuspended] | Type:                   RayClusterSuspended
34 1 - info unknown  [path=status.desiredcpu value=0] | Desired CPU:              0
35 1 - info unknown  [path=status.state value=suspended] | State:                    suspended
36 3 - info unknown  [path=events] | Events:⏎Type    Reason            Age   From                   Message⏎----    ------            ----  ----                   -------
39 1 age=2580 info kube_events raycluster-controller [type=Normal reason=CreatedService object=RayCluster/default/raycluster-kuberay object_kind=RayCluster object_name=raycluster-kuberay namespace=default count=1 age=43m first_seen_age_secs=2580] | Created service default/raycluster-kuberay-head-svc
40 1 age=2580 info kube_events raycluster-controller [type=Normal reason=CreatedHeadPod object=RayCluster/default/raycluster-kuberay object_kind=RayCluster object_name=raycluster-kuberay namespace=default count=1 age=43m first_seen_age_secs=2580] | Created head Pod default/raycluster-kuberay-head-l7v7q
41 1 age=2580 info kube_events raycluster-controller [type=Normal reason=CreatedWorkerPod object=RayCluster/default/raycluster-kuberay object_kind=RayCluster object_name=raycluster-kuberay namespace=default count=1 age=43m first_seen_age_secs=2580] | Created worker Pod default/
object RayCluster/default/raycluster-kuberay
"#,
        );
    }

    #[test]
    fn pods_concatenated_oomkilled_crashloop_evicted() {
        check(
            PODS,
            r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample-raycluster-bwrp8-head-x7k2p] | Name:             rayservice-sample-raycluster-bwrp8-head-x7k2p
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:        default
3 1 - info unknown  [path=priority value=0] | Priority:         0
4 1 - info unknown  [path=serviceaccount value=default] | Service Account:  default
5 1 - info unknown  [path=node value=gke-ray-pool-1-5d2a/10.128.0.9] | Node:             gke-ray-pool-1-5d2a/10.128.0.9
6 1 - info unknown  [path=starttime value=Tue, 02 Jul 2024 22:16:22 +0800 time_utc=2024-07-02T14:16:22.000Z] | Start Time:       Tue, 02 Jul 2024 22:16:22 +0800
7 1 - info unknown  [path=metadata.labels.ray.io/cluster value=rayservice-sample-raycluster-bwrp8] | Labels:           ray.io/cluster=rayservice-sample-raycluster-bwrp8
8 1 - info unknown  [path=metadata.labels.ray.io/node-type value=head] | ray.io/node-type=head
9 1 - info unknown  [path=metadata.annotations value=<none>] | Annotations:      <none>
10 1 - info unknown  [path=status value=Running] | Status:           Running
11 1 - info unknown  [path=ip value=10.244.1.15] | IP:               10.244.1.15
12 1 - info unknown  [path=controlledby value=RayCluster/rayservice-sample-raycluster-bwrp8] | Controlled By:    RayCluster/rayservice-sample-raycluster-bwrp8
13 1 - info unknown  [path=initcontainers] | Init Containers:
14 1 - info unknown  [path=initcontainers.wait-gcs-ready] | wait-gcs-ready:
15 1 - info unknown  [path=initcontainers.wait-gcs-ready.image value=rayproject/ray:2.41.0] | Image:          rayproject/ray:2.41.0
16 1 - info unknown  [path=initcontainers.wait-gcs-ready.state value=Terminated] | State:          Terminated
17 1 - info unknown  [path=initcontainers.wait-gcs-ready.state.reason value=Completed] | Reason:       Completed
18 1 - info unknown  [path=initcontainers.wait-gcs-ready.state.exitcode value=0] | Exit Code:    0
19 1 - info unknown  [path=initcontainers.wait-gcs-ready.ready value=True] | Ready:          True
20 1 - info unknown  [path=initcontainers.wait-gcs-ready.restartcount value=0] | Restart Count:  0
21 1 - info unknown  [path=containers] | Containers:
22 1 - info unknown  [path=containers.ray-head] | ray-head:
23 1 - info unknown  [path=containers.ray-head.image value=rayproject/ray:2.41.0] | Image:          rayproject/ray:2.41.0
24 1 - info unknown  [path=containers.ray-head.ports value=6379/TCP, 8265/TCP, 10001/TCP] | Ports:          6379/TCP, 8265/TCP, 10001/TCP
25 1 - info unknown  [path=containers.ray-head.state value=Waiting] | State:          Waiting
26 1 - info unknown  [path=containers.ray-head.state.reason value=CrashLoopBackOff] | Reason:       CrashLoopBackOff
27 1 - info unknown  [path=containers.ray-head.laststate value=Terminated] | Last State:     Terminated
28 1 - info unknown  [path=containers.ray-head.laststate.reason value=OOMKilled] | Reason:       OOMKilled
29 4 - info unknown  [path=containers.ray-head.laststate.message value=Some Ray subprocesses exited unexpectedly:⏎  raylet [exit code=1]⏎Remaining processes will be killed.] | Message:      Some Ray subprocesses exited unexpectedly:⏎  raylet [exit code=1]⏎Remaining processes will be killed.
33 1 - info unknown  [path=containers.ray-head.laststate.exitcode value=137] | Exit Code:    137
34 1 - info unknown  [path=containers.ray-head.laststate.started value=Tue, 02 Jul 2024 22:20:01 +0800 time_utc=2024-07-02T14:20:01.000Z] | Started:      Tue, 02 Jul 2024 22:20:01 +0800
35 1 - info unknown  [path=containers.ray-head.laststate.finished value=Tue, 02 Jul 2024 22:24:13 +0800 time_utc=2024-07-02T14:24:13.000Z] | Finished:     Tue, 02 Jul 2024 22:24:13 +0800
36 1 - info unknown  [path=containers.ray-head.ready value=False] | Ready:          False
37 1 - info unknown  [path=containers.ray-head.restartcount value=5] | Restart Count:  5
38 1 - info unknown  [path=containers.ray-head.limits] | Limits:
39 1 - info unknown  [path=containers.ray-head.limits.memory value=2Gi] | memory:  2Gi
40 1 - info unknown  [path=containers.ray-head.liveness value=exec [bash -c wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success && wget --tries 1 -T 2 -q -O- http://localhost:8265/api/gcs_healthz | grep success] delay=30s timeout=5s period=5s #success=1 #failure=120] | Liveness:   exec [bash -c wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success && wget --tries 1 -T 2 -q -O- http://localhost:8265/api/gcs_healthz | grep success] delay=30s timeout=5s period=5s #success=1 #failure=120
41 1 - info unknown  [path=containers.ray-head.environment value=<none>] | Environment:  <none>
42 2 - info unknown  [path=conditions] | Conditions:⏎Type              Status
44 1 - info unknown  [path=conditions[Initialized] value=True col.type=Initialized col.status=True] | Initialized       True
45 1 - info unknown  [path=conditions[Ready] value=False col.type=Ready col.status=False] | Ready             False
46 1 - info unknown  [path=conditions[ContainersReady] value=False col.type=ContainersReady col.status=False] | ContainersReady   False
47 1 - info unknown  [path=conditions[PodScheduled] value=True col.type=PodScheduled col.status=True] | PodScheduled      True
48 1 - info unknown  [path=qosclass value=Burstable] | QoS Class:        Burstable
49 3 - info unknown  [path=events] | Events:⏎Type     Reason     Age                   From               Message⏎----     ------     ----                  ----               -------
52 1 age=1320 info kube_events default-scheduler [type=Normal reason=Scheduled object=Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p object_kind=Pod object_name=rayservice-sample-raycluster-bwrp8-head-x7k2p namespace=default count=1 age=22m first_seen_age_secs=1320] | Successfully assigned default/rayservice-sample-raycluster-bwrp8-head-x7k2p to gke-ray-pool-1-5d2a
53 1 age=146 warning kube_events kubelet [type=Warning reason=BackOff object=Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p object_kind=Pod object_name=rayservice-sample-raycluster-bwrp8-head-x7k2p namespace=default count=87 age=2m26s (x87 over 20m) first_seen_age_secs=1200 field_path=spec.containers{ray-head}] | spec.containers{ray-head}: Back-off restarting failed container ray-head in pod rayservice-sample-raycluster-bwrp8-head-x7k2p_default(3f1c)
54 2 - info kube_events kubelet [type=Normal reason=Killing object=Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p object_kind=Pod object_name=rayservice-sample-raycluster-bwrp8-head-x7k2p namespace=default count=1 age=<unknown> source=kubelet, node-1] | Stopping container ray-head
56 1 - info unknown  [path=metadata.name value=rayservice-sample-raycluster-bwrp8-worker-small-zt9q4] | Name:                      rayservice-sample-raycluster-bwrp8-worker-small-zt9q4
57 1 - info unknown  [path=metadata.namespace value=default] | Namespace:                 default
58 1 - info unknown  [path=status value=Terminating (lasts 3m)] | Status:                    Terminating (lasts 3m)
59 1 - info unknown  [path=terminationgraceperiod value=30s] | Termination Grace Period:  30s
60 1 - info unknown  [path=reason value=Evicted] | Reason:                    Evicted
61 1 - info unknown  [path=message value=The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi.] | Message:                   The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi.
62 1 - info unknown  [path=ip value=] | IP:
63 1 - info unknown  [path=containers] | Containers:
64 1 - info unknown  [path=containers.ray-worker] | ray-worker:
65 1 - info unknown  [path=containers.ray-worker.state value=Terminated] | State:          Terminated
66 1 - info unknown  [path=containers.ray-worker.state.reason value=ContainerStatusUnknown] | Reason:       ContainerStatusUnknown
67 1 - info unknown  [path=containers.ray-worker.state.exitcode value=137] | Exit Code:    137
68 1 - info unknown  [path=qosclass value=BestEffort] | QoS Class:                 BestEffort
69 1 - info unknown  [path=tolerations[0] value=node.kubernetes.io/not-ready:NoExecute op=Exists for 300s] | Tolerations:               node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
70 1 - info unknown  [path=tolerations[1] value=node.kubernetes.io/unreachable:NoExecute op=Exists for 300s] | node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
71 1 - info unknown  [path=events value=<none>] | Events:                    <none>
object Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p
object Pod/default/rayservice-sample-raycluster-bwrp8-worker-small-zt9q4
"#,
        );
    }

    #[test]
    fn node_tables() {
        check(
            NODE,
            r#"
1 1 - info unknown  [path=metadata.name value=gke-ray-pool-2-03899cad-ccwh] | Name:               gke-ray-pool-2-03899cad-ccwh
2 1 - info unknown  [path=roles value=<none>] | Roles:              <none>
3 1 - info unknown  [path=metadata.labels.cloud.google.com/gke-nodepool value=ray-pool-2] | Labels:             cloud.google.com/gke-nodepool=ray-pool-2
4 1 - info unknown  [path=metadata.labels.kubernetes.io/hostname value=gke-ray-pool-2-03899cad-ccwh] | kubernetes.io/hostname=gke-ray-pool-2-03899cad-ccwh
5 1 - info unknown  [path=metadata.annotations.node.alpha.kubernetes.io/ttl value=0] | Annotations:        node.alpha.kubernetes.io/ttl: 0
6 1 - info unknown  [path=creationtimestamp value=Fri, 07 Jun 2024 15:02:11 +0000 time_utc=2024-06-07T15:02:11.000Z] | CreationTimestamp:  Fri, 07 Jun 2024 15:02:11 +0000
7 1 - info unknown  [path=taints[0] value=node.kubernetes.io/not-ready:NoSchedule] | Taints:             node.kubernetes.io/not-ready:NoSchedule
8 1 - info unknown  [path=taints[1] value=node.kubernetes.io/unreachable:NoExecute] | node.kubernetes.io/unreachable:NoExecute
9 1 - info unknown  [path=unschedulable value=false] | Unschedulable:      false
10 1 - info unknown  [path=lease] | Lease:
11 1 - info unknown  [path=lease.holderidentity value=gke-ray-pool-2-03899cad-ccwh] | HolderIdentity:  gke-ray-pool-2-03899cad-ccwh
12 1 - info unknown  [path=lease.renewtime value=Fri, 07 Jun 2024 21:10:03 +0000 time_utc=2024-06-07T21:10:03.000Z] | RenewTime:       Fri, 07 Jun 2024 21:10:03 +0000
13 3 - info unknown  [path=conditions] | Conditions:⏎Type             Status   LastHeartbeatTime                 LastTransitionTime                Reason                    Message⏎----             ------   -----------------                 ------------------                ------                    -------
16 1 - info unknown  [path=conditions[MemoryPressure] value=Unknown col.type=MemoryPressure col.status=Unknown col.lastheartbeattime=Fri, 07 Jun 2024 21:10:03 +0000 col.lasttransitiontime=Fri, 07 Jun 2024 21:12:45 +0000 col.reason=NodeStatusUnknown col.message=Kubelet stopped posting node status.] | MemoryPressure   Unknown  Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:12:45 +0000   NodeStatusUnknown         Kubelet stopped posting node status.
17 1 - info unknown  [path=conditions[Ready] value=False col.type=Ready col.status=False col.lastheartbeattime=Fri, 07 Jun 2024 21:10:03 +0000 col.lasttransitiontime=Fri, 07 Jun 2024 21:09:40 +0000 col.reason=KubeletNotReady col.message=container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized] | Ready            False    Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:09:40 +0000   KubeletNotReady           container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
18 1 - info unknown  [path=addresses] | Addresses:
19 1 - info unknown  [path=addresses.internalip value=10.128.0.13] | InternalIP:  10.128.0.13
20 1 - info unknown  [path=addresses.hostname value=gke-ray-pool-2-03899cad-ccwh] | Hostname:    gke-ray-pool-2-03899cad-ccwh
21 1 - info unknown  [path=capacity] | Capacity:
22 1 - info unknown  [path=capacity.cpu value=8] | cpu:                8
23 1 - info unknown  [path=capacity.memory value=32880784Ki] | memory:             32880784Ki
24 1 - info unknown  [path=capacity.pods value=110] | pods:               110
25 1 - info unknown  [path=allocatable] | Allocatable:
26 1 - info unknown  [path=allocatable.cpu value=7910m] | cpu:                7910m
27 1 - info unknown  [path=allocatable.memory value=29094544Ki] | memory:             29094544Ki
28 1 - info unknown  [path=systeminfo] | System Info:
29 1 - info unknown  [path=systeminfo.kernelversion value=6.1.75+] | Kernel Version:             6.1.75+
30 1 - info unknown  [path=systeminfo.kubeletversion value=v1.29.4-gke.1043002] | Kubelet Version:            v1.29.4-gke.1043002
31 1 - info unknown  [path=podcidr value=10.244.3.0/24] | PodCIDR:                      10.244.3.0/24
32 3 - info unknown  [path=non-terminatedpods value=(2 in total)] | Non-terminated Pods:          (2 in total)⏎Namespace                   Name                                                          CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age⏎---------                   ----                                                          ------------  ----------  ---------------  -------------  ---
35 1 - info unknown  [path=non-terminatedpods[default/rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv] value=rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv col.namespace=default col.name=rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv col.cpurequests=4 (50%) col.cpulimits=4 (50%) col.memoryrequests=8Gi (28%) col.memorylimits=8Gi (28%) col.age=3h2m] | default                     rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv   4 (50%)       4 (50%)     8Gi (28%)        8Gi (28%)      3h2m
36 1 - info unknown  [path=non-terminatedpods[kube-system/kube-proxy-gke-ray-pool-2-03899cad-ccwh] value=kube-proxy-gke-ray-pool-2-03899cad-ccwh col.namespace=kube-system col.name=kube-proxy-gke-ray-pool-2-03899cad-ccwh col.cpurequests=100m (1%) col.cpulimits=0 (0%) col.memoryrequests=0 (0%) col.memorylimits=0 (0%) col.age=6h8m] | kube-system                 kube-proxy-gke-ray-pool-2-03899cad-ccwh                       100m (1%)     0 (0%)      0 (0%)           0 (0%)         6h8m
37 4 - info unknown  [path=allocatedresources] | Allocated resources:⏎(Total limits may be over 100 percent, i.e., overcommitted.)⏎Resource           Requests     Limits⏎--------           --------     ------
41 1 - info unknown  [path=allocatedresources[cpu] value=4100m (51%) col.resource=cpu col.requests=4100m (51%) col.limits=4 (50%)] | cpu                4100m (51%)  4 (50%)
42 1 - info unknown  [path=allocatedresources[memory] value=8Gi (28%) col.resource=memory col.requests=8Gi (28%) col.limits=8Gi (28%)] | memory             8Gi (28%)    8Gi (28%)
43 3 - info unknown  [path=events] | Events:⏎Type    Reason        Age  From             Message⏎----    ------        ---  ----             -------
46 1 age=540 info kube_events node-controller [type=Normal reason=NodeNotReady object=Node/gke-ray-pool-2-03899cad-ccwh object_kind=Node object_name=gke-ray-pool-2-03899cad-ccwh count=1 age=9m first_seen_age_secs=540] | Node gke-ray-pool-2-03899cad-ccwh status is now: NodeNotReady
object Node/gke-ray-pool-2-03899cad-ccwh
"#,
        );
    }

    #[test]
    fn events_section_shapes() {
        check(
            "Name:  x
Events:
  Type     Reason            Age                  From               Message
  ----     ------            ----                 ----               -------
  Warning  FailedScheduling  2m26s (x5 over 22m)  default-scheduler  0/3 nodes are available: 3 Insufficient cpu
  Normal   Pulled            <invalid>            kubelet            Container image \"rayproject/ray:2.9.3\" already present on machine",
            r#"
1 1 - info unknown  [path=metadata.name value=x] | Name:  x
2 3 - info unknown  [path=events] | Events:⏎Type     Reason            Age                  From               Message⏎----     ------            ----                 ----               -------
5 1 age=146 warning kube_events default-scheduler [type=Warning reason=FailedScheduling object_name=x count=5 age=2m26s (x5 over 22m) first_seen_age_secs=1320] | 0/3 nodes are available: 3 Insufficient cpu
6 1 - info kube_events kubelet [type=Normal reason=Pulled object_name=x count=1 age=<invalid>] | Container image "rayproject/ray:2.9.3" already present on machine
"#,
        );
        check(
            "Name:  x\nEvents:  <none>\n",
            r#"
1 1 - info unknown  [path=metadata.name value=x] | Name:  x
2 1 - info unknown  [path=events value=<none>] | Events:  <none>
"#,
        );
    }

    #[test]
    fn long_annotation_below_its_key() {
        check(
            r#"Name:         rayservice-sample
Annotations:  kubectl.kubernetes.io/last-applied-configuration:
                {"apiVersion":"ray.io/v1","kind":"RayService","metadata":{"annotations":{},"name":"rayservice-sample"}}
              ray.io/initializing-timeout: 10m
API Version:  ray.io/v1
"#,
            r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 2 - info unknown  [path=metadata.annotations.kubectl.kubernetes.io/last-applied-configuration value={"apiVersion":"ray.io/v1","kind":"RayService","metadata":{"annotations":{},"name":"rayservice-sample"}}] | Annotations:  kubectl.kubernetes.io/last-applied-configuration:⏎                {"apiVersion":"ray.io/v1","kind":"RayService","metadata":{"annotations":{},"name":"rayservice-sample"}}
4 1 - info unknown  [path=metadata.annotations.ray.io/initializing-timeout value=10m] | ray.io/initializing-timeout: 10m
5 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
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
            "\u{0}\u{1}garbage: \u{2}\n\u{7f}",
            r#"
1 2 - info unknown  [path=··garbage value=·⏎·] | ··garbage: ·⏎·
"#,
        );
        check(
            "Name:  a\r\nStatus:\r\n  State:  ready\r\n",
            r#"
1 1 - info unknown  [path=metadata.name value=a] | Name:  a
2 1 - info unknown  [path=status] | Status:
3 1 - info unknown  [path=status.state value=ready] | State:  ready
"#,
        );
        check(
            "not a describe\n  at all\nName:\n",
            r#"
1 1 - info unknown  [] | not a describe
2 1 - info unknown  [] | at all
3 1 - info unknown  [path=metadata.name value=] | Name:
unparsed=2
"#,
        );
        // Truncated in the middle of a table and of a multi-line value.
        check(
            "Name:  a\nKind:  RayService\nStatus:\n  Message:  line one\nline two",
            r#"
1 1 - info unknown  [path=metadata.name value=a] | Name:  a
2 1 - info unknown  [path=kind value=RayService] | Kind:  RayService
3 1 - info unknown  [path=status] | Status:
4 2 - info unknown  [path=status.message value=line one⏎line two] | Message:  line one⏎line two
object RayService/a
"#,
        );
        check(
            "Name:  a\nConditions:\n  Type  Status\n  Rea",
            r#"
1 1 - info unknown  [path=metadata.name value=a] | Name:  a
2 2 - info unknown  [path=conditions] | Conditions:⏎Type  Status
4 1 - info unknown  [path=conditions[Rea] value= col.type=Rea col.status=] | Rea
"#,
        );
        let mut out = ParseOutput::default();
        parse(b"Name:  \xff\xfe\nStatus:  \xc3\n", &mut out);
        assert_eq!(out.events.len(), 2);
        let giant = format!(
            "Name:  a\nKind:  X\nSpec:\n  Config:  {}\n{}",
            "y".repeat(100_000),
            "z\n".repeat(100_000)
        );
        let mut out = ParseOutput::default();
        parse(giant.as_bytes(), &mut out);
        assert!(out.events.iter().all(|e| e.message.len() < 70_000));
        assert_eq!(out.events.iter().map(|e| e.n_lines).sum::<u32>(), 100_004);
        let deep: String = (0..500)
            .map(|d| format!("{}K{d}:\n", "  ".repeat(d)))
            .collect();
        let mut out = ParseOutput::default();
        parse(deep.as_bytes(), &mut out);
        assert_eq!(out.events.len(), 500);
    }
    /// Every prefix of every fixture (cut anywhere, even inside a UTF-8 sequence) parses
    /// without panicking and keeps each physical line in exactly one event.
    #[test]
    fn truncated_fixtures_keep_every_line() {
        for fixture in [
            RAYSERVICE_V1_3,
            RAYSERVICE_V0_6,
            RAYSERVICE_GENERATED,
            RAYCLUSTER_V1_3,
            PODS,
            NODE,
        ] {
            let bytes = fixture.as_bytes();
            for cut in (0..bytes.len()).step_by(3) {
                let input = bytes.get(..cut).unwrap_or(bytes);
                let mut out = ParseOutput::default();
                parse(input, &mut out);
                let n_physical = split_lines(input).count() as u32;
                let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
                assert_eq!(n_counted, n_physical, "cut at {cut}");
            }
        }
    }
}
