//! Loading a bundle: walk the container, classify each file, parse files in parallel, and
//! gather everything in a stable order.
//!
//! This is the one place that decides threading (rayon) for a single bundle. Results do not
//! depend on the thread count or on the order the container yields files: files are sorted by
//! path before ids are given out. Paths are shown relative to the bundle root, with a folder
//! that every file shares (the archive's top-level folder) stripped, so that a `.tar.gz`, a
//! `.zip` and the extracted directory give the same paths.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::bundle::{self, Buffers, Entry, Limits, OpenError};
use crate::classify::classify;
use crate::diag::Diagnostic;
use crate::event::{Event, FileId, Micros, SourceKind};
use crate::parse::{self, Format, ParseOutput};
use crate::rules::sieve::{Hit, Sieve, LOOKAHEAD_LINES, LOOKBACK_LINES};

/// How to load a bundle.
#[derive(Clone)]
pub struct LoadConfig {
    pub limits: Limits,
    /// For `analyze`: parse only the records around lines a rule could match (see
    /// `rules::sieve`). `None` parses everything (the timeline).
    pub sieve: Option<std::sync::Arc<Sieve>>,
    /// Parser threads; 1 parses on the calling thread.
    pub threads: usize,
    /// Told of every file or piece as it is read: its path and bytes (for a progress bar).
    pub progress: Option<Progress>,
}

/// A callback told of each file or piece read: its path and its bytes.
pub type Progress = Arc<dyn Fn(&str, u64) + Send + Sync>;

/// One file of the bundle, as the inventory shows it.
#[derive(Clone, Debug)]
pub struct FileInfo {
    pub id: FileId,
    /// Path relative to the bundle root, top-level folder stripped.
    pub path: String,
    pub kind: SourceKind,
    pub bytes: u64,
    pub lines: u64,
    pub events: u64,
    pub unparsed_lines: u64,
    pub mtime: Option<i64>,
    /// `local - utc` samples (microseconds) seen in this file.
    pub zone_samples: Vec<Micros>,
}

