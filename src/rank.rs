//! From findings to a ranked report.
//!
//! Findings of the same catalogue id merge into one cause. A cause whose rule `explains`
//! another present cause takes it as a symptom: the symptom is listed under it, not ranked
//! beside it. Score = severity weight × confidence; benign (`info`) causes always rank below
//! every real one. Ties break on the id, so the order never depends on threads or input order.
//!
//! A known issue (`rules::known`) the bundle's versions put out of range is no finding; one
//! they put in range, or say nothing of, leads its cause's summary with what it is and what
//! fixed it (`known_issue` in the JSON).
//!
//! Invariant: no text formatting here; the report is data, rendered by `report/`.

use std::collections::{BTreeMap, BTreeSet};

use crate::event::{format_rfc3339, Event, Micros, MICROS_PER_SEC};
use crate::history_server::Clusters;
use crate::inventory::Inventory;
use crate::model::{
    BundleInfo, Cause, Evidence, KnownIssueRef, Report, Stats, Symptom, SCHEMA, VERSION,
};
use crate::objects::{BundleObjects, ObjectRef};
use crate::open_world::exceptions;
use crate::rules::engine::{EvidenceRef, Finding};
use crate::rules::known::{self, Claim};
use crate::rules::{Rule, Severity};
use crate::timeline::Timeline;

/// Longest evidence text shown, in characters; longer text is cut with a marker.
const EVIDENCE_TEXT_MAX: usize = 600;

struct Merged {
    id: String,
    best: usize,
    codes: Vec<String>,
    severity: Severity,
    confidence: f64,
    evidence: Vec<(EvidenceRef, usize)>,
    explains: BTreeSet<String>,
    /// The known issue among its rules that the bundle's versions allow (its rule, what the
    /// versions say, its confidence).
    known: Option<(usize, Claim, f64)>,
}

/// How evidence quotes its record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Quote {
    /// Cut to [`EVIDENCE_TEXT_MAX`] characters around what the rule matched, a traceback to
    /// its head, innermost frames and last lines (`cut`).
    #[default]
    Cut,
    /// The whole record (`analyze --full`).
    Whole,
}

