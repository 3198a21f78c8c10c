//! One fixture report (a dashboard agent that died after a successful deploy) rendered
//! through every format and snapshotted, so a change to any renderer shows up as a reviewed
//! diff. The fixture is hand-built rather than produced by the rules, so that the snapshots
//! change only when rendering does.

use insta::assert_snapshot;

// The integration tests' strict JSON Schema validator, shared rather than copied.
#[path = "../../tests/common/schema.rs"]
mod schema;

use crate::diag::Diagnostic;
use crate::event::{micros_from_civil, Event, Level, SourceKind, Timestamp, TsQuality};
use crate::inventory::{Inventory, Window};
use crate::load::FileInfo;
use crate::model::{BundleInfo, Cause, Evidence, Report, Stats, Symptom, SCHEMA};
use crate::report::style::Style;
use crate::report::TextOptions;
use crate::report_data::{timeline_data, TimelineDataConfig};
use crate::rules::Severity;
use crate::timeline::{Timeline, ZoneDecision};

const FILES: [(&str, SourceKind); 5] = [
    ("events.txt", SourceKind::KubeEvents),
    ("head-logs/dashboard_agent.log", SourceKind::DashboardAgent),
    ("head-logs/raylet.out", SourceKind::Raylet),
    (
        "head-logs/serve/http_proxy_10.244.1.7.log",
        SourceKind::ServeProxy,
    ),
    ("operator-log.txt", SourceKind::Operator),
];

const GET_REFUSED: &str = "Failed to get Serve application statuses from the dashboard agent. err: Failed to get serve details: Get \"http://fraud-head-svc.default.svc.cluster.local:52365/api/serve/applications/\": dial tcp 10.96.118.42:52365: connect: connection refused";

fn at(hms: &str) -> Option<Timestamp> {
    let mut parts = hms.split([':', '.']).map(|p| p.parse::<u32>().unwrap_or(0));
    let (h, m, s, ms) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    micros_from_civil(2023, 8, 22, h, m, s, ms * 1000).map(|micros| Timestamp {
        micros,
        quality: TsQuality::Exact,
    })
}

fn ev(file: u32, line: u32, time: &str, level: Level, component: &str, message: &str) -> Event {
    let mut e = Event::new(line, message);
    e.file = file;
    e.kind = FILES
        .get(file as usize)
        .map_or(SourceKind::Unknown, |f| f.1);
    e.ts = if time.is_empty() { None } else { at(time) };
    e.level = level;
    e.component = component.into();
    e.n_lines = message.lines().count().max(1) as u32;
    e
}

fn evidence(file: u32, line: u32, time: &str, text: &str, meaning: &str) -> Evidence {
    Evidence {
        file: FILES.get(file as usize).map_or("", |f| f.0).to_string(),
        line,
        ts: at(time).map(|t| t.rfc3339()),
        ts_quality: at(time).map_or("none", |t| t.quality.as_str()),
        source: FILES.get(file as usize).map_or("unknown", |f| f.1.as_str()),
        text: text.to_string(),
        meaning: meaning.to_string(),
        also_in: None,
    }
}

