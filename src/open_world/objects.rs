//! Object state in Kubernetes' own words. Describe output, YAML/JSON objects (and fragments of
//! them) and `kubectl get` tables all reach this module as facts: events with an `object`, a
//! normalised `path` and a `value`. Events (tables, describe sections, Event objects) carry a
//! `type`, a `reason` and the `object` they concern. A problem is an object that reports itself
//! failing: a container waiting or terminated with a reason, a failed phase or state, a
//! readiness condition that is `False` for a failing reason, a job that failed, a status
//! column that is not a healthy one, or Warning events that nothing later resolved.

use std::collections::{BTreeMap, BTreeSet};

use crate::event::{Event, SourceKind};
use crate::open_world::first_line;

/// One object that reports itself failing.
#[derive(Clone, Debug)]
pub struct Problem {
    /// `Pod/ns/name`, `RayCluster/ns/name` …
    pub object: String,
    /// What it says, in its own words (`ray-head waiting: CrashLoopBackOff`).
    pub state: String,
    /// The reason word alone (`CrashLoopBackOff`, `OOMKilled`, `FailedCreate`).
    pub reason: String,
    /// A hard failure (a state); `false` for Warning events alone.
    pub hard: bool,
    /// The facts and events that say so, as timeline indices.
    pub evidence: Vec<usize>,
}

/// Waiting reasons that are a normal step of starting a container.
const STARTING: [&str; 2] = ["ContainerCreating", "PodInitializing"];

/// `kubectl get` STATUS values of healthy or transitional objects.
const HEALTHY_STATUS: [&str; 16] = [
    "Running",
    "Completed",
    "Succeeded",
    "ContainerCreating",
    "PodInitializing",
    "Terminating",
    "Ready",
    "ready",
    "Active",
    "Bound",
    "RUNNING",
    "SUCCEEDED",
    "Complete",
    "Running,SchedulingDisabled",
    "Healthy",
    "Available",
];

/// Warning event reasons that are failures when nothing resolves them later.
const FAILING_EVENT_REASONS: [&str; 22] = [
    "FailedCreate",
    "FailedCreatePodSandBox",
    "FailedMount",
    "FailedAttachVolume",
    "FailedScheduling",
    "Failed",
    "BackOff",
    "Evicted",
    "OOMKilling",
    "Unhealthy",
    "FailedKillPod",
    "NetworkNotReady",
    "FailedCreateHeadPod",
    "FailedCreateWorkerPod",
    "FailedToCreateRayCluster",
    "InvalidRayClusterSpec",
    "InvalidRayJobSpec",
    "InvalidRayServiceSpec",
    "FailedToUpdateServeApplications",
    "ServiceUnhealthy",
    "FailedPostStartHook",
    "FailedPreStopHook",
];

/// Normal event reasons that show an object made progress after a warning.
const PROGRESS_REASONS: [&str; 8] = [
    "Scheduled",
    "Started",
    "Pulled",
    "Created",
    "SuccessfulCreate",
    "TriggeredScaleUp",
    "Running",
    "Ready",
];

fn is_fact_kind(kind: SourceKind) -> bool {
    use crate::parse::Format;
    matches!(Format::of(kind), Format::Describe | Format::KubeTable)
        || kind == SourceKind::KubeObject
}

/// Every failing object in the timeline, in order of their first evidence.
///
/// The steps, in order: one pass over the facts (container states, `kubectl get` STATUS,
/// which objects run), then the status fields and conditions gathered per object, the state
/// messages put beside their states, the Warning events nothing resolved; then only what
/// concerns the Ray workload and was not replaced stays, sorted by first evidence.
pub fn problems(events: &[Event]) -> Vec<Problem> {
    let mut scan = Scan::default();
    for (idx, ev) in events.iter().enumerate() {
        scan.fact(idx, ev);
    }
    scan.status_problems();
    scan.condition_problems();
    scan.attach_state_messages(events);
    let Scan {
        mut found,
        healthy,
        healthy_age,
        ..
    } = scan;
    found.retain(|p| !healthy_in_later_listing(p, events, &healthy_age));
    found.extend(warning_events(events, &healthy));
    let namespaces = ray_namespaces(events);
    found.retain(|p| relevant(&p.object, &namespaces) && !replaced(&p.object, &healthy));
    for p in &mut found {
        p.evidence.sort_unstable();
        p.evidence.dedup();
    }
    found.sort_by(|a, b| a.evidence.first().cmp(&b.evidence.first()));
    found
}

