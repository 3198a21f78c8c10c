//! Folding repeats: a dense incident logs the same record on every reconcile for days, and a
//! bundle collected late holds millions of them. The sieve keeps every record a rule could
//! match, so without folding memory and the rules' work grew with the number of repeats.
//!
//! Records of one file that are the same once their time and their ids are set aside (UUIDs,
//! long hex strings; the mask is `parse::fold_key`'s, the one the rows of events tables fold
//! by too) share a key. Of each run of one key the first [`HEAD`] records and the last
//! [`TAIL`] stay as they are (they are what evidence shows: the rules cite the first three and
//! the last two occurrences of a signal); the records between are folded into the first of
//! them, which carries a [`Repeat`]: how many, the last one's line and time, and the shortest
//! spans of consecutive records (what `count … within` needs).
//!
//! A record whose key is still rare in the file (seen at most [`RARE`] times) ends every run
//! open in it, so a fold never spans an event that happened once (a successful PUT between
//! refused GETs): the records after it start a run of their own, with their own first three
//! kept, and a rule ordering the two sees the same lines it would see unfolded.
//!
//! Only records with a time of day and a date fold: UTC, naive wall-clock, or a klog/glog
//! stamp with no year (its spans are measured in a leap year; a stamp earlier than the one
//! before by more than a day, a year's turn, ends every run). Folding is applied to
//! the pieces of a file in order, and a fold of folds is the same as one fold, so the result
//! depends on where pieces are cut, which is the same for every container.
//!
//! Invariant: every record stays represented: as itself, or counted in the `Repeat` of the
//! event it was folded into.

use std::collections::{HashMap, VecDeque};

use crate::event::{Event, Micros, RawTime, Repeat, MICROS_PER_DAY};
use crate::parse;
use crate::parse::fold_key::Ids;
use crate::parse::stamp::{Fx, MAX_IDS};

/// Records of a run kept at its start.
pub(super) const HEAD: usize = 3;
/// Records of a run kept at its end.
pub(super) const TAIL: usize = 2;
/// A key seen at most this many times in the file ends the runs of every other key.
const RARE: u64 = 3;

/// A record known to repeat an exemplar of its file but for its time (see
/// `parse::stamp`): it is not parsed, and becomes an event only if it is kept.
pub(super) struct Same {
    pub(super) line: u32,
    /// The fold key of its exemplar.
    pub(super) key: u64,
    /// The exemplar, as registered with [`Folder::exemplar`] (the line key).
    pub(super) exemplar: u64,
    pub(super) raw: RawTime,
    /// `raw` as micros.
    pub(super) t: Micros,
    /// Its UUIDs, which take the place of the exemplar's.
    pub(super) ids: [[u8; 36]; MAX_IDS],
    /// Its own `Event::mirror_key` (0 when its exemplar has none).
    pub(super) mirror: u64,
    /// Its exemplar's `Event::echo_key`, which has no time in it.
    pub(super) echo: u64,
}

/// What a run holds: a parsed record, or one that repeats an exemplar.
enum Item {
    Real(Event),
    Same(Same),
}

impl Item {
    fn line(&self) -> u32 {
        match self {
            Item::Real(e) => e.line,
            Item::Same(s) => s.line,
        }
    }

    fn weight(&self) -> u64 {
        match self {
            Item::Real(e) => e.weight(),
            Item::Same(_) => 1,
        }
    }

    fn is_fold(&self) -> bool {
        matches!(self, Item::Real(e) if e.repeat.is_some())
    }
}

/// One run of a key: its head is already out; `fold` and `tail` wait for the run to end.
#[derive(Default)]
struct Run {
    head: usize,
    fold: Option<Event>,
    tail: VecDeque<Item>,
}

/// Folds the records of one file, pushed in file order.
#[derive(Default)]
pub(super) struct Folder {
    out: Vec<Event>,
    runs: HashMap<u64, Run>,
    seen: HashMap<u64, u64>,
    /// Parsed records that [`Same`]s repeat, with their UUIDs, by line key.
    exemplars: HashMap<u64, Exemplar>,
    /// The largest first line pushed so far: a record that two pieces both parsed (it
    /// starts in one and holds a hit of the next) comes again with the same first line.
    last_line: u32,
    /// The time of the last year-less record, as [`micros_of`] gives it.
    last_no_year: Option<Micros>,
}

impl Folder {
    /// Registers the record that [`Same`]s of line key `key` repeat, and its UUIDs.
    pub(super) fn exemplar(&mut self, key: u64, ev: &Event, ids: &[[u8; 36]]) {
        self.exemplars.entry(key).or_insert_with(|| {
            let mut event = ev.clone();
            event.repeat = None;
            Exemplar {
                event,
                ids: ids.to_vec(),
            }
        });
    }

