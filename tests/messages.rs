//! The message catalogue's data (`patterns/messages/`): it all reads, and every judged
//! template matches its own sample line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;

use raysift::messages::{Catalogue, Class};
use raysift::rules::catalogue::is_known;

#[test]
fn every_file_of_the_catalogue_reads() {
    let c = Catalogue::builtin();
    assert!(c.problems().is_empty(), "{}", c.problems().join("\n"));
}

#[test]
fn every_judged_template_matches_its_sample_and_names_a_known_cause() {
    let c = Catalogue::builtin();
    let mut problems = Vec::new();
    for m in c.messages() {
        let Some(class) = &m.class else { continue };
        if !c
            .matches(&class.sample)
            .iter()
            .any(|f| f.message.id == m.id)
        {
            problems.push(format!(
                "{}: its sample does not match its template\n  template: {}\n  sample:   {}",
                m.id, m.template, class.sample
            ));
        }
        if let Class::Cause(id) = &class.class {
            if !is_known(id) {
                problems.push(format!("{}: cause {id:?} is no catalogue id", m.id));
            }
        }
        if class.meaning.trim().is_empty() || class.sample_from.trim().is_empty() {
            problems.push(format!("{}: no meaning or no sample_from", m.id));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn extracted_entries_are_well_formed() {
    let c = Catalogue::builtin();
    let mut problems = Vec::new();
    for m in c.messages() {
        let prefix = format!("{}-", m.project);
        if !m.id.starts_with(&prefix) || m.template.trim().is_empty() || m.site.is_empty() {
            problems.push(format!("{}: malformed ({} / {})", m.id, m.project, m.site));
        }
        if m.versions.is_empty() {
            problems.push(format!("{}: no version has it", m.id));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A real line of a Ray 2.9.3 session (`corpus/run-2.9.3-serve-constructor-error`), judged
/// as `serve_script_error`.
const REPLICA_RAISED: &str = "ERROR 2026-12-06 08:20:04,892 controller 26509 deployment_state.py:658 - Exception in replica 'model#Model#AClCCt', the replica will be stopped.";

#[test]
fn explain_names_the_component_the_meaning_the_versions_and_the_cause() {
    let out = common::raysift(&["explain", REPLICA_RAISED]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "serve.controller",
        "deployment_state.py",
        "versions: ",
        "meaning: ",
        "cause:    serve_script_error",
        "next: ",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

#[test]
fn explain_reads_standard_input_writes_json_and_exits_1_on_an_unknown_line() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_raysift"))
        .args(["explain", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = format!("{REPLICA_RAISED}\r\nnothing any version of Ray says\n");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a line matched nothing");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["matches"][0]["component"], "serve.controller");
    assert_eq!(lines[0]["matches"][0]["cause"]["id"], "serve_script_error");
    assert_eq!(lines[1]["matches"].as_array().map(Vec::len), Some(0));
}

#[test]
fn rules_messages_searches_the_templates() {
    let out = common::raysift(&["rules", "--messages", "the replica will be stopped"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().count() >= 2, "{text}");
    assert!(
        text.lines()
            .all(|l| l.contains("the replica will be stopped")),
        "{text}"
    );
}

/// `causes` of `analyze --format json` on a session folder holding one file.
fn causes_of_one_file(name: &str, file: &str, text: &str) -> Vec<serde_json::Value> {
    let dir = common::scratch("messages", name);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join(file), text).unwrap();
    let out = common::raysift(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["causes"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_judged_message_no_rule_knows_names_its_cause() {
    // A real line of a Ray 2.22.0 run whose pip install failed (corpus/run-2.22.0-job-
    // runtime-env-pip), alone: no rule keys on it, the catalogue judges it.
    let causes = causes_of_one_file(
        "judged",
        "runtime_env_agent.log",
        "2026-12-06 09:02:19,566\tERROR pip.py:418 -- Failed to install pip packages.\n",
    );
    let first = &causes[0];
    assert_eq!(first["id"], "runtime_env_failure", "{causes:#?}");
    assert_eq!(first["code"], "OWD012");
    let summary = first["summary"].as_str().unwrap();
    assert!(
        summary.contains("runtime_env: ") && summary.contains("[ray-"),
        "{summary}"
    );
}

#[test]
fn a_message_judged_harmless_raises_nothing() {
    let causes = causes_of_one_file(
        "benign",
        "monitor.log",
        "2026-12-06 09:02:19,566\tERROR autoscaler.py:412 -- Error recording usage for autoscaler v2.\n",
    );
    assert!(
        causes.iter().all(|c| c["severity"] == "info"),
        "{causes:#?}"
    );
}

/// `analyze --format json` on a session folder holding one file.
fn report_of_one_file(name: &str, file: &str, text: &str) -> (Option<i32>, serde_json::Value) {
    let dir = common::scratch("messages", name);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join(file), text).unwrap();
    let out = common::raysift(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

/// A raylet warning pasted in ray-project/ray#41071, whose template is judged a cause
/// (`runtime_env_failure`), between healthy records: the sieve keeps it, the open world
/// matches it, and the report notes its component and meaning; alone it is no cause.
#[test]
fn a_judged_warning_reaches_the_catalogue_and_alone_is_no_cause() {
    let text = "[2023-11-09 23:36:12,100 I 75 75] (raylet) main.cc:180: Setting cluster ID to: 2f1c\n\
        [2023-11-09 23:36:12,669 W 75 75] (raylet) worker_pool.cc:1279: Create runtime env failed for task ffffffffffffffffe07efaa88efdd5bf01e68def1c000000 and couldn't create the worker.\n\
        [2023-11-09 23:36:13,001 I 75 75] (raylet) node_manager.cc:525: [state-dump] NodeManager:\n";
    let (code, report) = report_of_one_file("warned", "raylet.out", text);
    let warned: Vec<&serde_json::Value> = report["unrecognised"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["level"] == "warning")
        .collect();
    assert_eq!(warned.len(), 1, "{report:#}");
    assert_eq!(warned[0]["message"]["id"], "ray-9fc8a59e20");
    assert_eq!(warned[0]["message"]["component"], "raylet");
    assert!(warned[0]["message"]["meaning"].is_string());
    let causes = report["causes"].as_array().cloned().unwrap_or_default();
    assert!(
        causes.iter().all(|c| c["severity"] == "info"),
        "{causes:#?}"
    );
    assert_eq!(code, Some(0));
}

/// A warning every healthy Serve start prints (`corpus/run-2.40.0-healthy-serve`), judged
/// benign: nothing at all.
#[test]
fn a_benign_warning_stays_quiet() {
    let text = "[2026-12-06 08:40:05,084 W 25754 25754] actor_manager.cc:105: Failed to look up actor with name 'SERVE_CONTROLLER_ACTOR'. This could because 1. You are trying to look up a named actor you didn't create. 2. The named actor died. 3. You did not use a namespace matching the namespace of the actor.\n";
    let (code, report) = report_of_one_file(
        "benign-warning",
        "python-core-driver-01000000ffffffffffffffffffffffffffffffffffffffffffffffff_25754.log",
        text,
    );
    assert!(
        report["unrecognised"]
            .as_array()
            .is_none_or(|u| u.is_empty()),
        "{report:#}"
    );
    assert!(
        report["causes"].as_array().is_none_or(|c| c.is_empty()),
        "{report:#}"
    );
    assert_eq!(code, Some(0));
}

#[test]
fn explain_names_the_known_issue_a_line_is_part_of_and_rules_known_lists_them() {
    // The kubelet's probe failure as pasted in the thread of ray-project/kuberay#2063.
    let line = "Readiness probe failed: bash: line 1: wget: command not found";
    let out = common::raysift(&["explain", "--json", line]);
    assert_eq!(out.status.code(), Some(0), "a known issue is an answer");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let issues = v["known_issues"].as_array().unwrap();
    assert!(
        issues
            .iter()
            .any(|k| k["tracker"] == "ray-project/kuberay#2063" && k["code"] == "KIS003"),
        "{v:#}"
    );
    let list = String::from_utf8(common::raysift(&["rules", "--known"]).stdout).unwrap();
    assert!(list.lines().count() >= 11, "{list}");
    assert!(list.lines().all(|l| l.starts_with("KIS")), "{list}");
    assert!(list.contains("ray-project/kuberay#2063"));
}

/// A Ray worker's stderr, as `<session>/logs/worker-<id>-<job>-<pid>.err` names it.
const WORKER_ERR: &str =
    "worker-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5-01000000-4242.err";

#[test]
fn a_vllm_line_in_a_ray_log_is_read_against_vllms_templates() {
    // vLLM's workers (RayWorkerWrapper) are Ray actors: what they log lands in a Ray worker's
    // log, and is matched against vLLM's templates as Ray's own lines are against Ray's. The
    // line as pasted in pettingllms-ai/PettingLLMs#4; its template is judged `meaning`.
    let causes = causes_of_one_file(
        "vllm-meaning",
        WORKER_ERR,
        "Error executing method 'determine_available_memory'. This might cause deadlock in distributed execution.\n",
    );
    let summary = causes[0]["summary"].as_str().unwrap();
    assert!(
        summary.contains("ecosystem.vllm: ") && summary.contains("[vllm-dad36cf9ca]"),
        "{causes:#?}"
    );
    // A raised vLLM message judged as a cause gives that cause (vLLM's Compiled Graph extra
    // missing from the image: formatted from vllm/v1/executor/ray_executor.py).
    let causes = causes_of_one_file(
        "vllm-cause",
        WORKER_ERR,
        "ValueError: Ray Compiled Graph is not installed. Run `pip install ray[cgraph]` to install it.\n",
    );
    assert_eq!(causes[0]["id"], "missing_dependency", "{causes:#?}");
    assert!(
        causes[0]["summary"]
            .as_str()
            .unwrap()
            .contains("ecosystem.vllm: "),
        "{causes:#?}"
    );
}

#[test]
fn explain_names_vllm_and_skypilot_templates_with_their_versions() {
    let out = common::raysift(&[
        "explain",
        "--json",
        "ERROR 02-09 02:31:11 engine.py:389] Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group or running the driver on a GPU node.",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["matches"][0];
    assert_eq!(m["project"], "vllm", "{v:#}");
    assert_eq!(m["component"], "ecosystem.vllm");
    assert_eq!(m["cause"]["id"], "autoscaler_infeasible_request");
    assert!(m["versions_read"].as_array().unwrap().len() >= 3, "{v:#}");
    let c = Catalogue::builtin();
    for project in ["vllm", "skypilot"] {
        assert!(
            c.versions_read(project, "python").len() >= 3,
            "{project}: fewer than three versions read"
        );
    }
}