/// Everything read from a bundle, before the timeline orders it.
#[derive(Debug)]
pub struct Loaded {
    /// The bundle as the user named it.
    pub bundle_path: String,
    /// `tar.gz`, `zip`, `directory`, …
    pub container: String,
    /// The top-level folder stripped from every path, if any.
    pub root_name: Option<String>,
    pub files: Vec<FileInfo>,
    /// Events of each file, indexed by file id, in file order.
    pub events: Vec<Vec<Event>>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Bytes of bundle content queued or being parsed at once (one larger file still passes
/// alone).
const IN_FLIGHT_BYTES: usize = 8 << 20;

/// A byte budget shared by the reader and the parser threads.
struct Gate {
    used: Mutex<usize>,
    freed: std::sync::Condvar,
    budget: usize,
}

impl Gate {
    fn new(budget: usize) -> Gate {
        Gate {
            used: Mutex::new(0),
            freed: std::sync::Condvar::new(),
            budget,
        }
    }

    /// Waits until `size` more bytes fit, or nothing is in flight.
    fn acquire(&self, size: usize) {
        let Ok(mut used) = self.used.lock() else {
            return;
        };
        while *used > 0 && *used + size > self.budget {
            used = match self.freed.wait(used) {
                Ok(g) => g,
                Err(_) => return,
            };
        }
        *used += size;
    }

    fn release(&self, size: usize) {
        if let Ok(mut used) = self.used.lock() {
            *used = used.saturating_sub(size);
        }
        self.freed.notify_all();
    }
}

struct Parsed {
    path: String,
    mtime: Option<i64>,
    bytes: u64,
    lines: u64,
    kind: SourceKind,
    out: ParseOutput,
}

/// Size of the pieces a sieved file is parsed in: archive members are read in pieces of this
/// size as they are inflated (so memory stays flat however large a member is), and files
/// read whole are cut at the same places, so that every container gives the same events.
const PIECE_BYTES: usize = 2 << 20;

/// One unit of parsing work.
enum Job {
    /// A whole file, parsed through the sieve when one is given.
    Whole(Entry, Option<Arc<Sieve>>),
    /// One piece of a sieved file.
    Piece(PieceJob),
    /// Nothing left to parse.
    Done(Parsed),
}

/// A piece of a sieved file, with the lines around it that its records may need.
struct PieceJob {
    path: String,
    mtime: Option<i64>,
    index: u32,
    kind: SourceKind,
    /// Up to [`LOOKBACK_LINES`] lines of the file before the piece, the piece, and up to
    /// [`LOOKAHEAD_LINES`] + 1 lines after it.
    text: Text,
    /// Where the piece itself is in `text`.
    own: std::ops::Range<usize>,
    first: bool,
    last: bool,
    sieve: Arc<Sieve>,
}

/// The text of a piece: the piece of a streamed member with the lines around it, joined
/// when the job runs (on a parser thread, not the reader's), or a range of a file read whole.
enum Text {
    Parts {
        before: Vec<u8>,
        piece: Vec<u8>,
        after: Vec<u8>,
        buffers: Arc<Buffers>,
    },
    Shared(Arc<Entry>, std::ops::Range<usize>),
}

impl Text {
    fn len(&self) -> usize {
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
    fn before_and_own(&self, own: std::ops::Range<usize>) -> (&[u8], &[u8]) {
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
    fn release(self) {
        if let Text::Parts { piece, buffers, .. } = self {
            buffers.give(piece);
        }
    }

    /// Runs `f` over the whole text, then hands the buffers back.
    fn with<T>(self, f: impl FnOnce(&[u8]) -> T) -> T {
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
enum Part {
    Whole(Parsed),
    Piece(Box<PieceDone>),
}

struct PieceDone {
    path: String,
    mtime: Option<i64>,
    index: u32,
    kind: SourceKind,
    bytes: u64,
    lines: u64,
    /// Lines of context before the piece: record line numbers count from the context.
    before_lines: u32,
    out: Sieved,
}

impl Part {
    fn path(&self) -> &str {
        match self {
            Part::Whole(p) => &p.path,
            Part::Piece(p) => &p.path,
        }
    }

    fn index(&self) -> u32 {
        match self {
            Part::Whole(_) => 0,
            Part::Piece(p) => p.index,
        }
    }
}

impl Job {
    fn size(&self) -> usize {
        match self {
            Job::Whole(entry, _) => entry.bytes.len(),
            Job::Piece(piece) => piece.text.len(),
            Job::Done(_) => 0,
        }
    }

    fn run(self) -> Part {
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
                // Most pieces hold no hit and are neither a file's head nor its tail: nothing
                // to parse, so their text is never joined with the lines around it.
                let out = if hits.is_empty() && !first && !last {
                    job.text.release();
                    Sieved::default()
                } else {
                    job.text.with(|text| {
                        parse_windows(kind, text, own, before_lines, &hits, first, last)
                    })
                };
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

/// Turns the entries of a walk into jobs: files read whole go as they are (cut into pieces
/// when sieved), the pieces of a streamed member wait for the head of the next one.
struct Router {
    sieve: Option<Arc<Sieve>>,
    open: Option<Open>,
    buffers: Arc<Buffers>,
}

/// The streamed member whose pieces are arriving.
struct Open {
    path: String,
    mtime: Option<i64>,
    mode: Mode,
}

enum Mode {
    /// Parsed piece by piece; `held` waits for the head of its successor.
    Sieved {
        kind: SourceKind,
        held: Option<(u32, Vec<u8>)>,
        before: Vec<u8>,
    },
    /// Parsed whole once every piece is in.
    Gather(Vec<u8>),
    /// Not parsed (binary); its bytes are counted.
    Skip { problem: String, bytes: u64 },
}

impl Router {
    /// How a file whose first piece is `head` is read: piece by piece through the sieve
    /// (`Some(kind)`), or whole.
    fn sieved_kind(&self, path: &str, head: &[u8]) -> Option<SourceKind> {
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

    fn route(&mut self, entry: Entry, run: &mut dyn FnMut(Job)) {
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
                (None, None) => Mode::Gather(Vec::new()),
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
            Mode::Gather(buf) => {
                buf.extend_from_slice(&entry.bytes);
                if last {
                    let bytes = std::mem::take(buf);
                    run(Job::Whole(
                        Entry {
                            path: open.path.clone(),
                            mtime: open.mtime,
                            bytes: bundle::Bytes::Owned(bytes),
                            piece: bundle::Piece::WHOLE,
                        },
                        None,
                    ));
                }
            }
            Mode::Skip { problem, bytes } => {
                *bytes += entry.bytes.len() as u64;
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
                let next = match entry.bytes {
                    bundle::Bytes::Owned(v) => v,
                    bundle::Bytes::Mapped(m) => m.to_vec(),
                };
                if let Some((index, piece)) = held.take() {
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
                    }));
                } else {
                    *held = Some((entry.piece.index, next));
                }
            }
        }
        if last {
            self.open = None;
        }
    }

    /// A file read whole: cut into the pieces a stream would have given when it is sieved.
    fn route_whole(&mut self, entry: Entry, run: &mut dyn FnMut(Job)) {
        let first_end = piece_end(&entry.bytes, 0, PIECE_BYTES);
        let kind = self.sieved_kind(&entry.path, &entry.bytes[..first_end]);
        let (Some(kind), Some(sieve)) = (kind, self.sieve.clone()) else {
            return run(Job::Whole(entry, None));
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
            }));
            if last {
                break;
            }
            start = end;
            index = index.saturating_add(1);
        }
    }
}

/// Where the piece that starts at `start` ends: at the last line end within `size` bytes,
/// else at the first one after (in steps of 64 KiB, as a stream is read), else at the end.
/// The same rule as [`bundle::walk_in_pieces`] reads by.
fn piece_end(bytes: &[u8], start: usize, size: usize) -> usize {
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
fn tail_lines(before: &[u8], piece: &[u8], n: usize) -> Vec<u8> {
    let (from, got) = back_lines(piece, piece.len(), n);
    if got >= n || from > 0 {
        return piece[from..].to_vec();
    }
    let (from_before, _) = back_lines(before, before.len(), n - got);
    let mut out = before[from_before..].to_vec();
    out.extend_from_slice(piece);
    out
}

/// A file that is not parsed, with the reason.
fn skipped(path: String, mtime: Option<i64>, bytes: u64, problem: String) -> Parsed {
    let mut out = ParseOutput::default();
    out.diagnostics
        .push(Diagnostic::for_file(String::new(), problem));
    Parsed {
        path,
        mtime,
        bytes,
        lines: 0,
        kind: SourceKind::Unknown,
        out,
    }
}

/// Opens and parses a bundle. Fails only when the bundle cannot be opened at all.
pub fn load(path: &Path, cfg: &LoadConfig) -> Result<Loaded, OpenError> {
    let results: Mutex<Vec<Part>> = Mutex::new(Vec::new());
    let buffers = Arc::new(Buffers::default());
    let mut router = Router {
        sieve: cfg.sieve.clone(),
        open: None,
        buffers: Arc::clone(&buffers),
    };
    let piece_bytes = if cfg.sieve.is_some() {
        PIECE_BYTES
    } else {
        usize::MAX
    };
    let progress = cfg.progress.clone();
    let summary = if cfg.threads <= 1 {
        bundle::walk_in_pieces(
            path,
            &cfg.limits,
            piece_bytes,
            Some(&buffers),
            &mut |entry| {
                if let Some(p) = &progress {
                    p(&entry.path, entry.bytes.len() as u64);
                }
                router.route(entry, &mut |job| {
                    let part = job.run();
                    if let Ok(mut all) = results.lock() {
                        all.push(part);
                    }
                });
            },
        )?
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(cfg.threads)
            .build()
            .map_err(|e| OpenError {
                path: path.to_path_buf(),
                reason: format!("cannot start {} parser threads: {e}", cfg.threads),
            })?;
        // Backpressure: the reader waits while too many bytes are queued or being parsed, so
        // that memory does not grow with the bundle when decompression outruns parsing.
        let in_flight = Gate::new(IN_FLIGHT_BYTES);
        pool.in_place_scope(|scope| {
            bundle::walk_in_pieces(
                path,
                &cfg.limits,
                piece_bytes,
                Some(&buffers),
                &mut |entry: Entry| {
                    if let Some(p) = &progress {
                        p(&entry.path, entry.bytes.len() as u64);
                    }
                    router.route(entry, &mut |job| {
                        let size = job.size();
                        in_flight.acquire(size);
                        let results = &results;
                        let in_flight = &in_flight;
                        scope.spawn(move |_| {
                            let part = job.run();
                            in_flight.release(size);
                            if let Ok(mut all) = results.lock() {
                                all.push(part);
                            }
                        });
                    });
                },
            )
        })?
    };
    let mut parts = results.into_inner().unwrap_or_default();
    parts.sort_by(|a, b| a.path().cmp(b.path()).then(a.index().cmp(&b.index())));
    let parsed = assemble(parts);

    let root_name = common_root(parsed.iter().map(|p| p.path.as_str()));
    let mut files = Vec::with_capacity(parsed.len());
    let mut events = Vec::with_capacity(parsed.len());
    let mut diagnostics = summary.diagnostics;
    if let Some(root) = &root_name {
        for d in &mut diagnostics {
            d.file = strip_root(&d.file, root).to_string();
        }
    }
    for (idx, p) in parsed.into_iter().enumerate() {
        let id = idx as FileId;
        let shown = match &root_name {
            Some(root) => strip_root(&p.path, root).to_string(),
            None => p.path.clone(),
        };
        let mut out = p.out;
        for ev in &mut out.events {
            ev.file = id;
            if ev.kind == SourceKind::Unknown {
                ev.kind = p.kind;
            }
        }
        for mut d in out.diagnostics {
            d.file = shown.clone();
            diagnostics.push(d);
        }
        files.push(FileInfo {
            id,
            path: shown,
            kind: p.kind,
            bytes: p.bytes,
            lines: p.lines,
            events: out.events.len() as u64,
            unparsed_lines: out.unparsed_lines,
            mtime: p.mtime,
            zone_samples: out.zone_samples,
        });
        events.push(out.events);
    }
    Ok(Loaded {
        bundle_path: path.display().to_string(),
        container: summary.container,
        root_name,
        files,
        events,
        diagnostics,
    })
}

/// Joins the pieces of each file, in order, into one parsed file. `parts` are sorted by path,
/// then piece.
fn assemble(parts: Vec<Part>) -> Vec<Parsed> {
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
fn join_pieces(pieces: Vec<PieceDone>) -> Option<Parsed> {
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

fn parse_entry(entry: Entry, sieve: Option<&Sieve>) -> Parsed {
    let raw: &[u8] = &entry.bytes;
    if let Some(problem) = binary_content(raw) {
        return skipped(entry.path, entry.mtime, raw.len() as u64, problem);
    }
    let decoded = decode_utf16(raw);
    let bytes: &[u8] = decoded.as_deref().unwrap_or(raw);
    let lines = count_lines(bytes);
    let (kind, out) = match split_cluster_info_sections(bytes) {
        Some(sections) => parse_sections(&entry.path, bytes, &sections),
        None => {
            let kind = classify(&entry.path, bytes);
            match sieve {
                Some(sieve) if !whole_document(kind) && !sieve.needs_full(kind) => {
                    (kind, parse_sieved(kind, bytes, sieve))
                }
                _ => (kind, parse::parse(kind, bytes)),
            }
        }
    };
    Parsed {
        path: entry.path,
        mtime: entry.mtime,
        bytes: bytes.len() as u64,
        lines,
        kind,
        out,
    }
}

/// How much of a file the binary check looks at.
const BINARY_SNIFF: usize = 8192;

/// Binary members (profiles, core dumps, `.bin` memory traces) are skipped with a reason.
/// Text with a byte-order mark for UTF-16 is not binary, whatever its NUL bytes.
fn binary_content(bytes: &[u8]) -> Option<String> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return None;
    }
    let head = &bytes[..bytes.len().min(BINARY_SNIFF)];
    if head.is_empty() {
        return None;
    }
    // Text holds no NUL and few control bytes; latin-1 or broken UTF-8 is still text.
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b) || b == 0x7f)
        .count();
    (control * 100 >= head.len() * 5 && control >= 8).then(|| {
        format!(
            "binary content ({}% control bytes in the first {} bytes), skipped",
            control * 100 / head.len(),
            head.len()
        )
    })
}

/// UTF-16 text with a byte-order mark, re-encoded as UTF-8 (unpaired surrogates replaced).
fn decode_utf16(bytes: &[u8]) -> Option<Vec<u8>> {
    let little = bytes.starts_with(&[0xFF, 0xFE]);
    if !little && !bytes.starts_with(&[0xFE, 0xFF]) {
        return None;
    }
    let units = bytes[2..].chunks_exact(2).map(|c| {
        if little {
            u16::from_le_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], c[1]])
        }
    });
    let text: String = char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    Some(text.into_bytes())
}

