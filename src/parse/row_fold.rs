//! Folding the rows of huge Kubernetes events tables, for `analyze` only.
//!
//! An event storm can leave a `kubectl describe` whose `Events:` table, or a `kubectl get
//! events` dump, has a million rows; kept one event each, they took gigabytes. Past the first
//! [`FOLD_AFTER_ROWS`] rows of a file, a row that repeats an earlier one but for its age, its
//! count and the numbers and ids in its message (a pod name, a sandbox id; masked by
//! `fold_key`, as the repeated records of a log are) is folded into that earlier row's
//! event: counts add up, the newest last-seen age and the oldest first-seen age are kept, and
//! `folded_rows` says how many rows it stands for. Once a file has [`MAX_GROUPS`] such groups,
//! a new row folds into the group of its type and reason alone, so the events kept stay
//! bounded whatever the table holds.
//!
//! Rules and the open world read what a fold keeps: the type, reason, object and message of a
//! row, its summed `count` (what `Warning BackOff ×N` reports) and its newest time. Tables of a
//! normal bundle have far fewer rows than the threshold and are never folded; `timeline` and
//! `--inventory` never fold (every line stays its own event there).

use std::collections::HashMap;

use crate::event::{Event, RawTime};
use crate::parse::fold_key::{masked, Capped, DigitWords};
use crate::parse::tree::EventRecord;

/// Rows of a file kept one event each before any is folded.
pub const FOLD_AFTER_ROWS: usize = 1000;
/// Groups a file's rows may form before new rows fold by type and reason alone.
pub const MAX_GROUPS: usize = 4096;

/// The groups of one file's events rows: key (UTF-8 bytes) → (index of the group's event or
/// entry, rows folded into it).
#[derive(Debug, Default)]
pub struct RowFolder {
    enabled: bool,
    rows: usize,
    groups: HashMap<Vec<u8>, (usize, u64)>,
}

impl RowFolder {
    pub fn new(enabled: bool) -> RowFolder {
        RowFolder {
            enabled,
            ..RowFolder::default()
        }
    }

    /// Whether rows fold at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Where a row goes: `None` to keep it as the event (or entry) at `next`, `Some(i)` to
    /// fold it into the one at `i`. `object` is empty when every row of the table is about
    /// one object (a describe).
    pub fn place(&mut self, rec: &EventRecord, object: &str, next: usize) -> Option<usize> {
        if !self.enabled {
            return None;
        }
        self.rows += 1;
        let mut key = Vec::with_capacity(64 + object.len() + rec.message.len().min(520));
        for part in [&rec.event_type, &rec.reason, &rec.component] {
            key.extend_from_slice(part.as_bytes());
            key.push(b'\t');
        }
        mask_into(&mut key, object);
        key.push(b'\t');
        mask_into(&mut key, &rec.message);
        if self.rows > FOLD_AFTER_ROWS {
            if let Some((at, folded)) = self.groups.get_mut(&key) {
                *folded += 1;
                return Some(*at);
            }
            if self.groups.len() >= MAX_GROUPS {
                let coarse = format!("{}\t{}", rec.event_type, rec.reason).into_bytes();
                if let Some((at, folded)) = self.groups.get_mut(&coarse) {
                    *folded += 1;
                    return Some(*at);
                }
                self.groups.insert(coarse, (next, 0));
                return None;
            }
        }
        if self.groups.len() < MAX_GROUPS {
            self.groups.entry(key).or_insert((next, 0));
        }
        None
    }

    /// The groups that folded rows in: (index, rows folded into it).
    pub fn folded(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.groups.values().copied().filter(|&(_, n)| n > 0)
    }
}

/// Writes `text` with every word that holds a digit masked, a message or an object's name
/// (`pod/worker-7f9c2` → `pod/#`): what tells two rows of one storm apart. A word is a run of
/// letters, digits, `-`, `_` and `.`; the mask stops once past 512 bytes (see
/// [`fold_key`](crate::parse::fold_key)).
fn mask_into(out: &mut Vec<u8>, text: &str) {
    masked::<DigitWords, _>(text, &mut Capped::new(out, 512));
}

fn count_of(count: Option<&str>) -> u64 {
    count.and_then(|c| c.parse().ok()).unwrap_or(1)
}

fn newest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn oldest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    a.max(b)
}

/// Folds the row `b` into the record `a`.
pub fn merge_record(a: &mut EventRecord, b: &EventRecord) {
    let count = count_of(a.count.as_deref()) + count_of(b.count.as_deref());
    a.count = Some(count.to_string());
    a.last_seen_age_secs = newest(a.last_seen_age_secs, b.last_seen_age_secs);
    a.first_seen_age_secs = oldest(a.first_seen_age_secs, b.first_seen_age_secs);
}

