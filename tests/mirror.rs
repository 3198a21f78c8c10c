//! Whole Ray sessions as Ray writes them, through the binary: a record a process wrote to two
//! files (`raylet.out` and `raylet.err`) is one record in every count of every output, and
//! the kept one says where its copy is; Ray's event files are structured records whose first
//! line is their message's, and a FATAL event that repeats a failed check of its process is
//! that failure, not a second one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use serde_json::Value;

fn scratch(name: &str) -> common::Scratch {
    common::scratch("mirror", name)
}

fn run(args: &[&str]) -> String {
    let out = common::raysift(args);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "raysift {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&run(args)).unwrap()
}

/// A raylet's error of Ray's worker pool (`worker_pool.cc`), the `n`th of a storm.
fn worker_timeout(n: u32) -> String {
    let (min, sec, ms) = (50 + n / 60, n % 60, n % 1000);
    format!(
        "[2024-05-29 22:{min:02}:{sec:02},{ms:03} E 359273 359290] (raylet) worker_pool.cc:581: Some workers of the worker process({}) have not registered within the timeout. The process is still alive, probably it's hanging during start.",
        4000 + n
    )
}

/// A session folder whose raylet logged 128 worker timeouts: each in `raylet.out` (between
/// its ordinary records) and again in `raylet.err`, as Ray's C++ logger writes them.
fn raylet_storm(dir: &Path) {
    let logs = dir.join("session_latest/logs");
    std::fs::create_dir_all(&logs).unwrap();
    let mut out = String::from(
        "[2024-05-29 22:49:59,001 I 359273 359273] (raylet) main.cc:281: Raylet is starting.\n",
    );
    let mut err = String::new();
    for n in 0..128 {
        let line = worker_timeout(n);
        out.push_str(&line);
        out.push('\n');
        out.push_str(&format!(
            "[2024-05-29 22:{:02}:{:02},500 I 359273 359273] (raylet) node_manager.cc:631: Sending Python GC request to 1 local workers to clean up Python cyclic references.\n",
            50 + n / 60,
            n % 60
        ));
        err.push_str(&line);
        err.push('\n');
    }
    std::fs::write(logs.join("raylet.out"), out).unwrap();
    std::fs::write(logs.join("raylet.err"), err).unwrap();
}

fn unrecognised(report: &Value) -> &Value {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "unrecognised_error")
        .expect("an unrecognised_error cause")
}

#[test]
fn a_record_in_raylet_out_and_raylet_err_counts_once_in_every_output() {
    let dir = scratch("storm");
    let bundle = dir.join("bundle");
    raylet_storm(&bundle);
    let path = bundle.to_str().unwrap();

    // The report: 128 records, not 256 (each counted twice) nor 2 (the .err's head and tail).
    let report = json(&["analyze", path, "--format", "json"]);
    let cause = unrecognised(&report);
    let summary = cause["summary"].as_str().unwrap();
    assert!(summary.starts_with("128 error records"), "{summary}");
    assert!(summary.contains("(×128)"), "{summary}");
    let evidence = cause["evidence"].as_array().unwrap();
    assert!(!evidence.is_empty());
    for e in evidence {
        assert_eq!(e["file"], "session_latest/logs/raylet.out", "{e}");
        let also = e["also_in"].as_str().unwrap();
        assert!(
            also.starts_with("session_latest/logs/raylet.err:"),
            "{also}"
        );
    }
    let files = report["inventory"]["file_list"].as_array().unwrap();
    let err = files
        .iter()
        .find(|f| f["path"] == "session_latest/logs/raylet.err")
        .unwrap();
    assert_eq!(err["mirrored"]["records"], 128);
    assert_eq!(err["mirrored"]["of"], "session_latest/logs/raylet.out");
    assert!(common::schema_errors("report", &report).is_empty());

    for format in ["text", "markdown", "html"] {
        let shown = run(&["analyze", path, "--format", format]);
        assert!(shown.contains("128 error records"), "{format}");
        assert!(shown.contains("(×128)"), "{format}");
        assert!(
            !shown.contains("256 error") && !shown.contains("×256"),
            "{format}"
        );
        assert!(
            shown.contains("also session_latest/logs/raylet.err:"),
            "{format}"
        );
    }

    // The timeline: 128 error lines, each saying where its copy is.
    let lines = run(&["timeline", path, "--level", "error", "--format", "json"]);
    let lines: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 128);
    for (n, l) in lines.iter().enumerate() {
        assert_eq!(l["file"], "session_latest/logs/raylet.out");
        assert_eq!(
            l["also_in"],
            format!("session_latest/logs/raylet.err:{}", n + 1)
        );
        assert!(common::schema_errors("timeline", l).is_empty());
    }
    let text = run(&["timeline", path, "--level", "error"]);
    assert_eq!(text.matches("have not registered").count(), 128);
    assert_eq!(
        text.matches("also_in=session_latest/logs/raylet.err:")
            .count(),
        128
    );
    // Every record, counted once: 1 + 128 × 2 in raylet.out, none of its own in raylet.err.
    let all = run(&["timeline", path, "--format", "json"]);
    assert_eq!(all.lines().count(), 257);

    // The inventory: the same counts.
    let inventory = json(&["analyze", path, "--inventory", "--format", "json"]);
    assert_eq!(inventory["events"], 257);
    assert_eq!(inventory["timed_events"], 257);
    let err = inventory["file_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "session_latest/logs/raylet.err")
        .unwrap();
    assert_eq!(err["events"], 0);
    assert_eq!(err["mirrored"]["records"], 128);
    let text = run(&["analyze", path, "--inventory"]);
    assert!(
        text.contains("(128 mirrored from session_latest/logs/raylet.out)"),
        "{text}"
    );
}

