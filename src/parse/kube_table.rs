//! `kubectl get <kind>` tables other than events: pods (default columns, `-o wide`, `-A`'s
//! leading `NAMESPACE`), nodes, RayClusters, RayServices and RayJobs, with or without their
//! header line (the tail people paste into a ticket).
//!
//! Every data row becomes one fact whose message is the row as printed: `object`
//! (`Pod/<namespace>/<name>`, `Pod//<name>` when the table has no `NAMESPACE` column,
//! `Node/<name>`, `RayCluster/<namespace>/<name>` …), `path` = `get.status`, `value` = the
//! status column exactly as printed, then `ready`, `restarts` (the count) and `restarts_last`
//! (`62s` of `5 (62s ago)`), `age`, `node`, `ip` when the table has them. The row is timed by
//! its age. Header lines and `$ kubectl get …` lines are structural events; any other line is
//! a raw, unparsed event; blank lines fold into the previous event. This module does not read
//! events tables (`kube_events` does) nor `-o yaml|json` output (`kube_object` does).

use crate::event::{Event, Level, RawTime, Text};
use crate::parse::lines::{cap_message, decode, split_lines};
use crate::parse::primitives::human_duration;
use crate::parse::tree::{norm_key, Columns};
use crate::parse::ParseOutput;

/// The path every row's status fact carries.
pub const STATUS_PATH: &str = "get.status";

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    let mut table: Option<Table> = None;
    for (no, raw) in split_lines(input) {
        let line = decode(raw);
        let text = line.trim_end();
        if text.trim().is_empty() {
            match out.events.last_mut() {
                Some(prev) => prev.n_lines += 1,
                None => out.events.push(Event::new(no, String::new())),
            }
            continue;
        }
        if let Some(header) = Table::from_header(text) {
            table = Some(header);
            out.events.push(Event::new(no, text.to_string()));
            continue;
        }
        if is_command(text) {
            out.events.push(Event::new(no, text.to_string()));
            continue;
        }
        let row = match &table {
            Some(t) => t.row(text),
            None => headerless_pod_row(text),
        };
        match row {
            Some(row) => out.events.push(row.into_event(no, text)),
            None => {
                out.unparsed_lines += 1;
                let mut message = line.into_owned();
                cap_message(&mut message);
                out.events.push(Event::new(no, message));
            }
        }
    }
}

/// The object kinds whose tables this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Pod,
    Node,
    RayCluster,
    RayService,
    RayJob,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Pod => "Pod",
            Kind::Node => "Node",
            Kind::RayCluster => "RayCluster",
            Kind::RayService => "RayService",
            Kind::RayJob => "RayJob",
        }
    }
}

/// A table header: its columns and the kind they show.
#[derive(Clone, Debug)]
struct Table {
    cols: Columns,
    kind: Kind,
}

impl Table {
    /// A header in capitals starting with `NAME` (or `NAMESPACE  NAME`) whose columns name
    /// one of the known kinds.
    fn from_header(line: &str) -> Option<Table> {
        let cols = Columns::from_get_header(line)?;
        if cols
            .names
            .iter()
            .any(|n| n.chars().any(|c| c.is_ascii_lowercase()))
        {
            return None;
        }
        let first = cols.names.first().map(String::as_str);
        let second = cols.names.get(1).map(String::as_str);
        if !(first == Some("NAME") || (first == Some("NAMESPACE") && second == Some("NAME"))) {
            return None;
        }
        let has = |name: &str| cols.index(name).is_some();
        let kind = if has("SERVICE STATUS") {
            Kind::RayService
        } else if has("JOB STATUS") || has("DEPLOYMENT STATUS") {
            Kind::RayJob
        } else if has("DESIRED WORKERS") || has("AVAILABLE WORKERS") {
            Kind::RayCluster
        } else if has("READY") && has("STATUS") && has("RESTARTS") {
            Kind::Pod
        } else if has("STATUS") && has("ROLES") {
            Kind::Node
        } else {
            return None;
        };
        Some(Table { cols, kind })
    }

