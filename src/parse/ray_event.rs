//! Ray's event files: `logs/events/event_<SOURCE>.log` (`event_RAYLET.log`, `event_GCS.log`,
//! `event_CORE_WORKER_<pid>.log`, `event_JOBS.log`, rotated `event_GCS.0.log`), one JSON
//! object a line. The C++ reporter (`LogEventReporter::EventToString`) writes `timestamp`
//! (Unix seconds, a number), `severity` (`INFO`, `WARNING`, `ERROR`, `FATAL`), `label`
//! (`RAY_FATAL_CHECK_FAILED`, `RAY_NODE_REMOVED`, …), `event_id`, `source_type` (`RAYLET`,
//! `GCS`, `CORE_WORKER`, …), `host_name`, `pid` (a string), `message` and `custom_fields`;
//! Python's event logger (`JOBS`, `AUTOSCALER`) writes `source_hostname`, `source_pid` (a
//! number) and `timestamp` as a string.
//!
//! Each object is one record: its time, its severity as the level, its source as the
//! component, its label, id, host and pid as fields, and `custom_fields` as fields of their own
//! (`job_id`, `node_id`, `worker_id`). Ray replaces every line break of a message with the two
//! characters `\n` before it encodes the object (`replaceLineFeed`), so a decoded message still
//! holds them: they are made line breaks again, and a record's first line is its message's.
//!
//! Events repeat records of Ray's logs: a FATAL event a failed `RAY_CHECK` (or any fatal log)
//! of its process, whose message starts `<file>:<line> (PID: <pid>, TID: <tid>, errno: <n>
//! (<text>)):` (that goes to fields); the GCS's `RAY_NODE_REMOVED` its warning; the
//! autoscaler's events its `:event_summary:` records. Each event carries the identity such a
//! record carries too ([`echo_key`]: pid and first line), so the two are one record
//! (`load::mirror`).
//!
//! A line that is no such object stays a record of its own text, without a time.

use serde_json::{Map, Value};

use crate::event::{Event, Level, RawTime, MICROS_PER_SEC};
use crate::parse::lines::{parse_records, Continuation};
use crate::parse::primitives::split_once_byte;
use crate::parse::ray_record::file_line;
use crate::parse::stamp::Fx;
use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    parse_records(input, Continuation::Separate, out, |line, _, _| head(line));
}

/// One event object, or `None` for a line that is none.
pub fn head(line: &str) -> Option<Event> {
    let start = line.trim();
    if !start.starts_with('{') {
        return None;
    }
    let map = serde_json::from_str::<Map<String, Value>>(start).ok()?;
    if !map.contains_key("severity") && !map.contains_key("source_type") {
        return None;
    }
    let mut ev = Event::new(0, String::new());
    let mut custom = Vec::new();
    // The pid a C++ reporter writes is the one its process's log records carry; the Python
    // reporters' (`source_pid`) is in no log line.
    let mut logged_pid = String::new();
    for (key, value) in map {
        match key.as_str() {
            "timestamp" => ev.raw_time = seconds(&value).map(RawTime::Utc),
            "severity" => {
                ev.level = value.as_str().and_then(Level::parse).unwrap_or_default();
            }
            "source_type" => ev.component = text(value).into(),
            "message" => ev.message = decode_breaks(&text(value)),
            "pid" => {
                logged_pid = text(value);
                ev.fields.push(("pid".into(), logged_pid.as_str().into()));
            }
            "source_pid" => ev.fields.push(("pid".into(), text(value).into())),
            "host_name" | "source_hostname" => {
                ev.fields.push(("host".into(), text(value).into()));
            }
            "custom_fields" => {
                if let Value::Object(fields) = value {
                    custom.extend(fields.into_iter().map(|(k, v)| (k, text(v))));
                }
            }
            // An empty label says nothing (the Python reporter writes `""`).
            "label" if value.as_str() == Some("") => {}
            _ => ev.fields.push((key.into(), text(value).into())),
        }
    }
    if ev.level == Level::Critical {
        if let Some(pid) = fatal_fields(&mut ev) {
            if logged_pid.is_empty() {
                logged_pid = pid;
            }
        }
    }
    // A copy is always a record with a time (the streamed counts take copies off `timed`).
    if ev.raw_time.is_some() {
        ev.echo_key = echo_key(&logged_pid, &ev.message);
    }
    for (k, v) in custom {
        if ev.field(&k).is_none() {
            ev.fields.push((k.into(), v.into()));
        }
    }
    Some(ev)
}

