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
//!
//! The parts: `object.rs` holds the state of one describe being read (its entries, the open
//! keys, the mode the next line is read in) and who the object is; this file splits the
//! input into describes and routes each line by that mode; `sections.rs` reads `Key: value`
//! lines, nested sections, raw multi-line values and value lists; `tables.rs` reads the rows
//! of table sections and sends out `Events:` rows early; `emit.rs` resolves list indices and
//! paths and writes the events.

use std::borrow::Cow;

use crate::parse::lines::{decode, split_lines};
use crate::parse::row_fold::RowFolder;
use crate::parse::tree::Columns;
use crate::parse::ParseOutput;

mod emit;
#[cfg(test)]
mod fixtures;
mod object;
mod sections;
mod tables;
#[cfg(test)]
mod tests;

use object::{ListKind, Mode, Object};
use sections::split_key;

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
}
