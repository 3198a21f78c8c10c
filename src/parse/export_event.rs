//! Ray's export events: `logs/export_events/event_EXPORT_<TYPE>.log`, written when
//! `RAY_enable_export_api_write=1` (or the type is listed in
//! `RAY_enable_export_api_write_config`), Ray 2.40 and later. One JSON object a line:
//! `event_id`, `timestamp` (Unix seconds), `source_type` (`EXPORT_ACTOR`, `EXPORT_NODE`,
//! `EXPORT_DRIVER_JOB`, `EXPORT_SUBMISSION_JOB`, `EXPORT_TASK` (one file a worker,
//! `event_EXPORT_TASK_<pid>.log`), `EXPORT_TRAIN_RUN`, `EXPORT_TRAIN_RUN_ATTEMPT`,
//! `EXPORT_DATASET_METADATA`, `EXPORT_DATASET_OPERATOR_EVENT`, `EXPORT_DATASET_OPERATOR_SCHEMA`)
//! and `event_data`, the state of one object as protobuf JSON: field names as in the
//! `.proto`, enums by name, 64-bit numbers as strings and ids (`bytes`) in base64. The C++
//! writer (`LogEventReporter::ExportEventToString`, `src/ray/util/event.cc`) writes compact
//! JSON, the Python one (`ray/_private/event/export_event_logger.py`) `json.dumps`'s spaced
//! JSON; both one object a line, nothing before it.
//!
//! An event states an object's new state; it has no severity of its own. Its level is read
//! from the state it states ([`Verdict`]): an actor DEAD because its constructor raised, its
//! worker died of a system error, its node died or it ran out of memory, a node DEAD by an
//! unexpected termination, a submission job FAILED, a task that failed for any reason but a
//! cancellation, a Train run or attempt ERRORED, a dataset FAILED are errors; an actor
//! RESTARTING, a node drained by preemption, a Ray Data operator hanging or short of memory
//! warnings; every other transition (created, ALIVE, RUNNING, FINISHED, an actor killed on
//! purpose or gone out of scope, a node stopped, a job STOPPED by its user) info. The message
//! states it in words, its first line the summary (`actor FeatureStore died: its constructor
//! raised: ValueError: …`, `node <id> (10.244.0.5) died: UNEXPECTED_TERMINATION: …`, `job
//! raysubmit_… FAILED: Job entrypoint command failed with exit code 1, …`), the rest the
//! error's own lines. Ids are written in hex, as Ray's logs write them (`actor_id`, `job_id`,
//! `node_id`, `worker_id`, `task_id`), so a search for an id finds both.
//!
//! A line that is no such object stays a record of its own text, without a time.

use serde_json::{Map, Value};

use crate::event::{Event, Level, RawTime, Text};
use crate::parse::lines::{parse_records, strip_colour, Continuation};
use crate::parse::ray_event::seconds;
use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    parse_records(input, Continuation::Separate, out, |line, _, _| head(line));
}

/// Whether a line is an export event: an object with `event_data` and an `EXPORT_` source,
/// or one that opens with `event_data` as only the C++ writer's do (its keys are sorted, so
/// a long line cut by the classifier's window may not reach its `source_type`).
pub fn is_export_line(text: &str) -> bool {
    text.starts_with("{\"event_data\":{")
        || (text.starts_with('{') && text.contains("\"event_data\"") && text.contains("\"EXPORT_"))
}

