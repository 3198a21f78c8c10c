//! The commands that need every event of a bundle, on a streamed read (`load::stream`):
//! `analyze --inventory`, `raysift timeline` and the HTML report's picture. None of them holds
//! the bundle's events: the inventory counts them as they pass; the timeline and the picture
//! put them aside on disk (`spill`) with what their times depend on (`resolve`), and read them
//! back in timeline order once the bundle's zones, years and capture time are decided.
//!
//! Invariant: each gives what the same command gives on the whole timeline
//! (`timeline::build`), byte for byte.

use std::io::{self, Write};
use std::path::Path;

use crate::bundle::OpenError;
use crate::diag::Diagnostic;
use crate::event::{Event, FileId};
use crate::inventory::Inventory;
use crate::load::{stream, Batch, LoadConfig, Streamed};
use crate::query::{self, Anchor, Query, QueryError};
use crate::rank::Report;
use crate::redact::Redactor;
use crate::report::style::Style;
use crate::report_data::{Picture, TimelineData, TimelineDataConfig};
use crate::resolve::{Carry, Resolution, Tracker};
use crate::spill::Spill;
use crate::timeline::{TimeConfig, Timeline};

/// Why a streamed command stopped.
#[derive(Debug)]
pub enum Error {
    Open(OpenError),
    Query(QueryError),
    Io(io::Error),
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

impl From<OpenError> for Error {
    fn from(e: OpenError) -> Error {
        Error::Open(e)
    }
}

/// A streamed read's files and decisions, as a timeline without events, with the totals the
/// events would give.
pub struct Outline {
    pub timeline: Timeline,
    pub resolution: Resolution,
    pub ids: Vec<FileId>,
    pub events: u64,
}

impl Outline {
    fn new(streamed: Streamed, tracker: Tracker, cfg: &TimeConfig) -> Outline {
        let resolution = tracker.resolve(
            &streamed.files,
            &streamed.ids,
            streamed.root_name.as_deref(),
            cfg,
        );
        let events = streamed.files.iter().map(|f| f.events).sum();
        let timeline = Timeline {
            bundle_path: streamed.bundle_path,
            container: streamed.container,
            files: streamed.files,
            events: Vec::new(),
            diagnostics: streamed.diagnostics,
            zones: resolution.zones.clone(),
            capture: resolution.capture.clone(),
            collected: resolution.collected.clone(),
        };
        Outline {
            timeline,
            resolution,
            ids: streamed.ids,
            events,
        }
    }

