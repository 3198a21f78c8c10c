//! One timeline: every event's time resolved to UTC, then a stable merge of all files.
//!
//! Resolution needs bundle-level context that no single parser has:
//! - Ray's Python and C++ logs carry container-local times with no zone. The offset comes
//!   from `--tz`, else from evidence (a `kubectl logs --timestamps` prefix or an access-log
//!   stamp on the same line as a zone-less time) in the file itself, else in the files of the
//!   same pod folder, else from the whole bundle when all its evidence agrees; otherwise UTC is
//!   assumed and the report says so. Times read with a `--tz` zone are `given_zone`, with an
//!   inferred one `inferred_zone`, with an assumed one `assumed_utc`.
//! - klog stamps have no year: it comes from the file's neighbouring stamps or the bundle's
//!   window.
//! - `kubectl` ages are anchored to the capture time: a recorded `collected_at`, a
//!   troubleshoot bundle's folder name, or else the newest exact time in the bundle. File
//!   modification times are not used: copies and checkouts rewrite them, and the same bundle
//!   must give the same report in every container format.
//! - An object's facts that carry their block's own time (a terminated container's
//!   `finishedAt`) are placed by it, but anchor nothing: the year of a stamp and the capture
//!   time are read from the other events (`states_an_object`).
//!
//! Order is `(time, file, line)`, stable; an event without time sorts with the event before it
//! in its file. Invariant: this module knows nothing of formats or rules.

use std::collections::BTreeMap;
use std::path::Path;

use crate::collected::{collected_fact, collected_from, Collected};
use crate::diag::Diagnostic;
use crate::event::{
    micros_from_civil, Event, Micros, RawTime, SourceKind, Timestamp, TsQuality, MICROS_PER_SEC,
    QUIET,
};
use crate::load::mirror::Mirrors;
use crate::load::{FileInfo, Loaded};
use crate::parse::primitives::instant;
use crate::parse::Format;

/// How times are resolved.
#[derive(Clone, Debug)]
pub struct TimeConfig {
    /// `--tz`: the containers' offset east of UTC in seconds, overriding any inference.
    pub tz_override: Option<i64>,
}

/// How the zone of one file's zone-less times was decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneDecision {
    pub file: String,
    pub offset_secs: i64,
    pub quality: TsQuality,
    pub basis: String,
}

/// The capture time kubectl ages are anchored to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureTime {
    pub micros: Micros,
    pub basis: String,
}

/// The merged, resolved event stream of a bundle.
#[derive(Debug)]
pub struct Timeline {
    pub bundle_path: String,
    pub container: String,
    pub files: Vec<FileInfo>,
    pub events: Vec<Event>,
    pub diagnostics: Vec<Diagnostic>,
    pub zones: Vec<ZoneDecision>,
    pub capture: Option<CaptureTime>,
    /// Set for a bundle written by `raysift collect`.
    pub collected: Option<Collected>,
    /// Records written to two files of their process: the copies are not among `events`;
    /// the kept record says where its copy is (`Mirrors::also`).
    pub mirrors: Mirrors,
}

/// Diagnostics quoted in a "nothing readable" error.
const QUOTED_DIAGNOSTICS: usize = 3;

/// File names quoted in a "not a bundle" error.
const QUOTED_FILES: usize = 3;

