//! `raysift collect` through the binary, against a fake `kubectl` placed first on `PATH`: a
//! shell script that serves canned output taken from a corpus bundle, fails some commands
//! (a forbidden `describe node`, a forbidden `exec`, missing objects), hangs on one, and
//! refuses any verb that is not read-only. The collected archive's layout and metadata are
//! checked, and `analyze` on it must give the causes it gives on the corpus bundle.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use common::{raysift, raysift_env_os, root, scratch};

const NS: &str = "search";
const OP_NS: &str = "ray-system";
const OPERATOR: &str = "kuberay-operator-7d9c6b5f4-x2x9p";
const CLUSTER: &str = "doc-search-raycluster-xv5sl";
const HEAD: &str = "doc-search-raycluster-xv5sl-head-k8w2m";
const WORKERS: [&str; 2] = [
    "doc-search-raycluster-xv5sl-worker-cpu-workers-2hx7d",
    "doc-search-raycluster-xv5sl-worker-cpu-workers-tmq6n",
];

fn source() -> PathBuf {
    root().join("corpus/kuberay-log-missing-module")
}

/// Shell single quotes around `s`.
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A fake kubectl: each route is the exact command line (after `--context`/`--kubeconfig`)
/// and the shell that answers it; anything else is "not found".
struct Fake {
    dir: PathBuf,
    routes: Vec<(String, String)>,
}

impl Fake {
    fn new(dir: &Path) -> Fake {
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("canned")).unwrap();
        Fake {
            dir: dir.to_path_buf(),
            routes: Vec::new(),
        }
    }

    fn file(&mut self, cmd: &str, content: &[u8]) {
        let path = self
            .dir
            .join("canned")
            .join(format!("{}.out", self.routes.len()));
        std::fs::write(&path, content).unwrap();
        self.routes.push((
            cmd.to_string(),
            format!("cat {}", q(path.to_str().unwrap())),
        ));
    }

    fn fail(&mut self, cmd: &str, stderr: &str) {
        self.routes
            .push((cmd.to_string(), format!("echo {} >&2; exit 1", q(stderr))));
    }

    fn ok_stderr(&mut self, cmd: &str, stderr: &str) {
        self.routes
            .push((cmd.to_string(), format!("echo {} >&2; exit 0", q(stderr))));
    }

    fn hang(&mut self, cmd: &str) {
        self.routes
            .push((cmd.to_string(), "exec sleep 30".to_string()));
    }

    fn tar(&mut self, cmd: &str, dir: &Path) {
        self.routes.push((
            cmd.to_string(),
            format!("exec tar -cf - -C {} .", q(dir.to_str().unwrap())),
        ));
    }

    /// Writes the script; returns the `PATH` that puts it first.
    fn install(&self) -> OsString {
        let calls = self.dir.join("calls.log");
        let mut sh = format!(
            "#!/bin/sh\necho \"$*\" >> {}\n\
             while [ \"$1\" = --context ] || [ \"$1\" = --kubeconfig ]; do shift 2; done\n\
             case \"$1\" in get|describe|logs|exec|version) ;; \
             *) echo \"fake kubectl: refusing the verb $1\" >&2; exit 99;; esac\n\
             case \"$*\" in\n",
            q(calls.to_str().unwrap())
        );
        for (cmd, action) in &self.routes {
            sh.push_str(&format!("{}) {action};;\n", q(cmd)));
        }
        sh.push_str(
            "*) echo \"Error from server (NotFound): no canned answer for: $*\" >&2; exit 1;;\nesac\n",
        );
        let bin = self.dir.join("bin/kubectl");
        std::fs::write(&bin, sh).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut paths = vec![self.dir.join("bin")];
        paths.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(paths).unwrap()
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn pod_json(
    name: &str,
    node: &str,
    head: bool,
    container: &str,
    image: &str,
    restarts: u32,
) -> String {
    let node_type = if head { "head" } else { "worker" };
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{NS}","labels":{{"ray.io/cluster":"{CLUSTER}","ray.io/node-type":"{node_type}","ray.io/is-ray-node":"yes"}}}},
"spec":{{"nodeName":"{node}","containers":[{{"name":"{container}","image":"{image}"}}]}},
"status":{{"phase":"Running","containerStatuses":[{{"name":"{container}","ready":true,"restartCount":{restarts},"image":"{image}","state":{{"running":{{"startedAt":"2024-10-08T14:20:05Z"}}}}}}]}}}}"#
    )
}

