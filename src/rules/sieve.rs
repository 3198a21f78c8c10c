//! The prefilter-first read of a bundle for `analyze`: which lines of a file can matter to a
//! rule at all. An automaton over one literal of each alternative of every signal's regexes
//! (the rarest in the first megabyte of the kind's first file) scans the raw bytes, a line
//! where one is found is checked for a whole alternative, and only the records around the
//! lines that hold one are parsed: the ordinary healthy line costs a scan and a miss.
//!
//! Invariant: every line a signal could match contains one of its literals, so parsing only
//! the records around hits finds every occurrence the full parse would. Signals without a
//! literal make their source kinds be parsed in full. Literals are cut at characters that
//! JSON or YAML may escape (`"`, `\`, `'`, `<`, `>`, `&`), so an escaped line still hits.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Input, MatchKind};

use crate::event::SourceKind;
use crate::rules::literal::{folds_case, required_conjunctions};
use crate::rules::{Rule, SourceFilter};

/// Lines parsed before a hit, so that the record holding it starts inside the window.
pub const LOOKBACK_LINES: usize = 120;
/// Lines parsed after a hit, so that its continuation lines are folded in.
pub const LOOKAHEAD_LINES: usize = 80;

/// Bytes at the start of a file on which the anchors of its kind are chosen.
const SAMPLE_BYTES: usize = 256 << 10;

/// A literal of the sieve, as written, or lower-cased and matched without regard to case
/// when its pattern folds case.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Lit {
    text: String,
    folded: bool,
}

/// The compiled prefilter: every literal of every signal, and for each source kind the
/// alternatives that can match events of that kind. A line is a hit for a kind when it holds
/// every literal of one of that kind's alternatives.
pub struct Sieve {
    literals: Vec<Lit>,
    /// Finds every literal on one line (overlapping): exact ones, and folded ones.
    exact: Matcher,
    folded: Matcher,
    per_kind: Vec<(SourceKind, KindClauses)>,
    /// Source kinds with a signal that has no literal: parsed in full.
    full_kinds: Vec<SourceKind>,
}

/// An automaton and the sieve-wide literal id of each of its patterns.
#[derive(Default)]
struct Matcher {
    automaton: Option<AhoCorasick>,
    ids: Vec<usize>,
}

impl Matcher {
    fn new(literals: &[Lit], pick: impl Fn(&Lit) -> bool, fold: bool) -> Matcher {
        let ids: Vec<usize> = (0..literals.len())
            .filter(|&i| pick(&literals[i]))
            .collect();
        let texts: Vec<&str> = ids.iter().map(|&i| literals[i].text.as_str()).collect();
        Matcher {
            automaton: automaton(
                &texts,
                fold,
                MatchKind::Standard,
                AhoCorasickKind::ContiguousNFA,
            ),
            ids,
        }
    }

    /// Sieve-wide ids of the literals in `text`, overlapping, in order of their ends.
    fn each(&self, text: &[u8], mut f: impl FnMut(usize) -> bool) -> bool {
        let Some(ac) = &self.automaton else {
            return false;
        };
        for m in ac.find_overlapping_iter(text) {
            if let Some(&id) = self.ids.get(m.pattern().as_usize()) {
                if f(id) {
                    return true;
                }
            }
        }
        false
    }
}

/// The alternatives of one source kind, as ids into the sieve's literals.
#[derive(Default)]
struct KindClauses {
    /// Each alternative: the literal ids that must all be on the line. No alternative holds
    /// another one (a line that satisfies the larger satisfies the smaller).
    clauses: Vec<Vec<usize>>,
    /// For each literal id of the whole sieve, the clauses of this kind it belongs to.
    clauses_of: Vec<Vec<usize>>,
    /// What the scan looks for; built on first use, so only the kinds a bundle has pay.
    scanner: OnceLock<Scanner>,
}

/// The scan of one kind: one literal of each alternative (its anchor), in passes of at most
/// [`PASS_LITERALS`] anchors (exact and folded ones apart). A pass that small runs on a SIMD
/// prefilter at gigabytes a second; one automaton over all the anchors would walk its table
/// byte by byte at a few hundred megabytes a second.
#[derive(Default)]
struct Scanner {
    passes: Vec<AhoCorasick>,
}

