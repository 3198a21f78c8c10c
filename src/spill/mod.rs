//! Events put aside on disk while a bundle streams past, then read back in timeline order.
//!
//! A streamed read hands over each file's events in file order, files interleaved, before any
//! time is final (zones, years and the capture time need the whole bundle). [`Spill`] appends
//! each event with its [`Stamp`] to two files in a temporary folder under `TMPDIR`; once the
//! bundle is read and its [`Resolution`] made, [`Spill::merge`] reads every file's events
//! back as one sorted run (a file whose times go back is first cut into sorted runs of bounded
//! size) and merges the runs by `(time, file, line)`, untimed events after the event before
//! them in their file: the order `timeline::merge` gives. The folder is removed when the spill
//! is dropped, on every path out (an error, a closed pipe, a panic).
//!
//! [`Spill::merge_refs`] hands out each event as a view ([`EventRef`]) of the record just read
//! into its run's buffer: a reader that writes the event and forgets it (the JSON timeline)
//! allocates nothing per event. [`Spill::merge`] is the same merge with each event made owned.
//!
//! A [`Spill::rendered`] keeps of each event only its line, its count of lines and the text a
//! render wrote of it on the parser threads (the JSON timeline's packed tail), read back by
//! [`Spill::merge_rendered`]; the text as a [`Delta`] against the text of the event before it
//! in its file. A stamp takes a tag byte and only the numbers it has.
//!
//! Invariant: events come back exactly as they went in (the encoding names every field of
//! `Event`, so a new field does not compile until it is written here too), but for their
//! structured fields in a spill made [`Spill::without_fields`], and but for what a rendered
//! spill does not keep.

use std::cmp::Reverse;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::event::{
    Event, EventRef, Fields, FileId, Level, Micros, RawTime, SourceKind, Text, Timestamp,
};
use crate::resolve::{Anchor, Carry, Own, Resolution, Stamp};

mod sliced;

pub use sliced::RenderPlaced;

/// A temporary folder, removed with everything in it when dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new() -> io::Result<TempDir> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("raysift-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Bytes a file's out-of-order events are sorted in at once: their encoded size plus the
/// size of each entry, so that small (light) events do not make a chunk of millions.
const SORT_CHUNK_BYTES: u64 = 64 << 20;
/// What an entry of a chunk being sorted takes besides its encoded record.
const SORT_ENTRY_BYTES: u64 = std::mem::size_of::<SortEntry>() as u64;

/// A stretch of one file's events, contiguous in the spill files.
#[derive(Clone, Copy, Debug)]
struct Block {
    events_at: u64,
    stamps_at: u64,
    count: u64,
}

/// Bytes of records a pair gathers before it writes them to its events file.
const PENDING_BYTES: usize = 1 << 20;

/// What a spill's records hold of each event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// The whole event ([`encode_event`]).
    Whole,
    /// The event but its structured fields.
    WithoutFields,
    /// Its line and its count of lines, then the text a render wrote of it
    /// ([`crate::load::Render`]): read back by [`Spill::merge_rendered`].
    Rendered,
}

/// A pair of spill files being written.
struct Pair {
    form: Form,
    events_path: PathBuf,
    stamps_path: PathBuf,
    events: File,
    /// Records not yet written to `events`, each with its length before it: an event is
    /// encoded straight in here, not into a buffer of its own and then copied.
    pending: Vec<u8>,
    stamps: BufWriter<File>,
    /// Bytes of each file so far, what is pending included.
    events_len: u64,
    stamps_len: u64,
}

impl Pair {
    fn create(dir: &Path, name: &str, form: Form) -> io::Result<Pair> {
        let events_path = dir.join(format!("{name}.events"));
        let stamps_path = dir.join(format!("{name}.stamps"));
        Ok(Pair {
            form,
            events: File::create(&events_path)?,
            pending: Vec::with_capacity(PENDING_BYTES + (1 << 16)),
            stamps: BufWriter::with_capacity(1 << 16, File::create(&stamps_path)?),
            events_path,
            stamps_path,
            events_len: 0,
            stamps_len: 0,
        })
    }

    /// Appends a record: its length (LEB128), then its line and count of lines (LEB128
    /// too), then for a rendered spill the text rendered as a [`Delta`] against the text of
    /// the file's record before, else the rest of the event ([`encode_event`]).
    fn push(&mut self, ev: &Event, stamp: &Stamp, rendered: &[u8], delta: Delta) -> io::Result<()> {
        let at = self.pending.len();
        match self.form {
            Form::Rendered => {
                let Delta { prefix, suffix } = delta;
                let middle = rendered
                    .get(prefix..rendered.len().saturating_sub(suffix))
                    .unwrap_or_default();
                let len = varint_len(ev.line.into())
                    + varint_len(ev.n_lines.into())
                    + varint_len(prefix as u64)
                    + varint_len(suffix as u64)
                    + middle.len();
                put_varint(&mut self.pending, len as u64);
                put_varint(&mut self.pending, ev.line.into());
                put_varint(&mut self.pending, ev.n_lines.into());
                put_varint(&mut self.pending, prefix as u64);
                put_varint(&mut self.pending, suffix as u64);
                self.pending.extend_from_slice(middle);
            }
            form => {
                encode_event(&mut self.pending, ev, form == Form::Whole);
                let len = self.pending.len() - at;
                let mut prefix = Vec::with_capacity(10);
                put_varint(&mut prefix, len as u64);
                self.pending.splice(at..at, prefix);
            }
        }
        let len = self.pending.len() - at;
        self.pushed(len, stamp)
    }

    /// Appends a record as [`Pair::push`] wrote it but its length: a sorted run copies its
    /// records without decoding them.
    fn push_raw(&mut self, record: &[u8], stamp: &Stamp) -> io::Result<()> {
        let at = self.pending.len();
        put_varint(&mut self.pending, record.len() as u64);
        self.pending.extend_from_slice(record);
        let len = self.pending.len() - at;
        self.pushed(len, stamp)
    }

