//! A pattern file read as TOML of the expected shape: `RawRule` and its parts, what serde
//! reads before any value is checked; and the file's unknown keys.
//!
//! Invariant: an unknown key is a problem that names it (with its line), and is removed so
//! that the rest of the file is still checked; a missing required key is a problem too, and
//! gets a stand-in so that the rest is still checked (what the stand-in raises is dropped); a
//! syntax error or a value of the wrong type stops there, as nothing after it can be trusted. The known keys of each table
//! (`TOP_KEYS`, `SIGNAL_KEYS`, …) are the fields of its `Raw…` struct: a new field needs its
//! key there too.

use serde::Deserialize;

use super::problems::{LoadError, Problems};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    pub(super) code: String,
    pub(super) id: String,
    pub(super) name: String,
    pub(super) severity: String,
    pub(super) confidence: f64,
    pub(super) title: String,
    pub(super) summary: String,
    pub(super) doc: String,
    #[serde(default)]
    pub(super) explains: Vec<String>,
    #[serde(default)]
    pub(super) remediation: Vec<String>,
    #[serde(default)]
    pub(super) references: Vec<String>,
    #[serde(default, rename = "signal")]
    pub(super) signals: Vec<RawSignal>,
    #[serde(default)]
    pub(super) when: Vec<RawWhen>,
    #[serde(default, rename = "boost")]
    pub(super) boosts: Vec<RawBoost>,
    #[serde(default, rename = "sample")]
    pub(super) samples: Vec<RawSample>,
    #[serde(default)]
    pub(super) known_issue: Option<RawKnownIssue>,
}