/// The fixture timeline and the report ranked over it.
pub(crate) fn fixture() -> (Timeline, Report) {
    use Level::*;
    let events = vec![
        ev(2, 1, "", Info, "", "raylet starting"),
        ev(4, 10, "16:00:00.000", Info, "controllers.RayService", "Reconciling the cluster component."),
        ev(0, 16, "16:01:41.209", Warning, "raycluster-controller", "Put \"http://fraud-head-svc.default.svc.cluster.local:52365/api/serve/applications/\": dial tcp 10.96.118.42:52365: connect: connection refused"),
        ev(4, 63, "16:01:43.319", Error, "controllers.RayService", "fail to update deployment: connect: connection refused"),
        ev(4, 471, "16:02:08.782", Info, "controllers.RayService", "updateServeDeployment: PUT /api/serve/applications/ 200"),
        ev(3, 5, "16:02:10.000", Info, "", "GET /fraud 200 12.1ms"),
        ev(3, 6, "16:03:00.000", Info, "", "GET /fraud 200 9.8ms"),
        ev(1, 150, "16:05:59.801", Error, "reporter_agent", "Error publishing node physical stats.\nTraceback (most recent call last):\n  File \"reporter_agent.py\", line 812, in _perform_iteration\nConnectionError: GCS unreachable"),
        ev(1, 157, "16:05:59.874", Critical, "agent", "Exiting with SIGTERM immediately..."),
        ev(2, 29, "16:05:59.911", Warning, "agent_manager.cc:109", "Agent process with id 1804289383 exited, exit code 15. ip 10.244.1.7."),
        ev(4, 1848, "16:06:01.586", Error, "controllers.RayService", GET_REFUSED),
        ev(3, 7, "16:07:00.000", Info, "", "GET /fraud 200 10.2ms"),
        ev(4, 3781, "16:09:39.209", Error, "controllers.RayService", GET_REFUSED),
    ];
    let mut counts = [0u64; 5];
    for e in &events {
        if let Some(n) = counts.get_mut(e.file as usize) {
            *n += 1;
        }
    }
    let files: Vec<FileInfo> = FILES
        .iter()
        .zip(counts)
        .enumerate()
        .map(|(id, ((path, kind), n))| FileInfo {
            bytes: 1000 * (id as u64 + 1),
            lines: n * 3,
            events: n,
            unparsed_lines: u64::from(id == 2),
            ..FileInfo::new(id as u32, path.to_string(), *kind)
        })
        .collect();
    let diagnostics = vec![Diagnostic {
        file: "head-logs/raylet.out".to_string(),
        line: Some(1),
        problem: "no timestamp on this line".to_string(),
    }];
    let tl = Timeline {
        bundle_path: "bundle.tar.gz".to_string(),
        container: "tar.gz".to_string(),
        files,
        events,
        diagnostics: diagnostics.clone(),
        zones: vec![ZoneDecision {
            file: "head-logs/dashboard_agent.log".to_string(),
            offset_secs: -7 * 3600,
            quality: TsQuality::InferredZone,
            basis: "UTC stamps in other files of head-logs".to_string(),
        }],
        capture: None,
        collected: None,
        mirrors: Default::default(),
    };

    let object = |kind: &str, namespace: Option<&str>, name: &str| crate::objects::ObjectRef {
        kind: kind.to_string(),
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
    };
    let refused_meaning =
        "the operator's status GET was refused: nothing listens on the port any more";
    let agent_died = Cause {
        rank: 1,
        id: "dashboard_agent_died_after_deploy".to_string(),
        code: "DSH004".to_string(),
        codes: vec!["DSH004".to_string(), "DSH005".to_string()],
        severity: Severity::Critical,
        confidence: 0.99,
        title: "The dashboard agent died after the Serve config was deployed".to_string(),
        summary: "A Serve config PUT succeeded at 2023-08-22T16:02:08.782Z, then 2 status GETs were refused over 3m37s".to_string(),
        objects: vec![
            object("RayService", Some("default"), "fraud-scorer"),
            object("Pod", Some("default"), "fraud-scorer-raycluster-w7k9t-head-x2x9l"),
        ],
        evidence: vec![
            evidence(4, 471, "16:02:08.782", "updateServeDeployment: PUT /api/serve/applications/ 200", "the Serve config PUT was accepted: the agent was alive"),
            evidence(1, 157, "16:05:59.874", "Exiting with SIGTERM immediately...", "the dashboard agent exited"),
            evidence(4, 1848, "16:06:01.586", GET_REFUSED, refused_meaning),
            evidence(4, 3781, "16:09:39.209", GET_REFUSED, refused_meaning),
        ],
        explains: vec!["serve_status_unreachable".to_string()],
        symptoms: vec![Symptom {
            id: "serve_status_unreachable".to_string(),
            code: "DSH002".to_string(),
            title: "The operator cannot read Serve status".to_string(),
            summary: "2 status GETs failed | never recovered".to_string(),
            evidence: vec![evidence(4, 1848, "16:06:01.586", GET_REFUSED, refused_meaning)],
        }],
        remediation: vec![
            "Read dashboard_agent.log on the head pod for why the process exited: a SIGTERM, a crash traceback, or an out-of-memory kill.".to_string(),
            "Do not chase NetworkPolicies: the port answered the PUT, so the path is open.".to_string(),
        ],
        references: vec![
            "https://docs.ray.io/en/latest/cluster/kubernetes/troubleshooting/rayservice-troubleshooting.html".to_string(),
            "KubeRay issue 1000".to_string(),
        ],
        known_issue: None,
    };
    let startup = Cause {
        rank: 2,
        id: "dashboard_startup_transient".to_string(),
        code: "DSH001".to_string(),
        codes: vec!["DSH001".to_string()],
        severity: Severity::Info,
        confidence: 0.88,
        title: "Start-up ordering: the first Serve API calls were refused, then one succeeded".to_string(),
        summary: "1 Serve API call was refused while the head was starting; no action is needed".to_string(),
        objects: vec![object("RayService", Some("default"), "fraud-scorer")],
        evidence: vec![evidence(0, 16, "16:01:41.209", "Put \"http://fraud-head-svc.default.svc.cluster.local:52365/api/serve/applications/\": dial tcp 10.96.118.42:52365: connect: connection refused", "the operator's call to the Serve API was refused (nothing listened yet)")],
        explains: Vec::new(),
        symptoms: Vec::new(),
        remediation: Vec::new(),
        references: Vec::new(),
        known_issue: None,
    };
    let inventory = Inventory::of(&tl);
    let report = Report {
        schema: SCHEMA,
        raysift_version: "0.0.0-test",
        generated_at: "2025-01-01T00:00:00.000Z".to_string(),
        bundle: BundleInfo::of(&tl, &inventory, &[]),
        window: Some(Window {
            first: "2023-08-22T16:00:00.000Z".to_string(),
            last: "2023-08-22T16:09:39.209Z".to_string(),
        }),
        causes: vec![agent_died, startup],
        diagnostics,
        stats: Stats {
            events: inventory.records_parsed,
            records_held: tl.events.len() as u64,
            unparsed_lines: inventory.unparsed_lines,
            elapsed_ms: 0,
            rules: 4,
        },
        inventory,
        timeline: None,
        unrecognised: Vec::new(),
    };
    (tl, report)
}