/// Fields of one object or condition: path (or field) → (value, event).
type Fields = BTreeMap<String, (String, usize)>;

/// What [`problems`] gathers from the facts, in one pass and then per object.
#[derive(Default)]
struct Scan {
    /// Problems found so far, in the order found.
    found: Vec<Problem>,
    /// Objects that show themselves running, ready or succeeded.
    healthy: BTreeSet<String>,
    /// Conditions: (object, prefix `status.conditions[i]`) → (field → (value, event)).
    conditions: BTreeMap<(String, String), Fields>,
    /// Job and CR status fields, per object.
    status: BTreeMap<String, Fields>,
    /// Container state messages, by (object, the path they sit under).
    messages: BTreeMap<(String, String), usize>,
    /// Objects a `kubectl get` row has shown `Terminating`: deleted on request.
    terminating: BTreeSet<String>,
    /// The largest AGE (seconds) at which a `kubectl get` row showed each object healthy.
    healthy_age: BTreeMap<String, i64>,
}

impl Scan {
    /// Reads one event: a fact of an object is gathered (a condition, a status field, a state
    /// message) or judged at once (a container state, a `kubectl get` STATUS).
    fn fact(&mut self, idx: usize, ev: &Event) {
        if !is_fact_kind(ev.kind) {
            return;
        }
        // A fragment pasted without its metadata has facts but no object.
        let Some(path) = ev.field("path") else {
            return;
        };
        let object = ev.field("object").unwrap_or("");
        let value = ev.field("value").unwrap_or("").trim();
        let leaf = path.rsplit('.').next().unwrap_or(path);
        if leaf == "message" && path.contains("state") {
            self.messages
                .insert((object.to_string(), parent(path).to_string()), idx);
        }
        if let Some((prefix, field)) = condition_field(path) {
            self.conditions
                .entry((object.to_string(), prefix.to_string()))
                .or_default()
                .insert(field.to_string(), (value.to_string(), idx));
            return;
        }
        if path.starts_with("status.") || path == "status" {
            self.status
                .entry(object.to_string())
                .or_default()
                .insert(path.to_string(), (value.to_string(), idx));
        }
        // Containers: `…state.waiting.reason`, `…laststate.terminated.reason`, describe's
        // `containers.<name>.state.reason`.
        if leaf == "reason" && path.contains("state") && !value.is_empty() {
            self.container_state(idx, object, path, value);
            return;
        }
        if leaf == "running"
            || path.ends_with("state.running.startedat")
            || (path == "status" || path.ends_with(".state")) && value == "Running"
        {
            self.healthy.insert(object.to_string());
        }
        if path == "get.status" {
            self.get_status(idx, ev, object, value);
        }
    }

    /// A container's state reason: a problem unless it completed or is starting.
    fn container_state(&mut self, idx: usize, object: &str, path: &str, value: &str) {
        let container = container_of(path);
        let last = path.contains("laststate") || path.contains("lastterminationstate");
        if value == "Completed" || STARTING.contains(&value) {
            return;
        }
        // A past exit with a plain error is weak on its own (a worker restarted when the
        // head did); a past OOM kill is not.
        let hard = !last || value == "OOMKilled";
        let when = if last { "last terminated" } else { "is" };
        self.found.push(Problem {
            object: object.to_string(),
            state: if container.is_empty() {
                format!("a container {when} {value}")
            } else {
                format!("container {container} {when} {value}")
            },
            reason: value.to_string(),
            hard,
            evidence: vec![idx],
        });
    }

    /// A `kubectl get` STATUS: healthy, on its way (`Init:1/2`), or a problem (a pod running
    /// but not ready is a soft one, as is `Pending`).
    fn get_status(&mut self, idx: usize, ev: &Event, object: &str, value: &str) {
        let ready_short = ev.field("ready").is_some_and(not_all_ready);
        if value == "Terminating" {
            self.terminating.insert(object.to_string());
        }
        // A pod deleted on request (a scale-down, `kubectl delete`) gets SIGTERM and its
        // container exits 143, which `kubectl get` shows as `Error` once it was
        // `Terminating` (kuberay#3442): the end of a requested stop, not a failure.
        if value == "Error" && self.terminating.contains(object) {
            return;
        }
        if HEALTHY_STATUS.contains(&value) && !(value == "Running" && ready_short) {
            self.healthy.insert(object.to_string());
            if let Some(age) = row_age(ev) {
                let e = self.healthy_age.entry(object.to_string()).or_insert(age);
                *e = (*e).max(age);
            }
            return;
        }
        if value.is_empty() || value.starts_with("Init:") && value[5..].contains('/') {
            return;
        }
        let (state, hard) = if value == "Running" {
            (
                format!(
                    "Running but not ready ({})",
                    ev.field("ready").unwrap_or("")
                ),
                false,
            )
        } else {
            (format!("STATUS {value}"), value != "Pending")
        };
        self.found.push(Problem {
            object: object.to_string(),
            state,
            reason: value.trim_start_matches("Init:").to_string(),
            hard,
            evidence: vec![idx],
        });
    }

