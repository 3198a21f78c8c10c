//! Log templates: a record's first line with its variable parts masked, grouped in the spirit
//! of Drain (He et al., ICWS 2017): records with the same number of tokens and the same
//! leading token fall in one bucket, and join a template there when at least half of their
//! tokens agree with it; the tokens that differ become `<*>`. Linear in the number of records
//! (buckets hold few templates), and deterministic: records are taken in timeline order.
//!
//! A template's `key` is what the baseline stores: its text, so that a person can read the
//! baseline and see why a line is called healthy noise.

use std::collections::{BTreeMap, HashMap};

/// The mask every variable token becomes.
pub const WILD: &str = "<*>";

/// Longest first line tokenised; the rest of a long line is variable anyway.
const MAX_TOKENS: usize = 40;

/// Share of tokens that must agree for a record to join a template.
const SIMILARITY: f64 = 0.5;

/// One group of records.
#[derive(Clone, Debug)]
pub struct Template {
    pub tokens: Vec<String>,
    /// The records (event indices) in it, in timeline order.
    pub events: Vec<usize>,
}

impl Template {
    pub fn text(&self) -> String {
        self.tokens.join(" ")
    }
}

/// The tokens of a record's first line, variable ones masked.
pub fn masked(line: &str) -> Vec<String> {
    let line = strip_prefix_noise(line);
    let mut out: Vec<String> = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        // A quoted run is one token, whatever spaces it holds.
        let (token, after) = match rest.chars().next() {
            Some(q @ ('"' | '\'' | '`')) => match rest[1..].find(q) {
                Some(end) => (&rest[..end + 2], &rest[end + 2..]),
                None => split_word(rest),
            },
            _ => split_word(rest),
        };
        out.push(mask(token));
        rest = after;
        if out.len() == MAX_TOKENS {
            break;
        }
    }
    // Adjacent masks say no more than one.
    out.dedup_by(|a, b| a == WILD && b == WILD);
    out
}

fn split_word(s: &str) -> (&str, &str) {
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// A record's line without what every line of its format carries: a leading time, a level
/// word, a `file.py:123 --` location.
fn strip_prefix_noise(line: &str) -> &str {
    let line = line.trim();
    match line.find(" -- ") {
        Some(i) if i < 80 => &line[i + 4..],
        _ => line,
    }
}

/// A token is variable when it quotes something, holds a digit, or looks like an id or a
/// path; punctuation around it is kept so that `id=<*>,` still reads.
fn mask(token: &str) -> String {
    let first = token.chars().next().unwrap_or(' ');
    if matches!(first, '"' | '\'' | '`') && token.len() > 1 {
        return WILD.to_string();
    }
    if let Some((k, v)) = token.split_once('=') {
        if !k.is_empty() && !v.is_empty() {
            return format!("{k}={WILD}");
        }
    }
    let core = token.trim_matches(|c: char| !c.is_alphanumeric());
    let variable = core.chars().any(|c| c.is_ascii_digit())
        || core.contains('/')
        || core.contains('\\')
        || (core.len() >= 16 && core.chars().all(|c| c.is_ascii_hexdigit() || c == '-'));
    if variable {
        WILD.to_string()
    } else {
        token.to_string()
    }
}

/// Groups records into templates. `records` are `(event index, first line)` in timeline
/// order; templates come back in order of their first record.
pub fn mine<'a>(records: impl IntoIterator<Item = (usize, &'a str)>) -> Vec<Template> {
    let mut templates: Vec<Template> = Vec::new();
    let mut buckets: HashMap<(usize, String), Vec<usize>> = HashMap::new();
    for (event, line) in records {
        let tokens = masked(line);
        let lead = tokens.first().cloned().unwrap_or_default();
        let bucket = buckets.entry((tokens.len(), lead)).or_default();
        let best = bucket
            .iter()
            .map(|&t| (t, similarity(&templates[t].tokens, &tokens)))
            .filter(|&(_, s)| s >= SIMILARITY)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        match best {
            Some((t, _)) => {
                let tpl = &mut templates[t];
                for (have, new) in tpl.tokens.iter_mut().zip(&tokens) {
                    if have != new {
                        *have = WILD.to_string();
                    }
                }
                tpl.events.push(event);
            }
            None => {
                bucket.push(templates.len());
                templates.push(Template {
                    tokens,
                    events: vec![event],
                });
            }
        }
    }
    templates
}

/// Share of positions where two token lists of the same length agree (masks agree with
/// masks only).
fn similarity(a: &[String], b: &[String]) -> f64 {
    if a.is_empty() {
        return 1.0;
    }
    let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
    same as f64 / a.len() as f64
}

/// The healthy-noise baseline: templates seen in healthy bundles (shipped in the binary,
/// `baseline.txt`, one template a line, `#` comments). A record is known noise when its
/// masked first line matches a baseline template token for token, where the baseline's
/// `<*>` matches anything.
pub struct Baseline {
    by_shape: BTreeMap<(usize, String), Vec<Vec<String>>>,
}

impl Baseline {
    pub fn builtin() -> Baseline {
        Baseline::parse(include_str!("baseline.txt"))
    }

    pub fn parse(text: &str) -> Baseline {
        let mut by_shape: BTreeMap<(usize, String), Vec<Vec<String>>> = BTreeMap::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let tokens: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            let lead = tokens.first().cloned().unwrap_or_default();
            by_shape
                .entry((tokens.len(), lead))
                .or_default()
                .push(tokens);
        }
        Baseline { by_shape }
    }

    pub fn len(&self) -> usize {
        self.by_shape.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a template (or a record's masked tokens) is known healthy noise.
    pub fn knows(&self, tokens: &[String]) -> bool {
        let lead = tokens.first().cloned().unwrap_or_default();
        let shaped = |lead: &str| {
            self.by_shape
                .get(&(tokens.len(), lead.to_string()))
                .is_some_and(|list| {
                    list.iter().any(|b| {
                        b.iter()
                            .zip(tokens)
                            .all(|(have, t)| have == WILD || have == t)
                    })
                })
        };
        shaped(&lead) || shaped(WILD)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn variable_tokens_are_masked() {
        let t = masked(
            "2024-06-12 10:31:40,123\tERROR worker.py:123 -- Failed to connect to 10.244.1.7:6379 after 3 tries, node 'a1b2c3'",
        );
        assert_eq!(
            t.join(" "),
            "Failed to connect to <*> after <*> tries, node <*>"
        );
        assert_eq!(
            masked("reconcile failed: raycluster=\"ns/x\" error=boom").join(" "),
            "reconcile failed: raycluster=<*> error=<*>"
        );
    }

    #[test]
    fn records_of_one_shape_join_one_template() {
        let lines = [
            "Failed to fetch metrics from node alpha",
            "Failed to fetch metrics from node beta",
            "Actor gamma died unexpectedly",
            "Failed to fetch metrics from node delta",
        ];
        let t = mine(lines.iter().enumerate().map(|(i, l)| (i, *l)));
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].text(), "Failed to fetch metrics from node <*>");
        assert_eq!(t[0].events, vec![0, 1, 3]);
    }

    #[test]
    fn the_baseline_knows_its_templates_and_masks_match_anything() {
        let b = Baseline::parse("# noise\nFailed to fetch metrics from node <*>\n");
        assert!(b.knows(&masked("Failed to fetch metrics from node 10.0.0.1")));
        assert!(!b.knows(&masked("Failed to reach the GCS at node 10.0.0.1")));
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn the_builtin_baseline_parses() {
        assert!(Baseline::builtin().len() >= 7);
    }
}