/// Most anchors in one pass of the scan (the most the aho-corasick SIMD prefilter takes).
const PASS_LITERALS: usize = 64;

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
                    .map(|(k, s)| (k.as_str(), s.clauses.len()))
                    .collect::<Vec<_>>(),
            )
            .field("full_kinds", &self.full_kinds)
            .finish()
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

/// The alternatives (each a conjunction of raw-safe literals) that cover every occurrence of
/// a signal, or `None` when some occurrence could hold no literal.
fn signal_clauses(sig: &crate::rules::Signal) -> Option<Vec<Vec<Lit>>> {
    if !sig.text.is_empty() {
        let mut out = Vec::new();
        for re in &sig.text {
            let alts = required_conjunctions(re.as_str());
            if alts.is_empty() {
                return None;
            }
            let folded = folds_case(re.as_str());
            for alt in alts {
                let safe: Vec<Lit> = alt
                    .iter()
                    .filter_map(|l| raw_safe(l))
                    .map(|text| Lit { text, folded })
                    .collect();
                if safe.is_empty() {
                    return None;
                }
                out.push(safe);
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
    // A field condition needs its key on the raw line (`"key":` or `key=`, in whatever case
    // the format writes keys) and, when its regex has literals, one of them as well. Every
    // condition must hold, so the most telling one will do.
    let mut best: Option<Vec<Vec<Lit>>> = None;
    for (key, value) in &sig.fields {
        if DERIVED_FIELDS.contains(&key.as_str()) {
            return None;
        }
        let name = Lit {
            text: raw_safe(&key.to_lowercase())?,
            folded: true,
        };
        let folded = folds_case(value.as_str());
        let mut alts: Vec<Vec<Lit>> = Vec::new();
        for alt in required_conjunctions(value.as_str()) {
            let mut lits: Vec<Lit> = alt
                .iter()
                .filter_map(|l| raw_safe(l))
                .map(|text| Lit { text, folded })
                .collect();
            if lits.is_empty() {
                alts.clear();
                break;
            }
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
        let mut per_kind: Vec<(SourceKind, Vec<Vec<Lit>>)> =
            SourceKind::ALL.iter().map(|k| (*k, Vec::new())).collect();
        let mut full_kinds = Vec::new();
        for sig in rules.iter().flat_map(|r| r.signals.iter()) {
            let kinds: Vec<SourceKind> = match &sig.sources {
                SourceFilter::Any => SourceKind::ALL.to_vec(),
                SourceFilter::Kinds(kinds) => kinds.clone(),
            };
            match signal_clauses(sig) {
                Some(clauses) => {
                    for (kind, list) in &mut per_kind {
                        if kinds.contains(kind) {
                            list.extend(clauses.iter().cloned());
                        }
                    }
                }
                None => full_kinds.extend(kinds),
            }
        }
        full_kinds.sort();
        full_kinds.dedup();
        Sieve::build(per_kind, full_kinds)
    }

    /// A sieve where every kind has the same alternatives (for tests).
    #[cfg(test)]
    fn from_clauses(alts: Vec<Vec<(&str, bool)>>) -> Sieve {
        let alts: Vec<Vec<Lit>> = alts
            .into_iter()
            .map(|alt| {
                alt.into_iter()
                    .map(|(text, folded)| Lit {
                        text: text.to_string(),
                        folded,
                    })
                    .collect()
            })
            .collect();
        let per_kind = SourceKind::ALL.iter().map(|k| (*k, alts.clone())).collect();
        Sieve::build(per_kind, Vec::new())
    }

    fn build(per_kind: Vec<(SourceKind, Vec<Vec<Lit>>)>, full_kinds: Vec<SourceKind>) -> Sieve {
        let mut literals: Vec<Lit> = per_kind
            .iter()
            .flat_map(|(_, alts)| alts.iter().flatten().cloned())
            .collect();
        literals.sort();
        literals.dedup();
        let id_of = |l: &Lit| literals.binary_search(l).unwrap_or_default();
        let per_kind = per_kind
            .into_iter()
            .map(|(kind, alts)| {
                let mut clauses: Vec<Vec<usize>> = alts
                    .iter()
                    .map(|alt| {
                        let mut ids: Vec<usize> = alt.iter().map(id_of).collect();
                        ids.sort_unstable();
                        ids.dedup();
                        ids
                    })
                    .collect();
                // Fewest literals first, so that an alternative is dropped when a smaller
                // one it holds is already kept.
                clauses.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
                clauses.dedup();
                let mut kept: Vec<Vec<usize>> = Vec::new();
                for c in clauses {
                    if !kept.iter().any(|k| k.iter().all(|id| c.contains(id))) {
                        kept.push(c);
                    }
                }
                let mut clauses_of = vec![Vec::new(); literals.len()];
                for (ci, ids) in kept.iter().enumerate() {
                    for &id in ids {
                        clauses_of[id].push(ci);
                    }
                }
                (
                    kind,
                    KindClauses {
                        clauses: kept,
                        clauses_of,
                        scanner: OnceLock::new(),
                    },
                )
            })
            .collect();
        Sieve {
            exact: Matcher::new(&literals, |l| !l.folded, false),
            folded: Matcher::new(&literals, |l| l.folded, true),
            literals,
            per_kind,
            full_kinds,
        }
    }

    /// Every distinct literal the prefilter looks for, sorted: what an outside tool (a
    /// benchmark's `rg` run, say) would search for to do the same first pass.
    pub fn literals(&self) -> Vec<String> {
        let mut all: Vec<String> = self.literals.iter().map(|l| l.text.clone()).collect();
        all.sort();
        all.dedup();
        all
    }

    /// Whether files of this kind must be parsed in full.
    pub fn needs_full(&self, kind: SourceKind) -> bool {
        self.full_kinds.contains(&kind)
    }

    /// The lines of a file of `kind` holding a hit, ascending. The scan looks for the
    /// anchors of the kind's alternatives; only a line where one is found is checked in full.
    pub fn hits(&self, kind: SourceKind, bytes: &[u8]) -> Vec<Hit> {
        let Some((_, kc)) = self.per_kind.iter().find(|(k, _)| *k == kind) else {
            return Vec::new();
        };
        if kc.clauses.is_empty() {
            return Vec::new();
        }
        let scanner = kc.scanner.get_or_init(|| self.scanner(kc, sample(bytes)));
        // Starts of the lines where some anchor is, ascending.
        let mut candidates = Vec::new();
        for ac in &scanner.passes {
            let mut pos = 0usize;
            while pos < bytes.len() {
                let Some(m) = ac.find(Input::new(bytes).range(pos..)) else {
                    break;
                };
                let start =
                    memchr::memrchr(b'\n', &bytes[pos..m.start()]).map_or(pos, |i| pos + i + 1);
                candidates.push(start);
                pos = memchr::memchr(b'\n', &bytes[m.start()..])
                    .map_or(bytes.len(), |i| m.start() + i + 1);
            }
        }
        if scanner.passes.len() > 1 {
            candidates.sort_unstable();
            candidates.dedup();
        }
        let mut hits = Vec::new();
        let (mut counted, mut line) = (0usize, 0usize);
        let mut present: Vec<usize> = Vec::new();
        for start in candidates {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i + 1);
            if self.holds(kc, &bytes[start..end], &mut present) {
                line += memchr::memchr_iter(b'\n', &bytes[counted..start]).count();
                counted = start;
                hits.push(Hit { line, start });
            }
        }
        hits
    }

    /// 0-based indices of the lines of a file of `kind` holding a hit, ascending.
    pub fn hit_lines(&self, kind: SourceKind, bytes: &[u8]) -> Vec<usize> {
        self.hits(kind, bytes).into_iter().map(|h| h.line).collect()
    }

    /// Whether `line` holds every literal of one of the kind's alternatives.
    fn holds(&self, kc: &KindClauses, line: &[u8], present: &mut Vec<usize>) -> bool {
        present.clear();
        let mut check = |id: usize| {
            if present.contains(&id) {
                return false;
            }
            present.push(id);
            kc.clauses_of.get(id).is_some_and(|cs| {
                cs.iter()
                    .any(|&c| kc.clauses[c].iter().all(|l| present.contains(l)))
            })
        };
        self.exact.each(line, &mut check) || self.folded.each(line, &mut check)
    }

    /// The scan of one kind: for each alternative, its literal seen least often in `sample`
    /// (the longest on a tie), then only the anchors no shorter anchor lies inside. Every
    /// line that holds an alternative holds an anchor, so the choice changes the speed of
    /// the scan, never its hits.
    fn scanner(&self, kc: &KindClauses, sample: &[u8]) -> Scanner {
        let mut seen = vec![0u32; self.literals.len()];
        let mut count = |id: usize| {
            if let Some(n) = seen.get_mut(id) {
                *n = n.saturating_add(1);
            }
            false
        };
        self.exact.each(sample, &mut count);
        self.folded.each(sample, &mut count);
        let anchors: Vec<&Lit> = kc
            .clauses
            .iter()
            .filter_map(|ids| {
                ids.iter()
                    .min_by_key(|&&id| (seen[id], std::cmp::Reverse(self.literals[id].text.len())))
                    .map(|&id| &self.literals[id])
            })
            .collect();
        let mut anchors = anchors;
        anchors.sort_by_key(|l| l.text.len());
        anchors.dedup();
        let mut kept: Vec<&Lit> = Vec::new();
        for a in anchors {
            if !kept
                .iter()
                .any(|k| k.folded == a.folded && a.text.contains(k.text.as_str()))
            {
                kept.push(a);
            }
        }
        let mut passes = Vec::new();
        for folded in [false, true] {
            let texts: Vec<&str> = kept
                .iter()
                .filter(|l| l.folded == folded)
                .map(|l| l.text.as_str())
                .collect();
            // Passes of even size: 110 anchors make two of 55, not 64 and 46.
            let n_passes = texts.len().div_ceil(PASS_LITERALS);
            if n_passes == 0 {
                continue;
            }
            let per_pass = texts.len().div_ceil(n_passes);
            passes.extend(texts.chunks(per_pass).filter_map(|c| {
                automaton(
                    c,
                    folded,
                    MatchKind::LeftmostFirst,
                    AhoCorasickKind::ContiguousNFA,
                )
            }));
        }
        Scanner { passes }
    }
}

/// An automaton over `literals`, matching case-insensitively when `fold`: a DFA for a scan
/// pass (fast to run), a contiguous NFA for the checks of single lines (fast to build, for
/// hundreds of literals). A scan pass is
/// leftmost-first (the only kind the SIMD prefilter serves: any match will do to pick the
/// line); a line is checked with standard semantics and overlapping matches, so that no
/// literal hides inside another.
fn automaton(
    literals: &[&str],
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
/// long enough to be selective.
fn raw_safe(literal: &str) -> Option<String> {
    literal
        .split(['"', '\\', '\'', '<', '>', '&', '\t'])
        .max_by_key(|piece| piece.len())
        .filter(|piece| piece.len() >= 4)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_needs_every_literal_of_an_alternative() {
        let sieve = Sieve::from_clauses(vec![
            vec![("/api/serve/", false), (" 404", false)],
            vec![("refused", true)],
            vec![("connection refused by peer", false)],
            vec![("OOMKilled", false)],
        ]);
        let text = b"GET /api/serve/ 200\nGET /api/serve/ 404\nx\nconnection refused\n404 only\nConnection REFUSED\noomkilled\nOOMKilled";
        let kind = SourceKind::Operator;
        assert_eq!(sieve.hit_lines(kind, text), vec![1, 3, 5, 7]);
        let hits = sieve.hits(kind, text);
        assert_eq!(hits[1], Hit { line: 3, start: 42 });
        assert!(sieve.hit_lines(kind, b"refuse\n\n").is_empty());
    }

    #[test]
    fn an_alternative_holding_a_smaller_one_is_dropped() {
        let sieve = Sieve::from_clauses(vec![
            vec![("reason", false)],
            vec![("reason", false), ("OOMKilled", false)],
        ]);
        let kind = SourceKind::Raylet;
        let kc = &sieve.per_kind[0].1;
        assert_eq!(kc.clauses.len(), 1);
        assert_eq!(sieve.hit_lines(kind, b"a\nthe reason\n"), vec![1]);
    }

    #[test]
    fn literals_survive_escaping() {
        assert_eq!(
            raw_safe("\"put /api/serve/").as_deref(),
            Some("put /api/serve/")
        );
        assert_eq!(raw_safe("a\"b"), None);
    }
}
