//! The layer below the rules: what the bundle itself says is wrong when no rule explains it,
//! so that a broken bundle never gets an empty report (`CATALOGUE.md`, "Open world").
//!
//! It runs after the rules, over the same timeline, and looks only at what the rules did not
//! use as evidence:
//!
//! - `objects`: Kubernetes objects that report themselves failing (container states, phases,
//!   custom-resource states and conditions, `kubectl get` STATUS, unresolved Warning events);
//! - `exceptions`: Python tracebacks, Go panics and C++ fatal records of any component;
//! - `templates`: ERROR records no rule claimed, grouped into templates and compared with a
//!   baseline of templates seen in healthy bundles.
//!
//! Where the evidence decides a catalogue id (an `OOMKilled` state is `oom_killed`, a
//! `ModuleNotFoundError` is `missing_dependency`) the finding carries that id, with the
//! catalogue rule's title and remediation and a lower confidence; the rest become
//! `object_unhealthy`, `component_exception` and `unrecognised_error`, which rank below every
//! catalogue cause. Findings come out as ordinary [`Finding`]s over synthetic [`Rule`]s that
//! follow the library's (made in `synthetic`), so ranking and rendering treat them like any
//! other.
//!
//! Invariant: nothing here fires on known healthy noise (the baseline), on an event a rule
//! already used, or on objects outside the Ray workload.

pub mod exceptions;
pub mod known;
pub mod objects;
mod synthetic;
pub mod templates;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::event::{format_rfc3339, Event, Level, SourceKind};
use crate::rules::engine::Finding;
use crate::rules::{Rule, Severity};

use synthetic::Builder;
pub use synthetic::{generic_rule, generic_rules};
pub use templates::Baseline;

pub const OBJECT_UNHEALTHY: &str = "object_unhealthy";
pub const COMPONENT_EXCEPTION: &str = "component_exception";
pub const UNRECOGNISED_ERROR: &str = "unrecognised_error";

/// The generic ids: they rank below every catalogue cause.
pub fn is_generic(id: &str) -> bool {
    matches!(
        id,
        OBJECT_UNHEALTHY | COMPONENT_EXCEPTION | UNRECOGNISED_ERROR
    )
}

/// A template of unclaimed error records, as the report and `batch --summary` show it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Unrecognised {
    pub template: String,
    pub level: &'static str,
    pub count: usize,
    pub first: Option<String>,
    pub last: Option<String>,
    /// Whether the baseline of healthy bundles knows it (then it is never reported).
    pub known_noise: bool,
    /// How much it stands out: level × volume × burstiness × timing (see [`score`]).
    pub score: f64,
    /// The message catalogue's template of it, when the catalogue knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<known::MessageNote>,
}

impl Unrecognised {
    /// An error template no one explained: not noise the baseline knows, and not a known
    /// warning (that is a note of its report, not an unexplained error).
    pub fn is_unexplained_error(&self) -> bool {
        !self.known_noise && self.level != Level::Warning.as_str()
    }
}

/// What the layer adds to a report.
pub struct OpenWorld {
    /// Synthetic rules, to be appended after the library's (findings index into the whole).
    pub rules: Vec<Rule>,
    pub findings: Vec<Finding>,
    /// Every template of unclaimed ERROR records, most frequent first.
    pub unrecognised: Vec<Unrecognised>,
}

/// Most templates an `unrecognised_error` cause shows.
const TOP_TEMPLATES: usize = 3;

/// Runs the layer. `library` are the rules the engine ran (their `findings` index into
/// them); the synthetic rules returned are numbered from `library.len()`.
///
/// The steps, in order: what the rules used, the failing objects, the component failures,
/// the unclaimed error templates; then the workload's own final word.
pub fn analyze(
    events: &[Event],
    library: &[Rule],
    findings: &[Finding],
    baseline: &Baseline,
) -> OpenWorld {
    let claimed = claimed_events(findings);
    let mut out = Builder::new(library, findings);
    // The workload's own final word: when every Ray object the bundle shows reports itself
    // healthy (a job that succeeded, a cluster ready, a service ready), the failures below it
    // were passing (a submitter retried, a pod replaced) and nothing is reported.
    let healthy_workload = objects::workload_healthy(events);

    report_objects(&mut out, events, &claimed);
    let (failures, used, caught) = component_failures(events, baseline, &claimed);
    report_failures(&mut out, events, failures);
    let mut unrecognised = unrecognised_templates(events, baseline, &claimed, &used);
    let decided = report_known_causes(&mut out, events, &unrecognised);
    report_unrecognised(&mut out, &unrecognised, &decided);
    let warned = known_warnings(events, baseline, &claimed, &used, &caught);
    report_warned_causes(&mut out, library, events, &warned);
    unrecognised.extend(warned);

    let (rules, mut findings) = out.finish();
    if healthy_workload {
        findings.clear();
    }
    OpenWorld {
        rules,
        findings,
        unrecognised: unrecognised.into_iter().map(|(u, _)| u).collect(),
    }
}

/// The events the rules used as evidence: the layer looks only at the others.
fn claimed_events(findings: &[Finding]) -> BTreeSet<usize> {
    findings
        .iter()
        .flat_map(|f| f.evidence.iter().map(|e| e.event))
        .collect()
}

/// Objects that report themselves failing and that no rule used: each under the catalogue id
/// its state decides, when it can take a finding; the rest together as `object_unhealthy`.
/// A state a rule cited any line of (the status beside the message, the reason beside the
/// exit code) is that rule's: a rule keeps only a sample of what it matched, so the lines it
/// left out are no second, unexplained failure.
fn report_objects(out: &mut Builder, events: &[Event], claimed: &BTreeSet<usize>) {
    let mut generic_objects: Vec<objects::Problem> = Vec::new();
    for p in objects::problems(events) {
        if p.evidence.iter().any(|i| claimed.contains(i)) {
            continue;
        }
        match object_catalogue_id(&p, events) {
            Some(id) if out.can_map(id) => {
                let summary = format!(
                    "{} reports {} (in Kubernetes' own words; the rules that usually decide this found no more than this line)",
                    shown_object(&p.object),
                    p.state
                );
                out.add_mapped(id, "OWD010", &p.evidence, summary, "the object's own state");
            }
            _ => generic_objects.push(p),
        }
    }
    report_generic_objects(out, &generic_objects);
}