/// A log as `kubectl logs --timestamps` gives it: each line after the kubelet's RFC 3339 time
/// (nanoseconds, UTC), here the line's own time (Ray's asctime in a UTC container, or a zap
/// JSON `ts`), or the time of the line before it for a line without one.
fn with_timestamps(log: &[u8]) -> Vec<u8> {
    let mut last = "2024-10-08T13:58:00.000000000Z".to_string();
    let mut out = String::new();
    for line in String::from_utf8_lossy(log).lines() {
        let b = line.as_bytes();
        let asctime = b.len() > 23 && b[4] == b'-' && b[10] == b' ' && b[19] == b',';
        if asctime {
            last = format!("{}T{}.{}000000Z", &line[..10], &line[11..19], &line[20..23]);
        } else if let Some(i) = line.find("\"ts\":\"") {
            let ts = &line[i + 6..i + 6 + 24];
            last = format!("{}000000Z", ts.trim_end_matches('Z'));
        }
        out.push_str(&format!("{last} {line}\n"));
    }
    out.into_bytes()
}

fn list(items: &[String]) -> Vec<u8> {
    format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n{}\n]}}\n",
        items.join(",\n")
    )
    .into_bytes()
}

/// Routes every command a collection of the RayService makes to the corpus bundle's files.
fn serve_corpus(fake: &mut Fake, scratch: &Path) {
    let src = source();
    let read = |rel: &str| std::fs::read(src.join(rel)).unwrap();
    fake.file(
        "version -o json",
        br#"{"clientVersion":{"gitVersion":"v1.30.2"},"kustomizeVersion":"v5.0.4","serverVersion":{"gitVersion":"v1.29.4-gke.1043002"}}"#,
    );
    let crd = |name: &str| {
        format!(
            r#"{{"kind":"CustomResourceDefinition","metadata":{{"name":"{name}"}},"spec":{{"versions":[{{"name":"v1","served":true}},{{"name":"v1alpha1","served":false}}]}}}}"#
        )
    };
    fake.file(
        "get crd rayclusters.ray.io rayjobs.ray.io rayservices.ray.io -o json",
        &list(&[
            crd("rayclusters.ray.io"),
            crd("rayjobs.ray.io"),
            crd("rayservices.ray.io"),
        ]),
    );
    let op_image = "quay.io/kuberay/operator:v1.1.1";
    let mut op = pod_json(
        OPERATOR,
        "gke-node-c",
        false,
        "kuberay-operator",
        op_image,
        0,
    );
    op = op
        .replace(&format!("\"namespace\":\"{NS}\""), &format!("\"namespace\":\"{OP_NS}\""))
        .replace(
            &format!("\"ray.io/cluster\":\"{CLUSTER}\",\"ray.io/node-type\":\"worker\",\"ray.io/is-ray-node\":\"yes\""),
            "\"app.kubernetes.io/name\":\"kuberay-operator\"",
        );
    fake.file(
        "get pods -A -l app.kubernetes.io/name=kuberay-operator -o json",
        &list(&[op]),
    );
    fake.file(
        &format!("logs {OPERATOR} -c kuberay-operator -n {OP_NS} --timestamps"),
        &with_timestamps(&read("kuberay-operator.log")),
    );
    fake.file(
        &format!("get rayservice doc-search -n {NS} -o yaml"),
        &read("rayservice.yaml"),
    );
    let image = "rayproject/ray:2.9.3-py310";
    let pods = list(&[
        pod_json(HEAD, "gke-node-a", true, "ray-head", image, 1),
        pod_json(WORKERS[0], "gke-node-b", false, "ray-worker", image, 0),
        pod_json(WORKERS[1], "gke-node-b", false, "ray-worker", image, 0),
    ]);
    fake.file(
        &format!("get pods -l ray.io/cluster={CLUSTER} -n {NS} -o json"),
        &pods,
    );
    let pod_dir = |p: &str| format!("{CLUSTER}/{p}");
    fake.file(
        &format!("logs {HEAD} -c ray-head -n {NS} --timestamps"),
        &with_timestamps(&read(&format!("{}/stdout.log", pod_dir(HEAD)))),
    );
    fake.fail(
        &format!("logs {HEAD} -c ray-head -n {NS} --timestamps --previous"),
        &format!("Error from server (BadRequest): previous terminated container \"ray-head\" in pod \"{HEAD}\" not found"),
    );
    for w in WORKERS {
        fake.file(
            &format!("logs {w} -c ray-worker -n {NS} --timestamps"),
            &with_timestamps(&read(&format!("{}/stdout.log", pod_dir(w)))),
        );
    }
    // The head's session log directory: the corpus pod folder without the container log.
    let session = scratch.join("session");
    for (rel, path) in common::files_under(&src.join(pod_dir(HEAD))) {
        if rel != "stdout.log" {
            let to = session.join(&rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(path, to).unwrap();
        }
    }
    fake.tar(
        &format!("exec {HEAD} -c ray-head -n {NS} -- tar -cf - -C /tmp/ray/session_latest/logs ."),
        &session,
    );
    fake.hang(&format!("describe pod {} -n {NS}", WORKERS[1]));
    for node in ["gke-node-a", "gke-node-b"] {
        fake.fail(
            &format!("describe node {node}"),
            &format!("Error from server (Forbidden): nodes \"{node}\" is forbidden: User \"support@example.com\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"),
        );
    }
    fake.ok_stderr(
        &format!("get events -n {NS} -o wide --sort-by=.lastTimestamp"),
        &format!("No resources found in {NS} namespace."),
    );
}

/// The archive's entries, as (path under its root folder, content).
fn entries(archive: &Path) -> (String, Vec<(String, Vec<u8>)>) {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(archive).unwrap());
    let mut ar = tar::Archive::new(gz);
    let mut root = String::new();
    let mut out = Vec::new();
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let path = e.path().unwrap().to_string_lossy().into_owned();
        let (top, rel) = path.split_once('/').unwrap();
        root = top.to_string();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        out.push((rel.to_string(), data));
    }
    (root, out)
}

