//! `kubectl get events` tables: the default columns (`LAST SEEN TYPE REASON OBJECT MESSAGE`),
//! `-o wide`, the old printer (`LAST SEEN FIRST SEEN COUNT NAME KIND SUBOBJECT TYPE REASON
//! SOURCE MESSAGE`) and a leading `NAMESPACE` column with `-A`.
//!
//! Columns come from the header line, so any order and subset works; a file may hold several
//! tables. Each row becomes one Kubernetes Event record timed by its last-seen age. Header
//! lines are structural events, blank lines fold into the previous event. Rows pasted
//! without their header (`5m  Warning  FailedScheduling  pod/x  …`, or a describe `Events:`
//! section's `Warning  BackOff  62s (x21 over 5m50s)  kubelet  …`) are read by their shape
//! and keep the whole row in a `row` field; any other line outside a table
//! (`No resources found …`) is a raw, unparsed event. This module does not read
//! YAML or JSON events (`kube_object` does) nor describe `Events:` sections (`describe` does).

use crate::event::Event;
use crate::parse::lines::{decode, split_lines};
use crate::parse::primitives::human_duration;
use crate::parse::row_fold::{merge_event, set_field, RowFolder};
use crate::parse::tree::{age_cell, Columns, EventRecord};
use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    parse_with(input, out, false);
}

/// [`parse`], folding the rows of a huge table when `fold` (see [`row_fold`](crate::parse::row_fold)).
pub fn parse_with(input: &[u8], out: &mut ParseOutput, fold: bool) {
    let mut reader = Reader::new(fold);
    reader.lines(input, 0, out);
    reader.finish(out);
}

/// [`parse_with`] fed its input in pieces of whole lines (`parse::Feed`): a table of millions
/// of rows is read as it arrives, never held whole.
pub struct Reader {
    folder: RowFolder,
    /// The columns of the table being read.
    columns: Option<Columns>,
}

impl Reader {
    pub fn new(fold: bool) -> Reader {
        Reader {
            folder: RowFolder::new(fold),
            columns: None,
        }
    }

    /// Reads the lines of `input`, numbered after the `before` lines already read.
    pub fn lines(&mut self, input: &[u8], before: u32, out: &mut ParseOutput) {
        for (no, raw) in split_lines(input) {
            let no = no.saturating_add(before);
            self.line(no, &decode(raw), out);
        }
    }

    fn line(&mut self, no: u32, line: &str, out: &mut ParseOutput) {
        if line.trim().is_empty() {
            match out.events.last_mut() {
                Some(prev) => prev.n_lines += 1,
                None => out.events.push(Event::new(no, String::new())),
            }
            return;
        }
        if let Some(header) = events_header(line) {
            self.columns = Some(header);
            out.events.push(Event::new(no, line.trim().to_string()));
            return;
        }
        if let Some(cols) = &self.columns {
            let rec = row(cols, line);
            match self.folder.place(&rec, &rec.object, out.events.len()) {
                Some(at) => {
                    let ev = rec.into_event(no, 1);
                    if let Some(into) = out.events.get_mut(at) {
                        merge_event(into, &ev);
                    }
                }
                None => out.events.push(rec.into_event(no, 1)),
            }
            return;
        }
        if let Some(rec) = headerless_row(line) {
            out.events.push(headerless_event(rec, no));
        } else if is_scaffold(line) {
            out.events.push(Event::new(no, line.trim().to_string()));
        } else {
            out.unparsed_lines += 1;
            out.events.push(Event::new(no, line.to_string()));
        }
    }

    /// Gives each folded row its count.
    pub fn finish(self, out: &mut ParseOutput) {
        for (at, folded) in self.folder.folded() {
            if let Some(ev) = out.events.get_mut(at) {
                set_field(ev, "folded_rows", folded.to_string());
            }
        }
    }
}