    /// Counts the record of `len` bytes (its length's included) just made pending, writes
    /// its stamp, and writes the pending records once they are many.
    fn pushed(&mut self, len: usize, stamp: &Stamp) -> io::Result<()> {
        self.events_len += len as u64;
        let mut s = [0u8; STAMP_MAX];
        let n = encode_stamp(&mut s, stamp);
        let s = s.get(..n).unwrap_or_default();
        self.stamps.write_all(s)?;
        self.stamps_len += n as u64;
        if self.pending.len() >= PENDING_BYTES {
            self.events.write_all(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> io::Result<(PathBuf, PathBuf)> {
        self.events.write_all(&self.pending)?;
        self.stamps.flush()?;
        Ok((self.events_path, self.stamps_path))
    }
}

/// Every this many events of a file, a rendered spill notes where the next one lies
/// ([`Mark`]): where a slice of the merge starts reading the file ([`sliced`]).
const MARK_STRIDE: u64 = 32;

/// Where the `n`-th event of a file lies, for `n` a multiple of [`MARK_STRIDE`]: the file's
/// block it is in and how many of that block's records come before it, its record's and
/// its stamp's offsets, and its line.
#[derive(Clone, Copy, Debug)]
struct Mark {
    block: usize,
    within: u64,
    events_at: u64,
    stamps_at: u64,
    line: u32,
}

/// How a rendered record's text is written: the first `prefix` and the last `suffix` bytes
/// of the text of the record before it in its file, and what lies between them as it is.
/// The events of a file repeat each other a lot (component, field values, the start and end
/// of a message): about 30 % of the rendered bytes, which the spill then never writes to
/// fresh pages of the page cache (a slow host's costliest part of the JSON timeline). A
/// file's every [`MARK_STRIDE`]-th record, where a slice of the merge may start reading, and
/// a record put aside right after another file's take nothing from the one before
/// ([`Delta::NONE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Delta {
    prefix: usize,
    suffix: usize,
}

impl Delta {
    const NONE: Delta = Delta {
        prefix: 0,
        suffix: 0,
    };

    /// What `text` shares with `before`: the longest common start, then the longest common
    /// end of what is left of both.
    fn of(before: &[u8], text: &[u8]) -> Delta {
        let prefix = common_start(before, text);
        let suffix = common_end(
            before.get(prefix..).unwrap_or_default(),
            text.get(prefix..).unwrap_or_default(),
        );
        Delta { prefix, suffix }
    }

    /// Appends to `out` the text written as `middle` against `before`; false when `before`
    /// is too short for it (a damaged spill).
    fn append(self, before: &[u8], middle: &[u8], out: &mut Vec<u8>) -> bool {
        let Some(start) = before.get(..self.prefix) else {
            return false;
        };
        let Some(end) = before
            .len()
            .checked_sub(self.suffix)
            .filter(|&at| at >= self.prefix)
            .and_then(|at| before.get(at..))
        else {
            return false;
        };
        out.extend_from_slice(start);
        out.extend_from_slice(middle);
        out.extend_from_slice(end);
        true
    }
}

/// How many bytes `a` and `b` share from their start, compared eight at a time.
fn common_start(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut at = 0;
    while let (Some(x), Some(y)) = (
        a.get(at..).and_then(|a| a.first_chunk::<8>()),
        b.get(at..).and_then(|b| b.first_chunk::<8>()),
    ) {
        let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if diff != 0 {
            return at + (diff.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < n && a.get(at) == b.get(at) {
        at += 1;
    }
    at
}

/// How many bytes `a` and `b` share at their end, compared eight at a time.
fn common_end(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut same = 0;
    while let (Some(x), Some(y)) = (
        a.get(..a.len() - same).and_then(|a| a.last_chunk::<8>()),
        b.get(..b.len() - same).and_then(|b| b.last_chunk::<8>()),
    ) {
        let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if diff != 0 {
            return same + (diff.leading_zeros() / 8) as usize;
        }
        same += 8;
    }
    while same < n && a.get(a.len() - 1 - same) == b.get(b.len() - 1 - same) {
        same += 1;
    }
    same
}

/// Events put aside per file, in file order.
pub struct Spill {
    dir: TempDir,
    pair: Pair,
    /// Per file `seq`: its blocks, in order.
    blocks: Vec<Vec<Block>>,
    /// Per file `seq`, in a rendered spill: its marks, one per [`MARK_STRIDE`] events.
    marks: Vec<Vec<Mark>>,
    /// Per file `seq`: its events put aside.
    counts: Vec<u64>,
    /// In a rendered spill, the text rendered of the last event put aside (of `last_seq`):
    /// one text, not one a file, so that a bundle of many files keeps no more. An event
    /// that follows one of another file is written whole.
    last_text: Vec<u8>,
    last_seq: Option<u32>,
}

impl Spill {
    pub fn new() -> io::Result<Spill> {
        Spill::create(Form::Whole)
    }

    /// A spill whose events come back without their structured fields: for a reader that
    /// needs only times, sources, levels, components and messages (the HTML picture), which
    /// spares writing, reading and allocating the fields of every event.
    pub fn without_fields() -> io::Result<Spill> {
        Spill::create(Form::WithoutFields)
    }

    /// A spill that keeps of each event only its place in its file and the text a render
    /// wrote of it ([`Spill::push_rendered`]), read back by [`Spill::merge_rendered`]: for the
    /// JSON timeline, whose lines are written on the parser threads.
    pub fn rendered() -> io::Result<Spill> {
        Spill::create(Form::Rendered)
    }

    /// Whether the spill keeps rendered text ([`Spill::rendered`]).
    pub fn is_rendered(&self) -> bool {
        self.pair.form == Form::Rendered
    }

    fn create(form: Form) -> io::Result<Spill> {
        let dir = TempDir::new()?;
        let pair = Pair::create(dir.path(), "spill", form)?;
        Ok(Spill {
            dir,
            pair,
            blocks: Vec::new(),
            marks: Vec::new(),
            counts: Vec::new(),
            last_text: Vec::new(),
            last_seq: None,
        })
    }

    /// Appends the next event of file `seq`.
    pub fn push(&mut self, seq: u32, ev: &Event, stamp: &Stamp) -> io::Result<()> {
        self.push_rendered(seq, ev, stamp, &[])
    }

    /// Appends the next event of file `seq`, with the text a render wrote of it: kept in a
    /// [`Spill::rendered`], ignored by the others.
    pub fn push_rendered(
        &mut self,
        seq: u32,
        ev: &Event,
        stamp: &Stamp,
        rendered: &[u8],
    ) -> io::Result<()> {
        let idx = seq as usize;
        if self.blocks.len() <= idx {
            self.blocks.resize_with(idx + 1, Vec::new);
            self.marks.resize_with(idx + 1, Vec::new);
            self.counts.resize(idx + 1, 0);
        }
        let contiguous = self.last_seq == Some(seq);
        let (events_at, stamps_at) = (self.pair.events_len, self.pair.stamps_len);
        let delta = if self.pair.form == Form::Rendered {
            // A slice may start reading at a mark; the text before another file's is not
            // this file's.
            let delta = if !contiguous || self.counts[idx] % MARK_STRIDE == 0 {
                Delta::NONE
            } else {
                Delta::of(&self.last_text, rendered)
            };
            self.last_text.clear();
            self.last_text.extend_from_slice(rendered);
            delta
        } else {
            Delta::NONE
        };
        self.pair.push(ev, stamp, rendered, delta)?;
        self.last_seq = Some(seq);
        let blocks = &mut self.blocks[idx];
        let within = match blocks.last_mut() {
            Some(b) if contiguous => {
                b.count += 1;
                b.count - 1
            }
            _ => {
                blocks.push(Block {
                    events_at,
                    stamps_at,
                    count: 1,
                });
                0
            }
        };
        let n = &mut self.counts[idx];
        if self.pair.form == Form::Rendered && *n % MARK_STRIDE == 0 {
            self.marks[idx].push(Mark {
                block: blocks.len() - 1,
                within,
                events_at,
                stamps_at,
                line: ev.line,
            });
        }
        *n += 1;
        Ok(())
    }

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
    fn merge_records(
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
    fn runs(self, res: &Resolution, ids: &[FileId], threads: usize) -> io::Result<Runs> {
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
        let delta = form == Form::Rendered;
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
struct Runs {
    /// The folder of the files: removed when the runs are dropped.
    _dir: TempDir,
    /// The events and stamps files of the spill.
    files: (Shared, Shared),
    /// The events and stamps files of the sorted runs, if a file needed them.
    sorted: Option<(Shared, Shared)>,
    specs: Vec<RunSpec>,
    /// Whether the spill's own records write their text as a [`Delta`] (a rendered spill).
    delta: bool,
}

impl Runs {
    /// A reader of `spec`'s events, at its first, one of `sets` readers of every run
    /// (one a thread) that share [`RUNS_WINDOWS`].
    fn open(&self, spec: &RunSpec, sets: usize) -> Run {
        let (e, s, delta) = match (&self.sorted, spec.sorted) {
            (Some((e, s)), true) => (e, s, false),
            _ => (&self.files.0, &self.files.1, self.delta),
        };
        let readers = self.specs.len().saturating_mul(sets).max(1);
        let window = (RUNS_WINDOWS / readers).clamp(MIN_WINDOW, RUN_WINDOW);
        Run::open(e, s, spec.blocks.clone(), window, delta)
    }
}

/// Opens a pair of files [`Pair::finish`] gave, to be shared by runs.
fn shared((events, stamps): (PathBuf, PathBuf)) -> io::Result<(Shared, Shared)> {
    Ok((
        Shared::new(File::open(events)?),
        Shared::new(File::open(stamps)?),
    ))
}

/// What the merge calls with each record: the record, its file's id, its resolved time and
/// the key it sorts by.
type VisitRecord<'a> = dyn FnMut(&[u8], FileId, Option<Timestamp>, Micros) -> io::Result<()> + 'a;

/// An event of a [`Spill::rendered`] as the merge hands it out: where it lies, its resolved
/// time, and the text rendered of it.
#[derive(Clone, Copy, Debug)]
pub struct Placed<'a> {
    pub ts: Option<Timestamp>,
    pub file: FileId,
    pub line: u32,
    pub n_lines: u32,
    pub rendered: &'a [u8],
}

/// The error of a record that does not decode: the spill is this process's own file, so
/// only a damaged disk or a bug gives it.
fn unreadable() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "spilled event unreadable")
}

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
struct RunSpec {
    id: FileId,
    sorted: bool,
    blocks: Vec<Block>,
    /// In a rendered spill, where its every [`MARK_STRIDE`]-th event lies and its key.
    marks: Vec<RunMark>,
}

/// What a slice of the merge orders by: the first three parts of [`Run::key`].
type SliceKey = (Micros, FileId, u32);

/// A [`Mark`] of a run, with its event's key.
#[derive(Clone, Copy, Debug)]
struct RunMark {
    key: SliceKey,
    at: Mark,
}

/// Bytes of its events file a run reads at once, at most (its stamps file: a sixteenth).
const RUN_WINDOW: usize = 1 << 16;
/// Bytes a merge's runs read into at once, all told: a bundle of many files gives each run
/// a smaller window (down to [`MIN_WINDOW`]) rather than more memory.
const RUNS_WINDOWS: usize = 32 << 20;
/// The least a run reads of its events file at once.
const MIN_WINDOW: usize = 1 << 11;

/// A file shared by every run that reads it, read at a given place (no run moves another's
/// cursor): a bundle of thousands of files takes two descriptors, not two per file.
type Shared = std::sync::Arc<File>;

/// Reads `buf.len()` bytes or fewer of `file` at `at`.
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, at)
    }
}

/// The bytes of a file a run reads next: `buf[start..end]` are read and not yet consumed,
/// and lie just before `pos` in the file.
struct Window {
    file: Shared,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    pos: u64,
    /// Where in the file reading may stop: bytes from there on are read only as far as a
    /// record that starts before it needs.
    limit: u64,
}

impl Window {
    fn new(file: Shared, size: usize) -> Window {
        Window {
            file,
            buf: vec![0; size],
            start: 0,
            end: 0,
            pos: 0,
            limit: u64::MAX,
        }
    }

    /// Reads next at `at` in the file.
    fn seek(&mut self, at: u64) {
        (self.start, self.end, self.pos) = (0, 0, at);
    }

    /// Makes at least `n` unconsumed bytes lie in the window: moves those there to its
    /// front, grows it for a record larger than it, and reads. An error if the file ends
    /// first.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.start >= n {
            return Ok(());
        }
        self.buf.copy_within(self.start..self.end, 0);
        (self.start, self.end) = (0, self.end - self.start);
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        while self.end < n {
            let wanted = usize::try_from(self.limit.saturating_sub(self.pos)).unwrap_or(usize::MAX);
            let to = self.end.saturating_add(wanted).max(n).min(self.buf.len());
            let into = self.buf.get_mut(self.end..to).unwrap_or_default();
            let got = read_at(&self.file, into, self.pos)?;
            if got == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.end += got;
            self.pos += got as u64;
        }
        Ok(())
    }

