//! The prefilter-first read of a bundle for `analyze`: which lines of a file can matter to a
//! rule at all. For each source kind, an automaton over a few short anchors (pieces of the
//! literals of every signal's regexes, chosen so that each alternative holds one, and rare in
//! the first 256 KiB of the kind's first file) scans a lower-cased copy of the raw bytes, a
//! line where one is found is checked for a whole alternative, and only the records around
//! the lines that hold one are parsed: the ordinary healthy line costs a scan and a miss.
//!
//! Invariant: every line a signal could match holds every literal of one of its alternatives,
//! whatever their case, so parsing only the records around hits finds every occurrence the
//! full parse would. Signals without a literal make their source kinds be parsed in full.
//! Literals are cut at characters that JSON may escape (`"`, `\`, tab, and `<`, `>`, `&` for
//! Go's encoder), so an escaped line still hits.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Input, MatchKind};

use crate::event::SourceKind;
use crate::rules::literal::required_conjunctions;
use crate::rules::{Rule, SourceFilter};

/// Lines parsed before a hit, so that the record holding it starts inside the window.
pub const LOOKBACK_LINES: usize = 120;
/// Lines parsed after a hit, so that its continuation lines are folded in.
pub const LOOKAHEAD_LINES: usize = 80;

/// Bytes at the start of a file on which the anchors of its kind are chosen.
const SAMPLE_BYTES: usize = 256 << 10;

/// Most anchors in one pass of the scan (the most the aho-corasick SIMD prefilter takes).
const PASS_LITERALS: usize = 64;

/// A text where the scan sent more than this many lines to be checked in vain, and more than
/// one per [`WASTE_BYTES`] (about one line in thirty), has its kind's anchors chosen again.
const WASTE_FLOOR: usize = 64;
const WASTE_BYTES: usize = 4096;

/// The text is lower-cased and scanned in chunks of about this many bytes, which stay in the
/// core's cache between the two.
const CHUNK_BYTES: usize = 64 << 10;

/// The largest lower-cased copy a thread keeps for its next chunk (a line may be long).
const KEPT_LOWER_BYTES: usize = 1 << 20;

/// Most times a kind's anchors are chosen again.
const REBUILDS: u32 = 8;

/// Bytes of a kind checked line by line before its anchors are chosen. Choosing them costs
/// as much as checking every line of a few hundred kilobytes, so a small bundle never does,
/// and a large one chooses them on a text that is not empty.
const UNANCHORED_BYTES: usize = 256 << 10;

/// The compiled prefilter: every literal of every signal (lower-cased: signal regexes match
/// without regard to case unless a rule says otherwise, and a case-sensitive one only ever
/// matches lines its lower-cased literals are on), and for each source kind the alternatives
/// that can match events of that kind. A line is a hit for a kind when it holds every literal
/// of one of that kind's alternatives.
pub struct Sieve {
    literals: Vec<String>,
    /// Finds every literal on one line, overlapping, whatever its case.
    all: Option<AhoCorasick>,
    /// Every alternative of every kind, as sorted ids into `literals`.
    alts: Vec<Vec<usize>>,
    per_kind: Vec<(SourceKind, Lazy)>,
    /// Source kinds with a signal that has no literal: parsed in full.
    full_kinds: Vec<SourceKind>,
}

/// A kind's alternatives (indices into the sieve's), and their [`KindClauses`] once a text
/// of the kind is read.
struct Lazy {
    alts: Vec<usize>,
    clauses: OnceLock<KindClauses>,
}

/// The alternatives of one source kind, as ids into the sieve's literals.
#[derive(Default)]
struct KindClauses {
    /// Each alternative: the literal ids that must all be on the line. No alternative holds
    /// another one (a line that satisfies the larger satisfies the smaller).
    clauses: Vec<Vec<usize>>,
    /// For each literal id of the whole sieve, the clauses of this kind it belongs to.
    clauses_of: Vec<Vec<usize>>,
    /// What the scan looks for: built on first use, so only the kinds a bundle has pay, and
    /// built again when a text shows that its anchors send too many lines to be checked.
    scanner: RwLock<Option<Arc<Scanner>>>,
    /// How many times the scanner was built again.
    rebuilds: AtomicU32,
    /// Bytes of this kind's texts checked line by line, with no scanner yet
    /// ([`UNANCHORED_BYTES`]).
    unanchored: AtomicUsize,
    /// A Ray C++ log: a line whose head says warning, error or fatal is a hit too
    /// ([`cpp_level_head`]).
    cpp_levels: bool,
}

/// The scan of one kind: anchors that every alternative holds one of, in passes of at most
/// [`PASS_LITERALS`] over a lower-cased copy of the text. A pass that small, matched case for
/// case, runs on a SIMD prefilter at one to two gigabytes a second; one case-blind automaton
/// over a hundred literals walks its table byte by byte at a few hundred megabytes.
struct Scanner {
    passes: Vec<AhoCorasick>,
    /// What the anchors were chosen on.
    tally: Tally,
}

impl Scanner {
    /// Pushes the start of every line of `lower` (lower-cased text) that holds an anchor, in
    /// ascending order.
    fn candidates(&self, lower: &[u8], out: &mut Vec<usize>) {
        for ac in &self.passes {
            let mut pos = 0usize;
            while pos < lower.len() {
                let Some(m) = ac.find(Input::new(lower).range(pos..)) else {
                    break;
                };
                let start =
                    memchr::memrchr(b'\n', &lower[pos..m.start()]).map_or(pos, |i| pos + i + 1);
                out.push(start);
                pos = memchr::memchr(b'\n', &lower[m.start()..])
                    .map_or(lower.len(), |i| m.start() + i + 1);
            }
        }
        if self.passes.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }
}

/// Where the chunk of `bytes` that starts at `from` ends: at the end of the line that holds
/// its [`CHUNK_BYTES`]th byte (or of the text).
fn chunk_end(bytes: &[u8], from: usize) -> usize {
    let at = from.saturating_add(CHUNK_BYTES);
    if at >= bytes.len() {
        return bytes.len();
    }
    memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1)
}

