//! Every rule against its own fixtures: `tests/fixtures/rules/<CODE>/fires` must make it fire
//! (the rendering is snapshotted), so must `…/thin` (one file holding only the decisive line),
//! and `…/quiet` holds near-misses and must not.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fmt::Write as _;

use raysift::rules::library;

fn render_findings(code: &str, dir: &std::path::Path) -> String {
    let rules: Vec<_> = library::builtin()
        .expect("library loads")
        .into_iter()
        .filter(|r| r.code.as_str() == code)
        .collect();
    assert_eq!(rules.len(), 1, "no rule {code}");
    let report = common::report(dir, rules);
    let mut out = String::new();
    for c in &report.causes {
        let _ = writeln!(
            out,
            "{} {} {} confidence={:.2}",
            c.code,
            c.id,
            c.severity.as_str(),
            c.confidence
        );
        let _ = writeln!(out, "  {}", c.summary);
        for e in &c.evidence {
            let first = e.text.lines().next().unwrap_or("");
            let _ = writeln!(
                out,
                "  --> {}:{} [{}] {} {}",
                e.file,
                e.line,
                e.source,
                e.ts.as_deref().unwrap_or("-"),
                first
            );
        }
    }
    out
}

#[test]
fn rules_fire_on_their_fixtures() {
    insta::glob!("fixtures/rules/*/fires", |dir| {
        let code = dir
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let text = render_findings(code, dir);
        assert!(!text.is_empty(), "{code} did not fire on {}", dir.display());
        insta::assert_snapshot!(text);
    });
}

#[test]
fn rules_fire_on_their_thin_fixtures() {
    insta::glob!("fixtures/rules/*/thin", |dir| {
        let code = dir
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let text = render_findings(code, dir);
        assert!(!text.is_empty(), "{code} did not fire on {}", dir.display());
        insta::assert_snapshot!(text);
    });
}

#[test]
fn rules_stay_quiet_on_near_misses() {
    let mut loud = Vec::new();
    for rule in library::builtin().expect("library loads") {
        let dir = common::root()
            .join("tests/fixtures/rules")
            .join(rule.code.as_str())
            .join("quiet");
        if !dir.is_dir() {
            continue; // The tidy test reports missing fixtures.
        }
        let text = render_findings(rule.code.as_str(), &dir);
        if !text.is_empty() {
            loud.push(format!("{} fired on its quiet fixture:\n{text}", rule.code));
        }
    }
    assert!(loud.is_empty(), "{}", loud.join("\n"));
}
