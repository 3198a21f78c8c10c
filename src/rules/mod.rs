//! Rules as data: `patterns/*.toml`, one rule per file, compiled into matchers and evaluated
//! over a timeline by a closed, reviewed set of predicates.
//!
//! - `loader`: TOML → validated [`Rule`] (regexes compiled, durations parsed, samples checked);
//!   errors name the file and the key. The built-in library is compiled into the binary, and
//!   its regexes at their first use ([`Pattern`]): the test suite checks them.
//! - `literal`: the literal parts of each signal's regexes, for the prefilter.
//! - `known`: known issues, rules that are bugs of some KubeRay or Ray releases, and what the
//!   bundle's versions say of them.
//! - `engine`: one pass over the timeline (a multi-pattern prefilter, then full regexes on
//!   candidates only), then each rule's clauses over the matched occurrences → findings.
//!
//! Invariants: no rendering, no printing, no reading from the bundle. A broken pattern file is
//! our (or the user's) bug and stops the run; a broken log line never does.

pub mod catalogue;
pub mod engine;
pub mod known;
pub mod library;
pub mod lifecycle;
pub mod literal;
pub mod loader;
pub mod sieve;

use std::sync::OnceLock;

use regex::{Captures, Regex, RegexBuilder};
use serde::Serialize;

use crate::event::{Level, Micros, SourceKind};

/// How bad a cause is. `Info` is reserved for benign findings that need no action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
    Critical,
}

impl Severity {
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            "critical" => Some(Severity::Critical),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }

    /// The weight severity carries in the ranking score.
    pub fn weight(self) -> f64 {
        match self {
            Severity::Info => 0.1,
            Severity::Warning => 0.4,
            Severity::Error => 0.7,
            Severity::Critical => 1.0,
        }
    }
}

/// A permanent rule code such as `DSH004`: three upper-case letters and three digits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RuleCode(String);

impl RuleCode {
    pub fn parse(s: &str) -> Option<RuleCode> {
        let b = s.as_bytes();
        let ok = b.len() == 6
            && b.iter().take(3).all(u8::is_ascii_uppercase)
            && b.iter().skip(3).all(u8::is_ascii_digit);
        ok.then(|| RuleCode(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A code raysift itself gives (the open-world layer's `OWD…`), not read from a file.
    pub(crate) fn builtin(code: &'static str) -> RuleCode {
        RuleCode(code.to_string())
    }
}

impl std::fmt::Display for RuleCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which events a signal looks at.
#[derive(Clone, Debug)]
pub enum SourceFilter {
    Any,
    Kinds(Vec<SourceKind>),
}

impl SourceFilter {
    pub fn allows(&self, kind: SourceKind) -> bool {
        match self {
            SourceFilter::Any => true,
            SourceFilter::Kinds(kinds) => kinds.contains(&kind),
        }
    }
}

/// One kind of evidence a rule looks for: a regex over an event's text (message and field
/// values), or over a fact's `path` and `value`, restricted to some source kinds and levels.
#[derive(Clone, Debug)]
pub struct Signal {
    pub name: String,
    pub sources: SourceFilter,
    pub min_level: Option<Level>,
    /// Any of these over the message or any field value.
    pub text: Vec<Pattern>,
    /// None of these may match (a near-miss filter).
    pub not_text: Vec<Pattern>,
    /// Field conditions: `(field name, regex over its value)`, all must hold.
    pub fields: Vec<(String, Pattern)>,
    /// Literals, lower-cased, one of which every matching event contains (empty: no prefilter).
    pub literals: Vec<String>,
    /// A named capture whose value joins occurrences across signals (e.g. a host or app).
    pub key: Option<String>,
    /// What an occurrence means, shown beside each evidence line.
    pub description: String,
}

/// A signal's regex, compiled when a line first asks for it. The built-in library holds some
/// 700 case-insensitive regexes: compiling them all took about 0.1 s of every run, most of
/// `analyze`'s time on a small bundle, and a bundle puts lines before only a few of them (the
/// sieve's literals pick the candidates). A user's pattern is compiled as it is loaded, so
/// that its errors are reported then; the built-in ones are compiled by the test suite.
#[derive(Clone, Debug)]
pub struct Pattern {
    source: String,
    case_sensitive: bool,
    /// `None` inside: the pattern does not compile (never for one that was checked), and
    /// then matches nothing.
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    /// Compiles `source` now: an error is the regex crate's.
    pub fn compile(source: &str, case_sensitive: bool) -> Result<Pattern, regex::Error> {
        let re = Pattern::build(source, case_sensitive)?;
        Ok(Pattern {
            source: source.to_string(),
            case_sensitive,
            compiled: OnceLock::from(Some(re)),
        })
    }

    /// A pattern compiled on first use; it matches nothing if it does not compile.
    pub fn deferred(source: &str, case_sensitive: bool) -> Pattern {
        Pattern {
            source: source.to_string(),
            case_sensitive,
            compiled: OnceLock::new(),
        }
    }

    fn build(source: &str, case_sensitive: bool) -> Result<Regex, regex::Error> {
        RegexBuilder::new(source)
            .case_insensitive(!case_sensitive)
            .size_limit(1 << 22)
            .build()
    }

    /// The regex as written in the pattern file.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The compiled regex, compiled now if it was not yet.
    pub fn regex(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| Pattern::build(&self.source, self.case_sensitive).ok())
            .as_ref()
    }

    pub fn is_match(&self, haystack: &str) -> bool {
        self.regex().is_some_and(|re| re.is_match(haystack))
    }

    pub fn captures<'h>(&self, haystack: &'h str) -> Option<Captures<'h>> {
        self.regex()?.captures(haystack)
    }

    /// Whether the regex has been compiled (or found not to compile) yet.
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }
}