impl Timeline {
    /// Why a bundle that opened is still unreadable, for every command alike: an empty file,
    /// a file named like an archive whose content is not one, or no readable line. No cause in
    /// such a bundle would read as a clean bill of health.
    pub fn unreadable(&self, path: &Path) -> Option<String> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bytes: u64 = self.files.iter().map(|f| f.bytes).sum();
        let lines: u64 = self.files.iter().map(|f| f.lines).sum();
        // An empty file (or standard input) holds nothing at all: say so, not what it is not.
        if self.container == "file" && bytes == 0 {
            let name = if name.is_empty() || path == Path::new("-") {
                "standard input".to_string()
            } else {
                name
            };
            return Some(format!("empty file: {name} holds no bytes"));
        }
        if self.container == "file" && crate::bundle::archive_name(&name) {
            return Some(format!(
                "not an archive: {name} is named like one, but its content is not gzip, tar or zip"
            ));
        }
        if lines == 0 {
            let mut why = String::from("nothing readable in the bundle");
            let diags = &self.diagnostics;
            for (i, d) in diags.iter().take(QUOTED_DIAGNOSTICS).enumerate() {
                why.push_str(if i == 0 { ": " } else { "; " });
                why.push_str(&d.to_string());
            }
            if diags.len() > QUOTED_DIAGNOSTICS {
                why.push_str(&format!(" (and {} more)", diags.len() - QUOTED_DIAGNOSTICS));
            }
            return Some(why);
        }
        None
    }

    /// Why a bundle is no KubeRay, Ray or Kubernetes bundle at all (a note, a folder of other
    /// things), for `analyze`: none of its files is one raysift knows, the rules, which read
    /// even the lines of files they do not recognise, found nothing (`answered`: some cause,
    /// benign ones too), and no line read speaks of Ray (a pasted Ray line in a format no
    /// parser knows is still a Ray bundle, whose answer may well be "nothing").
    pub fn not_a_bundle(&self, answered: bool) -> Option<String> {
        let known = |f: &FileInfo| !matches!(f.kind, SourceKind::Unknown | SourceKind::BundleMeta);
        let speaks_of_ray = crate::classify::speaks_of_ray;
        if answered
            || self.files.iter().any(known)
            || self.files.iter().any(|f| speaks_of_ray(&f.path))
            || self.events.iter().any(|e| speaks_of_ray(&e.message))
        {
            return None;
        }
        let n = self.files.len();
        let mut names: Vec<&str> = self
            .files
            .iter()
            .take(QUOTED_FILES)
            .map(|f| f.path.as_str())
            .collect();
        if n > QUOTED_FILES {
            names.push("…");
        }
        let which = if n == 1 {
            "its one file is not".to_string()
        } else {
            format!("none of its {n} files is")
        };
        Some(format!(
            "not a KubeRay, Ray or Kubernetes bundle: {which} a Ray or KubeRay log, a kubectl \
             output or a Kubernetes object ({})",
            names.join(", ")
        ))
    }

    /// The incident window: the first and last time the bundle's records tell (see
    /// [`Spans`]).
    pub fn window(&self) -> Option<(Micros, Micros)> {
        let mut spans = Spans::default();
        for e in &self.events {
            let Some(ts) = e.ts else { continue };
            let kind = self.file(e.file).map_or(e.kind, |f| f.kind);
            let record = writes_records(kind) && !states_an_object(e);
            spans.add(record, ts.quality, ts.micros);
            if let Some(last) = e.repeat.as_ref().and_then(|r| r.last) {
                spans.add(record, ts.quality, last);
            }
        }
        spans.window()
    }

    pub fn file(&self, id: u32) -> Option<&FileInfo> {
        self.files.get(id as usize)
    }
}

/// The spans a bundle's times fall in, from which its incident window is taken.
///
/// The window is anchored on the times records were written: lines of Ray's and KubeRay's
/// logs and events, with an exact, inferred, given or assumed zone. The times of
/// Kubernetes objects (a pod's start, a condition's last change) and `kubectl` ages are
/// about objects, not the incident: a kube-system pod created a day before it, or an object
/// last changed weeks earlier, must not stretch the window, the page's picture or the times
/// `timeline --since +5m` counts from. Nor does an operator's start-up, logged a day before
/// the incident and followed by hours of silence: the window is the last stretch of records
/// with no silence longer than [`QUIET`] in it. Only a bundle with no such record falls
/// back on its precise times of any kind, then on every time.
#[derive(Clone, Debug, Default)]
pub(crate) struct Spans {
    /// Record times, as spans of records less than an hour apart, by the hour of their
    /// first time.
    records: BTreeMap<i64, (Micros, Micros)>,
    precise: Option<(Micros, Micros)>,
    all: Option<(Micros, Micros)>,
}

const HOUR: Micros = 3600 * MICROS_PER_SEC;

impl Spans {
    /// Notes a time `t` of quality `quality`, of a record (`record`) or of an object's fact.
    pub(crate) fn add(&mut self, record: bool, quality: TsQuality, t: Micros) {
        self.add_span(record, quality, (t, t));
    }

