//! The data behind the HTML report's incident picture: per-source event histograms over the
//! bundle's window, evidence markers placed on that time axis, and the events around each
//! evidence line for the filterable table.
//!
//! Computed from a `Timeline` and an already ranked `Report`, and only when a format needs it
//! (it walks every event). Invariant: no formatting beyond the RFC 3339 times the report
//! already uses; layout (pixels, colours, markup) belongs to `report/html.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::event::{format_rfc3339, Event, Level, Micros, SourceKind, Timestamp};
use crate::load::FileInfo;
use crate::model::{Evidence, Lane, Marker, Report, Row, Tick, TimelineData};
use crate::parse::Spans;
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
    /// Longest line kept in a table row, in characters.
    pub max_text: usize,
    /// Longest text a row folds away (what its line leaves out), in characters.
    pub max_more: usize,
}

impl TimelineDataConfig {
    /// What the HTML report uses.
    pub const HTML: TimelineDataConfig = TimelineDataConfig {
        buckets: 100,
        context_events: 20,
        context_micros: 120 * 1_000_000,
        max_rows: 2_000,
        max_text: 400,
        max_more: 4_000,
    };
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

/// The per-source histograms over a window: what each timed event adds to the picture
/// whatever its place in the timeline, so they may be counted in any order, even while the
/// bundle is read (`crate::streamed`).
#[derive(Clone, Debug)]
pub struct Lanes {
    n_buckets: usize,
    window: Option<(Micros, Micros)>,
    lo: Micros,
    width: Micros,
    /// One slot per source kind, by [`SourceKind::index`], so in the kinds' order: a count
    /// finds its lane without a search (millions of light events are counted one by one).
    lanes: Vec<Option<Lane>>,
    /// The first and last time counted.
    seen: Option<(Micros, Micros)>,
    /// Times counted outside the window: not drawn (see `timeline::Spans`).
    outside: u64,
}

impl Lanes {
    /// Empty lanes of `buckets` buckets over `window` (the first and last time of the whole
    /// timeline).
    pub fn new(window: Option<(Micros, Micros)>, buckets: usize) -> Lanes {
        let n_buckets = buckets.max(1);
        let (lo, hi) = window.unwrap_or((0, 0));
        // A zero-length window still gets one microsecond per bucket, so indices stay defined.
        let width = ((hi - lo) / n_buckets as i64 + 1).max(1);
        Lanes {
            n_buckets,
            window,
            lo,
            width,
            lanes: SourceKind::ALL.iter().map(|_| None).collect(),
            seen: None,
            outside: 0,
        }
    }

    fn bucket_of(&self, t: Micros) -> usize {
        (((t - self.lo) / self.width).max(0) as usize).min(self.n_buckets - 1)
    }