    /// A number [`put_varint`] wrote, consumed.
    fn varint(&mut self) -> io::Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let at = self.take(1)?;
            let b = self.buf.get(at.start).copied().unwrap_or(0);
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(unreadable())
    }

    /// The next `n` bytes, consumed; they stay where they are until the next `fill`.
    fn take(&mut self, n: usize) -> io::Result<std::ops::Range<usize>> {
        self.fill(n)?;
        let at = self.start;
        self.start += n;
        Ok(at..at + n)
    }
}

/// Reads the events of a run's blocks, in order, one record at a time (its stamp into
/// `stamp`), so that the merge hands out views of it. The record is read where it lies in
/// the window of the events file, not copied out of it.
struct Run {
    events: Window,
    stamps: Window,
    /// Where the record read lies in the events window.
    record: std::ops::Range<usize>,
    /// In a rendered spill's own files, whose text is written as a [`Delta`]: the record
    /// read as the merge reads it (line, count of lines, the whole text), the offset of
    /// its text, and room for the next one.
    whole: Option<Whole>,
    blocks: Vec<Block>,
    /// The block read after the one being read.
    next_block: usize,
    left: u64,
    stamp: Stamp,
}

/// A rendered record made whole again ([`Run::whole`]): the record, where its text starts,
/// and the buffer of the record before, to write the next one in.
#[derive(Default)]
struct Whole {
    record: Vec<u8>,
    text_at: usize,
    next: Vec<u8>,
}

