//! The full parse, streamed: what `timeline`, `analyze --inventory` and the HTML picture read.
//! Every line of every file is parsed, but a file larger than one piece is parsed in stretches
//! (units) of about a piece, on the parser pool, and each unit's events are handed to the
//! consumer in file order as soon as the units before it are done, then dropped: memory stays
//! flat however large the bundle or its largest file.
//!
//! A unit never splits a record. The reader cuts a piece before its last line that starts a
//! record whatever the parser's state (`starts_fresh`: the line, parsed after each of a few
//! priming lines, starts a new event every time) and carries the lines from there into the next
//! unit. Each unit is then parsed alone and gives exactly the events the whole file would have
//! given for its lines: the line driver's only state across records is the record being
//! folded, which such a line closes. What a parser carries further is mended here in the
//! order units are delivered: line numbers, the worker parser's `:actor_name:` marker, and the
//! two diagnostics that summarise a whole file (impossible date-times, broken zap JSON).
//! Pieces are cut at the same places in every container (as for the sieved read), so a
//! directory, a tar.gz and a zip give the same units and the same events. A piece with no such
//! line near its end is carried whole; a carry that grows past [`MAX_CARRY`] (a file of
//! nothing but continuation lines) is cut at a piece end, the one place where the events may
//! differ from a whole-file parse (never a line lost or doubled).
//!
//! Kubernetes documents, cluster-info dumps, UTF-16 text and files of one piece are parsed
//! whole, as the one-shot load does; but a describe or a `kubectl get events` table past
//! [`FEED_AFTER`] bytes is fed on the reader's thread as its pieces arrive (`load::fed`), and
//! what the feed has settled goes on as a unit after each piece: a table of a million rows is
//! never held whole, nor are its events. Those units carry events with the file's own line
//! numbers and count no lines; the last one counts them all.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::fed::{Fed, FEED_AFTER};
use super::gate::walk_in_parallel;
use super::mirror::{keys_of, Keyed, Mirrors};
use super::pieces::PIECE_BYTES;
use super::router::piece_end;
use super::sections::SECTION_START;
use super::{
    binary_content, common_root, count_lines, parse_entry_at, skipped, whole_document, DetailOf,
    FileInfo, LoadConfig, Parsed,
};
use crate::bundle::{self, Buffers, Bytes, Entry, OpenError};
use crate::classify::classify;
use crate::diag::Diagnostic;
use crate::event::{Event, FileId, Micros, SourceKind};
use crate::parse::{self, Detail, Finish, Format, ParseOutput};

/// A carry (the lines after a piece's last cut) longer than this is cut at the piece's end.
pub(super) const MAX_CARRY: usize = 4 * PIECE_BYTES;
/// Lines looked at, back from a piece's end, for a place to cut.
const CUT_SEARCH_LINES: usize = 256;

/// Events of one file handed to the consumer, in file order.
pub struct Batch<'a> {
    /// The file's number in the order files were first read (not its id: see
    /// [`Streamed::ids`]). Every event's `file` holds it.
    pub seq: u32,
    /// The file's path as read, the common root not yet stripped.
    pub path: &'a str,
    pub kind: SourceKind,
    /// Events in file order, with the file's own line numbers and their kind set.
    pub events: Vec<Event>,
    /// What the read's [`Render`] wrote of each event (nothing without one).
    pub rendered: Rendered,
    /// Whether this is the file's last batch.
    pub last: bool,
}

/// Work a read does on each event on the parser thread that built it, in parallel: what it
/// writes is handed over with the event ([`Batch::rendered`]), so that the consumer, which
/// runs one batch at a time, only copies it. It sees the event with its kind set, its line
/// numbers not yet made the file's own, and never a light event.
pub type RenderFn = fn(&Event, &mut Vec<u8>);

/// A read's [`RenderFn`], and whether its consumer reads an event's text once it is
/// rendered.
#[derive(Clone, Copy, Debug)]
pub struct Render {
    pub write: RenderFn,
    /// When false, each rendered event's message and fields are freed on the parser thread
    /// as soon as it is rendered (where the memory was just written, and without the
    /// delivery's lock), and the consumer sees them empty: but for the events of a worker
    /// log, which delivery may mend and render again, and those with a `path` field, which
    /// say when and how a bundle was collected (`resolve::Tracker::observe`).
    pub keeps_text: bool,
}