/// Formats whose meaning depends on the whole document (paths of facts, table headers).
fn whole_document(kind: SourceKind) -> bool {
    Format::of(kind).is_kubernetes()
}

/// Lines parsed at the start of every file: the first time and the zone evidence.
const HEAD_LINES: usize = 2000;
/// Lines parsed at the end of every file: the last time.
const TAIL_LINES: usize = 40;

/// What the windowed parse of one stretch of a file keeps.
#[derive(Default)]
struct Sieved {
    /// Records that hold a hit, in file order.
    events: Vec<Event>,
    /// The first and last timed records parsed, whether or not they hold a hit.
    first_timed: Option<Event>,
    last_timed: Option<Event>,
    diagnostics: Vec<Diagnostic>,
    unparsed_lines: u64,
    zone_samples: Vec<Micros>,
}

impl Sieved {
    /// The events to keep, in file order: the hit records and the first and last timed ones.
    fn into_output(self) -> ParseOutput {
        let mut events = self.events;
        events.extend(self.first_timed);
        events.extend(self.last_timed);
        events.sort_by_key(|e| e.line);
        events.dedup_by(|a, b| a.line == b.line);
        ParseOutput {
            events,
            diagnostics: self.diagnostics,
            unparsed_lines: self.unparsed_lines,
            zone_samples: self.zone_samples,
        }
    }
}

