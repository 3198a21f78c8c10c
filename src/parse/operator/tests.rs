//! The harness the operator parser's tests share, and the tests of whole files.
//!
//! `run` parses a text and checks that the events' counts of lines add up to its physical
//! lines (no line dropped, none counted twice); `check` renders what `run` gave, one line
//! an event (`<line>+<n_lines> <time> <level> <component> {fields} message`), then the
//! diagnostics and the count of unparsed lines, and compares it with the expected text. The
//! tests here cover what no single line format owns: `kubectl` and multiplexer prefixes,
//! blank, truncated and CRLF lines, invalid UTF-8, binary garbage and giant lines.

use super::parse;
use crate::event::{format_rfc3339, RawTime, MICROS_PER_SEC};
use crate::parse::lines::split_lines;
use crate::parse::ParseOutput;

fn render_time(t: Option<RawTime>) -> String {
    match t {
        None => "-".to_string(),
        Some(RawTime::Utc(m)) => format_rfc3339(m),
        Some(RawTime::Naive(m)) => format!("naive:{}", format_rfc3339(m)),
        Some(RawTime::NoYear {
            month,
            day,
            micros_of_day,
        }) => {
            let secs = micros_of_day / MICROS_PER_SEC;
            let frac = micros_of_day % MICROS_PER_SEC;
            let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
            format!("--{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{frac:06}")
        }
        Some(RawTime::Age { secs }) => format!("age:{secs}s"),
    }
}

fn esc(s: &str) -> String {
    s.replace('\n', "\\n")
        .replace('\t', "\\t")
        .replace('\r', "\\r")
}

fn render(out: &ParseOutput) -> String {
    let mut lines = Vec::new();
    for ev in &out.events {
        let fields: Vec<String> = ev
            .fields
            .iter()
            .map(|(k, v)| format!("{k}={}", esc(v)))
            .collect();
        let component = if ev.component.is_empty() {
            "-"
        } else {
            &ev.component
        };
        let mut line = format!(
            "{}+{} {} {} {} {{{}}}",
            ev.line,
            ev.n_lines,
            render_time(ev.raw_time),
            ev.level.as_str(),
            component,
            fields.join("; "),
        );
        if !ev.message.is_empty() {
            line.push(' ');
            line.push_str(&esc(&ev.message));
        }
        lines.push(line);
    }
    for d in &out.diagnostics {
        lines.push(format!("! {}: {}", d.line.unwrap_or(0), d.problem));
    }
    if out.unparsed_lines > 0 {
        lines.push(format!("unparsed={}", out.unparsed_lines));
    }
    lines.join("\n")
}

fn run(input: &[u8]) -> ParseOutput {
    let mut out = ParseOutput::default();
    parse(input, &mut out);
    let total: u32 = out.events.iter().map(|e| e.n_lines).sum();
    assert_eq!(
        total as usize,
        split_lines(input).count(),
        "a line was dropped"
    );
    out
}

#[track_caller]
pub(super) fn check(input: &str, expect: &str) {
    let got = render(&run(input.as_bytes()));
    let expect = expect.trim_start_matches('\n').trim_end();
    assert_eq!(got, expect, "\n--- got:\n{got}\n");
}

// ---- envelopes and pastes