/// The text a [`Render`] wrote of each event of a batch, one after the other.
#[derive(Debug, Default)]
pub struct Rendered {
    bytes: Vec<u8>,
    /// Where each event's text ends in `bytes`.
    ends: Vec<usize>,
}

impl Rendered {
    /// Renders `events` with `render`, if there is one.
    fn of(events: &[Event], render: Option<&Render>) -> Rendered {
        let mut r = Rendered::default();
        if let Some(Render { write: render, .. }) = render {
            r.ends.reserve_exact(events.len());
            // About what a packed JSON tail takes, so that the text is seldom moved as it
            // grows.
            r.bytes.reserve(events.len() * 160);
            for ev in events {
                if !ev.light {
                    render(ev, &mut r.bytes);
                }
                r.ends.push(r.bytes.len());
            }
        }
        r
    }

    /// The text of the `i`-th event; empty for a light event or without a [`Render`].
    pub fn get(&self, i: usize) -> &[u8] {
        let start = match i.checked_sub(1) {
            Some(before) => self.ends.get(before).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.bytes.get(start..end).unwrap_or_default()
    }
}

/// What a streamed read learnt besides the events.
#[derive(Debug)]
pub struct Streamed {
    pub bundle_path: String,
    pub container: String,
    pub root_name: Option<String>,
    /// Files sorted by path, with their ids, paths shown without the common root, as
    /// [`super::load`] gives them.
    pub files: Vec<FileInfo>,
    /// `ids[seq]` is the id of the file batches named `seq`.
    pub ids: Vec<FileId>,
    pub diagnostics: Vec<Diagnostic>,
    /// Which records were written to two files of their process, by file id: batches
    /// handed both, and a consumer leaves the copies out (`FileInfo::events` does not count
    /// them).
    pub mirrors: Mirrors,
}

/// Reads and parses every line of the bundle, handing each file's events to `sink` in file
/// order (files may interleave). `sink` runs on the parser threads, one call at a time.
/// Fails only when the bundle cannot be opened at all.
pub fn stream(
    path: &Path,
    cfg: &LoadConfig,
    sink: &mut (dyn FnMut(&Batch) + Send),
) -> Result<Streamed, OpenError> {
    stream_at(path, cfg, &|_, _| Detail::Full, sink)
}

/// [`stream`], each file's records built at the detail `detail_of` gives its path (as read)
/// and kind: the same events, lines, counts and diagnostics at every detail, but light
/// events carry no text (`parse::Detail`).
pub fn stream_at(
    path: &Path,
    cfg: &LoadConfig,
    detail_of: &DetailOf<'_>,
    sink: &mut (dyn FnMut(&Batch) + Send),
) -> Result<Streamed, OpenError> {
    stream_rendered(path, cfg, detail_of, None, sink)
}

/// [`stream_at`], each event also given to `render` on the parser thread that built it.
pub fn stream_rendered(
    path: &Path,
    cfg: &LoadConfig,
    detail_of: &DetailOf<'_>,
    render: Option<&Render>,
    sink: &mut (dyn FnMut(&Batch) + Send),
) -> Result<Streamed, OpenError> {
    let buffers = Arc::new(Buffers::default());
    let deliver = Mutex::new(Delivery {
        files: Vec::new(),
        sink,
        render,
    });
    let mut reader = Reader {
        open: None,
        next_seq: 0,
        buffers: Arc::clone(&buffers),
        lines_read: 0,
        detail_of,
    };
    // Parses a unit and hands it over; its events are freed once the lock is let go (they
    // are many small allocations).
    let run = |unit: Unit| {
        let done = unit.run(detail_of, render);
        let spent = match deliver.lock() {
            Ok(mut d) => d.take(done),
            Err(_) => Vec::new(),
        };
        drop(spent);
    };
    // A unit counts against the byte budget until its events are handed over, so units parsed
    // ahead of a slow one wait in memory only as long as the budget allows.
    let summary = walk_in_parallel(
        path,
        cfg,
        PIECE_BYTES,
        &buffers,
        &mut |entry, sink| {
            reader.route(entry, &deliver, &mut |unit| {
                let size = unit.size();
                sink(unit, size);
            })
        },
        &run,
    )?;
    // A file whose last piece never came (the walk stopped inside it) ends with its carry.
    if let Some(open) = reader.open.take() {
        let unit = open.finish();
        if let Some(unit) = unit {
            run(unit);
        }
    }
    let delivery = deliver.into_inner().map_err(|_| OpenError {
        path: path.to_path_buf(),
        reason: "a parser thread failed".to_string(),
    })?;
    Ok(finish(path, summary, delivery.files))
}

/// Files sorted by path, ids, diagnostics in file order.
fn finish(path: &Path, summary: bundle::WalkSummary, files: Vec<FileState>) -> Streamed {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| files[a].path.cmp(&files[b].path).then(a.cmp(&b)));
    let root_name = common_root(order.iter().map(|&i| files[i].path.as_str()));
    let mut diagnostics = summary.diagnostics;
    let mut ids = vec![0 as FileId; files.len()];
    let mut by_seq: Vec<Option<FileState>> = files.into_iter().map(Some).collect();
    let mut infos = Vec::with_capacity(by_seq.len());
    let mut keyed: Vec<Vec<Keyed>> = Vec::with_capacity(by_seq.len());
    for (id, &seq) in order.iter().enumerate() {
        let Some(mut f) = by_seq.get_mut(seq).and_then(Option::take) else {
            continue;
        };
        keyed.push(std::mem::take(&mut f.keyed));
        ids[seq] = id as FileId;
        let shown = f.path.clone();
        for mut d in f.diagnostics() {
            d.file = shown.clone();
            diagnostics.push(d);
        }
        infos.push(FileInfo {
            id: id as FileId,
            path: shown,
            kind: f.kind,
            bytes: f.bytes,
            lines: f.lines,
            events: f.events,
            unparsed_lines: f.unparsed,
            mtime: f.mtime,
            zone_samples: f.zone_samples,
            mirrored: 0,
            mirror_of: None,
        });
    }
    // Every file's records have gone by: which of them copy another's is known now, and the
    // consumer leaves the copies out where it reads its events back (`Streamed::mirrors`).
    let mirrors = Mirrors::decide(infos.iter().map(|f| (f.id, f.path.as_str())), |id| {
        keyed.get(id as usize).map_or(&[], Vec::as_slice)
    });
    for f in &mut infos {
        if let Some((n, of)) = mirrors.of_file(f.id) {
            f.events = f.events.saturating_sub(n);
            f.mirrored = n;
            f.mirror_of = Some(of);
        }
    }
    Streamed {
        bundle_path: path.display().to_string(),
        container: summary.container,
        root_name,
        files: infos,
        ids,
        diagnostics,
        mirrors,
    }
}

