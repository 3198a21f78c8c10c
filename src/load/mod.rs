//! Loading a bundle: walk the container, classify each file, parse files in parallel, and
//! gather everything in a stable order.
//!
//! This is the one place that decides threading (rayon) for a single bundle. Results do not
//! depend on the thread count or on the order the container yields files: files are sorted by
//! path before ids are given out. Paths are shown relative to the bundle root, with a folder
//! that every file shares (the archive's top-level folder) stripped, so that a `.tar.gz`, a
//! `.zip` and the extracted directory give the same paths.
//!
//! The parts, in the order a byte meets them:
//! - `router`: classifies each file on its first piece and turns the walk's entries into jobs
//!   (a file whole, or the pieces of a sieved file with the lines around each);
//! - `fed`: a Kubernetes document too large to gather, parsed as its pieces arrive;
//! - `gate`: the byte budget that makes the reader wait for the parsers;
//! - `pieces`: the jobs, what they give, and the joining of a file's pieces in order;
//! - `windows`: the sieved parse of one piece (the windows around hits, the head, the tail);
//! - `sections`: `kubectl cluster-info dump` logs, one section per container;
//! - `stream`: the full parse in pieces, each file's events handed on in file order.

use std::path::Path;
use std::sync::{Arc, Mutex};

mod fed;
mod fold;
mod gate;
pub mod mirror;
mod pieces;
mod router;
mod sections;
mod stream;
mod windows;

use gate::walk_in_parallel;
use pieces::{Assembler, PIECE_BYTES};
use router::Router;
use sections::{parse_sections, split_cluster_info_sections};
use windows::parse_sieved;

pub use stream::{stream, stream_at, stream_rendered, Batch, Render, RenderFn, Rendered, Streamed};

use crate::bundle::{self, Buffers, Entry, Limits, OpenError};
use crate::classify::classify;
use crate::diag::Diagnostic;
use crate::event::{Event, FileId, Micros, SourceKind};
use crate::parse::{self, Format, ParseOutput};
use crate::redact::Redactor;
use crate::rules::sieve::Sieve;

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
    /// Records of this file that copy a record of another file of its process (`mirror`),
    /// not counted in `events`, and the file that holds the first one's original.
    pub mirrored: u64,
    pub mirror_of: Option<FileId>,
}

impl FileInfo {
    /// A file of `kind` at `path`, nothing read of it yet.
    pub fn new(id: FileId, path: String, kind: SourceKind) -> FileInfo {
        FileInfo {
            id,
            path,
            kind,
            bytes: 0,
            lines: 0,
            events: 0,
            unparsed_lines: 0,
            mtime: None,
            zone_samples: Vec::new(),
            mirrored: 0,
            mirror_of: None,
        }
    }

    /// Redacts the paths of files (host names and IPs can be part of a file name).
    pub fn redact_all(files: &mut [FileInfo], r: &mut Redactor) {
        for f in files {
            r.in_place(&mut f.path);
        }
    }
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
    /// Events of each file, indexed by file id, in file order; copies of records of another
    /// file (`mirror`) left out.
    pub events: Vec<Vec<Event>>,
    pub diagnostics: Vec<Diagnostic>,
    /// Which records were written to two files of their process.
    pub mirrors: mirror::Mirrors,
}

pub(super) struct Parsed {
    path: String,
    mtime: Option<i64>,
    bytes: u64,
    lines: u64,
    kind: SourceKind,
    out: ParseOutput,
    /// Of a sieved read, the hit records that may be mirrored, those folded away included
    /// (`windows::Sieved::keyed`); a read that does not fold leaves it empty.
    keyed: Vec<mirror::FoldedKey>,
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
        keyed: Vec::new(),
    }
}

