//! What the message catalogue (`crate::messages`) says of a record no rule claimed, and of a
//! line a support engineer pastes (`raysift explain`).
//!
//! A record whose template is classified `benign` is noise; one classified as a catalogue
//! cause is that cause, at the open world's lower confidence; any other known template names
//! the component that writes it and, where it has been read, what it means. A line the
//! catalogue does not know stays the open world's to mine.

use serde::Serialize;

use crate::event::SourceKind;
use crate::messages::{Catalogue, Class, Message};
use crate::rules::{catalogue, strongest_of, Rule};

/// What the report says of a template of records the catalogue knows.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MessageNote {
    /// The template's id in `patterns/messages/`.
    pub id: String,
    /// The component whose source writes it.
    pub component: String,
    /// What it means, when it has been read and judged.
    pub meaning: Option<String>,
}

/// The catalogue's best template for a line of a file of `kind`: a Ray log's line is matched
/// against Ray's messages and those of the Python projects that run inside Ray's processes
/// (vLLM's engine is a Ray driver and its workers Ray actors; a SkyPilot job is a Ray job on
/// its head), the operator's against KubeRay's and the API server's it quotes (admission and
/// quota denials), any other against all.
pub(super) fn lookup(line: &str, kind: SourceKind) -> Option<&'static Message> {
    let projects: Option<&[&str]> = match kind {
        SourceKind::Operator => Some(&["kuberay", "kubernetes"]),
        SourceKind::Dashboard
        | SourceKind::DashboardAgent
        | SourceKind::Autoscaler
        | SourceKind::RuntimeEnvAgent
        | SourceKind::RuntimeEnvSetup
        | SourceKind::LogMonitor
        | SourceKind::RayPython
        | SourceKind::Raylet
        | SourceKind::GcsServer
        | SourceKind::CoreWorker
        | SourceKind::Worker
        | SourceKind::JobDriver
        | SourceKind::ServeController
        | SourceKind::ServeProxy
        | SourceKind::ServeReplica
        | SourceKind::RayEvent => Some(RAY_PROCESSES),
        _ => None,
    };
    Catalogue::builtin().best(line, projects).map(|m| m.message)
}

/// The projects whose messages a Ray process's log can hold: Ray's own, and those of the
/// Python projects whose code runs as Ray drivers, actors and jobs.
const RAY_PROCESSES: &[&str] = &["ray", "vllm", "skypilot"];

/// The catalogue cause a template decides, as the library spells the id.
pub(super) fn cause_of(m: &Message) -> Option<&'static str> {
    match &m.class.as_ref()?.class {
        Class::Cause(id) => catalogue::entry(id).map(|(known, _)| known),
        _ => None,
    }
}

/// Whether the template is harmless by judgement (noise, or a normal stop).
pub(super) fn is_benign(m: &Message) -> bool {
    matches!(m.class.as_ref().map(|c| &c.class), Some(Class::Benign(_)))
}

pub(super) fn note(m: &Message) -> MessageNote {
    MessageNote {
        id: m.id.to_string(),
        component: m.component.to_string(),
        meaning: m.class.as_ref().map(|c| c.meaning.clone()),
    }
}

/// `serve.controller: a replica's constructor raised [ray-0123456789]`: what a summary adds
/// after a record the catalogue knows (the id is what `raysift explain` and `raysift rules
/// --messages` take).
pub(super) fn gloss(m: &Message) -> String {
    match &m.class {
        Some(c) => format!(
            "{}: {} [{}]",
            m.component,
            c.meaning.trim_end_matches('.'),
            m.id
        ),
        None => format!("{} [{}]", m.component, m.id),
    }
}

/// What raysift knows of one pasted line.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub line: String,
    /// The templates it matches, the most specific first (only the first unless all were
    /// asked for).
    pub matches: Vec<Explained>,
    /// The known issues (`patterns/known/`) whose signature this line is part of.
    pub known_issues: Vec<KnownIssueRef>,
}