/// Ranks the findings of `rules` over `tl` into a report.
pub fn rank(
    tl: &Timeline,
    rules: &[Rule],
    findings: &[Finding],
    elapsed_ms: u64,
    quote: Quote,
) -> Report {
    let stated = crate::versions::stated(&tl.events);
    // Merge by id.
    let mut by_id: BTreeMap<String, Merged> = BTreeMap::new();
    for f in findings {
        let Some(rule) = rules.get(f.rule) else {
            continue;
        };
        let claim = rule.known_issue.as_ref().map(|k| k.claim(&stated));
        if claim == Some(Claim::OutOfRange) {
            continue;
        }
        let confidence = known_confidence(f.confidence, claim);
        // Judgement (`judge`) may have kept a finding below its rule's severity.
        let severity = f.severity.unwrap_or(rule.severity);
        let m = by_id.entry(rule.id.clone()).or_insert_with(|| Merged {
            id: rule.id.clone(),
            best: f.rule,
            codes: Vec::new(),
            severity,
            confidence,
            evidence: Vec::new(),
            explains: BTreeSet::new(),
            known: None,
        });
        m.codes.push(rule.code.to_string());
        let better = (severity, confidence) > (m.severity, m.confidence)
            || (severity, confidence) == (m.severity, m.confidence)
                && rule.code < rules[m.best].code;
        if better {
            m.best = f.rule;
            m.severity = severity;
            m.confidence = confidence;
        }
        // Of several known issues, the one the versions say most of, then the surest.
        if let Some(claim) = claim.filter(|c| m.known.is_none_or(|k| (*c, confidence) > (k.1, k.2)))
        {
            m.known = Some((f.rule, claim, confidence));
        }
        m.evidence
            .extend(f.evidence.iter().map(|e| (e.clone(), f.rule)));
        m.explains.extend(rule.explains.iter().cloned());
    }
    // Several rules agreeing on an id corroborate each other.
    for m in by_id.values_mut() {
        m.codes.sort();
        m.codes.dedup();
        let extra = m.codes.len().saturating_sub(1) as f64;
        m.confidence = ((m.confidence + 0.03 * extra).min(0.99) * 100.0).round() / 100.0;
    }
    let summaries: BTreeMap<usize, &str> = findings
        .iter()
        .map(|f| (f.rule, f.summary.as_str()))
        .collect();

    // Who explains whom, among present causes.
    let score = |m: &Merged| m.severity.weight() * m.confidence;
    let ids: Vec<String> = by_id.keys().cloned().collect();
    // A History Server copy holds several clusters: a cause of one explains nothing of
    // another (a requested stop of a healthy cluster is not why another one's job failed).
    let clusters = Clusters::of(tl.files.iter().map(|f| f.path.as_str()));
    // Each finding's clusters, once: the pairs below ask for them again and again.
    let clusters_of: BTreeMap<&str, BTreeSet<&crate::history_server::Cluster>> = by_id
        .values()
        .map(|m| {
            let of = m
                .evidence
                .iter()
                .filter_map(|(r, _)| tl.events.get(r.event))
                .filter_map(|ev| clusters.of_file(ev.file as usize))
                .collect();
            (m.id.as_str(), of)
        })
        .collect();
    let apart = |a: &Merged, b: &Merged| match (
        clusters_of.get(a.id.as_str()),
        clusters_of.get(b.id.as_str()),
    ) {
        (Some(a), Some(b)) => !a.is_empty() && !b.is_empty() && a.is_disjoint(b),
        _ => false,
    };
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    for id in &ids {
        let mut explainers: Vec<&Merged> = by_id
            .values()
            .filter(|m| m.id != *id && m.explains.contains(id))
            .filter(|m| by_id.get(id).is_none_or(|me| !apart(m, me)))
            .filter(|m| {
                // Mutual explanation: the stronger one is the cause.
                let mutual = by_id.get(id).is_some_and(|me| me.explains.contains(&m.id));
                !mutual || score(m) > by_id.get(id).map_or(0.0, score)
            })
            .collect();
        explainers.sort_by(|a, b| score(b).total_cmp(&score(a)).then(a.id.cmp(&b.id)));
        if let Some(e) = explainers.first() {
            parent.insert(id.clone(), e.id.clone());
        }
    }
    let bundle_objects = BundleObjects::of(&tl.events);
    let path_pods = bundle_objects.path_pods(&tl.files);
    let objects_of = |ms: &[&Merged]| -> Vec<ObjectRef> {
        let events = ms
            .iter()
            .flat_map(|m| m.evidence.iter().map(|(r, _)| r.event))
            .filter_map(|i| tl.events.get(i))
            .map(|ev| (ev, path_pods.get(ev.file as usize).and_then(Option::as_ref)));
        let mut objs = crate::objects::of_evidence(events, &bundle_objects);
        if !objs.iter().any(ObjectRef::is_ray) {
            if let Some(only) = bundle_objects.only_workload() {
                objs.insert(0, only);
            }
        }
        objs
    };

    // An open-world finding that echoes a catalogue cause hangs under it.
    for (echo, cause) in echoes(tl, &by_id, &parent, &objects_of) {
        parent.insert(echo, cause);
    }
    let evidence_of = |m: &Merged, quote: Quote| -> Vec<Evidence> {
        let mut refs = m.evidence.clone();
        refs.sort_by(|a, b| a.0.cmp(&b.0));
        refs.dedup_by(|a, b| a.0.event == b.0.event);
        let mut out: Vec<Evidence> = refs
            .iter()
            .filter_map(|(r, rule)| evidence(tl, rules, *rule, r, quote))
            .collect();
        out.sort_by(|a, b| {
            (a.ts.is_none(), &a.ts, &a.file, a.line).cmp(&(b.ts.is_none(), &b.ts, &b.file, b.line))
        });
        out
    };

    let mut causes: Vec<Cause> = Vec::new();
    for m in by_id.values() {
        if parent.contains_key(&m.id) {
            continue;
        }
        let rule = &rules[m.best];
        // The cause and the present causes it explains, itself first.
        let mut concerned: Vec<&Merged> = vec![m];
        concerned.extend(
            by_id
                .values()
                .filter(|s| hangs_under(&parent, &s.id, &m.id)),
        );
        let mut symptoms: Vec<Symptom> = concerned[1..]
            .iter()
            .map(|s| {
                let r = &rules[s.best];
                Symptom {
                    id: s.id.clone(),
                    code: r.code.to_string(),
                    title: r.title.clone(),
                    summary: summaries
                        .get(&s.best)
                        .map_or(r.summary.clone(), |x| x.to_string()),
                    evidence: evidence_of(s, quote),
                }
            })
            .collect();
        symptoms.sort_by(|a, b| a.id.cmp(&b.id));
        let evidence = evidence_of(m, quote);
        // The exception is read from the whole records: a cut one may have lost its
        // traceback's header or frames, and the summary is the same whatever the quoting.
        let whole = match quote {
            Quote::Whole => None,
            Quote::Cut => Some(evidence_of(m, Quote::Whole)),
        };
        let summary = with_exit_codes(
            with_exception(
                summaries
                    .get(&m.best)
                    .map_or(rule.summary.clone(), |x| x.to_string()),
                whole.as_deref().unwrap_or(&evidence),
            ),
            m.evidence
                .iter()
                .filter_map(|(r, _)| tl.events.get(r.event)),
        );
        let known = m.known.and_then(|(r, claim, _)| {
            let k = rules.get(r)?.known_issue.as_ref()?;
            Some((k, claim))
        });
        causes.push(Cause {
            rank: 0,
            id: m.id.clone(),
            code: rule.code.to_string(),
            codes: m.codes.clone(),
            severity: m.severity,
            confidence: m.confidence,
            title: rule.title.clone(),
            summary: match known {
                Some((k, claim)) => format!("{} {summary}", k.sentence(claim)),
                None => summary,
            },
            known_issue: known.map(|(k, claim)| KnownIssueRef::of(k, claim)),
            objects: objects_of(&concerned),
            evidence,
            explains: symptoms.iter().map(|s| s.id.clone()).collect(),
            symptoms,
            remediation: rule.remediation.clone(),
            references: rule.references.clone(),
        });
    }
    causes.sort_by(|a, b| {
        // Benign findings last; the open world's generic findings after every catalogue
        // cause, whatever their scores.
        let benign = |c: &Cause| c.severity == Severity::Info;
        let generic = |c: &Cause| crate::open_world::is_generic(&c.id);
        benign(a)
            .cmp(&benign(b))
            .then(generic(a).cmp(&generic(b)))
            .then(b.score().total_cmp(&a.score()))
            .then(a.id.cmp(&b.id))
    });
    for (i, c) in causes.iter_mut().enumerate() {
        c.rank = i + 1;
    }

    let inventory = Inventory::of(tl);
    Report {
        schema: SCHEMA,
        raysift_version: VERSION,
        generated_at: generated_at(),
        bundle: BundleInfo::of(tl, &inventory, &stated),
        window: inventory.window.clone(),
        causes,
        diagnostics: tl.diagnostics.clone(),
        stats: Stats {
            events: inventory.records_parsed,
            records_held: tl.events.len() as u64,
            unparsed_lines: inventory.unparsed_lines,
            elapsed_ms,
            rules: rules.len(),
        },
        inventory,
        timeline: None,
        unrecognised: Vec::new(),
    }
}