/// Opens and parses a bundle. Fails only when the bundle cannot be opened at all.
pub fn load(path: &Path, cfg: &LoadConfig) -> Result<Loaded, OpenError> {
    let results: Mutex<Assembler> = Mutex::new(Assembler::default());
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
    let summary = walk_in_parallel(
        path,
        cfg,
        piece_bytes,
        &buffers,
        &mut |entry, sink| {
            router.route(entry, &mut |job| {
                let size = job.size();
                sink(job, size);
            })
        },
        &|job| {
            let part = job.run();
            if let Ok(mut all) = results.lock() {
                all.add(part);
            }
        },
    )?;
    let parsed = results.into_inner().unwrap_or_default().finish();

    let root_name = common_root(parsed.iter().map(|p| p.path.as_str()));
    let mut files = Vec::with_capacity(parsed.len());
    let mut events = Vec::with_capacity(parsed.len());
    let mut keyed = Vec::with_capacity(parsed.len());
    let mut diagnostics = summary.diagnostics;
    for (idx, p) in parsed.into_iter().enumerate() {
        keyed.push(p.keyed);
        let id = idx as FileId;
        let shown = p.path.clone();
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
            events: out.events.iter().map(Event::weight).sum(),
            unparsed_lines: out.unparsed_lines,
            mtime: p.mtime,
            zone_samples: out.zone_samples,
            mirrored: 0,
            mirror_of: None,
        });
        events.push(out.events);
    }
    let mirrors = mirror::settle(&mut files, &mut events, &mut keyed);
    Ok(Loaded {
        bundle_path: path.display().to_string(),
        container: summary.container,
        root_name,
        files,
        events,
        diagnostics,
        mirrors,
    })
}

fn parse_entry(entry: Entry, sieve: Option<&Sieve>) -> Parsed {
    parse_entry_at(entry, sieve, &|_, _| parse::Detail::Full)
}

/// [`parse_entry`], a log without the sieve built at the detail `detail_of` gives its path
/// and kind.
fn parse_entry_at(entry: Entry, sieve: Option<&Sieve>, detail_of: &DetailOf<'_>) -> Parsed {
    let raw: &[u8] = &entry.bytes;
    let cut_bytes = bundle::Cut::skipped_bytes(&entry.cuts);
    if let Some(problem) = binary_content(raw) {
        return skipped(
            entry.path,
            entry.mtime,
            raw.len() as u64 + cut_bytes,
            problem,
        );
    }
    let decoded = decode_utf16(raw);
    let bytes: &[u8] = decoded.as_deref().unwrap_or(raw);
    let lines = count_lines(bytes);
    let mut keyed = Vec::new();
    let (kind, mut out) = match split_cluster_info_sections(bytes) {
        Some(sections) => parse_sections(&entry.path, bytes, &sections),
        None => {
            let kind = classify(&entry.path, bytes);
            match sieve {
                Some(sieve) if !whole_document(kind) && !sieve.needs_full(kind) => {
                    let (out, hits) = parse_sieved(kind, bytes, sieve);
                    keyed = hits;
                    (kind, out)
                }
                // `analyze` folds the rows of huge events tables (`parse::row_fold`).
                Some(_) => (kind, parse::parse_folding(kind, bytes)),
                None => (
                    kind,
                    parse::parse_detailed(kind, bytes, detail_of(&entry.path, kind)),
                ),
            }
        }
    };
    out.diagnostics
        .extend(bundle::Cut::diagnostics(&entry.cuts, raw, 1));
    Parsed {
        path: entry.path,
        mtime: entry.mtime,
        bytes: bytes.len() as u64 + cut_bytes,
        lines,
        kind,
        out,
        keyed,
    }
}

/// How much of each record of a file (path as read, kind) a streamed read builds.
pub type DetailOf<'a> = dyn Fn(&str, SourceKind) -> parse::Detail + Sync + 'a;

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

fn count_lines(bytes: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
    match bytes.last() {
        Some(b'\n') | None => newlines,
        Some(_) => newlines + 1,
    }
}

