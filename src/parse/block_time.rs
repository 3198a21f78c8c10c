//! When a fact of a Kubernetes object happened: the object's own timestamp for the block the
//! fact belongs to. A container's terminated state ended at its `finishedAt`, a condition
//! changed at its `lastTransitionTime`, a custom resource's status was written at its
//! `lastUpdateTime`; the facts of that block (the exit code, the reason, the message) take
//! that time, so that an OOM kill stands on the timeline where it happened instead of nowhere.
//! Kubernetes writes these times in RFC 3339 with `Z`, and describe in RFC 1123 with the
//! offset, so they are exact.
//!
//! The blocks are found by the normalised paths the printers agree on, so one reading serves
//! the YAML and JSON of an object and its describe:
//! - a container's state: `…containerstatuses[0].laststate.terminated` (an object),
//!   `containers.ray-head.laststate` (describe, whose head line says `Terminated`); timed by
//!   `finishedAt`, else `startedAt` (describe: `Finished`, `Started`); a waiting state has no
//!   time of its own;
//! - a condition: `…conditions[0]` (an object, the generic describer), `conditions[Ready]` (a
//!   describe table whose columns hold times, as a node's); timed by `lastTransitionTime`,
//!   else `lastProbeTime`, else `lastUpdateTime`;
//! - a status: `status` or any map below it, timed by its own `lastUpdateTime` (a RayService
//!   application, a RayCluster), the innermost first; a RayJob's whole status also by its
//!   `endTime`, else its `startTime`.
//!
//! Invariant: a fact takes a time of its own block (the same state, the same condition) or of
//! a status map that holds it, never one of another container or condition; a container
//! state or a condition without a time leaves its facts untimed. No time is invented.
//!
//! This module walks no document: each parser hands it the paths and values of one object.

use std::collections::HashMap;

use crate::event::Micros;
use crate::parse::primitives::{instant, rfc1123z};

/// The keys that time a container's state, best first: a terminated container's end, else
/// its start (a running container's only time). Objects spell them `…At`, describe not.
const STATE_TIMES: &[&str] = &["finishedat", "finished", "startedat", "started"];

/// The keys that time a condition, best first: when its status last changed, else when it
/// was last probed or written.
const CONDITION_TIMES: &[&str] = &["lasttransitiontime", "lastprobetime", "lastupdatetime"];

/// The key that times a status map: when the operator last wrote it.
const STATUS_TIMES: &[&str] = &["lastupdatetime"];

/// The keys that time a RayJob's whole status after its last write: the job's end, else its
/// start. Other kinds are left out on purpose: a pod's or a Job's `startTime` is when it
/// started, not when its phase or counts were written.
const JOB_STATUS_TIMES: &[&str] = &["lastupdatetime", "endtime", "starttime"];

/// The lists whose elements are container statuses, in an object.
const CONTAINER_STATUS_LISTS: &[&str] = &[
    "containerstatuses",
    "initcontainerstatuses",
    "ephemeralcontainerstatuses",
];

/// The sections describe prints containers under, at the top of a pod.
const DESCRIBED_CONTAINERS: &[&str] = &["containers", "initcontainers", "ephemeralcontainers"];

/// The states of a container status in an object.
const STATES: &[&str] = &["terminated", "running", "waiting"];

/// The times of one object, by block; asked for the time of each of its facts.
#[derive(Debug, Default)]
pub struct BlockTimes {
    /// Per block path, the times its own keys hold, in the order read.
    blocks: HashMap<String, Vec<(&'static str, Micros)>>,
    /// A RayJob, whose status is also timed by its end and start.
    job: bool,
}

/// What a path is, as a holder of times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// A container's state: its own time or none.
    ContainerState,
    /// One condition: its own time or none.
    Condition,
    /// `status` or a map below it: its own time, else that of the status map holding it.
    Status,
    /// Anything else: the block holding it decides.
    Plain,
}

