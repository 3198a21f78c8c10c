//! Selecting events from a timeline: by source, level, text, and time (absolute bounds, or a
//! window around a file:line or an instant). Used by `raysift timeline`.
//!
//! Invariant: selection never reorders; it only keeps or drops events of the merged stream.

use regex::Regex;

use crate::event::{Event, Level, Micros, MICROS_PER_SEC};
use crate::parse::primitives::{date_time, human_duration, instant, zone};
use crate::timeline::Timeline;

/// Where `--around` points.
#[derive(Clone, Debug)]
pub enum Anchor {
    /// `FILE:LINE`: the file is matched by its path's suffix.
    FileLine {
        file: String,
        line: u32,
    },
    Instant(Micros),
}

/// A validated selection.
#[derive(Clone, Debug)]
pub struct Query {
    pub sources: Vec<String>,
    pub min_level: Option<Level>,
    pub grep: Option<Regex>,
    pub since: Option<Micros>,
    pub until: Option<Micros>,
    pub around: Option<Anchor>,
    /// Half-width of the `--around` window.
    pub window: Micros,
}

impl Query {
    pub fn everything() -> Query {
        Query {
            sources: Vec::new(),
            min_level: None,
            grep: None,
            since: None,
            until: None,
            around: None,
            window: 120 * MICROS_PER_SEC,
        }
    }
}

/// Why a query could not be applied.
#[derive(Debug, PartialEq, Eq)]
pub struct QueryError(pub String);

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for QueryError {}

/// The events the query keeps, in timeline order.
pub fn select<'t>(tl: &'t Timeline, q: &Query) -> Result<Vec<&'t Event>, QueryError> {
    let center = match &q.around {
        Some(Anchor::Instant(t)) => Some(*t),
        Some(Anchor::FileLine { file, line }) => Some(anchor_time(tl, file, *line)?),
        None => None,
    };
    let (lo, hi) = q.bounds(center);
    let source_ok = q.sources_ok(&tl.files);
    Ok(tl
        .events
        .iter()
        .filter(|ev| {
            source_ok.get(ev.file as usize).copied().unwrap_or(false)
                && q.keeps_text(ev)
                && in_range(ev, lo, hi)
        })
        .collect())
}

impl Query {
    /// The time bounds, given the centre of the `--around` window when there is one.
    pub fn bounds(&self, center: Option<Micros>) -> (Option<Micros>, Option<Micros>) {
        let (mut lo, mut hi) = (self.since, self.until);
        if let Some(center) = center {
            lo = Some(lo.map_or(center - self.window, |l| l.max(center - self.window)));
            hi = Some(hi.map_or(center + self.window, |h| h.min(center + self.window)));
        }
        (lo, hi)
    }

    /// Per file id, whether `--source` keeps it.
    pub fn sources_ok(&self, files: &[crate::load::FileInfo]) -> Vec<bool> {
        files
            .iter()
            .map(|f| {
                self.sources.is_empty()
                    || self
                        .sources
                        .iter()
                        .any(|g| source_matches(g, &f.path, f.kind.as_str()))
            })
            .collect()
    }

    /// Whether the level (as `timeline` shows it: `explain::shown_level`) and `--grep` keep an
    /// event (what needs no time and no file).
    pub fn keeps_text(&self, ev: &Event) -> bool {
        self.min_level
            .is_none_or(|min| crate::explain::shown_level(ev) >= min)
            && self.grep.as_ref().is_none_or(|re| matches_text(re, ev))
    }
}

/// Whether an event's time lies within the bounds (an untimed one never does).
pub fn in_range(ev: &Event, lo: Option<Micros>, hi: Option<Micros>) -> bool {
    if lo.is_none() && hi.is_none() {
        return true;
    }
    match ev.ts {
        Some(ts) => lo.is_none_or(|l| ts.micros >= l) && hi.is_none_or(|h| ts.micros <= h),
        None => false,
    }
}

/// `--grep` searches what the text timeline prints of an event besides its time, place,
/// source and level: the message (every line), the component and the fields that explain it
/// (`explain::shown_fields`), each as `key=value`. A field the text does not show (a stack
/// trace, a reconcile id) is not searched, so every match is visible.
fn matches_text(re: &Regex, ev: &Event) -> bool {
    re.is_match(&ev.message)
        || re.is_match(&ev.component)
        || crate::explain::shown_fields(ev)
            .iter()
            .any(|(k, v)| re.is_match(&format!("{k}={v}")))
}

fn anchor_time(tl: &Timeline, file: &str, line: u32) -> Result<Micros, QueryError> {
    let f = anchor_file(&tl.files, file)?;
    // The record covering that line, else the nearest timed record before it.
    tl.events
        .iter()
        .filter(|e| e.file == f.id && e.line <= line)
        .filter_map(|e| e.ts.map(|t| (e.line, t.micros)))
        .max_by_key(|(l, _)| *l)
        .map(|(_, t)| t)
        .ok_or_else(|| no_time_at(f, line))
}

/// Whether a file at `path` may be the one `--around FILE:…` names.
pub fn names_file(path: &str, file: &str) -> bool {
    path == file || path.ends_with(&format!("/{file}"))
}

