//! What a bundle holds: files per source kind, events, unparsed lines, time window, zone
//! decisions, capture time and diagnostics. Computed once from a timeline; rendered by
//! `report::inventory`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::collected::Collected;
use crate::diag::Diagnostic;
use crate::event::{format_rfc3339, Event, Micros};
use crate::history_server::{self, Cluster, Generation};
use crate::redact::Redactor;
use crate::timeline::{format_offset, Timeline};
use crate::words::count;

#[derive(Clone, Debug, Serialize)]
pub struct Inventory {
    pub container: String,
    pub files: usize,
    pub bytes: u64,
    pub lines: u64,
    /// Every record of the bundle, folded repeats included; `None` when the run parsed only
    /// the lines a rule could match (see `records_parsed`).
    pub events: Option<u64>,
    /// Of `events`, those with a time.
    pub timed_events: Option<u64>,
    /// Records this run parsed: every record (`--inventory`, the HTML page, `timeline`), or
    /// only those of the lines a rule could match (the text, JSON and markdown reports).
    pub records_parsed: u64,
    pub unparsed_lines: u64,
    /// Files per source kind, by kind name.
    pub sources: BTreeMap<&'static str, usize>,
    pub window: Option<Window>,
    pub zones: Vec<ZoneGroup>,
    pub capture_time: Option<String>,
    pub capture_basis: Option<String>,
    /// Set for a bundle written by `raysift collect`: its metadata's versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collected: Option<Collected>,
    /// Set for a copy of the KubeRay History Server's storage: the layout and the clusters
    /// its keys name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    pub file_list: Vec<FileRow>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A bundle laid out as the KubeRay History Server's storage (`history_server`).
#[derive(Clone, Debug, Serialize)]
pub struct Layout {
    /// [`history_server::LAYOUT`].
    pub name: &'static str,
    /// The generation of the collector's keys (`v1.7`, `v1.6`), of most files.
    pub generation: Generation,
    /// The clusters the keys name, by namespace and name.
    pub clusters: Vec<LayoutCluster>,
}

/// One cluster of a History Server copy.
#[derive(Clone, Debug, Serialize)]
pub struct LayoutCluster {
    /// `RayCluster`.
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    /// The RayJob or RayService that owns it, as `Kind namespace/name`, when the key says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Ray's session folders, sorted.
    pub sessions: Vec<String>,
    /// Ray nodes (folders of node ids) with files.
    pub nodes: usize,
    pub files: usize,
}

impl Layout {
    /// The layout of files at `paths`, if any of them follows the History Server's.
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<Layout> {
        type Seen = (BTreeSet<String>, BTreeSet<String>, usize);
        let mut clusters: BTreeMap<Cluster, Seen> = BTreeMap::new();
        let mut generations: BTreeMap<Generation, usize> = BTreeMap::new();
        for p in paths.into_iter().filter_map(history_server::place) {
            *generations.entry(p.generation).or_default() += 1;
            let seen = clusters.entry(p.cluster).or_default();
            seen.0.insert(p.session);
            seen.1.extend(p.node);
            seen.2 += 1;
        }
        let generation = generations
            .into_iter()
            .max_by_key(|(g, n)| (*n, std::cmp::Reverse(*g)))?
            .0;
        Some(Layout {
            name: history_server::LAYOUT,
            generation,
            clusters: clusters
                .into_iter()
                .map(|(c, (sessions, nodes, files))| LayoutCluster {
                    kind: "RayCluster",
                    owner: c
                        .owner
                        .as_ref()
                        .map(|(kind, name)| format!("{kind} {}/{name}", c.namespace)),
                    namespace: c.namespace,
                    name: c.name,
                    sessions: sessions.into_iter().collect(),
                    nodes: nodes.len(),
                    files,
                })
                .collect(),
        })
    }

