//! The commands that need every event of a bundle, on a streamed read (`load::stream`):
//! `analyze --inventory`, `raysift timeline` and the HTML report's picture. None of them holds
//! the bundle's events: the inventory counts them as they pass; the timeline and the picture
//! put them aside on disk (`spill`) with what their times depend on (`resolve`), and read them
//! back in timeline order once the bundle's zones, years and capture time are decided.
//!
//! Invariant: each gives what the same command gives on the whole timeline
//! (`timeline::build`), byte for byte.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use crate::bundle::OpenError;
use crate::diag::Diagnostic;
use crate::event::{Event, FileId, Micros, MICROS_PER_SEC};
use crate::inventory::Inventory;
use crate::load::{stream_at, stream_rendered, Batch, FileInfo, LoadConfig, Streamed};
use crate::model::{Report, TimelineData};
use crate::parse::{Detail, Spans};
use crate::query::{self, Anchor, Query, QueryError};
use crate::redact::Redactor;
use crate::report::style::Style;
use crate::report_data::{Lanes, Picture, TimelineDataConfig};
use crate::resolve::{Anchor as TimeAnchor, Carry, Own, Resolution, Stamp, Tracker};
use crate::spill::Spill;
use crate::timeline::{TimeConfig, Timeline};

/// Why a streamed command stopped.
#[derive(Debug)]
pub enum Error {
    Open(OpenError),
    Query(QueryError),
    Io(io::Error),
    /// The bundle opened but is no bundle to read (`Timeline::unreadable`), or names nothing
    /// a filter asks for.
    Unreadable(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Open(e) => e.fmt(f),
            Error::Query(e) => e.fmt(f),
            Error::Io(e) => e.fmt(f),
            Error::Unreadable(why) => why.fmt(f),
        }
    }
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
        let mut resolution = tracker.resolve(
            &streamed.files,
            &streamed.ids,
            streamed.root_name.as_deref(),
            cfg,
        );
        // The tracker saw the copies of mirrored records too, each with its time.
        resolution.timed = resolution
            .timed
            .saturating_sub(streamed.mirrors.copies().len() as u64);
        let events = streamed.files.iter().map(|f| f.events).sum();
        let mut diagnostics = streamed.diagnostics;
        diagnostics.extend(crate::timeline::tz_contradictions(&streamed.files, cfg));
        let timeline = Timeline {
            bundle_path: streamed.bundle_path,
            container: streamed.container,
            files: streamed.files,
            events: Vec::new(),
            diagnostics,
            zones: resolution.zones.clone(),
            capture: resolution.capture.clone(),
            collected: resolution.collected.clone(),
            mirrors: streamed.mirrors,
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
    // Counts and times only: no record's text is built.
    let streamed = stream_at(path, load, &|_, _| Detail::Light, &mut |batch: &Batch| {
        let file = tracker.file(batch.seq);
        for ev in &batch.events {
            file.observe(ev);
        }
    })?;
    Ok(Outline::new(streamed, tracker, time))
}