impl BlockTimes {
    /// The times of an object of `kind` (`RayJob`, `Pod`; empty when unknown).
    pub fn new(kind: &str) -> BlockTimes {
        BlockTimes {
            blocks: HashMap::new(),
            job: kind == "RayJob",
        }
    }

    /// Notes a leaf of the object: kept when its key may time a block and its value reads as
    /// a time.
    pub fn note(&mut self, path: &str, value: &str) {
        let (Some(block), key) = split_last(path) else {
            return;
        };
        let Some(key) = time_key(key) else {
            return;
        };
        let Some(time) = read_time(value) else {
            return;
        };
        self.blocks
            .entry(block.to_string())
            .or_default()
            .push((key, time));
    }

    /// The time of the fact at `path`: that of the innermost block holding it that has one,
    /// where a container state or a condition ends the search with or without one.
    pub fn of(&self, path: &str) -> Option<Micros> {
        if self.blocks.is_empty() {
            return None;
        }
        for at in ancestors(path) {
            match block_of(at) {
                Block::ContainerState => return self.first(at, STATE_TIMES),
                Block::Condition => return self.first(at, CONDITION_TIMES),
                Block::Status => {
                    let keys = if self.job && at == "status" {
                        JOB_STATUS_TIMES
                    } else {
                        STATUS_TIMES
                    };
                    if let Some(time) = self.first(at, keys) {
                        return Some(time);
                    }
                }
                Block::Plain => {}
            }
        }
        None
    }

    /// The time of `block` under the first of `keys` it holds.
    fn first(&self, block: &str, keys: &[&str]) -> Option<Micros> {
        let held = self.blocks.get(block)?;
        keys.iter()
            .find_map(|k| held.iter().find(|(key, _)| key == k).map(|(_, t)| *t))
    }
}

/// The key as one of the time keys any block reads, as a `'static` name.
fn time_key(key: &str) -> Option<&'static str> {
    [STATE_TIMES, CONDITION_TIMES, JOB_STATUS_TIMES]
        .into_iter()
        .flatten()
        .find(|k| **k == key)
        .copied()
}

/// A value Kubernetes printed as a time: RFC 3339 (objects, the generic describer) or
/// RFC 1123 with an offset (the typed describers). `null` and anything else are no time.
fn read_time(value: &str) -> Option<Micros> {
    let value = value.trim();
    if let Ok(("", time)) = instant(value) {
        return Some(time);
    }
    match rfc1123z(value) {
        Ok(("", time)) => Some(time),
        _ => None,
    }
}

/// What `path` is as a holder of times.
fn block_of(path: &str) -> Block {
    if is_container_state(path) {
        Block::ContainerState
    } else if is_condition(path) {
        Block::Condition
    } else if path == "status" || path.starts_with("status.") {
        Block::Status
    } else {
        Block::Plain
    }
}

/// `…containerstatuses[i].state.terminated` (an object) or `containers.<name>.laststate`
/// (describe): a state of one container, never a status field that happens to be called
/// `state` (a RayCluster's `status.state`).
fn is_container_state(path: &str) -> bool {
    let (Some(parent), key) = split_last(path) else {
        return false;
    };
    if STATES.contains(&key) {
        let (Some(container), state) = split_last(parent) else {
            return false;
        };
        let list = match split_last(container) {
            (Some(list), _) if container.ends_with(']') => split_last(list).1,
            _ => "",
        };
        return is_state_key(state) && CONTAINER_STATUS_LISTS.contains(&list);
    }
    is_state_key(key)
        && split_last(parent)
            .0
            .is_some_and(|list| DESCRIBED_CONTAINERS.contains(&list))
}

fn is_state_key(key: &str) -> bool {
    key == "state" || key == "laststate"
}

