//! The prefilter-first read of a bundle for `analyze`: which lines of a file can matter to a
//! rule at all. One automaton over the literal parts of every signal's regexes scans the raw
//! bytes; only the records around the lines it hits are parsed, so the ordinary healthy line
//! costs a scan and a miss instead of a parse.
//!
//! Invariant: every line a signal could match contains one of its literals, so parsing only
//! the records around hits finds every occurrence the full parse would. Signals without a
//! literal make their source kinds be parsed in full. Literals are cut at characters that
//! JSON or YAML may escape (`"`, `\`, `'`, `<`, `>`, `&`), so an escaped line still hits.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

use crate::event::SourceKind;
use crate::rules::literal::required_conjunctions;
use crate::rules::{Rule, SourceFilter};

/// Lines parsed before a hit, so that the record holding it starts inside the window.
pub const LOOKBACK_LINES: usize = 120;
/// Lines parsed after a hit, so that its continuation lines are folded in.
pub const LOOKAHEAD_LINES: usize = 80;

/// The compiled prefilter: one automaton per source kind, over the literals of the signals
/// that can match events of that kind. A line is a hit when it holds every literal of one
/// alternative of some signal.
pub struct Sieve {
    per_kind: Vec<(SourceKind, KindSieve)>,
    /// Source kinds with a signal that has no literal: parsed in full.
    full_kinds: Vec<SourceKind>,
}

#[derive(Default)]
struct KindSieve {
    automaton: Option<AhoCorasick>,
    /// Each alternative: the literal ids that must all be on the line.
    clauses: Vec<Vec<usize>>,
    /// For each literal id, the clauses it belongs to.
    clauses_of: Vec<Vec<usize>>,
    literals: Vec<String>,
}

impl std::fmt::Debug for Sieve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sieve")
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
fn signal_clauses(sig: &crate::rules::Signal) -> Option<Vec<Vec<String>>> {
    if !sig.text.is_empty() {
        let mut out = Vec::new();
        for re in &sig.text {
            let alts = required_conjunctions(re.as_str());
            if alts.is_empty() {
                return None;
            }
            for alt in alts {
                let safe: Vec<String> = alt.iter().filter_map(|l| raw_safe(l)).collect();
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
    // A field condition needs its key on the raw line (`"key":` or `key=`).
    let names: Vec<String> = sig
        .fields
        .iter()
        .filter(|(k, _)| !DERIVED_FIELDS.contains(&k.as_str()))
        .filter_map(|(k, _)| raw_safe(&k.to_lowercase()))
        .collect();
    (names.len() == sig.fields.len() && !names.is_empty()).then(|| vec![names])
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
        let per_kind = per_kind
            .into_iter()
            .map(|(kind, mut clauses)| {
                clauses.sort();
                clauses.dedup();
                (kind, KindSieve::new(clauses))
            })
            .collect();
        Sieve {
            per_kind,
            full_kinds,
        }
    }

    /// Every distinct literal the prefilter looks for, sorted: what an outside tool (a
    /// benchmark's `rg` run, say) would search for to do the same first pass.
    pub fn literals(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .per_kind
            .iter()
            .flat_map(|(_, ks)| ks.literals.iter().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// Whether files of this kind must be parsed in full.
    pub fn needs_full(&self, kind: SourceKind) -> bool {
        self.full_kinds.contains(&kind)
    }

    /// 0-based indices of the lines of a file of `kind` holding a hit, ascending.
    pub fn hit_lines(&self, kind: SourceKind, bytes: &[u8]) -> Vec<usize> {
        match self.per_kind.iter().find(|(k, _)| *k == kind) {
            Some((_, ks)) => ks.hit_lines(bytes),
            None => Vec::new(),
        }
    }
}

impl KindSieve {
    fn new(clauses_lit: Vec<Vec<String>>) -> KindSieve {
        let mut literals: Vec<String> = Vec::new();
        let mut clauses = Vec::with_capacity(clauses_lit.len());
        for alt in &clauses_lit {
            let mut ids: Vec<usize> = alt
                .iter()
                .map(|l| match literals.iter().position(|x| x == l) {
                    Some(i) => i,
                    None => {
                        literals.push(l.clone());
                        literals.len() - 1
                    }
                })
                .collect();
            ids.sort_unstable();
            ids.dedup();
            clauses.push(ids);
        }
        let mut clauses_of = vec![Vec::new(); literals.len()];
        for (ci, ids) in clauses.iter().enumerate() {
            for &id in ids {
                clauses_of[id].push(ci);
            }
        }
        let automaton = (!literals.is_empty())
            .then(|| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(&literals)
                    .ok()
            })
            .flatten();
        KindSieve {
            automaton,
            clauses,
            clauses_of,
            literals,
        }
    }

    fn hit_lines(&self, bytes: &[u8]) -> Vec<usize> {
        let Some(ac) = &self.automaton else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let (mut pos, mut line) = (0usize, 0usize);
        let mut present: Vec<usize> = Vec::new();
        let mut line_end = 0usize;
        let mut decided = false;
        for m in ac.find_overlapping_iter(bytes) {
            if m.start() >= line_end {
                // A new line: settle the previous one.
                if !decided && self.satisfied(&present) {
                    lines.push(line);
                }
                present.clear();
                decided = false;
                line += memchr::memchr_iter(b'\n', &bytes[pos..m.start()]).count();
                pos = m.start();
                line_end = memchr::memchr(b'\n', &bytes[m.start()..])
                    .map_or(bytes.len(), |i| m.start() + i + 1);
            }
            if decided {
                continue;
            }
            let id = m.pattern().as_usize();
            if !present.contains(&id) {
                present.push(id);
                if self.clauses_of[id]
                    .iter()
                    .any(|&c| self.clauses[c].iter().all(|l| present.contains(l)))
                {
                    lines.push(line);
                    decided = true;
                }
            }
        }
        if !decided && self.satisfied(&present) {
            lines.push(line);
        }
        lines.dedup();
        lines
    }

    fn satisfied(&self, present: &[usize]) -> bool {
        present.iter().any(|&id| {
            self.clauses_of[id]
                .iter()
                .any(|&c| self.clauses[c].iter().all(|l| present.contains(l)))
        })
    }
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
        let ks = KindSieve::new(vec![
            vec!["/api/serve/".into(), " 404".into()],
            vec!["refused".into()],
        ]);
        let text = b"GET /api/serve/ 200\nGET /api/serve/ 404\nx\nconnection refused\n404 only\n";
        assert_eq!(ks.hit_lines(text), vec![1, 3]);
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
