//! `raysift batch`: many bundles, one JSON line each.
//!
//! Inputs are listed (files; directories walked for archive files and unpacked bundle
//! folders, see [`list_inputs`]; `*`/`?` patterns the shell left alone), cleaned, sorted by
//! path, each once, cut to one `--shard`, and stripped of the bundles a previous run finished
//! (`--skip-done`); `--dry-run` prints that list and stops. `--jobs` workers then analyse one
//! bundle each at a time, with one parser thread per bundle, and the main thread writes the
//! lines in input order as soon as they are due, flushing each one so that a killed run keeps
//! what it finished.
//!
//! Invariants: a bundle never ends the run: an unopenable, unreadable or panicking analysis
//! is an `error` line. The lines do not depend on `--jobs` or on the order the directories
//! list their files (only `elapsed_ms` varies). The shard of a bundle depends only on its
//! path relative to the directory argument it was found under (FNV-1a 64), so a re-listing,
//! another machine or another build splits the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, IsTerminal, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::analysis::Analysis;
use crate::bundle::is_bundle_name;
use crate::exit::{exit_code, Failure, EXIT_UNREADABLE};
use crate::rules::Severity;

/// A validated `raysift batch` command line.
pub struct Config {
    /// Files, directories and patterns, as given.
    pub inputs: Vec<PathBuf>,
    /// Bundles analysed at once (at least 1).
    pub jobs: usize,
    /// Causes listed per line.
    pub top: usize,
    pub out: Option<PathBuf>,
    pub skip_done: Option<PathBuf>,
    pub shard: Option<Shard>,
    pub summary: bool,
    /// List what would be analysed, and analyse nothing.
    pub dry_run: bool,
}

/// One bundle to analyse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    /// The path as given or listed: the line's `path` and what `--skip-done` compares.
    pub shown: String,
    /// What `--shard` hashes: the path relative to the directory argument it was found
    /// under, else the path as given.
    pub key: String,
    /// Why it cannot even be tried (a pattern that matches nothing, a directory that cannot
    /// be listed).
    pub problem: Option<String>,
    pub kind: Kind,
}

/// What a bundle is on disk, as `--dry-run` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A file named like an archive (`.tar.gz`, `.tgz`, `.tar`, `.zip`, a `.gz` holding a tar).
    Archive,
    /// An unpacked bundle.
    Folder,
    /// Any other file (a single log, compressed or not).
    File,
    /// Nothing there (or a pattern that matched nothing, a directory that cannot be listed).
    Missing,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Archive => "archive",
            Kind::Folder => "folder",
            Kind::File => "file",
            Kind::Missing => "missing",
        }
    }

    fn of(path: &Path) -> Kind {
        match std::fs::metadata(path) {
            Err(_) => Kind::Missing,
            Ok(m) if m.is_dir() => Kind::Folder,
            Ok(_) if is_archive_file(path) => Kind::Archive,
            Ok(_) => Kind::File,
        }
    }
}

impl Input {
    fn given(path: &Path) -> Input {
        let shown = path.display().to_string();
        Input {
            path: path.to_path_buf(),
            key: shown.clone(),
            shown,
            problem: None,
            kind: Kind::of(path),
        }
    }

    /// A bundle found under a directory argument, `key` its path relative to the argument.
    fn found(path: PathBuf, key: String, kind: Kind) -> Input {
        Input {
            shown: path.display().to_string(),
            path,
            key,
            problem: None,
            kind,
        }
    }

    fn broken(shown: String, problem: String) -> Input {
        Input {
            path: PathBuf::from(&shown),
            key: shown.clone(),
            shown,
            problem: Some(problem),
            kind: Kind::Missing,
        }
    }
}

/// `--shard I/N`: keep the bundles whose key hashes to `I` modulo `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parses `I/N` (0-based `I`, as a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`).
    ///
    /// # Errors
    ///
    /// A message for the user when the text is not `I/N` with `N ≥ 1` and `I < N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let usage = |why: &str| format!("--shard {s:?}: {why}");
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| usage("expected I/N, such as 0/4 (shard I of N, counted from 0)"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| usage("I must be a whole number (is JOB_COMPLETION_INDEX set?)"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| usage("N must be a whole number"))?;
        if count == 0 {
            return Err(usage("N must be at least 1"));
        }
        if index >= count {
            return Err(usage(&format!(
                "I must be below N: shards are numbered 0 to {}",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    pub fn keeps(&self, key: &str) -> bool {
        fnv1a64(key.as_bytes()) % self.count == self.index
    }
}

/// FNV-1a, 64 bits: fixed by its definition, so shards agree across machines, Rust versions
/// and raysift releases (std's hashers promise none of that).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(PRIME);
    }
    hash
}

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// Whether one path component matches one pattern component (`*`, `?`); as in a shell, a
/// wildcard does not match a leading dot.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    crate::glob::glob_match(pattern.as_bytes(), name.as_bytes())
}

/// Expands a pattern component by component, as a shell would: `*` and `?` never cross a
/// `/`. Returns the existing matches, sorted.
pub fn expand_glob(pattern: &str) -> Vec<PathBuf> {
    let start = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    let mut current = vec![start];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for base in &current {
            if !has_wildcard(part) {
                next.push(base.join(part));
                continue;
            }
            let listed = if base.as_os_str().is_empty() {
                Path::new(".")
            } else {
                base.as_path()
            };
            let Ok(entries) = std::fs::read_dir(listed) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if let Some(name) = name.to_str() {
                    if name_matches(part, name) {
                        next.push(base.join(name));
                    }
                }
            }
        }
        next.sort();
        current = next;
    }
    current.retain(|p| !p.as_os_str().is_empty() && p.exists());
    current
}