/// One stretch of a file to parse.
struct Unit {
    seq: u32,
    index: u32,
    last: bool,
    work: Work,
}

enum Work {
    /// A whole file (its only unit).
    Whole(Entry),
    /// A file, or a stretch of one, already parsed or not parsed at all (the reason and its
    /// bytes); `size` is what it counts against the byte budget.
    Parsed { parsed: Parsed, size: usize },
    /// Lines of a streamed file starting at a record start: the carry, then `piece[..cut]`.
    Text {
        kind: SourceKind,
        carry: Vec<u8>,
        piece: Vec<u8>,
        cut: usize,
        buffers: Arc<Buffers>,
        detail: Detail,
    },
}

/// What a unit gave.
struct UnitDone {
    seq: u32,
    index: u32,
    last: bool,
    kind: SourceKind,
    bytes: u64,
    lines: u64,
    out: ParseOutput,
    rendered: Rendered,
}

impl Unit {
    fn size(&self) -> usize {
        match &self.work {
            Work::Whole(entry) => entry.bytes.len(),
            Work::Parsed { size, .. } => *size,
            Work::Text { carry, cut, .. } => carry.len() + cut,
        }
    }

    fn run(self, detail_of: &DetailOf<'_>, render: Option<&Render>) -> UnitDone {
        // What a render does to each record, done as the parser finishes it.
        let finish = |kind: SourceKind, size: usize| {
            render.map(|r| {
                let thin = !r.keeps_text && Format::of(kind) != Format::Worker;
                let mut f = Finish::new(r.write, kind, thin);
                // About what packed JSON tails take of the text, so that it is seldom moved
                // as it grows.
                f.bytes.reserve(size + size / 4);
                f
            })
        };
        let (kind, bytes, lines, out) = match self.work {
            Work::Whole(entry) => {
                let p = parse_entry_at(entry, None, detail_of);
                (p.kind, p.bytes, p.lines, p.out)
            }
            Work::Parsed { parsed: p, .. } => (p.kind, p.bytes, p.lines, p.out),
            Work::Text {
                kind,
                carry,
                piece,
                cut,
                buffers,
                detail,
            } => {
                let parse = |text: &[u8]| match finish(kind, text.len()) {
                    Some(f) => parse::parse_finishing(kind, text, detail.clone(), f),
                    None => parse::parse_detailed(kind, text, detail.clone()),
                };
                let own = piece.get(..cut).unwrap_or_default();
                let (lines, out) = if carry.is_empty() {
                    (count_lines(own), parse(own))
                } else {
                    let mut text = buffers.take(carry.len() + own.len());
                    text.extend_from_slice(&carry);
                    text.extend_from_slice(own);
                    let got = (count_lines(&text), parse(&text));
                    buffers.give(text);
                    got
                };
                let bytes = (carry.len() + cut) as u64;
                buffers.give(piece);
                (kind, bytes, lines, out)
            }
        };
        let mut out = out;
        // Records a parser pushed without finishing them, and whole files, are finished here.
        let rendered = match out.finish.take().map(|f| *f).or_else(|| finish(kind, 0)) {
            Some(mut f) => {
                f.catch_up(&mut out.events);
                Rendered {
                    bytes: f.bytes,
                    ends: f.ends,
                }
            }
            None => Rendered::default(),
        };
        UnitDone {
            seq: self.seq,
            index: self.index,
            last: self.last,
            kind,
            bytes,
            lines,
            out,
            rendered,
        }
    }
}

