//! One analysis of one bundle: the pipeline, its stages in order.
//!
//! ```text
//! load (sieved) → timeline → narrow → rules → open world → rank → readable? → keep ≥ min
//!                                                                      └─ page: picture
//! ```
//!
//! `load` reads only the lines a rule could match, in parallel; `timeline` resolves every time
//! and merges the files; `narrow` keeps the events of the objects `--namespace`/`--object`
//! name; the rules' findings and the open world's below them are ranked into a [`Report`];
//! a bundle that opened but holds nothing readable is said to be so (no cause is not a clean
//! bill of health); the causes below `--min-severity` are dropped; and, for the HTML page
//! only, a second, streamed read draws the incident picture and counts every line.
//!
//! `analyze`, `batch` and the tests run it through [`Analysis::run`]; the commands that only
//! read (`timeline`, `--inventory`) call `streamed` directly. Nothing here parses arguments or
//! writes an output: a report goes back to the caller, which renders it.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::diag::Diagnostic;
use crate::inventory::Inventory;
use crate::load::LoadConfig;
use crate::model::Report;
use crate::objects::{BundleObjects, Filter, Verdict};
use crate::open_world::Baseline;
use crate::rank::{rank, Quote};
use crate::report_data::TimelineDataConfig;
use crate::rules::engine::Engine;
use crate::rules::sieve::Sieve;
use crate::rules::{Rule, Severity};
use crate::streamed;
use crate::timeline::{build, TimeConfig, Timeline};

/// What is told of a read while it goes on (a progress bar on a terminal).
pub trait Progress: Send + Sync {
    /// A read of the bundle begins: what to tell of each file or piece read.
    fn start(&self) -> Option<crate::load::Progress>;
    /// The read is over.
    fn finish(&self);
}

/// How to analyse bundles: the rules and how to read; one `Analysis` runs on many bundles.
pub struct Analysis {
    /// The rules, until the engine is built from them.
    rules: Mutex<Option<Vec<Rule>>>,
    /// Built once the first bundle is read, not before: its matchers (a case-insensitive
    /// automaton over every literal) would otherwise add to the read's peak memory.
    engine: OnceLock<Engine>,
    load: LoadConfig,
    time: TimeConfig,
    fail_on: Severity,
    min_severity: Severity,
    filter: Option<Filter>,
    picture: Option<TimelineDataConfig>,
    progress: Option<Arc<dyn Progress>>,
    quote: Quote,
}

/// One bundle's analysis.
pub struct Outcome {
    /// The causes at or above the minimum severity; every cause when `unreadable`.
    pub report: Report,
    /// A cause that is not benign reaches `fail_on` (among every cause found).
    pub failing: bool,
    /// Why a bundle that opened is still no bundle to analyse (`Timeline::unreadable`), or
    /// why the objects asked for are not in it: then no cause means nothing, and the report
    /// is neither filtered nor drawn.
    pub unreadable: Option<String>,
}

impl Analysis {
    /// An analysis with `rules`, reading as `load` says (its sieve is made from the rules)
    /// and resolving times as `time` says. Fails on `error` (as `--fail-on`), keeps every cause, narrows
    /// nothing and draws no picture until told otherwise.
    pub fn new(rules: Vec<Rule>, mut load: LoadConfig, time: TimeConfig) -> Analysis {
        load.sieve = Some(Arc::new(Sieve::new(&rules)));
        Analysis {
            rules: Mutex::new(Some(rules)),
            engine: OnceLock::new(),
            load,
            time,
            fail_on: Severity::Error,
            min_severity: Severity::Info,
            filter: None,
            picture: None,
            progress: None,
            quote: Quote::Cut,
        }
    }

    /// The lowest severity of a cause that fails the run.
    pub fn fail_on(mut self, severity: Severity) -> Analysis {
        self.fail_on = severity;
        self
    }

    /// How evidence quotes its records: cut around what matched, or whole.
    pub fn quote(mut self, quote: Quote) -> Analysis {
        self.quote = quote;
        self
    }

    /// The lowest severity of a cause the report keeps.
    pub fn min_severity(mut self, severity: Severity) -> Analysis {
        self.min_severity = severity;
        self
    }