/// A condition over signal occurrences. The closed set of predicates.
#[derive(Clone, Debug)]
pub enum Clause {
    /// At least `at_least` occurrences (within `within` of each other, if given).
    Count {
        signal: String,
        at_least: usize,
        within: Option<Micros>,
    },
    /// No occurrence at all.
    Absent { signal: String },
    /// An occurrence of `first`, then one of `then` no later than `within` after it (joined on
    /// the signals' keys when `join`).
    Sequence {
        first: String,
        then: String,
        within: Option<Micros>,
        join: bool,
    },
    /// An occurrence of `first` with no `then` after it within `within` (or ever).
    AbsentAfter {
        first: String,
        then: String,
        within: Option<Micros>,
        join: bool,
    },
    /// The span from the first to the last occurrence is at least / at most this long. With
    /// `until_first`, only occurrences before the first occurrence of that signal count.
    Span {
        signal: String,
        at_least: Option<Micros>,
        at_most: Option<Micros>,
        until_first: Option<String>,
    },
}

impl Clause {
    pub fn signals(&self) -> Vec<&str> {
        match self {
            Clause::Count { signal, .. } | Clause::Absent { signal } => vec![signal],
            Clause::Span {
                signal,
                until_first,
                ..
            } => {
                let mut v = vec![signal.as_str()];
                v.extend(until_first.as_deref());
                v
            }
            Clause::Sequence { first, then, .. } | Clause::AbsentAfter { first, then, .. } => {
                vec![first, then]
            }
        }
    }
}

/// One `[[when]]` block: the clauses that must all hold, and optionally the confidence a
/// finding made through this block carries (instead of the rule's), its own summary, and a
/// note appended to the summary (which corroboration is missing, for a thin alternative).
#[derive(Clone, Debug)]
pub struct When {
    pub clauses: Vec<Clause>,
    /// Replaces the rule's base confidence for a finding made through this block.
    pub confidence: Option<f64>,
    /// Replaces the rule's summary for a finding made through this block (a thin block's
    /// evidence lacks the signals the rule's summary counts).
    pub summary: Option<String>,
    /// Appended to the summary of a finding made through this block.
    pub note: Option<String>,
}

/// A signal that, when present, raises the confidence of a finding.
#[derive(Clone, Debug)]
pub struct Boost {
    pub signal: String,
    pub confidence: f64,
}

