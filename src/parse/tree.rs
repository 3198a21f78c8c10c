//! The vocabulary the three Kubernetes parsers share: `kubectl describe`, `kubectl get events`
//! and YAML / JSON objects all turn into the same two kinds of events.
//!
//! A *fact* is one leaf value of an object, citeable by line, with a normalised `path` so that
//! a describe dump and the object's YAML agree (`status.conditions[0].reason`). A *record* is
//! one Kubernetes Event (a row of an events table or an `Event` object) placed on the
//! timeline. This module owns path normalisation, the builders of both event shapes, the
//! column splitter of `kubectl`'s tabwriter tables and the `Age` cell grammar.
//!
//! It does not walk any document: the structure of describe, YAML and JSON belongs to their
//! own modules.

use crate::event::{Event, Level, RawTime, SourceKind, Text};
use crate::parse::lines::cap_message;
use crate::parse::primitives::human_duration;

/// One path segment as the describe and YAML printers agree on it: spaces removed, lower
/// case. `Last State`, `lastState` → `laststate`; `fruit_app`, `ray.io/cluster` unchanged.
pub fn norm_key(key: &str) -> String {
    if key.is_ascii() {
        return ascii_normalised(key).map(char::from).collect();
    }
    key.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The bytes of [`norm_key`] of an ASCII key, without building it (the Unicode case tables
/// were most of reading a table of events).
fn ascii_normalised(key: &str) -> impl Iterator<Item = u8> + '_ {
    key.bytes()
        .filter(|&b| !char::from(b).is_whitespace())
        .map(|b| b.to_ascii_lowercase())
}

/// `parent.key`, or `key` at the root.
pub fn join_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        let mut path = String::with_capacity(parent.len() + 1 + key.len());
        path.push_str(parent);
        path.push('.');
        path.push_str(key);
        path
    }
}

/// `Kind/namespace/name`, or `Kind/name` for a cluster-scoped object. `None` without a kind
/// and a name: a half-known identity would join facts of unrelated objects.
pub fn object_id(kind: &str, namespace: &str, name: &str) -> Option<String> {
    if kind.is_empty() || name.is_empty() {
        return None;
    }
    Some(if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    })
}

/// A fact event. `value` is `None` for a structural line (a map or list key with nested
/// content, a table header): it keeps the line citeable without pretending to be a leaf.
pub fn fact(
    line: u32,
    n_lines: u32,
    mut message: String,
    path: &str,
    value: Option<String>,
    object: Option<&str>,
) -> Event {
    cap_message(&mut message);
    let mut ev = Event::new(line, message);
    ev.n_lines = n_lines;
    ev.fields.push(("path".into(), path.into()));
    if let Some(mut value) = value {
        cap_message(&mut value);
        ev.fields.push(("value".into(), value.into()));
    }
    if let Some(object) = object {
        ev.fields.push(("object".into(), object.into()));
    }
    ev
}

/// A Kubernetes Event as any of the three sources shows it, before it becomes an [`Event`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventRecord {
    /// `Normal` or `Warning`.
    pub event_type: String,
    pub reason: String,
    pub message: String,
    /// The reporting component (`kubelet`, `default-scheduler`, `rayservice-controller`).
    pub component: String,
    /// `pod/<name>` (tables) or `Kind/namespace/name` (describe, objects).
    pub object: String,
    pub object_kind: String,
    pub object_name: String,
    pub namespace: String,
    pub count: Option<String>,
    /// The raw age text (`2m26s (x5 over 22m)`).
    pub age: Option<String>,
    pub last_seen_age_secs: Option<i64>,
    pub first_seen_age_secs: Option<i64>,
    /// An absolute time (objects only), preferred over the age.
    pub time: Option<RawTime>,
    /// `spec.containers{ray-head}` (SUBOBJECT, involvedObject.fieldPath, or the kubectl
    /// ≥ 1.35 message prefix).
    pub field_path: String,
    /// Source-specific extras (`source`, `event_name`, `first_seen_utc` …).
    pub extra: Vec<(Text, Text)>,
}

