//! The data behind the HTML report's incident picture: per-source event histograms over the
//! bundle's window, evidence markers placed on that time axis, and the events around each
//! evidence line for the filterable table.
//!
//! Computed from a `Timeline` and an already ranked `Report`, and only when a format needs it
//! (it walks every event). Invariant: no formatting beyond the RFC 3339 times the report
//! already uses; layout (pixels, colours, markup) belongs to `report/html.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::Serialize;

use crate::event::{format_rfc3339, Event, Level, Micros, SourceKind, Timestamp};
use crate::load::FileInfo;
use crate::rank::{Evidence, Report};
use crate::rules::Severity;
use crate::timeline::Timeline;

/// How much to compute. Built by the caller; no `Default` on purpose.
#[derive(Clone, Copy, Debug)]
pub struct TimelineDataConfig {
    /// Number of time buckets the window is cut into.
    pub buckets: usize,
    /// Events taken on each side of an evidence line, in timeline order.
    pub context_events: usize,
    /// …but only those within this many microseconds of it.
    pub context_micros: Micros,
    /// Upper bound on the rows of the event table.
    pub max_rows: usize,
    /// Longest message kept in a table row, in characters.
    pub max_text: usize,
}

impl TimelineDataConfig {
    /// What the HTML report uses.
    pub const HTML: TimelineDataConfig = TimelineDataConfig {
        buckets: 100,
        context_events: 20,
        context_micros: 120 * 1_000_000,
        max_rows: 2_000,
        max_text: 400,
    };
}

