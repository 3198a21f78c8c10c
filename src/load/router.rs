//! Turning the entries of a walk into parsing jobs. A file is classified on its first piece; a
//! sieved file goes piece by piece, each piece with the lines before and after it that its
//! records may need (a streamed piece waits for the head of the next one), and a file read
//! whole is cut at the same places, so every container gives the same events.

use std::sync::Arc;

use super::fed::{Fed, FEED_AFTER};
use super::pieces::{Job, PieceJob, Text, PIECE_BYTES};
use super::sections::SECTION_START;
use super::windows::{back_lines, forward_lines};
use super::{binary_content, skipped, whole_document};
use crate::bundle::{self, Buffers, Cut, Entry};
use crate::classify::classify;
use crate::event::SourceKind;
use crate::rules::sieve::{Sieve, LOOKAHEAD_LINES, LOOKBACK_LINES};

/// Turns the entries of a walk into jobs: files read whole go as they are (cut into pieces
/// when sieved), the pieces of a streamed member wait for the head of the next one.
pub(super) struct Router {
    pub(super) sieve: Option<Arc<Sieve>>,
    pub(super) open: Option<Open>,
    pub(super) buffers: Arc<Buffers>,
}

/// The streamed member whose pieces are arriving.
pub(super) struct Open {
    pub(super) path: String,
    pub(super) mtime: Option<i64>,
    pub(super) mode: Mode,
}

pub(super) enum Mode {
    /// Parsed piece by piece; `held` (with its cut lines) waits for the head of its successor.
    Sieved {
        kind: SourceKind,
        held: Option<(u32, Vec<u8>, Vec<Cut>)>,
        before: Vec<u8>,
    },
    /// Parsed whole once every piece is in (the bytes and their cut lines).
    Gather(Vec<u8>, Vec<Cut>),
    /// A Kubernetes document past [`FEED_AFTER`] bytes, parsed as its pieces arrive.
    Fed(Box<Fed>),
    /// Not parsed (binary); its bytes are counted.
    Skip { problem: String, bytes: u64 },
}

impl Router {
    /// How a file whose first piece is `head` is read: piece by piece through the sieve
    /// (`Some(kind)`), or whole.
    pub(super) fn sieved_kind(&self, path: &str, head: &[u8]) -> Option<SourceKind> {
        let sieve = self.sieve.as_deref()?;
        if binary_content(head).is_some()
            || head.starts_with(&[0xFF, 0xFE])
            || head.starts_with(&[0xFE, 0xFF])
            || head.starts_with(SECTION_START)
        {
            return None;
        }
        let kind = classify(path, head);
        (!whole_document(kind) && !sieve.needs_full(kind)).then_some(kind)
    }

    pub(super) fn route(&mut self, entry: Entry, run: &mut dyn FnMut(Job)) {
        if entry.piece == bundle::Piece::WHOLE {
            return self.route_whole(entry, run);
        }
        if entry.piece.index == 0 {
            let head = &entry.bytes[..];
            let mode = match (binary_content(head), self.sieved_kind(&entry.path, head)) {
                (Some(problem), _) => Mode::Skip { problem, bytes: 0 },
                (None, Some(kind)) => Mode::Sieved {
                    kind,
                    held: None,
                    before: Vec::new(),
                },
                (None, None) => Mode::Gather(Vec::new(), Vec::new()),
            };
            self.open = Some(Open {
                path: entry.path.clone(),
                mtime: entry.mtime,
                mode,
            });
        }
        let Some(open) = self.open.as_mut().filter(|o| o.path == entry.path) else {
            return;
        };
        let last = entry.piece.last;
        match &mut open.mode {
            Mode::Gather(buf, cuts) => {
                let shift = buf.len();
                cuts.extend(entry.cuts.iter().map(|c| Cut {
                    at: c.at + shift,
                    ..*c
                }));
                buf.extend_from_slice(&entry.bytes);
                // Past the limit (tried once), a document read line by line is fed instead.
                if !last && shift < FEED_AFTER && buf.len() >= FEED_AFTER {
                    let fold = self.sieve.is_some();
                    if let Some(fed) = Fed::start(&open.path, buf, cuts, fold) {
                        open.mode = Mode::Fed(Box::new(fed));
                    }
                } else if last {
                    let bytes = std::mem::take(buf);
                    let sieve = folding(self.sieve.as_ref(), &open.path, &bytes);
                    run(Job::Whole(
                        Entry {
                            path: open.path.clone(),
                            mtime: open.mtime,
                            bytes: bundle::Bytes::Owned(bytes),
                            piece: bundle::Piece::WHOLE,
                            cuts: std::mem::take(cuts),
                        },
                        sieve,
                    ));
                }
            }
            Mode::Fed(fed) => {
                fed.push(&entry.bytes, &entry.cuts);
                if last {
                    let gathered = Mode::Gather(Vec::new(), Vec::new());
                    if let Mode::Fed(fed) = std::mem::replace(&mut open.mode, gathered) {
                        run(Job::Done(fed.finish(open.path.clone(), open.mtime)));
                    }
                }
            }
            Mode::Skip { problem, bytes } => {
                *bytes += entry.bytes.len() as u64 + Cut::skipped_bytes(&entry.cuts);
                if last {
                    run(Job::Done(skipped(
                        open.path.clone(),
                        open.mtime,
                        *bytes,
                        problem.clone(),
                    )));
                }
            }
            Mode::Sieved { kind, held, before } => {
                let Some(sieve) = self.sieve.clone() else {
                    return;
                };
                let next_cuts = entry.cuts;
                let next = match entry.bytes {
                    bundle::Bytes::Owned(v) => v,
                    bundle::Bytes::Mapped(m) => m.to_vec(),
                };
                if let Some((index, piece, cuts)) = held.take() {
                    let after = next[..forward_lines(&next, 0, LOOKAHEAD_LINES + 1)].to_vec();
                    let next_before = tail_lines(before, &piece, LOOKBACK_LINES);
                    let before = std::mem::replace(before, next_before);
                    let own = before.len()..before.len() + piece.len();
                    run(Job::Piece(PieceJob {
                        path: open.path.clone(),
                        mtime: open.mtime,
                        index,
                        kind: *kind,
                        text: Text::Parts {
                            before,
                            piece,
                            after,
                            buffers: Arc::clone(&self.buffers),
                        },
                        own,
                        first: index == 0,
                        last: false,
                        sieve: Arc::clone(&sieve),
                        cuts,
                    }));
                }
                if last {
                    let before = std::mem::take(before);
                    let own = before.len()..before.len() + next.len();
                    run(Job::Piece(PieceJob {
                        path: open.path.clone(),
                        mtime: open.mtime,
                        index: entry.piece.index,
                        kind: *kind,
                        text: Text::Parts {
                            before,
                            piece: next,
                            after: Vec::new(),
                            buffers: Arc::clone(&self.buffers),
                        },
                        own,
                        first: entry.piece.index == 0,
                        last: true,
                        sieve,
                        cuts: next_cuts,
                    }));
                } else {
                    *held = Some((entry.piece.index, next, next_cuts));
                }
            }
        }
        if last {
            self.open = None;
        }
    }

