//! Judgement of findings against what else the bundle says: a death someone asked for is
//! not a failure.
//!
//! **Requested stops.** `ray stop`, a pod deleted by Kubernetes or KubeRay, a node the
//! autoscaler removes: the node's processes are sent SIGTERM and each one says so
//! (`Raylet received SIGTERM, shutting down...`). What dies after that on the same node (the
//! actors "dead because its node has died", absl's `*** SIGTERM received` dumps, the
//! autoscaler "Terminated with signal 15") died because it was told to. A finding whose every
//! record is a Ray log record of a stopped node, at or after its stop, stays at `info` and
//! says which line stopped it. A finding with one record before the stop, a record without
//! a precise time (its order cannot be proved), or a record from Kubernetes (an object's
//! status, an event, the operator) keeps its severity.
//!
//! **Deletions on purpose.** A pod KubeRay deleted on scale-in, a RayCluster an upgrade or a
//! RayJob deleted: what the deleted object (a RayCluster: its pods too) records at or after
//! the deletion (its probes failing as it stops, its processes' SIGTERM) stays at `info`.
//!
//! **Recoveries.** A failure its object recovered from and did not see again stays at
//! `info` and says which line told the recovery and how long after the failure it came: a
//! Serve replica replaced (the object named in the text), a pod Ready, a node Ready, a RayJob
//! SUCCEEDED, a RayService Ready, a later call of the operator to the dashboard that went
//! through (the object the record names), a Ray node registering again at the address of one
//! that died (`nodes_back`). One that came back keeps its severity and says
//! when; one whose order only approximate times could tell keeps it too, and says that. The
//! `kubectl get` rows of one pod are ordered by the pod's age each one shows.
//!
//! The lines are data (`rules::lifecycle`, from `patterns/data/lifecycle.toml`), each with
//! where its wording comes from; the sieve keeps them.

use std::collections::{BTreeSet, HashMap};

use crate::event::{format_rfc3339, Event, Micros, SourceKind, TsQuality, MICROS_PER_SEC};
use crate::history_server::Clusters;
use crate::objects::{BundleObjects, ObjectRef};
use crate::rules::engine::Finding;
use crate::rules::lifecycle::{
    names, node_deaths, node_removals, node_returns, object_recoveries, object_stops, own_stops,
    recoveries, tellers, NodeNames, ObjectRecovery, Recovery, Scope, Side,
};
use crate::rules::Severity;
use crate::timeline::Timeline;

/// How long before the first line of a stop its own deaths may start: `ray stop` signals
/// every process of the node at once, and one may die before the raylet writes its line;
/// absl's dump of a SIGTERM carries whole seconds.
const STOP_SLACK: Micros = 2 * MICROS_PER_SEC;

/// How long after a job's stop its driver and workers may still be dying of it.
const JOB_STOP_REACH: Micros = 30 * MICROS_PER_SEC;

/// How long after the autoscaler asked to remove a node a death joined to it by an address or
/// the provider's id alone may come: an address is given to a new pod again. A death joined
/// by the Ray node id has no such bound.
const REMOVAL_REACH: Micros = 10 * 60 * MICROS_PER_SEC;

/// A stop the bundle tells of: when, which record, and the node (its log folder) it stopped.
#[derive(Clone, Debug)]
pub struct Stop {
    pub at: Micros,
    pub event: usize,
    pub what: String,
    /// The node's folder; `None` when the bundle holds one node, which the stop then covers
    /// whole.
    node: Option<String>,
    scope: Scope,
    /// What Kubernetes or KubeRay deleted on purpose (a pod on scale-in, a RayCluster), when
    /// the stop is such a deletion rather than a node's own line.
    target: Option<Target>,
    /// How much earlier than `at` the deletion may have been (an age kubectl printed).
    slack: Micros,
    /// The node the autoscaler asked to remove, as its line names it, when the stop is such
    /// a request: it covers that node's deaths after it (`removal_of`), nothing else.
    removed: Option<NodeNames>,
}

/// A Kubernetes object deleted on purpose.
#[derive(Clone, Debug)]
struct Target {
    /// `Pod` or `RayCluster`.
    kind: String,
    name: String,
}

impl Target {
    /// Whether `o` is the object deleted, or (a RayCluster) one of its pods.
    fn holds(&self, o: &ObjectRef) -> bool {
        match self.kind.as_str() {
            "RayCluster" => {
                (o.kind == "RayCluster" && o.name == self.name)
                    || (o.kind == "Pod"
                        && o.name.len() > self.name.len()
                        && o.name.starts_with(&self.name)
                        && o.name.as_bytes().get(self.name.len()) == Some(&b'-'))
            }
            kind => o.kind == kind && o.name == self.name,
        }
    }
}

impl Stop {
    /// Whether a record of `kind` at `at`, in a file of `file_kind` on `node`, may be a
    /// death this stop caused. (A driver's log relays the raylet's lines: the file tells
    /// whose record it is.)
    fn covers(&self, at: Micros, kind: SourceKind, file_kind: SourceKind, node: &str) -> bool {
        if self.target.is_some()
            || self.removed.is_some()
            || !is_ray_log(kind)
            || self.node.as_deref().is_some_and(|n| n != node)
        {
            return false;
        }
        let from = self.at - STOP_SLACK;
        match self.scope {
            Scope::Node => at >= from,
            Scope::Job => is_job_kind(file_kind) && at >= from && at <= self.at + JOB_STOP_REACH,
        }
    }
}

/// The stops of the bundle, earliest first: one per node, and every job's.
pub fn stops(tl: &Timeline) -> Vec<Stop> {
    let tellers = tellers();
    let one_node = node_folders(tl).len() <= 1;
    let node_key = |ev: &Event| -> Option<String> {
        (!one_node).then(|| node_of(&tl.files[ev.file as usize].path).to_string())
    };
    // The SIGTERMs a process sent itself after a failure: (node, from, until).
    let own: Vec<(Option<String>, Micros, Micros)> = tl
        .events
        .iter()
        .filter_map(|ev| {
            let at = precise(ev)?;
            let o = own_stops().iter().find(|o| {
                (o.sources.is_empty() || o.sources.contains(&ev.kind)) && o.re.is_match(&ev.message)
            })?;
            Some((node_key(ev), at, at + o.within))
        })
        .collect();
    let mut found: Vec<Stop> = Vec::new();
    for (i, ev) in tl.events.iter().enumerate() {
        let Some(at) = precise(ev) else { continue };
        let Some(t) = tellers.iter().find(|t| {
            (t.sources.is_empty() || t.sources.contains(&ev.kind)) && t.re.is_match(&ev.message)
        }) else {
            continue;
        };
        let node = node_key(ev);
        if t.scope == Scope::Node
            && own
                .iter()
                .any(|(n, from, until)| *n == node && (*from..=*until).contains(&at))
        {
            continue;
        }
        let stop = Stop {
            at,
            event: i,
            what: t.what.clone(),
            node,
            scope: t.scope,
            target: None,
            slack: 0,
            removed: None,
        };
        // A node stops once: its first line tells it. A job's stop is told by several lines
        // within seconds; each later stop of a job is its own.
        let same = found.iter_mut().find(|s| {
            s.node == stop.node
                && s.scope == stop.scope
                && (s.scope == Scope::Node || (s.at - stop.at).abs() <= JOB_STOP_REACH)
        });
        match same {
            Some(s) if s.at <= stop.at => {}
            Some(s) => *s = stop,
            None => found.push(stop),
        }
    }
    let deleted = deletions(tl);
    found.extend(pods_removed(tl, &deleted));
    found.extend(deleted);
    found.extend(removals(tl));
    found.sort_by_key(|s| (s.at, s.event));
    found
}

