//! One parser per on-disk format. Each is a pure function over the bytes of one file that
//! fills a [`ParseOutput`]: events, diagnostics, a count of lines nobody understood, and
//! samples of the container's time zone.
//!
//! Invariants: parsers do no I/O, spawn no threads, never panic and never drop a line. A line
//! no grammar recognises becomes an event holding its raw text, with no time, and is counted
//! in `unparsed_lines`. Parsers leave `Event::file` and `Event::kind` to the pipeline.

pub mod abort;
pub mod block_time;
pub mod describe;
pub mod export_event;
pub mod fold_key;
pub mod generic;
pub mod kube_events;
pub mod kube_object;
pub mod kube_table;
pub mod lines;
pub mod operator;
pub mod primitives;
pub mod python_exception;
pub mod ray_cpp;
pub mod ray_event;
pub mod ray_one_event;
pub mod ray_python;
pub mod ray_record;
pub mod row_fold;
pub mod serve;
pub mod stamp;
#[cfg(test)]
pub(crate) mod testing;
pub mod tree;
pub mod worker;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::diag::Diagnostic;
use crate::event::{Event, Level, Micros, RawTime, SourceKind};

/// What a parser produced from one file.
#[derive(Debug, Default)]
pub struct ParseOutput {
    pub events: Vec<Event>,
    pub diagnostics: Vec<Diagnostic>,
    /// Lines that stood alone with no time and no grammar.
    pub unparsed_lines: u64,
    /// `local - utc` in microseconds, for lines that carried both a zone-less Ray time and a
    /// UTC time (a `kubectl logs --timestamps` prefix, an access-log stamp).
    pub zone_samples: Vec<Micros>,
    /// How much of each record to build: set before parsing, read by the parser.
    pub detail: Detail,
    /// Work on each record as soon as it is finished, if any: set before parsing.
    pub finish: Option<Box<Finish>>,
}

impl ParseOutput {
    /// Appends a finished record, after [`Finish`] has done its work on it (and on any
    /// record pushed before without it).
    pub fn push_event(&mut self, mut ev: Event) {
        let ParseOutput { events, finish, .. } = self;
        if let Some(f) = finish {
            f.catch_up(events);
            f.take(&mut ev);
        }
        events.push(ev);
    }
}

/// What a read does to each record on the thread that parses it, as soon as the record is
/// finished (`load::Render`): writes its text and, when nobody reads the text again, frees
/// it. Done there rather than over the whole stretch once parsed, each record's strings are
/// freed while the next one's are built, and the allocator hands the same blocks back: freed
/// in bulk, millions of small blocks overflowed its per-thread caches.
#[derive(Debug)]
pub struct Finish {
    /// Writes a record's text after the text of those before it.
    pub render: fn(&Event, &mut Vec<u8>),
    /// The kind a record without its own is given before it is written.
    pub kind: SourceKind,
    /// Whether a record's message and fields are freed once it is written: but a record
    /// with a `path` field, which says when and how a bundle was collected.
    pub thin: bool,
    /// The text written of every record so far, one after the other.
    pub bytes: Vec<u8>,
    /// Where each record's text ends in `bytes` (a light record writes none).
    pub ends: Vec<usize>,
}

