//! Evaluating rules over a timeline.
//!
//! One pass over the events finds every signal occurrence. A multi-pattern automaton over the
//! literal parts of all signals' regexes picks candidates, so the ordinary healthy line costs a
//! scan and a miss; full regexes run only on candidates (and on the events of signals for which
//! no literal could be derived). Then each rule's clauses are checked over the occurrences.
//!
//! Invariant: the result depends only on the events and the rules, in timeline order.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::event::{Event, Micros};
use crate::rules::{Clause, Pattern, Rule, Severity, Signal};

/// Where a signal matched in an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The value of the signal's `key` capture, when it has one.
    pub key: Option<String>,
    /// The field whose value matched (`None`: the message).
    pub field: Option<usize>,
}

/// One occurrence of a signal.
#[derive(Clone, Debug)]
pub struct Occurrence {
    /// Index of the event in the timeline.
    pub event: usize,
    pub ts: Option<Micros>,
    /// How many records the event stands for (more than 1 when it folds repeats), and the
    /// time of the last.
    pub weight: u64,
    pub last: Option<Micros>,
    pub hit: Hit,
}

/// How many records the occurrences stand for.
fn weight(list: &[Occurrence]) -> u64 {
    list.iter().map(|o| o.weight).sum()
}

/// An evidence line of a finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EvidenceRef {
    pub event: usize,
    pub signal: usize,
    pub field: Option<usize>,
}

/// A rule that fired.
#[derive(Clone, Debug)]
pub struct Finding {
    /// Index of the rule in the engine.
    pub rule: usize,
    pub evidence: Vec<EvidenceRef>,
    pub confidence: f64,
    pub summary: String,
    /// The severity judgement gave it instead of its rule's (`judge`): a death someone
    /// asked for stays at `info`.
    pub severity: Option<Severity>,
}

/// Does `sig` match `ev`? Checks sources, level, text regexes, exclusions and field
/// conditions, in that order (cheapest first).
pub fn signal_matches(sig: &Signal, ev: &Event) -> Option<Hit> {
    if !sig.sources.allows(ev.kind) {
        return None;
    }
    if sig.min_level.is_some_and(|min| ev.level < min) {
        return None;
    }
    let mut hit = Hit {
        key: None,
        field: None,
    };
    if !sig.text.is_empty() {
        let mut found = false;
        'outer: for re in &sig.text {
            if re.is_match(&ev.message) {
                hit.field = None;
                hit.key = capture_key(sig, re, &ev.message);
                found = true;
                break;
            }
            for (idx, (_, value)) in ev.fields.iter().enumerate() {
                if re.is_match(value) {
                    hit.field = Some(idx);
                    hit.key = capture_key(sig, re, value);
                    found = true;
                    break 'outer;
                }
            }
        }
        if !found {
            return None;
        }
    }
    for re in &sig.not_text {
        if re.is_match(&ev.message) || ev.fields.iter().any(|(_, v)| re.is_match(v)) {
            return None;
        }
    }
    for (name, re) in &sig.fields {
        let value = ev.field(name)?;
        if !re.is_match(value) {
            return None;
        }
        if hit.key.is_none() {
            hit.key = capture_key(sig, re, value);
        }
    }
    Some(hit)
}

fn capture_key(sig: &Signal, re: &Pattern, text: &str) -> Option<String> {
    let name = sig.key.as_deref()?;
    re.captures(text)
        .and_then(|c| c.name(name))
        .map(|m| m.as_str().to_string())
}

/// Compiled rules with their prefilter.
pub struct Engine {
    pub rules: Vec<Rule>,
    /// Flattened `(rule, signal)` for every signal.
    signals: Vec<(usize, usize)>,
    prefilter: Option<AhoCorasick>,
    /// For each literal of the automaton, the flattened signals it stands for.
    literal_targets: Vec<Vec<usize>>,
    /// Signals with no literal: checked on every event of their sources.
    unfiltered: Vec<usize>,
}

