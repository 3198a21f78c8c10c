//! The open world's synthetic rules and the findings over them. A finding of this layer
//! points at a rule made here, not at one of the library's: under a catalogue id, a copy of
//! the library's strongest rule of that id (its title, remediation and doc, a lower
//! confidence); otherwise one of the three generic rules (`object_unhealthy`,
//! `component_exception`, `unrecognised_error`), documented here.
//!
//! Invariant: one finding per id, whose `rule` indexes the synthetic rules numbered after the
//! library's; an id a catalogue rule already fired for takes no finding here, and beside a
//! catalogue cause a generic finding is at most a warning.

use std::collections::{BTreeMap, BTreeSet};

use crate::rules::engine::{EvidenceRef, Finding};
use crate::rules::{Rule, RuleCode, Severity, Signal, SourceFilter};

use super::{COMPONENT_EXCEPTION, OBJECT_UNHEALTHY, UNRECOGNISED_ERROR};

/// One id's finding as it is collected: (index into `rules`, evidence as (event, signal),
/// confidence, summaries).
type Entry = (usize, Vec<(usize, usize)>, f64, Vec<String>);

/// What a generic rule says of itself: code, title, signals (name, meaning), remediation, doc.
type GenericDoc = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
    &'static str,
);

/// Collects findings, one per id, and the synthetic rules they point at.
pub(super) struct Builder<'a> {
    library: &'a [Rule],
    fired: BTreeSet<&'a str>,
    decided: bool,
    rules: Vec<Rule>,
    by_id: BTreeMap<&'static str, Entry>,
}