/// The lines around a pasted describe `Events:` section that are not rows: `Events:`, its
/// `Type  Reason  Age  From  Message` header and the `----` rule under it.
pub fn is_scaffold(line: &str) -> bool {
    let t = line.trim();
    if t == "Events:" {
        return true;
    }
    if t.starts_with("----") && t.chars().all(|c| c == '-' || c == ' ') {
        return true;
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    words == ["Type", "Reason", "Age", "From", "Message"]
}

/// A row of an events table pasted without its header, in either shape people paste:
/// `kubectl get events` (`[namespace]  5m  Warning  FailedScheduling  pod/x  message`) or a
/// describe `Events:` section (`Warning  BackOff  62s (x21 over 5m50s)  kubelet  message`).
/// The record keeps the whole row in `row`, since no header says what its cells are.
pub fn headerless_row(line: &str) -> Option<EventRecord> {
    let words = words(line);
    let word = |i: usize| words.get(i).map_or("", |&(_, w)| w);
    let rest = |i: usize| {
        words
            .get(i)
            .and_then(|&(at, _)| line.get(at..))
            .unwrap_or("")
            .trim_end()
    };
    let is_type = |w: &str| w == "Normal" || w == "Warning";
    let is_reason = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && w.chars().all(|c| c.is_ascii_alphanumeric())
    };
    let mut rec = if is_type(word(0)) && is_reason(word(1)) && is_age(word(2)) {
        // Describe shape: the age may carry `(x21 over 5m50s)`, the source `, <host>`.
        let mut i = 3;
        let mut age_end = words.get(2).map_or(0, |&(at, w)| at + w.len());
        if word(3).starts_with("(x") && word(4) == "over" && word(5).ends_with(')') {
            age_end = words.get(5).map_or(age_end, |&(at, w)| at + w.len());
            i = 6;
        }
        let age_start = words.get(2).map_or(0, |&(at, _)| at);
        let age = line.get(age_start..age_end).unwrap_or("");
        let mut from_end = i + 1;
        if word(i).ends_with(',') && !word(i + 1).is_empty() {
            from_end = i + 2;
        }
        let from = match (words.get(i), words.get(from_end - 1)) {
            (Some(&(a, _)), Some(&(b, w))) => line.get(a..b + w.len()).unwrap_or(""),
            _ => return None,
        };
        let mut rec = EventRecord::describe_row(word(0), word(1), age, from, rest(from_end));
        if let Some((name, namespace)) = pod_in_message(&rec.message) {
            rec.object = format!("pod/{name}");
            rec.object_kind = "pod".to_string();
            rec.object_name = name.to_string();
            rec.namespace = namespace.to_string();
        }
        rec
    } else {
        // `kubectl get events` shape, with `-A`'s namespace first or not.
        let at = if is_age(word(0)) {
            0
        } else if is_age(word(1)) && !word(0).is_empty() {
            1
        } else {
            return None;
        };
        let object = word(at + 3);
        let object_ok = object
            .split_once('/')
            .is_some_and(|(k, n)| !k.is_empty() && !n.is_empty());
        if !(is_type(word(at + 1)) && is_reason(word(at + 2)) && object_ok) {
            return None;
        }
        let age = age_cell(word(at));
        let (kind, name) = object.split_once('/').unwrap_or(("", ""));
        EventRecord {
            event_type: word(at + 1).to_string(),
            reason: word(at + 2).to_string(),
            message: rest(at + 4).to_string(),
            namespace: if at == 1 { word(0) } else { "" }.to_string(),
            object: object.to_string(),
            object_kind: kind.to_string(),
            object_name: name.to_string(),
            age: Some(word(at).to_string()),
            last_seen_age_secs: age.last_secs,
            ..EventRecord::default()
        }
    };
    rec.extra.push(("row".into(), line.trim_end().into()));
    Some(rec)
}

/// A row pasted without its header, as an event: its type is told by the level alone (and
/// the whole `row`), not by a `type` field, so that rules telling a full listing from a
/// pasted tail (the thin alternatives, which skip events with a `type`) read it as the
/// pasted line it is.
fn headerless_event(mut rec: EventRecord, line: u32) -> Event {
    let kind = std::mem::take(&mut rec.event_type);
    let mut ev = rec.into_event(line, 1);
    if kind == "Warning" {
        ev.level = crate::event::Level::Warning;
    }
    ev
}