/// `summary` with the exception its cause's evidence ends in, where it does not say it yet:
/// the first Python traceback of the evidence (by time) that ends in its exception line, as
/// `Type: message at file.py:N in function` (the innermost frame outside Ray). The decisive
/// fact is then on the report's first line, not only at the end of a long record.
fn with_exception(summary: String, evidence: &[Evidence]) -> String {
    let Some(f) = evidence
        .iter()
        .filter_map(|e| exceptions::failure(&e.text))
        .find(|f| f.shape == exceptions::Shape::PythonTraceback && !f.cut_off)
    else {
        return summary;
    };
    // Said already, maybe without the fields a logger added after the message.
    let head: String = f.message.chars().take(24).collect();
    if summary.contains(&format!("{}: {}", f.kind, head.trim_end()))
        || f.message.is_empty() && summary.contains(&f.kind)
    {
        return summary;
    }
    format!(
        "{}; the exception: {}",
        summary.trim_end().trim_end_matches('.'),
        f.headline()
    )
}

/// `summary` with the exit codes its evidence's container states give (a pod's
/// `lastState.terminated.exitCode`, a describe's `Exit Code:`), each with the reason
/// Kubernetes recorded beside it (`Error`, `ContainerCannotRun`, …) when the evidence holds
/// that sibling of the same container (unless the summary has it as a word), where the summary
/// names no code: a crash loop's rule says the code is in the evidence, and the reader wants
/// it on the first line.
fn with_exit_codes<'e>(summary: String, evidence: impl Iterator<Item = &'e Event>) -> String {
    let facts: Vec<(&str, String, &str)> = evidence
        .filter_map(|ev| {
            let path = ev.field("path")?.to_ascii_lowercase();
            Some((ev.field("object").unwrap_or(""), path, ev.field("value")?))
        })
        .collect();
    let reason_of = |object: &str, stem: &str| {
        facts
            .iter()
            .find(|(o, p, _)| *o == object && p.strip_suffix("reason") == Some(stem))
            .map(|(_, _, v)| v.trim())
    };
    let mut codes: Vec<(i64, Option<&str>)> = facts
        .iter()
        .filter_map(|(object, path, value)| {
            let stem = path.strip_suffix("exitcode")?;
            let code = value.trim().parse::<i64>().ok().filter(|&c| c != 0)?;
            Some((code, reason_of(object, stem)))
        })
        .collect();
    codes.sort_unstable();
    codes.dedup();
    // The codes the summary says already (`exit code 137` is not `exit code 1`).
    let said: Vec<i64> = ["exit code ", "exited with code "]
        .iter()
        .flat_map(|p| summary.match_indices(p).map(move |(i, _)| i + p.len()))
        .filter_map(|at| {
            let digits: String = summary[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect();
    if codes.is_empty() || codes.iter().any(|(c, _)| said.contains(c)) {
        return summary;
    }
    let shown: Vec<String> = codes
        .iter()
        .map(|(code, reason)| match reason {
            Some(r)
                if !summary
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|w| w == *r) =>
            {
                format!("{code} ({r})")
            }
            _ => code.to_string(),
        })
        .collect();
    format!(
        "{}; the container's last exit code{}: {}",
        summary.trim_end().trim_end_matches('.'),
        if shown.len() > 1 { "s" } else { "" },
        shown.join(", ")
    )
}

/// A finding's confidence once the bundle's versions are weighed: a known issue they put in
/// range names the cause more precisely than the rule that shares its id; one whose version
/// is unknown is offered below what the bundle shows for sure.
fn known_confidence(confidence: f64, claim: Option<Claim>) -> f64 {
    match claim {
        Some(Claim::InRange) => (confidence + known::IN_RANGE_BOOST).min(0.99),
        Some(_) => confidence * known::UNKNOWN_VERSION_FACTOR,
        None => confidence,
    }
}

/// How far from a cause's evidence, in time, a generic finding's records may lie and still
/// be its echo.
const ECHO_SLACK: Micros = 5 * 60 * MICROS_PER_SEC;

/// The open world's generic findings that are echoes of a catalogue cause, each with the
/// cause it echoes: one failure is one cause. A generic finding (`component_exception`,
/// `unrecognised_error`, `object_unhealthy`) echoes a cause of at least its severity when it
/// cites one of the cause's records, or when its records concern one of the cause's objects
/// within [`ECHO_SLACK`] of the cause's evidence (or carry no time: an object's state as
/// dumped): the controller's "failed to update" records after a replica's constructor
/// raised, the dashboard's refused calls to an agent that died, the pod status of the pod
/// whose image cannot be pulled. It echoes one, too, when one of its records ends in the
/// exception one of the cause's records ends in: the same failure told again elsewhere (Ray's
/// events of an actor whose constructor raised, beside the worker's traceback that has no
/// time). Of several such causes, the highest scored takes it; what no cause explains
/// stays a finding of its own.
fn echoes(
    tl: &Timeline,
    by_id: &BTreeMap<String, Merged>,
    parent: &BTreeMap<String, String>,
    objects_of: &dyn Fn(&[&Merged]) -> Vec<ObjectRef>,
) -> Vec<(String, String)> {
    let causes: Vec<Reach> = by_id
        .values()
        .filter(|m| !crate::open_world::is_generic(&m.id) && m.severity > Severity::Info)
        .filter(|m| !parent.contains_key(&m.id))
        .map(|m| {
            // The cause with the causes it explains, as its report names their objects.
            let mut family = vec![m];
            family.extend(by_id.values().filter(|s| hangs_under(parent, &s.id, &m.id)));
            Reach::of(tl, m, objects_of(&family))
        })
        .collect();
    let score = |m: &Merged| m.severity.weight() * m.confidence;
    by_id
        .values()
        .filter(|g| crate::open_world::is_generic(&g.id) && !parent.contains_key(&g.id))
        .filter_map(|g| {
            let echo = Reach::of(tl, g, objects_of(&[g]));
            let cause = causes
                .iter()
                .filter(|c| c.finding.severity >= g.severity && echo.echoes(c))
                .max_by(|a, b| {
                    let (a, b) = (a.finding, b.finding);
                    score(a).total_cmp(&score(b)).then(b.id.cmp(&a.id))
                })?;
            Some((g.id.clone(), cause.finding.id.clone()))
        })
        .collect()
}

/// What a merged finding concerns: its records, objects and the span of their times.
struct Reach<'m> {
    finding: &'m Merged,
    events: BTreeSet<usize>,
    /// The Python exceptions its records end in (`ValueError: …`).
    raised: BTreeSet<String>,
    objects: Vec<ObjectRef>,
    span: Option<(Micros, Micros)>,
}

impl<'m> Reach<'m> {
    fn of(tl: &Timeline, finding: &'m Merged, objects: Vec<ObjectRef>) -> Reach<'m> {
        let mut times = finding
            .evidence
            .iter()
            .filter_map(|(r, _)| tl.events.get(r.event)?.ts)
            .map(|t| t.micros);
        let span = times
            .next()
            .map(|first| times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))));
        let raised = finding
            .evidence
            .iter()
            .filter_map(|(r, _)| raised_line(&tl.events.get(r.event)?.message))
            .collect();
        Reach {
            finding,
            events: finding.evidence.iter().map(|(r, _)| r.event).collect(),
            raised,
            objects,
            span,
        }
    }

    /// Whether this finding echoes `cause` (see [`echoes`]).
    fn echoes(&self, cause: &Reach) -> bool {
        let shared = !self.events.is_disjoint(&cause.events);
        // A bundle of one Ray cluster run outside Kubernetes names no object at all.
        let same_object = self.objects.iter().any(|o| cause.objects.contains(o))
            || self.objects.is_empty() && cause.objects.is_empty();
        let same_minutes = match (self.span, cause.span) {
            (Some((a, b)), Some((lo, hi))) => a <= hi + ECHO_SLACK && b >= lo - ECHO_SLACK,
            // An object's state with no time is its state now, the cause's too.
            (None, _) => true,
            (Some(_), None) => false,
        };
        let same_exception = !self.raised.is_disjoint(&cause.raised);
        shared || same_object && (same_minutes || same_exception)
    }
}

