//! The failure catalogue: every cause id raysift knows, with a one-line gloss. Ids are stable
//! (reports, tests and dashboards key on them): add, never rename.

/// `(id, gloss)` for every catalogue entry.
pub const CATALOGUE: &[(&str, &str)] = &[
    (
        "dashboard_startup_transient",
        "benign start-up refusals of the Serve API, then success",
    ),
    (
        "dashboard_agent_unreachable_at_deploy",
        "the dashboard or its agent never accepted the Serve config",
    ),
    (
        "network_policy_timeout",
        "operator-to-head traffic is dropped (timeouts, not refusals)",
    ),
    (
        "dashboard_agent_died_after_deploy",
        "the agent served the PUT, then died: later GETs refused",
    ),
    (
        "serve_script_error",
        "the Serve application's own code raises",
    ),
    (
        "serve_config_schema",
        "a Serve config (serveConfigV2, a `serve deploy` file) does not match the schema of its Ray version",
    ),
    (
        "missing_dependency",
        "a module the app imports is not in the image",
    ),
    (
        "bad_import_path",
        "the application's import_path does not resolve",
    ),
    (
        "runtime_env_failure",
        "the runtime environment could not be set up",
    ),
    (
        "single_multi_app_mix",
        "a multi-app config pushed onto a single-app Serve instance",
    ),
    (
        "insufficient_resources_restart_loop",
        "Serve replicas cannot be placed; the operator rebuilds the cluster",
    ),
    (
        "serve_replicas_unschedulable",
        "Serve replicas wait for resources the cluster does not offer",
    ),
    (
        "gcs_ft_shared_storage_namespace",
        "an upgrade with a fixed external storage namespace",
    ),
    (
        "initializing_timeout",
        "RayService stuck initializing past its timeout",
    ),
    ("image_pull_failure", "pod images cannot be pulled"),
    ("crash_loop", "a Ray container keeps exiting"),
    (
        "rbac_forbidden",
        "the operator's service account lacks permissions",
    ),
    (
        "gcs_unreachable_from_worker",
        "workers cannot reach the head's GCS",
    ),
    (
        "cuda_mismatch",
        "the CUDA stack does not match the driver or the wheels",
    ),
    (
        "oom_killed",
        "a container or Ray worker was killed for memory",
    ),
    ("failed_scheduling", "pods cannot be placed on nodes"),
    (
        "autoscaler_thrash",
        "two autoscalers fight over worker replicas",
    ),
    (
        "crd_version_mismatch",
        "installed CRDs do not match the operator or manifests",
    ),
    (
        "invalid_spec",
        "the operator rejects the custom resource's spec",
    ),
    (
        "resource_quota_exceeded",
        "a ResourceQuota or LimitRange forbids the pods",
    ),
    (
        "ray_version_incompatible",
        "the Ray image is too old for KubeRay, or versions disagree",
    ),
    (
        "node_pressure_eviction",
        "pods evicted for disk or memory pressure",
    ),
    (
        "probe_failure",
        "readiness or liveness probes failing on Ray pods",
    ),
    (
        "rayjob_entrypoint_failed",
        "the RayJob's own entrypoint failed",
    ),
    (
        "rayjob_submitter_transient",
        "benign: the first job submission attempt failed, a retry succeeded",
    ),
    (
        "rayjob_deadline_exceeded",
        "the job ran past its deadline or was stopped by its TTL",
    ),
    (
        "node_not_ready",
        "a Kubernetes node under Ray pods is NotReady or stopped reporting",
    ),
    (
        "cluster_dns_failure",
        "cluster DNS does not answer: Service names cannot be resolved from the pods",
    ),
    (
        "pod_creation_refused",
        "the API server or an admission controller refuses to create a Ray pod",
    ),
    (
        "operator_crash",
        "the KubeRay operator process panics, loses its lease or cannot start",
    ),
    (
        "autoscaler_infeasible_request",
        "a resource request no worker group can ever satisfy",
    ),
    (
        "autoscaler_error",
        "the Ray autoscaler itself fails in its loop",
    ),
    // More of the field: nodes, storage, Serve health, GCS FT
    (
        "replica_health_check_failed",
        "Serve replicas start, then fail their health checks and are restarted",
    ),
    (
        "gcs_ft_redis_unreachable",
        "with GCS fault tolerance, the GCS cannot reach or log in to its Redis",
    ),
    (
        "node_died",
        "a Ray node (raylet) died or was marked dead under the cluster",
    ),
    (
        "disk_full",
        "a Ray node ran out of disk (/tmp/ray, spilling, logs)",
    ),
    (
        "rayjob_status_stuck",
        "the RayJob's status stopped following its Ray job",
    ),
    (
        "dependency_version_conflict",
        "a package in the image is at a version this Ray release cannot run with",
    ),
    (
        "log_monitor_crash",
        "Ray's log monitor died: worker output stops reaching the driver and the job logs",
    ),
    (
        "actor_constructor_error",
        "a Ray actor's constructor raised, so the actor never started and every call to it fails",
    ),
    // Known issues from KubeRay's tracker that no general rule names
    (
        "head_service_not_found",
        "the operator cannot find the RayCluster's head service, so the cluster's status is never computed",
    ),
    (
        "node_departure_reported_dead",
        "benign: Ray 1.x reports a node that left, the autoscaler's idle removals included, as marked dead for missed heartbeats",
    ),
    (
        "serve_request_reached_worker_agent",
        "the operator's Serve API requests went through a Service over every Ray pod, so a worker's dashboard agent answered, and failed, them",
    ),
    // Known issues of Ray releases found in Ray's tracker (patterns/known/KIS045 and later).
    (
        "ray_start_failure",
        "Ray itself fails while a node starts (`ray start`, `ray.init()`): a bug of the Ray release, not of the workload",
    ),
    (
        "ray_job_submission_failure",
        "Ray's job machinery (the job manager or the job's supervisor actor) fails a submitted job before its entrypoint runs: a bug of the Ray release",
    ),
    (
        "ray_process_abort",
        "a Ray process (the GCS, a raylet, a core worker) aborts on one of its own checks: a bug of the Ray release",
    ),
    (
        "ray_library_bug",
        "a Ray library (Serve, Serve LLM, Data, Train, Tune) fails on a bug of the Ray release, not of the workload",
    ),
    // Open world: what no rule names (`src/open_world/`); they rank below every other id.
    (
        "object_unhealthy",
        "a Kubernetes object of the Ray workload reports itself failing",
    ),
    (
        "component_exception",
        "a Ray or KubeRay component raised, panicked or aborted",
    ),
    (
        "unrecognised_error",
        "error records no rule explains and healthy bundles do not show",
    ),
];

/// Is `id` a catalogue id?
pub fn is_known(id: &str) -> bool {
    entry(id).is_some()
}

/// The catalogue's `(id, gloss)` of `id`, with the id as the catalogue spells it.
pub fn entry(id: &str) -> Option<(&'static str, &'static str)> {
    CATALOGUE.iter().find(|(known, _)| *known == id).copied()
}
