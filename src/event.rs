//! The vocabulary every stage shares: events, times, levels and source kinds.
//!
//! This module depends on no other raysift module. It owns the meaning of a timestamp
//! (`RawTime` as a parser read it, `Timestamp` once the timeline resolved it) and the closed
//! list of source kinds. It does no I/O and no parsing of log lines.

use std::fmt;

/// Microseconds since the Unix epoch, UTC.
pub type Micros = i64;

pub const MICROS_PER_SEC: i64 = 1_000_000;
/// Microseconds in a day.
pub const MICROS_PER_DAY: Micros = 86_400 * MICROS_PER_SEC;

/// A time as a parser read it, before the timeline knows the bundle's zones and capture time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawTime {
    /// An instant with an explicit zone (`Z`, `+0800`, `+00:00`): already UTC.
    Utc(Micros),
    /// Wall-clock time with no zone (Ray's Python and C++ logs), read as if it were UTC.
    /// The timeline shifts it by the container's offset.
    Naive(Micros),
    /// A glog / klog stamp with no year (`I0411 07:43:44.182159`): the year comes from the
    /// file's other stamps or the bundle's window.
    NoYear {
        month: u8,
        day: u8,
        micros_of_day: i64,
    },
    /// A `kubectl` age (`3m12s`): this many seconds before the dump was captured.
    Age { secs: i64 },
}

/// How a resolved timestamp was obtained; shown to the reader as `ts_quality`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TsQuality {
    /// The line carried an explicit zone.
    Exact,
    /// The zone was inferred from evidence in the bundle.
    InferredZone,
    /// The zone was given by the user with `--tz`.
    GivenZone,
    /// No zone and no evidence: read as UTC.
    AssumedUtc,
    /// Derived from a relative age or a guessed year: good to a minute or so.
    Approximate,
}

impl TsQuality {
    pub fn as_str(self) -> &'static str {
        match self {
            TsQuality::Exact => "exact",
            TsQuality::InferredZone => "inferred_zone",
            TsQuality::GivenZone => "given_zone",
            TsQuality::AssumedUtc => "assumed_utc",
            TsQuality::Approximate => "approximate",
        }
    }
}

/// A UTC instant and how it was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp {
    pub micros: Micros,
    pub quality: TsQuality,
}

impl Timestamp {
    /// RFC 3339 in UTC, with milliseconds (microseconds when they are not zero).
    pub fn rfc3339(self) -> String {
        format_rfc3339(self.micros)
    }
}

/// Severity of a log record, normalised across every format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Level {
    Trace,
    Debug,
    #[default]
    Info,
    Warning,
    Error,
    Critical,
}

impl Level {
    /// Every level, least severe first: a level's place here is its [`Level::index`].
    pub const ALL: [Level; 6] = [
        Level::Trace,
        Level::Debug,
        Level::Info,
        Level::Warning,
        Level::Error,
        Level::Critical,
    ];

    /// The level's place in [`Level::ALL`]: how a spilled record writes it in a byte.
    pub fn index(self) -> u8 {
        self as u8
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
        }
    }

    /// Reads every spelling the formats use: `INFO`, `info`, `I`, `WARN`, `W`, `SUCC`, `Warning` …
    pub fn parse(token: &str) -> Option<Level> {
        let level = match token {
            "T" | "TRACE" | "trace" => Level::Trace,
            "D" | "DEBUG" | "debug" | "Debug" => Level::Debug,
            "I" | "INFO" | "info" | "Info" | "SUCC" | "Normal" | "NOTICE" => Level::Info,
            "W" | "WARN" | "WARNING" | "warn" | "warning" | "Warning" => Level::Warning,
            "E" | "ERROR" | "error" | "Error" | "DPANIC" | "dpanic" => Level::Error,
            "C" | "F" | "CRITICAL" | "FATAL" | "fatal" | "PANIC" | "panic" | "critical" => {
                Level::Critical
            }
            _ => return None,
        };
        Some(level)
    }
}