/// `…conditions[i]` or `conditions[Ready]`: one element of a list of conditions.
fn is_condition(path: &str) -> bool {
    path.strip_suffix(']')
        .and_then(|p| p.rfind('[').and_then(|at| p.get(..at)))
        .is_some_and(|list| split_last(list).1 == "conditions")
}

/// The path and each path holding it, innermost first.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(path), |p| split_last(p).0)
}

/// The parent path and the last segment: `a.b[0].c` → (`a.b[0]`, `c`); `a.b[0]` → (`a.b`,
/// `0`); `a` → (none, `a`). A key holding a dot (`ray.io/cluster`) splits in two, which no
/// block name can match, so it does no harm.
fn split_last(path: &str) -> (Option<&str>, &str) {
    if let Some(inner) = path.strip_suffix(']') {
        if let Some(at) = inner.rfind('[') {
            return (inner.get(..at), inner.get(at + 1..).unwrap_or(""));
        }
    }
    match path.rfind('.') {
        Some(at) => (path.get(..at), path.get(at + 1..).unwrap_or("")),
        None => (None, path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::format_rfc3339;

    /// The time of every path of `facts` (path, value) read as one object of `kind`.
    #[track_caller]
    fn check(kind: &str, facts: &[(&str, &str)], expect: &str) {
        let mut times = BlockTimes::new(kind);
        for (path, value) in facts {
            times.note(path, value);
        }
        let got: Vec<String> = facts
            .iter()
            .map(|(path, _)| {
                let time = times.of(path).map_or("-".to_string(), format_rfc3339);
                format!("{path} {time}")
            })
            .collect();
        assert_eq!(got.join("\n"), expect.trim());
    }

    #[test]
    fn a_terminated_state_takes_its_end() {
        check(
            "Pod",
            &[
                ("status.containerstatuses[0].name", "ray-head"),
                ("status.containerstatuses[0].restartcount", "1"),
                ("status.containerstatuses[0].state.running", ""),
                (
                    "status.containerstatuses[0].state.running.startedat",
                    "2024-06-12T10:31:43Z",
                ),
                ("status.containerstatuses[0].laststate", ""),
                ("status.containerstatuses[0].laststate.terminated", ""),
                (
                    "status.containerstatuses[0].laststate.terminated.exitcode",
                    "137",
                ),
                (
                    "status.containerstatuses[0].laststate.terminated.reason",
                    "OOMKilled",
                ),
                (
                    "status.containerstatuses[0].laststate.terminated.startedat",
                    "2024-06-12T10:00:04Z",
                ),
                (
                    "status.containerstatuses[0].laststate.terminated.finishedat",
                    "2024-06-12T10:31:40Z",
                ),
                (
                    "status.containerstatuses[1].state.waiting.reason",
                    "CrashLoopBackOff",
                ),
                (
                    "status.containerstatuses[1].laststate.terminated.exitcode",
                    "1",
                ),
                (
                    "status.containerstatuses[1].laststate.terminated.startedat",
                    "2024-06-12T10:00:32Z",
                ),
            ],
            "
status.containerstatuses[0].name -
status.containerstatuses[0].restartcount -
status.containerstatuses[0].state.running 2024-06-12T10:31:43.000Z
status.containerstatuses[0].state.running.startedat 2024-06-12T10:31:43.000Z
status.containerstatuses[0].laststate -
status.containerstatuses[0].laststate.terminated 2024-06-12T10:31:40.000Z
status.containerstatuses[0].laststate.terminated.exitcode 2024-06-12T10:31:40.000Z
status.containerstatuses[0].laststate.terminated.reason 2024-06-12T10:31:40.000Z
status.containerstatuses[0].laststate.terminated.startedat 2024-06-12T10:31:40.000Z
status.containerstatuses[0].laststate.terminated.finishedat 2024-06-12T10:31:40.000Z
status.containerstatuses[1].state.waiting.reason -
status.containerstatuses[1].laststate.terminated.exitcode 2024-06-12T10:00:32.000Z
status.containerstatuses[1].laststate.terminated.startedat 2024-06-12T10:00:32.000Z
",
        );
    }

    #[test]
    fn a_described_state_takes_its_end() {
        check(
            "Pod",
            &[
                ("containers.ray-head.state", "Running"),
                (
                    "containers.ray-head.state.started",
                    "Wed, 15 Jan 2025 14:22:35 +0000",
                ),
                ("containers.ray-head.laststate", "Terminated"),
                ("containers.ray-head.laststate.reason", "Error"),
                ("containers.ray-head.laststate.exitcode", "143"),
                (
                    "containers.ray-head.laststate.started",
                    "Wed, 15 Jan 2025 14:11:26 +0000",
                ),
                (
                    "containers.ray-head.laststate.finished",
                    "Wed, 15 Jan 2025 22:22:03 +0800",
                ),
                ("containers.ray-head.ready", "False"),
                ("initcontainers.wait-gcs.state", "Waiting"),
                ("initcontainers.wait-gcs.state.reason", "PodInitializing"),
                ("status", "Running"),
            ],
            "
containers.ray-head.state 2025-01-15T14:22:35.000Z
containers.ray-head.state.started 2025-01-15T14:22:35.000Z
containers.ray-head.laststate 2025-01-15T14:22:03.000Z
containers.ray-head.laststate.reason 2025-01-15T14:22:03.000Z
containers.ray-head.laststate.exitcode 2025-01-15T14:22:03.000Z
containers.ray-head.laststate.started 2025-01-15T14:22:03.000Z
containers.ray-head.laststate.finished 2025-01-15T14:22:03.000Z
containers.ray-head.ready -
initcontainers.wait-gcs.state -
initcontainers.wait-gcs.state.reason -
status -
",
        );
    }

    #[test]
    fn a_condition_takes_its_own_time_or_none() {
        check(
            "RayCluster",
            &[
                ("status.conditions[0].lastprobetime", "null"),
                (
                    "status.conditions[0].lasttransitiontime",
                    "2025-04-14T02:00:24Z",
                ),
                ("status.conditions[0].reason", "HeadPodRunningAndReady"),
                ("status.conditions[1].reason", "RayClusterPodsProvisioning"),
                ("status.conditions[1].type", "RayClusterProvisioned"),
                ("status.conditions[2].lastprobetime", "2025-04-14T02:00:20Z"),
                ("status.conditions[2].type", "ReplicaFailure"),
                ("status.lastupdatetime", "2025-04-14T02:08:16Z"),
                ("status.state", "ready"),
                ("status.head.podname", "feature-etl-head-w4n8r"),
                ("conditions[Ready]", "Unknown"),
                (
                    "conditions[Ready].lasttransitiontime",
                    "Wed, 08 Nov 2023 03:12:55 +0000",
                ),
                (
                    "conditions[Ready].lastheartbeattime",
                    "Wed, 08 Nov 2023 03:12:14 +0000",
                ),
                ("conditions[PodScheduled]", "True"),
            ],
            "
status.conditions[0].lastprobetime 2025-04-14T02:00:24.000Z
status.conditions[0].lasttransitiontime 2025-04-14T02:00:24.000Z
status.conditions[0].reason 2025-04-14T02:00:24.000Z
status.conditions[1].reason -
status.conditions[1].type -
status.conditions[2].lastprobetime 2025-04-14T02:00:20.000Z
status.conditions[2].type 2025-04-14T02:00:20.000Z
status.lastupdatetime 2025-04-14T02:08:16.000Z
status.state 2025-04-14T02:08:16.000Z
status.head.podname 2025-04-14T02:08:16.000Z
conditions[Ready] 2023-11-08T03:12:55.000Z
conditions[Ready].lasttransitiontime 2023-11-08T03:12:55.000Z
conditions[Ready].lastheartbeattime 2023-11-08T03:12:55.000Z
conditions[PodScheduled] -
",
        );
    }

    #[test]
    fn a_status_map_takes_its_own_update_before_the_status() {
        let app = "status.activeservicestatus.applicationstatuses.fruit_app";
        check(
            "RayService",
            &[
                (&format!("{app}.lastupdatetime"), "2023-07-11T22:21:24Z"),
                (&format!("{app}.status"), "DEPLOY_FAILED"),
                (&format!("{app}.servedeploymentstatuses.d.status"), "UNHEALTHY"),
                (
                    &format!("{app}.servedeploymentstatuses.d.lastupdatetime"),
                    "2023-07-11T22:20:00Z",
                ),
                ("status.activeservicestatus.rayclustername", "c"),
                ("status.lastupdatetime", "2023-07-11T22:25:00Z"),
                ("status.servicestatus", "Running"),
            ],
            "
status.activeservicestatus.applicationstatuses.fruit_app.lastupdatetime 2023-07-11T22:21:24.000Z
status.activeservicestatus.applicationstatuses.fruit_app.status 2023-07-11T22:21:24.000Z
status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.d.status 2023-07-11T22:20:00.000Z
status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.d.lastupdatetime 2023-07-11T22:20:00.000Z
status.activeservicestatus.rayclustername 2023-07-11T22:25:00.000Z
status.lastupdatetime 2023-07-11T22:25:00.000Z
status.servicestatus 2023-07-11T22:25:00.000Z
",
        );
    }

    #[test]
    fn only_a_rayjob_status_is_timed_by_its_end_or_start() {
        let job = [
            ("status.jobstatus", "FAILED"),
            ("status.starttime", "2025-02-03T06:00:00Z"),
            ("status.endtime", "2025-02-03T06:04:46Z"),
        ];
        check(
            "RayJob",
            &job,
            "
status.jobstatus 2025-02-03T06:04:46.000Z
status.starttime 2025-02-03T06:04:46.000Z
status.endtime 2025-02-03T06:04:46.000Z
",
        );
        check(
            "RayJob",
            &job[..2],
            "
status.jobstatus 2025-02-03T06:00:00.000Z
status.starttime 2025-02-03T06:00:00.000Z
",
        );
        check(
            "Pod",
            &[
                ("status.phase", "Failed"),
                ("status.starttime", "2024-06-12T10:00:18Z"),
            ],
            "
status.phase -
status.starttime -
",
        );
    }

    #[test]
    fn fields_named_like_blocks_elsewhere_are_not_blocks() {
        check(
            "RayCluster",
            &[
                (
                    "spec.headgroupspec.template.spec.containers[0].name",
                    "ray-head",
                ),
                ("metadata.creationtimestamp", "2025-04-14T01:59:00Z"),
                ("spec.state.finishedat", "2025-04-14T01:59:00Z"),
                ("spec.state.reason", "x"),
                ("status.state", "failed"),
                ("metadata.labels.ray.io/conditions[0]", "x"),
            ],
            "
spec.headgroupspec.template.spec.containers[0].name -
metadata.creationtimestamp -
spec.state.finishedat -
spec.state.reason -
status.state -
metadata.labels.ray.io/conditions[0] -
",
        );
    }

    #[test]
    fn paths_split_at_their_last_segment() {
        assert_eq!(split_last("a.b[0].c"), (Some("a.b[0]"), "c"));
        assert_eq!(split_last("a.b[0]"), (Some("a.b"), "0"));
        assert_eq!(split_last("conditions[x.y]"), (Some("conditions"), "x.y"));
        assert_eq!(split_last("a"), (None, "a"));
        assert_eq!(split_last("]"), (None, "]"));
        assert_eq!(split_last(""), (None, ""));
        let all: Vec<&str> = ancestors("status.conditions[0].reason").collect();
        assert_eq!(
            all,
            [
                "status.conditions[0].reason",
                "status.conditions[0]",
                "status.conditions",
                "status"
            ]
        );
    }
}
