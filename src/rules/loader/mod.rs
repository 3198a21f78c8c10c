//! Turning pattern files into validated rules. Every error names the file and the key
//! (`patterns/DSH004-….toml: signal[1].text[0]: …`), and every sample line is checked against
//! its signal, so that a pattern cannot silently drift from the lines it was written for.
//!
//! The loader's parts, one file each:
//!
//! - this file: the ways in ([`load_rule`]: the first problem; [`check_rule`]: every
//!   problem; [`load_rule_trusted`]: the built-in library, regexes and samples left for
//!   later) and the pass over a file's sections that gathers every problem and builds the
//!   `Rule`;
//! - `problems.rs`: a problem ([`LoadError`]), the problems of one file, and the line of a
//!   problem's key in the file;
//! - `raw.rs`: the file read as TOML into the shape serde expects, its unknown keys named
//!   and removed so that the rest is still checked;
//! - `compile.rs`: a `[[signal]]` (sources, level, regexes, capture key, prefilter literals)
//!   and a `[[when]]` clause compiled from what the file says;
//! - `checks.rs`: the checks of a rule's texts: sample lines run against their signals,
//!   summary placeholders, doc headings, kebab-case names;
//! - `tests.rs`: the tests of whole pattern files.

mod checks;
mod compile;
mod problems;
mod raw;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use crate::rules::known::{KnownIssue, Range};
use crate::rules::{Boost, Rule, RuleCode, Severity, Signal, When};
use crate::versions::Product;

use checks::{check_doc, check_placeholders, check_samples_of, is_kebab_case};
use compile::{compile_clause, compile_signal};
pub use problems::LoadError;
use problems::Problems;
use raw::parse_raw;

/// Parses and validates one pattern file, every sample line included; the first problem.
pub fn load_rule(origin: &str, text: &str) -> Result<Rule, LoadError> {
    first(load_rule_with(origin, text, true))
}

/// Parses and validates one pattern file, every sample line included, and reports every
/// problem it finds (`check-patterns`, `--patterns`), each with its key and line.
pub fn check_rule(origin: &str, text: &str) -> Result<Rule, Vec<LoadError>> {
    load_rule_with(origin, text, true)
}

/// Parses and validates one pattern file but neither compiles its regexes (each waits for its
/// first line, [`Pattern::deferred`]) nor runs its sample lines: for the built-in library,
/// which the test suite loads checked (`library::builtin_checked`). Running some 640 samples
/// at every start cost a fifth of `analyze`'s memory (each regex keeps the cache its first
/// match built), and compiling some 700 regexes about 0.1 s, for no new information.
///
/// [`Pattern::deferred`]: crate::rules::Pattern::deferred
pub fn load_rule_trusted(origin: &str, text: &str) -> Result<Rule, LoadError> {
    first(load_rule_with(origin, text, false))
}

fn first(r: Result<Rule, Vec<LoadError>>) -> Result<Rule, LoadError> {
    r.map_err(|mut all| {
        if all.is_empty() {
            all.push(LoadError {
                origin: String::new(),
                key: String::new(),
                line: None,
                problem: "invalid".into(),
            });
        }
        all.swap_remove(0)
    })
}

