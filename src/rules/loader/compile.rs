//! A `[[signal]]` and a `[[when]]` clause compiled from what the file says: a signal's
//! sources, minimum level, regexes (compiled now, or left for their first line), capture key
//! and prefilter literals; a clause's one form, its signals and its durations.
//!
//! Invariant: a signal is built only when every part of it is good, and otherwise gives all
//! its problems, each keyed within the signal (`text[1]`, `sources[0]`); a bad regex is one
//! line, the last of the regex crate's message. A clause gives its first problem.

use super::raw::{RawClause, RawSignal};
use crate::event::{Level, Micros, SourceKind, MICROS_PER_SEC};
use crate::parse::primitives::human_duration;
use crate::rules::literal::required_literals;
use crate::rules::{Clause, Pattern, Signal, SourceFilter};

/// Compiles `pattern` now (`eager`: its errors are reported as the file's), or leaves it for
/// its first use ([`Pattern::deferred`]).
fn pattern(pattern: &str, case_sensitive: bool, eager: bool) -> Result<Pattern, String> {
    if !eager {
        return Ok(Pattern::deferred(pattern, case_sensitive));
    }
    Pattern::compile(pattern, case_sensitive).map_err(|e| {
        // The regex crate's message draws a caret under the pattern over several lines;
        // a problem is one line, so keep its last line, the reason.
        let msg = e.to_string();
        let why = msg
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        let why = why.trim().strip_prefix("error: ").unwrap_or(why.trim());
        format!("bad regex {pattern:?}: {why}")
    })
}

/// `eager`: compile the signal's regexes now, and check that its key is captured.
pub(super) fn compile_signal(s: &RawSignal, eager: bool) -> Result<Signal, Vec<(String, String)>> {
    let mut errs: Vec<(String, String)> = Vec::new();
    if s.name.is_empty() {
        errs.push(("name".into(), "must not be empty".into()));
    }
    let sources = if s.sources.is_empty() || s.sources.iter().any(|x| x == "*") {
        SourceFilter::Any
    } else {
        let mut kinds = Vec::new();
        for (i, pat) in s.sources.iter().enumerate() {
            let matched: Vec<SourceKind> = SourceKind::ALL
                .into_iter()
                .filter(|k| crate::glob::source_matches(pat, "", k.as_str()))
                .collect();
            if matched.is_empty() {
                errs.push((
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
        Some(l) => {
            let level = Level::parse(l);
            if level.is_none() {
                errs.push(("level".to_string(), format!("{l:?} is not a level")));
            }
            level
        }
        None => None,
    };
    let mut compile = |key: String, p: &str| match pattern(p, s.case_sensitive, eager) {
        Ok(r) => Some(r),
        Err(e) => {
            errs.push((key, e));
            None
        }
    };
    let text: Vec<Pattern> = s
        .text
        .iter()
        .enumerate()
        .filter_map(|(i, p)| compile(format!("text[{i}]"), p))
        .collect();
    let not_text: Vec<Pattern> = s
        .not_text
        .iter()
        .enumerate()
        .filter_map(|(i, p)| compile(format!("not_text[{i}]"), p))
        .collect();
    let fields: Vec<(String, Pattern)> = s
        .fields
        .iter()
        .filter_map(|(k, p)| compile(format!("fields.{k}"), p).map(|r| (k.clone(), r)))
        .collect();
    if s.text.is_empty() && s.fields.is_empty() {
        errs.push((
            "text".into(),
            "a signal needs `text` regexes or `fields` conditions".into(),
        ));
    }
    if let Some(key) = s.key.as_ref().filter(|_| eager) {
        let captured = text
            .iter()
            .chain(fields.iter().map(|(_, r)| r))
            .filter_map(Pattern::regex)
            .any(|r| r.capture_names().flatten().any(|n| n == key));
        if !captured {
            errs.push((
                "key".into(),
                format!("no regex of the signal has a capture group named {key:?}"),
            ));
        }
    }
    if !errs.is_empty() {
        return Err(errs);
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

pub(super) fn compile_clause(c: &RawClause) -> Result<Clause, String> {
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