/// Lists the bundles the arguments name, sorted by path, each once.
///
/// A file argument is one bundle whatever its name. A directory argument is walked down, and
/// each folder met is one of three things:
///
/// 1. **An unpacked bundle** when it directly holds a *log file*: a regular file (or a link to
///    one), not named like an archive, whose content raysift recognises as a Ray, KubeRay or
///    Kubernetes source (the classification `analyze` makes of its first 16 KiB). Everything
///    under it belongs to it, archives and compressed logs included.
/// 2. Below the argument only: **an unpacked bundle** when no [archive](is_archive_file) lies
///    anywhere under it and it holds at least one file (a Troubleshoot `support-bundle-…`
///    folder keeps its files in sub-folders).
/// 3. Otherwise **a shelf**: each archive file directly in it is a bundle, each sub-folder is
///    looked at by these rules, and other files (notes, a README, results) are ignored. A
///    compressed single log (`raylet.out.1.gz`) directly on a shelf is a bundle of its own.
///
/// A directory argument that yields no bundle this way (it holds files raysift does not
/// recognise, and no sub-folder or archive) is itself one bundle, as is any directory given
/// that directly holds a log file. Links to directories are not followed. An argument that
/// does not exist and holds `*` or `?` is expanded here, each match taken as if given; anything
/// else is a bundle, whose analysis reports what is wrong with it.
///
/// Paths are cleaned before they are compared (`./a.tar.gz`, `a.tar.gz` and `d/../a.tar.gz`
/// are one, as is a bundle listed under a directory argument and given again): among several
/// spellings of one file or folder, the first by path (then by shard key) is kept. A path
/// that lies inside a folder listed as a bundle is part of it, and dropped.
pub fn list_inputs(args: &[PathBuf]) -> Vec<Input> {
    let mut out = Vec::new();
    for arg in args {
        let pattern = arg.to_str().filter(|s| has_wildcard(s));
        match pattern {
            Some(p) if !arg.exists() => {
                let matches = expand_glob(p);
                if matches.is_empty() {
                    out.push(Input::broken(p.to_string(), "no file matches".to_string()));
                }
                for m in matches {
                    add_argument(&m, &mut out);
                }
            }
            _ => add_argument(arg, &mut out),
        }
    }
    out.sort_by(|a, b| a.shown.cmp(&b.shown).then(a.key.cmp(&b.key)));
    let mut seen = BTreeSet::new();
    let mut folders = BTreeSet::new();
    let mut kept = Vec::new();
    for input in out {
        let identity = std::fs::canonicalize(&input.path).unwrap_or_else(|_| input.path.clone());
        if !seen.insert((input.problem.is_some(), identity.clone())) {
            continue;
        }
        if input.kind == Kind::Folder && input.problem.is_none() {
            folders.insert(identity.clone());
        }
        kept.push((identity, input));
    }
    kept.into_iter()
        .filter(|(identity, _)| !identity.ancestors().skip(1).any(|a| folders.contains(a)))
        .map(|(_, input)| input)
        .collect()
}

/// The path without `.` components, and with `a/..` removed where that names the same file
/// (it does not when `a` is a link): what is shown, compared and hashed.
pub fn clean_path(path: &Path) -> PathBuf {
    let mut plain = PathBuf::new();
    let mut lexical = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                plain.push("..");
                match lexical.components().next_back() {
                    Some(Component::Normal(_)) => {
                        lexical.pop();
                    }
                    Some(Component::RootDir | Component::Prefix(_)) => {}
                    _ => lexical.push(".."),
                }
            }
            other => {
                plain.push(other.as_os_str());
                lexical.push(other.as_os_str());
            }
        }
    }
    let dot = |p: PathBuf| {
        if p.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            p
        }
    };
    let (plain, lexical) = (dot(plain), dot(lexical));
    if plain == lexical {
        return plain;
    }
    match (
        std::fs::canonicalize(&plain),
        std::fs::canonicalize(&lexical),
    ) {
        (Ok(a), Ok(b)) if a == b => lexical,
        (Err(_), Err(_)) => lexical,
        _ => plain,
    }
}

fn add_argument(arg: &Path, out: &mut Vec<Input>) {
    let arg = clean_path(arg);
    if !arg.is_dir() {
        out.push(Input::given(&arg));
        return;
    }
    let before = out.len();
    let listed = walk(&arg, "", out);
    if listed && out.len() == before {
        out.push(Input::given(&arg));
    }
}

/// What a directory entry is, to the walk.
enum Entry {
    /// A tar, zip or gzipped tar (or a file named like one that is none: its line says so).
    Archive(PathBuf),
    /// A `.gz` that holds one compressed file rather than a tar.
    CompressedLog(PathBuf),
    /// Any other regular file.
    Plain(PathBuf),
    Folder(PathBuf),
}

/// A directory's entries, in name order; `None` when it cannot be listed (reported in `out`).
fn entries(dir: &Path, out: &mut Vec<Input>) -> Option<Vec<(String, Entry)>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            out.push(Input::broken(
                dir.display().to_string(),
                format!("cannot list directory: {e}"),
            ));
            return None;
        }
    };
    let mut got = Vec::new();
    for entry in listing {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                out.push(Input::broken(
                    dir.display().to_string(),
                    format!("cannot list directory: {e}"),
                ));
                continue;
            }
        };
        // Under `.`, `x` rather than `./x`: the path is shown, and compared with others.
        let path = if dir == Path::new(".") {
            PathBuf::from(entry.file_name())
        } else {
            entry.path()
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let entry = if kind.is_dir() {
            Entry::Folder(path)
        } else if kind.is_file() || kind.is_symlink() && path.is_file() {
            if !is_bundle_name(&name) {
                Entry::Plain(path)
            } else if is_compressed_log(&path) {
                Entry::CompressedLog(path)
            } else {
                Entry::Archive(path)
            }
        } else {
            continue;
        };
        got.push((name, entry));
    }
    got.sort_by(|a, b| a.0.cmp(&b.0));
    Some(got)
}