    /// Notes the times from `lo` to `hi` of one file, less than an hour apart from one to
    /// the next: all of them, for the window, as if added one by one.
    pub(crate) fn add_span(
        &mut self,
        record: bool,
        quality: TsQuality,
        (lo, hi): (Micros, Micros),
    ) {
        let widen = |span: &mut Option<(Micros, Micros)>| {
            *span = Some(span.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        };
        widen(&mut self.all);
        if quality == TsQuality::Approximate {
            return;
        }
        widen(&mut self.precise);
        if record {
            note_by_hour(&mut self.records, (lo, hi));
        }
    }

    /// The window: the last stretch of records, else the precise times' span, else every
    /// time's.
    pub(crate) fn window(&self) -> Option<(Micros, Micros)> {
        let mut last: Option<(Micros, Micros)> = None;
        for &(lo, hi) in self.records.values() {
            last = Some(match last {
                Some((a, b)) if lo - b <= QUIET => (a, b.max(hi)),
                _ => (lo, hi),
            });
        }
        last.or(self.precise).or(self.all)
    }
}

/// Notes the times `lo..=hi` (less than an hour apart from one to the next) in spans of
/// times less than an hour apart, by the hour of their first time: spans that start in one
/// hour are less than an hour apart, so they are one span.
pub(crate) fn note_by_hour(
    spans: &mut BTreeMap<i64, (Micros, Micros)>,
    (lo, hi): (Micros, Micros),
) {
    let slot = spans.entry(lo.div_euclid(HOUR)).or_insert((lo, hi));
    *slot = (slot.0.min(lo), slot.1.max(hi));
}

/// Whether a file of this kind holds records of when something happened (logs, events),
/// rather than objects whose times are about the object.
pub(crate) fn writes_records(kind: SourceKind) -> bool {
    !matches!(
        Format::of(kind),
        Format::Describe | Format::KubeTable | Format::KubeObject
    )
}

/// Resolves every time and merges the files into one ordered stream.
pub fn build(loaded: Loaded, cfg: &TimeConfig) -> Timeline {
    let Loaded {
        bundle_path,
        container,
        root_name,
        files,
        mut events,
        mut diagnostics,
        mirrors,
    } = loaded;

    let zones = decide_zones(&files, &events, cfg);
    diagnostics.extend(tz_contradictions(&files, cfg));
    let offsets: BTreeMap<u32, (i64, TsQuality)> = zones
        .iter()
        .filter_map(|z| {
            files
                .iter()
                .find(|f| f.path == z.file)
                .map(|f| (f.id, (z.offset_secs, z.quality)))
        })
        .collect();

    // Pass 1: explicit and zone-resolved times.
    for (file_id, file_events) in events.iter_mut().enumerate() {
        let (offset, quality) = offsets
            .get(&(file_id as u32))
            .copied()
            .unwrap_or((0, TsQuality::AssumedUtc));
        for ev in file_events.iter_mut() {
            ev.ts = match ev.raw_time {
                Some(RawTime::Utc(t)) => Some(Timestamp {
                    micros: t,
                    quality: TsQuality::Exact,
                }),
                Some(RawTime::Naive(t)) => Some(Timestamp {
                    micros: t - offset * MICROS_PER_SEC,
                    quality,
                }),
                _ => None,
            };
            if let Some(r) = &mut ev.repeat {
                r.last = match r.last_raw {
                    RawTime::Utc(t) => Some(t),
                    RawTime::Naive(t) => Some(t - offset * MICROS_PER_SEC),
                    _ => None,
                };
            }
        }
    }
    let window = log_window(&events);

    // Pass 2: year-less stamps, from the file's neighbours or the window of the logs.
    for file_events in events.iter_mut() {
        let mut reference = window.map(|(lo, _)| lo);
        for ev in file_events.iter_mut() {
            if let Some(ts) = ev.ts {
                reference = Some(ts.micros);
            }
            if let Some(RawTime::NoYear {
                month,
                day,
                micros_of_day,
            }) = ev.raw_time
            {
                if let Some(r) = reference {
                    ev.ts = resolve_no_year(month, day, micros_of_day, r).map(|micros| Timestamp {
                        micros,
                        quality: TsQuality::AssumedUtc,
                    });
                    if let Some(ts) = ev.ts {
                        reference = Some(ts.micros);
                    }
                }
            }
            if let Some(r) = &mut ev.repeat {
                if let RawTime::NoYear {
                    month,
                    day,
                    micros_of_day,
                } = r.last_raw
                {
                    r.last = reference.and_then(|t| resolve_no_year(month, day, micros_of_day, t));
                    reference = r.last.or(reference);
                }
            }
        }
    }

    // Pass 3: kubectl ages, anchored to the capture time.
    let capture = capture_time(&files, &events, root_name.as_deref());
    if let Some(cap) = &capture {
        for ev in events.iter_mut().flatten() {
            if let Some(RawTime::Age { secs }) = ev.raw_time {
                ev.ts = Some(Timestamp {
                    micros: cap.micros - secs * MICROS_PER_SEC,
                    quality: TsQuality::Approximate,
                });
            }
        }
    }

    let collected = files
        .iter()
        .filter(|f| f.kind == SourceKind::BundleMeta)
        .find_map(|f| {
            let evs = events.get(f.id as usize)?;
            collected_from(&f.path, evs.iter().filter_map(collected_fact))
        });
    let merged = merge(events);
    Timeline {
        bundle_path,
        container,
        files,
        events: merged,
        diagnostics,
        zones,
        capture,
        collected,
        mirrors,
    }
}

/// The first and last explicit or zone-resolved time of the events that are no object's
/// state (`states_an_object`).
fn log_window(events: &[Vec<Event>]) -> Option<(Micros, Micros)> {
    let mut times = events
        .iter()
        .flatten()
        .filter(|e| !states_an_object(e))
        .flat_map(|e| {
            [
                e.ts.map(|t| t.micros),
                e.repeat.as_ref().and_then(|r| r.last),
            ]
        })
        .flatten();
    let first = times.next()?;
    Some(times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))))
}