/// Reads the bundle and puts aside the events `take` takes: it sees every event with its
/// stamp, in file order, with the file's batch (path as read, kind). A [`Spill::rendered`]
/// keeps what `render` wrote of each event on the parser threads.
fn spilled(
    path: &Path,
    load: &LoadConfig,
    time: &TimeConfig,
    detail_of: &crate::load::DetailOf<'_>,
    render: Option<&crate::load::Render>,
    take: &mut (dyn FnMut(&Batch, &Event, &Stamp) -> bool + Send),
    mut spill: Spill,
) -> Result<(Outline, Spill), Error> {
    let mut tracker = Tracker::default();
    let mut failed: Option<io::Error> = None;
    let streamed = stream_rendered(path, load, detail_of, render, &mut |batch: &Batch| {
        let file = tracker.file(batch.seq);
        for (i, ev) in batch.events.iter().enumerate() {
            let stamp = file.observe(ev);
            if take(batch, ev, &stamp) && failed.is_none() {
                let rendered = batch.rendered.get(i);
                if let Err(e) = spill.push_rendered(batch.seq, ev, &stamp, rendered) {
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
    q.sources.iter().any(|g| {
        suffixes
            .iter()
            .any(|p| crate::glob::source_matches(g, p, kind))
    })
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

/// Bytes of JSON lines `raysift timeline` gathers before it writes them.
const LINES_BYTES: usize = 1 << 16;

/// Writes the gathered JSON lines once they are [`LINES_BYTES`] or more.
fn write_when_full(out: &mut dyn Write, lines: &mut Vec<u8>) -> io::Result<()> {
    if lines.len() >= LINES_BYTES {
        out.write_all(lines)?;
        lines.clear();
    }
    Ok(())
}

/// How `raysift timeline` writes events.
pub struct TimelineOutput<'a> {
    pub json: bool,
    pub style: Style,
    /// Text: one line an event (`report::timeline::write_text`).
    pub oneline: bool,
    /// Only the first this many events kept.
    pub limit: Option<usize>,
    /// Only the last this many events kept.
    pub tail: Option<usize>,
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
    // Events that name what `--namespace`/`--object` ask for.
    let mut named = 0u64;
    let mut take = |batch: &Batch, ev: &Event, stamp: &Stamp| {
        if let Some((file, line)) = &around_file {
            if ev.line <= *line && query::names_file(batch.path, file) {
                anchors.insert(batch.seq, stamp.carry);
            }
        }
        let object = q.objects.as_ref().map(|f| f.judge(ev, batch.path));
        named += u64::from(object == Some(crate::objects::Verdict::Named));
        q.keeps_text(ev)
            && source_may_match(q, batch.path, batch.kind.as_str())
            && object != Some(crate::objects::Verdict::Other)
    };
    // Selected by level alone, a record below it is only counted and placed, unless a line
    // continues it (`Detail::AtLeast`); `--grep` and object filters read every record's text.
    let detail = match q.min_level {
        Some(min) if q.grep.is_none() && q.objects.is_none() => Detail::AtLeast(min),
        _ => Detail::Full,
    };
    // Plain JSON lines are written on the parser threads, but for where and when each event
    // is (`JsonLines::push_head`), packed for the spill (`pack_tail`): the merge only orders
    // and unpacks them. Redaction and text need the events themselves.
    let rendered =
        output.json && output.redactor.is_none() && output.limit.is_none() && output.tail.is_none();
    let render = crate::load::Render {
        write: |ev, out| crate::report::timeline::pack_tail(out, &ev.view()),
        // `take` reads the text for `--level` (the level shown may depend on the
        // message), `--grep` and the object filters.
        keeps_text: q.min_level.is_some() || q.grep.is_some() || q.objects.is_some(),
    };
    let (outline, spill) = spilled(
        path,
        load,
        time,
        &|_, _| detail.clone(),
        rendered.then_some(&render),
        &mut take,
        if rendered {
            Spill::rendered()?
        } else {
            Spill::new()?
        },
    )?;
    (output.read_done)();
    // What `analyze` refuses, `timeline` refuses too, before it writes anything.
    if let Some(why) = outline.timeline.unreadable(path) {
        return Err(Error::Unreadable(why));
    }
    if let Some(f) = q.objects.as_ref().filter(|_| named == 0) {
        return Err(Error::Unreadable(f.nothing_named()));
    }
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
        FileInfo::redact_all(&mut timeline.files, r);
    }
    let TimelineOutput {
        json,
        style,
        oneline,
        limit,
        tail,
        mut redactor,
        out,
        ..
    } = output;
    let json_lines = crate::report::timeline::JsonLines::new(&timeline);
    // A copy of a record its process wrote to two files is not shown: the kept record says
    // where the copy is (`also_in`).
    let mirrors = &timeline.mirrors;
    let shown = |file: FileId, line: u32, ts| {
        source_ok.get(file as usize).copied().unwrap_or(false)
            && query::ts_in_range(ts, lo, hi)
            && !mirrors.is_copy(file, line)
    };
    if spill.is_rendered() {
        // Stretches of the timeline are written on as many threads as the read had, at
        // once, and go out in order.
        let render = |ev: crate::spill::Placed<'_>, lines: &mut Vec<u8>| {
            if !shown(ev.file, ev.line, ev.ts) {
                return Ok(());
            }
            json_lines.push_head(lines, ev.ts, ev.file, ev.line, ev.n_lines);
            if !crate::report::timeline::unpack_tail(lines, ev.rendered) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "spilled event unreadable",
                ));
            }
            Ok(())
        };
        spill.merge_rendered(&resolution, &ids, load.threads, &render, &mut |lines| {
            out.write_all(lines)
        })?;
        return Ok(timeline.diagnostics);
    }
    // Redacted or text: each event made owned. JSON lines gather here and go out in large
    // writes.
    let mut lines: Vec<u8> = Vec::with_capacity(LINES_BYTES + (1 << 16));
    let mut marks = crate::report::TimeMarks::default();
    let mut kept = 0usize;
    // `--tail`: the last events kept, written once every event has gone by.
    let mut last: std::collections::VecDeque<Event> = std::collections::VecDeque::new();
    let mut write = |ev: &Event, lines: &mut Vec<u8>| -> io::Result<()> {
        if !json {
            if let Some(t) = ev.ts {
                marks.see_quality(t.quality.as_str());
            }
            return crate::report::timeline::write_text(out, &timeline, &[ev], style, oneline);
        }
        json_lines.push(lines, &ev.view());
        write_when_full(out, lines)
    };
    spill.merge_refs(&resolution, &ids, &mut |ev, _| {
        if !shown(ev.file, ev.line, ev.ts) || limit.is_some_and(|n| kept >= n) {
            return Ok(());
        }
        kept += 1;
        let mut ev = ev.to_event();
        if let Some(r) = &mut redactor {
            r.event_in_sequence(&mut ev);
        }
        match tail {
            Some(n) => {
                if n > 0 {
                    if last.len() == n {
                        last.pop_front();
                    }
                    last.push_back(ev);
                }
                Ok(())
            }
            None => write(&ev, &mut lines),
        }
    })?;
    for ev in &last {
        write(ev, &mut lines)?;
    }
    out.write_all(&lines)?;
    // The text marks approximate and assumed times as `analyze` does, with its legend.
    if let Some(legend) = marks.legend() {
        writeln!(out, "\n{legend}")?;
    }
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
/// the sieved read). `near` says which events the rows can come from ([`near_evidence`]).
///
/// Of most events the picture needs only a time, a source and a level: they count into its
/// histograms, and its rows are the events around an evidence line. So the read builds whole
/// only the records `near` can reach and the others light (`parse::Detail::Near`), and
/// counts the light ones as they are read, by the window and zones the sieved read decided,
/// instead of putting them aside. Should the streamed read decide otherwise, or a row come
/// from where events were only counted, the page is drawn again from a whole read: the same
/// page, later.
pub fn picture(
    path: &Path,
    load: &LoadConfig,
    time: &TimeConfig,
    report: &Report,
    cfg: &TimelineDataConfig,
    near: Option<Near>,
) -> Result<Page, Error> {
    if let Some(near) = &near {
        if let Some(page) = picture_at(path, load, time, report, cfg, Some(near))? {
            return Ok(page);
        }
    }
    // A whole read builds and hands over every event: nothing can make it unsure.
    picture_at(path, load, time, report, cfg, None)?
        .ok_or_else(|| Error::Io(io::Error::other("a whole read left the picture unsure")))
}

/// What the page takes from the streamed read: the picture, the whole bundle's inventory and
/// its diagnostics.
pub type Page = (TimelineData, Inventory, Vec<Diagnostic>);

/// The times the picture's rows can have, as the sieved read placed them, each file's zone
/// as it decided it, and its window.
pub struct Near {
    spans: Spans,
    offsets: HashMap<String, Micros>,
    window: Option<(Micros, Micros)>,
}

impl Near {
    /// What the file at `path` builds whole: the records in the spans, by its zone.
    fn detail_of(&self, path: &str) -> Detail {
        Detail::Near(Arc::new(self.spans.zoned(self.offset(path))))
    }

    /// The zone the sieved read decided for the file at `path` (`local - utc`).
    fn offset(&self, path: &str) -> Micros {
        self.offsets.get(path).copied().unwrap_or(0)
    }
}

/// The time of a light event, at the file's zone `offset`, when it sorts by its own time and
/// by nothing else: it may then be counted instead of put aside.
fn counted_time(ev: &Event, stamp: &Stamp, offset: Micros) -> Option<Micros> {
    let Own::Anchor(own) = stamp.own else {
        return None;
    };
    let alone = Carry {
        anchor: Some(own),
        no_year: None,
        age: None,
    };
    if !ev.light || stamp.carry != alone {
        return None;
    }
    Some(match own {
        TimeAnchor::Utc(t) => t,
        TimeAnchor::Naive(t) => t.saturating_sub(offset),
    })
}

/// How far the streamed read may place a time from where the sieved read placed it without a
/// row coming out light (evidence times are written to the millisecond).
const NEAR_MARGIN: Micros = 1_000_000;

/// How many times more events than the picture takes on each side of an evidence line the
/// bundle's mean rate should put within reach of it.
const NEAR_SAFETY: u64 = 20;

/// Where the rows around `report`'s evidence can lie, from the sieved timeline `tl` (a
/// subset of the whole one, in the same order). A timed evidence line takes the events
/// within `cfg.context_micros` of it. One without a time takes its `cfg.context_events`
/// neighbours in timeline order, whatever their time: in the whole timeline they lie
/// between the timed events that many places away in `tl`, which has no more events
/// between. `None` when a filter judges events by their fields, which light events lack.
pub fn near_evidence(tl: &Timeline, report: &Report, cfg: &TimelineDataConfig) -> Option<Near> {
    if report.bundle.filter.is_some() {
        return None;
    }
    let reach = rate_reach(tl, cfg).saturating_add(NEAR_MARGIN);
    let mut spans = Vec::new();
    for cause in &report.causes {
        for e in cause.all_evidence() {
            if let Some(ts) = e.ts.as_deref() {
                let (_, t) = crate::parse::primitives::instant(ts).ok()?;
                spans.push((t.saturating_sub(reach), t.saturating_add(reach)));
                continue;
            }
            let id = tl.files.iter().find(|f| f.path == e.file)?.id;
            let i = tl
                .events
                .iter()
                .position(|ev| ev.file == id && ev.line == e.line)?;
            let n = cfg.context_events;
            let before = tl.events.get(..i.saturating_sub(n)).unwrap_or_default();
            let after = tl.events.get(i + n + 1..).unwrap_or_default();
            let lo = first_time(before.iter().rev())
                .map_or(Micros::MIN, |t| t.saturating_sub(NEAR_MARGIN));
            let hi =
                first_time(after.iter()).map_or(Micros::MAX, |t| t.saturating_add(NEAR_MARGIN));
            spans.push((lo, hi));
        }
    }
    let offsets = tl
        .zones
        .iter()
        .map(|z| (z.file.clone(), z.offset_secs.saturating_mul(MICROS_PER_SEC)))
        .collect();
    Some(Near {
        spans: Spans::new(spans),
        offsets,
        window: tl.window(),
    })
}

/// The time of the first timed event of `events`.
fn first_time<'e>(mut events: impl Iterator<Item = &'e Event>) -> Option<Micros> {
    events.find_map(|e| e.ts.map(|t| t.micros))
}

