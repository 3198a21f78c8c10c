//! Time resolution for a streamed read: what `timeline::build` decides from every event at
//! once, decided here from a few numbers per file gathered as the events stream past, so that
//! no event needs to be kept.
//!
//! While streaming, a [`Tracker`] sees each file's events in file order and keeps, per file:
//! whether it has zone-less times, the range of its UTC and zone-less times (an object
//! fact's apart: they anchor nothing, `timeline::states_an_object`), its year-less
//! stamps (each with the last time before it, which is its reference), the range of its
//! `kubectl` ages and its first recorded capture time. For each event it gives a [`Stamp`]:
//! how to resolve the event's own time, and the time it sorts by (its own, or that of the last
//! event before it in its file that has one), both as descriptions that need the bundle's
//! decisions. [`Tracker::resolve`] then makes those decisions (zones, the window year-less
//! stamps fall back on, the capture time) exactly as `timeline::build` does, and
//! [`Resolution`] turns stamps into times.

use std::collections::BTreeMap;

use crate::collected::{collected_fact, collected_from, Collected};
use crate::event::{Event, FileId, Micros, RawTime, Timestamp, TsQuality, MICROS_PER_SEC};
use crate::load::FileInfo;
use crate::timeline::{
    capture_without_record, note_by_hour, recorded_time, resolve_no_year, states_an_object,
    writes_records, zones_for, CaptureTime, Spans, TimeConfig, ZoneDecision,
};

/// A time that resolves without any other year-less stamp: explicit UTC, or zone-less.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    Utc(Micros),
    Naive(Micros),
}

/// How an event's own time resolves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Own {
    None,
    Anchor(Anchor),
    /// The file's year-less stamp with this index.
    NoYear(u32),
    /// A `kubectl` age in seconds.
    Age(i64),
}

/// The time an event sorts by: that of the last event up to it in its file whose time
/// resolves. `anchor` is the last UTC or zone-less time, `no_year` the indices of the
/// year-less stamps since, `age` the last age since (with how many year-less stamps of the
/// file came before it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Carry {
    pub anchor: Option<Anchor>,
    pub no_year: Option<(u32, u32)>,
    pub age: Option<(i64, u32)>,
}

/// What an event's times depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub own: Own,
    pub carry: Carry,
}

/// A year-less stamp and the UTC or zone-less time seen since the previous one, if any.
#[derive(Clone, Debug)]
struct NoYear {
    month: u8,
    day: u8,
    micros_of_day: i64,
    anchor: Option<Anchor>,
}

/// One file's times, as its events go by.
#[derive(Clone, Debug, Default)]
pub struct FileTimes {
    naive: bool,
    /// The range of the times of object facts, which anchor nothing (`states_an_object`).
    stated: Option<(Micros, Micros)>,
    /// The UTC and zone-less times (object facts' apart), as `timeline::note_by_hour` keeps
    /// them: their ranges and the incident window are read from them.
    utc_hours: BTreeMap<i64, (Micros, Micros)>,
    local_hours: BTreeMap<i64, (Micros, Micros)>,
    anchors: u64,
    no_year: Vec<NoYear>,
    /// The UTC or zone-less time seen since the last year-less stamp.
    pending_anchor: Option<Anchor>,
    ages: Option<(i64, i64)>,
    n_ages: u64,
    recorded: Option<(String, Micros)>,
    /// The facts that say how a `raysift collect` bundle was collected (`collected_fact`).
    collected: Vec<(String, String)>,
    carry: Carry,
}

/// The first and last time of spans kept by `note_by_hour`: the first span starts first.
fn range(hours: &BTreeMap<i64, (Micros, Micros)>) -> Option<(Micros, Micros)> {
    let (&(lo, _), last) = (hours.values().next()?, hours.values().map(|s| s.1).max()?);
    Some((lo, last))
}

fn widen(range: &mut Option<(Micros, Micros)>, t: Micros) {
    *range = Some(match *range {
        Some((lo, hi)) => (lo.min(t), hi.max(t)),
        None => (t, t),
    });
}

