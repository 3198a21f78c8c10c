//! Ray Serve's config schema as data: `serve-schema.toml`, written by
//! `scripts/serve_schema.py` from the Ray wheels (field names, simple defaults and where they
//! come from; no Ray code), compiled in and read on first use.
//!
//! The file is a list of ranges of Ray minor versions (`first`..=`last`) whose schemas are the
//! same; each range names the models of a Serve config from `ServeDeploySchema` down, each
//! model its fields and its policy for a key it does not know (`forbid`: the config is
//! refused; `ignore`, `allow`: the key is dropped without a word).
//!
//! Invariant: the file is read without panicking; a file that does not parse (never the one
//! compiled in: a unit test reads it) gives no ranges, and the check then says nothing.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The data, as `scripts/serve_schema.py` wrote it.
const DATA: &str = include_str!("serve-schema.toml");

/// The model of a whole Serve config (`serve deploy`'s file, a RayService's `serveConfigV2`).
pub const ROOT: &str = "ServeDeploySchema";

#[derive(Debug, Deserialize)]
struct DataFile {
    range: Vec<Range>,
}

/// Ray minor versions whose Serve schema is the same.
#[derive(Debug, Deserialize)]
pub struct Range {
    /// The first and last minor version (`2.10`, `2.24`) covered.
    pub first: String,
    pub last: String,
    /// The versions read, each with the commit its wheel was built from.
    pub read: Vec<String>,
    pub models: BTreeMap<String, Model>,
}

/// One pydantic model of the schema.
#[derive(Debug, Deserialize)]
pub struct Model {
    /// The file of the Ray wheel that defines it (`ray/serve/schema.py`).
    pub file: String,
    pub extra: Extra,
    pub fields: Vec<Field>,
}

/// What a model does with a key it does not know.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Extra {
    /// The config is refused (`extra fields not permitted`).
    Forbid,
    /// The key is dropped without a word (pydantic's default).
    Ignore,
    /// The key is kept but nothing reads it.
    Allow,
}

/// One field of a model.
#[derive(Debug, Deserialize)]
pub struct Field {
    pub name: String,
    /// The default as a config would write it (`1`, `/`, `null`, `[]`); `required` for a field
    /// the config must give; absent when it is not simple.
    #[serde(default)]
    pub default: Option<String>,
    /// Where the default comes from when it is not the field's own (`… DeploymentConfig`: the
    /// application's code may set the value instead).
    #[serde(default)]
    pub from: Option<String>,
    /// The model the field holds, whose keys are checked in turn.
    #[serde(default)]
    pub model: Option<String>,
    /// Whether it holds a list of them.
    #[serde(default)]
    pub list: bool,
}

impl Field {
    pub fn required(&self) -> bool {
        self.default.as_deref() == Some("required")
    }
}

pub use crate::versions::Version;

fn minor_of(s: &str) -> (u32, u32) {
    let mut parts = s.split('.');
    let major = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor)
}

impl Range {
    fn span(&self) -> ((u32, u32), (u32, u32)) {
        (minor_of(&self.first), minor_of(&self.last))
    }

    /// `2.10–2.24`, or `2.9` for one minor version.
    pub fn shown(&self) -> String {
        if self.first == self.last {
            self.first.clone()
        } else {
            format!("{}–{}", self.first, self.last)
        }
    }
}

/// Every range, oldest first (none if the data does not parse).
pub fn ranges() -> &'static [Range] {
    static RANGES: OnceLock<Vec<Range>> = OnceLock::new();
    RANGES.get_or_init(|| parse(DATA))
}

fn parse(text: &str) -> Vec<Range> {
    toml::from_str::<DataFile>(text)
        .map(|d| d.range)
        .unwrap_or_default()
}

/// The range of a Ray version: the one covering its minor version; past the newest, the
/// newest; between two ranges, the older. `None` before the first (Ray before 2.4 has no
/// multi-application config).
pub fn range_of(ranges: &[Range], version: Version) -> Option<&Range> {
    let minor = (version.0, version.1);
    ranges.iter().rev().find(|r| r.span().0 <= minor)
}

/// The schema a config is checked against: the ranges of the versions the bundle states (a
/// key is unknown only when none of them knows it; a model refuses a key only when all do).
pub struct Schema<'a> {
    pub ranges: Vec<&'a Range>,
    /// Every range, for "a field of Ray 2.9–2.31" when a key belongs to other versions.
    pub all: &'a [Range],
}