/// The nodes the autoscaler asked to remove: every line that says so, naming the node.
fn removals(tl: &Timeline) -> Vec<Stop> {
    let tellers = node_removals();
    tl.events
        .iter()
        .enumerate()
        .filter_map(|(i, ev)| {
            let (t, names) = tellers.iter().find_map(|t| Some((t, t.names(ev)?)))?;
            let (at, slack) = when(ev)?;
            Some(Stop {
                at,
                event: i,
                what: t.what.clone(),
                node: None,
                scope: Scope::Node,
                target: None,
                slack,
                removed: Some(names),
            })
        })
        .collect()
}

/// The Ray nodes of the pods Kubernetes or KubeRay deleted on purpose, by the pod's address
/// as the bundle shows it (a `kubectl get pods -o wide` row's IP, a describe's `IP:`, an
/// object's `status.podIP`): a death of the node at that address after the deletion is the
/// deletion's doing.
fn pods_removed(tl: &Timeline, deleted: &[Stop]) -> Vec<Stop> {
    let pods: BTreeSet<&str> = deleted
        .iter()
        .filter_map(|s| s.target.as_ref())
        .filter(|t| t.kind == "Pod")
        .map(|t| t.name.as_str())
        .collect();
    if pods.is_empty() {
        return Vec::new();
    }
    let mut ips: HashMap<&str, BTreeSet<String>> = HashMap::new();
    for ev in &tl.events {
        let ip = ev.field("ip").or_else(|| {
            matches!(ev.field("path"), Some("ip" | "status.podip"))
                .then(|| ev.field("value"))
                .flatten()
        });
        let Some(ip) = ip.filter(|v| is_address(v)) else {
            continue;
        };
        for o in crate::objects::of_event(ev) {
            if let Some(pod) = pods.get(o.name.as_str()).filter(|_| o.kind == "Pod") {
                ips.entry(pod).or_default().insert(ip.to_string());
            }
        }
    }
    deleted
        .iter()
        .filter_map(|s| {
            let t = s.target.as_ref().filter(|t| t.kind == "Pod")?;
            let ips = ips.get(t.name.as_str())?;
            Some(ips.iter().map(move |ip| Stop {
                removed: Some(NodeNames {
                    node: None,
                    ip: Some(ip.clone()),
                    instance: Some(t.name.clone()),
                }),
                target: None,
                what: format!("{} (its pod {}, at {ip})", s.what, t.name),
                ..s.clone()
            }))
        })
        .flatten()
        .collect()
}

/// Whether `v` is an IPv4 or IPv6 address.
fn is_address(v: &str) -> bool {
    v.parse::<std::net::IpAddr>().is_ok()
}

/// The autoscaler's removal of the node whose death `ev` tells, if one names that node: with
/// `true` when times prove the death came after it (and, joined by an address or the
/// provider's id alone, within `REMOVAL_REACH`), `false` when they cannot order the two.
fn removal_of<'s>(stops: &'s [Stop], ev: &Event) -> Option<(&'s Stop, bool)> {
    let dead = node_deaths().iter().find_map(|t| t.names(ev))?;
    let at = when(ev);
    let mut unproven = None;
    for s in stops {
        let Some(by_id) = s.removed.as_ref().and_then(|r| r.same_node(&dead)) else {
            continue;
        };
        let Some(at) = at else {
            unproven.get_or_insert(s);
            continue;
        };
        let removal = (s.at, s.slack);
        let after = proved_after(at, removal) || (at.1 == 0 && s.slack == 0 && at.0 >= s.at);
        if after {
            if by_id || at.0 - s.at <= REMOVAL_REACH {
                return Some((s, true));
            }
            continue;
        }
        if !proved_before(at, removal) {
            unproven.get_or_insert(s);
        }
    }
    unproven.map(|s| (s, false))
}

/// The objects Kubernetes or KubeRay deleted on purpose: each one's first deletion line.
fn deletions(tl: &Timeline) -> Vec<Stop> {
    let mut found: Vec<Stop> = Vec::new();
    for (i, ev) in tl.events.iter().enumerate() {
        let Some((at, slack)) = when(ev) else {
            continue;
        };
        for d in object_stops() {
            let Some(name) = d.stopped(ev) else {
                continue;
            };
            // `ns/name` or `name`.
            let name = name.rsplit('/').next().unwrap_or(name).to_string();
            let kind = crate::objects::canonical_kind(&d.kind);
            let same = found.iter_mut().find(|s| {
                s.target
                    .as_ref()
                    .is_some_and(|t| t.kind == kind && t.name == name)
            });
            let stop = Stop {
                at,
                event: i,
                what: d.what.clone(),
                node: None,
                scope: Scope::Node,
                target: Some(Target { kind, name }),
                slack,
                removed: None,
            };
            match same {
                Some(s) if s.at - s.slack <= at - slack => {}
                Some(s) => *s = stop,
                None => found.push(stop),
            }
        }
    }
    found
}

/// Judges every finding: what died of a requested stop, and what recovered for good, stay
/// at `info`.
pub fn judge(tl: &Timeline, findings: &mut [Finding]) {
    let stops = stops(tl);
    let kube = Kube::new(tl);
    after_stops(&kube, &stops, findings);
    recovered(&kube, &stops, findings);
    nodes_back(tl, findings);
}