/// Parses a whole file through the sieve: the windows around its hits, its head and tail.
fn parse_sieved(kind: SourceKind, bytes: &[u8], sieve: &Sieve) -> ParseOutput {
    let hits = sieve.hits(kind, bytes);
    parse_windows(kind, bytes, 0..bytes.len(), 0, &hits, true, true).into_output()
}

/// Parses only the windows around `hits`, the sieve's hits in `text[own]` (plus the head of
/// `text` when `head`, and its tail when `tail`), and keeps the records that hold one of those
/// hits, the first and last timed records, and the zone samples of the head. `text` around
/// `own` is context from the neighbouring pieces of the file: lines there are parsed so that
/// a record that starts before `own` or runs on after it is whole, but their hits belong to
/// the neighbours; `lines_before_own` counts those before it. Line numbers are 1-based from
/// the start of `text`.
fn parse_windows(
    kind: SourceKind,
    text: &[u8],
    own: std::ops::Range<usize>,
    lines_before_own: usize,
    hits: &[Hit],
    head: bool,
    tail: bool,
) -> Sieved {
    let hits: Vec<(usize, usize)> = hits
        .iter()
        .map(|h| (h.line + lines_before_own, h.start + own.start))
        .collect();
    // Windows as (first line index, start byte, end byte), merged.
    let mut windows: Vec<(usize, usize, usize)> = Vec::new();
    let mut push = |line: usize, from: usize, to: usize| match windows.last_mut() {
        Some(last) if from <= last.2 => last.2 = last.2.max(to),
        _ => windows.push((line, from, to)),
    };
    if head {
        push(0, 0, forward_lines(text, 0, HEAD_LINES));
    }
    for &(line, start) in &hits {
        let end = forward_lines(text, start, 1);
        if starts_record(&text[start..end]) && (end == text.len() || starts_record(&text[end..])) {
            // A one-line record: nothing before or after it belongs to it.
            push(line, start, end);
            continue;
        }
        let (from, back) = back_lines(text, start, LOOKBACK_LINES);
        push(
            line - back,
            from,
            forward_lines(text, start, LOOKAHEAD_LINES + 1),
        );
    }
    if tail {
        let total = count_lines(text) as usize;
        let (from, back) = back_lines(text, text.len(), TAIL_LINES);
        // `back_lines` from the very end counts the last line as one even without a newline.
        push(total.saturating_sub(back), from, text.len());
    }

    let mut out = Sieved::default();
    let mut hit_iter = hits.iter().map(|&(line, _)| line).peekable();
    for (wi, &(first_line, from, to)) in windows.iter().enumerate() {
        let part = parse::parse(kind, &text[from..to]);
        let offset = first_line as u32;
        if wi == 0 && head {
            out.zone_samples.extend(&part.zone_samples);
        }
        out.unparsed_lines += part.unparsed_lines;
        // The window's first and last timed records are copied, not every timed one.
        let first_timed = part.events.iter().position(|e| e.raw_time.is_some());
        let last_timed = part.events.iter().rposition(|e| e.raw_time.is_some());
        let keeps_last = !tail || wi + 1 == windows.len();
        for (idx, mut ev) in part.events.into_iter().enumerate() {
            ev.line += offset;
            // Lines of this record, as 0-based indices.
            let lo = (ev.line - 1) as usize;
            let hi = lo + ev.n_lines.max(1) as usize;
            while hit_iter.peek().is_some_and(|h| *h < lo) {
                hit_iter.next();
            }
            let holds_hit = hit_iter.peek().is_some_and(|h| *h < hi);
            if out.first_timed.is_none() && Some(idx) == first_timed {
                out.first_timed = Some(ev.clone());
            }
            if keeps_last && Some(idx) == last_timed {
                out.last_timed = Some(ev.clone());
            }
            if holds_hit {
                out.events.push(ev);
            }
        }
        for mut d in part.diagnostics {
            d.line = d.line.map(|l| l + offset);
            out.diagnostics.push(d);
        }
    }
    // Windows overlap only by merging, so events come out in file order.
    out.events.dedup_by(|a, b| a.line == b.line);
    out
}

