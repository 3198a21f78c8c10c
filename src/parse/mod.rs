//! One parser per on-disk format. Each is a pure function over the bytes of one file that
//! fills a [`ParseOutput`]: events, diagnostics, a count of lines nobody understood, and
//! samples of the container's time zone.
//!
//! Invariants: parsers do no I/O, spawn no threads, never panic and never drop a line. A line
//! no grammar recognises becomes an event holding its raw text, with no time, and is counted
//! in `unparsed_lines`. Parsers leave `Event::file` and `Event::kind` to the pipeline.

pub mod describe;
pub mod generic;
pub mod kube_events;
pub mod kube_object;
pub mod kube_table;
pub mod lines;
pub mod operator;
pub mod primitives;
pub mod ray_cpp;
pub mod ray_python;
pub mod row_fold;
pub mod serve;
pub mod stamp;
pub mod tree;
pub mod worker;

use crate::diag::Diagnostic;
use crate::event::{Event, Micros, SourceKind};

/// What a parser produced from one file.
#[derive(Debug, Default)]
pub struct ParseOutput {
    pub events: Vec<Event>,
    pub diagnostics: Vec<Diagnostic>,
    /// Lines that stood alone with no time and no grammar.
    pub unparsed_lines: u64,
    /// `local - utc` in microseconds, for lines that carried both a zone-less Ray time and a
    /// UTC time (a `kubectl logs --timestamps` prefix, an access-log stamp).
    pub zone_samples: Vec<Micros>,
}

/// The grammar family a source kind is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Operator,
    RayPython,
    RayCpp,
    Serve,
    Worker,
    Describe,
    KubeEvents,
    KubeTable,
    KubeObject,
    Generic,
}

impl Format {
    /// Kubernetes text and objects (describe, events and `get` tables, YAML/JSON): their
    /// meaning depends on the whole document, and they state facts rather than log records.
    pub fn is_kubernetes(self) -> bool {
        matches!(
            self,
            Format::Describe | Format::KubeEvents | Format::KubeTable | Format::KubeObject
        )
    }

    pub fn of(kind: SourceKind) -> Format {
        use SourceKind as K;
        match kind {
            K::Operator => Format::Operator,
            K::Dashboard
            | K::DashboardAgent
            | K::Autoscaler
            | K::RuntimeEnvAgent
            | K::RuntimeEnvSetup
            | K::LogMonitor
            | K::RayPython => Format::RayPython,
            K::Raylet | K::GcsServer | K::CoreWorker => Format::RayCpp,
            K::ServeController | K::ServeProxy | K::ServeReplica => Format::Serve,
            K::Worker | K::JobDriver | K::RayContainer | K::InitContainer => Format::Worker,
            K::DescribeRayService
            | K::DescribeRayCluster
            | K::DescribeRayJob
            | K::DescribePod
            | K::DescribeNode
            | K::DescribeOther => Format::Describe,
            K::KubeEvents => Format::KubeEvents,
            K::KubeTable => Format::KubeTable,
            K::KubeObject | K::BundleMeta => Format::KubeObject,
            K::Unknown => Format::Generic,
        }
    }
}

/// Parses one file's bytes as `kind`.
pub fn parse(kind: SourceKind, input: &[u8]) -> ParseOutput {
    parse_with(kind, input, false)
}

/// Parses one file's bytes as `kind` for `analyze`: as [`parse`], but the rows of a huge
/// events table that repeat an earlier row are folded into it (see [`fold`]).
pub fn parse_folding(kind: SourceKind, input: &[u8]) -> ParseOutput {
    parse_with(kind, input, true)
}

fn parse_with(kind: SourceKind, input: &[u8], fold: bool) -> ParseOutput {
    let mut out = ParseOutput::default();
    match Format::of(kind) {
        Format::Operator => operator::parse(input, &mut out),
        Format::RayPython => ray_python::parse(input, &mut out),
        Format::RayCpp => ray_cpp::parse(input, &mut out),
        Format::Serve => serve::parse(input, &mut out),
        Format::Worker => worker::parse(input, &mut out),
        Format::Describe => describe::parse_with(input, &mut out, fold),
        Format::KubeEvents => kube_events::parse_with(input, &mut out, fold),
        Format::KubeTable => kube_table::parse(input, &mut out),
        Format::KubeObject => kube_object::parse(input, &mut out),
        Format::Generic => generic::parse(input, &mut out),
    }
    out
}