    /// A file read whole: cut into the pieces a stream would have given when it is sieved.
    pub(super) fn route_whole(&mut self, entry: Entry, run: &mut dyn FnMut(Job)) {
        let first_end = piece_end(&entry.bytes, 0, PIECE_BYTES);
        let kind = self.sieved_kind(&entry.path, &entry.bytes[..first_end]);
        let (Some(kind), Some(sieve)) = (kind, self.sieve.clone()) else {
            let sieve = folding(self.sieve.as_ref(), &entry.path, &entry.bytes[..first_end]);
            return run(Job::Whole(entry, sieve));
        };
        let entry = Arc::new(entry);
        let len = entry.bytes.len();
        let mut start = 0usize;
        let mut index = 0u32;
        loop {
            let end = piece_end(&entry.bytes, start, PIECE_BYTES);
            let last = end >= len;
            let from = back_lines(&entry.bytes, start, LOOKBACK_LINES).0;
            let to = if last {
                len
            } else {
                forward_lines(&entry.bytes, end, LOOKAHEAD_LINES + 1)
            };
            // The cut lines of this piece, by offset in it.
            let cuts = entry
                .cuts
                .iter()
                .filter(|c| c.at >= start && (c.at < end || last))
                .map(|c| Cut {
                    at: c.at - start,
                    ..*c
                })
                .collect();
            run(Job::Piece(PieceJob {
                path: entry.path.clone(),
                mtime: entry.mtime,
                index,
                kind,
                text: Text::Shared(Arc::clone(&entry), from..to),
                own: start - from..end - from,
                first: index == 0,
                last,
                sieve: Arc::clone(&sieve),
                cuts,
            }));
            if last {
                break;
            }
            start = end;
            index = index.saturating_add(1);
        }
    }
}

/// The sieve to parse a file read whole with: for `analyze` (a sieve is given), a Kubernetes
/// document in UTF-8 gets it, so that the rows of a huge events table are folded
/// (`parse::row_fold`); any other file is parsed in full, as before.
fn folding(sieve: Option<&Arc<Sieve>>, path: &str, head: &[u8]) -> Option<Arc<Sieve>> {
    let sieve = sieve?;
    let utf16 = head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]);
    (!utf16 && binary_content(head).is_none() && whole_document(classify(path, head)))
        .then(|| Arc::clone(sieve))
}

/// Where the piece that starts at `start` ends: at the last line end within `size` bytes,
/// else at the first one after (in steps of 64 KiB, as a stream is read), else at the end.
/// The same rule as [`bundle::walk_in_pieces`] reads by.
pub(super) fn piece_end(bytes: &[u8], start: usize, size: usize) -> usize {
    let mut limit = start.saturating_add(size).min(bytes.len());
    loop {
        if limit >= bytes.len() {
            return bytes.len();
        }
        if let Some(nl) = memchr::memrchr(b'\n', &bytes[start..limit]) {
            return start + nl + 1;
        }
        limit = limit.saturating_add(1 << 16).min(bytes.len());
    }
}

/// The last `n` lines of `before` followed by `piece` (the piece may be shorter).
pub(super) fn tail_lines(before: &[u8], piece: &[u8], n: usize) -> Vec<u8> {
    let (from, got) = back_lines(piece, piece.len(), n);
    if got >= n || from > 0 {
        return piece[from..].to_vec();
    }
    let (from_before, _) = back_lines(before, before.len(), n - got);
    let mut out = before[from_before..].to_vec();
    out.extend_from_slice(piece);
    out
}