impl Finish {
    pub fn new(render: fn(&Event, &mut Vec<u8>), kind: SourceKind, thin: bool) -> Finish {
        Finish {
            render,
            kind,
            thin,
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// Does its work on the records of `events` it has not seen yet.
    pub fn catch_up(&mut self, events: &mut [Event]) {
        for ev in events.iter_mut().skip(self.ends.len()) {
            self.take(ev);
        }
    }

    fn take(&mut self, ev: &mut Event) {
        if ev.kind == SourceKind::Unknown {
            ev.kind = self.kind;
        }
        if !ev.light {
            (self.render)(ev, &mut self.bytes);
        }
        self.ends.push(self.bytes.len());
        if self.thin && ev.field("path").is_none() {
            ev.message = String::new();
            ev.fields = Vec::new();
        }
    }
}

/// How much of each record the log parsers build. Which lines start records, their times,
/// levels and line counts, the diagnostics and the zone samples are the same at every detail;
/// a light record (`Event::light`) just has no component, message or fields. The commands
/// that only count and place events (`--inventory`, the HTML page's histogram) read every
/// line; building each record's strings was most of their time.
///
/// Only the text heads of the Ray, Serve and C++ logs and the operator's console lines build
/// light records; JSON records, records without a time, Kubernetes text and objects and
/// worker output are always whole.
#[derive(Clone, Debug, Default)]
pub enum Detail {
    #[default]
    Full,
    /// Every timed record light.
    Light,
    /// Whole when the record's time falls in one of the spans, light otherwise.
    Near(Arc<Spans>),
    /// Whole at this level or above, and when a line continues the record (it may hold a
    /// traceback, which the timeline shows at `error`: `explain::shown_level`); light
    /// otherwise.
    AtLeast(Level),
}

impl Detail {
    /// Whether a record parsed at `t` and `level` is built whole.
    pub fn full_at(&self, t: Option<&RawTime>, level: Level) -> bool {
        match self {
            Detail::Full => true,
            Detail::Light => t.is_none(),
            Detail::Near(spans) => spans.holds(t),
            Detail::AtLeast(min) => t.is_none() || level >= *min,
        }
    }

    /// Whether a light record is built again whole when a line continues it.
    pub fn whole_when_continued(&self) -> bool {
        matches!(self, Detail::AtLeast(_))
    }
}

/// UTC spans, for [`Detail::Near`], and the file's zone (`local - utc`) when known.
#[derive(Debug)]
pub struct Spans {
    pub offset: Option<Micros>,
    /// Sorted, not overlapping.
    spans: Arc<[(Micros, Micros)]>,
    /// Where the last time [`Spans::holds`] placed fell among the spans: a file's times
    /// mostly go forward, so the next one mostly falls there too, and a search for each of
    /// millions of records was the light read's costliest step.
    hint: AtomicUsize,
}

impl Clone for Spans {
    fn clone(&self) -> Spans {
        Spans {
            offset: self.offset,
            spans: Arc::clone(&self.spans),
            hint: AtomicUsize::new(self.hint.load(Ordering::Relaxed)),
        }
    }
}

impl Spans {
    /// Sorts and joins `spans` (UTC); [`Spans::zoned`] gives them a file's zone.
    pub fn new(mut spans: Vec<(Micros, Micros)>) -> Spans {
        spans.sort_unstable();
        let mut joined: Vec<(Micros, Micros)> = Vec::with_capacity(spans.len());
        for (lo, hi) in spans {
            match joined.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => joined.push((lo, hi)),
            }
        }
        Spans {
            offset: None,
            spans: joined.into(),
            hint: AtomicUsize::new(0),
        }
    }

    /// The same spans, for a file whose zone-less times are `offset` (`local - utc`) ahead
    /// of UTC.
    pub fn zoned(&self, offset: Micros) -> Spans {
        Spans {
            offset: Some(offset),
            spans: Arc::clone(&self.spans),
            hint: AtomicUsize::new(0),
        }
    }

    /// Whether the UTC times `lo..=hi` all lie in one span.
    pub fn cover(&self, lo: Micros, hi: Micros) -> bool {
        self.around(lo).is_some_and(|(_, end)| hi <= end)
    }

    /// The span the UTC time `t` lies in.
    pub fn around(&self, t: Micros) -> Option<(Micros, Micros)> {
        let i = self.spans.partition_point(|&(_, end)| end < t);
        self.spans.get(i).copied().filter(|&(start, _)| start <= t)
    }

    /// Whether `t` may fall in a span: a zone-less time of a file whose zone is unknown, a
    /// year-less stamp or an age may, and so does no time at all.
    fn holds(&self, t: Option<&RawTime>) -> bool {
        let utc = match t {
            Some(RawTime::Utc(t)) => *t,
            Some(RawTime::Naive(t)) => match self.offset {
                Some(offset) => t - offset,
                None => return true,
            },
            _ => return true,
        };
        // The first span that does not end before `utc`: the hint when the span before it
        // ends before `utc` and the hinted one does not.
        let spans = &*self.spans;
        let h = self.hint.load(Ordering::Relaxed);
        let fits = h <= spans.len()
            && h.checked_sub(1)
                .and_then(|p| spans.get(p))
                .is_none_or(|&(_, hi)| hi < utc)
            && spans.get(h).is_none_or(|&(_, hi)| hi >= utc);
        let i = if fits {
            h
        } else {
            let i = spans.partition_point(|&(_, hi)| hi < utc);
            self.hint.store(i, Ordering::Relaxed);
            i
        };
        spans.get(i).is_some_and(|&(lo, _)| lo <= utc)
    }
}

/// The grammar family a source kind is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Operator,
    RayPython,
    RayCpp,
    Serve,
    Worker,
    Describe,
    KubeEvents,
    KubeTable,
    KubeObject,
    RayEvent,
    RayExportEvent,
    Generic,
}