/// Keeps at `info` a node's death whose node came back: a node registering with the GCS at
/// the address of the one that died, after the death (KubeRay restarts the worker's
/// container, and its new raylet registers from the same pod with a new node id). Every
/// death the finding names must have come back so, and its records that name no node (the
/// agents' `Raylet is terminated`) must be no later than the last return; a death of a node
/// at that address after its return keeps the severity and says when.
fn nodes_back(tl: &Timeline, findings: &mut [Finding]) {
    let returns = node_returns();
    let regs: Vec<(usize, Micros, NodeNames, &str)> = tl
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, ev)| {
            let (t, names) = returns.iter().find_map(|t| Some((t, t.names(ev)?)))?;
            Some((i, precise(ev)?, names, t.what.as_str()))
        })
        .collect();
    if regs.is_empty() {
        return;
    }
    // A node id's address, from every line that names both.
    let mut address: HashMap<&str, &str> = HashMap::new();
    let named: Vec<Option<NodeNames>> = tl
        .events
        .iter()
        .map(|ev| node_deaths().iter().find_map(|t| t.names(ev)))
        .collect();
    for n in named.iter().flatten().chain(regs.iter().map(|r| &r.2)) {
        if let (Some(id), Some(ip)) = (&n.node, &n.ip) {
            address.entry(id.as_str()).or_insert(ip.as_str());
        }
    }
    let ip_of = |n: &NodeNames| -> Option<String> {
        n.ip.clone().or_else(|| {
            let id = n.node.as_deref()?;
            address.get(id).map(|ip| (*ip).to_string())
        })
    };
    // The deaths the bundle tells, by address: (time, node id).
    let mut deaths: HashMap<String, Vec<(Micros, Option<&str>)>> = HashMap::new();
    for (i, n) in named.iter().enumerate() {
        let (Some(n), Some(at)) = (n, tl.events.get(i).and_then(precise)) else {
            continue;
        };
        if let Some(ip) = ip_of(n) {
            deaths.entry(ip).or_default().push((at, n.node.as_deref()));
        }
    }
    for f in findings.iter_mut() {
        if f.severity.is_some() || f.evidence.is_empty() {
            continue;
        }
        let mut backs: Vec<(Micros, usize, Micros, &str)> = Vec::new();
        let mut unnamed: Vec<Micros> = Vec::new();
        // Deaths of a node that had come back: the failure again.
        let mut again: Vec<Micros> = Vec::new();
        let all = f.evidence.iter().all(|r| {
            let Some(at) = tl.events.get(r.event).and_then(precise) else {
                return false;
            };
            let Some(dead) = named.get(r.event).and_then(Option::as_ref) else {
                unnamed.push(at);
                return true;
            };
            let Some(ip) = ip_of(dead) else {
                return false;
            };
            // The first registration at the address after the death, of another node id.
            let back = regs.iter().find(|(_, t, n, _)| {
                *t > at && ip_of(n).as_deref() == Some(ip.as_str()) && n.node != dead.node
            });
            if let Some(&(event, t, _, what)) = back {
                backs.push((at, event, t, what));
                return true;
            }
            // A node that came back at the address after an earlier death there, dying again.
            let came_back = regs.iter().any(|(_, t, n, _)| {
                *t < at
                    && ip_of(n).as_deref() == Some(ip.as_str())
                    && deaths.get(&ip).is_some_and(|ds| {
                        ds.iter().any(|(d, id)| d < t && *id != n.node.as_deref())
                    })
            });
            if came_back {
                again.push(at);
            }
            came_back
        });
        let Some(&(_, event, last, what)) = backs.iter().max_by_key(|b| (b.2, b.1)) else {
            continue;
        };
        if !all || unnamed.iter().any(|&u| u > last && again.is_empty()) {
            continue;
        }
        let Some(line) = tl.events.get(event) else {
            continue;
        };
        let first = backs.iter().map(|b| b.0).min().unwrap_or(last);
        let told = format!(
            "{what} at {}, {}:{}, {} after the failure",
            format_rfc3339(last),
            file_of(tl, line),
            line.line,
            crate::rules::engine::human(last - first),
        );
        let again = again.iter().copied().min();
        mark_recovered(f, &told, again.map(|t| format!("at {}", format_rfc3339(t))));
    }
}

/// Says in `f`'s summary that its object recovered (`told`: which line said so, when, how
/// long after the failure); with no `again` (when it failed again, as the summary words it)
/// the finding is `info`, else it keeps its severity.
fn mark_recovered(f: &mut Finding, told: &str, again: Option<String>) {
    let summary = f.summary.trim_end().trim_end_matches('.');
    f.summary = match again {
        Some(again) => format!("{summary} (recovered: {told}; failed again {again})"),
        None => {
            f.severity = Some(Severity::Info);
            format!("{summary} (recovered: {told})")
        }
    };
}

/// Keeps at `info` every finding that only records what a requested stop did.
fn after_stops(k: &Kube, stops: &[Stop], findings: &mut [Finding]) {
    let tl = k.tl;
    if stops.is_empty() {
        return;
    }
    for f in findings.iter_mut() {
        let mut by: Option<&Stop> = None;
        let all_after = !f.evidence.is_empty()
            && f.evidence.iter().all(|r| {
                let Some(s) = tl.events.get(r.event).and_then(|ev| stop_of(k, stops, ev)) else {
                    return false;
                };
                if by.is_none_or(|b| s.at < b.at) {
                    by = Some(s);
                }
                true
            });
        let Some(stop) = by.filter(|_| all_after) else {
            unproven_removal(tl, stops, f);
            continue;
        };
        let Some(line) = tl.events.get(stop.event) else {
            continue;
        };
        let file = &tl.files[line.file as usize].path;
        f.severity = Some(Severity::Info);
        f.summary = format!(
            "{} (after a requested stop at {}: {}, {}:{})",
            f.summary.trim_end().trim_end_matches('.'),
            crate::event::format_rfc3339(stop.at),
            stop.what,
            file,
            line.line
        );
    }
}

/// Says, of a finding that keeps its severity, that the autoscaler asked to remove the node
/// one of its records tells the death of, when times cannot prove that the request came first.
fn unproven_removal(tl: &Timeline, stops: &[Stop], f: &mut Finding) {
    let Some(s) = f.evidence.iter().find_map(|r| {
        let ev = tl.events.get(r.event)?;
        removal_of(stops, ev).and_then(|(s, proven)| (!proven).then_some(s))
    }) else {
        return;
    };
    let Some(line) = tl.events.get(s.event) else {
        return;
    };
    f.summary = format!(
        "{} ({} at {}, {}:{}, but the times cannot prove that it came before the death)",
        f.summary.trim_end().trim_end_matches('.'),
        s.what,
        line.ts.map(|t| t.rfc3339()).unwrap_or_default(),
        file_of(tl, line),
        line.line
    );
}