/// `1796545631`, `"1796545631"` or `1796545631.25` as micros since the epoch.
pub(crate) fn seconds(value: &Value) -> Option<i64> {
    let secs = match value {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    // Not before 1970 nor past the year 9999: anything else is no time.
    if !(0.0..253_402_300_800.0).contains(&secs) {
        return None;
    }
    Some((secs * MICROS_PER_SEC as f64).round() as i64)
}

/// A JSON value as field text: strings bare, everything else as compact JSON.
fn text(value: Value) -> String {
    match value {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The line breaks Ray wrote as the two characters `\n` (or `\r`), made line breaks again.
pub fn decode_breaks(message: &str) -> String {
    if !message.contains('\\') {
        return message.to_string();
    }
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // `\r\n` is one break, `\n` or `\r` alone one each.
        let broken = after
            .strip_prefix("r\\n")
            .or_else(|| after.strip_prefix('n'))
            .or_else(|| after.strip_prefix('r'));
        match broken {
            Some(next) => {
                out.push('\n');
                rest = next;
            }
            None => {
                out.push('\\');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A fatal event's message starts with where its process failed: in Ray 2.9
/// `src/ray/core_worker/core_worker.cc:2694: Check failed: …`, later
/// `node_manager.cc:1071 (PID: 41, TID: 41, errno: 0 (Success)): <message>`. That goes to
/// fields (`file`, `lineno`, and `tid`, `errno` when named) and the message keeps the rest,
/// whose first line is that of the fatal log record it repeats. Gives the pid it names.
fn fatal_fields(ev: &mut Event) -> Option<String> {
    let (word, rest) = ev.message.split_once(' ')?;
    if let Some(loc) = word.strip_suffix(':') {
        let (file, lineno) = place(loc)?;
        let fields = [("file", file), ("lineno", lineno)].map(|(k, v)| (k.into(), v.into()));
        ev.message = rest.trim_start_matches(' ').to_string();
        ev.fields.extend(fields);
        return None;
    }
    let (file, lineno) = place(word)?;
    let (inside, after) = rest.strip_prefix("(PID: ")?.split_once("): ")?;
    let mut tid = None;
    let mut errno = None;
    // `41, TID: 41, errno: 0 (Success)`
    let mut parts = inside.splitn(3, ", ");
    let pid = parts.next().map(str::trim)?;
    for part in parts {
        if let Some(t) = part.strip_prefix("TID: ") {
            tid = Some(t.trim());
        } else if let Some(e) = part.strip_prefix("errno: ") {
            errno = split_once_byte(e, b' ').map_or(Some(e), |(n, _)| Some(n));
        }
    }
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut fields: Vec<(crate::event::Text, crate::event::Text)> = vec![
        ("file".into(), file.into()),
        ("lineno".into(), lineno.into()),
    ];
    if ev.field("pid").is_none() {
        fields.push(("pid".into(), pid.into()));
    }
    if let Some(tid) = tid {
        fields.push(("tid".into(), tid.into()));
    }
    if let Some(errno) = errno {
        fields.push(("errno".into(), errno.into()));
    }
    let pid = pid.to_string();
    ev.message = after.trim_start_matches(' ').to_string();
    ev.fields.extend(fields);
    Some(pid)
}

/// `src/ray/raylet/node_manager.cc:1071` or `node_manager.cc:1071` → (`node_manager.cc`,
/// `1071`).
fn place(loc: &str) -> Option<(&str, &str)> {
    let (path, lineno) = loc.rsplit_once(':')?;
    let file = path.rsplit('/').next().unwrap_or(path);
    file_line(&loc[path.len() - file.len()..]).map(|_| (file, lineno))
}

/// The identity a record shares with the event of Ray's event files that repeats it: the
/// pid of its process (empty when its log writes none) and its message's first line,
/// trimmed, with no time (an event has whole seconds in UTC, its log record milliseconds in
/// local time). `ray_cpp` gives it to its warnings and worse, `ray_python` to the
/// autoscaler's `:event_summary:` records, this parser to every event; never 0.
pub fn echo_key(pid: &str, message: &str) -> u64 {
    let first = message.lines().next().unwrap_or("").trim();
    let mut h = Fx::default();
    h.write_u8(b'E');
    h.write(pid.as_bytes());
    h.write_u8(0xFE);
    h.write(first.as_bytes());
    h.finish().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, expect: &str) {
        crate::parse::testing::check_parse(parse, input, expect);
    }

    #[test]
    fn a_raylet_event_from_a_real_run() {
        // Ray 2.9.3, a task's worker killed by a segfault (`scripts/realrun`, job-worker-segfault).
        check(
            r#"{"custom_fields":{"job_id":"02000000","node_id":"dba53755a6ef7d91caee6769895d6a4833308679b8bdf67b7ad7e491","worker_id":"7a5049861d0d1d5947bab006f2bfd2d8243384b4de24b85e362cd224"},"event_id":"11a98001b056b52411113b36fa583fb7e32f","host_name":"ray-head","label":"RAY_WORKER_FAILURE","message":"A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: f0be60b5979574bbac754d5921b42c269941e7a002000000 Worker ID: 7a5049861d0d1d5947bab006f2bfd2d8243384b4de24b85e362cd224 Node ID: dba53755a6ef7d91caee6769895d6a4833308679b8bdf67b7ad7e491 Worker IP address: 10.244.0.5 Worker port: 10009 Worker PID: 3015 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.","pid":"2652","severity":"ERROR","source_type":"RAYLET","timestamp":1796545631}"#,
            "1+1 U2026-12-06T08:27:11.000Z error RAYLET {event_id=11a98001b056b52411113b36fa583fb7e32f host=ray-head label=RAY_WORKER_FAILURE pid=2652 job_id=02000000 node_id=dba53755a6ef7d91caee6769895d6a4833308679b8bdf67b7ad7e491 worker_id=7a5049861d0d1d5947bab006f2bfd2d8243384b4de24b85e362cd224} | A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: f0be60b5979574bbac754d5921b42c269941e7a002000000 Worker ID: 7a5049861d0d1d5947bab006f2bfd2d8243384b4de24b85e362cd224 Node ID: dba53755a6ef7d91caee6769895d6a4833308679b8bdf67b7ad7e491 Worker IP address: 10.244.0.5 Worker port: 10009 Worker PID: 3015 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.\n",
        );
    }

    #[test]
    fn escaped_line_breaks_become_lines() {
        // Ray 2.60.0, the GCS removing a node (agent-killed): a tab stays, `\n` breaks.
        check(
            r#"{"custom_fields":{"ip":"10.244.0.5","node_id":"2e15bb4e2a15694b3c7d23cfa5dbb23031e40b6fe78e70186125b9db"},"event_id":"ab8df8a35703efca7a15dafc6a38258e267e","host_name":"ray-head","label":"RAY_NODE_REMOVED","message":"The node with node id: 2e15bb4e2a15694b3c7d23cfa5dbb23031e40b6fe78e70186125b9db and address: 10.244.0.5 and node name: 10.244.0.5 has been marked dead because the detector has missed too many heartbeats from it. This can happen when a \t(1) raylet crashes unexpectedly (OOM, etc.) \\n\t(2) raylet has lagging heartbeats due to slow network or busy workload.","pid":"31938","severity":"ERROR","source_type":"GCS","timestamp":1796546759}"#,
            "1+1 U2026-12-06T08:45:59.000Z error GCS {event_id=ab8df8a35703efca7a15dafc6a38258e267e host=ray-head label=RAY_NODE_REMOVED pid=31938 ip=10.244.0.5 node_id=2e15bb4e2a15694b3c7d23cfa5dbb23031e40b6fe78e70186125b9db} | The node with node id: 2e15bb4e2a15694b3c7d23cfa5dbb23031e40b6fe78e70186125b9db and address: 10.244.0.5 and node name: 10.244.0.5 has been marked dead because the detector has missed too many heartbeats from it. This can happen when a \t(1) raylet crashes unexpectedly (OOM, etc.) ⏎\t(2) raylet has lagging heartbeats due to slow network or busy workload.\n",
        );
    }

    #[test]
    fn python_reporters_write_other_keys() {
        // Ray 2.9.3, the job manager (job-worker-segfault); then a line cut short.
        check(
            "{\"event_id\": \"7FEd11A1eaADcf8341a974079E8F84be328F\", \"source_type\": \"JOBS\", \"source_hostname\": \"ray-head\", \"source_pid\": 2690, \"message\": \"Started a ray job raysubmit_efVTTvEd378YVeJQ.\", \"timestamp\": \"1796545625\", \"custom_fields\": {\"submission_id\": \"raysubmit_efVTTvEd378YVeJQ\"}, \"severity\": \"INFO\", \"label\": \"\"}\n\
             {\"event_id\": \"C7EF8Ad740BbBb014AA403d7aAEa5dbD49BB\", \"source_type\": \"JOBS\", \"source_hostname\": \"ray-he",
            "1+1 U2026-12-06T08:27:05.000Z info JOBS {event_id=7FEd11A1eaADcf8341a974079E8F84be328F host=ray-head pid=2690 submission_id=raysubmit_efVTTvEd378YVeJQ} | Started a ray job raysubmit_efVTTvEd378YVeJQ.\n\
             2+1 - info - | {\"event_id\": \"C7EF8Ad740BbBb014AA403d7aAEa5dbD49BB\", \"source_type\": \"JOBS\", \"source_hostname\": \"ray-he\n\
             unparsed=1\n",
        );
    }

    #[test]
    fn a_fatal_event_names_where_its_process_failed() {
        let line = r#"{"custom_fields":{"node_id":"c5e5b3f1"},"event_id":"a1","host_name":"ray-head","label":"RAY_FATAL_CHECK_FAILED","message":"node_manager.cc:1071 (PID: 41, TID: 41, errno: 0 (Success)): [Timeout] Exiting because this node manager has mistakenly been marked as dead by the GCS: GCS failed to check the health of this node for 5 times.\\n*** StackTrace Information ***\\n/home/ray/anaconda3/lib/python3.10/site-packages/ray/core/src/ray/raylet/raylet(+0xd4e3ba) [0x5566e2d4e3ba] ray::operator<<()\\nunknown\\nunknown","pid":"41","severity":"FATAL","source_type":"RAYLET","timestamp":1750667949}"#;
        let ev = head(line).unwrap_or_else(|| Event::new(0, "none"));
        assert_eq!(ev.level, Level::Critical);
        assert_eq!(ev.field("file"), Some("node_manager.cc"));
        assert_eq!(ev.field("lineno"), Some("1071"));
        assert_eq!(ev.field("tid"), Some("41"));
        assert_eq!(ev.field("errno"), Some("0"));
        assert_eq!(ev.message.lines().count(), 5);
        assert_eq!(
            ev.message.lines().next(),
            Some("[Timeout] Exiting because this node manager has mistakenly been marked as dead by the GCS: GCS failed to check the health of this node for 5 times.")
        );
        // The raylet's own record of the failure (the same corpus bundle's raylet.out).
        let mut samples = Vec::new();
        let log = crate::parse::ray_cpp::head(
            "[2025-06-23 08:39:09,112 C 41 41] (raylet) node_manager.cc:1071: [Timeout] Exiting because this node manager has mistakenly been marked as dead by the GCS: GCS failed to check the health of this node for 5 times.",
            &mut samples,
        )
        .unwrap_or_else(|| Event::new(0, "none"));
        assert_ne!(ev.echo_key, 0);
        assert_eq!(ev.echo_key, log.echo_key);
    }

    #[test]
    fn a_fatal_event_of_ray_2_9_names_its_place_as_its_log_does() {
        // Ray 2.9.3, a Serve proxy's core worker losing its raylet (`scripts/realrun`,
        // raylet-killed): the event, then the core worker's own record of the failure.
        let line = r#"{"custom_fields":{"worker_id":"f0a0d15c284c1e1eaeee47cdef8f6620ca024add9337dc4818e717d0"},"event_id":"b2fd730d98d71e7d9da46db468147d4d3c00","host_name":"ray-head","label":"RAY_FATAL_CHECK_FAILED","message":"src/ray/core_worker/core_worker.cc:2694: Check failed: _s.ok() Bad status: IOError: Broken pipe\\n*** StackTrace Information ***\\n/home/ray/anaconda3/lib/python3.11/site-packages/ray/_raylet.so(+0xfe93da) [0x7fb185be93da] ray::operator<<()\\n/home/ray/anaconda3/lib/python3.11/site-packages/ray/_raylet.so(+0x8391ff) [0x7fb1854391ff] make_fcontext\\n","pid":"30607","severity":"FATAL","source_type":"CORE_WORKER","timestamp":1796549405}"#;
        let ev = head(line).unwrap_or_else(|| Event::new(0, "none"));
        assert_eq!(ev.field("file"), Some("core_worker.cc"));
        assert_eq!(ev.field("lineno"), Some("2694"));
        assert_eq!(ev.field("pid"), Some("30607"));
        assert_eq!(
            ev.message.lines().next(),
            Some("Check failed: _s.ok() Bad status: IOError: Broken pipe")
        );
        assert_eq!(ev.message.lines().count(), 4);
        let log = crate::parse::ray_cpp::head(
            "[2026-12-06 09:30:05,297 C 30607 30639] core_worker.cc:2694:  Check failed: _s.ok() Bad status: IOError: Broken pipe",
            &mut Vec::new(),
        )
        .unwrap_or_else(|| Event::new(0, "none"));
        assert_ne!(ev.echo_key, 0);
        assert_eq!(ev.echo_key, log.echo_key);
    }

    #[test]
    fn breaks_are_decoded_and_other_backslashes_stay() {
        assert_eq!(decode_breaks(r"a\nb"), "a\nb");
        assert_eq!(decode_breaks(r"a\r\nb"), "a\nb");
        assert_eq!(decode_breaks(r"C:\temp\x"), r"C:\temp\x");
        assert_eq!(decode_breaks(r"end\"), r"end\");
        assert_eq!(decode_breaks("plain"), "plain");
    }
}