impl Format {
    /// Kubernetes text and objects (describe, events and `get` tables, YAML/JSON): their
    /// meaning depends on the whole document, and they state facts rather than log records.
    pub fn is_kubernetes(self) -> bool {
        matches!(
            self,
            Format::Describe | Format::KubeEvents | Format::KubeTable | Format::KubeObject
        )
    }

    pub fn of(kind: SourceKind) -> Format {
        use SourceKind as K;
        match kind {
            K::Operator => Format::Operator,
            K::Dashboard
            | K::DashboardAgent
            | K::Autoscaler
            | K::RuntimeEnvAgent
            | K::RuntimeEnvSetup
            | K::LogMonitor
            | K::RayPython => Format::RayPython,
            K::Raylet | K::GcsServer | K::CoreWorker => Format::RayCpp,
            K::ServeController | K::ServeProxy | K::ServeReplica => Format::Serve,
            K::Worker | K::JobDriver | K::RayContainer | K::InitContainer => Format::Worker,
            K::DescribeRayService
            | K::DescribeRayCluster
            | K::DescribeRayJob
            | K::DescribePod
            | K::DescribeNode
            | K::DescribeOther => Format::Describe,
            K::KubeEvents => Format::KubeEvents,
            K::KubeTable => Format::KubeTable,
            K::KubeObject | K::BundleMeta => Format::KubeObject,
            K::RayEvent => Format::RayEvent,
            K::RayExportEvent => Format::RayExportEvent,
            K::Unknown => Format::Generic,
        }
    }
}

/// Parses one file's bytes as `kind`.
pub fn parse(kind: SourceKind, input: &[u8]) -> ParseOutput {
    parse_with(kind, input, false)
}

/// Parses one file's bytes as `kind` for `analyze`: as [`parse`], but the rows of a huge
/// events table that repeat an earlier row are folded into it (see [`fold`]).
pub fn parse_folding(kind: SourceKind, input: &[u8]) -> ParseOutput {
    parse_with(kind, input, true)
}

fn parse_with(kind: SourceKind, input: &[u8], fold: bool) -> ParseOutput {
    parse_at(kind, input, fold, Detail::Full, None)
}

/// A Kubernetes document parsed as its pieces arrive, for the formats read line by line with
/// little state (a describe, a `kubectl get events` table): what [`parse_folding`] (or
/// [`parse`]) gives of the whole, without holding the whole. A describe of a million
/// `Events:` rows then costs its folds, not its bytes.
pub struct Feed {
    reader: FeedReader,
    fold: bool,
    out: ParseOutput,
    /// Lines read so far.
    lines: u32,
}

enum FeedReader {
    Describe(Box<describe::Reader>),
    Events(kube_events::Reader),
}

impl Feed {
    /// Whether a document of `kind` can be fed: a describe or a `kubectl get events` table.
    pub fn reads(kind: SourceKind) -> bool {
        matches!(Format::of(kind), Format::Describe | Format::KubeEvents)
    }

