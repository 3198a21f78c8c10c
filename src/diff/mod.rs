//! `raysift diff OLD NEW`: what changed between a bundle that worked and one that does not.
//!
//! Both bundles go through the same [`Analysis`] (the same rules, limits and narrowing), and
//! from each the diff keeps its report and a [`Snapshot`] of its Ray objects, read from the
//! timeline's facts before it is dropped (`Analysis::run_looking`): specs are small, so the
//! memory stays that of one analysis at a time. The two are compared into [`Change`]s, the
//! one that matters most first (`compare.rs`), and written as text or JSON
//! (`raysift.diff/v1`, `schema/diff.v1.json`; `render.rs`).
//!
//! Exit codes are `analyze`'s: 1 when NEW has a cause OLD had not at or above `--fail-on`;
//! 2 when a bundle cannot be read (the message names which), or when one was read only in
//! part and nothing failed; 0 otherwise.
//!
//! The parts: this file, the run and the data of a diff; `snapshot.rs`, the Ray objects'
//! specs, states and images of one bundle; `compare.rs`, two bundles into ordered changes;
//! `render.rs`, the text.

mod compare;
pub mod render;
pub mod snapshot;

use std::path::Path;

use serde::Serialize;

use crate::analysis::{Analysis, Outcome};
use crate::exit::{Failure, EXIT_CAUSE, EXIT_UNREADABLE};
use crate::redact::Redactor;
use crate::rules::Severity;

pub use snapshot::Snapshot;

/// The schema name of the JSON output.
pub const SCHEMA: &str = "raysift.diff/v1";

/// What a change is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A cause NEW has and OLD had not (`what`: its catalogue id).
    CauseAppeared,
    /// A cause OLD had and NEW has not.
    CauseGone,
    /// A state of an object got worse (`what`: the status field, or `state` for a pod).
    StateWorsened,
    /// A product's stated versions differ (`what`: KubeRay, Ray, …).
    VersionChanged,
    /// The tags of an image repository differ (`what`: the repository).
    ImageChanged,
    /// A spec field of a Ray object in both bundles differs (`what`: its path).
    SpecChanged,
    /// An error template no rule claimed, seen in NEW only (`what`: the template).
    TemplateAppeared,
    /// A Ray object found in NEW only.
    ObjectAppeared,
    /// A Ray object found in OLD only.
    ObjectGone,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::CauseAppeared => "cause_appeared",
            Kind::CauseGone => "cause_gone",
            Kind::StateWorsened => "state_worsened",
            Kind::VersionChanged => "version_changed",
            Kind::ImageChanged => "image_changed",
            Kind::SpecChanged => "spec_changed",
            Kind::TemplateAppeared => "template_appeared",
            Kind::ObjectAppeared => "object_appeared",
            Kind::ObjectGone => "object_gone",
        }
    }
}

/// One difference between the bundles.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub kind: Kind,
    /// The cause id, field path, product, repository or template.
    pub what: String,
    /// The object it concerns, `Kind namespace/name` (NEW's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The value in OLD (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The value in NEW (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
    /// A cause's severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// A cause's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A template's records in NEW.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// A template's level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<&'static str>,
    /// The new cause this change is placed under: a change of the kind that cause follows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explains: Option<String>,
}

impl Change {
    pub fn new(kind: Kind, what: String) -> Change {
        Change {
            kind,
            what,
            object: None,
            old: None,
            new: None,
            severity: None,
            title: None,
            count: None,
            level: None,
            explains: None,
        }
    }
}

/// One bundle of the two.
#[derive(Clone, Debug, Serialize)]
pub struct Bundle {
    pub path: String,
    /// Whether every part of it was read.
    pub complete: bool,
    /// Its causes above `info`, ranked.
    pub causes: Vec<String>,
}

/// What changed from OLD to NEW.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    pub schema: &'static str,
    pub raysift_version: &'static str,
    pub old: Bundle,
    pub new: Bundle,
    /// No change at all.
    pub same: bool,
    /// NEW has a cause OLD had not at or above `--fail-on`.
    pub failing: bool,
    /// The changes, the one that matters most first.
    pub changes: Vec<Change>,
}

impl Diff {
    /// What `diff` exits with: 1 a new cause at or above `--fail-on`; 2 a bundle read in
    /// part; 0 otherwise.
    pub fn exit_code(&self) -> u8 {
        if self.failing {
            EXIT_CAUSE
        } else if !self.old.complete || !self.new.complete {
            EXIT_UNREADABLE
        } else {
            0
        }
    }

    /// Redacts every string that came from a bundle, OLD's before NEW's, in a fixed order.
    pub fn redact(&mut self, r: &mut Redactor) {
        r.in_place(&mut self.old.path);
        r.in_place(&mut self.new.path);
        for c in &mut self.changes {
            r.in_place(&mut c.what);
            for s in [&mut c.object, &mut c.old, &mut c.new, &mut c.title]
                .into_iter()
                .flatten()
            {
                r.in_place(s);
            }
        }
    }
}

/// Analyses `old` and `new` with `analysis` and compares them; a cause at or above `fail_on`
/// that NEW has and OLD had not fails.
///
/// # Errors
///
/// A bundle that cannot be opened, or that holds nothing to analyse: the failure names it.
pub fn run(
    analysis: &Analysis,
    old: &Path,
    new: &Path,
    fail_on: Severity,
) -> Result<Diff, Failure> {
    let (old_outcome, old_snap) = read(analysis, "OLD", old)?;
    let (new_outcome, new_snap) = read(analysis, "NEW", new)?;
    let (changes, failing) = compare::compare(
        &compare::Side {
            report: &old_outcome.report,
            snap: &old_snap,
        },
        &compare::Side {
            report: &new_outcome.report,
            snap: &new_snap,
        },
        fail_on,
    );
    let bundle = |o: &Outcome| Bundle {
        path: o.report.bundle.path.clone(),
        complete: o.report.bundle.complete,
        causes: o
            .report
            .causes
            .iter()
            .filter(|c| c.severity != Severity::Info)
            .map(|c| c.id.clone())
            .collect(),
    };
    Ok(Diff {
        schema: SCHEMA,
        raysift_version: crate::model::VERSION,
        old: bundle(&old_outcome),
        new: bundle(&new_outcome),
        same: changes.is_empty(),
        failing,
        changes,
    })
}

/// One bundle analysed, and its snapshot.
fn read(analysis: &Analysis, which: &str, path: &Path) -> Result<(Outcome, Snapshot), Failure> {
    let cannot = |why: String| Failure {
        message: format!("cannot analyse {which} bundle {}: {why}", path.display()),
        code: EXIT_UNREADABLE,
        broken_pipe: false,
    };
    let (outcome, snap) = analysis
        .run_looking(path, Snapshot::of)
        .map_err(|e| cannot(e.to_string()))?;
    match &outcome.unreadable {
        Some(why) => Err(cannot(why.clone())),
        None => Ok((outcome, snap)),
    }
}