    /// Counts an event of `kind` at `level` at time `t`.
    pub fn count(&mut self, kind: SourceKind, t: Micros, level: Level) {
        self.seen = Some(self.seen.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))));
        if self.window.is_some_and(|(lo, hi)| t < lo || t > hi) {
            self.outside += 1;
            return;
        }
        let b = self.bucket_of(t);
        let n_buckets = self.n_buckets;
        let Some(slot) = self.lanes.get_mut(usize::from(kind.index())) else {
            return;
        };
        let lane = slot.get_or_insert_with(|| Lane {
            source: kind.as_str(),
            all: vec![0; n_buckets],
            warn: vec![0; n_buckets],
            total: 0,
            total_warn: 0,
        });
        if let Some(n) = lane.all.get_mut(b) {
            *n += 1;
        }
        lane.total += 1;
        if level >= Level::Warning {
            if let Some(n) = lane.warn.get_mut(b) {
                *n += 1;
            }
            lane.total_warn += 1;
        }
    }

    /// Adds what `other` counted; false (and nothing added) when it counted over another
    /// window or number of buckets, where its buckets are not these.
    pub fn add(&mut self, other: Lanes) -> bool {
        if (other.window, other.n_buckets) != (self.window, self.n_buckets) {
            return false;
        }
        if let Some((lo, hi)) = other.seen {
            self.seen = Some(self.seen.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
        self.outside += other.outside;
        for (slot, lane) in self.lanes.iter_mut().zip(other.lanes) {
            let Some(lane) = lane else {
                continue;
            };
            match slot {
                None => *slot = Some(lane),
                Some(mine) => {
                    for (a, b) in mine.all.iter_mut().zip(&lane.all) {
                        *a += b;
                    }
                    for (a, b) in mine.warn.iter_mut().zip(&lane.warn) {
                        *a += b;
                    }
                    mine.total += lane.total;
                    mine.total_warn += lane.total_warn;
                }
            }
        }
        true
    }
}

/// A walk from an evidence line through its neighbours, in one direction.
#[derive(Clone, Copy, Debug)]
struct Walk {
    /// The evidence's time, if it has one.
    centre: Option<Micros>,
    /// The evidence's sort key.
    from: Micros,
    /// The sort keys of the first and last rows taken (the evidence's own at first).
    rows: (Micros, Micros),
    /// How many more events it may take.
    left: usize,
}

/// The timeline section built as the events go by, in timeline order: only the bucket counts,
/// the last few events and the rows around the evidence are kept, so a streamed timeline
/// (`crate::streamed`) gives the picture without holding the bundle.
///
/// A streamed read may hand over only some events and count the others into [`Lanes`]
/// ([`Picture::handed_within`]): then the rows are right only where every event was handed
/// over, and the picture checks that each walk around an evidence line stayed there.
pub struct Picture<'a> {
    cfg: TimelineDataConfig,
    files: &'a [FileInfo],
    lanes: Lanes,
    /// Evidence `(file id, line)` → the index and time of its first event.
    wanted: BTreeMap<(u32, u32), Option<Seen>>,
    /// The last `context_events` events, with their index and sort key.
    recent: VecDeque<(usize, Micros, Event)>,
    /// Evidence whose following events are still being taken.
    open: Vec<Walk>,
    picked: BTreeMap<usize, Row>,
    evidence_at: BTreeSet<usize>,
    next: usize,
    /// The sort keys within which every event of the timeline is handed over; `None`: all.
    handed: Option<Spans>,
    /// The first and last time of the events counted instead of handed over.
    counted: Option<(Micros, Micros)>,
    /// Whether a row may differ from the whole timeline's: it was picked from a light event
    /// (`parse::Detail`), which has no text, or a walk around evidence left `handed`.
    unsure: bool,
}