/// The failing objects no catalogue id takes, as one `object_unhealthy` finding (none when
/// there are none): an error when one is a hard failure, else a warning.
fn report_generic_objects(out: &mut Builder, generic_objects: &[objects::Problem]) {
    if generic_objects.is_empty() {
        return;
    }
    let hard = generic_objects.iter().any(|p| p.hard);
    let mut listed: Vec<String> = generic_objects
        .iter()
        .map(|p| format!("{}: {}", shown_object(&p.object), p.state))
        .collect();
    listed.dedup();
    let shown = listed
        .iter()
        .take(4)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    let more = listed.len().saturating_sub(4);
    let summary = format!(
        "{} object{} of the Ray workload report{} failing and no rule explains why: {shown}{}",
        listed.len(),
        if listed.len() == 1 { "" } else { "s" },
        if listed.len() == 1 {
            "s itself"
        } else {
            " themselves"
        },
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    );
    let evidence: Vec<(usize, usize)> = generic_objects
        .iter()
        .flat_map(|p| {
            let sig = usize::from(!p.hard);
            p.evidence.iter().map(move |&e| (e, sig))
        })
        .collect();
    out.add_generic(
        OBJECT_UNHEALTHY,
        if hard {
            Severity::Error
        } else {
            Severity::Warning
        },
        if hard { 0.45 } else { 0.35 },
        evidence,
        summary,
    );
}

/// Component failures by (component, masked headline), each with the first record of every
/// occurrence.
type Failures = BTreeMap<(String, String), (exceptions::Failure, Vec<usize>)>;

/// Tracebacks a leveled log wrote below ERROR (caught and handled), by their first record:
/// their exception line, which the catalogue is asked about when the record is a warning.
type Caught = BTreeMap<usize, String>;

/// Component failures: a record that holds a whole failure, or a traceback told one line a
/// record (`kubectl logs --timestamps`, raw stderr), put back together. Failures the baseline
/// knows, caught ones and requested stops are left out; a group of which a rule used one
/// record is dropped whole. Also returns every record a kept failure or a requested stop
/// holds (`used`): the error templates do not count them again. And returns the caught
/// tracebacks' exception lines (`Caught`).
fn component_failures(
    events: &[Event],
    baseline: &Baseline,
    claimed: &BTreeSet<usize>,
) -> (Failures, BTreeSet<usize>, Caught) {
    let mut used: BTreeSet<usize> = BTreeSet::new();
    let mut caught = Caught::new();
    let mut failures: BTreeMap<(String, String), (exceptions::Failure, Vec<usize>, bool)> =
        BTreeMap::new();
    for (idxs, f) in exceptions::failures(events, is_log_kind) {
        let first = &events[idxs[0]];
        if f.requested_stop()
            || stopped_on_purpose(&first.message)
            || at_interpreter_shutdown(events, idxs[0])
        {
            // Told to stop: no failure, and no error record of an unknown kind either.
            used.extend(idxs.iter().copied());
            continue;
        }
        if !reports_failure(first) {
            if !f.cut_off {
                caught.insert(idxs[0], format!("{}: {}", f.kind, f.message));
            }
            continue;
        }
        let noise = templates::masked(&format!("{}: {}", f.kind, f.message));
        if baseline.knows(&noise) || failure_message(&f, first.kind).is_some_and(known::is_benign) {
            continue;
        }
        let is_claimed = idxs.iter().any(|i| claimed.contains(i));
        used.extend(idxs.iter().copied());
        let key = (
            component_of(first),
            templates::masked(&f.headline()).join(" "),
        );
        let entry = failures
            .entry(key)
            .or_insert_with(|| (f, Vec::new(), false));
        entry.1.push(idxs[0]);
        entry.2 |= is_claimed;
    }
    let failures: Failures = failures
        .into_iter()
        .filter(|(_, (_, _, claimed))| !claimed)
        .map(|(k, (f, idxs, _))| (k, (f, idxs)))
        .collect();
    (failures, used, caught)
}

/// Each component failure under the catalogue id it decides, when it can take a finding;
/// the rest as one `component_exception` finding.
fn report_failures(out: &mut Builder, events: &[Event], failures: Failures) {
    let mut generic_failures: Vec<(String, exceptions::Failure, Vec<usize>)> = Vec::new();
    for ((component, _), (f, idxs)) in failures {
        let first = &events[idxs[0]];
        let message = failure_message(&f, first.kind);
        // What the exception's kind says, then the component's usual cause, then what the
        // catalogue judged its message to mean.
        let id = exception_kind_id(&f)
            .or_else(|| component_catalogue_id(&f, first.kind))
            .or_else(|| message.and_then(known::cause_of));
        match id {
            Some(id) if out.can_map(id) => {
                let summary = format!(
                    "{component} {} {}{} (the rules that usually decide this did not see their usual lines{})",
                    f.verb(),
                    f.headline(),
                    times(records(events, &idxs)),
                    message.map(|m| format!("; {}", known::gloss(m))).unwrap_or_default()
                );
                let ev: Vec<usize> = ends(&idxs);
                out.add_mapped(
                    id,
                    "OWD011",
                    &ev,
                    summary,
                    "the component's failure: its final exception and where it was raised",
                );
            }
            _ => generic_failures.push((component, f, idxs)),
        }
    }
    report_generic_failures(out, events, &generic_failures);
}