/// Whether the line at the start of `text` surely begins a record of its own, in any format:
/// it leads with a date-time (`2024-10-07 15:23:45`, `2024-10-07T15:45:50`, `[2024-…` of
/// Ray's C++ logs, `INFO 2024-…` of Serve's) or is a JSON object, once a `kubectl logs
/// --timestamps` stamp is set aside. A continuation line (a traceback, a Go stack, a CRI
/// partial line, a Docker JSON envelope) never does, so a hit on a line that starts a record
/// and is followed by one that does too is a record of one line.
fn starts_record(text: &[u8]) -> bool {
    let line = &text[..memchr::memchr(b'\n', text).unwrap_or(text.len())];
    let inner = strip_kubectl_stamp(line);
    if inner.starts_with(b"{\"") {
        return !inner.starts_with(b"{\"log\"");
    }
    let inner = inner.strip_prefix(b"[").unwrap_or(inner);
    // A level word before the date (`INFO 2024-…`).
    let level_end = inner
        .iter()
        .position(|b| !b.is_ascii_uppercase())
        .unwrap_or(inner.len());
    let inner = match inner.get(level_end) {
        Some(b' ') if level_end >= 4 => &inner[level_end + 1..],
        _ => inner,
    };
    date_time_led(inner)
}

/// `YYYY-MM-DD` then `T` or a space, then `HH:`.
fn date_time_led(b: &[u8]) -> bool {
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && matches!(b.get(10), Some(b'T' | b' '))
        && digits(11..13)
        && b.get(13) == Some(&b':')
}