/// Picks the year (reference's, or one either side) that puts the stamp closest to `reference`.
pub(crate) fn resolve_no_year(
    month: u8,
    day: u8,
    micros_of_day: i64,
    reference: Micros,
) -> Option<Micros> {
    let ref_days = reference.div_euclid(86_400 * MICROS_PER_SEC);
    let (ref_year, _, _) = crate::event::civil_from_days(ref_days);
    (ref_year - 1..=ref_year + 1)
        .filter_map(|y| {
            micros_from_civil(y, u32::from(month), u32::from(day), 0, 0, 0, 0)
                .map(|midnight| midnight + micros_of_day)
        })
        .min_by_key(|t| (t - reference).abs())
}

/// Zone offsets for every file with zone-less times.
fn decide_zones(files: &[FileInfo], events: &[Vec<Event>], cfg: &TimeConfig) -> Vec<ZoneDecision> {
    zones_for(files, cfg, |f| {
        events.get(f.id as usize).is_some_and(|evs| {
            evs.iter()
                .any(|e| matches!(e.raw_time, Some(RawTime::Naive(_))))
        })
    })
}

/// Zone offsets for the files `has_naive` names (those with zone-less times).
pub(crate) fn zones_for(
    files: &[FileInfo],
    cfg: &TimeConfig,
    has_naive: impl Fn(&FileInfo) -> bool,
) -> Vec<ZoneDecision> {
    let naive_files: Vec<&FileInfo> = files.iter().filter(|f| has_naive(f)).collect();
    if let Some(offset) = cfg.tz_override {
        return naive_files
            .iter()
            .map(|f| ZoneDecision {
                file: f.path.clone(),
                offset_secs: offset,
                quality: TsQuality::GivenZone,
                basis: "given with --tz".to_string(),
            })
            .collect();
    }
    // Evidence per file, then per pod folder, then bundle-wide.
    let mut per_group: BTreeMap<String, Vec<Micros>> = BTreeMap::new();
    let mut all: Vec<Micros> = Vec::new();
    for f in files {
        if !f.zone_samples.is_empty() {
            per_group
                .entry(zone_group(&f.path))
                .or_default()
                .extend(&f.zone_samples);
            all.extend(&f.zone_samples);
        }
    }
    let bundle_offset = consensus(&all);
    naive_files
        .iter()
        .map(|f| {
            if let Some(off) = consensus(&f.zone_samples) {
                return decision(f, off, "same-line UTC stamps in the file".to_string());
            }
            let group = zone_group(&f.path);
            if let Some(off) = per_group.get(&group).and_then(|s| consensus(s)) {
                let shown = if group.is_empty() {
                    "(bundle root)".to_string()
                } else {
                    group
                };
                return decision(f, off, format!("UTC stamps in other files of {shown}"));
            }
            if let Some(off) = bundle_offset {
                return decision(f, off, "UTC stamps elsewhere in the bundle".to_string());
            }
            ZoneDecision {
                file: f.path.clone(),
                offset_secs: 0,
                quality: TsQuality::AssumedUtc,
                basis: "no zone evidence: assumed UTC (use --tz to set it)".to_string(),
            }
        })
        .collect()
}