/// The reader's side: turns the walk's entries into units.
struct Reader<'d> {
    open: Option<Open>,
    next_seq: u32,
    buffers: Arc<Buffers>,
    /// Lines of the current file routed so far: where its cut lines are.
    lines_read: u64,
    detail_of: &'d DetailOf<'d>,
}

/// The streamed file whose pieces are arriving.
struct Open {
    seq: u32,
    path: String,
    mtime: Option<i64>,
    next_index: u32,
    mode: Mode,
    buffers: Arc<Buffers>,
    /// How much of each record its units build.
    detail: Detail,
}

enum Mode {
    /// Parsed unit by unit; `carry` holds the lines after the last cut.
    Units { kind: SourceKind, carry: Vec<u8> },
    /// Parsed whole once every piece is in.
    Gather(Vec<u8>),
    /// A Kubernetes document past [`FEED_AFTER`] bytes, parsed as its pieces arrive.
    Fed(Box<Fed>),
    /// Not parsed (binary); its bytes are counted.
    Skip { problem: String, bytes: u64 },
}

impl Reader<'_> {
    /// The lines of `entry` (a piece of file `seq`, or the whole of it) that were cut as they
    /// were read: a diagnostic each, on the file's own line numbers.
    fn note_cuts(&mut self, seq: u32, entry: &Entry, deliver: &Mutex<Delivery>) {
        if !entry.cuts.is_empty() {
            let first = u32::try_from(self.lines_read + 1).unwrap_or(u32::MAX);
            let cuts = bundle::Cut::diagnostics(&entry.cuts, &entry.bytes, first);
            if let Ok(mut d) = deliver.lock() {
                if let Some(f) = d.files.get_mut(seq as usize) {
                    f.bytes += bundle::Cut::skipped_bytes(&entry.cuts);
                    f.diagnostics.extend(cuts);
                }
            }
        }
        self.lines_read += memchr::memchr_iter(b'\n', &entry.bytes).count() as u64;
    }

    fn register(&mut self, entry: &Entry, deliver: &Mutex<Delivery>) -> u32 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.saturating_add(1);
        self.lines_read = 0;
        if let Ok(mut d) = deliver.lock() {
            d.files
                .push(FileState::new(entry.path.clone(), entry.mtime));
        }
        seq
    }

    fn route(&mut self, entry: Entry, deliver: &Mutex<Delivery>, run: &mut dyn FnMut(Unit)) {
        if entry.piece == bundle::Piece::WHOLE {
            if let Some(open) = self.open.take() {
                if let Some(unit) = open.finish() {
                    run(unit);
                }
            }
            let seq = self.register(&entry, deliver);
            if entry.bytes.len() <= PIECE_BYTES {
                return run(Unit {
                    seq,
                    index: 0,
                    last: true,
                    work: Work::Whole(entry),
                });
            }
            // A large file read whole (a zip member, a nested archive's): cut where a stream
            // of it would have been.
            let first_end = piece_end(&entry.bytes, 0, PIECE_BYTES);
            let head = entry.bytes.get(..first_end).unwrap_or_default();
            let mut open = Open::new(seq, &entry, head, Arc::clone(&self.buffers), self.detail_of);
            let fed = entry.bytes.len() > FEED_AFTER && Fed::feedable(&entry.path, head).is_some();
            if matches!(open.mode, Mode::Gather(_)) && !fed {
                return run(Unit {
                    seq,
                    index: 0,
                    last: true,
                    work: Work::Whole(entry),
                });
            }
            self.note_cuts(seq, &entry, deliver);
            let len = entry.bytes.len();
            let mut start = 0usize;
            while start < len {
                let end = piece_end(&entry.bytes, start, PIECE_BYTES);
                let piece = entry.bytes.get(start..end).unwrap_or_default().to_vec();
                open.piece(piece, end >= len, run);
                start = end;
            }
            return;
        }
        if entry.piece.index == 0 {
            if let Some(open) = self.open.take() {
                if let Some(unit) = open.finish() {
                    run(unit);
                }
            }
            let seq = self.register(&entry, deliver);
            self.open = Some(Open::new(
                seq,
                &entry,
                &entry.bytes,
                Arc::clone(&self.buffers),
                self.detail_of,
            ));
        }
        let Some(seq) = self
            .open
            .as_ref()
            .filter(|o| o.path == entry.path)
            .map(|o| o.seq)
        else {
            return;
        };
        self.note_cuts(seq, &entry, deliver);
        let Some(open) = self.open.as_mut() else {
            return;
        };
        let last = entry.piece.last;
        let bytes = match entry.bytes {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m.to_vec(),
        };
        open.piece(bytes, last, run);
        if last {
            self.open = None;
        }
    }
}