/// The last line of a record when it is a Python exception with its text
/// (`ValueError: feature table 'users_v2' not found`), as a traceback ends.
fn raised_line(message: &str) -> Option<String> {
    let last = message.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    crate::parse::python_exception::raised_error(last)
        .is_some_and(|r| !r.text.is_empty())
        .then(|| last.to_string())
}

/// Whether `id` hangs, through `parent`, under `root`: chains hang under their first cause.
fn hangs_under(parent: &BTreeMap<String, String>, id: &str, root: &str) -> bool {
    id != root && root_of(parent, id) == root
}

/// The cause `id` hangs under, climbing `parent` (itself when it hangs under none; a circle
/// ends where it closes).
fn root_of<'a>(parent: &'a BTreeMap<String, String>, id: &'a str) -> &'a str {
    let mut cur = id;
    let mut seen = BTreeSet::new();
    while let Some(p) = parent.get(cur) {
        if !seen.insert(cur) {
            break;
        }
        cur = p;
    }
    cur
}

/// The time a report is written, as RFC 3339 UTC to the millisecond: `SOURCE_DATE_EPOCH`
/// (whole seconds since 1970, the reproducible-builds convention) when it is set and valid,
/// so that two runs give the same bytes (the tests set it); else the clock.
pub fn generated_at() -> String {
    let epoch = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok());
    let micros = match epoch {
        Some(secs) => secs.saturating_mul(1_000_000),
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64 * 1000),
    };
    format_rfc3339(micros)
}