    /// One row under this header, or `None` when the line does not start with a name.
    fn row(&self, line: &str) -> Option<Row> {
        let toks = tokens(line);
        let n = self.cols.names.len();
        let cells = if toks.len() == n {
            toks
        } else {
            self.cols.split(line)
        };
        let cell = |name: &str| -> &str {
            self.cols
                .index(name)
                .and_then(|i| cells.get(i))
                .copied()
                .unwrap_or("")
        };
        let name = cell("NAME");
        let namespace = cell("NAMESPACE");
        if !name_like(name) || !(namespace.is_empty() || name_like(namespace)) {
            return None;
        }
        let value = match self.kind {
            Kind::RayService => cell("SERVICE STATUS"),
            Kind::RayJob => match cell("JOB STATUS") {
                "" => cell("DEPLOYMENT STATUS"),
                job => job,
            },
            _ => cell("STATUS"),
        };
        let mut row = Row {
            kind: self.kind,
            namespace: namespace.to_string(),
            name: name.to_string(),
            value: value.to_string(),
            ready: cell("READY").to_string(),
            restarts: cell("RESTARTS").to_string(),
            age: cell("AGE").to_string(),
            ip: cell("IP").to_string(),
            node: cell("NODE").to_string(),
            extra: Vec::new(),
        };
        const TAKEN: [&str; 9] = [
            "name",
            "namespace",
            "status",
            "servicestatus",
            "ready",
            "restarts",
            "age",
            "ip",
            "node",
        ];
        for (col, value) in self.cols.names.iter().zip(&cells) {
            let key = norm_key(col);
            if TAKEN.contains(&key.as_str()) || value.is_empty() || *value == "<none>" {
                continue;
            }
            let key = match key.as_str() {
                "jobstatus" => "job_status".to_string(),
                "deploymentstatus" => "deployment_status".to_string(),
                _ => format!("col.{key}"),
            };
            row.extra.push((key.into(), (*value).into()));
        }
        Some(row)
    }
}

/// One data row, before it becomes an [`Event`].
#[derive(Clone, Debug, PartialEq)]
struct Row {
    kind: Kind,
    namespace: String,
    name: String,
    value: String,
    ready: String,
    restarts: String,
    age: String,
    ip: String,
    node: String,
    extra: Vec<(Text, Text)>,
}

impl Row {
    fn into_event(self, line: u32, text: &str) -> Event {
        let mut message = text.to_string();
        cap_message(&mut message);
        let mut ev = Event::new(line, message);
        ev.level = level(&self.value, &self.ready);
        ev.raw_time = age_secs(&self.age)
            .flatten()
            .map(|secs| RawTime::Age { secs });
        // `kind.group/name` (`rayservice.ray.io/x`, `pod/x`) when several kinds were listed.
        let name = self.name.rsplit('/').next().unwrap_or(&self.name);
        let object = match self.kind {
            Kind::Node => format!("Node/{name}"),
            kind => format!("{}/{}/{name}", kind.as_str(), self.namespace),
        };
        let (restarts, restarts_last) = restarts_cell(&self.restarts);
        let fields = &mut ev.fields;
        fields.push(("object".into(), object.into()));
        fields.push(("path".into(), STATUS_PATH.into()));
        fields.push(("value".into(), self.value.into()));
        let mut push = |k: &str, v: &str| {
            if !v.is_empty() && v != "<none>" {
                fields.push(((*k).into(), (*v).into()));
            }
        };
        push("ready", &self.ready);
        push("restarts", restarts);
        push("restarts_last", restarts_last);
        push("age", &self.age);
        push("node", &self.node);
        push("ip", &self.ip);
        for (k, v) in &self.extra {
            push(k, v);
        }
        ev
    }
}