/// Whether a file is an archive to the walk: named like one ([`BUNDLE_SUFFIXES`]) and not a
/// `.gz` whose content is one compressed file rather than a tar (`raylet.out.1.gz`).
pub fn is_archive_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    is_bundle_name(&name) && !is_compressed_log(path)
}

/// A `*.gz` (not `*.tar.gz`) that is gzip and whose first 512 inflated bytes are not a tar
/// header (`ustar` at 257). A file that is not gzip at all is not one: it stays an archive,
/// whose line says it is none.
fn is_compressed_log(path: &Path) -> bool {
    use std::io::Read;
    let lower = path.to_string_lossy().to_ascii_lowercase();
    if !lower.ends_with(".gz") || lower.ends_with(".tar.gz") {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut magic = [0u8; 2];
    let mut head = io::BufReader::new(file);
    if head.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut inflated = Vec::with_capacity(512);
    let mut decoder = flate2::read::GzDecoder::new(file).take(512);
    // A damaged stream keeps what inflated before the damage.
    let _ = decoder.read_to_end(&mut inflated);
    inflated.get(257..262) != Some(b"ustar")
}

/// Whether a plain file's first 16 KiB are recognisably a Ray, KubeRay or Kubernetes source.
fn is_log_file(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(crate::classify::SNIFF_BYTES);
    if file
        .take(crate::classify::SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    // By content alone: names decide too much on their own (`…-operator-….toml` is named like
    // an operator log), and a folder with logs nearly always has one that its content gives away.
    crate::classify::classify("unnamed", &head) != crate::event::SourceKind::Unknown
}

/// Whether an archive lies anywhere under `dir`, and whether any file does. Unlistable
/// folders count as holding nothing (the walk reports them when it gets there).
fn scan(dir: &Path) -> (bool, bool) {
    let mut files = false;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() || kind.is_symlink() && path.is_file() {
                if is_archive_file(&path) {
                    return (true, true);
                }
                files = true;
            }
        }
    }
    (false, files)
}

/// Walks `dir` (`rel` is `dir` relative to the argument; empty for the argument itself),
/// adding the bundles it finds by the rules of [`list_inputs`]. `false` when `dir` itself
/// cannot be listed.
fn walk(dir: &Path, rel: &str, out: &mut Vec<Input>) -> bool {
    let Some(listing) = entries(dir, out) else {
        return false;
    };
    let folder = |out: &mut Vec<Input>| {
        if rel.is_empty() {
            out.push(Input::given(dir));
        } else {
            out.push(Input::found(
                dir.to_path_buf(),
                rel.to_string(),
                Kind::Folder,
            ));
        }
    };
    let holds_log = listing
        .iter()
        .any(|(_, e)| matches!(e, Entry::Plain(p) if is_log_file(p)));
    if holds_log {
        folder(out);
        return true;
    }
    if !rel.is_empty() {
        let (archives, files) = scan(dir);
        if !archives {
            if files {
                folder(out);
            }
            return true;
        }
    }
    for (name, entry) in listing {
        let key = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        match entry {
            Entry::Archive(path) => out.push(Input::found(path, key, Kind::Archive)),
            Entry::CompressedLog(path) => out.push(Input::found(path, key, Kind::File)),
            Entry::Folder(path) => {
                walk(&path, &key, out);
            }
            Entry::Plain(_) => {}
        }
    }
    true
}

/// The line written for one bundle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Line {
    pub path: String,
    /// `ok` or `error`.
    pub status: &'static str,
    /// What `raysift analyze` exits with: 0 no failing cause in a bundle read in full, 1 a
    /// failing cause, 2 unreadable, or incomplete with no failing cause.
    pub exit: u8,
    /// The top causes, in rank order.
    pub causes: Vec<CauseLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether every part of the bundle was read (false on an error line).
    pub complete: bool,
    /// How many diagnostics the report has (problems with the bundle's content).
    pub diagnostics: usize,
    /// The bundle's size as stored (a directory: the bytes read from it).
    pub bundle_bytes: u64,
    pub elapsed_ms: u64,
}

/// A cause in a line: the report's own field names and values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CauseLine {
    pub id: String,
    pub severity: Severity,
    pub confidence: f64,
    pub title: String,
}

/// One bundle's result: its line and every cause it had (for the summary).
#[derive(Clone, Debug)]
pub struct Outcome {
    pub line: Line,
    pub causes: Vec<(String, Severity)>,
    /// Templates of error records no rule claimed and the baseline does not know, with their
    /// counts (for the summary: the next rules to write).
    pub unrecognised: Vec<(String, usize)>,
}

impl Outcome {
    fn error(input: &Input, bundle_bytes: u64, started: Instant, error: String) -> Outcome {
        Outcome {
            line: Line {
                path: input.shown.clone(),
                status: "error",
                exit: EXIT_UNREADABLE,
                causes: Vec::new(),
                error: Some(error),
                complete: false,
                diagnostics: 0,
                bundle_bytes,
                elapsed_ms: started.elapsed().as_millis() as u64,
            },
            causes: Vec::new(),
            unrecognised: Vec::new(),
        }
    }
}