/// The optional `timeline` section of the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineData {
    /// Start of the first bucket (the first timed event).
    pub start: String,
    /// End of the last bucket (the last timed event).
    pub end: String,
    pub bucket_ms: f64,
    pub buckets: usize,
    /// Axis labels: bucket index and the time at the start of that bucket.
    pub ticks: Vec<Tick>,
    /// One lane per source kind with timed events, in `SourceKind` order.
    pub lanes: Vec<Lane>,
    /// One marker per evidence line that has a time, in rank then time order.
    pub markers: Vec<Marker>,
    /// The events around the evidence, in timeline order.
    pub rows: Vec<Row>,
    /// Whether `rows` was cut at the cap.
    pub rows_capped: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tick {
    pub bucket: usize,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lane {
    pub source: &'static str,
    /// Events per bucket.
    pub all: Vec<u32>,
    /// Events at warning level or above per bucket.
    pub warn: Vec<u32>,
    pub total: u64,
    pub total_warn: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Marker {
    pub cause_rank: usize,
    pub cause_id: String,
    /// Whether the evidence belongs to a benign (`info`) cause.
    pub benign: bool,
    /// `1a`, `1b`, …: one letter per distinct meaning within a cause.
    pub label: String,
    pub meaning: String,
    pub source: &'static str,
    pub bucket: usize,
    pub ts: String,
    /// How `ts` was obtained (`TsQuality::as_str`).
    pub ts_quality: &'static str,
    pub file: String,
    pub line: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub ts: Option<String>,
    /// How `ts` was obtained (`TsQuality::as_str`; `none` without a time).
    pub ts_quality: &'static str,
    pub source: &'static str,
    pub level: &'static str,
    pub file: String,
    pub line: u32,
    pub component: String,
    pub text: String,
    /// Marker labels of the evidence this row is (empty for context rows).
    pub evidence: Vec<String>,
}

/// Computes the timeline section for `report` (its causes as already filtered).
pub fn timeline_data(tl: &Timeline, report: &Report, cfg: &TimelineDataConfig) -> TimelineData {
    let mut picture = Picture::new(tl.window(), &tl.files, report, cfg);
    for ev in &tl.events {
        picture.push(ev);
    }
    picture.finish(report)
}

/// Where an evidence line's event came in the timeline, and its time.
type Seen = (usize, Option<Timestamp>);

/// The timeline section built as the events go by, in timeline order: only the bucket counts,
/// the last few events and the rows around the evidence are kept, so a streamed timeline
/// (`crate::streamed`) gives the picture without holding the bundle.
pub struct Picture<'a> {
    cfg: TimelineDataConfig,
    files: &'a [FileInfo],
    n_buckets: usize,
    lo: Micros,
    hi: Micros,
    width: Micros,
    lanes: BTreeMap<SourceKind, Lane>,
    /// Evidence `(file id, line)` → the index and time of its first event.
    wanted: BTreeMap<(u32, u32), Option<Seen>>,
    /// The last `context_events` events, with their index.
    recent: VecDeque<(usize, Event)>,
    /// Evidence whose following events are still being taken: its time, and how many more.
    open: Vec<(Option<Micros>, usize)>,
    picked: BTreeMap<usize, Row>,
    evidence_at: BTreeSet<usize>,
    next: usize,
    /// Whether a row was picked from a light event (`parse::Detail`), which has no text.
    light_rows: bool,
}

impl<'a> Picture<'a> {
    /// `window` is the first and last time of the whole timeline.
    pub fn new(
        window: Option<(Micros, Micros)>,
        files: &'a [FileInfo],
        report: &Report,
        cfg: &TimelineDataConfig,
    ) -> Picture<'a> {
        let n_buckets = cfg.buckets.max(1);
        let (lo, hi) = window.unwrap_or((0, 0));
        // A zero-length window still gets one microsecond per bucket, so indices stay defined.
        let width = ((hi - lo) / n_buckets as i64 + 1).max(1);
        let file_ids: BTreeMap<&str, u32> = files.iter().map(|f| (f.path.as_str(), f.id)).collect();
        let mut wanted = BTreeMap::new();
        for cause in &report.causes {
            let evidence = cause.all_evidence();
            for e in evidence {
                if let Some(id) = file_ids.get(e.file.as_str()) {
                    wanted.insert((*id, e.line), None);
                }
            }
        }
        Picture {
            cfg: *cfg,
            files,
            n_buckets,
            lo,
            hi,
            width,
            lanes: BTreeMap::new(),
            wanted,
            recent: VecDeque::new(),
            open: Vec::new(),
            picked: BTreeMap::new(),
            evidence_at: BTreeSet::new(),
            next: 0,
            light_rows: false,
        }
    }

    fn bucket_of(&self, t: Micros) -> usize {
        (((t - self.lo) / self.width).max(0) as usize).min(self.n_buckets - 1)
    }

    fn row(&self, ev: &Event) -> Row {
        Row {
            ts: ev.ts.map(|t| format_rfc3339(t.micros)),
            ts_quality: ev.ts.map_or("none", |t| t.quality.as_str()),
            source: ev.kind.as_str(),
            level: ev.level.as_str(),
            file: self
                .files
                .get(ev.file as usize)
                .map_or(String::new(), |f| f.path.clone()),
            line: ev.line,
            component: ev.component.clone(),
            text: cut(&ev.message, self.cfg.max_text),
            evidence: Vec::new(),
        }
    }

    /// Takes the next event of the timeline, borrowed (it is cloned only to be kept among
    /// the recent ones).
    pub fn push(&mut self, ev: &Event) {
        self.take(ev);
        self.keep_recent(|| ev.clone());
    }

    /// Takes the next event of the timeline, owned: a streamed timeline hands each event
    /// over once, so it is moved into the recent ones, never cloned.
    pub fn push_owned(&mut self, ev: Event) {
        self.take(&ev);
        self.keep_recent(|| ev);
    }

    fn keep_recent(&mut self, ev: impl FnOnce() -> Event) {
        if self.cfg.context_events > 0 {
            if self.recent.len() >= self.cfg.context_events {
                self.recent.pop_front();
            }
            self.recent.push_back((self.next - 1, ev()));
        }
    }

    fn take(&mut self, ev: &Event) {
        let i = self.next;
        self.next += 1;
        if let Some(ts) = ev.ts {
            let b = self.bucket_of(ts.micros);
            let n_buckets = self.n_buckets;
            let lane = self.lanes.entry(ev.kind).or_insert_with(|| Lane {
                source: ev.kind.as_str(),
                all: vec![0; n_buckets],
                warn: vec![0; n_buckets],
                total: 0,
                total_warn: 0,
            });
            if let Some(n) = lane.all.get_mut(b) {
                *n += 1;
            }
            lane.total += 1;
            if ev.level >= Level::Warning {
                if let Some(n) = lane.warn.get_mut(b) {
                    *n += 1;
                }
                lane.total_warn += 1;
            }
        }
        let ctx = self.cfg.context_micros;
        let near = |centre: Option<Micros>, t: Option<Timestamp>| match (centre, t) {
            (Some(c), Some(t)) => (t.micros - c).abs() <= ctx,
            _ => true,
        };
        // The events after earlier evidence.
        let mut take = false;
        for (centre, left) in &mut self.open {
            if *left > 0 {
                if near(*centre, ev.ts) {
                    take = true;
                    *left -= 1;
                } else {
                    *left = 0;
                }
            }
        }
        self.open.retain(|(_, left)| *left > 0);
        let first = match self.wanted.get_mut(&(ev.file, ev.line)) {
            Some(slot @ None) => {
                *slot = Some((i, ev.ts));
                true
            }
            _ => false,
        };
        if first {
            let centre = ev.ts.map(|t| t.micros);
            self.evidence_at.insert(i);
            take = true;
            let mut back = Vec::new();
            for (j, before) in self.recent.iter().rev() {
                if !near(centre, before.ts) {
                    break;
                }
                self.light_rows |= before.light;
                back.push((*j, self.row(before)));
            }
            for (j, row) in back {
                self.picked.entry(j).or_insert(row);
            }
            if self.cfg.context_events > 0 {
                self.open.push((centre, self.cfg.context_events));
            }
        }
        if take {
            self.light_rows |= ev.light;
            let row = self.row(ev);
            self.picked.entry(i).or_insert(row);
        }
    }

    /// Whether a row was picked from a light event: the page would show it without its text.
    pub fn has_light_rows(&self) -> bool {
        self.light_rows
    }

    /// The section, once every event was pushed.
    pub fn finish(self, report: &Report) -> TimelineData {
        let Picture {
            cfg,
            n_buckets,
            lo,
            hi,
            width,
            lanes,
            wanted,
            mut picked,
            evidence_at,
            ..
        } = self;
        let bucket_of = |t: Micros| (((t - lo) / width).max(0) as usize).min(n_buckets - 1);
        let file_ids: BTreeMap<&str, u32> =
            self.files.iter().map(|f| (f.path.as_str(), f.id)).collect();
        let event_of = |e: &Evidence| -> Option<Seen> {
            let id = file_ids.get(e.file.as_str())?;
            wanted.get(&(*id, e.line)).copied().flatten()
        };

        let mut markers = Vec::new();
        let mut labels_of: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for cause in &report.causes {
            let mut letters: Vec<&str> = Vec::new();
            let evidence = cause.all_evidence();
            for e in evidence {
                let letter_idx = match letters.iter().position(|m| *m == e.meaning) {
                    Some(i) => i,
                    None => {
                        letters.push(&e.meaning);
                        letters.len() - 1
                    }
                };
                let label = format!("{}{}", cause.rank, letter(letter_idx));
                let Some((i, ts)) = event_of(e) else { continue };
                let labels = labels_of.entry(i).or_default();
                if !labels.contains(&label) {
                    labels.push(label.clone());
                }
                let Some(ts) = ts else {
                    continue;
                };
                markers.push(Marker {
                    cause_rank: cause.rank,
                    cause_id: cause.id.clone(),
                    benign: cause.severity == Severity::Info,
                    label,
                    meaning: e.meaning.clone(),
                    source: e.source,
                    bucket: bucket_of(ts.micros),
                    ts: format_rfc3339(ts.micros),
                    ts_quality: ts.quality.as_str(),
                    file: e.file.clone(),
                    line: e.line,
                });
            }
        }
        markers.sort_by(|a, b| {
            (a.cause_rank, &a.ts, &a.file, a.line, &a.label).cmp(&(
                b.cause_rank,
                &b.ts,
                &b.file,
                b.line,
                &b.label,
            ))
        });
        // A line cited by a cause and by one of its symptoms is one marker.
        markers.dedup_by(|a, b| a.label == b.label && a.file == b.file && a.line == b.line);
        debug_assert!(labels_of.keys().all(|i| evidence_at.contains(i)));

        let rows_capped = picked.len() > cfg.max_rows;
        // Evidence rows always survive the cap; context rows fill what is left.
        let mut kept: BTreeSet<usize> = labels_of.keys().copied().take(cfg.max_rows).collect();
        for i in picked.keys() {
            if kept.len() >= cfg.max_rows {
                break;
            }
            kept.insert(*i);
        }
        let rows = kept
            .iter()
            .filter_map(|i| {
                let mut row = picked.remove(i)?;
                row.evidence = labels_of.get(i).cloned().unwrap_or_default();
                Some(row)
            })
            .collect();

        let n_ticks = 5;
        let ticks = (0..=n_ticks)
            .map(|k| {
                let bucket = (k * n_buckets / n_ticks).min(n_buckets);
                Tick {
                    bucket,
                    label: format_rfc3339(lo + width * bucket as i64),
                }
            })
            .collect();

        TimelineData {
            start: format_rfc3339(lo),
            end: format_rfc3339(hi),
            bucket_ms: width as f64 / 1000.0,
            buckets: n_buckets,
            ticks,
            lanes: lanes.into_values().collect(),
            markers,
            rows,
            rows_capped,
        }
    }
}

