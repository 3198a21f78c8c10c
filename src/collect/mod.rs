//! `raysift collect`: gathers, with the user's own `kubectl`, the bundle raysift reads best,
//! and writes it as one `.tar.gz`. It owns the plan (which commands, in which order, where
//! each output goes in the archive) and `metadata.json`; `kubectl.rs` runs one command with a
//! deadline, `archive.rs` writes the archive atomically (and redacted when asked).
//!
//! Rules it keeps: only read-only verbs (`get`, `describe`, `logs`, `version`, and `exec` of
//! `tar` on the Ray log directory); every command has a deadline; a command that fails is
//! recorded and collection goes on; the archive appears under its name only once complete.
//!
//! Layout, under `raysift-collect-<namespace>-<time>/`:
//!
//! ```text
//! metadata.json                              what was run, versions, collected_at
//! events.txt                                 get events -o wide, sorted by last time
//! operator/pods.json                         the KubeRay operator's pods
//! operator/<pod>/<container>.log             logs --timestamps (.previous.log after a restart)
//! k8s/<kind>-<name>.yaml                     get -o yaml of the chosen objects, services, Job
//! k8s/pods[-<cluster>].json                  get pods -o json of the chosen objects
//! describe/<kind>-<name>.txt                 describe of the objects, pods and nodes
//! pods/<pod>/<container>.log                 logs --timestamps (.previous.log after a restart)
//! pods/<head>/session_latest/logs/…          the head's /tmp/ray/session_latest/logs
//! ```

mod archive;
pub mod kubectl;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::collected::COLLECTOR;
use crate::event::{format_rfc3339, Micros};
use crate::redact::Redactor;
use archive::Writer;
use kubectl::{Keep, Outcome, Status};

/// The Ray log directory of a head pod.
const RAY_LOGS: &str = "/tmp/ray/session_latest/logs";

/// Output kept of a command whose output is not a log (objects, tables, versions).
const MAX_OBJECT_BYTES: u64 = 64 << 20;

/// What to collect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    RayService(String),
    RayCluster(String),
    RayJob(String),
    /// Every RayService, RayCluster and RayJob of the namespace.
    All,
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Target::RayService(n) => format!("rayservice/{n}"),
            Target::RayCluster(n) => format!("raycluster/{n}"),
            Target::RayJob(n) => format!("rayjob/{n}"),
            Target::All => "all Ray objects".to_string(),
        }
    }
}

/// A collection, as the command line asked for it.
pub struct Config {
    /// The program to run (`kubectl`, found on `PATH`).
    pub kubectl: String,
    /// Passed first to every command (`--context X`, `--kubeconfig F`).
    pub global: Vec<String>,
    /// `None`: the current context's namespace.
    pub namespace: Option<String>,
    pub operator_namespace: Option<String>,
    pub target: Target,
    /// Passed to `kubectl logs --since`.
    pub since: Option<String>,
    /// Where to write; `None`: `raysift-collect-<ns>-<time>.tar.gz` in the current folder.
    pub out: Option<PathBuf>,
    pub timeout: Duration,
    /// Most bytes kept of one container's log, and of the head's Ray log directory.
    pub max_log_bytes: u64,
    pub redactor: Option<Redactor>,
    /// One line per command on standard error.
    pub progress: bool,
}

/// What a collection wrote.
#[derive(Debug)]
pub struct Summary {
    pub path: PathBuf,
    pub files: usize,
    pub bytes: u64,
    pub commands: usize,
    pub failed: usize,
}

/// Why a collection wrote nothing.
#[derive(Debug)]
pub enum Error {
    /// `kubectl` could not be run at all.
    NoKubectl(String),
    /// The archive could not be written.
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoKubectl(why) => write!(
                f,
                "{why} (raysift collect runs your kubectl, found on PATH)"
            ),
            Error::Io(p, e) => write!(f, "cannot write {}: {e}", p.display()),
        }
    }
}