/// One export event, or `None` for a line that is none.
pub fn head(line: &str) -> Option<Event> {
    let start = line.trim();
    if !start.starts_with('{') {
        return None;
    }
    let map = serde_json::from_str::<Map<String, Value>>(start).ok()?;
    let source = map.get("source_type").and_then(Value::as_str)?;
    if !source.starts_with("EXPORT_") {
        return None;
    }
    let mut ev = Event::new(0, String::new());
    ev.component = source.into();
    ev.raw_time = map.get("timestamp").and_then(seconds).map(RawTime::Utc);
    if let Some(id) = map.get("event_id").and_then(Value::as_str) {
        ev.fields.push(("event_id".into(), id.into()));
    }
    let empty = Map::new();
    let data = map
        .get("event_data")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let verdict = match source {
        "EXPORT_ACTOR" => actor(data, &mut ev.fields),
        "EXPORT_NODE" => node(data, &mut ev.fields),
        "EXPORT_DRIVER_JOB" => driver_job(data, &mut ev.fields),
        "EXPORT_SUBMISSION_JOB" => submission_job(data, &mut ev.fields),
        "EXPORT_TASK" => task(data, &mut ev.fields),
        "EXPORT_TRAIN_RUN" | "EXPORT_TRAIN_RUN_ATTEMPT" => train(source, data, &mut ev.fields),
        "EXPORT_DATASET_METADATA" | "EXPORT_DATA_METADATA" => dataset(data, &mut ev.fields),
        "EXPORT_DATASET_OPERATOR_EVENT" => dataset_operator(data, &mut ev.fields),
        _ => other(source, data, &mut ev.fields),
    };
    ev.level = verdict.level;
    ev.message = verdict.message;
    Some(ev)
}

/// What an event's state says: its level and its message.
pub(crate) struct Verdict {
    pub(crate) level: Level,
    pub(crate) message: String,
}

pub(crate) fn verdict(level: Level, summary: String, detail: &str) -> Verdict {
    let summary = clean(&summary);
    let detail = clean(detail);
    let detail = detail.trim_matches('\n');
    let message = if detail.is_empty() {
        summary
    } else {
        format!("{summary}\n{detail}")
    };
    Verdict { level, message }
}

/// Colours Ray's error texts keep (`\u001b[36m`), and blank lines (Ray's formatted
/// tracebacks double every line break), taken out.
fn clean(text: &str) -> String {
    let text = strip_colour(text);
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

pub(crate) fn str_of<'a>(data: &'a Map<String, Value>, key: &str) -> &'a str {
    data.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A field as text: strings bare, numbers and booleans as written, nothing for null, empty
/// strings, objects and arrays.
pub(crate) fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub(crate) fn push(fields: &mut Vec<(Text, Text)>, key: &str, value: &str) {
    if !value.is_empty() && !fields.iter().any(|(k, _)| k == key) {
        fields.push((key.into(), value.into()));
    }
}

/// Copies `keys` of `data` that hold a plain value into the fields.
pub(crate) fn copy(fields: &mut Vec<(Text, Text)>, data: &Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = data.get(*key).and_then(scalar) {
            push(fields, key, &v);
        }
    }
}

/// Copies the id fields `keys` (protobuf `bytes`, base64 in JSON) as hex.
pub(crate) fn ids(fields: &mut Vec<(Text, Text)>, data: &Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(id) = data.get(*key).and_then(Value::as_str).and_then(hex_id) {
            push(fields, key, &id);
        }
    }
}

/// `MnRR/OFjmAXaGTicAgAAAA==` → `327451fce1639805da19389c02000000`: the hex Ray's logs
/// write an id in. An id that is not base64 (an empty one, or one already hex) is kept
/// as written when it is hex, else none.
pub fn hex_id(b64: &str) -> Option<String> {
    if b64.is_empty() {
        return None;
    }
    match base64(b64) {
        Some(bytes) if !bytes.is_empty() => {
            let mut s = String::with_capacity(bytes.len() * 2);
            for b in bytes {
                s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
                s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
            }
            Some(s)
        }
        _ if b64.bytes().all(|b| b.is_ascii_hexdigit()) => Some(b64.to_ascii_lowercase()),
        _ => None,
    }
}

/// Standard base64 with its padding, as protobuf's JSON writes `bytes`; `None` for
/// anything else (a hex id is 4-aligned only by chance and then holds no `=`, `+` or `/`,
/// but decodes: hex ids are told by their length below).
fn base64(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() % 4 != 0 {
        return None;
    }
    // Ray's ids are 4 to 28 bytes: their hex is 8 to 56 digits. A string of hex digits only
    // whose length is that of a hex id is one.
    if b.iter().all(u8::is_ascii_hexdigit) && b.len() >= 8 && b.len() % 2 == 0 {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for chunk in b.chunks(4) {
        let mut n = 0u32;
        let mut pad = 0;
        for &c in chunk {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' | b'-' => 62,
                b'/' | b'_' => 63,
                b'=' => {
                    pad += 1;
                    0
                }
                _ => return None,
            };
            n = (n << 6) | u32::from(v);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad.min(2)]);
    }
    Some(out)
}

