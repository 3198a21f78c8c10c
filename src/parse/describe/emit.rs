//! From entries to events: numbers the elements of lists the generic printer shows without
//! `-` markers, resolves each entry's path (the one the object's YAML gives) and the time of
//! its block (a container's state, a condition, a status: `block_time`), and writes each
//! entry as a fact, a table row or an Event record of the object.
//!
//! Invariant: an entry is written once. `Object::emitted` counts the entries already written
//! (rows streamed early are removed from the entries instead). List shapes, paths and block
//! times are resolved over every entry read so far; for the entries being written, nothing
//! read later can change them (the `Events:` table, after which entries go early, comes
//! after every block).

use std::collections::HashSet;

use super::object::{Entry, Identity, Object, Seg, Shape};
use crate::event::{format_rfc3339, Event, Micros, RawTime};
use crate::parse::block_time::BlockTimes;
use crate::parse::lines::cap_message;
use crate::parse::primitives::rfc1123z;
use crate::parse::tree::{fact, join_path};
use crate::parse::ParseOutput;

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

impl Object {
    /// Emits the entries from the first not yet emitted up to `end`, their list shapes and
    /// paths resolved over every entry read so far (nothing after can change theirs).
    pub(super) fn emit_up_to(&mut self, end: usize, id: &Identity, out: &mut ParseOutput) {
        if self.emitted >= end {
            return;
        }
        self.shape_lists();
        let paths = self.paths();
        let times = self.block_times(&paths, &id.kind);
        for i in self.emitted..end {
            if let (Some(entry), Some(path)) = (self.entries.get(i), paths.get(i)) {
                emit_entry(entry.clone(), path, times.of(path), id, out);
            }
        }
        self.emitted = end;
    }

    /// Resolves list shapes and paths, then writes the events not yet written.
    pub(super) fn emit(mut self, out: &mut ParseOutput) {
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
        let times = self.block_times(&paths, &id.kind);
        let skip = self.emitted;
        for (entry, path) in self.entries.into_iter().zip(paths).skip(skip) {
            let time = times.of(&path);
            emit_entry(entry, &path, time, &id, out);
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

    /// The times of the object's blocks (`block_time`), from every entry read so far: a
    /// table row's cells count as its children (a node's condition rows hold their times).
    fn block_times(&self, paths: &[String], kind: &str) -> BlockTimes {
        let mut times = BlockTimes::new(kind);
        for (entry, path) in self.entries.iter().zip(paths) {
            if let Some(value) = &entry.value {
                times.note(path, value);
            }
            if let Shape::Row(cells) = &entry.shape {
                for (column, cell) in cells {
                    if let Some(key) = column.strip_prefix("col.") {
                        times.note(&join_path(path, key), cell);
                    }
                }
            }
        }
        times
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

/// The event of one entry, whose path is `path`, of the object `id`; a fact or a row takes
/// `time`, its block's.
pub(super) fn emit_entry(
    entry: Entry,
    path: &str,
    time: Option<Micros>,
    id: &Identity,
    out: &mut ParseOutput,
) {
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
            let time_utc = value.as_deref().and_then(|v| match rfc1123z(v) {
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
            ev.raw_time = time.map(RawTime::Utc);
            if let Some(time_utc) = time_utc {
                ev.fields.push(("time_utc".into(), time_utc.into()));
            }
            if let Shape::Row(cols) = shape {
                ev.fields.extend(cols);
            }
            out.events.push(ev);
        }
    }
}
