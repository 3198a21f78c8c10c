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

/// A FATAL event as Ray's event reporter writes it for a failed check of the GCS
/// (`RayLog`'s fatal callback, `LogEventReporter::EventToString`): the message's line breaks
/// written as `\n`, the stack's frames mostly `unknown`.
fn fatal_event(check: &str) -> String {
    let mut message = format!(
        "redis_context.cc:484 (PID: 8, TID: 8, errno: 111 (Connection refused)):  Check failed: {check}\n*** StackTrace Information ***\n"
    );
    message.push_str("/home/ray/anaconda3/lib/python3.11/site-packages/ray/core/src/ray/gcs/gcs_server(+0x1140e0a) [0x7f6f1c540e0a] ray::operator<<()\n");
    message.push_str("/home/ray/anaconda3/lib/python3.11/site-packages/ray/core/src/ray/gcs/gcs_server(+0x9a3b1f) [0x7f6f1bda3b1f] ray::gcs::RedisContext::Connect()\n");
    for _ in 0..60 {
        message.push_str("unknown\n");
    }
    let event = serde_json::json!({
        "custom_fields": {},
        "event_id": "5a1e3c0d9b8f7e6d5c4b3a291817161514131211",
        "host_name": "ray-head",
        "label": "RAY_FATAL_CHECK_FAILED",
        "message": message.trim_end().replace('\n', "\\n"),
        "pid": "8",
        "severity": "FATAL",
        "source_type": "GCS",
        "timestamp": 1_699_840_068,
    });
    format!("{event}\n")
}

/// The failed check as the GCS logs it (the head's output pasted in ray-project/ray#41161).
const CHECK: &str = "redisInitiateSSLWithContext(context_, ssl_context_) == REDIS_OK Failed to setup encrypted redis: SSL_connect failed: CERTIFICATE_VERIFY_FAILED";

#[test]
fn an_event_file_is_read_as_records_whose_first_line_is_their_message() {
    let dir = scratch("event");
    let logs = dir.join("bundle/logs/events");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(
        logs.join("event_GCS.log"),
        fatal_event("node_ != nullptr The node is gone"),
    )
    .unwrap();
    let path = dir.join("bundle");
    let path = path.to_str().unwrap();
    let report = json(&["analyze", path, "--format", "json"]);
    let cause = &report["causes"][0];
    assert_eq!(cause["id"], "component_exception", "{cause}");
    let summary = cause["summary"].as_str().unwrap();
    assert_eq!(
        summary,
        "the GCS server raised Check failed: node_ != nullptr The node is gone; no rule explains it"
    );
    assert!(!summary.contains("\\n") && !summary.contains("unknown"));
    let e = &cause["evidence"][0];
    assert_eq!(e["ts"], "2023-11-13T01:47:48.000Z");
    assert_eq!(e["source"], "ray_event");

    let line = run(&["timeline", path, "--format", "json"]);
    let line: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(line["level"], "critical");
    assert_eq!(line["component"], "GCS");
    assert_eq!(line["fields"]["label"], "RAY_FATAL_CHECK_FAILED");
    assert_eq!(line["fields"]["pid"], "8");
    assert_eq!(line["fields"]["file"], "redis_context.cc");
    let message = line["message"].as_str().unwrap();
    assert_eq!(message.lines().count(), 64, "{message}");
    assert!(!message.contains("\\n"));
    assert!(common::schema_errors("timeline", &line).is_empty());
}

#[test]
fn a_fatal_event_that_repeats_a_failed_check_is_that_failure() {
    let dir = scratch("fatal");
    let logs = dir.join("bundle/logs");
    std::fs::create_dir_all(logs.join("events")).unwrap();
    let mut gcs = String::from(
        "[2023-11-13 01:47:48,600 I 8 8] (gcs_server) gcs_server_main.cc:111: Ray cluster metadata ray_cluster_id=0e2c\n",
    );
    gcs.push_str(&format!(
        "[2023-11-13 01:47:48,664 C 8 8] (gcs_server) redis_context.cc:484:  Check failed: {CHECK}\n*** StackTrace Information ***\n"
    ));
    gcs.push_str("/home/ray/anaconda3/lib/python3.11/site-packages/ray/core/src/ray/gcs/gcs_server(+0x1140e0a) [0x7f6f1c540e0a] ray::operator<<()\n");
    std::fs::write(logs.join("gcs_server.out"), gcs).unwrap();
    std::fs::write(logs.join("events/event_GCS.log"), fatal_event(CHECK)).unwrap();
    let path = dir.join("bundle");
    let path = path.to_str().unwrap();
    let report = json(&["analyze", path, "--format", "json"]);
    let causes = report["causes"].as_array().unwrap();
    // One failure, one cause, one record: the log's, which says where the event is.
    assert_eq!(causes.len(), 1, "{causes:?}");
    let evidence: Vec<&Value> = causes[0]["evidence"].as_array().unwrap().iter().collect();
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(evidence[0]["file"], "logs/gcs_server.out");
    assert_eq!(evidence[0]["also_in"], "logs/events/event_GCS.log:1");
    assert!(causes[0]["summary"].as_str().unwrap().starts_with("1 "));

    let critical = run(&["timeline", path, "--level", "critical", "--format", "json"]);
    assert_eq!(critical.lines().count(), 1, "{critical}");
    let inventory = json(&["analyze", path, "--inventory", "--format", "json"]);
    let event = inventory["file_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "logs/events/event_GCS.log")
        .unwrap();
    assert_eq!(event["source"], "ray_event");
    assert_eq!(event["events"], 0);
    assert_eq!(event["mirrored"]["of"], "logs/gcs_server.out");
}