/// What kind of file a record came from. Content decides, the file name helps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceKind {
    /// KubeRay operator log (zap console or JSON, klog lines interleaved).
    Operator,
    Dashboard,
    DashboardAgent,
    /// `monitor.log` and the autoscaler sidecar.
    Autoscaler,
    RuntimeEnvAgent,
    RuntimeEnvSetup,
    LogMonitor,
    /// Any other Ray Python component log (`LOGGER_FORMAT`).
    RayPython,
    Raylet,
    GcsServer,
    /// `python-core-worker-*.log` / `python-core-driver-*.log`.
    CoreWorker,
    /// `worker-*.out|.err`: raw stdout / stderr of tasks and actors.
    Worker,
    /// `job-driver-*.log` and RayJob submitter output.
    JobDriver,
    ServeController,
    ServeProxy,
    ServeReplica,
    /// Head or worker container stdout (`ray start` output, `stdout.log`).
    RayContainer,
    /// The `wait-gcs-ready` init container.
    InitContainer,
    /// Ray's structured events (`logs/events/event_RAYLET.log`, `event_GCS.log`, …): one
    /// JSON object a line, with a severity, a source and a label.
    RayEvent,
    /// Ray's export events (`logs/export_events/event_EXPORT_ACTOR.log`, …, Ray 2.40+ with
    /// `RAY_enable_export_api_write`): one JSON object a line, an actor's, node's, job's or
    /// task's new state.
    RayExportEvent,
    DescribeRayService,
    DescribeRayCluster,
    DescribeRayJob,
    DescribePod,
    DescribeNode,
    /// `kubectl describe` of any other kind.
    DescribeOther,
    /// `kubectl get events` table.
    KubeEvents,
    /// Any other `kubectl get <kind>` table (pods, nodes, RayClusters, RayServices, RayJobs).
    KubeTable,
    /// A Kubernetes object or List as YAML or JSON (including troubleshoot dumps).
    KubeObject,
    /// Bundle metadata (troubleshoot `version.yaml`, a generator's `metadata.json`).
    BundleMeta,
    /// Text nobody recognised; still scanned line by line.
    Unknown,
}

impl SourceKind {
    pub const ALL: [SourceKind; 31] = [
        SourceKind::Operator,
        SourceKind::Dashboard,
        SourceKind::DashboardAgent,
        SourceKind::Autoscaler,
        SourceKind::RuntimeEnvAgent,
        SourceKind::RuntimeEnvSetup,
        SourceKind::LogMonitor,
        SourceKind::RayPython,
        SourceKind::Raylet,
        SourceKind::GcsServer,
        SourceKind::CoreWorker,
        SourceKind::Worker,
        SourceKind::JobDriver,
        SourceKind::ServeController,
        SourceKind::ServeProxy,
        SourceKind::ServeReplica,
        SourceKind::RayContainer,
        SourceKind::InitContainer,
        SourceKind::RayEvent,
        SourceKind::RayExportEvent,
        SourceKind::DescribeRayService,
        SourceKind::DescribeRayCluster,
        SourceKind::DescribeRayJob,
        SourceKind::DescribePod,
        SourceKind::DescribeNode,
        SourceKind::DescribeOther,
        SourceKind::KubeEvents,
        SourceKind::KubeTable,
        SourceKind::KubeObject,
        SourceKind::BundleMeta,
        SourceKind::Unknown,
    ];