impl Engine {
    pub fn new(rules: Vec<Rule>) -> Engine {
        let mut signals = Vec::new();
        let mut literals: Vec<String> = Vec::new();
        let mut literal_targets: Vec<Vec<usize>> = Vec::new();
        let mut unfiltered = Vec::new();
        for (r, rule) in rules.iter().enumerate() {
            for (s, sig) in rule.signals.iter().enumerate() {
                let flat = signals.len();
                signals.push((r, s));
                if sig.literals.is_empty() {
                    unfiltered.push(flat);
                    continue;
                }
                for lit in &sig.literals {
                    match literals.iter().position(|l| l == lit) {
                        Some(i) => literal_targets[i].push(flat),
                        None => {
                            literals.push(lit.clone());
                            literal_targets.push(vec![flat]);
                        }
                    }
                }
            }
        }
        let prefilter = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            // A contiguous NFA: the engine looks at the records the sieve kept (hundreds
            // in a 1 GB bundle), and a DFA of these literals took a fifth of a small
            // bundle's start-up to build.
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .build(&literals)
            .ok();
        Engine {
            rules,
            signals,
            prefilter,
            literal_targets,
            unfiltered,
        }
    }

    /// Number of literals in the prefilter automaton.
    pub fn n_literals(&self) -> usize {
        self.literal_targets.len()
    }

    /// Finds every occurrence of every signal: `occurrences[rule][signal]`.
    pub fn scan(&self, events: &[Event]) -> Vec<Vec<Vec<Occurrence>>> {
        let mut occ: Vec<Vec<Vec<Occurrence>>> = self
            .rules
            .iter()
            .map(|r| vec![Vec::new(); r.signals.len()])
            .collect();
        let mut stamp = vec![usize::MAX; self.signals.len()];
        let mut candidates: Vec<usize> = Vec::new();
        for (idx, ev) in events.iter().enumerate() {
            candidates.clear();
            if let Some(ac) = &self.prefilter {
                let mut collect = |text: &str| {
                    for m in ac.find_overlapping_iter(text) {
                        if let Some(targets) = self.literal_targets.get(m.pattern().as_usize()) {
                            for &flat in targets {
                                if stamp[flat] != idx {
                                    stamp[flat] = idx;
                                    candidates.push(flat);
                                }
                            }
                        }
                    }
                };
                collect(&ev.message);
                for (_, v) in &ev.fields {
                    collect(v);
                }
            }
            candidates.extend(self.unfiltered.iter().copied());
            for &flat in &candidates {
                let (r, s) = self.signals[flat];
                let sig = &self.rules[r].signals[s];
                if let Some(hit) = signal_matches(sig, ev) {
                    occ[r][s].push(Occurrence {
                        event: idx,
                        ts: ev.ts.map(|t| t.micros),
                        weight: ev.weight(),
                        last: ev.last_micros(),
                        hit,
                    });
                }
            }
        }
        occ
    }

    /// Runs every rule over the events.
    pub fn run(&self, events: &[Event]) -> Vec<Finding> {
        let occ = self.scan(events);
        let end = events.iter().filter_map(Event::last_micros).max();
        let mut findings = Vec::new();
        for (r, rule) in self.rules.iter().enumerate() {
            if let Some(f) = evaluate(r, rule, &occ[r], end, events) {
                findings.push(f);
            }
        }
        findings
    }
}

/// Evidence lines kept per signal: the first few and the last few occurrences.
const EVIDENCE_HEAD: usize = 3;
const EVIDENCE_TAIL: usize = 2;