fn render(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    let res = f(&mut buf);
    assert!(res.is_ok(), "{res:?}");
    String::from_utf8_lossy(&buf).into_owned()
}

fn plain(width: Option<usize>) -> TextOptions {
    TextOptions {
        style: Style::PLAIN,
        width,
    }
}

fn html_report() -> Report {
    let (tl, mut report) = fixture();
    report.timeline = Some(timeline_data(&tl, &report, &TimelineDataConfig::HTML));
    report
}

#[test]
fn text() {
    let (_, report) = fixture();
    assert_snapshot!(render(|w| super::text::write(w, &report, plain(None))));
}

#[test]
fn text_wrapped_to_a_terminal() {
    let (_, report) = fixture();
    let out = render(|w| super::text::write(w, &report, plain(Some(72))));
    assert_snapshot!(out);
    // Only words longer than the width (URLs, paths) may overflow.
    for line in out.lines() {
        if line.chars().count() > 72 {
            assert!(
                !line.trim().contains(' ') || line.contains("http"),
                "{line}"
            );
        }
    }
}

#[test]
fn text_in_colour() {
    let (_, report) = fixture();
    let opts = TextOptions {
        style: Style { color: true },
        width: None,
    };
    let out = render(|w| super::text::write(w, &report, opts));
    assert!(out.contains("\x1b[1;31mCRITICAL\x1b[0m"));
    let no_codes = render(|w| super::text::write(w, &report, plain(None)));
    assert!(!no_codes.contains('\x1b'));
}

#[test]
fn quiet_line() {
    let (_, mut report) = fixture();
    assert_snapshot!(render(|w| super::text::write_summary_line(w, &report)), @"#1 critical dashboard_agent_died_after_deploy (DSH004, confidence 0.99): The dashboard agent died after the Serve config was deployed [RayService default/fraud-scorer]");
    report.causes.remove(0);
    assert_snapshot!(render(|w| super::text::write_summary_line(w, &report)), @"no cause (39 lines, 1 benign finding)");
}