    /// The kind's place in [`SourceKind::ALL`]: how a spilled record writes it in a byte.
    pub fn index(self) -> u8 {
        self as u8
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Operator => "operator",
            SourceKind::Dashboard => "dashboard",
            SourceKind::DashboardAgent => "dashboard_agent",
            SourceKind::Autoscaler => "autoscaler",
            SourceKind::RuntimeEnvAgent => "runtime_env_agent",
            SourceKind::RuntimeEnvSetup => "runtime_env_setup",
            SourceKind::LogMonitor => "log_monitor",
            SourceKind::RayPython => "ray_python",
            SourceKind::Raylet => "raylet",
            SourceKind::GcsServer => "gcs_server",
            SourceKind::CoreWorker => "core_worker",
            SourceKind::Worker => "worker",
            SourceKind::JobDriver => "job_driver",
            SourceKind::ServeController => "serve_controller",
            SourceKind::ServeProxy => "serve_proxy",
            SourceKind::ServeReplica => "serve_replica",
            SourceKind::RayContainer => "ray_container",
            SourceKind::InitContainer => "init_container",
            SourceKind::RayEvent => "ray_event",
            SourceKind::RayExportEvent => "ray_export_event",
            SourceKind::DescribeRayService => "describe_rayservice",
            SourceKind::DescribeRayCluster => "describe_raycluster",
            SourceKind::DescribeRayJob => "describe_rayjob",
            SourceKind::DescribePod => "describe_pod",
            SourceKind::DescribeNode => "describe_node",
            SourceKind::DescribeOther => "describe_other",
            SourceKind::KubeEvents => "kube_events",
            SourceKind::KubeTable => "kube_table",
            SourceKind::KubeObject => "kube_object",
            SourceKind::BundleMeta => "bundle_meta",
            SourceKind::Unknown => "unknown",
        }
    }

    pub fn from_name(name: &str) -> Option<SourceKind> {
        SourceKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text of a field's key or value: kept inline up to 24 bytes (keys, statuses, numbers,
/// short names), so that the fields of a typical record cost no allocation of their own. A
/// full parse builds millions of them; a `String` each made allocation the largest cost of
/// reading a bundle whole.
pub type Text = compact_str::CompactString;

/// Index of a file in the bundle's inventory.
pub type FileId = u32;

/// One record of the timeline: a log line (with its continuation lines), a row of an events
/// table, or a state fact read from a Kubernetes object.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The time as parsed; `None` when the record carried none.
    pub raw_time: Option<RawTime>,
    /// The resolved UTC time; filled in by the timeline.
    pub ts: Option<Timestamp>,
    pub file: FileId,
    /// 1-based number of the record's first physical line.
    pub line: u32,
    /// How many physical lines the record spans (1 for a plain line).
    pub n_lines: u32,
    pub kind: SourceKind,
    pub level: Level,
    /// Logger, component or reporting controller (`controllers.RayService`, `raylet`, …):
    /// short, so kept inline.
    pub component: Text,
    /// The message; continuation lines are joined with `\n`.
    pub message: String,
    /// Structured key/values (JSON operator fields, describe paths, event columns, …).
    pub fields: Vec<(Text, Text)>,
    /// When the event stands for later records of its file that repeat it (a dense
    /// incident logging one error on every reconcile): how many, and when the last was.
    pub repeat: Option<Box<Repeat>>,
    /// Built by a light parse (`parse::Detail`): the record's time, level and lines are
    /// those of the full parse, but its component, message and fields were not built.
    pub light: bool,
    /// What tells this record from every other of its process when it may be written to two
    /// files (`raylet.out` and `raylet.err`): a hash of its first line as written, time, pid
    /// and text included (`parse::lines::mirror_key`); 0 for a record that is never looked
    /// for elsewhere (no time, or below warning). See `load::mirror`.
    pub mirror_key: u64,
    /// What tells this record from the others its process wrote, without its time: a hash of
    /// its pid and its message's first line (`parse::ray_event::echo_key`). Ray's event files
    /// repeat some records of its logs (a failed check, a node removed): such an event and
    /// the record it repeats share it. 0 for a record that no event repeats.
    pub echo_key: u64,
}

/// Records folded into the event that shows them: the same record (kind, level, component,
/// message and fields, once times and ids are set aside) logged again and again in one file.
/// The first folded record is the event itself; the others are counted, not kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Repeat {
    /// Records the event stands for, itself included (at least 2).
    pub count: u64,
    /// The first line of the last folded record.
    pub last_line: u32,
    /// The last folded record's time as parsed (the same variant as the event's).
    pub last_raw: RawTime,
    /// That time resolved, filled in by the timeline.
    pub last: Option<Micros>,
    /// The shortest time `n` consecutive folded records span, for `n` = 2 ..= 1 +
    /// [`REPEAT_SPANS`] (index `n - 2`), in file order; `Micros::MAX` when fewer were folded.
    pub min_span: [Micros; REPEAT_SPANS],
    /// Parsed times of the first and of the last [`REPEAT_SPANS`] folded records, so that two
    /// folds joined end to end know the spans across the joint.
    pub first_times: Vec<Micros>,
    pub last_times: Vec<Micros>,
}

