//! Conventions checked by `cargo test` rather than by reviewers: every rule has a catalogue
//! id, a unique code matching its file name, all doc headings, and both fixtures; every
//! catalogue id has a rule; every source file starts with a `//!` doc.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use raysift::rules::catalogue::{is_known, CATALOGUE};
use raysift::rules::library;

#[test]
fn every_rule_is_tidy() {
    let rules = library::builtin().expect("library loads");
    let mut problems = Vec::new();
    for r in &rules {
        let file = r.origin.rsplit('/').next().unwrap_or_default();
        if !file.starts_with(&format!("{}-", r.code)) {
            problems.push(format!(
                "{}: file name must start with the code {}",
                r.origin, r.code
            ));
        }
        if !is_known(&r.id) {
            problems.push(format!(
                "{}: id {:?} is not in the catalogue",
                r.origin, r.id
            ));
        }
        for e in &r.explains {
            if !is_known(e) {
                problems.push(format!("{}: explains unknown id {e:?}", r.origin));
            }
        }
        for kind in ["fires", "quiet"] {
            let dir = common::root()
                .join("tests/fixtures/rules")
                .join(r.code.as_str())
                .join(kind);
            if !dir.is_dir() {
                problems.push(format!("{}: missing fixture {}", r.origin, dir.display()));
            }
        }
    }
    let fixture_dirs =
        std::fs::read_dir(common::root().join("tests/fixtures/rules")).expect("fixtures dir");
    for d in fixture_dirs.flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        if !rules.iter().any(|r| r.code.as_str() == name) {
            problems.push(format!("tests/fixtures/rules/{name} belongs to no rule"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_catalogue_id_has_a_rule() {
    let rules = library::builtin().expect("library loads");
    let missing: Vec<&str> = CATALOGUE
        .iter()
        .map(|(id, _)| *id)
        // The open world's generic ids are reported by code, not by a pattern file.
        .filter(|id| !raysift::open_world::is_generic(id))
        .filter(|id| !rules.iter().any(|r| r.id == *id))
        .collect();
    assert!(
        missing.is_empty(),
        "catalogue ids without a rule: {missing:?}"
    );
}

#[test]
fn every_module_has_a_doc() {
    let mut missing = Vec::new();
    for p in common::source_files() {
        let text = std::fs::read_to_string(&p).expect("readable");
        if !text.trim_start().starts_with("//!") {
            missing.push(p.display().to_string());
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "modules without a //! doc: {missing:?}");
}
