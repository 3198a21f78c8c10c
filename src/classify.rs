//! Which source a file is: `(path, first bytes) → SourceKind`.
//!
//! Content decides the grammar family (operator, Ray Python, Ray C++, Serve, describe, events
//! table, other `kubectl get` table, Kubernetes object, raw output); the name only picks the
//! member of that family (`dashboard_agent.log` and `monitor.log` share one grammar) and
//! decides alone only when the content says nothing (an empty `raylet.err`). Invariant: reads
//! no more than the sniff window and builds no events.

use std::sync::LazyLock;

use regex::Regex;

use crate::event::SourceKind;
use crate::parse::kube_events::{headerless_row, is_scaffold};
use crate::parse::kube_table::{table_line, TableLine};
use crate::parse::lines::{decode, split_lines, strip_envelope};

/// How much of a file classification looks at.
pub const SNIFF_BYTES: usize = 16 * 1024;
/// How many non-blank lines classification looks at.
const SNIFF_LINES: usize = 40;

/// The grammar family the content shows, before the name refines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Operator,
    RayPython,
    RayCpp,
    /// With the component named on the line (`controller`, `proxy`, a replica).
    Serve(SourceKind),
    Describe(SourceKind),
    KubeEvents,
    KubeTable,
    KubeObject,
    WaitGcs,
    WorkerMarkers,
    RayStart,
    RayEvent,
    RayExportEvent,
}

static ZAP_CONSOLE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d{4})\s+(DEBUG|INFO|WARN|ERROR|DPANIC|PANIC|FATAL|debug|info|warn|error|dpanic|panic|fatal)\s",
    )
});
static KLOG: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [\w.-]+:\d+\] "));
/// glog as Ray's C++ processes wrote it before Ray's own format (1.0 and older): the pid
/// and the thread id before `file:line]`.
static RAY_GLOG: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+\s+\d+ [\w.-]+:\d+\] "));
static RAY_PY: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\s+(DEBUG|INFO|WARNING|ERROR|CRITICAL|SUCC)\s")
});
static RAY_PY_DASHES: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - ")
});
static RAY_CPP: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [TDIWEC] \d+ \d+\] (\((\w+)\) )?")
});
static SERVE_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (\S+) ")
});
static EVENTS_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(NAMESPACE\s+)?(LAST SEEN\s+TYPE\s+REASON|LAST SEEN\s+FIRST SEEN\s+COUNT)")
});
static DESCRIBE_KIND: LazyLock<Regex> = LazyLock::new(|| re(r"^Kind:\s+(\w+)\s*$"));

/// Compiles a pattern literal of this file. Not input: a typo is a bug the tests catch.
#[allow(clippy::expect_used)]
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("classifier pattern literals compile")
}

/// Classifies one file from its path inside the bundle and its bytes. A path written on
/// Windows (`logs\raylet.out`, a member name some archivers keep whole) is read as its
/// `/`-separated form.
pub fn classify(path: &str, bytes: &[u8]) -> SourceKind {
    let path = if path.contains('\\') {
        std::borrow::Cow::Owned(path.replace('\\', "/"))
    } else {
        std::borrow::Cow::Borrowed(path)
    };
    let path = path.as_ref();
    let window = &bytes[..bytes.len().min(SNIFF_BYTES)];
    let name = file_name(path).to_ascii_lowercase();
    let family = table_window(window, bytes.len() > window.len()).or_else(|| sniff(window));
    match family {
        Some(family) => refine(family, &name, path),
        None => by_name(&name, path)
            .or_else(|| history_server_marker(path, bytes))
            .unwrap_or(SourceKind::Unknown),
    }
}