    /// Find the causes among these objects' events only.
    pub fn filter(mut self, filter: Option<Filter>) -> Analysis {
        self.filter = filter;
        self
    }

    /// Draw the incident picture (the HTML page), from a second, streamed read.
    pub fn picture(mut self, cfg: TimelineDataConfig) -> Analysis {
        self.picture = Some(cfg);
        self
    }

    /// Tell `progress` of every read.
    pub fn progress(mut self, progress: Arc<dyn Progress>) -> Analysis {
        self.progress = Some(progress);
        self
    }

    /// The rules' engine (the library's rules), built on first use.
    pub fn engine(&self) -> &Engine {
        self.engine.get_or_init(|| {
            let rules = self.rules.lock().ok().and_then(|mut r| r.take());
            Engine::new(rules.unwrap_or_default())
        })
    }

    /// Analyses the bundle at `path`, stage by stage.
    ///
    /// # Errors
    ///
    /// Only when the bundle cannot be opened at all, or the picture's read fails.
    pub fn run(&self, path: &Path) -> Result<Outcome, streamed::Error> {
        self.run_looking(path, |_| ()).map(|(outcome, ())| outcome)
    }

    /// [`Analysis::run`], and `look` at the timeline once it is narrowed and ranked, before
    /// it is dropped: what a command needs of the events beyond the report (`diff` reads the
    /// Ray objects' specs and states from their facts).
    ///
    /// # Errors
    ///
    /// As [`Analysis::run`].
    pub fn run_looking<T>(
        &self,
        path: &Path,
        look: impl FnOnce(&Timeline) -> T,
    ) -> Result<(Outcome, T), streamed::Error> {
        let started = Instant::now();
        let loaded = self.read(|load| crate::load::load(path, load), &self.load);
        let mut tl = build(loaded?, &self.time);
        // A filter that names nothing would rank what is left, the events that name no
        // object, as if they were the object's: a typo must not read as its diagnosis.
        let unnamed = match &self.filter {
            Some(f) if !narrow(&mut tl, f) => Some(f.nothing_named()),
            _ => None,
        };
        let (mut report, failing) =
            rank_timeline(&tl, self.engine(), self.fail_on, self.quote, started);
        if self.load.sieve.is_some() {
            report.inventory.sieved();
        }
        report.bundle.filter = self.filter.clone();
        let looked = look(&tl);
        let unreadable = unnamed.or_else(|| tl.unreadable(path)).or_else(|| {
            // The sieved read kept few lines of files nothing matched: before refusing the
            // bundle, a second look at the head of every file.
            tl.not_a_bundle(!report.causes.is_empty())
                .filter(|_| !head_speaks_of_ray(path, &self.load.limits))
        });
        if unreadable.is_none() {
            let min = self.min_severity;
            report.causes.retain(|c| c.severity >= min);
            if let Some(cfg) = &self.picture {
                self.draw(path, tl, &mut report, cfg)?;
            }
        }
        Ok((
            Outcome {
                report,
                failing,
                unreadable,
            },
            looked,
        ))
    }

    /// The page's picture and the whole bundle's counts: a second, streamed read of every
    /// line, the records near the evidence built whole.
    fn draw(
        &self,
        path: &Path,
        tl: Timeline,
        report: &mut Report,
        cfg: &TimelineDataConfig,
    ) -> Result<(), streamed::Error> {
        let near = streamed::near_evidence(&tl, report, cfg);
        drop(tl);
        let whole = LoadConfig {
            sieve: None,
            ..self.load.clone()
        };
        let (data, inventory, diagnostics) = self.read(
            |load| streamed::picture(path, load, &self.time, report, cfg, near),
            &whole,
        )?;
        report.timeline = Some(data);
        whole_bundle(report, inventory, diagnostics);
        Ok(())
    }

    /// Runs one read of the bundle with `load`, telling the progress of it.
    fn read<T>(&self, read: impl FnOnce(&LoadConfig) -> T, load: &LoadConfig) -> T {
        let Some(progress) = &self.progress else {
            return read(load);
        };
        let told = LoadConfig {
            progress: progress.start(),
            ..load.clone()
        };
        let got = read(&told);
        progress.finish();
        got
    }
}

