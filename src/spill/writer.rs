//! Putting events aside: [`Spill::push`] and [`Spill::push_rendered`], and [`Pair`], the
//! events file and the stamps file being written.
//!
//! Each event appends a record (its length first) to the events file and its stamp to the
//! stamps file. The spill notes, for each file of the bundle, the blocks its events lie in
//! (a new block whenever an event of another file came in between) and, in a rendered
//! spill, a mark every [`MARK_STRIDE`] events. Invariant: a rendered record's text is a
//! [`Delta`] against the text of the record just before it only when that record is of the
//! same file and this one is not at a mark; any other is written whole ([`Delta::NONE`]),
//! so a reader that starts at a block or at a mark can make every text whole.
//!
//! What is written here is tested by reading it back: a pair's records in `reader.rs`, a
//! rendered spill's texts through the merge in `merge.rs`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::delta::Delta;
use super::record::{encode_event, put_varint, varint_len};
use super::stamp::{encode_stamp, STAMP_MAX};
use super::{Block, Form, Mark, Spill, MARK_STRIDE};
use crate::event::Event;
use crate::resolve::Stamp;

/// Bytes of records a pair gathers before it writes them to its events file.
pub(super) const PENDING_BYTES: usize = 1 << 20;

/// A pair of spill files being written.
pub(super) struct Pair {
    pub(super) form: Form,
    events_path: PathBuf,
    stamps_path: PathBuf,
    events: File,
    /// Records not yet written to `events`, each with its length before it: an event is
    /// encoded straight in here, not into a buffer of its own and then copied.
    pending: Vec<u8>,
    stamps: BufWriter<File>,
    /// Bytes of each file so far, what is pending included.
    pub(super) events_len: u64,
    pub(super) stamps_len: u64,
}

impl Pair {
    pub(super) fn create(dir: &Path, name: &str, form: Form) -> io::Result<Pair> {
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
    pub(super) fn push(
        &mut self,
        ev: &Event,
        stamp: &Stamp,
        rendered: &[u8],
        delta: Delta,
    ) -> io::Result<()> {
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
            Form::Whole => {
                encode_event(&mut self.pending, ev, |_| true);
                self.put_length_before(at);
            }
            Form::SomeFields(keep) => {
                encode_event(&mut self.pending, ev, keep);
                self.put_length_before(at);
            }
        }
        let len = self.pending.len() - at;
        self.pushed(len, stamp)
    }

    /// Puts the length of the record encoded from `at` on before it.
    fn put_length_before(&mut self, at: usize) {
        let len = self.pending.len() - at;
        let mut prefix = Vec::with_capacity(10);
        put_varint(&mut prefix, len as u64);
        self.pending.splice(at..at, prefix);
    }

    /// Appends a record as [`Pair::push`] wrote it but its length: a sorted run copies its
    /// records without decoding them.
    pub(super) fn push_raw(&mut self, record: &[u8], stamp: &Stamp) -> io::Result<()> {
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

    pub(super) fn finish(mut self) -> io::Result<(PathBuf, PathBuf)> {
        self.events.write_all(&self.pending)?;
        self.stamps.flush()?;
        Ok((self.events_path, self.stamps_path))
    }
}

impl Spill {
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
        let delta = if matches!(self.pair.form, Form::Rendered) {
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
        if matches!(self.pair.form, Form::Rendered) && *n % MARK_STRIDE == 0 {
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
}