/// The longest silence within one incident's records: an operator's start-up a day before
/// the incident and hours of silence are not part of it (see `timeline::Spans`).
pub const QUIET: Micros = 3 * 3600 * MICROS_PER_SEC;

/// How many window lengths a [`Repeat`] keeps the shortest span of.
pub const REPEAT_SPANS: usize = 8;

impl Repeat {
    /// A fold of one record at parsed time `t`.
    pub fn single(line: u32, raw: RawTime, t: Micros) -> Repeat {
        Repeat {
            count: 1,
            last_line: line,
            last_raw: raw,
            last: None,
            min_span: [Micros::MAX; REPEAT_SPANS],
            first_times: vec![t],
            last_times: vec![t],
        }
    }

    /// Appends `next`, which follows in the file.
    pub fn extend(&mut self, next: &Repeat) {
        // Windows across the joint: `a` records of self's end and `b` of next's start.
        for n in 2..=REPEAT_SPANS + 1 {
            for a in 1..n {
                let b = n - a;
                let (Some(&lo), Some(&hi)) = (
                    self.last_times
                        .len()
                        .checked_sub(a)
                        .and_then(|i| self.last_times.get(i)),
                    next.first_times.get(b - 1),
                ) else {
                    continue;
                };
                self.min_span[n - 2] = self.min_span[n - 2].min(hi - lo);
            }
            self.min_span[n - 2] = self.min_span[n - 2].min(next.min_span[n - 2]);
        }
        let room = REPEAT_SPANS.saturating_sub(self.first_times.len());
        self.first_times
            .extend(next.first_times.iter().take(room).copied());
        self.last_times.extend(&next.last_times);
        let excess = self.last_times.len().saturating_sub(REPEAT_SPANS);
        self.last_times.drain(..excess);
        self.count += next.count;
        self.last_line = next.last_line;
        self.last_raw = next.last_raw;
        self.last = next.last;
    }

    /// Whether some `n` consecutive folded records lie within `window`.
    pub fn dense(&self, n: usize, window: Micros) -> bool {
        if n <= 1 {
            return self.count >= 1;
        }
        if (self.count as usize) < n {
            return false;
        }
        match self.min_span.get(n - 2) {
            Some(&span) => span <= window,
            // Longer windows than kept: judged by the mean spacing.
            None => {
                let (Some(first), Some(last)) = (self.first_times.first(), self.last_times.last())
                else {
                    return false;
                };
                let mean = (last - first) / (self.count as i64 - 1).max(1);
                mean.saturating_mul(n as i64 - 1) <= window
            }
        }
    }
}

impl Event {
    /// A record with only a line number and a message; parsers fill in the rest.
    pub fn new(line: u32, message: impl Into<String>) -> Event {
        Event {
            raw_time: None,
            ts: None,
            file: 0,
            line,
            n_lines: 1,
            kind: SourceKind::Unknown,
            level: Level::Info,
            component: Text::default(),
            message: message.into(),
            fields: Vec::new(),
            repeat: None,
            light: false,
            mirror_key: 0,
            echo_key: 0,
        }
    }

    /// A record of a light parse: its time and level, nothing else built.
    pub fn light(raw_time: Option<RawTime>, level: Level) -> Event {
        Event {
            raw_time,
            level,
            light: true,
            ..Event::new(0, String::new())
        }
    }

    /// How many records the event stands for: 1, or more when it folds repeats.
    pub fn weight(&self) -> u64 {
        self.repeat.as_ref().map_or(1, |r| r.count)
    }