    /// The status fields of each object, in object order: pod phase, RayCluster state, RayJob
    /// status, then Serve applications and deployments.
    fn status_problems(&mut self) {
        let Scan {
            found,
            healthy,
            status,
            ..
        } = self;
        for (object, fields) in status.iter() {
            pod_phase(object, fields, found, healthy);
            cluster_state(object, fields, found, healthy);
            job_status(object, fields, found);
            serve_statuses(object, fields, found);
        }
    }

    /// Conditions, in (object, condition) order: a `Ready` one that is `True` shows the
    /// object healthy; one `False` for a failing reason is a problem.
    fn condition_problems(&mut self) {
        for ((object, _), fields) in &self.conditions {
            let get = |k: &str| fields.get(k);
            let (Some((status, si)), Some((ctype, ti))) = (get("status"), get("type")) else {
                continue;
            };
            let reason = get("reason").map(|(r, _)| r.as_str()).unwrap_or("");
            let ready_type = ctype.ends_with("Ready") || ctype == "Ready";
            if status == "True" && ready_type {
                self.healthy.insert(object.clone());
            }
            if status != "False" || !failing_reason(reason) {
                continue;
            }
            let mut evidence = vec![*si, *ti];
            evidence.extend(get("reason").map(|(_, i)| *i));
            let message = get("message").map(|(m, i)| {
                evidence.push(*i);
                m.clone()
            });
            self.found.push(Problem {
                object: object.clone(),
                state: format!(
                    "condition {ctype}=False, reason {reason}{}",
                    message.map_or(String::new(), |m| format!(": {}", first_line(&m)))
                ),
                reason: reason.to_string(),
                hard: true,
                evidence,
            });
        }
    }

    /// A container state's message tells why (`toomanyrequests: …`, `exec format error`):
    /// it joins the evidence of the state it sits beside.
    fn attach_state_messages(&mut self, events: &[Event]) {
        for p in &mut self.found {
            let Some(&first) = p.evidence.first() else {
                continue;
            };
            let Some(path) = events[first].field("path") else {
                continue;
            };
            if let Some(&m) = self
                .messages
                .get(&(p.object.clone(), parent(path).to_string()))
            {
                p.evidence.push(m);
            }
        }
    }
}

/// Pod phase and reason (`status.phase`, describe's `status` and `reason`).
fn pod_phase(
    object: &str,
    fields: &Fields,
    found: &mut Vec<Problem>,
    healthy: &mut BTreeSet<String>,
) {
    let get = |p: &str| fields.get(p);
    let Some((v, i)) = get("status.phase") else {
        return;
    };
    if v == "Running" || v == "Succeeded" {
        healthy.insert(object.to_string());
    }
    if v == "Failed" {
        let reason = get("status.reason").map_or("Failed", |(r, _)| r.as_str());
        let mut evidence = vec![*i];
        evidence.extend(get("status.reason").map(|(_, i)| *i));
        evidence.extend(get("status.message").map(|(_, i)| *i));
        found.push(Problem {
            object: object.to_string(),
            state: format!("phase Failed ({reason})"),
            reason: reason.to_string(),
            hard: true,
            evidence,
        });
    }
}

/// RayCluster `status.state: failed` with `status.reason`; `ready` shows it healthy.
fn cluster_state(
    object: &str,
    fields: &Fields,
    found: &mut Vec<Problem>,
    healthy: &mut BTreeSet<String>,
) {
    let get = |p: &str| fields.get(p);
    let Some((v, i)) = get("status.state") else {
        return;
    };
    if v.eq_ignore_ascii_case("failed") {
        let mut evidence = vec![*i];
        let reason = get("status.reason").map(|(r, j)| {
            evidence.push(*j);
            r.clone()
        });
        found.push(Problem {
            object: object.to_string(),
            state: format!(
                "state failed{}",
                reason
                    .as_deref()
                    .map_or(String::new(), |r| format!(": {r}"))
            ),
            reason: "Failed".to_string(),
            hard: true,
            evidence,
        });
    } else if v.eq_ignore_ascii_case("ready") {
        healthy.insert(object.to_string());
    }
}

