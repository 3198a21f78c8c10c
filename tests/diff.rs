//! `raysift diff OLD NEW` through the binary, on the before/after pairs of `corpus/diff/`:
//! a bundle against itself is `no difference`, each pair names the change that matters first
//! (the new cause, then the change that explains it), exits 1 on a new cause at or above
//! `--fail-on`, writes JSON that follows `schema/diff.v1.json`, and an unreadable bundle exits
//! 2 naming which of the two it is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::Value;

/// The pair's two bundles, relative to the crate root (the tests' working directory), so
/// that outputs name them the same on every machine.
fn pair(name: &str) -> (String, String) {
    (
        format!("corpus/diff/{name}/old"),
        format!("corpus/diff/{name}/new"),
    )
}

fn text_of(old: &str, new: &str, extra: &[&str]) -> (String, i32) {
    let out = common::raysift(&[&["diff", old, new], extra].concat());
    assert!(
        out.stderr.is_empty(),
        "diff {old} {new}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

fn json_of(old: &str, new: &str) -> Value {
    let out = common::raysift(&["diff", old, new, "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "diff {old} {new}: no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let errors = common::schema_errors("diff", &v);
    assert!(errors.is_empty(), "diff {old} {new}: {errors:?}");
    v
}

/// The numbered lines and the lines placed under them, without the header.
fn change_lines(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.is_empty())
        .skip(1)
        .filter(|l| !l.starts_with("    ") || l.starts_with("    ↳"))
        .collect()
}

#[test]
fn a_bundle_against_itself_is_no_difference() {
    for b in [
        "corpus/diff/upgrade/new",
        "corpus/diff/import-path/old",
        "corpus/kuberay-log-missing-module",
    ] {
        let (text, code) = text_of(b, b, &[]);
        assert_eq!(text, "no difference\n", "{b}");
        assert_eq!(code, 0, "{b}: a cause both bundles have is no new cause");
        let v = json_of(b, b);
        assert_eq!(v["same"], true);
        assert_eq!(v["failing"], false);
        assert_eq!(v["changes"], Value::Array(Vec::new()));
    }
}

#[test]
fn the_upgrade_names_the_image_pull_failure_then_the_image_it_failed_on() {
    let (old, new) = pair("upgrade");
    let (text, code) = text_of(&old, &new, &["--fail-on", "error"]);
    assert_eq!(code, 1, "{text}");
    let lines = change_lines(&text);
    assert_eq!(
        lines[0], " 1. new cause [error] image_pull_failure on RayService ray/llm-chat",
        "{text}"
    );
    assert_eq!(
        lines[1],
        "    ↳ image rayproject/ray: 2.40.0-py311, 2.40.0-py311-gpu → 2.41.0-py311, 2.41.0-py311-gpu-typo",
        "{text}"
    );
    assert!(
        text.contains("↳ image quay.io/kuberay/operator: v1.4.2 → v1.5.1"),
        "{text}"
    );
    assert!(text.contains("↳ KubeRay version: 1.4.2 → 1.5.1"), "{text}");
    let v = json_of(&old, &new);
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes[0]["kind"], "cause_appeared");
    assert_eq!(changes[0]["what"], "image_pull_failure");
    assert_eq!(changes[0]["severity"], "error");
    assert_eq!(changes[1]["kind"], "image_changed");
    assert_eq!(changes[1]["what"], "rayproject/ray");
    assert_eq!(changes[1]["explains"], "image_pull_failure");
    assert_eq!(v["failing"], true);
    // An error cause does not reach --fail-on critical.
    let (_, code) = text_of(&old, &new, &["--fail-on", "critical"]);
    assert_eq!(code, 0);
}

#[test]
fn the_serve_config_edit_names_the_import_path_under_the_new_cause() {
    let (old, new) = pair("import-path");
    let (text, code) = text_of(&old, &new, &["--fail-on", "error"]);
    assert_eq!(code, 1, "{text}");
    let lines = change_lines(&text);
    assert_eq!(
        lines[0], " 1. new cause [critical] bad_import_path on RayService payments/fraud-guard",
        "{text}"
    );
    assert_eq!(
        lines[1],
        "    ↳ spec of RayService payments/fraud-guard: serveConfigV2.applications[fraud].import_path: \
         fraud_detector.serving:app → fraud_detector.serve:app",
        "{text}"
    );
    assert_eq!(
        lines[2],
        " 2. worse: RayService payments/fraud-guard \
         status.activeServiceStatus.applicationStatuses.fraud.status: RUNNING → DEPLOY_FAILED",
        "{text}"
    );
    let v = json_of(&old, &new);
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes[0]["what"], "bad_import_path");
    assert_eq!(changes[1]["kind"], "spec_changed");
    assert_eq!(
        changes[1]["what"],
        "serveConfigV2.applications[fraud].import_path"
    );
    assert_eq!(changes[1]["old"], "fraud_detector.serving:app");
    assert_eq!(changes[1]["new"], "fraud_detector.serve:app");
    assert_eq!(changes[1]["object"], "RayService payments/fraud-guard");
    assert_eq!(changes[2]["kind"], "state_worsened");
}

#[test]
fn the_worker_group_scaled_to_zero_is_under_the_unschedulable_replicas() {
    let (old, new) = pair("workers-to-zero");
    let (text, code) = text_of(&old, &new, &["--fail-on", "error"]);
    assert_eq!(code, 1, "{text}");
    let lines = change_lines(&text);
    assert_eq!(
        lines[0], " 1. new cause [error] serve_replicas_unschedulable on RayService ray/llm-chat",
        "{text}"
    );
    let under: Vec<&str> = lines[1..]
        .iter()
        .take_while(|l| l.starts_with("    ↳"))
        .copied()
        .collect();
    assert!(
        under.contains(
            &"    ↳ spec of RayService ray/llm-chat: rayClusterConfig.workerGroupSpecs[gpu-group].replicas: 1 → 0"
        ),
        "{text}"
    );
    assert!(
        under.iter().all(|l| l.contains("[gpu-group]")),
        "only the group's size is placed under the cause: {text}"
    );
    let v = json_of(&old, &new);
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes[0]["what"], "serve_replicas_unschedulable");
    assert_eq!(changes[1]["kind"], "spec_changed");
    assert_eq!(changes[1]["explains"], "serve_replicas_unschedulable");
}