impl Open {
    /// How a file whose first piece is `head` is read.
    fn new(
        seq: u32,
        entry: &Entry,
        head: &[u8],
        buffers: Arc<Buffers>,
        detail_of: &DetailOf<'_>,
    ) -> Open {
        let mut detail = Detail::Full;
        let mode = if let Some(problem) = binary_content(head) {
            Mode::Skip { problem, bytes: 0 }
        } else if head.starts_with(&[0xFF, 0xFE])
            || head.starts_with(&[0xFE, 0xFF])
            || head.starts_with(SECTION_START)
        {
            Mode::Gather(Vec::new())
        } else {
            let kind = classify(&entry.path, head);
            if whole_document(kind) {
                Mode::Gather(Vec::new())
            } else {
                detail = detail_of(&entry.path, kind);
                Mode::Units {
                    kind,
                    carry: Vec::new(),
                }
            }
        };
        Open {
            seq,
            path: entry.path.clone(),
            mtime: entry.mtime,
            next_index: 0,
            mode,
            buffers,
            detail,
        }
    }

    fn unit(&mut self, last: bool, work: Work) -> Unit {
        let index = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        Unit {
            seq: self.seq,
            index,
            last,
            work,
        }
    }

    /// Takes the next piece; runs the units it completes.
    fn piece(&mut self, piece: Vec<u8>, last: bool, run: &mut dyn FnMut(Unit)) {
        match &mut self.mode {
            Mode::Gather(buf) => {
                let before = buf.len();
                buf.extend_from_slice(&piece);
                self.buffers.give(piece);
                // Past the limit (tried once), a document read line by line is fed instead.
                if !last && before < FEED_AFTER && buf.len() >= FEED_AFTER {
                    if let Some(fed) = Fed::new(&self.path, buf, false) {
                        // What was gathered is fed a piece at a time too, so that no unit
                        // holds the events of all of it.
                        let gathered = std::mem::take(buf);
                        self.mode = Mode::Fed(Box::new(fed));
                        let mut start = 0;
                        while start < gathered.len() {
                            let end = piece_end(&gathered, start, PIECE_BYTES);
                            self.feed(gathered.get(start..end).unwrap_or_default(), run);
                            start = end;
                        }
                    }
                } else if last {
                    let bytes = std::mem::take(buf);
                    // The cut lines of the pieces were noted as they came.
                    let entry = Entry {
                        path: self.path.clone(),
                        mtime: self.mtime,
                        bytes: Bytes::Owned(bytes),
                        piece: bundle::Piece::WHOLE,
                        cuts: Vec::new(),
                    };
                    let unit = self.unit(true, Work::Whole(entry));
                    run(unit);
                }
            }
            Mode::Fed(_) => {
                let size = piece.len();
                self.feed(&piece, run);
                self.buffers.give(piece);
                if last {
                    let gathered = Mode::Gather(Vec::new());
                    if let Mode::Fed(fed) = std::mem::replace(&mut self.mode, gathered) {
                        let parsed = fed.finish(self.path.clone(), self.mtime);
                        let unit = self.unit(true, Work::Parsed { parsed, size });
                        run(unit);
                    }
                }
            }
            Mode::Skip { problem, bytes } => {
                *bytes += piece.len() as u64;
                self.buffers.give(piece);
                if last {
                    let parsed = skipped(self.path.clone(), self.mtime, *bytes, problem.clone());
                    let unit = self.unit(true, Work::Parsed { parsed, size: 0 });
                    run(unit);
                }
            }
            Mode::Units { kind, carry } => {
                let kind = *kind;
                if last {
                    let carry = std::mem::take(carry);
                    let cut = piece.len();
                    let work = self.text(kind, carry, piece, cut);
                    let unit = self.unit(true, work);
                    return run(unit);
                }
                let cut = match safe_cut(kind, &piece) {
                    Some(0) if carry.is_empty() => None,
                    other => other,
                };
                match cut {
                    Some(cut) => {
                        let next = piece.get(cut..).unwrap_or_default().to_vec();
                        let carry = std::mem::replace(carry, next);
                        let work = self.text(kind, carry, piece, cut);
                        let unit = self.unit(false, work);
                        run(unit);
                    }
                    None if carry.len() + piece.len() > MAX_CARRY => {
                        let carry = std::mem::take(carry);
                        let cut = piece.len();
                        let work = self.text(kind, carry, piece, cut);
                        let unit = self.unit(false, work);
                        run(unit);
                    }
                    None => {
                        carry.extend_from_slice(&piece);
                        self.buffers.give(piece);
                    }
                }
            }
        }
    }