/// The line after a `kubectl logs --timestamps` stamp (`2024-10-07T15:45:50.283123456Z `, an
/// RFC 3339 time ending in `Z` or an offset, then one space); the line itself when it has
/// none.
fn strip_kubectl_stamp(line: &[u8]) -> &[u8] {
    if !date_time_led(line) || line.get(10) != Some(&b'T') {
        return line;
    }
    let Some(space) = line.iter().take(40).position(|&b| b == b' ' || b == b'\t') else {
        return line;
    };
    let stamp = &line[..space];
    let zoned =
        stamp.ends_with(b"Z") || stamp.len() > 6 && matches!(stamp[stamp.len() - 6], b'+' | b'-');
    if line[space] == b' ' && zoned {
        &line[space + 1..]
    } else {
        line
    }
}

/// Walks back from `pos` (a line start, or the end of `text`) over up to `n` lines; returns
/// the start of the line reached and how many lines were stepped over.
fn back_lines(text: &[u8], pos: usize, n: usize) -> (usize, usize) {
    let mut at = pos;
    let mut stepped = 0;
    // From the end of a text that does not end in a newline, the unterminated last line
    // is the first one stepped over.
    while stepped < n && at > 0 {
        let search_end = if at == text.len() && text.last() != Some(&b'\n') {
            at
        } else {
            at - 1
        };
        at = memchr::memrchr(b'\n', &text[..search_end]).map_or(0, |i| i + 1);
        stepped += 1;
    }
    (at, stepped)
}

/// The byte after the `n`th line end from `pos`, or the end of `text`.
fn forward_lines(text: &[u8], pos: usize, n: usize) -> usize {
    memchr::memchr_iter(b'\n', &text[pos..])
        .nth(n.saturating_sub(1))
        .map_or(text.len(), |i| pos + i + 1)
}

fn count_lines(bytes: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
    match bytes.last() {
        Some(b'\n') | None => newlines,
        Some(_) => newlines + 1,
    }
}

const SECTION_START: &[u8] = b"==== START logs for container ";
const SECTION_END: &[u8] = b"==== END logs for container ";

