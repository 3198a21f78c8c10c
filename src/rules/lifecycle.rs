//! What a failure's life around it says, as data (`patterns/data/lifecycle.toml`, each line
//! with where its wording comes from): the lines Ray writes when someone or something asked
//! it to stop (`ray stop`, a pod deleted, `ray job stop`), and the pairs of a failure and the
//! line that tells its object recovered. `judge` keeps at `info` what died of a stop and what
//! recovered for good; the sieve keeps these lines.

use regex::Regex;
use serde::Deserialize;

use crate::event::SourceKind;

/// What a stop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every process of the node, for good.
    #[default]
    Node,
    /// One job: its driver and the workers running its tasks, for a while.
    Job,
}

#[derive(Deserialize)]
struct LifecycleFile {
    stop: Vec<StopLine>,
    #[serde(default)]
    recovery: Vec<RecoveryLine>,
    #[serde(default)]
    own_stop: Vec<OwnStopLine>,
}

#[derive(Deserialize)]
struct OwnStopLine {
    what: String,
    text: String,
    #[serde(default)]
    sources: Vec<String>,
    within_s: u32,
    #[allow(dead_code)]
    from: String,
}

/// A line saying the SIGTERM that follows is the process's own doing, after a failure: the
/// node stop it tells within `within` is not a requested one.
pub struct OwnStop {
    pub what: String,
    pub re: Regex,
    pub sources: Vec<SourceKind>,
    /// How long after it the stop it explains may be told, in microseconds.
    pub within: i64,
}

/// The own-stop lines of the library, compiled once.
pub fn own_stops() -> &'static [OwnStop] {
    static OWN: std::sync::OnceLock<Vec<OwnStop>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        file()
            .map(|f| f.own_stop.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                Some(OwnStop {
                    re: Regex::new(&s.text).ok()?,
                    sources: kinds(&s.sources),
                    what: s.what.clone(),
                    within: i64::from(s.within_s) * crate::event::MICROS_PER_SEC,
                })
            })
            .collect()
    })
}

fn kinds(names: &[String]) -> Vec<SourceKind> {
    names
        .iter()
        .filter_map(|n| SourceKind::from_name(n))
        .collect()
}

#[derive(Deserialize)]
struct RecoveryLine {
    what: String,
    fails: String,
    recovers: String,
    /// For a failure that names no object: how soon after it the recovery must come.
    within_s: Option<u32>,
    #[allow(dead_code)]
    from: String,
}

/// A failure that its object recovers from, and the line that says it did: both regexes
/// capture the object's name as `key` (a failure may name several: `['A', 'B']`), or, where
/// the failure names no object (a worker's death), neither does and the recovery must come
/// `within` of it.
pub struct Recovery {
    pub what: String,
    pub fails: Regex,
    pub recovers: Regex,
    /// How soon after a failure without a key its recovery must come, in microseconds.
    pub within: Option<i64>,
}

/// The data file, read once.
fn file() -> Option<&'static LifecycleFile> {
    static FILE: std::sync::OnceLock<Option<LifecycleFile>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| toml::from_str(include_str!("../../patterns/data/lifecycle.toml")).ok())
        .as_ref()
}

/// The recoveries of the library, compiled once.
pub fn recoveries() -> &'static [Recovery] {
    static RECOVERIES: std::sync::OnceLock<Vec<Recovery>> = std::sync::OnceLock::new();
    RECOVERIES.get_or_init(|| {
        file()
            .map(|f| f.recovery.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|r| {
                Some(Recovery {
                    what: r.what.clone(),
                    fails: Regex::new(&r.fails).ok()?,
                    recovers: Regex::new(&r.recovers).ok()?,
                    within: r
                        .within_s
                        .map(|s| i64::from(s) * crate::event::MICROS_PER_SEC),
                })
            })
            .collect()
    })
}

/// The names a `key` capture holds: `'Echo'`, `['A', 'B']` and `A` alike.
pub fn names(key: &str) -> Vec<&str> {
    key.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '#')))
        .filter(|n| !n.is_empty())
        .collect()
}

#[derive(Deserialize)]
struct StopLine {
    what: String,
    text: String,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    scope: Scope,
    #[allow(dead_code)]
    from: String,
}

/// A line that tells a stop, compiled.
pub struct Teller {
    pub what: String,
    pub re: Regex,
    /// The kinds of file it is written to; empty: any.
    pub sources: Vec<SourceKind>,
    pub scope: Scope,
}

/// The stop lines of the library, compiled once.
pub fn tellers() -> &'static [Teller] {
    static TELLERS: std::sync::OnceLock<Vec<Teller>> = std::sync::OnceLock::new();
    TELLERS.get_or_init(|| {
        file()
            .map(|f| f.stop.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                Some(Teller {
                    re: Regex::new(&s.text).ok()?,
                    sources: kinds(&s.sources),
                    what: s.what.clone(),
                    scope: s.scope,
                })
            })
            .collect()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_the_data_compiles() {
        let file: LifecycleFile =
            toml::from_str(include_str!("../../patterns/data/lifecycle.toml"))
                .unwrap_or_else(|e| panic!("lifecycle.toml: {e}"));
        assert_eq!(tellers().len(), file.stop.len());
        assert_eq!(recoveries().len(), file.recovery.len());
        assert_eq!(own_stops().len(), file.own_stop.len());
        for s in &file.stop {
            assert!(!s.what.is_empty() && !s.from.is_empty());
            for n in &s.sources {
                assert!(SourceKind::from_name(n).is_some(), "unknown source {n}");
            }
        }
        for r in recoveries() {
            let keyed =
                [&r.fails, &r.recovers].map(|re| re.capture_names().any(|n| n == Some("key")));
            assert!(
                keyed == [true, true] || keyed == [false, false] && r.within.is_some(),
                "{}: both regexes capture a key, or neither and within_s is set",
                r.what
            );
        }
    }

    #[test]
    fn a_key_names_one_object_or_several() {
        assert_eq!(names("'Echo'"), ["Echo"]);
        assert_eq!(names("['Echo', 'Ranker_2']"), ["Echo", "Ranker_2"]);
        assert_eq!(names("search"), ["search"]);
    }
}
