//! Turning pattern files into validated rules. Every error names the file and the key
//! (`patterns/DSH004-….toml: signal[1].text[0]: …`), and every sample line is checked against
//! its signal, so that a pattern cannot silently drift from the lines it was written for.

use std::collections::BTreeSet;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::event::{Event, Level, Micros, SourceKind, MICROS_PER_SEC};
use crate::parse::primitives::human_duration;
use crate::rules::engine::signal_matches;
use crate::rules::literal::required_literals;
use crate::rules::{
    Boost, Clause, Rule, RuleCode, Sample, Severity, Signal, SourceFilter, When, DOC_HEADINGS,
};

/// A pattern file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub origin: String,
    pub key: String,
    pub problem: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.origin, self.problem)
        } else {
            write!(f, "{}: {}: {}", self.origin, self.key, self.problem)
        }
    }
}

impl std::error::Error for LoadError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    code: String,
    id: String,
    name: String,
    severity: String,
    confidence: f64,
    title: String,
    summary: String,
    doc: String,
    #[serde(default)]
    explains: Vec<String>,
    #[serde(default)]
    remediation: Vec<String>,
    #[serde(default)]
    references: Vec<String>,
    #[serde(default, rename = "signal")]
    signals: Vec<RawSignal>,
    #[serde(default)]
    when: Vec<RawWhen>,
    #[serde(default, rename = "boost")]
    boosts: Vec<RawBoost>,
    #[serde(default, rename = "sample")]
    samples: Vec<RawSample>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignal {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    text: Vec<String>,
    #[serde(default)]
    not_text: Vec<String>,
    #[serde(default)]
    fields: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    case_sensitive: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWhen {
    all: Vec<RawClause>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClause {
    #[serde(default)]
    count: Option<String>,
    #[serde(default)]
    absent: Option<String>,
    #[serde(default)]
    sequence: Option<Vec<String>>,
    #[serde(default)]
    absent_after: Option<Vec<String>>,
    #[serde(default)]
    span: Option<String>,
    #[serde(default)]
    at_least: Option<toml::Value>,
    #[serde(default)]
    at_most: Option<String>,
    #[serde(default)]
    within: Option<String>,
    #[serde(default)]
    join: bool,
    #[serde(default)]
    until_first: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoost {
    signal: String,
    confidence: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSample {
    signal: String,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    fields: std::collections::BTreeMap<String, String>,
    #[serde(default = "yes")]
    matches: bool,
}

fn yes() -> bool {
    true
}

/// Parses and validates one pattern file, every sample line included.
pub fn load_rule(origin: &str, text: &str) -> Result<Rule, LoadError> {
    load_rule_with(origin, text, true)
}

/// Parses and validates one pattern file but does not run its sample lines: for the built-in
/// library, whose samples the test suite checks (`library::builtin_checked`). Running some
/// 640 samples at every start cost a fifth of `analyze`'s memory (each regex keeps the cache
/// its first match built) for no new information.
pub fn load_rule_trusted(origin: &str, text: &str) -> Result<Rule, LoadError> {
    load_rule_with(origin, text, false)
}

fn load_rule_with(origin: &str, text: &str, check_samples: bool) -> Result<Rule, LoadError> {
    let err = |key: &str, problem: String| LoadError {
        origin: origin.to_string(),
        key: key.to_string(),
        problem,
    };
    let raw: RawRule = toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        let place = e
            .span()
            .map(|s| {
                let line = text
                    .get(..s.start)
                    .map_or(1, |t| t.matches('\n').count() + 1);
                format!("line {line}")
            })
            .unwrap_or_default();
        err(&place, msg)
    })?;

    let code = RuleCode::parse(&raw.code).ok_or_else(|| {
        err(
            "code",
            format!("{:?} is not a rule code like DSH004", raw.code),
        )
    })?;
    if raw.id.is_empty()
        || !raw
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())
    {
        return Err(err(
            "id",
            format!("{:?} is not a snake_case catalogue id", raw.id),
        ));
    }
    if raw.name.is_empty() {
        return Err(err("name", "must not be empty".into()));
    }
    let severity = Severity::parse(&raw.severity).ok_or_else(|| {
        err(
            "severity",
            format!(
                "{:?} is not one of info, warning, error, critical",
                raw.severity
            ),
        )
    })?;
    if !(raw.confidence > 0.0 && raw.confidence <= 1.0) {
        return Err(err(
            "confidence",
            format!("{} is not in (0, 1]", raw.confidence),
        ));
    }
    if raw.title.trim().is_empty() {
        return Err(err("title", "must not be empty".into()));
    }
    if raw.summary.trim().is_empty() {
        return Err(err("summary", "must not be empty".into()));
    }
    check_doc(&raw.doc).map_err(|p| err("doc", p))?;

    let mut signals = Vec::with_capacity(raw.signals.len());
    let mut names = BTreeSet::new();
    for (idx, s) in raw.signals.iter().enumerate() {
        let key = format!("signal[{idx}]");
        if !names.insert(s.name.clone()) {
            return Err(err(
                &format!("{key}.name"),
                format!("signal {:?} is defined twice", s.name),
            ));
        }
        signals.push(compile_signal(s).map_err(|(k, p)| err(&format!("{key}.{k}"), p))?);
    }
    if signals.is_empty() {
        return Err(err("signal", "a rule needs at least one [[signal]]".into()));
    }

    let mut when = Vec::with_capacity(raw.when.len());
    for (w_idx, w) in raw.when.iter().enumerate() {
        let mut clauses = Vec::with_capacity(w.all.len());
        for (c_idx, c) in w.all.iter().enumerate() {
            let key = format!("when[{w_idx}].all[{c_idx}]");
            let clause = compile_clause(c).map_err(|p| err(&key, p))?;
            for s in clause.signals() {
                if !names.contains(s) {
                    return Err(err(
                        &key,
                        format!("names signal {s:?}, which the rule does not define"),
                    ));
                }
            }
            clauses.push(clause);
        }
        if clauses.is_empty() {
            return Err(err(
                &format!("when[{w_idx}].all"),
                "needs at least one clause".into(),
            ));
        }
        if let Some(c) = w.confidence {
            if !(c > 0.0 && c <= 1.0) {
                return Err(err(
                    &format!("when[{w_idx}].confidence"),
                    format!("{c} is not in (0, 1]"),
                ));
            }
        }
        if w.note.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(err(
                &format!("when[{w_idx}].note"),
                "must not be empty".into(),
            ));
        }
        if w.summary.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(err(
                &format!("when[{w_idx}].summary"),
                "must not be empty".into(),
            ));
        }
        when.push(When {
            clauses,
            confidence: w.confidence,
            summary: w.summary.as_ref().map(|n| n.trim().to_string()),
            note: w.note.as_ref().map(|n| n.trim().to_string()),
        });
    }
    if when.is_empty() {
        return Err(err(
            "when",
            "a rule needs at least one [[when]] with clauses".into(),
        ));
    }

    let mut boosts = Vec::new();
    for (idx, b) in raw.boosts.iter().enumerate() {
        if !names.contains(&b.signal) {
            return Err(err(
                &format!("boost[{idx}].signal"),
                format!("no signal named {:?}", b.signal),
            ));
        }
        if !(0.0..=0.5).contains(&b.confidence) {
            return Err(err(
                &format!("boost[{idx}].confidence"),
                "must be between 0 and 0.5".into(),
            ));
        }
        boosts.push(Boost {
            signal: b.signal.clone(),
            confidence: b.confidence,
        });
    }

    // Every signal is used by a clause or a boost.
    for s in &signals {
        let used = when
            .iter()
            .flat_map(|w| &w.clauses)
            .any(|c| c.signals().contains(&s.name.as_str()))
            || boosts.iter().any(|b| b.signal == s.name);
        if !used {
            return Err(err(
                "signal",
                format!("signal {:?} is used by no clause or boost", s.name),
            ));
        }
    }

    let mut samples = Vec::new();
    for (idx, s) in raw.samples.iter().enumerate() {
        let key = format!("sample[{idx}]");
        let Some(sig_idx) = signals.iter().position(|g| g.name == s.signal) else {
            return Err(err(
                &format!("{key}.signal"),
                format!("no signal named {:?}", s.signal),
            ));
        };
        let source = match &s.source {
            Some(name) => SourceKind::from_name(name).ok_or_else(|| {
                err(
                    &format!("{key}.source"),
                    format!("{name:?} is not a source kind"),
                )
            })?,
            None => match &signals[sig_idx].sources {
                SourceFilter::Kinds(kinds) => kinds.first().copied().unwrap_or(SourceKind::Unknown),
                SourceFilter::Any => SourceKind::Unknown,
            },
        };
        let level = match &s.level {
            Some(l) => Level::parse(l)
                .ok_or_else(|| err(&format!("{key}.level"), format!("{l:?} is not a level")))?,
            None => Level::Critical,
        };
        let sample = Sample {
            signal: s.signal.clone(),
            source,
            text: s.text.clone(),
            fields: s
                .fields
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            matches: s.matches,
        };
        let mut ev = Event::new(1, sample.text.clone());
        ev.kind = sample.source;
        ev.level = level;
        ev.fields = sample.fields.clone();
        let holds =
            !check_samples || signal_matches(&signals[sig_idx], &ev).is_some() == sample.matches;
        if !holds {
            let want = if sample.matches { "match" } else { "not match" };
            return Err(err(
                &key,
                format!(
                    "sample should {want} signal {:?} but does not: {:?}",
                    s.signal, s.text
                ),
            ));
        }
        samples.push(sample);
    }
    for s in &signals {
        if !samples.iter().any(|x| x.signal == s.name && x.matches) {
            return Err(err(
                "sample",
                format!("signal {:?} has no sample line that matches it", s.name),
            ));
        }
    }

    Ok(Rule {
        code,
        id: raw.id,
        name: raw.name,
        severity,
        confidence: raw.confidence,
        title: raw.title,
        summary: raw.summary,
        doc: raw.doc,
        explains: raw.explains,
        remediation: raw.remediation,
        references: raw.references,
        signals,
        when,
        boosts,
        samples,
        origin: origin.to_string(),
    })
}

