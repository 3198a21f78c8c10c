//! The report commands end to end: every format from a real bundle, `--out` written
//! atomically, a closed pipe ending quietly, `--quiet`, plain text when not on a terminal,
//! and shell completions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

fn bundle() -> String {
    common::root()
        .join("corpus/handmade-agent-died")
        .to_string_lossy()
        .into_owned()
}

fn scratch(name: &str) -> common::Scratch {
    common::scratch("report", name)
}

#[test]
fn every_format_names_the_top_cause() {
    let b = bundle();
    for format in ["text", "json", "markdown", "html"] {
        let out = common::raysift(&["analyze", &b, "--format", format]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: a critical cause fails"
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("dashboard_agent_died_after_deploy"),
            "{format} misses the cause"
        );
        let place = if format == "json" {
            "\"file\": \"head-logs/dashboard_agent.log\",\n          \"line\": 157"
        } else {
            "head-logs/dashboard_agent.log:157"
        };
        assert!(text.contains(place), "{format}");
    }
}

#[test]
fn html_is_self_contained_and_carries_the_picture() {
    let out = common::raysift(&["analyze", &bundle(), "--format", "html"]);
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg viewBox") && html.contains("<table id=\"events\">"));
    let lower = html.to_ascii_lowercase();
    for bad in [
        "src=\"http",
        "src=\"//",
        "url(http",
        "url(\"http",
        "url(//",
        "@import",
        "<link",
        "<iframe",
    ] {
        assert!(!lower.contains(bad), "remote resource {bad:?}");
    }
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("=\"http") {
        assert!(
            rest.get(..i).unwrap().ends_with("<a href"),
            "address outside an anchor"
        );
        rest = rest.get(i + 6..).unwrap();
    }
    // The legend tells the story in time order: PUT accepted, agent exited, GETs refused.
    let put = html.find("the Serve config PUT was accepted").unwrap();
    let died = html.find("the dashboard agent exited").unwrap();
    let refused = html.find("status GET was refused").unwrap();
    assert!(put < died && died < refused);
}

