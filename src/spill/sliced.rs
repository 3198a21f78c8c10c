//! The merge of a rendered spill, cut into slices of the timeline that threads write at once.
//!
//! A rendered spill notes where every [`MARK_STRIDE`]-th event of each file lies
//! ([`super::Mark`]); once the runs are made, each mark has its key. The keys of all marks,
//! sorted, give the bounds of slices of about [`SLICE_EVENTS`] events. A slice is the
//! merge of every run from the first event at or after its lower bound to the last before
//! its upper one: each run starts reading at its last mark before the lower bound (a few
//! events are skipped) and stops at its first mark at or past the upper one. Each worker
//! writes whole slices into a buffer of its own; the buffers go out in slice order, so the
//! output is the serial merge's, byte for byte, on any number of threads.
//!
//! Bounds are keys of the merge's order without its last part (the run), so events that tie
//! on every part but the run fall in one slice, where the heap orders them as the serial
//! merge does. At most a few slices are written ahead of the one going out: memory stays
//! bounded whatever the output's reader does.

use std::cmp::Reverse;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex, PoisonError};

use super::merge::{Runs, SliceKey};
use super::reader::Run;
use super::record::Cursor;
use super::{unreadable, Placed, Spill, MARK_STRIDE};
use crate::event::FileId;
use crate::resolve::Resolution;

/// Events a slice holds, about: a few megabytes of JSON lines.
const SLICE_EVENTS: u64 = 16 * 1024;

/// What a merge writes of each event, into the buffer of the slice it is in.
pub type RenderPlaced<'a> = dyn Fn(Placed<'_>, &mut Vec<u8>) -> io::Result<()> + Sync + 'a;

impl Spill {
    /// Writes every event of a [`Spill::rendered`] in timeline order, as `render` writes it
    /// (where it lies and its resolved time, with the text rendered of it), on `threads`
    /// threads: `write` is called, on the calling thread, with what was rendered of each
    /// stretch of the timeline in turn.
    pub fn merge_rendered(
        self,
        res: &Resolution,
        ids: &[FileId],
        threads: usize,
        render: &RenderPlaced<'_>,
        write: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        self.merge_sliced(res, ids, threads, SLICE_EVENTS, render, write)
    }

    fn merge_sliced(
        self,
        res: &Resolution,
        ids: &[FileId],
        threads: usize,
        per_slice: u64,
        render: &RenderPlaced<'_>,
        write: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        if !self.is_rendered() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "only a rendered spill is merged in slices",
            ));
        }
        let runs = self.runs(res, ids, threads)?;
        let bounds = bounds(&runs, per_slice);
        let slices = Slices {
            runs: &runs,
            res,
            bounds: &bounds,
            render,
        };
        let count = bounds.len() + 1;
        if threads <= 1 || count == 1 {
            let mut readers = slices.readers(1);
            let mut buf = Vec::new();
            for s in 0..count {
                buf.clear();
                slices.write(&mut readers, s, &mut buf)?;
                write(&buf)?;
            }
            return Ok(());
        }
        in_order(&slices, count, threads, write)
    }
}

/// Where slices start: the key of every `per_slice / MARK_STRIDE`-th mark of all runs, in
/// order, the first one left out.
fn bounds(runs: &Runs, per_slice: u64) -> Vec<SliceKey> {
    let mut keys: Vec<SliceKey> = runs
        .specs
        .iter()
        .flat_map(|spec| spec.marks.iter().map(|m| m.key))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let step = usize::try_from(per_slice / MARK_STRIDE)
        .unwrap_or(usize::MAX)
        .max(1);
    keys.into_iter().skip(step).step_by(step).collect()
}

/// The slices of a merge and how each is written.
struct Slices<'a> {
    runs: &'a Runs,
    res: &'a Resolution,
    /// Slice `s` holds the events from `bounds[s - 1]` (the first slice: from the first)
    /// to before `bounds[s]` (the last slice: to the last).
    bounds: &'a [SliceKey],
    render: &'a RenderPlaced<'a>,
}