/// The stop that covers `ev`, if one does: a node's stop covers the Ray logs of the node
/// after it; a deletion covers every record of the deleted object (its pods' logs, its
/// events and facts) after it, when the record's time proves it came after; the
/// autoscaler's removal of a node covers the deaths of that node after it.
fn stop_of<'s>(k: &Kube, stops: &'s [Stop], ev: &Event) -> Option<&'s Stop> {
    let tl = k.tl;
    if let Some((s, true)) = removal_of(stops, ev) {
        return Some(s);
    }
    let file = tl.files.get(ev.file as usize)?;
    if let Some(at) = precise(ev) {
        let node = node_of(&file.path);
        if let Some(s) = stops
            .iter()
            .find(|s| s.covers(at, ev.kind, file.kind, node))
        {
            return Some(s);
        }
    }
    let (at, slack) = when(ev)?;
    let mut deleted = stops.iter().filter(|s| s.target.is_some()).peekable();
    deleted.peek()?;
    let objects = k.objects(ev);
    if objects.is_empty() {
        return None;
    }
    deleted.find(|s| {
        s.target
            .as_ref()
            .is_some_and(|t| objects.iter().all(|o| t.holds(o)))
            && at - slack >= s.at - STOP_SLACK
    })
}

/// A record's time and how much earlier the moment it stands for may lie: nothing for a
/// precise time; for an age `kubectl` printed (`7m`, `9m20s`: ages are cut, never rounded
/// up), its last unit. `None` when the record has no time, or an approximate one that says
/// nothing of its error (a guessed year).
fn when(ev: &Event) -> Option<(Micros, Micros)> {
    let ts = ev.ts.as_ref()?;
    if ts.quality != TsQuality::Approximate {
        return Some((ts.micros, 0));
    }
    let age = ev.field("age")?.split_whitespace().next()?;
    Some((ts.micros, age_unit(age)?))
}

/// The last unit of a `kubectl` age (`9m20s` → a second, `7m` → a minute, `3h` → an hour).
fn age_unit(age: &str) -> Option<Micros> {
    let unit = age.chars().rev().find(char::is_ascii_alphabetic)?;
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'y' => 365 * 86_400,
        _ => return None,
    };
    age.starts_with(|c: char| c.is_ascii_digit())
        .then_some(secs * MICROS_PER_SEC)
}

/// When the failure a record stands for began: an events row counted over a span
/// (`6m (x262 over 23m)`) began when it was first seen; any other record at its time.
fn began(ev: &Event, at: (Micros, Micros)) -> Micros {
    let first = ev
        .field("first_seen_age_secs")
        .and_then(|s| s.parse::<i64>().ok());
    match (ev.raw_time, first) {
        (Some(crate::event::RawTime::Age { secs }), Some(first)) if first > secs => {
            at.0 - (first - secs) * MICROS_PER_SEC
        }
        _ => at.0 - at.1,
    }
}

/// Whether what happened at `later` (a time and its slack) provably came after `earlier`.
fn proved_after(later: (Micros, Micros), earlier: (Micros, Micros)) -> bool {
    later.0 - later.1 > earlier.0
}

/// Whether what happened at `a` provably came before `b`.
fn proved_before(a: (Micros, Micros), b: (Micros, Micros)) -> bool {
    proved_after(b, a)
}

/// A time that can prove an order: the record's own, not an age or a guessed year.
fn precise(ev: &Event) -> Option<Micros> {
    ev.ts
        .as_ref()
        .filter(|t| t.quality != TsQuality::Approximate)
        .map(|t| t.micros)
}

/// Logs a Ray process writes on its node, and what its CLI printed there.
fn is_ray_log(kind: SourceKind) -> bool {
    !crate::parse::Format::of(kind).is_kubernetes()
        && !matches!(
            kind,
            SourceKind::Operator | SourceKind::BundleMeta | SourceKind::InitContainer
        )
}

/// What a job's driver and the workers running its tasks write.
fn is_job_kind(kind: SourceKind) -> bool {
    matches!(
        kind,
        SourceKind::JobDriver | SourceKind::Worker | SourceKind::CoreWorker
    )
}

/// The folders that hold a node's raylet or GCS log: one per node.
fn node_folders(tl: &Timeline) -> BTreeSet<&str> {
    tl.files
        .iter()
        .filter(|f| matches!(f.kind, SourceKind::Raylet | SourceKind::GcsServer))
        .map(|f| node_of(&f.path))
        .collect()
}

/// The folder of a node's session logs that `path` lies in: up to its last `logs` folder
/// (`serve/`, `events/` and `old/` below it are the same node's), else its own folder.
fn node_of(path: &str) -> &str {
    let parts: Vec<(usize, &str)> = path
        .match_indices('/')
        .map(|(i, _)| (i, &path[..i]))
        .collect();
    parts
        .iter()
        .rev()
        .find(|(_, p)| p.rsplit('/').next() == Some("logs"))
        .or(parts.last())
        .map_or("", |(_, p)| p)
}

/// A failure's record and the recovery that followed it.
struct Back<'t> {
    /// The recovery line's event.
    event: usize,
    at: Micros,
    what: &'t str,
    /// When the object failed again after it, if it did.
    again: Option<Micros>,
    /// A Kubernetes recovery's objects and its failure sides: a record of the finding that
    /// is one of these failing again after `at` is the recurrence, not a failure of its own.
    recurs: Option<(&'t ObjectRecovery, Vec<Key>)>,
    /// When the failure it recovered from began, where that is not the record judged (a
    /// record that is itself the failure coming back).
    from: Option<Micros>,
    /// Whether `at`, `again` and `from` are ages of a pod that `kubectl get` rows showed,
    /// not times.
    aged: bool,
}

/// What the bundle says of Kubernetes objects, read once for every finding: the objects
/// each record is about, and the type of each status condition.
struct Kube<'t> {
    tl: &'t Timeline,
    /// What the bundle names, and the pod each file's folder names: read when a record's
    /// objects are first needed.
    named: std::cell::OnceCell<(BundleObjects, Vec<Option<ObjectRef>>)>,
    /// `(file, object, condition path)` → the condition's type, for the conditions of
    /// YAML and JSON objects (`status.conditions[1]` → `Ready`).
    conditions: HashMap<(u32, String, String), String>,
    /// For each Kubernetes recovery of the library, in its order: the timeline's records of
    /// its failure sides and of its recovery sides, with the keys of each, read once, when a
    /// finding's record is first one of its failures.
    records: std::cell::OnceCell<Vec<Records>>,
}

type Key = (Option<String>, String);

/// The records of one Kubernetes recovery's sides: `(event, keys)`.
#[derive(Default)]
struct Records {
    fails: Vec<(usize, Vec<Key>)>,
    recovers: Vec<(usize, Vec<Key>)>,
}