/// The failures no catalogue id takes, as one `component_exception` finding (none when there
/// are none): the first three told, the others counted.
fn report_generic_failures(
    out: &mut Builder,
    events: &[Event],
    generic_failures: &[(String, exceptions::Failure, Vec<usize>)],
) {
    if generic_failures.is_empty() {
        return;
    }
    let listed: Vec<String> = generic_failures
        .iter()
        .take(3)
        .map(|(c, f, idxs)| {
            format!(
                "{c} {} {}{}{}",
                f.verb(),
                f.headline(),
                times(records(events, idxs)),
                failure_message(f, events[idxs[0]].kind)
                    .map(|m| format!(" \u{2014} {}", known::gloss(m)))
                    .unwrap_or_default()
            )
        })
        .collect();
    let more = generic_failures.len().saturating_sub(3);
    let summary = format!(
        "{}{}; no rule explains it",
        listed.join("; "),
        if more > 0 {
            format!(
                "; and {more} other failure{}",
                if more == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        }
    );
    let evidence: Vec<(usize, usize)> = generic_failures
        .iter()
        .flat_map(|(_, _, idxs)| ends(idxs))
        .map(|e| (e, 0))
        .collect();
    out.add_generic(
        COMPONENT_EXCEPTION,
        Severity::Error,
        0.45,
        evidence,
        summary,
    );
}

/// Every template of unclaimed error records, with its events, scored and sorted: highest
/// score first, then most records, then by template.
fn unrecognised_templates(
    events: &[Event],
    baseline: &Baseline,
    claimed: &BTreeSet<usize>,
    used: &BTreeSet<usize>,
) -> Vec<(Unrecognised, Vec<usize>)> {
    let mut unrecognised = mine_unclaimed(events, baseline, claimed, used);
    let changes = state_changes(events, claimed);
    for (u, idxs) in &mut unrecognised {
        u.score = score(events, idxs, &changes);
    }
    unrecognised.sort_by(|a, b| {
        b.0.score
            .total_cmp(&a.0.score)
            .then(b.0.count.cmp(&a.0.count))
            .then(a.0.template.cmp(&b.0.template))
    });
    unrecognised
}

/// Unclaimed error records of logs, by template, not yet scored. Records a failure holds
/// (`used`) are left out; a template of which a rule used one record is dropped whole (the
/// rule explains the lot). A template is known noise when the baseline knows it, or knows
/// each of its records.
fn mine_unclaimed(
    events: &[Event],
    baseline: &Baseline,
    claimed: &BTreeSet<usize>,
    used: &BTreeSet<usize>,
) -> Vec<(Unrecognised, Vec<usize>)> {
    let records: Vec<(usize, String)> = events
        .iter()
        .enumerate()
        .filter(|(idx, ev)| ev.level >= Level::Error && is_log_kind(ev.kind) && !used.contains(idx))
        .map(|(idx, ev)| (idx, template_line(ev)))
        .collect();
    let mined = templates::mine(records.iter().map(|(i, l)| (*i, l.as_str())));
    mined
        .into_iter()
        .filter(|t| !t.events.iter().any(|i| claimed.contains(i)))
        .map(|t| {
            let message = t
                .events
                .first()
                .and_then(|&i| known::lookup(&template_line(&events[i]), events[i].kind));
            let known = message.is_some_and(known::is_benign)
                || baseline.knows(&t.tokens)
                || t.events
                    .iter()
                    .all(|&i| baseline.knows(&templates::masked(&template_line(&events[i]))));
            let level = t
                .events
                .iter()
                .map(|&i| events[i].level)
                .max()
                .unwrap_or(Level::Error);
            let time = |i: usize| events[i].ts.map(|t| format_rfc3339(t.micros));
            (
                Unrecognised {
                    template: t.text(),
                    level: level.as_str(),
                    count: t.events.iter().map(|&i| events[i].weight() as usize).sum(),
                    first: t.events.first().and_then(|&i| time(i)),
                    last: t
                        .events
                        .last()
                        .and_then(|&i| events[i].last_micros().map(format_rfc3339)),
                    known_noise: known,
                    score: 0.0,
                    message: message.map(known::note),
                },
                t.events,
            )
        })
        .collect()
}

/// State changes, sorted by time: Warning events and what the rules used as evidence.
fn state_changes(events: &[Event], claimed: &BTreeSet<usize>) -> Vec<i64> {
    let mut changes: Vec<i64> = events
        .iter()
        .enumerate()
        .filter(|(i, e)| {
            claimed.contains(i) || e.kind == SourceKind::KubeEvents && e.level >= Level::Warning
        })
        .filter_map(|(_, e)| e.ts.map(|t| t.micros))
        .collect();
    changes.sort_unstable();
    changes
}

/// The catalogue's message a template (or warning) matched, when it matched one.
fn catalogued(u: &Unrecognised) -> Option<&'static crate::messages::Message> {
    u.message
        .as_ref()
        .and_then(|n| crate::messages::Catalogue::builtin().get(&n.id))
}

/// Templates whose catalogue message decides a catalogue cause, under that cause when it can
/// take a finding. Returns the positions of the templates it took.
fn report_known_causes(
    out: &mut Builder,
    events: &[Event],
    unrecognised: &[(Unrecognised, Vec<usize>)],
) -> BTreeSet<usize> {
    let mut taken = BTreeSet::new();
    for (at, (u, idxs)) in unrecognised.iter().enumerate() {
        let Some(message) = catalogued(u) else {
            continue;
        };
        let Some(id) = known::cause_of(message).filter(|id| !u.known_noise && out.can_map(id))
        else {
            continue;
        };
        let first = idxs.first().map_or("", |&i| first_line(&events[i].message));
        let summary = format!(
            "{} wrote \u{201c}{}\u{201d}{} \u{2014} {}",
            message.component,
            first.trim(),
            times(u.count),
            known::gloss(message)
        );
        out.add_mapped(
            id,
            "OWD012",
            &ends(idxs),
            summary,
            "a message whose meaning is known",
        );
        taken.insert(at);
    }
    taken
}