/// A file whose own lines state a zone (UTC stamps beside its zone-less ones) other than the
/// one `--tz` gives: the given zone is used, and the contradiction is told, file by file.
pub(crate) fn tz_contradictions(files: &[FileInfo], cfg: &TimeConfig) -> Vec<Diagnostic> {
    let Some(given) = cfg.tz_override else {
        return Vec::new();
    };
    files
        .iter()
        .filter_map(|f| {
            let stated = consensus(&f.zone_samples).filter(|&off| off != given)?;
            Some(Diagnostic::for_file(
                f.path.clone(),
                format!(
                    "--tz {} contradicts the file: its lines carry UTC stamps beside their \
                     zone-less times that put them at UTC{}; the times are read at --tz",
                    format_offset(given),
                    format_offset(stated)
                ),
            ))
        })
        .collect()
}

fn decision(f: &FileInfo, offset_secs: i64, basis: String) -> ZoneDecision {
    ZoneDecision {
        file: f.path.clone(),
        offset_secs,
        quality: TsQuality::InferredZone,
        basis,
    }
}

/// The pod folder a file belongs to: its directory without trailing `serve`, `logs`,
/// `session_latest` or `old` components.
fn zone_group(path: &str) -> String {
    let mut dir = match path.rsplit_once('/') {
        Some((d, _)) => d,
        None => "",
    };
    loop {
        let (parent, last) = match dir.rsplit_once('/') {
            Some((p, l)) => (p, l),
            None => ("", dir),
        };
        if matches!(last, "serve" | "logs" | "old" | "session_latest" | "events") && !dir.is_empty()
        {
            dir = parent;
        } else {
            return dir.to_string();
        }
    }
}

/// The offset (seconds, a multiple of 15 minutes) the samples agree on, if they do.
fn consensus(samples: &[Micros]) -> Option<i64> {
    if samples.is_empty() {
        return None;
    }
    let quarter = 900 * MICROS_PER_SEC;
    let mut rounded: Vec<i64> = samples
        .iter()
        .map(|s| (s + quarter / 2).div_euclid(quarter) * 900)
        .collect();
    rounded.sort_unstable();
    let median = rounded[rounded.len() / 2];
    let agreeing = rounded.iter().filter(|r| **r == median).count();
    if agreeing * 10 >= rounded.len() * 8 && median.abs() <= 14 * 3600 {
        Some(median)
    } else {
        None
    }
}

/// The moment the dump was captured, if the bundle reveals it.
fn capture_time(
    files: &[FileInfo],
    events: &[Vec<Event>],
    root_name: Option<&str>,
) -> Option<CaptureTime> {
    // A recorded capture time.
    for f in files {
        let Some(evs) = events.get(f.id as usize) else {
            continue;
        };
        if let Some(cap) = evs.iter().find_map(|ev| recorded_capture(f, ev)) {
            return Some(cap);
        }
    }
    capture_without_record(files, root_name, || {
        events
            .iter()
            .flatten()
            .filter(|e| e.ts.is_some_and(|t| t.quality != TsQuality::Approximate))
            .filter(|e| !states_an_object(e))
            .filter_map(Event::last_micros)
            .max()
    })
}

