//! Kubernetes recoveries and requested stops, through the binary (`src/judge.rs`, the
//! `object_recovery`, `object_stop`, `node_removal` and `node_death` entries of
//! `patterns/data/lifecycle.toml`): each
//! fixture of `tests/fixtures/recovery/` is a small bundle of real lines from the corpus,
//! once with the failure followed by its object's recovery (the finding stays `info`, says
//! "recovered", the recovery's line and how long after the failure it came) and once with the
//! failure coming back after the recovery (its severity kept, and when it came back said).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::Value;

fn report(fixture: &str) -> Value {
    let dir = common::root().join("tests/fixtures/recovery").join(fixture);
    let out = common::raysift(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn causes(r: &Value) -> Vec<Value> {
    r["causes"].as_array().cloned().unwrap_or_default()
}

fn cause<'a>(causes: &'a [Value], id: &str) -> &'a Value {
    causes
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {causes:#?}"))
}

/// A recovered bundle reports nothing above `info`; `id` is shown as recovered by `line`.
fn recovered(fixture: &str, id: &str, line: &str, down: &str) {
    let r = report(&format!("{fixture}/recovered"));
    let causes = causes(&r);
    for c in &causes {
        assert_eq!(c["severity"], "info", "{fixture}: {c:#}");
    }
    let s = cause(&causes, id)["summary"].as_str().unwrap().to_string();
    assert!(s.contains("(recovered: "), "{fixture}: {s}");
    assert!(s.contains(line), "{fixture}: the recovery line {line}: {s}");
    assert!(
        s.contains(&format!("{down} after the failure")),
        "{fixture}: {s}"
    );
    assert!(!s.contains("failed again"), "{fixture}: {s}");
}

/// The same bundle with the failure after the recovery: the cause keeps its severity and
/// says when the failure came back.
fn again(fixture: &str, id: &str, at: &str) {
    let r = report(&format!("{fixture}/again"));
    let causes = causes(&r);
    let c = cause(&causes, id);
    assert_ne!(c["severity"], "info", "{fixture}: {c:#}");
    let s = c["summary"].as_str().unwrap();
    assert!(s.contains("(recovered: "), "{fixture}: {s}");
    assert!(
        s.contains(&format!("failed again at {at}")),
        "{fixture}: {s}"
    );
}

/// A pod whose probes failed (and whose liveness probe restarted it) and that then became
/// Ready: the pod's `status.conditions` Ready True with its lastTransitionTime.
#[test]
fn a_pod_ready_again() {
    recovered(
        "pod-ready",
        "probe_failure",
        "the pod became Ready at 2025-01-15T14:19:30.000Z, pods.json:18",
        "18m47s",
    );
    again("pod-ready", "probe_failure", "2025-01-15T14:22:39.522Z");
}

/// A node that went NotReady (an events row, an age good to the minute) and was Ready again
/// (a node's condition); failing again is a describe's Ready Unknown after it.
#[test]
fn a_node_ready_again() {
    recovered(
        "node-ready",
        "node_not_ready",
        "the node became Ready again at 2023-11-08T03:08:10.000Z, nodes.json:16",
        "13m43s",
    );
    again("node-ready", "node_not_ready", "2023-11-08T03:12:55.000Z");
}

/// An upgrade's old RayCluster deleted by its RayService: its head's probe failing after
/// the deletion is the stop, at `info`; the same failure before the deletion is not.
#[test]
fn an_old_cluster_deleted_by_its_rayservice() {
    let r = report("upgrade-stop/stopped");
    let causes = causes(&r);
    for c in &causes {
        assert_eq!(c["severity"], "info", "{c:#}");
    }
    let s = cause(&causes, "probe_failure")["summary"].as_str().unwrap();
    assert!(
        s.contains("(after a requested stop at 2025-10-21T09:16:43.000Z: the RayService deleted its old RayCluster"),
        "{s}"
    );
    let before = self::causes(&report("upgrade-stop/before"));
    let c = cause(&before, "probe_failure");
    assert_ne!(c["severity"], "info", "{c:#}");
    assert!(!c["summary"].as_str().unwrap().contains("requested stop"));
}

/// The pod Ready within the minute a `6m` events row may stand for: the order cannot be
/// proved, so the cause keeps its severity and says why.
#[test]
fn a_recovery_approximate_times_cannot_order() {
    let r = report("pod-ready/unproven");
    let causes = causes(&r);
    let c = cause(&causes, "probe_failure");
    assert_ne!(c["severity"], "info", "{c:#}");
    let s = c["summary"].as_str().unwrap();
    assert!(
        s.contains("(the pod became Ready at 2025-01-15T14:16:30.000Z, pods.json:18, may have followed it, but approximate times cannot prove that it came after the failure)"),
        "{s}"
    );
}

/// `kubectl get pods -w` rows of a worker (kuberay#3442): `0/1 Running` while its readiness
/// probe had not passed, then `1/1 Running`; the rows of one pod are ordered by the age each
/// shows, and the time down is their difference. A pod a listing shows `0/1 Running` and
/// nothing later ready (kuberay#3467) keeps its warning.
#[test]
fn a_pod_shown_ready_in_a_later_row() {
    recovered(
        "ready-rows",
        "object_unhealthy",
        "the pod showed all its containers ready when the pod was 21s old, get-pods-watch.txt:4",
        "10s",
    );
    let r = report("ready-rows/stays");
    let causes = causes(&r);
    let c = cause(&causes, "object_unhealthy");
    assert_eq!(c["severity"], "warning", "{c:#}");
    let s = c["summary"].as_str().unwrap();
    assert!(s.contains("Running but not ready (0/1)"), "{s}");
    assert!(!s.contains("recovered"), "{s}");
}

/// A node the autoscaler asked to remove (`StandardAutoscaler: Terminating the node with id
/// … (idle)`, real lines of `corpus/run-2.40.0-autoscaler-idle-scale-down`) that the GCS then
/// marks dead (real lines of `corpus/run-2.40.0-raylet-killed`, the node id made the removed
/// node's and their times put 30 s after the removal, as a raylet killed hard after the
/// request would give): the death was asked for, `info`, and the report shows the request.
/// The same death 30 s before the request, or without the request, stays an error; one whose
/// line has no time (a driver's `(raylet)` copy) cannot be ordered, keeps its severity and
/// says why.
#[test]
fn a_node_the_autoscaler_removed() {
    let r = report("autoscaler-removal/removed");
    let causes = causes(&r);
    for c in &causes {
        assert_eq!(c["severity"], "info", "{c:#}");
    }
    let s = cause(&causes, "node_died")["summary"].as_str().unwrap();
    assert!(
        s.contains("(after a requested stop at 2026-12-06T17:14:06.728Z: the autoscaler (v1) asked to terminate the node, logs/monitor.log:1)"),
        "{s}"
    );
    for fixture in [
        "autoscaler-removal/before",
        "autoscaler-removal/unrequested",
    ] {
        let causes = self::causes(&report(fixture));
        let c = cause(&causes, "node_died");
        assert_eq!(c["severity"], "error", "{fixture}: {c:#}");
        let s = c["summary"].as_str().unwrap();
        assert!(!s.contains("requested stop"), "{fixture}: {s}");
        assert!(!s.contains("asked to terminate"), "{fixture}: {s}");
    }
    let causes = self::causes(&report("autoscaler-removal/unproven"));
    let c = cause(&causes, "node_died");
    assert_eq!(c["severity"], "error", "{c:#}");
    let s = c["summary"].as_str().unwrap();
    assert!(
        s.contains("(the autoscaler (v1) asked to terminate the node at 2026-12-06T17:14:06.728Z, logs/monitor.log:1, but the times cannot prove that it came before the death)"),
        "{s}"
    );
}

/// A worker pod KubeRay deleted on scale-in (`Deleted pod …`, the events row of
/// `corpus/healthy-raycluster-autoscaling`), whose address a `kubectl get pods -o wide` row
/// gives (the address that bundle's autoscaler names for the pod), and the GCS marking the
/// node at that address dead 85 s later (the GCS line of
/// `corpus/session-logs-worker-node-marked-dead`, its address and time made the pod's): the
/// death was asked for, `info`, and names the deletion. Without the deletion it is an error.
#[test]
fn a_node_whose_pod_kuberay_deleted() {
    let r = report("kuberay-scale-in/removed");
    let causes = causes(&r);
    for c in &causes {
        assert_eq!(c["severity"], "info", "{c:#}");
    }
    let s = cause(&causes, "node_died")["summary"].as_str().unwrap();
    assert!(
        s.contains("(after a requested stop at 2025-04-14T02:08:15.032Z: KubeRay deleted the worker pod on scale-in (its pod feature-etl-cpu-pool-worker-7hk2x, at 10.52.2.9), events.txt:2)"),
        "{s}"
    );
    let causes = self::causes(&report("kuberay-scale-in/unrequested"));
    let c = cause(&causes, "node_died");
    assert_eq!(c["severity"], "error", "{c:#}");
    assert!(!c["summary"].as_str().unwrap().contains("requested stop"));
}

/// A RayJob whose Ray job turned FAILED (the operator's `updateRayJobStatus` line, KubeRay
/// 1.1+) and whose retry (`JobDeploymentStatus` `Retrying`, `backoffLimit`, KubeRay 1.2+)
/// SUCCEEDED: the failure is `info`, recovered by the operator's `RayJob` line with
/// `JobStatus` SUCCEEDED. A FAILED after that success keeps the error. Operator lines of the
/// corpus's RayJob bundles, their statuses and times made to tell that story.
#[test]
fn a_rayjob_whose_retry_succeeded() {
    recovered(
        "rayjob-retried",
        "rayjob_entrypoint_failed",
        "the RayJob SUCCEEDED at 2024-10-21T02:41:38.005Z, kuberay-operator.log:6",
        "21m36s",
    );
    again(
        "rayjob-retried",
        "rayjob_entrypoint_failed",
        "2024-10-21T02:55:12.006Z",
    );
}

/// A RayService whose Serve config PUTs failed (`Fail to reconcileServe.`, the operator lines
/// of `corpus/kuberay-log-missing-module`) and whose status then changed to Running (KubeRay
/// 0.6 to 1.2's `inconsistentRayServiceStatus RayService ServiceStatus changed from … to
/// Running`): `info`, recovered. The same failure eight minutes after that keeps its
/// severity (the refusals then span minutes, and the rule for a dashboard agent unreachable at
/// deploy names them).
#[test]
fn a_rayservice_ready_after_errors() {
    recovered(
        "rayservice-ready",
        "unrecognised_error",
        "the RayService became Ready at 2024-10-08T14:23:41.502Z, kuberay-operator.log:4",
        "3m30s",
    );
    again(
        "rayservice-ready",
        "dashboard_agent_unreachable_at_deploy",
        "2024-10-08T14:31:05.118Z",
    );
}

/// A Ray node the GCS found dead (`Node is dead because the health check failed.` and `…
/// has been marked dead`, Ray 2.40's GCS lines of `corpus/run-2.40.0-raylet-killed`) and a
/// node registering again at its address 41 s later (the GCS's `Registering node info`,
/// another node id: KubeRay restarted the worker's container): `info`, recovered. The new
/// node dying in turn keeps the error and says when. Lines of that run, the second node's id
/// and times made to follow.
#[test]
fn a_node_registered_again() {
    recovered(
        "node-back",
        "node_died",
        "a node registered again at the address at 2026-12-06T09:36:41.207Z, logs/gcs_server.out:4",
        "41s",
    );
    again("node-back", "node_died", "2026-12-06T09:38:02.978Z");
}