/// A known issue a line points to: which bug, of which versions, fixed where.
#[derive(Clone, Debug, Serialize)]
pub struct KnownIssueRef {
    pub code: String,
    /// `ray-project/kuberay#2063`.
    pub tracker: String,
    pub title: String,
    /// `KubeRay >=1.1.0 and Ray <2.53.0`.
    pub affects: String,
    pub fixed_in: String,
    pub workaround: String,
}

/// One template a pasted line matches, and everything known of it.
#[derive(Clone, Debug, Serialize)]
pub struct Explained {
    pub id: String,
    pub project: String,
    pub component: String,
    pub level: String,
    pub template: String,
    pub site: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The versions read that print this wording, oldest first.
    pub versions: Vec<String>,
    /// Every version of its project and language that was read, oldest first.
    pub versions_read: Vec<String>,
    /// `cause`, `benign` or `meaning`; absent when nobody has judged it yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning: Option<String>,
    /// The catalogue cause it decides, with its gloss and the rules that report it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// Why it is harmless.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub benign: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Cause {
    pub id: String,
    pub gloss: String,
    /// The codes of the library's rules of that id.
    pub rules: Vec<String>,
    /// What to do, from the strongest of those rules.
    pub next: Vec<String>,
}

/// What the catalogue says of `line`: its best template, or every one when `all`.
pub fn explain(line: &str, rules: &[Rule], all: bool) -> Explanation {
    let catalogue = Catalogue::builtin();
    let line = line.trim_end_matches(['\r', '\n']);
    let mut found = catalogue.matches(line);
    if !all {
        found.truncate(1);
    }
    Explanation {
        line: line.to_string(),
        matches: found
            .into_iter()
            .map(|m| explained(catalogue, m.message, rules))
            .collect(),
        known_issues: known_issues(line, rules),
    }
}

/// The known issues one of whose signals the line matches (its text, and none of its
/// exclusions; a signal's sources and fields need a bundle, and are not asked).
fn known_issues(line: &str, rules: &[Rule]) -> Vec<KnownIssueRef> {
    rules
        .iter()
        .filter_map(|r| Some((r, r.known_issue.as_ref()?)))
        .filter(|(r, _)| {
            r.signals.iter().any(|s| {
                !s.text.is_empty()
                    && s.text.iter().any(|p| p.is_match(line))
                    && !s.not_text.iter().any(|p| p.is_match(line))
            })
        })
        .map(|(r, k)| KnownIssueRef {
            code: r.code.to_string(),
            tracker: k.reference(),
            title: r.title.clone(),
            affects: k.affects_text(),
            fixed_in: k.fixed_in.clone(),
            workaround: k.workaround.clone(),
        })
        .collect()
}

fn explained(catalogue: &Catalogue, m: &Message, rules: &[Rule]) -> Explained {
    let class = m.class.as_ref();
    Explained {
        id: m.id.to_string(),
        project: m.project.to_string(),
        component: m.component.to_string(),
        level: m.level.to_string(),
        template: m.template.to_string(),
        site: m.site.to_string(),
        exception: m.exception.clone(),
        reason: m.reason.clone(),
        versions: m.versions.iter().map(|v| v.to_string()).collect(),
        versions_read: catalogue.versions_read(&m.project, &m.lang),
        class: class.map(|c| c.class.as_str().to_string()),
        meaning: class.map(|c| c.meaning.clone()),
        cause: match class.map(|c| &c.class) {
            Some(Class::Cause(id)) => Some(cause(id, rules)),
            _ => None,
        },
        benign: match class.map(|c| &c.class) {
            Some(Class::Benign(why)) => Some(why.clone()),
            _ => None,
        },
    }
}

fn cause(id: &str, rules: &[Rule]) -> Cause {
    Cause {
        id: id.to_string(),
        gloss: catalogue::entry(id)
            .map(|(_, g)| g.to_string())
            .unwrap_or_default(),
        rules: rules
            .iter()
            .filter(|r| r.id == id)
            .map(|r| r.code.to_string())
            .collect(),
        next: strongest_of(rules, id)
            .map(|r| r.remediation.clone())
            .unwrap_or_default(),
    }
}
