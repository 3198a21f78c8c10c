//! Reading a run back: a [`Run`] reads the records of a run's blocks in order, with their
//! stamps, through a [`Window`] on each of the two files.
//!
//! The events and stamps files are opened once and shared by every run ([`Shared`], read at
//! an offset, so no run moves another's cursor): a bundle of thousands of files takes two
//! descriptors. A record is read where it lies in the events window, not copied out of it;
//! a record larger than the window grows it. In a rendered spill's own files, a run makes
//! each text whole again from its [`Delta`] against the record before ([`Whole`]); sorted
//! runs hold whole texts. A run reads at most [`RUN_WINDOW`] at once; all the runs of a
//! merge share [`RUNS_WINDOWS`], each at least [`MIN_WINDOW`].

use std::fs::File;
use std::io;
use std::path::PathBuf;

use super::delta::Delta;
use super::record::Cursor;
use super::stamp::{decode_stamp, stamp_rest};
use super::{unreadable, Block, Mark};
use crate::event::{FileId, Micros};
use crate::resolve::{Carry, Own, Resolution, Stamp};

/// Bytes of its events file a run reads at once, at most (its stamps file: a sixteenth).
pub(super) const RUN_WINDOW: usize = 1 << 16;
/// Bytes a merge's runs read into at once, all told: a bundle of many files gives each run
/// a smaller window (down to [`MIN_WINDOW`]) rather than more memory.
pub(super) const RUNS_WINDOWS: usize = 32 << 20;
/// The least a run reads of its events file at once.
pub(super) const MIN_WINDOW: usize = 1 << 11;

/// A file shared by every run that reads it, read at a given place (no run moves another's
/// cursor): a bundle of thousands of files takes two descriptors, not two per file.
pub(super) type Shared = std::sync::Arc<File>;

/// Opens a pair of files [`Pair::finish`] gave, to be shared by runs.
///
/// [`Pair::finish`]: super::writer::Pair::finish
pub(super) fn shared((events, stamps): (PathBuf, PathBuf)) -> io::Result<(Shared, Shared)> {
    Ok((
        Shared::new(File::open(events)?),
        Shared::new(File::open(stamps)?),
    ))
}

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
    ///
    /// [`put_varint`]: super::record::put_varint
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
pub(super) struct Run {
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
    pub(super) stamp: Stamp,
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
    pub(super) fn open(
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
    pub(super) fn advance(&mut self) -> io::Result<bool> {
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
    pub(super) fn seek_to(&mut self, mark: &Mark, limit: u64) {
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
    ///
    /// [`encode_event`]: super::record::encode_event
    pub(super) fn record(&self) -> &[u8] {
        match &self.whole {
            Some(whole) => &whole.record,
            None => self.events.buf.get(self.record.clone()).unwrap_or_default(),
        }
    }

    /// The line of the record read (the first field of its encoding).
    pub(super) fn line(&self) -> u32 {
        Cursor(self.record()).varint().unwrap_or(0)
    }

    /// What orders the record read in the merge: its time, its file, its line, then the run
    /// (`i`, for the ties of a file whose events share a line).
    pub(super) fn key(
        &self,
        res: &Resolution,
        id: FileId,
        i: usize,
    ) -> (Micros, FileId, u32, usize) {
        (res.key(id, &self.stamp.carry), id, self.line(), i)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::event::Event;
    use crate::resolve::Anchor;
    use crate::spill::record::decode_event;
    use crate::spill::writer::{Pair, PENDING_BYTES};
    use crate::spill::{Form, TempDir};

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
}