/// A sample line checked against a signal when the rule loads.
#[derive(Clone, Debug)]
pub struct Sample {
    pub signal: String,
    pub source: SourceKind,
    pub text: String,
    /// Field values for fact samples (`path`, `value`, …).
    pub fields: Vec<(String, String)>,
    pub matches: bool,
}

/// The strongest rule of catalogue id `id` above `info` (a general rule before a known issue
/// of some releases, then the highest severity, then the lowest code): the one whose title,
/// remediation and doc speak for the id.
pub fn strongest_of<'r>(rules: &'r [Rule], id: &str) -> Option<&'r Rule> {
    rules
        .iter()
        .filter(|r| r.id == id && r.severity > Severity::Info)
        .max_by(|a, b| {
            (a.known_issue.is_none())
                .cmp(&b.known_issue.is_none())
                .then(a.severity.cmp(&b.severity))
                .then(b.code.cmp(&a.code))
        })
}

/// One rule: what it reports, how it documents itself, and how it decides.
#[derive(Clone, Debug)]
pub struct Rule {
    pub code: RuleCode,
    /// The catalogue id the report carries.
    pub id: String,
    pub name: String,
    pub severity: Severity,
    /// Base confidence (0–1) when the rule fires on its own.
    pub confidence: f64,
    pub title: String,
    /// One-line summary; `{count:sig}`, `{first:sig}`, `{last:sig}`, `{span:sig}`,
    /// `{value:sig:capture}` are filled from the evidence.
    pub summary: String,
    pub doc: String,
    pub explains: Vec<String>,
    pub remediation: Vec<String>,
    pub references: Vec<String>,
    pub signals: Vec<Signal>,
    /// Alternatives: the rule fires when every clause of any one block holds.
    pub when: Vec<When>,
    pub boosts: Vec<Boost>,
    pub samples: Vec<Sample>,
    /// Where the rule came from (`patterns/DSH004-….toml` or a user path).
    pub origin: String,
    /// A known bug of some releases (`[known_issue]`): claimed only when the bundle's
    /// versions allow it (`known`).
    pub known_issue: Option<known::KnownIssue>,
}

impl Rule {
    pub fn signal_index(&self, name: &str) -> Option<usize> {
        self.signals.iter().position(|s| s.name == name)
    }
}

/// The doc headings every rule must have, in order.
pub const DOC_HEADINGS: [&str; 5] = [
    "## What it detects",
    "## Why it matters",
    "## Evidence shown",
    "## Remediation",
    "## References",
];

#[cfg(test)]
mod tests {
    use super::Pattern;

    #[test]
    fn a_deferred_pattern_compiles_on_first_use_and_matches_as_a_compiled_one() {
        let lines = [
            "Get \"http://10.0.0.1:52365/api/serve/applications/\": dial tcp: connection refused",
            "GET /API/SERVE/APPLICATIONS/ refused",
            "nothing here",
        ];
        let source = r"api/serve/(applications|deployments)/.*(?P<why>refused)";
        for case_sensitive in [false, true] {
            let now = Pattern::compile(source, case_sensitive).ok();
            let later = Pattern::deferred(source, case_sensitive);
            assert!(now.as_ref().is_some_and(Pattern::is_compiled));
            assert!(!later.is_compiled());
            assert_eq!(later.as_str(), source);
            for line in lines {
                let want = now.as_ref().map(|p| p.is_match(line));
                assert_eq!(Some(later.is_match(line)), want, "{line}");
                let got = later
                    .captures(line)
                    .and_then(|c| Some(c.name("why")?.as_str()));
                let want = now
                    .as_ref()
                    .and_then(|p| p.captures(line))
                    .and_then(|c| Some(c.name("why")?.as_str()));
                assert_eq!(got, want, "{line}");
            }
            assert!(later.is_compiled());
        }
    }

    #[test]
    fn a_deferred_pattern_that_does_not_compile_matches_nothing() {
        assert!(Pattern::compile("(unclosed", false).is_err());
        let p = Pattern::deferred("(unclosed", false);
        assert!(!p.is_match("(unclosed"));
        assert!(p.captures("(unclosed").is_none());
        assert!(p.regex().is_none() && p.is_compiled());
    }
}
