//! The serial merge: every file's events as runs in timeline order, merged into one.
//!
//! A file whose times never go back is one run, read where it lies in the spill; any other
//! is cut into chunks of at most [`SORT_CHUNK_BYTES`], each sorted by `(time, line)` (stable,
//! as encoded records, not decoded) and written to a second pair of files as a run of its
//! own. Whether a file's times go back is read from its stamps alone, on a given number of
//! threads at once. The runs' next events sit in a heap ordered by `(time, file, line, run)`,
//! the order `timeline::merge` gives. The [`Runs`] made here are also what `sliced.rs`
//! cuts into slices.

use std::cmp::Reverse;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::fs::File;
use std::io::{self, BufReader, Seek, SeekFrom};
use std::path::Path;

use super::reader::{shared, Run, Shared, MIN_WINDOW, RUNS_WINDOWS, RUN_WINDOW};
use super::record::decode_event;
use super::stamp::read_stamp;
use super::writer::Pair;
use super::{unreadable, Block, Form, Mark, Spill, TempDir, MARK_STRIDE};
use crate::event::{Event, EventRef, FileId, Micros, Timestamp};
use crate::resolve::{Resolution, Stamp};

/// Bytes a file's out-of-order events are sorted in at once: their encoded size plus the
/// size of each entry, so that small (light) events do not make a chunk of millions.
const SORT_CHUNK_BYTES: u64 = 64 << 20;
/// What an entry of a chunk being sorted takes besides its encoded record.
const SORT_ENTRY_BYTES: u64 = std::mem::size_of::<SortEntry>() as u64;

impl Spill {
    /// Calls `visit` with every event put aside, in timeline order, its `file` set to its id
    /// (`ids[seq]`) and its `ts` resolved, and the key it sorts by (`Resolution::key`):
    /// [`Spill::merge_refs`], each event made owned.
    pub fn merge(
        self,
        res: &Resolution,
        ids: &[FileId],
        visit: &mut dyn FnMut(Event, Micros) -> io::Result<()>,
    ) -> io::Result<()> {
        self.merge_refs(res, ids, &mut |ev, key| visit(ev.to_event(), key))
    }