impl Whole {
    /// Makes whole the record `raw` (line, count of lines, [`Delta`], the text between),
    /// against the record made whole before it; false if it does not decode.
    fn read(&mut self, raw: &[u8]) -> bool {
        let mut c = Cursor(raw);
        if c.varint().and(c.varint()).is_none() {
            return false;
        }
        // The line and the count of lines, as they were written.
        let head = raw.get(..raw.len() - c.0.len()).unwrap_or_default();
        let (Some(prefix), Some(suffix)) = (c.varint(), c.varint()) else {
            return false;
        };
        let delta = Delta {
            prefix: prefix as usize,
            suffix: suffix as usize,
        };
        let before = self.record.get(self.text_at..).unwrap_or_default();
        let mut next = std::mem::take(&mut self.next);
        next.clear();
        next.extend_from_slice(head);
        let text_at = next.len();
        let ok = delta.append(before, c.0, &mut next);
        self.next = std::mem::replace(&mut self.record, next);
        self.text_at = text_at;
        ok
    }
}

impl Run {
    /// A reader of `blocks`; `delta` when their records are a rendered spill's own, whose
    /// text is written as a [`Delta`] (not the sorted runs, written as the merge reads them).
    fn open(
        events: &Shared,
        stamps: &Shared,
        blocks: Vec<Block>,
        window: usize,
        delta: bool,
    ) -> Run {
        Run {
            events: Window::new(std::sync::Arc::clone(events), window),
            stamps: Window::new(std::sync::Arc::clone(stamps), (window / 16).max(1 << 9)),
            record: 0..0,
            whole: delta.then(Whole::default),
            blocks,
            next_block: 0,
            left: 0,
            stamp: Stamp {
                own: Own::None,
                carry: Carry {
                    anchor: None,
                    no_year: None,
                    age: None,
                },
            },
        }
    }

    /// Reads the next record and its stamp; false when the run is done.
    fn advance(&mut self) -> io::Result<bool> {
        while self.left == 0 {
            let Some(&b) = self.blocks.get(self.next_block) else {
                return Ok(false);
            };
            self.next_block += 1;
            self.events.seek(b.events_at);
            self.stamps.seek(b.stamps_at);
            self.left = b.count;
        }
        self.left -= 1;
        let len = self.events.varint()?;
        self.record = self
            .events
            .take(usize::try_from(len).map_err(|_| unreadable())?)?;
        if let Some(whole) = &mut self.whole {
            let raw = self.events.buf.get(self.record.clone()).unwrap_or_default();
            if !whole.read(raw) {
                return Err(unreadable());
            }
        }
        self.stamps.fill(1)?;
        let tag = self.stamps.buf.get(self.stamps.start).copied().unwrap_or(0);
        let rec = self.stamps.take(1 + stamp_rest(tag))?;
        let rec = self.stamps.buf.get(rec).unwrap_or_default();
        self.stamp = decode_stamp(rec).ok_or_else(unreadable)?;
        Ok(true)
    }