/// A pod of the collection, as its `get pods -o json` says.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pod {
    namespace: Option<String>,
    name: String,
    node: Option<String>,
    head: bool,
    image: Option<String>,
    /// Containers (init containers first) and whether each has restarted.
    containers: Vec<(String, bool)>,
}

/// One command run, for `metadata.json`.
struct Record {
    args: Vec<String>,
    /// How it ended (its output moved out: to the archive, or to the caller).
    outcome: Outcome,
    /// Bytes of standard output it wrote, kept or not.
    stdout_bytes: u64,
    file: Option<String>,
}

/// A collection under way.
struct Collector {
    cfg: Config,
    out: Writer,
    records: Vec<Record>,
    notes: Vec<String>,
    /// Why collection stopped, if it did.
    fatal: Option<Error>,
}

/// Runs the collection and writes the archive.
///
/// # Errors
///
/// When `kubectl` cannot be run or the archive cannot be written; a command that fails is
/// no error (it is recorded in `metadata.json`).
pub fn run(mut cfg: Config) -> Result<Summary, Error> {
    let now = now_micros();
    let stamp = compact_time(now);
    let ns_name = cfg
        .namespace
        .clone()
        .unwrap_or_else(|| "current".to_string());
    let root = format!("raysift-collect-{}-{stamp}", file_part(&ns_name));
    let dest = cfg
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{root}.tar.gz")));
    let redactor = cfg.redactor.take();
    let out = Writer::create(&dest, &root, (now / 1_000_000).max(0) as u64, redactor)
        .map_err(|e| Error::Io(dest.clone(), e))?;
    let mut c = Collector {
        cfg,
        out,
        records: Vec::new(),
        notes: Vec::new(),
        fatal: None,
    };
    c.collect(now);
    if let Some(e) = c.fatal.take() {
        c.out.abandon();
        return Err(e);
    }
    let (commands, failed) = (
        c.records.len(),
        c.records.iter().filter(|r| !r.outcome.status.ok()).count(),
    );
    let (files, bytes) = (c.out.entries, c.out.bytes);
    let path = c.out.finish().map_err(|e| Error::Io(dest.clone(), e))?;
    Ok(Summary {
        path,
        files,
        bytes,
        commands,
        failed,
    })
}

impl Collector {
    fn collect(&mut self, now: Micros) {
        let versions = self.versions();
        let crds = self.crds();
        let operator_pods = self.operator();
        let mut pods = self.targets();
        // An operator in the namespace collected is collected once, as the operator.
        pods.retain(|p| !operator_pods.iter().any(|o| o.name == p.name));
        for pod in &pods {
            self.pod(pod, "pods");
        }
        self.nodes(&pods);
        self.events();
        let images: Vec<String> = operator_pods
            .iter()
            .filter_map(|p| p.image.clone())
            .collect();
        self.metadata(now, versions, crds, images);
    }

    fn ns(&self) -> Vec<String> {
        match &self.cfg.namespace {
            Some(ns) => vec!["-n".to_string(), ns.clone()],
            None => Vec::new(),
        }
    }

    /// Runs one command, keeping at most `max` bytes of its output; the output goes to `file`
    /// in the archive when it is not empty. Returns the output (empty once collection has
    /// stopped: `kubectl` missing, or the archive cannot be written).
    fn kubectl(&mut self, args: Vec<String>, file: Option<&str>, max: u64) -> Vec<u8> {
        // A log is kept from its end, anything else from its start.
        let keep = if args.first().is_some_and(|v| v == "logs") {
            Keep::Tail
        } else {
            Keep::Head
        };
        if self.fatal.is_some() {
            return Vec::new();
        }
        let mut full = self.cfg.global.clone();
        full.extend(args.iter().cloned());
        if self.cfg.progress {
            // The command first, its end once known: a slow one shows what is waited for.
            eprint!("raysift collect: kubectl {} … ", args.join(" "));
        }
        let mut outcome = kubectl::run(&self.cfg.kubectl, &full, self.cfg.timeout, max, keep);
        if self.cfg.progress {
            eprintln!("{}", verdict(&outcome));
        }
        if let Status::NotStarted(why) = &outcome.status {
            if self.records.is_empty() {
                self.fatal = Some(Error::NoKubectl(why.clone()));
                return Vec::new();
            }
        }
        let written = match file {
            Some(f) if !outcome.stdout.is_empty() => match self.out.add(f, &outcome.stdout) {
                Ok(name) => Some(name),
                Err(e) => {
                    self.fatal = Some(Error::Io(self.out.temp_path(), e));
                    None
                }
            },
            _ => None,
        };
        let stdout = std::mem::take(&mut outcome.stdout);
        self.records.push(Record {
            args,
            stdout_bytes: stdout.len() as u64 + outcome.dropped,
            outcome,
            file: written,
        });
        stdout
    }