/// The top templates the baseline does not know, as one `unrecognised_error` finding (none
/// when every template is known noise or went under a cause, `decided`).
fn report_unrecognised(
    out: &mut Builder,
    unrecognised: &[(Unrecognised, Vec<usize>)],
    decided: &BTreeSet<usize>,
) {
    let open = |(at, (u, _)): &(usize, &(Unrecognised, Vec<usize>))| {
        !u.known_noise && !decided.contains(at)
    };
    let reported: Vec<&(Unrecognised, Vec<usize>)> = unrecognised
        .iter()
        .enumerate()
        .filter(open)
        .map(|(_, t)| t)
        .take(TOP_TEMPLATES)
        .collect();
    if reported.is_empty() {
        return;
    }
    let total: usize = unrecognised
        .iter()
        .enumerate()
        .filter(open)
        .map(|(_, (u, _))| u.count)
        .sum();
    let kinds = unrecognised.iter().enumerate().filter(open).count();
    let listed: Vec<String> = reported
        .iter()
        .map(|(u, _)| {
            let gloss = catalogued(u)
                .map(|m| format!(" \u{2014} {}", known::gloss(m)))
                .unwrap_or_default();
            format!("\u{201c}{}\u{201d}{}{gloss}", u.template, times(u.count))
        })
        .collect();
    let summary = format!(
        "{total} error record{} that no rule explains and that healthy bundles do not show, in {kinds} template{}: {}",
        if total == 1 { "" } else { "s" },
        if kinds == 1 { "" } else { "s" },
        listed.join("; ")
    );
    let evidence: Vec<(usize, usize)> = reported
        .iter()
        .flat_map(|(_, idxs)| ends(idxs))
        .map(|e| (e, 0))
        .collect();
    out.add_generic(
        UNRECOGNISED_ERROR,
        Severity::Warning,
        0.3,
        evidence,
        summary,
    );
}

/// Warning records that no rule used and that the message catalogue knows, by template (as
/// the error templates are mined), each with the template it matches: a warning is matched
/// by its first line, or, when that says nothing the catalogue knows, by the exception line of
/// the traceback it holds. A template judged `benign`, and one the baseline of healthy
/// bundles knows, is left out; so are warnings a failure holds (`used`).
///
/// Only the warnings whose head names their level are read: a word holding `warn`
/// (`WARNING`, zap's `warn`, an event's `"severity":"WARNING"`), or a Ray C++ head at `W`.
/// Those are the lines the sieve keeps for this (`rules::sieve`), so the sieved `analyze`
/// reads the same warnings as a full parse.
fn known_warnings(
    events: &[Event],
    baseline: &Baseline,
    claimed: &BTreeSet<usize>,
    used: &BTreeSet<usize>,
    caught: &Caught,
) -> Vec<(Unrecognised, Vec<usize>)> {
    let mut lines: BTreeMap<usize, (String, &'static crate::messages::Message)> = BTreeMap::new();
    for (idx, ev) in events.iter().enumerate() {
        if ev.level != Level::Warning
            || !is_log_kind(ev.kind)
            || used.contains(&idx)
            || claimed.contains(&idx)
            || !names_warning(ev)
        {
            continue;
        }
        let line = template_line(ev);
        let message = known::lookup(&line, ev.kind).or_else(|| {
            caught
                .get(&idx)
                .and_then(|exception| known::lookup(exception, ev.kind))
        });
        let Some(message) = message else {
            continue;
        };
        if known::is_benign(message) || baseline.knows(&templates::masked(&line)) {
            continue;
        }
        lines.insert(idx, (line, message));
    }
    let mined = templates::mine(lines.iter().map(|(&i, (l, _))| (i, l.as_str())));
    let changes = state_changes(events, claimed);
    let mut warned: Vec<(Unrecognised, Vec<usize>)> = mined
        .into_iter()
        .filter_map(|t| {
            let &first = t.events.first()?;
            let message = lines.get(&first).map(|(_, m)| *m)?;
            let time = |i: usize| events[i].ts.map(|t| format_rfc3339(t.micros));
            let u = Unrecognised {
                template: t.text(),
                level: Level::Warning.as_str(),
                count: records(events, &t.events),
                first: time(first),
                last: t
                    .events
                    .last()
                    .and_then(|&i| events[i].last_micros().map(format_rfc3339)),
                known_noise: false,
                score: score(events, &t.events, &changes),
                message: Some(known::note(message)),
            };
            Some((u, t.events))
        })
        .collect();
    warned.sort_by(|a, b| {
        b.0.score
            .total_cmp(&a.0.score)
            .then(b.0.count.cmp(&a.0.count))
            .then(a.0.template.cmp(&b.0.template))
    });
    warned
}

/// Whether a warning record's head names its level where the sieve looks for it.
fn names_warning(ev: &Event) -> bool {
    crate::parse::Format::of(ev.kind) == crate::parse::Format::RayCpp
        || first_line(&ev.message)
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"warn"))
}

/// What a warning whose template is judged a catalogue cause does: a warning says less than
/// an error, so it is that cause only beside what the cause's own rules read.
///
/// - This layer already holds a finding of the cause (a state, a failure or an error record
///   decided it): the warning is more of its evidence.
/// - No catalogue rule fired, and some other record of the bundle matches a signal of one of
///   the library's rules of that cause (the corroboration those rules use): the cause, under
///   `OWD013`, at `warning` at most, citing the warning and that record.
/// - Otherwise nothing but the note in `unrecognised` (component and meaning).
fn report_warned_causes(
    out: &mut Builder,
    library: &[Rule],
    events: &[Event],
    warned: &[(Unrecognised, Vec<usize>)],
) {
    for (u, idxs) in warned {
        let Some(message) = catalogued(u) else {
            continue;
        };
        let Some(id) = known::cause_of(message) else {
            continue;
        };
        if out.holds(id) {
            out.add_evidence(id, &ends(idxs));
            continue;
        }
        if !out.can_map(id) {
            continue;
        }
        let corroboration = corroborating(library, id, events, idxs);
        if corroboration.is_empty() {
            continue;
        }
        let first = idxs.first().map_or("", |&i| first_line(&events[i].message));
        let summary = format!(
            "{} warned \u{201c}{}\u{201d}{} \u{2014} {}; and {} line{} of the kind its rules read",
            message.component,
            first.trim(),
            times(u.count),
            known::gloss(message),
            corroboration.len(),
            if corroboration.len() == 1 { "" } else { "s" },
        );
        let mut evidence = ends(idxs);
        evidence.extend(ends(&corroboration));
        out.add_mapped_at(
            id,
            "OWD013",
            &evidence,
            summary,
            "a warning whose meaning is known, beside a line the cause's rules read",
            Severity::Warning,
        );
    }
}