impl<'a> Schema<'a> {
    /// The field `key` of `model` in any of the ranges, newest first.
    pub fn field(&self, model: &str, key: &str) -> Option<&'a Field> {
        self.ranges
            .iter()
            .rev()
            .filter_map(|r| r.models.get(model))
            .find_map(|m| m.fields.iter().find(|f| f.name == key))
    }

    /// Whether any range knows the model.
    pub fn has(&self, model: &str) -> bool {
        self.ranges.iter().any(|r| r.models.contains_key(model))
    }

    /// Whether every range that knows the model refuses a key it does not know.
    pub fn forbids(&self, model: &str) -> bool {
        let mut models = self.ranges.iter().filter_map(|r| r.models.get(model));
        let mut any = false;
        let all = models.all(|m| {
            any = true;
            m.extra == Extra::Forbid
        });
        any && all
    }

    /// The names of the model's fields in any of the ranges.
    pub fn names(&self, model: &str) -> Vec<&'a str> {
        let mut names: Vec<&str> = self
            .ranges
            .iter()
            .filter_map(|r| r.models.get(model))
            .flat_map(|m| m.fields.iter().map(|f| f.name.as_str()))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The minor versions (`2.9–2.31`) of every range that knows `key` in `model`, when
    /// they are one run of ranges.
    pub fn known_in(&self, model: &str, key: &str) -> Option<String> {
        let knows = |r: &Range| {
            r.models
                .get(model)
                .is_some_and(|m| m.fields.iter().any(|f| f.name == key))
        };
        let first = self.all.iter().position(knows)?;
        let len = self.all[first..].iter().take_while(|r| knows(r)).count();
        let last = &self.all[first + len - 1];
        if self.all[first + len..].iter().any(knows) {
            return None;
        }
        let head = &self.all[first];
        Some(if head.first == last.last {
            head.first.clone()
        } else {
            format!("{}–{}", head.first, last.last)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_data_parses_and_covers_the_versions_read() {
        let all = ranges();
        assert!(all.len() > 10, "{} ranges", all.len());
        assert_eq!(all[0].first, "2.4");
        for r in all {
            assert!(r.models.contains_key(ROOT), "{} has no {ROOT}", r.shown());
            assert!(!r.read.is_empty());
            for (name, m) in &r.models {
                for f in &m.fields {
                    if let Some(child) = &f.model {
                        assert!(
                            r.models.contains_key(child),
                            "{}: {name}.{} names {child}, which the range lacks",
                            r.shown(),
                            f.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_version_finds_its_range() {
        let all = ranges();
        let shown = |v: &str| range_of(all, Version::parse(v).unwrap()).map(Range::shown);
        assert_eq!(shown("2.3.1"), None);
        assert_eq!(shown("2.9.3").as_deref(), Some("2.9"));
        assert_eq!(shown("2.9.0").as_deref(), Some("2.9"));
        assert_eq!(shown("2.22.0").as_deref(), Some("2.10–2.24"));
        assert_eq!(shown("2.60.0").as_deref(), Some("2.60"));
        // Past the newest known: the newest.
        assert_eq!(shown("3.1.0").as_deref(), Some("2.60"));
    }

    #[test]
    fn older_serve_refuses_unknown_keys_newer_drops_them() {
        let all = ranges();
        let schema = |v: &str| Schema {
            ranges: vec![range_of(all, Version::parse(v).unwrap()).unwrap()],
            all,
        };
        assert!(schema("2.5.1").forbids("DeploymentSchema"));
        assert!(!schema("2.9.3").forbids("DeploymentSchema"));
        assert!(!schema("2.60.0").forbids("DeploymentSchema"));
        assert!(schema("2.60.0").forbids("LoggingConfig"));
        let s = schema("2.60.0");
        let f = s.field("DeploymentSchema", "num_replicas").unwrap();
        assert_eq!(f.default.as_deref(), Some("1"));
        assert_eq!(
            s.field("ServeApplicationSchema", "route_prefix")
                .unwrap()
                .default
                .as_deref(),
            Some("/")
        );
        assert_eq!(
            s.known_in("DeploymentSchema", "max_concurrent_queries")
                .as_deref(),
            Some("2.4–2.32")
        );
    }

    #[test]
    fn data_that_does_not_parse_gives_no_ranges() {
        assert!(parse("range = 3").is_empty());
        assert!(parse("[[range]]\nfirst = 1").is_empty());
    }
}