/// What every analysis shares.
struct Context<'a> {
    analysis: &'a Analysis,
    top: usize,
}

fn analyse(input: &Input, ctx: &Context) -> Outcome {
    let started = Instant::now();
    let stored = std::fs::metadata(&input.path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    if let Some(problem) = &input.problem {
        return Outcome::error(input, 0, started, problem.clone());
    }
    let outcome = match ctx.analysis.run(&input.path) {
        Ok(o) => o,
        Err(e) => return Outcome::error(input, stored.unwrap_or(0), started, e.to_string()),
    };
    let (report, failing) = (outcome.report, outcome.failing);
    let bundle_bytes = stored.unwrap_or(report.bundle.bytes);
    if let Some(why) = outcome.unreadable {
        let mut outcome = Outcome::error(input, bundle_bytes, started, why);
        outcome.line.diagnostics = report.diagnostics.len();
        return outcome;
    }
    // The analysis kept the causes at or above the minimum severity.
    let kept: Vec<&crate::model::Cause> = report.causes.iter().collect();
    Outcome {
        line: Line {
            path: input.shown.clone(),
            status: "ok",
            exit: exit_code(&report, failing),
            causes: kept
                .iter()
                .take(ctx.top)
                .map(|c| CauseLine {
                    id: c.id.clone(),
                    severity: c.severity,
                    confidence: c.confidence,
                    title: c.title.clone(),
                })
                .collect(),
            error: None,
            complete: report.bundle.complete,
            diagnostics: report.diagnostics.len(),
            bundle_bytes,
            elapsed_ms: started.elapsed().as_millis() as u64,
        },
        // What the line lists, so the summary's counts agree with the lines.
        causes: kept
            .iter()
            .take(ctx.top)
            .map(|c| (c.id.clone(), c.severity))
            .collect(),
        unrecognised: report
            .unrecognised
            .iter()
            .filter(|u| !u.known_noise)
            .map(|u| (u.template.clone(), u.count))
            .collect(),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string())
}

/// Runs `work` over the inputs on `jobs` threads. `done` sees each outcome as it completes;
/// `emit` sees them in input order, each as soon as every earlier one has been emitted. A
/// panic in `work` becomes an error outcome. An error from `emit` stops the workers (after
/// the bundle each is on) and is returned.
fn run_jobs<W, D, E>(
    inputs: &[Input],
    jobs: usize,
    work: W,
    mut done: D,
    mut emit: E,
) -> io::Result<()>
where
    W: Fn(&Input) -> Outcome + Sync,
    D: FnMut(&Outcome),
    E: FnMut(Outcome) -> io::Result<()>,
{
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
        for _ in 0..jobs.max(1).min(inputs.len()) {
            let tx = tx.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(input) = inputs.get(i) else {
                        break;
                    };
                    let started = Instant::now();
                    // Relies on panic = "unwind" (the default; no profile changes it).
                    let outcome =
                        catch_unwind(AssertUnwindSafe(|| work(input))).unwrap_or_else(|payload| {
                            Outcome::error(
                                input,
                                0,
                                started,
                                format!("the analysis panicked: {}", panic_text(&*payload)),
                            )
                        });
                    if tx.send((i, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Outcome> = BTreeMap::new();
        let mut due = 0;
        for (i, outcome) in rx {
            done(&outcome);
            pending.insert(i, outcome);
            while let Some(o) = pending.remove(&due) {
                due += 1;
                if let Err(e) = emit(o) {
                    // Returning drops the receiver: the workers' next send fails.
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(())
    })
}

/// What a results file says is finished.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Done {
    /// Paths with an `ok` line.
    pub ok: BTreeSet<String>,
    /// Bytes up to the end of the last complete line.
    pub complete_len: u64,
    pub len: u64,
    /// Complete lines that are not results (the cut last line is not counted).
    pub bad_lines: usize,
}

#[derive(Deserialize)]
struct DoneLine {
    path: String,
    status: String,
}

/// Reads what a results file says is finished. Only lines ending in a newline count: the last
/// line of a run that was killed is cut, and ignored.
pub fn parse_done(bytes: &[u8]) -> Done {
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let mut done = Done {
        complete_len: complete as u64,
        len: bytes.len() as u64,
        ..Done::default()
    };
    for line in bytes[..complete].split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<DoneLine>(line) {
            Ok(l) if l.status == "ok" => {
                done.ok.insert(l.path);
            }
            Ok(_) => {}
            Err(_) => done.bad_lines += 1,
        }
    }
    done
}

fn read_done(path: &Path) -> Result<Done, Failure> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(parse_done(&bytes)),
        // The first run of a job: nothing is done yet.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Done::default()),
        Err(e) => Err(Failure::usage(format!(
            "--skip-done {}: {e}",
            path.display()
        ))),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Opens `--out`: created or truncated, or, when it is also the `--skip-done` file, appended
/// to after its cut last line is removed.
fn open_out(path: &Path, append_after: Option<&Done>) -> Result<std::fs::File, Failure> {
    let fail = |e: io::Error| Failure::usage(format!("cannot write {}: {e}", path.display()));
    match append_after {
        None => std::fs::File::create(path).map_err(fail),
        Some(done) => {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(fail)?;
            if done.complete_len < done.len {
                file.set_len(done.complete_len).map_err(fail)?;
            }
            Ok(file)
        }
    }
}

/// Counts for `--summary`.
#[derive(Debug, Default)]
struct Tally {
    ok: usize,
    /// Of the `ok` bundles, those that could not be read in full.
    incomplete: usize,
    /// Of the `ok` bundles, those whose line lists no cause.
    no_cause: usize,
    error: usize,
    bytes: u64,
    /// Cause id → bundles that had it, highest severity seen.
    causes: BTreeMap<String, (usize, Severity)>,
    /// Path and error of each failed bundle, in input order.
    failed: Vec<(String, String)>,
    /// Unrecognised template → (bundles that had it, records in all).
    templates: BTreeMap<String, (usize, usize)>,
}

/// The summary's row for the bundles whose line lists no cause.
const NO_CAUSE: &str = "(no cause)";

/// Most unrecognised templates the summary lists.
const SUMMARY_TEMPLATES: usize = 10;

impl Tally {
    fn add(&mut self, o: &Outcome) {
        self.bytes += o.line.bundle_bytes;
        if o.line.status == "ok" {
            self.ok += 1;
            if !o.line.complete {
                self.incomplete += 1;
            }
            if o.causes.is_empty() {
                self.no_cause += 1;
            }
        } else {
            self.error += 1;
            self.failed.push((
                o.line.path.clone(),
                o.line.error.clone().unwrap_or_default(),
            ));
        }
        let ids: BTreeMap<&str, Severity> =
            o.causes.iter().map(|(id, s)| (id.as_str(), *s)).collect();
        for (id, sev) in ids {
            let e = self
                .causes
                .entry(id.to_string())
                .or_insert((0, Severity::Info));
            e.0 += 1;
            e.1 = e.1.max(sev);
        }
        for (template, count) in &o.unrecognised {
            let e = self.templates.entry(template.clone()).or_default();
            e.0 += 1;
            e.1 += count;
        }
    }

    fn write(&self, w: &mut dyn Write, skipped: usize, elapsed: Duration) -> io::Result<()> {
        let mut rows: Vec<(&String, &(usize, Severity))> = self.causes.iter().collect();
        // Actionable causes first, benign (info) ones after; each by bundles, then id.
        let benign = |sev: Severity| sev == Severity::Info;
        rows.sort_by(|a, b| {
            benign(a.1 .1)
                .cmp(&benign(b.1 .1))
                .then(b.1 .0.cmp(&a.1 .0))
                .then(a.0.cmp(b.0))
        });
        let width = rows
            .iter()
            .map(|r| r.0.len())
            .max()
            .unwrap_or(0)
            .max(NO_CAUSE.len());
        writeln!(
            w,
            "{:<width$}  {:<8}  {:>7}",
            "cause", "severity", "bundles"
        )?;
        for (id, (count, sev)) in &rows {
            writeln!(w, "{id:<width$}  {:<8}  {count:>7}", sev.as_str())?;
        }
        if self.no_cause > 0 {
            writeln!(w, "{NO_CAUSE:<width$}  {:<8}  {:>7}", "-", self.no_cause)?;
        }
        if !self.templates.is_empty() {
            // Where the next rule is: errors no rule explains, in the most bundles.
            let mut templates: Vec<(&String, &(usize, usize))> = self.templates.iter().collect();
            templates.sort_by(|a, b| (b.1 .0, b.1 .1).cmp(&(a.1 .0, a.1 .1)).then(a.0.cmp(b.0)));
            writeln!(w, "\nunrecognised errors (bundles, records, template)")?;
            for (template, (bundles, records)) in templates.iter().take(SUMMARY_TEMPLATES) {
                writeln!(w, "  {bundles:>5}  {records:>7}  {template}")?;
            }
            if templates.len() > SUMMARY_TEMPLATES {
                writeln!(w, "  … and {} more", templates.len() - SUMMARY_TEMPLATES)?;
            }
        }
        if !self.failed.is_empty() {
            writeln!(w, "\nfailed bundles")?;
            for (path, error) in &self.failed {
                writeln!(w, "  {path}: {error}")?;
            }
        }
        let secs = elapsed.as_secs_f64();
        let incomplete = if self.incomplete > 0 {
            format!(" ({} incomplete)", self.incomplete)
        } else {
            String::new()
        };
        writeln!(
            w,
            "\n{}: {} ok{incomplete}, {} error, {} skipped as done; {} in {:.1} s, {:.1} MB/s",
            crate::words::count((self.ok + self.error) as u64, "bundle", "bundles"),
            self.ok,
            self.error,
            skipped,
            crate::words::size(self.bytes),
            secs,
            mb_per_s(self.bytes, elapsed)
        )
    }
}

fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        bytes as f64 / 1e6 / secs
    } else {
        0.0
    }
}

/// The progress bar: on standard error, only when it is a terminal.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    bytes: u64,
    started: Instant,
}

