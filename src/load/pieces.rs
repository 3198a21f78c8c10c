//! Units of parsing work and what they give: a whole file, or one piece of a sieved file with
//! the lines around it; and the joining of a file's pieces, in order, into one parsed file.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::fold::Folder;
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
    /// The file's last piece.
    pub(super) last: bool,
    pub(super) out: Sieved,
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
                    last,
                    out,
                }))
            }
        }
    }
}

/// Joins the pieces of each file into one parsed file as they come in: a piece waits only
/// for the pieces of its file before it, and the hit records of each joined piece go through
/// the file's [`Folder`], so a file whose every line is a hit costs its folds, not its lines.
#[derive(Default)]
pub(super) struct Assembler {
    files: Vec<Parsed>,
    joining: HashMap<String, Joining>,
}

/// A file whose pieces are arriving.
struct Joining {
    mtime: Option<i64>,
    kind: SourceKind,
    /// The next piece to join, and those that arrived before their turn.
    next: u32,
    waiting: BTreeMap<u32, PieceDone>,
    bytes: u64,
    lines: u64,
    folder: Folder,
    all: Sieved,
}

impl Assembler {
    pub(super) fn add(&mut self, part: Part) {
        let p = match part {
            Part::Whole(p) => return self.files.push(p),
            Part::Piece(p) => *p,
        };
        let file = self
            .joining
            .entry(p.path.clone())
            .or_insert_with(|| Joining {
                mtime: p.mtime,
                kind: p.kind,
                next: 0,
                waiting: BTreeMap::new(),
                bytes: 0,
                lines: 0,
                folder: Folder::default(),
                all: Sieved::default(),
            });
        file.waiting.insert(p.index, p);
        let mut finished = None;
        while let Some(p) = file.waiting.remove(&file.next) {
            file.next = file.next.saturating_add(1);
            if p.last {
                finished = Some(p.path.clone());
            }
            file.join(p);
        }
        if let Some(path) = finished {
            if let Some(file) = self.joining.remove(&path) {
                self.files.push(file.finish(path));
            }
        }
    }

    /// Every file, sorted by path.
    pub(super) fn finish(mut self) -> Vec<Parsed> {
        // A file whose last piece never came (the walk stopped at a limit) is joined as far
        // as it got.
        for (path, file) in std::mem::take(&mut self.joining) {
            self.files.push(file.finish(path));
        }
        self.files.sort_by(|a, b| a.path.cmp(&b.path));
        self.files
    }
}

impl Joining {
    /// Line numbers made the file's own, hit records folded in, the first timed record of
    /// the first piece that has one, the last of the last.
    fn join(&mut self, p: PieceDone) {
        // Record lines count from the context before the piece, which ends where the
        // previous pieces do.
        let before = i64::from(p.before_lines);
        let done = self.lines as i64;
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
            .chain(out.bounds.0.iter_mut().flatten())
            .chain(out.edges.iter_mut())
        {
            ev.line = shift(ev.line);
            if let Some(r) = &mut ev.repeat {
                r.last_line = shift(r.last_line);
            }
        }
        for d in &mut out.diagnostics {
            d.line = d.line.map(shift);
        }
        for k in &mut out.keyed {
            k.0 = shift(k.0);
        }
        for ev in out.events {
            self.folder.push(ev);
        }
        let all = &mut self.all;
        if all.first_timed.is_none() {
            all.first_timed = out.first_timed;
        }
        if out.last_timed.is_some() {
            all.last_timed = out.last_timed;
        }
        // A silence may lie between two pieces: each piece's extremes stay as edges.
        all.edges.extend(out.bounds.0.iter().flatten().cloned());
        all.bounds.join(out.bounds);
        all.edges.append(&mut out.edges);
        all.diagnostics.append(&mut out.diagnostics);
        all.unparsed_lines += out.unparsed_lines;
        all.zone_samples.append(&mut out.zone_samples);
        all.keyed.append(&mut out.keyed);
        self.bytes += p.bytes;
        self.lines += p.lines;
    }

    fn finish(self, path: String) -> Parsed {
        let mut all = self.all;
        all.events = self.folder.finish();
        let keyed = std::mem::take(&mut all.keyed);
        Parsed {
            path,
            mtime: self.mtime,
            bytes: self.bytes,
            lines: self.lines,
            kind: self.kind,
            out: all.into_output(),
            keyed,
        }
    }
}
