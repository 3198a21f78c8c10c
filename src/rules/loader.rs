//! Turning pattern files into validated rules. Every error names the file and the key
//! (`patterns/DSH004-….toml: signal[1].text[0]: …`), and every sample line is checked against
//! its signal, so that a pattern cannot silently drift from the lines it was written for.

use std::collections::BTreeSet;

use serde::Deserialize;

use crate::event::{Event, Level, Micros, SourceKind, MICROS_PER_SEC};
use crate::parse::primitives::human_duration;
use crate::rules::engine::signal_matches;
use crate::rules::literal::required_literals;
use crate::rules::{
    Boost, Clause, Pattern, Rule, RuleCode, Sample, Severity, Signal, SourceFilter, When,
    DOC_HEADINGS,
};

/// A pattern file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub origin: String,
    pub key: String,
    /// The line of the key (or of the syntax error) in the file, from 1, when known.
    pub line: Option<usize>,
    pub problem: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.problem)
    }
}

impl std::error::Error for LoadError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    code: String,
    id: String,
    name: String,
    severity: String,
    confidence: f64,
    title: String,
    summary: String,
    doc: String,
    #[serde(default)]
    explains: Vec<String>,
    #[serde(default)]
    remediation: Vec<String>,
    #[serde(default)]
    references: Vec<String>,
    #[serde(default, rename = "signal")]
    signals: Vec<RawSignal>,
    #[serde(default)]
    when: Vec<RawWhen>,
    #[serde(default, rename = "boost")]
    boosts: Vec<RawBoost>,
    #[serde(default, rename = "sample")]
    samples: Vec<RawSample>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignal {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    text: Vec<String>,
    #[serde(default)]
    not_text: Vec<String>,
    #[serde(default)]
    fields: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    case_sensitive: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWhen {
    all: Vec<RawClause>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClause {
    #[serde(default)]
    count: Option<String>,
    #[serde(default)]
    absent: Option<String>,
    #[serde(default)]
    sequence: Option<Vec<String>>,
    #[serde(default)]
    absent_after: Option<Vec<String>>,
    #[serde(default)]
    span: Option<String>,
    #[serde(default)]
    at_least: Option<toml::Value>,
    #[serde(default)]
    at_most: Option<String>,
    #[serde(default)]
    within: Option<String>,
    #[serde(default)]
    join: bool,
    #[serde(default)]
    until_first: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoost {
    signal: String,
    confidence: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSample {
    signal: String,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    fields: std::collections::BTreeMap<String, String>,
    #[serde(default = "yes")]
    matches: bool,
}

fn yes() -> bool {
    true
}

/// Parses and validates one pattern file, every sample line included; the first problem.
pub fn load_rule(origin: &str, text: &str) -> Result<Rule, LoadError> {
    first(load_rule_with(origin, text, true))
}

/// Parses and validates one pattern file, every sample line included, and reports every
/// problem it finds (`check-patterns`, `--patterns`), each with its key and line.
pub fn check_rule(origin: &str, text: &str) -> Result<Rule, Vec<LoadError>> {
    load_rule_with(origin, text, true)
}

/// Parses and validates one pattern file but neither compiles its regexes (each waits for its
/// first line, [`Pattern::deferred`]) nor runs its sample lines: for the built-in library,
/// which the test suite loads checked (`library::builtin_checked`). Running some 640 samples
/// at every start cost a fifth of `analyze`'s memory (each regex keeps the cache its first
/// match built), and compiling some 700 regexes about 0.1 s, for no new information.
pub fn load_rule_trusted(origin: &str, text: &str) -> Result<Rule, LoadError> {
    first(load_rule_with(origin, text, false))
}

fn first(r: Result<Rule, Vec<LoadError>>) -> Result<Rule, LoadError> {
    r.map_err(|mut all| {
        if all.is_empty() {
            all.push(LoadError {
                origin: String::new(),
                key: String::new(),
                line: None,
                problem: "invalid".into(),
            });
        }
        all.swap_remove(0)
    })
}

/// The problems of one file, gathered so that one run reports them all.
struct Problems<'a> {
    origin: &'a str,
    list: Vec<LoadError>,
}

impl Problems<'_> {
    fn add(&mut self, key: impl Into<String>, problem: impl Into<String>) {
        self.list.push(LoadError {
            origin: self.origin.to_string(),
            key: key.into(),
            line: None,
            problem: problem.into(),
        });
    }

    /// The problems, each given the line of its key in `text`.
    fn into_lines(self, text: &str) -> Vec<LoadError> {
        let doc = toml_edit::ImDocument::parse(text).ok();
        self.list
            .into_iter()
            .map(|mut e| {
                if e.line.is_none() {
                    e.line = doc.as_ref().and_then(|d| key_line(text, d, &e.key));
                }
                e
            })
            .collect()
    }
}

/// `checked`: compile every regex now and run the sample lines (a user's file); else both wait
/// (the built-in library, which the test suite loads checked).
fn load_rule_with(origin: &str, text: &str, checked: bool) -> Result<Rule, Vec<LoadError>> {
    let (raw, unknown) = parse_raw(origin, text)?;
    let mut p = Problems {
        origin,
        list: Vec::new(),
    };

    let code = RuleCode::parse(&raw.code);
    if code.is_none() {
        p.add(
            "code",
            format!("{:?} is not a rule code like DSH004", raw.code),
        );
    }
    if raw.id.is_empty()
        || !raw
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())
    {
        p.add(
            "id",
            format!("{:?} is not a snake_case catalogue id", raw.id),
        );
    }
    if !is_kebab_case(&raw.name) {
        p.add(
            "name",
            format!(
                "{:?} is not a kebab-case name (lower-case words joined by '-', such as \"serve-status-get-refused\")",
                raw.name
            ),
        );
    }
    let severity = Severity::parse(&raw.severity);
    if severity.is_none() {
        p.add(
            "severity",
            format!(
                "{:?} is not one of info, warning, error, critical",
                raw.severity
            ),
        );
    }
    if !(raw.confidence > 0.0 && raw.confidence <= 1.0) {
        p.add("confidence", format!("{} is not in (0, 1]", raw.confidence));
    }
    if raw.title.trim().is_empty() {
        p.add("title", "must not be empty");
    }
    if raw.summary.trim().is_empty() {
        p.add("summary", "must not be empty");
    }
    if let Err(e) = check_doc(&raw.doc) {
        p.add("doc", e);
    }

    // Signals: every one is checked; `compiled[i]` is `None` for one that has problems.
    let mut compiled: Vec<Option<Signal>> = Vec::with_capacity(raw.signals.len());
    let mut names = BTreeSet::new();
    for (idx, s) in raw.signals.iter().enumerate() {
        let key = format!("signal[{idx}]");
        if !names.insert(s.name.clone()) {
            p.add(
                format!("{key}.name"),
                format!("signal {:?} is defined twice", s.name),
            );
        }
        match compile_signal(s, checked) {
            Ok(sig) => compiled.push(Some(sig)),
            Err(errs) => {
                for (k, e) in errs {
                    p.add(format!("{key}.{k}"), e);
                }
                compiled.push(None);
            }
        }
    }
    if raw.signals.is_empty() {
        p.add("signal", "a rule needs at least one [[signal]]");
    }
    check_placeholders(&mut p, "summary", &raw.summary, &names);

    let mut when = Vec::with_capacity(raw.when.len());
    for (w_idx, w) in raw.when.iter().enumerate() {
        let mut clauses = Vec::with_capacity(w.all.len());
        for (c_idx, c) in w.all.iter().enumerate() {
            let key = format!("when[{w_idx}].all[{c_idx}]");
            match compile_clause(c) {
                Ok(clause) => {
                    for s in clause.signals() {
                        if !names.contains(s) {
                            p.add(
                                &key,
                                format!("names signal {s:?}, which the rule does not define"),
                            );
                        }
                    }
                    clauses.push(clause);
                }
                Err(e) => p.add(&key, e),
            }
        }
        if w.all.is_empty() {
            p.add(format!("when[{w_idx}].all"), "needs at least one clause");
        }
        if let Some(c) = w.confidence {
            if !(c > 0.0 && c <= 1.0) {
                p.add(
                    format!("when[{w_idx}].confidence"),
                    format!("{c} is not in (0, 1]"),
                );
            }
        }
        if w.note.as_deref().is_some_and(|n| n.trim().is_empty()) {
            p.add(format!("when[{w_idx}].note"), "must not be empty");
        }
        match w.summary.as_deref() {
            Some(sm) if sm.trim().is_empty() => {
                p.add(format!("when[{w_idx}].summary"), "must not be empty");
            }
            Some(sm) => check_placeholders(&mut p, &format!("when[{w_idx}].summary"), sm, &names),
            None => {}
        }
        when.push(When {
            clauses,
            confidence: w.confidence,
            summary: w.summary.as_ref().map(|n| n.trim().to_string()),
            note: w.note.as_ref().map(|n| n.trim().to_string()),
        });
    }
    if raw.when.is_empty() {
        p.add("when", "a rule needs at least one [[when]] with clauses");
    }

    let mut boosts = Vec::new();
    for (idx, b) in raw.boosts.iter().enumerate() {
        if !names.contains(&b.signal) {
            p.add(
                format!("boost[{idx}].signal"),
                format!("no signal named {:?}", b.signal),
            );
        }
        if !(0.0..=0.5).contains(&b.confidence) {
            p.add(
                format!("boost[{idx}].confidence"),
                "must be between 0 and 0.5",
            );
        }
        boosts.push(Boost {
            signal: b.signal.clone(),
            confidence: b.confidence,
        });
    }

    // Every signal is used by a clause or a boost.
    for (idx, s) in raw.signals.iter().enumerate() {
        let used = when
            .iter()
            .flat_map(|w| &w.clauses)
            .any(|c| c.signals().contains(&s.name.as_str()))
            || boosts.iter().any(|b| b.signal == s.name);
        if !used {
            p.add(
                format!("signal[{idx}].name"),
                format!("signal {:?} is used by no clause or boost", s.name),
            );
        }
    }

    let samples = check_samples_of(&mut p, &raw, &compiled, checked);
    for (idx, s) in raw.signals.iter().enumerate() {
        if !samples.iter().any(|x| x.signal == s.name && x.matches) {
            p.add(
                format!("signal[{idx}].name"),
                format!("signal {:?} has no sample line that matches it", s.name),
            );
        }
    }

    let signals: Vec<Signal> = compiled.into_iter().flatten().collect();
    match (code, severity) {
        (Some(code), Some(severity)) if p.list.is_empty() && unknown.is_empty() => Ok(Rule {
            code,
            id: raw.id,
            name: raw.name,
            severity,
            confidence: raw.confidence,
            title: raw.title,
            summary: raw.summary,
            doc: raw.doc,
            explains: raw.explains,
            remediation: raw.remediation,
            references: raw.references,
            signals,
            when,
            boosts,
            samples,
            origin: origin.to_string(),
        }),
        _ => Err(unknown.into_iter().chain(p.into_lines(text)).collect()),
    }
}

/// The file as TOML of the expected shape, and its unknown keys (each named, with its line;
/// the rest of the file is still checked without them). A syntax error or a value of the
/// wrong type stops there: nothing after it can be trusted.
fn parse_raw(origin: &str, text: &str) -> Result<(RawRule, Vec<LoadError>), Vec<LoadError>> {
    let at = |e: &toml::de::Error| {
        e.span().map(|s| {
            text.get(..s.start)
                .map_or(1, |t| t.matches('\n').count() + 1)
        })
    };
    let fail = |e: toml::de::Error| {
        vec![LoadError {
            origin: origin.to_string(),
            key: String::new(),
            line: at(&e),
            problem: e.message().to_string(),
        }]
    };
    let mut table: toml::Table = toml::from_str(text).map_err(fail)?;
    let mut p = Problems {
        origin,
        list: Vec::new(),
    };
    unknown_keys(&mut p, &mut table);
    if p.list.is_empty() {
        // Parsed from the text, a type error keeps its place in the file.
        return toml::from_str::<RawRule>(text)
            .map(|raw| (raw, Vec::new()))
            .map_err(fail);
    }
    let unknown = p.into_lines(text);
    match toml::Value::Table(table).try_into::<RawRule>() {
        Ok(raw) => Ok((raw, unknown)),
        Err(e) => Err(unknown.into_iter().chain(fail(e)).collect()),
    }
}

/// The keys each table of a pattern file may hold (what `RawRule` and its parts accept).
const TOP_KEYS: &[&str] = &[
    "code",
    "id",
    "name",
    "severity",
    "confidence",
    "title",
    "summary",
    "doc",
    "explains",
    "remediation",
    "references",
    "signal",
    "when",
    "boost",
    "sample",
];
const SIGNAL_KEYS: &[&str] = &[
    "name",
    "description",
    "sources",
    "level",
    "text",
    "not_text",
    "fields",
    "key",
    "case_sensitive",
];
const WHEN_KEYS: &[&str] = &["all", "confidence", "summary", "note"];
const CLAUSE_KEYS: &[&str] = &[
    "count",
    "absent",
    "sequence",
    "absent_after",
    "span",
    "at_least",
    "at_most",
    "within",
    "join",
    "until_first",
];
const BOOST_KEYS: &[&str] = &["signal", "confidence"];
const SAMPLE_KEYS: &[&str] = &["signal", "source", "level", "text", "fields", "matches"];

/// Names every key the file holds that no table of a pattern file knows, and removes it.
fn unknown_keys(p: &mut Problems, top: &mut toml::Table) {
    let check = |p: &mut Problems, prefix: &str, t: &mut toml::Table, known: &[&str]| {
        let unknown: Vec<String> = t
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in unknown {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            p.add(
                key,
                format!("unknown key {k:?} (known here: {})", known.join(", ")),
            );
            t.remove(&k);
        }
    };
    check(p, "", top, TOP_KEYS);
    for (name, known) in [
        ("signal", SIGNAL_KEYS),
        ("when", WHEN_KEYS),
        ("boost", BOOST_KEYS),
        ("sample", SAMPLE_KEYS),
    ] {
        let tables = top.get_mut(name).and_then(toml::Value::as_array_mut);
        for (i, t) in tables.into_iter().flatten().enumerate() {
            let Some(t) = t.as_table_mut() else { continue };
            check(p, &format!("{name}[{i}]"), t, known);
            if name != "when" {
                continue;
            }
            let clauses = t.get_mut("all").and_then(toml::Value::as_array_mut);
            for (j, c) in clauses.into_iter().flatten().enumerate() {
                if let Some(c) = c.as_table_mut() {
                    check(p, &format!("when[{i}].all[{j}]"), c, CLAUSE_KEYS);
                }
            }
        }
    }
}

/// Runs the sample lines against their signals (when `run`), naming each that fails.
fn check_samples_of(
    p: &mut Problems,
    raw: &RawRule,
    compiled: &[Option<Signal>],
    run: bool,
) -> Vec<Sample> {
    let mut samples = Vec::new();
    for (idx, s) in raw.samples.iter().enumerate() {
        let key = format!("sample[{idx}]");
        let Some(sig_idx) = raw.signals.iter().position(|g| g.name == s.signal) else {
            p.add(
                format!("{key}.signal"),
                format!("no signal named {:?}", s.signal),
            );
            continue;
        };
        let signal = compiled.get(sig_idx).and_then(Option::as_ref);
        let source = match &s.source {
            Some(name) => match SourceKind::from_name(name) {
                Some(k) => k,
                None => {
                    p.add(
                        format!("{key}.source"),
                        format!("{name:?} is not a source kind"),
                    );
                    continue;
                }
            },
            None => match signal.map(|g| &g.sources) {
                Some(SourceFilter::Kinds(kinds)) => {
                    kinds.first().copied().unwrap_or(SourceKind::Unknown)
                }
                _ => SourceKind::Unknown,
            },
        };
        let level = match &s.level {
            Some(l) => match Level::parse(l) {
                Some(l) => l,
                None => {
                    p.add(format!("{key}.level"), format!("{l:?} is not a level"));
                    continue;
                }
            },
            None => Level::Critical,
        };
        let sample = Sample {
            signal: s.signal.clone(),
            source,
            text: s.text.clone(),
            fields: s
                .fields
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            matches: s.matches,
        };
        // A signal with problems of its own has been named already: its samples cannot run.
        if let (true, Some(signal)) = (run, signal) {
            let mut ev = Event::new(1, sample.text.clone());
            ev.kind = sample.source;
            ev.level = level;
            ev.fields = sample
                .fields
                .iter()
                .map(|(k, v)| (k.as_str().into(), v.as_str().into()))
                .collect();
            if signal_matches(signal, &ev).is_some() != sample.matches {
                let want = if sample.matches { "match" } else { "not match" };
                p.add(
                    &key,
                    format!(
                        "sample should {want} signal {:?} but does not: {:?}",
                        s.signal, s.text
                    ),
                );
            }
        }
        samples.push(sample);
    }
    samples
}

/// What a summary placeholder may ask of a signal (`engine::fill_summary`).
const PLACEHOLDERS: [&str; 6] = ["count", "first", "last", "span", "key", "keys"];

/// Every `{what:signal}` of a summary must ask for a known value of a defined signal: an
/// unknown one would be printed as written in every report.
fn check_placeholders(p: &mut Problems, key: &str, summary: &str, names: &BTreeSet<String>) {
    let mut rest = summary;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let token = &after[..close];
        rest = &after[close + 1..];
        let Some((what, signal)) = token.split_once(':') else {
            p.add(
                key,
                format!(
                    "{{{token}}} is not a placeholder like {{count:signal}} ({})",
                    PLACEHOLDERS.join(", ")
                ),
            );
            continue;
        };
        if !PLACEHOLDERS.contains(&what) {
            p.add(
                key,
                format!(
                    "{{{token}}}: {what:?} is not one of {}",
                    PLACEHOLDERS.join(", ")
                ),
            );
        }
        if !names.contains(signal) {
            p.add(
                key,
                format!("{{{token}}} names signal {signal:?}, which the rule does not define"),
            );
        }
    }
}