impl<'t> Kube<'t> {
    fn new(tl: &'t Timeline) -> Kube<'t> {
        let mut conditions = HashMap::new();
        let wanted = object_recoveries().iter().any(|r| {
            r.fails
                .iter()
                .chain(&r.recovers)
                .any(|s| s.condition.is_some())
        });
        if wanted {
            for ev in &tl.events {
                let (Some(path), Some(value), Some(object)) =
                    (ev.field("path"), ev.field("value"), ev.field("object"))
                else {
                    continue;
                };
                if let Some(prefix) = path.strip_suffix(".type") {
                    if prefix.ends_with(']') && prefix.contains("conditions[") {
                        conditions.insert(
                            (ev.file, object.to_string(), prefix.to_string()),
                            value.to_string(),
                        );
                    }
                }
            }
        }
        Kube {
            tl,
            named: std::cell::OnceCell::new(),
            conditions,
            records: std::cell::OnceCell::new(),
        }
    }

    fn named(&self) -> &(BundleObjects, Vec<Option<ObjectRef>>) {
        self.named.get_or_init(|| {
            let bundle = BundleObjects::of(&self.tl.events);
            let pods = bundle.path_pods(&self.tl.files);
            (bundle, pods)
        })
    }

    fn records(&self) -> &[Records] {
        self.records.get_or_init(|| {
            let of = |sides: &[Side], e: &Event| -> Vec<Key> {
                let mut keys: Vec<Key> = sides
                    .iter()
                    .filter(|s| self.is(s, e))
                    .flat_map(|s| self.keys(s, e))
                    .collect();
                keys.sort();
                keys.dedup();
                keys
            };
            object_recoveries()
                .iter()
                .map(|rec| {
                    let mut r = Records::default();
                    for (i, e) in self.tl.events.iter().enumerate() {
                        let fails = of(&rec.fails, e);
                        if !fails.is_empty() {
                            r.fails.push((i, fails));
                        }
                        let recovers = of(&rec.recovers, e);
                        if !recovers.is_empty() {
                            r.recovers.push((i, recovers));
                        }
                    }
                    r
                })
                .collect()
        })
    }

    /// The records of `rec`'s `fails` (or `recovers`) sides about the object `key`, each
    /// with its time.
    fn about<'k>(
        &'k self,
        ri: usize,
        recovers: bool,
        key: &'k Key,
    ) -> impl Iterator<Item = (usize, (Micros, Micros))> + 'k {
        self.records()
            .get(ri)
            .map(|r| if recovers { &r.recovers } else { &r.fails })
            .into_iter()
            .flatten()
            .filter(move |(_, keys)| keys.iter().any(|k2| same_key(k2, key)))
            .filter_map(|(i, _)| Some((*i, when(self.tl.events.get(*i)?)?)))
    }

    /// The objects a record is about: those it names in its fields, else the pod its
    /// file's folder names.
    fn objects(&self, ev: &Event) -> Vec<ObjectRef> {
        let (bundle, pods) = self.named();
        let named = crate::objects::of_event(ev);
        if !named.is_empty() {
            return named.into_iter().map(|o| bundle.complete(o)).collect();
        }
        pods.get(ev.file as usize)
            .and_then(Clone::clone)
            .into_iter()
            .collect()
    }

    /// Whether `ev` is a record of `side`, its condition included.
    fn is(&self, side: &Side, ev: &Event) -> bool {
        if !side.matches(ev) {
            return false;
        }
        let Some((kind, status)) = &side.condition else {
            return true;
        };
        let (Some(path), Some(value)) = (ev.field("path"), ev.field("value")) else {
            return false;
        };
        if value != status {
            return false;
        }
        // A describe's `conditions[Ready]`, or a YAML condition's `status` leaf.
        if path == format!("conditions[{kind}]") {
            return true;
        }
        let (Some(prefix), Some(object)) = (path.strip_suffix(".status"), ev.field("object"))
        else {
            return false;
        };
        self.conditions
            .get(&(ev.file, object.to_string(), prefix.to_string()))
            .is_some_and(|t| t == kind)
    }

    /// The objects of `side`'s kind that `ev` is about, as keys: `(namespace, key)`.
    fn keys(&self, side: &Side, ev: &Event) -> Vec<Key> {
        let kind = crate::objects::canonical_kind(&side.kind);
        self.objects(ev)
            .into_iter()
            .filter(|o| o.kind == kind)
            .filter_map(|o| Some((o.namespace.clone(), side.key_of(&o.name)?.to_string())))
            .collect()
    }
}

/// A failure `ev` (at `at`) of the object `key` that is that object failing again: the last
/// recovery of it before `at` that followed an earlier failure of it, with `ev` as the
/// recurrence.
fn came_back<'r>(
    k: &Kube,
    ri: usize,
    rec: &'r ObjectRecovery,
    key: &Key,
    at: (Micros, Micros),
) -> Option<After<'r>> {
    let tl = k.tl;
    let (event, back) = k
        .about(ri, true, key)
        .filter(|(_, t)| proved_before(*t, at))
        .max_by_key(|(i, t)| (t.0, *i))?;
    let from = k
        .about(ri, false, key)
        .filter(|(_, t)| proved_before(*t, back))
        .filter_map(|(i, t)| Some(began(tl.events.get(i)?, t)))
        .min()?;
    Some(After::Back(Back {
        event,
        at: back.0,
        what: &rec.what,
        again: Some(at.0),
        recurs: None,
        from: Some(from),
        aged: false,
    }))
}

/// Whether two keys name the same object (a namespace left unsaid matches any).
fn same_key(a: &Key, b: &Key) -> bool {
    a.1 == b.1 && (a.0.is_none() || b.0.is_none() || a.0 == b.0)
}

/// What the timeline says after one failure record.
enum After<'r> {
    /// Its object recovered (and perhaps failed again).
    Back(Back<'r>),
    /// A recovery line may follow it, but approximate times cannot prove its order.
    Unproven {
        event: usize,
        what: &'r str,
    },
    Nothing,
}