/// The records, other than `own`, that a signal of one of the library's rules of `id`
/// matches.
fn corroborating(library: &[Rule], id: &str, events: &[Event], own: &[usize]) -> Vec<usize> {
    let signals: Vec<&crate::rules::Signal> = library
        .iter()
        .filter(|r| r.id == id)
        .flat_map(|r| r.signals.iter())
        .collect();
    events
        .iter()
        .enumerate()
        .filter(|(i, ev)| {
            !own.contains(i)
                && signals
                    .iter()
                    .any(|s| crate::rules::engine::signal_matches(s, ev).is_some())
        })
        .map(|(i, _)| i)
        .collect()
}

/// An object's name for a summary; a fragment without metadata has none.
fn shown_object(object: &str) -> &str {
    if object.is_empty() {
        "a pasted object (no name in the fragment)"
    } else {
        object
    }
}

/// How much a template of error records stands out, rounded to hundredths: its level
/// (critical 3, error 2, warning 1), its volume (`ln(1 + count)`, so a storm does not drown a rare
/// fatal line), its burstiness (1 plus the share of its records inside its busiest minute:
/// errors that come at once tell an event, errors spread evenly tell a chronic condition)
/// and its timing (× 1.5 when its first record comes up to ten minutes before a state change:
/// a Warning event, or a line a rule used).
pub fn score(events: &[Event], idxs: &[usize], changes: &[i64]) -> f64 {
    const MINUTE: i64 = 60 * crate::event::MICROS_PER_SEC;
    let level = idxs
        .iter()
        .map(|&i| events[i].level)
        .max()
        .unwrap_or(Level::Error);
    let weight = match level {
        Level::Critical => 3.0,
        Level::Error => 2.0,
        _ => 1.0,
    };
    let records: u64 = idxs.iter().map(|&i| events[i].weight()).sum();
    let volume = (1.0 + records as f64).ln();
    let mut times: Vec<i64> = idxs
        .iter()
        .filter_map(|&i| events[i].ts.map(|t| t.micros))
        .collect();
    times.sort_unstable();
    let mut busiest = 0usize;
    let mut from = 0usize;
    for (to, &t) in times.iter().enumerate() {
        while t - times[from] > MINUTE {
            from += 1;
        }
        busiest = busiest.max(to + 1 - from);
    }
    let burst = if times.is_empty() {
        0.0
    } else {
        busiest as f64 / times.len() as f64
    };
    let timing = match times.first() {
        Some(&first) => {
            let at = changes.partition_point(|&c| c < first);
            if changes.get(at).is_some_and(|&c| c - first <= 10 * MINUTE) {
                1.5
            } else {
                1.0
            }
        }
        None => 1.0,
    };
    (weight * volume * (1.0 + burst) * timing * 100.0).round() / 100.0
}

/// First and last of a list (the first three when it is short).
fn ends(idxs: &[usize]) -> Vec<usize> {
    match idxs.len() {
        0..=3 => idxs.to_vec(),
        n => vec![idxs[0], idxs[1], idxs[n - 1]],
    }
}

/// How many records the events stand for, folded repeats included.
fn records(events: &[Event], idxs: &[usize]) -> usize {
    idxs.iter()
        .map(|&i| events.get(i).map_or(1, |e| e.weight() as usize))
        .sum()
}

fn times(n: usize) -> String {
    if n > 1 {
        format!(" (×{n})")
    } else {
        String::new()
    }
}

/// The catalogue's template of a failure's exception line.
fn failure_message(
    f: &exceptions::Failure,
    kind: SourceKind,
) -> Option<&'static crate::messages::Message> {
    if f.cut_off {
        return None;
    }
    let line = format!("{}: {}", f.kind, f.message);
    if !f.more.is_empty() {
        if let Some(m) = known::lookup(&format!("{line} {}", f.more), kind) {
            return Some(m);
        }
    }
    known::lookup(&line, kind)
}

