//! Table sections (`Conditions`, `Non-terminated Pods`, `Allocated resources`, `Events:`):
//! one fact per row with a `col.<header>` field per cell, and for `Events:` one Kubernetes
//! Event record per row (rows of a huge table may be folded into groups: `row_fold`).
//!
//! When rows are not folded, the rows of a top-level `Events:` table are sent out as they are
//! read, and with the first of them everything read before: every describer prints `Events:`
//! last, so nothing after a row can change what came before it. Only the last row read is
//! held, since blank lines after it still count as its own.

use super::emit::emit_entry;
use super::object::{Object, Seg, Shape};
use crate::event::Text;
use crate::parse::row_fold::merge_record;
use crate::parse::tree::{norm_key, Columns, EventRecord};
use crate::parse::ParseOutput;

/// Sections printed as tables by the typed describers.
pub(super) const TABLE_KEYS: &[&str] = &[
    "Events",
    "Conditions",
    "Non-terminated Pods",
    "Allocated resources",
];

impl Object {
    /// A table row: a fact with one field per column, or an event record.
    pub(super) fn row(
        &mut self,
        no: u32,
        section: usize,
        cols: &Columns,
        events: bool,
        text: &str,
    ) {
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
    pub(super) fn stream_row(&mut self, after_row: bool, out: &mut ParseOutput) {
        let id = self.identity.take().unwrap_or_else(|| self.identity());
        let n = self.entries.len();
        if after_row && n == self.emitted + 2 {
            // [.., the row before, the row just pushed]: the one goes, the other takes its place.
            let before = self.entries.swap_remove(n - 2);
            emit_entry(before, "", None, &id, out);
        } else {
            self.emit_up_to(n.saturating_sub(1), &id, out);
        }
        self.identity = Some(id);
        self.pending_row = true;
    }
}
