//! `raysift batch`: many bundles, one JSON line each.
//!
//! Inputs are listed (files; directories walked for archive files and unpacked bundle
//! folders, see `list_inputs`; `*`/`?` patterns the shell left alone), cleaned, sorted by
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
//!
//! The parts, one file each:
//!
//! - this file: the command line ([`Config`]), the run, the analysis of one bundle, and the
//!   job runner that hands the outcomes over in input order;
//! - `inputs.rs`: what a bundle to analyse is (`Input`, `Kind`: the path opened, the path
//!   shown, the key its shard is chosen by) and `--shard` ([`Shard`], FNV-1a 64);
//! - `listing.rs`: the arguments made into the list of bundles: patterns expanded,
//!   directories walked (an unpacked bundle told from a shelf of bundles), paths cleaned,
//!   sorted and kept once;
//! - `results.rs`: the line written for each bundle and the outcome behind it, and a results
//!   file read back (`--skip-done`) or opened to append to (`--out`);
//! - `summary.rs`: what a run shows besides its lines: the `--summary` table, the progress
//!   bar and the `--dry-run` plan;
//! - `tests.rs`: the tests of all the parts.

mod inputs;
mod listing;
mod results;
mod summary;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use crate::analysis::Analysis;
use crate::exit::{exit_code, Failure, EXIT_UNREADABLE};

use inputs::Input;
pub use inputs::Shard;
use listing::list_inputs;
use results::{open_out, read_done, same_file, CauseLine, Line, Outcome};
use summary::{write_plan, Progress, Tally};

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
            object: kept
                .first()
                .and_then(|c| c.objects.first())
                .map(ToString::to_string),
            at: kept
                .first()
                .and_then(|c| c.all_evidence().filter_map(|e| e.ts.clone()).min()),
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
            .filter(|u| u.is_unexplained_error())
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

/// Runs a batch.
///
/// # Errors
///
/// When `--skip-done` cannot be read or the output cannot be written; never because of a
/// bundle.
pub fn run(cfg: &Config, analysis: &Analysis) -> Result<ExitCode, Failure> {
    let started = Instant::now();
    let mut inputs = list_inputs(&cfg.inputs);
    let found = !inputs.is_empty();
    if !found {
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
    // A mistyped path, or a bundle that could not be analysed, must not pass for success.
    Ok(if tally.errors() > 0 || !found {
        ExitCode::from(EXIT_UNREADABLE)
    } else {
        ExitCode::SUCCESS
    })
}