/// `Some.module.<locals>.FeatureStore` → `FeatureStore`.
fn short_class(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// The exception line of a Python traceback: the first line that names an exception and its
/// text (`ValueError: feature table 'users_v2' not found`), the one raised first when the
/// traceback chains others after it.
pub(crate) fn exception_line(traceback: &str) -> Option<&str> {
    traceback
        .lines()
        .map(str::trim_end)
        .find(|l| super::python_exception::raised_error(l).is_some_and(|r| !r.text.is_empty()))
}

pub(crate) fn actor(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(
        fields,
        data,
        &["actor_id", "job_id", "node_id", "placement_group_id"],
    );
    copy(
        fields,
        data,
        &[
            "class_name",
            "name",
            "state",
            "pid",
            "ray_namespace",
            "repr_name",
        ],
    );
    fields.retain(|(k, v)| !(k == "pid" && v == "0"));
    let class = short_class(str_of(data, "class_name"));
    let id = fields
        .iter()
        .find(|(k, _)| k == "actor_id")
        .map_or(String::from("?"), |(_, v)| v.to_string());
    let class = if class.is_empty() { id.as_str() } else { class };
    let who = match str_of(data, "name") {
        "" => format!("actor {class}"),
        name => format!("actor {class} ({name})"),
    };
    let state = str_of(data, "state");
    let pid = data.get("pid").and_then(Value::as_u64).unwrap_or(0);
    let on = if pid > 0 {
        format!(" (pid {pid})")
    } else {
        String::new()
    };
    if state != "DEAD" {
        let level = if state == "RESTARTING" {
            Level::Warning
        } else {
            Level::Info
        };
        return verdict(level, format!("{who} {state}{on}"), "");
    }
    let cause = data.get("death_cause").and_then(Value::as_object);
    let Some((kind, ctx)) = cause.and_then(|c| c.iter().next()) else {
        return verdict(Level::Info, format!("{who} DEAD{on}"), "");
    };
    let ctx = ctx.as_object().unwrap_or(&EMPTY_MAP);
    push(fields, "death_cause", kind);
    match kind.as_str() {
        "creation_task_failure_context" => {
            let tb = str_of(ctx, "formatted_exception_string");
            let raised = exception_line(tb).unwrap_or("an exception");
            verdict(
                Level::Error,
                format!("{who} died: its constructor raised: {raised}"),
                tb,
            )
        }
        "actor_died_error_context" => {
            let reason = str_of(ctx, "reason");
            let message = str_of(ctx, "error_message");
            push(fields, "reason", reason);
            if let Some(ip) = ctx.get("node_ip_address").and_then(scalar) {
                push(fields, "ip", &ip);
            }
            let exit = message
                .split_once("Worker exit type: ")
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .unwrap_or("");
            push(fields, "exit_type", exit);
            let level = match reason {
                // Killed on purpose (`ray.kill`), or no longer referenced, or its owner (the
                // driver) gone: the ends of a job that ran as written.
                "RAY_KILL" | "OUT_OF_SCOPE" | "REF_DELETED" | "OWNER_DIED" => Level::Info,
                "WORKER_DIED" if exit.starts_with("INTENDED_") => Level::Info,
                "UNSPECIFIED" | "" => Level::Warning,
                _ => Level::Error,
            };
            let first = message.lines().next().unwrap_or("");
            let rest = message.split_once('\n').map_or("", |(_, r)| r);
            let why = if reason.is_empty() {
                first.to_string()
            } else {
                format!("{reason}: {first}")
            };
            verdict(level, format!("{who} died{on}: {why}"), rest)
        }
        "runtime_env_failed_context" => verdict(
            Level::Error,
            format!("{who} died: its runtime env failed to set up"),
            str_of(ctx, "error_message"),
        ),
        "actor_unschedulable_context" => verdict(
            Level::Error,
            format!("{who} died: it cannot be scheduled"),
            str_of(ctx, "error_message"),
        ),
        "oom_context" => verdict(
            Level::Error,
            format!("{who} died: out of memory"),
            str_of(ctx, "error_message"),
        ),
        other => verdict(Level::Warning, format!("{who} died{on}: {other}"), ""),
    }
}

static EMPTY_MAP: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

pub(crate) fn node(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(fields, data, &["node_id"]);
    if let Some(ip) = data.get("node_manager_address").and_then(scalar) {
        push(fields, "ip", &ip);
    }
    copy(
        fields,
        data,
        &[
            "node_name",
            "state",
            "is_head_node",
            "start_time_ms",
            "end_time_ms",
        ],
    );
    let id = fields
        .iter()
        .find(|(k, _)| k == "node_id")
        .map_or(String::from("?"), |(_, v)| v.to_string());
    let ip = str_of(data, "node_manager_address");
    let who = if ip.is_empty() {
        format!("node {id}")
    } else {
        format!("node {id} ({ip})")
    };
    let head = if data.get("is_head_node") == Some(&Value::Bool(true)) {
        ", the head"
    } else {
        ""
    };
    let state = str_of(data, "state");
    if state != "DEAD" {
        return verdict(Level::Info, format!("{who}{head} {state}"), "");
    }
    let info = data
        .get("death_info")
        .and_then(Value::as_object)
        .unwrap_or(&EMPTY_MAP);
    let reason = str_of(info, "reason");
    let message = str_of(info, "reason_message");
    push(fields, "reason", reason);
    let level = match reason {
        "UNEXPECTED_TERMINATION" => Level::Error,
        "AUTOSCALER_DRAIN_PREEMPTED" | "UNSPECIFIED" | "" => Level::Warning,
        _ => Level::Info,
    };
    let why = match (reason, message) {
        ("", "") => String::new(),
        (r, "") => format!(": {r}"),
        ("", m) => format!(": {m}"),
        (r, m) => format!(": {r}: {m}"),
    };
    verdict(level, format!("{who}{head} died{why}"), "")
}

pub(crate) fn driver_job(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(fields, data, &["job_id"]);
    copy(
        fields,
        data,
        &[
            "driver_pid",
            "driver_ip_address",
            "entrypoint",
            "is_dead",
            "start_time",
            "end_time",
        ],
    );
    if let Some(id) = data
        .get("config")
        .and_then(|c| c.get("metadata"))
        .and_then(|m| m.get("job_submission_id"))
        .and_then(scalar)
    {
        push(fields, "submission_id", &id);
    }
    let id = fields
        .iter()
        .find(|(k, _)| k == "job_id")
        .map_or(String::from("?"), |(_, v)| v.to_string());
    let what = if data.get("is_dead") == Some(&Value::Bool(true)) {
        "ended"
    } else {
        "started"
    };
    let pid = data.get("driver_pid").and_then(scalar).unwrap_or_default();
    let by = if pid.is_empty() || pid == "0" {
        String::new()
    } else {
        format!(" (pid {pid})")
    };
    let entry = str_of(data, "entrypoint");
    let entry = if entry.is_empty() {
        String::new()
    } else {
        format!(": {entry}")
    };
    verdict(
        Level::Info,
        format!("driver of job {id} {what}{by}{entry}"),
        "",
    )
}

fn submission_job(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    copy(
        fields,
        data,
        &[
            "submission_job_id",
            "status",
            "error_type",
            "driver_exit_code",
            "driver_node_id",
            "entrypoint",
            "start_time",
            "end_time",
        ],
    );
    let id = str_of(data, "submission_job_id");
    let status = str_of(data, "status");
    let message = str_of(data, "message");
    let level = if status == "FAILED" {
        Level::Error
    } else {
        Level::Info
    };
    let first = message.lines().next().unwrap_or("");
    let rest = message.split_once('\n').map_or("", |(_, r)| r);
    let summary = if first.is_empty() {
        format!("job {id} {status}")
    } else {
        format!("job {id} {status}: {first}")
    };
    verdict(level, summary, rest)
}

/// Ray's `TaskStatus` (`src/ray/protobuf/common.proto`): the keys of `state_ts_ns`.
fn task_status(n: i64) -> &'static str {
    match n {
        1 => "PENDING_ARGS_AVAIL",
        2 => "PENDING_NODE_ASSIGNMENT",
        3 => "PENDING_OBJ_STORE_MEM_AVAIL",
        4 => "PENDING_ARGS_FETCH",
        5 => "SUBMITTED_TO_WORKER",
        6 => "PENDING_ACTOR_TASK_ARGS_FETCH",
        7 => "PENDING_ACTOR_TASK_ORDERING_OR_CONCURRENCY",
        8 => "RUNNING",
        9 => "RUNNING_IN_RAY_GET",
        10 => "RUNNING_IN_RAY_WAIT",
        11 => "FINISHED",
        12 => "FAILED",
        13 => "GETTING_AND_PINNING_ARGS",
        _ => "NIL",
    }
}

