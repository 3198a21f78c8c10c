//! The report as data: the JSON contract of `raysift analyze --format json` (`schema report`).
//!
//! `rank` fills a [`Report`], `report_data` adds the page's [`TimelineData`], `report/`
//! writes it in each format, and `redact` masks what came from the bundle. Types only, and
//! the little they say of themselves (a cause's score, an evidence time's quality, how to
//! redact each part): no ranking, no formatting.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::diag::Diagnostic;
use crate::event::TsQuality;
use crate::inventory::Inventory;
use crate::objects::ObjectRef;
use crate::redact::Redactor;
use crate::rules::known::{Claim, KnownIssue};
use crate::rules::Severity;
use crate::timeline::Timeline;
use crate::versions::{Stated, Versions};

pub const SCHEMA: &str = "raysift.report/v1";

/// The version of raysift that writes a report (`raysift_version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    /// The raysift that wrote it ([`VERSION`]).
    pub raysift_version: &'static str,
    /// When it was written, in UTC ([`generated_at`]).
    pub generated_at: String,
    pub bundle: BundleInfo,
    pub window: Option<crate::inventory::Window>,
    pub causes: Vec<Cause>,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: Stats,
    pub inventory: Inventory,
    /// The incident picture's data (histograms, markers, events around the evidence); only
    /// computed for formats that draw it, and absent from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineData>,
    /// Templates of error records no rule claimed (the open-world layer), most frequent first;
    /// absent when there are none. `batch --summary` tallies them across bundles.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unrecognised: Vec<crate::open_world::Unrecognised>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BundleInfo {
    pub path: String,
    pub files: usize,
    pub bytes: u64,
    pub sources: BTreeMap<&'static str, usize>,
    /// Whether every part of the bundle was read: false when reading stopped early (a
    /// truncated or corrupt archive, a limit reached) or a member could not be read.
    pub complete: bool,
    /// The diagnostics that make the bundle incomplete (empty when it is complete).
    pub incomplete: Vec<Diagnostic>,
    /// `--namespace` / `--object`: the causes were found among these objects' events only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<crate::objects::Filter>,
    /// The versions the bundle states (KubeRay, Ray, Kubernetes, Python, the CRDs served),
    /// each with the line that states it; absent when it states none.
    #[serde(skip_serializing_if = "Versions::is_empty")]
    pub versions: Versions,
}

impl Report {
    /// Redacts every bundle-derived string of the report, in a fixed order.
    pub fn redact(&mut self, r: &mut Redactor) {
        r.in_place(&mut self.bundle.path);
        for s in self.bundle.versions.strings_mut() {
            r.in_place(s);
        }
        for cause in &mut self.causes {
            r.in_place(&mut cause.summary);
            redact_evidence(r, &mut cause.evidence);
            for o in &mut cause.objects {
                r.in_place(&mut o.name);
                if let Some(ns) = &mut o.namespace {
                    r.in_place(ns);
                }
            }
            for s in &mut cause.symptoms {
                r.in_place(&mut s.summary);
                redact_evidence(r, &mut s.evidence);
            }
        }
        for d in self
            .diagnostics
            .iter_mut()
            .chain(self.bundle.incomplete.iter_mut())
        {
            r.in_place(&mut d.file);
            r.in_place(&mut d.problem);
        }
        self.inventory.redact(r);
        if let Some(t) = &mut self.timeline {
            t.redact(r);
        }
    }
}

fn redact_evidence(r: &mut Redactor, evidence: &mut [Evidence]) {
    for e in evidence {
        r.in_place(&mut e.file);
        r.in_place(&mut e.text);
        if let Some(also) = &mut e.also_in {
            r.in_place(also);
        }
    }
}

impl BundleInfo {
    /// What the report says of the bundle a timeline was read from, and the versions it
    /// states (`versions::stated` of its events).
    pub fn of(tl: &Timeline, inventory: &Inventory, stated: &[Stated]) -> BundleInfo {
        let incomplete = crate::complete::reasons(&inventory.diagnostics);
        let versions = Versions::of(stated, |i| {
            let ev = tl.events.get(i);
            let file = ev.and_then(|ev| tl.file(ev.file)).map(|f| f.path.clone());
            (file.unwrap_or_default(), ev.map_or(0, |ev| ev.line))
        });
        BundleInfo {
            path: tl.bundle_path.clone(),
            files: inventory.files,
            bytes: inventory.bytes,
            sources: inventory.sources.clone(),
            complete: incomplete.is_empty(),
            incomplete,
            filter: None,
            versions,
        }
    }