impl EventRecord {
    /// A row of a describe `Events:` section (`Type  Reason  Age  From  Message`), with its
    /// header or pasted without it: the age may carry `(x21 over 5m50s)`, the source a host
    /// after a comma (`kubelet, node-1`, kept whole as `source`).
    pub fn describe_row(
        event_type: &str,
        reason: &str,
        age: &str,
        from: &str,
        message: &str,
    ) -> EventRecord {
        let parsed = age_cell(age);
        let mut rec = EventRecord {
            event_type: event_type.to_string(),
            reason: reason.to_string(),
            message: message.to_string(),
            component: from.split(", ").next().unwrap_or(from).to_string(),
            age: (!age.is_empty()).then(|| age.to_string()),
            last_seen_age_secs: parsed.last_secs,
            first_seen_age_secs: parsed.first_secs.or(parsed.last_secs),
            count: Some(parsed.count.unwrap_or(1).to_string()),
            ..EventRecord::default()
        };
        if from.contains(", ") {
            rec.extra.push(("source".into(), from.into()));
        }
        rec
    }

    /// The timeline event: `kind = KubeEvents`, level from the type, time from the object's
    /// timestamps or else the last-seen age.
    pub fn into_event(self, line: u32, n_lines: u32) -> Event {
        let mut message = self.message;
        cap_message(&mut message);
        let mut ev = Event::new(line, message);
        ev.n_lines = n_lines;
        ev.kind = SourceKind::KubeEvents;
        ev.level = match self.event_type.as_str() {
            "Normal" => Level::Info,
            other => Level::parse(other).unwrap_or(Level::Info),
        };
        ev.component = self.component.into();
        ev.raw_time = self
            .time
            .or(self.last_seen_age_secs.map(|secs| RawTime::Age { secs }));
        let mut field_path = self.field_path;
        if field_path.is_empty() {
            field_path = message_field_path(&ev.message)
                .unwrap_or_default()
                .to_string();
        }
        let fields = &mut ev.fields;
        let mut push = |k: &str, v: String| {
            if !v.is_empty() {
                fields.push((k.into(), v.into()));
            }
        };
        push("type", self.event_type);
        push("reason", self.reason);
        push("object", self.object);
        push("object_kind", self.object_kind);
        push("object_name", self.object_name);
        push("namespace", self.namespace);
        push("count", self.count.unwrap_or_default());
        push("age", self.age.unwrap_or_default());
        push(
            "first_seen_age_secs",
            self.first_seen_age_secs
                .map(|s| s.to_string())
                .unwrap_or_default(),
        );
        push("field_path", field_path);
        for (k, v) in self.extra {
            push(&k, v.into_string());
        }
        ev
    }
}

/// The `spec.containers{ray-head}: ` prefix kubectl ≥ 1.35 puts before an event's message.
pub fn message_field_path(message: &str) -> Option<&str> {
    let (head, _) = message.split_once(": ")?;
    let ok = (head.starts_with("spec.") || head.starts_with("status."))
        && head.ends_with('}')
        && head.contains('{')
        && !head.contains(' ');
    ok.then_some(head)
}

/// An `Age` / `LAST SEEN` cell: `47s`, `2m26s (x5 over 22m)`, `<unknown>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgeCell {
    pub last_secs: Option<i64>,
    pub count: Option<u32>,
    pub first_secs: Option<i64>,
}

/// Reads an age cell. `<unknown>`, `<invalid>` and anything unexpected give no times.
pub fn age_cell(text: &str) -> AgeCell {
    let mut cell = AgeCell::default();
    let Ok((rest, last)) = human_duration(text.trim()) else {
        return cell;
    };
    let rest = rest.trim_start();
    if rest.is_empty() {
        cell.last_secs = Some(last);
        return cell;
    }
    // `(x5 over 22m)`.
    let Some(inner) = rest.strip_prefix("(x").and_then(|r| r.strip_suffix(')')) else {
        return cell;
    };
    let Some((count, first)) = inner.split_once(" over ") else {
        return cell;
    };
    cell.last_secs = Some(last);
    cell.count = count.parse().ok();
    cell.first_secs = match human_duration(first) {
        Ok(("", secs)) => Some(secs),
        _ => None,
    };
    cell
}

/// The columns of a tabwriter table, found from its header line. Cells are padded with at
/// least two spaces, so a header cell may hold single spaces (`LAST SEEN`, `CPU Requests`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    /// Header names as printed.
    pub names: Vec<String>,
    /// Character column where each cell starts.
    starts: Vec<usize>,
    /// [`norm_key`] of each name, for [`Columns::index`] (asked a dozen times a row).
    keys: Vec<String>,
}

impl Columns {
    /// Reads a header line: at least two cells, each made of letters and single spaces and
    /// starting with an upper-case letter. Anything with a `:` is a key, not a header.
    pub fn from_header(line: &str) -> Option<Columns> {
        Columns::read_header(line, false)
    }

