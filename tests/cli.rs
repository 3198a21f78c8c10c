//! The binary end to end: the same bundle as a directory, a `.tar.gz`, a `.zip` and a `.tar`,
//! with one thread and four, gives byte-identical output; exit codes follow the documented
//! contract; `timeline` filters work.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("raysift-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files_under(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, p));
            }
        }
    }
    out.sort();
    out
}

/// Packs `dir` as `<top>/…` into a tar, a tar.gz and a zip; returns their paths.
fn pack(dir: &Path, out: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let top = dir.file_name().unwrap().to_string_lossy().into_owned();
    let files = files_under(dir);
    let tar_path = out.join("bundle.tar");
    {
        let mut b = tar::Builder::new(std::fs::File::create(&tar_path).unwrap());
        for (rel, p) in &files {
            b.append_path_with_name(p, format!("{top}/{rel}")).unwrap();
        }
        b.finish().unwrap();
    }
    let tgz_path = out.join("bundle.tar.gz");
    {
        let mut gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&tgz_path).unwrap(),
            flate2::Compression::default(),
        );
        gz.write_all(&std::fs::read(&tar_path).unwrap()).unwrap();
        gz.finish().unwrap();
    }
    let zip_path = out.join("bundle.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (rel, p) in &files {
            z.start_file(format!("{top}/{rel}"), opts).unwrap();
            z.write_all(&std::fs::read(p).unwrap()).unwrap();
        }
        z.finish().unwrap();
    }
    (tar_path, tgz_path, zip_path)
}

fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = common::raysift(args);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn strip_volatile(report: &[u8]) -> String {
    let mut v: serde_json::Value = serde_json::from_slice(report).unwrap();
    v["bundle"]["path"] = serde_json::Value::Null;
    v["stats"]["elapsed_ms"] = serde_json::Value::Null;
    v["inventory"]["container"] = serde_json::Value::Null;
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn same_output_for_every_container_and_thread_count() {
    for name in [
        "handmade-agent-died",
        "kuberay-log-missing-module",
        "troubleshoot-image-pull",
    ] {
        let dir = common::root().join("corpus").join(name);
        let out = scratch(name);
        let (tar, tgz, zip) = pack(&dir, &out);
        let reference = stdout_of(&[
            "timeline",
            dir.to_str().unwrap(),
            "--format",
            "json",
            "--threads",
            "1",
        ]);
        assert!(!reference.is_empty());
        let ref_report = strip_volatile(&stdout_of(&[
            "analyze",
            dir.to_str().unwrap(),
            "--format",
            "json",
            "--threads",
            "1",
        ]));
        for bundle in [&dir, &tar, &tgz, &zip] {
            for threads in ["1", "4"] {
                let got = stdout_of(&[
                    "timeline",
                    bundle.to_str().unwrap(),
                    "--format",
                    "json",
                    "--threads",
                    threads,
                ]);
                assert!(
                    got == reference,
                    "{name}: timeline differs for {} with {threads} threads",
                    bundle.display()
                );
                let report = strip_volatile(&stdout_of(&[
                    "analyze",
                    bundle.to_str().unwrap(),
                    "--format",
                    "json",
                    "--threads",
                    threads,
                ]));
                assert_eq!(
                    report,
                    ref_report,
                    "{name}: report differs for {} with {threads} threads",
                    bundle.display()
                );
            }
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn unreadable_bundle_exits_2_naming_it() {
    let out = common::raysift(&["analyze", "/nonexistent/bundle.tar.gz"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/bundle.tar.gz"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(common::raysift(&["analyze"]).status.code(), Some(2));
    let dir = common::root().join("corpus/handmade-agent-died");
    let out = common::raysift(&["timeline", dir.to_str().unwrap(), "--since", "yesterday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("yesterday"));
}

#[test]
fn exit_code_follows_fail_on() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let d = dir.to_str().unwrap();
    assert_eq!(common::raysift(&["analyze", d]).status.code(), Some(1));
    assert_eq!(
        common::raysift(&["analyze", d, "--fail-on", "critical"])
            .status
            .code(),
        Some(1)
    );
    let fixture = common::root().join("tests/fixtures/rules/DSH001/fires");
    // Only a benign finding: success.
    assert_eq!(
        common::raysift(&["analyze", fixture.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn timeline_filters() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let d = dir.to_str().unwrap();
    let json = String::from_utf8(stdout_of(&[
        "timeline",
        d,
        "--format",
        "json",
        "--source",
        "dashboard_agent",
        "--level",
        "warning",
    ]))
    .unwrap();
    assert!(!json.is_empty());
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["source"], "dashboard_agent");
        assert!(
            ["warning", "error", "critical"].contains(&v["level"].as_str().unwrap()),
            "{line}"
        );
        for key in [
            "ts",
            "ts_quality",
            "file",
            "line",
            "component",
            "message",
            "fields",
        ] {
            assert!(v.get(key).is_some(), "missing {key} in {line}");
        }
    }
    let grep = String::from_utf8(stdout_of(&[
        "timeline",
        d,
        "--format",
        "json",
        "--grep",
        "Exiting with SIGTERM",
    ]))
    .unwrap();
    assert!(grep.lines().count() >= 1);
    assert!(grep.lines().all(|l| l.contains("Exiting with SIGTERM")));
    // A window around the agent's exit holds the exit and nothing from an hour earlier.
    let first: serde_json::Value = serde_json::from_str(grep.lines().next().unwrap()).unwrap();
    let anchor = format!("{}:{}", first["file"].as_str().unwrap(), first["line"]);
    let around = String::from_utf8(stdout_of(&[
        "timeline", d, "--format", "json", "--around", &anchor, "--window", "30s",
    ]))
    .unwrap();
    assert!(around.contains("Exiting with SIGTERM"));
    let exit_ts = first["ts"].as_str().unwrap().to_string();
    for line in around.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let ts = v["ts"].as_str().unwrap();
        assert!(
            ts[..15] == exit_ts[..15] || ts[..13] == exit_ts[..13],
            "{ts} far from {exit_ts}"
        );
    }
}

#[test]
fn zone_of_ray_logs_is_inferred() {
    // The hand-made bundle's head runs at UTC-7: its agent log's local 09:05:59 is 16:05:59 UTC.
    let dir = common::root().join("corpus/handmade-agent-died");
    let json = String::from_utf8(stdout_of(&[
        "timeline",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--grep",
        "Exiting with SIGTERM",
    ]))
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(v["ts_quality"], "inferred_zone");
    assert!(
        v["ts"].as_str().unwrap().starts_with("2023-08-22T16:05:5"),
        "{v}"
    );
    // --tz overrides the inference.
    let json = String::from_utf8(stdout_of(&[
        "timeline",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--grep",
        "Exiting with SIGTERM",
        "--tz",
        "UTC",
    ]))
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert!(
        v["ts"].as_str().unwrap().starts_with("2023-08-22T09:05:5"),
        "{v}"
    );
}

#[test]
fn single_file_and_stdin() {
    let file = common::root().join("tests/fixtures/rules/DSH003/fires/operator.txt");
    let out = common::raysift(&["analyze", file.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["causes"][0]["id"], "network_policy_timeout");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_raysift"))
        .args(["analyze", "-", "--format", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&file).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["causes"][0]["id"], "network_policy_timeout");
}

#[test]
fn rules_command_lists_and_documents() {
    let list = String::from_utf8(common::raysift(&["rules"]).stdout).unwrap();
    assert!(list.contains("DSH004"));
    let doc = String::from_utf8(common::raysift(&["rules", "DSH004"]).stdout).unwrap();
    for h in raysift::rules::DOC_HEADINGS {
        assert!(doc.contains(h), "{h} missing from `raysift rules DSH004`");
    }
    assert_eq!(common::raysift(&["rules", "NOPE00"]).status.code(), Some(2));
}

#[test]
fn broken_user_pattern_names_file_and_key() {
    let dir = scratch("patterns");
    std::fs::write(dir.join("ZZZ001-broken.toml"), "code = \"ZZZ001\"\nid = \"x\"\nname = \"n\"\nseverity = \"fatal\"\nconfidence = 0.5\ntitle = \"t\"\nsummary = \"s\"\ndoc = \"\"\n").unwrap();
    let out = common::raysift(&["check-patterns", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ZZZ001-broken.toml") && err.contains("severity"),
        "{err}"
    );
    let builtin = common::root().join("patterns");
    let ok = common::raysift(&["check-patterns", builtin.to_str().unwrap()]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cause as the sieve comparison sees it: id, summary, evidence `(file, line)`.
type CauseKey = (String, String, Vec<(String, u64)>);

#[test]
fn sieved_analyze_finds_what_the_full_parse_finds() {
    // `analyze` parses only the records around prefilter hits; its causes and evidence must be
    // those of the full parse.
    for name in [
        "handmade-agent-died",
        "kuberay-log-missing-module",
        "troubleshoot-image-pull",
    ] {
        let dir = common::root().join("corpus").join(name);
        let out = common::raysift(&[
            "analyze",
            dir.to_str().unwrap(),
            "--format",
            "json",
            "--threads",
            "1",
        ]);
        let sieved: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let full = common::report(&dir, raysift::rules::library::builtin().unwrap());
        let full: serde_json::Value = serde_json::to_value(&full).unwrap();
        let key = |v: &serde_json::Value| -> Vec<CauseKey> {
            v["causes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let ev = c["evidence"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|e| {
                            (
                                e["file"].as_str().unwrap().to_string(),
                                e["line"].as_u64().unwrap(),
                            )
                        })
                        .collect();
                    (
                        c["id"].as_str().unwrap().to_string(),
                        c["summary"].as_str().unwrap().to_string(),
                        ev,
                    )
                })
                .collect()
        };
        assert_eq!(
            key(&sieved),
            key(&full),
            "{name}: sieved analyze differs from the full parse"
        );
    }
}

#[test]
fn hostile_files_become_diagnostics_and_the_rest_is_analysed() {
    let dir = scratch("hostile");
    std::fs::write(
        dir.join("absurd.log"),
        "2024-02-30 10:00:00,000\tINFO x.py:1 -- Feb 30\n9999-12-31 23:59:59,999\tINFO x.py:1 -- year 9999\n",
    )
    .unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(dir.join("deep.json"), deep).unwrap();
    let mut binary = vec![0u8; 4096];
    binary.extend_from_slice(b"\x7fELF");
    std::fs::write(dir.join("core.bin"), binary).unwrap();
    std::fs::write(dir.join("giant.log"), "x".repeat(3 << 20)).unwrap();
    std::fs::copy(
        common::root().join("tests/fixtures/rules/DSH003/fires/operator.txt"),
        dir.join("operator.txt"),
    )
    .unwrap();
    let out = common::raysift(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["causes"][0]["id"], "network_policy_timeout");
    let problems: Vec<String> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}: {}",
                d["file"].as_str().unwrap(),
                d["problem"].as_str().unwrap()
            )
        })
        .collect();
    let has = |file: &str, word: &str| {
        problems
            .iter()
            .any(|p| p.starts_with(file) && p.contains(word))
    };
    assert!(has("absurd.log", "impossible date-time"), "{problems:?}");
    assert!(has("core.bin", "binary"), "{problems:?}");
    assert!(has("deep.json", "deep"), "{problems:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Copies a directory tree.
fn copy_tree(from: &Path, to: &Path) {
    for (rel, p) in files_under(from) {
        let dest = to.join(&rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&p, &dest).unwrap();
    }
}

/// Evidence of a report as (file, line, text), in report order.
fn evidence(report: &[u8]) -> Vec<(String, u64, String)> {
    let v: serde_json::Value = serde_json::from_slice(report).unwrap();
    let mut out = Vec::new();
    for cause in v["causes"].as_array().unwrap() {
        for e in cause["evidence"].as_array().unwrap() {
            out.push((
                e["file"].as_str().unwrap().to_string(),
                e["line"].as_u64().unwrap(),
                e["text"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

#[test]
fn files_larger_than_a_piece_give_the_same_report_in_every_container() {
    // The operator log of a corpus bundle, padded with healthy lines so that its incident
    // straddles the first 4 MiB piece boundary and the file spans four pieces.
    let name = "handmade-agent-died";
    let src = common::root().join("corpus").join(name);
    let out = scratch("pieces");
    let dir = out.join("big-agent-died");
    copy_tree(&src, &dir);
    let log_path = dir.join("operator-log.txt");
    let original = std::fs::read_to_string(&log_path).unwrap();
    let first = "2023-08-22T15:51:02.389Z\tINFO\tsetup\tSetup manager\n";
    let last = "2023-08-22T16:09:40.000Z\tINFO\tcontrollers.RayService\tReconciling the cluster component.\n";
    let before_lines = (7 << 19) / first.len(); // about 3.5 MiB
    let mut padded = first.repeat(before_lines);
    padded.push_str(&original);
    padded.push_str(&last.repeat((5 << 20) / last.len()));
    std::fs::write(&log_path, &padded).unwrap();
    let (_, tgz, zip) = pack(&dir, &out);

    let plain = stdout_of(&["analyze", src.to_str().unwrap(), "--format", "json"]);
    let reference = stdout_of(&[
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--threads",
        "1",
    ]);
    // The same causes and evidence as the small bundle, the operator lines shifted by the
    // padding.
    let shifted: Vec<(String, u64, String)> = evidence(&plain)
        .into_iter()
        .map(|(file, line, text)| {
            let line = if file == "operator-log.txt" {
                line + before_lines as u64
            } else {
                line
            };
            (file, line, text)
        })
        .collect();
    assert_eq!(evidence(&reference), shifted);
    let reference = strip_volatile(&reference);
    for bundle in [&dir, &tgz, &zip] {
        for threads in ["1", "3"] {
            let got = strip_volatile(&stdout_of(&[
                "analyze",
                bundle.to_str().unwrap(),
                "--format",
                "json",
                "--threads",
                threads,
            ]));
            assert!(
                got == reference,
                "report differs for {} with {threads} threads",
                bundle.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