fn evidence(
    tl: &Timeline,
    rules: &[Rule],
    rule: usize,
    r: &EvidenceRef,
    quote: Quote,
) -> Option<Evidence> {
    let ev = tl.events.get(r.event)?;
    let sig = rules.get(rule)?.signals.get(r.signal)?;
    let text = crate::explain::evidence_text(ev, r.field.and_then(|i| ev.fields.get(i)));
    let shown = match quote {
        Quote::Whole => text,
        Quote::Cut => quoted(&text, sig),
    };
    Some(Evidence {
        file: tl.file(ev.file).map_or(String::new(), |f| f.path.clone()),
        line: ev.line,
        ts: ev.ts.map(|t| format_rfc3339(t.micros)),
        ts_quality: ev.ts.map_or("none", |t| t.quality.as_str()),
        source: ev.kind.as_str(),
        text: shown,
        meaning: sig.description.clone(),
        also_in: tl.mirrors.also(ev.file, ev.line).map(|(f, at)| {
            let path = tl.file(f).map_or("?", |f| f.path.as_str());
            format!("{path}:{at}")
        }),
    })
}

/// `text` cut to [`EVIDENCE_TEXT_MAX`] characters, with what `sig` matched in it kept.
fn quoted(text: &str, sig: &crate::rules::Signal) -> String {
    // What the signal matched must stay visible however long the record is.
    // The focus is the whole line of the match.
    // A match over several lines (a traceback's shape) is left to `cut`, which keeps the
    // record's head, innermost frames and last lines.
    let focus = sig
        .text
        .iter()
        .find_map(|re| re.regex()?.find(text))
        .filter(|m| !m.as_str().contains('\n'))
        .map(|m| {
            let last = m.end().saturating_sub(1).max(m.start());
            let start = text[..last].rfind('\n').map_or(0, |i| i + 1);
            let end = text[m.end()..]
                .find('\n')
                .map_or(text.len(), |i| m.end() + i);
            // A long line is narrowed to the match itself (its end, when that is long too).
            let room = EVIDENCE_TEXT_MAX / 2;
            if end - start <= room {
                (start, end)
            } else if m.end() - m.start() <= room {
                (m.start(), m.end())
            } else {
                let mut from = m.end() - room;
                while !text.is_char_boundary(from) {
                    from += 1;
                }
                (from, m.end())
            }
        });
    let short = cut(text, EVIDENCE_TEXT_MAX);
    match focus {
        Some((a, b)) if !short.contains(&text[a..b]) => around(text, a..b, EVIDENCE_TEXT_MAX),
        _ => short,
    }
}

/// Shortens evidence text. A long multi-line record (a traceback) keeps its first and last
/// lines, because the exception that explains it comes last, and the innermost frames of code
/// outside the standard library in between (the last listed in a traceback, the first in a
/// faulthandler dump), because that is where it was raised; then the
/// characters are capped by leaving out whole lines in the middle, keeping the last line whole
/// when it fits in half the cap. Every elision says how many lines it stands for
/// (`… 3 lines …`), and a line too long for the cap is cut between words, never inside a name.
fn cut(text: &str, max: usize) -> String {
    const HEAD: usize = 3;
    const TAIL: usize = 3;
    const FRAMES: usize = 2;
    // Python 3.11's carets under a frame's source (`^^^^`) say nothing a report needs.
    let lines: Vec<&str> = text.lines().filter(|l| !is_caret_line(l)).collect();
    let text = if lines.len() > HEAD + TAIL + 1 {
        let middle = &lines[HEAD..lines.len() - TAIL];
        let frames: Vec<usize> = middle
            .iter()
            .enumerate()
            .filter(|(_, l)| exceptions::is_code_frame(l))
            .map(|(i, _)| i)
            .collect();
        // The innermost frames outside Ray first: that is where the user's code raised.
        // A traceback lists them last, a faulthandler dump first.
        let inward: Vec<usize> = if most_recent_first(text) {
            frames
        } else {
            frames.into_iter().rev().collect()
        };
        let mut kept: Vec<usize> = inward
            .iter()
            .filter(|&&i| exceptions::frame_outside_ray(middle[i]))
            .take(FRAMES)
            .copied()
            .collect();
        for &i in &inward {
            if kept.len() < FRAMES && !kept.contains(&i) {
                kept.push(i);
            }
        }
        kept.sort_unstable();
        let mut out: Vec<String> = lines[..HEAD].iter().map(|l| l.to_string()).collect();
        let mut next = 0usize;
        for &i in &kept {
            if i > next {
                out.push(elision(i - next));
            }
            out.push(middle[i].to_string());
            next = i + 1;
        }
        if middle.len() > next {
            out.push(elision(middle.len() - next));
        }
        out.extend(lines[lines.len() - TAIL..].iter().map(|l| l.to_string()));
        out.join("\n")
    } else if lines.len() < text.lines().count() {
        lines.join("\n")
    } else {
        text.to_string()
    };
    if text.chars().count() <= max {
        return text;
    }
    cap_lines(&text, max)
}

/// The line that stands for `n` lines left out.
fn elision(n: usize) -> String {
    format!("  … {} …", crate::words::count(n as u64, "line", "lines"))
}

/// How many lines an elision (`  … 3 lines …`, what [`elision`] writes) stands for; `None`
/// for any other line.
fn elided(line: &str) -> Option<usize> {
    let inner = line.trim().strip_prefix("… ")?.strip_suffix(" …")?;
    let (n, noun) = inner.split_once(' ')?;
    matches!(noun, "line" | "lines").then(|| n.parse().ok())?
}