/// The doc must have every heading, in order, each followed by some text.
pub fn check_doc(doc: &str) -> Result<(), String> {
    let mut pos = 0usize;
    let mut starts = Vec::new();
    for h in DOC_HEADINGS {
        match doc.get(pos..).and_then(|rest| rest.find(h)) {
            Some(i) => {
                starts.push(pos + i);
                pos += i + h.len();
            }
            None => {
                return Err(format!(
                    "missing heading {h:?} (headings must appear in this order: {})",
                    DOC_HEADINGS.join(", ")
                ))
            }
        }
    }
    for (i, h) in DOC_HEADINGS.iter().enumerate() {
        let body_start = starts[i] + h.len();
        let body_end = starts.get(i + 1).copied().unwrap_or(doc.len());
        if doc
            .get(body_start..body_end)
            .is_none_or(|b| b.trim().is_empty())
        {
            return Err(format!("heading {h:?} has no text under it"));
        }
    }
    Ok(())
}

fn regex(pattern: &str, case_sensitive: bool) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .case_insensitive(!case_sensitive)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| format!("bad regex {pattern:?}: {e}"))
}

fn compile_signal(s: &RawSignal) -> Result<Signal, (String, String)> {
    if s.name.is_empty() {
        return Err(("name".into(), "must not be empty".into()));
    }
    let sources = if s.sources.is_empty() || s.sources.iter().any(|x| x == "*") {
        SourceFilter::Any
    } else {
        let mut kinds = Vec::new();
        for (i, pat) in s.sources.iter().enumerate() {
            let matched: Vec<SourceKind> = SourceKind::ALL
                .into_iter()
                .filter(|k| crate::query::source_matches(pat, "", k.as_str()))
                .collect();
            if matched.is_empty() {
                return Err((
                    format!("sources[{i}]"),
                    format!("{pat:?} matches no source kind"),
                ));
            }
            kinds.extend(matched);
        }
        kinds.sort();
        kinds.dedup();
        SourceFilter::Kinds(kinds)
    };
    let min_level = match &s.level {
        Some(l) => Some(
            Level::parse(l)
                .ok_or_else(|| ("level".to_string(), format!("{l:?} is not a level")))?,
        ),
        None => None,
    };
    let mut text = Vec::new();
    for (i, p) in s.text.iter().enumerate() {
        text.push(regex(p, s.case_sensitive).map_err(|e| (format!("text[{i}]"), e))?);
    }
    let mut not_text = Vec::new();
    for (i, p) in s.not_text.iter().enumerate() {
        not_text.push(regex(p, s.case_sensitive).map_err(|e| (format!("not_text[{i}]"), e))?);
    }
    let mut fields = Vec::new();
    for (k, p) in &s.fields {
        fields.push((
            k.clone(),
            regex(p, s.case_sensitive).map_err(|e| (format!("fields.{k}"), e))?,
        ));
    }
    if text.is_empty() && fields.is_empty() {
        return Err((
            "text".into(),
            "a signal needs `text` regexes or `fields` conditions".into(),
        ));
    }
    if let Some(key) = &s.key {
        let captured = text
            .iter()
            .chain(fields.iter().map(|(_, r)| r))
            .any(|r| r.capture_names().flatten().any(|n| n == key));
        if !captured {
            return Err((
                "key".into(),
                format!("no regex of the signal has a capture group named {key:?}"),
            ));
        }
    }
    // Prefilter literals: from the text regexes (any of them), else from the field regexes
    // (all must hold, so any one field's literals will do).
    let literals = if !text.is_empty() {
        let mut all = Vec::new();
        let mut complete = true;
        for p in &s.text {
            let lits = required_literals(p);
            if lits.is_empty() {
                complete = false;
                break;
            }
            all.extend(lits);
        }
        if complete {
            all
        } else {
            Vec::new()
        }
    } else {
        s.fields
            .values()
            .map(|p| required_literals(p))
            .filter(|l| !l.is_empty())
            .max_by_key(|l| l.iter().map(String::len).min().unwrap_or(0))
            .unwrap_or_default()
    };
    Ok(Signal {
        name: s.name.clone(),
        sources,
        min_level,
        text,
        not_text,
        fields,
        literals,
        key: s.key.clone(),
        description: s.description.clone(),
    })
}