impl FileTimes {
    /// Takes the next event of the file; returns how its times resolve.
    pub fn observe(&mut self, ev: &Event) -> Stamp {
        // Facts are read from a `path` field: most events have none, and this runs once per
        // event of the bundle, one batch at a time.
        if ev.field("path").is_some() {
            if self.recorded.is_none() {
                if let Some((path, t)) = recorded_time(ev) {
                    self.recorded = Some((path.to_string(), t));
                }
            }
            if let Some((path, value)) = collected_fact(ev) {
                self.collected.push((path.to_string(), value.to_string()));
            }
        }
        let own = match ev.raw_time {
            None => Own::None,
            Some(RawTime::Utc(t)) => {
                if states_an_object(ev) {
                    widen(&mut self.stated, t);
                } else {
                    note_by_hour(&mut self.utc_hours, (t, t));
                }
                Own::Anchor(Anchor::Utc(t))
            }
            Some(RawTime::Naive(t)) => {
                self.naive = true;
                note_by_hour(&mut self.local_hours, (t, t));
                Own::Anchor(Anchor::Naive(t))
            }
            Some(RawTime::NoYear {
                month,
                day,
                micros_of_day,
            }) => {
                let idx = u32::try_from(self.no_year.len()).unwrap_or(u32::MAX);
                self.no_year.push(NoYear {
                    month,
                    day,
                    micros_of_day,
                    anchor: self.pending_anchor.take(),
                });
                Own::NoYear(idx)
            }
            Some(RawTime::Age { secs }) => {
                self.n_ages += 1;
                self.ages = Some(match self.ages {
                    Some((lo, hi)) => (lo.min(secs), hi.max(secs)),
                    None => (secs, secs),
                });
                Own::Age(secs)
            }
        };
        match own {
            Own::None => {}
            Own::Anchor(a) => {
                self.anchors += 1;
                self.pending_anchor = Some(a);
                self.carry = Carry {
                    anchor: Some(a),
                    no_year: None,
                    age: None,
                };
            }
            Own::NoYear(idx) => {
                let lo = self.carry.no_year.map_or(idx, |(lo, _)| lo);
                self.carry.no_year = Some((lo, idx));
            }
            Own::Age(secs) => {
                let before = u32::try_from(self.no_year.len()).unwrap_or(u32::MAX);
                self.carry.age = Some((secs, before));
            }
        }
        Stamp {
            own,
            carry: self.carry,
        }
    }
}

/// The times of every file of a streamed read, by the file's `seq`.
#[derive(Default)]
pub struct Tracker {
    pub files: Vec<FileTimes>,
}

impl Tracker {
    pub fn file(&mut self, seq: u32) -> &mut FileTimes {
        let seq = seq as usize;
        if self.files.len() <= seq {
            self.files.resize_with(seq + 1, FileTimes::default);
        }
        &mut self.files[seq]
    }