/// One line the sieve kept: its 0-based index in the text and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub line: usize,
    pub start: usize,
}

impl std::fmt::Debug for Sieve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sieve")
            .field("literals", &self.literals.len())
            .field(
                "clauses",
                &self
                    .per_kind
                    .iter()
                    .map(|(k, s)| (k.as_str(), s.alts.len()))
                    .collect::<Vec<_>>(),
            )
            .field("full_kinds", &self.full_kinds)
            .finish()
    }
}

/// The alternatives of every kind, each kept once (most are every kind's: the open world's,
/// a rule's without `sources`), and the index of each.
#[derive(Default)]
struct Pool {
    alts: Vec<Vec<String>>,
    index: HashMap<Vec<String>, usize>,
}

impl Pool {
    fn ids(&mut self, alts: Vec<Vec<String>>) -> Vec<usize> {
        alts.into_iter()
            .map(|alt| match self.index.get(&alt) {
                Some(&i) => i,
                None => {
                    self.alts.push(alt.clone());
                    self.index.insert(alt, self.alts.len() - 1);
                    self.alts.len() - 1
                }
            })
            .collect()
    }
}

/// Gives the kinds `wants` picks the alternatives `alts` (ids in the pool), or, where a line
/// has none that a literal can find (`None`), marks them to be parsed whole.
fn give(
    per_kind: &mut [(SourceKind, Vec<usize>)],
    full_kinds: &mut Vec<SourceKind>,
    alts: Option<&[usize]>,
    wants: impl Fn(&SourceKind) -> bool,
) {
    for (kind, list) in per_kind.iter_mut().filter(|(k, _)| wants(k)) {
        match alts {
            Some(alts) => list.extend(alts),
            None => full_kinds.push(*kind),
        }
    }
}

/// Field names that only facts from Kubernetes objects carry; those files are always parsed
/// whole, so signals on them need no literal.
const FACT_FIELDS: [&str; 3] = ["path", "value", "object"];
/// Field names the parsers derive rather than copy from the line: they are not on the raw
/// line, so a signal on them alone cannot be sieved.
const DERIVED_FIELDS: [&str; 17] = [
    "http_status",
    "http_method",
    "http_path",
    "http_bytes",
    "call_status",
    "call_method",
    "latency_ms",
    "client",
    "file",
    "lineno",
    "pid",
    "tid",
    "component_id",
    "request_id",
    "route",
    "application",
    "actor_name",
];

/// The raw-safe, lower-cased literals of one alternative; `None` when none is left.
fn safe_literals(alt: &[String]) -> Option<Vec<String>> {
    let lits: Vec<String> = alt
        .iter()
        .filter_map(|l| raw_safe(&l.to_lowercase()))
        .collect();
    (!lits.is_empty()).then_some(lits)
}