fn evaluate(
    r: usize,
    rule: &Rule,
    occ: &[Vec<Occurrence>],
    end: Option<Micros>,
    events: &[Event],
) -> Option<Finding> {
    // Every block that holds is a candidate; the one whose own confidence (or the rule's) is
    // highest wins, ties going to the earlier block.
    let mut best: Option<(f64, Finding)> = None;
    for block in &rule.when {
        let base = block.confidence.unwrap_or(rule.confidence);
        if best.as_ref().is_some_and(|(b, _)| *b >= base) {
            continue;
        }
        let mut evidence: Vec<EvidenceRef> = Vec::new();
        let mut holds = true;
        for clause in &block.clauses {
            match check_clause(rule, clause, occ, end, events) {
                Some(mut ev) => evidence.append(&mut ev),
                None => {
                    holds = false;
                    break;
                }
            }
        }
        if !holds {
            continue;
        }
        let mut confidence = base;
        for boost in &rule.boosts {
            if let Some(s) = rule.signal_index(&boost.signal) {
                if let Some(list) = occ.get(s).filter(|l| !l.is_empty()) {
                    confidence += boost.confidence;
                    evidence.extend(sample_evidence(s, list));
                }
            }
        }
        evidence.sort();
        evidence.dedup_by(|a, b| a.event == b.event);
        if evidence.is_empty() {
            // A cause without evidence lines is not reported.
            continue;
        }
        // Corroboration: evidence from several kinds of source.
        let mut kinds: Vec<_> = evidence
            .iter()
            .filter_map(|e| events.get(e.event).map(|ev| source_family(ev.kind)))
            .collect();
        kinds.sort();
        kinds.dedup();
        confidence += 0.04 * (kinds.len().saturating_sub(1) as f64).min(3.0);
        let confidence = (confidence.min(0.99) * 100.0).round() / 100.0;
        let template = block.summary.as_deref().unwrap_or(&rule.summary);
        let mut summary = fill_summary(rule, template, occ, &evidence, events);
        if let Some(note) = &block.note {
            summary = with_note(&summary, note);
        }
        best = Some((
            base,
            Finding {
                rule: r,
                evidence,
                confidence,
                summary,
                severity: None,
            },
        ));
    }
    best.map(|(_, f)| f)
}

/// The summary with a block's note after it, so the reader sees what the finding rests on.
fn with_note(summary: &str, note: &str) -> String {
    let s = summary.trim_end();
    let s = s.strip_suffix('.').unwrap_or(s);
    format!("{s} ({note})")
}

/// Groups source kinds that are really one source seen twice (a describe and its YAML).
fn source_family(kind: crate::event::SourceKind) -> u8 {
    use crate::event::SourceKind as K;
    match kind {
        K::Operator => 0,
        K::Dashboard | K::DashboardAgent => 1,
        K::ServeController | K::ServeProxy | K::ServeReplica | K::Worker => 2,
        K::Raylet | K::GcsServer | K::CoreWorker => 3,
        K::DescribeRayService | K::DescribeRayCluster | K::DescribeRayJob | K::KubeObject => 4,
        K::DescribePod | K::DescribeNode | K::DescribeOther => 5,
        K::KubeEvents => 6,
        _ => 7,
    }
}

fn sample_evidence(signal: usize, list: &[Occurrence]) -> Vec<EvidenceRef> {
    let mut out: Vec<EvidenceRef> = list
        .iter()
        .take(EVIDENCE_HEAD)
        .chain(list.iter().skip(EVIDENCE_HEAD).rev().take(EVIDENCE_TAIL))
        .map(|o| EvidenceRef {
            event: o.event,
            signal,
            field: o.hit.field,
        })
        .collect();
    out.sort();
    out
}

