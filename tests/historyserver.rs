//! A local copy of the KubeRay History Server's storage read as a bundle, end to end through
//! the binary: the corpus copies `hs-2.60.0-serve-constructor-error` (one RayService's
//! cluster) and `hs-2.9.3-two-clusters` (a healthy RayCluster and a RayJob's failed cluster
//! under one prefix), laid out by `scripts/historyserver_layout.py` from real runs' logs. The
//! layout is named in the inventory, the clusters are named from the keys, kept apart, and
//! selected by `--object`; a directory copy reads as the tar.gz does, and the keys of the
//! collector's v1.6 generation name the same cluster. `hs-2.60.0-events-actor-failures` adds
//! the collector's event files (`node_events/`, `job_events/<job id>/`, Ray's aggregator
//! events of a real run): they join the timeline, and the dead actor's event is evidence of
//! the first cause.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

const ONE: &str = "hs-2.60.0-serve-constructor-error";
const TWO: &str = "hs-2.9.3-two-clusters";
const EVENTS: &str = "hs-2.60.0-events-actor-failures";
const HEALTHY: &str = "cluster-history/raycluster/default/echo-serve/";
const BROKEN: &str = "cluster-history/rayjob/batch/json-etl/json-etl-5xq7w/";

fn bundle(name: &str) -> PathBuf {
    common::root().join("corpus").join(format!("{name}.tar.gz"))
}