/// The alternatives (each a conjunction of raw-safe literals) that cover every occurrence of
/// a signal, or `None` when some occurrence could hold no literal.
fn signal_clauses(sig: &crate::rules::Signal) -> Option<Vec<Vec<String>>> {
    if !sig.text.is_empty() {
        let mut out = Vec::new();
        for re in &sig.text {
            let alts = required_conjunctions(re.as_str());
            if alts.is_empty() {
                return None;
            }
            for alt in alts {
                out.push(safe_literals(&alt)?);
            }
        }
        return Some(out);
    }
    if sig
        .fields
        .iter()
        .any(|(k, _)| FACT_FIELDS.contains(&k.as_str()))
    {
        // Facts only: their files are parsed whole anyway.
        return Some(Vec::new());
    }
    field_clauses(sig.fields.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The clauses that keep every line a set of field conditions (`key`, value regex) can hold:
/// each condition needs its key on the raw line (`"key":` or `key=`) and, when its regex has
/// literals, one of them as well. Every condition must hold, so the most telling one will do.
/// `None` when a field is derived from more than the line.
fn field_clauses<'a>(fields: impl Iterator<Item = (&'a str, &'a str)>) -> Option<Vec<Vec<String>>> {
    let mut best: Option<Vec<Vec<String>>> = None;
    for (key, value) in fields {
        if DERIVED_FIELDS.contains(&key) {
            return None;
        }
        let name = raw_safe(&key.to_lowercase())?;
        let mut alts: Vec<Vec<String>> = Vec::new();
        for alt in required_conjunctions(value) {
            let Some(mut lits) = safe_literals(&alt) else {
                alts.clear();
                break;
            };
            lits.push(name.clone());
            alts.push(lits);
        }
        let sharp = !alts.is_empty();
        if alts.is_empty() {
            alts.push(vec![name]);
        }
        if sharp || best.is_none() {
            best = Some(alts);
            if sharp {
                break;
            }
        }
    }
    best
}

impl Sieve {
    pub fn new(rules: &[Rule]) -> Sieve {
        let mut pool = Pool::default();
        let mut per_kind: Vec<(SourceKind, Vec<usize>)> =
            SourceKind::ALL.iter().map(|k| (*k, Vec::new())).collect();
        let mut full_kinds = Vec::new();
        for sig in rules.iter().flat_map(|r| r.signals.iter()) {
            let kinds: Vec<SourceKind> = match &sig.sources {
                SourceFilter::Any => SourceKind::ALL.to_vec(),
                SourceFilter::Kinds(kinds) => kinds.clone(),
            };
            match signal_clauses(sig) {
                Some(clauses) => {
                    let ids = pool.ids(clauses);
                    for (kind, list) in &mut per_kind {
                        if kinds.contains(kind) {
                            list.extend(&ids);
                        }
                    }
                }
                None => full_kinds.extend(kinds),
            }
        }
        // The open-world layer reads failure shapes and error records of every log; the
        // Serve schema check, the lines that state the Ray version.
        let open = pool.ids(open_world_alternatives());
        for (_, list) in &mut per_kind {
            list.extend(&open);
        }
        // Judgement reads the lines that tell a requested stop or a recovery.
        let lifecycle = crate::rules::lifecycle::tellers()
            .iter()
            .map(|t| (&t.re, t.sources.as_slice()))
            .chain(
                crate::rules::lifecycle::own_stops()
                    .iter()
                    .map(|o| (&o.re, o.sources.as_slice())),
            )
            .chain(
                crate::rules::lifecycle::recoveries()
                    .iter()
                    .flat_map(|r| [(&r.fails, &[][..]), (&r.recovers, &[][..])]),
            )
            .chain(
                crate::rules::lifecycle::object_stops()
                    .iter()
                    .map(|s| (&s.re, s.sources.as_slice())),
            )
            .chain(
                crate::rules::lifecycle::node_removals()
                    .iter()
                    .chain(crate::rules::lifecycle::node_deaths())
                    .chain(crate::rules::lifecycle::node_returns())
                    .map(|t| (&t.re, t.sources.as_slice())),
            );
        // A Kubernetes recovery's side said by a status condition is kept by reading its
        // sources (objects and describes) whole; a failure said only by its level (an operator's error
        // about a RayJob) is kept as the open world keeps every error record.
        for side in crate::rules::lifecycle::object_recoveries()
            .iter()
            .flat_map(|r| r.fails.iter().chain(&r.recovers))
            .filter(|s| !s.every_reconcile)
            .filter(|s| s.text.is_some() || !s.fields.is_empty() || s.condition.is_some())
        {
            let kinds: Vec<SourceKind> = if side.sources.is_empty() {
                SourceKind::ALL.to_vec()
            } else {
                side.sources.clone()
            };
            // A side said by its fields keeps the lines that carry them (the operator's
            // `JobStatus` of a RayJob): reading its sources whole kept every operator line
            // of a large bundle.
            let alts: Option<Vec<Vec<String>>> = match &side.text {
                Some(re) => required_conjunctions(re.as_str())
                    .iter()
                    .map(|alt| safe_literals(alt))
                    .collect(),
                // Facts (a path and its value) come from files parsed whole anyway.
                None if side
                    .fields
                    .iter()
                    .any(|(k, _)| FACT_FIELDS.contains(&k.as_str())) =>
                {
                    None
                }
                None if !side.fields.is_empty() => {
                    field_clauses(side.fields.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                }
                None => None,
            };
            let alts = alts.filter(|a| !a.is_empty()).map(|a| pool.ids(a));
            give(&mut per_kind, &mut full_kinds, alts.as_deref(), |k| {
                kinds.contains(k)
            });
        }
        for (re, sources) in lifecycle {
            let alts: Option<Vec<Vec<String>>> = required_conjunctions(re.as_str())
                .iter()
                .map(|alt| safe_literals(alt))
                .collect();
            let alts = alts.filter(|a| !a.is_empty()).map(|a| pool.ids(a));
            give(&mut per_kind, &mut full_kinds, alts.as_deref(), |k| {
                sources.is_empty() || sources.contains(k)
            });
        }
        full_kinds.sort();
        full_kinds.dedup();
        Sieve::build(pool.alts, per_kind, full_kinds)
    }

    /// A sieve where every kind has the same alternatives (for tests).
    #[cfg(test)]
    fn from_clauses(alts: Vec<Vec<&str>>) -> Sieve {
        let alts: Vec<Vec<String>> = alts
            .into_iter()
            .map(|alt| alt.into_iter().map(str::to_lowercase).collect())
            .collect();
        let ids: Vec<usize> = (0..alts.len()).collect();
        let per_kind = SourceKind::ALL.iter().map(|k| (*k, ids.clone())).collect();
        Sieve::build(alts, per_kind, Vec::new())
    }

    /// The sieve of the alternatives `alts` (each the literals that must all be on a line),
    /// each kind holding those of `per_kind` (indices into `alts`).
    fn build(
        alts: Vec<Vec<String>>,
        per_kind: Vec<(SourceKind, Vec<usize>)>,
        full_kinds: Vec<SourceKind>,
    ) -> Sieve {
        let mut literals: Vec<String> = alts.iter().flatten().cloned().collect();
        literals.sort();
        literals.dedup();
        let alts: Vec<Vec<usize>> = alts
            .iter()
            .map(|alt| {
                let mut ids: Vec<usize> = alt
                    .iter()
                    .map(|l| literals.binary_search(l).unwrap_or_default())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            })
            .collect();
        let per_kind = per_kind
            .into_iter()
            .map(|(kind, mut ids)| {
                ids.sort_unstable();
                ids.dedup();
                (
                    kind,
                    Lazy {
                        alts: ids,
                        clauses: OnceLock::new(),
                    },
                )
            })
            .collect();
        let texts: Vec<&str> = literals.iter().map(String::as_str).collect();
        Sieve {
            all: automaton(
                &texts,
                true,
                MatchKind::Standard,
                AhoCorasickKind::ContiguousNFA,
            ),
            literals,
            alts,
            per_kind,
            full_kinds,
        }
    }

    /// The alternatives of `kind`, put in order the first time a text of the kind is read:
    /// a bundle has a few of the kinds, and each kind's took the sieve's building a
    /// hundredth of a second.
    fn kind(&self, kind: SourceKind) -> Option<&KindClauses> {
        let (_, lazy) = self.per_kind.iter().find(|(k, _)| *k == kind)?;
        Some(lazy.clauses.get_or_init(|| {
            let mut clauses: Vec<&Vec<usize>> = lazy.alts.iter().map(|&a| &self.alts[a]).collect();
            // Fewest literals first, so that an alternative is dropped when a smaller one it
            // holds is already kept.
            clauses.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
            clauses.dedup();
            let mut kept: Vec<Vec<usize>> = Vec::new();
            for c in clauses {
                if !kept.iter().any(|k| k.iter().all(|id| c.contains(id))) {
                    kept.push(c.clone());
                }
            }
            let mut clauses_of = vec![Vec::new(); self.literals.len()];
            for (ci, ids) in kept.iter().enumerate() {
                for &id in ids {
                    clauses_of[id].push(ci);
                }
            }
            KindClauses {
                clauses: kept,
                clauses_of,
                scanner: RwLock::new(None),
                rebuilds: AtomicU32::new(0),
                unanchored: AtomicUsize::new(0),
                cpp_levels: crate::parse::Format::of(kind) == crate::parse::Format::RayCpp,
            }
        }))
    }

    /// Every distinct literal the prefilter looks for (lower-cased, matched without regard
    /// to case), sorted: what an outside tool (a benchmark's `rg -i`, say) would search for
    /// to do the same first pass.
    pub fn literals(&self) -> Vec<String> {
        self.literals.clone()
    }

    /// Whether files of this kind must be parsed in full.
    pub fn needs_full(&self, kind: SourceKind) -> bool {
        self.full_kinds.contains(&kind)
    }

    /// The lines of a file of `kind` holding a hit, ascending. The scan looks for the
    /// anchors of the kind's alternatives in a lower-cased copy of `bytes`; only a line where
    /// one is found is checked in full.
    pub fn hits(&self, kind: SourceKind, bytes: &[u8]) -> Vec<Hit> {
        let Some(kc) = self.kind(kind) else {
            return Vec::new();
        };
        // An empty text has no line to keep, and a scanner chosen on it would know nothing of
        // what is rare (the `.err` file a kind's walk often meets first is empty).
        if kc.clauses.is_empty() || bytes.is_empty() {
            return Vec::new();
        }
        // Every line of the first texts of a kind is checked; then the scan looks for
        // anchors. Either way the same lines are hits: every alternative holds an anchor.
        let scanner = if kc.unanchored.fetch_add(bytes.len(), Ordering::Relaxed) + bytes.len()
            <= UNANCHORED_BYTES
        {
            None
        } else {
            let Some(scanner) = self.scanner_for(kc, bytes) else {
                return Vec::new();
            };
            Some(scanner)
        };
        thread_local! {
            /// The lower-cased copy of a chunk, kept for the thread's next one.
            static LOWER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        }
        LOWER.with(|cell| {
            let mut lower = cell.take();
            let mut hits = Vec::new();
            let mut candidates = Vec::new();
            let mut present: Vec<usize> = Vec::new();
            let mut verdicts: std::collections::HashMap<u64, bool> =
                std::collections::HashMap::new();
            let (mut checked, mut lines_before) = (0usize, 0usize);
            // Chunk by chunk, each ending at a line end, so that the copy and the scan of a
            // chunk stay in the core's cache.
            let mut from = 0;
            while from < bytes.len() {
                let to = chunk_end(bytes, from);
                let chunk = &bytes[from..to];
                candidates.clear();
                match &scanner {
                    Some(scanner) => {
                        lower.clear();
                        lower.extend(chunk.iter().map(u8::to_ascii_lowercase));
                        scanner.candidates(&lower, &mut candidates);
                        if kc.cpp_levels {
                            cpp_level_candidates(chunk, &mut candidates);
                        }
                    }
                    None => candidates.extend(
                        std::iter::once(0)
                            .chain(memchr::memchr_iter(b'\n', chunk).map(|i| i + 1))
                            .filter(|&i| i < chunk.len()),
                    ),
                }
                checked += candidates.len();
                let (mut counted, mut line) = (0usize, lines_before);
                for &start in &candidates {
                    let end = memchr::memchr(b'\n', &chunk[start..])
                        .map_or(chunk.len(), |i| start + i + 1);
                    let text = &chunk[start..end];
                    // A line that repeats an earlier one but for its leading date-time
                    // gets that line's verdict: in a dense incident, most lines do.
                    let mut judge = |text: &[u8]| {
                        kc.cpp_levels && cpp_level_head(text) || self.holds(kc, text, &mut present)
                    };
                    let holds = match crate::parse::stamp::line_key(text) {
                        Some(k) => *verdicts.entry(k.key).or_insert_with(|| judge(text)),
                        None => judge(text),
                    };
                    if holds {
                        line += memchr::memchr_iter(b'\n', &chunk[counted..start]).count();
                        counted = start;
                        hits.push(Hit {
                            line,
                            start: from + start,
                        });
                    }
                }
                lines_before = line + memchr::memchr_iter(b'\n', &chunk[counted..]).count();
                from = to;
            }
            if lower.capacity() <= KEPT_LOWER_BYTES {
                cell.replace(lower);
            }
            let wasted = checked - hits.len();
            if let Some(scanner) = scanner.filter(|_| {
                wasted > WASTE_FLOOR && wasted.saturating_mul(WASTE_BYTES) > bytes.len()
            }) {
                self.resample(kc, &scanner, bytes);
            }
            hits
        })
    }

    /// The kind's scanner, built on a sample of `bytes` if there is none yet.
    fn scanner_for(&self, kc: &KindClauses, bytes: &[u8]) -> Option<Arc<Scanner>> {
        if let Some(scanner) = kc.scanner.read().ok()?.as_ref() {
            return Some(Arc::clone(scanner));
        }
        let mut slot = kc.scanner.write().ok()?;
        let scanner = slot.get_or_insert_with(|| {
            let mut tally = Tally::default();
            tally.add(&sample(bytes).to_ascii_lowercase(), &self.short_pieces(kc));
            Arc::new(self.scanner(kc, tally))
        });
        Some(Arc::clone(scanner))
    }

    /// Builds the kind's scanner again, on what `used` was built on and on `bytes` too: the
    /// text it was chosen on did not show what this one does (the first file of a kind may be
    /// empty, or another node's). At most [`REBUILDS`] times a kind, so that a text where an
    /// alternative's rarest piece is common anyway does not rebuild it for every piece.
    fn resample(&self, kc: &KindClauses, used: &Arc<Scanner>, bytes: &[u8]) {
        let Ok(mut slot) = kc.scanner.write() else {
            return;
        };
        let current = slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, used));
        // Under the write lock: no other thread counts or builds meanwhile.
        if !current || kc.rebuilds.load(Ordering::Relaxed) >= REBUILDS {
            return;
        }
        kc.rebuilds.fetch_add(1, Ordering::Relaxed);
        let mut tally = used.tally.clone();
        tally.add(&sample(bytes).to_ascii_lowercase(), &self.short_pieces(kc));
        *slot = Some(Arc::new(self.scanner(kc, tally)));
    }

    /// The literals of the kind shorter than a gram: the only pieces [`Tally`] counts whole.
    fn short_pieces(&self, kc: &KindClauses) -> Vec<&[u8]> {
        let mut short: Vec<&[u8]> = kc
            .clauses
            .iter()
            .flatten()
            .map(|&id| self.literals[id].as_bytes())
            .filter(|l| l.len() < GRAM)
            .collect();
        short.sort_unstable();
        short.dedup();
        short
    }

    /// 0-based indices of the lines of a file of `kind` holding a hit, ascending.
    #[cfg(test)]
    fn hit_lines(&self, kind: SourceKind, bytes: &[u8]) -> Vec<usize> {
        self.hits(kind, bytes).into_iter().map(|h| h.line).collect()
    }

    /// Whether `line` holds every literal of one of the kind's alternatives.
    fn holds(&self, kc: &KindClauses, line: &[u8], present: &mut Vec<usize>) -> bool {
        let Some(all) = &self.all else {
            return false;
        };
        present.clear();
        for m in all.find_overlapping_iter(line) {
            let id = m.pattern().as_usize();
            if present.contains(&id) {
                continue;
            }
            present.push(id);
            let done = kc.clauses_of.get(id).is_some_and(|cs| {
                cs.iter()
                    .any(|&c| kc.clauses[c].iter().all(|l| present.contains(l)))
            });
            if done {
                return true;
            }
        }
        false
    }

    /// The scan of one kind: a few short anchors such that every alternative has a literal
    /// holding one of them (see [`cover`]), in passes of at most [`PASS_LITERALS`]. Every line
    /// that holds an alternative holds an anchor, so the choice changes the speed of the
    /// scan, never its hits.
    fn scanner(&self, kc: &KindClauses, tally: Tally) -> Scanner {
        let clauses: Vec<Vec<&[u8]>> = kc
            .clauses
            .iter()
            .map(|ids| ids.iter().map(|&id| self.literals[id].as_bytes()).collect())
            .collect();
        let mut anchors = cover(&clauses, &tally);
        anchors.sort_unstable();
        // Passes of even size: 110 anchors make two of 55, not 64 and 46.
        let n_passes = anchors.len().div_ceil(PASS_LITERALS);
        let passes = if n_passes == 0 {
            Vec::new()
        } else {
            let per_pass = anchors.len().div_ceil(n_passes);
            anchors
                .chunks(per_pass)
                .filter_map(|c| {
                    automaton(
                        c,
                        false,
                        MatchKind::LeftmostFirst,
                        AhoCorasickKind::ContiguousNFA,
                    )
                })
                .collect()
        };
        Scanner { passes, tally }
    }
}