    /// Feeds `piece` to the document being fed (its cut lines were noted as they came), and
    /// hands on, as a unit, what the feed settled: events with the file's own line numbers,
    /// no lines or bytes (the last unit counts them).
    fn feed(&mut self, piece: &[u8], run: &mut dyn FnMut(Unit)) {
        let Mode::Fed(fed) = &mut self.mode else {
            return;
        };
        fed.push(piece, &[]);
        let out = fed.take_settled();
        if out.events.is_empty() && out.unparsed_lines == 0 {
            return;
        }
        let parsed = Parsed {
            path: self.path.clone(),
            mtime: self.mtime,
            bytes: 0,
            lines: 0,
            kind: fed.kind(),
            out,
            keyed: Vec::new(),
        };
        // About what its events take, for the byte budget.
        let size = parsed.out.events.len() * 256;
        let unit = self.unit(false, Work::Parsed { parsed, size });
        run(unit);
    }

    fn text(&self, kind: SourceKind, carry: Vec<u8>, piece: Vec<u8>, cut: usize) -> Work {
        Work::Text {
            kind,
            carry,
            piece,
            cut,
            buffers: Arc::clone(&self.buffers),
            detail: self.detail.clone(),
        }
    }

    /// The unit that ends a file whose last piece never came.
    fn finish(mut self) -> Option<Unit> {
        let mut out = None;
        self.piece(Vec::new(), true, &mut |unit| out = Some(unit));
        out
    }
}