/// A record's first line.
pub(crate) fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The line a record is templated by: its first line, and for a structured record (the
/// operator's zap JSON) the first line of its `error` field, where the cause is told.
fn template_line(ev: &Event) -> String {
    let first = first_line(&ev.message);
    match ev.field("error") {
        Some(err) if !err.is_empty() => {
            let err: String = first_line(err).chars().take(240).collect();
            format!("{first} {err}")
        }
        _ => first.to_string(),
    }
}

/// Whether a record tells a failure: at ERROR or above, or from a text that has no levels
/// (stderr, a container's output, a pasted file). A traceback a leveled log writes at INFO or
/// WARNING was caught and handled.
fn reports_failure(ev: &Event) -> bool {
    ev.level >= Level::Error
        // A record its format's parser could not read (a pasted fragment) has no level.
        || ev.raw_time.is_none() && ev.component.is_empty()
        || exceptions::raw_text(ev.kind)
}

/// A process that reports it was told to stop (`ray stop`, a pod deletion) did not fail:
/// Ray's own words, or the dump absl writes of a `SIGTERM` (`*** SIGTERM received at …`).
fn stopped_on_purpose(text: &str) -> bool {
    text.contains("Terminated with signal 15")
        || text.contains("terminated with signal 15")
        || crate::parse::abort::signal_banner(text)
            .is_some_and(|(signal, _)| crate::parse::abort::asks_to_stop(signal))
}

/// CPython's header of a traceback a thread raised while the interpreter exited.
const INTERPRETER_SHUTDOWN: &str = "(most likely raised during interpreter shutdown)";

/// Whether the traceback starting at `at` is one CPython headed `Exception in thread …
/// (most likely raised during interpreter shutdown):`, on its first line or on the line
/// just before it: the process was exiting, and what its threads raise then is no failure
/// (ray-project/ray#516).
fn at_interpreter_shutdown(events: &[Event], at: usize) -> bool {
    let Some(ev) = events.get(at) else {
        return false;
    };
    ev.message.contains(INTERPRETER_SHUTDOWN)
        || at
            .checked_sub(1)
            .and_then(|p| events.get(p))
            .is_some_and(|prev| {
                prev.file == ev.file
                    && prev.line + prev.n_lines == ev.line
                    && prev.message.contains(INTERPRETER_SHUTDOWN)
            })
}

/// Logs, as opposed to Kubernetes objects, describes and event tables.
fn is_log_kind(kind: SourceKind) -> bool {
    !crate::parse::Format::of(kind).is_kubernetes()
}

/// What to call the component that wrote an event.
fn component_of(ev: &Event) -> String {
    let name = match ev.kind {
        SourceKind::Operator => "the KubeRay operator",
        SourceKind::Dashboard => "the Ray dashboard",
        SourceKind::DashboardAgent => "the dashboard agent",
        SourceKind::Autoscaler => "the Ray autoscaler",
        SourceKind::RuntimeEnvAgent | SourceKind::RuntimeEnvSetup => "the runtime env agent",
        SourceKind::Raylet => "the raylet",
        SourceKind::GcsServer => "the GCS server",
        SourceKind::ServeController => "the Serve controller",
        SourceKind::ServeProxy => "a Serve proxy",
        SourceKind::ServeReplica => "a Serve replica",
        SourceKind::JobDriver => "the job driver",
        SourceKind::Worker | SourceKind::CoreWorker => "a Ray worker",
        SourceKind::RayContainer | SourceKind::InitContainer => "a Ray container",
        // An event names its source: `RAYLET`, `GCS`, `CORE_WORKER`, `JOBS`, …
        SourceKind::RayEvent => match ev.component.as_str() {
            "RAYLET" => "the raylet",
            "GCS" => "the GCS server",
            "CORE_WORKER" => "a Ray worker",
            "JOBS" => "the Ray job manager",
            "AUTOSCALER" => "the Ray autoscaler",
            _ => "a Ray component",
        },
        _ => "a component",
    };
    name.to_string()
}

/// The catalogue id a failing object's state decides, when one does.
fn object_catalogue_id(p: &objects::Problem, events: &[Event]) -> Option<&'static str> {
    let text: String = p
        .evidence
        .iter()
        .filter_map(|&i| events.get(i))
        .map(|e| e.message.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let id = match p.reason.as_str() {
        "CrashLoopBackOff" => "crash_loop",
        "OOMKilled" | "OOMKilling" => "oom_killed",
        "ImagePullBackOff" | "ErrImagePull" | "InvalidImageName" | "ErrImageNeverPull" => {
            "image_pull_failure"
        }
        "Evicted" => "node_pressure_eviction",
        "FailedScheduling" => "failed_scheduling",
        "InitializingTimeout" => "initializing_timeout",
        "DeadlineExceeded" => "rayjob_deadline_exceeded",
        "Unhealthy" if text.contains("probe failed") => "probe_failure",
        _ if text.contains("exceeded quota") => "resource_quota_exceeded",
        _ if text.contains("is forbidden: User") => "rbac_forbidden",
        "FailedCreate" | "FailedCreateHeadPod" | "FailedCreateWorkerPod" => "pod_creation_refused",
        "JobFailed" | "FAILED" | "Failed" if p.object.starts_with("RayJob/") => {
            "rayjob_entrypoint_failed"
        }
        _ => return None,
    };
    Some(id)
}

/// The catalogue id a component failure's exception decides by its kind or words, when one
/// does.
fn exception_kind_id(f: &exceptions::Failure) -> Option<&'static str> {
    let all = format!("{} {}", f.kind, f.message);
    if f.kind == "ModuleNotFoundError" || all.contains("No module named") {
        return Some("missing_dependency");
    }
    if ["CUDA", "libcudnn", "libcuda", "libnvidia", "cuDNN"]
        .iter()
        .any(|w| all.contains(w))
    {
        return Some("cuda_mismatch");
    }
    if f.kind.contains("RuntimeEnvSetupError") {
        return Some("runtime_env_failure");
    }
    if f.kind.contains("OutOfMemoryError") {
        return Some("oom_killed");
    }
    None
}