/// Whether the event is a fact of a Kubernetes document (a describe, a YAML or JSON object:
/// an event with a `path`), whose time, if any, is when its block last changed (a
/// container's `finishedAt`, a condition's `lastTransitionTime`): it takes its place on the
/// timeline but anchors no other time. A node's conditions may date from its boot months
/// ago, and a status is written long before the dump is taken, so neither is a capture time
/// for `kubectl` ages nor the reference of a year-less stamp. A log record's own `path` field
/// (an HTTP path) does not make it a fact.
pub(crate) fn states_an_object(ev: &Event) -> bool {
    Format::of(ev.kind).is_kubernetes() && ev.field("path").is_some()
}

/// The recorded capture time an event states, if it is a `collected_at`-like fact whose
/// value is a time: the fact's path and the time.
pub(crate) fn recorded_time(ev: &Event) -> Option<(&str, Micros)> {
    let path = ev.field("path").unwrap_or_default();
    if !matches!(
        path,
        "collected_at" | "collectedat" | "capturedat" | "captured_at"
    ) {
        return None;
    }
    let Some(Ok((_, t))) = ev.field("value").map(|v| instant(v.trim_matches('"'))) else {
        return None;
    };
    Some((path, t))
}

fn recorded_capture(file: &FileInfo, ev: &Event) -> Option<CaptureTime> {
    let (path, micros) = recorded_time(ev)?;
    Some(CaptureTime {
        micros,
        basis: format!("{} in {}", path, file.path),
    })
}

/// The capture time when no fact records it: a troubleshoot folder name, else `newest`, the
/// newest exact or zone-resolved time in the bundle.
pub(crate) fn capture_without_record(
    files: &[FileInfo],
    root_name: Option<&str>,
    newest: impl FnOnce() -> Option<Micros>,
) -> Option<CaptureTime> {
    // troubleshoot's folder name: support-bundle-2025-03-14T09_12_44.
    let names = root_name
        .into_iter()
        .flat_map(|r| r.split('/'))
        .chain(files.iter().filter_map(|f| f.path.split('/').next()));
    for name in names {
        if let Some(t) = troubleshoot_stamp(name) {
            return Some(CaptureTime {
                micros: t,
                basis: format!("bundle folder name {name}"),
            });
        }
    }
    // Else the newest exact or zone-resolved time in the bundle.
    let newest = newest()?;
    Some(CaptureTime {
        micros: newest,
        basis: "newest log time in the bundle (no capture time recorded)".to_string(),
    })
}

fn troubleshoot_stamp(name: &str) -> Option<Micros> {
    let rest = name.strip_prefix("support-bundle-")?;
    let b = rest.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| rest.get(r).and_then(|s| s.parse::<u32>().ok());
    let y = num(0..4)?;
    micros_from_civil(
        i64::from(y),
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
        0,
    )
}

/// Stable merge by `(time, file, line)`; untimed events keep their place after the event
/// before them in their file.
pub(crate) fn merge(events: Vec<Vec<Event>>) -> Vec<Event> {
    let total = events.iter().map(Vec::len).sum();
    let mut keyed: Vec<(Micros, u32, u32, Event)> = Vec::with_capacity(total);
    for file_events in events {
        let mut carry = Micros::MIN;
        for ev in file_events {
            if let Some(ts) = ev.ts {
                carry = ts.micros;
            }
            keyed.push((carry, ev.file, ev.line, ev));
        }
    }
    keyed.sort_by_key(|a| (a.0, a.1, a.2));
    keyed.into_iter().map(|(_, _, _, ev)| ev).collect()
}