pub(crate) fn task(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(fields, data, &["task_id", "job_id"]);
    copy(fields, data, &["attempt_number"]);
    let info = data.get("task_info").and_then(Value::as_object);
    let updates = data.get("state_updates").and_then(Value::as_object);
    if let Some(info) = info {
        copy(fields, info, &["func_or_class_name", "type"]);
        ids(
            fields,
            info,
            &["actor_id", "parent_task_id", "placement_group_id"],
        );
    }
    if let Some(u) = updates {
        ids(fields, u, &["node_id", "worker_id"]);
        if let Some(pid) = u.get("worker_pid").and_then(scalar) {
            push(fields, "pid", &pid);
        }
    }
    let id = fields
        .iter()
        .find(|(k, _)| k == "task_id")
        .map_or(String::from("?"), |(_, v)| v.to_string());
    let who = match info.map(|i| str_of(i, "func_or_class_name")) {
        Some(name) if !name.is_empty() => format!("task {name} ({id})"),
        _ => format!("task {id}"),
    };
    let error = updates
        .and_then(|u| u.get("error_info"))
        .and_then(Value::as_object);
    if let Some(err) = error {
        let kind = str_of(err, "error_type");
        let message = str_of(err, "error_message");
        push(fields, "error_type", kind);
        let level = if kind == "TASK_CANCELLED" {
            Level::Info
        } else {
            Level::Error
        };
        // The exception the task raised, else the error's first line (which the detail
        // then does not repeat).
        let (raised, detail) = match exception_line(message) {
            Some(raised) if message.contains('\n') => (raised, message),
            _ => (
                message.lines().next().unwrap_or(""),
                message.split_once('\n').map_or("", |(_, r)| r),
            ),
        };
        return verdict(level, format!("{who} failed: {kind}: {raised}"), detail);
    }
    // The latest state the update records.
    let latest = updates
        .and_then(|u| u.get("state_ts_ns"))
        .and_then(Value::as_object)
        .and_then(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let at = v
                        .as_str()
                        .and_then(|s| s.parse::<i64>().ok())
                        .or(v.as_i64())?;
                    Some((at, k.parse::<i64>().ok()?))
                })
                .max()
        })
        .map(|(_, status)| task_status(status));
    if let Some(status) = latest {
        push(fields, "status", status);
        return verdict(Level::Info, format!("{who} {status}"), "");
    }
    if let Some(profile) = data.get("profile_events").and_then(Value::as_object) {
        let n = profile
            .get("events")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let of = str_of(profile, "component_type");
        return verdict(
            Level::Info,
            format!("{who}: {n} profile event(s) of its {of}"),
            "",
        );
    }
    verdict(Level::Info, who, "")
}

