//! Every Serve config of a bundle, checked against the config schema of the bundle's Ray
//! version: a key the schema does not know is a finding under the catalogue id
//! `serve_config_schema` (rule `SRV013`, made here).
//!
//! Recent Serve drops a key it does not know without a word: a config written in camelCase
//! (`routePrefix`, `numReplicas`, `rayActorOptions`) deploys "successfully" with one replica on
//! route `/`. Serve 2.4–2.6 (and some models of later versions, such as `logging_config`)
//! refuse such a key instead (`extra fields not permitted`), which `SRV010` reads from the
//! answer when the bundle holds it; this finding carries the same id, so the two merge into one
//! cause.
//!
//! The parts: `data` the schema per range of Ray versions (`serve-schema.toml`, written by
//! `scripts/serve_schema.py` from the Ray wheels); `config` the configs in the bundle (config
//! files, `serveConfigV2`) as trees of keys; the Ray versions the bundle states are `versions`'. This
//! file walks each config through the schema and writes the finding: each unknown key, the
//! field it was meant to be (camelCase → snake_case, else the nearest name) and what Serve used
//! instead (that field's default).
//!
//! Invariant: a key is unknown only when no version the bundle states knows it (the newest
//! known schema when it states none); keys below a field that holds free-form data
//! (`user_config`, `runtime_env`, `args`, `resources`) are never checked; nothing here fails on
//! input.

pub mod config;
pub mod data;

use crate::event::Event;
use crate::rules::engine::{EvidenceRef, Finding};
use crate::rules::{Pattern, Rule, RuleCode, Severity, Signal, SourceFilter};

use config::{Config, Node};
use data::{Field, Schema, ROOT};

/// The rule's code and catalogue id.
pub const CODE: &str = "SRV013";
pub const ID: &str = "serve_config_schema";

/// A key of a Serve config that the schema does not know.
#[derive(Clone, Debug, PartialEq)]
pub struct Unknown {
    /// As written (`numReplicas`).
    pub key: String,
    /// Where, in the config's own keys (`applications[0].deployments[0]`).
    pub at: String,
    /// The model that does not know it (`DeploymentSchema`).
    pub model: String,
    /// The field it was meant to be, when one is near enough.
    pub meant: Option<Meant>,
    /// The model refuses it: the whole config is refused.
    pub refused: bool,
    /// Keys inside it that the meant field's model does not know either (`numCpus` inside
    /// `rayActorOptions`), each with the field it was meant to be.
    pub inside: Vec<(String, Option<String>)>,
    /// The Ray versions whose schema knows it (`2.4–2.31`), when the bundle's do not.
    pub known_in: Option<String>,
    /// The value written is the meant field's default: dropping it changed nothing.
    pub harmless: bool,
    /// The event that cites it.
    pub event: usize,
}

/// The field an unknown key was meant to be.
#[derive(Clone, Debug, PartialEq)]
pub struct Meant {
    pub field: String,
    /// Its default, as a config would write it.
    pub default: Option<String>,
    /// The default is Serve's own, which the application's code may override.
    pub code_may_set: bool,
    pub required: bool,
    /// Defaults of the meant model's fields named by `inside` (`num_cpus` = `1`).
    pub inside_defaults: Vec<(String, String)>,
}

/// camelCase, kebab-case or any case to snake_case: `rayActorOptions` → `ray_actor_options`,
/// `numGPUs` → `num_gpus`, `HTTPOptions` → `http_options`.
pub fn snake(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '-' || c == ' ' {
            out.push('_');
            continue;
        }
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_lower && !is_plural_s(&chars, i));
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// `GPUs`: the `s` after capitals is a plural, not the start of a word.
fn is_plural_s(chars: &[char], i: usize) -> bool {
    chars.get(i + 1) == Some(&'s') && chars.get(i + 2).is_none_or(|c| !c.is_lowercase())
}

