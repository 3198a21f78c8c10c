//! `kubectl cluster-info dump` pod logs: one `logs.txt` holding every container of a pod.

use super::count_lines;
use crate::classify::classify;
use crate::event::{Event, SourceKind};
use crate::parse::{self, ParseOutput};

pub(super) const SECTION_START: &[u8] = b"==== START logs for container ";
const SECTION_END: &[u8] = b"==== END logs for container ";

/// `kubectl cluster-info dump` concatenates every container of a pod into one `logs.txt`,
/// each wrapped in START / END marker lines. Returns the byte ranges of the sections'
/// contents (between the markers) and of the marker lines.
pub(super) fn split_cluster_info_sections(bytes: &[u8]) -> Option<Vec<(usize, usize)>> {
    if !bytes.starts_with(SECTION_START) {
        return None;
    }
    let mut sections = Vec::new();
    let mut pos = 0usize;
    let mut open: Option<usize> = None;
    while pos < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i + 1);
        let line = &bytes[pos..end];
        if line.starts_with(SECTION_START) {
            if let Some(start) = open.take() {
                sections.push((start, pos));
            }
            open = Some(end);
        } else if line.starts_with(SECTION_END) {
            if let Some(start) = open.take() {
                sections.push((start, pos));
            }
        }
        pos = end;
    }
    if let Some(start) = open {
        sections.push((start, bytes.len()));
    }
    Some(sections)
}

/// Parses each section as its own source, renumbering lines to the whole file. The marker
/// lines become events of their own so that no line is lost.
pub(super) fn parse_sections(
    path: &str,
    bytes: &[u8],
    sections: &[(usize, usize)],
) -> (SourceKind, ParseOutput) {
    let mut out = ParseOutput::default();
    let mut first_kind = None;
    let mut covered = 0usize;
    for &(start, end) in sections {
        // Marker lines between the previous section and this one.
        push_raw_lines(bytes, covered, start, &mut out);
        let body = &bytes[start..end];
        let kind = classify(path, body);
        first_kind.get_or_insert(kind);
        let line_offset = count_lines(&bytes[..start]) as u32;
        let mut part = parse::parse(kind, body);
        for ev in &mut part.events {
            ev.line += line_offset;
            if ev.kind == SourceKind::Unknown {
                ev.kind = kind;
            }
        }
        for d in &mut part.diagnostics {
            d.line = d.line.map(|l| l + line_offset);
        }
        out.events.append(&mut part.events);
        out.diagnostics.append(&mut part.diagnostics);
        out.unparsed_lines += part.unparsed_lines;
        out.zone_samples.append(&mut part.zone_samples);
        covered = end;
    }
    push_raw_lines(bytes, covered, bytes.len(), &mut out);
    (first_kind.unwrap_or(SourceKind::Unknown), out)
}

pub(super) fn push_raw_lines(bytes: &[u8], from: usize, to: usize, out: &mut ParseOutput) {
    if from >= to {
        return;
    }
    let first_line = count_lines(&bytes[..from]) as u32;
    for (no, raw) in parse::lines::split_lines(&bytes[from..to]) {
        let mut ev = Event::new(first_line + no, String::from_utf8_lossy(raw).into_owned());
        ev.component = "cluster-info".into();
        out.events.push(ev);
    }
}