/// An age cell's first word: `5m`, `62s`, `<unknown>`, `<invalid>`.
fn is_age(word: &str) -> bool {
    word == "<unknown>" || word == "<invalid>" || matches!(human_duration(word), Ok(("", _)))
}

/// Words separated by white space, with their byte offsets.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in line.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, line.get(s..i).unwrap_or("")));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, line.get(s..).unwrap_or("")));
    }
    out
}

/// The pod named by the kubelet's `… in pod <name>_<namespace>(<uid>)`.
fn pod_in_message(message: &str) -> Option<(&str, &str)> {
    let (_, after) = message.split_once(" in pod ")?;
    let (pod, _) = after.split_once('(')?;
    let (name, namespace) = pod.rsplit_once('_')?;
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
    };
    (ok(name) && ok(namespace)).then_some((name, namespace))
}

/// A header names at least `TYPE` and `REASON` (`LASTSEEN` without the space in old kubectl).
fn events_header(line: &str) -> Option<Columns> {
    let cols = Columns::from_header(line)?;
    let is_events = cols.index("TYPE").is_some()
        && cols.index("REASON").is_some()
        && cols
            .names
            .iter()
            .all(|n| n.chars().all(|c| !c.is_ascii_lowercase()));
    is_events.then_some(cols)
}