impl<'a> Builder<'a> {
    /// A builder beside the library's `findings`: it knows which ids fired, and whether a
    /// catalogue cause decided the report.
    pub(super) fn new(library: &'a [Rule], findings: &[Finding]) -> Builder<'a> {
        let fired: BTreeSet<&str> = findings
            .iter()
            .filter_map(|f| library.get(f.rule))
            .map(|r| r.id.as_str())
            .collect();
        // A catalogue cause that fired tells the story better than a single line could: then
        // the layer adds only what no id names.
        let decided = findings
            .iter()
            .filter_map(|f| library.get(f.rule))
            .any(|r| r.severity > Severity::Info);
        Builder {
            library,
            fired,
            decided,
            rules: Vec::new(),
            by_id: BTreeMap::new(),
        }
    }

    /// Whether a catalogue id can take a finding here: the library knows it and no catalogue
    /// rule fired already (a rule's account is better than one line's).
    pub(super) fn can_map(&self, id: &str) -> bool {
        !self.decided && !self.fired.contains(id) && self.library.iter().any(|r| r.id == id)
    }

    pub(super) fn add_mapped(
        &mut self,
        id: &'static str,
        code: &'static str,
        evidence: &[usize],
        summary: String,
        meaning: &str,
    ) {
        self.add_mapped_at(id, code, evidence, summary, meaning, Severity::Critical);
    }

    /// Whether this layer already holds a finding of the id.
    pub(super) fn holds(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// More evidence for a finding this layer already holds (nothing when it holds none).
    pub(super) fn add_evidence(&mut self, id: &str, evidence: &[usize]) {
        if let Some(entry) = self.by_id.get_mut(id) {
            entry.1.extend(evidence.iter().map(|&e| (e, 0)));
        }
    }

    /// As [`Builder::add_mapped`], at no more than `cap` (a warning record that names a
    /// cause says less than an error that does).
    pub(super) fn add_mapped_at(
        &mut self,
        id: &'static str,
        code: &'static str,
        evidence: &[usize],
        summary: String,
        meaning: &str,
        cap: Severity,
    ) {
        if let Some(entry) = self.by_id.get_mut(id) {
            entry.1.extend(evidence.iter().map(|&e| (e, 0)));
            entry.3.push(summary);
            return;
        }
        // The library's strongest rule of the id lends its title, remediation and doc.
        let Some(base) = crate::rules::strongest_of(self.library, id) else {
            return;
        };
        let mut rule = synthetic(
            code,
            id,
            &base.title,
            base.severity.min(cap),
            &[("state", meaning)],
        );
        rule.remediation = base.remediation.clone();
        rule.references = base.references.clone();
        rule.explains = base.explains.clone();
        rule.doc = base.doc.clone();
        let confidence = (base.confidence - 0.25).clamp(0.3, 0.55);
        self.rules.push(rule);
        self.by_id.insert(
            id,
            (
                self.rules.len() - 1,
                evidence.iter().map(|&e| (e, 0)).collect(),
                confidence,
                vec![summary],
            ),
        );
    }

    pub(super) fn add_generic(
        &mut self,
        id: &'static str,
        mut severity: Severity,
        confidence: f64,
        evidence: Vec<(usize, usize)>,
        summary: String,
    ) {
        // Beside a catalogue cause, what no rule names is context, not a second verdict.
        if self.decided {
            severity = severity.min(Severity::Warning);
        }
        let rule = generic_rule(id, severity);
        self.rules.push(rule);
        self.by_id.insert(
            id,
            (self.rules.len() - 1, evidence, confidence, vec![summary]),
        );
    }

    pub(super) fn finish(self) -> (Vec<Rule>, Vec<Finding>) {
        let base = self.library.len();
        let mut findings = Vec::new();
        for (_, (rule, mut evidence, confidence, summaries)) in self.by_id {
            evidence.sort_unstable();
            evidence.dedup_by(|a, b| a.0 == b.0);
            let summary = match summaries.len() {
                1 => summaries.into_iter().next().unwrap_or_default(),
                n => format!("{}; and {} more like it", summaries[0], n - 1),
            };
            findings.push(Finding {
                rule: base + rule,
                evidence: evidence
                    .into_iter()
                    .map(|(event, signal)| EvidenceRef {
                        event,
                        signal,
                        field: None,
                    })
                    .collect(),
                confidence,
                severity: None,
                summary,
            });
        }
        (self.rules, findings)
    }
}

fn signal(name: &str, description: &str) -> Signal {
    Signal {
        name: name.to_string(),
        sources: SourceFilter::Any,
        min_level: None,
        text: Vec::new(),
        not_text: Vec::new(),
        fields: Vec::new(),
        literals: Vec::new(),
        key: None,
        description: description.to_string(),
    }
}

fn synthetic(
    code: &'static str,
    id: &str,
    title: &str,
    severity: Severity,
    signals: &[(&str, &str)],
) -> Rule {
    Rule {
        code: RuleCode::builtin(code),
        id: id.to_string(),
        name: "open-world".to_string(),
        severity,
        confidence: 0.4,
        title: title.to_string(),
        summary: String::new(),
        doc: String::new(),
        explains: Vec::new(),
        remediation: Vec::new(),
        references: Vec::new(),
        signals: signals.iter().map(|(n, d)| signal(n, d)).collect(),
        when: Vec::new(),
        boosts: Vec::new(),
        samples: Vec::new(),
        origin: "built-in open-world layer".to_string(),
        known_issue: None,
    }
}

/// The three generic rules as `raysift rules` lists them (at their usual severities).
pub fn generic_rules() -> Vec<Rule> {
    vec![
        generic_rule(OBJECT_UNHEALTHY, Severity::Error),
        generic_rule(COMPONENT_EXCEPTION, Severity::Error),
        generic_rule(UNRECOGNISED_ERROR, Severity::Warning),
    ]
}

/// One generic rule, with its documentation.
pub fn generic_rule(id: &str, severity: Severity) -> Rule {
    let (code, title, signals, remediation, doc): GenericDoc =
        match id {
            OBJECT_UNHEALTHY => (
                "OWD001",
                "A Kubernetes object of the Ray workload reports itself failing",
                &[
                    ("state", "the object's own state: what Kubernetes or KubeRay says is wrong"),
                    ("warning", "a Warning event on the object that nothing later resolved"),
                ],
                &[
                    "Read the object's own account: `kubectl describe` it and read its Events; for a pod, `kubectl logs --previous` of the container that failed.",
                    "The reason word (CreateContainerConfigError, FailedMount, DEPLOY_FAILED, …) is Kubernetes' or KubeRay's own: search it in their documentation together with the message.",
                    "If the object is a Ray pod, the RayCluster or RayService above it waits for it: fix the pod first.",
                ],
                OBJECT_DOC,
            ),
            COMPONENT_EXCEPTION => (
                "OWD002",
                "A Ray or KubeRay component raised an exception, panicked or aborted",
                &[("failure", "the component's failure: its final exception and where it was raised")],
                &[
                    "Read the whole record in the file named by the evidence: the last line is the exception, the innermost frame outside Ray is where it was raised.",
                    "When the exception comes from your code or a dependency, reproduce it outside the cluster (`serve run`, or the job's entrypoint with `ray start --head` locally).",
                    "When it comes from Ray or KubeRay itself (a panic, a `Check failed`), note the versions and search the project's issue tracker for the message.",
                ],
                EXCEPTION_DOC,
            ),
            _ => (
                "OWD003",
                "Error records that no rule explains and healthy bundles do not show",
                &[("template", "an error record of a template that no rule explains and that healthy bundles do not show")],
                &[
                    "Read the records around the first one of each template: what happened just before is usually the cause.",
                    "If a template is harmless in your clusters, say so to the raysift maintainers: it belongs in the baseline of healthy noise.",
                ],
                UNRECOGNISED_DOC,
            ),
        };
    let mut rule = synthetic(code, id, title, severity, signals);
    rule.remediation = remediation.iter().map(|s| s.to_string()).collect();
    rule.doc = doc.to_string();
    rule.references = vec![
        "https://docs.ray.io/en/latest/cluster/kubernetes/troubleshooting/troubleshooting.html"
            .to_string(),
    ];
    rule
}

const OBJECT_DOC: &str = "## What it detects
A Kubernetes object of the Ray workload (a Ray pod, a RayCluster, RayService or RayJob, or an
object in their namespace) whose own status says it is failing, when no catalogue rule explains
it: a container waiting or terminated with a reason, a Failed phase, a RayCluster in state
`failed`, a condition `False` for a failing reason, a RayJob that failed, Serve applications
`DEPLOY_FAILED` or `UNHEALTHY`, a `kubectl get` STATUS that is not a healthy one, or Warning
events that nothing later resolved.

## Why it matters
Kubernetes and KubeRay state their own failures; when raysift has no rule for one, their words
are still the best lead.

## Evidence shown
The facts and events that say so, in the object's own words.

## Remediation
Read the object's own account (describe, events, previous logs) and fix what it names.

## References
The KubeRay troubleshooting guide.
";

const EXCEPTION_DOC: &str = "## What it detects
A Python traceback, a Go panic or a C++ fatal record (`Check failed`, a fatal signal) in the log
of any Ray or KubeRay component that no catalogue rule explains. The summary names the
component, the final exception and its message (or says that the traceback is cut off before
it), and the innermost frame that is not Ray's own.

## Why it matters
An exception in a component is where its failure is told first; the frame outside Ray is where
the user's code or a dependency failed.

## Evidence shown
The failure records, first and last of each kind.

## Remediation
Read the whole record, reproduce it outside the cluster when it comes from the application, and
report it with the versions when it comes from Ray or KubeRay.

## References
The KubeRay troubleshooting guide.
";

const UNRECOGNISED_DOC: &str = "## What it detects
ERROR records that no rule claimed, grouped into templates (ids, addresses, numbers, quoted
names and times masked), less the templates of a baseline built from healthy bundles. The
templates with the most records are shown, with their counts and first and last times.

## Why it matters
A failure outside the catalogue still leaves error records; the rare ones are the lead.

## Evidence shown
The first and last records of the top templates.

## Remediation
Read what happened just before the first record of each template.

## References
The KubeRay troubleshooting guide.
";
