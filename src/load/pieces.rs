//! Units of parsing work and what they give: a whole file, or one piece of a sieved file with
//! the lines around it; and the joining of a file's pieces, in order, into one parsed file.

use std::sync::Arc;

use super::windows::{parse_windows, Sieved};
use super::{count_lines, parse_entry, Parsed};
use crate::bundle::{Buffers, Cut, Entry};
use crate::event::SourceKind;
use crate::rules::sieve::Sieve;

/// Size of the pieces a sieved file is parsed in: archive members are read in pieces of this
/// size as they are inflated (so memory stays flat however large a member is), and files
/// read whole are cut at the same places, so that every container gives the same events.
pub(super) const PIECE_BYTES: usize = 2 << 20;

/// One unit of parsing work.
pub(super) enum Job {
    /// A whole file, parsed through the sieve when one is given.
    Whole(Entry, Option<Arc<Sieve>>),
    /// One piece of a sieved file.
    Piece(PieceJob),
    /// Nothing left to parse.
    Done(Parsed),
}

/// A piece of a sieved file, with the lines around it that its records may need.
pub(super) struct PieceJob {
    pub(super) path: String,
    pub(super) mtime: Option<i64>,
    pub(super) index: u32,
    pub(super) kind: SourceKind,
    /// Up to [`LOOKBACK_LINES`] lines of the file before the piece, the piece, and up to
    /// [`LOOKAHEAD_LINES`] + 1 lines after it.
    pub(super) text: Text,
    /// Where the piece itself is in `text`.
    pub(super) own: std::ops::Range<usize>,
    pub(super) first: bool,
    pub(super) last: bool,
    pub(super) sieve: Arc<Sieve>,
    /// Lines of the piece cut as they were read, by offset in the piece.
    pub(super) cuts: Vec<Cut>,
}

/// The text of a piece: the piece of a streamed member with the lines around it, joined
/// when the job runs (on a parser thread, not the reader's), or a range of a file read whole.
pub(super) enum Text {
    Parts {
        before: Vec<u8>,
        piece: Vec<u8>,
        after: Vec<u8>,
        buffers: Arc<Buffers>,
    },
    Shared(Arc<Entry>, std::ops::Range<usize>),
}

impl Text {
    pub(super) fn len(&self) -> usize {
        match self {
            Text::Parts {
                before,
                piece,
                after,
                ..
            } => before.len() + piece.len() + after.len(),
            Text::Shared(_, range) => range.len(),
        }
    }

    /// The lines before the piece, and the piece itself, without joining anything; `own` is
    /// where the piece is in the whole text.
    pub(super) fn before_and_own(&self, own: std::ops::Range<usize>) -> (&[u8], &[u8]) {
        match self {
            Text::Parts { before, piece, .. } => (before, piece),
            Text::Shared(entry, range) => {
                let text = entry.bytes.get(range.clone()).unwrap_or_default();
                (
                    text.get(..own.start).unwrap_or_default(),
                    text.get(own).unwrap_or_default(),
                )
            }
        }
    }

    /// Hands the buffers back unread.
    pub(super) fn release(self) {
        if let Text::Parts { piece, buffers, .. } = self {
            buffers.give(piece);
        }
    }

    /// Runs `f` over the whole text, then hands the buffers back.
    pub(super) fn with<T>(self, f: impl FnOnce(&[u8]) -> T) -> T {
        match self {
            Text::Parts {
                before,
                piece,
                after,
                buffers,
            } => {
                let mut text = buffers.take(before.len() + piece.len() + after.len());
                text.extend_from_slice(&before);
                text.extend_from_slice(&piece);
                text.extend_from_slice(&after);
                let got = f(&text);
                buffers.give(piece);
                buffers.give(text);
                got
            }
            Text::Shared(entry, range) => f(entry.bytes.get(range).unwrap_or_default()),
        }
    }
}

/// What a job gave.
pub(super) enum Part {
    Whole(Parsed),
    Piece(Box<PieceDone>),
}

pub(super) struct PieceDone {
    pub(super) path: String,
    pub(super) mtime: Option<i64>,
    pub(super) index: u32,
    pub(super) kind: SourceKind,
    pub(super) bytes: u64,
    pub(super) lines: u64,
    /// Lines of context before the piece: record line numbers count from the context.
    pub(super) before_lines: u32,
    pub(super) out: Sieved,
}

impl Part {
    pub(super) fn path(&self) -> &str {
        match self {
            Part::Whole(p) => &p.path,
            Part::Piece(p) => &p.path,
        }
    }

    pub(super) fn index(&self) -> u32 {
        match self {
            Part::Whole(_) => 0,
            Part::Piece(p) => p.index,
        }
    }
}