/// A known issue's `[known_issue]` table (`rules::known`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKnownIssue {
    pub(super) tracker: String,
    pub(super) number: u32,
    #[serde(default)]
    pub(super) kuberay: Option<String>,
    #[serde(default)]
    pub(super) ray: Option<String>,
    pub(super) fixed_in: String,
    pub(super) workaround: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSignal {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) sources: Vec<String>,
    #[serde(default)]
    pub(super) level: Option<String>,
    #[serde(default)]
    pub(super) text: Vec<String>,
    #[serde(default)]
    pub(super) not_text: Vec<String>,
    #[serde(default)]
    pub(super) fields: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub(super) key: Option<String>,
    #[serde(default)]
    pub(super) case_sensitive: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWhen {
    pub(super) all: Vec<RawClause>,
    #[serde(default)]
    pub(super) confidence: Option<f64>,
    #[serde(default)]
    pub(super) summary: Option<String>,
    #[serde(default)]
    pub(super) note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawClause {
    #[serde(default)]
    pub(super) count: Option<String>,
    #[serde(default)]
    pub(super) absent: Option<String>,
    #[serde(default)]
    pub(super) sequence: Option<Vec<String>>,
    #[serde(default)]
    pub(super) absent_after: Option<Vec<String>>,
    #[serde(default)]
    pub(super) span: Option<String>,
    #[serde(default)]
    pub(super) at_least: Option<toml::Value>,
    #[serde(default)]
    pub(super) at_most: Option<String>,
    #[serde(default)]
    pub(super) within: Option<String>,
    #[serde(default)]
    pub(super) join: bool,
    #[serde(default)]
    pub(super) until_first: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBoost {
    pub(super) signal: String,
    pub(super) confidence: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSample {
    pub(super) signal: String,
    #[serde(default)]
    pub(super) source: Option<String>,
    #[serde(default)]
    pub(super) level: Option<String>,
    #[serde(default)]
    pub(super) text: String,
    #[serde(default)]
    pub(super) fields: std::collections::BTreeMap<String, String>,
    #[serde(default = "yes")]
    pub(super) matches: bool,
}

fn yes() -> bool {
    true
}

/// The file as TOML of the expected shape, and its unknown keys (each named, with its line;
/// the rest of the file is still checked without them). A syntax error or a value of the
/// wrong type stops there: nothing after it can be trusted.
pub(super) fn parse_raw(
    origin: &str,
    text: &str,
) -> Result<(RawRule, Vec<LoadError>), Vec<LoadError>> {
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
    missing_keys(&mut p, &mut table);
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
    "known_issue",
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
const KNOWN_ISSUE_KEYS: &[&str] = &[
    "tracker",
    "number",
    "kuberay",
    "ray",
    "fixed_in",
    "workaround",
];

/// The keys each table must hold, with a stand-in value for each: a missing key is named
/// (with the line of its table) and given the stand-in, so the rest of the file is still
/// checked. Problems the stand-in itself would raise are left to the caller to drop: they
/// carry the missing key's name.
fn required(table: &str) -> &'static [&'static str] {
    match table {
        "" => &[
            "code",
            "id",
            "name",
            "severity",
            "confidence",
            "title",
            "summary",
            "doc",
        ],
        "signal" => &["name"],
        "when" => &["all"],
        "boost" => &["signal", "confidence"],
        "sample" => &["signal"],
        "known_issue" => &["tracker", "number", "fixed_in", "workaround"],
        _ => &[],
    }
}

/// The keys a table may hold (what `RawRule` and its parts accept).
fn known(table: &str) -> &'static [&'static str] {
    match table {
        "" => TOP_KEYS,
        "signal" => SIGNAL_KEYS,
        "when" => WHEN_KEYS,
        "boost" => BOOST_KEYS,
        "sample" => SAMPLE_KEYS,
        "known_issue" => KNOWN_ISSUE_KEYS,
        _ => CLAUSE_KEYS,
    }
}

/// A stand-in for a missing required key, of the type serde expects.
fn stand_in(key: &str) -> toml::Value {
    match key {
        "confidence" => toml::Value::Float(0.5),
        "number" => toml::Value::Integer(1),
        "all" => toml::Value::Array(Vec::new()),
        _ => toml::Value::String(String::new()),
    }
}

/// Calls `visit` with every table of a pattern file, in file order: what it is (`""` at the
/// top, `signal`, `when`, `boost`, `sample`, `clause`, `known_issue`), its key path
/// (`when[0].all[1]`), and the table.
fn each_table(top: &mut toml::Table, visit: &mut dyn FnMut(&str, &str, &mut toml::Table)) {
    visit("", "", top);
    if let Some(t) = top
        .get_mut("known_issue")
        .and_then(toml::Value::as_table_mut)
    {
        visit("known_issue", "known_issue", t);
    }
    for name in ["signal", "when", "boost", "sample"] {
        let tables = top.get_mut(name).and_then(toml::Value::as_array_mut);
        for (i, t) in tables.into_iter().flatten().enumerate() {
            let Some(t) = t.as_table_mut() else { continue };
            visit(name, &format!("{name}[{i}]"), t);
            if name != "when" {
                continue;
            }
            let clauses = t.get_mut("all").and_then(toml::Value::as_array_mut);
            for (j, c) in clauses.into_iter().flatten().enumerate() {
                if let Some(c) = c.as_table_mut() {
                    visit("clause", &format!("when[{i}].all[{j}]"), c);
                }
            }
        }
    }
}

/// `key` of the table at `path`, as a problem names it.
fn key_at(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Names every required key a table lacks, and gives it a stand-in.
fn missing_keys(p: &mut Problems, top: &mut toml::Table) {
    each_table(top, &mut |table, path, t| {
        for k in required(table) {
            if !t.contains_key(*k) {
                p.add(
                    key_at(path, k),
                    format!("missing key {k:?}: it is required here"),
                );
                t.insert(k.to_string(), stand_in(k));
            }
        }
    });
}

/// Names every key the file holds that no table of a pattern file knows, and removes it.
fn unknown_keys(p: &mut Problems, top: &mut toml::Table) {
    each_table(top, &mut |table, path, t| {
        let known = known(table);
        let unknown: Vec<String> = t
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in unknown {
            p.add(
                key_at(path, &k),
                format!("unknown key {k:?} (known here: {})", known.join(", ")),
            );
            t.remove(&k);
        }
    });
}