/// How far from an evidence time its rows can lie: `context_micros`, or less in a bundle
/// whose mean rate puts [`NEAR_SAFETY`] times the rows within less. Only the page's speed
/// depends on this: a row beyond it comes out light, and the page is drawn again whole.
fn rate_reach(tl: &Timeline, cfg: &TimelineDataConfig) -> Micros {
    let lines: u64 = tl.files.iter().map(|f| f.lines).sum();
    let Some((lo, hi)) = tl.window() else {
        return cfg.context_micros;
    };
    if lines == 0 {
        return cfg.context_micros;
    }
    let rows = NEAR_SAFETY.saturating_mul(cfg.context_events as u64 + 1);
    let span = u128::try_from(hi.saturating_sub(lo)).unwrap_or(0);
    let reach = span * u128::from(rows) / u128::from(lines);
    i64::try_from(reach).map_or(cfg.context_micros, |r| r.min(cfg.context_micros))
}

/// The page from one streamed read; `None` when, read near evidence, it is unsure: the
/// streamed read placed a counted event elsewhere than the sieved one did, or a row may come
/// from where events were only counted or built light (`Picture::unsure`).
fn picture_at(
    path: &Path,
    load: &LoadConfig,
    time: &TimeConfig,
    report: &Report,
    cfg: &TimelineDataConfig,
    near: Option<&Near>,
) -> Result<Option<Page>, Error> {
    let mut counted = near.map(|n| Lanes::new(n.window, cfg.buckets));
    // Per file `seq`: the zone its counted events were placed at.
    let mut placed: Vec<Option<Micros>> = Vec::new();
    let mut take = |batch: &Batch, ev: &Event, stamp: &Stamp| {
        // Narrowed like the causes were (`--namespace`, `--object`).
        if let Some(f) = &report.bundle.filter {
            return f.keeps(ev, batch.path);
        }
        let (Some(near), Some(counted)) = (near, counted.as_mut()) else {
            return true;
        };
        let seq = batch.seq as usize;
        if placed.len() <= seq {
            placed.resize(seq + 1, None);
        }
        let offset = *placed[seq].get_or_insert_with(|| near.offset(batch.path));
        // A record that may copy another's is put aside, not counted: the copies are known
        // only once the bundle is read, and are left out where events are read back.
        if crate::load::mirror::keys_of(ev).next().is_some()
            && crate::load::mirror::may_hold_copies(batch.path)
        {
            return true;
        }
        match counted_time(ev, stamp, offset) {
            Some(t) => {
                counted.count(ev.kind, t, ev.level);
                false
            }
            None => true,
        }
    };
    let detail_of = |path: &str, _| near.map_or(Detail::Full, |n| n.detail_of(path));
    // The picture shows only the fields that say why: the others are not put aside.
    let spill = Spill::keeping_fields(crate::explain::may_show)?;
    let (outline, spill) = spilled(path, load, time, &detail_of, None, &mut take, spill)?;
    let inventory = outline.inventory();
    let mut picture = Picture::new(
        outline.resolution.window,
        &outline.timeline.files,
        report,
        cfg,
    );
    let mut unsure = false;
    if let (Some(near), Some(counted)) = (near, counted) {
        picture.handed_within(near.spans.clone());
        unsure |= !picture.add_counted(counted);
        unsure |= placed
            .iter()
            .zip(&outline.ids)
            .any(|(offset, &id)| offset.is_some_and(|o| o != outline.resolution.offset(id)));
    }
    if unsure {
        return Ok(None);
    }
    let mirrors = &outline.timeline.mirrors;
    spill.merge(&outline.resolution, &outline.ids, &mut |ev, key| {
        if !mirrors.is_copy(ev.file, ev.line) {
            picture.push_owned(ev, key);
        }
        Ok(())
    })?;
    if near.is_some() && picture.unsure() {
        return Ok(None);
    }
    let data = picture.finish(report);
    Ok(Some((
        data,
        inventory,
        outline.timeline.diagnostics.clone(),
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use crate::bundle::Limits;
    use crate::rules::engine::Engine;
    use crate::rules::sieve::Sieve;

    fn config(sieve: Option<Arc<Sieve>>) -> LoadConfig {
        LoadConfig {
            limits: Limits::DEFAULT,
            sieve,
            threads: 2,
            progress: None,
        }
    }

    /// The page of `bundle` drawn from a read that builds only the records `near` reaches,
    /// and from a whole read, as JSON; and whether the first read was unsure (drawn again).
    fn pages(bundle: &Path, near: impl Fn(&Timeline, &Report) -> Option<Near>) -> [String; 3] {
        let rules = crate::rules::library::builtin().unwrap();
        let time = TimeConfig { tz_override: None };
        let sieve = Some(Arc::new(Sieve::new(&rules)));
        let tl = crate::timeline::build(crate::load::load(bundle, &config(sieve)).unwrap(), &time);
        let engine = Engine::new(rules);
        let report = crate::analysis::rank_all(&tl, &engine, 0);
        let cfg = TimelineDataConfig::HTML;
        let near = near(&tl, &report);
        let load = config(None);
        let show = |got: Page| serde_json::to_string(&(got.0, got.1, got.2.len())).unwrap();
        let unsure = match &near {
            Some(near) => picture_at(bundle, &load, &time, &report, &cfg, Some(near))
                .unwrap()
                .is_none(),
            None => false,
        };
        let fast = picture(bundle, &load, &time, &report, &cfg, near).unwrap();
        let whole = picture(bundle, &load, &time, &report, &cfg, None).unwrap();
        [show(fast), show(whole), unsure.to_string()]
    }

    fn corpus() -> Vec<std::path::PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        let mut bundles: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        bundles.sort();
        bundles
    }

    #[test]
    fn the_page_near_evidence_is_the_whole_page() {
        let mut light_reads = 0;
        // A quarter of the corpus keeps the test quick; which quarter changes nothing.
        for bundle in corpus().into_iter().step_by(4) {
            let [fast, whole, light] = pages(&bundle, |tl, report| {
                near_evidence(tl, report, &TimelineDataConfig::HTML)
            });
            assert_eq!(fast, whole, "{}", bundle.display());
            light_reads += usize::from(light == "true");
        }
        // These bundles are small enough for the picture's whole reach: no fallback.
        assert_eq!(light_reads, 0);
    }

    #[test]
    fn a_light_row_draws_the_page_again_whole() {
        // Spans that reach nothing: every timed record is light, so rows are too.
        let nowhere = |tl: &Timeline, _: &Report| {
            Some(Near {
                spans: Spans::new(Vec::new()),
                offsets: HashMap::new(),
                window: tl.window(),
            })
        };
        let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/handmade-agent-died");
        let [fast, whole, light] = pages(&bundle, nowhere);
        assert_eq!(light, "true", "the read near nothing gave no light row");
        assert_eq!(fast, whole);
    }
}