/// Keeps at `info` every finding each record of which is a failure its object recovered
/// from (a replica replaced, a pod Ready again, a node Ready, a RayJob SUCCEEDED, …) and did
/// not see again, or a death of a requested stop; a failure that came back keeps its
/// severity and says when it did; one whose recovery approximate times cannot order keeps
/// it too, and says so.
fn recovered(k: &Kube, stops: &[Stop], findings: &mut [Finding]) {
    let tl = k.tl;
    let recoveries = recoveries();
    let objects = object_recoveries();
    if recoveries.is_empty() && objects.is_empty() {
        return;
    }
    // A History Server copy holds several clusters: a line of one recovers none of another.
    let clusters = Clusters::of(tl.files.iter().map(|f| f.path.as_str()));
    for f in findings.iter_mut() {
        if f.severity.is_some() || f.evidence.is_empty() {
            continue;
        }
        let mut backs: Vec<(Micros, Back)> = Vec::new();
        let mut unproven: Option<(usize, &str)> = None;
        // Records with nothing after them: each may be a recovered object failing again.
        let mut alone: Vec<&Event> = Vec::new();
        let all = f.evidence.iter().all(|r| {
            let Some(ev) = tl.events.get(r.event) else {
                return false;
            };
            let after = match row_age(ev) {
                Some(age) => objects
                    .iter()
                    .enumerate()
                    .map(|(ri, rec)| row_back(k, ri, rec, ev, age))
                    .find(|a| !matches!(a, After::Nothing)),
                None => None,
            };
            if let Some(after) = after {
                return match after {
                    After::Back(back) => {
                        backs.push((back.from.unwrap_or_default(), back));
                        true
                    }
                    After::Unproven { event, what } => {
                        unproven.get_or_insert((event, what));
                        true
                    }
                    After::Nothing => false,
                };
            }
            let Some(at) = when(ev) else {
                return false;
            };
            let by_message = precise(ev).and_then(|at| {
                recoveries
                    .iter()
                    .find_map(|rec| back_of(tl, &clusters, rec, ev, at))
            });
            let after = match by_message {
                Some(back) => After::Back(back),
                None => objects
                    .iter()
                    .enumerate()
                    .map(|(ri, rec)| object_back(k, ri, rec, ev, at))
                    .find(|a| !matches!(a, After::Nothing))
                    .unwrap_or(After::Nothing),
            };
            match after {
                After::Back(back) => {
                    backs.push((back.from.unwrap_or_else(|| began(ev, at)), back));
                    true
                }
                After::Unproven { event, what } => {
                    unproven.get_or_insert((event, what));
                    true
                }
                After::Nothing => {
                    if stop_of(k, stops, ev).is_none() {
                        alone.push(ev);
                    }
                    true
                }
            }
        });
        let recurs = |ev: &&Event| {
            let Some(at) = when(ev) else {
                return false;
            };
            backs.iter().any(|(_, b)| {
                b.recurs.as_ref().is_some_and(|(rec, keys)| {
                    proved_after(at, (b.at, 0))
                        && rec.fails.iter().any(|side| {
                            k.is(side, ev)
                                && k.keys(side, ev)
                                    .iter()
                                    .any(|key| keys.iter().any(|k1| same_key(k1, key)))
                        })
                })
            })
        };
        if !all || !alone.iter().all(recurs) {
            continue;
        }
        let summary = f.summary.trim_end().trim_end_matches('.').to_string();
        if let Some((event, what)) = unproven {
            let Some(line) = tl.events.get(event) else {
                continue;
            };
            f.summary = format!(
                "{summary} ({what}{}, {}:{}, may have followed it, but approximate times cannot prove that it came after the failure)",
                line.ts
                    .map(|t| format!(" at {}", t.rfc3339()))
                    .unwrap_or_default(),
                file_of(tl, line),
                line.line
            );
            continue;
        }
        if backs.is_empty() {
            continue;
        }
        // Ages of a pod and times cannot be compared: such a finding is left as it is.
        let aged = backs.iter().all(|(_, b)| b.aged);
        if !aged && backs.iter().any(|(_, b)| b.aged) {
            continue;
        }
        let first = backs.iter().map(|(at, _)| *at).min().unwrap_or_default();
        let Some((_, last)) = backs.iter().max_by_key(|(_, b)| (b.at, b.event)) else {
            continue;
        };
        let Some(line) = tl.events.get(last.event) else {
            continue;
        };
        let about = if line.ts.is_some_and(|t| t.quality == TsQuality::Approximate) {
            " (approximate)"
        } else {
            ""
        };
        let again = backs.iter().filter_map(|(_, b)| b.again).min();
        // A time, or the age of the pod a `kubectl get` row showed.
        let moment = |t: Micros| {
            if aged {
                format!("when the pod was {} old", age_shown(t))
            } else {
                crate::event::format_rfc3339(t)
            }
        };
        let told = format!(
            "{} {}{}, {}:{}, {} after the failure",
            last.what,
            if aged { "" } else { "at " },
            if aged {
                moment(last.at)
            } else {
                format!("{}{about}", moment(last.at))
            },
            file_of(tl, line),
            line.line,
            crate::rules::engine::human(last.at - first),
        );
        let again = again.map(|t| format!("{}{}", if aged { "" } else { "at " }, moment(t)));
        mark_recovered(f, &told, again);
    }
}

/// The age of its pod a `kubectl get` row shows, and its last unit, in seconds: the rows
/// of one pod are ordered by it (a watch prints rows as they come, and a later listing shows
/// the pod older), whatever time the bundle gives them (capture time less the age, which
/// puts a watch's later rows earlier).
fn row_age(ev: &Event) -> Option<(i64, i64)> {
    if ev.kind != SourceKind::KubeTable || ev.field("path") != Some("get.status") {
        return None;
    }
    let Some(crate::event::RawTime::Age { secs }) = ev.raw_time else {
        return None;
    };
    let unit = ev
        .field("age")
        .and_then(|a| age_unit(a.split_whitespace().next()?))?;
    Some((secs, unit / MICROS_PER_SEC))
}

/// An age as `kubectl` prints it, from microseconds.
fn age_shown(micros: Micros) -> String {
    crate::rules::engine::human(micros)
}