/// Levenshtein distance, over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The field of `names` a key was meant to be: its snake_case form, the same letters without
/// underscores, else the nearest name within a quarter of its length (at least 1, at most 3).
pub fn meant<'a>(key: &str, names: &[&'a str]) -> Option<&'a str> {
    let snake = snake(key);
    if let Some(n) = names.iter().find(|n| **n == snake) {
        return Some(n);
    }
    let bare = |s: &str| s.replace(['_', '-'], "").to_lowercase();
    if let Some(n) = names.iter().find(|n| bare(n) == bare(key)) {
        return Some(n);
    }
    let limit = (snake.len() / 4).clamp(1, 3);
    names
        .iter()
        .map(|n| (distance(&snake, n), *n))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, n)| n)
}

/// Walks configs through a schema.
struct Walk<'s, 'a> {
    schema: &'s Schema<'a>,
    found: Vec<Unknown>,
}

impl<'a> Walk<'_, 'a> {
    fn node(&mut self, model: &str, node: &Node, at: &str) {
        match node {
            Node::Map(entries) => self.map(model, entries, at),
            Node::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.node(model, item, &format!("{at}[{i}]"));
                }
            }
            Node::Leaf => {}
        }
    }

    fn map(&mut self, model: &str, entries: &[config::Entry], at: &str) {
        if !self.schema.has(model) {
            return;
        }
        let names = self.schema.names(model);
        for e in entries {
            let here = if at.is_empty() {
                e.key.clone()
            } else {
                format!("{at}.{}", e.key)
            };
            if let Some(f) = self.schema.field(model, &e.key) {
                if let Some(child) = &f.model {
                    self.node(child, &e.node, &here);
                }
                continue;
            }
            let refused = self.schema.forbids(model);
            let field = meant(&e.key, &names).and_then(|n| self.schema.field(model, n));
            // A misspelt key beside the right one changes nothing, where Serve drops it.
            if let Some(f) = field {
                if !refused && entries.iter().any(|o| o.key == f.name) {
                    continue;
                }
            }
            let inside = field
                .and_then(|f| f.model.as_deref())
                .map(|child| self.inside(child, &e.node))
                .unwrap_or_default();
            let meant = field.map(|f| self.meant(f, &inside));
            let harmless = match (&meant, &e.value) {
                (Some(m), Some(v)) => m.default.as_deref().is_some_and(|d| same_value(d, v)),
                _ => false,
            };
            self.found.push(Unknown {
                harmless,
                key: e.key.clone(),
                at: at.to_string(),
                model: model.to_string(),
                known_in: if meant.is_none() {
                    self.schema.known_in(model, &e.key)
                } else {
                    None
                },
                meant,
                refused,
                inside,
                event: e.event,
            });
        }
    }

    /// The keys directly inside an unknown key that its meant model does not know either.
    fn inside(&self, model: &str, node: &Node) -> Vec<(String, Option<String>)> {
        let names = self.schema.names(model);
        let maps: Vec<&[config::Entry]> = match node {
            Node::Map(entries) => vec![entries.as_slice()],
            Node::List(items) => items
                .iter()
                .filter_map(|n| match n {
                    Node::Map(entries) => Some(entries.as_slice()),
                    _ => None,
                })
                .collect(),
            Node::Leaf => Vec::new(),
        };
        let mut out: Vec<(String, Option<String>)> = Vec::new();
        for e in maps.into_iter().flatten() {
            if self.schema.field(model, &e.key).is_some() || out.iter().any(|(k, _)| *k == e.key) {
                continue;
            }
            out.push((e.key.clone(), meant(&e.key, &names).map(str::to_string)));
        }
        out
    }

    fn meant(&self, f: &Field, inside: &[(String, Option<String>)]) -> Meant {
        let inside_defaults = f
            .model
            .as_deref()
            .map(|child| {
                inside
                    .iter()
                    .filter_map(|(_, m)| m.as_deref())
                    .filter_map(|m| {
                        let d = self.schema.field(child, m)?.default.clone()?;
                        Some((m.to_string(), d))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Meant {
            field: f.name.clone(),
            default: f.default.clone().filter(|_| !f.required()),
            code_may_set: f
                .from
                .as_deref()
                .is_some_and(|s| s.contains("DeploymentConfig"))
                || (f.default.is_none() && f.model.is_some()),
            required: f.required(),
            inside_defaults,
        }
    }
}

/// Whether a value written is a default: the same text, or the same number (`2` and `2.0`).
fn same_value(default: &str, written: &str) -> bool {
    default == written
        || matches!(
            (default.parse::<f64>(), written.parse::<f64>()),
            (Ok(a), Ok(b)) if a == b
        )
}

/// The unknown keys of one config.
pub fn unknown_keys(schema: &Schema, config: &Node) -> Vec<Unknown> {
    let mut walk = Walk {
        schema,
        found: Vec::new(),
    };
    walk.node(ROOT, config, "");
    walk.found
}

/// What the check adds to a report: its rule (one, or none) and finding.
pub struct Checked {
    pub rules: Vec<Rule>,
    pub findings: Vec<Finding>,
}

/// Checks every Serve config of `events`. `base` is the number of rules before this one
/// (the finding's rule index is numbered from it).
pub fn check(events: &[Event], base: usize) -> Checked {
    let none = Checked {
        rules: Vec::new(),
        findings: Vec::new(),
    };
    let configs = config::configs(events);
    if configs.is_empty() {
        return none;
    }
    let all = data::ranges();
    let stated = crate::versions::stated(events);
    let ray: Vec<(data::Version, usize)> = crate::versions::ray(&stated).collect();
    let checked: Vec<((data::Version, usize), &data::Range)> = ray
        .iter()
        .filter_map(|s| Some((*s, data::range_of(all, s.0)?)))
        .collect();
    let assumed = ray.is_empty();
    let ranges: Vec<&data::Range> = if assumed {
        all.last().into_iter().collect()
    } else {
        checked.iter().map(|(_, r)| *r).collect()
    };
    if ranges.is_empty() {
        // Only versions before 2.4: no multi-application config to check against.
        return none;
    }
    let schema = Schema { ranges, all };
    let mut found: Vec<(Unknown, Option<String>)> = Vec::new();
    for c in &configs {
        for u in unknown_keys(&schema, &c.root) {
            found.push((u, c.holder.clone()));
        }
    }
    if found.is_empty() {
        return none;
    }
    let versions: Vec<String> = if assumed {
        vec![format!(
            "{} (the newest known: the bundle states no Ray version)",
            schema
                .ranges
                .iter()
                .map(|r| r.last.clone())
                .collect::<Vec<_>>()
                .join(", ")
        )]
    } else {
        checked.iter().map(|(s, _)| s.0.to_string()).collect()
    };
    let refused = found
        .iter()
        .any(|(u, _)| u.refused || u.meant.as_ref().is_some_and(|m| m.required));
    let harmless = found.iter().all(|(u, _)| u.harmless);
    let summary = summary(&found, &versions, &configs, refused);
    let rule = rule(&found, refused, harmless);
    let mut evidence: Vec<EvidenceRef> = found
        .iter()
        .map(|(u, _)| EvidenceRef {
            event: u.event,
            signal: 0,
            field: None,
        })
        .collect();
    evidence.extend(checked.iter().map(|(s, _)| EvidenceRef {
        event: s.1,
        signal: 1,
        field: None,
    }));
    evidence.sort_by_key(|e| (e.event, e.signal));
    evidence.dedup_by_key(|e| e.event);
    Checked {
        rules: vec![rule],
        findings: vec![Finding {
            rule: base,
            evidence,
            confidence: if assumed { 0.6 } else { 0.8 },
            summary,
            severity: None,
        }],
    }
}

/// One unknown key as the summary tells it.
fn told(u: &Unknown) -> String {
    let at = if u.at.is_empty() {
        "at the top".to_string()
    } else {
        format!("in {}", u.at)
    };
    let Some(m) = &u.meant else {
        return match &u.known_in {
            Some(v) => format!("`{}` ({at}) is a field of Ray {v}'s Serve only", u.key),
            None => format!("`{}` ({at}) is no field of {}", u.key, u.model),
        };
    };
    let mut s = format!("`{}` → `{}` ({at}", u.key, m.field);
    let inside: Vec<String> = u
        .inside
        .iter()
        .map(|(k, meant)| match meant {
            Some(f) => format!("`{k}` → `{f}`"),
            None => format!("`{k}`"),
        })
        .collect();
    if !inside.is_empty() {
        s.push_str(&format!("; inside it {}", inside.join(", ")));
    }
    s.push(')');
    if m.required {
        s.push_str(&format!(": `{}` is required and missing", m.field));
        return s;
    }
    if u.refused {
        return s;
    }
    if u.harmless {
        if let Some(d) = &m.default {
            s.push_str(&format!(
                ": Serve used the default {}, the value written, so nothing changed",
                shown_value(d)
            ));
            return s;
        }
    }
    let default = match (&m.default, m.inside_defaults.is_empty()) {
        (Some(d), _) => format!("the default {}", shown_value(d)),
        (None, false) => format!(
            "the defaults ({})",
            m.inside_defaults
                .iter()
                .map(|(k, d)| format!("{k} {}", shown_value(d)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (None, true) => "the defaults".to_string(),
    };
    if m.code_may_set {
        s.push_str(&format!(
            ": Serve used the value the application's code sets, else {default}"
        ));
    } else {
        s.push_str(&format!(": Serve used {default}"));
    }
    s
}

fn shown_value(v: &str) -> String {
    if v.is_empty() {
        "`\"\"`".to_string()
    } else {
        format!("`{v}`")
    }
}

/// Most keys the summary names one by one.
const TOLD: usize = 6;

fn summary(
    found: &[(Unknown, Option<String>)],
    versions: &[String],
    configs: &[Config],
    refused: bool,
) -> String {
    let mut holders: Vec<String> = found
        .iter()
        .map(|(_, h)| match h {
            Some(object) => format!("the serveConfigV2 of {object}"),
            None => "a Serve config file".to_string(),
        })
        .collect();
    holders.sort();
    holders.dedup();
    let mut told_keys: Vec<String> = Vec::new();
    for (u, _) in found {
        let t = told(u);
        if !told_keys.contains(&t) {
            told_keys.push(t);
        }
    }
    let n = told_keys.len();
    let more = n.saturating_sub(TOLD);
    let list = told_keys
        .into_iter()
        .take(TOLD)
        .collect::<Vec<_>>()
        .join("; ");
    let whose = if holders.len() == 1 {
        holders[0].clone()
    } else {
        format!("{} Serve configs", configs.len().max(holders.len()))
    };
    let verdict = if refused {
        "Serve refuses such a config (`extra fields not permitted`, `field required`) and deploys nothing"
    } else {
        "Serve drops such keys without a word and deploys the rest"
    };
    format!(
        "{} holds {} that Ray {}'s Serve schema does not know; {verdict}: {list}{}",
        capitalised(&whose),
        crate::words::count(n as u64, "key", "keys"),
        versions.join(" / "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    )
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

const TITLE: &str =
    "A Serve config holds keys that the schema of the cluster's Ray version does not know";

const DOC: &str = "## What it detects
Keys of a Serve config that Ray Serve's config schema, for the Ray version the bundle states
(`rayVersion`, a Ray image tag, `ray --version`, the autoscaler's `Ray version:` line; the
newest known when it states none), does not know: in a RayService's `serveConfigV2` and in a
config file for `serve deploy` (a YAML file whose `applications` is a list). Each is named
with the field it was meant to be (camelCase → snake_case, else the nearest field name) and
what Serve used instead (that field's default). The schema of each Ray version is data,
extracted from the Ray wheels (`scripts/serve_schema.py`).

## Why it matters
Since Ray 2.7, Serve drops a key it does not know without a word: a config written in
camelCase (`routePrefix`, `numReplicas`, `rayActorOptions`) deploys \"successfully\" with one
replica on route `/` and default resources, so the service is not the one described. Ray
2.4–2.6 (and models such as `logging_config` in every version) refuse the whole config
instead, and no application is deployed.

## Evidence shown
The lines of the config that hold each unknown key, and where the bundle states its Ray
version.

## Remediation
Rename each key to the field named, check the config against the schema of the cluster's Ray
version, and deploy it again.

## References
Ray Serve's config file guide and the `ServeDeploySchema` reference.
";

/// The rule a finding of this check points at, as `raysift rules` lists it (with no finding,
/// at `error`).
pub fn listed_rule() -> Rule {
    base_rule(Severity::Error, Vec::new(), Vec::new())
}

fn base_rule(severity: Severity, keys: Vec<Pattern>, explains: Vec<String>) -> Rule {
    let signal = |name: &str, description: &str, text: Vec<Pattern>| Signal {
        name: name.to_string(),
        sources: SourceFilter::Any,
        min_level: None,
        text,
        not_text: Vec::new(),
        fields: Vec::new(),
        literals: Vec::new(),
        key: None,
        description: description.to_string(),
    };
    Rule {
        code: RuleCode::builtin(CODE),
        id: ID.to_string(),
        name: "serve-config-key-unknown-to-schema".to_string(),
        severity,
        confidence: 0.8,
        title: TITLE.to_string(),
        summary: String::new(),
        doc: DOC.to_string(),
        explains,
        remediation: vec![
            "Rename each key to the field the summary names (`numReplicas` → `num_replicas`, `routePrefix` → `route_prefix`, `rayActorOptions` → `ray_actor_options`, `numCpus` → `num_cpus`): Serve's config is snake_case, as its Python fields.".to_string(),
            "Check the config with the cluster's own Ray before deploying it: in its image, `ray.serve.schema.ServeDeploySchema.parse_obj(yaml.safe_load(open(\"config.yaml\")))` raises where that version refuses a key, and its `.dict()` leaves out every key it drops.".to_string(),
            "After deploying, compare `serve status` and `serve config` with the file: replicas, route prefixes and actor options are where dropped keys show.".to_string(),
        ],
        references: vec![
            "https://docs.ray.io/en/latest/serve/production-guide/config.html".to_string(),
            "https://docs.ray.io/en/latest/serve/api/doc/ray.serve.schema.ServeDeploySchema.html".to_string(),
        ],
        signals: vec![
            signal(
                "unknown",
                "a key of the Serve config that the schema of the bundle's Ray version does not know",
                keys,
            ),
            signal(
                "version",
                "where the bundle states its Ray version",
                Vec::new(),
            ),
        ],
        when: Vec::new(),
        boosts: Vec::new(),
        samples: Vec::new(),
        origin: "built-in Serve schema check (src/serve_schema)".to_string(),
        known_issue: None,
    }
}

/// The rule of a finding: refused configs are critical, dropped keys an error (a warning when
/// every key dropped held its field's default); its `unknown` signal matches the lines of the
/// keys found, so that evidence shows them.
fn rule(found: &[(Unknown, Option<String>)], refused: bool, harmless: bool) -> Rule {
    let mut keys: Vec<String> = found.iter().map(|(u, _)| regex::escape(&u.key)).collect();
    keys.sort();
    keys.dedup();
    let pattern = format!(
        r#"(?m)(?:^|[\s{{,])-?[ \t]*["']?(?:{})["']?[ \t]*:"#,
        keys.join("|")
    );
    let keys = Pattern::compile(&pattern, true).ok().into_iter().collect();
    if refused {
        base_rule(
            Severity::Critical,
            keys,
            vec!["initializing_timeout".to_string()],
        )
    } else if harmless {
        base_rule(Severity::Warning, keys, Vec::new())
    } else {
        base_rule(Severity::Error, keys, Vec::new())
    }
}

#[cfg(test)]
mod tests;
