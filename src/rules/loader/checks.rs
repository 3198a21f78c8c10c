//! The checks of a rule's texts: each sample line run against its signal, every
//! `{what:signal}` placeholder of a summary, the headings of the doc and the kebab-case of
//! the name.
//!
//! Invariant: samples run only in a checked load (a user's file; the test suite's load of
//! the built-in library), and never against a signal that has problems of its own (it has
//! been named already); a sample that does not match as it says is a problem naming it.

use std::collections::BTreeSet;

use super::problems::Problems;
use super::raw::RawRule;
use crate::event::{Event, Level, SourceKind};
use crate::rules::engine::signal_matches;
use crate::rules::{Sample, Signal, SourceFilter, DOC_HEADINGS};

/// Runs the sample lines against their signals (when `run`), naming each that fails.
pub(super) fn check_samples_of(
    p: &mut Problems,
    raw: &RawRule,
    compiled: &[Option<Signal>],
    run: bool,
) -> Vec<Sample> {
    let mut samples = Vec::new();
    for (idx, s) in raw.samples.iter().enumerate() {
        let key = format!("sample[{idx}]");
        let Some(sig_idx) = raw.signals.iter().position(|g| g.name == s.signal) else {
            p.add(
                format!("{key}.signal"),
                format!("no signal named {:?}", s.signal),
            );
            continue;
        };
        let signal = compiled.get(sig_idx).and_then(Option::as_ref);
        let source = match &s.source {
            Some(name) => match SourceKind::from_name(name) {
                Some(k) => k,
                None => {
                    p.add(
                        format!("{key}.source"),
                        format!("{name:?} is not a source kind"),
                    );
                    continue;
                }
            },
            None => match signal.map(|g| &g.sources) {
                Some(SourceFilter::Kinds(kinds)) => {
                    kinds.first().copied().unwrap_or(SourceKind::Unknown)
                }
                _ => SourceKind::Unknown,
            },
        };
        let level = match &s.level {
            Some(l) => match Level::parse(l) {
                Some(l) => l,
                None => {
                    p.add(format!("{key}.level"), format!("{l:?} is not a level"));
                    continue;
                }
            },
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
        // A signal with problems of its own has been named already: its samples cannot run.
        if let (true, Some(signal)) = (run, signal) {
            let mut ev = Event::new(1, sample.text.clone());
            ev.kind = sample.source;
            ev.level = level;
            ev.fields = sample
                .fields
                .iter()
                .map(|(k, v)| (k.as_str().into(), v.as_str().into()))
                .collect();
            if signal_matches(signal, &ev).is_some() != sample.matches {
                let want = if sample.matches { "match" } else { "not match" };
                p.add(
                    &key,
                    format!(
                        "sample should {want} signal {:?} but does not: {:?}",
                        s.signal, s.text
                    ),
                );
            }
        }
        samples.push(sample);
    }
    samples
}

/// What a summary placeholder may ask of a signal (`engine::fill_summary`).
const PLACEHOLDERS: [&str; 6] = ["count", "first", "last", "span", "key", "keys"];

/// Every `{what:signal}` of a summary must ask for a known value of a defined signal: an
/// unknown one would be printed as written in every report.
pub(super) fn check_placeholders(
    p: &mut Problems,
    key: &str,
    summary: &str,
    names: &BTreeSet<String>,
) {
    let mut rest = summary;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let token = &after[..close];
        rest = &after[close + 1..];
        let Some((what, signal)) = token.split_once(':') else {
            p.add(
                key,
                format!(
                    "{{{token}}} is not a placeholder like {{count:signal}} ({})",
                    PLACEHOLDERS.join(", ")
                ),
            );
            continue;
        };
        if !PLACEHOLDERS.contains(&what) {
            p.add(
                key,
                format!(
                    "{{{token}}}: {what:?} is not one of {}",
                    PLACEHOLDERS.join(", ")
                ),
            );
        }
        if !names.contains(signal) {
            p.add(
                key,
                format!("{{{token}}} names signal {signal:?}, which the rule does not define"),
            );
        }
    }
}

/// Lower-case ASCII words of letters and digits joined by single hyphens.
pub(super) fn is_kebab_case(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The doc must have every heading, in order, each followed by some text.
pub(super) fn check_doc(doc: &str) -> Result<(), String> {
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