/// Folds the row event `b` into the event `a`.
pub fn merge_event(a: &mut Event, b: &Event) {
    let count = count_of(a.field("count")) + count_of(b.field("count"));
    set_field(a, "count", count.to_string());
    if let (Some(RawTime::Age { secs: x }), Some(RawTime::Age { secs: y })) =
        (a.raw_time, b.raw_time)
    {
        a.raw_time = Some(RawTime::Age { secs: x.min(y) });
    }
    let secs = |e: &Event| e.field("first_seen_age_secs").and_then(|s| s.parse().ok());
    if let Some(first) = oldest(secs(a), secs(b)) {
        set_field(a, "first_seen_age_secs", first.to_string());
    }
}

/// Sets a field, adding it when absent.
pub fn set_field(ev: &mut Event, key: &str, value: String) {
    match ev.fields.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = value.into(),
        None => ev.fields.push((key.into(), value.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(text: &str) -> String {
        let mut out = Vec::new();
        mask_into(&mut out, text);
        String::from_utf8(out).unwrap_or_else(|e| format!("not UTF-8: {e}"))
    }

    /// The mask as first written (split at every separator, each word walked three times).
    fn mask_reference(text: &str) -> String {
        let mut out = String::with_capacity(text.len().min(256));
        for word in text.split_inclusive(|c: char| !(c.is_alphanumeric() || "-_.".contains(c))) {
            let (body, sep) = match word.char_indices().last() {
                Some((i, c)) if !(c.is_alphanumeric() || "-_.".contains(c)) => word.split_at(i),
                _ => (word, ""),
            };
            if body.chars().any(|c| c.is_ascii_digit()) {
                out.push('#');
            } else {
                out.push_str(body);
            }
            out.push_str(sep);
            if out.len() > 512 {
                break;
            }
        }
        out
    }

    #[test]
    fn the_mask_is_the_one_first_written() {
        let pieces = [
            "a", "Z9", "-", "_", ".", " ", "/", "(", ")", "7", "é", "٣", "ß", ":", "\t", "pod",
            "x1y", "漢", "\u{200b}", ",",
        ];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..3000 {
            let mut text = String::new();
            let len = if round % 50 == 0 { 900 } else { round % 40 };
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push_str(pieces[(x % pieces.len() as u64) as usize]);
            }
            assert_eq!(mask(&text), mask_reference(&text), "{text:?}");
        }
    }

    #[test]
    fn words_with_digits_are_masked() {
        assert_eq!(
            mask("Back-off restarting failed container ray-worker in pod w-7f9c2_default(ab12)"),
            "Back-off restarting failed container ray-worker in pod #(#)"
        );
        assert_eq!(mask("pod/worker-7f9c2"), "pod/#");
        assert_eq!(
            mask("0/3 nodes are available: 3 Insufficient cpu."),
            "#/# nodes are available: # Insufficient cpu."
        );
    }

    fn rec(event_type: &str, reason: &str, message: &str) -> EventRecord {
        EventRecord {
            event_type: event_type.into(),
            reason: reason.into(),
            message: message.into(),
            ..EventRecord::default()
        }
    }

    #[test]
    fn rows_fold_only_past_the_threshold_and_groups_stay_bounded() {
        let mut folder = RowFolder::new(true);
        let mut kept = 0usize;
        for i in 0..FOLD_AFTER_ROWS {
            let r = rec("Warning", "BackOff", &format!("restarting pod w-{i}"));
            assert_eq!(folder.place(&r, "", kept), None);
            kept += 1;
        }
        // Past the threshold a repeat folds into the first row of its group.
        let r = rec("Warning", "BackOff", "restarting pod w-x9");
        assert_eq!(folder.place(&r, "", kept), Some(0));
        // A new template is kept, and is a group of its own.
        let r = rec("Warning", "Unhealthy", "probe failed");
        assert_eq!(folder.place(&r, "", kept), None);
        kept += 1;
        assert_eq!(folder.place(&r, "", kept), Some(kept - 1));
        // Unique messages over many objects: bounded by the group cap.
        for i in 0..3 * MAX_GROUPS {
            let r = rec(
                "Warning",
                &format!("Reason{}", i % 7),
                &format!("text {}", "x".repeat(i % 5000)),
            );
            if folder.place(&r, &format!("pod/p{i}"), kept).is_none() {
                kept += 1;
            }
        }
        assert!(kept <= FOLD_AFTER_ROWS + MAX_GROUPS + 7 + 2, "{kept}");
        let folded: u64 = folder.folded().map(|(_, n)| n).sum();
        assert_eq!(folded as usize + kept, FOLD_AFTER_ROWS + 3 + 3 * MAX_GROUPS);
        // Disabled (the timeline): nothing folds.
        let mut off = RowFolder::new(false);
        for i in 0..2 * FOLD_AFTER_ROWS {
            assert_eq!(off.place(&rec("Normal", "Pulled", "x"), "", i), None);
        }
    }

    #[test]
    fn folded_rows_add_their_counts_and_keep_the_newest_and_oldest_ages() {
        let mut a = rec("Warning", "BackOff", "x");
        a.count = Some("5".into());
        a.last_seen_age_secs = Some(60);
        a.first_seen_age_secs = Some(600);
        let mut b = rec("Warning", "BackOff", "y");
        b.last_seen_age_secs = Some(30);
        b.first_seen_age_secs = Some(900);
        merge_record(&mut a, &b);
        assert_eq!(a.count.as_deref(), Some("6"));
        assert_eq!(
            (a.last_seen_age_secs, a.first_seen_age_secs),
            (Some(30), Some(900))
        );
        let mut ea = a.clone().into_event(1, 1);
        let eb = b.into_event(2, 1);
        merge_event(&mut ea, &eb);
        assert_eq!(ea.field("count"), Some("7"));
        assert_eq!(ea.raw_time, Some(RawTime::Age { secs: 30 }));
        assert_eq!(ea.field("first_seen_age_secs"), Some("900"));
    }
}

#[cfg(test)]
mod parser_tests {
    use super::*;
    use crate::parse::{describe, kube_events, ParseOutput};

    /// A describe and a `kubectl get events` table of `rows` rows of two templates.
    fn tables(rows: usize) -> (String, String) {
        let mut describe = "Name:  w\nNamespace:  default\nEvents:\n  Type     Reason   Age                From     Message\n  ----     ------   ----               ----     -------\n".to_string();
        let mut events = "LAST SEEN   TYPE      REASON    OBJECT       MESSAGE\n".to_string();
        for i in 0..rows {
            let (t, reason, msg) = if i % 2 == 0 {
                (
                    "Warning",
                    "BackOff",
                    format!("Back-off restarting failed container in pod w-{i}_default(a{i})"),
                )
            } else {
                (
                    "Normal",
                    "Pulled",
                    "Container image \"ray:2.9.3\" already present".to_string(),
                )
            };
            let age = format!("{}m (x2 over {}m)", 1 + i % 50, 60 + i % 50);
            describe.push_str(&format!("  {t:<8} {reason:<8} {age:<18} kubelet  {msg}\n"));
            events.push_str(&format!(
                "{:<11} {t:<9} {reason:<9} pod/w-{:<5} {msg}\n",
                format!("{}m", 1 + i % 50),
                i % 3
            ));
        }
        (describe, events)
    }

    #[test]
    fn huge_events_tables_fold_for_analyze_only() {
        let rows = FOLD_AFTER_ROWS + 500;
        let (d, e) = tables(rows);
        for (name, input, parse) in [
            (
                "describe",
                &d,
                describe::parse_with as fn(&[u8], &mut ParseOutput, bool),
            ),
            ("events", &e, kube_events::parse_with),
        ] {
            let mut full = ParseOutput::default();
            parse(input.as_bytes(), &mut full, false);
            let mut folded = ParseOutput::default();
            parse(input.as_bytes(), &mut folded, true);
            let rows_of = |out: &ParseOutput| -> Vec<u32> {
                out.events
                    .iter()
                    .filter(|e| e.field("reason").is_some())
                    .map(|e| e.line)
                    .collect()
            };
            // The timeline keeps every row; analyze keeps the first rows and folds the rest.
            assert_eq!(rows_of(&full).len(), rows, "{name}");
            let kept = rows_of(&folded);
            assert_eq!(kept.len(), FOLD_AFTER_ROWS, "{name}");
            assert_eq!(kept, rows_of(&full)[..FOLD_AFTER_ROWS], "{name}");
            // A row without a count is one occurrence.
            let total = |out: &ParseOutput, key: &str, none: u64| -> u64 {
                out.events
                    .iter()
                    .filter(|e| e.field("reason").is_some())
                    .map(|e| e.field(key).and_then(|c| c.parse().ok()).unwrap_or(none))
                    .sum()
            };
            // Every row is still counted once: the counts add up, the folded rows are told.
            assert_eq!(
                total(&folded, "count", 1),
                total(&full, "count", 1),
                "{name}"
            );
            let folded_rows = total(&folded, "folded_rows", 0);
            assert_eq!(folded_rows, 500, "{name}");
        }
    }
}
