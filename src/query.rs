//! Selecting events from a timeline: by source, level, text, and time (absolute bounds, or a
//! window around a file:line or an instant). Used by `raysift timeline`.
//!
//! Invariant: selection never reorders; it only keeps or drops events of the merged stream.

use regex::Regex;

use crate::event::{Event, Level, Micros, Timestamp, MICROS_PER_DAY, MICROS_PER_SEC};
use crate::glob::source_matches;
use crate::parse::primitives::{date_time, instant, zone};
use crate::timeline::Timeline;

/// Where `--around` points.
#[derive(Clone, Debug)]
pub enum Anchor {
    /// `FILE:LINE`: the file is matched by its path's suffix.
    FileLine {
        file: String,
        line: u32,
    },
    Instant(TimeSpec),
}

/// A validated selection.
#[derive(Clone, Debug)]
pub struct Query {
    pub sources: Vec<String>,
    pub min_level: Option<Level>,
    pub grep: Option<Regex>,
    pub since: Option<TimeSpec>,
    pub until: Option<TimeSpec>,
    pub around: Option<Anchor>,
    /// Half-width of the `--around` window.
    pub window: Micros,
    /// `--namespace` / `--object`.
    pub objects: Option<crate::objects::Filter>,
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
            objects: None,
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
    let base = TimeBase {
        capture: tl.capture.as_ref().map(|c| c.micros),
        start: tl.window().map(|(lo, _)| lo),
    };
    let center = match &q.around {
        Some(Anchor::Instant(t)) => Some(t.resolve(base, Edge::Start)?),
        Some(Anchor::FileLine { file, line }) => Some(anchor_time(tl, file, *line)?),
        None => None,
    };
    let (lo, hi) = q.bounds(center, base)?;
    let source_ok = q.sources_ok(&tl.files);
    Ok(tl
        .events
        .iter()
        .filter(|ev| {
            source_ok.get(ev.file as usize).copied().unwrap_or(false)
                && q.keeps_text(ev)
                && in_range(ev, lo, hi)
                && q.objects
                    .as_ref()
                    .is_none_or(|f| f.keeps(ev, tl.file(ev.file).map_or("", |x| x.path.as_str())))
        })
        .collect())
}

impl Query {
    /// The time bounds, given the centre of the `--around` window when there is one and what
    /// relative times count from. `--since` after `--until` is an error: nothing could match.
    pub fn bounds(
        &self,
        center: Option<Micros>,
        base: TimeBase,
    ) -> Result<(Option<Micros>, Option<Micros>), QueryError> {
        let since = self
            .since
            .as_ref()
            .map(|t| t.resolve(base, Edge::Start))
            .transpose()?;
        let until = self
            .until
            .as_ref()
            .map(|t| t.resolve(base, Edge::End))
            .transpose()?;
        if let (Some(s), Some(u), Some(ss), Some(us)) = (since, until, &self.since, &self.until) {
            if s > u {
                return Err(since_after_until(ss, s, us, u));
            }
        }
        let (mut lo, mut hi) = (since, until);
        if let Some(center) = center {
            lo = Some(lo.map_or(center - self.window, |l| l.max(center - self.window)));
            hi = Some(hi.map_or(center + self.window, |h| h.min(center + self.window)));
        }
        Ok((lo, hi))
    }

    /// `--since` after `--until` when both are known without the bundle: checked before
    /// reading it.
    pub fn check_fixed_bounds(&self) -> Result<(), QueryError> {
        let since = self.since.as_ref().and_then(|t| t.fixed(Edge::Start));
        let until = self.until.as_ref().and_then(|t| t.fixed(Edge::End));
        match (since, until, &self.since, &self.until) {
            (Some(s), Some(u), Some(ss), Some(us)) if s > u => Err(since_after_until(ss, s, us, u)),
            _ => Ok(()),
        }
    }