fn train(source: &str, data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    copy(
        fields,
        data,
        &["id", "name", "run_id", "attempt_id", "status"],
    );
    ids(fields, data, &["job_id", "controller_actor_id"]);
    let status = str_of(data, "status");
    let what = if source == "EXPORT_TRAIN_RUN" {
        let name = str_of(data, "name");
        let id = str_of(data, "id");
        format!("train run {}", if name.is_empty() { id } else { name })
    } else {
        format!(
            "train run {} attempt {}",
            str_of(data, "run_id"),
            str_of(data, "attempt_id")
        )
    };
    let level = match status {
        "ERRORED" => Level::Error,
        "RESTARTING" => Level::Warning,
        _ => Level::Info,
    };
    let detail = str_of(data, "status_detail");
    let first = detail.lines().next().unwrap_or("");
    let rest = detail.split_once('\n').map_or("", |(_, r)| r);
    let summary = if first.is_empty() {
        format!("{what} {status}")
    } else {
        format!("{what} {status}: {first}")
    };
    verdict(level, summary, rest)
}

fn dataset(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    copy(fields, data, &["dataset_id", "job_id", "state"]);
    let state = str_of(data, "state");
    let level = if state == "FAILED" {
        Level::Error
    } else {
        Level::Info
    };
    verdict(
        level,
        format!("dataset {} {state}", str_of(data, "dataset_id")),
        "",
    )
}