impl Job {
    pub(super) fn size(&self) -> usize {
        match self {
            Job::Whole(entry, _) => entry.bytes.len(),
            Job::Piece(piece) => piece.text.len(),
            Job::Done(_) => 0,
        }
    }

    pub(super) fn run(self) -> Part {
        match self {
            Job::Whole(entry, sieve) => Part::Whole(parse_entry(entry, sieve.as_deref())),
            Job::Done(parsed) => Part::Whole(parsed),
            Job::Piece(job) => {
                let own = job.own.clone();
                let (kind, first, last) = (job.kind, job.first, job.last);
                let (before, piece) = job.text.before_and_own(own.clone());
                let (bytes, lines) = (piece.len() as u64, count_lines(piece));
                let hits = job.sieve.hits(kind, piece);
                let before_lines = memchr::memchr_iter(b'\n', before).count();
                // Line numbers count from the context before the piece, as the parsers' do.
                let first_line = u32::try_from(before_lines + 1).unwrap_or(u32::MAX);
                let cut_diagnostics = Cut::diagnostics(&job.cuts, piece, first_line);
                let bytes = bytes + Cut::skipped_bytes(&job.cuts);
                // Most pieces hold no hit and are neither a file's head nor its tail: nothing
                // to parse, so their text is never joined with the lines around it.
                let mut out = if hits.is_empty() && !first && !last {
                    job.text.release();
                    Sieved::default()
                } else {
                    job.text.with(|text| {
                        parse_windows(kind, text, own, before_lines, &hits, first, last)
                    })
                };
                out.diagnostics.extend(cut_diagnostics);
                Part::Piece(Box::new(PieceDone {
                    path: job.path,
                    mtime: job.mtime,
                    index: job.index,
                    kind,
                    bytes,
                    lines,
                    before_lines: before_lines as u32,
                    out,
                }))
            }
        }
    }
}

/// Joins the pieces of each file, in order, into one parsed file. `parts` are sorted by path,
/// then piece.
pub(super) fn assemble(parts: Vec<Part>) -> Vec<Parsed> {
    let mut files: Vec<Parsed> = Vec::new();
    let mut pieces: Vec<PieceDone> = Vec::new();
    let flush = |pieces: &mut Vec<PieceDone>, files: &mut Vec<Parsed>| {
        if let Some(file) = join_pieces(std::mem::take(pieces)) {
            files.push(file);
        }
    };
    for part in parts {
        match part {
            Part::Whole(p) => {
                flush(&mut pieces, &mut files);
                files.push(p);
            }
            Part::Piece(p) => {
                if pieces.last().is_some_and(|last| last.path != p.path) {
                    flush(&mut pieces, &mut files);
                }
                pieces.push(*p);
            }
        }
    }
    flush(&mut pieces, &mut files);
    files
}

/// One file from its pieces (in order): line numbers made the file's own, the hit records
/// of all, the first timed record of the first piece that has one, the last of the last.
pub(super) fn join_pieces(pieces: Vec<PieceDone>) -> Option<Parsed> {
    let first = pieces.first()?;
    let (path, mtime, kind) = (first.path.clone(), first.mtime, first.kind);
    let mut all = Sieved::default();
    let (mut bytes, mut lines) = (0u64, 0u64);
    for p in pieces {
        // Record lines count from the context before the piece, which ends where the
        // previous pieces do.
        let before = i64::from(p.before_lines);
        let done = lines as i64;
        let shift = |line: u32| -> u32 {
            let abs = i64::from(line) + done - before;
            u32::try_from(abs.max(1)).unwrap_or(u32::MAX)
        };
        let mut out = p.out;
        for ev in out
            .events
            .iter_mut()
            .chain(out.first_timed.iter_mut())
            .chain(out.last_timed.iter_mut())
        {
            ev.line = shift(ev.line);
        }
        for d in &mut out.diagnostics {
            d.line = d.line.map(shift);
        }
        all.events.append(&mut out.events);
        if all.first_timed.is_none() {
            all.first_timed = out.first_timed;
        }
        if out.last_timed.is_some() {
            all.last_timed = out.last_timed;
        }
        all.diagnostics.append(&mut out.diagnostics);
        all.unparsed_lines += out.unparsed_lines;
        all.zone_samples.append(&mut out.zone_samples);
        bytes += p.bytes;
        lines += p.lines;
    }
    all.events.dedup_by(|a, b| a.line == b.line);
    Some(Parsed {
        path,
        mtime,
        bytes,
        lines,
        kind,
        out: all.into_output(),
    })
}