    /// The inventory, as `Inventory::of` gives it for the whole timeline.
    pub fn inventory(&self) -> Inventory {
        Inventory::with_totals(
            &self.timeline,
            self.events,
            self.resolution.timed,
            self.resolution.window,
        )
    }
}

/// Reads the bundle, counting: the inventory and nothing kept.
pub fn outline(path: &Path, load: &LoadConfig, time: &TimeConfig) -> Result<Outline, OpenError> {
    let mut tracker = Tracker::default();
    let streamed = stream(path, load, &mut |batch: Batch| {
        let file = tracker.file(batch.seq);
        for ev in &batch.events {
            file.observe(ev);
        }
    })?;
    Ok(Outline::new(streamed, tracker, time))
}

/// Reads the bundle and puts aside the events `keep` keeps (given the file's path as read and
/// the event); `watch` sees every event with its carry, in file order.
fn spilled(
    path: &Path,
    load: &LoadConfig,
    time: &TimeConfig,
    keep: &(dyn Fn(&Batch, &Event) -> bool + Sync),
    watch: &mut (dyn FnMut(&Batch, &Event, &Carry) + Send),
    mut spill: Spill,
) -> Result<(Outline, Spill), Error> {
    let mut tracker = Tracker::default();
    let mut failed: Option<io::Error> = None;
    let streamed = stream(path, load, &mut |batch: Batch| {
        let file = tracker.file(batch.seq);
        for ev in &batch.events {
            let stamp = file.observe(ev);
            watch(&batch, ev, &stamp.carry);
            if failed.is_none() && keep(&batch, ev) {
                if let Err(e) = spill.push(batch.seq, ev, &stamp) {
                    failed = Some(e);
                }
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(Error::Io(e));
    }
    Ok((Outline::new(streamed, tracker, time), spill))
}

/// Whether a file read at `raw` (the common root not yet stripped) may be kept by `--source`:
/// its name, its kind, or its path with any leading folders stripped matches. The exact test,
/// on the path shown, is made again once the root is known.
fn source_may_match(q: &Query, raw: &str, kind: &str) -> bool {
    if q.sources.is_empty() {
        return true;
    }
    let mut suffixes = vec![raw];
    suffixes.extend(raw.match_indices('/').map(|(i, _)| &raw[i + 1..]));
    q.sources
        .iter()
        .any(|g| suffixes.iter().any(|p| query::source_matches(g, p, kind)))
}

/// A `--source` glob that keeps no file is a mistake: an error when no glob keeps any file
/// (the output would be empty for no visible reason), a warning on standard error when
/// another glob still keeps some.
fn check_sources(q: &Query, files: &[crate::load::FileInfo]) -> Result<(), Error> {
    let unmatched = q.unmatched_sources(files);
    if unmatched.is_empty() {
        return Ok(());
    }
    let quoted: Vec<String> = unmatched.iter().map(|g| format!("{g:?}")).collect();
    let what = format!(
        "--source {} matches no file of the bundle (globs match a file's path, its name or its \
         source kind: see `raysift analyze --inventory`)",
        quoted.join(", ")
    );
    if unmatched.len() == q.sources.len() {
        return Err(Error::Query(QueryError(what)));
    }
    eprintln!("raysift: warning: {what}");
    Ok(())
}

/// How `raysift timeline` writes events.
pub struct TimelineOutput<'a> {
    pub json: bool,
    pub style: Style,
    pub redactor: Option<Redactor>,
    pub out: &'a mut dyn Write,
    /// Told when the bundle is read, before anything is written (to clear a progress bar).
    pub read_done: &'a dyn Fn(),
}

/// `raysift timeline`: the events the query keeps, written in timeline order as they are
/// read back. Returns the bundle's diagnostics (redacted when the output is).
pub fn timeline(
    path: &Path,
    load: &LoadConfig,
    time: &TimeConfig,
    q: &Query,
    mut output: TimelineOutput,
) -> Result<Vec<Diagnostic>, Error> {
    let around_file = match &q.around {
        Some(Anchor::FileLine { file, line }) => Some((file.clone(), *line)),
        _ => None,
    };
    // The carry at the last event at or before the anchor line, per candidate file.
    let mut anchors: std::collections::BTreeMap<u32, Carry> = std::collections::BTreeMap::new();
    let keep = |batch: &Batch, ev: &Event| {
        q.keeps_text(ev)
            && source_may_match(q, batch.path, batch.kind.as_str())
            && q.objects.as_ref().is_none_or(|f| f.keeps(ev, batch.path))
    };
    let mut watch = |batch: &Batch, ev: &Event, carry: &Carry| {
        if let Some((file, line)) = &around_file {
            if ev.line <= *line && query::names_file(batch.path, file) {
                anchors.insert(batch.seq, *carry);
            }
        }
    };
    let (outline, spill) = spilled(path, load, time, &keep, &mut watch, Spill::new()?)?;
    (output.read_done)();
    let Outline {
        mut timeline,
        resolution,
        ids,
        ..
    } = outline;
    check_sources(q, &timeline.files)?;
    let base = query::TimeBase {
        capture: resolution.capture.as_ref().map(|c| c.micros),
        start: resolution.window.map(|(lo, _)| lo),
    };
    let center = match &q.around {
        None => None,
        Some(Anchor::Instant(t)) => {
            Some(t.resolve(base, query::Edge::Start).map_err(Error::Query)?)
        }
        Some(Anchor::FileLine { file, line }) => {
            let f = query::anchor_file(&timeline.files, file).map_err(Error::Query)?;
            query::line_in_file(f, *line).map_err(Error::Query)?;
            let seq = ids.iter().position(|&id| id == f.id);
            let carry = seq.and_then(|s| anchors.get(&(s as u32)));
            match carry.map(|c| resolution.key(f.id, c)) {
                Some(t) if t != crate::event::Micros::MIN => Some(t),
                _ => return Err(Error::Query(query::no_time_at(f, *line))),
            }
        }
    };
    let (lo, hi) = q.bounds(center, base).map_err(Error::Query)?;
    let source_ok = q.sources_ok(&timeline.files);
    if let Some(r) = &mut output.redactor {
        r.files(&mut timeline.files);
    }
    let TimelineOutput {
        json,
        style,
        mut redactor,
        out,
        ..
    } = output;
    spill.merge(&resolution, &ids, &mut |mut ev| {
        if !source_ok.get(ev.file as usize).copied().unwrap_or(false)
            || !query::in_range(&ev, lo, hi)
        {
            return Ok(());
        }
        if let Some(r) = &mut redactor {
            r.event_in_sequence(&mut ev);
        }
        if json {
            crate::report::timeline::write_json(out, &timeline, &[&ev])
        } else {
            crate::report::timeline::write_text(out, &timeline, &[&ev], style)
        }
    })?;
    let mut diagnostics = timeline.diagnostics;
    if let Some(r) = &mut redactor {
        for d in &mut diagnostics {
            d.file = r.text(&d.file);
            d.problem = r.text(&d.problem);
        }
    }
    Ok(diagnostics)
}

/// The HTML report's picture and the inventory of the whole bundle, for `report` (ranked from
/// the sieved read).
pub fn picture(
    path: &Path,
    load: &LoadConfig,
    time: &TimeConfig,
    report: &Report,
    cfg: &TimelineDataConfig,
) -> Result<(TimelineData, Inventory, Vec<Diagnostic>), Error> {
    // Narrowed like the causes were (`--namespace`, `--object`).
    let keep = |batch: &Batch, ev: &Event| {
        report
            .bundle
            .filter
            .as_ref()
            .is_none_or(|f| f.keeps(ev, batch.path))
    };
    // The picture shows no event's fields: they are not put aside.
    let spill = Spill::without_fields()?;
    let (outline, spill) = spilled(path, load, time, &keep, &mut |_, _, _| {}, spill)?;
    let inventory = outline.inventory();
    let mut picture = Picture::new(
        outline.resolution.window,
        &outline.timeline.files,
        report,
        cfg,
    );
    spill.merge(&outline.resolution, &outline.ids, &mut |ev| {
        picture.push_owned(ev);
        Ok(())
    })?;
    let data = picture.finish(report);
    Ok((data, inventory, outline.timeline.diagnostics.clone()))
}