impl Slices<'_> {
    /// A reader for every run, not yet placed, for one of `sets` threads.
    fn readers(&self, sets: usize) -> Vec<Run> {
        self.runs
            .specs
            .iter()
            .map(|s| self.runs.open(s, sets))
            .collect()
    }

    /// Renders the events of slice `s` into `out`, in timeline order.
    fn write(&self, readers: &mut [Run], s: usize, out: &mut Vec<u8>) -> io::Result<()> {
        let lo = s.checked_sub(1).and_then(|p| self.bounds.get(p)).copied();
        let hi = self.bounds.get(s).copied();
        let below_hi = |key: &(SliceKey, usize)| hi.is_none_or(|hi| key.0 < hi);
        let res = self.res;
        let mut heap = BinaryHeap::new();
        for (i, (spec, run)) in self.runs.specs.iter().zip(readers.iter_mut()).enumerate() {
            let marks = &spec.marks;
            // The run's last mark before the slice, and its first at or past the slice's end.
            let from = lo.map_or(0, |lo| {
                marks.partition_point(|m| m.key < lo).saturating_sub(1)
            });
            let to = hi.map_or(marks.len(), |hi| marks.partition_point(|m| m.key < hi));
            let Some(mark) = marks.get(from).filter(|_| from < to) else {
                continue;
            };
            let limit = marks.get(to).map_or(u64::MAX, |m| m.at.events_at);
            run.seek_to(&mark.at, limit);
            while run.advance()? {
                let key = slice_key(run, res, spec.id, i);
                if lo.is_some_and(|lo| key.0 < lo) {
                    continue;
                }
                if below_hi(&key) {
                    heap.push(Reverse(key));
                }
                break;
            }
        }
        while let Some(mut top) = heap.peek_mut() {
            let Reverse(((_, id, _), i)) = *top;
            let Some(run) = readers.get_mut(i) else {
                PeekMut::pop(top);
                continue;
            };
            let mut c = Cursor(run.record());
            let (line, n_lines) = c.varint().zip(c.varint()).ok_or_else(unreadable)?;
            let placed = Placed {
                ts: res.ts(id, run.stamp.own),
                file: id,
                line,
                n_lines,
                rendered: c.0,
            };
            (self.render)(placed, out)?;
            let next = if run.advance()? {
                Some(slice_key(run, res, id, i)).filter(below_hi)
            } else {
                None
            };
            match next {
                Some(key) => *top = Reverse(key),
                None => drop(PeekMut::pop(top)),
            }
        }
        Ok(())
    }
}

/// [`Run::key`] split into what bounds a slice and the run.
fn slice_key(run: &Run, res: &Resolution, id: FileId, i: usize) -> (SliceKey, usize) {
    let (key, id, line, i) = run.key(res, id, i);
    ((key, id, line), i)
}

/// Slices written ahead of the one going out, besides one per thread.
const AHEAD: usize = 2;

/// How far the writing has come, for the threads that wait to render further.
struct Progress {
    /// Slices written out.
    written: usize,
    /// Set when writing stopped before the end (an error): threads stop too.
    stopped: bool,
}

