//! Completeness is part of the verdict: a bundle that could not be read in full (a truncated
//! or corrupt archive, a limit reached) says so at the top of every format, its JSON says
//! `bundle.complete: false` with the reasons, and "no cause" on it exits 2, never 0.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::files_under;
use std::io::Write;
use std::path::Path;

use common::raysift;

fn scratch(name: &str) -> common::Scratch {
    common::scratch("complete", name)
}

/// A corpus bundle as a tar.gz, in memory.
fn tar_gz(name: &str) -> Vec<u8> {
    let dir = common::root().join("corpus").join(name);
    let mut tar = tar::Builder::new(Vec::new());
    for (rel, p) in files_under(&dir) {
        let data = std::fs::read(&p).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        tar.append_data(&mut h, format!("{name}/{rel}"), &data[..])
            .unwrap();
    }
    let tar = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

fn json(path: &Path, extra: &[&str]) -> (serde_json::Value, i32) {
    let mut args = vec!["analyze", path.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = raysift(&args);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    // An incomplete report is still a raysift.report/v1.
    let errors = common::schema_errors("report", &v);
    assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    (v, out.status.code().unwrap())
}

fn stdout(args: &[&str]) -> (String, i32) {
    let out = raysift(args);
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
    )
}

/// Whether a report has a cause at or above `error` (the default `--fail-on`).
fn failing(v: &serde_json::Value) -> bool {
    v["causes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| matches!(c["severity"].as_str(), Some("error" | "critical")))
}

#[test]
fn truncated_archives_are_incomplete_in_every_format() {
    let dir = scratch("truncated");
    let whole = tar_gz("handmade-agent-died");
    let full = dir.join("whole.tar.gz");
    std::fs::write(&full, &whole).unwrap();
    let (v, code) = json(&full, &[]);
    assert_eq!(v["bundle"]["complete"], true, "{}", v["bundle"]);
    assert_eq!(v["bundle"]["incomplete"], serde_json::json!([]));
    assert_eq!(code, 1);

    let len = whole.len();
    // Cut inside the first member, and a quarter, half and three quarters of the way.
    let mut saw_no_cause = false;
    for cut in [600, len / 4, len / 2, len * 3 / 4] {
        let path = dir.join(format!("cut-{cut}.tar.gz"));
        std::fs::write(&path, &whole[..cut]).unwrap();
        let p = path.to_str().unwrap();
        let (v, code) = json(&path, &[]);
        let b = &v["bundle"];
        assert_eq!(b["complete"], false, "cut at {cut}: {b}");
        let reasons = b["incomplete"].as_array().unwrap();
        assert!(!reasons.is_empty(), "cut at {cut}: {b}");
        // Every reason is also a diagnostic.
        for r in reasons {
            assert!(
                v["diagnostics"].as_array().unwrap().contains(r),
                "cut at {cut}: {r}"
            );
        }
        // Never a clean bill of health: a failing cause exits 1, anything else 2.
        let want = if failing(&v) { 1 } else { 2 };
        assert_eq!(code, want, "cut at {cut}: {}", v["causes"]);
        saw_no_cause |= !failing(&v);

        let (text, code) = stdout(&["analyze", p]);
        assert_eq!(code, want);
        // The first paragraph after the header (its `raysift:` line, and the versions).
        let first = text.lines().skip_while(|l| !l.is_empty()).nth(1);
        assert!(
            first.is_some_and(|l| l.starts_with("Incomplete bundle: part of it could not be read")),
            "cut at {cut}: {text}"
        );
        if !failing(&v) {
            assert!(
                text.contains("no clean bill of health"),
                "cut at {cut}: {text}"
            );
            assert!(!text.contains("nothing in"), "cut at {cut}: {text}");
        }
        let (quiet, code) = stdout(&["analyze", p, "--quiet"]);
        assert_eq!(code, want);
        assert_eq!(quiet.lines().count(), 1, "{quiet}");
        assert!(quiet.contains("; incomplete bundle: "), "{quiet}");

        let (md, _) = stdout(&["analyze", p, "--format", "markdown"]);
        let banner = md.find("> **Incomplete bundle:").expect("markdown banner");
        let first_cause = md.find("| # |").or_else(|| md.find("No cause")).unwrap();
        assert!(banner < first_cause, "{md}");

        let (html, _) = stdout(&["analyze", p, "--format", "html"]);
        let banner = html.find("<div class=\"incomplete\"").expect("HTML banner");
        assert!(banner < html.find("</header>").unwrap(), "in the header");
    }
    assert!(saw_no_cause, "one cut leaves no failing cause");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_limit_that_stops_reading_makes_no_cause_exit_2() {
    let bundle = common::root().join("corpus/handmade-agent-died");
    let (v, code) = json(&bundle, &["--max-total-bytes", "10K"]);
    assert_eq!(v["bundle"]["complete"], false, "{}", v["bundle"]);
    let reason = v["bundle"]["incomplete"][0]["problem"].as_str().unwrap();
    assert!(reason.contains("total size limit"), "{reason}");
    assert!(!failing(&v), "{}", v["causes"]);
    assert_eq!(code, 2);
    let (quiet, code) = stdout(&[
        "analyze",
        bundle.to_str().unwrap(),
        "--max-total-bytes",
        "10K",
        "-q",
    ]);
    assert_eq!(code, 2);
    assert!(quiet.starts_with("no cause ("), "{quiet}");
    assert!(quiet.contains("incomplete bundle: "), "{quiet}");

    // The file count limit, too.
    let healthy = common::root().join("corpus/healthy-rayservice-handmade");
    let (v, code) = json(&healthy, &[]);
    assert_eq!((v["bundle"]["complete"].as_bool(), code), (Some(true), 0));
    let (v, code) = json(&healthy, &["--max-files", "3"]);
    assert_eq!(v["bundle"]["complete"], false);
    assert_eq!(code, 2);
    // A cause that reaches --fail-on still exits 1 on an incomplete bundle.
    let (v, code) = json(&bundle, &["--max-file-bytes", "100K"]);
    assert_eq!(v["bundle"]["complete"], false, "{}", v["bundle"]);
    assert!(failing(&v));
    assert_eq!(code, 1);
}

#[test]
fn what_is_left_alone_on_purpose_keeps_a_bundle_complete() {
    let dir = scratch("left-alone");
    let src = common::root().join("corpus/healthy-rayservice-handmade");
    for (rel, p) in files_under(&src) {
        let to = dir.join(&rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(p, to).unwrap();
    }
    // A link out of the bundle is refused and diagnosed, but nothing of the bundle is lost.
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/hostname", dir.join("outside.txt")).unwrap();
    let (v, code) = json(&dir, &[]);
    #[cfg(unix)]
    assert!(!v["diagnostics"].as_array().unwrap().is_empty());
    assert_eq!(v["bundle"]["complete"], true, "{}", v["diagnostics"]);
    assert_eq!(code, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn batch_lines_carry_completeness_and_the_diagnostic_count() {
    let dir = scratch("batch");
    let whole = tar_gz("handmade-agent-died");
    std::fs::write(dir.join("a-whole.tar.gz"), &whole).unwrap();
    std::fs::write(dir.join("b-cut.tar.gz"), &whole[..600]).unwrap();
    let (out, code) = stdout(&["batch", dir.to_str().unwrap(), "--jobs", "1"]);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["complete"], true, "{}", lines[0]);
    assert_eq!(lines[0]["diagnostics"], 0, "{}", lines[0]);
    assert_eq!(lines[0]["exit"], 1);
    assert_eq!(lines[1]["status"], "ok", "{}", lines[1]);
    assert_eq!(lines[1]["complete"], false, "{}", lines[1]);
    assert!(
        lines[1]["diagnostics"].as_u64().unwrap() >= 1,
        "{}",
        lines[1]
    );
    assert_eq!(lines[1]["exit"], 2, "{}", lines[1]);
    let summary = raysift(&["batch", dir.to_str().unwrap(), "--summary"]);
    let err = String::from_utf8(summary.stderr).unwrap();
    assert!(err.contains("2 ok (1 incomplete), 0 error"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
