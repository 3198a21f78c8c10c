//! Which templates a line matches (`patterns/messages/README.md`, "How a line matches"; the
//! Python reference is `scripts/catalogue/msgmatch.py`: keep the two in step).
//!
//! A template is cut at each `{}`; its pieces are trimmed and those shorter than
//! [`MIN_PIECE`] dropped; a line matches when every piece occurs in it, in order. One
//! Aho-Corasick automaton over the head of each template's longest piece (its anchor) finds the
//! candidates in one pass over the line; only they are checked piece by piece. A template
//! whose pieces hold fewer than [`MIN_LITERAL`] characters says too little to match anything.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickKind};

use super::Message;

/// Shortest piece a line must contain.
const MIN_PIECE: usize = 3;
/// Fewest literal characters of a template that can be matched at all.
const MIN_LITERAL: usize = 12;
/// Fewest literal characters a partial match must hold (see [`in_order`]).
const PARTIAL_MIN: usize = 40;
/// Fewest characters of a piece that a line cut short may end with and have them counted.
const CUT_MIN: usize = 12;
/// Longest anchor, in bytes: candidates are checked whole anyway, and the automaton's size
/// grows with the anchors' (whole pieces of some 8,000 templates made it 25 MB).
const ANCHOR_LEN: usize = 16;

pub(super) struct Matcher {
    /// The automaton over the distinct anchors; `None` when there is nothing to match.
    anchors: Option<AhoCorasick>,
    /// For each anchor, the templates (message indices) it stands for.
    by_anchor: Vec<Vec<usize>>,
    /// Each message's pieces (empty when it cannot be matched).
    pieces: Vec<Vec<String>>,
    /// Whether each message's template begins and ends with its text (no `{}` there).
    edges: Vec<(bool, bool)>,
}

/// A template's pieces, in order.
pub(super) fn pieces(template: &str) -> Vec<String> {
    template
        .split("{}")
        .map(str::trim)
        .filter(|p| p.len() >= MIN_PIECE)
        .map(str::to_string)
        .collect()
}

/// Whether pieces say enough to be matched against lines.
pub(super) fn usable(pieces: &[String]) -> bool {
    pieces.iter().map(String::len).sum::<usize>() >= MIN_LITERAL
}

/// Whether a template begins and ends with text of its own rather than a `{}`.
fn edges(template: &str) -> (bool, bool) {
    let t = template.trim();
    (!t.starts_with("{}"), !t.ends_with("{}"))
}

/// How many literal characters of the template `line` matches, when it matches: every piece
/// in order; or, for a long template, pieces in order holding at least [`PARTIAL_MIN`]
/// characters and half its text (a line cut short, or a version that reworded a clause).
/// Where the template begins (ends) with its own text, the first (last) piece must not start
/// (end) inside a word of the line: the template `NotFoundError: {}` is no match for
/// `ModuleNotFoundError: x`. Between pieces a `{}` may be glued to them (`{}s`, `id='{}'`).
fn in_order(pieces: &[String], (start, end): (bool, bool), line: &str) -> Option<usize> {
    let mut at = 0;
    let mut matched = 0;
    let last = pieces.len().saturating_sub(1);
    for (n, p) in pieces.iter().enumerate() {
        if let Some(to) = find_word(line, p, at, start && n == 0, end && n == last) {
            at = to;
            matched += p.len();
        } else if let Some(cut) = cut_tail(line, p, at) {
            // A line cut short inside this piece ends the match: what it holds counts.
            matched += cut;
            break;
        }
    }
    let total: usize = pieces.iter().map(String::len).sum();
    (matched == total || matched >= PARTIAL_MIN && 2 * matched >= total).then_some(matched)
}

/// How many characters of `piece` the line ends with, from a word's start at or after `from`,
/// when it is cut short inside the piece (at least [`CUT_MIN`] of them). Such a tail begins
/// with the piece's first [`CUT_MIN`] bytes, so only their occurrences are tried.
fn cut_tail(line: &str, piece: &str, from: usize) -> Option<usize> {
    let rest = line.get(from..)?;
    let mut n = CUT_MIN.min(piece.len());
    while !piece.is_char_boundary(n) {
        n -= 1;
    }
    rest.match_indices(&piece[..n])
        .map(|(k, _)| k)
        .filter(|&k| {
            !rest[..k]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
        })
        .map(|k| &rest[k..])
        .find(|tail| tail.len() >= CUT_MIN && tail.len() < piece.len() && piece.starts_with(tail))
        .map(str::len)
}