    /// Reads next the event `mark` marks, reading no further than `limit` in the events
    /// file but for a record that starts before it.
    fn seek_to(&mut self, mark: &Mark, limit: u64) {
        self.next_block = mark.block + 1;
        self.left = self
            .blocks
            .get(mark.block)
            .map_or(0, |b| b.count.saturating_sub(mark.within));
        self.events.seek(mark.events_at);
        self.events.limit = limit;
        self.stamps.seek(mark.stamps_at);
    }

    /// The record read, as [`encode_event`] wrote it, or in a rendered spill its line, its
    /// count of lines and the whole text rendered.
    fn record(&self) -> &[u8] {
        match &self.whole {
            Some(whole) => &whole.record,
            None => self.events.buf.get(self.record.clone()).unwrap_or_default(),
        }
    }

    /// The line of the record read (the first field of its encoding).
    fn line(&self) -> u32 {
        Cursor(self.record()).varint().unwrap_or(0)
    }

    /// What orders the record read in the merge: its time, its file, its line, then the run
    /// (`i`, for the ties of a file whose events share a line).
    fn key(&self, res: &Resolution, id: FileId, i: usize) -> (Micros, FileId, u32, usize) {
        (res.key(id, &self.stamp.carry), id, self.line(), i)
    }
}

/// Every field of the event but `file` and `ts`, which the merge sets, and `repeat`: the full
/// parse does not fold. The line comes first (the merge orders by it without decoding the
/// rest), then the other numbers, the byte lengths of every string, and last the strings
/// one after the other, so that one UTF-8 check covers them all when the record is read back
/// as a view ([`decode_event`]).
fn encode_event(buf: &mut Vec<u8>, ev: &Event, with_fields: bool) {
    let Event {
        raw_time,
        ts: _,
        file: _,
        repeat: _,
        light,
        line,
        n_lines,
        kind,
        level,
        component,
        message,
        fields,
    } = ev;
    put_varint(buf, (*line).into());
    put_varint(buf, (*n_lines).into());
    buf.push(kind.index());
    // The high bit marks a light event.
    buf.push(level.index() | if *light { 0x80 } else { 0 });
    match raw_time {
        None => buf.push(0),
        Some(RawTime::Utc(t)) => {
            buf.push(1);
            buf.extend_from_slice(&t.to_le_bytes());
        }
        Some(RawTime::Naive(t)) => {
            buf.push(2);
            buf.extend_from_slice(&t.to_le_bytes());
        }
        Some(RawTime::NoYear {
            month,
            day,
            micros_of_day,
        }) => {
            buf.push(3);
            buf.push(*month);
            buf.push(*day);
            buf.extend_from_slice(&micros_of_day.to_le_bytes());
        }
        Some(RawTime::Age { secs }) => {
            buf.push(4);
            buf.extend_from_slice(&secs.to_le_bytes());
        }
    }
    let fields: &[(Text, Text)] = if with_fields { fields } else { &[] };
    let len = |s: &str| (s.len() as u32).to_le_bytes();
    buf.extend_from_slice(&len(component));
    buf.extend_from_slice(&len(message));
    buf.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    for (k, v) in fields {
        buf.extend_from_slice(&len(k));
        buf.extend_from_slice(&len(v));
    }
    buf.extend_from_slice(component.as_bytes());
    buf.extend_from_slice(message.as_bytes());
    for (k, v) in fields {
        buf.extend_from_slice(k.as_bytes());
        buf.extend_from_slice(v.as_bytes());
    }
}

/// Appends `v` in LEB128: seven bits a byte, the low ones first, the high bit set on every
/// byte but the last. A record's length, line and count of lines take a byte or three, not
/// four each.
fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// The bytes [`put_varint`] writes of `v`.
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A cursor over an encoded record.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    }
    /// A number [`put_varint`] wrote, that fits a `u32`.
    fn varint(&mut self) -> Option<u32> {
        let mut v = 0u64;
        for i in 0..5 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return u32::try_from(v).ok();
            }
        }
        None
    }
    fn i64(&mut self) -> Option<i64> {
        self.take(8)
            .and_then(|b| b.try_into().ok())
            .map(i64::from_le_bytes)
    }
}

/// A view of an encoded record, its `file` 0 and its `ts` unset. `None` when the record is
/// not one [`encode_event`] wrote: too short, lengths that do not add up to its text, or text
/// that is not UTF-8.
fn decode_event(bytes: &[u8]) -> Option<EventRef<'_>> {
    let mut c = Cursor(bytes);
    let line = c.varint()?;
    let n_lines = c.varint()?;
    let kind = SourceKind::ALL
        .get(c.u8()? as usize)
        .copied()
        .unwrap_or(SourceKind::Unknown);
    let level_byte = c.u8()?;
    let raw_time = match c.u8()? {
        0 => None,
        1 => Some(RawTime::Utc(c.i64()?)),
        2 => Some(RawTime::Naive(c.i64()?)),
        3 => {
            let month = c.u8()?;
            let day = c.u8()?;
            Some(RawTime::NoYear {
                month,
                day,
                micros_of_day: c.i64()?,
            })
        }
        _ => Some(RawTime::Age { secs: c.i64()? }),
    };
    let component_len = c.u32()? as usize;
    let message_len = c.u32()? as usize;
    let n = c.u32()? as usize;
    let lens = c.take(n.checked_mul(8)?)?;
    let text = std::str::from_utf8(c.0).ok()?;
    let (component, rest) = text.split_at_checked(component_len)?;
    let (message, rest) = rest.split_at_checked(message_len)?;
    let fields = Fields::Packed { lens, text: rest };
    // Every pair must fit the text, and the text end with the last one.
    let mut check = fields;
    if check.by_ref().count() != n || !matches!(check, Fields::Packed { text: "", .. }) {
        return None;
    }
    Some(EventRef {
        raw_time,
        ts: None,
        file: 0,
        line,
        n_lines,
        kind,
        level: Level::ALL
            .get(usize::from(level_byte & 0x7f))
            .copied()
            .unwrap_or(Level::Info),
        light: level_byte & 0x80 != 0,
        component,
        message,
        fields,
    })
}