/// The rules' findings and the open world's below them, ranked into a report.
pub fn rank_all(tl: &Timeline, engine: &Engine, elapsed_ms: u64) -> Report {
    rank_quoted(tl, engine, elapsed_ms, Quote::Cut)
}

/// [`rank_all`], its evidence quoted as `quote` says.
fn rank_quoted(tl: &Timeline, engine: &Engine, elapsed_ms: u64, quote: Quote) -> Report {
    let mut findings = engine.run(&tl.events);
    let open = crate::open_world::analyze(&tl.events, &engine.rules, &findings, baseline());
    findings.extend(open.findings);
    // Every Serve config checked against the schema of the bundle's Ray version: a finding
    // of its own, whatever else fired (a key Serve dropped leaves no error to see).
    let checked = crate::serve_schema::check(&tl.events, engine.rules.len() + open.rules.len());
    findings.extend(checked.findings);
    crate::judge::judge(tl, &mut findings);
    let rules: Vec<Rule> = engine
        .rules
        .iter()
        .chain(&open.rules)
        .chain(&checked.rules)
        .cloned()
        .collect();
    let mut report = rank(tl, &rules, &findings, elapsed_ms, quote);
    report.unrecognised = open.unrecognised;
    report
}

/// The healthy-noise baseline, parsed once.
fn baseline() -> &'static Baseline {
    static BASELINE: OnceLock<Baseline> = OnceLock::new();
    BASELINE.get_or_init(Baseline::builtin)
}

/// Runs the rules over a timeline and ranks the findings; `true` when a cause that is not
/// benign reaches `fail_on`.
fn rank_timeline(
    tl: &Timeline,
    engine: &Engine,
    fail_on: Severity,
    quote: Quote,
    started: Instant,
) -> (Report, bool) {
    let report = rank_quoted(tl, engine, started.elapsed().as_millis() as u64, quote);
    let failing = report
        .causes
        .iter()
        .any(|c| c.severity >= fail_on && c.severity != Severity::Info);
    (report, failing)
}

/// Keeps the events `f` keeps; `false` when no event names its object or namespace (a typo
/// would otherwise look like a healthy object).
fn narrow(tl: &mut Timeline, f: &Filter) -> bool {
    let bundle = BundleObjects::of(&tl.events);
    let path_pods = bundle.path_pods(&tl.files);
    let mut named = 0usize;
    tl.events.retain(|ev| {
        let pod = path_pods.get(ev.file as usize).and_then(Option::as_ref);
        match f.judge_in(ev, pod, &bundle) {
            Verdict::Named => {
                named += 1;
                true
            }
            Verdict::Unknown => true,
            Verdict::Other => false,
        }
    });
    named > 0
}

/// What a report says of the bundle, from the inventory of a full read rather than the
/// sieved one: counts, window and diagnostics of every line.
fn whole_bundle(report: &mut Report, inventory: Inventory, diagnostics: Vec<Diagnostic>) {
    report.window = inventory.window.clone();
    report.stats.events = inventory.records_parsed;
    report.stats.unparsed_lines = inventory.unparsed_lines;
    report.bundle.files = inventory.files;
    report.bundle.bytes = inventory.bytes;
    report.bundle.sources = inventory.sources.clone();
    report.bundle.judge_completeness(&diagnostics);
    report.diagnostics = diagnostics;
    report.inventory = inventory;
}

/// How much of each file the second look reads.
const HEAD_BYTES: usize = 16 * 1024;

/// Whether the head of any file of the bundle speaks of Ray (`classify::speaks_of_ray`). A
/// bundle read from standard input cannot be read twice: it is given the benefit of the doubt.
fn head_speaks_of_ray(path: &Path, limits: &crate::bundle::Limits) -> bool {
    if path == Path::new("-") {
        return true;
    }
    let mut found = false;
    let walked = crate::bundle::walk_in_pieces(path, limits, 1 << 20, None, &mut |entry| {
        if !found && entry.piece.index == 0 {
            let head = &entry.bytes[..entry.bytes.len().min(HEAD_BYTES)];
            found = crate::classify::speaks_of_ray(&String::from_utf8_lossy(head));
        }
    });
    found || walked.is_err()
}