#[test]
fn the_other_way_round_a_cause_goes_and_nothing_fails() {
    let (old, new) = pair("import-path");
    let (text, code) = text_of(&new, &old, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("cause gone [critical] bad_import_path on RayService payments/fraud-guard"),
        "{text}"
    );
    assert!(
        !text.contains("new cause [critical]"),
        "a cause that went away is no new cause: {text}"
    );
}

#[test]
fn the_upgrade_text_reads_at_a_glance() {
    let (old, new) = pair("upgrade");
    let (text, _) = text_of(&old, &new, &[]);
    insta::assert_snapshot!("diff_upgrade_text", text);
}

#[test]
fn an_unreadable_bundle_exits_2_naming_it() {
    let (old, _) = pair("upgrade");
    let missing = "corpus/diff/no-such-bundle";
    let out = common::raysift(&["diff", &old, missing]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("NEW bundle") && err.contains(missing),
        "the message names NEW and its path: {err}"
    );
    assert!(out.stdout.is_empty());
    let out = common::raysift(&["diff", missing, &old]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("OLD bundle") && err.contains(missing), "{err}");
    // A bundle that opens but holds nothing to read is refused too, named.
    let dir = std::env::temp_dir().join(format!("raysift-diff-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.tar.gz");
    std::fs::write(&empty, b"").unwrap();
    let out = common::raysift(&["diff", &old, empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot analyse NEW bundle"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn diff_refuses_what_cannot_fire_and_narrows_both_bundles() {
    let (old, new) = pair("upgrade");
    let out = common::raysift(&["diff", &old, &new, "--fail-on", "info"]);
    assert_eq!(out.status.code(), Some(2));
    let out = common::raysift(&["diff", "-", "-"]);
    assert_eq!(out.status.code(), Some(2));
    // --namespace applies to both: one that neither bundle names is refused, as in analyze.
    let out = common::raysift(&["diff", &old, &new, "--namespace", "nowhere"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("OLD bundle"));
    let (text, code) = text_of(&old, &new, &["--namespace", "ray"]);
    assert_eq!(code, 1);
    assert!(text.contains("image_pull_failure"), "{text}");
}

#[test]
fn an_error_template_seen_only_in_new_is_named_with_its_count() {
    // Two bundles of the corpus that are not a pair: NEW's only trouble is an error record no
    // rule explains (a warning cause), which the diff names as a new template.
    let (old, new) = (
        "corpus/healthy-rayservice-handmade",
        "corpus/field-driver-worker-register-failed",
    );
    let v = json_of(old, new);
    let changes = v["changes"].as_array().unwrap();
    let template = changes
        .iter()
        .find(|c| c["kind"] == "template_appeared")
        .unwrap_or_else(|| panic!("no new template: {v}"));
    assert!(
        template["what"]
            .as_str()
            .unwrap()
            .starts_with("Failed to register worker to Raylet"),
        "{template}"
    );
    assert_eq!(template["count"], 1);
    assert_eq!(changes[0]["what"], "unrecognised_error");
    // A warning cause fails only when --fail-on reaches down to it.
    let (_, code) = text_of(old, new, &[]);
    assert_eq!(code, 0);
    let (_, code) = text_of(old, new, &["--fail-on", "warning"]);
    assert_eq!(code, 1);
}