/// `checked`: compile every regex now and run the sample lines (a user's file); else both wait
/// (the built-in library, which the test suite loads checked).
fn load_rule_with(origin: &str, text: &str, checked: bool) -> Result<Rule, Vec<LoadError>> {
    // A built-in file is read once, straight into its fields: the suite checks its keys
    // (`builtin_checked`), and the second reading that names unknown and missing keys was a
    // fifth of start-up. One that does not read is read again for its problems.
    let once = (!checked)
        .then(|| toml::from_str::<raw::RawRule>(text).ok())
        .flatten();
    let (raw, unknown) = match once {
        Some(raw) => (raw, Vec::new()),
        None => parse_raw(origin, text)?,
    };
    let mut p = Problems {
        origin,
        list: Vec::new(),
    };

    let code = RuleCode::parse(&raw.code);
    if code.is_none() {
        p.add(
            "code",
            format!("{:?} is not a rule code like DSH004", raw.code),
        );
    }
    if raw.id.is_empty()
        || !raw
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())
    {
        p.add(
            "id",
            format!("{:?} is not a snake_case catalogue id", raw.id),
        );
    }
    if !is_kebab_case(&raw.name) {
        p.add(
            "name",
            format!(
                "{:?} is not a kebab-case name (lower-case words joined by '-', such as \"serve-status-get-refused\")",
                raw.name
            ),
        );
    }
    let severity = Severity::parse(&raw.severity);
    if severity.is_none() {
        p.add(
            "severity",
            format!(
                "{:?} is not one of info, warning, error, critical",
                raw.severity
            ),
        );
    }
    if !(raw.confidence > 0.0 && raw.confidence <= 1.0) {
        p.add("confidence", format!("{} is not in (0, 1]", raw.confidence));
    }
    if raw.title.trim().is_empty() {
        p.add("title", "must not be empty");
    }
    if raw.summary.trim().is_empty() {
        p.add("summary", "must not be empty");
    }
    if let Err(e) = check_doc(&raw.doc) {
        p.add("doc", e);
    }

    // Signals: every one is checked; `compiled[i]` is `None` for one that has problems.
    let mut compiled: Vec<Option<Signal>> = Vec::with_capacity(raw.signals.len());
    let mut names = BTreeSet::new();
    for (idx, s) in raw.signals.iter().enumerate() {
        let key = format!("signal[{idx}]");
        if !names.insert(s.name.clone()) {
            p.add(
                format!("{key}.name"),
                format!("signal {:?} is defined twice", s.name),
            );
        }
        match compile_signal(s, checked) {
            Ok(sig) => compiled.push(Some(sig)),
            Err(errs) => {
                for (k, e) in errs {
                    p.add(format!("{key}.{k}"), e);
                }
                compiled.push(None);
            }
        }
    }
    if raw.signals.is_empty() {
        p.add("signal", "a rule needs at least one [[signal]]");
    }
    check_placeholders(&mut p, "summary", &raw.summary, &names);

    let mut when = Vec::with_capacity(raw.when.len());
    for (w_idx, w) in raw.when.iter().enumerate() {
        let mut clauses = Vec::with_capacity(w.all.len());
        for (c_idx, c) in w.all.iter().enumerate() {
            let key = format!("when[{w_idx}].all[{c_idx}]");
            match compile_clause(c) {
                Ok(clause) => {
                    for s in clause.signals() {
                        if !names.contains(s) {
                            p.add(
                                &key,
                                format!("names signal {s:?}, which the rule does not define"),
                            );
                        }
                    }
                    clauses.push(clause);
                }
                Err(e) => p.add(&key, e),
            }
        }
        if w.all.is_empty() {
            p.add(format!("when[{w_idx}].all"), "needs at least one clause");
        }
        if let Some(c) = w.confidence {
            if !(c > 0.0 && c <= 1.0) {
                p.add(
                    format!("when[{w_idx}].confidence"),
                    format!("{c} is not in (0, 1]"),
                );
            }
        }
        if w.note.as_deref().is_some_and(|n| n.trim().is_empty()) {
            p.add(format!("when[{w_idx}].note"), "must not be empty");
        }
        match w.summary.as_deref() {
            Some(sm) if sm.trim().is_empty() => {
                p.add(format!("when[{w_idx}].summary"), "must not be empty");
            }
            Some(sm) => check_placeholders(&mut p, &format!("when[{w_idx}].summary"), sm, &names),
            None => {}
        }
        when.push(When {
            clauses,
            confidence: w.confidence,
            summary: w.summary.as_ref().map(|n| n.trim().to_string()),
            note: w.note.as_ref().map(|n| n.trim().to_string()),
        });
    }
    if raw.when.is_empty() {
        p.add("when", "a rule needs at least one [[when]] with clauses");
    }

    let mut boosts = Vec::new();
    for (idx, b) in raw.boosts.iter().enumerate() {
        if !names.contains(&b.signal) {
            p.add(
                format!("boost[{idx}].signal"),
                format!("no signal named {:?}", b.signal),
            );
        }
        if !(0.0..=0.5).contains(&b.confidence) {
            p.add(
                format!("boost[{idx}].confidence"),
                "must be between 0 and 0.5",
            );
        }
        boosts.push(Boost {
            signal: b.signal.clone(),
            confidence: b.confidence,
        });
    }

    // Every signal is used by a clause or a boost.
    for (idx, s) in raw.signals.iter().enumerate() {
        let used = when
            .iter()
            .flat_map(|w| &w.clauses)
            .any(|c| c.signals().contains(&s.name.as_str()))
            || boosts.iter().any(|b| b.signal == s.name);
        if !used {
            p.add(
                format!("signal[{idx}].name"),
                format!("signal {:?} is used by no clause or boost", s.name),
            );
        }
    }

    let known_issue = raw
        .known_issue
        .as_ref()
        .and_then(|k| known_issue(&mut p, k));

    let samples = check_samples_of(&mut p, &raw, &compiled, checked);
    for (idx, s) in raw.signals.iter().enumerate() {
        if !samples.iter().any(|x| x.signal == s.name && x.matches) {
            p.add(
                format!("signal[{idx}].name"),
                format!("signal {:?} has no sample line that matches it", s.name),
            );
        }
    }

    let signals: Vec<Signal> = compiled.into_iter().flatten().collect();
    match (code, severity) {
        (Some(code), Some(severity)) if p.list.is_empty() && unknown.is_empty() => Ok(Rule {
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
            known_issue,
        }),
        _ => {
            // A missing key was given a stand-in: what the stand-in raises is not the file's.
            p.list.retain(|e| !unknown.iter().any(|u| u.key == e.key));
            Err(unknown.into_iter().chain(p.into_lines(text)).collect())
        }
    }
}