impl Progress {
    fn new(total: usize) -> Progress {
        let bar = (total > 0 && io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:30} {pos}/{len} bundles  {msg}  ETA {eta}",
            ) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(500));
            bar
        });
        Progress {
            bar,
            bytes: 0,
            started: Instant::now(),
        }
    }

    fn done(&mut self, o: &Outcome) {
        self.bytes += o.line.bundle_bytes;
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(format!(
                "{:.1} MB/s",
                mb_per_s(self.bytes, self.started.elapsed())
            ));
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `--dry-run`: one line per bundle, in run order: its path, a tab, and what it is (`archive`,
/// `folder`, `file`, `missing`), or `error: ` and why it cannot be tried.
fn write_plan(w: &mut dyn Write, inputs: &[Input]) -> io::Result<()> {
    for i in inputs {
        match &i.problem {
            Some(problem) => writeln!(w, "{}\terror: {problem}", i.shown)?,
            None => writeln!(w, "{}\t{}", i.shown, i.kind.as_str())?,
        }
    }
    Ok(())
}

/// Runs a batch.
///
/// # Errors
///
/// When `--skip-done` cannot be read or the output cannot be written; never because of a
/// bundle.
pub fn run(cfg: &Config, analysis: &Analysis) -> Result<ExitCode, Failure> {
    let started = Instant::now();
    let mut inputs = list_inputs(&cfg.inputs);
    if inputs.is_empty() {
        eprintln!("raysift: no bundle found");
    }
    if let Some(shard) = cfg.shard {
        inputs.retain(|i| shard.keeps(&i.key));
    }
    let mut skipped = 0;
    let mut append_after = None;
    if let Some(path) = &cfg.skip_done {
        let done = read_done(path)?;
        if done.bad_lines > 0 {
            eprintln!(
                "raysift: --skip-done {}: {} lines are not batch results, ignored",
                path.display(),
                done.bad_lines
            );
        }
        let before = inputs.len();
        inputs.retain(|i| !done.ok.contains(&i.shown));
        skipped = before - inputs.len();
        if cfg.out.as_deref().is_some_and(|out| same_file(out, path)) {
            append_after = Some(done);
        }
    }
    if cfg.dry_run {
        let mut w = io::stdout().lock();
        write_plan(&mut w, &inputs)?;
        w.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out: Box<dyn Write> = match &cfg.out {
        Some(path) => Box::new(open_out(path, append_after.as_ref())?),
        None => Box::new(io::stdout().lock()),
    };
    let ctx = Context {
        analysis,
        top: cfg.top,
    };
    let mut progress = Progress::new(inputs.len());
    let mut tally = Tally::default();
    let result = run_jobs(
        &inputs,
        cfg.jobs,
        |input| analyse(input, &ctx),
        |o| progress.done(o),
        |o| {
            tally.add(&o);
            let mut bytes = serde_json::to_vec(&o.line).map_err(io::Error::from)?;
            bytes.push(b'\n');
            out.write_all(&bytes)?;
            out.flush()
        },
    );
    progress.finish();
    result.map_err(|e| match &cfg.out {
        Some(path) if e.kind() != io::ErrorKind::BrokenPipe => {
            Failure::usage(format!("cannot write {}: {e}", path.display()))
        }
        _ => Failure::from(e),
    })?;
    drop(out);
    if cfg.summary {
        let elapsed = started.elapsed();
        if cfg.out.is_some() {
            let mut w = io::stdout().lock();
            tally.write(&mut w, skipped, elapsed)?;
            w.flush()?;
        } else {
            tally.write(&mut io::stderr().lock(), skipped, elapsed)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_known_values() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn shard_parsing() {
        assert_eq!(Shard::parse("0/1"), Ok(Shard { index: 0, count: 1 }));
        assert_eq!(Shard::parse("3/4"), Ok(Shard { index: 3, count: 4 }));
        for bad in ["4/4", "0/0", "1", "/4", "a/4", "1/b", "-1/4", ""] {
            let err = Shard::parse(bad).unwrap_err();
            assert!(err.starts_with("--shard"), "{bad}: {err}");
        }
        assert!(Shard::parse("4/4").unwrap_err().contains("0 to 3"));
    }

    #[test]
    fn shards_partition_the_keys() {
        let keys: Vec<String> = (0..200).map(|i| format!("incident-{i}.tar.gz")).collect();
        let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
        let mut sizes = [0usize; 3];
        for k in &keys {
            let owners: Vec<usize> = (0..3).filter(|&i| shards[i].keeps(k)).collect();
            assert_eq!(owners.len(), 1, "{k}");
            sizes[owners[0]] += 1;
        }
        assert!(sizes.iter().all(|&n| n > 40), "{sizes:?}");
        // Fixed by FNV-1a's definition, whatever the machine or the build.
        assert_eq!(fnv1a64(b"incident-0.tar.gz"), 0xecc4_22be_8e1a_83e6);
        assert!(Shard { index: 0, count: 3 }.keeps("incident-0.tar.gz"));
    }

    #[test]
    fn glob_components() {
        assert!(name_matches("*.tar.gz", "a.tar.gz"));
        assert!(name_matches("incident-??.zip", "incident-07.zip"));
        assert!(!name_matches("incident-??.zip", "incident-7.zip"));
        assert!(!name_matches("*.tar.gz", "a.tar.gz.part"));
        assert!(!name_matches("*", ".hidden.tar.gz"));
        assert!(name_matches(".*", ".hidden.tar.gz"));
        assert!(name_matches("*", "x"));
        assert!(is_bundle_name("X.TGZ"));
        assert!(!is_bundle_name("results.ndjson"));
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("raysift-batch-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn listing_searches_directories_and_expands_patterns() {
        let root = scratch("list");
        for f in [
            "b.tar.gz",
            "a.zip",
            "notes.txt",
            "2024/c.tgz",
            "2024/deep/d.gz",
            ".hidden.tar",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"x").unwrap();
        }
        std::fs::create_dir_all(root.join("extracted/logs")).unwrap();
        std::fs::write(root.join("extracted/logs/raylet.out"), b"x").unwrap();
        let r = root.display().to_string();
        let got = list_inputs(std::slice::from_ref(&root));
        let keys: Vec<&str> = got.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                ".hidden.tar",
                "2024/c.tgz",
                "2024/deep/d.gz",
                "a.zip",
                "b.tar.gz",
                "extracted"
            ]
        );
        assert_eq!(got[1].shown, format!("{r}/2024/c.tgz"));
        // A directory holding an unpacked bundle in a sub-folder lists it; a pattern is
        // expanded like a shell would; one that matches nothing is an input that cannot be tried.
        let got = list_inputs(&[
            root.join("extracted"),
            PathBuf::from(format!("{r}/*.tar.gz")),
            PathBuf::from(format!("{r}/*/*.t?z")),
            PathBuf::from(format!("{r}/nothing-*.zip")),
        ]);
        let shown: Vec<(String, String, bool)> = got
            .iter()
            .map(|i| {
                (
                    i.shown.replace(&r, "R"),
                    i.key.replace(&r, "R"),
                    i.problem.is_some(),
                )
            })
            .collect();
        let s = |a: &str, b: &str, p: bool| (a.to_string(), b.to_string(), p);
        assert_eq!(
            shown,
            [
                s("R/2024/c.tgz", "R/2024/c.tgz", false),
                s("R/b.tar.gz", "R/b.tar.gz", false),
                s("R/extracted/logs", "logs", false),
                s("R/nothing-*.zip", "R/nothing-*.zip", true),
            ]
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    const RAY_LINE: &str = "[2024-05-01 10:00:00,123 I 1 2] (raylet) main.cc:1: Raylet started.\n";

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn put(root: &Path, rel: &str, bytes: &[u8]) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    #[test]
    fn walking_tells_unpacked_bundles_from_shelves() {
        let root = scratch("walk");
        let log = RAY_LINE.as_bytes();
        // Side files on the shelf, including a previous run's results.
        put(&root, "README.md", b"# Incidents\n\nOne folder each.\n");
        put(&root, "expected.toml", b"expected = [\"a_cause\"]\n");
        put(&root, "notes.txt", b"ask about the upgrade\n");
        put(
            &root,
            "results.ndjson",
            b"{\"path\":\"x.tar.gz\",\"status\":\"ok\",\"exit\":0,\"causes\":[]}\n",
        );
        // Files at the top, an archive and a rotated log among them: one bundle.
        put(&root, "flat/raylet.out", log);
        put(&root, "flat/raylet.out.1.gz", &gzip(log));
        put(&root, "flat/more.tar.gz", b"x");
        // Files only in sub-folders, a rotated log there too.
        put(&root, "nested/head-logs/gcs_server.out", log);
        put(&root, "nested/head-logs/gcs_server.out.1.gz", &gzip(log));
        put(&root, "nested/worker-logs/raylet.out", log);
        // A wrapper around one bundle.
        put(
            &root,
            "wrapped/support-bundle/cluster-info/version.json",
            b"{}",
        );
        put(
            &root,
            "wrapped/support-bundle/all-logs/op/operator.log",
            log,
        );
        // A shelf below the shelf, with an archive, a gzipped tar, a lone compressed log.
        put(&root, "2024/a.tar.gz", b"x");
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        put(&root, "2024/b.gz", &gzip(&tar));
        put(&root, "2024/single.log.gz", &gzip(log));
        put(&root, "2024/c/raylet.out", log);
        std::fs::create_dir_all(root.join("empty")).unwrap();
        let got: Vec<(String, &str)> = list_inputs(std::slice::from_ref(&root))
            .iter()
            .map(|i| (i.key.clone(), i.kind.as_str()))
            .collect();
        let want = [
            ("2024/a.tar.gz", "archive"),
            ("2024/b.gz", "archive"),
            ("2024/c", "folder"),
            ("2024/single.log.gz", "file"),
            ("flat", "folder"),
            ("nested", "folder"),
            ("wrapped", "folder"),
        ]
        .map(|(k, v)| (k.to_string(), v));
        assert_eq!(got, want);
        // Parts of a listed bundle, given too, are not analysed again.
        let again = list_inputs(&[
            root.join("nested/head-logs"),
            root.join("flat/raylet.out"),
            root.clone(),
            root.join("2024/c/raylet.out"),
        ]);
        let keys: Vec<&str> = again.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(
            keys,
            want.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()
        );
        // Given itself, a bundle with a log file at the top is one bundle; one with its files
        // only in sub-folders is a shelf of them.
        let given = |b: &str| -> Vec<(PathBuf, Kind)> {
            list_inputs(&[root.join(b)])
                .into_iter()
                .map(|i| (i.path, i.kind))
                .collect()
        };
        assert_eq!(given("flat"), [(root.join("flat"), Kind::Folder)]);
        assert_eq!(
            given("wrapped"),
            [(root.join("wrapped/support-bundle"), Kind::Folder)]
        );
        assert_eq!(
            given("nested"),
            [
                (root.join("nested/head-logs"), Kind::Folder),
                (root.join("nested/worker-logs"), Kind::Folder)
            ]
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn paths_are_cleaned_before_they_are_compared() {
        let root = scratch("clean");
        put(&root, "a.tar.gz", b"x");
        std::fs::create_dir_all(root.join("d")).unwrap();
        let r = root.display().to_string();
        assert_eq!(clean_path(Path::new("./a/./b//c")), PathBuf::from("a/b/c"));
        assert_eq!(clean_path(Path::new(".")), PathBuf::from("."));
        assert_eq!(clean_path(Path::new("/..")), PathBuf::from("/"));
        assert_eq!(clean_path(Path::new("../x")), PathBuf::from("../x"));
        let got = list_inputs(&[
            PathBuf::from(format!("{r}/./a.tar.gz")),
            PathBuf::from(format!("{r}/d/../a.tar.gz")),
            root.clone(),
            PathBuf::from(format!("{r}//a.tar.gz")),
        ]);
        let shown: Vec<&str> = got.iter().map(|i| i.shown.as_str()).collect();
        assert_eq!(shown, [format!("{r}/a.tar.gz")]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn done_lines_tolerate_a_cut_last_line() {
        let text = concat!(
            "{\"path\":\"a.tar.gz\",\"status\":\"ok\",\"exit\":1}\n",
            "{\"path\":\"b.tar.gz\",\"status\":\"error\",\"exit\":2}\n",
            "not json\n",
            "\n",
            "{\"path\":\"c.tar.gz\",\"status\":\"ok\"}\n",
            "{\"path\":\"d.tar.gz\",\"sta"
        );
        let done = parse_done(text.as_bytes());
        let ok: Vec<&str> = done.ok.iter().map(String::as_str).collect();
        assert_eq!(ok, ["a.tar.gz", "c.tar.gz"]);
        assert_eq!(done.bad_lines, 1);
        assert_eq!(done.len, text.len() as u64);
        assert_eq!(
            done.complete_len as usize,
            text.len() - "{\"path\":\"d.tar.gz\",\"sta".len()
        );
        // A complete last line without its newline is treated as cut too.
        let done = parse_done(b"{\"path\":\"a\",\"status\":\"ok\"}");
        assert!(done.ok.is_empty());
        assert_eq!(done.complete_len, 0);
    }

    fn ok_outcome(input: &Input) -> Outcome {
        Outcome {
            line: Line {
                path: input.shown.clone(),
                status: "ok",
                exit: 0,
                causes: Vec::new(),
                error: None,
                complete: true,
                diagnostics: 0,
                bundle_bytes: 1,
                elapsed_ms: 0,
            },
            causes: vec![("some_cause".to_string(), Severity::Error)],
            unrecognised: vec![("Lease lost for worker <*>".to_string(), 3)],
        }
    }

    #[test]
    fn jobs_emit_in_input_order_and_a_panic_is_an_error_line() {
        let inputs: Vec<Input> = (0..40)
            .map(|i| Input::given(Path::new(&format!("b{i:02}.tar.gz"))))
            .collect();
        for jobs in [1, 3, 64] {
            let mut seen = Vec::new();
            let mut completed = 0;
            run_jobs(
                &inputs,
                jobs,
                |input| {
                    // Later inputs finish first, so order must come from the emitter.
                    let n: u64 = input.shown[1..3].parse().unwrap();
                    std::thread::sleep(Duration::from_millis((40 - n) / 8));
                    if input.shown == "b07.tar.gz" {
                        panic!("a bug in one bundle's analysis");
                    }
                    ok_outcome(input)
                },
                |_| completed += 1,
                |o| {
                    seen.push(o.line);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(completed, 40);
            let paths: Vec<&str> = seen.iter().map(|l| l.path.as_str()).collect();
            let want: Vec<&str> = inputs.iter().map(|i| i.shown.as_str()).collect();
            assert_eq!(paths, want, "jobs {jobs}");
            let bad = &seen[7];
            assert_eq!((bad.status, bad.exit), ("error", 2));
            assert!(
                bad.error
                    .as_deref()
                    .unwrap()
                    .contains("panicked: a bug in one bundle's analysis"),
                "{bad:?}"
            );
            assert!(seen.iter().filter(|l| l.status == "ok").count() == 39);
        }
    }

    #[test]
    fn a_failing_writer_stops_the_run() {
        let inputs: Vec<Input> = (0..100)
            .map(|i| Input::given(Path::new(&format!("b{i:03}.zip"))))
            .collect();
        let analysed = AtomicUsize::new(0);
        let mut emitted = 0;
        let err = run_jobs(
            &inputs,
            2,
            |input| {
                analysed.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
                ok_outcome(input)
            },
            |_| {},
            |_| {
                emitted += 1;
                if emitted == 3 {
                    Err(io::Error::from(io::ErrorKind::BrokenPipe))
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert!(analysed.load(Ordering::Relaxed) < 20);
    }

    #[test]
    fn summary_counts_bundles_per_cause() {
        let mut t = Tally::default();
        let input = Input::given(Path::new("a.tar.gz"));
        let mut o = ok_outcome(&input);
        o.causes = vec![
            ("b_cause".to_string(), Severity::Warning),
            ("a_cause".to_string(), Severity::Error),
            ("z_benign".to_string(), Severity::Info),
        ];
        t.add(&o);
        o.causes = vec![
            ("b_cause".to_string(), Severity::Critical),
            ("z_benign".to_string(), Severity::Info),
        ];
        t.add(&o);
        o.causes = vec![("z_benign".to_string(), Severity::Info)];
        t.add(&o);
        // Two bundles whose lines list no cause.
        o.causes = Vec::new();
        t.add(&o);
        t.add(&o);
        t.add(&Outcome::error(
            &Input::given(Path::new("x.tar.gz")),
            7,
            Instant::now(),
            "not an archive".to_string(),
        ));
        let mut buf = Vec::new();
        t.write(&mut buf, 2, Duration::from_secs(1)).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // The benign id seen in the most bundles comes after the actionable ones; the bundles
        // with no cause have their own row.
        assert_eq!(
            lines[..5],
            [
                "cause       severity  bundles",
                "b_cause     critical        2",
                "a_cause     error           1",
                "z_benign    info            3",
                "(no cause)  -               2",
            ]
        );
        assert!(text.contains("failed bundles\n  x.tar.gz: not an archive\n"));
        // The same unrecognised template in five bundles, three records each.
        assert!(text.contains(
            "unrecognised errors (bundles, records, template)\n      5       15  Lease lost for worker <*>\n"
        ));
        assert!(text.contains("6 bundles: 5 ok, 1 error, 2 skipped as done; 12 bytes in 1.0 s"));
    }
}