/// Statuses that say nothing is wrong.
const FINE: [&str; 8] = [
    "Running",
    "Completed",
    "Complete",
    "Succeeded",
    "ContainerCreating",
    "PodInitializing",
    "Terminating",
    "Ready",
];

/// `warning` for a status other than the fine ones, or `Running` with fewer containers ready
/// than the pod has.
fn level(value: &str, ready: &str) -> Level {
    if value.is_empty() {
        return Level::Info;
    }
    if !FINE.iter().any(|f| f.eq_ignore_ascii_case(value)) {
        return Level::Warning;
    }
    let short = ready
        .split_once('/')
        .and_then(|(x, y)| Some((x.parse::<u32>().ok()?, y.parse::<u32>().ok()?)))
        .is_some_and(|(x, y)| x < y);
    if value.eq_ignore_ascii_case("Running") && short {
        Level::Warning
    } else {
        Level::Info
    }
}

/// `5 (62s ago)` → (`5`, `62s`); `0` → (`0`, ``).
fn restarts_cell(cell: &str) -> (&str, &str) {
    let Some((count, rest)) = cell.split_once(' ') else {
        return (cell, "");
    };
    let last = rest
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim_end();
    (count, last.strip_suffix(" ago").unwrap_or(last).trim())
}

/// An age cell: `Some(Some(secs))`, `Some(None)` for `<unknown>` / `<invalid>`, `None` when
/// the text is no age.
fn age_secs(cell: &str) -> Option<Option<i64>> {
    if cell == "<unknown>" || cell == "<invalid>" {
        return Some(None);
    }
    match human_duration(cell) {
        Ok(("", secs)) => Some(Some(secs)),
        _ => None,
    }
}

/// A Kubernetes name (optionally `kind.group/` prefixed): lower-case letters, digits, `-`,
/// `.`, `/`.
fn name_like(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.' | '/'))
}

/// `1/2`.
fn ready_like(s: &str) -> bool {
    s.split_once('/').is_some_and(|(x, y)| {
        !x.is_empty()
            && !y.is_empty()
            && x.bytes().all(|b| b.is_ascii_digit())
            && y.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A pod status as printed: `Running`, `Init:0/1`, `Init:CrashLoopBackOff`, `Signal:9`.
fn status_like(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | ',' | '-'))
}

/// `5` or `5 (62s ago)`.
fn restarts_like(s: &str) -> bool {
    let (count, rest) = restarts_cell(s);
    !count.is_empty()
        && count.bytes().all(|b| b.is_ascii_digit())
        && (rest.is_empty() || age_secs(rest).is_some())
}

/// A `$ kubectl get …` line before a table.
fn is_command(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.strip_prefix("$ ").unwrap_or(t).trim_start();
    t.starts_with("kubectl ") && t.contains(" get ")
}

/// A row of `kubectl get pods` without its header: `[namespace] name ready status restarts
/// age [ip node [nominated readiness]]`. A row cut after its status is still one.
fn headerless_pod_row(line: &str) -> Option<Row> {
    let t = tokens(line);
    let at = |i: usize| t.get(i).copied().unwrap_or("");
    let (namespace, base) = if ready_like(at(1)) && name_like(at(0)) {
        ("", 1)
    } else if ready_like(at(2)) && name_like(at(0)) && name_like(at(1)) {
        (at(0), 2)
    } else {
        return None;
    };
    let status = at(base + 1);
    if !status_like(status) {
        return None;
    }
    let restarts = at(base + 2);
    let age = at(base + 3);
    let rest = t.get(base + 4..).unwrap_or(&[]);
    let fits = (restarts.is_empty() || restarts_like(restarts))
        && (age.is_empty() || age_secs(age).is_some())
        && rest.len() <= 4;
    if !fits {
        return None;
    }
    Some(Row {
        kind: Kind::Pod,
        namespace: namespace.to_string(),
        name: at(base - 1).to_string(),
        value: status.to_string(),
        ready: at(base).to_string(),
        restarts: restarts.to_string(),
        age: age.to_string(),
        ip: rest.first().copied().unwrap_or("").to_string(),
        node: rest.get(1).copied().unwrap_or("").to_string(),
        extra: Vec::new(),
    })
}

/// The whitespace-separated tokens of a row; a `(62s ago)` group joins the token before it.
fn tokens(line: &str) -> Vec<&str> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut open = false;
    let mut start: Option<usize> = None;
    let mut take = |s: usize, e: usize, spans: &mut Vec<(usize, usize)>| {
        let tok = line.get(s..e).unwrap_or("");
        match spans.last_mut() {
            Some(last) if open || tok.starts_with('(') => {
                last.1 = e;
                open = !tok.ends_with(')');
            }
            _ => spans.push((s, e)),
        }
    };
    for (i, c) in line.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                take(s, i, &mut spans);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        take(s, line.len(), &mut spans);
    }
    spans
        .into_iter()
        .map(|(s, e)| line.get(s..e).unwrap_or(""))
        .collect()
}

