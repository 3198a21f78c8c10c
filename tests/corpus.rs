//! Whole scenario bundles, end to end through the binary: each `corpus/<name>/` with its
//! `corpus/<name>.toml` must rank the expected root cause first, list every expected id as a
//! cause or a symptom, and raise nothing else above `info` (healthy bundles: nothing at all).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde::Deserialize;

#[derive(Deserialize)]
struct Expect {
    #[serde(default)]
    expected: Vec<String>,
    #[serde(default)]
    benign: Vec<String>,
}

#[test]
fn corpus_bundles_rank_their_cause_first() {
    let corpus = common::root().join("corpus");
    let mut tomls: Vec<_> = std::fs::read_dir(&corpus)
        .expect("corpus/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    tomls.sort();
    assert!(
        tomls.len() >= 3,
        "corpus/ should hold at least three bundles"
    );
    let mut failures = Vec::new();
    for toml_path in &tomls {
        let expect: Expect = toml::from_str(&std::fs::read_to_string(toml_path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", toml_path.display()));
        let bundle = toml_path.with_extension("");
        let out = common::raysift(&["analyze", bundle.to_str().unwrap(), "--format", "json"]);
        let code = out.status.code().unwrap_or(-1);
        let report: serde_json::Value = match serde_json::from_slice(&out.stdout) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!(
                    "{}: no JSON report ({e}); stderr: {}",
                    bundle.display(),
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
        };
        let causes = report["causes"].as_array().cloned().unwrap_or_default();
        let real: Vec<String> = causes
            .iter()
            .filter(|c| c["severity"] != "info")
            .map(|c| c["id"].as_str().unwrap_or_default().to_string())
            .collect();
        let info: Vec<String> = causes
            .iter()
            .filter(|c| c["severity"] == "info")
            .map(|c| c["id"].as_str().unwrap_or_default().to_string())
            .collect();
        let symptoms: Vec<String> = causes
            .iter()
            .flat_map(|c| c["explains"].as_array().cloned().unwrap_or_default())
            .map(|s| s.as_str().unwrap_or_default().to_string())
            .collect();
        let name = bundle.file_name().unwrap().to_string_lossy().into_owned();
        match expect.expected.first() {
            Some(first) => {
                if real.first() != Some(first) {
                    failures.push(format!(
                        "{name}: expected {first} ranked first, got {real:?}"
                    ));
                }
                for id in &expect.expected {
                    if !real.contains(id) && !symptoms.contains(id) {
                        failures.push(format!("{name}: expected {id} as a cause or symptom; causes {real:?}, symptoms {symptoms:?}"));
                    }
                }
                if code != 1 && !real.is_empty() {
                    // Exit 1 only when a cause reaches --fail-on (error by default).
                    let top = causes.iter().find(|c| c["severity"] != "info");
                    let sev = top.map(|c| c["severity"].as_str().unwrap_or_default().to_string());
                    if matches!(sev.as_deref(), Some("error") | Some("critical")) {
                        failures.push(format!("{name}: exit code {code}, expected 1"));
                    }
                }
            }
            None => {
                if code != 0 {
                    failures.push(format!("{name}: healthy bundle exited {code}"));
                }
            }
        }
        for id in &real {
            if !expect.expected.contains(id) {
                failures.push(format!("{name}: unexpected cause {id} (false alarm?)"));
            }
        }
        for id in &info {
            if !expect.benign.contains(id) && !expect.expected.contains(id) {
                failures.push(format!("{name}: unexpected benign finding {id}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