    /// The bundle's decisions, as `timeline::build` makes them. `files` and `ids` come from
    /// the streamed read (`ids[seq]` is a file's id).
    pub fn resolve(
        mut self,
        files: &[FileInfo],
        ids: &[FileId],
        root_name: Option<&str>,
        cfg: &TimeConfig,
    ) -> Resolution {
        // Files by id.
        let mut by_id: Vec<FileTimes> = vec![FileTimes::default(); files.len()];
        for (seq, &id) in ids.iter().enumerate() {
            if let (Some(slot), Some(t)) = (by_id.get_mut(id as usize), self.files.get_mut(seq)) {
                *slot = std::mem::take(t);
            }
        }
        let zones = zones_for(files, cfg, |f| {
            by_id.get(f.id as usize).is_some_and(|t| t.naive)
        });
        let mut offsets = vec![(0i64, TsQuality::AssumedUtc); files.len()];
        for z in &zones {
            if let Some(f) = files.iter().find(|f| f.path == z.file) {
                if let Some(slot) = offsets.get_mut(f.id as usize) {
                    *slot = (z.offset_secs * MICROS_PER_SEC, z.quality);
                }
            }
        }
        // The window of explicit and zone-resolved times, but those of object facts.
        let mut window: Option<(Micros, Micros)> = None;
        for (id, t) in by_id.iter().enumerate() {
            let off = offsets[id].0;
            if let Some((lo, hi)) = range(&t.utc_hours) {
                widen(&mut window, lo);
                widen(&mut window, hi);
            }
            if let Some((lo, hi)) = range(&t.local_hours) {
                widen(&mut window, lo - off);
                widen(&mut window, hi - off);
            }
        }
        // Year-less stamps, file by file, each from the time before it.
        let mut no_year: Vec<Vec<Option<Micros>>> = Vec::with_capacity(by_id.len());
        let mut newest: Option<Micros> = window.map(|(_, hi)| hi);
        // The incident window, as `Timeline::window` takes it.
        let mut spans = Spans::default();
        let records = |id: usize| files.get(id).is_some_and(|f| writes_records(f.kind));
        for (id, t) in by_id.iter().enumerate() {
            let (off, quality) = offsets[id];
            for &(lo, hi) in t.utc_hours.values() {
                spans.add_span(records(id), TsQuality::Exact, (lo, hi));
            }
            for &(lo, hi) in t.local_hours.values() {
                spans.add_span(records(id), quality, (lo - off, hi - off));
            }
            if let Some((lo, hi)) = t.stated {
                spans.add(false, TsQuality::Exact, lo);
                spans.add(false, TsQuality::Exact, hi);
            }
        }
        for (id, t) in by_id.iter().enumerate() {
            let off = offsets[id].0;
            let mut reference = window.map(|(lo, _)| lo);
            let mut got = Vec::with_capacity(t.no_year.len());
            for y in &t.no_year {
                if let Some(a) = y.anchor {
                    reference = Some(anchor_micros(a, off));
                }
                let resolved =
                    reference.and_then(|r| resolve_no_year(y.month, y.day, y.micros_of_day, r));
                if let Some(r) = resolved {
                    reference = Some(r);
                    newest = Some(newest.map_or(r, |n| n.max(r)));
                    spans.add(records(id), TsQuality::AssumedUtc, r);
                }
                got.push(resolved);
            }
            no_year.push(got);
        }
        let recorded = files.iter().find_map(|f| {
            let (path, micros) = by_id.get(f.id as usize)?.recorded.as_ref()?;
            Some(CaptureTime {
                micros: *micros,
                basis: format!("{} in {}", path, f.path),
            })
        });
        let capture = recorded.or_else(|| capture_without_record(files, root_name, || newest));
        let collected = files
            .iter()
            .filter(|f| f.kind == crate::event::SourceKind::BundleMeta)
            .find_map(|f| {
                let facts = &by_id.get(f.id as usize)?.collected;
                collected_from(&f.path, facts.iter().map(|(p, v)| (p.as_str(), v.as_str())))
            });
        let mut timed = 0u64;
        for (id, t) in by_id.iter().enumerate() {
            timed += t.anchors;
            timed += no_year[id].iter().filter(|r| r.is_some()).count() as u64;
            if let (Some(cap), Some((lo, hi))) = (&capture, t.ages) {
                timed += t.n_ages;
                let (lo, hi) = (
                    cap.micros - hi * MICROS_PER_SEC,
                    cap.micros - lo * MICROS_PER_SEC,
                );
                spans.add(records(id), TsQuality::Approximate, lo);
                spans.add(records(id), TsQuality::Approximate, hi);
            }
        }
        Resolution {
            offsets,
            no_year,
            zones,
            capture,
            collected,
            window: spans.window(),
            timed,
        }
    }
}

fn anchor_micros(a: Anchor, offset: Micros) -> Micros {
    match a {
        Anchor::Utc(t) => t,
        Anchor::Naive(t) => t - offset,
    }
}