    /// The resolved time of the last record the event stands for.
    pub fn last_micros(&self) -> Option<Micros> {
        match &self.repeat {
            Some(r) => r.last.or(self.ts.map(|t| t.micros)),
            None => self.ts.map(|t| t.micros),
        }
    }

    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Appends a continuation line to the message.
    pub fn push_continuation(&mut self, text: &str) {
        self.message.push('\n');
        self.message.push_str(text);
        self.n_lines += 1;
    }
}

/// An event borrowed from where it is kept, for a reader that only looks at it: the merge of a
/// spill hands these out read straight from its buffer, so that writing an event allocates
/// nothing. `Event::view` gives one of an event in memory; [`EventRef::to_event`] the owned
/// event back (for a caller that changes it, such as redaction). A view has no `repeat`: the
/// events read back from a spill never fold.
#[derive(Clone, Copy, Debug)]
pub struct EventRef<'a> {
    pub raw_time: Option<RawTime>,
    pub ts: Option<Timestamp>,
    pub file: FileId,
    pub line: u32,
    pub n_lines: u32,
    pub kind: SourceKind,
    pub level: Level,
    pub light: bool,
    pub component: &'a str,
    pub message: &'a str,
    pub fields: Fields<'a>,
}

/// The structured fields of an [`EventRef`], in the event's order; iterating gives each
/// `(key, value)` pair.
#[derive(Clone, Copy, Debug)]
pub enum Fields<'a> {
    /// The fields of an event in memory.
    Pairs(&'a [(Text, Text)]),
    /// Pairs packed as `lens` (for each pair, the byte lengths of its key and its value as
    /// little-endian `u32`s) and `text` (every key and value, one after the other). A
    /// length that does not fit the text ends the iteration.
    Packed { lens: &'a [u8], text: &'a str },
}

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        match self {
            Fields::Pairs(pairs) => {
                let ((k, v), rest) = pairs.split_first()?;
                *pairs = rest;
                Some((k.as_str(), v.as_str()))
            }
            Fields::Packed { lens, text } => {
                let (k_len, v_len, rest_lens) = match lens.split_first_chunk::<8>() {
                    Some((l, rest)) => (
                        u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize,
                        u32::from_le_bytes([l[4], l[5], l[6], l[7]]) as usize,
                        rest,
                    ),
                    None => return None,
                };
                let (k, rest) = text.split_at_checked(k_len)?;
                let (v, rest) = rest.split_at_checked(v_len)?;
                *lens = rest_lens;
                *text = rest;
                Some((k, v))
            }
        }
    }
}

impl Event {
    /// The event as a borrowed view (without its `repeat`).
    pub fn view(&self) -> EventRef<'_> {
        EventRef {
            raw_time: self.raw_time,
            ts: self.ts,
            file: self.file,
            line: self.line,
            n_lines: self.n_lines,
            kind: self.kind,
            level: self.level,
            light: self.light,
            component: &self.component,
            message: &self.message,
            fields: Fields::Pairs(&self.fields),
        }
    }
}