#[test]
fn mirrors_are_the_same_whatever_the_container_and_the_thread_count() {
    let dir = scratch("containers");
    let bundle = dir.join("bundle");
    raylet_storm(&bundle);
    // Packed with raylet.out first, so that a streamed read meets the originals before the
    // copies (a directory is walked in name order: raylet.err first).
    let tgz = dir.join("bundle.tar.gz");
    {
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&tgz).unwrap(),
            flate2::Compression::fast(),
        );
        let mut tar = tar::Builder::new(gz);
        for name in ["raylet.out", "raylet.err"] {
            let p = bundle.join("session_latest/logs").join(name);
            tar.append_path_with_name(&p, format!("session_latest/logs/{name}"))
                .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap();
    }
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for path in [bundle.to_str().unwrap(), tgz.to_str().unwrap()] {
        for threads in ["1", "4"] {
            let report = common::raysift_env(
                &["analyze", path, "--format", "json", "--threads", threads],
                &[("SOURCE_DATE_EPOCH", Some("0"))],
            );
            let mut report: Value = serde_json::from_slice(&report.stdout).unwrap();
            report["stats"]["elapsed_ms"] = Value::Null;
            report["bundle"]["path"] = Value::Null;
            report["bundle"]["container"] = Value::Null;
            report["inventory"]["container"] = Value::Null;
            let timeline = run(&["timeline", path, "--format", "json", "--threads", threads]);
            let inventory = run(&["analyze", path, "--inventory", "--threads", threads]);
            let inventory = inventory
                .lines()
                .filter(|l| !l.starts_with("Bundle:"))
                .collect::<Vec<_>>()
                .join("\n");
            seen.push((report.to_string(), timeline, inventory));
        }
    }
    for other in &seen[1..] {
        assert_eq!(other.0, seen[0].0);
        assert_eq!(other.1, seen[0].1);
        assert_eq!(other.2, seen[0].2);
    }
}

#[test]
fn a_real_gcs_error_in_gcs_server_out_and_err_is_one_record() {
    // Ray 2.60.0 (`scripts/realrun`, serve-health-check): the GCS's one error of the run,
    // in gcs_server.out between its neighbours, and again in gcs_server.err.
    let dir = scratch("gcs");
    let logs = dir.join("bundle/logs");
    std::fs::create_dir_all(&logs).unwrap();
    for name in ["gcs_server.out", "gcs_server.err"] {
        std::fs::write(logs.join(name), fixture(name)).unwrap();
    }
    let path = dir.join("bundle");
    let path = path.to_str().unwrap();
    let lines = run(&["timeline", path, "--level", "error", "--format", "json"]);
    let lines: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["file"], "logs/gcs_server.out");
    assert_eq!(lines[0]["line"], 3);
    assert_eq!(lines[0]["also_in"], "logs/gcs_server.err:1");
    let report = json(&["analyze", path, "--format", "json"]);
    // One error template of one record (the message catalogue judges a shut-down gRPC
    // client harmless, so it is known noise and no cause); and the warning beside it, which
    // the catalogue knows, noted once although both files hold it.
    let templates = report["unrecognised"].as_array().unwrap();
    let (errors, warnings): (Vec<&Value>, Vec<&Value>) =
        templates.iter().partition(|t| t["level"] == "error");
    assert_eq!(errors.len(), 1, "{templates:#?}");
    assert_eq!(errors[0]["count"], 1);
    assert_eq!(errors[0]["known_noise"], true);
    assert_eq!(warnings.len(), 1, "{templates:#?}");
    assert_eq!(warnings[0]["count"], 1);
    assert_eq!(warnings[0]["message"]["id"], "ray-5025862e96");
    assert!(report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["severity"] == "info"));
}