fn duration(s: &str) -> Result<Micros, String> {
    match human_duration(s.trim()) {
        Ok(("", secs)) => Ok(secs * MICROS_PER_SEC),
        _ => Err(format!("{s:?} is not a duration like 90s, 5m, 1h30m")),
    }
}

fn compile_clause(c: &RawClause) -> Result<Clause, String> {
    let within = c.within.as_deref().map(duration).transpose()?;
    let forms = [
        c.count.is_some(),
        c.absent.is_some(),
        c.sequence.is_some(),
        c.absent_after.is_some(),
        c.span.is_some(),
    ];
    if forms.iter().filter(|f| **f).count() != 1 {
        return Err(
            "a clause needs exactly one of count, absent, sequence, absent_after, span".into(),
        );
    }
    let pair = |v: &Vec<String>, what: &str| -> Result<(String, String), String> {
        match v.as_slice() {
            [a, b] => Ok((a.clone(), b.clone())),
            _ => Err(format!(
                "{what} takes two signal names: [\"first\", \"then\"]"
            )),
        }
    };
    if let Some(signal) = &c.count {
        let at_least = match &c.at_least {
            None => 1,
            Some(toml::Value::Integer(n)) if *n >= 1 => *n as usize,
            Some(other) => {
                return Err(format!(
                    "count: at_least must be a positive integer, not {other}"
                ))
            }
        };
        return Ok(Clause::Count {
            signal: signal.clone(),
            at_least,
            within,
        });
    }
    if let Some(signal) = &c.absent {
        return Ok(Clause::Absent {
            signal: signal.clone(),
        });
    }
    if let Some(v) = &c.sequence {
        let (first, then) = pair(v, "sequence")?;
        return Ok(Clause::Sequence {
            first,
            then,
            within,
            join: c.join,
        });
    }
    if let Some(v) = &c.absent_after {
        let (first, then) = pair(v, "absent_after")?;
        return Ok(Clause::AbsentAfter {
            first,
            then,
            within,
            join: c.join,
        });
    }
    if let Some(signal) = &c.span {
        let at_least = match &c.at_least {
            None => None,
            Some(toml::Value::String(s)) => Some(duration(s)?),
            Some(other) => {
                return Err(format!(
                    "span: at_least must be a duration string, not {other}"
                ))
            }
        };
        let at_most = c.at_most.as_deref().map(duration).transpose()?;
        if at_least.is_none() && at_most.is_none() {
            return Err("span needs at_least or at_most".into());
        }
        return Ok(Clause::Span {
            signal: signal.clone(),
            at_least,
            at_most,
            until_first: c.until_first.clone(),
        });
    }
    Err("empty clause".into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    const DOC: &str = "## What it detects\\nx\\n## Why it matters\\nx\\n## Evidence shown\\nx\\n## Remediation\\nx\\n## References\\nx\\n";

    fn rule_with(when: &str) -> String {
        format!(
            r#"code = "TST001"
id = "probe_failure"
name = "test"
severity = "error"
confidence = 0.8
title = "t"
summary = "s"
doc = "{DOC}"

[[signal]]
name = "a"
text = ['boom']

[[sample]]
signal = "a"
text = "boom"

{when}
"#
        )
    }

    #[test]
    fn when_keys_are_optional() {
        let r = load_rule("t.toml", &rule_with("[[when]]\nall = [{ count = \"a\" }]")).unwrap();
        assert_eq!(r.when.len(), 1);
        assert_eq!(r.when[0].confidence, None);
        assert_eq!(r.when[0].note, None);
    }

    #[test]
    fn when_confidence_and_note_load() {
        let r = load_rule(
            "t.toml",
            &rule_with(
                "[[when]]\nall = [{ count = \"a\" }]\nconfidence = 0.5\nnote = \" one pasted line only \"",
            ),
        )
        .unwrap();
        assert_eq!(r.when[0].confidence, Some(0.5));
        assert_eq!(r.when[0].note.as_deref(), Some("one pasted line only"));
    }

    #[test]
    fn when_confidence_out_of_range_is_refused() {
        for bad in ["0.0", "1.5", "-0.2"] {
            let e = load_rule(
                "t.toml",
                &rule_with(&format!(
                    "[[when]]\nall = [{{ count = \"a\" }}]\nconfidence = {bad}"
                )),
            )
            .unwrap_err();
            assert_eq!(e.key, "when[0].confidence", "{bad}: {e}");
        }
    }

    #[test]
    fn empty_when_note_is_refused() {
        let e = load_rule(
            "t.toml",
            &rule_with("[[when]]\nall = [{ count = \"a\" }]\nnote = \"  \""),
        )
        .unwrap_err();
        assert_eq!(e.key, "when[0].note");
    }
}