impl EventRef<'_> {
    /// The owned event the view shows (with no `repeat`).
    pub fn to_event(&self) -> Event {
        Event {
            raw_time: self.raw_time,
            ts: self.ts,
            file: self.file,
            line: self.line,
            n_lines: self.n_lines,
            kind: self.kind,
            level: self.level,
            component: Text::from(self.component),
            message: self.message.to_string(),
            fields: self
                .fields
                .map(|(k, v)| (Text::from(k), Text::from(v)))
                .collect(),
            repeat: None,
            light: self.light,
            mirror_key: 0,
            echo_key: 0,
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let (m, d) = (i64::from(m), i64::from(d));
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Checks a calendar date, so that `Feb 30` is refused rather than rolled over.
pub fn valid_date(y: i64, m: u32, d: u32) -> bool {
    if !(1..=12).contains(&m) || d == 0 || !(1000..=3000).contains(&y) {
        return false;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let dim = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= dim
}

/// Microseconds since the epoch of a civil date and time, or `None` if the date or time is
/// not a real one (year outside 1000–3000, `Feb 30`, `25:00`).
pub fn micros_from_civil(
    y: i64,
    mo: u32,
    d: u32,
    h: u32,
    mi: u32,
    s: u32,
    micros: u32,
) -> Option<Micros> {
    if h > 23 || mi > 59 || s > 60 || micros >= 1_000_000 {
        return None;
    }
    let days = day_number(y, mo, d)?;
    let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s);
    Some(secs * MICROS_PER_SEC + i64::from(micros))
}

thread_local! {
    /// The last date [`day_number`] found on this thread and its day number: a log's records
    /// mostly share their date with the one before.
    static LAST_DATE: std::cell::Cell<(i64, u32, u32, i64)> =
        const { std::cell::Cell::new((i64::MIN, 0, 0, 0)) };
}

/// [`days_from_civil`] of a real date ([`valid_date`]), else `None`.
fn day_number(y: i64, m: u32, d: u32) -> Option<i64> {
    LAST_DATE.with(|last| {
        let (ly, lm, ld, days) = last.get();
        // Month 0 marks the empty cache: no real date has it.
        if lm != 0 && (ly, lm, ld) == (y, m, d) {
            return Some(days);
        }
        if !valid_date(y, m, d) {
            return None;
        }
        let days = days_from_civil(y, m, d);
        last.set((y, m, d, days));
        Some(days)
    })
}

/// RFC 3339 UTC: `2024-10-07T15:22:56.894Z`, or with six fractional digits when the
/// sub-millisecond part is not zero.
pub fn format_rfc3339(micros: Micros) -> String {
    Rfc3339::of(micros).as_str().to_string()
}

/// A time written as [`format_rfc3339`] writes it, on the stack: a writer of millions of
/// times (the JSON timeline) copies it out without allocating a `String` for each.
pub struct Rfc3339 {
    buf: [u8; RFC3339_MAX],
    len: usize,
}

/// The longest time written: a six-digit year with its sign and six fractional digits.
const RFC3339_MAX: usize = 32;

impl Rfc3339 {
    pub fn of(micros: Micros) -> Rfc3339 {
        let secs = micros.div_euclid(MICROS_PER_SEC);
        let frac = micros.rem_euclid(MICROS_PER_SEC);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let (h, mi, s) = (sod / 3600, sod % 3600 / 60, sod % 60);
        let mut out = Rfc3339 {
            buf: [0; RFC3339_MAX],
            len: 0,
        };
        if !(0..=9999).contains(&y) {
            // Years no log writes: `format!`'s padding and sign, off the fast path.
            let _ = if frac % 1000 == 0 {
                fmt::Write::write_fmt(
                    &mut out,
                    format_args!(
                        "{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
                        frac / 1000
                    ),
                )
            } else {
                fmt::Write::write_fmt(
                    &mut out,
                    format_args!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{frac:06}Z"),
                )
            };
            return out;
        }
        out.digits(y, 4);
        out.push(b'-');
        out.digits(i64::from(m), 2);
        out.push(b'-');
        out.digits(i64::from(d), 2);
        out.push(b'T');
        out.digits(h, 2);
        out.push(b':');
        out.digits(mi, 2);
        out.push(b':');
        out.digits(s, 2);
        out.push(b'.');
        if frac % 1000 == 0 {
            out.digits(frac / 1000, 3);
        } else {
            out.digits(frac, 6);
        }
        out.push(b'Z');
        out
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    fn push(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// The last `width` decimal digits of `v` (not negative).
    fn digits(&mut self, mut v: i64, width: usize) {
        let end = self.len + width;
        if let Some(slots) = self.buf.get_mut(self.len..end) {
            for slot in slots.iter_mut().rev() {
                *slot = b'0' + (v % 10) as u8;
                v /= 10;
            }
            self.len = end;
        }
    }
}

impl fmt::Write for Rfc3339 {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_and_a_source_kind_are_at_their_index_in_all() {
        for (i, l) in Level::ALL.iter().enumerate() {
            assert_eq!(usize::from(l.index()), i);
        }
        for (i, k) in SourceKind::ALL.iter().enumerate() {
            assert_eq!(usize::from(k.index()), i);
        }
    }

    #[test]
    fn civil_round_trip() {
        for days in [-1000, 0, 1, 19_000, 20_000, 60_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn a_date_is_judged_the_same_whatever_date_came_before() {
        // Each date after a real one, a false one, itself, and no date at all.
        let dates = "2024-2-29 2023-2-29 2024-2-29 2024-2-29 2023-2-28 2023-2-29 2023-2-29 \
                     999-1-1 2024-13-1 2024-12-31 2024-12-31 2024-0-0";
        let dates = dates.split_whitespace().map(|date| {
            let n: Vec<i64> = date.split('-').map(|x| x.parse().unwrap_or(0)).collect();
            (n[0], n[1] as u32, n[2] as u32)
        });
        for (y, m, d) in dates {
            let want = valid_date(y, m, d)
                .then(|| days_from_civil(y, m, d) * 86_400_000_000 + 3_723_000_004);
            assert_eq!(micros_from_civil(y, m, d, 1, 2, 3, 4), want, "{y}-{m}-{d}");
            assert_eq!(micros_from_civil(y, m, d, 24, 0, 0, 0), None);
        }
    }

    #[test]
    fn rfc3339() {
        let t = micros_from_civil(2024, 10, 7, 15, 22, 56, 894_000);
        assert_eq!(
            t.map(format_rfc3339).as_deref(),
            Some("2024-10-07T15:22:56.894Z")
        );
        let t = micros_from_civil(2024, 4, 11, 7, 43, 44, 182_159);
        assert_eq!(
            t.map(format_rfc3339).as_deref(),
            Some("2024-04-11T07:43:44.182159Z")
        );
    }

    /// What `format_rfc3339` wrote before it wrote on the stack.
    fn rfc3339_by_format(micros: Micros) -> String {
        let secs = micros.div_euclid(MICROS_PER_SEC);
        let frac = micros.rem_euclid(MICROS_PER_SEC);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let (h, mi, s) = (sod / 3600, sod % 3600 / 60, sod % 60);
        if frac % 1000 == 0 {
            format!(
                "{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
                frac / 1000
            )
        } else {
            format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{frac:06}Z")
        }
    }

    #[test]
    fn rfc3339_on_the_stack_is_what_format_wrote() {
        let day = 86_400 * MICROS_PER_SEC;
        let mut times = vec![
            Micros::MIN,
            Micros::MAX,
            Micros::MIN + 1,
            Micros::MAX - 1,
            0,
            -1,
            1,
            999,
            1000,
            -1000,
            1_728_314_576_894_000,
            1_712_821_424_182_159,
        ];
        // Around the years the fast path starts and stops at.
        for y in [-1, 0, 1, 999, 1000, 1969, 1970, 2024, 9999, 10_000, 12_345] {
            let t = days_from_civil(y, 1, 1) * day;
            times.extend([t - 1, t, t + 1, t + 1000, t + 59_999_999]);
            let t = days_from_civil(y, 12, 31) * day + 86_399_999_000;
            times.extend([t - 1, t, t + 1, t + 1000]);
        }
        // A spread of ordinary times.
        let mut x: i64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            times.push(x.rem_euclid(4_000_000_000_000_000));
            times.push(x.rem_euclid(4_000_000_000) * 1000);
        }
        for t in times {
            assert_eq!(Rfc3339::of(t).as_str(), rfc3339_by_format(t), "{t}");
        }
    }

    #[test]
    fn absurd_dates_are_refused() {
        assert_eq!(micros_from_civil(2024, 2, 30, 0, 0, 0, 0), None);
        assert_eq!(micros_from_civil(9999, 1, 1, 0, 0, 0, 0), None);
        assert_eq!(micros_from_civil(2024, 1, 1, 25, 0, 0, 0), None);
        assert!(micros_from_civil(2024, 2, 29, 0, 0, 0, 0).is_some());
    }
}
