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
use crate::rules::{Rule, SourceFilter};

/// Lines parsed before a hit, so that the record holding it starts inside the window.
pub const LOOKBACK_LINES: usize = 120;
/// Lines parsed after a hit, so that its continuation lines are folded in.
pub const LOOKAHEAD_LINES: usize = 80;

/// The compiled prefilter.
pub struct Sieve {
    automaton: Option<AhoCorasick>,
    /// Source kinds with a signal that has no literal: parsed in full.
    full_kinds: Vec<SourceKind>,
    /// Whether some literal-less signal accepts any source: then everything is parsed in full.
    full_everything: bool,
}

impl std::fmt::Debug for Sieve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sieve")
            .field(
                "literals",
                &self.automaton.as_ref().map_or(0, |a| a.patterns_len()),
            )
            .field("full_kinds", &self.full_kinds)
            .field("full_everything", &self.full_everything)
            .finish()
    }
}

impl Sieve {
    pub fn new(rules: &[Rule]) -> Sieve {
        let mut literals: Vec<String> = Vec::new();
        let mut full_kinds = Vec::new();
        let mut full_everything = false;
        for sig in rules.iter().flat_map(|r| r.signals.iter()) {
            let usable: Vec<String> = sig.literals.iter().filter_map(|l| raw_safe(l)).collect();
            if usable.len() < sig.literals.len() || sig.literals.is_empty() {
                match &sig.sources {
                    SourceFilter::Any => full_everything = true,
                    SourceFilter::Kinds(kinds) => full_kinds.extend(kinds.iter().copied()),
                }
                continue;
            }
            literals.extend(usable);
        }
        literals.sort();
        literals.dedup();
        full_kinds.sort();
        full_kinds.dedup();
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&literals)
            .ok();
        Sieve {
            automaton,
            full_kinds,
            full_everything,
        }
    }

    /// Whether files of this kind must be parsed in full.
    pub fn needs_full(&self, kind: SourceKind) -> bool {
        self.full_everything || self.automaton.is_none() || self.full_kinds.contains(&kind)
    }

    /// 0-based indices of the lines holding a hit, ascending, without duplicates.
    pub fn hit_lines(&self, bytes: &[u8]) -> Vec<usize> {
        let Some(ac) = &self.automaton else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let (mut pos, mut line) = (0usize, 0usize);
        let mut line_end = 0usize;
        for m in ac.find_iter(bytes) {
            if m.start() < line_end {
                continue; // Same line as the previous hit.
            }
            line += memchr::memchr_iter(b'\n', &bytes[pos..m.start()]).count();
            pos = m.start();
            lines.push(line);
            line_end = memchr::memchr(b'\n', &bytes[m.start()..])
                .map_or(bytes.len(), |i| m.start() + i + 1);
        }
        lines
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
    fn literals_survive_escaping() {
        assert_eq!(
            raw_safe("\"put /api/serve/").as_deref(),
            Some("put /api/serve/")
        );
        assert_eq!(raw_safe("a\"b"), None);
    }
}