/// The recovery `rec` tells of the failure `ev`, a `kubectl get` row of a pod at `age`:
/// the first row of the same pod after it (an older pod) saying it is back, and whether a
/// row of its failure came after that. Rows are judged only against rows of the same pod.
fn row_back<'r>(
    k: &Kube,
    ri: usize,
    rec: &'r ObjectRecovery,
    ev: &Event,
    age: (i64, i64),
) -> After<'r> {
    let tl = k.tl;
    let Some(side) = rec.fails.iter().find(|s| k.is(s, ev)) else {
        return After::Nothing;
    };
    let keys = k.keys(side, ev);
    let Some(records) = k.records().get(ri) else {
        return After::Nothing;
    };
    // The rows of one side about one of `keys`, each with its age.
    let rows = |of: &[(usize, Vec<Key>)]| {
        of.iter()
            .filter(|(_, ks)| ks.iter().any(|k2| keys.iter().any(|k1| same_key(k1, k2))))
            .filter_map(|(i, _)| Some((*i, row_age(tl.events.get(*i)?)?)))
            .collect::<Vec<_>>()
    };
    let mut backs = rows(&records.recovers);
    backs.sort_by_key(|(i, (a, _))| (*a, *i));
    let fails = rows(&records.fails);
    // `b` is proved older than `a`: the pod's age at `b` is past any age `a` may stand for.
    let older = |b: (i64, i64), a: (i64, i64)| b.0 >= a.0 + a.1;
    let micros = |secs: i64| secs * MICROS_PER_SEC;
    if keys.is_empty() {
        return After::Nothing;
    }
    match backs.iter().find(|(_, b)| older(*b, age)) {
        Some(&(event, back)) => {
            let again = fails
                .iter()
                .filter(|(_, f)| older(*f, back))
                .map(|(_, f)| f.0)
                .min();
            After::Back(Back {
                event,
                at: micros(back.0),
                what: &rec.what,
                again: again.map(micros),
                recurs: None,
                from: Some(micros(age.0)),
                aged: true,
            })
        }
        None => {
            if let Some(&(event, _)) = backs.iter().find(|(_, b)| !older(age, *b)) {
                return After::Unproven {
                    event,
                    what: &rec.what,
                };
            }
            // The pod failing again: the last recovery before it that followed an earlier
            // failure.
            let Some(&(event, back)) = backs.iter().rev().find(|(_, b)| older(age, *b)) else {
                return After::Nothing;
            };
            let Some(from) = fails
                .iter()
                .filter(|(_, f)| older(back, *f))
                .map(|(_, f)| f.0)
                .min()
            else {
                return After::Nothing;
            };
            After::Back(Back {
                event,
                at: micros(back.0),
                what: &rec.what,
                again: Some(micros(age.0)),
                recurs: None,
                from: Some(micros(from)),
                aged: true,
            })
        }
    }
}

fn file_of<'a>(tl: &'a Timeline, ev: &Event) -> &'a str {
    tl.files
        .get(ev.file as usize)
        .map_or("", |f| f.path.as_str())
}

/// The Kubernetes recovery `rec` tells of the failure `ev` (at `at`): the first record after
/// it saying each object the failure is about is back, and whether one failed again after.
fn object_back<'r>(
    k: &Kube,
    ri: usize,
    rec: &'r ObjectRecovery,
    ev: &Event,
    at: (Micros, Micros),
) -> After<'r> {
    let tl = k.tl;
    let Some(side) = rec.fails.iter().find(|s| k.is(s, ev)) else {
        return After::Nothing;
    };
    let keys = k.keys(side, ev);
    if keys.is_empty() {
        return After::Nothing;
    }
    let mut last: Option<(Micros, usize)> = None;
    for key in &keys {
        // The recovery records of this object not proved before the failure, in time order.
        let mut candidates: Vec<(usize, (Micros, Micros))> = k
            .about(ri, true, key)
            .filter(|(_, t)| !proved_before(*t, at))
            .collect();
        candidates.sort_by_key(|(i, t)| (t.0, *i));
        match candidates.iter().find(|(_, t)| proved_after(*t, at)) {
            Some((i, t)) => {
                if last.is_none_or(|(lt, _)| t.0 > lt) {
                    last = Some((t.0, *i));
                }
            }
            None => {
                return match candidates.first() {
                    Some((i, _)) => After::Unproven {
                        event: *i,
                        what: &rec.what,
                    },
                    None => came_back(k, ri, rec, key, at).unwrap_or(After::Nothing),
                };
            }
        }
    }
    let Some((back_at, event)) = last else {
        return After::Nothing;
    };
    let back = (
        back_at,
        tl.events.get(event).and_then(when).map_or(0, |w| w.1),
    );
    // A failure of one of the same objects after the recovery: it came back. One that
    // approximate times cannot order against the recovery leaves the recovery unproven.
    let mut again: Option<Micros> = None;
    let later = k
        .records()
        .get(ri)
        .map(|r| r.fails.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|(_, ks)| ks.iter().any(|k2| keys.iter().any(|k1| same_key(k1, k2))));
    for (i, _) in later {
        let Some(e) = tl.events.get(*i) else { continue };
        let Some(t) = when(e) else { continue };
        let t = (
            e.repeat
                .as_ref()
                .and_then(|r| r.last)
                .unwrap_or(t.0)
                .max(t.0),
            t.1,
        );
        if proved_before(t, back) {
            continue;
        }
        if !proved_after(t, back) {
            return After::Unproven {
                event,
                what: &rec.what,
            };
        }
        again = Some(again.map_or(t.0, |a: Micros| a.min(t.0)));
    }
    After::Back(Back {
        event,
        at: back_at,
        what: &rec.what,
        again,
        recurs: Some((rec, keys)),
        from: None,
        aged: false,
    })
}

/// The recovery `rec` tells of the failure `ev` (at `at`): the first line after it saying
/// every object the failure names is back, and whether any failed again after that.
fn back_of<'r>(
    tl: &Timeline,
    clusters: &Clusters,
    rec: &'r Recovery,
    ev: &Event,
    at: Micros,
) -> Option<Back<'r>> {
    if let Some(within) = rec.within {
        return back_within(tl, clusters, rec, ev, at, within);
    }
    let apart = |e: &Event| clusters.apart(ev.file as usize, e.file as usize);
    let key = rec
        .fails
        .captures(&ev.message)?
        .name("key")?
        .as_str()
        .to_string();
    let objects = names(&key);
    if objects.is_empty() {
        return None;
    }
    let mut last: Option<(Micros, usize)> = None;
    for name in &objects {
        let (t, i) = tl
            .events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((precise(e)?, i, e)))
            .filter(|(t, _, e)| *t > at && !apart(e))
            .find(|(_, _, e)| {
                rec.recovers
                    .captures(&e.message)
                    .and_then(|c| c.name("key"))
                    .is_some_and(|k| names(k.as_str()).contains(name))
            })
            .map(|(t, i, _)| (t, i))?;
        if last.is_none_or(|(lt, _)| t > lt) {
            last = Some((t, i));
        }
    }
    let (back_at, event) = last?;
    // A failure of one of the same objects after the recovery: it came back.
    let again = failed_again(tl, back_at, |e| {
        !apart(e)
            && rec
                .fails
                .captures(&e.message)
                .and_then(|c| c.name("key"))
                .is_some_and(|k| names(k.as_str()).iter().any(|n| objects.contains(n)))
    });
    Some(Back {
        event,
        at: back_at,
        what: &rec.what,
        again,
        recurs: None,
        from: None,
        aged: false,
    })
}