/// The empty file the KubeRay History Server's collector writes for each session of a
/// cluster (`cluster-metadata/<kind>/<ns>_<cluster>/<session>`): what the bundle is, no log.
fn history_server_marker(path: &str, bytes: &[u8]) -> Option<SourceKind> {
    let marker = crate::history_server::place(path)
        .is_some_and(|p| p.part == crate::history_server::Part::Marker);
    (marker && bytes.iter().all(u8::is_ascii_whitespace)).then_some(SourceKind::BundleMeta)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Looks at the first non-blank lines and names the grammar family, if any line shows one.
fn sniff(window: &[u8]) -> Option<Family> {
    let mut first: Option<String> = None;
    let mut seen = 0usize;
    let mut counts = [0usize; 10];
    let mut serve_component: Option<SourceKind> = None;
    for (_, raw) in split_lines(window) {
        let decoded = decode(raw);
        let (_, text) = strip_envelope(&decoded);
        let text = text.trim_end();
        if text.trim().is_empty() {
            continue;
        }
        if first.is_none() {
            first = Some(text.to_string());
        }
        seen += 1;
        if let Some(family) = whole_file_family(text, seen == 1) {
            return Some(family);
        }
        if let Some(idx) = line_family(text) {
            counts[idx] += 1;
            if idx == 3 && serve_component.is_none() {
                serve_component = SERVE_TEXT
                    .captures(text)
                    .and_then(|c| c.get(2))
                    .map(|m| serve_kind(m.as_str()));
            }
        }
        if seen >= SNIFF_LINES {
            break;
        }
    }
    let first = first?;
    if first.starts_with("Name:") {
        return Some(Family::Describe(describe_kind(window)));
    }
    if let Some(kind) = serve_component {
        if counts[3] > 0 && counts[3] >= counts.iter().copied().max().unwrap_or(0) {
            return Some(Family::Serve(kind));
        }
    }
    let (best, n) = counts
        .iter()
        .enumerate()
        .max_by_key(|(idx, n)| (**n, usize::MAX - *idx))?;
    if *n == 0 {
        return None;
    }
    Some(match best {
        0 => Family::Operator,
        1 => Family::RayPython,
        2 => Family::RayCpp,
        3 => Family::Serve(SourceKind::ServeReplica),
        4 => Family::WaitGcs,
        5 => Family::WorkerMarkers,
        6 => Family::RayStart,
        7 => Family::RayEvent,
        8 => Family::RayExportEvent,
        _ => Family::Operator,
    })
}

/// Families decided by every line looked at: a `kubectl get` table (pods, nodes, Ray kinds;
/// with or without its header) or an events table pasted without its header. Any other line
/// (a log line, an error, a describe key) leaves the file to the other families, so a paste
/// mixing a table with other text is not read as a table.
fn table_window(window: &[u8], truncated: bool) -> Option<Family> {
    let mut lines: Vec<String> = split_lines(window)
        .map(|(_, raw)| decode(raw).trim_end().to_string())
        .filter(|t| !t.trim().is_empty())
        .take(SNIFF_LINES)
        .collect();
    if truncated && lines.len() > 1 {
        // The window ends inside a line, which says nothing.
        lines.pop();
    }
    if lines.is_empty() {
        return None;
    }
    let (mut header, mut rows, mut table) = (false, 0usize, true);
    for line in &lines {
        match table_line(line) {
            TableLine::Header => header = true,
            TableLine::Command => {}
            TableLine::PodRow => rows += 1,
            TableLine::NamedRow if header => rows += 1,
            TableLine::NamedRow | TableLine::Other => {
                table = false;
                break;
            }
        }
    }
    if table && (header || rows > 0) {
        return Some(Family::KubeTable);
    }
    let mut rows = 0usize;
    for line in &lines {
        if headerless_row(line).is_some() {
            rows += 1;
        } else if !is_scaffold(line) {
            return None;
        }
    }
    (rows > 0).then_some(Family::KubeEvents)
}

/// Families decided by one line: structured documents and tables.
fn whole_file_family(text: &str, is_first: bool) -> Option<Family> {
    if EVENTS_HEADER.is_match(text) {
        return Some(Family::KubeEvents);
    }
    if !is_first {
        return None;
    }
    let t = text.trim_start();
    let object_start = t.starts_with("apiVersion:")
        || t.starts_with("- apiVersion:")
        || t.starts_with("kind:")
        || t == "---"
        || t == "["
        || t == "{"
        || (t.starts_with('{') && (t.contains("\"apiVersion\"") || t.contains("\"kind\"")))
        || (t.starts_with('[') && json_array_start(t));
    if object_start {
        return Some(Family::KubeObject);
    }
    None
}

/// Whether `[…` opens a JSON array: a value follows the bracket (`[{`, `["`, `[1`, `[]`,
/// `[true`), not a word as in an INI section (`[global]`), a log stamp (`[2024-…`) or a
/// `kubectl logs --prefix` (`[pod/…`).
fn json_array_start(t: &str) -> bool {
    let rest = t[1..].trim_start();
    match rest.as_bytes().first() {
        None => true,
        Some(b'{' | b'[' | b'"' | b']' | b'-') => true,
        Some(b) if b.is_ascii_digit() => !rest.starts_with("20") || rest.get(4..5) != Some("-"),
        Some(_) => ["true", "false", "null"]
            .iter()
            .any(|w| rest.starts_with(w)),
    }
}

/// Per-line votes: 0 operator, 1 Ray Python, 2 Ray C++, 3 Serve, 4 wait-gcs, 5 worker markers
/// and a Ray process's log line a driver streamed (`(pid=raylet) F0904 …`, `(raylet) […`),
/// 6 `ray start` output, 7 Ray events, 8 Ray export events.
fn line_family(text: &str) -> Option<usize> {
    if let Some(rest) = crate::parse::worker::streamed_rest(text) {
        return line_family(rest).map(|_| 5);
    }
    if crate::parse::export_event::is_export_line(text)
        || crate::parse::ray_one_event::is_one_event_line(text)
    {
        return Some(8);
    }
    if text.starts_with('{')
        && text.contains("\"event_id\"")
        && text.contains("\"source_type\"")
        && text.contains("\"severity\"")
    {
        return Some(7);
    }
    if text.starts_with("{\"level\"") || (text.starts_with('{') && text.contains("\"msg\"")) {
        return Some(0);
    }
    if text.starts_with("{\"levelname\"")
        || (text.starts_with("{\"asctime\"") && text.contains("\"levelname\""))
    {
        return Some(
            if text.contains("\"component_name\"") || text.contains("\"deployment\"") {
                3
            } else if text.contains("\"filename\"") && text.contains(".cc\"") {
                2
            } else {
                1
            },
        );
    }
    if ZAP_CONSOLE.is_match(text) || KLOG.is_match(text) {
        return Some(0);
    }
    if RAY_CPP.is_match(text) || RAY_GLOG.is_match(text) {
        return Some(2);
    }
    if SERVE_TEXT.is_match(text) {
        return Some(3);
    }
    if text.contains("seconds elapsed: Waiting for GCS to be ready")
        || text.contains("seconds elapsed: Still waiting for GCS")
    {
        return Some(4);
    }
    if text.starts_with(":job_id:")
        || text.starts_with(":actor_name:")
        || text.starts_with(":task_name:")
    {
        return Some(5);
    }
    if RAY_PY.is_match(text) {
        if text.contains(" SUCC ") || text.contains("scripts.py:") {
            return Some(6);
        }
        return Some(1);
    }
    if RAY_PY_DASHES.is_match(text) {
        return Some(1);
    }
    None
}

fn describe_kind(window: &[u8]) -> SourceKind {
    let mut saw_containers = false;
    let mut saw_node_markers = false;
    for (_, raw) in split_lines(window) {
        let text = decode(raw);
        if let Some(caps) = DESCRIBE_KIND.captures(&text) {
            return match caps.get(1).map(|m| m.as_str()) {
                Some("RayService") => SourceKind::DescribeRayService,
                Some("RayCluster") => SourceKind::DescribeRayCluster,
                Some("RayJob") => SourceKind::DescribeRayJob,
                Some("Pod") => SourceKind::DescribePod,
                Some("Node") => SourceKind::DescribeNode,
                _ => SourceKind::DescribeOther,
            };
        }
        if text.starts_with("Containers:") || text.starts_with("Controlled By:") {
            saw_containers = true;
        }
        if text.starts_with("Roles:")
            || text.starts_with("Taints:")
            || text.starts_with("Capacity:")
        {
            saw_node_markers = true;
        }
    }
    if saw_containers {
        SourceKind::DescribePod
    } else if saw_node_markers {
        SourceKind::DescribeNode
    } else {
        SourceKind::DescribeOther
    }
}

fn refine(family: Family, name: &str, path: &str) -> SourceKind {
    match family {
        Family::Operator => SourceKind::Operator,
        Family::RayPython => match by_name(name, path) {
            Some(kind) if crate::parse::Format::of(kind) == crate::parse::Format::RayPython => kind,
            Some(SourceKind::JobDriver) => SourceKind::JobDriver,
            Some(SourceKind::RayContainer) => SourceKind::RayContainer,
            _ => SourceKind::RayPython,
        },
        Family::RayCpp => match by_name(name, path) {
            Some(kind @ (SourceKind::GcsServer | SourceKind::CoreWorker | SourceKind::Raylet)) => {
                kind
            }
            // A driver's log relays the C++ lines of its core worker and the raylet, and a
            // worker's stderr holds its core worker's C++ records beside what its Python
            // printed (an abort dump, a traceback): whose lines are the most does not make the
            // file theirs, and their grammars read both.
            Some(kind @ (SourceKind::JobDriver | SourceKind::Worker)) => kind,
            _ => SourceKind::Raylet,
        },
        Family::Serve(from_line) => {
            let by_file = serve_kind(name);
            let named = name.starts_with("controller")
                || name.starts_with("proxy")
                || name.starts_with("http_proxy")
                || name.starts_with("replica")
                || name.starts_with("deployment");
            if named {
                by_file
            } else {
                from_line
            }
        }
        Family::Describe(kind) => kind,
        Family::KubeEvents => SourceKind::KubeEvents,
        Family::KubeTable => SourceKind::KubeTable,
        Family::KubeObject => {
            if name == "version.yaml" || name == "metadata.json" {
                SourceKind::BundleMeta
            } else {
                SourceKind::KubeObject
            }
        }
        Family::WaitGcs => SourceKind::InitContainer,
        Family::RayEvent => SourceKind::RayEvent,
        Family::RayExportEvent => SourceKind::RayExportEvent,
        Family::WorkerMarkers => SourceKind::Worker,
        Family::RayStart => match by_name(name, path) {
            Some(
                kind
                @ (SourceKind::Autoscaler | SourceKind::Dashboard | SourceKind::DashboardAgent),
            ) => kind,
            _ => SourceKind::RayContainer,
        },
    }
}

fn serve_kind(name: &str) -> SourceKind {
    if name.starts_with("controller") {
        SourceKind::ServeController
    } else if name.starts_with("proxy") || name.starts_with("http_proxy") {
        SourceKind::ServeProxy
    } else {
        SourceKind::ServeReplica
    }
}

/// What the file name alone says. `None` when it says nothing.
fn by_name(name: &str, path: &str) -> Option<SourceKind> {
    let stem = name
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches('.');
    let in_serve = path.contains("/serve/") || path.starts_with("serve/");
    let yaml = stem.ends_with(".yaml") || stem.ends_with(".yml");
    let in_events = path.contains("/events/") || path.starts_with("events/");
    let in_export = path.contains("/export_events/") || path.starts_with("export_events/");
    // The KubeRay History Server collector's files of Ray's one-event records
    // (`<node id>/node_events/<node id>-<hour>-<ns>.jsonl[.gz]`, `…/job_events/<job id>/…`).
    let in_hs_events = path.contains("/node_events/")
        || path.starts_with("node_events/")
        || path.contains("/job_events/")
        || path.starts_with("job_events/");
    let export = in_export && name.starts_with("event_export_") && name.ends_with(".log");
    let hs_events = in_hs_events && (name.ends_with(".jsonl") || name.ends_with(".jsonl.gz"));
    let kind = if export || hs_events {
        SourceKind::RayExportEvent
    } else if in_events && name.starts_with("event_") && name.ends_with(".log") {
        SourceKind::RayEvent
    } else if in_serve && (stem.ends_with(".log") || stem.ends_with(".json")) {
        serve_kind(name)
    } else if yaml && stem != "version.yaml" {
        // `worker-pod-status.yaml` is an object someone saved, not a worker's output.
        SourceKind::KubeObject
    } else if stem.starts_with("dashboard_agent") {
        SourceKind::DashboardAgent
    } else if stem.starts_with("dashboard") {
        SourceKind::Dashboard
    } else if stem.starts_with("raylet") {
        SourceKind::Raylet
    } else if stem.starts_with("gcs_server") {
        SourceKind::GcsServer
    } else if stem.starts_with("python-core-worker") || stem.starts_with("python-core-driver") {
        SourceKind::CoreWorker
    } else if stem.starts_with("worker-") || stem.starts_with("io-worker-") {
        SourceKind::Worker
    } else if stem.starts_with("job-driver") {
        SourceKind::JobDriver
    } else if stem.starts_with("runtime_env_setup") {
        SourceKind::RuntimeEnvSetup
    } else if stem.starts_with("runtime_env_agent") {
        SourceKind::RuntimeEnvAgent
    } else if stem.starts_with("log_monitor") {
        SourceKind::LogMonitor
    } else if stem.starts_with("monitor") || stem.starts_with("autoscaler") {
        SourceKind::Autoscaler
    } else if stem.starts_with("ray_client_server") || stem.starts_with("python-") {
        SourceKind::RayPython
    } else if stem.contains("operator") {
        SourceKind::Operator
    } else if stem == "stdout.log" || stem.starts_with("ray-head") || stem.starts_with("ray-worker")
    {
        SourceKind::RayContainer
    } else if stem.starts_with("wait-gcs-ready") {
        SourceKind::InitContainer
    } else if stem == "version.yaml" || stem == "metadata.json" {
        SourceKind::BundleMeta
    } else if stem.ends_with(".json") || stem.ends_with(".yaml") || stem.ends_with(".yml") {
        SourceKind::KubeObject
    } else if stem.starts_with("events") {
        SourceKind::KubeEvents
    } else {
        return None;
    };
    Some(kind)
}

/// Whether text speaks of Ray: names one of its components or objects, or has the shape of
/// its autoscaler's events. What tells a pasted Ray line in a form no parser knows from a note
/// or a folder of other things.
pub fn speaks_of_ray(text: &str) -> bool {
    static RAY: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)\b(ray|raylet|kuberay|rayservice|raycluster|rayjob|gcs_server|dashboard_agent)\b",
            r"|\bray[._][a-z]|\(scheduler \+|/tmp/ray/|\\ray\\session_",
        ))
        .ok()
    });
    RAY.as_ref().is_some_and(|re| re.is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(path: &str, content: &str, expect: &str) {
        assert_eq!(classify(path, content.as_bytes()).as_str(), expect);
    }

    #[test]
    fn a_history_server_session_marker_is_bundle_metadata() {
        let marker =
            "copy/cluster-metadata/raycluster/default_echo-serve/session_2026-12-06_08-31-50_970423_12919";
        check(marker, "", "bundle_meta");
        // Any other empty file without a known name stays unknown.
        check(
            "copy/notes/session_2026-12-06_08-31-50_970423_12919",
            "",
            "unknown",
        );
    }

    #[test]
    fn ray_lines_a_driver_streamed_make_driver_output() {
        // ray-project/ray#10585: the raylet's glog lines (pid and thread id) behind the
        // driver's `(pid=raylet) ` prefix.
        check(
            "driver-output.txt",
            "(pid=raylet) F0904 14:25:50.808766  6518 319638976 worker_pool.cc:364] Failed to start worker with return value\n system:24: Too many open files\n",
            "worker",
        );
        check(
            "out.txt",
            "(raylet, ip=10.0.0.1) [2022-07-06 16:44:34,189 E 75507 28664986] (raylet) worker_pool.cc:502: x\n",
            "worker",
        );
        // The same glog line without a prefix is Ray's C++ output; ordinary output in
        // parentheses is nobody's.
        check(
            "raylet.err",
            "F0904 14:25:50.808766  6518 319638976 worker_pool.cc:364] Failed to start worker\n",
            "raylet",
        );
        check("notes.txt", "(see above) nothing to report\n", "unknown");
    }

    #[test]
    fn content_wins() {
        check(
            "x.log",
            "2024-10-07T15:45:03.000Z\tINFO\tsetup\tstarting manager\n",
            "operator",
        );
        check(
            "logs/x.txt",
            "{\"level\":\"info\",\"ts\":\"2024-04-25T23:12:29.720Z\",\"logger\":\"controllers.RayCluster\",\"msg\":\"x\"}\n",
            "operator",
        );
        check(
            "a.txt",
            "I0402 13:48:57.637519       1 leaderelection.go:248] attempting to acquire leader lease\n",
            "operator",
        );
        check(
            "head/dashboard_agent.log",
            "2023-07-10 11:24:38,590\tWARNING agent.py:531 -- Exiting with SIGTERM immediately...\n",
            "dashboard_agent",
        );
        check(
            "whatever.txt",
            "[2022-01-17 03:12:42,168 I 449 449] io_service_pool.cc:35: IOServicePool is running with 1 io_service.\n",
            "raylet",
        );
        check(
            "logs/gcs_server.out",
            "[2023-05-27 13:36:07,742 W 114781 114781] (gcs_server) gcs_worker_manager.cc:55: x\n",
            "gcs_server",
        );
        check(
            "serve/controller_71139.log",
            "INFO 2022-08-02 16:16:29,881 controller 71139 deployment_state.py:1232 - Adding 1 replicas\n",
            "serve_controller",
        );
        check(
            "pasted.txt",
            "INFO 2022-08-02 16:17:02,502 http_proxy 127.0.0.1 http_proxy.py:315 - GET / 200 3.5ms\n",
            "serve_proxy",
        );
        check(
            "describe.txt",
            "Name:         rayservice-sample\nNamespace:    default\nAPI Version:  ray.io/v1\nKind:         RayService\n",
            "describe_rayservice",
        );
        check(
            "y.txt",
            "Name:             head\nNamespace:        default\nControlled By:  RayCluster/x\nContainers:\n",
            "describe_pod",
        );
        check(
            "ev.txt",
            "LAST SEEN   TYPE      REASON   OBJECT    MESSAGE\n35m  Warning  FailedScheduling  pod/x  0/4 nodes\n",
            "kube_events",
        );
        check(
            "rs.yaml",
            "apiVersion: ray.io/v1\nkind: RayService\n",
            "kube_object",
        );
        check(
            "pods/default.json",
            "{\n  \"kind\": \"PodList\",\n",
            "kube_object",
        );
        check(
            "init.log",
            "0 seconds elapsed: Waiting for GCS to be ready.\n",
            "init_container",
        );
        check(
            "pod/stdout.log",
            "2022-03-16 11:28:26,348\tSUCC scripts.py:641 -- Ray runtime started.\n",
            "ray_container",
        );
    }

    #[test]
    fn an_ini_section_is_no_json_array() {
        check("pip.conf", "[global]\nindex-url = x\n", "unknown");
        check("a.desktop", "[Desktop Entry]\nName=x\n", "unknown");
        check("pods.json", "[{\"kind\": \"Pod\"}]\n", "kube_object");
        check("list", "[\n  {\"apiVersion\": \"v1\"}\n]\n", "kube_object");
        check("nums", "[20, 21]\n", "kube_object");
    }

    #[test]
    fn get_tables() {
        check(
            "pods.txt",
            "NAMESPACE   NAME                READY   STATUS    RESTARTS   AGE   IP           NODE    NOMINATED NODE   READINESS GATES\ndefault     rs-head-5xq8z       1/1     Running   0          8m    10.244.1.7   w1      <none>           <none>\n",
            "kube_table",
        );
        check(
            "ticket.txt",
            "fruit-svc-raycluster-x2b9k-head-7nq4d   0/1     CrashLoopBackOff   5 (62s ago)   6m12s\nfruit-svc-raycluster-x2b9k-worker-small-7xk2p   1/1   Running   0   6m12s\n",
            "kube_table",
        );
        check(
            "nodes.txt",
            "$ kubectl get nodes\nNAME     STATUS     ROLES    AGE   VERSION\nnode-1   NotReady   <none>   2d    v1.27.7\n",
            "kube_table",
        );
        check(
            "rc.txt",
            "NAME                    DESIRED WORKERS   AVAILABLE WORKERS   STATUS   AGE\nsummarizer-raycluster   1                 1                   ready    41d\n",
            "kube_table",
        );
        // A table mixed with other text stays unknown: its other lines need the line rules.
        check(
            "apply.txt",
            "$ kubectl apply -f rs.yaml\nerror: resource mapping not found for name: \"x\"\n$ kubectl get rayclusters -n ml\nNAME   DESIRED WORKERS   AVAILABLE WORKERS   STATUS   AGE\n",
            "unknown",
        );
        check(
            "mixed.txt",
            "rs-head-5xq8z   0/1   CrashLoopBackOff   5   6m\nTraceback (most recent call last):\n",
            "unknown",
        );
        // A window cut inside its last row.
        let mut big = String::from("NAME   READY   STATUS    RESTARTS   AGE\n");
        while big.len() < SNIFF_BYTES + 100 {
            big.push_str("rs-worker-abcde   1/1   Running   0   5m\n");
        }
        check("big.txt", &big[..SNIFF_BYTES + 10], "kube_table");
    }

    #[test]
    fn events_without_header() {
        check(
            "ev.txt",
            "5m          Warning   FailedScheduling   pod/rs-worker-fl4fm   0/3 nodes are available: 3 Insufficient cpu\n4m   Normal   Scheduled   pod/rs-worker-fl4fm   Successfully assigned default/rs-worker-fl4fm to n1\n",
            "kube_events",
        );
        check(
            "ev.txt",
            "Events:\n  Type     Reason   Age                  From     Message\n  ----     ------   ----                 ----     -------\n  Warning  BackOff  62s (x21 over 5m50s)  kubelet  Back-off restarting failed container ray-head in pod rs-head_default(5b0c)\n",
            "kube_events",
        );
        check(
            "mixed.txt",
            "  Warning  BackOff  62s (x21 over 5m50s)  kubelet  Back-off restarting failed container\nsome other line\n",
            "unknown",
        );
    }

    #[test]
    fn timestamps_prefix_is_seen_through() {
        check(
            "head.txt",
            "2026-03-04T07:42:11.446555630Z 2026-03-03 23:42:11,446\tINFO config.py:183 -- hi\n",
            "ray_python",
        );
    }

    #[test]
    fn a_workers_stderr_with_cpp_records_is_a_workers() {
        // Ray 2.9.3, a task that segfaulted: absl's dump, again through the logger.
        let err = ":job_id:02000000\n:task_name:decode_frame\n*** SIGSEGV received at time=1796545631 on cpu 0 ***\nPC: @     0x7f4179985ad8  (unknown)  (unknown)\n    @     0x7f417985a050  (unknown)  (unknown)\n[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: *** SIGSEGV received at time=1796545631 on cpu 0 ***\n[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)\n[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)\nFatal Python error: Segmentation fault\n";
        check(
            "logs/worker-7a5049861d0d1d5947bab006f2bfd2d8243384b4de24b85e362cd224-02000000-3015.err",
            err,
            "worker",
        );
        check("logs/raylet.err", err, "raylet");
    }

    #[test]
    fn names_decide_for_empty_files() {
        check("logs/raylet.err", "", "raylet");
        check("logs/dashboard.err", "", "dashboard");
        check("logs/monitor.out", "", "autoscaler");
        check("logs/worker-abc-ffffffff-1.out", "", "worker");
        check("logs/ray_client_server.err", "", "ray_python");
        check("logs/dashboard_agent.log.1", "", "dashboard_agent");
        check("random.bin", "", "unknown");
        check("logs/events/event_GCS.log", "", "ray_event");
        check("logs/events/event_GCS.0.log", "", "ray_event");
        check(
            "logs/export_events/event_EXPORT_ACTOR.log",
            "",
            "ray_export_event",
        );
        check(
            "session_latest/logs/export_events/event_EXPORT_TASK_4035.log",
            "",
            "ray_export_event",
        );
    }

    #[test]
    fn windows_paths_classify_like_their_linux_forms() {
        for (windows, linux) in [
            ("logs\\raylet.out", "logs/raylet.out"),
            (
                "session_latest\\logs\\events\\event_GCS.log",
                "logs/events/event_GCS.log",
            ),
            (
                "logs\\worker-abc-ffffffff-1.err",
                "logs/worker-abc-ffffffff-1.err",
            ),
            (
                "C:\\x\\logs\\dashboard_agent.log",
                "logs/dashboard_agent.log",
            ),
        ] {
            assert_eq!(
                classify(windows, b"").as_str(),
                classify(linux, b"").as_str(),
                "{windows}"
            );
        }
        assert_eq!(classify("logs\\raylet.out", b"").as_str(), "raylet");
    }

    #[test]
    fn ray_export_event_files() {
        // Ray 2.60.0 (`scripts/realrun`, export-actor-failures): the C++ writer (keys sorted,
        // `event_data` first), cut as the classifier's window may cut a long line, and the
        // Python writer's spaced JSON, pasted under any name.
        check(
            "x/event_EXPORT_NODE.log",
            r#"{"event_data":{"death_info":{"reason":"UNSPECIFIED","reason_message":""},"end_time_ms":"0","is_head_node":true,"labels":{"ray.io/node-id":"9460d9b5"#,
            "ray_export_event",
        );
        check(
            "pasted.txt",
            r#"{"event_id": "EecB198F09B53a4aC4", "timestamp": 1796565565, "source_type": "EXPORT_SUBMISSION_JOB", "event_data": {"submission_job_id": "raysubmit_S7AKSdZxe6MTsWcK", "status": "PENDING", "metadata": {}}}"#,
            "ray_export_event",
        );
    }

    #[test]
    fn ray_event_files() {
        // Ray 2.9.3: the raylet's C++ reporter and the job manager's Python one.
        check(
            "x/event_RAYLET.log",
            r#"{"custom_fields":{"node_id":"aa4e"},"event_id":"d61c","host_name":"ray-head","label":"Out of Memory","message":"Task was killed due to the node running low on memory.","pid":"1651","severity":"ERROR","source_type":"RAYLET","timestamp":1796545572}"#,
            "ray_event",
        );
        check(
            "pasted.txt",
            r#"{"event_id": "7FEd", "source_type": "JOBS", "source_hostname": "ray-head", "source_pid": 2690, "message": "Started a ray job raysubmit_efVTTvEd378YVeJQ.", "timestamp": "1796545625", "custom_fields": {}, "severity": "INFO", "label": ""}"#,
            "ray_event",
        );
    }
}