/// `kubectl cluster-info dump` concatenates every container of a pod into one `logs.txt`,
/// each wrapped in START / END marker lines. Returns the byte ranges of the sections'
/// contents (between the markers) and of the marker lines.
fn split_cluster_info_sections(bytes: &[u8]) -> Option<Vec<(usize, usize)>> {
    if !bytes.starts_with(SECTION_START) {
        return None;
    }
    let mut sections = Vec::new();
    let mut pos = 0usize;
    let mut open: Option<usize> = None;
    while pos < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i + 1);
        let line = &bytes[pos..end];
        if line.starts_with(SECTION_START) {
            if let Some(start) = open.take() {
                sections.push((start, pos));
            }
            open = Some(end);
        } else if line.starts_with(SECTION_END) {
            if let Some(start) = open.take() {
                sections.push((start, pos));
            }
        }
        pos = end;
    }
    if let Some(start) = open {
        sections.push((start, bytes.len()));
    }
    Some(sections)
}

/// Parses each section as its own source, renumbering lines to the whole file. The marker
/// lines become events of their own so that no line is lost.
fn parse_sections(
    path: &str,
    bytes: &[u8],
    sections: &[(usize, usize)],
) -> (SourceKind, ParseOutput) {
    let mut out = ParseOutput::default();
    let mut first_kind = None;
    let mut covered = 0usize;
    for &(start, end) in sections {
        // Marker lines between the previous section and this one.
        push_raw_lines(bytes, covered, start, &mut out);
        let body = &bytes[start..end];
        let kind = classify(path, body);
        first_kind.get_or_insert(kind);
        let line_offset = count_lines(&bytes[..start]) as u32;
        let mut part = parse::parse(kind, body);
        for ev in &mut part.events {
            ev.line += line_offset;
            if ev.kind == SourceKind::Unknown {
                ev.kind = kind;
            }
        }
        for d in &mut part.diagnostics {
            d.line = d.line.map(|l| l + line_offset);
        }
        out.events.append(&mut part.events);
        out.diagnostics.append(&mut part.diagnostics);
        out.unparsed_lines += part.unparsed_lines;
        out.zone_samples.append(&mut part.zone_samples);
        covered = end;
    }
    push_raw_lines(bytes, covered, bytes.len(), &mut out);
    (first_kind.unwrap_or(SourceKind::Unknown), out)
}

fn push_raw_lines(bytes: &[u8], from: usize, to: usize, out: &mut ParseOutput) {
    if from >= to {
        return;
    }
    let first_line = count_lines(&bytes[..from]) as u32;
    for (no, raw) in parse::lines::split_lines(&bytes[from..to]) {
        let mut ev = Event::new(first_line + no, String::from_utf8_lossy(raw).into_owned());
        ev.component = "cluster-info".to_string();
        out.events.push(ev);
    }
}

/// The folders every path has in common (`b1000/` of an archive, then a troubleshoot
/// bundle's `support-bundle-…/` inside it), joined with `/`; `None` when there is none.
/// Stripping them all makes an archive and its extracted folder show the same paths.
fn common_root<'a>(paths: impl Iterator<Item = &'a str> + Clone) -> Option<String> {
    let mut prefix = String::new();
    loop {
        let mut it = paths
            .clone()
            .map(|p| p.strip_prefix(prefix.as_str()).unwrap_or(p));
        let first = it.next()?;
        let Some((root, _)) = first.split_once('/') else {
            break;
        };
        if !it.all(|p| p.split_once('/').is_some_and(|(r, _)| r == root)) {
            break;
        }
        prefix.push_str(root);
        prefix.push('/');
    }
    let root = prefix.trim_end_matches('/');
    (!root.is_empty()).then(|| root.to_string())
}