    /// A feed for a document of `kind`, folding repeated rows when `fold`; `None` for the
    /// formats that must be read whole (objects, other tables, logs).
    pub fn new(kind: SourceKind, fold: bool) -> Option<Feed> {
        let reader = match Format::of(kind) {
            Format::Describe => FeedReader::Describe(Box::new(describe::Reader::new(fold))),
            Format::KubeEvents => FeedReader::Events(kube_events::Reader::new(fold)),
            _ => return None,
        };
        Some(Feed {
            reader,
            fold,
            out: ParseOutput::default(),
            lines: 0,
        })
    }

    /// Reads the next piece of the document: whole lines (the last piece of a document may
    /// end without a newline).
    pub fn feed(&mut self, piece: &[u8]) {
        let out = &mut self.out;
        match &mut self.reader {
            FeedReader::Describe(r) => r.lines(piece, self.lines, out),
            FeedReader::Events(r) => r.lines(piece, self.lines, out),
        }
        let newlines = memchr::memchr_iter(b'\n', piece).count();
        self.lines = self
            .lines
            .saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
    }

    /// Lines read so far: the number of the line before the next piece's first.
    pub fn lines(&self) -> u32 {
        self.lines
    }

    /// The events read so far that nothing after can change, and the unparsed lines among
    /// them, taken out of the feed: without folding, every event a describe has emitted (its
    /// rows go as they are read), and all but the last of a table (a blank line lengthens
    /// it). Diagnostics stay for [`Feed::finish`]. With folding, a later row may still fold
    /// into any event: nothing is settled before the end.
    pub fn take_settled(&mut self) -> ParseOutput {
        let keep = match &self.reader {
            _ if self.fold => return ParseOutput::default(),
            FeedReader::Describe(_) => 0,
            FeedReader::Events(_) => 1,
        };
        let settled = self.out.events.len().saturating_sub(keep);
        // The settled events leave in the vector that holds them, the kept one in a new one.
        let kept = self.out.events.split_off(settled);
        let events = std::mem::replace(&mut self.out.events, kept);
        ParseOutput {
            events,
            unparsed_lines: std::mem::take(&mut self.out.unparsed_lines),
            ..ParseOutput::default()
        }
    }

    /// What the whole document gave.
    pub fn finish(self) -> ParseOutput {
        let Feed {
            reader, mut out, ..
        } = self;
        match reader {
            FeedReader::Describe(r) => r.finish(&mut out),
            FeedReader::Events(r) => r.finish(&mut out),
        }
        out
    }
}

/// Parses one file's bytes as `kind`, building records at `detail`.
pub fn parse_detailed(kind: SourceKind, input: &[u8], detail: Detail) -> ParseOutput {
    parse_at(kind, input, false, detail, None)
}

/// [`parse_detailed`], `finish` doing its work on each record as it is finished (on every
/// record, once [`Finish::catch_up`] has run over what the parse gave).
pub fn parse_finishing(
    kind: SourceKind,
    input: &[u8],
    detail: Detail,
    finish: Finish,
) -> ParseOutput {
    parse_at(kind, input, false, detail, Some(Box::new(finish)))
}

fn parse_at(
    kind: SourceKind,
    input: &[u8],
    fold: bool,
    detail: Detail,
    finish: Option<Box<Finish>>,
) -> ParseOutput {
    let mut out = ParseOutput {
        detail,
        finish,
        ..ParseOutput::default()
    };
    match Format::of(kind) {
        Format::Operator => operator::parse(input, &mut out),
        Format::RayPython => ray_python::parse(input, &mut out),
        Format::RayCpp => ray_cpp::parse(input, &mut out),
        Format::Serve => serve::parse(input, &mut out),
        Format::Worker => worker::parse(input, &mut out),
        Format::Describe => describe::parse_with(input, &mut out, fold),
        Format::KubeEvents => kube_events::parse_with(input, &mut out, fold),
        Format::KubeTable => kube_table::parse(input, &mut out),
        Format::KubeObject => kube_object::parse(input, &mut out),
        Format::RayEvent => ray_event::parse(input, &mut out),
        Format::RayExportEvent => ray_one_event::parse(input, &mut out),
        Format::Generic => generic::parse(input, &mut out),
    }
    out
}

#[cfg(test)]
mod spans_tests {
    use super::*;