/// The shortest piece of a literal an anchor may be: long enough to be rare in logs, short
/// enough to be shared by many literals (` nodes of type` and ` nodes because` share
/// ` node`). A literal shorter than this is its own only piece.
const GRAM: usize = 4;

/// The longest piece of a literal an anchor may be (longer pieces are chosen when they cover
/// as much as a shorter one: they are rarer in text the sample did not show).
const LONGEST_GRAM: usize = 8;

/// A piece seen in the sample more often than this (per 64 KiB, about 500 lines) is taken only
/// for alternatives that have nothing rarer: each line it is on would be checked in full.
const COMMON_PER_64K: usize = 4;

/// Anchors for `clauses` (each the lower-cased literals that must all be on a line) such that
/// every clause has a literal holding one of them. Greedy set cover: the candidates are the
/// literals' pieces of [`GRAM`] to [`LONGEST_GRAM`] bytes, and the one taken next covers the
/// most clauses not yet covered per occurrence in `sample` (lower-cased), until all are.
///
/// One anchor per clause, the choice before, gave 105 to 177 anchors per kind and two or three
/// scan passes; shared pieces give 25 to 45 and one pass, which cut the CPU time of `analyze`
/// on a 1 GB bundle by a quarter. The price is a few more candidate lines to check.
fn cover<'a>(clauses: &[Vec<&'a [u8]>], tally: &Tally) -> Vec<&'a [u8]> {
    // The candidates, and for each the clauses it covers.
    let mut index: HashMap<&'a [u8], usize> = HashMap::new();
    let mut pieces: Vec<&'a [u8]> = Vec::new();
    let mut covers: Vec<Vec<usize>> = Vec::new();
    for (ci, literals) in clauses.iter().enumerate() {
        for literal in literals {
            let longest = LONGEST_GRAM.min(literal.len());
            let lengths = if literal.len() <= GRAM {
                literal.len()..=literal.len()
            } else {
                GRAM..=longest
            };
            for piece in lengths.flat_map(|n| literal.windows(n)) {
                let i = *index.entry(piece).or_insert_with(|| {
                    pieces.push(piece);
                    covers.push(Vec::new());
                    pieces.len() - 1
                });
                if covers[i].last() != Some(&ci) {
                    covers[i].push(ci);
                }
            }
        }
    }
    let seen: Vec<usize> = pieces.iter().map(|p| tally.at_most(p)).collect();
    let common = (tally.bytes >> 16).max(1) * COMMON_PER_64K;
    let mut covered_by: Vec<Vec<usize>> = vec![Vec::new(); clauses.len()];
    for (i, cs) in covers.iter().enumerate() {
        for &c in cs {
            covered_by[c].push(i);
        }
    }
    // How many clauses not yet covered each candidate covers.
    let mut new: Vec<usize> = covers.iter().map(Vec::len).collect();
    // Rare before common, then more new clauses per occurrence, then more new clauses, then
    // longer, then (for a total order) the bytes.
    let better = |new: &[usize], a: usize, b: usize| {
        (seen[a] <= common)
            .cmp(&(seen[b] <= common))
            .then((new[a] * (seen[b] + 1)).cmp(&(new[b] * (seen[a] + 1))))
            .then(new[a].cmp(&new[b]))
            .then(pieces[a].len().cmp(&pieces[b].len()))
            .then_with(|| pieces[b].cmp(pieces[a]))
    };
    // A piece found in one clause only competes with that clause's other such pieces, and
    // by an order that never changes (they cover it or nothing): only the best of them is a
    // candidate. Most pieces are of this sort, so the choice below looks at a few thousand
    // candidates, not tens of thousands, and chooses the same anchors.
    let mut best_own: Vec<Option<usize>> = vec![None; clauses.len()];
    for (i, cs) in covers.iter().enumerate() {
        if let [c] = cs[..] {
            match best_own[c] {
                Some(j) if better(&new, j, i).is_ge() => {}
                _ => best_own[c] = Some(i),
            }
        }
    }
    let candidates: Vec<usize> = (0..pieces.len())
        .filter(|&i| match covers[i][..] {
            [c] => best_own[c] == Some(i),
            _ => true,
        })
        .collect();
    let mut covered = vec![false; clauses.len()];
    let mut left = clauses.len();
    let mut taken = Vec::new();
    while left > 0 {
        let Some(best) = candidates
            .iter()
            .copied()
            .filter(|&i| new[i] > 0)
            .max_by(|&a, &b| better(&new, a, b))
        else {
            break;
        };
        for &c in &covers[best] {
            if !covered[c] {
                covered[c] = true;
                left -= 1;
                for &i in &covered_by[c] {
                    new[i] -= 1;
                }
            }
        }
        taken.push(best);
    }
    prune(taken, &covers, &seen, clauses.len())
        .into_iter()
        .map(|i| pieces[i])
        .collect()
}