/// Where to cut a piece: before its last line (of the last [`CUT_SEARCH_LINES`]) that starts
/// a record whatever came before it.
fn safe_cut(kind: SourceKind, piece: &[u8]) -> Option<usize> {
    let mut end = piece.len();
    for _ in 0..CUT_SEARCH_LINES {
        if end == 0 {
            return None;
        }
        let start = memchr::memrchr(b'\n', &piece[..end - 1]).map_or(0, |i| i + 1);
        if starts_fresh(kind, &piece[start..end]) {
            return Some(start);
        }
        end = start;
    }
    None
}

/// Lines that leave each line grammar in a different state: after a plain record, among a
/// traceback's frames, after its exception line.
const PRIMES: [&[u8]; 3] = [
    b"x\n",
    b"Traceback (most recent call last):\n",
    b"Traceback (most recent call last):\n  File \"x\", line 1, in f\nValueError: x\n",
];

/// Whether `line` starts a new record after each of [`PRIMES`]: then it does so wherever it
/// stands in a file, and a unit may start with it.
pub(super) fn starts_fresh(kind: SourceKind, line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    if line.is_empty() || line.contains(&b'\n') {
        return false;
    }
    PRIMES.iter().all(|prime| {
        let mut text = Vec::with_capacity(prime.len() + line.len() + 1);
        text.extend_from_slice(prime);
        text.extend_from_slice(line);
        text.push(b'\n');
        let at = count_lines(prime) as u32 + 1;
        parse::parse(kind, &text)
            .events
            .last()
            .is_some_and(|ev| ev.line == at)
    })
}

/// The delivery side: units wait here until those before them in their file are done.
struct Delivery<'s> {
    files: Vec<FileState>,
    sink: &'s mut (dyn FnMut(&Batch) + Send),
    render: Option<&'s Render>,
}

impl Delivery<'_> {
    /// Takes a parsed unit and hands over every unit of its file now in order. Returns the
    /// events handed over, for the caller to free once it has let the delivery go.
    fn take(&mut self, done: UnitDone) -> Vec<Vec<Event>> {
        let mut spent = Vec::new();
        let seq = done.seq as usize;
        let Some(file) = self.files.get_mut(seq) else {
            return spent;
        };
        file.pending.insert(done.index, done);
        while let Some(unit) = file.pending.remove(&file.next) {
            file.next = file.next.saturating_add(1);
            let last = unit.last;
            let (events, rendered) = file.mend(unit, self.render);
            let batch = Batch {
                seq: seq as u32,
                path: &file.path,
                kind: file.kind,
                events,
                rendered,
                last,
            };
            (self.sink)(&batch);
            spent.push(batch.events);
        }
        spent
    }
}

/// A file as its units are delivered.
struct FileState {
    path: String,
    mtime: Option<i64>,
    kind: SourceKind,
    next: u32,
    pending: BTreeMap<u32, UnitDone>,
    bytes: u64,
    lines: u64,
    events: u64,
    unparsed: u64,
    zone_samples: Vec<Micros>,
    diagnostics: Vec<Diagnostic>,
    /// The file's summarising diagnostics, joined over its units (see [`COUNTED`]).
    counted: [Option<(u64, Diagnostic)>; 2],
    /// The worker parser's latest `:actor_name:` marker.
    actor: Option<String>,
    /// Whether the file is parsed in more than one unit.
    split: bool,
    /// The records that may be mirrored (`super::mirror`), by first line.
    keyed: Vec<Keyed>,
}