    /// The `--source` globs that keep no file of the bundle.
    pub fn unmatched_sources(&self, files: &[crate::load::FileInfo]) -> Vec<&str> {
        self.sources
            .iter()
            .filter(|g| {
                !files
                    .iter()
                    .any(|f| source_matches(g, &f.path, f.kind.as_str()))
            })
            .map(String::as_str)
            .collect()
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

fn since_after_until(since: &TimeSpec, s: Micros, until: &TimeSpec, u: Micros) -> QueryError {
    QueryError(format!(
        "--since {:?} ({}) is after --until {:?} ({}): nothing can match",
        since.text,
        crate::event::format_rfc3339(s),
        until.text,
        crate::event::format_rfc3339(u)
    ))
}

/// Whether an event's time lies within the bounds (an untimed one never does).
pub fn in_range(ev: &Event, lo: Option<Micros>, hi: Option<Micros>) -> bool {
    ts_in_range(ev.ts, lo, hi)
}

/// Whether a time lies within the bounds ([`in_range`] of the event that has it).
pub fn ts_in_range(ts: Option<Timestamp>, lo: Option<Micros>, hi: Option<Micros>) -> bool {
    if lo.is_none() && hi.is_none() {
        return true;
    }
    match ts {
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
    line_in_file(f, line)?;
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

/// `--around FILE:LINE` past the end of the file is a mistake, not the file's last line.
pub fn line_in_file(f: &crate::load::FileInfo, line: u32) -> Result<(), QueryError> {
    if u64::from(line) > f.lines {
        return Err(QueryError(format!(
            "--around {}:{line}: the file has {}",
            f.path,
            crate::words::count(f.lines, "line", "lines")
        )));
    }
    Ok(())
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

/// A time given on the command line, as written. Some forms only mean an instant once the
/// bundle is read (its capture time, its first event): they are kept unresolved until then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeArg {
    /// An instant: RFC 3339, or a date and a time read as UTC.
    At(Micros),
    /// A date alone, UTC: the whole day (`--since` its start, `--until` its end).
    Day(Micros),
    /// A clock time (microseconds after midnight, UTC) on the bundle's capture date.
    Clock(Micros),
    /// So long before the capture time (`10m`, `-10m`, `10m ago`).
    BeforeCapture(Micros),
    /// So long after the bundle's first timed event (`+5m`).
    AfterStart(Micros),
}

/// A time flag as given: the flag, the text and what it means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeSpec {
    pub flag: &'static str,
    pub text: String,
    pub arg: TimeArg,
}

/// What relative times count from, once the bundle is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeBase {
    /// The capture time (`timeline::CaptureTime`): relative times and clock times need it.
    pub capture: Option<Micros>,
    /// The bundle's first timed event: `+5m` needs it.
    pub start: Option<Micros>,
}

/// Which end of a span a time bounds: a date alone means its day's start or end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    Start,
    End,
}

impl TimeSpec {
    /// Reads `--since`, `--until` or `--around` as a time; the error names the flag and value.
    pub fn parse(flag: &'static str, s: &str) -> Result<TimeSpec, QueryError> {
        match parse_time_arg(s) {
            Some(arg) => Ok(TimeSpec {
                flag,
                text: s.trim().to_string(),
                arg,
            }),
            None => Err(QueryError(format!(
                "{flag} {s:?} is not a time: use 2024-05-01T10:00:00Z, \"2024-05-01 10:00\" (UTC), \
                 2024-05-01, 16:05 (on the capture date), 10m (before the capture time) or +5m \
                 (after the first event)"
            ))),
        }
    }

    /// The instant, when it needs nothing from the bundle.
    pub fn fixed(&self, edge: Edge) -> Option<Micros> {
        match self.arg {
            TimeArg::At(t) => Some(t),
            TimeArg::Day(d) => Some(day_edge(d, edge)),
            _ => None,
        }
    }