/// Caps multi-line text at about `max` characters by leaving out whole lines. What stays, in
/// this order while there is room: the last line (whole when it fits in half the cap, the
/// exception of a traceback), the innermost frame outside Ray with its source line (the
/// first one listed in a faulthandler dump, the last in a traceback), the first line, then
/// the others from the top. Each run of lines left out becomes one elision.
fn cap_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    if n < 2 {
        return cut_line(text, max);
    }
    let len = |l: &str| l.chars().count() + 1;
    let mut shown: Vec<Option<String>> = vec![None; n];
    let last = lines[n - 1];
    let last = if len(last) <= max / 2 {
        last.to_string()
    } else {
        cut_line(last, max / 2)
    };
    // Room for the elisions, about one for every two lines kept.
    let mut room = max.saturating_sub(len(&last) + 24);
    shown[n - 1] = Some(last);
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let innermost = if most_recent_first(text) {
        (0..n - 1).find(|&i| exceptions::frame_outside_ray(lines[i]))
    } else {
        (0..n - 1)
            .rev()
            .find(|&i| exceptions::frame_outside_ray(lines[i]))
    };
    if let Some(f) = innermost {
        order.push(f);
        if f + 1 < n - 1 && !lines[f + 1].trim_start().starts_with("File \"") {
            order.push(f + 1);
        }
    }
    order.push(0);
    // Already placed lines are passed over below.
    order.extend(1..n - 1);
    // An elision is never kept for itself: the lines around it decide, and a run of lines
    // left out is said once, with every count in it added.
    order.retain(|&i| elided(lines[i]).is_none());
    for i in order {
        if shown[i].is_some() {
            continue;
        }
        let l = lines[i];
        if len(l) + 12 <= room {
            room -= len(l) + 12;
            shown[i] = Some(l.to_string());
        } else if i == 0 && room > 40 {
            // The first line names the record: its head, cut between words.
            let head = cut_line(l, room - 12);
            room = room.saturating_sub(len(&head) + 12);
            shown[i] = Some(head);
        }
    }
    let mut out: Vec<String> = Vec::with_capacity(n);
    let mut left_out = 0usize;
    for (line, kept) in lines.iter().zip(shown) {
        match kept {
            Some(k) => {
                if left_out > 0 {
                    out.push(elision(left_out));
                    left_out = 0;
                }
                out.push(k);
            }
            None => left_out += elided(line).unwrap_or(1),
        }
    }
    out.join("\n")
}

/// One line cut to about `max` characters in its middle, at spaces where there are some
/// near the cut, so that no word or name is cut through: its start, ` … `, its end. A cut
/// never falls inside a path ([`path_spans`]): it moves out of it, to the path's start for
/// the head and past its end for the tail, so a path is shown whole or left out whole.
fn cut_line(line: &str, max: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= max {
        return line.to_string();
    }
    let tail = max / 3;
    let mut head = max.saturating_sub(tail + 3);
    let mut from = chars.len() - tail;
    // Move each cut to the nearest space within a few characters, inward.
    const NEAR: usize = 24;
    if let Some(i) = (head.saturating_sub(NEAR)..head)
        .rev()
        .find(|&i| chars[i] == ' ')
    {
        head = i;
    }
    if let Some(i) = (from..(from + NEAR).min(chars.len())).find(|&i| chars[i] == ' ') {
        from = i + 1;
    }
    // The spans are in bytes; the cuts here in characters.
    let byte_at: Vec<usize> = line
        .char_indices()
        .map(|(b, _)| b)
        .chain([line.len()])
        .collect();
    let char_at = |b: usize| byte_at.partition_point(|&x| x < b);
    for span in path_spans(line) {
        let (start, end) = (char_at(span.start), char_at(span.end));
        if start < head && head < end {
            head = start;
        }
        if start < from && from < end {
            from = end;
        }
    }
    let mut s: String = chars[..head].iter().collect();
    s.push_str(" … ");
    s.extend(&chars[from.max(head)..]);
    s
}

/// The byte ranges of the paths in a line, which an elision must not cut through: a quoted
/// string holding a `/` or `\` (a frame's `File "C:\Program Files\…\os.py"`, spaces and
/// all), and any other run of characters without white space holding one
/// (`/home/ray/app/model.py`, `C:\Users\me\AppData\Local\Temp\ray\session_…\logs`, a URL).
fn path_spans(line: &str) -> Vec<std::ops::Range<usize>> {
    let is_sep = |c: char| c == '/' || c == '\\';
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    let mut at = 0;
    while at < line.len() {
        let rest = &line[at..];
        let Some(start) = rest.find(|c: char| !c.is_whitespace()) else {
            break;
        };
        let start = at + start;
        let quoted = line[start..]
            .strip_prefix('"')
            .and_then(|q| q.find('"'))
            .filter(|&n| line[start + 1..start + 1 + n].contains(is_sep));
        let end = match quoted {
            Some(n) => start + n + 2,
            None => line[start..]
                .find(char::is_whitespace)
                .map_or(line.len(), |n| start + n),
        };
        if quoted.is_some() || line[start..end].contains(is_sep) {
            spans.push(start..end);
        }
        at = end;
    }
    spans
}