/// The folder every path shares (`support-bundle-2025-03-14T09_12_44` for troubleshoot), which
/// may date the capture. Paths are shown whole: they are what the user opens after unpacking.
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

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::router::{piece_end, tail_lines};
    use super::sections::{parse_sections, split_cluster_info_sections};
    use super::windows::{back_lines, forward_lines, starts_record};
    use super::*;
    use crate::bundle::Limits;

    /// A describe and an events table past [`fed::FEED_AFTER`], read by `analyze` (sieved, in
    /// pieces): fed as they arrive, and the same events, lines, bytes and diagnostics as a
    /// whole parse of each gives.
    #[test]
    fn huge_kubernetes_documents_are_fed_as_a_whole_parse_reads_them() {
        #![allow(clippy::unwrap_used)]
        let dir = std::env::temp_dir().join(format!("raysift-fed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut describe = String::from(
            "Name:         ray-head\nNamespace:    default\nStart Time:   Mon, 07 Oct 2024 08:00:00 +0000\n\
             IP:           10.0.1.23\nContainers:\n  ray-head:\n    Image:  rayproject/ray:2.9.3\n\
             QoS Class:    Guaranteed\nEvents:\n  Type     Reason   Age   From     Message\n\
             \x20 ----     ------   ----  ----     -------\n",
        );
        let mut table = String::from("LAST SEEN  TYPE     REASON   OBJECT          MESSAGE\n");
        let mut i = 0u64;
        while describe.len() <= fed::FEED_AFTER + 3 * PIECE_BYTES {
            let pod = format!("pod/w-{:05}", i % 40_000);
            describe.push_str(&format!(
                "  Warning  BackOff  {}s  kubelet  Back-off restarting failed container in {pod}\n",
                i % 90
            ));
            if i % 1000 == 7 {
                table.push('\n');
            }
            table.push_str(&format!(
                "{}s  Warning  BackOff  {pod}  Back-off restarting failed container {}\n",
                i % 90,
                i % 3
            ));
            i += 1;
        }
        // A last line without its newline.
        describe.push_str("  Normal   Pulled   1s   kubelet  Image pulled");
        std::fs::write(dir.join("describe-head.txt"), &describe).unwrap();
        std::fs::write(dir.join("events.txt"), &table).unwrap();
        let rules = crate::rules::library::builtin().unwrap();
        let cfg = LoadConfig {
            limits: Limits::DEFAULT,
            sieve: Some(Arc::new(Sieve::new(&rules))),
            threads: 2,
            progress: None,
        };
        let loaded = load(&dir, &cfg).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        // The router feeds the describe once past the limit, and hands on one parsed file.
        let mut router = Router {
            sieve: cfg.sieve.clone(),
            open: None,
            buffers: Arc::new(Buffers::default()),
        };
        let (bytes, mut start, mut index, mut fed) = (describe.as_bytes(), 0, 0, false);
        let mut jobs = Vec::new();
        while start < bytes.len() {
            let end = router::piece_end(bytes, start, PIECE_BYTES);
            let entry = Entry {
                path: "describe-head.txt".into(),
                mtime: None,
                bytes: bundle::Bytes::Owned(bytes[start..end].to_vec()),
                piece: bundle::Piece {
                    index,
                    last: end == bytes.len(),
                },
                cuts: Vec::new(),
            };
            router.route(entry, &mut |job| jobs.push(job));
            fed |= router
                .open
                .as_ref()
                .is_some_and(|o| matches!(o.mode, router::Mode::Fed(_)));
            (start, index) = (end, index + 1);
        }
        assert!(fed, "the describe was gathered whole");
        assert!(matches!(jobs.as_slice(), [pieces::Job::Done(_)]));
        for (name, text) in [("describe-head.txt", &describe), ("events.txt", &table)] {
            let bytes = text.as_bytes();
            let info = loaded
                .files
                .iter()
                .find(|f| f.path.ends_with(name))
                .unwrap();
            assert!(parse::Feed::reads(info.kind), "{name}: {:?}", info.kind);
            let whole = parse::parse_folding(info.kind, bytes);
            assert_eq!(info.lines, count_lines(bytes), "{name}");
            assert_eq!(info.bytes, bytes.len() as u64, "{name}");
            assert_eq!(info.unparsed_lines, whole.unparsed_lines, "{name}");
            let got: Vec<Event> = loaded.events[info.id as usize]
                .iter()
                .map(|e| Event {
                    file: 0,
                    ..e.clone()
                })
                .collect();
            let want: Vec<Event> = whole
                .events
                .into_iter()
                .map(|e| Event {
                    kind: if e.kind == SourceKind::Unknown {
                        info.kind
                    } else {
                        e.kind
                    },
                    ..e
                })
                .collect();
            assert!(
                got.len() * 50 < i as usize,
                "{name}: {} of {i} rows kept",
                got.len()
            );
            assert_eq!(got, want, "{name}");
        }
    }

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
            "I1007 15:45:50.283       1 controller.go:1] hi",
            "E1127 12:35:38.133197       1 reflector.go:147] forbidden",
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
            "Info 15:45:50 not a klog header",
            "",
            // A frame of an absl dump, written again through Ray's logger (Ray 2.9.3).
            "[2026-12-06 08:22:02,681 E 27804 27804] logging.cc:361: PC: @     0x7fcca9b26f36  (unknown)  epoll_wait",
            "[2026-12-06 08:22:02,682 E 27804 27804] logging.cc:361:     @     0x7fcca9a5a050  139169624  (unknown)",
            "*** SIGTERM received at time=1796545322 on cpu 0 ***",
            "Fatal Python error: Segmentation fault",
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