    #[test]
    fn spans_join_and_say_what_they_cover() {
        let spans = Spans::new(vec![(10, 20), (30, 40), (15, 25), (50, 50)]);
        assert_eq!(spans.around(9), None);
        assert_eq!(spans.around(10), Some((10, 25)));
        assert_eq!(spans.around(25), Some((10, 25)));
        assert_eq!(spans.around(26), None);
        assert_eq!(spans.around(50), Some((50, 50)));
        assert!(spans.cover(12, 25) && spans.cover(30, 30) && spans.cover(50, 50));
        assert!(!spans.cover(20, 30) && !spans.cover(9, 12) && !spans.cover(40, 41));
        // A zone-less time is placed by the file's zone; without one it may be anywhere.
        let zoned = spans.zoned(-5);
        assert!(zoned.holds(Some(&RawTime::Naive(5))) && !zoned.holds(Some(&RawTime::Naive(0))));
        assert!(spans.holds(Some(&RawTime::Naive(0))));
        assert!(!spans.holds(Some(&RawTime::Utc(26))) && spans.holds(None));
    }

    #[test]
    fn a_time_is_held_or_not_whatever_time_was_asked_before() {
        let spans = Spans::new(vec![(10, 20), (30, 40), (15, 25), (50, 50), (70, 90)]);
        let truth = |t: Micros| {
            [(10, 25), (30, 40), (50, 50), (70, 90)]
                .iter()
                .any(|&(lo, hi)| lo <= t && t <= hi)
        };
        // Forward, backward, and jumping about (a light read's times, and a clock that went back).
        let mut times: Vec<Micros> = (0..100).collect();
        times.extend((0..100).rev());
        let mut r = 7u64;
        for _ in 0..2000 {
            r = r
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            times.push((r >> 33) as Micros % 110 - 5);
        }
        for (i, s) in [spans.clone(), spans.zoned(0)].iter().enumerate() {
            for &t in &times {
                assert_eq!(s.holds(Some(&RawTime::Utc(t))), truth(t), "{i}: {t}");
                assert_eq!(
                    s.holds(Some(&RawTime::Naive(t))),
                    i == 0 || truth(t),
                    "{i}: {t}"
                );
            }
        }
        let empty = Spans::new(Vec::new());
        assert!(!empty.holds(Some(&RawTime::Utc(0))) && !empty.holds(Some(&RawTime::Utc(5))));
    }
}

#[cfg(test)]
mod finish_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn render(ev: &Event, out: &mut Vec<u8>) {
        let fields: Vec<String> = ev.fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.extend_from_slice(
            format!("{}|{}|{};", ev.kind, ev.message, fields.join(",")).as_bytes(),
        );
    }

    /// Each record, finished as the parser ends it, is written as it would be once the whole
    /// stretch is parsed, continuation lines and all; a thin finish then frees its text.
    #[test]
    fn records_finished_one_by_one_are_written_as_the_whole_parse_gives_them() {
        let text = "INFO 2022-08-02 16:17:02,502 http_proxy 127.0.0.1 http_proxy.py:315 - GET / 200 3.5ms\n\
                    ERROR 2022-08-02 16:17:03,001 controller 162 controller.py:10 - Traceback (most recent call last):\n  \
                    File \"x.py\", line 1, in <module>\nValueError: bad\n\
                    INFO 2022-08-02 16:17:04,000 controller 162 controller.py:11 - last\n";
        let kind = SourceKind::ServeController;
        let whole = parse_detailed(kind, text.as_bytes(), Detail::Full);
        let mut expected = Vec::new();
        for ev in &whole.events {
            let mut ev = ev.clone();
            ev.kind = kind;
            render(&ev, &mut expected);
        }
        for thin in [false, true] {
            let out = parse_finishing(
                kind,
                text.as_bytes(),
                Detail::Full,
                Finish::new(render, kind, thin),
            );
            let f = out.finish.as_deref().unwrap();
            assert_eq!(
                String::from_utf8_lossy(&f.bytes),
                String::from_utf8_lossy(&expected)
            );
            assert_eq!(f.ends.len(), whole.events.len());
            assert_eq!(out.events.len(), whole.events.len());
            for (got, was) in out.events.iter().zip(&whole.events) {
                assert_eq!(
                    (got.line, got.n_lines, got.kind),
                    (was.line, was.n_lines, kind)
                );
                assert_eq!(got.message.is_empty(), thin || was.message.is_empty());
                assert_eq!(got.fields.is_empty(), thin || was.fields.is_empty());
            }
        }
    }

    /// Records pushed without a finish are caught up with, in order, before the next.
    #[test]
    fn records_pushed_before_are_finished_first() {
        let mut out = ParseOutput {
            finish: Some(Box::new(Finish::new(render, SourceKind::Raylet, false))),
            ..ParseOutput::default()
        };
        out.events.push(Event::new(1, "first"));
        out.push_event(Event::new(2, "second"));
        let mut f = out.finish.take().unwrap();
        f.catch_up(&mut out.events);
        assert_eq!(f.bytes, b"raylet|first|;raylet|second|;");
        assert_eq!(f.ends, vec![14, 29]);
    }
}

