//! From findings to a ranked report.
//!
//! Findings of the same catalogue id merge into one cause. A cause whose rule `explains`
//! another present cause takes it as a symptom: the symptom is listed under it, not ranked
//! beside it. Score = severity weight × confidence; benign (`info`) causes always rank below
//! every real one. Ties break on the id, so the order never depends on threads or input order.
//!
//! Invariant: no text formatting here; the report is data, rendered by `report/`.

use std::collections::{BTreeMap, BTreeSet};

use crate::event::format_rfc3339;
use crate::inventory::Inventory;
use crate::model::{BundleInfo, Cause, Evidence, Report, Stats, Symptom, SCHEMA, VERSION};
use crate::objects::{BundleObjects, ObjectRef};
use crate::rules::engine::{EvidenceRef, Finding};
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
}

/// Ranks the findings of `rules` over `tl` into a report.
pub fn rank(tl: &Timeline, rules: &[Rule], findings: &[Finding], elapsed_ms: u64) -> Report {
    // Merge by id.
    let mut by_id: BTreeMap<String, Merged> = BTreeMap::new();
    for f in findings {
        let Some(rule) = rules.get(f.rule) else {
            continue;
        };
        let m = by_id.entry(rule.id.clone()).or_insert_with(|| Merged {
            id: rule.id.clone(),
            best: f.rule,
            codes: Vec::new(),
            severity: rule.severity,
            confidence: f.confidence,
            evidence: Vec::new(),
            explains: BTreeSet::new(),
        });
        m.codes.push(rule.code.to_string());
        let better = (rule.severity, f.confidence) > (m.severity, m.confidence)
            || (rule.severity, f.confidence) == (m.severity, m.confidence)
                && rule.code < rules[m.best].code;
        if better {
            m.best = f.rule;
            m.severity = rule.severity;
            m.confidence = f.confidence;
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
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    for id in &ids {
        let mut explainers: Vec<&Merged> = by_id
            .values()
            .filter(|m| m.id != *id && m.explains.contains(id))
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
    // Climb to the root so that chains hang under their first cause.
    let root_of = |id: &str| -> String {
        let mut cur = id.to_string();
        let mut seen = BTreeSet::new();
        while let Some(p) = parent.get(&cur) {
            if !seen.insert(cur.clone()) {
                break;
            }
            cur = p.clone();
        }
        cur
    };

    let evidence_of = |m: &Merged| -> Vec<Evidence> {
        let mut refs = m.evidence.clone();
        refs.sort_by(|a, b| a.0.cmp(&b.0));
        refs.dedup_by(|a, b| a.0.event == b.0.event);
        let mut out: Vec<Evidence> = refs
            .iter()
            .filter_map(|(r, rule)| evidence(tl, rules, *rule, r))
            .collect();
        out.sort_by(|a, b| {
            (a.ts.is_none(), &a.ts, &a.file, a.line).cmp(&(b.ts.is_none(), &b.ts, &b.file, b.line))
        });
        out
    };

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
                .filter(|s| s.id != m.id && parent.contains_key(&s.id) && root_of(&s.id) == m.id),
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
                    evidence: evidence_of(s),
                }
            })
            .collect();
        symptoms.sort_by(|a, b| a.id.cmp(&b.id));
        causes.push(Cause {
            rank: 0,
            id: m.id.clone(),
            code: rule.code.to_string(),
            codes: m.codes.clone(),
            severity: m.severity,
            confidence: m.confidence,
            title: rule.title.clone(),
            summary: summaries
                .get(&m.best)
                .map_or(rule.summary.clone(), |x| x.to_string()),
            objects: objects_of(&concerned),
            evidence: evidence_of(m),
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
        bundle: BundleInfo::of(tl, &inventory),
        window: inventory.window.clone(),
        causes,
        diagnostics: tl.diagnostics.clone(),
        stats: Stats {
            events: inventory.events,
            unparsed_lines: inventory.unparsed_lines,
            elapsed_ms,
            rules: rules.len(),
        },
        inventory,
        timeline: None,
        unrecognised: Vec::new(),
    }
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

fn evidence(tl: &Timeline, rules: &[Rule], rule: usize, r: &EvidenceRef) -> Option<Evidence> {
    let ev = tl.events.get(r.event)?;
    let sig = rules.get(rule)?.signals.get(r.signal)?;
    let first_line = ev.message.lines().next().unwrap_or("");
    let text = match r.field.and_then(|i| ev.fields.get(i)) {
        Some((k, v)) if !v.is_empty() && !first_line.contains(v.as_str()) => {
            format!("{first_line} {k}={v}")
        }
        _ => ev.message.clone(),
    };
    // What the signal matched must stay visible however long the record is.
    // The focus is the whole line of the match.
    // A match over several lines (a traceback's shape) is left to `cut`, which keeps the
    // record's head, innermost frames and last lines.
    let focus = sig
        .text
        .iter()
        .find_map(|re| re.regex()?.find(&text))
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
    let short = cut(&text, EVIDENCE_TEXT_MAX);
    let shown = match focus {
        Some((a, b)) if !short.contains(&text[a..b]) => around(&text, a..b, EVIDENCE_TEXT_MAX),
        _ => short,
    };
    Some(Evidence {
        file: tl.file(ev.file).map_or(String::new(), |f| f.path.clone()),
        line: ev.line,
        ts: ev.ts.map(|t| format_rfc3339(t.micros)),
        ts_quality: ev.ts.map_or("none", |t| t.quality.as_str()),
        source: ev.kind.as_str(),
        text: shown,
        meaning: sig.description.clone(),
    })
}

/// Shortens evidence text. A long multi-line record (a traceback) keeps its first and last
/// lines, because the exception that explains it comes last, and the innermost frames of code
/// outside the standard library in between, because that is where it was raised; then the
/// characters are capped, keeping the last line whole when it fits in half the cap.
fn cut(text: &str, max: usize) -> String {
    const HEAD: usize = 3;
    const TAIL: usize = 3;
    const FRAMES: usize = 2;
    let lines: Vec<&str> = text.lines().collect();
    let text = if lines.len() > HEAD + TAIL + 1 {
        let middle = &lines[HEAD..lines.len() - TAIL];
        let frames: Vec<usize> = middle
            .iter()
            .enumerate()
            .filter(|(_, l)| is_code_frame(l))
            .map(|(i, _)| i)
            .collect();
        let kept: Vec<usize> = frames.iter().rev().take(FRAMES).rev().copied().collect();
        let mut out: Vec<String> = lines[..HEAD].iter().map(|l| l.to_string()).collect();
        let mut next = 0usize;
        for &i in &kept {
            if i > next {
                out.push(format!("  … {} lines …", i - next));
            }
            out.push(middle[i].to_string());
            next = i + 1;
        }
        if middle.len() > next {
            out.push(format!("  … {} lines …", middle.len() - next));
        }
        out.extend(lines[lines.len() - TAIL..].iter().map(|l| l.to_string()));
        out.join("\n")
    } else {
        text.to_string()
    };
    if text.chars().count() <= max {
        return text;
    }
    let chars: Vec<char> = text.chars().collect();
    let last_start = text
        .rfind('\n')
        .map_or(0, |i| text[..i].chars().count() + 1);
    let last_len = chars.len() - last_start;
    if last_start > 0 && last_len <= max / 2 {
        // Cut the lines before the last one in their middle, keep the last one whole.
        let room = max - last_len;
        let tail = room / 3;
        let head = room - tail;
        let mut s: String = chars[..head].iter().collect();
        s.push_str(" … ");
        s.extend(&chars[last_start - tail.min(last_start)..last_start]);
        s.extend(&chars[last_start..]);
        return s;
    }
    // Keep the end of the last line too: cut the middle.
    let tail = max / 3;
    let head = max - tail;
    let mut s: String = chars[..head].iter().collect();
    s.push_str(" … ");
    s.extend(&chars[chars.len() - tail..]);
    s
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
    let from = floor(focus.start.saturating_sub(context).max(head_max));
    let to = floor((focus.end + context).min(text.len()));
    let head = floor(head_max.min(from));
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

/// A Python frame line (`File "/app/model.py", line 42, in load`) of code outside the
/// standard library.
fn is_code_frame(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("File \"")
        && t.contains(", line ")
        && (t.contains("-packages/") || !t.contains("/lib/python"))
}
