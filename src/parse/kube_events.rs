//! `kubectl get events` tables: the default columns (`LAST SEEN TYPE REASON OBJECT MESSAGE`),
//! `-o wide`, the old printer (`LAST SEEN FIRST SEEN COUNT NAME KIND SUBOBJECT TYPE REASON
//! SOURCE MESSAGE`) and a leading `NAMESPACE` column with `-A`.
//!
//! Columns come from the header line, so any order and subset works; a file may hold several
//! tables. Each row becomes one Kubernetes Event record timed by its last-seen age. Header
//! lines are structural events, blank lines fold into the previous event, and a line outside
//! any table (`No resources found …`) is a raw, unparsed event. This module does not read
//! YAML or JSON events (`kube_object` does) nor describe `Events:` sections (`describe` does).

use crate::event::Event;
use crate::parse::lines::{decode, split_lines};
use crate::parse::tree::{age_cell, Columns, EventRecord};
use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    let mut columns: Option<Columns> = None;
    for (no, raw) in split_lines(input) {
        let line = decode(raw);
        if line.trim().is_empty() {
            match out.events.last_mut() {
                Some(prev) => prev.n_lines += 1,
                None => out.events.push(Event::new(no, String::new())),
            }
            continue;
        }
        if let Some(header) = events_header(&line) {
            columns = Some(header);
            out.events.push(Event::new(no, line.trim().to_string()));
            continue;
        }
        match &columns {
            Some(cols) => out.events.push(row(cols, &line).into_event(no, 1)),
            None => {
                out.unparsed_lines += 1;
                out.events.push(Event::new(no, line.into_owned()));
            }
        }
    }
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
        rec.extra.push(("source".to_string(), source.to_string()));
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
            rec.extra.push(("event_name".to_string(), name.to_string()));
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