/// The bundle's decisions, and how they resolve a [`Stamp`].
#[derive(Debug)]
pub struct Resolution {
    /// Per file id: the zone offset in microseconds, and the quality it gives.
    offsets: Vec<(Micros, TsQuality)>,
    /// Per file id: each year-less stamp, resolved.
    no_year: Vec<Vec<Option<Micros>>>,
    pub zones: Vec<ZoneDecision>,
    pub capture: Option<CaptureTime>,
    pub collected: Option<Collected>,
    /// The incident window (`Timeline::window`).
    pub window: Option<(Micros, Micros)>,
    /// Events whose time resolves.
    pub timed: u64,
}

impl Resolution {
    /// The zone offset (`local - utc`, microseconds) the file's zone-less times are read at.
    pub fn offset(&self, file: FileId) -> Micros {
        self.offsets.get(file as usize).map_or(0, |o| o.0)
    }

    /// The event's own time.
    pub fn ts(&self, file: FileId, own: Own) -> Option<Timestamp> {
        let (offset, quality) = self
            .offsets
            .get(file as usize)
            .copied()
            .unwrap_or((0, TsQuality::AssumedUtc));
        match own {
            Own::None => None,
            Own::Anchor(Anchor::Utc(t)) => Some(Timestamp {
                micros: t,
                quality: TsQuality::Exact,
            }),
            Own::Anchor(Anchor::Naive(t)) => Some(Timestamp {
                micros: t - offset,
                quality,
            }),
            Own::NoYear(idx) => self.no_year_of(file, idx).map(|micros| Timestamp {
                micros,
                quality: TsQuality::AssumedUtc,
            }),
            Own::Age(secs) => self.capture.as_ref().map(|cap| Timestamp {
                micros: cap.micros - secs * MICROS_PER_SEC,
                quality: TsQuality::Approximate,
            }),
        }
    }

    fn no_year_of(&self, file: FileId, idx: u32) -> Option<Micros> {
        self.no_year
            .get(file as usize)?
            .get(idx as usize)
            .copied()
            .flatten()
    }