    /// Sets what the report says of completeness from the bundle's diagnostics.
    pub fn judge_completeness(&mut self, diagnostics: &[Diagnostic]) {
        self.incomplete = crate::complete::reasons(diagnostics);
        self.complete = self.incomplete.is_empty();
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    /// Records parsed, folded repeats included.
    pub events: u64,
    /// Records the rules looked at, a folded run of repeats counting once: what the analysis
    /// held in memory.
    pub records_held: u64,
    pub unparsed_lines: u64,
    pub elapsed_ms: u64,
    pub rules: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct Cause {
    pub rank: usize,
    pub id: String,
    /// The code of the rule that scored highest.
    pub code: String,
    /// Every rule that reported this id.
    pub codes: Vec<String>,
    pub severity: Severity,
    pub confidence: f64,
    pub title: String,
    pub summary: String,
    /// The Kubernetes objects the evidence (the cause's and its symptoms') concerns, Ray's
    /// own first; the bundle's only Ray workload when the evidence names none.
    pub objects: Vec<ObjectRef>,
    pub evidence: Vec<Evidence>,
    /// Ids of the present causes this one explains (shown as its symptoms).
    pub explains: Vec<String>,
    pub symptoms: Vec<Symptom>,
    pub remediation: Vec<String>,
    pub references: Vec<String>,
    /// The known issue of some releases this cause is (or may be, when the bundle states no
    /// version of what it affects); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_issue: Option<KnownIssueRef>,
}

/// A known issue a cause is: where it is tracked, the versions it affects, the release that
/// fixed it, and what the bundle's versions say of it (`in_range`, `version_unknown`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KnownIssueRef {
    pub tracker: String,
    pub number: u32,
    pub fixed_in: String,
    pub affects: String,
    pub claim: &'static str,
}

impl KnownIssueRef {
    pub fn of(k: &KnownIssue, claim: Claim) -> KnownIssueRef {
        KnownIssueRef {
            tracker: k.tracker.clone(),
            number: k.number,
            fixed_in: k.fixed_in.clone(),
            affects: k.affects_text(),
            claim: claim.as_str(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Symptom {
    pub id: String,
    pub code: String,
    pub title: String,
    pub summary: String,
    pub evidence: Vec<Evidence>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub file: String,
    pub line: u32,
    pub ts: Option<String>,
    /// How `ts` was obtained, in the words of `timeline --format json` (`exact`,
    /// `inferred_zone`, `given_zone`, `assumed_utc`, `approximate`; `none` without a time).
    pub ts_quality: &'static str,
    pub source: &'static str,
    pub text: String,
    /// What this line means (the signal's description).
    pub meaning: String,
    /// Where its process wrote the same record again (`path:line`, a raylet's `.err` copy of
    /// its `.out` record): one record, counted once (`load::mirror`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub also_in: Option<String>,
}

impl Evidence {
    /// Whether the time was derived from a `kubectl` age (or a guessed year).
    pub fn is_approximate(&self) -> bool {
        self.ts.is_some() && self.ts_quality == TsQuality::Approximate.as_str()
    }

    /// Whether the time had no zone and was read as UTC for lack of evidence.
    pub fn is_assumed_utc(&self) -> bool {
        self.ts.is_some() && self.ts_quality == TsQuality::AssumedUtc.as_str()
    }
}

impl Cause {
    /// Its evidence, then its symptoms'.
    pub fn all_evidence(&self) -> impl Iterator<Item = &Evidence> {
        self.evidence
            .iter()
            .chain(self.symptoms.iter().flat_map(|s| s.evidence.iter()))
    }

    pub fn score(&self) -> f64 {
        self.severity.weight() * self.confidence
    }
}

/// The optional `timeline` section of the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineData {
    /// Start of the first bucket: the incident window's start (`Timeline::window`).
    pub start: String,
    /// End of the last bucket: the window's end.
    pub end: String,
    pub bucket_ms: f64,
    pub buckets: usize,
    /// Axis labels: bucket index and the time at the start of that bucket.
    pub ticks: Vec<Tick>,
    /// One lane per source kind with timed events, in `SourceKind` order.
    pub lanes: Vec<Lane>,
    /// One marker per evidence line that has a time, in rank then time order.
    pub markers: Vec<Marker>,
    /// The events around the evidence, in timeline order.
    pub rows: Vec<Row>,
    /// Whether `rows` was cut at the cap.
    pub rows_capped: bool,
    /// Timed events outside the window (an object's age, an operator's start-up before
    /// hours of silence): counted, not drawn.
    pub outside: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tick {
    pub bucket: usize,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lane {
    pub source: &'static str,
    /// Events per bucket.
    pub all: Vec<u32>,
    /// Events at warning level or above per bucket.
    pub warn: Vec<u32>,
    pub total: u64,
    pub total_warn: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Marker {
    pub cause_rank: usize,
    pub cause_id: String,
    /// Whether the evidence belongs to a benign (`info`) cause.
    pub benign: bool,
    /// `1a`, `1b`, …: one letter per distinct meaning within a cause.
    pub label: String,
    pub meaning: String,
    pub source: &'static str,
    pub bucket: usize,
    pub ts: String,
    /// How `ts` was obtained (`TsQuality::as_str`).
    pub ts_quality: &'static str,
    pub file: String,
    pub line: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub ts: Option<String>,
    /// How `ts` was obtained (`TsQuality::as_str`; `none` without a time).
    pub ts_quality: &'static str,
    pub source: &'static str,
    pub level: &'static str,
    pub file: String,
    pub line: u32,
    pub component: String,
    /// The event on one line, as `timeline --oneline` shows it: its message's first line
    /// and the fields that say why (`explain::Shown::line`).
    pub text: String,
    /// What that line leaves out (a stack trace, the rest of long fields), which the page
    /// folds away; empty when it leaves out nothing.
    pub more: String,
    /// Marker labels of the evidence this row is (empty for context rows).
    pub evidence: Vec<String>,
}

impl TimelineData {
    /// Redacts the markers' files and the rows, the rows as one sequence of records.
    pub fn redact(&mut self, r: &mut Redactor) {
        for m in &mut self.markers {
            r.in_place(&mut m.file);
        }
        r.reset_sequence();
        for row in &mut self.rows {
            r.in_place(&mut row.file);
            r.in_place(&mut row.component);
            r.record_text(&mut row.text);
            // The rest of the same record, when there is one: an empty part between two
            // rows would end a secret's name in one row before its value in the next.
            if !row.more.is_empty() {
                r.record_text(&mut row.more);
            }
        }
        r.reset_sequence();
    }
}