#[cfg(test)]
mod feed_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use std::path::Path;

    /// Every file under `dir`, recursively.
    fn files(dir: &Path, into: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, into);
            } else {
                into.push(p);
            }
        }
    }

    fn shown(out: &ParseOutput) -> String {
        format!(
            "{:?}\n{:?}\n{}",
            out.events, out.diagnostics, out.unparsed_lines
        )
    }

    /// The document cut after every `n` lines.
    fn pieces(bytes: &[u8], n: usize) -> Vec<&[u8]> {
        let mut got = Vec::new();
        let (mut start, mut lines) = (0, 0);
        for nl in memchr::memchr_iter(b'\n', bytes) {
            lines += 1;
            if lines % n == 0 {
                got.push(&bytes[start..=nl]);
                start = nl + 1;
            }
        }
        if start < bytes.len() {
            got.push(&bytes[start..]);
        }
        got
    }

    /// What a feed gives of `pieces`, drained of what is settled after each, then finished.
    fn drained(kind: SourceKind, fold: bool, pieces: &[&[u8]]) -> ParseOutput {
        let mut feed = Feed::new(kind, fold).unwrap();
        let mut taken = ParseOutput::default();
        for piece in pieces {
            feed.feed(piece);
            let settled = feed.take_settled();
            taken.events.extend(settled.events);
            taken.unparsed_lines += settled.unparsed_lines;
        }
        let rest = feed.finish();
        taken.events.extend(rest.events);
        taken.diagnostics = rest.diagnostics;
        taken.unparsed_lines += rest.unparsed_lines;
        taken
    }

    #[test]
    fn a_document_fed_in_pieces_parses_as_it_does_whole() {
        let mut all = Vec::new();
        files(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"),
            &mut all,
        );
        all.sort();
        // The last describe lacks its final newline, and blank lines fall on piece ends.
        let mut extra = b"Name: a\nEvents:\n  Type  Reason  Age  From  Message\n".to_vec();
        extra.extend_from_slice(b"  ----  ------  ---  ----  -------\n\n");
        extra.extend_from_slice(b"  Warning  BackOff  5s (x3 over 1m)  kubelet  Back-off\n\n");
        extra.extend_from_slice(b"Name: b\nStatus: Running");
        let mut docs: Vec<(String, SourceKind, Vec<u8>)> =
            vec![("extra".into(), SourceKind::DescribePod, extra.clone())];
        let mut table = b"\nLAST SEEN  TYPE  REASON  OBJECT  MESSAGE\n".to_vec();
        for i in 0..40 {
            let row = format!(
                "{i}s  Warning  BackOff  pod/w-{:05}  Back-off pod w\n\n",
                i % 7
            );
            table.extend_from_slice(row.as_bytes());
        }
        table.extend_from_slice(b"No resources found");
        docs.push(("table".into(), SourceKind::KubeEvents, table));
        for path in &all {
            let bytes = std::fs::read(path).unwrap();
            let kind = crate::classify::classify(&path.to_string_lossy(), &bytes);
            if Feed::reads(kind) {
                docs.push((path.display().to_string(), kind, bytes));
            }
        }
        let describes = docs
            .iter()
            .filter(|d| Format::of(d.1) == Format::Describe)
            .count();
        assert!(
            describes >= 5 && docs.len() - describes >= 5,
            "{describes} of {}",
            docs.len()
        );
        for (name, kind, bytes) in &docs {
            for fold in [false, true] {
                let whole = shown(&parse_with(*kind, bytes, fold));
                for n in [1, 2, 3, 7, 1000] {
                    let mut feed = Feed::new(*kind, fold).unwrap();
                    for piece in pieces(bytes, n) {
                        feed.feed(piece);
                    }
                    let lines = feed.lines();
                    assert_eq!(
                        shown(&feed.finish()),
                        whole,
                        "{name}, fold {fold}, {n} lines a piece"
                    );
                    let newlines = memchr::memchr_iter(b'\n', bytes).count() as u32;
                    assert_eq!(lines, newlines, "{name}");
                    // Taking what is settled after every piece loses and moves nothing.
                    let taken = drained(*kind, fold, &pieces(bytes, n));
                    assert_eq!(shown(&taken), whole, "{name}, fold {fold}, {n}, settled");
                }
            }
        }
    }

    /// Random describes from the lines describers print, and then some: fed in random pieces
    /// and drained after each, they parse as whole; every line ends in an event; and where the
    /// identity is settled before `Events:` and no rule line falls among rows (what every
    /// describer prints), rows streamed as they are read give what the object gives whole.
    #[test]
    fn random_describes_stream_as_they_parse_whole() {
        const PREFIX: &[&str] = &[
            "Namespace:    ray",
            "Kind:         RayCluster",
            "Labels:       app=x",
            "              ray.io/cluster=c",
            "Annotations:  a: b",
            "Status:",
            "  Conditions:",
            "    Type:    Ready",
            "    Status:  True",
            "    Type:    Provisioned",
            "  Message:  first line",
            "second line of a raw value",
            "Containers:",
            "  ray-head:",
            "    Image:  rayproject/ray:2.9.3",
            "QoS Class:    Burstable",
            "Tolerations:  a:NoSchedule",
            "              b:NoExecute",
            "Conditions:",
            "  Type   Status",
            "  Ready  True",
            "",
            "odd line without a key",
        ];
        const ROWS: &[&str] = &[
            "  Warning  BackOff  3s  kubelet  Back-off restarting",
            "  Normal   Pulled   2m (x4 over 9m)  kubelet, node-1  Pulled image",
            "  Warning  Unhealthy  <unknown>  kubelet  Readiness probe failed: x",
            "",
            "    a continuation indented deeper",
        ];
        const SUFFIX: &[&str] = &[
            "Extra:        1",
            "Other:",
            "  nested:  v",
            "",
            "Events:  <none>",
            "Events:\n  Type  Reason  Age  From  Message\n  ----  ------  ---  ----  -------",
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let kind = SourceKind::DescribePod;
        let mut compared = 0;
        for round in 0..300 {
            let mut doc = String::new();
            for object in 0..1 + next(3) {
                doc.push_str(&format!("Name:         o-{object}\n"));
                for _ in 0..next(12) {
                    doc.push_str(PREFIX[next(PREFIX.len())]);
                    doc.push('\n');
                }
                doc.push_str("Events:\n  Type  Reason  Age  From  Message\n");
                doc.push_str("  ----  ------  ---  ----  -------\n");
                for _ in 0..next(40) {
                    doc.push_str(ROWS[next(ROWS.len())]);
                    doc.push('\n');
                }
                for _ in 0..next(4) {
                    doc.push_str(SUFFIX[next(SUFFIX.len())]);
                    doc.push('\n');
                    for _ in 0..next(5) {
                        doc.push_str(ROWS[next(ROWS.len())]);
                        doc.push('\n');
                    }
                }
            }
            if round % 3 == 0 {
                doc.pop();
            }
            let bytes = doc.as_bytes();
            let whole = parse_with(kind, bytes, false);
            let lines = crate::parse::lines::split_lines(bytes).count() as u32;
            let covered: u32 = whole.events.iter().map(|e| e.n_lines).sum();
            assert_eq!(covered, lines, "{doc}");
            let taken = drained(kind, false, &pieces(bytes, 1 + next(9)));
            assert_eq!(shown(&taken), shown(&whole), "{doc}");
            // Below the fold's threshold a folding parse emits every object whole at its end.
            assert_eq!(
                shown(&parse_with(kind, bytes, true)),
                shown(&whole),
                "{doc}"
            );
            compared += whole.events.len();
        }
        assert!(compared > 10_000, "{compared}");
    }

    /// A describe: a pod's keys, then `events` (one table of `rows` rows, a blank line after
    /// each third) and what else `tail` holds.
    fn describe(rows: usize, tail: &str) -> Vec<u8> {
        let mut doc = String::from(
            "Name:         w-1\nNamespace:    default\nContainers:\n  ray-worker:\n    \
             Image:  rayproject/ray:2.9.0\nQoS Class:    Burstable\nStart Time:   Mon, 01 \
             Jul 2024 10:00:00 +0000\nConditions:\n  Type    Status\n  ----    ------\n  \
             Ready   False\nEvents:\n  Type     Reason   Age   From     Message\n  ----     \
             ------   ----  ----     -------\n",
        );
        for i in 0..rows {
            doc.push_str(&format!(
                "  Warning  BackOff  {}s  kubelet  Back-off restarting failed container {i}\n",
                i + 1
            ));
            if i % 3 == 2 {
                doc.push('\n');
            }
        }
        doc.push_str(tail);
        doc.into_bytes()
    }

    #[test]
    fn a_describe_s_event_rows_go_as_they_are_read_and_as_the_object_would_give_them() {
        // Below the fold's threshold, folding changes nothing, and a folding parse emits the
        // object whole at its end: the streamed rows must give the same events, whatever
        // follows the table (a key, a second table, the next object).
        let tails = [
            "",
            "Extra:   1\nNode:    n-1\n",
            "Events:\n  Type  Reason  Age  From  Message\n  Normal  Pulled  1s  kubelet  ok\n",
            "Name:   w-2\nEvents:\n  Type  Reason  Age  From  Message\n  Normal  A  1s  k  m\n",
        ];
        let kind = SourceKind::DescribePod;
        for tail in tails {
            let doc = describe(30, tail);
            let whole = parse_with(kind, &doc, true);
            assert_eq!(
                shown(&parse_with(kind, &doc, false)),
                shown(&whole),
                "{tail:?}"
            );
            assert!(whole
                .events
                .iter()
                .any(|e| e.field("object") == Some("Pod/default/w-1")));
        }
        // One difference: a rule among rows already given is counted on the row before it,
        // not on the table's section, which has gone. No line is lost.
        let doc = describe(30, "  ----  ------\n  Normal  Started  1s  kubelet  x\n");
        let (streamed, whole) = (parse_with(kind, &doc, false), parse_with(kind, &doc, true));
        let count = |out: &ParseOutput| out.events.iter().map(|e| e.n_lines).sum::<u32>();
        assert_eq!(count(&streamed), count(&whole));
        assert_eq!(
            count(&streamed),
            doc.iter().filter(|&&b| b == b'\n').count() as u32
        );
        let last_row = |out: &ParseOutput| out.events[out.events.len() - 2].n_lines;
        // The last row of the 30 has a blank line after it.
        assert_eq!((last_row(&streamed), last_row(&whole)), (3, 2));
        // A table of many rows is given as it is read: the feed holds one row at a time.
        let doc = describe(30_000, "");
        let mut feed = Feed::new(SourceKind::DescribePod, false).unwrap();
        let mut settled = 0;
        for piece in pieces(&doc, 100) {
            feed.feed(piece);
            settled += feed.take_settled().events.len();
            assert!(feed.out.events.is_empty());
        }
        let rest = feed.finish().events.len();
        assert_eq!(rest, 1, "only the last row waits for the end");
        assert!(settled > 30_000, "{settled}");
    }
}