/// The recovery of a failure that names no object: the first recovery line within `within`
/// after it, and whether the same failure came again after that.
fn back_within<'r>(
    tl: &Timeline,
    clusters: &Clusters,
    rec: &'r Recovery,
    ev: &Event,
    at: Micros,
    within: Micros,
) -> Option<Back<'r>> {
    if !rec.fails.is_match(&ev.message) {
        return None;
    }
    let apart = |e: &Event| clusters.apart(ev.file as usize, e.file as usize);
    let (back_at, event) = tl
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((precise(e)?, i, e)))
        .filter(|(t, _, e)| *t > at && *t <= at + within && !apart(e))
        .find(|(_, _, e)| rec.recovers.is_match(&e.message))
        .map(|(t, i, _)| (t, i))?;
    let again = failed_again(tl, back_at, |e| !apart(e) && rec.fails.is_match(&e.message));
    Some(Back {
        event,
        at: back_at,
        what: &rec.what,
        again,
        recurs: None,
        from: None,
        aged: false,
    })
}

/// When a failure `is_same` was seen again after `back` (a folded repeat counts by its last
/// record), if it was.
fn failed_again(tl: &Timeline, back: Micros, is_same: impl Fn(&Event) -> bool) -> Option<Micros> {
    tl.events
        .iter()
        .filter_map(|e| {
            let t = precise(e)?;
            let last = e.repeat.as_ref().and_then(|r| r.last).unwrap_or(t);
            (last > back).then_some((t.max(back), e))
        })
        .find(|(_, e)| is_same(e))
        .map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aged(age: &str, micros: Micros) -> Event {
        let mut e = Event::new(1, "Readiness probe failed: ");
        e.ts = Some(crate::event::Timestamp {
            micros,
            quality: TsQuality::Approximate,
        });
        e.fields = vec![("age".into(), age.into())];
        e
    }

    /// An age `kubectl` printed is cut to its last unit: `6m (x262 over 23m)` is good to a
    /// minute, `9m20s` to a second; an approximate time without an age (a guessed year)
    /// orders nothing.
    #[test]
    fn an_age_is_good_to_its_last_unit() {
        let m = 60 * MICROS_PER_SEC;
        assert_eq!(
            when(&aged("6m (x262 over 23m)", 100 * m)),
            Some((100 * m, m))
        );
        assert_eq!(
            when(&aged("9m20s", 100 * m)),
            Some((100 * m, MICROS_PER_SEC))
        );
        assert_eq!(when(&aged("3h", 100 * m)), Some((100 * m, 60 * m)));
        let mut guessed = aged("", 100 * m);
        guessed.fields.clear();
        assert_eq!(when(&guessed), None);
    }

    /// A recovery proves it came after a failure only when the earliest moment it may
    /// stand for is after the latest the failure may: an age shown as `5m` after a failure
    /// at an exact time half a minute before it proves nothing.
    #[test]
    fn approximate_times_prove_only_what_they_can() {
        let m = 60 * MICROS_PER_SEC;
        let fail = (100 * m, 0);
        assert!(proved_after((101 * m, 0), fail));
        assert!(!proved_after((100 * m + m / 2, m), fail));
        assert!(proved_after((102 * m, m), fail));
        assert!(proved_before(fail, (101 * m, 0)));
        // An events row at `6m` stands for a moment up to a minute before its time.
        assert!(!proved_before((100 * m, m), (100 * m - m / 2, 0)));
    }

    /// A timeline of one `kubectl get pods -w` file, parsed by the table parser, without a
    /// capture time (as a pasted watch is).
    fn rows(text: &str) -> Timeline {
        let mut events = crate::parse::parse(SourceKind::KubeTable, text.as_bytes()).events;
        for e in &mut events {
            e.kind = SourceKind::KubeTable;
        }
        Timeline {
            bundle_path: "watch".to_string(),
            container: "dir".to_string(),
            files: vec![crate::load::FileInfo::new(
                0,
                "get-pods-watch.txt".to_string(),
                SourceKind::KubeTable,
            )],
            events,
            diagnostics: Vec::new(),
            zones: Vec::new(),
            capture: None,
            collected: None,
            mirrors: Default::default(),
        }
    }

    /// The `0/1 Running` row (evidence of the soft not-ready warning) judged against the
    /// rows after it.
    fn judged(tl: &Timeline) -> Finding {
        let row = tl
            .events
            .iter()
            .position(|e| e.field("ready") == Some("0/1") && e.field("value") == Some("Running"))
            .unwrap_or_default();
        let mut f = vec![Finding {
            rule: 0,
            evidence: vec![crate::rules::engine::EvidenceRef {
                event: row,
                signal: 0,
                field: None,
            }],
            confidence: 0.35,
            summary: "not ready".to_string(),
            severity: None,
        }];
        judge(tl, &mut f);
        f.remove(0)
    }

    /// kuberay#3442's watch: the pod `0/1 Running` at 11s, `1/1 Running` at 21s, recovered
    /// 10s later. The same rows with the ready row's age before the not-ready one's (the
    /// pod was ready, then not) prove no recovery; a not-ready row of the pod after the
    /// ready one (the paste's third row at the age of its `Terminating` row) is the failure
    /// coming back.
    #[test]
    fn rows_of_one_pod_are_ordered_by_its_age() {
        let not_ready = "raycluster-kuberay-workergroup-worker-lpnx6   0/1     Running             0          11s\n";
        let ready = "raycluster-kuberay-workergroup-worker-lpnx6   1/1     Running             0          21s\n";
        let f = judged(&rows(&format!("{not_ready}{ready}")));
        assert_eq!(f.severity, Some(Severity::Info), "{}", f.summary);
        assert!(
            f.summary.ends_with("(recovered: the pod showed all its containers ready when the pod was 21s old, get-pods-watch.txt:2, 10s after the failure)"),
            "{}",
            f.summary
        );
        let before = ready.replace("21s", "10s");
        let f = judged(&rows(&format!("{before}{not_ready}")));
        assert_eq!(f.severity, None, "{}", f.summary);
        assert!(!f.summary.contains("recovered"), "{}", f.summary);
        let again = not_ready.replace("     11s", "  4m11s");
        let f = judged(&rows(&format!("{not_ready}{ready}{again}")));
        assert_eq!(f.severity, None, "{}", f.summary);
        assert!(
            f.summary
                .contains("; failed again when the pod was 4m11s old)"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn a_node_is_its_logs_folder() {
        assert_eq!(node_of("head/logs/serve/controller_1.log"), "head/logs");
        assert_eq!(node_of("head/logs/raylet.out"), "head/logs");
        assert_eq!(node_of("pod-a/raylet.out"), "pod-a");
        assert_eq!(node_of("raylet.out"), "");
    }
}