/// Drops the anchors of a greedy cover (indices of candidates, each covering `covers[i]`)
/// that the others make needless: an anchor whose every clause holds another anchor (the
/// greedy takes a clause's rarest piece first and a shared piece later, and `error ` is
/// needless once `error` is taken). The commonest go first, then those that cover fewest
/// clauses. Every clause keeps an anchor, so the hits are the same; fewer anchors keep a
/// kind's scan to one pass.
fn prune(mut taken: Vec<usize>, covers: &[Vec<usize>], seen: &[usize], n: usize) -> Vec<usize> {
    let mut holders = vec![0usize; n];
    for &i in &taken {
        for &c in &covers[i] {
            holders[c] += 1;
        }
    }
    let mut order = taken.clone();
    order.sort_by(|&a, &b| {
        seen[b]
            .cmp(&seen[a])
            .then(covers[a].len().cmp(&covers[b].len()))
            .then(a.cmp(&b))
    });
    for i in order {
        if covers[i].iter().all(|&c| holders[c] > 1) {
            for &c in &covers[i] {
                holders[c] -= 1;
            }
            taken.retain(|&t| t != i);
        }
    }
    taken
}

/// How often pieces of text occur in the samples a kind's anchors are chosen on: each piece
/// of [`GRAM`] bytes, hashed into a small table, and the literals shorter than that, whole.
/// A hash collision only overstates a count, which costs speed, never hits.
#[derive(Clone)]
struct Tally {
    grams: Vec<u16>,
    short: BTreeMap<Vec<u8>, usize>,
    /// The bytes of all the samples.
    bytes: usize,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            grams: vec![0; 1 << Tally::BITS],
            short: BTreeMap::new(),
            bytes: 0,
        }
    }
}