/// A stamp is a tag byte and the numbers it says are there: most events have a time of their
/// own and carry it as their anchor, which takes 9 bytes, not the 40 of every part.
///
/// The tag's bits 0–2 say what the event's own time is (none, UTC, zone-less, year-less,
/// age); bits 3–4 what its anchor is (none, UTC, zone-less, or the same as its own time);
/// bit 5 whether it carries year-less indices, bit 6 whether an age.
const OWN_NONE: u8 = 0;
const OWN_UTC: u8 = 1;
const OWN_NAIVE: u8 = 2;
const OWN_NO_YEAR: u8 = 3;
const OWN_AGE: u8 = 4;
const ANCHOR_SHIFT: u8 = 3;
const ANCHOR_UTC: u8 = 1;
const ANCHOR_NAIVE: u8 = 2;
const ANCHOR_OWN: u8 = 3;
const HAS_NO_YEAR: u8 = 1 << 5;
const HAS_AGE: u8 = 1 << 6;
/// The most bytes a stamp takes.
const STAMP_MAX: usize = 1 + 8 + 8 + 8 + 12;

/// Encodes `s` into `rec`, returning its length.
fn encode_stamp(rec: &mut [u8; STAMP_MAX], s: &Stamp) -> usize {
    let mut at = 1usize;
    let mut put = |bytes: &[u8]| {
        if let Some(slot) = rec.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
        at += bytes.len();
    };
    let mut tag = match s.own {
        Own::None => OWN_NONE,
        Own::Anchor(Anchor::Utc(t)) => {
            put(&t.to_le_bytes());
            OWN_UTC
        }
        Own::Anchor(Anchor::Naive(t)) => {
            put(&t.to_le_bytes());
            OWN_NAIVE
        }
        Own::NoYear(i) => {
            put(&i.to_le_bytes());
            OWN_NO_YEAR
        }
        Own::Age(secs) => {
            put(&secs.to_le_bytes());
            OWN_AGE
        }
    };
    let anchor = match s.carry.anchor {
        None => 0,
        Some(a) if s.own == Own::Anchor(a) => ANCHOR_OWN,
        Some(Anchor::Utc(t)) => {
            put(&t.to_le_bytes());
            ANCHOR_UTC
        }
        Some(Anchor::Naive(t)) => {
            put(&t.to_le_bytes());
            ANCHOR_NAIVE
        }
    };
    tag |= anchor << ANCHOR_SHIFT;
    if let Some((lo, hi)) = s.carry.no_year {
        put(&lo.to_le_bytes());
        put(&hi.to_le_bytes());
        tag |= HAS_NO_YEAR;
    }
    if let Some((secs, before)) = s.carry.age {
        put(&secs.to_le_bytes());
        put(&before.to_le_bytes());
        tag |= HAS_AGE;
    }
    rec[0] = tag;
    at
}

/// The bytes after its tag byte a stamp of tag `tag` takes.
fn stamp_rest(tag: u8) -> usize {
    let own = match tag & 0b111 {
        OWN_UTC | OWN_NAIVE | OWN_AGE => 8,
        OWN_NO_YEAR => 4,
        _ => 0,
    };
    let anchor = match (tag >> ANCHOR_SHIFT) & 0b11 {
        ANCHOR_UTC | ANCHOR_NAIVE => 8,
        _ => 0,
    };
    let no_year = if tag & HAS_NO_YEAR != 0 { 8 } else { 0 };
    let age = if tag & HAS_AGE != 0 { 12 } else { 0 };
    own + anchor + no_year + age
}

/// Reads the next stamp from `r`.
fn read_stamp(r: &mut impl Read) -> io::Result<Stamp> {
    let mut rec = [0u8; STAMP_MAX];
    r.read_exact(&mut rec[..1])?;
    let len = 1 + stamp_rest(rec[0]);
    r.read_exact(rec.get_mut(1..len).unwrap_or_default())?;
    decode_stamp(rec.get(..len).unwrap_or_default()).ok_or_else(unreadable)
}