#[test]
fn kubectl_timestamps_prefix() {
    check(
            "2024-04-25T23:12:29.720581234Z {\"level\":\"info\",\"ts\":\"2024-04-25T23:12:29.720Z\",\"logger\":\"controllers.RayCluster\",\"msg\":\"Reconciling Ingress\"}
2024-04-25T23:12:29.721581234Z 2023-07-11T02:14:58.109Z\tINFO\tcontrollers.RayService\tRestart RayCluster\t{\"appName\": \"fruit_app\"}
2024-04-25T23:12:29.722581234Z sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem
2024-04-25T23:12:29.723581234Z \t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266",
            r#"
1+1 2024-04-25T23:12:29.720Z info controllers.RayCluster {} Reconciling Ingress
2+3 2023-07-11T02:14:58.109Z info controllers.RayService {appName=fruit_app} Restart RayCluster\nsigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem\n\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266
"#,
        );
}

#[test]
fn kubectl_prefix_flag() {
    check(
            "[pod/kuberay-operator-5b9d578847-g5sx2/kuberay-operator] {\"level\":\"info\",\"ts\":\"2024-04-25T23:12:29.720Z\",\"msg\":\"m\"}",
            r#"
1+1 2024-04-25T23:12:29.720Z info - {} m
"#,
        );
}

#[test]
fn stern_prefix() {
    check(
            "kuberay-operator-5b9d578847-g5sx2 kuberay-operator {\"level\":\"error\",\"ts\":\"2024-04-25T23:12:29.720Z\",\"logger\":\"controllers.RayService\",\"msg\":\"Reconciler error\",\"error\":\"boom\"}
kuberay-operator-5b9d578847-g5sx2 kuberay-operator 2023-07-11T02:14:58.109Z\tINFO\tsetup\tstarting manager
a continuation that mentions {\"level\":\"info\"} inside
some text {\"level\":\"info\",\"msg\":\"x\"} with more text",
            r#"
1+1 2024-04-25T23:12:29.720Z error controllers.RayService {error=boom; prefix=kuberay-operator-5b9d578847-g5sx2 kuberay-operator} Reconciler error
2+3 2023-07-11T02:14:58.109Z info setup {prefix=kuberay-operator-5b9d578847-g5sx2 kuberay-operator} starting manager\na continuation that mentions {"level":"info"} inside\nsome text {"level":"info","msg":"x"} with more text
"#,
        );
}

// ---- nasty inputs

#[test]
fn empty_input() {
    check("", "");
}

#[test]
fn blank_lines() {
    check(
        "\n\n2024-01-01T00:00:00.000Z\tERROR\tsetup\tx\nframe\n\n\n",
        r#"
1+2 - info - {} \n
3+4 2024-01-01T00:00:00.000Z error setup {} x\nframe\n\n
unparsed=1
"#,
    );
}

#[test]
fn continuation_before_any_head() {
    check(
        "\t/go/pkg/mod/x.go:1\nsigs.k8s.io/y()\n2024-01-01T00:00:00.000Z\tINFO\tsetup\tx",
        r#"
1+2 - info - {} \t/go/pkg/mod/x.go:1\nsigs.k8s.io/y()
3+1 2024-01-01T00:00:00.000Z info setup {} x
unparsed=1
"#,
    );
}

#[test]
fn crlf_line_ends() {
    check(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\tstart\t{\"a\": \"b\"}\r\n{\"level\":\"info\",\"ts\":\"2024-01-01T00:00:01.000Z\",\"msg\":\"json\"}\r\nframe\r\n",
            r#"
1+1 2024-01-01T00:00:00.000Z info setup {a=b} start
2+2 2024-01-01T00:00:01.000Z info - {} json\nframe
"#,
        );
}

#[test]
fn truncated_lines() {
    check("2024-01-01T00:00:00.000Z\tINF\n2024-01-01T00:00:00\n2024-01-01T00:\nI0411 07:4\n{\"level\":\"in", r#"
1+4 2024-01-01T00:00:00.000Z info - {} INF\n2024-01-01T00:00:00\n2024-01-01T00:\nI0411 07:4
5+1 - info - {} {"level":"in
! 5: 1 operator log line looks like zap JSON but did not parse (first error: EOF while parsing a string at column 12); kept as raw text
"#);
}

#[test]
fn invalid_utf8() {
    let mut input = b"2024-01-01T00:00:00.000Z\tINFO\tsetup\tbad \xff\xfe bytes\n".to_vec();
    input.extend_from_slice(
        b"{\"level\":\"info\",\"ts\":\"2024-01-01T00:00:01.000Z\",\"msg\":\"\xc3\x28\"}\n",
    );
    assert_eq!(
        render(&run(&input)),
        "1+1 2024-01-01T00:00:00.000Z info setup {} bad \u{fffd}\u{fffd} bytes\n\
             2+1 2024-01-01T00:00:01.000Z info - {} \u{fffd}("
    );
}

#[test]
fn binary_garbage() {
    let input: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let out = run(&input);
    assert!(out
        .events
        .iter()
        .all(|e| e.raw_time.is_none() || e.n_lines >= 1));
}

#[test]
fn giant_lines_are_capped() {
    let big = "x".repeat(200_000);
    let input = format!(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\t{big}\t{{\"k\": \"{big}\"}}\n{{\"level\":\"info\",\"msg\":\"{big}\",\"f\":\"{big}\"}}\n"
        );
    let out = run(input.as_bytes());
    assert_eq!(out.events.len(), 2);
    for ev in &out.events {
        assert!(ev.message.len() < 70_000, "message not capped");
        for (_, v) in &ev.fields {
            assert!(v.len() < 70_000, "field not capped");
        }
    }
}

#[test]
fn deeply_nested_json_is_kept() {
    let input = format!("{}{}", "{\"a\":".repeat(200), "1");
    let out = run(input.as_bytes());
    assert_eq!(out.events.len(), 1);
    assert_eq!(out.diagnostics.len(), 1);
}

#[test]
fn every_line_lands_in_one_event() {
    // Property: whatever the mix, the events' n_lines add up to the physical lines.
    let pieces: [&str; 14] = [
        "2024-01-01T00:00:00.000Z\tERROR\tsetup\tx\t{\"a\": 1}",
        "{\"level\":\"info\",\"ts\":\"2024-01-01T00:00:00Z\",\"msg\":\"m\"}",
        "{\"level\":\"info\",\"ts\":",
        "I0411 07:43:44.182159       1 leaderelection.go:250] msg",
        "panic: runtime error: boom",
        "goroutine 1 [running]:",
        "\t/go/src/x.go:12 +0x1",
        "",
        "\r",
        "pod container {\"level\":\"warn\",\"msg\":\"p\"}",
        "2026-03-04T07:42:11.446543463Z 2024-01-01T00:00:00.000Z\tINFO\tx\ty",
        "[pod/p/c] E0101 00:00:00.000000 1 a.go:1] e",
        "\u{0}\u{1}garbage\u{7f}",
        "1714087949.5\tinfo\tsetup\tepoch",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let mut input = String::new();
        for _ in 0..(seed % 23) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            input.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            input.push_str(if seed % 5 == 0 { "\r\n" } else { "\n" });
        }
        if seed % 3 == 0 {
            input.pop();
        }
        run(input.as_bytes());
    }
}