fn json(args: &[&str]) -> Value {
    let out = common::raysift(args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn analyze(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["analyze", path.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    json(&args)
}

/// The causes above `info`, by id.
fn actionable(report: &Value) -> Vec<String> {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["severity"] != "info")
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

/// Every evidence file of every cause and symptom.
fn evidence_files(report: &Value) -> Vec<String> {
    let mut files = Vec::new();
    for c in report["causes"].as_array().unwrap() {
        let symptoms = c["symptoms"].as_array().unwrap();
        for e in c["evidence"].as_array().unwrap().iter().chain(
            symptoms
                .iter()
                .flat_map(|s| s["evidence"].as_array().unwrap()),
        ) {
            files.push(e["file"].as_str().unwrap().to_string());
        }
    }
    files
}

/// The archive's members as (path, bytes).
fn members(path: &Path) -> Vec<(String, Vec<u8>)> {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
    let mut archive = tar::Archive::new(gz);
    let mut out = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        out.push((name, bytes));
    }
    out
}

fn write(root: &Path, name: &str, bytes: &[u8]) {
    let path = root.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn the_inventory_names_the_layout_and_its_clusters() {
    let inv = json(&[
        "analyze",
        bundle(TWO).to_str().unwrap(),
        "--inventory",
        "--format",
        "json",
    ]);
    let layout = &inv["layout"];
    assert_eq!(layout["name"], "kuberay-history-server");
    assert_eq!(layout["generation"], "v1.7");
    let clusters: Vec<(String, String, Option<String>)> = layout["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["kind"], "RayCluster");
            assert_eq!(c["nodes"], 1);
            assert_eq!(c["sessions"].as_array().unwrap().len(), 1);
            (
                c["namespace"].as_str().unwrap().to_string(),
                c["name"].as_str().unwrap().to_string(),
                c["owner"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        clusters,
        [
            (
                "batch".to_string(),
                "json-etl-5xq7w".to_string(),
                Some("RayJob batch/json-etl".to_string())
            ),
            ("default".to_string(), "echo-serve".to_string(), None),
        ]
    );
    let text = common::raysift(&["analyze", bundle(ONE).to_str().unwrap(), "--inventory"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains(
            "Layout: kuberay-history-server (collector keys v1.7), 1 cluster: RayCluster \
             ml-serving/model-serve-k8vzq of RayService ml-serving/model-serve (1 session, 1 node,"
        ),
        "{text}"
    );
    // Any other bundle says nothing of a layout.
    let other = json(&[
        "analyze",
        bundle("run-2.60.0-serve-constructor-error")
            .to_str()
            .unwrap(),
        "--inventory",
        "--format",
        "json",
    ]);
    assert!(other.get("layout").is_none());
}

#[test]
fn the_broken_cluster_gives_its_cause_and_is_named_from_its_key() {
    let report = analyze(&bundle(ONE), &[]);
    assert_eq!(actionable(&report), ["serve_script_error"]);
    let cause = &report["causes"][0];
    assert_eq!(
        cause["objects"][0],
        serde_json::json!({"kind": "RayCluster", "namespace": "ml-serving", "name": "model-serve-k8vzq"})
    );
    let texts: Vec<&str> = cause["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(texts.iter().any(|t| t.contains(
        "FileNotFoundError: [Errno 2] No such file or directory: '/models/does-not-exist.pt'"
    )));
    // The owner, by the name KubeRay gives its clusters, selects it too.
    let by_owner = analyze(&bundle(ONE), &["--object", "rayservice/model-serve"]);
    assert_eq!(actionable(&by_owner), ["serve_script_error"]);
}

#[test]
fn two_clusters_under_one_prefix_are_kept_apart() {
    let path = bundle(TWO);
    // Whole: the failed job is a cause of its own, not a symptom of the healthy cluster's
    // requested stop.
    let report = analyze(&path, &[]);
    assert_eq!(actionable(&report), ["rayjob_entrypoint_failed"]);
    for c in report["causes"].as_array().unwrap() {
        let explains = c["explains"].as_array().unwrap();
        assert!(
            !explains.iter().any(|s| s == "rayjob_entrypoint_failed"),
            "{} explains the other cluster's failure",
            c["id"]
        );
        let clusters: Vec<bool> = evidence_files(&serde_json::json!({"causes": [c]}))
            .iter()
            .map(|f| f.contains(BROKEN))
            .collect();
        assert!(
            clusters.iter().all(|b| *b) || clusters.iter().all(|b| !*b),
            "{} mixes the clusters' evidence",
            c["id"]
        );
    }

    // Each cluster alone: only its own files, only its own causes.
    for (object, mine, expect) in [
        ("RayCluster/echo-serve", HEALTHY, &[][..]),
        ("RayJob/json-etl", BROKEN, &["rayjob_entrypoint_failed"][..]),
        (
            "RayCluster/batch/json-etl-5xq7w",
            BROKEN,
            &["rayjob_entrypoint_failed"][..],
        ),
    ] {
        let report = analyze(&path, &["--object", object]);
        assert_eq!(actionable(&report), expect, "{object}");
        let files = evidence_files(&report);
        assert!(!files.is_empty(), "{object}: no evidence at all");
        for f in files {
            assert!(f.contains(mine), "{object}: evidence from {f}");
        }
        let out = common::raysift(&[
            "timeline",
            path.to_str().unwrap(),
            "--object",
            object,
            "--format",
            "json",
        ]);
        let lines = String::from_utf8(out.stdout).unwrap();
        assert!(lines.lines().count() > 100, "{object}: {lines}");
        for line in lines.lines() {
            let ev: Value = serde_json::from_str(line).unwrap();
            let file = ev["file"].as_str().unwrap();
            assert!(file.contains(mine), "{object}: timeline line from {file}");
        }
    }
    // The namespace of `KIND/NAMESPACE/NAME` must agree with `--namespace`.
    let out = common::raysift(&[
        "analyze",
        path.to_str().unwrap(),
        "--object",
        "RayCluster/batch/json-etl-5xq7w",
        "-n",
        "default",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let other_ns = analyze(
        &path,
        &["--object", "RayCluster/json-etl-5xq7w", "-n", "batch"],
    );
    assert_eq!(actionable(&other_ns), ["rayjob_entrypoint_failed"]);
}

#[test]
fn a_directory_copy_reads_as_the_tar_gz() {
    for name in [ONE, TWO] {
        let dir = common::scratch("historyserver", name);
        for (member, bytes) in members(&bundle(name)) {
            write(&dir, &member, &bytes);
        }
        let strip = |mut v: Value| {
            v["bundle"]["path"] = Value::Null;
            v["stats"]["elapsed_ms"] = Value::Null;
            v["inventory"]["container"] = Value::Null;
            v
        };
        let from_tar = strip(analyze(&bundle(name), &[]));
        let from_dir = strip(analyze(&dir, &[]));
        assert!(
            from_tar == from_dir,
            "{name}: the directory's report differs:\n{}\n---\n{}",
            serde_json::to_string_pretty(&from_tar).unwrap(),
            serde_json::to_string_pretty(&from_dir).unwrap()
        );
    }
}

/// The collector of KubeRay v1.6 keyed the same files `<cluster>_<namespace>/<session>/logs/
/// <node id>/…` under its root folder (`log` in its samples).
#[test]
fn v1_6_keys_name_the_same_cluster() {
    let dir = common::scratch("historyserver", "v1-6");
    let mut moved = 0;
    for (member, bytes) in members(&bundle(TWO)) {
        let Some(rest) = member.split_once(HEALTHY).map(|(_, r)| r) else {
            continue;
        };
        // <session>/<node>/logs/<file> → <session>/logs/<node>/<file>
        let parts: Vec<&str> = rest.splitn(4, '/').collect();
        if let [session, node, "logs", file] = parts.as_slice() {
            let key = format!("copy/log/echo-serve_default/{session}/logs/{node}/{file}");
            write(&dir, &key, &bytes);
            moved += 1;
        }
    }
    assert!(moved > 10);
    let inv = json(&[
        "analyze",
        dir.to_str().unwrap(),
        "--inventory",
        "--format",
        "json",
    ]);
    assert_eq!(inv["layout"]["generation"], "v1.6");
    assert_eq!(inv["layout"]["clusters"][0]["namespace"], "default");
    assert_eq!(inv["layout"]["clusters"][0]["name"], "echo-serve");
    assert_eq!(inv["layout"]["clusters"][0]["files"], moved);
    let report = analyze(&dir, &["--object", "raycluster/echo-serve"]);
    assert!(actionable(&report).is_empty());
    assert!(!evidence_files(&report).is_empty());
}

/// `raysift timeline <bundle> --format json`, one object a line.
fn timeline(path: &Path) -> Vec<Value> {
    common::timeline_json(&[path.to_str().unwrap()])
}

#[test]
fn the_collectors_event_files_join_the_timeline() {
    let records = timeline(&bundle(EVENTS));
    let events: Vec<&Value> = records
        .iter()
        .filter(|r| {
            let f = r["file"].as_str().unwrap_or("");
            f.contains("/node_events/") || f.contains("/job_events/01000000/")
        })
        .collect();
    // 45 events posted, one record each.
    assert_eq!(events.len(), 45);
    for e in &events {
        assert_eq!(e["source"], "ray_export_event", "{e}");
        assert_eq!(e["ts_quality"], "exact", "{e}");
    }
    let text = |e: &Value| e["message"].as_str().unwrap_or("").to_string();
    let death = events
        .iter()
        .find(|e| text(e).starts_with("actor 7e12d5504ac4dcc7ffaab4b601000000 died: its constructor raised: ValueError: feature table 'users_v2' not found"))
        .expect("the actor's death event");
    assert_eq!(death["level"], "error");
    assert!(death["file"].as_str().unwrap().contains("/node_events/"));
    assert!(events.iter().any(|e| e["level"] == "error"
        && text(e)
            .contains("FAILED: TASK_EXECUTION_EXCEPTION: RuntimeError: batch 17 has no rows")));
    // Normal transitions stay info.
    for e in &events {
        let t = text(e);
        if t.ends_with(" ALIVE") || t.ends_with(" FINISHED") || t.ends_with(" defined") {
            assert_eq!(e["level"], "info", "{t}");
        }
    }
}

#[test]
fn the_dead_actors_event_is_evidence_of_the_first_cause() {
    let r = analyze(&bundle(EVENTS), &[]);
    let causes = r["causes"].as_array().unwrap();
    assert_eq!(causes[0]["id"], "actor_constructor_error");
    let mut shown = Vec::new();
    for e in causes[0]["evidence"].as_array().unwrap().iter().chain(
        causes[0]["symptoms"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["evidence"].as_array().unwrap()),
    ) {
        shown.push((
            e["file"].as_str().unwrap().to_string(),
            e["text"].as_str().unwrap().to_string(),
        ));
    }
    assert!(
        shown.iter().any(|(f, t)| f.contains("/node_events/")
            && t.starts_with(
                "actor 7e12d5504ac4dcc7ffaab4b601000000 died: its constructor raised"
            )),
        "{shown:#?}"
    );
    // Not a second cause: no other cause cites the constructor's failure.
    for c in &causes[1..] {
        for e in c["evidence"].as_array().unwrap() {
            let t = e["text"].as_str().unwrap();
            assert!(!t.contains("its constructor raised"), "{}: {t}", c["id"]);
        }
    }
}
