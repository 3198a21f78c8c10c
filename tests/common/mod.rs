//! Helpers shared by the integration tests: loading a bundle through the library, running
//! rules on it, and running the built binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod schema;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use raysift::bundle::Limits;
use raysift::load::{load, LoadConfig};
use raysift::model::Report;
use raysift::rank::{rank, Quote};
use raysift::rules::engine::Engine;
use raysift::rules::Rule;
use raysift::timeline::{build, TimeConfig, Timeline};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, in no particular order.
pub fn source_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    files
}

/// The corpus's bundles (its folders), sorted.
pub fn corpus_bundles() -> Vec<PathBuf> {
    let mut bundles: Vec<PathBuf> = std::fs::read_dir(root().join("corpus"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() || p.to_string_lossy().ends_with(".tar.gz"))
        .collect();
    bundles.sort();
    bundles
}

/// The bundle a corpus `<name>.toml` describes: the folder `<name>/`, or the archive
/// `<name>.tar.gz` a real run was shipped as.
pub fn corpus_bundle_of(toml: &Path) -> PathBuf {
    let dir = toml.with_extension("");
    if dir.is_dir() {
        return dir;
    }
    toml.with_extension("tar.gz")
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
    rank(&tl, &engine.rules, &findings, 0, Quote::Cut)
}

/// The whole analysis of a fully parsed bundle, open world included: what `analyze` reports.
pub fn full_report(path: &Path) -> Report {
    static ENGINE: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    let engine = ENGINE
        .get_or_init(|| Engine::new(raysift::rules::library::builtin().expect("library loads")));
    let tl = timeline(path, 1);
    raysift::analysis::rank_all(&tl, engine, 0)
}

/// A fixed `generated_at` for every report the tests make (1 January 2025, UTC), so that
/// reports and snapshots do not change with the clock.
pub const SOURCE_DATE_EPOCH: &str = "1735689600";

pub fn raysift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raysift"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
        .output()
        .expect("the raysift binary runs")
}

/// `raysift analyze BUNDLE --format json` of a corpus bundle. Every corpus bundle is analysed
/// once for the whole test binary, in as many threads as there are cores, the first time a
/// test asks, and the outputs are shared: five corpus tests read the same JSON reports, and
/// each run of the binary on a small bundle is mostly its start-up.
pub fn corpus_json(bundle: &Path) -> &'static Output {
    use std::collections::HashMap;
    use std::sync::OnceLock;
    static RUNS: OnceLock<HashMap<PathBuf, Output>> = OnceLock::new();
    let runs = RUNS.get_or_init(|| {
        let bundles = corpus_bundles();
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let per = bundles.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let workers: Vec<_> = bundles
                .chunks(per)
                .map(|chunk| {
                    s.spawn(move || {
                        chunk
                            .iter()
                            .map(|b| {
                                let out =
                                    raysift(&["analyze", b.to_str().unwrap(), "--format", "json"]);
                                (b.clone(), out)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        })
    });
    runs.get(bundle)
        .unwrap_or_else(|| panic!("{} is not a corpus bundle", bundle.display()))
}

/// `raysift` with environment variables set (`Some`) or removed (`None`), starting from the
/// same `NO_COLOR=1` as `raysift`.
pub fn raysift_env(args: &[&str], env: &[(&str, Option<&str>)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_raysift"));
    cmd.args(args).env("NO_COLOR", "1");
    for (name, value) in env {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    cmd.output().expect("the raysift binary runs")
}

/// A fresh scratch folder for test `name` of suite `suite`, under the temporary folder,
/// removed with everything in it when dropped (a failed test's is kept for a look).
pub fn scratch(suite: &str, name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("raysift-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A scratch folder ([`scratch`]); it derefs to its path.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
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

/// What is wrong with `value` as an instance of the repository's `schema/{which}.v1.json`
/// (`report`, `batch` or `timeline`), read strictly: an object may hold no key the schema
/// does not name, so a field added to the output without its schema fails here. (The
/// published schemas let consumers meet unknown keys: v1 only gains fields.) Read by the
/// in-house validator (`schema.rs`), which panics on a keyword it does not know. Each error
/// names the instance path (a JSON pointer) first. Empty: valid.
pub fn schema_errors(which: &str, value: &serde_json::Value) -> Vec<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static VALIDATORS: OnceLock<Mutex<HashMap<String, &'static schema::Validator>>> =
        OnceLock::new();
    let validator = {
        let mut map = VALIDATORS
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap();
        *map.entry(which.to_string()).or_insert_with(|| {
            let name = format!("schema/{which}.v1.json");
            let text = std::fs::read_to_string(root().join(&name)).unwrap();
            let mut schema: serde_json::Value = serde_json::from_str(&text).unwrap();
            schema::close_objects(&mut schema);
            Box::leak(Box::new(schema::Validator::new(&name, schema)))
        })
    };
    validator.errors(value)
}

/// Runs the built binary with extra environment variables whose values need not be UTF-8 (a
/// `PATH` with a fake `kubectl` first, for `raysift collect`).
pub fn raysift_env_os(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_raysift"));
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the raysift binary runs")
}

/// `raysift timeline ARGS… --format json`, one object a line; the command must succeed.
pub fn timeline_json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["timeline"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = raysift(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