/// Renders the `count` slices on `threads` threads and writes them with `write`, in order.
/// A thread takes the next slice not taken, once it is no more than `threads + AHEAD`
/// slices past the last written; written buffers are handed back to be filled again.
fn in_order(
    slices: &Slices<'_>,
    count: usize,
    threads: usize,
    write: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let next = AtomicUsize::new(0);
    let progress = (
        Mutex::new(Progress {
            written: 0,
            stopped: false,
        }),
        Condvar::new(),
    );
    let spare: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
    let ahead = threads + AHEAD;
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<(usize, io::Result<Vec<u8>>)>();
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let (next, progress, spare) = (&next, &progress, &spare);
            scope.spawn(move || {
                let mut readers = slices.readers(threads);
                loop {
                    let s = next.fetch_add(1, Ordering::Relaxed);
                    if s >= count {
                        return;
                    }
                    {
                        let (lock, turn) = progress;
                        let mut p = lock.lock().unwrap_or_else(PoisonError::into_inner);
                        while !p.stopped && s >= p.written + ahead {
                            p = turn.wait(p).unwrap_or_else(PoisonError::into_inner);
                        }
                        if p.stopped {
                            return;
                        }
                    }
                    let mut buf = spare
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .pop()
                        .unwrap_or_default();
                    buf.clear();
                    let got = slices.write(&mut readers, s, &mut buf).map(|()| buf);
                    let failed = got.is_err();
                    if done_tx.send((s, got)).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut waiting: BTreeMap<usize, io::Result<Vec<u8>>> = BTreeMap::new();
        let mut written = 0;
        let mut result = Ok(());
        'receive: for (s, got) in done_rx.iter() {
            waiting.insert(s, got);
            while let Some(got) = waiting.remove(&written) {
                if let Err(e) = got.and_then(|buf| write(&buf).map(|()| buf)).map(|buf| {
                    spare
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(buf);
                }) {
                    result = Err(e);
                    break 'receive;
                }
                written += 1;
                let (lock, turn) = &progress;
                lock.lock().unwrap_or_else(PoisonError::into_inner).written = written;
                turn.notify_all();
            }
        }
        if result.is_ok() && written < count {
            // A thread ended without its slice: it can only have panicked, which the scope
            // passes on when it joins it.
            result = Err(io::Error::other("a merge thread stopped"));
        }
        let (lock, turn) = &progress;
        lock.lock().unwrap_or_else(PoisonError::into_inner).stopped = true;
        turn.notify_all();
        drop(done_rx);
        result
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::event::{Event, RawTime, SourceKind};
    use crate::load::FileInfo;
    use crate::resolve::Tracker;
    use crate::timeline::TimeConfig;

    /// Files of events: `(line, time)`, a time of `None` for an event without one.
    type Files = Vec<Vec<(u32, Option<i64>)>>;

    /// A rendered spill of `files`, put aside in blocks that take turns between the files
    /// (as a streamed read's batches do), each event rendered as its file and line.
    fn spilled(files: &Files) -> (Spill, Resolution, Vec<FileId>) {
        let mut spill = Spill::rendered().unwrap();
        let mut tracker = Tracker::default();
        let mut next = vec![0usize; files.len()];
        let mut turn = 0usize;
        while next.iter().zip(files).any(|(n, f)| *n < f.len()) {
            let seq = turn % files.len();
            let take = 1 + (turn * 7) % 13;
            for &(line, t) in files[seq].iter().skip(next[seq]).take(take) {
                let mut ev = Event::new(line, "m");
                ev.raw_time = t.map(RawTime::Utc);
                let stamp = tracker.file(seq as u32).observe(&ev);
                let text = format!("{seq}:{line}");
                spill
                    .push_rendered(seq as u32, &ev, &stamp, text.as_bytes())
                    .unwrap();
            }
            next[seq] = (next[seq] + take).min(files[seq].len());
            turn += 1;
        }
        // Ids in the reverse of the read's order: the merge must use them, not `seq`.
        let ids: Vec<FileId> = (0..files.len() as FileId).rev().collect();
        let infos: Vec<FileInfo> = (0..files.len())
            .map(|id| FileInfo::new(id as FileId, format!("f{id}.log"), SourceKind::Unknown))
            .collect();
        let res = tracker.resolve(&infos, &ids, None, &TimeConfig { tz_override: None });
        (spill, res, ids)
    }

    fn line_of(ev: Placed<'_>, out: &mut Vec<u8>) {
        let ts = ev.ts.map(|t| t.micros);
        out.extend_from_slice(format!("{} {ts:?} ", ev.file).as_bytes());
        out.extend_from_slice(ev.rendered);
        out.push(b'\n');
    }

    /// What the serial merge gives, written as [`line_of`] writes each event.
    fn serial(files: &Files) -> Vec<u8> {
        let (spill, res, ids) = spilled(files);
        let mut out = Vec::new();
        spill
            .merge_records(&res, &ids, &mut |record, file, ts, _| {
                let mut c = Cursor(record);
                let (line, n_lines) = c.varint().zip(c.varint()).unwrap();
                let placed = Placed {
                    ts,
                    file,
                    line,
                    n_lines,
                    rendered: c.0,
                };
                line_of(placed, &mut out);
                Ok(())
            })
            .unwrap();
        out
    }

    fn sliced(files: &Files, threads: usize, per_slice: u64) -> (Vec<u8>, usize) {
        let (spill, res, ids) = spilled(files);
        let mut out = Vec::new();
        let mut writes = 0;
        let render = |ev: Placed<'_>, buf: &mut Vec<u8>| {
            line_of(ev, buf);
            Ok(())
        };
        spill
            .merge_sliced(&res, &ids, threads, per_slice, &render, &mut |bytes| {
                out.extend_from_slice(bytes);
                writes += 1;
                Ok(())
            })
            .unwrap();
        (out, writes)
    }

    /// Five files: one in order with long ties, one whose times go back, one mostly without
    /// times, one of a single event and one whose every event shares a time with others.
    fn files() -> Files {
        let mut files: Files = vec![Vec::new(); 5];
        for i in 0..3000u32 {
            files[0].push((i + 1, Some(i64::from(i / 40))));
            files[1].push((i + 1, Some(i64::from((i * 7919) % 100))));
            let t = (i % 9 == 0).then_some(i64::from(i / 30));
            files[2].push((i + 1, t));
            files[4].push((i + 1, Some(50)));
        }
        files[3].push((1, Some(42)));
        files
    }

    #[test]
    fn slices_on_any_number_of_threads_give_the_serial_merge_byte_for_byte() {
        let files = files();
        let expected = serial(&files);
        assert_eq!(expected.iter().filter(|&&b| b == b'\n').count(), 12_001);
        for per_slice in [1, 31, 32, 100, 1000, u64::MAX] {
            for threads in [1, 2, 3, 5] {
                let (got, writes) = sliced(&files, threads, per_slice);
                assert!(got == expected, "{threads} threads, {per_slice} a slice");
                if per_slice <= 100 {
                    assert!(writes > 20, "{writes} slices of {per_slice}");
                }
            }
        }
    }

    #[test]
    fn a_bundle_of_thousands_of_files_merges_in_small_windows() {
        let files: Files = (0..3000u32)
            .map(|f| {
                vec![
                    (1, Some(i64::from(f % 97))),
                    (2, Some(i64::from(f % 89) + 50)),
                ]
            })
            .collect();
        let expected = serial(&files);
        for threads in [1, 4] {
            let (got, writes) = sliced(&files, threads, 256);
            assert!(got == expected, "{threads} threads");
            assert!(writes > 10, "{writes} slices");
        }
    }

    #[test]
    fn a_failure_on_any_thread_ends_the_merge_with_its_error() {
        let files = files();
        for threads in [1, 3] {
            // Rendering fails at one event: the merge stops with that error.
            let (spill, res, ids) = spilled(&files);
            let render = |ev: Placed<'_>, buf: &mut Vec<u8>| {
                if ev.rendered == b"1:1500" {
                    return Err(io::Error::other("render failed"));
                }
                line_of(ev, buf);
                Ok(())
            };
            let got = spill.merge_sliced(&res, &ids, threads, 64, &render, &mut |_| Ok(()));
            assert_eq!(got.unwrap_err().to_string(), "render failed");
            // Writing fails (a closed pipe): the merge stops at once.
            let (spill, res, ids) = spilled(&files);
            let mut writes = 0;
            let got = spill.merge_sliced(
                &res,
                &ids,
                threads,
                64,
                &|ev, buf| {
                    line_of(ev, buf);
                    Ok(())
                },
                &mut |_| {
                    writes += 1;
                    Err(io::ErrorKind::BrokenPipe.into())
                },
            );
            assert_eq!(got.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
            assert_eq!(writes, 1);
        }
    }
}