/// The stamp [`encode_stamp`] wrote in `rec`; `None` when `rec` is not one.
fn decode_stamp(rec: &[u8]) -> Option<Stamp> {
    let mut c = Cursor(rec);
    let tag = c.u8()?;
    let own = match tag & 0b111 {
        OWN_NONE => Own::None,
        OWN_UTC => Own::Anchor(Anchor::Utc(c.i64()?)),
        OWN_NAIVE => Own::Anchor(Anchor::Naive(c.i64()?)),
        OWN_NO_YEAR => Own::NoYear(c.u32()?),
        OWN_AGE => Own::Age(c.i64()?),
        _ => return None,
    };
    let anchor = match (tag >> ANCHOR_SHIFT) & 0b11 {
        ANCHOR_UTC => Some(Anchor::Utc(c.i64()?)),
        ANCHOR_NAIVE => Some(Anchor::Naive(c.i64()?)),
        ANCHOR_OWN => match own {
            Own::Anchor(a) => Some(a),
            _ => return None,
        },
        _ => None,
    };
    let no_year = match tag & HAS_NO_YEAR {
        0 => None,
        _ => Some((c.u32()?, c.u32()?)),
    };
    let age = match tag & HAS_AGE {
        0 => None,
        _ => Some((c.i64()?, c.u32()?)),
    };
    c.0.is_empty().then_some(Stamp {
        own,
        carry: Carry {
            anchor,
            no_year,
            age,
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn events_and_stamps_come_back_as_they_went_in() {
        let mut ev = Event::new(7, "a\nb");
        ev.raw_time = Some(RawTime::NoYear {
            month: 4,
            day: 11,
            micros_of_day: 99,
        });
        ev.kind = SourceKind::ServeProxy;
        ev.level = Level::Critical;
        ev.component = "c".into();
        ev.fields.push(("k".into(), "v".into()));
        let mut buf = Vec::new();
        encode_event(&mut buf, &ev, false);
        let bare = decode_event(&buf).map(|r| r.to_event());
        buf.clear();
        encode_event(&mut buf, &ev, true);
        assert_eq!(decode_event(&buf).map(|r| r.to_event()), Some(ev.clone()));
        // Without its fields, the rest still comes back as it went in.
        ev.fields.clear();
        assert_eq!(bare, Some(ev));
    }

    #[test]
    fn every_kind_of_stamp_comes_back_as_it_went_in_and_the_common_one_is_short() {
        let owns = [
            Own::None,
            Own::Anchor(Anchor::Utc(-7)),
            Own::Anchor(Anchor::Naive(i64::MAX)),
            Own::NoYear(u32::MAX),
            Own::Age(-3),
        ];
        let anchors = [
            None,
            Some(Anchor::Utc(-7)),
            Some(Anchor::Naive(i64::MAX)),
            Some(Anchor::Utc(i64::MIN)),
        ];
        let mut stream = Vec::new();
        let mut all = Vec::new();
        for own in owns {
            for anchor in anchors {
                for no_year in [None, Some((2, 9))] {
                    for age in [None, Some((-3, 4))] {
                        let stamp = Stamp {
                            own,
                            carry: Carry {
                                anchor,
                                no_year,
                                age,
                            },
                        };
                        let mut rec = [0u8; STAMP_MAX];
                        let n = encode_stamp(&mut rec, &stamp);
                        assert_eq!(decode_stamp(&rec[..n]), Some(stamp));
                        // A stamp cut short, or followed by more, is not one.
                        assert_eq!(decode_stamp(&rec[..n - 1]), None);
                        stream.extend_from_slice(&rec[..n]);
                        all.push(stamp);
                    }
                }
            }
        }
        let mut r = &stream[..];
        for stamp in all {
            assert_eq!(read_stamp(&mut r).unwrap(), stamp);
        }
        assert!(r.is_empty());
        // An event with a time of its own, carried as its anchor: a tag and the time.
        let common = Stamp {
            own: Own::Anchor(Anchor::Utc(1)),
            carry: Carry {
                anchor: Some(Anchor::Utc(1)),
                no_year: None,
                age: None,
            },
        };
        assert_eq!(encode_stamp(&mut [0u8; STAMP_MAX], &common), 9);
    }

    #[test]
    fn a_number_comes_back_as_it_was_written_in_as_many_bytes_as_said() {
        let mut values = vec![0u64, 1, 127, 128, 255, 16_383, 16_384, u32::MAX.into()];
        values.extend((0..64).map(|b| 1u64 << b));
        for v in values {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v), "{v}");
            let mut c = Cursor(&buf);
            assert_eq!(c.varint(), u32::try_from(v).ok(), "{v}");
            if v <= u32::MAX.into() {
                assert!(c.0.is_empty());
            }
            // Cut short, it is not read.
            assert_eq!(Cursor(&buf[..buf.len() - 1]).varint(), None);
        }
    }

    #[test]
    fn a_record_is_read_back_as_a_view_of_every_string() {
        let mut ev = Event::new(u32::MAX, "message é\n\"line\"");
        ev.raw_time = Some(RawTime::Utc(-7));
        ev.component = "日本".into();
        ev.fields = vec![
            ("".into(), "".into()),
            ("k".into(), "🦀".into()),
            ("k".into(), "again".into()),
        ];
        let mut buf = Vec::new();
        encode_event(&mut buf, &ev, true);
        let view = decode_event(&buf);
        assert_eq!(view.map(|r| r.line), Some(u32::MAX));
        assert_eq!(
            view.map(|r| r.fields.collect::<Vec<_>>())
                .unwrap_or_default(),
            [("", ""), ("k", "🦀"), ("k", "again")]
        );
        assert_eq!(view.map(|r| r.to_event()), Some(ev));
        // A record cut short, or whose lengths do not add up to its text, is refused.
        for cut in 0..buf.len() {
            assert!(decode_event(&buf[..cut]).is_none(), "{cut}");
        }
        let mut longer = buf.clone();
        longer.push(b'x');
        assert!(decode_event(&longer).is_none());
        // The message's length one more: the last value then lacks a byte.
        let mut bad = buf.clone();
        // The line (`u32::MAX`: five bytes) and the count of lines (one).
        let head = 5 + 1;
        let at = head + 1 + 1 + 9 + 4;
        bad[at] += 1;
        assert!(decode_event(&bad).is_none());
        // A length that cuts a character in two (the component's last).
        let mut bad = buf;
        bad[head + 1 + 1 + 9] -= 1;
        assert!(decode_event(&bad).is_none());
    }

    #[test]
    fn runs_read_back_what_pairs_wrote_across_windows_and_blocks() {
        let dir = TempDir::new().unwrap();
        let mut pair = Pair::create(dir.path(), "t", Form::Whole).unwrap();
        let stamp = |i: u32| Stamp {
            own: Own::NoYear(i),
            carry: Carry {
                anchor: None,
                no_year: Some((i, i)),
                age: None,
            },
        };
        // Two files written in blocks of varying length, one after the other; records of
        // every size, some larger than a window and than the pending bytes.
        let mut written: [Vec<Event>; 2] = [Vec::new(), Vec::new()];
        let mut blocks: [Vec<Block>; 2] = [Vec::new(), Vec::new()];
        let mut n = 0u32;
        for round in 0..40usize {
            let file = round % 2;
            let block = Block {
                events_at: pair.events_len,
                stamps_at: pair.stamps_len,
                count: (round * 37 % 500) as u64 + 1,
            };
            for _ in 0..block.count {
                let size = match n % 1000 {
                    7 => RUN_WINDOW + 3,
                    500 => PENDING_BYTES * 2,
                    k => (k * 13 % 300) as usize,
                };
                let mut ev = Event::new(n, "é".repeat(size / 2));
                ev.fields.push(("n".into(), n.to_string().into()));
                pair.push(&ev, &stamp(n), &[], Delta::NONE).unwrap();
                written[file].push(ev);
                n += 1;
            }
            blocks[file].push(block);
        }
        let (events, stamps) = shared(pair.finish().unwrap()).unwrap();
        for file in 0..2 {
            let mut run = Run::open(&events, &stamps, blocks[file].clone(), RUN_WINDOW, false);
            let mut read = Vec::new();
            while run.advance().unwrap() {
                assert_eq!(run.stamp, stamp(run.line()));
                read.push(decode_event(run.record()).unwrap().to_event());
            }
            assert!(read == written[file], "file {file}");
        }
    }

    #[test]
    fn a_rendered_record_keeps_its_place_and_its_text_only() {
        let dir = TempDir::new().unwrap();
        let mut pair = Pair::create(dir.path(), "r", Form::Rendered).unwrap();
        let mut ev = Event::new(41, "not kept");
        ev.n_lines = 3;
        ev.fields.push(("k".into(), "v".into()));
        let stamp = Stamp {
            own: Own::None,
            carry: Carry {
                anchor: Some(Anchor::Utc(5)),
                no_year: None,
                age: None,
            },
        };
        let text = ",\"source\":\"x\"}\n".as_bytes();
        pair.push(&ev, &stamp, text, Delta::NONE).unwrap();
        let count = 1;
        let (events, stamps) = shared(pair.finish().unwrap()).unwrap();
        let block = Block {
            events_at: 0,
            stamps_at: 0,
            count,
        };
        let mut run = Run::open(&events, &stamps, vec![block], RUN_WINDOW, true);
        assert!(run.advance().unwrap());
        assert_eq!(run.stamp, stamp);
        assert_eq!(run.line(), 41);
        let mut c = Cursor(run.record());
        assert_eq!((c.varint(), c.varint()), (Some(41), Some(3)));
        assert_eq!(c.0, text);
        assert!(!run.advance().unwrap());
    }

    /// What the naive byte-by-byte loops say `a` and `b` share at their start and end.
    fn shared_naive(a: &[u8], b: &[u8]) -> (usize, usize) {
        let start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let end = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        (start, end)
    }

    #[test]
    fn common_starts_and_ends_are_those_of_a_byte_by_byte_walk() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut byte = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Few distinct bytes, so that long shared runs are common.
            b"ab"[(seed % 2) as usize]
        };
        for len_a in 0..40 {
            for len_b in [0, 1, 7, 8, 9, 16, 17, 39] {
                let a: Vec<u8> = (0..len_a).map(|_| byte()).collect();
                let mut b: Vec<u8> = a.iter().copied().take(len_b).collect();
                b.extend((b.len()..len_b).map(|_| byte()));
                let (start, end) = shared_naive(&a, &b);
                assert_eq!(common_start(&a, &b), start, "{a:?} {b:?}");
                assert_eq!(common_end(&a, &b), end, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_text_comes_back_from_its_delta_against_the_text_before() {
        let texts: [&[u8]; 8] = [
            b"",
            b"GET /calc 200 1.4ms\x01proxy.py",
            b"GET /calc 200 10.2ms\x01proxy.py",
            b"GET /calc 200 10.2ms\x01proxy.py",
            b"GET",
            b"POST /fruit 200 16.5ms\x01proxy.py",
            b"xx",
            b"xxxx",
        ];
        for before in texts {
            for text in texts {
                let delta = Delta::of(before, text);
                assert!(delta.prefix + delta.suffix <= before.len().min(text.len()));
                let middle = &text[delta.prefix..text.len() - delta.suffix];
                let mut out = b"kept:".to_vec();
                assert!(delta.append(before, middle, &mut out));
                assert_eq!(&out[5..], text, "{before:?} {text:?}");
            }
        }
        // More than the text before holds is refused (a damaged spill).
        let too_long = Delta {
            prefix: 3,
            suffix: 2,
        };
        assert!(!too_long.append(b"abcd", b"", &mut Vec::new()));
        assert!(too_long.append(b"abcde", b"", &mut Vec::new()));
    }

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
                id: id as FileId,
                path: format!("f{id}.log"),
                kind: SourceKind::Unknown,
                bytes: 0,
                lines: 0,
                events: u64::from(lines[id]),
                unparsed_lines: 0,
                mtime: None,
                zone_samples: Vec::new(),
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

    #[test]
    fn a_delta_that_reaches_past_the_text_before_is_unreadable() {
        let dir = TempDir::new().unwrap();
        let mut pair = Pair::create(dir.path(), "d", Form::Rendered).unwrap();
        let stamp = Stamp {
            own: Own::None,
            carry: Carry {
                anchor: None,
                no_year: None,
                age: None,
            },
        };
        let ev = Event::new(1, "");
        pair.push(&ev, &stamp, b"abc", Delta::NONE).unwrap();
        let bad = Delta {
            prefix: 2,
            suffix: 2,
        };
        pair.push(&ev, &stamp, b"abcdef", bad).unwrap();
        let (events, stamps) = shared(pair.finish().unwrap()).unwrap();
        let block = Block {
            events_at: 0,
            stamps_at: 0,
            count: 2,
        };
        let mut run = Run::open(&events, &stamps, vec![block], RUN_WINDOW, true);
        assert!(run.advance().unwrap());
        assert_eq!(&run.record()[2..], b"abc");
        assert_eq!(
            run.advance().map_err(|e| e.kind()).err(),
            Some(io::ErrorKind::InvalidData)
        );
    }

    #[test]
    fn the_folder_goes_with_the_spill() {
        let spill = Spill::new().ok();
        let path = spill.as_ref().map(|s| s.dir.path().to_path_buf());
        assert!(path.as_ref().is_some_and(|p| p.is_dir()));
        drop(spill);
        assert!(path.is_some_and(|p| !p.exists()));
    }
}