    /// The time an event sorts by (`Micros::MIN` before the first time of its file), as
    /// `timeline::merge` orders.
    pub fn key(&self, file: FileId, carry: &Carry) -> Micros {
        let age = |secs: i64| {
            self.capture
                .as_ref()
                .map(|c| c.micros - secs * MICROS_PER_SEC)
        };
        if let Some((lo, hi)) = carry.no_year {
            for idx in (lo..=hi).rev() {
                if let Some((secs, before)) = carry.age {
                    if before > idx {
                        if let Some(t) = age(secs) {
                            return t;
                        }
                    }
                }
                if let Some(t) = self.no_year_of(file, idx) {
                    return t;
                }
            }
        }
        if let Some(t) = carry.age.and_then(|(secs, _)| age(secs)) {
            return t;
        }
        match carry.anchor {
            Some(a) => {
                let offset = self.offsets.get(file as usize).map_or(0, |o| o.0);
                anchor_micros(a, offset)
            }
            None => Micros::MIN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SourceKind;

    fn ev(line: u32, raw: Option<RawTime>) -> Event {
        let mut e = Event::new(line, "x");
        e.raw_time = raw;
        e.kind = SourceKind::Operator;
        e
    }

    #[test]
    fn stamps_resolve_as_the_timeline_does() {
        let t0 = crate::event::micros_from_civil(2024, 12, 31, 23, 0, 0, 0).unwrap_or_default();
        let events = vec![
            ev(1, None),
            ev(
                2,
                Some(RawTime::NoYear {
                    month: 1,
                    day: 1,
                    micros_of_day: 5,
                }),
            ),
            ev(3, Some(RawTime::Naive(t0))),
            ev(4, None),
            ev(
                5,
                Some(RawTime::NoYear {
                    month: 1,
                    day: 1,
                    micros_of_day: 7,
                }),
            ),
            ev(6, Some(RawTime::Age { secs: 30 })),
            ev(7, Some(RawTime::Utc(t0 + 5))),
            ev(8, None),
        ];
        let (res, tl, stamps) = resolve_both(&events);
        assert_eq!(res.zones, tl.zones);
        assert_eq!(res.capture, tl.capture);
        assert_eq!(res.window, tl.window());
        let timed = tl.events.iter().filter(|e| e.ts.is_some()).count() as u64;
        assert_eq!(res.timed, timed);
        let mut keyed: Vec<(Micros, u32, Option<Timestamp>)> = stamps
            .iter()
            .zip(&events)
            .map(|(s, e)| (res.key(0, &s.carry), e.line, res.ts(0, s.own)))
            .collect();
        keyed.sort_by_key(|k| (k.0, k.1));
        let want: Vec<(u32, Option<Timestamp>)> =
            tl.events.iter().map(|e| (e.line, e.ts)).collect();
        let got: Vec<(u32, Option<Timestamp>)> = keyed.iter().map(|k| (k.1, k.2)).collect();
        assert_eq!(got, want);
    }

    /// An object fact's own time (a node condition from its boot, a status written after the
    /// last log line) is placed on the timeline, but neither the incident window, nor the
    /// year of a stamp, nor the capture time `kubectl` ages hang on is read from it; a log
    /// record's times still are, whatever its fields are called.
    #[test]
    fn object_facts_anchor_no_other_time() {
        let at = |y, mo, d, h| crate::event::micros_from_civil(y, mo, d, h, 0, 0, 0);
        let (Some(log), Some(boot), Some(later)) =
            (at(2024, 12, 31, 23), at(2023, 6, 1, 0), at(2025, 1, 1, 23))
        else {
            unreachable!("valid dates")
        };
        let with_path = |mut e: Event, path: &str| {
            e.fields.push(("path".into(), path.into()));
            e
        };
        let fact = |line, t| {
            let mut e = ev(line, Some(RawTime::Utc(t)));
            e.kind = SourceKind::KubeObject;
            with_path(e, "status.conditions[0].reason")
        };
        let events = vec![
            ev(
                1,
                Some(RawTime::NoYear {
                    month: 1,
                    day: 1,
                    micros_of_day: 5,
                }),
            ),
            // A log record whose own field is called `path` is no fact: it anchors.
            with_path(ev(2, Some(RawTime::Utc(log))), "/metrics"),
            fact(3, boot),
            fact(4, later),
            ev(5, Some(RawTime::Age { secs: 30 })),
        ];
        let (res, tl, _) = resolve_both(&events);
        let new_year = at(2025, 1, 1, 0).unwrap_or_default() + 5;
        assert_eq!(res.capture.as_ref().map(|c| c.micros), Some(new_year));
        assert_eq!(res.capture, tl.capture);
        // The incident window is the records': the facts' times place them, no more.
        assert_eq!(res.window, Some((log, new_year)));
        assert_eq!(res.window, tl.window());
        let times: Vec<Option<Micros>> = tl.events.iter().map(|e| e.ts.map(|t| t.micros)).collect();
        assert_eq!(
            times,
            [
                Some(boot),
                Some(log),
                Some(new_year - 30 * MICROS_PER_SEC),
                Some(new_year),
                Some(later)
            ]
        );
    }

    /// The streamed resolution and the timeline of one file's events.
    fn resolve_both(events: &[Event]) -> (Resolution, crate::timeline::Timeline, Vec<Stamp>) {
        let mut tracker = Tracker::default();
        let stamps: Vec<Stamp> = events.iter().map(|e| tracker.file(0).observe(e)).collect();
        let n = events.len() as u64;
        let mut info = FileInfo {
            id: 0,
            path: "a/x.log".into(),
            kind: SourceKind::Operator,
            bytes: 0,
            lines: n,
            events: n,
            unparsed_lines: 0,
            mtime: None,
            zone_samples: vec![-3600 * MICROS_PER_SEC],
            mirrored: 0,
            mirror_of: None,
        };
        let cfg = TimeConfig { tz_override: None };
        let res = tracker.resolve(std::slice::from_ref(&info), &[0], None, &cfg);
        info.events = n;
        let loaded = crate::load::Loaded {
            bundle_path: String::new(),
            container: String::new(),
            root_name: None,
            files: vec![info],
            events: vec![events.to_vec()],
            diagnostics: Vec::new(),
            mirrors: Default::default(),
        };
        (res, crate::timeline::build(loaded, &cfg), stamps)
    }
}
