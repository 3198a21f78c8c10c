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
//! The lines that tell a stop are data (`rules::stops`, from `patterns/data/stops.toml`),
//! each with where its wording comes from; the sieve keeps them.

use std::collections::BTreeSet;

use crate::event::{Event, Micros, SourceKind, TsQuality, MICROS_PER_SEC};
use crate::history_server::Clusters;
use crate::rules::engine::Finding;
use crate::rules::lifecycle::{names, own_stops, recoveries, tellers, Recovery, Scope};
use crate::rules::Severity;
use crate::timeline::Timeline;

/// How long before the first line of a stop its own deaths may start: `ray stop` signals
/// every process of the node at once, and one may die before the raylet writes its line;
/// absl's dump of a SIGTERM carries whole seconds.
const STOP_SLACK: Micros = 2 * MICROS_PER_SEC;

/// How long after a job's stop its driver and workers may still be dying of it.
const JOB_STOP_REACH: Micros = 30 * MICROS_PER_SEC;

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
}

impl Stop {
    /// Whether a record of `kind` at `at`, in a file of `file_kind` on `node`, may be a
    /// death this stop caused. (A driver's log relays the raylet's lines: the file tells
    /// whose record it is.)
    fn covers(&self, at: Micros, kind: SourceKind, file_kind: SourceKind, node: &str) -> bool {
        if !is_ray_log(kind) || self.node.as_deref().is_some_and(|n| n != node) {
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
    found.sort_by_key(|s| (s.at, s.event));
    found
}

/// Judges every finding: what died of a requested stop, and what recovered for good, stay
/// at `info`.
pub fn judge(tl: &Timeline, findings: &mut [Finding]) {
    let stops = stops(tl);
    after_stops(tl, &stops, findings);
    recovered(tl, &stops, findings);
}

/// Keeps at `info` every finding that only records what a requested stop did.
pub fn after_stops(tl: &Timeline, stops: &[Stop], findings: &mut [Finding]) {
    if stops.is_empty() {
        return;
    }
    for f in findings.iter_mut() {
        let mut by: Option<&Stop> = None;
        let all_after = !f.evidence.is_empty()
            && f.evidence.iter().all(|r| {
                let Some(s) = tl.events.get(r.event).and_then(|ev| stop_of(tl, stops, ev)) else {
                    return false;
                };
                if by.is_none_or(|b| s.at < b.at) {
                    by = Some(s);
                }
                true
            });
        let Some(stop) = by.filter(|_| all_after) else {
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

/// The stop that covers `ev`, if one does.
fn stop_of<'s>(tl: &Timeline, stops: &'s [Stop], ev: &Event) -> Option<&'s Stop> {
    let at = precise(ev)?;
    let file = tl.files.get(ev.file as usize)?;
    let node = node_of(&file.path);
    stops
        .iter()
        .find(|s| s.covers(at, ev.kind, file.kind, node))
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
}

/// Keeps at `info` every finding each record of which is a failure its object recovered
/// from (a replica replaced, …) and did not see again, or a death of a requested stop; a
/// failure that came back keeps its severity and says when it did.
pub fn recovered(tl: &Timeline, stops: &[Stop], findings: &mut [Finding]) {
    let recoveries = recoveries();
    if recoveries.is_empty() {
        return;
    }
    // A History Server copy holds several clusters: a line of one recovers none of another.
    let clusters = Clusters::of(tl.files.iter().map(|f| f.path.as_str()));
    for f in findings.iter_mut() {
        if f.severity.is_some() || f.evidence.is_empty() {
            continue;
        }
        let mut backs: Vec<(Micros, Back)> = Vec::new();
        let all = f.evidence.iter().all(|r| {
            let Some(ev) = tl.events.get(r.event) else {
                return false;
            };
            let Some(at) = precise(ev) else {
                return false;
            };
            match recoveries
                .iter()
                .find_map(|rec| back_of(tl, &clusters, rec, ev, at))
            {
                Some(back) => {
                    backs.push((at, back));
                    true
                }
                None => stop_of(tl, stops, ev).is_some(),
            }
        });
        if !all || backs.is_empty() {
            continue;
        }
        let first = backs.iter().map(|(at, _)| *at).min().unwrap_or_default();
        let Some((_, last)) = backs.iter().max_by_key(|(_, b)| (b.at, b.event)) else {
            continue;
        };
        let Some(line) = tl.events.get(last.event) else {
            continue;
        };
        let file = tl
            .files
            .get(line.file as usize)
            .map_or("", |f| f.path.as_str());
        let again = backs.iter().filter_map(|(_, b)| b.again).min();
        let told = format!(
            "{} at {}, {}:{}, {} after the failure",
            last.what,
            crate::event::format_rfc3339(last.at),
            file,
            line.line,
            crate::rules::engine::human(last.at - first),
        );
        let summary = f.summary.trim_end().trim_end_matches('.').to_string();
        f.summary = match again {
            Some(t) => format!(
                "{summary} (recovered: {told}; failed again at {})",
                crate::event::format_rfc3339(t)
            ),
            None => {
                f.severity = Some(Severity::Info);
                format!("{summary} (recovered: {told})")
            }
        };
    }
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

    #[test]
    fn a_node_is_its_logs_folder() {
        assert_eq!(node_of("head/logs/serve/controller_1.log"), "head/logs");
        assert_eq!(node_of("head/logs/raylet.out"), "head/logs");
        assert_eq!(node_of("pod-a/raylet.out"), "pod-a");
        assert_eq!(node_of("raylet.out"), "");
    }
}
