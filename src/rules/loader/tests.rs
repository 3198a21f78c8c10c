//! The tests of whole pattern files, each built from one small good rule (`rule_with`) with
//! a different `[[when]]` or broken keys: optional and refused `[[when]]` keys, every
//! problem of a file reported with its key and line, and kebab-case names.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::checks::is_kebab_case;
use super::{check_rule, load_rule, LoadError};

const DOC: &str = "## What it detects\\nx\\n## Why it matters\\nx\\n## Evidence shown\\nx\\n## Remediation\\nx\\n## References\\nx\\n";

fn rule_with(when: &str) -> String {
    format!(
        r#"code = "TST001"
id = "probe_failure"
name = "test"
severity = "error"
confidence = 0.8
title = "t"
summary = "s"
doc = "{DOC}"

[[signal]]
name = "a"
text = ['boom']

[[sample]]
signal = "a"
text = "boom"

{when}
"#
    )
}

#[test]
fn when_keys_are_optional() {
    let r = load_rule("t.toml", &rule_with("[[when]]\nall = [{ count = \"a\" }]")).unwrap();
    assert_eq!(r.when.len(), 1);
    assert_eq!(r.when[0].confidence, None);
    assert_eq!(r.when[0].note, None);
}

#[test]
fn when_confidence_and_note_load() {
    let r = load_rule(
        "t.toml",
        &rule_with(
            "[[when]]\nall = [{ count = \"a\" }]\nconfidence = 0.5\nnote = \" one pasted line only \"",
        ),
    )
    .unwrap();
    assert_eq!(r.when[0].confidence, Some(0.5));
    assert_eq!(r.when[0].note.as_deref(), Some("one pasted line only"));
}

#[test]
fn when_confidence_out_of_range_is_refused() {
    for bad in ["0.0", "1.5", "-0.2"] {
        let e = load_rule(
            "t.toml",
            &rule_with(&format!(
                "[[when]]\nall = [{{ count = \"a\" }}]\nconfidence = {bad}"
            )),
        )
        .unwrap_err();
        assert_eq!(e.key, "when[0].confidence", "{bad}: {e}");
    }
}

#[test]
fn every_problem_of_a_file_is_reported_with_its_key_and_line() {
    let text = rule_with("[[when]]\nall = [{ count = \"a\" }, { absent = \"zz\" }]\nnote = \" \"")
        .replace(
            "severity = \"error\"",
            "severity = \"fatal\"\ncolour = \"red\"",
        )
        .replace("name = \"test\"", "name = \"Not Kebab\"")
        .replace(
            "summary = \"s\"",
            "summary = \"{count:a} then {count:nosuch} and {total:a}\"",
        )
        .replace("text = ['boom']", "text = ['boom', '(unclosed']");
    let errs = check_rule("t.toml", &text).unwrap_err();
    let got: Vec<(String, Option<usize>)> = errs.iter().map(|e| (e.key.clone(), e.line)).collect();
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map(|i| i + 1);
    for (key, line) in [
        ("colour", line_of("colour")),
        ("name", line_of("Not Kebab")),
        ("severity", line_of("fatal")),
        ("summary", line_of("nosuch")),
        ("signal[0].text[1]", line_of("(unclosed")),
        ("when[0].all[1]", line_of("absent")),
        ("when[0].note", line_of("note")),
    ] {
        assert!(
            got.contains(&(key.to_string(), line)),
            "{key} at {line:?} missing from {got:?}"
        );
    }
    // The summary's two bad placeholders are two problems; the good one is none.
    let summary: Vec<&LoadError> = errs.iter().filter(|e| e.key == "summary").collect();
    assert_eq!(summary.len(), 2, "{summary:?}");
    assert!(
        errs.iter().all(|e| !e.problem.contains('\n')),
        "one line each"
    );
    let shown = errs[0].to_string();
    assert!(shown.starts_with("t.toml:"), "{shown}");
}

#[test]
fn names_are_kebab_case() {
    for good in ["serve-get-refused", "oom", "head-pod-v2"] {
        assert!(is_kebab_case(good), "{good}");
    }
    for bad in [
        "",
        "Serve",
        "serve_get",
        "serve--get",
        "-serve",
        "serve get",
    ] {
        assert!(!is_kebab_case(bad), "{bad}");
    }
}

#[test]
fn empty_when_note_is_refused() {
    let e = load_rule(
        "t.toml",
        &rule_with("[[when]]\nall = [{ count = \"a\" }]\nnote = \"  \""),
    )
    .unwrap_err();
    assert_eq!(e.key, "when[0].note");
}