impl Tally {
    const BITS: u32 = 16;

    /// Counts the pieces of `sample` (lower-cased), and the `short` literals in it.
    fn add(&mut self, sample: &[u8], short: &[&[u8]]) {
        for window in sample.windows(GRAM) {
            let slot = &mut self.grams[Self::slot(window)];
            *slot = slot.saturating_add(1);
        }
        for literal in short {
            let n = memchr::memmem::find_iter(sample, literal).count();
            *self.short.entry(literal.to_vec()).or_default() += n;
        }
        self.bytes += sample.len();
    }

    fn slot(gram: &[u8]) -> usize {
        let mut word = [0u8; GRAM];
        word.copy_from_slice(&gram[..GRAM]);
        (u32::from_le_bytes(word).wrapping_mul(0x9e37_79b1) >> (32 - Self::BITS)) as usize
    }

    /// At most how often `piece` occurs: a short literal's count, or the count of the rarest
    /// gram in a longer piece.
    fn at_most(&self, piece: &[u8]) -> usize {
        if piece.len() < GRAM {
            return self.short.get(piece).copied().unwrap_or(0);
        }
        piece
            .windows(GRAM)
            .map(|w| usize::from(self.grams[Self::slot(w)]))
            .min()
            .unwrap_or(0)
    }
}

/// An automaton over `literals`, matching case-insensitively when `fold`: a scan pass is
/// leftmost-first and case-exact (the only kind the SIMD prefilter serves: any match will do
/// to pick the line, and the text it runs on is lower-cased); a line is checked with standard
/// semantics and overlapping matches, so that no literal hides inside another. Contiguous
/// NFAs: quick to build for hundreds of literals, and small.
fn automaton<P: AsRef<[u8]>>(
    literals: &[P],
    fold: bool,
    semantics: MatchKind,
    kind: AhoCorasickKind,
) -> Option<AhoCorasick> {
    if literals.is_empty() {
        return None;
    }
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(fold)
        .match_kind(semantics)
        .kind(Some(kind))
        .build(literals)
        .ok()
}

/// The first [`SAMPLE_BYTES`] of `bytes`, to the end of a line.
fn sample(bytes: &[u8]) -> &[u8] {
    if bytes.len() <= SAMPLE_BYTES {
        return bytes;
    }
    let end =
        memchr::memchr(b'\n', &bytes[SAMPLE_BYTES..]).map_or(bytes.len(), |i| SAMPLE_BYTES + i + 1);
    &bytes[..end]
}

/// The longest piece of a literal between characters an encoder may escape, if it is still
/// long enough to be selective. JSON escapes `"`, `\` and tabs, Go's encoder also `<`, `>`
/// and `&`; none escapes `'`, which is kept (`Job '` is far rarer than `Job `).
fn raw_safe(literal: &str) -> Option<String> {
    literal
        .split(['"', '\\', '<', '>', '&', '\t'])
        .max_by_key(|piece| piece.len())
        .filter(|piece| piece.len() >= 4)
        .map(str::to_string)
}