    /// Reads the header of a `kubectl get` table, whose names may also hold a `-`
    /// (`INTERNAL-IP`, `UP-TO-DATE`).
    pub fn from_get_header(line: &str) -> Option<Columns> {
        Columns::read_header(line, true)
    }

    fn read_header(line: &str, dashes: bool) -> Option<Columns> {
        let mut names = Vec::new();
        let mut starts = Vec::new();
        for (start, cell) in cells(line) {
            let first_upper = cell.chars().next().is_some_and(|c| c.is_ascii_uppercase());
            let letters = cell
                .chars()
                .all(|c| c.is_ascii_alphabetic() || c == ' ' || (dashes && c == '-'));
            if !first_upper || !letters {
                return None;
            }
            names.push(cell.to_string());
            starts.push(start);
        }
        let keys = names.iter().map(|n| norm_key(n)).collect();
        (names.len() >= 2).then_some(Columns {
            names,
            starts,
            keys,
        })
    }

    /// Cuts a row at the header's column starts. When a cut would split a word (a row that
    /// is not aligned with its header), falls back to splitting on runs of two spaces.
    pub fn split<'a>(&self, row: &'a str) -> Vec<&'a str> {
        let offsets = byte_offsets(row, &self.starts);
        let aligned = offsets.iter().skip(1).all(|&at| {
            let before = row.get(..at).and_then(|s| s.chars().next_back());
            let after = row.get(at..).and_then(|s| s.chars().next());
            !(before.is_some_and(|c| c != ' ') && after.is_some_and(|c| c != ' '))
        });
        if aligned {
            let mut out = Vec::with_capacity(offsets.len());
            for (idx, &start) in offsets.iter().enumerate() {
                let end = offsets.get(idx + 1).copied().unwrap_or(row.len());
                out.push(row.get(start..end).unwrap_or("").trim());
            }
            // Tabwriter never leaves a double space inside a cell other than the last one.
            let n_inner = out.len().saturating_sub(1);
            if !out.iter().take(n_inner).any(|c| c.contains("  ")) {
                return out;
            }
        }
        let mut out: Vec<&str> = Vec::with_capacity(self.names.len());
        for (start, cell) in cells(row) {
            if out.len() + 1 == self.names.len() {
                // The last column takes the rest of the line, spaces included.
                out.push(row.get(start..).unwrap_or(cell).trim());
                break;
            }
            out.push(cell);
        }
        while out.len() < self.names.len() {
            out.push("");
        }
        out
    }

    /// Index of a column by its name, compared without spaces and case.
    pub fn index(&self, name: &str) -> Option<usize> {
        let mut buf = [0u8; 32];
        if name.is_ascii() && name.len() <= buf.len() {
            let mut n = 0;
            for (slot, b) in buf.iter_mut().zip(ascii_normalised(name)) {
                *slot = b;
                n += 1;
            }
            let key = buf.get(..n).unwrap_or_default();
            return self.keys.iter().position(|k| k.as_bytes() == key);
        }
        let key = norm_key(name);
        self.keys.iter().position(|k| *k == key)
    }
}

/// The byte offset in `row` of each character column; past the end gives `row.len()`.
fn byte_offsets(row: &str, char_cols: &[usize]) -> Vec<usize> {
    if row.is_ascii() {
        return char_cols.iter().map(|&c| c.min(row.len())).collect();
    }
    let mut out = Vec::with_capacity(char_cols.len());
    let mut it = row.char_indices().map(|(b, _)| b).enumerate();
    for &col in char_cols {
        let at = it
            .by_ref()
            .find(|&(c, _)| c == col)
            .map_or(row.len(), |(_, b)| b);
        out.push(at);
    }
    out
}