/// Does this line open or continue a `kubectl get` table this module reads? A header, a
/// `$ kubectl get` line, or (`headerless`) a row of `kubectl get pods` without its header.
/// Used by the classifier, which asks it of every line it looks at.
pub fn table_line(line: &str) -> TableLine {
    if Table::from_header(line).is_some() {
        TableLine::Header
    } else if is_command(line) {
        TableLine::Command
    } else if headerless_pod_row(line).is_some() {
        TableLine::PodRow
    } else if tokens(line).first().is_some_and(|t| name_like(t)) {
        TableLine::NamedRow
    } else {
        TableLine::Other
    }
}

/// What [`table_line`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableLine {
    Header,
    Command,
    /// A full-looking `kubectl get pods` row.
    PodRow,
    /// A line starting with a name: a row once a header was seen.
    NamedRow,
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per event: line, n_lines, time, level, fields, message.
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
                "{} {} {} {} [{}] {}\n",
                ev.line,
                ev.n_lines,
                time,
                ev.level.as_str(),
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
    fn pods_default_columns() {
        check(
            "NAME                                          READY   STATUS             RESTARTS   AGE
chat-api-5n2qd-gpu-workers-worker-8hf3k       0/1     Init:0/1           0          7m38s
chat-api-5n2qd-head-lw7xz                     0/1     ImagePullBackOff   0          7m38s
kuberay-operator-75b9d8f6c4-hq2kt             1/1     Running            0          25h
",
            "
1 1 - info [] NAME                                          READY   STATUS             RESTARTS   AGE
2 1 age=458 warning [object=Pod//chat-api-5n2qd-gpu-workers-worker-8hf3k path=get.status value=Init:0/1 ready=0/1 restarts=0 age=7m38s] chat-api-5n2qd-gpu-workers-worker-8hf3k       0/1     Init:0/1           0          7m38s
3 1 age=458 warning [object=Pod//chat-api-5n2qd-head-lw7xz path=get.status value=ImagePullBackOff ready=0/1 restarts=0 age=7m38s] chat-api-5n2qd-head-lw7xz                     0/1     ImagePullBackOff   0          7m38s
4 1 age=90000 info [object=Pod//kuberay-operator-75b9d8f6c4-hq2kt path=get.status value=Running ready=1/1 restarts=0 age=25h] kuberay-operator-75b9d8f6c4-hq2kt             1/1     Running            0          25h",
        );
    }

    #[test]
    fn pods_wide_all_namespaces() {
        check(
            "NAMESPACE            NAME                                                   READY     STATUS    RESTARTS   AGE       IP           NODE                    NOMINATED NODE   READINESS GATES
default              fraud-scorer-raycluster-w7k9t-head-5xq8z               1/1       Running   0          8m14s     10.244.1.7   ray-dev-worker          <none>           <none>
monitoring    prometheus-server-6d9f7c8b4-x2k9q                      1/2     OOMKilled   4 (2m ago)    3h    10.244.0.31   gke-ml-pool-1-a1b2c3d4-x7mk   <none>           <none>
default       recsys-serve-raycluster-k4d9m-worker-cpu-group-h6t4w   0/1     Pending   0          9m43s   <none>        <none>            <none>           <none>
",
            "
1 1 - info [] NAMESPACE            NAME                                                   READY     STATUS    RESTARTS   AGE       IP           NODE                    NOMINATED NODE   READINESS GATES
2 1 age=494 info [object=Pod/default/fraud-scorer-raycluster-w7k9t-head-5xq8z path=get.status value=Running ready=1/1 restarts=0 age=8m14s node=ray-dev-worker ip=10.244.1.7] default              fraud-scorer-raycluster-w7k9t-head-5xq8z               1/1       Running   0          8m14s     10.244.1.7   ray-dev-worker          <none>           <none>
3 1 age=10800 warning [object=Pod/monitoring/prometheus-server-6d9f7c8b4-x2k9q path=get.status value=OOMKilled ready=1/2 restarts=4 restarts_last=2m age=3h node=gke-ml-pool-1-a1b2c3d4-x7mk ip=10.244.0.31] monitoring    prometheus-server-6d9f7c8b4-x2k9q                      1/2     OOMKilled   4 (2m ago)    3h    10.244.0.31   gke-ml-pool-1-a1b2c3d4-x7mk   <none>           <none>
4 1 age=583 warning [object=Pod/default/recsys-serve-raycluster-k4d9m-worker-cpu-group-h6t4w path=get.status value=Pending ready=0/1 restarts=0 age=9m43s] default       recsys-serve-raycluster-k4d9m-worker-cpu-group-h6t4w   0/1     Pending   0          9m43s   <none>        <none>            <none>           <none>",
        );
    }

    #[test]
    fn misaligned_rows_and_running_not_ready() {
        // A name longer than its column pushes the row out of line, with one space only.
        check(
            "NAME                                                     READY   STATUS    RESTARTS   AGE     IP            NODE                               NOMINATED NODE   READINESS GATES
text-summarizer-raycluster-q7m4d-worker-cpu-workers-5bkmt 0/1     Running   0          2m41s   10.244.3.8    gke-serving-pool-2-8d1f4a27-kt2m   <none>           <none>",
            "
1 1 - info [] NAME                                                     READY   STATUS    RESTARTS   AGE     IP            NODE                               NOMINATED NODE   READINESS GATES
2 1 age=161 warning [object=Pod//text-summarizer-raycluster-q7m4d-worker-cpu-workers-5bkmt path=get.status value=Running ready=0/1 restarts=0 age=2m41s node=gke-serving-pool-2-8d1f4a27-kt2m ip=10.244.3.8] text-summarizer-raycluster-q7m4d-worker-cpu-workers-5bkmt 0/1     Running   0          2m41s   10.244.3.8    gke-serving-pool-2-8d1f4a27-kt2m   <none>           <none>",
        );
    }

    #[test]
    fn headerless_rows() {
        check(
            "fruit-svc-raycluster-x2b9k-head-7nq4d           0/1     CrashLoopBackOff        5 (62s ago)   6m12s
kube-system   coredns-5d78c9869d-4wq7t   0/1     Init:CrashLoopBackOff   9 (2m ago)   31h
rs-worker-abcde   0/1   Evicted   0   2d   <none>   node-1
Some other text 1/2 here
",
            "
1 1 age=372 warning [object=Pod//fruit-svc-raycluster-x2b9k-head-7nq4d path=get.status value=CrashLoopBackOff ready=0/1 restarts=5 restarts_last=62s age=6m12s] fruit-svc-raycluster-x2b9k-head-7nq4d           0/1     CrashLoopBackOff        5 (62s ago)   6m12s
2 1 age=111600 warning [object=Pod/kube-system/coredns-5d78c9869d-4wq7t path=get.status value=Init:CrashLoopBackOff ready=0/1 restarts=9 restarts_last=2m age=31h] kube-system   coredns-5d78c9869d-4wq7t   0/1     Init:CrashLoopBackOff   9 (2m ago)   31h
3 1 age=172800 warning [object=Pod//rs-worker-abcde path=get.status value=Evicted ready=0/1 restarts=0 age=2d node=node-1] rs-worker-abcde   0/1   Evicted   0   2d   <none>   node-1
4 1 - info [] Some other text 1/2 here
unparsed=1",
        );
    }

    #[test]
    fn truncated_row_keeps_what_it_has() {
        check(
            "NAME                              READY   STATUS             RESTARTS      AGE
chat-api-5n2qd-head-lw7xz         0/1     ErrImagePull       3 (40s ago)   5m
chat-api-5n2qd-worker-gpu-8hf3k   0/1     ImagePullBa",
            "
1 1 - info [] NAME                              READY   STATUS             RESTARTS      AGE
2 1 age=300 warning [object=Pod//chat-api-5n2qd-head-lw7xz path=get.status value=ErrImagePull ready=0/1 restarts=3 restarts_last=40s age=5m] chat-api-5n2qd-head-lw7xz         0/1     ErrImagePull       3 (40s ago)   5m
3 1 - warning [object=Pod//chat-api-5n2qd-worker-gpu-8hf3k path=get.status value=ImagePullBa ready=0/1] chat-api-5n2qd-worker-gpu-8hf3k   0/1     ImagePullBa",
        );
        // Cut inside the ready column without a header: a raw line.
        check(
            "chat-api-5n2qd-head-lw7xz   0/",
            "1 1 - info [] chat-api-5n2qd-head-lw7xz   0/\nunparsed=1",
        );
    }

    #[test]
    fn nodes_and_ray_kinds() {
        check(
            "NAME                                         STATUS     ROLES    AGE   VERSION
ip-10-1-77-140.us-west-2.compute.internal    NotReady   <none>   2d    v1.27.7-eks-e71965b
ip-10-1-12-33.us-west-2.compute.internal     Ready      <none>   9d    v1.27.7-eks-e71965b",
            "
1 1 - info [] NAME                                         STATUS     ROLES    AGE   VERSION
2 1 age=172800 warning [object=Node/ip-10-1-77-140.us-west-2.compute.internal path=get.status value=NotReady age=2d col.version=v1.27.7-eks-e71965b] ip-10-1-77-140.us-west-2.compute.internal    NotReady   <none>   2d    v1.27.7-eks-e71965b
3 1 age=777600 info [object=Node/ip-10-1-12-33.us-west-2.compute.internal path=get.status value=Ready age=9d col.version=v1.27.7-eks-e71965b] ip-10-1-12-33.us-west-2.compute.internal     Ready      <none>   9d    v1.27.7-eks-e71965b",
        );
        check(
            "$ kubectl get rayservice,raycluster -n ml
NAME                                      SERVICE STATUS                NUM SERVE ENDPOINTS
rayservice.ray.io/text-summarizer         WaitForServeDeploymentReady

NAME                                                   DESIRED WORKERS   AVAILABLE WORKERS   CPUS   MEMORY   GPUS   STATUS   AGE
raycluster.ray.io/text-summarizer-raycluster-l7xqv     1                 1                   5      20Gi     0      ready    11m",
            "
1 1 - info [] $ kubectl get rayservice,raycluster -n ml
2 1 - info [] NAME                                      SERVICE STATUS                NUM SERVE ENDPOINTS
3 2 - warning [object=RayService//text-summarizer path=get.status value=WaitForServeDeploymentReady] rayservice.ray.io/text-summarizer         WaitForServeDeploymentReady
5 1 - info [] NAME                                                   DESIRED WORKERS   AVAILABLE WORKERS   CPUS   MEMORY   GPUS   STATUS   AGE
6 1 age=660 info [object=RayCluster//text-summarizer-raycluster-l7xqv path=get.status value=ready age=11m col.desiredworkers=1 col.availableworkers=1 col.cpus=5 col.memory=20Gi col.gpus=0] raycluster.ray.io/text-summarizer-raycluster-l7xqv     1                 1                   5      20Gi     0      ready    11m",
        );
        check(
            "NAMESPACE   NAME              JOB STATUS   DEPLOYMENT STATUS   RAY CLUSTER NAME                 START TIME             END TIME               AGE
default     rayjob-sample     FAILED       Failed              rayjob-sample-raycluster-2b7xk   2024-06-01T10:00:00Z   2024-06-01T10:05:00Z   12m
default     rayjob-pending                 Initializing        rayjob-pending-raycluster-x      2024-06-01T10:00:00Z                          3m",
            "
1 1 - info [] NAMESPACE   NAME              JOB STATUS   DEPLOYMENT STATUS   RAY CLUSTER NAME                 START TIME             END TIME               AGE
2 1 age=720 warning [object=RayJob/default/rayjob-sample path=get.status value=FAILED age=12m job_status=FAILED deployment_status=Failed col.rayclustername=rayjob-sample-raycluster-2b7xk col.starttime=2024-06-01T10:00:00Z col.endtime=2024-06-01T10:05:00Z] default     rayjob-sample     FAILED       Failed              rayjob-sample-raycluster-2b7xk   2024-06-01T10:00:00Z   2024-06-01T10:05:00Z   12m
3 1 age=180 warning [object=RayJob/default/rayjob-pending path=get.status value=Initializing age=3m deployment_status=Initializing col.rayclustername=rayjob-pending-raycluster-x col.starttime=2024-06-01T10:00:00Z] default     rayjob-pending                 Initializing        rayjob-pending-raycluster-x      2024-06-01T10:00:00Z                          3m",
        );
    }

    #[test]
    fn nasty_inputs() {
        check("", "");
        check("\n\n", "1 2 - info [] ");
        check(
            "No resources found in default namespace.\r\n",
            "1 1 - info [] No resources found in default namespace.\nunparsed=1",
        );
        check(
            "NAME   READY   STATUS   RESTARTS   AGE\n\u{0}garbage é\n",
            "1 1 - info [] NAME   READY   STATUS   RESTARTS   AGE\n2 1 - info [] \u{0}garbage é\nunparsed=1",
        );
        let mut out = ParseOutput::default();
        parse(
            b"NAME  READY  STATUS  RESTARTS  AGE\nx  1/1  \xff\xfe  0  1m",
            &mut out,
        );
        assert_eq!(out.events.len(), 2);
        let giant = format!(
            "NAME  READY  STATUS  RESTARTS  AGE\nx  1/1  Running  0  {}",
            "9".repeat(200_000)
        );
        let mut out = ParseOutput::default();
        parse(giant.as_bytes(), &mut out);
        assert!(out.events.iter().all(|e| e.message.len() < 70_000));
        assert_eq!(restarts_cell("5 (62s ago)"), ("5", "62s"));
        assert_eq!(restarts_cell("(("), ("((", ""));
        assert_eq!(tokens("a (b c) (d"), vec!["a (b c) (d"]);
    }

    /// Every prefix of a table (cut anywhere) keeps each physical line in exactly one event.
    #[test]
    fn truncated_tables_keep_every_line() {
        let table = "NAMESPACE   NAME              READY   STATUS             RESTARTS       AGE
default     rs-head-tfg82     0/1     CrashLoopBackOff   21 (62s ago)   30m é

rs-worker-abcde   0/1   Evicted   0   2d
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