/// The fixture as read from a truncated archive, with no cause above info left.
fn incomplete_report() -> Report {
    let (_, mut report) = fixture();
    let lost = Diagnostic::for_file(
        "operator-log.txt",
        "reading stopped after 4532 bytes, the part read is kept: incomplete deflate stream",
    );
    report.diagnostics.push(lost.clone());
    report.bundle.judge_completeness(&report.diagnostics);
    report.causes.retain(|c| c.severity == Severity::Info);
    report
}

#[test]
fn an_incomplete_bundle_says_so_at_the_top_of_every_format() {
    let report = incomplete_report();
    assert!(!report.bundle.complete);
    assert_eq!(
        report.bundle.incomplete.len(),
        1,
        "the line diagnostic is not a loss"
    );
    let head = |s: &str, n: usize| s.lines().take(n).collect::<Vec<_>>().join("\n");
    let text = render(|w| super::text::write(w, &report, plain(None)));
    assert_snapshot!("incomplete_text", head(&text, 7));
    let md = render(|w| super::markdown::write(w, &report));
    assert_snapshot!("incomplete_markdown", head(&md, 10));
    let html = render(|w| super::html::write(w, &report));
    let body = html_body(&html);
    let from = body.find("<header>").unwrap_or(0);
    let to = body.find("<section id=\"causes\">").unwrap_or(body.len());
    assert_snapshot!("incomplete_html", body.get(from..to).unwrap_or(""));
    assert!(html.contains("<title>raysift: no cause found (incomplete bundle)</title>"));
    assert_snapshot!(render(|w| super::text::write_summary_line(w, &report)), @"no cause (39 lines, 1 benign finding); incomplete bundle: operator-log.txt: reading stopped after 4532 bytes, the part read is kept: incomplete deflate stream");
    let json = serde_json::to_value(&report).unwrap_or_default();
    assert_eq!(json["bundle"]["complete"], false);
    assert_eq!(json["bundle"]["incomplete"][0]["file"], "operator-log.txt");
}

#[test]
fn json() {
    let (_, report) = fixture();
    let out =
        render(|w| serde_json::to_writer_pretty(&mut *w, &report).map_err(std::io::Error::from));
    assert!(
        !out.contains("\"timeline\""),
        "no timeline section unless asked"
    );
    assert_snapshot!(out);
}

