//! The binary end to end: the same bundle as a directory, a `.tar.gz`, a `.zip` and a `.tar`,
//! with one thread and four, gives byte-identical output; exit codes follow the documented
//! contract; `timeline` filters work.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{diagnostics, files_under};
use std::io::Write;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> common::Scratch {
    common::scratch("cli", name)
}

/// Packs `dir`'s files into a tar, a tar.gz and a zip, with the paths they have under `dir`;
/// returns their paths.
fn pack(dir: &Path, out: &Path) -> (PathBuf, PathBuf, PathBuf) {
    pack_under(dir, out, "")
}

/// Packs `dir` as `<top>…` (`top` is empty or ends with `/`), the way `tar czf b.tgz name/`
/// packs a folder.
fn pack_under(dir: &Path, out: &Path, top: &str) -> (PathBuf, PathBuf, PathBuf) {
    std::fs::create_dir_all(out).unwrap();
    let files = files_under(dir);
    let tar_path = out.join("bundle.tar");
    {
        let mut b = tar::Builder::new(std::fs::File::create(&tar_path).unwrap());
        for (rel, p) in &files {
            b.append_path_with_name(p, format!("{top}{rel}")).unwrap();
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
            z.start_file(format!("{top}{rel}"), opts).unwrap();
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
        let mut ref_inventory: serde_json::Value = serde_json::from_slice(&stdout_of(&[
            "analyze",
            dir.to_str().unwrap(),
            "--inventory",
            "--format",
            "json",
            "--threads",
            "1",
        ]))
        .unwrap();
        ref_inventory["container"] = serde_json::Value::Null;
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
                let mut inventory: serde_json::Value = serde_json::from_slice(&stdout_of(&[
                    "analyze",
                    bundle.to_str().unwrap(),
                    "--inventory",
                    "--format",
                    "json",
                    "--threads",
                    threads,
                ]))
                .unwrap();
                inventory["container"] = serde_json::Value::Null;
                assert_eq!(
                    inventory,
                    ref_inventory,
                    "{name}: inventory differs for {} with {threads} threads",
                    bundle.display()
                );
            }
            // The page names the container; within one, the thread count changes nothing.
            let html = |threads: &str| {
                stdout_of(&[
                    "analyze",
                    bundle.to_str().unwrap(),
                    "--format",
                    "html",
                    "--threads",
                    threads,
                ])
            };
            assert!(
                html("1") == html("4"),
                "{name}: the HTML page differs with the thread count for {}",
                bundle.display()
            );
        }
        // Packed as `tar czf b.tgz name/` packs a folder: every path the report gives is the
        // member's whole path, the one to open after unpacking; nothing else changes.
        let (_, topped, _) = pack_under(&dir, &out.join("top"), &format!("{name}/"));
        let got = strip_volatile(&stdout_of(&[
            "analyze",
            topped.to_str().unwrap(),
            "--format",
            "json",
        ]));
        let paths: Vec<&str> = got
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                l.strip_prefix("\"file\": \"")
                    .or_else(|| l.strip_prefix("\"path\": \""))
            })
            .collect();
        assert!(!paths.is_empty(), "{name}: no path in the report");
        for p in &paths {
            assert!(
                p.starts_with(&format!("{name}/")),
                "{name}: {p} drops the top folder"
            );
        }
        assert_eq!(
            got.replace(&format!("\"{name}/"), "\"")
                .replace(&format!(" {name}/"), " "),
            ref_report,
            "{name}: a top folder changes more than the paths"
        );
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
fn a_bundle_with_nothing_readable_exits_2_not_0() {
    // Opens, but says nothing: a report with no cause would read as a healthy cluster.
    let out = scratch("nothing-readable");
    let empty = out.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let garbage = out.join("x.tar.gz");
    let random: Vec<u8> = (0u32..4096).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&garbage, &random).unwrap();
    let corrupt = out.join("y.tar.gz");
    std::fs::write(&corrupt, b"\x1f\x8b\x08\x00garbage").unwrap();
    // What is no Ray, KubeRay or Kubernetes bundle: a note, a folder of other things, random
    // bytes under a neutral name.
    let notes = out.join("notes.txt");
    std::fs::write(&notes, "hello world\nsome notes about the cluster\n").unwrap();
    let etc = out.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(etc.join("hosts"), "127.0.0.1 localhost\n::1 localhost\n").unwrap();
    std::fs::write(etc.join("motd"), "Welcome.\n").unwrap();
    let noise = out.join("noise.bin");
    std::fs::write(&noise, &random).unwrap();
    let not_ray = "not a KubeRay, Ray or Kubernetes bundle";
    for (bundle, why) in [
        (&empty, "nothing readable in the bundle"),
        (&garbage, "not an archive"),
        (&corrupt, "gzip stream unreadable"),
        (&notes, not_ray),
        (&etc, not_ray),
        (&noise, "binary content"),
    ] {
        let path = bundle.to_str().unwrap();
        let mut commands = vec![
            vec!["analyze", path],
            vec!["analyze", path, "-q"],
            vec!["analyze", path, "--format", "json"],
        ];
        // The timeline shows any text's lines; it refuses what holds none.
        if why != not_ray {
            commands.extend([
                vec!["timeline", path],
                vec!["timeline", path, "--format", "json"],
            ]);
        }
        for args in commands {
            let got = common::raysift(&args);
            assert_eq!(got.status.code(), Some(2), "{args:?}");
            assert!(got.stdout.is_empty(), "{args:?}");
            let err = String::from_utf8_lossy(&got.stderr);
            assert!(err.contains(path) && err.contains(why), "{args:?}: {err}");
        }
        // batch writes an error line for it, and says why.
        let got = common::raysift(&["batch", path]);
        let line: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
        assert_eq!(line["status"], "error", "{}", bundle.display());
        assert!(line["error"].as_str().unwrap().contains(why), "{line}");
    }
    // A pasted line the rules know is an answer, whatever its file is called.
    let pasted = out.join("ticket.txt");
    std::fs::write(
        &pasted,
        "2024-05-29T22:54:10.723Z\tERROR\tcontrollers.RayService\tFail to reconcileServe\t{\"error\": \"Put \\\"http://svc:8265/api/serve/applications/\\\": dial tcp 10.0.0.1:8265: connect: connection refused\"}\n",
    )
    .unwrap();
    let got = common::raysift(&["analyze", pasted.to_str().unwrap(), "-q"]);
    assert_ne!(
        got.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    let _ = std::fs::remove_dir_all(&out);
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
fn every_input_is_checked_with_one_line_and_exit_2() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let d = dir.to_str().unwrap();
    // A bundle with no timed event: nothing to count a relative time from.
    let untimed = common::root().join("corpus/field-autoscaler-k8s-api-refused");
    let u = untimed.to_str().unwrap();
    let scratch = scratch("checked-inputs");
    let empty = scratch.join("incident.tar.gz");
    std::fs::write(&empty, b"").unwrap();
    let e = empty.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        // Checked once the bundle is read.
        (
            &["timeline", d, "--around", "dashboard_agent.log:9999"],
            "--around head-logs/dashboard_agent.log:9999: the file has 157 lines",
        ),
        (
            &["timeline", d, "--source", "nosuch*"],
            "--source \"nosuch*\" matches no file of the bundle",
        ),
        (
            &["timeline", d, "--since", "2030-01-01", "--until", "16:00"],
            "--since \"2030-01-01\" (2030-01-01T00:00:00.000Z) is after --until \"16:00\" (2023-08-22T16:00:00.000Z)",
        ),
        (
            &["timeline", u, "--since", "10m"],
            "--since \"10m\": the bundle has no capture time to count from",
        ),
        (&["analyze", e], "empty file: incident.tar.gz holds no bytes"),
        // Checked before it is read.
        (
            &["timeline", d, "--since", "2023-08-23", "--until", "2023-08-22"],
            "is after --until \"2023-08-22\"",
        ),
        (
            &["timeline", d, "--window", "30s"],
            "--window 30s is the half-width of the --around window",
        ),
        (&["timeline", d, "--around", "raylet.out:0"], "lines are counted from 1"),
        (&["timeline", d, "--window", "soon", "--around", "16:05"], "--window \"soon\" is not a duration"),
        (&["batch", d, "--top", "0"], "--top 0 would list no cause"),
        (&["batch", d, "--fail-on", "info"], "--fail-on info can never fire"),
        (&["analyze", d, "--fail-on", "info"], "--fail-on info can never fire"),
        (
            &["analyze", d, "-q", "--format", "json"],
            "--quiet prints one line of text: it cannot be combined with --format json",
        ),
        (
            &["analyze", d, "--inventory", "-q"],
            "--inventory and --quiet ask for different outputs",
        ),
    ];
    for (args, said) in cases {
        let out = common::raysift(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    // A glob that matches nothing beside one that matches: the result still means something,
    // so a warning, and the events of the other.
    let out = common::raysift(&[
        "timeline",
        d,
        "--source",
        "nosuch*",
        "--source",
        "dashboard_agent",
        "--level",
        "error",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("raysift: warning: --source \"nosuch*\" matches no file"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("dashboard_agent.log:"));
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The `ts` of each JSON timeline line.
fn times(json: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(json)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["ts"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn forgiving_times_aliases_and_short_flags() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let d = dir.to_str().unwrap();
    // A clock time is on the capture date (2023-08-22); `warn` is `warning`; -f is --format.
    let json = stdout_of(&[
        "timeline", d, "-f", "json", "--level", "warn", "--since", "16:05", "--until", "16:06",
    ]);
    let ts = times(&json);
    assert!(!ts.is_empty());
    assert!(
        ts.iter().all(
            |t| t.as_str() >= "2023-08-22T16:05:00" && t.as_str() <= "2023-08-22T16:06:00.000Z"
        ),
        "{ts:?}"
    );
    for line in String::from_utf8_lossy(&json).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(["warning", "error", "critical"].contains(&v["level"].as_str().unwrap()));
    }
    // 10m before the capture time (the newest log time, 16:09:39.209), a window in ms.
    let ts = times(&stdout_of(&["timeline", d, "-f", "json", "--since", "10m"]));
    assert!(
        !ts.is_empty() && ts.iter().all(|t| t.as_str() >= "2023-08-22T15:59:39.209Z"),
        "{ts:?}"
    );
    let ts = times(&stdout_of(&[
        "timeline",
        d,
        "-f",
        "json",
        "--around",
        "16:05:59.5",
        "--window",
        "500ms",
    ]));
    assert!(!ts.is_empty());
    assert!(
        ts.iter().all(|t| t.starts_with("2023-08-22T16:05:59")),
        "{ts:?}"
    );
    // A date alone is the whole day, as --since and as --until.
    let ts = times(&stdout_of(&[
        "timeline",
        d,
        "-f",
        "json",
        "--since",
        "2023-08-22",
        "--until",
        "2023-08-22",
        "--level",
        "error",
    ]));
    assert!(
        !ts.is_empty() && ts.iter().all(|t| t.starts_with("2023-08-22T")),
        "{ts:?}"
    );
    // `analyse`, -o and -f, --fail-on warn.
    let scratch = scratch("aliases");
    let out_file = scratch.join("report.md");
    let out = common::raysift(&[
        "analyse",
        d,
        "-f",
        "markdown",
        "-o",
        out_file.to_str().unwrap(),
        "--fail-on",
        "warn",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(&out_file).unwrap();
    assert!(md.starts_with("# raysift report") && md.contains("dashboard_agent_died_after_deploy"));
    let _ = std::fs::remove_dir_all(&scratch);
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

/// Selected by level alone, the timeline reads the records below the level light
/// (`parse::Detail::AtLeast`); `--grep ''`, which matches everything, reads every record
/// whole. Both print the same, in both formats, on every corpus bundle.
#[test]
fn timeline_by_level_reads_light_and_prints_what_a_whole_read_prints() {
    let bundles = common::corpus_bundles();
    let mut lines = 0;
    for b in &bundles {
        let d = b.to_str().unwrap();
        for (level, format) in [("error", "text"), ("warning", "json")] {
            let args = ["timeline", d, "--level", level, "--format", format];
            let light = stdout_of(&args);
            let whole = stdout_of(&[&args[..], &["--grep", ""]].concat());
            assert_eq!(
                String::from_utf8_lossy(&light),
                String::from_utf8_lossy(&whole),
                "{d} --level {level}"
            );
            lines += light.split(|&c| c == b'\n').count();
        }
    }
    assert!(lines > 500, "{lines} lines selected in all");
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
        let errors = common::schema_errors("timeline", &v);
        assert!(errors.is_empty(), "{line}: {errors:#?}");
        let ts = v["ts"].as_str().unwrap();
        assert!(
            ts[..15] == exit_ts[..15] || ts[..13] == exit_ts[..13],
            "{ts} far from {exit_ts}"
        );
    }
}

// Issue 31, point 11: a YAML block scalar's one line said only `message: |-`.
#[test]
fn one_line_shows_a_yaml_block_scalar_by_its_key_and_text() {
    let dir = common::root().join("corpus/kuberay-log-missing-module");
    let text = String::from_utf8(stdout_of(&[
        "timeline",
        dir.to_str().unwrap(),
        "--oneline",
        "--source",
        "rayservice.yaml",
    ]))
    .unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("rayservice.yaml:105 "))
        .unwrap();
    assert!(
        line.ends_with("message: Deploying app 'search' failed with exception: (+16 lines)"),
        "{line}"
    );
    assert!(!text.contains(": |-"), "{text}");
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
    // A zone the user gave is said to be given, not inferred.
    assert_eq!(v["ts_quality"], "given_zone");
}

/// Every evidence line of every cause and symptom of a JSON report.
fn all_evidence(report: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for c in report["causes"].as_array().into_iter().flatten() {
        out.extend(c["evidence"].as_array().into_iter().flatten().cloned());
        for s in c["symptoms"].as_array().into_iter().flatten() {
            out.extend(s["evidence"].as_array().into_iter().flatten().cloned());
        }
    }
    out
}

fn analyze_text(dir: &std::path::Path, format: &str, more: &[&str]) -> String {
    let mut args = vec!["analyze", dir.to_str().unwrap(), "--format", format];
    args.extend_from_slice(more);
    String::from_utf8(stdout_of(&args)).unwrap()
}

#[test]
fn a_zone_given_with_tz_is_reported_as_given() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let v: serde_json::Value =
        serde_json::from_str(&analyze_text(&dir, "json", &["--tz", "-07:00"])).unwrap();
    let agent: Vec<_> = all_evidence(&v)
        .into_iter()
        .filter(|e| e["file"].as_str().unwrap().ends_with("dashboard_agent.log"))
        .collect();
    assert!(!agent.is_empty(), "{v}");
    for e in &agent {
        assert_eq!(e["ts_quality"], "given_zone", "{e}");
    }
    assert!(all_evidence(&v)
        .iter()
        .all(|e| e["ts_quality"] != "inferred_zone"));
    for z in v["inventory"]["zones"].as_array().unwrap() {
        assert_eq!(z["quality"], "given_zone", "{z}");
    }
    let inventory = String::from_utf8(stdout_of(&[
        "analyze",
        dir.to_str().unwrap(),
        "--inventory",
        "--tz",
        "-07:00",
    ]))
    .unwrap();
    assert!(
        inventory.contains("UTC-07:00  given_zone  7 files: given with --tz"),
        "{inventory}"
    );
    // Without --tz the same files' zone is inferred, and every evidence line says how.
    let v: serde_json::Value = serde_json::from_str(&analyze_text(&dir, "json", &[])).unwrap();
    let qualities: std::collections::BTreeSet<String> = all_evidence(&v)
        .iter()
        .map(|e| e["ts_quality"].as_str().unwrap().to_string())
        .collect();
    assert!(qualities.contains("inferred_zone"), "{qualities:?}");
    assert!(qualities.contains("exact"), "{qualities:?}");
}

#[test]
fn times_from_kubectl_ages_are_marked_approximate() {
    // Events and pod tables give ages (`7m38s`), anchored to the newest log time.
    let dir = common::root().join("corpus/handmade-head-image-pull");
    let v: serde_json::Value = serde_json::from_str(&analyze_text(&dir, "json", &[])).unwrap();
    let pull = all_evidence(&v)
        .into_iter()
        .find(|e| e["file"] == "describe-head-pod.txt" && e["line"] == 88)
        .expect("the ErrImagePull event is evidence");
    assert_eq!(pull["ts_quality"], "approximate");
    // The JSON keeps the computed time; the reports show it to the second, marked.
    let ts = pull["ts"].as_str().unwrap();
    let shown = format!("~{}Z", &ts[..ts.find('.').unwrap()]);
    let legend = "~ marks a time computed from a kubectl age";
    for format in ["text", "markdown", "html"] {
        let out = analyze_text(&dir, format, &[]);
        assert!(out.contains(&shown), "{format}: {shown} not in\n{out}");
        assert!(!out.contains(ts), "{format}: {ts} shown unmarked");
        assert!(out.contains(legend), "{format}: no legend");
        assert!(
            !out.contains("? marks"),
            "{format}: legend for marks not shown"
        );
    }
    // Evidence with exact times only: nothing marked, no legend (the header still names the
    // files whose zone was assumed, which no evidence comes from).
    let text = analyze_text(
        &common::root().join("corpus/cluster-info-dump-constructor-error"),
        "text",
        &[],
    );
    assert!(!text.contains("Times:") && !text.contains("Z? "), "{text}");
    assert!(text.contains("Zone assumed: "), "{text}");
}

/// The evidence lines of a report whose text holds `needle`, as (time, quality).
fn evidence_times(report: &serde_json::Value, needle: &str) -> Vec<(String, String)> {
    all_evidence(report)
        .iter()
        .filter(|e| e["text"].as_str().unwrap_or("").contains(needle))
        .map(|e| (e["ts"].to_string(), e["ts_quality"].to_string()))
        .collect()
}

/// The `timeline --format json` events of `file` at `line`, as (time, quality).
fn timeline_times(bundle: &Path, file: &str, line: u64) -> Vec<(String, String)> {
    let out = String::from_utf8(stdout_of(&[
        "timeline",
        bundle.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["file"].as_str().unwrap().ends_with(file) && e["line"] == line)
        .map(|e| (e["ts"].to_string(), e["ts_quality"].to_string()))
        .collect()
}

/// Issue 31: the head's OOM kill is evidence from its container's `lastState`, which carries
/// its own `finishedAt`: the evidence and the timeline show that time, exact.
#[test]
fn object_evidence_takes_its_own_time() {
    let dir = common::root().join("corpus/troubleshoot-head-oom-killed");
    let v: serde_json::Value = serde_json::from_str(&analyze_text(&dir, "json", &[])).unwrap();
    let finished = vec![(
        "\"2024-06-12T10:31:40.000Z\"".to_string(),
        "\"exact\"".to_string(),
    )];
    assert_eq!(v["causes"][0]["id"], "oom_killed", "{v}");
    assert_eq!(evidence_times(&v, "\"exitCode\": 137"), finished.clone());
    assert_eq!(evidence_times(&v, "\"OOMKilled\""), finished.clone());
    let pods = "cluster-resources/pods/data.json";
    assert_eq!(timeline_times(&dir, pods, 110), finished.clone());
    assert_eq!(timeline_times(&dir, pods, 111), finished);
    let text = analyze_text(&dir, "text", &[]);
    assert!(
        text.contains("pods/data.json:110 2024-06-12T10:31:40.000Z \"exitCode\": 137"),
        "{text}"
    );
}

/// Issue 31, the other ways an object comes: `kubectl get -o yaml` and `kubectl describe`
/// (whose times carry the offset of the machine that ran it) give the same time; a container
/// whose state has no time of its own stays untimed and borrows nothing from its neighbour.
#[test]
fn object_evidence_takes_its_own_time_in_yaml_and_describe() {
    const POD_YAML: &str = r#"apiVersion: v1
kind: Pod
metadata:
  labels:
    ray.io/cluster: analytics-cluster
    ray.io/node-type: head
  name: analytics-cluster-head-7x2kp
  namespace: data
status:
  containerStatuses:
  - lastState:
      terminated:
        exitCode: 137
        finishedAt: "2024-06-12T10:31:40Z"
        reason: OOMKilled
        startedAt: "2024-06-12T10:00:04Z"
    name: ray-head
    restartCount: 1
    state:
      running:
        startedAt: "2024-06-12T10:31:43Z"
  - lastState:
      terminated:
        exitCode: 1
        reason: Error
    name: autoscaler
    restartCount: 3
  phase: Running
"#;
    const POD_DESCRIBE: &str = "Name:             analytics-cluster-head-7x2kp
Namespace:        data
Start Time:       Wed, 12 Jun 2024 18:00:02 +0800
Labels:           ray.io/cluster=analytics-cluster
                  ray.io/node-type=head
Status:           Running
IP:               10.244.1.15
Containers:
  ray-head:
    State:          Running
      Started:      Wed, 12 Jun 2024 18:31:43 +0800
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
      Started:      Wed, 12 Jun 2024 18:00:04 +0800
      Finished:     Wed, 12 Jun 2024 18:31:40 +0800
    Ready:          False
    Restart Count:  1
  autoscaler:
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
    Ready:          False
    Restart Count:  3
QoS Class:        Burstable
Events:           <none>
";
    let finished = vec![(
        "\"2024-06-12T10:31:40.000Z\"".to_string(),
        "\"exact\"".to_string(),
    )];
    let untimed = vec![("null".to_string(), "\"none\"".to_string())];
    // (file, text, the exit code's line, the untimed exit code's line)
    for (file, text, exit_137, exit_1) in [
        ("head-pod.yaml", POD_YAML, 13, 24),
        ("describe-head-pod.txt", POD_DESCRIBE, 14, 24),
    ] {
        let dir = scratch(file);
        std::fs::write(dir.join(file), text).unwrap();
        let v: serde_json::Value = serde_json::from_str(&analyze_text(&dir, "json", &[])).unwrap();
        assert_eq!(v["causes"][0]["id"], "oom_killed", "{file}: {v}");
        assert_eq!(evidence_times(&v, "137"), finished.clone(), "{file}");
        assert_eq!(
            timeline_times(&dir, file, exit_137),
            finished.clone(),
            "{file}"
        );
        assert_eq!(
            timeline_times(&dir, file, exit_1),
            untimed.clone(),
            "{file}"
        );
    }
}

#[test]
fn zone_less_logs_without_zone_evidence_are_marked_assumed() {
    let dir = common::root().join("corpus/session-logs-worker-node-marked-dead");
    let v: serde_json::Value = serde_json::from_str(&analyze_text(&dir, "json", &[])).unwrap();
    let first = all_evidence(&v)
        .into_iter()
        .find(|e| e["file"] == "head-logs/gcs_server.out")
        .expect("the GCS log is evidence");
    assert_eq!(first["ts_quality"], "assumed_utc");
    let shown = format!("{}?", first["ts"].as_str().unwrap());
    let header = "Zone assumed: 3 files write times without a zone and nothing in the bundle shows which, so they are read as UTC (set it with --tz): head-logs/gcs_server.out, head-logs/job-driver-raysubmit_Hc4nP8wQ2zL6vK1s.log, worker-logs/raylet.out.";
    for format in ["text", "markdown", "html"] {
        let out = analyze_text(&dir, format, &[]);
        assert!(out.contains(&shown), "{format}: {shown} not in\n{out}");
        assert!(out.contains(header), "{format}: no header in\n{out}");
        assert!(
            out.contains("? marks a time written without a zone and read as UTC"),
            "{format}: no legend"
        );
    }
    // A zone given with --tz is no assumption: no header, no mark.
    let text = analyze_text(&dir, "text", &["--tz", "+00:00"]);
    assert!(
        !text.contains("Zone assumed") && !text.contains(&shown),
        "{text}"
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
    // Every problem of every file in one run, each with file, line and key: here the rule's
    // severity, a file not named after its code, and a copy of a built-in rule with a bad
    // regex and a summary placeholder naming no signal.
    std::fs::write(dir.join("ZZZ001-broken.toml"), "code = \"ZZZ001\"\nid = \"x\"\nname = \"n\"\nseverity = \"fatal\"\nconfidence = 0.5\ntitle = \"t\"\nsummary = \"s\"\ndoc = \"\"\n").unwrap();
    let dsh = std::fs::read_to_string(
        common::root().join("patterns/DSH004-get-refused-after-successful-put.toml"),
    )
    .unwrap()
    .replace("{count:get_refused}", "{count:nosuch}")
    .replacen("text = [", "text = ['(unclosed', ", 1);
    std::fs::write(dir.join("dsh004.toml"), &dsh).unwrap();
    let out = common::raysift(&["check-patterns", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let line_of = |needle: &str| dsh.lines().position(|l| l.contains(needle)).unwrap() + 1;
    for want in [
        "ZZZ001-broken.toml:4: severity: ".to_string(),
        format!(
            "dsh004.toml:{}: code: the file name must start",
            line_of("code =")
        ),
        format!(
            "dsh004.toml:{}: summary: {{count:nosuch}}",
            line_of("nosuch")
        ),
        format!(
            "dsh004.toml:{}: signal[0].text[0]: bad regex",
            line_of("(unclosed")
        ),
        "problems in 2 files".to_string(),
    ] {
        assert!(err.contains(&want), "{want:?} missing from:\n{err}");
    }
    // A misspelt required key hides nothing: the key is named as unknown, the missing one as
    // missing (with its table's line), and the bad regex and the placeholder are still found.
    let misspelt = dsh.replacen("severity =", "severty =", 1);
    std::fs::write(dir.join("dsh004.toml"), &misspelt).unwrap();
    std::fs::remove_file(dir.join("ZZZ001-broken.toml")).unwrap();
    let out = common::raysift(&["check-patterns", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for want in [
        format!(
            "dsh004.toml:{}: severty: unknown key",
            line_of("severity =")
        ),
        "dsh004.toml:1: severity: missing key \"severity\"".to_string(),
        format!(
            "dsh004.toml:{}: summary: {{count:nosuch}}",
            line_of("nosuch")
        ),
        format!(
            "dsh004.toml:{}: signal[0].text[0]: bad regex",
            line_of("(unclosed")
        ),
    ] {
        assert!(err.contains(&want), "{want:?} missing from:\n{err}");
    }
    std::fs::write(dir.join("ZZZ001-broken.toml"), "code = \"ZZZ001\"\nid = \"x\"\nname = \"n\"\nseverity = \"fatal\"\nconfidence = 0.5\ntitle = \"t\"\nsummary = \"s\"\ndoc = \"\"\n").unwrap();
    // One file alone is checked too; an empty directory is an error, for --patterns as well.
    let one = dir.join("ZZZ001-broken.toml");
    let out = common::raysift(&["check-patterns", one.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let empty = scratch("patterns-empty");
    for args in [
        vec!["check-patterns", empty.to_str().unwrap()],
        vec!["rules", "--patterns", empty.to_str().unwrap()],
    ] {
        let out = common::raysift(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no pattern file"),
            "{args:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&empty);
    let builtin = common::root().join("patterns");
    let ok = common::raysift(&["check-patterns", builtin.to_str().unwrap()]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let dsh004 = builtin.join("DSH004-get-refused-after-successful-put.toml");
    let ok = common::raysift(&["check-patterns", dsh004.to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cause as the sieve comparison sees it: id, summary, evidence `(file, line)`.
type CauseKey = (String, String, Vec<(String, u64)>);

/// Checks that `analyze` (which parses only the records around prefilter hits) gives the
/// causes and evidence of the full parse of `dir`.
fn assert_sieve_matches_full_parse(dir: &Path) {
    let out = common::raysift(&[
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--threads",
        "1",
    ]);
    let sieved: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let full = common::full_report(dir);
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
        "{}: sieved analyze differs from the full parse",
        dir.display()
    );
    // The bundle-level numbers do not depend on how much the sieve parsed.
    for what in ["files", "bytes", "lines", "window"] {
        assert_eq!(
            sieved["inventory"][what],
            full["inventory"][what],
            "{}: the sieved report's {what} differs from the full parse's",
            dir.display()
        );
    }
}

#[test]
fn sieved_analyze_finds_what_the_full_parse_finds() {
    let dirs = common::corpus_bundles();
    assert!(dirs.len() > 30);
    for dir in dirs {
        assert_sieve_matches_full_parse(&dir);
    }
}

#[test]
fn the_sieve_ignores_case_as_the_rules_do() {
    // Rule regexes match without regard to case unless a rule says otherwise: a message in
    // another case must still reach them through the sieve.
    let out = scratch("sieve-case");
    let dir = out.join("agent-died-shouting");
    copy_tree(&common::root().join("corpus/handmade-agent-died"), &dir);
    let log = dir.join("operator-log.txt");
    let text = std::fs::read_to_string(&log)
        .unwrap()
        .replace("connect: connection refused", "CONNECT: Connection Refused")
        .replace("Cached Serve config", "cached SERVE CONFIG");
    std::fs::write(&log, text).unwrap();
    assert_sieve_matches_full_parse(&dir);
    let report = stdout_of(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&report).unwrap();
    assert_eq!(v["causes"][0]["id"], "dashboard_agent_died_after_deploy");
    let _ = std::fs::remove_dir_all(&out);
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
    // straddles a piece boundary (pieces are 2 MiB) and the file spans several pieces.
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

/// An archive folder for `raysift batch`: three corpus bundles packed three ways (one in a
/// sub-folder), a garbage file named like an archive, and a file that is not listed.
fn batch_archive(test: &str) -> common::Scratch {
    let archive = scratch(&format!("{test}-archive"));
    std::fs::create_dir_all(archive.join("2024")).unwrap();
    for (name, pick, dest) in [
        ("handmade-agent-died", 1, "handmade-agent-died.tar.gz"),
        (
            "kuberay-log-missing-module",
            2,
            "2024/kuberay-log-missing-module.zip",
        ),
        ("troubleshoot-image-pull", 0, "troubleshoot-image-pull.tar"),
    ] {
        let packed = scratch(&format!("{test}-pack-{name}"));
        let (tar, tgz, zip) = pack(&common::root().join("corpus").join(name), &packed);
        let from = [tar, tgz, zip][pick].clone();
        std::fs::rename(from, archive.join(dest)).unwrap();
        let _ = std::fs::remove_dir_all(&packed);
    }
    let garbage: Vec<u8> = (0u32..4096).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(archive.join("x.tar.gz"), garbage).unwrap();
    std::fs::write(archive.join("notes.txt"), "not a bundle: not listed\n").unwrap();
    archive
}

/// Runs `raysift batch`; checks it writes nothing to standard error (no progress bar on a
/// pipe) and exits 2 exactly when a line it wrote is an error (0 otherwise); returns
/// standard output.
fn batch_stdout(args: &[&str]) -> String {
    let mut all = vec!["batch"];
    all.extend_from_slice(args);
    let out = common::raysift(&all);
    let text = String::from_utf8_lossy(&out.stdout);
    let errors = text.lines().any(|l| l.contains(r#""status":"error""#));
    let to_file = args.contains(&"--out");
    if !to_file {
        assert_eq!(
            out.status.code(),
            Some(if errors { 2 } else { 0 }),
            "{all:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        out.stderr.is_empty(),
        "{all:?} wrote to stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn batch_lines(ndjson: &str) -> Vec<serde_json::Value> {
    ndjson
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn line_paths(ndjson: &str) -> Vec<String> {
    batch_lines(ndjson)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn batch_writes_one_line_per_bundle_with_the_corpus_causes() {
    let archive = batch_archive("batch-lines");
    let a = archive.to_str().unwrap();
    let lines = batch_lines(&batch_stdout(&[a, "--jobs", "2"]));
    let paths: Vec<&str> = lines.iter().map(|v| v["path"].as_str().unwrap()).collect();
    let want: Vec<String> = [
        "2024/kuberay-log-missing-module.zip",
        "handmade-agent-died.tar.gz",
        "troubleshoot-image-pull.tar",
        "x.tar.gz",
    ]
    .iter()
    .map(|f| archive.join(f).display().to_string())
    .collect();
    assert_eq!(paths, want, "sorted by path, notes.txt not listed");
    for v in &lines {
        let errors = common::schema_errors("batch", v);
        assert!(errors.is_empty(), "{v}: {errors:#?}");
        let path = PathBuf::from(v["path"].as_str().unwrap());
        assert_eq!(
            v["bundle_bytes"].as_u64().unwrap(),
            std::fs::metadata(&path).unwrap().len(),
            "{v}"
        );
        assert!(v["elapsed_ms"].is_u64(), "{v}");
        if path.ends_with("x.tar.gz") {
            assert_eq!(v["status"], "error", "{v}");
            assert_eq!(v["exit"], 2, "{v}");
            assert_eq!(v["causes"], serde_json::json!([]), "{v}");
            assert!(
                v["error"].as_str().unwrap().contains("not an archive"),
                "{v}"
            );
            continue;
        }
        assert_eq!(v["status"], "ok", "{v}");
        assert!(v.get("error").is_none(), "{v}");
        // What `raysift analyze` exits with: every one of these has a failing cause.
        assert_eq!(v["exit"], 1, "{v}");
        let file = path.file_name().unwrap().to_str().unwrap();
        let name = file.split('.').next().unwrap();
        let toml_text =
            std::fs::read_to_string(common::root().join(format!("corpus/{name}.toml"))).unwrap();
        let expect: toml::Value = toml::from_str(&toml_text).unwrap();
        let expected: Vec<&str> = expect["expected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap())
            .collect();
        let causes = v["causes"].as_array().unwrap();
        assert!(!causes.is_empty() && causes.len() <= 5, "{v}");
        assert_eq!(causes[0]["id"], expected[0], "{name}: top cause");
        for c in causes {
            for key in ["id", "severity", "confidence", "title"] {
                assert!(c.get(key).is_some(), "{key} missing: {c}");
            }
            // The open world's generic findings may follow the expected causes.
            let generic = raysift::open_world::is_generic(c["id"].as_str().unwrap());
            if c["severity"] != "info" && !generic {
                assert!(
                    expected.contains(&c["id"].as_str().unwrap()),
                    "{name}: unexpected {c}"
                );
            }
        }
    }
    // --top limits the causes, and what --summary counts agrees with the lines.
    let out = common::raysift(&["batch", a, "--top", "1", "--summary"]);
    assert_eq!(out.status.code(), Some(2), "x.tar.gz is no archive");
    // Each line names the first object of its first cause, and when the incident began.
    let first = batch_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .find(|l| {
            l["path"]
                .as_str()
                .unwrap()
                .ends_with("handmade-agent-died.tar.gz")
        })
        .unwrap();
    assert!(
        first["object"].as_str().unwrap().starts_with("RayService "),
        "{first}"
    );
    assert!(first["at"].as_str().unwrap().starts_with("20"), "{first}");
    let lines = batch_lines(&String::from_utf8(out.stdout).unwrap());
    assert!(lines
        .iter()
        .all(|v| v["causes"].as_array().unwrap().len() <= 1));
    let summary = String::from_utf8(out.stderr).unwrap();
    let rows = summary.lines().skip(1).take_while(|l| !l.is_empty());
    for row in rows.filter(|l| !l.starts_with("(no cause)")) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        let listed = lines
            .iter()
            .filter(|v| {
                v["causes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["id"] == cols[0])
            })
            .count();
        assert_eq!(cols[2], listed.to_string(), "{summary}");
    }
    // --min-severity drops the benign ones.
    let lines = batch_lines(&batch_stdout(&[a, "--min-severity", "warning"]));
    assert!(lines
        .iter()
        .flat_map(|v| v["causes"].as_array().unwrap())
        .all(|c| c["severity"] != "info"));
    let _ = std::fs::remove_dir_all(&archive);
}

/// The lines with the one field that may vary (`elapsed_ms`, always last) cut off.
fn without_elapsed(ndjson: &str) -> String {
    ndjson
        .lines()
        .map(|l| {
            let cut = l.rfind(",\"elapsed_ms\":").unwrap();
            format!("{}\n", &l[..cut])
        })
        .collect()
}

#[test]
fn batch_output_does_not_depend_on_jobs() {
    let archive = batch_archive("batch-jobs");
    let a = archive.to_str().unwrap();
    let one = without_elapsed(&batch_stdout(&[a, "--jobs", "1"]));
    let three = without_elapsed(&batch_stdout(&[a, "--jobs", "3"]));
    assert_eq!(one.lines().count(), 4);
    assert_eq!(one, three);
    let _ = std::fs::remove_dir_all(&archive);
}

#[test]
fn batch_shards_partition_the_bundles() {
    let archive = batch_archive("batch-shards");
    let a = archive.to_str().unwrap();
    let all = line_paths(&batch_stdout(&[a, "--jobs", "2"]));
    for n in [2, 3] {
        let mut union = Vec::new();
        for i in 0..n {
            let shard = format!("{i}/{n}");
            let part = line_paths(&batch_stdout(&[a, "--shard", &shard]));
            union.extend(part);
        }
        let count = union.len();
        union.sort();
        union.dedup();
        assert_eq!(union.len(), count, "shards of {n} overlap");
        assert_eq!(union, all, "shards of {n} miss a bundle");
    }
    for bad in ["2/2", "0/0", "x", "1/"] {
        let out = common::raysift(&["batch", a, "--shard", bad]);
        assert_eq!(out.status.code(), Some(2), "--shard {bad}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--shard"), "{err}");
    }
    let out = common::raysift(&["batch", a, "--jobs", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&archive);
}

#[test]
fn batch_skip_done_skips_ok_bundles_and_retries_errors() {
    let archive = batch_archive("batch-skip");
    let a = archive.to_str().unwrap();
    let dir = scratch("batch-skip-done");
    let results = dir.join("results.ndjson");
    let r = results.to_str().unwrap();
    assert_eq!(batch_stdout(&[a, "--out", r, "--skip-done", r]), "");
    let first = std::fs::read_to_string(&results).unwrap();
    assert_eq!(first.lines().count(), 4);
    // A run killed while writing leaves a cut last line.
    let mut cut = first.clone();
    cut.push_str("{\"path\":\"");
    cut.push_str(a);
    std::fs::write(&results, &cut).unwrap();
    let retried = batch_stdout(&[a, "--skip-done", r]);
    let paths = line_paths(&retried);
    assert_eq!(paths.len(), 1, "{retried}");
    assert!(paths[0].ends_with("x.tar.gz"), "{retried}");
    // The same file as --out and --skip-done: appended to, the cut line removed.
    assert_eq!(batch_stdout(&[a, "--skip-done", r, "--out", r]), "");
    let after = std::fs::read_to_string(&results).unwrap();
    assert_eq!(after.lines().count(), 5, "{after}");
    assert!(after.starts_with(&first), "{after}");
    assert_eq!(
        without_elapsed(&after[first.len()..]),
        without_elapsed(&retried)
    );
    batch_lines(&after);
    // Another --out is created afresh: only what this run analysed.
    let other = dir.join("other.ndjson");
    batch_stdout(&[a, "--skip-done", r, "--out", other.to_str().unwrap()]);
    assert_eq!(line_paths(&std::fs::read_to_string(&other).unwrap()), paths);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&archive);
}

#[test]
fn batch_summary_counts_bundles_per_cause() {
    let archive = batch_archive("batch-summary");
    let a = archive.to_str().unwrap();
    let dir = scratch("batch-summary");
    let results = dir.join("results.ndjson");
    // With --out, the summary is standard output.
    let summary = batch_stdout(&[a, "--summary", "--out", results.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&results).unwrap().lines().count(),
        4
    );
    let rows: Vec<Vec<&str>> = summary
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| !l.starts_with("(no cause)"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["cause", "severity", "first", "bundles"]);
    assert!(
        rows.contains(&vec![
            "dashboard_agent_died_after_deploy",
            "critical",
            "1",
            "1"
        ]),
        "{summary}"
    );
    assert!(
        rows.contains(&vec!["dashboard_startup_transient", "info", "0", "2"]),
        "{summary}"
    );
    assert!(
        rows.contains(&vec!["image_pull_failure", "error", "1", "1"]),
        "{summary}"
    );
    // The gravest first; within a severity, the causes that led the most bundles, then by
    // bundles, then id: a root cause is never below the generic findings beside it.
    let rank = |s: &str| {
        ["critical", "error", "warning", "info"]
            .iter()
            .position(|x| *x == s)
    };
    let counts: Vec<_> = rows[1..]
        .iter()
        .map(|r| {
            (
                rank(r[1]).unwrap(),
                std::cmp::Reverse(r[2].parse::<u32>().unwrap()),
                std::cmp::Reverse(r[3].parse::<u32>().unwrap()),
                r[0],
            )
        })
        .collect();
    let mut sorted = counts.clone();
    sorted.sort();
    assert_eq!(counts, sorted);
    assert!(summary.contains("\nfailed bundles\n"), "{summary}");
    assert!(
        summary
            .lines()
            .any(|l| l.contains("x.tar.gz: not an archive")),
        "{summary}"
    );
    assert!(
        summary.contains("4 bundles: 3 ok, 1 error, 0 skipped as done;"),
        "{summary}"
    );
    // Without --out, standard output holds only the lines; the summary is on stderr. A
    // bundle that could not be analysed makes the run exit 2.
    let out = common::raysift(&["batch", a, "--summary"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        batch_lines(&String::from_utf8(out.stdout).unwrap()).len(),
        4
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("4 bundles: 3 ok, 1 error"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&archive);
}

#[test]
fn batch_expands_quoted_patterns_and_reports_missing_inputs() {
    let archive = batch_archive("batch-glob");
    let a = archive.to_str().unwrap();
    let got = line_paths(&batch_stdout(&[
        &format!("{a}/*.tar*"),
        &format!("{a}/20??/*.zip"),
        &format!("{a}/nothing-*.zip"),
        "/nonexistent/incident.tar.gz",
    ]));
    let want: Vec<String> = [
        "/nonexistent/incident.tar.gz".to_string(),
        format!("{a}/2024/kuberay-log-missing-module.zip"),
        format!("{a}/handmade-agent-died.tar.gz"),
        format!("{a}/nothing-*.zip"),
        format!("{a}/troubleshoot-image-pull.tar"),
        format!("{a}/x.tar.gz"),
    ]
    .to_vec();
    assert_eq!(got, want);
    let lines = batch_lines(&batch_stdout(&[
        "/nonexistent/incident.tar.gz",
        &format!("{a}/nothing-*.zip"),
    ]));
    for v in &lines {
        assert_eq!(
            (v["status"].as_str(), v["exit"].as_u64()),
            (Some("error"), Some(2))
        );
    }
    assert!(lines[0]["error"]
        .as_str()
        .unwrap()
        .contains("/nonexistent/incident.tar.gz"));
    assert_eq!(lines[1]["error"], "no file matches");
    let _ = std::fs::remove_dir_all(&archive);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// The first expected cause of a corpus bundle.
fn corpus_top_cause(name: &str) -> String {
    let text = std::fs::read_to_string(common::root().join(format!("corpus/{name}.toml"))).unwrap();
    let expect: toml::Value = toml::from_str(&text).unwrap();
    expect["expected"][0].as_str().unwrap().to_string()
}

#[test]
fn batch_takes_each_unpacked_bundle_folder_of_a_corpus_as_one_bundle() {
    // A shelf as people keep them: unpacked bundles of three layouts (files at the top; only
    // sub-folders; a Troubleshoot folder wrapped in another), a README and notes beside them.
    let shelf = scratch("batch-corpus-shelf");
    let names = [
        "handmade-agent-died",
        "session-logs-worker-node-marked-dead",
        "troubleshoot-image-pull",
    ];
    for name in names {
        copy_tree(&common::root().join("corpus").join(name), &shelf.join(name));
    }
    std::fs::write(shelf.join("README.md"), "# Incidents\n\nOne folder each.\n").unwrap();
    std::fs::write(shelf.join("notes.txt"), "ask about the upgrade\n").unwrap();
    let s = shelf.to_str().unwrap();
    let lines = batch_lines(&batch_stdout(&[s, "--jobs", "2"]));
    let paths: Vec<&str> = lines.iter().map(|v| v["path"].as_str().unwrap()).collect();
    let want: Vec<String> = names
        .iter()
        .map(|n| shelf.join(n).display().to_string())
        .collect();
    assert_eq!(paths, want, "one line per folder");
    for (v, name) in lines.iter().zip(names) {
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(v["causes"][0]["id"], corpus_top_cause(name), "{name}: {v}");
    }
    // The project's own corpus: every bundle folder and archive, nothing else (not its
    // README, not the expectation files, not the scripts).
    let corpus = common::root().join("corpus");
    let plan = batch_stdout(&[corpus.to_str().unwrap(), "--dry-run"]);
    let mut folders: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let kind = if p.is_dir() {
                "folder"
            } else if p.to_string_lossy().ends_with(".tar.gz") {
                "archive"
            } else {
                return None;
            };
            Some(format!("{}\t{kind}", p.display()))
        })
        .collect();
    folders.sort();
    assert_eq!(plan.lines().collect::<Vec<_>>(), folders);
    let _ = std::fs::remove_dir_all(&shelf);
}

#[test]
fn batch_keeps_a_rotated_gz_log_inside_its_unpacked_bundle() {
    let dir = scratch("batch-rotated");
    let bundle = dir.join("incident");
    copy_tree(&common::root().join("corpus/handmade-agent-died"), &bundle);
    let raylet = std::fs::read(bundle.join("head-logs/raylet.out")).unwrap();
    let head = &raylet[..raylet.len() / 3];
    std::fs::write(bundle.join("head-logs/raylet.out.1.gz"), gzip(head)).unwrap();
    let b = bundle.to_str().unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&stdout_of(&["analyze", b, "--format", "json"])).unwrap();
    let top = report["causes"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(report["causes"][0]["severity"], "critical", "{report}");
    // Given itself, or found on a shelf: the folder is the bundle, the .gz a part of it.
    for arg in [&bundle, &dir] {
        let lines = batch_lines(&batch_stdout(&[arg.to_str().unwrap()]));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0]["path"], b);
        assert_eq!(lines[0]["causes"][0]["id"], top.as_str(), "{}", lines[0]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn batch_analyses_each_path_once_however_it_is_spelt() {
    let archive = batch_archive("batch-dedup");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_raysift"))
        .current_dir(&archive)
        .args([
            "batch",
            "./handmade-agent-died.tar.gz",
            "handmade-agent-died.tar.gz",
            "2024/../handmade-agent-died.tar.gz",
            ".//handmade-agent-died.tar.gz",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let paths = line_paths(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(paths, ["handmade-agent-died.tar.gz"]);
    // `.` lists what it holds as `x`, not `./x`, so the bundle given again is the same one.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_raysift"))
        .current_dir(&archive)
        .args(["batch", ".", "./x.tar.gz", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        concat!(
            "2024/kuberay-log-missing-module.zip\tarchive\n",
            "handmade-agent-died.tar.gz\tarchive\n",
            "troubleshoot-image-pull.tar\tarchive\n",
            "x.tar.gz\tarchive\n"
        )
    );
    // A directory and a bundle it holds, both given: once.
    let a = archive.to_str().unwrap();
    let inner = format!("{a}/./2024/kuberay-log-missing-module.zip");
    let paths = line_paths(&batch_stdout(&[a, &inner, "--top", "1"]));
    assert_eq!(paths.len(), 4, "{paths:?}");
    assert_eq!(paths[0], format!("{a}/2024/kuberay-log-missing-module.zip"));
    let _ = std::fs::remove_dir_all(&archive);
}

#[test]
fn batch_dry_run_lists_the_plan_and_analyses_nothing() {
    let archive = batch_archive("batch-dry-run");
    copy_tree(
        &common::root().join("corpus/field-autoscaler-k8s-api-refused"),
        &archive.join("unpacked"),
    );
    let a = archive.to_str().unwrap();
    let results = archive.join("results.ndjson");
    let plan = batch_stdout(&[
        a,
        &format!("{a}/nothing-*.zip"),
        "--dry-run",
        "--out",
        results.to_str().unwrap(),
    ]);
    let want = [
        "2024/kuberay-log-missing-module.zip\tarchive",
        "handmade-agent-died.tar.gz\tarchive",
        "nothing-*.zip\terror: no file matches",
        "troubleshoot-image-pull.tar\tarchive",
        "unpacked\tfolder",
        "x.tar.gz\tarchive",
    ]
    .map(|l| format!("{a}/{l}"));
    assert_eq!(plan.lines().collect::<Vec<_>>(), want);
    assert!(!results.exists(), "--dry-run wrote --out");
    // After --shard and --skip-done, in the order a run takes.
    let mut union: Vec<String> = Vec::new();
    for i in 0..2 {
        let part = batch_stdout(&[a, "--dry-run", "--shard", &format!("{i}/2")]);
        union.extend(part.lines().map(str::to_string));
    }
    union.sort();
    let all = batch_stdout(&[a, "--dry-run"]);
    assert_eq!(union, all.lines().collect::<Vec<_>>());
    let elsewhere = scratch("batch-dry-run-done");
    let done = elsewhere.join("done.ndjson");
    std::fs::write(
        &done,
        format!("{{\"path\":\"{a}/unpacked\",\"status\":\"ok\"}}\n"),
    )
    .unwrap();
    let left = batch_stdout(&[a, "--dry-run", "--skip-done", done.to_str().unwrap()]);
    assert_eq!(left.lines().count(), 4, "{left}");
    assert!(!left.contains("unpacked"), "{left}");
    let _ = std::fs::remove_dir_all(&elsewhere);
    let _ = std::fs::remove_dir_all(&archive);
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    let dir = common::root().join("corpus/handmade-agent-died");
    for cmd in ["analyze", "timeline"] {
        let out = common::raysift(&[cmd, dir.to_str().unwrap()]);
        assert!(!out.stdout.is_empty());
        assert!(
            out.stderr.is_empty(),
            "{cmd} wrote to a piped stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn hostile_files_larger_than_a_piece_are_handled_alike_in_every_container() {
    // Each of these spans several 2 MiB pieces: binary content, one line with no end, UTF-16
    // text, and an operator log whose incident sits after 5 MB of healthy lines.
    let out = scratch("hostile-pieces");
    let dir = out.join("big-hostile");
    std::fs::create_dir_all(&dir).unwrap();
    // Noise, so that the archive is not mistaken for a decompression bomb.
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (seed >> 56) as u8
            })
            .collect()
    };
    let mut binary = noise(5 << 20);
    binary[..4].copy_from_slice(b"\x7fELF");
    std::fs::write(dir.join("core.bin"), binary).unwrap();
    let giant: Vec<u8> = noise(5 << 20).into_iter().map(|b| b'a' + b % 26).collect();
    std::fs::write(dir.join("giant.log"), giant).unwrap();
    let healthy = "2022-06-15T21:40:00.000Z\tINFO\tcontroller.rayservice\tReconciling the cluster component.\n";
    let incident = std::fs::read_to_string(
        common::root().join("tests/fixtures/rules/DSH003/fires/operator.txt"),
    )
    .unwrap();
    let padded = healthy.repeat((5 << 20) / healthy.len()) + &incident;
    std::fs::write(dir.join("operator.txt"), &padded).unwrap();
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(
        "2024-01-01 00:00:00,000\tINFO x.py:1 -- hello\n"
            .repeat(60_000)
            .encode_utf16()
            .flat_map(u16::to_le_bytes),
    );
    std::fs::write(dir.join("wide.log"), utf16).unwrap();
    let (_, tgz, zip) = pack(&dir, &out);

    let mut reports = Vec::new();
    for bundle in [&dir, &tgz, &zip] {
        let got = common::raysift(&["analyze", bundle.to_str().unwrap(), "--format", "json"]);
        assert_eq!(
            got.status.code(),
            Some(1),
            "{}: {}",
            bundle.display(),
            String::from_utf8_lossy(&got.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
        assert_eq!(v["causes"][0]["id"], "network_policy_timeout");
        let binary_diag = v["diagnostics"].as_array().unwrap().iter().any(|d| {
            d["file"].as_str().unwrap().ends_with("core.bin")
                && d["problem"].as_str().unwrap().contains("binary")
        });
        assert!(binary_diag, "{}: {}", bundle.display(), v["diagnostics"]);
        let lines_of = |name: &str| {
            v["inventory"]["file_list"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"] == name)
                .map(|f| f["lines"].as_u64().unwrap())
        };
        assert_eq!(lines_of("wide.log"), Some(60_000), "{}", bundle.display());
        assert_eq!(lines_of("giant.log"), Some(1), "{}", bundle.display());
        assert_eq!(
            lines_of("operator.txt"),
            Some(padded.lines().count() as u64),
            "{}",
            bundle.display()
        );
        reports.push(strip_volatile(&got.stdout));
    }
    assert!(reports.iter().all(|r| *r == reports[0]));
    let _ = std::fs::remove_dir_all(&out);
}

/// A dense incident: the refused status GETs of `handmade-agent-died` logged again on every
/// reconcile for hours, across several of the reader's pieces, each reconcile with an id of
/// its own when `ids`. The sieved analysis folds the repeats; the full parse keeps every
/// record: both must give the same causes, counts and evidence lines.
fn storm(name: &str, ids: bool) -> (common::Scratch, PathBuf) {
    let out = scratch(name);
    let dir = out.join("agent-died-storm");
    copy_tree(&common::root().join("corpus/handmade-agent-died"), &dir);
    let log = dir.join("operator-log.txt");
    let text = std::fs::read_to_string(&log).unwrap();
    // The last reconcile's lines, without their stamps.
    let block: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("2023-08-22T16:09:39.209Z"))
        .map(|l| &l[24..])
        .collect();
    assert!(block.len() >= 2);
    let mut grown = text.clone();
    let start = 16 * 3600 + 10 * 60;
    for i in 0..4_000u32 {
        let t = start + i * 2;
        let stamp = format!(
            "2023-08-22T{:02}:{:02}:{:02}.{:03}Z",
            t / 3600,
            t / 60 % 60,
            t % 60,
            i % 1000
        );
        for rest in &block {
            grown.push_str(&stamp);
            match rest.strip_suffix('}').filter(|_| ids) {
                Some(open) => {
                    grown.push_str(open);
                    grown.push_str(&format!(
                        ", \"reconcileID\": \"{:08x}-8a47-4b9e-9c55-{:012x}\"}}",
                        i.wrapping_mul(2_654_435_761),
                        u64::from(i) * 7919
                    ));
                }
                None => grown.push_str(rest),
            }
            grown.push('\n');
        }
    }
    assert!(grown.len() > 5 << 20, "the storm must span several pieces");
    std::fs::write(&log, grown).unwrap();
    (out, dir)
}

#[test]
fn folded_repeats_give_what_every_record_gives() {
    let (out, dir) = storm("storm", false);
    assert_sieve_matches_full_parse(&dir);
    let report = stdout_of(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&report).unwrap();
    assert_eq!(v["causes"][0]["id"], "dashboard_agent_died_after_deploy");
    // Folded records still count as records.
    assert!(v["stats"]["events"].as_u64().unwrap() >= 8_000);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn repeats_with_ids_of_their_own_show_their_own_ids() {
    let (out, dir) = storm("storm-ids", true);
    assert_sieve_matches_full_parse(&dir);
    // The evidence text is the full parse's, word for word.
    let sieved = evidence(&stdout_of(&[
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let full = serde_json::to_vec(&common::full_report(&dir)).unwrap();
    assert_eq!(sieved, evidence(&full));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_line_longer_than_the_limit_is_cut_and_named_in_every_container() {
    // An operator log whose incident follows a 3 MiB line (one of a 3 MB bundle's own), in a
    // file that spans several pieces: the line is cut and named once, by file and line, and
    // the incident after it is found on its own lines, whatever the container.
    let out = scratch("long-line");
    let dir = out.join("big-long-line");
    std::fs::create_dir_all(&dir).unwrap();
    let healthy = "2022-06-15T21:40:00.000Z\tINFO\tcontroller.rayservice\tReconciling the cluster component.\n";
    let incident = std::fs::read_to_string(
        common::root().join("tests/fixtures/rules/DSH003/fires/operator.txt"),
    )
    .unwrap();
    let before = (3 << 20) / healthy.len();
    let long: String = (0..3 << 20)
        .map(|i| (b'a' + (i % 23) as u8) as char)
        .collect();
    let text = |line: &str| format!("{}{line}\n{incident}", healthy.repeat(before));
    let log = text(&format!(
        "2022-06-15T21:40:01.000Z\tINFO\tcontroller.rayservice\t{long}"
    ));
    std::fs::write(dir.join("operator.txt"), &log).unwrap();
    let (_, tgz, zip) = pack(&dir, &out);
    // The same log with a short line in place of the long one: the same evidence.
    let short_dir = out.join("short");
    std::fs::create_dir_all(&short_dir).unwrap();
    std::fs::write(short_dir.join("operator.txt"), text("short")).unwrap();
    let want_evidence = evidence(&stdout_of(&[
        "analyze",
        short_dir.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert!(want_evidence
        .iter()
        .all(|(_, line, _)| *line > before as u64 + 1));

    let single = dir.join("operator.txt");
    let mut reports = Vec::new();
    for bundle in [&dir, &tgz, &zip, &single] {
        for threads in ["1", "2"] {
            let got = stdout_of(&[
                "analyze",
                bundle.to_str().unwrap(),
                "--format",
                "json",
                "--threads",
                threads,
            ]);
            let at = format!("{} with {threads} threads", bundle.display());
            assert_eq!(evidence(&got), want_evidence, "{at}");
            let cut: Vec<_> = diagnostics(&got)
                .into_iter()
                .filter(|(_, _, problem)| problem.contains("bytes cut"))
                .collect();
            let length = long.len() + 52;
            let want = format!(
                "line of {length} bytes is longer than the limit of 1048576 bytes: only its first 1048576 bytes are read, {} bytes cut",
                length - (1 << 20)
            );
            assert_eq!(
                cut,
                vec![("operator.txt".to_string(), Some(before as u64 + 1), want)],
                "{at}"
            );
            reports.push(strip_volatile(&got));
        }
    }
    assert!(reports.iter().all(|r| *r == reports[0]));
    // Standard input: the same cut, named under `stdin`.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_raysift"))
        .args(["analyze", "-", "--format", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(log.as_bytes()));
    let got = child.wait_with_output().unwrap();
    assert!(writer.join().unwrap().is_ok());
    let from_stdin: Vec<_> = want_evidence
        .into_iter()
        .map(|(_, line, text)| ("stdin".to_string(), line, text))
        .collect();
    assert_eq!(evidence(&got.stdout), from_stdin);
    let lines: Vec<_> = diagnostics(&got.stdout)
        .into_iter()
        .filter(|(_, _, problem)| problem.contains("bytes cut"))
        .map(|(file, line, _)| (file, line))
        .collect();
    assert_eq!(lines, vec![("stdin".to_string(), Some(before as u64 + 1))]);
    let _ = std::fs::remove_dir_all(&out);
}

/// Two incidents in one bundle, each in its own folder: `--object` and `--namespace` keep the
/// causes of one, the other's lines leave the timeline, a name that matches nothing warns,
/// and a malformed filter is a usage error.
#[test]
fn object_and_namespace_filters_narrow_to_one_workload() {
    let out = scratch("object-filter");
    let bundle = out.join("two");
    for name in ["handmade-agent-died", "kuberay-log-missing-module"] {
        for (rel, p) in files_under(&common::root().join("corpus").join(name)) {
            let to = bundle.join(name).join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(p, to).unwrap();
        }
    }
    let b = bundle.to_str().unwrap();
    let causes = |extra: &[&str]| -> (Vec<String>, serde_json::Value, String) {
        let mut args = vec!["analyze", b, "--format", "json"];
        args.extend_from_slice(extra);
        let got = common::raysift(&args);
        let v: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
        let ids = v["causes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["severity"] != "info")
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect();
        (ids, v, String::from_utf8_lossy(&got.stderr).into_owned())
    };
    let (all, _, _) = causes(&[]);
    assert!(
        all.contains(&"dashboard_agent_died_after_deploy".to_string()),
        "{all:?}"
    );
    assert!(all.contains(&"missing_dependency".to_string()), "{all:?}");

    let (one, v, _) = causes(&["--object", "RayService/doc-search"]);
    assert_eq!(one.first().map(String::as_str), Some("missing_dependency"));
    assert!(
        !one.contains(&"dashboard_agent_died_after_deploy".to_string()),
        "{one:?}"
    );
    assert_eq!(v["bundle"]["filter"]["object"], "RayService/doc-search");
    let errors = common::schema_errors("report", &v);
    assert!(errors.is_empty(), "{errors:?}");
    let (other, _, _) = causes(&["-n", "default"]);
    assert_eq!(
        other.first().map(String::as_str),
        Some("dashboard_agent_died_after_deploy")
    );
    assert!(
        !other.contains(&"missing_dependency".to_string()),
        "{other:?}"
    );

    // A filter that names nothing in the bundle is refused, by analyze and timeline alike:
    // what is left (the events that name no object) must not read as the object's diagnosis.
    for command in ["analyze", "timeline"] {
        for filter in [["--object", "rayservice/nosuch"], ["-n", "5"]] {
            let got = common::raysift(&[command, b, filter[0], filter[1]]);
            let said = String::from_utf8_lossy(&got.stderr);
            assert_eq!(got.status.code(), Some(2), "{command} {filter:?}: {said}");
            assert!(got.stdout.is_empty(), "{command} {filter:?}");
            assert!(
                said.contains("no event names "),
                "{command} {filter:?}: {said}"
            );
        }
    }
    let bad = common::raysift(&["analyze", b, "--object", "fraud-scorer"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--object \"fraud-scorer\""));

    // The timeline keeps the pod's own files and drops the other service's operator lines.
    let lines = common::raysift(&[
        "timeline",
        b,
        "--object",
        "rayservice/fraud-scorer",
        "--format",
        "json",
    ]);
    let text = String::from_utf8_lossy(&lines.stdout);
    assert!(text.contains("Exiting with SIGTERM immediately"));
    assert!(
        !text.contains("doc-search"),
        "another service's lines are left"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn schema_prints_the_shipped_schemas_and_timeline_lines_follow_theirs() {
    for which in ["report", "batch", "timeline", "diff"] {
        let printed = stdout_of(&["schema", which]);
        let file = std::fs::read(common::root().join(format!("schema/{which}.v1.json"))).unwrap();
        assert_eq!(
            printed, file,
            "raysift schema {which} prints schema/{which}.v1.json"
        );
    }
    // Every event of bundles of other shapes (a cluster-info dump, a troubleshoot bundle with
    // objects, events and ages) is an instance of the timeline line's schema.
    for name in ["cluster-info-dump-crash-loop", "troubleshoot-image-pull"] {
        let d = common::root().join("corpus").join(name);
        let out = stdout_of(&["timeline", d.to_str().unwrap(), "--format", "json"]);
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().count() > 10, "{name}");
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let errors = common::schema_errors("timeline", &v);
            assert!(errors.is_empty(), "{name}: {line}: {errors:#?}");
        }
    }
    // The check has teeth: a level outside the contract, a key it does not name, a missing key.
    let good: serde_json::Value = serde_json::json!({"ts": null, "ts_quality": "none",
        "file": "a.log", "line": 1, "n_lines": 1, "source": "generic", "level": "info",
        "component": "", "message": "m", "fields": {}});
    assert!(common::schema_errors("timeline", &good).is_empty());
    for (key, bad) in [
        ("level", serde_json::json!("loud")),
        ("extra", serde_json::json!(1)),
        ("line", serde_json::json!(0)),
    ] {
        let mut v = good.clone();
        v[key] = bad;
        assert!(!common::schema_errors("timeline", &v).is_empty(), "{v}");
    }
    let mut v = good.clone();
    v.as_object_mut().unwrap().remove("fields");
    assert!(!common::schema_errors("timeline", &v).is_empty(), "{v}");
}

/// The in-house validator behind `common::schema_errors` is strict: each keyword the
/// schemas use rejects what it should, and a keyword it does not know is a panic.
#[test]
fn the_schema_validator_rejects_what_each_keyword_forbids() {
    use common::schema::{close_objects, Validator};
    use serde_json::json;
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "test", "title": "t", "description": "d",
        "$defs": {
            "time": { "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$" },
            "count": { "type": "integer", "minimum": 0 }
        },
        "type": "object",
        "required": ["kind", "n", "at"],
        "properties": {
            "kind": { "enum": ["a", "b", "error"] },
            "n": { "$ref": "#/$defs/count" },
            "share": { "type": "number", "minimum": 0, "maximum": 1 },
            "at": { "oneOf": [{ "type": "null" }, { "$ref": "#/$defs/time" }] },
            "either": { "oneOf": [{ "type": "integer" }, { "type": "number" }] },
            "id": { "type": "string", "pattern": "[a-z]" },
            "tags": { "type": "array", "items": { "type": "string" }, "minItems": 1 },
            "fixed": { "const": 2 },
            "maybe": { "type": ["string", "null"] },
            "map": {
                "type": "object",
                "propertyNames": { "pattern": "^[a-z]+$" },
                "additionalProperties": { "$ref": "#/$defs/count" }
            },
            "inner": { "type": "object", "properties": { "x": { "type": "boolean" } } },
            "why": { "type": "string" }
        },
        "if": { "properties": { "kind": { "const": "error" } } },
        "then": { "required": ["why"] }
    });
    close_objects(&mut schema);
    let v = Validator::new("test", schema);
    let good = json!({"kind": "a", "n": 3, "share": 0.5, "at": "2025-01", "either": 1.5,
        "id": "-x-", "tags": ["t"], "fixed": 2.0, "maybe": null, "map": {"ab": 1},
        "inner": {"x": true}});
    assert_eq!(v.errors(&good), Vec::<String>::new());
    assert!(v.is_valid(&json!({"kind": "error", "n": 3.0, "at": null, "why": "w"})));
    let cases: &[(&str, serde_json::Value, &str)] = &[
        ("wrong type", json!({"share": "0.5"}), "/share:"),
        ("integer with a fraction", json!({"n": 1.5}), "/n:"),
        ("type array", json!({"maybe": 1}), "/maybe:"),
        ("enum miss", json!({"kind": "c"}), "/kind:"),
        (
            "extra key, closed root",
            json!({"extra": 1}),
            "/: the key \"extra\"",
        ),
        (
            "extra key, closed inner",
            json!({"inner": {"x": true, "y": 1}}),
            "/inner:",
        ),
        ("nested type", json!({"inner": {"x": 1}}), "/inner/x:"),
        ("minimum through $ref", json!({"n": -1}), "/n:"),
        ("maximum", json!({"share": 1.5}), "/share:"),
        ("pattern miss (unanchored)", json!({"id": "-_-"}), "/id:"),
        ("oneOf, no branch", json!({"at": "2025-1"}), "/at:"),
        ("oneOf, two branches", json!({"either": 2}), "/either:"),
        ("items", json!({"tags": ["t", 1]}), "/tags/1:"),
        ("minItems", json!({"tags": []}), "/tags:"),
        ("const", json!({"fixed": 3}), "/fixed:"),
        (
            "additionalProperties schema",
            json!({"map": {"ab": -1}}),
            "/map/ab:",
        ),
        ("propertyNames", json!({"map": {"A": 1}}), "/map:"),
        ("if/then", json!({"kind": "error"}), "\"why\" is missing"),
    ];
    for (what, change, expect) in cases {
        let mut bad = good.clone();
        for (k, x) in change.as_object().unwrap() {
            bad[k] = x.clone();
        }
        let errors = v.errors(&bad);
        assert_eq!(errors.len(), 1, "{what}: {bad}: {errors:#?}");
        assert!(errors[0].contains(expect), "{what}: {errors:#?}");
    }
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("n");
    assert_eq!(v.errors(&missing), ["/: the required key \"n\" is missing"]);
    // A schema the validator cannot fully read is refused when built, not half applied.
    for unknown in [
        json!({ "type": "string", "format": "date-time" }),
        json!({ "properties": { "a": { "maxLength": 3 } } }),
        json!({ "$ref": "other.json#/x" }),
        json!({ "$ref": "#/$defs/missing" }),
        json!({ "type": "text" }),
        json!({ "if": { "const": 1 }, "then": true, "else": false }),
    ] {
        let built = std::panic::catch_unwind(|| Validator::new("unknown", unknown.clone()));
        assert!(built.is_err(), "{unknown}");
    }
}

#[test]
fn timeline_text_shows_what_explains_an_event_and_grep_matches_what_is_shown() {
    let pasted = common::root().join("corpus/thin-pasted-line");
    let p = pasted.to_str().unwrap();
    // The operator's error says why in its `error` field and names its RayService in two
    // more: both are on the text line or under it; the stack trace and reconcile id are not.
    let text = String::from_utf8(stdout_of(&["timeline", p])).unwrap();
    insta::assert_snapshot!("timeline_text_with_fields", text);
    // --grep searches what is printed: a shown field as `key=value`, never a hidden one.
    let grep = |re: &str| String::from_utf8(stdout_of(&["timeline", p, "--grep", re])).unwrap();
    assert_eq!(
        grep("i/o timeout"),
        text,
        "the error field is shown, so it matches"
    );
    assert_eq!(grep("RayService=recsys/recsys-serve"), text);
    assert_eq!(grep("4b0d6e2a-93f1"), "", "the reconcile id is not shown");
    assert_eq!(grep("rayservice_controller.go"), "", "nor the stack trace");

    // A traceback folded into the record of an INFO line is shown, and selected, at error.
    let serve = common::root().join("corpus/local-ray-serve-constructor-error");
    let s = serve.to_str().unwrap();
    let args = [
        "timeline",
        s,
        "--level",
        "warning",
        "--source",
        "job-driver*",
    ];
    let text = String::from_utf8(stdout_of(&args)).unwrap();
    let head = text.lines().next().unwrap_or_default();
    assert!(
        head.contains(" ERROR ") && head.contains("Running entrypoint"),
        "{text}"
    );
    assert!(text.contains("json.decoder.JSONDecodeError"), "{text}");
    let json = String::from_utf8(stdout_of(&[&args[..], &["--format", "json"]].concat())).unwrap();
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(
        (v["level"].as_str(), v["logged_level"].as_str()),
        (Some("error"), Some("info"))
    );
    assert!(common::schema_errors("timeline", &v).is_empty());
}

/// The timeline text marks times as `analyze` does: `~` before a time from a kubectl age (to
/// the second, no milliseconds borrowed from the capture time), `?` after a zone-less time
/// read as UTC, `(no time)` where there is none, and the same legend at the end.
#[test]
fn timeline_text_marks_times_as_analyze_does() {
    let b = common::root().join("corpus/handmade-agent-died");
    let out = common::raysift(&["timeline", b.to_str().unwrap(), "--color", "never"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let first_word = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
    let approximate: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with('~'))
        .map(first_word)
        .collect();
    assert!(!approximate.is_empty(), "no approximate time shown");
    for t in &approximate {
        assert!(t.ends_with('Z') && !t.contains('.'), "{t}");
    }
    assert!(
        text.lines().any(|l| first_word(l).ends_with("Z?")),
        "no assumed-UTC time marked"
    );
    assert!(text.lines().any(|l| l.starts_with("(no time) ")));
    assert!(!text.lines().any(|l| l.starts_with("- ")), "a `-` time");
    let legend = text.lines().last().unwrap();
    assert!(
        legend.starts_with("Times: ~ marks") && legend.contains("? marks"),
        "{legend}"
    );
}

/// A message repeated word for word in a cause's evidence is shown once in the text, with how
/// many times, its first and last time and where the last one is.
#[test]
fn repeated_evidence_is_shown_once_with_its_count() {
    let b = common::root().join("corpus/handmade-agent-died");
    let out = common::raysift(&["analyze", b.to_str().unwrap(), "--color", "never"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "(×2, 2023-08-22T16:06:03.613Z – 2023-08-22T16:09:39.209Z; the last at operator-log.txt:3781)"
        ),
        "{text}"
    );
    assert!(!text.contains("operator-log.txt:3781 "), "{text}");
    // The JSON keeps every evidence line.
    let out = common::raysift(&["analyze", b.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lines: Vec<u64> = v["causes"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert!(lines.contains(&3781), "{lines:?}");
}

/// `timeline --oneline` (the default on a terminal) writes one line an event, with why and
/// the lines left out counted; `--limit` and `--tail` keep the first or last events, in text
/// and JSON alike.
#[test]
fn timeline_one_line_limit_and_tail() {
    let b = common::root().join("corpus/handmade-agent-died");
    let b = b.to_str().unwrap();
    let run = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["timeline", b, "--level", "warn", "--color", "never"];
        args.extend_from_slice(extra);
        let out = common::raysift(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with("Times:"))
            .map(str::to_string)
            .collect()
    };
    let events = run(&["--format", "json"]);
    let oneline = run(&["--oneline"]);
    assert_eq!(oneline.len(), events.len());
    assert!(
        run(&[]).len() > 3 * events.len(),
        "the full text shows the stacks"
    );
    assert!(oneline
        .iter()
        .any(|l| l.contains(" error: ") && l.ends_with("lines)")));
    assert_eq!(run(&["--oneline", "--limit", "3"]), oneline[..3].to_vec());
    assert_eq!(
        run(&["--oneline", "--tail", "2"]),
        oneline[oneline.len() - 2..].to_vec()
    );
    assert_eq!(
        run(&["--format", "json", "--limit", "2"]),
        events[..2].to_vec()
    );
    assert_eq!(
        run(&["--format", "json", "--tail", "2"]),
        events[events.len() - 2..].to_vec()
    );
}

/// One key, one meaning: `events` counts every record of the bundle, in every output that
/// shows it; a report that parsed only the lines a rule could match says so
/// (`records_parsed`, `events` null) instead of giving a smaller number the same name.
#[test]
fn every_output_counts_records_by_the_same_names() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let dir = dir.to_str().unwrap();
    let json =
        |args: &[&str]| -> serde_json::Value { serde_json::from_slice(&stdout_of(args)).unwrap() };
    let whole = json(&["analyze", dir, "--inventory", "--format", "json"]);
    let all = whole["events"].as_u64().unwrap();
    assert_eq!(whole["records_parsed"], all);
    let report = json(&["analyze", dir, "--format", "json"]);
    let inv = &report["inventory"];
    assert!(
        inv["events"].is_null() && inv["timed_events"].is_null(),
        "{inv}"
    );
    let parsed = inv["records_parsed"].as_u64().unwrap();
    assert!(parsed < all, "the sieve parses fewer: {parsed} of {all}");
    assert_eq!(report["stats"]["events"], parsed);
    assert!(inv["file_list"][0]["events"].is_null());
    let md = String::from_utf8(stdout_of(&["analyze", dir, "--format", "markdown"])).unwrap();
    assert!(
        md.contains(&format!(
            "{parsed} records parsed (of the lines a rule could match)"
        )),
        "{md}"
    );
    assert!(md.contains("| Records parsed |"));
    // The HTML page reads every record: its numbers are the inventory's.
    let html = String::from_utf8(stdout_of(&["analyze", dir, "--format", "html"])).unwrap();
    assert!(
        html.contains(&format!("{all} events")),
        "the page counts {all}"
    );
}

/// Relative times count from the incident, not from the oldest object: in
/// handmade-agent-died, kube-system pods aged 31 h used to start the window a day early, so
/// `--since +5m` kept everything. The page counts the ages it leaves out of its picture.
#[test]
fn relative_times_count_from_the_incident_window() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let dir = dir.to_str().unwrap();
    let times = |args: &[&str]| -> Vec<String> {
        String::from_utf8(stdout_of(args))
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|e| e["ts"].as_str().map(str::to_owned))
            .collect()
    };
    let report: serde_json::Value =
        serde_json::from_slice(&stdout_of(&["analyze", dir, "--format", "json"])).unwrap();
    let first = report["window"]["first"].as_str().unwrap().to_owned();
    assert!(first.starts_with("2023-08-22T15:"), "window from {first}");
    let all = times(&["timeline", dir, "--format", "json"]);
    let later = times(&["timeline", dir, "--format", "json", "--since", "+5m"]);
    assert!(!later.is_empty() && later.len() < all.len());
    assert!(
        later.iter().all(|t| t.as_str() >= "2023-08-22T15:56"),
        "{later:?}"
    );
    let html = String::from_utf8(stdout_of(&["analyze", dir, "--format", "html"])).unwrap();
    assert!(
        html.contains("outside the incident window"),
        "the page says what it left out"
    );
}

/// `--tz` is obeyed, and a file whose own lines state another zone says so, in `analyze` and
/// `timeline` alike.
#[test]
fn a_tz_that_contradicts_the_bundle_is_told() {
    let dir = common::root().join("corpus/handmade-agent-died");
    let dir = dir.to_str().unwrap();
    let said = "--tz +08:00 contradicts the file";
    let report: serde_json::Value = serde_json::from_slice(&stdout_of(&[
        "analyze", dir, "--tz", "+08:00", "--format", "json",
    ]))
    .unwrap();
    let diags = report["diagnostics"].to_string();
    assert!(
        diags.contains(said) && diags.contains("UTC-07:00"),
        "{diags}"
    );
    let tl = common::raysift(&["timeline", dir, "--tz", "+08:00", "--limit", "1"]);
    assert!(String::from_utf8_lossy(&tl.stderr).contains(said));
    // The zone the bundle states, given: nothing to tell.
    let agreeing = common::raysift(&["timeline", dir, "--tz", "-07:00", "--limit", "1"]);
    assert!(!String::from_utf8_lossy(&agreeing.stderr).contains("contradicts"));
}

/// `analyze --full` quotes every evidence record whole: the frames a long traceback's quote
/// leaves out by default (`… 11 lines …`) are printed, and nothing is elided.
#[test]
fn full_quotes_every_record_whole() {
    let dir = common::root().join("corpus/kuberay-log-missing-module");
    let dir = dir.to_str().unwrap();
    let frame = "in _call_with_frames_removed";
    let cut = String::from_utf8(stdout_of(&["analyze", dir])).unwrap();
    assert!(cut.contains(" lines …") && !cut.contains(frame), "{cut}");
    let whole = String::from_utf8(stdout_of(&["analyze", dir, "--full"])).unwrap();
    assert!(
        !whole.contains(" lines …") && whole.contains(frame),
        "{whole}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&stdout_of(&["analyze", dir, "--full", "--format", "json"]))
            .unwrap();
    assert!(json["causes"][0].to_string().contains(frame));
}

/// A bundle kept in a git checkout: its `.git/` folder is skipped (a hook's `Error: …` line
/// must not become evidence, a pack file not a diagnostic), the inventory says so without
/// calling the bundle incomplete, and `--no-ignore` reads it, in a folder and an archive alike.
#[test]
fn version_control_folders_are_skipped_and_said() {
    let out = scratch("vcs");
    let dir = out.join("checkout");
    copy_tree(&common::root().join("corpus/handmade-agent-died"), &dir);
    let hooks = dir.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("pre-commit.sample"),
        "#!/bin/sh\necho \"Error: Attempt to add a non-ASCII file name.\"\nexit 1\n",
    )
    .unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let (_, tgz, _) = pack(&dir, &out.join("packed"));
    for bundle in [dir.clone(), tgz] {
        let b = bundle.to_str().unwrap();
        let report: serde_json::Value =
            serde_json::from_slice(&stdout_of(&["analyze", b, "--format", "json"])).unwrap();
        assert!(!report.to_string().contains("non-ASCII file name"), "{b}");
        assert!(report["bundle"]["complete"].as_bool().unwrap(), "{b}");
        let said = report["diagnostics"].to_string();
        assert!(
            said.contains(".git") && said.contains("version-control folder"),
            "{said}"
        );
        let inv: serde_json::Value = serde_json::from_slice(&stdout_of(&[
            "analyze",
            b,
            "--inventory",
            "--format",
            "json",
            "--no-ignore",
        ]))
        .unwrap();
        let listed = inv["file_list"].to_string();
        assert!(
            listed.contains(".git/hooks/pre-commit.sample"),
            "{b}: {listed}"
        );
    }
}

/// Ray 2.9.3's `dashboard.err` after `ray stop` (lines of a real run): absl's dump of the
/// SIGTERM, then the same through Ray's logger, with the raylet's message streamed between.
const SIGTERM_DASHBOARD_ERR: &str = "\
I1206 08:22:00.712616   27818 chttp2_transport.cc:1403] ipv4:10.244.0.5:34793: Got goaway [2] err=UNAVAILABLE:GOAWAY received; Error code: 2; Debug Text: Cancelling all calls {http2_error:2}
*** SIGTERM received at time=1796545322 on cpu 0 ***
PC: @     0x7fcca9b26f36  (unknown)  epoll_wait
    @     0x7fcca9a5a050  139169624  (unknown)
    @     0x7fcca8b14e80  (unknown)  (unknown)
\x1b[33m(raylet)\x1b[0m The autoscaler failed with the following error:
Terminated with signal 15
  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/autoscaler/_private/monitor.py\", line 709, in <module>
    monitor.run()
  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/autoscaler/_private/monitor.py\", line 438, in _run
    time.sleep(AUTOSCALER_UPDATE_INTERVAL_S)

    @     0x7fccaa056240  (unknown)  (unknown)
[2026-12-06 08:22:02,681 E 27804 27804] logging.cc:361: *** SIGTERM received at time=1796545322 on cpu 0 ***
[2026-12-06 08:22:02,681 E 27804 27804] logging.cc:361: PC: @     0x7fcca9b26f36  (unknown)  epoll_wait
[2026-12-06 08:22:02,682 E 27804 27804] logging.cc:361:     @     0x7fcca9a5a050  139169624  (unknown)
[2026-12-06 08:22:02,682 E 27804 27804] logging.cc:361:     @     0x7fcca8b14e80  (unknown)  (unknown)
[2026-12-06 08:22:02,692 E 27804 27804] logging.cc:361:     @ ... and at least 8 more frames
";

/// The same dump in the dashboard's core-driver log (Ray 2.9.3).
const SIGTERM_DRIVER_LOG: &str = "\
[2026-12-06 08:22:02,174 I 27804 27934] raylet_client.cc:364: Error reporting task backlog information: GrpcUnavailable: RPC Error message: failed to connect to all addresses
[2026-12-06 08:22:02,681 E 27804 27804] logging.cc:361: *** SIGTERM received at time=1796545322 on cpu 0 ***
[2026-12-06 08:22:02,681 E 27804 27804] logging.cc:361: PC: @     0x7fcca9b26f36  (unknown)  epoll_wait
[2026-12-06 08:22:02,682 E 27804 27804] logging.cc:361:     @     0x7fcca9a5a050  139169624  (unknown)
[2026-12-06 08:22:02,692 E 27804 27804] logging.cc:361:     @ ... and at least 8 more frames
[2026-12-06 08:22:03,145 I 27804 27934] core_worker.cc:588: Event stats:
";

/// A worker that segfaulted in `decode_frame` (Ray 2.9.3, a real run): absl's dump, the same
/// through the logger, then CPython's faulthandler dump. Two frames of the user's code
/// outside the one that failed are added, so that the quote's cut must pick the innermost.
const SEGFAULT_WORKER_ERR: &str = "\
:job_id:02000000
:task_name:decode_frame
*** SIGSEGV received at time=1796545631 on cpu 0 ***
PC: @     0x7f4179985ad8  (unknown)  (unknown)
    @     0x7f417985a050  (unknown)  (unknown)
[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: *** SIGSEGV received at time=1796545631 on cpu 0 ***
[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)
[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)
Fatal Python error: Segmentation fault

Stack (most recent call first):
  File \"/home/ray/anaconda3/lib/python3.11/ctypes/__init__.py\", line 519 in string_at
  File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 53 in decode_frame
  File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 61 in decode_all
  File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 70 in run_batch
  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/worker.py\", line 847 in main_loop
  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/workers/default_worker.py\", line 282 in <module>

Extension modules: msgpack._cmsgpack, google._upb._message, psutil._psutil_linux, psutil._psutil_posix, setproctitle, yaml._yaml, charset_normalizer.md, charset_normalizer.cd, requests.packages.charset_normalizer.md, requests.packages.chardet.md, requests.packages.charset_normalizer.cd, requests.packages.chardet.cd, uvloop.loop, ray._raylet, wcwidth._wcwidth_c (total: 15)
";

/// The same crash in the worker's core-worker log (Ray 2.9.3).
const SEGFAULT_CORE_WORKER_LOG: &str = "\
[2026-12-06 08:27:11,423 I 3015 3052] core_worker.cc:4406: Number of alive nodes:1
[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: *** SIGSEGV received at time=1796545631 on cpu 0 ***
[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)
[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)
";

/// Every cause and symptom of a JSON report: (id, severity of its cause, summary, evidence
/// files).
fn causes_and_symptoms(report: &serde_json::Value) -> Vec<(String, String, String, Vec<String>)> {
    let mut out = Vec::new();
    for c in report["causes"].as_array().unwrap() {
        let severity = c["severity"].as_str().unwrap().to_string();
        let mut entry = |v: &serde_json::Value| {
            let files = v["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["file"].as_str().unwrap().to_string())
                .collect();
            out.push((
                v["id"].as_str().unwrap().to_string(),
                severity.clone(),
                v["summary"].as_str().unwrap().to_string(),
                files,
            ));
        };
        entry(c);
        for s in c["symptoms"].as_array().unwrap() {
            entry(s);
        }
    }
    out
}

/// An abort dump is one record in every read, and says what it is: a `SIGTERM`'s (what
/// `ray stop` makes every Ray process print) is no failure and no unknown error either; a
/// segfault's names the fatal error and the user's frame where it failed, and the quote keeps
/// that frame.
#[test]
fn abort_dumps_are_one_record_each_and_name_what_failed() {
    let out = scratch("abort-dumps");
    let stopped = out.join("stopped");
    let logs = stopped.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("dashboard.err"), SIGTERM_DASHBOARD_ERR).unwrap();
    std::fs::write(
        logs.join(
            "python-core-driver-01000000ffffffffffffffffffffffffffffffffffffffffffffffff_27804.log",
        ),
        SIGTERM_DRIVER_LOG,
    )
    .unwrap();
    let analyze = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&stdout_of(&[
            "analyze",
            dir.to_str().unwrap(),
            "--format",
            "json",
        ]))
        .unwrap()
    };
    let report = analyze(&stopped);
    let above_info: Vec<_> = causes_and_symptoms(&report)
        .into_iter()
        .filter(|(_, severity, _, _)| severity != "info")
        .collect();
    assert!(above_info.is_empty(), "{above_info:?}");
    let said = report.to_string();
    assert!(
        !said.contains("more frames") && !said.contains("@ <*>"),
        "{said}"
    );
    assert_sieve_matches_full_parse(&stopped);

    let crashed = out.join("crashed");
    copy_tree(&stopped, &crashed);
    let logs = crashed.join("logs");
    let err = "worker-7a5049861d0d1d5947bab006f2bfd2d8243384b4de24b85e362cd224-02000000-3015.err";
    std::fs::write(logs.join(err), SEGFAULT_WORKER_ERR).unwrap();
    std::fs::write(
        logs.join(
            "python-core-worker-7a5049861d0d1d5947bab006f2bfd2d8243384b4de24b85e362cd224_3015.log",
        ),
        SEGFAULT_CORE_WORKER_LOG,
    )
    .unwrap();
    let report = analyze(&crashed);
    let all = causes_and_symptoms(&report);
    let failures: Vec<_> = all
        .iter()
        .filter(|(id, _, _, _)| id == "component_exception")
        .collect();
    assert_eq!(failures.len(), 1, "{all:?}");
    let (_, _, summary, files) = failures[0];
    assert!(
        summary.contains("Fatal Python error: Segmentation fault at jobs.py:53 in decode_frame"),
        "{summary}"
    );
    assert!(
        !summary.contains("SIGSEGV") && !summary.contains("SIGTERM"),
        "{summary}"
    );
    assert_eq!(files, &vec![format!("logs/{err}")]);
    assert!(
        all.iter().all(|(_, _, s, files)| !s.contains("more frames")
            && files.iter().all(|f| !f.ends_with("dashboard.err"))),
        "{all:?}"
    );
    assert_sieve_matches_full_parse(&crashed);
    // The text report's quote of the dump keeps the frame that failed, not the outer ones.
    let text = String::from_utf8(stdout_of(&["analyze", crashed.to_str().unwrap()])).unwrap();
    assert!(text.contains("line 53 in decode_frame"), "{text}");
    // The streamed read (`timeline`) gives each dump as one event: the two markers and the
    // three dumps of the worker's stderr.
    let timeline = stdout_of(&[
        "timeline",
        crashed.to_str().unwrap(),
        "--format",
        "json",
        "--source",
        &format!("logs/{err}"),
    ]);
    let lines: Vec<serde_json::Value> = timeline
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    let levels: Vec<&str> = lines.iter().map(|l| l["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["info", "info", "critical", "error", "critical"]);
}