/// `+07:00`-style rendering of an offset.
pub fn format_offset(secs: i64) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let abs = secs.abs();
    format!("{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_last_stretch_of_records() {
        const H: Micros = 3600 * MICROS_PER_SEC;
        let mut spans = Spans::default();
        // The operator starts a day before the incident, then is silent for hours.
        spans.add(writes_records(SourceKind::Operator), TsQuality::Exact, 0);
        spans.add(
            writes_records(SourceKind::Operator),
            TsQuality::Exact,
            60 * MICROS_PER_SEC,
        );
        // A kube-system pod's age and a condition's old transition time.
        spans.add(
            writes_records(SourceKind::KubeTable),
            TsQuality::Approximate,
            -31 * H,
        );
        spans.add(
            writes_records(SourceKind::KubeObject),
            TsQuality::Exact,
            -40 * 24 * H,
        );
        // The incident: records less than the silence apart, over four hours.
        for t in [24 * H, 25 * H, 27 * H, 28 * H] {
            spans.add(
                writes_records(SourceKind::Raylet),
                TsQuality::InferredZone,
                t,
            );
        }
        spans.add(
            writes_records(SourceKind::KubeEvents),
            TsQuality::Approximate,
            29 * H,
        );
        assert_eq!(spans.window(), Some((24 * H, 28 * H)));
        // Spans added whole give the same window as their times one by one.
        let mut whole = Spans::default();
        whole.add_span(
            writes_records(SourceKind::Operator),
            TsQuality::Exact,
            (0, 60 * MICROS_PER_SEC),
        );
        whole.add_span(
            writes_records(SourceKind::Raylet),
            TsQuality::InferredZone,
            (24 * H, 24 * H + 10),
        );
        whole.add_span(
            writes_records(SourceKind::Raylet),
            TsQuality::InferredZone,
            (25 * H, 25 * H + 10),
        );
        assert_eq!(whole.window(), Some((24 * H, 25 * H + 10)));
        // With no record, objects' precise times, then every time.
        let mut objects = Spans::default();
        objects.add(writes_records(SourceKind::KubeObject), TsQuality::Exact, 5);
        objects.add(
            writes_records(SourceKind::KubeTable),
            TsQuality::Approximate,
            -H,
        );
        assert_eq!(objects.window(), Some((5, 5)));
        let mut ages = Spans::default();
        ages.add(
            writes_records(SourceKind::KubeTable),
            TsQuality::Approximate,
            -H,
        );
        ages.add(
            writes_records(SourceKind::KubeEvents),
            TsQuality::Approximate,
            0,
        );
        assert_eq!(ages.window(), Some((-H, 0)));
    }
    use crate::event::format_rfc3339;

    #[test]
    fn consensus_rounds_to_quarter_hours() {
        let h = 3600 * MICROS_PER_SEC;
        assert_eq!(
            consensus(&[-7 * h + 1234, -7 * h - 999_000]),
            Some(-7 * 3600)
        );
        assert_eq!(consensus(&[]), None);
        assert_eq!(consensus(&[h, -5 * h]), None);
    }

    #[test]
    fn groups() {
        assert_eq!(zone_group("head/logs/serve/controller_1.log"), "head");
        assert_eq!(zone_group("head-logs/dashboard.log"), "head-logs");
        assert_eq!(zone_group("x.txt"), "");
    }

    #[test]
    fn year_is_the_nearest() {
        let reference = micros_from_civil(2024, 1, 1, 0, 10, 0, 0).unwrap_or_default();
        let got = resolve_no_year(12, 31, 23 * 3600 * MICROS_PER_SEC, reference);
        assert_eq!(
            got.map(format_rfc3339).as_deref(),
            Some("2023-12-31T23:00:00.000Z")
        );
    }

    #[test]
    fn a_collect_bundle_is_known_by_its_collector() {
        let facts = [
            ("collector", "raysift collect"),
            ("kubectl_client_version", "v1.30.2"),
            ("operator_image", "null"),
        ];
        let Some(got) = collected_from("m/metadata.json", facts) else {
            unreachable!("a raysift collect metadata file is recognised")
        };
        assert_eq!(got.file, "m/metadata.json");
        assert_eq!(got.kubectl_client_version.as_deref(), Some("v1.30.2"));
        assert_eq!(got.operator_image, None, "a JSON null is no value");
        assert_eq!(collected_from("x", [("collector", "other tool")]), None);
        assert_eq!(
            collected_from("x", [("kubectl_client_version", "v1")]),
            None
        );
    }

    #[test]
    fn troubleshoot_names() {
        let t = troubleshoot_stamp("support-bundle-2025-03-14T09_12_44");
        assert_eq!(
            t.map(format_rfc3339).as_deref(),
            Some("2025-03-14T09:12:44.000Z")
        );
        assert_eq!(troubleshoot_stamp("support-bundle"), None);
    }
}