pub fn no_time_at(f: &crate::load::FileInfo, line: u32) -> QueryError {
    QueryError(format!(
        "--around: {}:{line} has no time to centre on",
        f.path
    ))
}

/// The one file `--around FILE:…` names.
pub fn anchor_file<'f>(
    files: &'f [crate::load::FileInfo],
    file: &str,
) -> Result<&'f crate::load::FileInfo, QueryError> {
    let candidates: Vec<_> = files.iter().filter(|f| names_file(&f.path, file)).collect();
    let f = match candidates.as_slice() {
        [one] => *one,
        [] => {
            return Err(QueryError(format!(
                "--around: no file in the bundle matches {file:?}"
            )))
        }
        many => {
            let names: Vec<&str> = many.iter().map(|f| f.path.as_str()).collect();
            return Err(QueryError(format!(
                "--around: {file:?} matches several files: {}",
                names.join(", ")
            )));
        }
    };
    Ok(f)
}

/// Glob over a file's path, its name, or its source kind. `*` matches any run of characters,
/// `?` one character.
pub fn source_matches(glob: &str, path: &str, kind: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    glob_match(glob.as_bytes(), path.as_bytes())
        || glob_match(glob.as_bytes(), name.as_bytes())
        || glob_match(glob.as_bytes(), kind.as_bytes())
}

pub(crate) fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matcher with one backtrack point: linear in practice, no recursion.
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                while pattern.get(p) == Some(&b'*') {
                    p += 1;
                }
                star = Some((p, t));
            }
            Some(&c) if c == b'?' || Some(&c) == text.get(t) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

/// Parses a time given on the command line: RFC 3339, or a date-time without zone (UTC).
pub fn parse_time_arg(s: &str) -> Result<Micros, QueryError> {
    let s = s.trim();
    if let Ok(("", t)) = instant(s) {
        return Ok(t);
    }
    if let Ok(("", t)) = date_time(s) {
        return Ok(t);
    }
    Err(QueryError(format!(
        "{s:?} is not a time: use RFC 3339 (2024-05-01T10:00:00Z) or \"2024-05-01 10:00:00\" (UTC)"
    )))
}

/// Parses a duration such as `2m`, `90s`, `1h30m`.
pub fn parse_duration_arg(s: &str) -> Result<Micros, QueryError> {
    match human_duration(s.trim()) {
        Ok(("", secs)) => Ok(secs * MICROS_PER_SEC),
        _ => Err(QueryError(format!(
            "{s:?} is not a duration: use e.g. 90s, 2m, 1h30m"
        ))),
    }
}

/// Parses `--tz`: `UTC`, `+08:00`, `-0700`, `-7`. Returns seconds east of UTC.
pub fn parse_tz_arg(s: &str) -> Result<i64, QueryError> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("utc") || s == "Z" {
        return Ok(0);
    }
    let padded;
    let candidate = match s.as_bytes() {
        [sign @ (b'+' | b'-'), d] if d.is_ascii_digit() => {
            padded = format!("{}0{}", *sign as char, *d as char);
            padded.as_str()
        }
        _ => s,
    };
    match zone(candidate) {
        Ok(("", secs)) if secs.abs() <= 14 * 3600 => Ok(secs),
        _ => Err(QueryError(format!(
            "{s:?} is not a UTC offset: use e.g. UTC, +08:00, -0700"
        ))),
    }
}

/// Parses `--around`: `FILE:LINE` or a time.
pub fn parse_anchor_arg(s: &str) -> Result<Anchor, QueryError> {
    if let Ok(t) = parse_time_arg(s) {
        return Ok(Anchor::Instant(t));
    }
    if let Some((file, line)) = s.rsplit_once(':') {
        if let Ok(line) = line.parse::<u32>() {
            return Ok(Anchor::FileLine {
                file: file.to_string(),
                line,
            });
        }
    }
    Err(QueryError(format!(
        "--around {s:?}: expected FILE:LINE or a time"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(source_matches(
            "dashboard*",
            "head/logs/dashboard_agent.log",
            "dashboard_agent"
        ));
        assert!(source_matches("operator", "x/kuberay.log", "operator"));
        assert!(source_matches(
            "*/serve/*",
            "head/logs/serve/controller_1.log",
            "serve_controller"
        ));
        assert!(!source_matches(
            "raylet",
            "head/logs/gcs_server.out",
            "gcs_server"
        ));
        assert!(source_matches("*.lo?", "a.log", "unknown"));
    }

    #[test]
    fn args() {
        assert_eq!(parse_tz_arg("-7"), Ok(-7 * 3600));
        assert_eq!(parse_tz_arg("+05:30"), Ok(5 * 3600 + 1800));
        assert_eq!(parse_tz_arg("UTC"), Ok(0));
        assert!(parse_tz_arg("Mars").is_err());
        assert_eq!(parse_duration_arg("2m"), Ok(120 * MICROS_PER_SEC));
        assert!(parse_duration_arg("2 minutes").is_err());
        assert!(parse_time_arg("2024-05-01T10:00:00Z").is_ok());
        assert!(parse_time_arg("2024-05-01 10:00:00").is_ok());
        assert!(matches!(
            parse_anchor_arg("head/logs/raylet.out:42"),
            Ok(Anchor::FileLine { line: 42, .. })
        ));
    }
}
