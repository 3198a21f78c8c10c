//! Loading a bundle: walk the container, classify each file, parse files in parallel, and
//! gather everything in a stable order.
//!
//! This is the one place that decides threading (rayon) for a single bundle. Results do not
//! depend on the thread count or on the order the container yields files: files are sorted by
//! path before ids are given out. Paths are shown relative to the bundle root, with a folder
//! that every file shares (the archive's top-level folder) stripped, so that a `.tar.gz`, a
//! `.zip` and the extracted directory give the same paths.

use std::path::Path;
use std::sync::Mutex;

use crate::bundle::{self, Entry, Limits, OpenError};
use crate::classify::classify;
use crate::diag::Diagnostic;
use crate::event::{Event, FileId, Micros, SourceKind};
use crate::parse::{self, Format, ParseOutput};
use crate::rules::sieve::{Sieve, LOOKAHEAD_LINES, LOOKBACK_LINES};

/// How to load a bundle.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub limits: Limits,
    /// For `analyze`: parse only the records around lines a rule could match (see
    /// `rules::sieve`). `None` parses everything (the timeline).
    pub sieve: Option<std::sync::Arc<Sieve>>,
    /// Parser threads; 1 parses on the calling thread.
    pub threads: usize,
}

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

/// Bytes of bundle content queued or being parsed at once (one larger file still passes alone).
const IN_FLIGHT_BYTES: usize = 192 << 20;

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

/// Opens and parses a bundle. Fails only when the bundle cannot be opened at all.
pub fn load(path: &Path, cfg: &LoadConfig) -> Result<Loaded, OpenError> {
    let results: Mutex<Vec<Parsed>> = Mutex::new(Vec::new());
    let summary = if cfg.threads <= 1 {
        bundle::walk(path, &cfg.limits, &mut |entry| {
            let parsed = parse_entry(entry, cfg.sieve.as_deref());
            if let Ok(mut all) = results.lock() {
                all.push(parsed);
            }
        })?
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
            bundle::walk(path, &cfg.limits, &mut |entry: Entry| {
                let size = entry.bytes.len();
                in_flight.acquire(size);
                let results = &results;
                let sieve = cfg.sieve.clone();
                let in_flight = &in_flight;
                scope.spawn(move |_| {
                    let parsed = parse_entry(entry, sieve.as_deref());
                    in_flight.release(size);
                    if let Ok(mut all) = results.lock() {
                        all.push(parsed);
                    }
                });
            })
        })?
    };
    let mut parsed = results.into_inner().unwrap_or_default();
    parsed.sort_by(|a, b| a.path.cmp(&b.path));

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

fn parse_entry(entry: Entry, sieve: Option<&Sieve>) -> Parsed {
    let raw: &[u8] = &entry.bytes;
    if let Some(problem) = binary_content(raw) {
        let mut out = ParseOutput::default();
        out.diagnostics
            .push(Diagnostic::for_file(String::new(), problem));
        return Parsed {
            path: entry.path,
            mtime: entry.mtime,
            bytes: raw.len() as u64,
            lines: 0,
            kind: SourceKind::Unknown,
            out,
        };
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
    matches!(
        Format::of(kind),
        Format::Describe | Format::KubeEvents | Format::KubeObject
    )
}

/// Lines parsed at the start of every file: the first time and the zone evidence.
const HEAD_LINES: usize = 2000;
/// Lines parsed at the end of every file: the last time.
const TAIL_LINES: usize = 40;

/// Parses only the windows around the sieve's hits, plus the head and tail of the file, and
/// keeps the records that hold a hit, the file's first and last timed records and the zone
/// samples of the head.
fn parse_sieved(kind: SourceKind, bytes: &[u8], sieve: &Sieve) -> ParseOutput {
    let hits = sieve.hit_lines(kind, bytes);
    let starts = line_starts(bytes);
    let n_lines = starts.len();
    // Windows of line indices [from, to), merged.
    let mut windows: Vec<(usize, usize)> = Vec::new();
    let mut push = |from: usize, to: usize| match windows.last_mut() {
        Some(last) if from <= last.1 => last.1 = last.1.max(to),
        _ => windows.push((from, to)),
    };
    push(0, HEAD_LINES.min(n_lines));
    for &h in &hits {
        push(
            h.saturating_sub(LOOKBACK_LINES),
            (h + LOOKAHEAD_LINES + 1).min(n_lines),
        );
    }
    push(n_lines.saturating_sub(TAIL_LINES), n_lines);

    let mut out = ParseOutput::default();
    let mut hit_iter = hits.iter().peekable();
    for (wi, &(from, to)) in windows.iter().enumerate() {
        let start = starts.get(from).copied().unwrap_or(bytes.len());
        let end = starts.get(to).copied().unwrap_or(bytes.len());
        let part = parse::parse(kind, &bytes[start..end]);
        let offset = from as u32;
        let first_window = wi == 0;
        let last_window = wi + 1 == windows.len();
        if first_window {
            out.zone_samples.extend(&part.zone_samples);
        }
        out.unparsed_lines += part.unparsed_lines;
        let mut part_events = part.events;
        let first_timed = if first_window {
            part_events.iter().position(|e| e.raw_time.is_some())
        } else {
            None
        };
        let last_timed = if last_window {
            part_events.iter().rposition(|e| e.raw_time.is_some())
        } else {
            None
        };
        for (idx, mut ev) in part_events.drain(..).enumerate() {
            ev.line += offset;
            // Lines of this record, as 0-based indices.
            let lo = (ev.line - 1) as usize;
            let hi = lo + ev.n_lines.max(1) as usize;
            while hit_iter.peek().is_some_and(|h| **h < lo) {
                hit_iter.next();
            }
            let holds_hit = hit_iter.peek().is_some_and(|h| **h < hi);
            if holds_hit || Some(idx) == first_timed || Some(idx) == last_timed {
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

/// Byte offset where each line starts.
fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(bytes.len() / 100 + 1);
    if !bytes.is_empty() {
        starts.push(0);
    }
    for nl in memchr::memchr_iter(b'\n', bytes) {
        if nl + 1 < bytes.len() {
            starts.push(nl + 1);
        }
    }
    starts
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