/// The end of the first occurrence of `piece` in `line` at or after `from`, with a word
/// boundary before it (`before`) and after it (`after`) when asked.
fn find_word(line: &str, piece: &str, from: usize, before: bool, after: bool) -> Option<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let starts_word = before && piece.chars().next().is_some_and(word);
    let ends_word = after && piece.chars().next_back().is_some_and(word);
    let mut at = from;
    while let Some(found) = line.get(at..).and_then(|rest| rest.find(piece)) {
        let start = at + found;
        let end = start + piece.len();
        let before_ok = !starts_word || !line[..start].chars().next_back().is_some_and(word);
        let after_ok = !ends_word || !line[end..].chars().next().is_some_and(word);
        if before_ok && after_ok {
            return Some(end);
        }
        at = start + piece.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// A line as templates are written: runs of whitespace one space, and the quotes a JSON
/// string escapes (`\"`) plain, so that a pasted operator line matches like its parsed field.
pub(super) fn normalised(line: &str) -> std::borrow::Cow<'_, str> {
    let spaced = line
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_whitespace() && w[1].is_ascii_whitespace())
        || line.bytes().any(|b| b.is_ascii_whitespace() && b != b' ');
    if !spaced && !line.contains("\\\"") {
        return std::borrow::Cow::Borrowed(line);
    }
    let unescaped = line.replace("\\\"", "\"");
    std::borrow::Cow::Owned(unescaped.split_whitespace().collect::<Vec<_>>().join(" "))
}

impl Matcher {
    pub(super) fn new(messages: &[Message]) -> Matcher {
        let pieces: Vec<Vec<String>> = messages
            .iter()
            .map(|m| {
                let p = pieces(&m.template);
                if usable(&p) {
                    p
                } else {
                    Vec::new()
                }
            })
            .collect();
        let edges = messages.iter().map(|m| edges(&m.template)).collect();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut anchors: Vec<&str> = Vec::new();
        let mut by_anchor: Vec<Vec<usize>> = Vec::new();
        for (i, p) in pieces.iter().enumerate() {
            // The longest piece; the first of equals, so the choice is stable.
            let Some(anchor) = p.iter().fold(None::<&String>, |best, x| match best {
                Some(b) if b.len() >= x.len() => Some(b),
                _ => Some(x),
            }) else {
                continue;
            };
            let mut cut = anchor.len().min(ANCHOR_LEN);
            while !anchor.is_char_boundary(cut) {
                cut -= 1;
            }
            let anchor = &anchor[..cut];
            let slot = *index.entry(anchor).or_insert_with(|| {
                anchors.push(anchor);
                by_anchor.push(Vec::new());
                anchors.len() - 1
            });
            by_anchor[slot].push(i);
        }
        let automaton = if anchors.is_empty() {
            None
        } else {
            // A contiguous NFA: a few lookups a run do not repay a DFA's build time and memory.
            AhoCorasick::builder()
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(&anchors)
                .ok()
        };
        Matcher {
            anchors: automaton,
            by_anchor,
            pieces,
            edges,
        }
    }

    /// Every message the line matches, with its literal length; in message order.
    pub(super) fn matching(&self, line: &str) -> Vec<(usize, usize)> {
        let Some(ac) = &self.anchors else {
            return Vec::new();
        };
        let line = normalised(line);
        let line = line.as_ref();
        let mut hit: Vec<usize> = ac
            .find_overlapping_iter(line)
            .map(|m| m.pattern().as_usize())
            .collect();
        hit.sort_unstable();
        hit.dedup();
        let mut out: Vec<(usize, usize)> = hit
            .into_iter()
            .flat_map(|a| self.by_anchor[a].iter().copied())
            .filter_map(|i| Some((i, in_order(&self.pieces[i], self.edges[i], line)?)))
            .collect();
        out.sort_unstable();
        out
    }
}