    pub(super) fn push(&mut self, ev: Event) {
        let key = fold_key(&ev);
        self.push_item(key, Item::Real(ev));
    }

    /// [`Folder::push`] of a record whose [`fold_key`] is known.
    pub(super) fn push_keyed(&mut self, key: Option<u64>, ev: Event) {
        self.push_item(key, Item::Real(ev));
    }

    pub(super) fn push_same(&mut self, same: Same) {
        let key = Some(same.key);
        self.push_item(key, Item::Same(same));
    }

    fn push_item(&mut self, key: Option<u64>, item: Item) {
        if item.line() <= self.last_line {
            return;
        }
        self.last_line = item.line();
        if let Item::Real(Event {
            raw_time: Some(raw @ RawTime::NoYear { .. }),
            ..
        }) = &item
        {
            let t = micros_of(*raw);
            // A year's turn: spans across it would be negative.
            if let (Some(t), Some(last)) = (t, self.last_no_year) {
                if t < last - MICROS_PER_DAY {
                    self.end_runs(None);
                }
            }
            self.last_no_year = t.or(self.last_no_year);
        }
        let Some(key) = key else {
            // A record that cannot fold (no absolute time) is left in place and ends every run:
            // folds never reach across it.
            self.end_runs(None);
            if let Some(ev) = materialize(&self.exemplars, item) {
                self.out.push(ev);
            }
            return;
        };
        let seen = self.seen.entry(key).or_insert(0);
        *seen += item.weight();
        if *seen <= RARE {
            self.end_runs(Some(key));
        }
        let Folder {
            out,
            runs,
            exemplars,
            ..
        } = self;
        let run = runs.entry(key).or_default();
        if !item.is_fold() && run.fold.is_none() && run.tail.is_empty() && run.head < HEAD {
            run.head += 1;
            out.extend(materialize(exemplars, item));
            return;
        }
        if item.is_fold() {
            while let Some(t) = run.tail.pop_front() {
                absorb(&mut run.fold, t, exemplars);
            }
            absorb(&mut run.fold, item, exemplars);
        } else {
            run.tail.push_back(item);
            if run.tail.len() > TAIL {
                if let Some(t) = run.tail.pop_front() {
                    absorb(&mut run.fold, t, exemplars);
                }
            }
        }
    }

    /// Ends every open run but `keep`'s.
    fn end_runs(&mut self, keep: Option<u64>) {
        let Folder {
            out,
            runs,
            exemplars,
            ..
        } = self;
        runs.retain(|k, run| {
            if Some(*k) == keep {
                return true;
            }
            flush(run, out, exemplars);
            false
        });
    }

    /// The folded records, in file order.
    pub(super) fn finish(mut self) -> Vec<Event> {
        self.end_runs(None);
        let mut out = self.out;
        out.sort_by_key(|e| e.line);
        out
    }
}

/// Folds one list of records of a file, in file order.
#[cfg(test)]
fn fold(events: Vec<Event>) -> Vec<Event> {
    let mut folder = Folder::default();
    for ev in events {
        folder.push(ev);
    }
    folder.finish()
}

/// A parsed record that others repeat, and the UUIDs of its line.
struct Exemplar {
    event: Event,
    ids: Vec<[u8; 36]>,
}

/// The event an item stands for: a [`Same`] is its exemplar at its own line and time, with
/// its own UUIDs.
fn materialize(exemplars: &HashMap<u64, Exemplar>, item: Item) -> Option<Event> {
    match item {
        Item::Real(e) => Some(e),
        Item::Same(s) => exemplars.get(&s.exemplar).map(|ex| {
            let mut e = ex.event.clone();
            e.line = s.line;
            e.raw_time = Some(s.raw);
            e.mirror_key = s.mirror;
            for (old, new) in ex.ids.iter().zip(&s.ids) {
                if old == new {
                    continue;
                }
                let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new))
                else {
                    continue;
                };
                if e.message.contains(old) {
                    e.message = e.message.replace(old, new);
                }
                for text in
                    std::iter::once(&mut e.component).chain(e.fields.iter_mut().map(|(_, v)| v))
                {
                    if text.contains(old) {
                        *text = text.replace(old, new).into();
                    }
                }
            }
            e
        }),
    }
}

fn flush(run: &mut Run, out: &mut Vec<Event>, exemplars: &HashMap<u64, Exemplar>) {
    if let Some(mut f) = run.fold.take() {
        if f.repeat.as_ref().is_some_and(|r| r.count < 2) {
            f.repeat = None;
        }
        out.push(f);
    }
    out.extend(run.tail.drain(..).filter_map(|t| materialize(exemplars, t)));
}