/// A real run's core worker failing a check (Ray 2.9.3, `scripts/realrun`, raylet-killed):
/// its FATAL event, whose message Ray wrote with its line breaks as `\n`, and the stretch of
/// its log holding the failure (`tests/fixtures/mirror`).
const EVENT: &str = "event_CORE_WORKER_30607.log";
const CORE_WORKER: &str =
    "python-core-worker-f0a0d15c284c1e1eaeee47cdef8f6620ca024add9337dc4818e717d0_30607.log";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::root().join("tests/fixtures/mirror").join(name)).unwrap()
}

#[test]
fn an_event_file_is_read_as_records_whose_first_line_is_their_message() {
    let dir = scratch("event");
    let events = dir.join("bundle/logs/events");
    std::fs::create_dir_all(&events).unwrap();
    std::fs::write(events.join(EVENT), fixture(EVENT)).unwrap();
    let path = dir.join("bundle");
    let path = path.to_str().unwrap();
    let report = json(&["analyze", path, "--format", "json"]);
    let cause = &report["causes"][0];
    assert_eq!(cause["id"], "component_exception", "{cause}");
    let summary = cause["summary"].as_str().unwrap();
    // Not the 1,231 characters of the message with its `\n` and frames on one line.
    assert!(
        summary.starts_with("a Ray worker aborted with Check failed: _s.ok() Bad status: IOError: Broken pipe — core_worker: "),
        "{summary}"
    );
    assert!(!summary.contains("\\n") && summary.len() < 400, "{summary}");
    let e = &cause["evidence"][0];
    assert_eq!(e["ts"], "2026-12-06T09:30:05.000Z");
    assert_eq!(e["source"], "ray_event");
    assert!(common::schema_errors("report", &report).is_empty());

    let line = run(&["timeline", path, "--format", "json"]);
    let line: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(line["level"], "critical");
    assert_eq!(line["component"], "CORE_WORKER");
    assert_eq!(line["fields"]["label"], "RAY_FATAL_CHECK_FAILED");
    assert_eq!(line["fields"]["pid"], "30607");
    assert_eq!(line["fields"]["file"], "core_worker.cc");
    assert_eq!(line["fields"]["lineno"], "2694");
    let message = line["message"].as_str().unwrap();
    assert_eq!(message.lines().count(), 16, "{message}");
    assert!(!message.contains("\\n"));
    assert!(common::schema_errors("timeline", &line).is_empty());
}

#[test]
fn a_fatal_event_that_repeats_a_failed_check_is_that_failure() {
    let dir = scratch("fatal");
    let logs = dir.join("bundle/logs");
    std::fs::create_dir_all(logs.join("events")).unwrap();
    std::fs::write(logs.join(CORE_WORKER), fixture(CORE_WORKER)).unwrap();
    std::fs::write(logs.join("events").join(EVENT), fixture(EVENT)).unwrap();
    let path = dir.join("bundle");
    let path = path.to_str().unwrap();
    let report = json(&["analyze", path, "--format", "json"]);
    let causes = report["causes"].as_array().unwrap();
    let failure = causes
        .iter()
        .find(|c| c["id"] == "component_exception")
        .unwrap();
    // One failure, one cause, one record: the log's, which says where the event is.
    assert_eq!(
        causes
            .iter()
            .filter(|c| c["id"] == "component_exception")
            .count(),
        1
    );
    let summary = failure["summary"].as_str().unwrap();
    assert!(!summary.contains("(×2)"), "{summary}");
    let evidence: Vec<&Value> = failure["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["text"].as_str().unwrap().contains("Check failed"))
        .collect();
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(evidence[0]["file"], format!("logs/{CORE_WORKER}"));
    assert_eq!(evidence[0]["also_in"], format!("logs/events/{EVENT}:1"));

    let critical = run(&["timeline", path, "--level", "critical", "--format", "json"]);
    assert_eq!(critical.lines().count(), 1, "{critical}");
    let inventory = json(&["analyze", path, "--inventory", "--format", "json"]);
    assert_eq!(inventory["events"], 2);
    let event = inventory["file_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == format!("logs/events/{EVENT}"))
        .unwrap();
    assert_eq!(event["source"], "ray_event");
    assert_eq!(event["events"], 0);
    assert_eq!(event["mirrored"]["of"], format!("logs/{CORE_WORKER}"));
}
