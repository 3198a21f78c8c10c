//! What a run shows besides its lines: the `--summary` table (`Tally`: the bundles each
//! cause was listed for and led, the gravest first, the errors no rule recognised, the failed
//! and the incomplete bundles, the totals), the progress bar, drawn only when standard
//! error is a terminal (`Progress`), and the `--dry-run` plan (`write_plan`).
//!
//! Invariant: the summary counts the causes each line lists (the top ones, by `--top`), so
//! its counts agree with the lines.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use super::inputs::Input;
use super::results::Outcome;
use crate::rules::Severity;

/// Counts for `--summary`.
#[derive(Debug, Default)]
pub(super) struct Tally {
    ok: usize,
    /// Of the `ok` bundles, those that could not be read in full.
    incomplete: usize,
    /// Of the `ok` bundles, those whose line lists no cause.
    no_cause: usize,
    error: usize,
    bytes: u64,
    /// Cause id → bundles that had it, highest severity seen.
    causes: BTreeMap<String, (usize, Severity)>,
    /// Cause id → bundles whose line lists it first.
    first: BTreeMap<String, usize>,
    /// Path and error of each failed bundle, in input order.
    failed: Vec<(String, String)>,
    /// Paths of the `ok` bundles that could not be read in full, in input order.
    incomplete_paths: Vec<String>,
    /// Unrecognised template → (bundles that had it, records in all).
    templates: BTreeMap<String, (usize, usize)>,
}

/// The summary's row for the bundles whose line lists no cause.
const NO_CAUSE: &str = "(no cause)";

/// Most unrecognised templates the summary lists.
const SUMMARY_TEMPLATES: usize = 10;

impl Tally {
    /// The bundles that could not be analysed (their lines are `error`s).
    pub(super) fn errors(&self) -> usize {
        self.error
    }

    pub(super) fn add(&mut self, o: &Outcome) {
        self.bytes += o.line.bundle_bytes;
        if o.line.status == "ok" {
            self.ok += 1;
            if !o.line.complete {
                self.incomplete += 1;
                self.incomplete_paths.push(o.line.path.clone());
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
        if let Some((id, _)) = o.causes.first() {
            *self.first.entry(id.clone()).or_default() += 1;
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

    pub(super) fn write(
        &self,
        w: &mut dyn Write,
        skipped: usize,
        elapsed: Duration,
    ) -> io::Result<()> {
        let first = |id: &str| self.first.get(id).copied().unwrap_or(0);
        let mut rows: Vec<(&String, &(usize, Severity))> = self.causes.iter().collect();
        // The gravest first (benign `info` last); within a severity, the causes that came
        // first in the most bundles (root causes before the generic findings beside them),
        // then by bundles, then id.
        rows.sort_by(|a, b| {
            b.1 .1
                .cmp(&a.1 .1)
                .then(first(b.0).cmp(&first(a.0)))
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
            "{:<width$}  {:<8}  {:>5}  {:>7}",
            "cause", "severity", "first", "bundles"
        )?;
        for (id, (count, sev)) in &rows {
            writeln!(
                w,
                "{id:<width$}  {:<8}  {:>5}  {count:>7}",
                sev.as_str(),
                first(id)
            )?;
        }
        if self.no_cause > 0 {
            writeln!(
                w,
                "{NO_CAUSE:<width$}  {:<8}  {:>5}  {:>7}",
                "-", "-", self.no_cause
            )?;
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
        if !self.incomplete_paths.is_empty() {
            writeln!(
                w,
                "\nincomplete bundles (part could not be read; see each line)"
            )?;
            for path in &self.incomplete_paths {
                writeln!(w, "  {path}")?;
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
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    bytes: u64,
    started: Instant,
}

impl Progress {
    pub(super) fn new(total: usize) -> Progress {
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

    pub(super) fn done(&mut self, o: &Outcome) {
        self.bytes += o.line.bundle_bytes;
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(format!(
                "{:.1} MB/s",
                mb_per_s(self.bytes, self.started.elapsed())
            ));
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `--dry-run`: one line per bundle, in run order: its path, a tab, and what it is (`archive`,
/// `folder`, `file`, `missing`), or `error: ` and why it cannot be tried.
pub(super) fn write_plan(w: &mut dyn Write, inputs: &[Input]) -> io::Result<()> {
    for i in inputs {
        match &i.problem {
            Some(problem) => writeln!(w, "{}\terror: {problem}", i.shown)?,
            None => writeln!(w, "{}\t{}", i.shown, i.kind.as_str())?,
        }
    }
    Ok(())
}
