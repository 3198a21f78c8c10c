//! Helpers shared by the integration tests: loading a bundle through the library, running
//! rules on it, and running the built binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use raysift::bundle::Limits;
use raysift::load::{load, LoadConfig};
use raysift::rank::{rank, Report};
use raysift::rules::engine::Engine;
use raysift::rules::Rule;
use raysift::timeline::{build, TimeConfig, Timeline};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn timeline(path: &Path, threads: usize) -> Timeline {
    let loaded = load(
        path,
        &LoadConfig {
            limits: Limits::DEFAULT,
            threads,
            sieve: None,
            progress: None,
        },
    )
    .expect("bundle opens");
    build(loaded, &TimeConfig { tz_override: None })
}

pub fn report(path: &Path, rules: Vec<Rule>) -> Report {
    let tl = timeline(path, 1);
    let engine = Engine::new(rules);
    let findings = engine.run(&tl.events);
    rank(&tl, &engine.rules, &findings, 0)
}

/// The whole analysis of a fully parsed bundle, open world included: what `analyze` reports.
pub fn full_report(path: &Path) -> Report {
    let tl = timeline(path, 1);
    let engine = Engine::new(raysift::rules::library::builtin().expect("library loads"));
    raysift::cli::rank_all(&tl, &engine, 0)
}

pub fn raysift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raysift"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the raysift binary runs")
}

/// A fresh scratch folder for test `name` of suite `suite`, under the temporary folder.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("raysift-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The regular files under `root`, sorted, as (relative path with `/`, path).
pub fn files_under(root: &Path) -> Vec<(String, PathBuf)> {
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

/// The diagnostics of a JSON report as (file, line, problem).
pub fn diagnostics(report: &[u8]) -> Vec<(String, Option<u64>, String)> {
    let v: serde_json::Value = serde_json::from_slice(report).unwrap();
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["line"].as_u64(),
                d["problem"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Runs the built binary with extra environment variables (a `PATH` with a fake `kubectl`
/// first, for `raysift collect`).
pub fn raysift_env(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_raysift"));
    cmd.args(args).env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the raysift binary runs")
}