    /// What an inventory says of it: `kuberay-history-server (collector keys v1.7), 2
    /// clusters: RayCluster default/echo-serve (1 session, 1 node, 46 files); …`.
    pub fn line(&self) -> String {
        let generation = match self.generation {
            Generation::Hierarchical => "v1.7",
            Generation::Flat => "v1.6",
        };
        let clusters: Vec<String> = self
            .clusters
            .iter()
            .map(|c| {
                let owner = c
                    .owner
                    .as_ref()
                    .map_or(String::new(), |o| format!(" of {o}"));
                format!(
                    "{} {}/{}{owner} ({}, {}, {})",
                    c.kind,
                    c.namespace,
                    c.name,
                    count(c.sessions.len() as u64, "session", "sessions"),
                    count(c.nodes as u64, "node", "nodes"),
                    count(c.files as u64, "file", "files"),
                )
            })
            .collect();
        format!(
            "{} (collector keys {generation}), {}: {}",
            self.name,
            count(self.clusters.len() as u64, "cluster", "clusters"),
            clusters.join("; ")
        )
    }

    fn redact(&mut self, r: &mut Redactor) {
        for c in &mut self.clusters {
            r.in_place(&mut c.namespace);
            r.in_place(&mut c.name);
            if let Some(o) = &mut c.owner {
                r.in_place(o);
            }
            for s in &mut c.sessions {
                r.in_place(s);
            }
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Window {
    pub first: String,
    pub last: String,
}

/// Files whose zone-less times were resolved the same way.
#[derive(Clone, Debug, Serialize)]
pub struct ZoneGroup {
    pub offset: String,
    pub quality: &'static str,
    pub basis: String,
    pub files: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FileRow {
    pub path: String,
    pub source: &'static str,
    pub bytes: u64,
    pub lines: u64,
    /// As [`Inventory::events`], for this file.
    pub events: Option<u64>,
    pub records_parsed: u64,
    pub unparsed_lines: u64,
    /// Records of this file that copy a record of another file of its process (a raylet's
    /// `.err` repeats the errors of its `.out`): counted there, not in `events` here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirrored: Option<Mirrored>,
}

/// Copies a file holds of another file's records (`load::mirror`).
#[derive(Clone, Debug, Serialize)]
pub struct Mirrored {
    pub records: u64,
    /// The file that holds the originals (of the first copy, should there be two).
    pub of: String,
}

impl FileRow {
    /// Its events, or its records parsed when not every record was.
    pub fn records(&self) -> u64 {
        self.events.unwrap_or(self.records_parsed)
    }

    /// What the inventory says of its copies: `128 mirrored from logs/raylet.out`.
    pub fn mirror_note(&self) -> Option<String> {
        let m = self.mirrored.as_ref()?;
        Some(format!("{} mirrored from {}", m.records, m.of))
    }
}

impl Inventory {
    /// Redacts the inventory (paths, zone decisions, capture basis, diagnostics).
    pub fn redact(&mut self, r: &mut Redactor) {
        if let Some(b) = &mut self.capture_basis {
            r.in_place(b);
        }
        for z in &mut self.zones {
            r.in_place(&mut z.basis);
            for f in &mut z.files {
                r.in_place(f);
            }
        }
        if let Some(l) = &mut self.layout {
            l.redact(r);
        }
        for f in &mut self.file_list {
            r.in_place(&mut f.path);
            if let Some(m) = &mut f.mirrored {
                r.in_place(&mut m.of);
            }
        }
        for d in &mut self.diagnostics {
            r.in_place(&mut d.file);
            r.in_place(&mut d.problem);
        }
    }

    /// Says that the counts are of the records parsed, not of every record: the run parsed
    /// only the lines a rule could match.
    pub fn sieved(&mut self) {
        self.events = None;
        self.timed_events = None;
        for f in &mut self.file_list {
            f.events = None;
        }
    }

    /// The record counts in words: `2986 events (96.0% with a time)`, or `480 records parsed
    /// (of the lines a rule could match)` when not every record was.
    pub fn records_phrase(&self) -> String {
        match (self.events, self.timed_events) {
            (Some(n), Some(timed)) => {
                let pct = if n == 0 {
                    100.0
                } else {
                    timed as f64 * 100.0 / n as f64
                };
                format!("{} ({pct:.1}% with a time)", count(n, "event", "events"))
            }
            _ => format!(
                "{} (of the lines a rule could match)",
                count(self.records_parsed, "record parsed", "records parsed")
            ),
        }
    }

    /// The heading of the files' record column: what [`FileRow::records`] counts.
    pub fn records_heading(&self) -> &'static str {
        match self.events {
            Some(_) => "Events",
            None => "Records parsed",
        }
    }

    pub fn of(tl: &Timeline) -> Inventory {
        // Records, folded repeats included.
        let events = tl.events.iter().map(Event::weight).sum();
        let timed = tl
            .events
            .iter()
            .filter(|e| e.ts.is_some())
            .map(Event::weight)
            .sum();
        Inventory::with_totals(tl, events, timed, tl.window())
    }

    /// The inventory of a timeline whose events were counted as they streamed past (its own
    /// `events` are not looked at): `events` in all, `timed` of them with a time, `window`
    /// from the first to the last time.
    pub fn with_totals(
        tl: &Timeline,
        events: u64,
        timed: u64,
        window: Option<(Micros, Micros)>,
    ) -> Inventory {
        let mut sources = BTreeMap::new();
        for f in &tl.files {
            *sources.entry(f.kind.as_str()).or_insert(0) += 1;
        }
        let mut groups: BTreeMap<(String, &'static str, String), Vec<String>> = BTreeMap::new();
        for z in &tl.zones {
            groups
                .entry((
                    format_offset(z.offset_secs),
                    z.quality.as_str(),
                    z.basis.clone(),
                ))
                .or_default()
                .push(z.file.clone());
        }
        Inventory {
            container: tl.container.clone(),
            files: tl.files.len(),
            bytes: tl.files.iter().map(|f| f.bytes).sum(),
            lines: tl.files.iter().map(|f| f.lines).sum(),
            events: Some(events),
            timed_events: Some(timed),
            records_parsed: events,
            unparsed_lines: tl.files.iter().map(|f| f.unparsed_lines).sum(),
            sources,
            window: window.map(|(a, b)| Window {
                first: format_rfc3339(a),
                last: format_rfc3339(b),
            }),
            zones: groups
                .into_iter()
                .map(|((offset, quality, basis), files)| ZoneGroup {
                    offset,
                    quality,
                    basis,
                    files,
                })
                .collect(),
            capture_time: tl.capture.as_ref().map(|c| format_rfc3339(c.micros)),
            capture_basis: tl.capture.as_ref().map(|c| c.basis.clone()),
            collected: tl.collected.clone(),
            layout: Layout::of(tl.files.iter().map(|f| f.path.as_str())),
            file_list: tl
                .files
                .iter()
                .map(|f| FileRow {
                    path: f.path.clone(),
                    source: f.kind.as_str(),
                    bytes: f.bytes,
                    lines: f.lines,
                    events: Some(f.events),
                    records_parsed: f.events,
                    unparsed_lines: f.unparsed_lines,
                    mirrored: f.mirror_of.and_then(|of| {
                        Some(Mirrored {
                            records: f.mirrored,
                            of: tl.file(of)?.path.clone(),
                        })
                    }),
                })
                .collect(),
            diagnostics: tl.diagnostics.clone(),
        }
    }
}

/// The line an inventory gives a `raysift collect` bundle: what collected it and the versions
/// its metadata records.
pub fn collected_line(c: &Collected) -> String {
    let mut parts = Vec::new();
    let mut push = |label: &str, v: &Option<String>| {
        if let Some(v) = v {
            parts.push(format!("{label} {v}"));
        }
    };
    push("raysift", &c.raysift_version);
    push("kubectl client", &c.kubectl_client_version);
    push("server", &c.kubectl_server_version);
    push("operator image", &c.operator_image);
    push("CRDs served", &c.crd_versions);
    if parts.is_empty() {
        format!("raysift collect bundle ({})", c.file)
    } else {
        format!("raysift collect bundle ({}): {}", c.file, parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collected_line_names_what_is_known() {
        let mut c = Collected {
            file: "metadata.json".to_string(),
            ..Collected::default()
        };
        assert_eq!(collected_line(&c), "raysift collect bundle (metadata.json)");
        c.raysift_version = Some("0.1.0".to_string());
        c.kubectl_server_version = Some("v1.29.4".to_string());
        assert_eq!(
            collected_line(&c),
            "raysift collect bundle (metadata.json): raysift 0.1.0, server v1.29.4"
        );
    }
}