/// RayJob `jobStatus: FAILED` / `jobDeploymentStatus: Failed`, with `message`: the first of
/// the two that failed.
fn job_status(object: &str, fields: &Fields, found: &mut Vec<Problem>) {
    let get = |p: &str| fields.get(p);
    for key in ["status.jobstatus", "status.jobdeploymentstatus"] {
        if let Some((v, i)) = get(key) {
            if v.eq_ignore_ascii_case("failed") {
                let mut evidence = vec![*i];
                let message = get("status.message").map(|(m, j)| {
                    evidence.push(*j);
                    m.clone()
                });
                let reason = get("status.reason").map(|(r, j)| {
                    evidence.push(*j);
                    r.clone()
                });
                found.push(Problem {
                    object: object.to_string(),
                    state: format!(
                        "{} {v}{}",
                        if key.ends_with("jobstatus") {
                            "jobStatus"
                        } else {
                            "jobDeploymentStatus"
                        },
                        message
                            .or(reason.clone())
                            .map_or(String::new(), |m| format!(": {m}"))
                    ),
                    reason: reason.unwrap_or_else(|| "JobFailed".to_string()),
                    hard: true,
                    evidence,
                });
                break;
            }
        }
    }
}

/// Serve applications and deployments that the RayService reports failing.
fn serve_statuses(object: &str, fields: &Fields, found: &mut Vec<Problem>) {
    for (path, (v, i)) in fields {
        if path.ends_with(".status")
            && (path.contains("applicationstatuses") || path.contains("deploymentstatuses"))
            && matches!(v.as_str(), "DEPLOY_FAILED" | "UNHEALTHY")
        {
            let base = &path[..path.len() - ".status".len()];
            let mut evidence = vec![*i];
            let message = fields.get(&format!("{base}.message")).map(|(m, j)| {
                evidence.push(*j);
                m.clone()
            });
            let name = base.rsplit('.').next().unwrap_or(base);
            found.push(Problem {
                object: object.to_string(),
                state: format!(
                    "{name} {v}{}",
                    message.map_or(String::new(), |m| format!(": {}", first_line(&m)))
                ),
                reason: v.clone(),
                hard: true,
                evidence,
            });
        }
    }
}

/// Whether a condition's reason names a failure (`…Failed`, `…Error`, `…Timeout`, …).
fn failing_reason(reason: &str) -> bool {
    let r = reason.to_ascii_lowercase();
    [
        "fail",
        "error",
        "timeout",
        "invalid",
        "backoff",
        "unhealthy",
        "exceed",
        "forbidden",
    ]
    .iter()
    .any(|w| r.contains(w))
}

/// Warning events, grouped by object and reason, that no later progress of the same object
/// resolved and whose object no fact shows healthy.
fn warning_events(events: &[Event], healthy: &BTreeSet<String>) -> Vec<Problem> {
    let (groups, progress) = warnings_and_progress(events);
    let admitted = gang_admitted(events);
    let mut out = Vec::new();
    for ((object, reason), idxs) in groups {
        if healthy.contains(&object) || healthy.iter().any(|h| same_object(h, &object)) {
            continue;
        }
        if admitted && idxs.iter().all(|&i| gang_wait(&reason, &events[i].message)) {
            continue;
        }
        if resolved(events, &idxs, progress.get(&object.to_lowercase())) {
            continue;
        }
        out.push(warning_problem(events, object, reason, idxs));
    }
    out
}

/// Failing Warning events by (object, reason), each group in timeline order.
type WarningGroups = BTreeMap<(String, String), Vec<usize>>;
/// The time of each object's latest progress, by lower-case object.
type Progress = BTreeMap<String, Option<i64>>;

