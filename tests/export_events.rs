//! Ray's export events (`logs/export_events/event_EXPORT_*.log`, Ray 2.38+ with
//! `RAY_enable_export_api_write=1`) through the binary, on the real runs of `corpus/`: each
//! event is a timeline record of its own, with the level its state says, and the one that
//! states the failure is evidence of the first cause, never a cause of its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::Value;

fn bundle(name: &str) -> String {
    common::root()
        .join("corpus")
        .join(format!("{name}.tar.gz"))
        .to_string_lossy()
        .into_owned()
}

/// `raysift timeline <bundle> --format json --source ray_export_event`, one object a line.
fn export_timeline(name: &str) -> Vec<Value> {
    common::timeline_json(&[&bundle(name), "--source", "ray_export_event"])
}

fn report(name: &str) -> Value {
    let path = bundle(name);
    let out = common::raysift(&["analyze", &path, "--format", "json"]);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn message(ev: &Value) -> &str {
    ev["message"].as_str().unwrap_or("")
}

/// The (file, text) of every evidence line of a cause, its symptoms' included.
fn evidence(cause: &Value) -> Vec<(String, String)> {
    let own = cause["evidence"].as_array().cloned().unwrap_or_default();
    let of_symptoms = cause["symptoms"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .flat_map(|s| s["evidence"].as_array().cloned().unwrap_or_default());
    own.into_iter()
        .chain(of_symptoms)
        .map(|e| {
            (
                e["file"].as_str().unwrap_or("").to_string(),
                e["text"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn export_events_are_timeline_records_with_the_level_their_state_says() {
    let events = export_timeline("run-2.60.0-export-actor-failures");
    assert!(events.len() > 40, "{} export events", events.len());
    assert!(events.iter().all(|e| e["source"] == "ray_export_event"));
    let died = events
        .iter()
        .find(|e| message(e).starts_with("actor FeatureStore died: its constructor raised: "))
        .expect("the actor's death");
    assert_eq!(died["level"], "error");
    assert_eq!(died["component"], "EXPORT_ACTOR");
    assert!(died["file"]
        .as_str()
        .unwrap()
        .ends_with("logs/export_events/event_EXPORT_ACTOR.log"));
    assert_eq!(died["ts"], "2026-12-06T13:59:35.000Z");
    assert_eq!(
        died["fields"]["actor_id"],
        "327451fce1639805da19389c02000000"
    );
    assert_eq!(died["fields"]["job_id"], "02000000");
    assert!(message(died).contains("ValueError: feature table 'users_v2' not found"));

    let failed = events
        .iter()
        .find(|e| e["component"] == "EXPORT_SUBMISSION_JOB" && e["fields"]["status"] == "FAILED")
        .expect("the job's failure");
    assert_eq!(failed["level"], "error");
    assert!(message(failed).starts_with(
        "job raysubmit_S7AKSdZxe6MTsWcK FAILED: Job entrypoint command failed with exit code 1"
    ));

    // Every transition that states no failure stays at info.
    for e in &events {
        if e["level"] != "info" {
            assert!(
                message(e).contains(" died")
                    || message(e).contains(" failed: ")
                    || message(e).contains(" FAILED"),
                "{e}"
            );
        }
    }
}

#[test]
fn the_failed_job_event_is_evidence_of_the_first_cause() {
    let r = report("run-2.60.0-export-actor-failures");
    let causes = r["causes"].as_array().unwrap();
    // The driver failed on the actor whose constructor raised: that is the first cause, and
    // the job's failure hangs under it.
    assert_eq!(causes[0]["id"], "actor_constructor_error");
    assert!(
        causes[0]["explains"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "rayjob_entrypoint_failed"),
        "{:#}",
        causes[0]
    );
    let shown = evidence(&causes[0]);
    assert!(
        shown.iter().any(|(file, text)| file
            .ends_with("export_events/event_EXPORT_SUBMISSION_JOB.log")
            && text.starts_with("job raysubmit_S7AKSdZxe6MTsWcK FAILED: ")),
        "{shown:#?}"
    );
    // The actor's death is shown under the first cause, not ranked as one of its own.
    assert!(shown.iter().any(|(file, text)| file
        .ends_with("export_events/event_EXPORT_ACTOR.log")
        && text.starts_with("actor FeatureStore died")));
    for c in &causes[1..] {
        assert!(
            evidence(c)
                .iter()
                .all(|(file, _)| !file.contains("/export_events/")),
            "{}",
            c["id"]
        );
    }
}

#[test]
fn the_dead_node_event_is_evidence_of_the_node_death() {
    let events = export_timeline("run-2.60.0-export-raylet-killed");
    let dead = events
        .iter()
        .find(|e| e["component"] == "EXPORT_NODE" && e["fields"]["state"] == "DEAD")
        .expect("the node's death");
    assert_eq!(dead["level"], "error");
    assert!(message(dead).ends_with(
        "died: UNEXPECTED_TERMINATION: health check failed due to missing too many heartbeats"
    ));
    let r = report("run-2.60.0-export-raylet-killed");
    let causes = r["causes"].as_array().unwrap();
    assert_eq!(causes[0]["id"], "node_died");
    assert!(evidence(&causes[0])
        .iter()
        .any(|(file, _)| file.ends_with("export_events/event_EXPORT_NODE.log")));
}

#[test]
fn a_healthy_run_with_export_events_on_says_nothing_above_info() {
    let events = export_timeline("run-2.60.0-healthy-export-job");
    assert!(events.len() > 40, "{} export events", events.len());
    assert!(events.iter().all(|e| e["level"] == "info"), "{events:#?}");
    let r = report("run-2.60.0-healthy-export-job");
    assert!(
        r["causes"].as_array().unwrap().is_empty(),
        "{}",
        r["causes"]
    );
}