/// Lower-case ASCII words of letters and digits joined by single hyphens.
pub fn is_kebab_case(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The line (from 1) of a problem's key in the file: `signal[1].text[0]` is the line of the
/// second `[[signal]]`'s first `text` regex; a key that is not in the file (a missing one)
/// gives the line of its nearest table.
fn key_line(text: &str, doc: &toml_edit::ImDocument<&str>, key: &str) -> Option<usize> {
    use toml_edit::{Item, Table, TableLike, Value};
    enum Node<'a> {
        Item(&'a Item),
        Table(&'a Table),
        Value(&'a Value),
    }
    let mut node = Node::Table(doc.as_table());
    let mut span: Option<std::ops::Range<usize>> = None;
    for part in key.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let table: Option<&dyn TableLike> = match &node {
            Node::Item(i) => i.as_table_like(),
            Node::Table(t) => Some(*t as &dyn TableLike),
            Node::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
        };
        let Some((k, item)) = table.and_then(|t| t.get_key_value(name)) else {
            break;
        };
        span = k.span().or_else(|| item.span()).or(span);
        node = Node::Item(item);
        let Some(i) = index else { continue };
        match item {
            Item::ArrayOfTables(a) => match a.get(i) {
                Some(t) => {
                    span = t.span().or(span);
                    node = Node::Table(t);
                }
                None => break,
            },
            Item::Value(Value::Array(a)) => match a.get(i) {
                Some(v) => {
                    span = v.span().or(span);
                    node = Node::Value(v);
                }
                None => break,
            },
            _ => break,
        }
    }
    let start = span?.start;
    Some(text.get(..start).map_or(1, |t| t.matches('\n').count() + 1))
}

/// The doc must have every heading, in order, each followed by some text.
pub fn check_doc(doc: &str) -> Result<(), String> {
    let mut pos = 0usize;
    let mut starts = Vec::new();
    for h in DOC_HEADINGS {
        match doc.get(pos..).and_then(|rest| rest.find(h)) {
            Some(i) => {
                starts.push(pos + i);
                pos += i + h.len();
            }
            None => {
                return Err(format!(
                    "missing heading {h:?} (headings must appear in this order: {})",
                    DOC_HEADINGS.join(", ")
                ))
            }
        }
    }
    for (i, h) in DOC_HEADINGS.iter().enumerate() {
        let body_start = starts[i] + h.len();
        let body_end = starts.get(i + 1).copied().unwrap_or(doc.len());
        if doc
            .get(body_start..body_end)
            .is_none_or(|b| b.trim().is_empty())
        {
            return Err(format!("heading {h:?} has no text under it"));
        }
    }
    Ok(())
}

/// Compiles `pattern` now (`eager`: its errors are reported as the file's), or leaves it for
/// its first use ([`Pattern::deferred`]).
fn pattern(pattern: &str, case_sensitive: bool, eager: bool) -> Result<Pattern, String> {
    if !eager {
        return Ok(Pattern::deferred(pattern, case_sensitive));
    }
    Pattern::compile(pattern, case_sensitive).map_err(|e| {
        // The regex crate's message draws a caret under the pattern over several lines;
        // a problem is one line, so keep its last line, the reason.
        let msg = e.to_string();
        let why = msg
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        let why = why.trim().strip_prefix("error: ").unwrap_or(why.trim());
        format!("bad regex {pattern:?}: {why}")
    })
}

/// `eager`: compile the signal's regexes now, and check that its key is captured.
fn compile_signal(s: &RawSignal, eager: bool) -> Result<Signal, Vec<(String, String)>> {
    let mut errs: Vec<(String, String)> = Vec::new();
    if s.name.is_empty() {
        errs.push(("name".into(), "must not be empty".into()));
    }
    let sources = if s.sources.is_empty() || s.sources.iter().any(|x| x == "*") {
        SourceFilter::Any
    } else {
        let mut kinds = Vec::new();
        for (i, pat) in s.sources.iter().enumerate() {
            let matched: Vec<SourceKind> = SourceKind::ALL
                .into_iter()
                .filter(|k| crate::glob::source_matches(pat, "", k.as_str()))
                .collect();
            if matched.is_empty() {
                errs.push((
                    format!("sources[{i}]"),
                    format!("{pat:?} matches no source kind"),
                ));
            }
            kinds.extend(matched);
        }
        kinds.sort();
        kinds.dedup();
        SourceFilter::Kinds(kinds)
    };
    let min_level = match &s.level {
        Some(l) => {
            let level = Level::parse(l);
            if level.is_none() {
                errs.push(("level".to_string(), format!("{l:?} is not a level")));
            }
            level
        }
        None => None,
    };
    let mut compile = |key: String, p: &str| match pattern(p, s.case_sensitive, eager) {
        Ok(r) => Some(r),
        Err(e) => {
            errs.push((key, e));
            None
        }
    };
    let text: Vec<Pattern> = s
        .text
        .iter()
        .enumerate()
        .filter_map(|(i, p)| compile(format!("text[{i}]"), p))
        .collect();
    let not_text: Vec<Pattern> = s
        .not_text
        .iter()
        .enumerate()
        .filter_map(|(i, p)| compile(format!("not_text[{i}]"), p))
        .collect();
    let fields: Vec<(String, Pattern)> = s
        .fields
        .iter()
        .filter_map(|(k, p)| compile(format!("fields.{k}"), p).map(|r| (k.clone(), r)))
        .collect();
    if s.text.is_empty() && s.fields.is_empty() {
        errs.push((
            "text".into(),
            "a signal needs `text` regexes or `fields` conditions".into(),
        ));
    }
    if let Some(key) = s.key.as_ref().filter(|_| eager) {
        let captured = text
            .iter()
            .chain(fields.iter().map(|(_, r)| r))
            .filter_map(Pattern::regex)
            .any(|r| r.capture_names().flatten().any(|n| n == key));
        if !captured {
            errs.push((
                "key".into(),
                format!("no regex of the signal has a capture group named {key:?}"),
            ));
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    // Prefilter literals: from the text regexes (any of them), else from the field regexes
    // (all must hold, so any one field's literals will do).
    let literals = if !text.is_empty() {
        let mut all = Vec::new();
        let mut complete = true;
        for p in &s.text {
            let lits = required_literals(p);
            if lits.is_empty() {
                complete = false;
                break;
            }
            all.extend(lits);
        }
        if complete {
            all
        } else {
            Vec::new()
        }
    } else {
        s.fields
            .values()
            .map(|p| required_literals(p))
            .filter(|l| !l.is_empty())
            .max_by_key(|l| l.iter().map(String::len).min().unwrap_or(0))
            .unwrap_or_default()
    };
    Ok(Signal {
        name: s.name.clone(),
        sources,
        min_level,
        text,
        not_text,
        fields,
        literals,
        key: s.key.clone(),
        description: s.description.clone(),
    })
}

fn duration(s: &str) -> Result<Micros, String> {
    match human_duration(s.trim()) {
        Ok(("", secs)) => Ok(secs * MICROS_PER_SEC),
        _ => Err(format!("{s:?} is not a duration like 90s, 5m, 1h30m")),
    }
}

fn compile_clause(c: &RawClause) -> Result<Clause, String> {
    let within = c.within.as_deref().map(duration).transpose()?;
    let forms = [
        c.count.is_some(),
        c.absent.is_some(),
        c.sequence.is_some(),
        c.absent_after.is_some(),
        c.span.is_some(),
    ];
    if forms.iter().filter(|f| **f).count() != 1 {
        return Err(
            "a clause needs exactly one of count, absent, sequence, absent_after, span".into(),
        );
    }
    let pair = |v: &Vec<String>, what: &str| -> Result<(String, String), String> {
        match v.as_slice() {
            [a, b] => Ok((a.clone(), b.clone())),
            _ => Err(format!(
                "{what} takes two signal names: [\"first\", \"then\"]"
            )),
        }
    };
    if let Some(signal) = &c.count {
        let at_least = match &c.at_least {
            None => 1,
            Some(toml::Value::Integer(n)) if *n >= 1 => *n as usize,
            Some(other) => {
                return Err(format!(
                    "count: at_least must be a positive integer, not {other}"
                ))
            }
        };
        return Ok(Clause::Count {
            signal: signal.clone(),
            at_least,
            within,
        });
    }
    if let Some(signal) = &c.absent {
        return Ok(Clause::Absent {
            signal: signal.clone(),
        });
    }
    if let Some(v) = &c.sequence {
        let (first, then) = pair(v, "sequence")?;
        return Ok(Clause::Sequence {
            first,
            then,
            within,
            join: c.join,
        });
    }
    if let Some(v) = &c.absent_after {
        let (first, then) = pair(v, "absent_after")?;
        return Ok(Clause::AbsentAfter {
            first,
            then,
            within,
            join: c.join,
        });
    }
    if let Some(signal) = &c.span {
        let at_least = match &c.at_least {
            None => None,
            Some(toml::Value::String(s)) => Some(duration(s)?),
            Some(other) => {
                return Err(format!(
                    "span: at_least must be a duration string, not {other}"
                ))
            }
        };
        let at_most = c.at_most.as_deref().map(duration).transpose()?;
        if at_least.is_none() && at_most.is_none() {
            return Err("span needs at_least or at_most".into());
        }
        return Ok(Clause::Span {
            signal: signal.clone(),
            at_least,
            at_most,
            until_first: c.until_first.clone(),
        });
    }
    Err("empty clause".into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    const DOC: &str = "## What it detects\\nx\\n## Why it matters\\nx\\n## Evidence shown\\nx\\n## Remediation\\nx\\n## References\\nx\\n";

    fn rule_with(when: &str) -> String {
        format!(
            r#"code = "TST001"
id = "probe_failure"
name = "test"
severity = "error"
confidence = 0.8
title = "t"
summary = "s"
doc = "{DOC}"

[[signal]]
name = "a"
text = ['boom']

[[sample]]
signal = "a"
text = "boom"

{when}
"#
        )
    }

    #[test]
    fn when_keys_are_optional() {
        let r = load_rule("t.toml", &rule_with("[[when]]\nall = [{ count = \"a\" }]")).unwrap();
        assert_eq!(r.when.len(), 1);
        assert_eq!(r.when[0].confidence, None);
        assert_eq!(r.when[0].note, None);
    }

    #[test]
    fn when_confidence_and_note_load() {
        let r = load_rule(
            "t.toml",
            &rule_with(
                "[[when]]\nall = [{ count = \"a\" }]\nconfidence = 0.5\nnote = \" one pasted line only \"",
            ),
        )
        .unwrap();
        assert_eq!(r.when[0].confidence, Some(0.5));
        assert_eq!(r.when[0].note.as_deref(), Some("one pasted line only"));
    }

    #[test]
    fn when_confidence_out_of_range_is_refused() {
        for bad in ["0.0", "1.5", "-0.2"] {
            let e = load_rule(
                "t.toml",
                &rule_with(&format!(
                    "[[when]]\nall = [{{ count = \"a\" }}]\nconfidence = {bad}"
                )),
            )
            .unwrap_err();
            assert_eq!(e.key, "when[0].confidence", "{bad}: {e}");
        }
    }

    #[test]
    fn every_problem_of_a_file_is_reported_with_its_key_and_line() {
        let text =
            rule_with("[[when]]\nall = [{ count = \"a\" }, { absent = \"zz\" }]\nnote = \" \"")
                .replace(
                    "severity = \"error\"",
                    "severity = \"fatal\"\ncolour = \"red\"",
                )
                .replace("name = \"test\"", "name = \"Not Kebab\"")
                .replace(
                    "summary = \"s\"",
                    "summary = \"{count:a} then {count:nosuch} and {total:a}\"",
                )
                .replace("text = ['boom']", "text = ['boom', '(unclosed']");
        let errs = check_rule("t.toml", &text).unwrap_err();
        let got: Vec<(String, Option<usize>)> =
            errs.iter().map(|e| (e.key.clone(), e.line)).collect();
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map(|i| i + 1);
        for (key, line) in [
            ("colour", line_of("colour")),
            ("name", line_of("Not Kebab")),
            ("severity", line_of("fatal")),
            ("summary", line_of("nosuch")),
            ("signal[0].text[1]", line_of("(unclosed")),
            ("when[0].all[1]", line_of("absent")),
            ("when[0].note", line_of("note")),
        ] {
            assert!(
                got.contains(&(key.to_string(), line)),
                "{key} at {line:?} missing from {got:?}"
            );
        }
        // The summary's two bad placeholders are two problems; the good one is none.
        let summary: Vec<&LoadError> = errs.iter().filter(|e| e.key == "summary").collect();
        assert_eq!(summary.len(), 2, "{summary:?}");
        assert!(
            errs.iter().all(|e| !e.problem.contains('\n')),
            "one line each"
        );
        let shown = errs[0].to_string();
        assert!(shown.starts_with("t.toml:"), "{shown}");
    }

    #[test]
    fn names_are_kebab_case() {
        for good in ["serve-get-refused", "oom", "head-pod-v2"] {
            assert!(is_kebab_case(good), "{good}");
        }
        for bad in [
            "",
            "Serve",
            "serve_get",
            "serve--get",
            "-serve",
            "serve get",
        ] {
            assert!(!is_kebab_case(bad), "{bad}");
        }
    }

    #[test]
    fn empty_when_note_is_refused() {
        let e = load_rule(
            "t.toml",
            &rule_with("[[when]]\nall = [{ count = \"a\" }]\nnote = \"  \""),
        )
        .unwrap_err();
        assert_eq!(e.key, "when[0].note");
    }
}