/// The failing Warning events by (object, reason), and when each object last made progress
/// (a Normal event of a progress reason).
fn warnings_and_progress(events: &[Event]) -> (WarningGroups, Progress) {
    let mut groups: WarningGroups = BTreeMap::new();
    let mut progress: Progress = BTreeMap::new();
    for (idx, ev) in events.iter().enumerate() {
        // A row pasted without its header says its type by its level.
        let pasted = ev.field("row").map(|_| {
            if ev.level >= crate::event::Level::Warning {
                "Warning"
            } else {
                "Normal"
            }
        });
        let kind = ev.field("type").or(pasted);
        let (Some(kind), Some(reason)) = (kind, ev.field("reason")) else {
            continue;
        };
        let object = ev.field("object").unwrap_or("").to_string();
        if kind == "Normal" && PROGRESS_REASONS.contains(&reason) {
            let t = ev.ts.map(|t| t.micros);
            let e = progress.entry(object.to_lowercase()).or_insert(t);
            if t > *e {
                *e = t;
            }
        }
        if kind == "Warning"
            && FAILING_EVENT_REASONS.contains(&reason)
            && !by_design_warning(reason, &ev.message)
        {
            groups
                .entry((object, reason.to_string()))
                .or_default()
                .push(idx);
        }
    }
    (groups, progress)
}

/// The AGE of a `kubectl get` row, in seconds, as the table's reader read it.
fn row_age(ev: &Event) -> Option<i64> {
    match ev.raw_time {
        Some(crate::event::RawTime::Age { secs }) => Some(secs),
        _ => None,
    }
}

/// A `kubectl get` row of a pod `Pending` that another listing shows healthy at a larger AGE:
/// a pod only grows older, so that listing was taken later and the pod was queued, then
/// scheduled. A hard state (a crash, a failed pull) is kept: a pod recreated under the same
/// name would be younger, not older. A pod running but not ready, then ready, is the judge's
/// (`judge::row_back`): it says how long the pod was down.
fn healthy_in_later_listing(
    p: &Problem,
    events: &[Event],
    healthy_age: &BTreeMap<String, i64>,
) -> bool {
    if p.hard || p.evidence.len() != 1 {
        return false;
    }
    let Some(&healthy) = healthy_age.get(&p.object) else {
        return false;
    };
    let Some(ev) = p.evidence.first().and_then(|&i| events.get(i)) else {
        return false;
    };
    ev.field("path") == Some("get.status")
        && ev.field("value").map(str::trim) == Some("Pending")
        && row_age(ev).is_some_and(|age| healthy > age)
}

/// Volcano's gang scheduler reports `FailedScheduling` with `tasks in gang unschedulable: pod
/// group is not ready` while a PodGroup waits in its queue for room for the whole gang. When
/// every PodGroup the bundle shows is `Running`, the gang was admitted and the waits are history
/// (the queue freed up, the pods were placed); a PodGroup still `Pending` or `Inqueue` keeps them.
fn gang_admitted(events: &[Event]) -> bool {
    let mut seen = false;
    for ev in events.iter().filter(|e| is_fact_kind(e.kind)) {
        let (Some(object), Some("status.phase")) = (ev.field("object"), ev.field("path")) else {
            continue;
        };
        if !object.starts_with("PodGroup/") {
            continue;
        }
        if ev.field("value").map(str::trim) != Some("Running") {
            return false;
        }
        seen = true;
    }
    seen
}

/// A gang-scheduling wait (see [`gang_admitted`]).
fn gang_wait(reason: &str, message: &str) -> bool {
    reason == "FailedScheduling"
        && message.contains("tasks in gang unschedulable")
        && message.contains("pod group is not ready")
}

/// A Warning event that KubeRay raises by design on a healthy object: `Readiness probe
/// failed: success` is the readiness probe of a worker Pod without a Serve replica, whose raylet
/// check passed (`success`) and whose Serve proxy check failed because Ray 2.8 and later run no
/// proxy on a node without replicas (KubeRay 1.1 and later; documented in ray-project/ray#51095).
/// KUB007 still counts it when a listing shows it going on for long.
fn by_design_warning(reason: &str, message: &str) -> bool {
    reason == "Unhealthy" && message.trim_end() == "Readiness probe failed: success"
}

/// Whether the object's progress came after the last of its warnings `idxs`.
fn resolved(events: &[Event], idxs: &[usize], progress: Option<&Option<i64>>) -> bool {
    let last_warning = idxs
        .iter()
        .filter_map(|&i| events[i].ts)
        .map(|t| t.micros)
        .max();
    progress.is_some_and(|p| match (p, last_warning) {
        (Some(p), Some(w)) => *p > w,
        (Some(_), None) | (None, _) => false,
    })
}