/// Shortens `text` around `focus` (a byte range): the start of the record, then the matched
/// part with some context, each cut marked.
fn around(text: &str, focus: std::ops::Range<usize>, max: usize) -> String {
    // The record's first line, up to a limit: what the reader knows the record by.
    let head_max = text.find('\n').unwrap_or(text.len()).min(240);
    let head_max = head_max.min(focus.start);
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let context = max.saturating_sub(head_max + focus.len()) / 2;
    // Cuts fall on white space near where the room ends, so no name is cut through.
    let space_after = |i: usize, limit: usize| {
        text[i..limit]
            .find([' ', '\n'])
            .filter(|&n| n <= 24)
            .map_or(i, |n| i + n + 1)
    };
    let space_before = |i: usize, limit: usize| {
        text[limit..i]
            .rfind([' ', '\n'])
            .filter(|&n| i - (limit + n) <= 24)
            .map_or(i, |n| limit + n)
    };
    let from = floor(focus.start.saturating_sub(context).max(head_max));
    let from = if from > head_max {
        space_after(from, focus.start)
    } else {
        from
    };
    let to = floor((focus.end + context).min(text.len()));
    let to = if to < text.len() {
        space_before(to, focus.end)
    } else {
        to
    };
    // No cut inside a path: each moves to the path's edge away from the matched part.
    let spans = path_spans(text);
    let inside = |i: usize| spans.iter().find(|s| s.start < i && i < s.end);
    let from = match inside(from) {
        Some(s) if s.end <= focus.start => s.end,
        Some(s) => s.start,
        None => from,
    };
    let to = match inside(to) {
        Some(s) if s.start >= focus.end => s.start,
        Some(s) => s.end,
        None => to,
    };
    let head = floor(head_max.min(from));
    let head = if head < from && head > 0 {
        space_before(head, 0)
    } else {
        head
    };
    let head = match inside(head) {
        Some(s) if head < from => s.start,
        _ => head,
    };
    let mut s = String::new();
    s.push_str(&text[..head]);
    if from > head {
        s.push_str(" … ");
    }
    s.push_str(&text[from..to]);
    if to < text.len() {
        s.push_str(" …");
    }
    s
}

/// A line of carets (and tildes) that Python 3.11 prints under a frame's source.
/// Whether the frames of a record are listed innermost first: a faulthandler dump
/// (`Fatal Python error: …`, `Stack (most recent call first):`), not a traceback.
fn most_recent_first(text: &str) -> bool {
    text.contains("(most recent call first):")
        || crate::parse::abort::faulthandler_head(text).is_some()
}