/// The diagnostics a parser gives once per file, counting lines: `(text after the count,
/// what to write for one line, for several)`.
const COUNTED: [(&str, &str, &str); 2] = [
    (" line(s) start with an impossible date-time", "", ""),
    (" operator log line", "line looks", "lines look"),
];

impl FileState {
    fn new(path: String, mtime: Option<i64>) -> FileState {
        FileState {
            path,
            mtime,
            kind: SourceKind::Unknown,
            next: 0,
            pending: BTreeMap::new(),
            bytes: 0,
            lines: 0,
            events: 0,
            unparsed: 0,
            zone_samples: Vec::new(),
            diagnostics: Vec::new(),
            counted: [None, None],
            actor: None,
            split: false,
            keyed: Vec::new(),
        }
    }

    /// A unit's events made the file's own: line numbers, kind, file, the actor marker; and
    /// what `render` wrote of them, written again should the marker have changed them.
    fn mend(&mut self, unit: UnitDone, render: Option<&Render>) -> (Vec<Event>, Rendered) {
        self.kind = unit.kind;
        if unit.index == 0 {
            self.split = !unit.last;
        }
        let offset = u32::try_from(self.lines).unwrap_or(u32::MAX);
        let mut out = unit.out;
        let mut rendered = unit.rendered;
        let worker = Format::of(unit.kind) == Format::Worker && unit.index > 0;
        let mut before_marker = worker;
        let mut changed = false;
        for ev in &mut out.events {
            ev.line = ev.line.saturating_add(offset);
            ev.file = 0;
            let line = ev.line;
            self.keyed.extend(keys_of(ev).map(|k| (line, k)));
            if ev.kind == SourceKind::Unknown {
                ev.kind = unit.kind;
            }
            if before_marker {
                if let Some(actor) = &self.actor {
                    ev.fields.push(("actor_name".into(), actor.as_str().into()));
                    changed = true;
                }
                before_marker = !is_actor_marker(ev);
            }
        }
        if Format::of(unit.kind) == Format::Worker {
            if let Some(ev) = out.events.iter().rev().find(|e| is_actor_marker(e)) {
                self.actor = ev.field("value").map(str::to_string);
            }
        }
        for mut d in out.diagnostics {
            d.line = d.line.map(|l| l.saturating_add(offset));
            self.diagnostic(d);
        }
        self.bytes += unit.bytes;
        self.lines += unit.lines;
        self.events += out.events.len() as u64;
        self.unparsed += out.unparsed_lines;
        self.zone_samples.append(&mut out.zone_samples);
        if changed && render.is_some() {
            rendered = Rendered::of(&out.events, render);
        }
        (out.events, rendered)
    }

    fn diagnostic(&mut self, d: Diagnostic) {
        if !self.split {
            return self.diagnostics.push(d);
        }
        let counted = d.problem.split_once(' ').and_then(|(n, _)| {
            let n = n.parse::<u64>().ok()?;
            let at = d.problem.len() - d.problem.trim_start_matches(char::is_numeric).len();
            let rest = &d.problem[at..];
            COUNTED
                .iter()
                .position(|(tail, _, _)| rest.starts_with(tail))
                .map(|i| (i, n))
        });
        let Some((i, n)) = counted else {
            return self.diagnostics.push(d);
        };
        match &mut self.counted[i] {
            Some((total, _)) => *total += n,
            slot => *slot = Some((n, d)),
        }
    }

    /// The file's diagnostics: the summarising ones first, as a whole-file parse gives them.
    fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all = Vec::new();
        for (i, slot) in self.counted.iter().enumerate() {
            let Some((total, d)) = slot else { continue };
            let mut d = d.clone();
            let at = d.problem.len() - d.problem.trim_start_matches(char::is_numeric).len();
            let mut problem = format!("{total}{}", &d.problem[at..]);
            let (_, one, many) = COUNTED[i];
            if *total > 1 && !one.is_empty() {
                problem = problem.replacen(one, many, 1);
            }
            d.problem = problem;
            all.push(d);
        }
        all.extend(self.diagnostics.iter().cloned());
        all
    }
}

fn is_actor_marker(ev: &Event) -> bool {
    ev.field("marker") == Some("actor_name")
}