/// The catalogue id a failure decides by the component that raised it, when one does.
fn component_catalogue_id(f: &exceptions::Failure, kind: SourceKind) -> Option<&'static str> {
    // The Ray autoscaler (its sidecar, `monitor.py`, or the legacy operator's monitor).
    if kind == SourceKind::Autoscaler
        || f.ray_parts
            .iter()
            .any(|p| p == "autoscaler" || p == "ray_operator")
    {
        return Some("autoscaler_error");
    }
    // A Go panic in the KubeRay operator's log: the process exits.
    if f.shape == exceptions::Shape::GoPanic && kind == SourceKind::Operator {
        return Some("operator_crash");
    }
    if f.cut_off {
        return None;
    }
    match kind {
        SourceKind::ServeReplica if f.shape == exceptions::Shape::PythonTraceback => {
            Some("serve_script_error")
        }
        SourceKind::JobDriver if f.shape == exceptions::Shape::PythonTraceback => {
            Some("rayjob_entrypoint_failed")
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A record as a leveled log's parser gives it: with its time.
    fn log(kind: SourceKind, level: Level, text: &str) -> Event {
        let mut e = Event::new(1, text);
        e.kind = kind;
        e.level = level;
        e.raw_time = Some(crate::event::RawTime::Utc(0));
        e
    }

    /// Python 2.7 at exit, as pasted in ray-project/ray#516: a background thread's traceback
    /// under CPython's `(most likely raised during interpreter shutdown)` header.
    #[test]
    fn a_traceback_at_interpreter_shutdown_is_no_failure() {
        let lines = [
            "Success! The example took 1.22253704071 seconds.",
            "Exception in thread Thread-9 (most likely raised during interpreter shutdown):",
            "Traceback (most recent call last):",
            "  File \"/Users/username/anaconda/lib/python2.7/threading.py\", line 754, in run",
            "<type 'exceptions.AttributeError'>: 'NoneType' object has no attribute 'ConnectionError'",
        ];
        let shutdown: Vec<Event> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut e = Event::new(1, *l);
                e.kind = SourceKind::Unknown;
                e.line = i as u32 + 1;
                e
            })
            .collect();
        let ow = analyze(&shutdown, &[], &[], &Baseline::parse(""));
        assert!(ow.findings.is_empty(), "{:?}", ow.findings);
        // The same traceback without the header is a failure.
        let mut bare = shutdown.clone();
        bare[1].message = "Exception in thread Thread-9:".into();
        let ow = analyze(&bare, &[], &[], &Baseline::parse(""));
        assert_eq!(ow.findings.len(), 1, "{:?}", ow.findings);
    }

    #[test]
    fn a_lone_traceback_becomes_a_component_exception() {
        let evs = vec![
            log(SourceKind::Autoscaler, Level::Info, "Autoscaler started"),
            log(
                SourceKind::Autoscaler,
                Level::Error,
                "Error in monitor loop\nTraceback (most recent call last):\n  File \"/x/site-packages/ray/autoscaler/_private/monitor.py\", line 1, in run\nkubernetes.client.exceptions.ApiException: (403)",
            ),
        ];
        let ow = analyze(&evs, &[], &[], &Baseline::parse(""));
        assert_eq!(ow.findings.len(), 1);
        let rule = &ow.rules[ow.findings[0].rule];
        assert_eq!(rule.id, COMPONENT_EXCEPTION);
        assert!(ow.findings[0].summary.contains("ApiException: (403)"));
        assert!(ow.findings[0].summary.contains("the Ray autoscaler"));
    }

    /// `ray stop` makes absl print a SIGTERM dump in every Ray process (Ray 2.9.3 to 2.40.0):
    /// a request to stop is no failure, and its lines are no unknown error records either,
    /// whatever level a copy was written at. A crash's dump is a failure.
    #[test]
    fn a_sigterm_dump_is_no_failure_and_a_segfault_is() {
        let term = "*** SIGTERM received at time=1796545322 on cpu 0 ***\n[2026-12-06 08:22:02,681 E 27804 27804] logging.cc:361: PC: @     0x7fcca9b26f36  (unknown)  epoll_wait\n[2026-12-06 08:22:02,682 E 27804 27804] logging.cc:361:     @ ... and at least 8 more frames";
        let evs = vec![
            log(SourceKind::Raylet, Level::Error, term),
            log(SourceKind::Worker, Level::Warning, term),
            log(SourceKind::CoreWorker, Level::Error, term),
        ];
        let ow = analyze(&evs, &[], &[], &Baseline::parse(""));
        assert!(ow.findings.is_empty(), "{:?}", ow.findings);
        assert!(ow.unrecognised.is_empty(), "{:?}", ow.unrecognised);
        let segv = term.replace("SIGTERM", "SIGSEGV");
        let ow = analyze(
            &[log(SourceKind::Worker, Level::Critical, &segv)],
            &[],
            &[],
            &Baseline::parse(""),
        );
        assert_eq!(ow.findings.len(), 1);
        assert_eq!(ow.rules[ow.findings[0].rule].id, COMPONENT_EXCEPTION);
        assert!(
            ow.findings[0]
                .summary
                .starts_with("a Ray worker aborted with SIGSEGV: the process was killed by a fatal signal at epoll_wait"),
            "{}",
            ow.findings[0].summary
        );
    }

    fn operator_error(message: &str, error: &str) -> Event {
        let mut e = log(SourceKind::Operator, Level::Error, message);
        e.fields = vec![("error".into(), error.into())];
        e
    }

    /// Each kind of healthy noise, in the words Ray and KubeRay really print, is quiet.
    #[test]
    fn known_healthy_noise_is_never_reported() {
        let baseline = Baseline::builtin();
        let kinds: Vec<(&str, Vec<Event>)> = vec![
            (
                "conflict retries",
                vec![
                    operator_error("Reconciler error", "Operation cannot be fulfilled on rayclusters.ray.io \"rayservice-sample-raycluster-qk7cz\": the object has been modified; please apply your changes to the latest version and try again"),
                    operator_error("Failed to update RayService status", "Operation cannot be fulfilled on rayservices.ray.io \"rayservice-sample\": the object has been modified; please apply your changes to the latest version and try again"),
                ],
            ),
            (
                "not found after deletion",
                vec![operator_error("Reconciler error", "rayclusters.ray.io \"raycluster-mini\" not found")],
            ),
            (
                "start-up refusals",
                vec![
                    operator_error("Reconciler error", "Put \"http://rayservice-sample-raycluster-qk7cz-head-svc.default.svc.cluster.local:8265/api/serve/applications/\": dial tcp 10.96.20.14:8265: connect: connection refused"),
                    operator_error("Failed to get job info", "GetJobInfo fail: {\"error\": \"Not Found\"}"),
                ],
            ),
            (
                "deprecation warnings",
                vec![log(
                    SourceKind::ServeController,
                    Level::Warning,
                    "The `num_replicas=\"auto\"` default config is deprecated and will be removed in a future version",
                )],
            ),
            (
                "metrics exporter hiccups",
                vec![log(
                    SourceKind::DashboardAgent,
                    Level::Warning,
                    "Export metrics to agent failed: grpc Unavailable, retrying",
                )],
            ),
            (
                "a caught exception logged below ERROR",
                vec![log(
                    SourceKind::ServeReplica,
                    Level::Warning,
                    "feature store lookup timed out, retrying once\nTraceback (most recent call last):\n  File \"/app/summarizer/app.py\", line 40, in lookup\nrequests.exceptions.ReadTimeout: read timeout=0.5",
                )],
            ),
        ];
        for (kind, events) in kinds {
            let ow = analyze(&events, &[], &[], &baseline);
            assert!(ow.findings.is_empty(), "{kind}: {:?}", ow.findings);
        }
    }

    fn at(mut e: Event, secs: i64) -> Event {
        e.ts = Some(crate::event::Timestamp {
            micros: secs * 1_000_000,
            quality: crate::event::TsQuality::Exact,
        });
        e
    }

    #[test]
    fn bursts_near_a_state_change_and_fatal_records_score_higher() {
        let err = |s: i64| at(log(SourceKind::Raylet, Level::Error, "x"), s);
        // Four records in one minute against four spread over an hour.
        let events: Vec<Event> = [0, 10, 20, 30, 0, 1200, 2400, 3600]
            .iter()
            .map(|&s| err(s))
            .collect();
        let burst = score(&events, &[0, 1, 2, 3], &[]);
        let spread = score(&events, &[4, 5, 6, 7], &[]);
        assert!(burst > spread, "{burst} vs {spread}");
        // The same records five minutes before a Warning event.
        assert!(score(&events, &[0, 1, 2, 3], &[300 * 1_000_000]) > burst);
        // A fatal record outweighs an error one.
        let fatal = vec![at(log(SourceKind::Raylet, Level::Critical, "x"), 0)];
        assert!(score(&fatal, &[0], &[]) > score(&events, &[4], &[]));
    }

    /// A failing state a rule cited one line of is the rule's: the line beside it that the
    /// rule's sample left out (a Serve app's message beside its `DEPLOY_FAILED`, both timed
    /// by the status's `lastUpdateTime`) is no second cause that "no rule explains".
    #[test]
    fn a_state_a_rule_cited_is_not_reported_again() {
        let app = "status.activeservicestatus.applicationstatuses.fraud";
        let fact = |path: String, value: &str| {
            let mut e = Event::new(1, value);
            e.kind = SourceKind::DescribeRayService;
            e.fields = vec![
                ("path".into(), path.into()),
                ("value".into(), value.into()),
                ("object".into(), "RayService/payments/fraud-guard".into()),
            ];
            e
        };
        let evs = vec![
            fact(format!("{app}.message"), "Deploying app 'fraud' failed"),
            fact(format!("{app}.status"), "DEPLOY_FAILED"),
        ];
        let unexplained = analyze(&evs, &[], &[], &Baseline::parse(""));
        assert_eq!(unexplained.findings.len(), 1);
        let cited = Finding {
            rule: 0,
            evidence: vec![crate::rules::engine::EvidenceRef {
                event: 1,
                signal: 0,
                field: None,
            }],
            confidence: 0.9,
            summary: String::new(),
            severity: None,
        };
        let explained = analyze(&evs, &[], &[cited], &Baseline::parse(""));
        assert!(explained.findings.is_empty(), "{:?}", explained.findings);
    }

    /// A raylet warning pasted in ray-project/ray#41071, whose template is judged
    /// `runtime_env_failure`: alone, a note naming its component and meaning; beside a line
    /// a rule of that cause reads (here without the rule having fired), the cause at
    /// `warning`; beside a finding of that cause this layer made, more of its evidence.
    #[test]
    fn a_judged_warning_is_a_cause_only_beside_what_its_rules_read() {
        let library = crate::rules::library::builtin().unwrap();
        let warned = log(
            SourceKind::Raylet,
            Level::Warning,
            "[2023-11-09 23:36:12,669 W 75 75] (raylet) worker_pool.cc:1279: Create runtime env failed for task ffffffffffffffffe07efaa88efdd5bf01e68def1c000000 and couldn't create the worker.",
        );
        let alone = analyze(
            std::slice::from_ref(&warned),
            &library,
            &[],
            &Baseline::parse(""),
        );
        assert!(alone.findings.is_empty(), "{:?}", alone.findings);
        assert_eq!(alone.unrecognised.len(), 1);
        assert_eq!(alone.unrecognised[0].level, "warning");
        let note = alone.unrecognised[0].message.as_ref().unwrap();
        assert_eq!(note.component, "raylet");
        assert!(note.meaning.is_some());

        // The Serve application the warning's task belonged to is DEPLOY_FAILED: what
        // SRV040's `app_down` signal reads (its decisive `setup_failed` found nothing).
        let mut app = Event::new(1, "DEPLOY_FAILED");
        app.kind = SourceKind::DescribeRayService;
        app.fields = vec![
            (
                "path".into(),
                "status.activeservicestatus.applicationstatuses.api.status".into(),
            ),
            ("value".into(), "DEPLOY_FAILED".into()),
            ("object".into(), "RayService/default/api".into()),
        ];
        let corroborated = vec![warned.clone(), app];
        let ow = analyze(&corroborated, &library, &[], &Baseline::parse(""));
        let (finding, rule) = ow
            .findings
            .iter()
            .map(|f| (f, &ow.rules[f.rule - library.len()]))
            .find(|(_, r)| r.id == "runtime_env_failure")
            .expect("the warning's cause");
        assert_eq!(rule.code.as_str(), "OWD013");
        assert_eq!(rule.severity, Severity::Warning);
        let cited: Vec<usize> = finding.evidence.iter().map(|e| e.event).collect();
        assert_eq!(cited, vec![0, 1]);
    }

    #[test]
    fn unclaimed_errors_become_templates_unless_the_baseline_knows_them() {
        let evs: Vec<Event> = (0..4)
            .map(|i| {
                log(
                    SourceKind::RayPython,
                    Level::Error,
                    &format!("Failed to publish metrics batch {i} to the exporter"),
                )
            })
            .chain([log(
                SourceKind::RayPython,
                Level::Error,
                "Lease for worker lost, rescheduling",
            )])
            .collect();
        let ow = analyze(&evs, &[], &[], &Baseline::parse(""));
        assert_eq!(ow.unrecognised.len(), 2);
        assert_eq!(ow.unrecognised[0].count, 4);
        assert_eq!(ow.findings.len(), 1);
        let quiet = analyze(
            &evs,
            &[],
            &[],
            &Baseline::parse(
                "Failed to publish metrics batch <*> to the exporter\nLease for worker lost, rescheduling",
            ),
        );
        assert!(quiet.findings.is_empty());
        assert!(quiet.unrecognised.iter().all(|u| u.known_noise));
    }
}
