//! The data behind the HTML report's incident picture: per-source event histograms over the
//! bundle's window, evidence markers placed on that time axis, and the events around each
//! evidence line for the filterable table.
//!
//! Computed from a `Timeline` and an already ranked `Report`, and only when a format needs it
//! (it walks every event). Invariant: no formatting beyond the RFC 3339 times the report
//! already uses; layout (pixels, colours, markup) belongs to `report/html.rs`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::event::{format_rfc3339, Level, Micros, SourceKind};
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
    pub file: String,
    pub line: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub ts: Option<String>,
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
    let n_buckets = cfg.buckets.max(1);
    let (lo, hi) = tl.window().unwrap_or((0, 0));
    // A zero-length window still gets one microsecond per bucket, so indices stay defined.
    let width = ((hi - lo) / n_buckets as i64 + 1).max(1);
    let bucket_of = |t: Micros| (((t - lo) / width).max(0) as usize).min(n_buckets - 1);

    let mut lanes: BTreeMap<SourceKind, Lane> = BTreeMap::new();
    for ev in &tl.events {
        let Some(ts) = ev.ts else { continue };
        let lane = lanes.entry(ev.kind).or_insert_with(|| Lane {
            source: ev.kind.as_str(),
            all: vec![0; n_buckets],
            warn: vec![0; n_buckets],
            total: 0,
            total_warn: 0,
        });
        let b = bucket_of(ts.micros);
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

    // Evidence → event index, through (file path, line).
    let file_ids: BTreeMap<&str, u32> = tl.files.iter().map(|f| (f.path.as_str(), f.id)).collect();
    let mut index: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for (i, ev) in tl.events.iter().enumerate() {
        index.entry((ev.file, ev.line)).or_insert(i);
    }
    let event_of = |e: &Evidence| -> Option<usize> {
        let id = file_ids.get(e.file.as_str())?;
        index.get(&(*id, e.line)).copied()
    };

    let mut markers = Vec::new();
    let mut labels_of: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for cause in &report.causes {
        let mut letters: Vec<&str> = Vec::new();
        let evidence = cause
            .evidence
            .iter()
            .chain(cause.symptoms.iter().flat_map(|s| s.evidence.iter()));
        for e in evidence {
            let letter_idx = match letters.iter().position(|m| *m == e.meaning) {
                Some(i) => i,
                None => {
                    letters.push(&e.meaning);
                    letters.len() - 1
                }
            };
            let label = format!("{}{}", cause.rank, letter(letter_idx));
            let Some(i) = event_of(e) else { continue };
            let labels = labels_of.entry(i).or_default();
            if !labels.contains(&label) {
                labels.push(label.clone());
            }
            let Some(ts) = tl.events.get(i).and_then(|ev| ev.ts) else {
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

    // The context: ±N events in timeline order, within the time bound of the evidence.
    let mut picked: BTreeSet<usize> = BTreeSet::new();
    for &i in labels_of.keys() {
        let centre = tl.events.get(i).and_then(|e| e.ts).map(|t| t.micros);
        let near = |j: usize| -> bool {
            match (centre, tl.events.get(j).and_then(|e| e.ts)) {
                (Some(c), Some(t)) => (t.micros - c).abs() <= cfg.context_micros,
                _ => true,
            }
        };
        picked.insert(i);
        for j in (i.saturating_sub(cfg.context_events)..i).rev() {
            if !near(j) {
                break;
            }
            picked.insert(j);
        }
        let upper = (i + cfg.context_events).min(tl.events.len().saturating_sub(1));
        for j in i + 1..=upper {
            if !near(j) {
                break;
            }
            picked.insert(j);
        }
    }
    let rows_capped = picked.len() > cfg.max_rows;
    // Evidence rows always survive the cap; context rows fill what is left.
    let mut kept: BTreeSet<usize> = labels_of.keys().copied().take(cfg.max_rows).collect();
    for i in &picked {
        if kept.len() >= cfg.max_rows {
            break;
        }
        kept.insert(*i);
    }
    let rows = kept
        .iter()
        .filter_map(|&i| {
            let ev = tl.events.get(i)?;
            Some(Row {
                ts: ev.ts.map(|t| format_rfc3339(t.micros)),
                source: ev.kind.as_str(),
                level: ev.level.as_str(),
                file: tl.file(ev.file).map_or(String::new(), |f| f.path.clone()),
                line: ev.line,
                component: ev.component.clone(),
                text: cut(&ev.message, cfg.max_text),
                evidence: labels_of.get(&i).cloned().unwrap_or_default(),
            })
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