/// The problem a group of warnings tells: its reason, its summed count and its last message,
/// with its last three events as evidence.
fn warning_problem(events: &[Event], object: String, reason: String, idxs: Vec<usize>) -> Problem {
    let count: u64 = idxs
        .iter()
        .map(|&i| {
            events[i]
                .field("count")
                .and_then(|c| c.parse::<u64>().ok())
                .unwrap_or(1)
        })
        .sum();
    let message = first_line(&events[idxs[idxs.len() - 1]].message).to_string();
    Problem {
        object,
        state: format!(
            "Warning {reason}{}: {message}",
            if count > 1 {
                format!(" ×{count}")
            } else {
                String::new()
            }
        ),
        reason,
        hard: false,
        evidence: idxs.into_iter().rev().take(3).collect(),
    }
}

/// Whether the Ray objects of the bundle all report themselves healthy: at least one RayJob,
/// RayService or RayCluster status is there, and every one says succeeded, ready or running.
pub fn workload_healthy(events: &[Event]) -> bool {
    let mut seen = false;
    for ev in events.iter().filter(|e| is_fact_kind(e.kind)) {
        let (Some(object), Some(path)) = (ev.field("object"), ev.field("path")) else {
            continue;
        };
        let kind = object.split('/').next().unwrap_or("");
        if !matches!(kind, "RayJob" | "RayService" | "RayCluster") {
            continue;
        }
        let value = ev.field("value").unwrap_or("").trim();
        let verdict = match path {
            "status.jobstatus" | "jobstatus" => Some(matches!(value, "SUCCEEDED" | "RUNNING")),
            "status.jobdeploymentstatus" | "jobdeploymentstatus" => {
                Some(matches!(value, "Complete" | "Running"))
            }
            "status.state" | "state" if kind == "RayCluster" => {
                Some(value.eq_ignore_ascii_case("ready"))
            }
            "status.servicestatus" | "servicestatus" => Some(value == "Running"),
            _ => None,
        };
        match verdict {
            Some(true) => seen = true,
            Some(false) => return false,
            None => {}
        }
    }
    seen
}

/// A pod whose controller made a newer one that is healthy (a Job's retry, a ReplicaSet's
/// replacement): `x-abc12` failed, `x-def34` runs. What it says is history.
fn replaced(object: &str, healthy: &BTreeSet<String>) -> bool {
    let Some(name) = object
        .strip_prefix("Pod/")
        .map(|r| r.rsplit('/').next().unwrap_or(r))
    else {
        return false;
    };
    let Some((base, _)) = name.rsplit_once('-') else {
        return false;
    };
    healthy.iter().any(|h| {
        let hn = h.rsplit('/').next().unwrap_or(h);
        h.starts_with("Pod/") && hn != name && hn.rsplit_once('-').is_some_and(|(b, _)| b == base)
    })
}

/// `pod/x` in an events table and `Pod/ns/x` in a describe are the same object.
fn same_object(a: &str, b: &str) -> bool {
    let name = |s: &str| s.rsplit('/').next().unwrap_or(s).to_ascii_lowercase();
    let kind = |s: &str| s.split('/').next().unwrap_or(s).to_ascii_lowercase();
    name(a) == name(b) && kind(a) == kind(b)
}

/// `a.b.reason` → `a.b`.
fn parent(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(p, _)| p)
}

/// `status.conditions[2].reason` → (`status.conditions[2]`, `reason`).
fn condition_field(path: &str) -> Option<(&str, &str)> {
    let at = path.find("conditions[")?;
    let close = path[at..].find(']')? + at;
    let field = path.get(close + 2..)?;
    (!field.contains('.')).then(|| (&path[..=close], field))
}

/// The container a state path names (`containers.ray-head.state.reason`), or its index;
/// empty when the path names none (a pasted fragment).
fn container_of(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("containers.") {
        return rest.split('.').next().unwrap_or_default().to_string();
    }
    if let Some(rest) = path.strip_prefix("initcontainers.") {
        return format!("init {}", rest.split('.').next().unwrap_or_default());
    }
    let seg = path.split('.').find(|s| s.contains("containerstatuses["));
    seg.map_or(String::new(), |s| s.replace("containerstatuses", "#"))
}

fn not_all_ready(ready: &str) -> bool {
    match ready.split_once('/') {
        Some((a, b)) => a.trim() != b.trim(),
        None => false,
    }
}

/// The namespaces where a Ray object (RayCluster, RayService, RayJob …) lives.
fn ray_namespaces(events: &[Event]) -> BTreeSet<&str> {
    events
        .iter()
        .filter_map(|e| e.field("object"))
        .filter_map(|o| {
            let p: Vec<&str> = o.split('/').collect();
            // `then`, not `then_some`: an object with fewer than two parts has no `p[1]`.
            (p.len() == 3 && p[0].to_ascii_lowercase().starts_with("ray")).then(|| p[1])
        })
        .collect()
}