fn letter(i: usize) -> String {
    let letters = "abcdefghijklmnopqrstuvwxyz";
    match letters.chars().nth(i) {
        Some(c) => c.to_string(),
        None => format!("z{}", i - 25),
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push_str(" …");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::fixture;

    #[test]
    fn histogram_counts_every_timed_event_once() {
        let (tl, report) = fixture();
        let data = timeline_data(&tl, &report, &TimelineDataConfig::HTML);
        let timed = tl.events.iter().filter(|e| e.ts.is_some()).count() as u64;
        assert_eq!(data.lanes.iter().map(|l| l.total).sum::<u64>(), timed);
        for lane in &data.lanes {
            assert_eq!(lane.all.len(), 100);
            assert_eq!(
                lane.all.iter().map(|&n| u64::from(n)).sum::<u64>(),
                lane.total
            );
            assert!(lane.total_warn <= lane.total);
        }
        // The first event falls in bucket 0, the last in bucket 99.
        assert!(data.lanes.iter().any(|l| l.all.first() > Some(&0)));
        assert!(data.lanes.iter().any(|l| l.all.last() > Some(&0)));
    }

    #[test]
    fn markers_follow_the_evidence_and_rows_hold_it() {
        let (tl, report) = fixture();
        let data = timeline_data(&tl, &report, &TimelineDataConfig::HTML);
        let labels: Vec<&str> = data.markers.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["1a", "1b", "1c", "1c", "2a"]);
        for m in &data.markers {
            assert!(data
                .rows
                .iter()
                .any(|r| r.file == m.file && r.line == m.line && r.evidence.contains(&m.label)));
        }
    }

    #[test]
    fn the_table_is_capped_but_keeps_evidence() {
        let (tl, report) = fixture();
        let cfg = TimelineDataConfig {
            max_rows: 5,
            ..TimelineDataConfig::HTML
        };
        let data = timeline_data(&tl, &report, &cfg);
        assert!(data.rows_capped);
        assert_eq!(data.rows.len(), 5);
        let evidence_rows = data.rows.iter().filter(|r| !r.evidence.is_empty()).count();
        assert_eq!(evidence_rows, 5);
    }

    #[test]
    fn context_stays_within_the_time_bound() {
        let (tl, report) = fixture();
        let cfg = TimelineDataConfig {
            context_micros: 0,
            ..TimelineDataConfig::HTML
        };
        let data = timeline_data(&tl, &report, &cfg);
        // Only the evidence and events at the very same instants remain.
        assert!(data
            .rows
            .iter()
            .all(|r| !r.evidence.is_empty()
                || data.markers.iter().any(|m| Some(&m.ts) == r.ts.as_ref())));
    }

    #[test]
    fn an_empty_timeline_gives_an_empty_picture() {
        let (mut tl, mut report) = fixture();
        tl.events.clear();
        report.causes.clear();
        let data = timeline_data(&tl, &report, &TimelineDataConfig::HTML);
        assert!(data.lanes.is_empty() && data.markers.is_empty() && data.rows.is_empty());
    }
}
