//! A Kubernetes document too large to gather, parsed on the reader's thread as its pieces
//! arrive (`parse::Feed`). A describe whose `Events:` table has a million rows, or a
//! `kubectl get events` dump of millions of rows, then costs its folded rows, not its bytes.
//! Smaller documents are still gathered and parsed whole on a parser thread: both ways give
//! the same events (`parse::feed_tests`, `tests/stream.rs`).

use super::sections::SECTION_START;
use super::{binary_content, Parsed};
use crate::bundle::Cut;
use crate::classify::classify;
use crate::diag::Diagnostic;
use crate::event::SourceKind;
use crate::parse::{Feed, ParseOutput};

/// Bytes of a Kubernetes document gathered before the rest of it is fed instead.
pub(super) const FEED_AFTER: usize = 8 << 20;

/// A document being fed, and what its Parsed needs beside the parse.
pub(super) struct Fed {
    feed: Feed,
    kind: SourceKind,
    bytes: u64,
    /// Bytes of cut lines skipped.
    skipped: u64,
    /// Whether the bytes so far end at a line end (a last line without one still counts).
    at_line_end: bool,
    /// The cut lines, numbered in the whole document.
    cuts: Vec<Diagnostic>,
}

impl Fed {
    /// Starts feeding the document at `path`, of which `gathered` (with its `cuts`) came so
    /// far, when its format is read line by line; `None` when it must be read whole (objects,
    /// other tables, cluster-info dumps, UTF-16).
    pub(super) fn start(path: &str, gathered: &[u8], cuts: &[Cut], fold: bool) -> Option<Fed> {
        let mut fed = Fed::new(path, gathered, fold)?;
        fed.push(gathered, cuts);
        Some(fed)
    }

    /// [`Fed::start`], nothing fed yet: `head` only says what the document is.
    pub(super) fn new(path: &str, head: &[u8], fold: bool) -> Option<Fed> {
        let kind = Fed::feedable(path, head)?;
        Some(Fed {
            feed: Feed::new(kind, fold)?,
            kind,
            bytes: 0,
            skipped: 0,
            at_line_end: true,
            cuts: Vec::new(),
        })
    }

    /// The kind of the document at `path` that starts with `head`, when it can be fed.
    pub(super) fn feedable(path: &str, head: &[u8]) -> Option<SourceKind> {
        let utf16 = head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]);
        if utf16 || head.starts_with(SECTION_START) || binary_content(head).is_some() {
            return None;
        }
        let kind = classify(path, head);
        Feed::reads(kind).then_some(kind)
    }

    /// The document's kind.
    pub(super) fn kind(&self) -> SourceKind {
        self.kind
    }

    /// The events fed so far that nothing after can change, taken out (`Feed::take_settled`).
    pub(super) fn take_settled(&mut self) -> ParseOutput {
        self.feed.take_settled()
    }

    /// Feeds the next piece (whole lines but maybe the last), `cuts` by offset in it.
    pub(super) fn push(&mut self, piece: &[u8], cuts: &[Cut]) {
        let first_line = self.feed.lines().saturating_add(1);
        self.cuts.extend(Cut::diagnostics(cuts, piece, first_line));
        self.skipped += Cut::skipped_bytes(cuts);
        self.feed.feed(piece);
        self.bytes += piece.len() as u64;
        if let Some(&last) = piece.last() {
            self.at_line_end = last == b'\n';
        }
    }

    /// The document, as a whole read would have given it.
    pub(super) fn finish(self, path: String, mtime: Option<i64>) -> Parsed {
        let lines = u64::from(self.feed.lines()) + u64::from(!self.at_line_end);
        let mut out = self.feed.finish();
        out.diagnostics.extend(self.cuts);
        Parsed {
            path,
            mtime,
            bytes: self.bytes + self.skipped,
            lines,
            kind: self.kind,
            out,
            keyed: Vec::new(),
        }
    }
}