/// Objects of the Ray workload: named for Ray or KubeRay, or in a namespace where a Ray object
/// lives (`ray_namespaces`); never `kube-system`.
fn relevant(object: &str, ray_namespaces: &BTreeSet<&str>) -> bool {
    if object.is_empty() {
        // A fragment someone pasted into a Ray ticket.
        return true;
    }
    let parts: Vec<&str> = object.split('/').collect();
    let ns = if parts.len() == 3 { parts[1] } else { "" };
    if ns == "kube-system" {
        return false;
    }
    let name = parts.last().copied().unwrap_or("").to_ascii_lowercase();
    let kind = parts.first().copied().unwrap_or("").to_ascii_lowercase();
    if kind.starts_with("ray")
        || ["ray", "head", "worker", "serve", "job", "submitter"]
            .iter()
            .any(|w| name.contains(w))
    {
        return true;
    }
    !ns.is_empty() && ray_namespaces.contains(ns)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::event::{Level, Timestamp, TsQuality};

    fn fact(kind: SourceKind, object: &str, path: &str, value: &str) -> Event {
        let mut e = Event::new(1, format!("{path}: {value}"));
        e.kind = kind;
        e.fields = vec![
            ("object".into(), object.into()),
            ("path".into(), path.into()),
            ("value".into(), value.into()),
        ];
        e
    }

    fn event(kind: &str, reason: &str, object: &str, secs: i64) -> Event {
        let mut e = Event::new(1, format!("{reason} happened"));
        e.kind = SourceKind::KubeEvents;
        e.level = if kind == "Warning" {
            Level::Warning
        } else {
            Level::Info
        };
        e.ts = Some(Timestamp {
            micros: secs * 1_000_000,
            quality: TsQuality::Approximate,
        });
        e.fields = vec![
            ("type".into(), kind.into()),
            ("reason".into(), reason.into()),
            ("object".into(), object.into()),
        ];
        e
    }

    #[test]
    fn container_states_from_yaml_and_describe() {
        let evs = vec![
            fact(
                SourceKind::KubeObject,
                "Pod/ml/svc-raycluster-x-head-1",
                "status.containerstatuses[0].state.waiting.reason",
                "CrashLoopBackOff",
            ),
            fact(
                SourceKind::DescribePod,
                "Pod/ml/svc-raycluster-x-worker-2",
                "containers.ray-worker.laststate.reason",
                "OOMKilled",
            ),
            fact(
                SourceKind::DescribePod,
                "Pod/ml/svc-raycluster-x-worker-3",
                "containers.ray-worker.state.reason",
                "ContainerCreating",
            ),
            fact(
                SourceKind::KubeObject,
                "Pod/kube-system/coredns-1",
                "status.containerstatuses[0].state.waiting.reason",
                "CrashLoopBackOff",
            ),
        ];
        let p = problems(&evs);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[0].reason, "CrashLoopBackOff");
        assert!(p[1].hard && p[1].reason == "OOMKilled");
    }

    /// `kubectl get pods -w` of a worker the autoscaler removed (kuberay#3442): its
    /// container exits 143 on SIGTERM, shown as `Error` after `Terminating`.
    #[test]
    fn error_after_terminating_is_a_requested_stop() {
        let row = |name: &str, status: &str| {
            let mut e = fact(SourceKind::KubeTable, name, "get.status", status);
            e.fields.push(("ready".into(), "1/1".into()));
            e
        };
        let worker = "Pod//raycluster-kuberay-workergroup-worker-lpnx6";
        let other = "Pod//raycluster-kuberay-head-q7rls";
        let evs = vec![
            row(worker, "Running"),
            row(worker, "Terminating"),
            row(worker, "Error"),
            row(other, "Error"),
        ];
        let p = problems(&evs);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].object, other);
    }

    #[test]
    fn failing_conditions_and_failed_jobs() {
        let o = "RayService/ml/chat";
        let evs = vec![
            fact(
                SourceKind::KubeObject,
                o,
                "status.conditions[0].type",
                "Ready",
            ),
            fact(
                SourceKind::KubeObject,
                o,
                "status.conditions[0].status",
                "False",
            ),
            fact(
                SourceKind::KubeObject,
                o,
                "status.conditions[0].reason",
                "Initializing",
            ),
            fact(
                SourceKind::KubeObject,
                o,
                "status.conditions[1].type",
                "Ready",
            ),
            fact(
                SourceKind::KubeObject,
                o,
                "status.conditions[1].status",
                "False",
            ),
            fact(
                SourceKind::KubeObject,
                o,
                "status.conditions[1].reason",
                "InitializingTimeout",
            ),
            fact(
                SourceKind::KubeObject,
                "RayJob/ml/train",
                "status.jobstatus",
                "FAILED",
            ),
            fact(
                SourceKind::KubeObject,
                "RayJob/ml/train",
                "status.message",
                "Job entrypoint command failed with exit code 1",
            ),
        ];
        let p = problems(&evs);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p.iter().any(|x| x.reason == "InitializingTimeout"));
        assert!(p
            .iter()
            .any(|x| x.state.contains("exit code 1") && x.object == "RayJob/ml/train"));
    }

    #[test]
    fn warnings_resolved_later_or_on_healthy_objects_are_quiet() {
        let pod = "Pod/ml/svc-raycluster-x-worker-1";
        let evs = vec![
            event("Warning", "FailedScheduling", pod, 10),
            event("Normal", "Scheduled", pod, 40),
            event(
                "Warning",
                "FailedMount",
                "Pod/ml/svc-raycluster-x-head-1",
                50,
            ),
        ];
        let p = problems(&evs);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].reason, "FailedMount");
        assert!(!p[0].hard);
    }

    /// A pod `Pending` in one `kubectl get` and `Running` at a larger AGE in another was
    /// queued, then placed; `Running` at a smaller AGE says nothing of the later state.
    #[test]
    fn pending_then_running_at_a_larger_age_is_history() {
        let row = |name: &str, status: &str, ready: &str, age: &str| {
            let mut e = fact(SourceKind::KubeTable, name, "get.status", status);
            e.fields.push(("ready".into(), ready.into()));
            e.fields.push(("age".into(), age.into()));
            e.raw_time = crate::parse::tree::age_cell(age)
                .last_secs
                .map(|secs| crate::event::RawTime::Age { secs });
            e
        };
        let head = "Pod//raycluster-kuberay-head-6668q";
        let later = vec![
            row(head, "Pending", "0/1", "2m12s"),
            row(head, "Running", "1/1", "9m4s"),
        ];
        assert!(problems(&later).is_empty(), "{:?}", problems(&later));
        let earlier = vec![
            row(head, "Pending", "0/1", "2m12s"),
            row(head, "Running", "1/1", "1m0s"),
        ];
        assert_eq!(problems(&earlier).len(), 1);
        let crashed = vec![
            row(head, "CrashLoopBackOff", "0/1", "2m12s"),
            row(head, "Running", "1/1", "9m4s"),
        ];
        assert_eq!(problems(&crashed).len(), 1);
    }

    /// Volcano's gang wait is history once every PodGroup is `Running`; a PodGroup still
    /// `Inqueue` keeps it (kuberay#4473).
    #[test]
    fn gang_wait_is_resolved_by_running_pod_groups() {
        let mut wait = event("Warning", "FailedScheduling", "", 10);
        wait.message = "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; Pending: 3 Undetermined".into();
        let pg = |phase: &str| {
            fact(
                SourceKind::KubeObject,
                "PodGroup/test/ray-test-cluster-1-pg",
                "status.phase",
                phase,
            )
        };
        assert!(problems(&[wait.clone(), pg("Running")]).is_empty());
        assert_eq!(problems(&[wait.clone(), pg("Inqueue")]).len(), 1);
        assert_eq!(problems(&[wait]).len(), 1);
    }

    /// `Readiness probe failed: success` is a worker without a Serve replica (ray#51095).
    #[test]
    fn readiness_success_is_by_design() {
        let mut e = event("Warning", "Unhealthy", "Pod/default/x-worker-77rzk", 10);
        e.message = "Readiness probe failed: success".into();
        assert!(problems(&[e.clone()]).is_empty());
        e.message = "Readiness probe failed: timeout".into();
        assert_eq!(problems(&[e]).len(), 1);
    }

    /// An events row whose OBJECT cell has no `kind/` (a hand-trimmed table) names no
    /// namespace; reading it must not index past its one part.
    #[test]
    fn an_object_without_a_kind_is_read() {
        let e = event("Warning", "FailedScheduling", "raycluster-x", 10);
        assert_eq!(problems(&[e]).len(), 1);
    }
}