fn check_clause(
    rule: &Rule,
    clause: &Clause,
    occ: &[Vec<Occurrence>],
    end: Option<Micros>,
    events: &[Event],
) -> Option<Vec<EvidenceRef>> {
    let idx = |name: &str| rule.signal_index(name);
    match clause {
        Clause::Count {
            signal,
            at_least,
            within,
        } => {
            let s = idx(signal)?;
            let list = occ.get(s)?;
            if weight(list) < *at_least as u64 {
                return None;
            }
            match within {
                None => Some(sample_evidence(s, list)),
                Some(w) => first_window(list, *at_least, *w, events)
                    .map(|window| sample_evidence(s, &window)),
            }
        }
        Clause::Absent { signal } => {
            let s = idx(signal)?;
            occ.get(s)?.is_empty().then(Vec::new)
        }
        Clause::Span {
            signal,
            at_least,
            at_most,
            until_first,
        } => {
            let s = idx(signal)?;
            let mut list: Vec<Occurrence> = occ.get(s)?.clone();
            if let Some(boundary) = until_first {
                let first = occ.get(idx(boundary)?)?.iter().filter_map(|o| o.ts).min();
                if let Some(limit) = first {
                    list.retain(|o| o.ts.is_some_and(|t| t < limit));
                    // A fold that runs past the limit counts up to its first record only.
                    for o in &mut list {
                        if o.last.is_some_and(|t| t >= limit) {
                            o.last = o.ts;
                        }
                    }
                }
            }
            let list = &list;
            let lo = list.iter().filter_map(|o| o.ts).min()?;
            let hi = list.iter().filter_map(|o| o.last.or(o.ts)).max()?;
            let span = hi - lo;
            let ok =
                at_least.is_none_or(|min| span >= min) && at_most.is_none_or(|max| span <= max);
            ok.then(|| sample_evidence(s, list))
        }
        Clause::Sequence {
            first,
            then,
            within,
            join,
        } => {
            let (a, b) = (idx(first)?, idx(then)?);
            let (la, lb) = (occ.get(a)?, occ.get(b)?);
            // The first `then` that has a `first` before it (within the window); the `first`
            // shown is the latest such one.
            for (bi, ob) in lb.iter().enumerate() {
                let Some(tb) = ob.ts else { continue };
                let before = la.iter().filter(|oa| {
                    oa.ts
                        .is_some_and(|ta| ta <= tb && within.is_none_or(|w| tb - ta <= w))
                        && oa.event != ob.event
                        && (!join || (oa.hit.key.is_some() && oa.hit.key == ob.hit.key))
                });
                if let Some(oa) = before.max_by_key(|oa| (oa.ts, oa.event)) {
                    let ta = oa.ts.unwrap_or(tb);
                    let after: Vec<Occurrence> = lb[bi..]
                        .iter()
                        .filter(|o| {
                            o.ts.is_some_and(|t| t >= ta && within.is_none_or(|w| t - ta <= w))
                        })
                        .filter(|o| !join || o.hit.key == oa.hit.key)
                        .cloned()
                        .collect();
                    let mut ev = vec![EvidenceRef {
                        event: oa.event,
                        signal: a,
                        field: oa.hit.field,
                    }];
                    ev.extend(sample_evidence(b, &after));
                    return Some(ev);
                }
            }
            None
        }
        Clause::AbsentAfter {
            first,
            then,
            within,
            join,
        } => {
            let (a, b) = (idx(first)?, idx(then)?);
            let (la, lb) = (occ.get(a)?, occ.get(b)?);
            for oa in la {
                // A fold is judged by its last record: the one least likely to be followed.
                let Some(ta) = oa.last.or(oa.ts) else {
                    continue;
                };
                if let (Some(w), Some(end)) = (within, end) {
                    // The bundle must cover the whole window, or the absence is not shown.
                    if end < ta + w {
                        continue;
                    }
                }
                let followed = lb.iter().any(|ob| {
                    ob.ts
                        .is_some_and(|tb| tb >= ta && within.is_none_or(|w| tb - ta <= w))
                        && (!join || ob.hit.key == oa.hit.key)
                });
                if !followed {
                    return Some(vec![EvidenceRef {
                        event: oa.event,
                        signal: a,
                        field: oa.hit.field,
                    }]);
                }
            }
            None
        }
    }
}

/// The earliest `n` occurrences within `window` of each other, in time order. A fold counts
/// as its first and last record, and holds such a window alone when its records are dense
/// enough (`Repeat::dense`).
fn first_window(
    list: &[Occurrence],
    n: usize,
    window: Micros,
    events: &[Event],
) -> Option<Vec<Occurrence>> {
    let n = n.max(1);
    // (time, index in list), a fold giving two points.
    let mut points: Vec<(Micros, usize)> = Vec::with_capacity(list.len());
    let mut best: Option<(Micros, Vec<usize>)> = None;
    for (i, o) in list.iter().enumerate() {
        let Some(t) = o.ts else { continue };
        points.push((t, i));
        let Some(rep) = events.get(o.event).and_then(|e| e.repeat.as_deref()) else {
            continue;
        };
        if let Some(last) = o.last.filter(|l| *l > t) {
            points.push((last, i));
        }
        if rep.dense(n, window) && best.as_ref().is_none_or(|(b, _)| t < *b) {
            best = Some((t, vec![i]));
        }
    }
    points.sort_unstable();
    for win in points.windows(n) {
        let (Some(a), Some(b)) = (win.first(), win.last()) else {
            continue;
        };
        if best.as_ref().is_some_and(|(start, _)| *start <= a.0) {
            break;
        }
        if b.0 - a.0 <= window {
            let mut members: Vec<usize> = win.iter().map(|p| p.1).collect();
            members.sort_unstable();
            members.dedup();
            best = Some((a.0, members));
            break;
        }
    }
    best.map(|(_, members)| {
        members
            .iter()
            .filter_map(|&i| list.get(i).cloned())
            .collect()
    })
}