/// Cells separated by runs of two or more spaces, with their character column.
fn cells(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = line;
    let mut col = 0usize;
    std::iter::from_fn(move || {
        let lead = rest.len() - rest.trim_start_matches(' ').len();
        col += lead;
        rest = rest.get(lead..).unwrap_or("");
        if rest.is_empty() {
            return None;
        }
        let end = rest.find("  ").unwrap_or(rest.len());
        let cell = rest.get(..end).unwrap_or(rest);
        let start = col;
        col += cell.chars().count();
        rest = rest.get(end..).unwrap_or("");
        Some((start, cell.trim_end()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(header: &str, row: &str, expect: &str) {
        let got = match Columns::from_header(header) {
            Some(cols) => cols
                .names
                .iter()
                .zip(cols.split(row))
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" | "),
            None => "no header".to_string(),
        };
        assert_eq!(got, expect);
    }

    #[test]
    fn keys() {
        #![allow(clippy::unwrap_used)]
        assert_eq!(norm_key("Last State"), "laststate");
        assert_eq!(norm_key("lastState"), "laststate");
        assert_eq!(norm_key("Serve Config V2"), "serveconfigv2");
        assert_eq!(norm_key("fruit_app"), "fruit_app");
        assert_eq!(norm_key("ray.io/cluster"), "ray.io/cluster");
        assert_eq!(norm_key("Dashboard - Host"), "dashboard-host");
        assert_eq!(norm_key("Ünïcode Kéy\u{b}Ω"), "ünïcodekéyω");
        let keys = [
            "LAST SEEN",
            "lastSeen",
            "last seen",
            "Last\tSeen",
            "ΣΑ B",
            "σα b",
            "",
            " ",
        ];
        // The ASCII path gives what the Unicode tables give.
        let unicode = |k: &str| -> String {
            k.chars()
                .filter(|c| !c.is_whitespace())
                .flat_map(char::to_lowercase)
                .collect()
        };
        for a in keys {
            assert_eq!(norm_key(a), unicode(a), "{a:?}");
        }
        // A column is found by the name it is asked by as `norm_key` equality finds it: spaces
        // and case aside, a Kelvin sign lower-cased to `k`, a name too long for the fast path.
        let cols = Columns::from_header("LAST SEEN  TYPE  KIND  NAME  MESSAGE").unwrap();
        let long = "M E S S A G E                                                 ";
        for q in [
            "last seen",
            "LASTSEEN",
            "Type",
            "\u{212A}IND",
            "name ",
            "message",
            long,
            "nope",
            "",
        ] {
            let want = cols.names.iter().position(|n| norm_key(n) == norm_key(q));
            assert_eq!(cols.index(q), want, "{q:?}");
        }
        assert_eq!(cols.index("\u{212A}ind"), Some(2));
        assert_eq!(cols.index(long), Some(4));
    }

    #[test]
    fn tables() {
        check(
            "  Type     Reason            Age                  From               Message",
            "  Warning  FailedScheduling  2m26s (x5 over 22m)  default-scheduler  0/3 nodes are available: 3 Insufficient cpu",
            "Type=Warning | Reason=FailedScheduling | Age=2m26s (x5 over 22m) | From=default-scheduler | Message=0/3 nodes are available: 3 Insufficient cpu",
        );
        check(
            "LAST SEEN   TYPE      REASON    OBJECT      SUBOBJECT   MESSAGE",
            "5m          Normal    Pulled    pod/a                   Container  image",
            "LAST SEEN=5m | TYPE=Normal | REASON=Pulled | OBJECT=pod/a | SUBOBJECT= | MESSAGE=Container  image",
        );
        // A row that does not line up with its header still splits on double spaces.
        check(
            "  Type  Reason  Age  From  Message",
            "  Normal  Created  3m  kubelet  Created container  ray-head",
            "Type=Normal | Reason=Created | Age=3m | From=kubelet | Message=Created container  ray-head",
        );
        check("  Type:  EmptyDir", "", "no header");
        check(
            "  ulimit -n 65536; ray start  --address=x:6379",
            "",
            "no header",
        );
        check("  Type   Status", "  Ready  é", "Type=Ready | Status=é");
        check("  Name  Message", "  é  x y", "Name=é | Message=x y");
    }

    #[test]
    fn ages() {
        let cell = |t| {
            let a = age_cell(t);
            format!("{:?} {:?} {:?}", a.last_secs, a.count, a.first_secs)
        };
        assert_eq!(cell("2m26s (x5 over 22m)"), "Some(146) Some(5) Some(1320)");
        assert_eq!(cell("31m"), "Some(1860) None None");
        assert_eq!(cell("<unknown>"), "None None None");
        assert_eq!(cell("<invalid>"), "None None None");
        assert_eq!(cell("3m (x"), "None None None");
    }

    #[test]
    fn field_paths() {
        assert_eq!(
            message_field_path("spec.containers{ray-head}: Back-off restarting failed container"),
            Some("spec.containers{ray-head}")
        );
        assert_eq!(
            message_field_path("0/3 nodes are available: 3 Insufficient cpu"),
            None
        );
    }
}