fn dataset_operator(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    copy(
        fields,
        data,
        &["dataset_id", "operator_id", "operator_name", "event_type"],
    );
    let kind = str_of(data, "event_type");
    let level = if kind.starts_with("ISSUE_DETECTION_") {
        Level::Warning
    } else {
        Level::Info
    };
    let message = str_of(data, "message");
    let first = message.lines().next().unwrap_or("");
    let rest = message.split_once('\n').map_or("", |(_, r)| r);
    verdict(
        level,
        format!(
            "dataset {} operator {}: {kind}: {first}",
            str_of(data, "dataset_id"),
            str_of(data, "operator_name")
        ),
        rest,
    )
}

/// A type this parser does not know (a newer Ray's): its plain fields, at info.
fn other(source: &str, data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    let keys: Vec<&str> = data
        .iter()
        .filter(|(_, v)| scalar(v).is_some())
        .map(|(k, _)| k.as_str())
        .take(12)
        .collect();
    copy(fields, data, &keys);
    let what = source.trim_start_matches("EXPORT_").to_ascii_lowercase();
    let state = ["state", "status"]
        .iter()
        .map(|k| str_of(data, k))
        .find(|s| !s.is_empty())
        .unwrap_or("");
    verdict(
        Level::Info,
        format!("{what} {state}").trim().to_string(),
        "",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::testing::{first_line, one_a_line};

    // Real lines of `scripts/realrun` runs (machine paths and addresses rewritten as the
    // corpus bundles' are): Ray 2.60.0 `export-actor-failures`, `export-raylet-killed`,
    // `healthy-export-job`, and the 2.40.0 run of `export-actor-failures`.
    const ACTOR: &str = include_str!("../../tests/fixtures/export_events/ray-2.60.0-actor.log");
    const OUT_OF_SCOPE: &str =
        include_str!("../../tests/fixtures/export_events/ray-2.60.0-actor-out-of-scope.log");
    const NODE: &str = include_str!("../../tests/fixtures/export_events/ray-2.60.0-node.log");
    const SUBMISSION: &str =
        include_str!("../../tests/fixtures/export_events/ray-2.60.0-submission-job.log");
    const DRIVER: &str =
        include_str!("../../tests/fixtures/export_events/ray-2.60.0-driver-job.log");
    const TASK: &str = include_str!("../../tests/fixtures/export_events/ray-2.60.0-task.log");
    const ACTOR_240: &str = include_str!("../../tests/fixtures/export_events/ray-2.40.0-actor.log");

    fn events(text: &str) -> Vec<Event> {
        one_a_line(parse, text)
    }

    #[test]
    fn actor_states_and_deaths() {
        let evs = events(ACTOR);
        assert_eq!(evs.len(), 4);
        let (alive, killed, raised, supervisor) = (&evs[0], &evs[1], &evs[2], &evs[3]);
        assert_eq!(alive.level, Level::Info);
        assert_eq!(alive.component, "EXPORT_ACTOR");
        assert_eq!(
            first_line(alive),
            "actor JobSupervisor (_ray_internal_job_actor_raysubmit_S7AKSdZxe6MTsWcK) ALIVE (pid 3773)"
        );
        assert_eq!(alive.field("job_id"), Some("01000000"));
        assert_eq!(
            alive.field("node_id"),
            Some("9460d9b59372cf538a8687f7b8d93df6fb5bdb9c9e5349597ffcf22f")
        );
        assert_eq!(alive.raw_time, Some(RawTime::Utc(1_796_565_567_000_000)));

        // SIGKILLed: the worker died of a system error.
        assert_eq!(killed.level, Level::Error);
        assert!(first_line(killed).starts_with(
            "actor Cache died (pid 4559): WORKER_DIED: The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR"
        ));
        assert_eq!(killed.field("exit_type"), Some("SYSTEM_ERROR"));
        assert_eq!(killed.field("ip"), Some("10.244.0.5"));
        assert_eq!(
            killed.field("class_name"),
            Some("actor_failures.<locals>.Cache")
        );

        // The constructor raised: the summary names the user's exception, the traceback
        // follows without Ray's doubled blank lines.
        assert_eq!(raised.level, Level::Error);
        assert_eq!(
            first_line(raised),
            "actor FeatureStore died: its constructor raised: ValueError: feature table 'users_v2' not found"
        );
        assert_eq!(
            raised.field("actor_id"),
            Some("327451fce1639805da19389c02000000")
        );
        assert_eq!(
            raised.field("death_cause"),
            Some("creation_task_failure_context")
        );
        assert!(raised.message.lines().all(|l| !l.trim().is_empty()));
        assert!(raised
            .message
            .contains("    raise ValueError(\"feature table 'users_v2' not found\")"));

        // The job supervisor's own exit at the end of the job: intended, so info.
        assert_eq!(supervisor.level, Level::Info);
        assert_eq!(supervisor.field("exit_type"), Some("INTENDED_USER_EXIT"));
    }

    #[test]
    fn an_actor_out_of_scope_is_no_failure() {
        let evs = events(OUT_OF_SCOPE);
        assert_eq!(evs[0].level, Level::Info);
        assert!(first_line(&evs[0]).starts_with("actor Counter died (pid "));
        assert_eq!(evs[0].field("reason"), Some("OUT_OF_SCOPE"));
    }

    #[test]
    fn ray_2_40_writes_the_same_actor_events() {
        let evs = events(ACTOR_240);
        assert_eq!(evs[0].level, Level::Error);
        assert_eq!(evs[0].field("reason"), Some("WORKER_DIED"));
        assert_eq!(evs[1].level, Level::Error);
        assert_eq!(
            first_line(&evs[1]),
            "actor FeatureStore died: its constructor raised: ValueError: feature table 'users_v2' not found"
        );
    }

    #[test]
    fn a_node_alive_then_dead_unexpectedly() {
        let evs = events(NODE);
        assert_eq!(evs[0].level, Level::Info);
        assert_eq!(
            first_line(&evs[0]),
            "node e509f0d59febe36220ec209bb85a8ed1c2914f6ac1ba1fd8536c7d00 (10.244.0.5), the head ALIVE"
        );
        assert_eq!(evs[1].level, Level::Error);
        assert_eq!(
            first_line(&evs[1]),
            "node e509f0d59febe36220ec209bb85a8ed1c2914f6ac1ba1fd8536c7d00 (10.244.0.5), the head died: UNEXPECTED_TERMINATION: health check failed due to missing too many heartbeats"
        );
        assert_eq!(evs[1].field("state"), Some("DEAD"));
        assert_eq!(evs[1].field("reason"), Some("UNEXPECTED_TERMINATION"));
        assert_eq!(evs[1].field("ip"), Some("10.244.0.5"));
    }

    #[test]
    fn a_submission_job_pending_running_failed() {
        // Written by Python (`json.dumps`: spaces after the separators).
        let evs = events(SUBMISSION);
        let levels: Vec<Level> = evs.iter().map(|e| e.level).collect();
        assert_eq!(levels, [Level::Info, Level::Info, Level::Error]);
        assert_eq!(
            first_line(&evs[2]),
            "job raysubmit_S7AKSdZxe6MTsWcK FAILED: Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):"
        );
        // The driver's last lines follow, its traceback among them.
        assert!(evs[2]
            .message
            .contains("\nValueError: feature table 'users_v2' not found\n"));
        assert_eq!(
            evs[2].field("error_type"),
            Some("JOB_ENTRYPOINT_COMMAND_ERROR")
        );
        assert_eq!(evs[2].field("driver_exit_code"), Some("1"));
        assert_eq!(
            evs[2].field("submission_job_id"),
            Some("raysubmit_S7AKSdZxe6MTsWcK")
        );
    }

    #[test]
    fn a_driver_job_starts_and_ends_at_info() {
        let evs = events(DRIVER);
        assert!(evs.iter().all(|e| e.level == Level::Info));
        assert_eq!(
            first_line(&evs[0]),
            "driver of job 02000000 started (pid 4035): python jobs.py actor_failures"
        );
        assert_eq!(
            evs[0].field("submission_id"),
            Some("raysubmit_S7AKSdZxe6MTsWcK")
        );
    }

    #[test]
    fn tasks_that_fail_and_tasks_that_finish() {
        let evs = events(TASK);
        assert_eq!(evs.len(), 4);
        let (raised, exited, finished, profile) = (&evs[0], &evs[1], &evs[2], &evs[3]);
        assert_eq!(raised.level, Level::Error);
        assert_eq!(
            first_line(raised),
            "task 67a2e8cfa5a06db3ffffffffffffffffffffffff02000000 failed: TASK_EXECUTION_EXCEPTION: RuntimeError: batch 17 has no rows"
        );
        // `os._exit(3)`: the worker is gone; the error's one line is not said twice.
        assert_eq!(exited.level, Level::Error);
        assert_eq!(
            exited.message,
            "task e082c90ab8422b00ffffffffffffffffffffffff02000000 failed: WORKER_DIED: RpcError: RPC error: Socket closed rpc_code: 14"
        );
        assert_eq!(exited.field("error_type"), Some("WORKER_DIED"));
        assert_eq!(finished.level, Level::Info);
        assert_eq!(finished.field("status"), Some("FINISHED"));
        assert_eq!(profile.level, Level::Info);
        assert!(first_line(profile).ends_with("1 profile event(s) of its driver"));
    }

    #[test]
    fn lines_that_are_no_export_event_stay_records() {
        crate::parse::testing::check_parse(
            parse,
            "{\"event_data\":{\"state\":\"DEAD\",\"node_id\":\"lGDZ\n\
             not json at all\n\
             {\"event_id\": \"x\", \"source_type\": \"JOBS\", \"message\": \"m\"}\n\
             {\"event_data\":{},\"event_id\":\"e1\",\"source_type\":\"EXPORT_SOMETHING_NEW\",\"timestamp\":1796565565}",
            "1+1 - info - | {\"event_data\":{\"state\":\"DEAD\",\"node_id\":\"lGDZ\n\
             2+1 - info - | not json at all\n\
             3+1 - info - | {\"event_id\": \"x\", \"source_type\": \"JOBS\", \"message\": \"m\"}\n\
             4+1 U2026-12-06T13:59:25.000Z info EXPORT_SOMETHING_NEW {event_id=e1} | something_new\n\
             unparsed=3\n",
        );
    }

    #[test]
    fn ids_are_written_in_hex() {
        assert_eq!(hex_id("AQAAAA==").as_deref(), Some("01000000"));
        assert_eq!(
            hex_id("MnRR/OFjmAXaGTicAgAAAA==").as_deref(),
            Some("327451fce1639805da19389c02000000")
        );
        assert_eq!(
            hex_id("Z6Loz6WgbbP///////////////8CAAAA").as_deref(),
            Some("67a2e8cfa5a06db3ffffffffffffffffffffffff02000000")
        );
        // Already hex (a submission job's `driver_node_id`), or not an id at all.
        assert_eq!(
            hex_id("9460d9b59372cf538a8687f7b8d93df6fb5bdb9c9e5349597ffcf22f").as_deref(),
            Some("9460d9b59372cf538a8687f7b8d93df6fb5bdb9c9e5349597ffcf22f")
        );
        assert_eq!(hex_id(""), None);
        assert_eq!(hex_id("not an id!"), None);
    }
}