fn metadata(entries: &[(String, Vec<u8>)]) -> serde_json::Value {
    let (_, m) = entries
        .iter()
        .find(|(p, _)| p == "metadata.json")
        .expect("metadata.json in the archive");
    serde_json::from_slice(m).unwrap()
}

/// The command of `metadata.json` whose line ends with `tail`.
fn command<'a>(meta: &'a serde_json::Value, tail: &str) -> &'a serde_json::Value {
    meta["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"].as_str().unwrap().ends_with(tail))
        .unwrap_or_else(|| panic!("no command ending with {tail:?} in {meta:#}"))
}

fn cause_ids(report: &[u8]) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(report).unwrap();
    v["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn collects_a_rayservice_into_a_bundle_analyze_reads_as_the_original() {
    let dir = scratch("collect", "rayservice");
    let mut fake = Fake::new(&dir);
    serve_corpus(&mut fake, &dir);
    let path = fake.install();
    let out = dir.join("bundle.tar.gz");
    let got = raysift_env_os(
        &[
            "collect",
            "-n",
            NS,
            "--rayservice",
            "doc-search",
            "--timeout",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("PATH", &path)],
    );
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{stderr}");
    assert!(
        stderr.contains("timed out"),
        "progress names the hang: {stderr}"
    );

    // Read-only: every call is a read verb; the one exec is the tar of the Ray logs.
    let calls = fake.calls();
    assert!(calls.len() > 10, "{calls:?}");
    for c in &calls {
        let verb = c.split(' ').next().unwrap();
        assert!(
            ["get", "describe", "logs", "exec", "version"].contains(&verb),
            "{c}"
        );
        if verb == "exec" {
            assert!(
                c.ends_with("-- tar -cf - -C /tmp/ray/session_latest/logs ."),
                "{c}"
            );
        }
    }

    // Layout.
    let (root, files) = entries(&out);
    assert!(root.starts_with("raysift-collect-search-"), "{root}");
    let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    for want in [
        "metadata.json".to_string(),
        "operator/pods.json".to_string(),
        format!("operator/{OPERATOR}/kuberay-operator.log"),
        "k8s/rayservice-doc-search.yaml".to_string(),
        format!("k8s/pods-{CLUSTER}.json"),
        format!("pods/{HEAD}/ray-head.log"),
        format!("pods/{}/ray-worker.log", WORKERS[0]),
        format!("pods/{}/ray-worker.log", WORKERS[1]),
        format!("pods/{HEAD}/session_latest/logs/dashboard.log"),
        format!("pods/{HEAD}/session_latest/logs/serve/controller_271.log"),
    ] {
        assert!(
            names.contains(&want.as_str()),
            "{want} missing from {names:#?}"
        );
    }
    // What failed or gave nothing wrote no file.
    for absent in ["events.txt", "describe/node-gke-node-a.txt"] {
        assert!(!names.contains(&absent), "{absent} in {names:#?}");
    }
    assert!(
        !names.iter().any(|n| n.ends_with(".previous.log")),
        "{names:#?}"
    );
    let head_log = files
        .iter()
        .find(|(p, _)| *p == format!("pods/{HEAD}/ray-head.log"))
        .unwrap();
    assert_eq!(
        head_log.1,
        with_timestamps(
            &std::fs::read(source().join(format!("{CLUSTER}/{HEAD}/stdout.log"))).unwrap()
        ),
        "logs are stored as kubectl gave them"
    );

    // Metadata: versions, and every command with how it ended.
    let meta = metadata(&files);
    assert_eq!(meta["collector"], "raysift collect");
    assert_eq!(meta["kubectl_client_version"], "v1.30.2");
    assert_eq!(meta["kubectl_server_version"], "v1.29.4-gke.1043002");
    assert_eq!(meta["operator_image"], "quay.io/kuberay/operator:v1.1.1");
    assert_eq!(
        meta["crd_versions"],
        "rayclusters.ray.io (v1), rayjobs.ray.io (v1), rayservices.ray.io (v1)"
    );
    assert!(meta["collected_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(meta["commands"].as_array().unwrap().len(), calls.len());
    let hang = command(&meta, &format!("describe pod {} -n {NS}", WORKERS[1]));
    assert_eq!(hang["status"], "timed out", "{hang:#}");
    let node = command(&meta, "describe node gke-node-a");
    assert_eq!(node["status"], "failed (exit 1)");
    assert!(
        node["stderr"].as_str().unwrap().contains("Forbidden"),
        "{node:#}"
    );
    let missing = command(&meta, &format!("get raycluster {CLUSTER} -n {NS} -o yaml"));
    assert!(
        missing["stderr"].as_str().unwrap().contains("NotFound"),
        "{missing:#}"
    );
    let events = command(&meta, "--sort-by=.lastTimestamp");
    assert_eq!(events["status"], "ok");
    assert_eq!(events["stderr"], "No resources found in search namespace.");
    let previous = command(&meta, "--timestamps --previous");
    assert_eq!(previous["exit_code"], 1);
    let failed = meta["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "ok")
        .count();
    assert_eq!(meta["commands_failed"], failed);
    assert!(stderr.contains(&format!(
        "{failed} of {} kubectl commands failed",
        calls.len()
    )));

    // analyze reads it: the inventory names the collection, the causes are the corpus bundle's.
    let inv = raysift(&["analyze", out.to_str().unwrap(), "--inventory"]);
    let inv = String::from_utf8_lossy(&inv.stdout);
    // Paths are the archive's own, under its top folder.
    assert!(
        inv.contains(&format!(
            "Collected: raysift collect bundle ({root}/metadata.json): raysift "
        )),
        "{inv}"
    );
    assert!(inv.contains("kubectl client v1.30.2, server v1.29.4-gke.1043002, operator image quay.io/kuberay/operator:v1.1.1"), "{inv}");
    let collected_at = meta["collected_at"].as_str().unwrap();
    assert!(
        inv.contains(&format!(
            "Captured: {collected_at} (collected_at in {root}/metadata.json)"
        )),
        "{inv}"
    );
    let collected = raysift(&["analyze", out.to_str().unwrap(), "--format", "json"]);
    let original = raysift(&["analyze", source().to_str().unwrap(), "--format", "json"]);
    assert_eq!(collected.status.code(), original.status.code());
    let report: serde_json::Value = serde_json::from_slice(&collected.stdout).unwrap();
    let errors = common::schema_errors("report", &report);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        report["inventory"]["collected"]["kubectl_server_version"],
        "v1.29.4-gke.1043002"
    );
    assert_eq!(
        report["inventory"]["capture_time"].as_str(),
        Some(collected_at)
    );
    let ids = cause_ids(&collected.stdout);
    assert_eq!(ids, cause_ids(&original.stdout));
    assert_eq!(ids.first().map(String::as_str), Some("missing_dependency"));
}

#[test]
fn a_forbidden_exec_is_a_note_and_redaction_comes_before_writing() {
    let dir = scratch("collect", "forbidden");
    let mut fake = Fake::new(&dir);
    let image = "rayproject/ray:2.9.3-py310";
    fake.file(
        &format!("get pods -l ray.io/cluster={CLUSTER} -n {NS} -o json"),
        &list(&[pod_json(HEAD, "gke-node-a", true, "ray-head", image, 0)]),
    );
    let secret = "AKIAIOSFODNN7EXAMPLE";
    fake.file(
        &format!("logs {HEAD} -c ray-head -n {NS} --timestamps --since=2h"),
        format!("2024-10-08T14:20:10.402000000Z starting\n2024-10-08T14:20:11.000000000Z export AWS_ACCESS_KEY_ID={secret}\n").as_bytes(),
    );
    fake.fail(
        &format!("exec {HEAD} -c ray-head -n {NS} -- tar -cf - -C /tmp/ray/session_latest/logs ."),
        &format!("Error from server (Forbidden): pods \"{HEAD}\" is forbidden: User \"support@example.com\" cannot create resource \"pods/exec\" in API group \"\" in the namespace \"{NS}\""),
    );
    let path = fake.install();
    let out = dir.join("b.tar.gz");
    let got = raysift_env_os(
        &[
            "collect",
            "--context",
            "prod-eu",
            "--namespace",
            NS,
            "--raycluster",
            CLUSTER,
            "--since",
            "2h",
            "--redact",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("PATH", &path)],
    );
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "--quiet: only the closing line: {stderr}"
    );
    assert!(fake
        .calls()
        .iter()
        .all(|c| c.starts_with("--context prod-eu ")));

    let (_, files) = entries(&out);
    assert!(!files.iter().any(|(p, _)| p.contains("session_latest")));
    let (_, log) = files
        .iter()
        .find(|(p, _)| *p == format!("pods/{HEAD}/ray-head.log"))
        .unwrap();
    let log = String::from_utf8_lossy(log);
    assert!(!log.contains(secret), "{log}");
    assert!(
        log.contains("[REDACTED]") && log.starts_with("2024-10-08T14:20:10.402000000Z starting\n"),
        "{log}"
    );
    let meta = metadata(&files);
    assert_eq!(meta["redacted"], true);
    let notes = meta["notes"].to_string();
    assert!(notes.contains("kubectl exec is forbidden"), "{notes}");
    assert!(
        !meta.to_string().contains("support@example.com"),
        "stderr is redacted too"
    );
    // Nothing of the operator was found: said, not fatal.
    assert!(notes.contains("no KubeRay operator pod found"), "{notes}");
}

#[test]
fn no_kubectl_writes_nothing_and_exits_2() {
    let dir = scratch("collect", "nokubectl");
    let out = dir.join("b.tar.gz");
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let got = raysift_env_os(
        &["collect", "--out", out.to_str().unwrap()],
        &[("PATH", empty.as_os_str())],
    );
    assert_eq!(got.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&got.stderr).contains("kubectl"));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no archive, no temporary file"
    );

    // A kubectl that answers nothing (a cluster out of reach): the archive keeps the record,
    // and the exit code says nothing was collected.
    let fake = Fake::new(&dir.join("fake"));
    let path = fake.install();
    let got = raysift_env_os(
        &["collect", "--quiet", "--out", out.to_str().unwrap()],
        &[("PATH", &path)],
    );
    assert_eq!(got.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&got.stderr).contains("no kubectl command succeeded"));
    let (_, files) = entries(&out);
    let meta = metadata(&files);
    assert_eq!(meta["target"], "all Ray objects");
    assert_eq!(meta["commands_failed"], fake.calls().len());
}