#[test]
fn json_with_the_timeline_section() {
    let report = html_report();
    let value = serde_json::to_value(&report).unwrap_or_default();
    let t = &value["timeline"];
    assert_eq!(t["buckets"], 100);
    assert_eq!(t["lanes"].as_array().map(Vec::len), Some(5));
    assert_eq!(t["markers"].as_array().map(Vec::len), Some(5));
    assert_eq!(value["schema"], "raysift.report/v1");
    // The section the JSON report omits is still described by the contract, key for key, read
    // as `tests/common::schema_errors` reads it (objects closed).
    let mut schema: serde_json::Value =
        serde_json::from_str(crate::cli::SchemaOf::Report.text()).unwrap_or_default();
    schema::close_objects(&mut schema);
    let errors = schema::Validator::new("report", schema).errors(&value);
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn markdown() {
    let (_, report) = fixture();
    assert_snapshot!(render(|w| super::markdown::write(w, &report)));
}

/// The HTML without its constant style sheet and script, which the snapshot would only
/// repeat.
fn html_body(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    for (open, close) in [("<style>", "</style>"), ("<script>", "</script>")] {
        if let (Some(a), Some(b)) = (rest.find(open), rest.find(close)) {
            out.push_str(rest.get(..a + open.len()).unwrap_or(""));
            out.push('…');
            rest = rest.get(b..).unwrap_or("");
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn html() {
    let report = html_report();
    let html = render(|w| super::html::write(w, &report));
    assert_snapshot!(html_body(&html));
}

#[test]
fn html_structure() {
    let report = html_report();
    let html = render(|w| super::html::write(w, &report));
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for needle in [
        "<svg viewBox",
        "<table id=\"events\">",
        "id=\"q\"",
        "@media print",
        "<section id=\"inventory\">",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    // Every evidence line links to its row in the event table, and the row exists.
    for c in &report.causes {
        for e in &c.evidence {
            let id = super::html::row_id(&e.file, e.line);
            assert!(
                html.contains(&format!("<tr id=\"{id}\" class=\"evidence\"")),
                "{id}"
            );
            assert!(html.contains(&format!("href=\"#{id}\"")), "{id}");
        }
    }
    // Bundle text is escaped, never markup.
    assert!(html.contains("Get &quot;http://fraud-head-svc"));
    assert_eq!(html.matches("<script>").count(), 1);
    assert_no_remote_resources(&html);
}

#[test]
fn hostile_text_stays_text() {
    let (_, mut report) = fixture();
    if let Some(c) = report.causes.first_mut() {
        c.summary = "<script>alert(1)</script> `x` | y".to_string();
        if let Some(e) = c.evidence.first_mut() {
            e.text = "```\n<img src=\"https://evil.invalid/x.png\">".to_string();
        }
    }
    let html = render(|w| super::html::write(w, &report));
    assert_eq!(html.matches("<script>").count(), 1);
    assert!(!html.contains("<img"));
    assert_no_remote_resources(&html);
    let md = render(|w| super::markdown::write(w, &report));
    assert!(!md.contains("<script>"));
    // The evidence sits in a fence longer than the backticks inside it, so it stays text.
    assert!(
        md.contains("````text\nbundle.tar.gz") || md.contains("````text\noperator-log.txt:471")
    );
    assert!(md.matches("<img").count() == 1 && md.contains("    <img src"));
}

/// No resource the browser would load from an address: `src=`, `<link href=`, CSS `url(` or
/// `@import` naming `http(s)://` or a protocol-relative `//`. Anchors are links, not loads.
pub(crate) fn assert_no_remote_resources(html: &str) {
    let lower = html.to_ascii_lowercase();
    for bad in [
        "src=\"http",
        "src='http",
        "src=\"//",
        "url(http",
        "url(\"http",
        "url('http",
        "url(//",
        "@import",
        "<link",
        "<iframe",
        "<object",
        "<embed",
        "xlink:href=\"http",
    ] {
        assert!(!lower.contains(bad), "remote resource reference {bad:?}");
    }
    // The only places an address may appear in an attribute are anchors.
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("=\"http") {
        let before = rest.get(..i).unwrap_or("");
        assert!(
            before.ends_with("<a href") || before.ends_with("<li><a href"),
            "address in a non-anchor attribute near {:?}",
            rest.get(i.saturating_sub(40)..i + 20)
        );
        rest = rest.get(i + 6..).unwrap_or("");
    }
}

/// The fixture with a time computed from a kubectl age (the benign cause's events line) and
/// one read as UTC for lack of zone evidence (the agent's exit), four files' zones assumed.
fn marked_fixture() -> Report {
    let (mut tl, mut report) = fixture();
    tl.zones = [
        "head-logs/dashboard_agent.log",
        "head-logs/raylet.out",
        "worker-a/raylet.out",
        "worker-b/raylet.out",
    ]
    .iter()
    .map(|f| ZoneDecision {
        file: f.to_string(),
        offset_secs: 0,
        quality: TsQuality::AssumedUtc,
        basis: "no zone evidence: assumed UTC (use --tz to set it)".to_string(),
    })
    .collect();
    report.inventory = Inventory::of(&tl);
    for c in &mut report.causes {
        for e in c
            .evidence
            .iter_mut()
            .chain(c.symptoms.iter_mut().flat_map(|s| s.evidence.iter_mut()))
        {
            if e.file == "events.txt" {
                e.ts_quality = TsQuality::Approximate.as_str();
            } else if e.file == "head-logs/dashboard_agent.log" {
                e.ts_quality = TsQuality::AssumedUtc.as_str();
            }
        }
    }
    report
}

#[test]
fn marked_times_in_every_format() {
    let report = marked_fixture();
    let approx = "~2023-08-22T16:01:41Z";
    let assumed = "2023-08-22T16:05:59.874Z?";
    let legend_approx = "~ marks a time computed from a kubectl age";
    let legend_assumed = "? marks a time written without a zone and read as UTC";
    let zones = "Zone assumed: 4 files write times without a zone and nothing in the bundle shows which, so they are read as UTC (set it with --tz): head-logs/dashboard_agent.log, head-logs/raylet.out, worker-a/raylet.out and 1 more.";

    let text = render(|w| super::text::write(w, &report, plain(None)));
    let md = render(|w| super::markdown::write(w, &report));
    let html = render(|w| super::html::write(w, &report));
    for (name, out) in [("text", &text), ("markdown", &md), ("html", &html)] {
        assert!(out.contains(approx), "{name}: {out}");
        assert!(out.contains(assumed), "{name}: {out}");
        assert!(
            !out.contains("16:01:41.209"),
            "{name}: approximate shown to the ms"
        );
        assert!(out.contains(legend_assumed), "{name}");
        assert!(out.contains(zones), "{name}");
    }
    assert!(text.contains(legend_approx) && html.contains(legend_approx));
    // Escaped in markdown, where a lone tilde may open a strikethrough.
    assert!(md.contains(&format!("\\{legend_approx}")));
    // The header names the files before any cause.
    assert!(text.find(zones) < text.find("#1 "));
    // The JSON keeps the computed time and says how it was obtained.
    let json = serde_json::to_value(&report).unwrap_or_default();
    let benign = &json["causes"][1]["evidence"][0];
    assert_eq!(benign["ts"], "2023-08-22T16:01:41.209Z");
    assert_eq!(benign["ts_quality"], "approximate");
    assert_eq!(
        json["causes"][0]["evidence"][1]["ts_quality"],
        "assumed_utc"
    );
    assert_eq!(json["causes"][0]["evidence"][0]["ts_quality"], "exact");
}

#[test]
fn the_time_legend_lists_only_the_marks_shown() {
    // The plain fixture has exact and inferred times only: no legend, no zone sentence.
    let (_, report) = fixture();
    let text = render(|w| super::text::write(w, &report, plain(None)));
    let md = render(|w| super::markdown::write(w, &report));
    let html = render(|w| super::html::write(w, &report));
    for out in [&text, &md, &html] {
        assert!(!out.contains("Times:") && !out.contains("Zone assumed"));
    }
    // Only an approximate time: the legend explains `~` alone.
    let mut report = marked_fixture();
    for c in &mut report.causes {
        for e in &mut c.evidence {
            if e.ts_quality == "assumed_utc" {
                e.ts_quality = "exact";
            }
        }
    }
    let text = render(|w| super::text::write(w, &report, plain(None)));
    assert!(text.contains("Times: ~ marks"), "{text}");
    assert!(!text.contains("? marks"));
    // Text shows a benign cause's first two lines: a marked time past them is not shown,
    // so it is not explained either.
    let mut report = fixture().1;
    if let Some(c) = report.causes.get_mut(1) {
        let mut hidden = c.evidence[0].clone();
        hidden.ts_quality = "approximate";
        c.evidence
            .extend([c.evidence[0].clone(), c.evidence[0].clone(), hidden]);
    }
    let text = render(|w| super::text::write(w, &report, plain(None)));
    assert!(!text.contains("Times:"), "{text}");
}

#[test]
fn an_incomplete_bundle_comes_before_assumed_zones() {
    let mut report = marked_fixture();
    report.diagnostics.push(Diagnostic::for_file(
        "operator-log.txt",
        "reading stopped after 4532 bytes, the part read is kept: incomplete deflate stream",
    ));
    report.bundle.judge_completeness(&report.diagnostics);
    let text = render(|w| super::text::write(w, &report, plain(None)));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[2].starts_with("Incomplete bundle"), "{text}");
    assert!(lines[5].starts_with("Zone assumed: 4 files"), "{text}");
    let md = render(|w| super::markdown::write(w, &report));
    assert!(md.find("> **Incomplete bundle") < md.find("Zone assumed"));
    let html = render(|w| super::html::write(w, &report));
    let zones = html.find("Zone assumed").unwrap_or(usize::MAX);
    assert!(html.find("<div class=\"incomplete\"") < Some(zones));
    assert!(Some(zones) < html.find("</header>"));
}