/// One table row as an event record.
pub fn row(cols: &Columns, line: &str) -> EventRecord {
    let cells = cols.split(line);
    let cell = |name: &str| -> &str {
        cols.index(name)
            .and_then(|idx| cells.get(idx))
            .copied()
            .unwrap_or("")
    };
    let mut rec = EventRecord {
        event_type: cell("TYPE").to_string(),
        reason: cell("REASON").to_string(),
        message: cell("MESSAGE").to_string(),
        namespace: cell("NAMESPACE").to_string(),
        field_path: cell("SUBOBJECT").to_string(),
        ..EventRecord::default()
    };
    let last_seen = cell("LAST SEEN");
    if !last_seen.is_empty() {
        let age = age_cell(last_seen);
        rec.age = Some(last_seen.to_string());
        rec.last_seen_age_secs = age.last_secs;
        rec.first_seen_age_secs = age.first_secs;
        rec.count = age.count.map(|n| n.to_string());
    }
    let first_seen = cell("FIRST SEEN");
    if !first_seen.is_empty() {
        rec.first_seen_age_secs = age_cell(first_seen).last_secs.or(rec.first_seen_age_secs);
    }
    let count = cell("COUNT");
    if !count.is_empty() {
        rec.count = Some(count.to_string());
    }
    let source = cell("SOURCE");
    if !source.is_empty() {
        rec.component = source.split(", ").next().unwrap_or(source).to_string();
        rec.extra.push(("source".into(), source.into()));
    }
    let object = cell("OBJECT");
    let kind = cell("KIND");
    if !object.is_empty() {
        rec.object = object.to_string();
        if let Some((k, n)) = object.split_once('/') {
            rec.object_kind = k.to_string();
            rec.object_name = n.to_string();
        }
        let name = cell("NAME");
        if !name.is_empty() {
            rec.extra.push(("event_name".into(), name.into()));
        }
    } else if !kind.is_empty() {
        // The old printer's NAME is the involved object's name.
        let name = cell("NAME");
        rec.object = format!("{}/{name}", kind.to_ascii_lowercase());
        rec.object_kind = kind.to_ascii_lowercase();
        rec.object_name = name.to_string();
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RawTime;

    /// One line per event: line, n_lines, time, level, kind, component, fields, message.
    fn render(out: &ParseOutput) -> String {
        let mut s = String::new();
        for ev in &out.events {
            let time = match ev.raw_time {
                Some(RawTime::Age { secs }) => format!("age={secs}"),
                Some(other) => format!("{other:?}"),
                None => "-".to_string(),
            };
            let fields: Vec<String> = ev.fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.push_str(&format!(
                "{} {} {} {} {} [{}] {}\n",
                ev.line,
                ev.n_lines,
                time,
                ev.level.as_str(),
                ev.component,
                fields.join(" "),
                ev.message.replace('\n', "⏎")
            ));
        }
        if out.unparsed_lines > 0 {
            s.push_str(&format!("unparsed={}\n", out.unparsed_lines));
        }
        s
    }

    #[track_caller]
    fn check(input: &str, expect: &str) {
        let mut out = ParseOutput::default();
        parse(input.as_bytes(), &mut out);
        let n_physical = split_lines(input.as_bytes()).count() as u32;
        let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
        assert_eq!(n_counted, n_physical, "every line in exactly one event");
        assert_eq!(render(&out).trim_end(), expect.trim());
    }

    #[test]
    fn default_columns() {
        check(
            "LAST SEEN   TYPE      REASON              OBJECT                                                            MESSAGE
32m         Warning   FailedScheduling    pod/rayservice-sample-raycluster-nrqvj-small-group-worker-fl4fm   0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod..
31m         Normal    CreatedRayCluster   rayservice/rayservice-sample                                      Created RayCluster default/rayservice-sample-raycluster-hnz7k
",
            "
1 1 - info  [] LAST SEEN   TYPE      REASON              OBJECT                                                            MESSAGE
2 1 age=1920 warning  [type=Warning reason=FailedScheduling object=pod/rayservice-sample-raycluster-nrqvj-small-group-worker-fl4fm object_kind=pod object_name=rayservice-sample-raycluster-nrqvj-small-group-worker-fl4fm age=32m] 0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod..
3 1 age=1860 info  [type=Normal reason=CreatedRayCluster object=rayservice/rayservice-sample object_kind=rayservice object_name=rayservice-sample age=31m] Created RayCluster default/rayservice-sample-raycluster-hnz7k",
        );
    }

    #[test]
    fn back_off_and_pulled() {
        check(
            "LAST SEEN   TYPE      REASON    OBJECT                                                            MESSAGE
23m         Warning   BackOff   pod/rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv   Back-off restarting failed container ray-worker in pod rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv_default(f25d3bf696867c18964eb2e95491e60e)
22m         Normal    Pulled    pod/rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv   Container image \"rayproject/ray:2.9.3\" already present on machine",
            "
1 1 - info  [] LAST SEEN   TYPE      REASON    OBJECT                                                            MESSAGE
2 1 age=1380 warning  [type=Warning reason=BackOff object=pod/rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv object_kind=pod object_name=rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv age=23m] Back-off restarting failed container ray-worker in pod rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv_default(f25d3bf696867c18964eb2e95491e60e)
3 1 age=1320 info  [type=Normal reason=Pulled object=pod/rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv object_kind=pod object_name=rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv age=22m] Container image \"rayproject/ray:2.9.3\" already present on machine",
        );
    }

    #[test]
    fn all_namespaces_and_field_path_prefix() {
        check(
            "NAMESPACE   LAST SEEN   TYPE      REASON    OBJECT                MESSAGE
default     5m          Warning   BackOff   pod/rs-head-tfg82     spec.containers{ray-head}: Back-off restarting failed container ray-head in pod rs-head-tfg82_default(0c1f)
",
            "
1 1 - info  [] NAMESPACE   LAST SEEN   TYPE      REASON    OBJECT                MESSAGE
2 1 age=300 warning  [type=Warning reason=BackOff object=pod/rs-head-tfg82 object_kind=pod object_name=rs-head-tfg82 namespace=default age=5m field_path=spec.containers{ray-head}] spec.containers{ray-head}: Back-off restarting failed container ray-head in pod rs-head-tfg82_default(0c1f)",
        );
    }

    #[test]
    fn wide_columns() {
        check(
            "LAST SEEN   TYPE      REASON             OBJECT                 SUBOBJECT                   SOURCE                       MESSAGE                                     FIRST SEEN   COUNT   NAME
2m          Warning   FailedScheduling   pod/rs-worker-fl4fm                                default-scheduler            0/3 nodes are available: 3 Insufficient cpu   22m          5       rs-worker-fl4fm.17d8f2a1
40s         Normal    Pulling            pod/rs-head-tfg82      spec.containers{ray-head}   kubelet, gke-pool-1-abcd     Pulling image \"rayproject/ray:2.9.3\"         40s          1       rs-head-tfg82.17d8f2b9",
            "
1 1 - info  [] LAST SEEN   TYPE      REASON             OBJECT                 SUBOBJECT                   SOURCE                       MESSAGE                                     FIRST SEEN   COUNT   NAME
2 1 age=120 warning default-scheduler [type=Warning reason=FailedScheduling object=pod/rs-worker-fl4fm object_kind=pod object_name=rs-worker-fl4fm count=5 age=2m first_seen_age_secs=1320 source=default-scheduler event_name=rs-worker-fl4fm.17d8f2a1] 0/3 nodes are available: 3 Insufficient cpu
3 1 age=40 info kubelet [type=Normal reason=Pulling object=pod/rs-head-tfg82 object_kind=pod object_name=rs-head-tfg82 count=1 age=40s first_seen_age_secs=40 field_path=spec.containers{ray-head} source=kubelet, gke-pool-1-abcd event_name=rs-head-tfg82.17d8f2b9] Pulling image \"rayproject/ray:2.9.3\"",
        );
    }

    #[test]
    fn old_printer() {
        check(
            "LASTSEEN   FIRSTSEEN   COUNT     NAME             KIND      SUBOBJECT                   TYPE      REASON    SOURCE              MESSAGE
1m         1h          12        rs-head-tfg82    Pod       spec.containers{ray-head}   Warning   BackOff   kubelet, node-1     Back-off restarting failed container",
            "
1 1 - info  [] LASTSEEN   FIRSTSEEN   COUNT     NAME             KIND      SUBOBJECT                   TYPE      REASON    SOURCE              MESSAGE
2 1 age=60 warning kubelet [type=Warning reason=BackOff object=pod/rs-head-tfg82 object_kind=pod object_name=rs-head-tfg82 count=12 age=1m first_seen_age_secs=3600 field_path=spec.containers{ray-head} source=kubelet, node-1] Back-off restarting failed container",
        );
    }

    #[test]
    fn rows_without_header() {
        check(
            "5m          Warning   FailedScheduling   pod/rs-worker-fl4fm   0/3 nodes are available: 3 Insufficient cpu.  preemption: 0/3
default   40s   Normal   Pulling   pod/rs-head-tfg82   Pulling image \"rayproject/ray:2.9.3\"
No resources found in default namespace.",
            "
1 1 age=300 warning  [reason=FailedScheduling object=pod/rs-worker-fl4fm object_kind=pod object_name=rs-worker-fl4fm age=5m row=5m          Warning   FailedScheduling   pod/rs-worker-fl4fm   0/3 nodes are available: 3 Insufficient cpu.  preemption: 0/3] 0/3 nodes are available: 3 Insufficient cpu.  preemption: 0/3
2 1 age=40 info  [reason=Pulling object=pod/rs-head-tfg82 object_kind=pod object_name=rs-head-tfg82 namespace=default age=40s row=default   40s   Normal   Pulling   pod/rs-head-tfg82   Pulling image \"rayproject/ray:2.9.3\"] Pulling image \"rayproject/ray:2.9.3\"
3 1 - info  [] No resources found in default namespace.
unparsed=1",
        );
    }

    #[test]
    fn describe_rows_without_header() {
        check(
            "Events:
  Type     Reason     Age                   From               Message
  ----     ------     ----                  ----               -------
  Warning  BackOff    62s (x21 over 5m50s)   kubelet            Back-off restarting failed container ray-head in pod fruit-svc-raycluster-x2b9k-head-7nq4d_default(5b0c3e2e-6f1c-4b9e-9d55-0f2f1a7a3c11)
  Normal   Pulled     3m                     kubelet, node-1    Container image \"rayproject/ray:2.9.3\" already present on machine
  Warning  Unhealthy  27m (x476 over 72m)    kubelet  Readiness probe failed:",
            "
1 1 - info  [] Events:
2 1 - info  [] Type     Reason     Age                   From               Message
3 1 - info  [] ----     ------     ----                  ----               -------
4 1 age=62 warning kubelet [reason=BackOff object=pod/fruit-svc-raycluster-x2b9k-head-7nq4d object_kind=pod object_name=fruit-svc-raycluster-x2b9k-head-7nq4d namespace=default count=21 age=62s (x21 over 5m50s) first_seen_age_secs=350 row=  Warning  BackOff    62s (x21 over 5m50s)   kubelet            Back-off restarting failed container ray-head in pod fruit-svc-raycluster-x2b9k-head-7nq4d_default(5b0c3e2e-6f1c-4b9e-9d55-0f2f1a7a3c11)] Back-off restarting failed container ray-head in pod fruit-svc-raycluster-x2b9k-head-7nq4d_default(5b0c3e2e-6f1c-4b9e-9d55-0f2f1a7a3c11)
5 1 age=180 info kubelet [reason=Pulled count=1 age=3m first_seen_age_secs=180 source=kubelet, node-1 row=  Normal   Pulled     3m                     kubelet, node-1    Container image \"rayproject/ray:2.9.3\" already present on machine] Container image \"rayproject/ray:2.9.3\" already present on machine
6 1 age=1620 warning kubelet [reason=Unhealthy count=476 age=27m (x476 over 72m) first_seen_age_secs=4320 row=  Warning  Unhealthy  27m (x476 over 72m)    kubelet  Readiness probe failed:] Readiness probe failed:",
        );
    }

    #[test]
    fn unknown_ages_have_no_time() {
        check(
            "LAST SEEN   TYPE     REASON   OBJECT   MESSAGE
<unknown>   Normal   Created  pod/a    Created container",
            "
1 1 - info  [] LAST SEEN   TYPE     REASON   OBJECT   MESSAGE
2 1 - info  [type=Normal reason=Created object=pod/a object_kind=pod object_name=a age=<unknown>] Created container",
        );
    }

    #[test]
    fn nasty_inputs() {
        check("", "");
        check("\n\n", "1 2 - info  [] ");
        check(
            "No resources found in default namespace.\r\n",
            "1 1 - info  [] No resources found in default namespace.\nunparsed=1",
        );
        check(
            "\u{0}\u{1}garbage\n\nLAST SEEN  TYPE",
            "1 2 - info  [] \u{0}\u{1}garbage\n3 1 - info  [] LAST SEEN  TYPE\nunparsed=2",
        );
        // A truncated row keeps what it has.
        check(
            "LAST SEEN   TYPE      REASON    OBJECT   MESSAGE\n3m          Warn",
            "1 1 - info  [] LAST SEEN   TYPE      REASON    OBJECT   MESSAGE\n2 1 age=180 info  [type=Warn age=3m] ",
        );
        let mut out = ParseOutput::default();
        parse(
            b"LAST SEEN  TYPE  REASON  OBJECT  MESSAGE\n1m  Normal  X  pod/a  \xff\xfe",
            &mut out,
        );
        assert_eq!(out.events.len(), 2);
        let giant = format!(
            "LAST SEEN  TYPE  REASON  OBJECT  MESSAGE\n1m  Normal  X  pod/a  {}",
            "y".repeat(200_000)
        );
        let mut out = ParseOutput::default();
        parse(giant.as_bytes(), &mut out);
        assert!(out.events.iter().all(|e| e.message.len() < 70_000));
    }

    /// Every prefix of a table (cut anywhere) keeps each physical line in exactly one event.
    #[test]
    fn truncated_tables_keep_every_line() {
        let table = "NAMESPACE   LAST SEEN   TYPE      REASON    OBJECT                MESSAGE
default     5m          Warning   BackOff   pod/rs-head-tfg82     Back-off restarting failed container ray-head é
default     <unknown>   Normal    Pulled    pod/rs-head-tfg82     Container image \"rayproject/ray:2.9.3\" already present

default     3m          Normal    Created   pod/rs-head-tfg82     Created container ray-head
";
        let bytes = table.as_bytes();
        for cut in 0..bytes.len() {
            let input = bytes.get(..cut).unwrap_or(bytes);
            let mut out = ParseOutput::default();
            parse(input, &mut out);
            let n_physical = split_lines(input).count() as u32;
            let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
            assert_eq!(n_counted, n_physical, "cut at {cut}");
        }
    }
}