    /// Calls `visit` with every event put aside, in timeline order, as a view of the record
    /// just read back (nothing is allocated per event): its `file` set to its id (`ids[seq]`)
    /// and its `ts` resolved, with the key it sorts by.
    pub fn merge_refs(
        self,
        res: &Resolution,
        ids: &[FileId],
        visit: &mut dyn FnMut(EventRef<'_>, Micros) -> io::Result<()>,
    ) -> io::Result<()> {
        self.merge_records(res, ids, &mut |record, file, ts, key| {
            let mut ev = decode_event(record).ok_or_else(unreadable)?;
            ev.file = file;
            ev.ts = ts;
            visit(ev, key)
        })
    }

    /// The merge: calls `visit` with every record put aside, in timeline order, with its
    /// file's id, its resolved time and the key it sorts by.
    pub(super) fn merge_records(
        self,
        res: &Resolution,
        ids: &[FileId],
        visit: &mut VisitRecord<'_>,
    ) -> io::Result<()> {
        let runs = self.runs(res, ids, 1)?;
        // One head per run, read into the run's buffer.
        let mut readers: Vec<(FileId, Run)> = Vec::with_capacity(runs.specs.len());
        for spec in &runs.specs {
            readers.push((spec.id, runs.open(spec, 1)));
        }
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (i, (id, run)) in readers.iter_mut().enumerate() {
            if run.advance()? {
                heap.push(Reverse(run.key(res, *id, i)));
            }
        }
        while let Some(mut top) = heap.peek_mut() {
            let Reverse((key, id, _, i)) = *top;
            let Some((_, run)) = readers.get_mut(i) else {
                PeekMut::pop(top);
                continue;
            };
            visit(run.record(), id, res.ts(id, run.stamp.own), key)?;
            if run.advance()? {
                *top = Reverse(run.key(res, id, i));
            } else {
                PeekMut::pop(top);
            }
        }
        drop(readers);
        drop(runs);
        Ok(())
    }

    /// Every file's events as runs in timeline order: its blocks as they are when its times
    /// never go back, else sorted runs of bounded size, written to a second pair of files.
    /// Whether each file's times go back is read on `threads` threads at once.
    pub(super) fn runs(self, res: &Resolution, ids: &[FileId], threads: usize) -> io::Result<Runs> {
        let Spill {
            dir,
            pair,
            blocks,
            marks,
            ..
        } = self;
        // Sorted runs are written as the spill was.
        let form = pair.form;
        // A rendered spill's own records write their text as a `Delta`.
        let delta = matches!(form, Form::Rendered);
        let (events_path, stamps_path) = pair.finish()?;
        let files = shared((events_path, stamps_path.clone()))?;
        let id_of = |seq: usize| ids.get(seq).copied().unwrap_or(0);
        let in_order = each_in_parallel(blocks.len(), threads, |seq| {
            match blocks.get(seq).filter(|b| !b.is_empty()) {
                Some(file_blocks) => keys_in_order(&stamps_path, file_blocks, res, id_of(seq)),
                None => Ok(None),
            }
        });
        let mut sorted_pair: Option<Pair> = None;
        let mut specs: Vec<RunSpec> = Vec::new();
        let mut marks = marks.into_iter();
        for ((seq, file_blocks), in_order) in blocks.into_iter().enumerate().zip(in_order) {
            let file_marks = marks.next().unwrap_or_default();
            if file_blocks.is_empty() {
                continue;
            }
            let id = id_of(seq);
            if let Some(keys) = in_order? {
                let marks = file_marks
                    .into_iter()
                    .zip(keys)
                    .map(|(at, key)| RunMark {
                        key: (key, id, at.line),
                        at,
                    })
                    .collect();
                specs.push(RunSpec {
                    id,
                    sorted: false,
                    blocks: file_blocks,
                    marks,
                });
                continue;
            }
            // Times that go back: sorted runs of bounded size, in a second pair of files.
            if sorted_pair.is_none() {
                sorted_pair = Some(Pair::create(dir.path(), "sorted", form)?);
            }
            let Some(out) = sorted_pair.as_mut() else {
                continue;
            };
            let reader = Run::open(&files.0, &files.1, file_blocks, RUN_WINDOW, delta);
            for (block, marks) in sort_runs(reader, out, res, id)? {
                specs.push(RunSpec {
                    id,
                    sorted: true,
                    blocks: vec![block],
                    marks,
                });
            }
        }
        let sorted = match sorted_pair {
            Some(p) => Some(shared(p.finish()?)?),
            None => None,
        };
        Ok(Runs {
            _dir: dir,
            files,
            sorted,
            specs,
            delta,
        })
    }
}

/// The runs of a merge ([`Spill::runs`]), with the files they lie in.
pub(super) struct Runs {
    /// The folder of the files: removed when the runs are dropped.
    _dir: TempDir,
    /// The events and stamps files of the spill.
    files: (Shared, Shared),
    /// The events and stamps files of the sorted runs, if a file needed them.
    sorted: Option<(Shared, Shared)>,
    pub(super) specs: Vec<RunSpec>,
    /// Whether the spill's own records write their text as a [`Delta`] (a rendered spill).
    ///
    /// [`Delta`]: super::delta::Delta
    delta: bool,
}

impl Runs {
    /// A reader of `spec`'s events, at its first, one of `sets` readers of every run
    /// (one a thread) that share [`RUNS_WINDOWS`].
    pub(super) fn open(&self, spec: &RunSpec, sets: usize) -> Run {
        let (e, s, delta) = match (&self.sorted, spec.sorted) {
            (Some((e, s)), true) => (e, s, false),
            _ => (&self.files.0, &self.files.1, self.delta),
        };
        let readers = self.specs.len().saturating_mul(sets).max(1);
        let window = (RUNS_WINDOWS / readers).clamp(MIN_WINDOW, RUN_WINDOW);
        Run::open(e, s, spec.blocks.clone(), window, delta)
    }
}

/// What the merge calls with each record: the record, its file's id, its resolved time and
/// the key it sorts by.
type VisitRecord<'a> = dyn FnMut(&[u8], FileId, Option<Timestamp>, Micros) -> io::Result<()> + 'a;

/// An entry of a chunk being sorted: its key and line, where its record lies in the chunk's
/// bytes, and its stamp.
type SortEntry = (Micros, u32, std::ops::Range<usize>, Stamp);

/// Cuts the events of `reader` (one file's, whose times go back) into chunks of at most
/// [`SORT_CHUNK_BYTES`], sorts each by `(time, line)` (stable: ties keep file order) and
/// writes it to `out` as one block, with its marks. The records are copied as they were
/// encoded, not decoded.
fn sort_runs(
    mut reader: Run,
    out: &mut Pair,
    res: &Resolution,
    id: FileId,
) -> io::Result<Vec<(Block, Vec<RunMark>)>> {
    let mut blocks = Vec::new();
    let mut bytes: Vec<u8> = Vec::new();
    let mut chunk: Vec<SortEntry> = Vec::new();
    loop {
        bytes.clear();
        chunk.clear();
        let mut size = 0u64;
        while size < SORT_CHUNK_BYTES {
            if !reader.advance()? {
                break;
            }
            let at = bytes.len();
            bytes.extend_from_slice(reader.record());
            size += reader.record().len() as u64 + 5 + SORT_ENTRY_BYTES;
            chunk.push((
                res.key(id, &reader.stamp.carry),
                reader.line(),
                at..bytes.len(),
                reader.stamp,
            ));
        }
        if chunk.is_empty() {
            return Ok(blocks);
        }
        chunk.sort_by_key(|c| (c.0, c.1));
        let block = Block {
            events_at: out.events_len,
            stamps_at: out.stamps_len,
            count: chunk.len() as u64,
        };
        let mut marks = Vec::new();
        for (n, (key, line, range, stamp)) in chunk.iter().enumerate() {
            if n as u64 % MARK_STRIDE == 0 {
                let at = Mark {
                    block: 0,
                    within: n as u64,
                    events_at: out.events_len,
                    stamps_at: out.stamps_len,
                    line: *line,
                };
                marks.push(RunMark {
                    key: (*key, id, *line),
                    at,
                });
            }
            out.push_raw(bytes.get(range.clone()).unwrap_or_default(), stamp)?;
        }
        blocks.push((block, marks));
    }
}

/// `f` of every number below `n`, in order, worked out on `threads` threads at once.
fn each_in_parallel<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if threads <= 1 || n <= 1 {
        return (0..n).map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(n))
            .map(|_| {
                scope.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            return got;
                        }
                        got.push((i, f(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Whether a file's events, as put aside, are already in timeline order: if so, the key of
/// its every [`MARK_STRIDE`]-th event.
fn keys_in_order(
    stamps_path: &Path,
    blocks: &[Block],
    res: &Resolution,
    id: FileId,
) -> io::Result<Option<Vec<Micros>>> {
    let mut file = BufReader::with_capacity(1 << 16, File::open(stamps_path)?);
    let mut last = Micros::MIN;
    let mut keys = Vec::new();
    let mut n = 0u64;
    for b in blocks {
        file.seek(SeekFrom::Start(b.stamps_at))?;
        for _ in 0..b.count {
            let key = res.key(id, &read_stamp(&mut file)?.carry);
            if key < last {
                return Ok(None);
            }
            if n % MARK_STRIDE == 0 {
                keys.push(key);
            }
            n += 1;
            last = key;
        }
    }
    Ok(Some(keys))
}

/// A run: one file's events in timeline order, in blocks of the spill's files or of the
/// sorted ones.
pub(super) struct RunSpec {
    pub(super) id: FileId,
    sorted: bool,
    blocks: Vec<Block>,
    /// In a rendered spill, where its every [`MARK_STRIDE`]-th event lies and its key.
    pub(super) marks: Vec<RunMark>,
}

/// What a slice of the merge orders by: the first three parts of [`Run::key`].
pub(super) type SliceKey = (Micros, FileId, u32);

/// A [`Mark`] of a run, with its event's key.
#[derive(Clone, Copy, Debug)]
pub(super) struct RunMark {
    pub(super) key: SliceKey,
    pub(super) at: Mark,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::event::{RawTime, SourceKind};
    use crate::spill::record::Cursor;

    /// Texts pushed to a rendered spill as the events of `files` files (a few events of one,
    /// then a few of another), as the merge gives them back, and the bytes the spill wrote
    /// for them. With `backwards`, times go back (each file is cut into sorted runs, and
    /// the texts come back last first).
    fn rendered_round_trip(
        texts: &[Vec<u8>],
        files: usize,
        backwards: bool,
    ) -> (Vec<Vec<u8>>, u64) {
        let mut spill = Spill::rendered().unwrap();
        let mut tracker = crate::resolve::Tracker::default();
        let mut lines = vec![0u32; files];
        let mut placed = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let seq = (i * 7 / 13) % files;
            lines[seq] += 1;
            let mut ev = Event::new(lines[seq], "");
            let t = i as i64;
            ev.raw_time = Some(RawTime::Utc(if backwards { -t } else { t }));
            let stamp = tracker.file(seq as u32).observe(&ev);
            spill.push_rendered(seq as u32, &ev, &stamp, text).unwrap();
            placed.push((seq as FileId, lines[seq]));
        }
        if backwards {
            placed.reverse();
        }
        let written = spill.pair.events_len;
        let infos: Vec<crate::load::FileInfo> = (0..files)
            .map(|id| crate::load::FileInfo {
                events: u64::from(lines[id]),
                ..crate::load::FileInfo::new(
                    id as FileId,
                    format!("f{id}.log"),
                    SourceKind::Unknown,
                )
            })
            .collect();
        let ids: Vec<FileId> = (0..files as FileId).collect();
        let time = crate::timeline::TimeConfig { tz_override: None };
        let res = tracker.resolve(&infos, &ids, None, &time);
        let mut got = Vec::new();
        spill
            .merge_records(&res, &ids, &mut |record, file, _, _| {
                let mut c = Cursor(record);
                let line = c.varint().unwrap();
                assert_eq!(Some((file, line)), placed.get(got.len()).copied());
                assert_eq!(c.varint(), Some(1));
                got.push(c.0.to_vec());
                Ok(())
            })
            .unwrap();
        (got, written)
    }

    #[test]
    fn a_rendered_spill_writes_what_repeats_once_and_gives_every_text_back() {
        // Texts that share starts and ends with the one before, and some that do not.
        let texts: Vec<Vec<u8>> = (0..1000)
            .map(|i| match i % 5 {
                0 => format!("{{\"message\":\"GET /calc 200 {i}.4ms\",\"file\":\"proxy.py\"}}"),
                1 => format!("{{\"message\":\"GET /calc 200 {i}.9ms\",\"file\":\"proxy.py\"}}"),
                2 => String::new(),
                3 => "é".repeat(i % 40),
                _ => format!("{i}"),
            })
            .map(String::into_bytes)
            .collect();
        for files in [1, 2, 3] {
            let (got, _) = rendered_round_trip(&texts, files, false);
            assert!(got == texts, "{files} file(s)");
            let (mut got, _) = rendered_round_trip(&texts, files, true);
            got.reverse();
            assert!(got == texts, "{files} file(s), times going back");
        }
        let (_, written) = rendered_round_trip(&texts, 1, false);
        // Ten copies of one long text: only the first of every `MARK_STRIDE` is written
        // whole.
        let long = vec![b"x".repeat(1000); 10 * MARK_STRIDE as usize];
        let (got, written_long) = rendered_round_trip(&long, 1, false);
        assert!(got == long);
        assert!(
            written_long < 11 * 1000 + 10 * 6 * MARK_STRIDE,
            "{written_long}"
        );
        assert!(written > 0);
    }
}