/// Folds `item` into `fold` (it becomes the fold when there is none). Only records with a key
/// come here, so they have an absolute time.
fn absorb(fold: &mut Option<Event>, item: Item, exemplars: &HashMap<u64, Exemplar>) {
    let (rep, ev) = match item {
        Item::Real(mut ev) => {
            let rep = match ev.repeat.take() {
                Some(r) => r,
                None => {
                    let t = parsed_micros(&ev).unwrap_or_default();
                    let raw = ev.raw_time.unwrap_or(RawTime::Utc(t));
                    Box::new(Repeat::single(ev.line, raw, t))
                }
            };
            (rep, Some(ev))
        }
        Item::Same(s) => {
            let rep = Box::new(Repeat::single(s.line, s.raw, s.t));
            (
                rep,
                fold.is_none()
                    .then(|| materialize(exemplars, Item::Same(s)))
                    .flatten(),
            )
        }
    };
    match fold {
        None => {
            if let Some(mut ev) = ev {
                ev.repeat = Some(rep);
                *fold = Some(ev);
            }
        }
        Some(f) => match &mut f.repeat {
            Some(r) => r.extend(&rep),
            None => f.repeat = Some(rep),
        },
    }
}

fn parsed_micros(ev: &Event) -> Option<Micros> {
    ev.raw_time.and_then(micros_of)
}

/// The micros a record's time is folded by: a year-less stamp's are those of its day in the
/// leap year 2000, good for spans between records of one year.
pub(super) fn micros_of(raw: RawTime) -> Option<Micros> {
    match raw {
        RawTime::Utc(t) | RawTime::Naive(t) => Some(t),
        RawTime::NoYear {
            month,
            day,
            micros_of_day,
        } => crate::event::micros_from_civil(2000, u32::from(month), u32::from(day), 0, 0, 0, 0)
            .map(|midnight| midnight + micros_of_day),
        RawTime::Age { .. } => None,
    }
}

/// `t`, micros as [`micros_of`] gives them, in the variant of `like`: a year-less one as its
/// day and time of day.
pub(super) fn raw_like(like: RawTime, t: Micros) -> RawTime {
    match like {
        RawTime::Utc(_) => RawTime::Utc(t),
        RawTime::Naive(_) => RawTime::Naive(t),
        RawTime::NoYear { .. } | RawTime::Age { .. } => {
            let (_, month, day) = crate::event::civil_from_days(t.div_euclid(MICROS_PER_DAY));
            RawTime::NoYear {
                month: month as u8,
                day: day as u8,
                micros_of_day: t.rem_euclid(MICROS_PER_DAY),
            }
        }
    }
}

/// The key of a record that can fold: its kind, level, component, message and fields with
/// UUIDs and long hex strings masked, and the kind of time it carries.
pub(super) fn fold_key(ev: &Event) -> Option<u64> {
    let zone = match ev.raw_time? {
        RawTime::Utc(_) => 0u8,
        RawTime::Naive(_) => 1,
        RawTime::NoYear { .. } => 2,
        RawTime::Age { .. } => return None,
    };
    parsed_micros(ev)?;
    let mut h = Fx::default();
    h.write_u64(u64::from(zone) | (ev.kind as u64) << 8 | (ev.level as u64) << 24);
    h.write_u64(u64::from(ev.n_lines));
    masked(&ev.component, &mut h);
    masked(&ev.message, &mut h);
    for (k, v) in &ev.fields {
        h.write(k.as_bytes());
        masked(v, &mut h);
    }
    Some(h.finish())
}