/// The `[known_issue]` table checked: a tracker `owner/name`, a number, at least one range
/// that parses, the release that fixed it and a workaround.
fn known_issue(p: &mut Problems, raw: &raw::RawKnownIssue) -> Option<KnownIssue> {
    let before = p.list.len();
    let mut parts = raw.tracker.split('/');
    let tracker_ok = matches!((parts.next(), parts.next(), parts.next()), (Some(o), Some(n), None) if !o.is_empty() && !n.is_empty());
    if !tracker_ok {
        p.add(
            "known_issue.tracker",
            format!(
                "{:?} is not a repository like ray-project/kuberay",
                raw.tracker
            ),
        );
    }
    if raw.number == 0 {
        p.add("known_issue.number", "must be the issue's number");
    }
    let mut affects = Vec::new();
    for (key, product, text) in [
        ("kuberay", Product::Kuberay, &raw.kuberay),
        ("ray", Product::Ray, &raw.ray),
    ] {
        match text.as_deref().map(Range::parse) {
            Some(Ok(range)) => affects.push((product, range)),
            Some(Err(e)) => p.add(format!("known_issue.{key}"), e),
            None => {}
        }
    }
    if raw.kuberay.is_none() && raw.ray.is_none() {
        p.add(
            "known_issue",
            "names no affected versions: give `kuberay` or `ray` (such as \">=1.1.0, <1.1.2\")",
        );
    }
    for (key, text) in [("fixed_in", &raw.fixed_in), ("workaround", &raw.workaround)] {
        if text.trim().is_empty() {
            p.add(format!("known_issue.{key}"), "must not be empty");
        }
    }
    (p.list.len() == before).then(|| KnownIssue {
        tracker: raw.tracker.clone(),
        number: raw.number,
        affects,
        fixed_in: raw.fixed_in.trim().to_string(),
        workaround: raw.workaround.trim().to_string(),
    })
}
