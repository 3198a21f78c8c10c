//! The prefilter-first read of a bundle for `analyze`: which lines of a file can matter to a
//! rule at all. For each source kind, an automaton over one literal of each alternative of
//! every signal's regexes (the rarest in the first 256 KiB of the kind's first file) scans a
//! lower-cased copy of the raw bytes, a line where one is found is checked for a whole
//! alternative, and only the records around the lines that hold one are parsed: the ordinary
//! healthy line costs a scan and a miss.
//!
//! Invariant: every line a signal could match holds every literal of one of its alternatives,
//! whatever their case, so parsing only the records around hits finds every occurrence the
//! full parse would. Signals without a literal make their source kinds be parsed in full.
//! Literals are cut at characters that JSON may escape (`"`, `\`, tab, and `<`, `>`, `&` for
//! Go's encoder), so an escaped line still hits.

use std::sync::OnceLock;

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

/// The compiled prefilter: every literal of every signal (lower-cased: signal regexes match
/// without regard to case unless a rule says otherwise, and a case-sensitive one only ever
/// matches lines its lower-cased literals are on), and for each source kind the alternatives
/// that can match events of that kind. A line is a hit for a kind when it holds every literal
/// of one of that kind's alternatives.
pub struct Sieve {
    literals: Vec<String>,
    /// Finds every literal on one line, overlapping, whatever its case.
    all: Option<AhoCorasick>,
    per_kind: Vec<(SourceKind, KindClauses)>,
    /// Source kinds with a signal that has no literal: parsed in full.
    full_kinds: Vec<SourceKind>,
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
/// [`PASS_LITERALS`] anchors over a lower-cased copy of the text. A pass that small, matched
/// case for case, runs on a SIMD prefilter at about a gigabyte a second; one case-blind
/// automaton over all the anchors walks its table byte by byte at a few hundred megabytes.
#[derive(Default)]
struct Scanner {
    passes: Vec<AhoCorasick>,
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
    // A field condition needs its key on the raw line (`"key":` or `key=`) and, when its
    // regex has literals, one of them as well. Every condition must hold, so the most telling
    // one will do.
    let mut best: Option<Vec<Vec<String>>> = None;
    for (key, value) in &sig.fields {
        if DERIVED_FIELDS.contains(&key.as_str()) {
            return None;
        }
        let name = raw_safe(&key.to_lowercase())?;
        let mut alts: Vec<Vec<String>> = Vec::new();
        for alt in required_conjunctions(value.as_str()) {
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
        let mut per_kind: Vec<(SourceKind, Vec<Vec<String>>)> =
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
    fn from_clauses(alts: Vec<Vec<&str>>) -> Sieve {
        let alts: Vec<Vec<String>> = alts
            .into_iter()
            .map(|alt| alt.into_iter().map(str::to_lowercase).collect())
            .collect();
        let per_kind = SourceKind::ALL.iter().map(|k| (*k, alts.clone())).collect();
        Sieve::build(per_kind, Vec::new())
    }

    fn build(per_kind: Vec<(SourceKind, Vec<Vec<String>>)>, full_kinds: Vec<SourceKind>) -> Sieve {
        let mut literals: Vec<String> = per_kind
            .iter()
            .flat_map(|(_, alts)| alts.iter().flatten().cloned())
            .collect();
        literals.sort();
        literals.dedup();
        let id_of = |l: &String| literals.binary_search(l).unwrap_or_default();
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
        let texts: Vec<&str> = literals.iter().map(String::as_str).collect();
        Sieve {
            all: automaton(
                &texts,
                true,
                MatchKind::Standard,
                AhoCorasickKind::ContiguousNFA,
            ),
            literals,
            per_kind,
            full_kinds,
        }
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
        let Some((_, kc)) = self.per_kind.iter().find(|(k, _)| *k == kind) else {
            return Vec::new();
        };
        if kc.clauses.is_empty() {
            return Vec::new();
        }
        let scanner = kc.scanner.get_or_init(|| self.scanner(kc, sample(bytes)));
        let lower = bytes.to_ascii_lowercase();
        // Starts of the lines where some anchor is, ascending.
        let mut candidates = Vec::new();
        for ac in &scanner.passes {
            let mut pos = 0usize;
            while pos < lower.len() {
                let Some(m) = ac.find(Input::new(&lower).range(pos..)) else {
                    break;
                };
                let start =
                    memchr::memrchr(b'\n', &lower[pos..m.start()]).map_or(pos, |i| pos + i + 1);
                candidates.push(start);
                pos = memchr::memchr(b'\n', &lower[m.start()..])
                    .map_or(lower.len(), |i| m.start() + i + 1);
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

    /// The scan of one kind: for each alternative, its literal seen least often in `sample`
    /// (the longest on a tie), then only the anchors no shorter anchor lies inside. Every
    /// line that holds an alternative holds an anchor, so the choice changes the speed of
    /// the scan, never its hits.
    fn scanner(&self, kc: &KindClauses, sample: &[u8]) -> Scanner {
        let mut seen = vec![0u32; self.literals.len()];
        if let Some(all) = &self.all {
            for m in all.find_overlapping_iter(sample) {
                if let Some(n) = seen.get_mut(m.pattern().as_usize()) {
                    *n = n.saturating_add(1);
                }
            }
        }
        let mut anchors: Vec<&str> = kc
            .clauses
            .iter()
            .filter_map(|ids| {
                ids.iter()
                    .min_by_key(|&&id| (seen[id], std::cmp::Reverse(self.literals[id].len())))
                    .map(|&id| self.literals[id].as_str())
            })
            .collect();
        anchors.sort_by_key(|l| l.len());
        anchors.dedup();
        let mut kept: Vec<&str> = Vec::new();
        for a in anchors {
            if !kept.iter().any(|k| a.contains(k)) {
                kept.push(a);
            }
        }
        kept.sort_unstable();
        // Passes of even size: 110 anchors make two of 55, not 64 and 46.
        let n_passes = kept.len().div_ceil(PASS_LITERALS);
        let passes = if n_passes == 0 {
            Vec::new()
        } else {
            let per_pass = kept.len().div_ceil(n_passes);
            kept.chunks(per_pass)
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
        Scanner { passes }
    }
}

/// An automaton over `literals`, matching case-insensitively when `fold`: a scan pass is
/// leftmost-first and case-exact (the only kind the SIMD prefilter serves: any match will do
/// to pick the line, and the text it runs on is lower-cased); a line is checked with standard
/// semantics and overlapping matches, so that no literal hides inside another. Contiguous
/// NFAs: quick to build for hundreds of literals, and small.
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
/// long enough to be selective. JSON escapes `"`, `\` and tabs, Go's encoder also `<`, `>`
/// and `&`; none escapes `'`, which is kept (`Job '` is far rarer than `Job `).
fn raw_safe(literal: &str) -> Option<String> {
    literal
        .split(['"', '\\', '<', '>', '&', '\t'])
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
    fn an_alternative_holding_a_smaller_one_is_dropped() {
        let sieve = Sieve::from_clauses(vec![vec!["reason"], vec!["reason", "OOMKilled"]]);
        let kind = SourceKind::Raylet;
        let kc = &sieve.per_kind[0].1;
        assert_eq!(kc.clauses.len(), 1);
        assert_eq!(sieve.hit_lines(kind, b"a\nthe Reason\n"), vec![1]);
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