/// Stands in the filled text for a placeholder the bundle gave no value (a time of lines
/// without one, a key that was not captured), until its clause is dropped.
const UNFILLED: char = '\u{1}';

/// Fills `{count:sig}`, `{first:sig}`, `{last:sig}`, `{span:sig}`, `{key:sig}` and
/// `{keys:sig}` in a summary template (the rule's, or the block's). Unknown placeholders are
/// left as written. A placeholder the bundle gives no value drops its clause (from the `,`,
/// `;` or `:` before it to the next one, or the end): a summary never says `?`.
fn fill_summary(
    rule: &Rule,
    template: &str,
    occ: &[Vec<Occurrence>],
    evidence: &[EvidenceRef],
    events: &[Event],
) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let token = &after[..close];
        match placeholder(rule, occ, evidence, events, token) {
            Some(Some(v)) => out.push_str(&v),
            Some(None) => out.push(UNFILLED),
            None => {
                out.push('{');
                out.push_str(token);
                out.push('}');
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    drop_unfilled(&out)
}

/// Removes the clause of every unfilled placeholder: from the `,`, `;` or `:` before it to
/// the next such mark or the end; in a first clause, from the word that leads to it (`from`,
/// `between`, `since`, …), or else the placeholder alone.
fn drop_unfilled(filled: &str) -> String {
    const LEADS: [&str; 9] = [
        " from ",
        " between ",
        " since ",
        " at ",
        " until ",
        " after ",
        " before ",
        " to ",
        " in ",
    ];
    if !filled.contains(UNFILLED) {
        return filled.to_string();
    }
    let mut s = filled.to_string();
    while let Some(at) = s.find(UNFILLED) {
        let is_mark = |c: char| matches!(c, ',' | ';' | ':');
        // Inside parentheses (`(FIRST .. LAST)`), the group goes whole.
        let open = s[..at].rfind('(').filter(|&o| !s[o..at].contains(')'));
        if let Some(open) = open {
            let close = s[at..].find(')').map_or(s.len(), |n| at + n + 1);
            let from = if s[..open].ends_with(' ') {
                open - 1
            } else {
                open
            };
            s.replace_range(from..close, "");
            continue;
        }
        let end = s[at..].find(is_mark).map_or(s.len(), |n| at + n);
        let mut start = s[..at]
            .rfind(is_mark)
            .or_else(|| LEADS.iter().filter_map(|w| s[..at].rfind(w)).max());
        // `…; first error: VALUE`: the label goes with its value.
        if let Some(st) = start.filter(|&st| s[st..].starts_with(':')) {
            start = s[..st].rfind([',', ';']).or(Some(st));
        }
        match start {
            Some(start) => s.replace_range(start..end, ""),
            None => s.replace_range(at..at + UNFILLED.len_utf8(), ""),
        }
    }
    s.trim_end().to_string()
}

/// Counts and keys come from every occurrence; times come from the evidence of the finding
/// when the signal has some (so that they describe the episode shown), else from every
/// occurrence.
fn placeholder(
    rule: &Rule,
    occ: &[Vec<Occurrence>],
    evidence: &[EvidenceRef],
    events: &[Event],
    token: &str,
) -> Option<Option<String>> {
    let (what, signal) = token.split_once(':')?;
    let sig_idx = rule.signal_index(signal)?;
    let list = occ.get(sig_idx)?;
    let mut times: Vec<Micros> = evidence
        .iter()
        .filter(|e| e.signal == sig_idx)
        .filter_map(|e| events.get(e.event))
        .flat_map(|ev| [ev.ts.map(|t| t.micros), ev.last_micros()])
        .flatten()
        .collect();
    let from_evidence = !times.is_empty();
    if !from_evidence {
        times = list.iter().flat_map(|o| [o.ts, o.last]).flatten().collect();
    }
    // The count covers the episode the evidence shows, not the whole bundle; when no
    // occurrence has a time in it (untimed lines), every occurrence: a rule that fired never
    // counts none.
    let episode: u64 = match (from_evidence, times.iter().min(), times.iter().max()) {
        (true, Some(lo), Some(hi)) => list
            .iter()
            .filter(|o| o.ts.is_some_and(|t| t >= *lo && t <= *hi))
            .map(|o| o.weight)
            .sum(),
        _ => 0,
    };
    let count = if episode > 0 { episode } else { weight(list) };
    Some(match what {
        "count" => Some(count.to_string()),
        "first" => times.iter().min().map(|t| crate::event::format_rfc3339(*t)),
        "last" => times.iter().max().map(|t| crate::event::format_rfc3339(*t)),
        "span" => match (times.iter().min(), times.iter().max()) {
            (Some(lo), Some(hi)) => Some(human(hi - lo)),
            _ => None,
        },
        "key" => list.iter().find_map(|o| o.hit.key.clone()),
        "keys" => {
            let mut keys: Vec<String> = list.iter().filter_map(|o| o.hit.key.clone()).collect();
            keys.sort();
            keys.dedup();
            let more = keys.len().saturating_sub(5);
            keys.truncate(5);
            let mut s = keys.join(", ");
            if more > 0 {
                s.push_str(&format!(" and {more} more"));
            }
            (!s.is_empty()).then_some(s)
        }
        _ => return None,
    })
}

/// `4m12s`-style duration.
pub fn human(micros: Micros) -> String {
    let secs = micros / crate::event::MICROS_PER_SEC;
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, secs % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn an_unfilled_placeholder_drops_its_clause() {
        let u = UNFILLED;
        assert_eq!(
            drop_unfilled(&format!("Disk full 1 time(s), from {u} to {u}")),
            "Disk full 1 time(s)"
        );
        assert_eq!(
            drop_unfilled(&format!("The operator panicked (2 time(s)): {u}")),
            "The operator panicked (2 time(s))"
        );
        assert_eq!(
            drop_unfilled(&format!("Refused since {u}; then up, at 10:00")),
            "Refused; then up, at 10:00"
        );
        assert_eq!(
            drop_unfilled(&format!("3 refusals between {u} and {u}")),
            "3 refusals"
        );
        assert_eq!(
            drop_unfilled("nothing to drop: a, b "),
            "nothing to drop: a, b "
        );
        assert_eq!(
            drop_unfilled(&format!(
                "1 call answered 404 ({u} .. {u}): the Ray version"
            )),
            "1 call answered 404: the Ray version"
        );
        assert_eq!(
            drop_unfilled(&format!("no app was deployed; first error: {u}")),
            "no app was deployed"
        );
    }

    use crate::event::SourceKind;
    use crate::rules::loader::load_rule;

    const RULE: &str = r###"code = "TST001"
id = "probe_failure"
name = "test"
severity = "error"
confidence = 0.8
title = "t"
summary = "boom seen {count:thin} times."
doc = "## What it detects\nx\n## Why it matters\nx\n## Evidence shown\nx\n## Remediation\nx\n## References\nx\n"

[[signal]]
name = "many"
sources = ["operator"]
text = ['boom']

[[signal]]
name = "thin"
sources = ["operator", "unknown"]
text = ['boom']

[[signal]]
name = "extra"
text = ['bang']

[[when]]
all = [{ count = "many", at_least = 3 }]

[[when]]
all = [{ count = "thin", at_least = 1 }]
confidence = 0.5
note = "one line only"

[[when]]
all = [{ count = "extra", at_least = 2 }]
confidence = 0.4
summary = "bang twice: {count:extra}"

[[boost]]
signal = "extra"
confidence = 0.1

[[sample]]
signal = "many"
text = "boom"

[[sample]]
signal = "thin"
text = "boom"

[[sample]]
signal = "extra"
text = "bang"
"###;

    fn events(lines: &[(SourceKind, &str)]) -> Vec<Event> {
        lines
            .iter()
            .enumerate()
            .map(|(i, (kind, text))| {
                let mut ev = Event::new(i as u32 + 1, *text);
                ev.kind = *kind;
                ev
            })
            .collect()
    }

    fn run(lines: &[(SourceKind, &str)]) -> Vec<Finding> {
        let rule = load_rule("t.toml", RULE).unwrap();
        Engine::new(vec![rule]).run(&events(lines))
    }

    #[test]
    fn thin_block_sets_confidence_and_appends_note() {
        let f = run(&[(SourceKind::Unknown, "boom")]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].confidence, 0.5);
        assert_eq!(f[0].summary, "boom seen 1 times (one line only)");
    }

    #[test]
    fn boosts_add_to_a_block_confidence() {
        let f = run(&[(SourceKind::Unknown, "boom"), (SourceKind::Unknown, "bang")]);
        assert_eq!(f[0].confidence, 0.6);
    }

    #[test]
    fn the_block_with_the_highest_confidence_wins() {
        let k = SourceKind::Operator;
        let f = run(&[(k, "boom"), (k, "boom"), (k, "boom")]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].confidence, 0.8);
        assert_eq!(f[0].summary, "boom seen 3 times.");
    }

    #[test]
    fn a_block_summary_replaces_the_rule_summary() {
        let k = SourceKind::Raylet;
        let f = run(&[(k, "bang"), (k, "bang")]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].summary, "bang twice: 2");
    }

    #[test]
    fn no_block_holds_no_finding() {
        assert!(run(&[(SourceKind::Raylet, "boom")]).is_empty());
    }

    /// A storm folded into one event: `count` records two seconds apart from `start`.
    fn folded(line: u32, start_secs: i64, count: u64, text: &str) -> Event {
        use crate::event::{RawTime, Repeat, Timestamp, TsQuality};
        let t = |s: i64| s * 1_000_000;
        let mut ev = Event::new(line, text);
        ev.kind = SourceKind::Operator;
        ev.ts = Some(Timestamp {
            micros: t(start_secs),
            quality: TsQuality::Exact,
        });
        let mut rep = Repeat::single(line, RawTime::Utc(t(start_secs)), t(start_secs));
        for i in 1..count as i64 {
            let at = t(start_secs + 2 * i);
            rep.extend(&Repeat::single(line + i as u32, RawTime::Utc(at), at));
        }
        rep.last = Some(t(start_secs + 2 * (count as i64 - 1)));
        ev.repeat = Some(Box::new(rep));
        ev
    }

    #[test]
    fn a_fold_counts_as_every_record_it_stands_for() {
        let rule = r###"code = "TST002"
id = "probe_failure"
name = "test"
severity = "error"
confidence = 0.8
title = "t"
summary = "{count:boom} over {span:boom}"
doc = "## What it detects\nx\n## Why it matters\nx\n## Evidence shown\nx\n## Remediation\nx\n## References\nx\n"

[[signal]]
name = "boom"
sources = ["operator"]
text = ['boom']

[[when]]
all = [{ count = "boom", at_least = 5, within = "10s" }]

[[sample]]
signal = "boom"
text = "boom"
"###;
        let engine = Engine::new(vec![load_rule("t.toml", rule).unwrap()]);
        // 1000 records two seconds apart: five lie within eight seconds.
        let found = engine.run(&[folded(1, 0, 1000, "boom")]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].summary, "1000 over 33m18s");
        // Ten seconds apart: never five within ten seconds, however many.
        let mut sparse = folded(1, 0, 3, "boom");
        if let Some(r) = &mut sparse.repeat {
            r.min_span = [20_000_000; crate::event::REPEAT_SPANS];
        }
        assert!(engine.run(&[sparse]).is_empty());
    }
}