fn strip_root<'a>(path: &'a str, root: &str) -> &'a str {
    path.strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_utf16() {
        let mut bin = vec![0u8; 100];
        bin.extend_from_slice(b"ELF");
        assert!(binary_content(&bin).is_some());
        assert!(binary_content(b"2024-01-01 00:00:00,000\tINFO x.py:1 -- hi\n").is_none());
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Name: x\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert!(binary_content(&utf16).is_none());
        assert_eq!(decode_utf16(&utf16).as_deref(), Some(&b"Name: x\n"[..]));
    }

    #[test]
    fn pieces_end_at_line_ends_as_a_stream_is_cut() {
        let text = b"aaaa\nbbbb\ncccc\n";
        assert_eq!(piece_end(text, 0, 7), 5);
        assert_eq!(piece_end(text, 5, 7), 10);
        assert_eq!(piece_end(text, 10, 7), 15);
        // A line longer than the piece: the piece runs on to the last line end read by
        // then (64 KiB further), or to the end of the file.
        assert_eq!(piece_end(b"aaaaaaaaaa\nb", 0, 4), 12);
        let mut long = b"aaaaaaaaaa\n".to_vec();
        long.extend(std::iter::repeat_n(b'z', 70_000));
        assert_eq!(piece_end(&long, 0, 4), 11);
        assert_eq!(piece_end(b"aaaaaaaaaa", 0, 4), 10);
    }

    #[test]
    fn record_starts_in_every_format() {
        for line in [
            "2024-10-07T15:45:50.283Z\tINFO\tcontrollers.RayCluster\treconcilePods",
            "{\"level\":\"info\",\"ts\":\"2024-10-07T15:45:50.283Z\"}",
            "2024-10-07 15:23:45,443\tINFO worker.py:1 -- hi",
            "[2024-10-07 15:23:45,443 I 71 71] (raylet) main.cc:1: hi",
            "INFO 2024-10-07 15:23:03,773 fruit_app_PearStand mdia7xll replica.py:1017 - Started",
            "2024-10-07T15:45:50.283123456Z 2024-10-07 15:23:45,443\tERROR x.py:1 -- boom",
        ] {
            assert!(starts_record(line.as_bytes()), "{line}");
        }
        for line in [
            "Traceback (most recent call last):",
            "  File \"/app/x.py\", line 3, in <module>",
            "\t/go/pkg/mod/sigs.k8s.io/controller-runtime/pkg/internal/controller.go:227",
            "ValueError: boom",
            "2024-10-07T15:45:50.283123456Z Traceback (most recent call last):",
            "2024-10-07T15:45:50.283123456Z stdout P partial",
            "{\"log\":\"  File x\\n\",\"stream\":\"stderr\"}",
            "I1007 15:45:50.283       1 controller.go:1] hi",
            "",
        ] {
            assert!(!starts_record(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn lines_are_walked_back_and_forth() {
        let text = b"a\nb\nc";
        assert_eq!(back_lines(text, text.len(), 1), (4, 1));
        assert_eq!(back_lines(text, text.len(), 2), (2, 2));
        assert_eq!(back_lines(text, text.len(), 9), (0, 3));
        assert_eq!(back_lines(text, 4, 1), (2, 1));
        assert_eq!(back_lines(b"a\nb\n", 4, 1), (2, 1));
        assert_eq!(forward_lines(text, 0, 1), 2);
        assert_eq!(forward_lines(text, 0, 2), 4);
        assert_eq!(forward_lines(text, 0, 3), text.len());
        // The context carried to the next piece: the last lines, reaching into the one
        // before when the piece is short.
        assert_eq!(tail_lines(b"x\ny\n", b"a\nb\n", 1), b"b\n");
        assert_eq!(tail_lines(b"x\ny\n", b"a\nb\n", 3), b"y\na\nb\n");
    }

    #[test]
    fn common_root_only_when_shared() {
        assert_eq!(
            common_root(["b/x", "b/y/z"].into_iter()),
            Some("b".to_string())
        );
        assert_eq!(common_root(["b/x", "c/y"].into_iter()), None);
        assert_eq!(common_root(["x"].into_iter()), None);
    }

    #[test]
    fn cluster_info_sections_keep_every_line() {
        let text = "==== START logs for container wait-gcs-ready of pod default/w ====\n\
                    0 seconds elapsed: Waiting for GCS to be ready.\n\
                    ==== END logs for container wait-gcs-ready of pod default/w ====\n\
                    ==== START logs for container ray-worker of pod default/w ====\n\
                    2023-07-10 11:24:38,590\tWARNING agent.py:531 -- Exiting with SIGTERM immediately...\n\
                    ==== END logs for container ray-worker of pod default/w ====\n";
        let sections = split_cluster_info_sections(text.as_bytes()).unwrap_or_default();
        assert_eq!(sections.len(), 2);
        let (kind, out) = parse_sections("ns/w/logs.txt", text.as_bytes(), &sections);
        assert_eq!(kind, SourceKind::InitContainer);
        let lines: u32 = out.events.iter().map(|e| e.n_lines).sum();
        assert_eq!(lines, 6);
        let starts: Vec<u32> = out.events.iter().map(|e| e.line).collect();
        assert_eq!(starts, vec![1, 2, 3, 4, 5, 6]);
    }
}