fn is_caret_line(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.bytes().all(|b| matches!(b, b'^' | b'~' | b' '))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(text: &str) -> Evidence {
        Evidence {
            file: "logs/worker.err".into(),
            line: 1,
            ts: None,
            ts_quality: "none",
            source: "worker",
            text: text.into(),
            meaning: String::new(),
            also_in: None,
        }
    }

    fn fact(path: &str, value: &str) -> Event {
        let mut e = Event::new(1, format!("\"exitCode\": {value}"));
        e.fields = vec![("path".into(), path.into()), ("value".into(), value.into())];
        e
    }

    fn fact_of(object: &str, path: &str, value: &str) -> Event {
        let mut e = fact(path, value);
        e.fields.push(("object".into(), object.into()));
        e
    }

    #[test]
    fn a_summary_says_the_exit_codes_its_evidence_states() {
        let last = "status.containerstatuses[0].laststate.terminated.exitcode";
        let init = "status.initcontainerstatuses[0].state.terminated.exitcode";
        let said = |summary: &str, facts: &[Event]| with_exit_codes(summary.into(), facts.iter());
        assert_eq!(
            said(
                "It keeps exiting.",
                &[fact(last, "1"), fact(init, "0"), fact(last, "1")]
            ),
            "It keeps exiting; the container's last exit code: 1"
        );
        assert_eq!(
            said("x", &[fact(last, "2"), fact(last, "127")]),
            "x; the container's last exit codes: 2, 127"
        );
        // `exit code 137` in the words is not code 1; the code said already, or none: as is.
        assert_eq!(
            said("no exit code 137 here", &[fact(last, "1")]),
            "no exit code 137 here; the container's last exit code: 1"
        );
        assert_eq!(
            said("it got exit code 1", &[fact(last, "1")]),
            "it got exit code 1"
        );
        assert_eq!(said("x", &[fact(init, "0")]), "x");
    }

    #[test]
    fn an_exit_code_is_said_with_the_reason_beside_it() {
        let said = |facts: &[Event]| with_exit_codes("It keeps exiting.".into(), facts.iter());
        let (a, b) = ("Pod/ml/a-head-1", "Pod/ml/a-worker-2");
        let code = "status.containerstatuses[0].laststate.terminated.exitcode";
        let reason = "status.containerstatuses[0].laststate.terminated.reason";
        assert_eq!(
            said(&[fact_of(a, code, "1"), fact_of(a, reason, "Error")]),
            "It keeps exiting; the container's last exit code: 1 (Error)"
        );
        // A describe's `Reason:` and `Exit Code:` of its `Last State:`.
        assert_eq!(
            said(&[
                fact_of(
                    a,
                    "containers.ray-head.laststate.reason",
                    "ContainerCannotRun"
                ),
                fact_of(a, "containers.ray-head.laststate.exitcode", "128"),
            ]),
            "It keeps exiting; the container's last exit code: 128 (ContainerCannotRun)"
        );
        // Another pod's reason, or another container's, is not this code's.
        assert_eq!(
            said(&[
                fact_of(a, code, "1"),
                fact_of(b, reason, "Error"),
                fact_of(
                    a,
                    "status.containerstatuses[1].laststate.terminated.reason",
                    "Error"
                ),
            ]),
            "It keeps exiting; the container's last exit code: 1"
        );
        // A reason the summary says already is not said again (`ValueError` is not `Error`).
        assert_eq!(
            with_exit_codes(
                "It says OOMKilled; ValueError".into(),
                [
                    fact_of(a, code, "137"),
                    fact_of(a, reason, "OOMKilled"),
                    fact_of(b, code, "1"),
                    fact_of(b, reason, "Error"),
                ]
                .iter()
            ),
            "It says OOMKilled; ValueError; the container's last exit codes: 1 (Error), 137"
        );
        // Two pods, the same code and reason: said once.
        assert_eq!(
            said(&[
                fact_of(a, code, "1"),
                fact_of(a, reason, "Error"),
                fact_of(b, code, "1"),
                fact_of(b, reason, "Error"),
            ]),
            "It keeps exiting; the container's last exit code: 1 (Error)"
        );
    }

    #[test]
    fn a_summary_says_the_exception_its_evidence_ends_in() {
        let tb = "Traceback (most recent call last):\n  File \"/home/ray/anaconda3/lib/python3.10/site-packages/ray/serve/_private/replica.py\", line 9, in init\n  File \"/app/model_app.py\", line 22, in __init__\n    open(path)\nFileNotFoundError: [Errno 2] No such file or directory: '/models/x.pt'";
        let said = with_exception(
            "The code raised (reports: 1).".into(),
            &[evidence("no traceback"), evidence(tb)],
        );
        assert_eq!(
            said,
            "The code raised (reports: 1); the exception: FileNotFoundError: [Errno 2] No such file or directory: '/models/x.pt' at app/model_app.py:22 in __init__"
        );
        // Said already (the logger's fields after the message aside), or no traceback: as is.
        let actor = "Traceback (most recent call last):\n  File \"/app/jobs.py\", line 91, in __init__\nValueError: feature table 'users_v2' not found job_id=01000000";
        let summary =
            "An actor's constructor raised: ValueError: feature table 'users_v2' not found";
        assert_eq!(with_exception(summary.into(), &[evidence(actor)]), summary);
        assert_eq!(
            with_exception("x".into(), &[evidence("ValueError: y")]),
            "x"
        );
    }

    /// Every path of `line` that the cut text shows at all, it shows whole.
    #[track_caller]
    fn no_path_cut(line: &str, cut: &str) {
        for span in path_spans(line) {
            let path = &line[span];
            let kept = cut.contains(path);
            let piece = cut
                .split(" … ")
                .flat_map(str::split_whitespace)
                .any(|w| path.contains(w) && w.contains(['/', '\\']) && w != path);
            assert!(kept || !piece, "{path:?} cut in {cut:?}");
        }
    }

    #[test]
    fn a_cut_line_never_cuts_a_path() {
        let windows = "Worker exit detail: the worker failed to start because C:\\Users\\me\\AppData\\Local\\Temp\\ray\\session_2024-05-25_19-44-06_621398_9536\\runtime_resources\\working_dir_files\\_ray_pkg_d27099ac56c886be\\bridge_robot\\src\\main.py could not be imported, see C:\\Users\\me\\AppData\\Local\\Temp\\ray\\session_2024-05-25_19-44-06_621398_9536\\logs\\worker-5a1c5063d45bc8844660f12a5293534a88ef93bc704ab3d652ebbc05-01000000-9536.err";
        let linux = windows
            .replace("C:\\Users\\me\\AppData\\Local\\Temp", "/tmp")
            .replace('\\', "/");
        for line in [windows.to_string(), linux] {
            for max in [60, 90, 120, 160, 200] {
                let cut = cut_line(&line, max);
                assert!(cut.contains(" … "), "{cut}");
                no_path_cut(&line, &cut);
            }
        }
        // A quoted frame path with spaces in it is one path.
        let frame = "  File \"C:\\Program Files\\Python310\\lib\\site-packages\\ray\\serve\\_private\\replica.py\", line 410, in initialize_and_get_metadata_of_the_replica_now";
        for max in [30, 50, 70, 100] {
            let cut = cut_line(frame, max);
            assert!(
                cut.contains("\"C:\\Program Files\\Python310\\lib\\site-packages\\ray\\serve\\_private\\replica.py\"")
                    || !cut.contains("Program"),
                "{cut}"
            );
        }
    }

    #[test]
    fn around_a_match_never_cuts_a_path() {
        let text = "Failed to create the worker process: C:\\Users\\me\\miniconda3\\envs\\x\\lib\\site-packages\\ray\\core\\src\\ray\\raylet\\raylet.exe exited with code 3221225477 while C:\\Users\\me\\AppData\\Local\\Temp\\ray\\session_2024-05-01_10-00-00_123456_7890\\logs\\raylet.out was written";
        let at = text.find("exited with code").unwrap_or(0);
        for max in [40, 60, 80, 120] {
            let cut = around(text, at..at + 16, max);
            assert!(cut.contains("exited with code"), "{cut}");
            no_path_cut(text, &cut);
        }
    }

    #[test]
    fn path_spans_are_paths() {
        let line = "x /a/b c \"C:\\P F\\y.py\", line 1 in f http://h/p q";
        let spans: Vec<&str> = path_spans(line).into_iter().map(|s| &line[s]).collect();
        assert_eq!(spans, ["/a/b", "\"C:\\P F\\y.py\"", "http://h/p"]);
    }
}