/// Hashes `text` with every UUID and every hex string of 16 digits or more as one marker
/// (see [`fold_key`](crate::parse::fold_key)), then an end marker.
fn masked(text: &str, h: &mut Fx) {
    parse::fold_key::masked::<Ids, _>(text, h);
    h.write_u8(0xFE);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rec(line: u32, secs: i64, msg: &str) -> Event {
        let mut e = Event::new(line, msg);
        e.raw_time = Some(RawTime::Utc(secs * 1_000_000));
        e
    }

    fn total(events: &[Event]) -> u64 {
        events.iter().map(Event::weight).sum()
    }

    #[test]
    fn a_run_keeps_its_first_three_and_last_two() {
        let events: Vec<Event> = (1..=100)
            .map(|i| rec(i, i64::from(i) * 2, "refused"))
            .collect();
        let out = fold(events);
        let lines: Vec<u32> = out.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![1, 2, 3, 4, 99, 100]);
        assert_eq!(total(&out), 100);
        let r = out[3].repeat.as_deref().unwrap();
        assert_eq!((r.count, r.last_line), (95, 98));
        assert_eq!(r.min_span[0], 2_000_000);
        assert_eq!(r.min_span[2], 6_000_000);
    }

    #[test]
    fn ids_and_times_fold_other_words_do_not() {
        let a = rec(
            1,
            1,
            "reconcile 6f9c1d2e-8a47-4b9e-9c55-0d2e71a4b6f3 failed: exit code 137",
        );
        let b = rec(
            2,
            2,
            "reconcile 0d2e71a4-8a47-4b9e-9c55-6f9c1d2e71a4 failed: exit code 137",
        );
        let c = rec(
            3,
            3,
            "reconcile 0d2e71a4-8a47-4b9e-9c55-6f9c1d2e71a4 failed: exit code 1",
        );
        assert_eq!(fold_key(&a), fold_key(&b));
        assert_ne!(fold_key(&b), fold_key(&c));
        let mut untimed = Event::new(4, "x");
        untimed.raw_time = Some(RawTime::Age { secs: 3 });
        assert_eq!(fold_key(&untimed), None);
    }

    fn klog(line: u32, month: u8, day: u8, secs: i64) -> Event {
        let mut e = Event::new(
            line,
            "Failed to watch *v1.Endpoints: endpoints is forbidden",
        );
        e.raw_time = Some(RawTime::NoYear {
            month,
            day,
            micros_of_day: secs * 1_000_000,
        });
        e
    }

    #[test]
    fn year_less_stamps_fold_and_a_years_turn_ends_the_run() {
        // klog: one line every 2 s on Dec 31, then on through midnight into Jan 1.
        let mut events: Vec<Event> = (1..=50)
            .map(|i| klog(i, 12, 31, 86_300 + i64::from(i) * 2 - 100))
            .collect();
        events.extend((51..=100).map(|i| klog(i, 1, 1, i64::from(i) * 2)));
        let out = fold(events);
        assert_eq!(total(&out), 100);
        let lines: Vec<u32> = out.iter().map(|e| e.line).collect();
        // Two runs: one a year, each its first three, a fold and its last two.
        assert_eq!(lines, vec![1, 2, 3, 4, 49, 50, 51, 52, 53, 54, 99, 100]);
        for f in [&out[3], &out[9]] {
            let r = f.repeat.as_deref().unwrap();
            assert_eq!(r.min_span[0], 2_000_000);
        }
    }

    #[test]
    fn a_rare_record_ends_the_runs_around_it() {
        let mut events: Vec<Event> = (1..=10)
            .map(|i| rec(i, i64::from(i), "get refused"))
            .collect();
        events.push(rec(11, 11, "put ok"));
        events.extend((12..=21).map(|i| rec(i, i64::from(i), "get refused")));
        let out = fold(events);
        let lines: Vec<u32> = out.iter().map(|e| e.line).collect();
        // Before the PUT: 1-3, a fold from 4, 9-10; the PUT; after it 12-14 (the next three
        // refused GETs as a run of their own), a fold from 15, 20-21.
        assert_eq!(lines, vec![1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 15, 20, 21]);
        assert_eq!(total(&out), 21);
    }

    #[test]
    fn interleaved_keys_fold_each_on_its_own() {
        let events: Vec<Event> = (1..=200)
            .map(|i| rec(i, i64::from(i), if i % 2 == 0 { "event" } else { "error" }))
            .collect();
        let out = fold(events);
        // Each key: its first records (the other's rare ones end its runs), a fold, the
        // last two.
        assert!(out.len() <= 20, "{}", out.len());
        assert_eq!(out.iter().filter(|e| e.repeat.is_some()).count(), 2);
        assert_eq!(total(&out), 200);
    }

    #[test]
    fn folding_in_pieces_then_joining_keeps_every_record() {
        let events: Vec<Event> = (1..=1000)
            .map(|i| rec(i, i64::from(i) * 3, if i % 7 == 0 { "b" } else { "a" }))
            .collect();
        let whole = fold(events.clone());
        let mut folder = Folder::default();
        for chunk in events.chunks(64) {
            for ev in fold(chunk.to_vec()) {
                folder.push(ev);
            }
        }
        let joined = folder.finish();
        assert_eq!(total(&joined), 1000);
        assert_eq!(total(&whole), 1000);
        // Spans survive the joints.
        let span = |evs: &[Event]| {
            evs.iter()
                .filter_map(|e| e.repeat.as_deref())
                .map(|r| r.min_span[1])
                .min()
        };
        assert_eq!(span(&joined), span(&whole));
    }
}