impl<'a> Picture<'a> {
    /// `window` is the first and last time of the whole timeline.
    pub fn new(
        window: Option<(Micros, Micros)>,
        files: &'a [FileInfo],
        report: &Report,
        cfg: &TimelineDataConfig,
    ) -> Picture<'a> {
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
            lanes: Lanes::new(window, cfg.buckets),
            wanted,
            recent: VecDeque::new(),
            open: Vec::new(),
            picked: BTreeMap::new(),
            evidence_at: BTreeSet::new(),
            next: 0,
            handed: None,
            counted: None,
            unsure: false,
        }
    }

    /// Says that only the events whose sort key lies in `spans` are all handed over; the
    /// timed ones outside may have been counted instead ([`Picture::add_counted`]).
    pub fn handed_within(&mut self, spans: Spans) {
        self.handed = Some(spans);
    }

    /// Adds events counted instead of handed over; false when they were counted over
    /// another window (nothing is added: the picture must be drawn from a whole read).
    pub fn add_counted(&mut self, counted: Lanes) -> bool {
        let seen = counted.seen;
        let added = self.lanes.add(counted);
        if added {
            self.counted = seen;
        }
        added
    }

    fn row(&self, ev: &Event) -> Row {
        let shown = crate::explain::shown(ev);
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
            component: ev.component.to_string(),
            text: cut(&shown.line(str::to_string), self.cfg.max_text),
            more: cut(&shown.left_out(), self.cfg.max_more),
            evidence: Vec::new(),
        }
    }

    /// Takes the next event of the timeline, borrowed (it is cloned only to be kept among
    /// the recent ones).
    pub fn push(&mut self, ev: &Event) {
        let key = ev.ts.map_or(Micros::MIN, |t| t.micros);
        self.take(ev, key);
        self.keep_recent(key, || ev.clone());
    }

    /// Takes the next event of the timeline, owned, with the key it sorts by: a streamed
    /// timeline hands each event over once, so it is moved into the recent ones, never
    /// cloned.
    pub fn push_owned(&mut self, ev: Event, key: Micros) {
        self.take(&ev, key);
        self.keep_recent(key, || ev);
    }

    fn keep_recent(&mut self, key: Micros, ev: impl FnOnce() -> Event) {
        if self.cfg.context_events > 0 {
            if self.recent.len() >= self.cfg.context_events {
                self.recent.pop_front();
            }
            self.recent.push_back((self.next - 1, key, ev()));
        }
    }

    /// Notes a walk that went over the sort keys `lo..=hi`: its rows are the whole
    /// timeline's if no event there was counted instead of handed over. That holds where
    /// the walk stayed among the handed keys or away from the counted times. It also holds
    /// where the walk left the handed span of its evidence for the first event beyond, if
    /// every time beyond the span is too far from the evidence (the span reaches the
    /// context on that side) and the walk took no row there: in the whole timeline too it
    /// ends at the first event beyond, handed or not (events without a time are always
    /// handed over, so one there would have been taken).
    fn walked(&mut self, walk: Walk, lo: Micros, hi: Micros) {
        let (Some(handed), Some((first, last))) = (&self.handed, self.counted) else {
            return;
        };
        let (a, b) = (lo.max(first), hi.min(last));
        if a > b || handed.cover(a, b) {
            return;
        }
        let ctx = self.cfg.context_micros;
        let sure = match (walk.centre, handed.around(walk.from)) {
            (Some(c), Some((h_lo, h_hi))) => {
                (lo >= h_lo || (h_lo <= c.saturating_sub(ctx) && walk.rows.0 >= h_lo))
                    && (hi <= h_hi || (h_hi >= c.saturating_add(ctx) && walk.rows.1 <= h_hi))
            }
            _ => false,
        };
        self.unsure |= !sure;
    }

    fn take(&mut self, ev: &Event, key: Micros) {
        debug_assert!(
            self.handed.is_none() || ev.ts.is_none_or(|t| t.micros == key),
            "a timed event sorts by its own time"
        );
        let i = self.next;
        self.next += 1;
        if let Some(ts) = ev.ts {
            self.lanes.count(ev.kind, ts.micros, ev.level);
        }
        let ctx = self.cfg.context_micros;
        let near = |centre: Option<Micros>, t: Option<Timestamp>| match (centre, t) {
            (Some(c), Some(t)) => (t.micros - c).abs() <= ctx,
            _ => true,
        };
        // The events after earlier evidence. A walk ends at its last row or at the first
        // event too far away, and covers the keys from the evidence to there.
        let mut take = false;
        let mut ended = Vec::new();
        for walk in &mut self.open {
            if near(walk.centre, ev.ts) {
                take = true;
                walk.left -= 1;
                walk.rows.1 = key;
            } else {
                walk.left = 0;
            }
            if walk.left == 0 {
                ended.push(*walk);
            }
        }
        for walk in ended {
            self.walked(walk, walk.from, key);
        }
        self.open.retain(|walk| walk.left > 0);
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
            // Where the walk back ended: a full window of recent events, the first one too
            // far away, or the start of the timeline.
            let mut reach = if self.recent.len() >= self.cfg.context_events {
                self.recent.front().map_or(Micros::MIN, |r| r.1)
            } else {
                Micros::MIN
            };
            let mut walk = Walk {
                centre,
                from: key,
                rows: (key, key),
                left: self.cfg.context_events,
            };
            for (j, k, before) in self.recent.iter().rev() {
                if !near(centre, before.ts) {
                    reach = *k;
                    break;
                }
                walk.rows.0 = *k;
                self.unsure |= before.light;
                back.push((*j, self.row(before)));
            }
            self.walked(walk, reach, key);
            for (j, row) in back {
                self.picked.entry(j).or_insert(row);
            }
            if walk.left > 0 {
                self.open.push(walk);
            }
        }
        if take {
            self.unsure |= ev.light;
            let row = self.row(ev);
            self.picked.entry(i).or_insert(row);
        }
    }

    /// Whether a row may differ from the whole timeline's: one was picked from a light
    /// event, or a walk around evidence left the keys within which every event was handed
    /// over. The page is then drawn again from a whole read. Call once every event was pushed.
    pub fn unsure(&mut self) -> bool {
        // Walks the timeline's end left open ran to its end.
        for walk in std::mem::take(&mut self.open) {
            self.walked(walk, walk.from, Micros::MAX);
        }
        // An evidence line not handed over may have been counted.
        if self.handed.is_some() && self.counted.is_some() {
            self.unsure |= self.wanted.values().any(Option::is_none);
        }
        self.unsure
    }

    /// The section, once every event was pushed.
    pub fn finish(self, report: &Report) -> TimelineData {
        let Picture {
            cfg,
            lanes:
                Lanes {
                    n_buckets,
                    window,
                    lo,
                    width,
                    lanes,
                    outside,
                    ..
                },
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
            end: format_rfc3339(window.map_or(0, |w| w.1)),
            bucket_ms: width as f64 / 1000.0,
            buckets: n_buckets,
            ticks,
            lanes: lanes.into_iter().flatten().collect(),
            markers,
            rows,
            rows_capped,
            outside,
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

    /// The picture drawn from the events within `spans` (each with its sort key), the timed
    /// ones outside only counted, as a streamed read near evidence draws it; `None` when it
    /// says it is unsure.
    fn handed_picture(
        tl: &Timeline,
        report: &Report,
        cfg: &TimelineDataConfig,
        spans: &Spans,
    ) -> (Option<TimelineData>, bool) {
        let mut counted = Lanes::new(tl.window(), cfg.buckets);
        let mut picture = Picture::new(tl.window(), &tl.files, report, cfg);
        picture.handed_within(spans.clone());
        let mut handed = Vec::new();
        // An event without a time sorts by the time before it.
        let mut key = Micros::MIN;
        for ev in &tl.events {
            key = ev.ts.map_or(key, |t| t.micros);
            match ev.ts {
                Some(t) if !spans.cover(key, key) => counted.count(ev.kind, t.micros, ev.level),
                _ => handed.push((ev.clone(), key)),
            }
        }
        let any_counted = handed.len() < tl.events.len();
        assert!(picture.add_counted(counted));
        for (ev, key) in handed {
            picture.push_owned(ev, key);
        }
        let data = (!picture.unsure()).then(|| picture.finish(report));
        (data, any_counted)
    }

    #[test]
    fn a_picture_from_some_events_is_the_whole_one_unless_it_says_it_is_unsure() {
        let (tl, report) = fixture();
        // Spans around the evidence, as `streamed::near_evidence` makes them.
        let times: Vec<Micros> = report
            .causes
            .iter()
            .flat_map(|c| c.all_evidence())
            .filter_map(|e| e.ts.as_deref())
            .filter_map(|ts| crate::parse::primitives::instant(ts).ok())
            .map(|(_, t)| t)
            .collect();
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n.max(1)
        };
        let (mut sure, mut unsure) = (0, 0);
        for events in [1, 2, 3, 20] {
            for secs in [0, 30, 120, 600] {
                let cfg = TimelineDataConfig {
                    context_events: events,
                    context_micros: secs * 1_000_000,
                    ..TimelineDataConfig::HTML
                };
                let whole = timeline_data(&tl, &report, &cfg);
                for _ in 0..80 {
                    let spans = times
                        .iter()
                        .map(|&t| {
                            let before = next(150) as i64 * 1_000_000;
                            let after = next(150) as i64 * 1_000_000;
                            (t - before, t + after)
                        })
                        .collect();
                    match handed_picture(&tl, &report, &cfg, &Spans::new(spans)) {
                        (Some(data), counted) => {
                            assert_eq!(data, whole, "{events} events, {secs} s");
                            sure += usize::from(counted);
                        }
                        (None, _) => unsure += 1,
                    }
                }
            }
        }
        // Both happen: a picture sure of itself though events were only counted, and one
        // that is not.
        assert!(sure > 50 && unsure > 50, "{sure} sure, {unsure} unsure");
    }

    #[test]
    fn counts_over_another_window_are_refused() {
        let (tl, report) = fixture();
        let cfg = TimelineDataConfig::HTML;
        let mut picture = Picture::new(tl.window(), &tl.files, &report, &cfg);
        let mut other = Lanes::new(None, cfg.buckets);
        other.count(SourceKind::Operator, 0, Level::Info);
        assert!(!picture.add_counted(other));
        assert!(picture.add_counted(Lanes::new(tl.window(), cfg.buckets)));
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