    /// The instant, counted from the bundle's capture time or first event where it is relative.
    pub fn resolve(&self, base: TimeBase, edge: Edge) -> Result<Micros, QueryError> {
        let need = |what: Option<Micros>, name: &str| {
            what.ok_or_else(|| {
                QueryError(format!(
                    "{} {:?}: the bundle has no {name} to count from (no timed event)",
                    self.flag, self.text
                ))
            })
        };
        Ok(match self.arg {
            TimeArg::At(t) => t,
            TimeArg::Day(d) => day_edge(d, edge),
            TimeArg::Clock(c) => {
                let cap = need(base.capture, "capture time")?;
                cap.div_euclid(MICROS_PER_DAY) * MICROS_PER_DAY + c
            }
            TimeArg::BeforeCapture(d) => need(base.capture, "capture time")? - d,
            TimeArg::AfterStart(d) => need(base.start, "first event")? + d,
        })
    }
}

fn day_edge(day: Micros, edge: Edge) -> Micros {
    match edge {
        Edge::Start => day,
        Edge::End => day + MICROS_PER_DAY - 1,
    }
}

/// Parses a time in any of the forms `TimeArg` holds; `None` when it is none of them.
pub fn parse_time_arg(s: &str) -> Option<TimeArg> {
    use chrono::{NaiveDate, NaiveDateTime, NaiveTime, Timelike};
    let s = s.trim();
    if let Ok(("", t)) = instant(s) {
        return Some(TimeArg::At(t));
    }
    if let Ok(("", t)) = date_time(s) {
        return Some(TimeArg::At(t));
    }
    for fmt in ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(TimeArg::At(t.and_utc().timestamp_micros()));
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let midnight = d.and_time(NaiveTime::MIN).and_utc().timestamp_micros();
        return Some(TimeArg::Day(midnight));
    }
    for fmt in ["%H:%M:%S%.f", "%H:%M"] {
        if let Ok(t) = NaiveTime::parse_from_str(s, fmt) {
            let micros = i64::from(t.num_seconds_from_midnight()) * MICROS_PER_SEC
                + i64::from(t.nanosecond() / 1000);
            return Some(TimeArg::Clock(micros));
        }
    }
    if let Some(rest) = s.strip_prefix('+') {
        return duration_micros(rest).map(TimeArg::AfterStart);
    }
    let back = s
        .strip_prefix('-')
        .or_else(|| s.strip_suffix(" ago"))
        .unwrap_or(s);
    duration_micros(back).map(TimeArg::BeforeCapture)
}

/// A duration such as `500ms`, `90s`, `2m`, `1h30m`, `1h 30m` (humantime's grammar).
fn duration_micros(s: &str) -> Option<Micros> {
    let d = humantime::parse_duration(s.trim()).ok()?;
    Micros::try_from(d.as_micros()).ok()
}