/// Literal conjunctions (lower case) the sieve must keep on top of the rules' for the open
/// world (`open_world`), which reads every error record no rule claims and matches every
/// warning record against the message catalogue: failure shapes and level words (`warn`
/// is in every level name of a warning as a log writes it: `WARNING`, zap's `warn`, Ray's
/// events' `"severity":"WARNING"`), and the lines that state a version (`versions::LITERALS`: the report's header,
/// the Serve schema check and the known issues read them in every kind of file). Healthy logs hold few of them (under one line in ten
/// thousand in a generated 1 GB bundle), so they cost the sieve little.
fn open_world_alternatives() -> Vec<Vec<String>> {
    [
        "traceback (most recent call last)",
        "panic:",
        "check failed",
        "*** sig",
        "error",
        "exception",
        "fatal",
        "warn",
    ]
    .iter()
    .chain(crate::versions::LITERALS.iter())
    .map(|s| vec![s.to_string()])
    // A frame line, of a traceback (`, in f`: fragments pasted without their header have
    // only these) or of a faulthandler dump (` in f`, no comma): a dump longer than the
    // lines parsed after its head is still read whole.
    .chain([vec![
        "file ".to_string(),
        ", line ".to_string(),
        " in ".to_string(),
    ]])
    .collect()
}

/// The open world reads every error record no rule claims, and a Ray C++ error need not say
/// `error` (`Some workers of the worker process(4127) have not registered within the
/// timeout`): in the C++ logs, a line whose head has the level `E` or `C`
/// (`[2024-05-29 22:54:10,723 E 359273 359273] …`) is a hit whatever its text; so is one at
/// `W`, whose message the open world matches against the catalogue. Found by a
/// search of its own for the level letter between spaces, not by anchors: the C++ kinds'
/// anchors fill one scan pass already, and a second pass would cost more than this search
/// of a chunk still in the core's cache.
fn cpp_level_candidates(chunk: &[u8], out: &mut Vec<usize>) {
    let before = out.len();
    for needle in [&b" E "[..], &b" C "[..], &b" W "[..]] {
        for at in memchr::memmem::find_iter(chunk, needle) {
            let start = memchr::memrchr(b'\n', &chunk[..at]).map_or(0, |i| i + 1);
            if cpp_level_head(&chunk[start..]) {
                out.push(start);
            }
        }
    }
    if out.len() > before {
        out.sort_unstable();
        out.dedup();
    }
}