#[test]
fn only_html_computes_the_timeline_section() {
    let out = common::raysift(&["analyze", &bundle(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("timeline").is_none());
    assert_eq!(v["schema"], "raysift.report/v1");
    // Who wrote it and when: the time from SOURCE_DATE_EPOCH, which the tests set.
    assert_eq!(v["raysift_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["generated_at"], "2025-01-01T00:00:00.000Z");
}

#[test]
fn out_is_written_atomically() {
    let dir = scratch("out");
    let target = dir.join("report.md");
    std::fs::write(&target, "old").unwrap();
    let out = common::raysift(&[
        "analyze",
        &bundle(),
        "--format",
        "markdown",
        "--out",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing on stdout with --out");
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.starts_with("# raysift report"));
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");

    // A directory that does not exist: exit 2, the path named, nothing half-written.
    let missing = dir.join("no/such/dir/report.md");
    let out = common::raysift(&["analyze", &bundle(), "--out", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.contains("report.md"),
        "{err}"
    );
    assert!(!missing.exists());
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let b = bundle();
    for args in [
        &["timeline", b.as_str()][..],
        &["timeline", b.as_str(), "--redact"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_raysift"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 64];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}: {:?}", out.status);
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn quiet_prints_one_line() {
    let out = common::raysift(&["analyze", &bundle(), "--quiet"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("#1 critical dashboard_agent_died_after_deploy (DSH004, confidence 0.99)")
    );
    assert_eq!(out.status.code(), Some(1), "--quiet keeps the exit code");

    let out = common::raysift(&[
        "analyze",
        &bundle(),
        "--quiet",
        "--min-severity",
        "critical",
        "--fail-on",
        "critical",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("#1 critical"));
}

#[test]
fn piped_text_has_no_colour_and_no_wrapping() {
    let out = Command::new(env!("CARGO_BIN_EXE_raysift"))
        .args(["analyze", &bundle()])
        .env_remove("NO_COLOR")
        .env("COLUMNS", "40")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "no ANSI codes off a terminal");
    assert!(
        text.lines().any(|l| l.chars().count() > 200),
        "long evidence stays on one line off a terminal"
    );
}

#[test]
fn color_follows_the_flag_then_no_color_then_clicolor_force() {
    // A one-file bundle with a cause: five runs, each cheap.
    let b = common::root()
        .join("corpus/thin-pasted-line")
        .to_string_lossy()
        .into_owned();
    let ansi = |args: &[&str], env: &[(&str, Option<&str>)]| {
        let out = common::raysift_env(args, env);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        out.stdout.contains(&0x1b)
    };
    let text = ["analyze", b.as_str()];
    // Piped: no colour, unless CLICOLOR_FORCE asks for it (`| less -R`) and NO_COLOR is unset.
    assert!(!ansi(&text, &[("NO_COLOR", None)]));
    assert!(ansi(
        &text,
        &[("NO_COLOR", None), ("CLICOLOR_FORCE", Some("1"))]
    ));
    assert!(
        !ansi(&text, &[("CLICOLOR_FORCE", Some("1"))]),
        "NO_COLOR wins"
    );
    // The flag wins over both.
    assert!(ansi(&["analyze", &b, "--color", "always"], &[]));
    let never = ["analyze", b.as_str(), "--color", "never"];
    assert!(!ansi(
        &never,
        &[("NO_COLOR", None), ("CLICOLOR_FORCE", Some("1"))]
    ));
}

#[test]
fn analyze_help_lists_everyday_flags_first_and_limits_under_their_heading() {
    // clap wraps help to COLUMNS (else the terminal, else 100): fixed here.
    let out = common::raysift_env(&["analyze", "--help"], &[("COLUMNS", Some("100"))]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    insta::assert_snapshot!("analyze_help", help);
}

/// On a terminal 80 columns wide, with `COLUMNS` unset (shells do not export it), prose wraps
/// at 80: the width comes from the terminal itself. `script` (util-linux) gives the program a
/// terminal; where it is missing the test says so and passes.
#[test]
fn text_wraps_to_the_terminal_width_without_columns() {
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("note: `script` (util-linux) is not installed: terminal width not tested");
        return;
    }
    let cmd = format!(
        "stty cols 80 rows 24; exec env -u COLUMNS NO_COLOR=1 {} analyze {} 2>/dev/null",
        env!("CARGO_BIN_EXE_raysift"),
        bundle()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(text.contains("dashboard_agent_died_after_deploy"), "{text}");
    // Every line fits, but for a word too long for any line (a URL), which overflows.
    for line in text.lines() {
        let width = line.chars().count();
        let last = line.split(' ').next_back().unwrap_or_default();
        assert!(width <= 80 || last.chars().count() > 40, "{width}: {line}");
    }
    assert!(
        text.lines().any(|l| l.chars().count() > 70),
        "wrapped at 80, not narrower"
    );
}

#[test]
fn completions_for_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef raysift"),
        ("fish", "complete -c raysift"),
    ] {
        let out = common::raysift(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: {marker:?} missing");
        for word in ["analyze", "timeline", "redact-hosts", "markdown"] {
            assert!(text.contains(word), "{shell}: {word} missing");
        }
    }
    let out = common::raysift(&["completions", "powershell-9"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn inventory_refuses_markup_formats() {
    let out = common::raysift(&["analyze", &bundle(), "--inventory", "--format", "html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--inventory"));
}

#[test]
fn a_file_used_as_evidence_is_never_called_unrecognised() {
    const NOTICE: &str = "recognised no KubeRay, Ray or Kubernetes file";
    // A `kubectl get pods` table pasted among other lines: the file stays `unknown`, but
    // its rows are evidence of a crash loop.
    let dir = scratch("pasted-table");
    std::fs::write(
        dir.join("paste.txt"),
        "I ran kubectl and got this, please help:\n$ kubectl get pods\n\
         NAME                                        READY   STATUS             RESTARTS      AGE\n\
         vision-raycluster-head-x7k2p                1/1     Running            0             14m\n\
         vision-raycluster-worker-cpu-small-4hzkq    0/1     CrashLoopBackOff   7 (2m ago)    14m\n\
         vision-raycluster-worker-cpu-small-9bq2d    0/1     CrashLoopBackOff   7 (3m ago)    14m\n\
         thanks in advance\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let json = common::raysift(&["analyze", d, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["bundle"]["sources"], serde_json::json!({"unknown": 1}));
    assert_eq!(v["causes"][0]["evidence"][0]["file"], "paste.txt");
    let text = common::raysift(&["analyze", d]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("CrashLoopBackOff"), "{text}");
    assert!(!text.contains(NOTICE), "{text}");

    // Nothing recognised, nothing used, nothing of Ray: no bundle at all (exit 2, named).
    std::fs::write(dir.join("paste.txt"), "hello\nworld\n").unwrap();
    let got = common::raysift(&["analyze", d]);
    assert_eq!(got.status.code(), Some(2));
    let said = String::from_utf8_lossy(&got.stderr);
    assert!(
        said.contains("not a KubeRay, Ray or Kubernetes bundle"),
        "{said}"
    );
    assert!(said.contains("(paste.txt)"), "{said}");

    // A Ray line in a form no parser knows, and no cause: the notice lists the files.
    std::fs::write(
        dir.join("paste.txt"),
        "(scheduler +2h13m57s) Resized to 4 CPUs.\nthanks\n",
    )
    .unwrap();
    let text = common::raysift(&["analyze", d]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains(NOTICE), "{text}");
    assert!(text.contains("  paste.txt ("), "{text}");
}

/// The report of a corpus bundle in `format`, whatever its exit code.
fn report_of(bundle: &str, format: &str) -> String {
    let dir = common::root().join("corpus").join(bundle);
    let out = common::raysift(&["analyze", dir.to_str().unwrap(), "--format", format]);
    String::from_utf8(out.stdout).unwrap()
}

/// Every evidence text of a JSON report.
fn evidence_texts(json: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut texts = Vec::new();
    for cause in v["causes"].as_array().unwrap() {
        let symptoms = cause["symptoms"].as_array().into_iter().flatten();
        for e in std::iter::once(cause).chain(symptoms) {
            for ev in e["evidence"].as_array().into_iter().flatten() {
                texts.push(ev["text"].as_str().unwrap().to_string());
            }
        }
    }
    texts
}

// Issue 31, point 11: an event read as `Normal message=…` hid its reason.
#[test]
fn an_event_is_quoted_as_its_type_reason_and_message_in_every_format() {
    let logged =
        "Normal FailedToGetServeDeploymentStatus: Failed to get Serve application statuses";
    let text = report_of("handmade-agent-died", "text");
    assert!(text.contains(logged), "{text}");
    assert!(!text.contains("Normal message="), "{text}");
    let quota = "Warning PodReconciliationError: pods \"vision-batch-head-kzsbf\" is forbidden: exceeded quota";
    let text = report_of("cluster-info-dump-quota-exceeded", "text");
    assert!(text.contains(quota), "{text}");
    assert!(!text.contains("Warning message="), "{text}");
    // A Kubernetes Event object reads the same way as the operator's logged event.
    let evicted = "Warning EvictionThresholdMet: Attempting to reclaim ephemeral-storage";
    let text = report_of("troubleshoot-head-evicted-disk-pressure", "text");
    assert!(text.contains(evicted), "{text}");
    // Every format quotes the same text.
    let json = report_of("handmade-agent-died", "json");
    assert!(evidence_texts(&json).iter().any(|t| t.starts_with(logged)));
    assert!(report_of("handmade-agent-died", "markdown").contains(logged));
    assert!(report_of("handmade-agent-died", "html").contains(logged));
}

// Issue 31, point 11: a YAML block scalar read as `message: |- value=Deploying app …`.
#[test]
fn a_yaml_block_scalar_is_quoted_as_its_key_and_its_text() {
    for (bundle, quoted) in [
        (
            "kuberay-log-missing-module",
            "message: Deploying app 'search' failed with exception:\nTraceback",
        ),
        (
            "kuberay-log-cuda-driver-too-old",
            "message: Deploying app 'summarizer' failed:\nThe deployment failed",
        ),
        ("session-logs-rayjob-keyerror", "message: "),
    ] {
        let texts = evidence_texts(&report_of(bundle, "json"));
        let from_yaml: Vec<&String> = texts
            .iter()
            .filter(|t| t.starts_with("message: "))
            .collect();
        assert!(!from_yaml.is_empty(), "{bundle}: {texts:#?}");
        assert!(
            texts.iter().any(|t| t.starts_with(quoted)),
            "{bundle}: {texts:#?}"
        );
        for t in from_yaml {
            assert!(!t.contains("|-") && !t.contains("value="), "{bundle}: {t}");
        }
        let text = report_of(bundle, "text");
        assert!(
            !text.contains(": |-") && !text.contains(" value="),
            "{bundle}: {text}"
        );
    }
}

/// The rows of the HTML page's table of events.
fn event_rows(html: &str) -> Vec<&str> {
    let table = html.split("<table id=\"events\">").nth(1).unwrap();
    let body = table.split("</table>").next().unwrap();
    body.split("<tr id=").skip(1).collect()
}

/// A row with what it folds away (`<details>…</details>`) taken out.
fn unfolded(row: &str) -> String {
    let mut shown = String::new();
    let mut rest = row;
    while let Some(at) = rest.find("<details>") {
        shown.push_str(&rest[..at]);
        let end = rest[at..].find("</details>").unwrap();
        rest = &rest[at + end + "</details>".len()..];
    }
    shown.push_str(rest);
    shown
}

// Issue 31, point 12: the table of events showed Go stack frames where the error belonged,
// and was wider than the page.
#[test]
fn the_table_of_events_says_why_on_one_line_and_folds_stack_traces() {
    let html = report_of("handmade-agent-died", "html");
    let rows = event_rows(&html);
    assert!(rows.len() > 100, "{} rows", rows.len());
    for row in &rows {
        let shown = unfolded(row);
        assert!(
            !shown.contains(".go:"),
            "a Go frame outside <details>: {row}"
        );
        assert!(
            !shown.contains("Traceback"),
            "a traceback outside <details>: {row}"
        );
    }
    // The operator's failed reconcile shows its error on its line, its frames folded.
    let row = rows
        .iter()
        .find(|r| r.starts_with("\"ev-operator_2dlog_2etxt-1849\""))
        .unwrap();
    assert!(
        unfolded(row)
            .contains("Fail to reconcileServe. error: Failed to get Serve application statuses"),
        "{row}"
    );
    assert!(row.contains("<details><summary>"), "{row}");
    assert!(row.contains("rayservice_controller.go:"), "{row}");
    // Long tokens wrap inside fixed columns: the table never outgrows the page.
    let style = html.split("<style>").nth(1).unwrap();
    let style = style.split("</style>").next().unwrap();
    assert!(
        style.contains("#events { table-layout: fixed; }"),
        "{style}"
    );
    assert!(
        style.contains("#events td { overflow-wrap: anywhere;"),
        "{style}"
    );
}