    /// `kubectl version`: the client's and the server's versions.
    fn versions(&mut self) -> (Option<String>, Option<String>) {
        let out = self.kubectl(args(&["version", "-o", "json"]), None, MAX_OBJECT_BYTES);
        let v: Value = serde_json::from_slice(&out).unwrap_or(Value::Null);
        let get = |k: &str| v[k]["gitVersion"].as_str().map(str::to_string);
        (get("clientVersion"), get("serverVersion"))
    }

    /// The Ray CRDs and the versions each serves, as `name (v1, v1alpha1)`.
    fn crds(&mut self) -> Vec<String> {
        let a = args(&[
            "get",
            "crd",
            "rayclusters.ray.io",
            "rayjobs.ray.io",
            "rayservices.ray.io",
            "-o",
            "json",
        ]);
        let out = self.kubectl(a, None, MAX_OBJECT_BYTES);
        let v: Value = serde_json::from_slice(&out).unwrap_or(Value::Null);
        let mut got = Vec::new();
        for item in items(&v) {
            let name = item["metadata"]["name"].as_str().unwrap_or("?");
            let served: Vec<&str> = item["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|ver| ver["served"].as_bool().unwrap_or(false))
                .filter_map(|ver| ver["name"].as_str())
                .collect();
            got.push(format!("{name} ({})", served.join(", ")));
        }
        got
    }

    /// The KubeRay operator's pods (by their label, in any namespace unless one is given),
    /// their descriptions and logs.
    fn operator(&mut self) -> Vec<Pod> {
        let mut a = args(&["get", "pods"]);
        match &self.cfg.operator_namespace {
            Some(ns) => a.extend(args(&["-n", ns])),
            None => a.push("-A".to_string()),
        }
        a.extend(args(&[
            "-l",
            "app.kubernetes.io/name=kuberay-operator",
            "-o",
            "json",
        ]));
        let out = self.kubectl(a, Some("operator/pods.json"), MAX_OBJECT_BYTES);
        let pods = pods_of(&out, None);
        if pods.is_empty() {
            self.notes.push(
                "no KubeRay operator pod found by the label app.kubernetes.io/name=kuberay-operator \
                 (give --operator-namespace if it is labelled otherwise)"
                    .to_string(),
            );
        }
        for p in &pods {
            self.pod(p, "operator");
        }
        pods
    }

    /// The chosen objects: their YAML and descriptions; returns their pods.
    fn targets(&mut self) -> Vec<Pod> {
        let target = self.cfg.target.clone();
        let mut pods = Vec::new();
        match &target {
            Target::RayService(name) => {
                let yaml = self.object("rayservice", name);
                self.note_no_cluster("rayservice", name, &yaml);
                let head_svc = format!("{name}-head-svc");
                let serve_svc = format!("{name}-serve-svc");
                let mut a = args(&["get", "service", &head_svc, &serve_svc]);
                a.extend(self.ns());
                a.extend(args(&["-o", "yaml"]));
                self.kubectl(
                    a,
                    Some(&format!("k8s/services-{}.yaml", file_part(name))),
                    MAX_OBJECT_BYTES,
                );
                for cluster in cluster_names(&yaml) {
                    self.object("raycluster", &cluster);
                    pods.extend(self.cluster_pods(&cluster));
                }
            }
            Target::RayCluster(name) => {
                self.object("raycluster", name);
                pods.extend(self.cluster_pods(name));
            }
            Target::RayJob(name) => {
                let yaml = self.object("rayjob", name);
                self.note_no_cluster("rayjob", name, &yaml);
                for cluster in cluster_names(&yaml) {
                    self.object("raycluster", &cluster);
                    pods.extend(self.cluster_pods(&cluster));
                }
                // The submitter: a Job named as the RayJob.
                self.object("job", name);
                pods.extend(self.selected_pods(
                    &format!("job-name={name}"),
                    &format!("k8s/pods-job-{}.json", file_part(name)),
                ));
            }
            Target::All => {
                let mut a = args(&["get", "rayservices,rayclusters,rayjobs"]);
                a.extend(self.ns());
                a.extend(args(&["-o", "yaml"]));
                self.kubectl(a, Some("k8s/ray-objects.yaml"), MAX_OBJECT_BYTES);
                for kind in ["rayservices", "rayclusters", "rayjobs"] {
                    let mut a = args(&["describe", kind]);
                    a.extend(self.ns());
                    self.kubectl(a, Some(&format!("describe/{kind}.txt")), MAX_OBJECT_BYTES);
                }
                let mut a = args(&["get", "services"]);
                a.extend(self.ns());
                a.extend(args(&["-o", "yaml"]));
                self.kubectl(a, Some("k8s/services.yaml"), MAX_OBJECT_BYTES);
                let mut a = args(&["get", "jobs"]);
                a.extend(self.ns());
                a.extend(args(&[
                    "-l",
                    "app.kubernetes.io/created-by=kuberay-operator",
                    "-o",
                    "yaml",
                ]));
                self.kubectl(a, Some("k8s/jobs.yaml"), MAX_OBJECT_BYTES);
                // Every pod of the namespace is listed; those of Ray and of RayJob submitters
                // are collected.
                let mut a = args(&["get", "pods"]);
                a.extend(self.ns());
                a.extend(args(&["-o", "json"]));
                let out = self.kubectl(a, Some("k8s/pods.json"), MAX_OBJECT_BYTES);
                pods.extend(pods_of(&out, Some(&ray_related)));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        pods.retain(|p| seen.insert(p.name.clone()));
        if pods.is_empty() {
            self.notes
                .push(format!("no pod found for {}", target.describe()));
        }
        pods
    }

    /// A RayService or RayJob whose status names no RayCluster gives no pods: say why.
    fn note_no_cluster(&mut self, kind: &str, name: &str, yaml: &[u8]) {
        if !yaml.is_empty() && cluster_names(yaml).is_empty() {
            self.notes.push(format!(
                "{kind}/{name} names no RayCluster in its status (rayClusterName): no pod \
                 collected for it; give --raycluster NAME to collect a cluster"
            ));
        }
    }

    /// `get KIND NAME -o yaml` and `describe KIND NAME`; returns the YAML.
    fn object(&mut self, kind: &str, name: &str) -> Vec<u8> {
        let file = format!("{kind}-{}", file_part(name));
        let mut a = args(&["get", kind, name]);
        a.extend(self.ns());
        a.extend(args(&["-o", "yaml"]));
        let yaml = self.kubectl(a, Some(&format!("k8s/{file}.yaml")), MAX_OBJECT_BYTES);
        let mut a = args(&["describe", kind, name]);
        a.extend(self.ns());
        self.kubectl(a, Some(&format!("describe/{file}.txt")), MAX_OBJECT_BYTES);
        yaml
    }

    /// The pods of a RayCluster (`get pods -l ray.io/cluster=NAME -o json`), and its services.
    fn cluster_pods(&mut self, cluster: &str) -> Vec<Pod> {
        let mut a = args(&[
            "get",
            "services",
            "-l",
            &format!("ray.io/cluster={cluster}"),
        ]);
        a.extend(self.ns());
        a.extend(args(&["-o", "yaml"]));
        self.kubectl(
            a,
            Some(&format!("k8s/services-{}.yaml", file_part(cluster))),
            MAX_OBJECT_BYTES,
        );
        self.selected_pods(
            &format!("ray.io/cluster={cluster}"),
            &format!("k8s/pods-{}.json", file_part(cluster)),
        )
    }

    fn selected_pods(&mut self, selector: &str, file: &str) -> Vec<Pod> {
        let mut a = args(&["get", "pods", "-l", selector]);
        a.extend(self.ns());
        a.extend(args(&["-o", "json"]));
        let out = self.kubectl(a, Some(file), MAX_OBJECT_BYTES);
        pods_of(&out, None)
    }

    /// One pod: its description, each container's logs (the previous ones too after a
    /// restart), and for a Ray head its Ray log directory.
    fn pod(&mut self, pod: &Pod, folder: &str) {
        let ns = match &pod.namespace {
            Some(ns) => args(&["-n", ns]),
            None => self.ns(),
        };
        let dir = format!("{folder}/{}", file_part(&pod.name));
        let mut a = args(&["describe", "pod", &pod.name]);
        a.extend(ns.clone());
        let file = if folder == "pods" {
            format!("describe/pod-{}.txt", file_part(&pod.name))
        } else {
            format!("{dir}/describe.txt")
        };
        self.kubectl(a, Some(&file), MAX_OBJECT_BYTES);
        for (container, restarted) in &pod.containers {
            let c = file_part(container);
            self.logs(pod, &ns, container, false, &format!("{dir}/{c}.log"));
            if *restarted {
                self.logs(
                    pod,
                    &ns,
                    container,
                    true,
                    &format!("{dir}/{c}.previous.log"),
                );
            }
        }
        if pod.head && folder == "pods" {
            self.ray_logs(pod, &ns, &dir);
        }
    }

    fn logs(&mut self, pod: &Pod, ns: &[String], container: &str, previous: bool, file: &str) {
        let mut a = args(&["logs", &pod.name, "-c", container]);
        a.extend(ns.iter().cloned());
        a.push("--timestamps".to_string());
        if previous {
            a.push("--previous".to_string());
        }
        if let Some(since) = &self.cfg.since {
            a.push(format!("--since={since}"));
        }
        let max = self.cfg.max_log_bytes;
        self.kubectl(a, Some(file), max);
        if let Some(r) = self.records.last() {
            if r.outcome.dropped > 0 {
                self.notes.push(format!(
                    "{file}: the log passed --max-log-bytes; its first {} bytes were left out",
                    r.outcome.dropped
                ));
            }
        }
    }

    /// The head's `/tmp/ray/session_latest/logs`, through `kubectl exec … tar`, unpacked
    /// under the pod's folder so that each file is redacted and classified on its own.
    fn ray_logs(&mut self, pod: &Pod, ns: &[String], dir: &str) {
        let container = pod
            .containers
            .iter()
            .map(|(c, _)| c.as_str())
            .find(|c| *c == "ray-head")
            .or_else(|| pod.containers.last().map(|(c, _)| c.as_str()))
            .unwrap_or("ray-head")
            .to_string();
        let mut a = args(&["exec", &pod.name, "-c", &container]);
        a.extend(ns.iter().cloned());
        a.extend(args(&["--", "tar", "-cf", "-", "-C", RAY_LOGS, "."]));
        let max = self.cfg.max_log_bytes;
        let tar_bytes = self.kubectl(a, None, max);
        let (status, stderr, dropped) = match self.records.last() {
            Some(r) => (
                r.outcome.status.clone(),
                r.outcome.stderr.clone(),
                r.outcome.dropped,
            ),
            None => return,
        };
        if !status.ok() && tar_bytes.is_empty() {
            let why = if stderr.to_ascii_lowercase().contains("forbidden") {
                "kubectl exec is forbidden for this user"
            } else {
                "kubectl exec … tar failed"
            };
            self.notes.push(format!(
                "{}: {why}; the head's Ray log directory ({RAY_LOGS}) was not collected \
                 (`kubectl ray log` or a copy by hand gives it)",
                pod.name
            ));
            return;
        }
        let (files, lost) = self.unpack(&tar_bytes, &format!("{dir}/session_latest/logs"));
        if let Some(r) = self.records.last_mut() {
            r.file = Some(format!("{dir}/session_latest/logs/ ({files} files)"));
        }
        if dropped > 0 || lost {
            self.notes.push(format!(
                "{}: the Ray log directory's tar stream broke off after {} bytes (--max-log-bytes \
                 {}, or exec ended early): {files} files kept, the last of them maybe cut short, \
                 the rest left out",
                pod.name,
                tar_bytes.len(),
                self.cfg.max_log_bytes
            ));
        }
    }

    /// Adds the regular files of a tar stream under `under`; returns how many, and whether
    /// the stream broke off (cut at the byte bound).
    fn unpack(&mut self, tar_bytes: &[u8], under: &str) -> (usize, bool) {
        let mut added = 0;
        let lost = each_file(tar_bytes, &mut |rel, data| {
            if self.fatal.is_some() {
                return;
            }
            let name = format!("{under}/{rel}");
            match self.out.add(&name, data) {
                Ok(_) => added += 1,
                Err(e) => self.fatal = Some(Error::Io(self.out.temp_path(), e)),
            }
        });
        (added, lost)
    }

    /// `describe node` of every node that hosts a collected pod.
    fn nodes(&mut self, pods: &[Pod]) {
        let nodes: std::collections::BTreeSet<&str> =
            pods.iter().filter_map(|p| p.node.as_deref()).collect();
        for node in nodes {
            let a = args(&["describe", "node", node]);
            self.kubectl(
                a,
                Some(&format!("describe/node-{}.txt", file_part(node))),
                MAX_OBJECT_BYTES,
            );
        }
    }

    /// The namespace's events, wide, oldest first.
    fn events(&mut self) {
        let mut a = args(&["get", "events"]);
        a.extend(self.ns());
        a.extend(args(&["-o", "wide", "--sort-by=.lastTimestamp"]));
        self.kubectl(a, Some("events.txt"), MAX_OBJECT_BYTES);
    }

    /// `metadata.json`: when, by what, with which versions, and every command with its end.
    fn metadata(
        &mut self,
        now: Micros,
        (client, server): (Option<String>, Option<String>),
        crds: Vec<String>,
        operator_images: Vec<String>,
    ) {
        let mut commands = Vec::with_capacity(self.records.len());
        let records = std::mem::take(&mut self.records);
        for r in &records {
            let stderr = &r.outcome.stderr;
            commands.push(json!({
                "command": format!("kubectl {}", r.args.join(" ")),
                "status": status_word(&r.outcome.status),
                "exit_code": match r.outcome.status { Status::Exit(c) => Some(c), _ => None },
                "stderr": stderr,
                "file": r.file,
                "stdout_bytes": r.stdout_bytes,
                "elapsed_ms": r.outcome.elapsed.as_millis() as u64,
            }));
        }
        let failed = records.iter().filter(|r| !r.outcome.status.ok()).count();
        let meta = json!({
            "collector": COLLECTOR,
            "raysift_version": env!("CARGO_PKG_VERSION"),
            "collected_at": format_rfc3339(now),
            "namespace": self.cfg.namespace.clone().unwrap_or_else(|| "(the current context's)".to_string()),
            "target": self.cfg.target.describe(),
            "kubectl_client_version": client,
            "kubectl_server_version": server,
            "operator_image": if operator_images.is_empty() { None } else { Some(operator_images.join(", ")) },
            "crd_versions": if crds.is_empty() { None } else { Some(crds.join(", ")) },
            "redacted": self.out.redacting(),
            "since": self.cfg.since,
            "timeout_seconds": self.cfg.timeout.as_secs_f64(),
            "max_log_bytes": self.cfg.max_log_bytes,
            "commands_failed": failed,
            "notes": self.notes,
            "commands": commands,
        });
        self.records = records;
        let mut text = serde_json::to_vec_pretty(&meta).unwrap_or_default();
        text.push(b'\n');
        if let Err(e) = self.out.add("metadata.json", &text) {
            self.fatal = Some(Error::Io(self.out.temp_path(), e));
        }
    }
}

/// Calls `f` with the relative path and bytes of each regular file of a tar stream (paths
/// cleaned of `.`, `..` and empty components); returns whether the stream broke off: bytes
/// that are no tar, or a last file cut short (given as far as it goes).
fn each_file(tar_bytes: &[u8], f: &mut dyn FnMut(&str, &[u8])) -> bool {
    use std::io::Read;
    let mut archive = tar::Archive::new(tar_bytes);
    let Ok(entries) = archive.entries() else {
        return true;
    };
    for entry in entries {
        let Ok(mut entry) = entry else {
            return true;
        };
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let Ok(path) = entry.path().map(|p| p.to_string_lossy().into_owned()) else {
            continue;
        };
        let rel: Vec<&str> = path
            .split('/')
            .filter(|s| !s.is_empty() && *s != "." && *s != "..")
            .collect();
        if rel.is_empty() {
            continue;
        }
        let size = entry.size();
        let mut data = Vec::new();
        let read = entry.read_to_end(&mut data);
        if !data.is_empty() || read.is_ok() {
            f(&rel.join("/"), &data);
        }
        if read.is_err() || (data.len() as u64) < size {
            return true;
        }
    }
    false
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v["items"].as_array().into_iter().flatten()
}

/// The pods of a `get pods -o json` List, those `keep` keeps, in the order listed.
fn pods_of(json: &[u8], keep: Option<&dyn Fn(&Value) -> bool>) -> Vec<Pod> {
    let v: Value = serde_json::from_slice(json).unwrap_or(Value::Null);
    items(&v)
        .filter(|p| keep.is_none_or(|k| k(p)))
        .filter_map(|p| {
            let name = p["metadata"]["name"].as_str()?.to_string();
            let restarted = |c: &Value| -> bool {
                let cname = c["name"].as_str().unwrap_or("");
                ["initContainerStatuses", "containerStatuses"]
                    .iter()
                    .any(|k| {
                        p["status"][k].as_array().into_iter().flatten().any(|s| {
                            s["name"].as_str() == Some(cname)
                                && s["restartCount"].as_u64().unwrap_or(0) > 0
                        })
                    })
            };
            let containers = ["initContainers", "containers"]
                .iter()
                .flat_map(|k| p["spec"][k].as_array().into_iter().flatten())
                .filter_map(|c| Some((c["name"].as_str()?.to_string(), restarted(c))))
                .collect();
            Some(Pod {
                namespace: p["metadata"]["namespace"].as_str().map(str::to_string),
                name,
                node: p["spec"]["nodeName"].as_str().map(str::to_string),
                head: p["metadata"]["labels"]["ray.io/node-type"].as_str() == Some("head"),
                image: p["spec"]["containers"][0]["image"]
                    .as_str()
                    .map(str::to_string),
                containers,
            })
        })
        .collect()
}

/// A pod of a Ray cluster, or of a RayJob's submitter (labelled by the operator).
fn ray_related(p: &Value) -> bool {
    let labels = &p["metadata"]["labels"];
    labels
        .as_object()
        .is_some_and(|m| m.keys().any(|k| k.starts_with("ray.io/")))
        || labels["app.kubernetes.io/created-by"].as_str() == Some("kuberay-operator")
}

/// The RayClusters a RayService or RayJob names in its status (`rayClusterName:` lines of its
/// YAML), each once, in order.
fn cluster_names(yaml: &[u8]) -> Vec<String> {
    let mut got: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(yaml).lines() {
        let Some(v) = line.trim_start().strip_prefix("rayClusterName:") else {
            continue;
        };
        let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
        if !v.is_empty() && !got.iter().any(|g| g == v) {
            got.push(v.to_string());
        }
    }
    got
}

/// A name made safe as one path component.
fn file_part(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        "_".to_string()
    } else {
        s
    }
}

fn status_word(s: &Status) -> String {
    match s {
        Status::Exit(0) => "ok".to_string(),
        Status::Exit(c) => format!("failed (exit {c})"),
        Status::Signalled => "failed (killed by a signal)".to_string(),
        Status::TimedOut => "timed out".to_string(),
        Status::NotStarted(why) => format!("not started: {why}"),
    }
}

/// One progress line's end: how the command ended and what it gave.
fn verdict(o: &Outcome) -> String {
    let size = o.stdout.len() as u64 + o.dropped;
    let first_err = o.stderr.lines().next().unwrap_or("");
    match &o.status {
        Status::Exit(0) => format!("ok, {size} bytes"),
        Status::TimedOut => format!("timed out after {:.0} s", o.elapsed.as_secs_f64()),
        s => format!("{}: {first_err}", status_word(s)),
    }
}

fn now_micros() -> Micros {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as Micros)
}

/// `20261202T031500Z`, for names.
fn compact_time(micros: Micros) -> String {
    let t = format_rfc3339(micros);
    let mut s: String = t
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    s.push('Z');
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cluster_names_from_status() {
        let yaml = b"status:\n  activeServiceStatus:\n    rayClusterName: a-raycluster-x1\n  pendingServiceStatus:\n    rayClusterName: \"a-raycluster-x2\"\n  x:\n    rayClusterName: a-raycluster-x1\n";
        assert_eq!(
            cluster_names(yaml),
            vec!["a-raycluster-x1", "a-raycluster-x2"]
        );
        assert!(cluster_names(b"rayClusterName: \"\"\n").is_empty());
    }

    #[test]
    fn pods_from_a_list() {
        let json = br#"{"items":[{"metadata":{"name":"h","namespace":"ns","labels":{"ray.io/node-type":"head"}},
            "spec":{"nodeName":"n1","initContainers":[{"name":"wait"}],"containers":[{"name":"ray-head","image":"img"}]},
            "status":{"containerStatuses":[{"name":"ray-head","restartCount":2}]}},
            {"metadata":{"name":"other","labels":{"app":"x"}},"spec":{"containers":[{"name":"c"}]}}]}"#;
        let pods = pods_of(json, None);
        assert_eq!(pods.len(), 2);
        assert!(pods[0].head);
        assert_eq!(pods[0].node.as_deref(), Some("n1"));
        assert_eq!(pods[0].image.as_deref(), Some("img"));
        assert_eq!(
            pods[0].containers,
            vec![("wait".to_string(), false), ("ray-head".to_string(), true)]
        );
        let ray = pods_of(json, Some(&ray_related));
        assert_eq!(ray.len(), 1);
        assert!(pods_of(b"not json", None).is_empty());
    }

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, data) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            b.append_data(&mut h, name, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn a_log_directory_cut_at_the_bound_keeps_what_came_whole() {
        let tar = tar_of(&[
            ("./raylet.out", &[b'a'; 600]),
            ("./serve/x.log", &[b'b'; 2000]),
        ]);
        let mut got = Vec::new();
        let lost = each_file(&tar, &mut |p, d| got.push((p.to_string(), d.len())));
        assert!(!lost);
        assert_eq!(
            got,
            vec![
                ("raylet.out".to_string(), 600),
                ("serve/x.log".to_string(), 2000)
            ]
        );
        // Cut inside the second file's data: the first whole, the second as far as it goes.
        got.clear();
        let lost = each_file(&tar[..512 * 4 + 100], &mut |p, d| {
            got.push((p.to_string(), d.len()))
        });
        assert!(lost);
        assert_eq!(
            got,
            vec![
                ("raylet.out".to_string(), 600),
                ("serve/x.log".to_string(), 100)
            ]
        );
        assert!(each_file(b"no tar at all", &mut |_, _| {}));
    }

    #[test]
    fn names_are_one_safe_component() {
        assert_eq!(file_part("a/b c"), "a_b_c");
        assert_eq!(file_part(".."), "_");
        assert_eq!(compact_time(1_764_640_500_123_456), "20251202T015500Z");
    }
}