/// Parses `--window`: a duration such as `500ms`, `90s`, `2m`, `1h30m`.
pub fn parse_duration_arg(s: &str) -> Result<Micros, QueryError> {
    duration_micros(s).ok_or_else(|| {
        QueryError(format!(
            "--window {s:?} is not a duration: use e.g. 500ms, 90s, 2m, 1h30m"
        ))
    })
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

/// Parses `--around`: a time (any `--since` form) or `FILE:LINE`.
pub fn parse_anchor_arg(s: &str) -> Result<Anchor, QueryError> {
    if let Ok(t) = TimeSpec::parse("--around", s) {
        return Ok(Anchor::Instant(t));
    }
    if let Some((file, line)) = s.rsplit_once(':') {
        if let Ok(line) = line.parse::<u32>() {
            if line == 0 {
                return Err(QueryError(format!(
                    "--around {s:?}: lines are counted from 1"
                )));
            }
            return Ok(Anchor::FileLine {
                file: file.to_string(),
                line,
            });
        }
    }
    Err(QueryError(format!(
        "--around {s:?}: expected FILE:LINE or a time (as for --since)"
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
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
        assert!(parse_duration_arg("two minutes").is_err());
        assert!(parse_time_arg("2024-05-01T10:00:00Z").is_some());
        assert!(parse_time_arg("2024-05-01 10:00:00").is_some());
        assert!(matches!(
            parse_anchor_arg("head/logs/raylet.out:42"),
            Ok(Anchor::FileLine { line: 42, .. })
        ));
    }

    fn at(s: &str) -> Micros {
        match parse_time_arg(s) {
            Some(TimeArg::At(t)) => t,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn times_in_every_form() {
        let day = at("2023-08-22T00:00:00Z");
        let min = 60 * MICROS_PER_SEC;
        assert_eq!(at("2023-08-22T16:05:00Z"), day + (16 * 60 + 5) * min);
        assert_eq!(at("2023-08-22T18:05:00+02:00"), day + (16 * 60 + 5) * min);
        assert_eq!(at("2023-08-22 16:05"), day + (16 * 60 + 5) * min);
        assert_eq!(at("2023-08-22T16:05"), day + (16 * 60 + 5) * min);
        assert_eq!(parse_time_arg("2023-08-22"), Some(TimeArg::Day(day)));
        assert_eq!(
            parse_time_arg("16:05"),
            Some(TimeArg::Clock((16 * 60 + 5) * min))
        );
        assert_eq!(
            parse_time_arg("16:05:30.5"),
            Some(TimeArg::Clock((16 * 60 + 5) * min + 30_500_000))
        );
        for back in ["10m", "-10m", "10m ago", "10min"] {
            assert_eq!(
                parse_time_arg(back),
                Some(TimeArg::BeforeCapture(10 * min)),
                "{back}"
            );
        }
        assert_eq!(
            parse_time_arg("+1h30m"),
            Some(TimeArg::AfterStart(90 * min))
        );
        assert_eq!(parse_time_arg("yesterday"), None);
        assert_eq!(parse_time_arg("25:00"), None);
        assert_eq!(parse_duration_arg("500ms"), Ok(500_000));
        assert_eq!(parse_duration_arg("1h 30m"), Ok(90 * min));
    }

    #[test]
    fn relative_times_resolve_against_the_bundle() {
        let min = 60 * MICROS_PER_SEC;
        let capture = at("2023-08-22T16:09:39Z");
        let start = at("2023-08-21T09:09:39Z");
        let base = TimeBase {
            capture: Some(capture),
            start: Some(start),
        };
        let spec = |s: &str| TimeSpec::parse("--since", s).unwrap();
        let r = |s: &str, edge| spec(s).resolve(base, edge).unwrap();
        assert_eq!(r("10m", Edge::Start), capture - 10 * min);
        assert_eq!(r("+5m", Edge::Start), start + 5 * min);
        assert_eq!(r("16:05", Edge::Start), at("2023-08-22T16:05:00Z"));
        assert_eq!(r("2023-08-22", Edge::Start), at("2023-08-22T00:00:00Z"));
        assert_eq!(r("2023-08-22", Edge::End), at("2023-08-23T00:00:00Z") - 1);
        // No timed event: nothing to count from, said with the flag and its value.
        let err = spec("10m")
            .resolve(TimeBase::default(), Edge::Start)
            .unwrap_err();
        assert!(
            err.0
                .starts_with("--since \"10m\": the bundle has no capture time"),
            "{err}"
        );
        assert!(TimeSpec::parse("--until", "soon")
            .unwrap_err()
            .0
            .starts_with("--until \"soon\""));
    }

    #[test]
    fn since_after_until_is_refused() {
        let mut q = Query::everything();
        q.since = Some(TimeSpec::parse("--since", "2023-08-23").unwrap());
        q.until = Some(TimeSpec::parse("--until", "2023-08-22").unwrap());
        assert!(q.check_fixed_bounds().is_err());
        // The same day as both bounds is the whole day.
        q.since = Some(TimeSpec::parse("--since", "2023-08-22").unwrap());
        assert!(q.check_fixed_bounds().is_ok());
        // A relative bound is checked once the bundle is read.
        q.until = Some(TimeSpec::parse("--until", "16:00").unwrap());
        assert!(q.check_fixed_bounds().is_ok());
        let base = TimeBase {
            capture: Some(at("2023-08-21T12:00:00Z")),
            start: None,
        };
        let err = q.bounds(None, base).unwrap_err();
        assert!(err.0.contains("is after --until \"16:00\""), "{err}");
    }
}