/// Whether `line` starts with a Ray C++ head at warning, error or fatal level:
/// `[YYYY-MM-DD HH:MM:SS,mmm E <pid> <tid>]`.
fn cpp_level_head(line: &[u8]) -> bool {
    line.len() > 28
        && line[0] == b'['
        && line[24] == b' '
        && matches!(line[25], b'W' | b'E' | b'C')
        && line[26] == b' '
        && line[1..5].iter().all(u8::is_ascii_digit)
        && line[20] == b','
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_line_needs_every_literal_of_an_alternative() {
        let sieve = Sieve::from_clauses(vec![
            vec!["/api/serve/", " 404"],
            vec!["refused"],
            vec!["connection refused by peer"],
            vec!["OOMKilled"],
        ]);
        let text = b"GET /api/serve/ 200\nGET /api/serve/ 404\nx\nconnection refused\n404 only\nConnection REFUSED\noomkilled\nOOMKilled";
        let kind = SourceKind::Operator;
        // Signal regexes match without regard to case, and so does the sieve.
        assert_eq!(sieve.hit_lines(kind, text), vec![1, 3, 5, 6, 7]);
        let hits = sieve.hits(kind, text);
        assert_eq!(hits[1], Hit { line: 3, start: 42 });
        assert!(sieve.hit_lines(kind, b"refuse\n\n").is_empty());
    }

    #[test]
    fn a_cpp_error_head_is_a_hit_whatever_its_text() {
        let sieve = Sieve::new(&[]);
        let text = b"[2024-05-29 22:54:10,723 I 359273 359273] (raylet) main.cc:1: started\n\
            [2024-05-29 22:54:10,723 E 359273 359290] (raylet) worker_pool.cc:581: Some workers of the worker process(4127) have not registered within the timeout.\n\
            [2024-05-29 22:54:10,729 C 359273 359273] (raylet) node_manager.cc:9: aborting\n\
            *** StackTrace Information ***\n\
            unknown\n\
            [2024-05-29 22:54:11,000 I 359273 359273] (raylet) main.cc:2: an E here is no level\n\
            [2024-05-29 22:54:11,001 E 359273 359290] (raylet) worker_pool.cc:581: Some workers of the worker process(4128) have not registered within the timeout.";
        assert_eq!(sieve.hit_lines(SourceKind::Raylet, text), vec![1, 2, 6]);
        // Only the C++ logs read heads so: elsewhere the same line needs a word.
        assert!(sieve.hit_lines(SourceKind::Dashboard, text).is_empty());
    }

    /// The open world matches every warning against the message catalogue: a C++ head at
    /// `W` is a hit whatever its text, and so is any line naming the level (`WARNING`).
    #[test]
    fn a_warning_is_a_hit_whatever_its_text() {
        let sieve = Sieve::new(&[]);
        let cpp = b"[2023-11-09 23:36:12,100 I 75 75] (raylet) main.cc:1: started\n\
            [2023-11-09 23:36:12,669 W 75 75] (raylet) worker_pool.cc:1279: Create runtime env failed for task ffff and couldn't create the worker.\n";
        assert_eq!(sieve.hit_lines(SourceKind::Raylet, cpp), vec![1]);
        let python = b"2023-03-18 06:51:17,100\tINFO scripts.py:1 -- Local node IP: 10.0.0.1\n\
            2023-03-18 06:51:17,521\tWARNING utils.py:1446 -- Unable to connect to GCS at head:80.\n";
        assert_eq!(sieve.hit_lines(SourceKind::RayPython, python), vec![1]);
    }

    #[test]
    fn an_alternative_holding_a_smaller_one_is_dropped() {
        let sieve = Sieve::from_clauses(vec![vec!["reason"], vec!["reason", "OOMKilled"]]);
        let kind = SourceKind::Raylet;
        let kc = sieve.kind(kind).unwrap();
        assert_eq!(kc.clauses.len(), 1);
        assert_eq!(sieve.hit_lines(kind, b"a\nthe Reason\n"), vec![1]);
    }

    /// Whether some literal of every clause holds one of `anchors`.
    fn covered(clauses: &[Vec<&[u8]>], anchors: &[&[u8]]) -> bool {
        clauses.iter().all(|literals| {
            literals
                .iter()
                .any(|l| anchors.iter().any(|a| memchr::memmem::find(l, a).is_some()))
        })
    }

    #[test]
    fn alternatives_share_anchors() {
        let clauses: Vec<Vec<&[u8]>> = vec![
            vec![b" nodes of type"],
            vec![b" nodes because"],
            vec![b"oomkilled"],
            vec![b"deadline", b"exceeded"],
        ];
        let anchors = cover(&clauses, &Tally::default());
        assert!(covered(&clauses, &anchors));
        assert_eq!(anchors.len(), 3, "{anchors:?}");
        // Pieces the sample is full of are passed over for ones it lacks.
        let sample = b"the nodes are fine, oom is zero\n".repeat(3000);
        let mut tally = Tally::default();
        tally.add(&sample, &[]);
        let anchors = cover(&clauses, &tally);
        assert!(covered(&clauses, &anchors));
        assert!(
            anchors
                .iter()
                .all(|a| memchr::memmem::find(&sample, a).is_none()),
            "{anchors:?}"
        );
    }

    #[test]
    fn an_anchor_the_others_make_needless_is_dropped() {
        // `xyzq` is rarer than `erro` and taken first for the first clause; `erro`, the second
        // clause's only piece, covers the first as well, so `xyzq` is needless.
        let clauses: Vec<Vec<&[u8]>> = vec![vec![b"error xyzq"], vec![b"erro"]];
        let mut tally = Tally::default();
        tally.add(b"erro erro erro\n", &[b"erro"]);
        assert_eq!(cover(&clauses, &tally), vec![&b"erro"[..]]);
    }

    #[test]
    fn a_kind_checked_line_by_line_has_the_hits_its_anchors_find() {
        let sieve = Sieve::from_clauses(vec![vec!["oomkilled"], vec!["deadline", "exceeded"]]);
        let kind = SourceKind::Raylet;
        let mut text = b"fine\nreason: OOMKilled\n".repeat(100);
        text.extend_from_slice(
            b"context deadline exceeded\nDEADLINE\n[2024-01-01 00:00:00,000 E 1 1] x\n",
        );
        let hits = |t: &[u8]| sieve.hits(kind, t);
        let unanchored = hits(&text);
        assert!(sieve.kind(kind).unwrap().scanner.read().unwrap().is_none());
        assert_eq!(unanchored.len(), 102, "{unanchored:?}");
        while sieve.kind(kind).unwrap().scanner.read().unwrap().is_none() {
            hits(&b"ok\n".repeat(UNANCHORED_BYTES / 3));
        }
        assert_eq!(hits(&text), unanchored);
    }

    #[test]
    fn anchors_are_chosen_again_when_a_text_shows_them_common() {
        let sieve = Sieve::from_clauses(vec![vec![" nodes of type"], vec![" nodes because"]]);
        let kind = SourceKind::Raylet;
        let rebuilds = || {
            let kc = sieve.kind(kind).unwrap();
            kc.rebuilds.load(Ordering::Relaxed)
        };
        // An empty text chooses nothing, nor do the kind's first texts, checked line by line.
        assert!(sieve.hit_lines(kind, b"").is_empty());
        let quiet = b"ok\n".repeat(UNANCHORED_BYTES / 3);
        assert!(sieve.hit_lines(kind, &quiet).is_empty());
        let kc = sieve.kind(kind).unwrap();
        assert!(kc.scanner.read().unwrap().is_none());
        // Chosen on a text that shows nothing: the piece both alternatives share, ` nodes `.
        assert!(sieve.hit_lines(kind, b"ok\n").is_empty());
        assert!(kc.scanner.read().unwrap().is_some());
        let mut text = b"the nodes are fine\n".repeat(1000);
        text.extend_from_slice(b"removing 3 nodes because they are idle\n");
        // Every line was a candidate: the hits are right, and the anchors chosen again.
        assert_eq!(sieve.hit_lines(kind, &text), vec![1000]);
        assert_eq!(rebuilds(), 1);
        // On the new anchors the same text wastes nothing.
        assert_eq!(sieve.hit_lines(kind, &text), vec![1000]);
        assert_eq!(rebuilds(), 1);
    }

    #[test]
    fn every_alternative_of_the_built_in_rules_holds_an_anchor() {
        let rules = crate::rules::library::builtin().unwrap();
        let sieve = Sieve::new(&rules);
        let sample = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/corpus/healthy-rayservice-handmade/kuberay-operator.log"
        ))
        .unwrap();
        for kind in SourceKind::ALL {
            let kc = sieve.kind(kind).unwrap();
            let clauses: Vec<Vec<&[u8]>> = kc
                .clauses
                .iter()
                .map(|ids| {
                    ids.iter()
                        .map(|&id| sieve.literals[id].as_bytes())
                        .collect()
                })
                .collect();
            // With nothing known of the text, a kind's alternatives fit in one scan pass.
            let anchors = cover(&clauses, &Tally::default());
            assert!(covered(&clauses, &anchors), "{kind:?}");
            assert!(
                anchors.len() <= PASS_LITERALS,
                "{kind:?}: {}",
                anchors.len()
            );
            let mut tally = Tally::default();
            tally.add(&sample.to_ascii_lowercase(), &sieve.short_pieces(kc));
            let anchors = cover(&clauses, &tally);
            assert!(covered(&clauses, &anchors), "{kind:?}");
        }
    }

    #[test]
    fn literals_survive_escaping() {
        assert_eq!(
            raw_safe("\"put /api/serve/").as_deref(),
            Some("put /api/serve/")
        );
        assert_eq!(raw_safe("a\"b"), None);
        assert_eq!(raw_safe("job '").as_deref(), Some("job '"));
    }
}
