//! Ray's "one event" records (`RayEvent`, `src/ray/protobuf/public/events_base_event.proto`),
//! as the dashboard agent's aggregator (`ray/dashboard/modules/aggregator/aggregator_agent.py`,
//! Ray 2.49 and later) posts them to an HTTP address and as KubeRay's History Server collector
//! (`historyserver/pkg/collector/eventcollector/eventcollector.go`) stores them:
//! `<session>/<node id>/node_events/<node id>-<hour>-<unixnano>.jsonl[.gz]` and
//! `<session>/<node id>/job_events/<job id>/…`, one event a line, re-marshalled by Go (keys
//! sorted, compact, `<`, `>` and `&` escaped).
//!
//! An event is an object with `eventId`, `sourceType` (`GCS`, `CORE_WORKER`, …), `eventType`
//! (`ACTOR_LIFECYCLE_EVENT`, `TASK_LIFECYCLE_EVENT`, `DRIVER_JOB_LIFECYCLE_EVENT`, …),
//! `timestamp` (RFC 3339 with nanoseconds), `severity` and a payload named after its type
//! (`actorLifecycleEvent`, …) in protobuf JSON with camelCase names: ids in base64, and a
//! lifecycle as `stateTransitions`, the last one the state the event states. Its level is
//! the export events' verdict on that state ([`super::export_event`]): an actor DEAD because
//! its constructor raised, a task FAILED (not cancelled), a job FAILED, a node DEAD
//! unexpectedly are errors; a worker that died of an error a warning (its actor or task
//! states the failure); every other transition info, unless `severity` says worse.

use serde_json::{Map, Value};

use crate::event::{Event, Level, RawTime, Text};
use crate::parse::export_event::{
    actor, copy, driver_job, exception_line, ids, node, push, str_of, verdict, Verdict,
};
use crate::parse::lines::{parse_records, Continuation};
use crate::parse::primitives::instant;
use crate::parse::ParseOutput;

/// A file of the `ray_export_event` kind: each line an aggregator event or an export event
/// (`super::export_event`); any other line a record of its own text.
pub fn parse(input: &[u8], out: &mut ParseOutput) {
    parse_records(input, Continuation::Separate, out, |line, _, _| head(line));
}

/// One line as an aggregator event, else as an export event.
pub fn head(line: &str) -> Option<Event> {
    let start = line.trim();
    if start.starts_with('{') && start.contains("\"eventId\"") {
        if let Ok(map) = serde_json::from_str::<Map<String, Value>>(start) {
            if map.contains_key("eventId") && map.contains_key("eventType") {
                return event(&map);
            }
        }
    }
    crate::parse::export_event::head(line)
}

/// Whether a line is one such event: an object naming an `eventId`, a `sourceType` and an
/// `eventType` (Go sorts the keys, so a payload may come first and push them far in).
pub fn is_one_event_line(text: &str) -> bool {
    text.starts_with('{')
        && text.contains("\"eventId\"")
        && (text.contains("\"eventType\"") || text.contains("\"sourceType\""))
}

/// The event a parsed object states, or `None` when it is none.
pub fn event(map: &Map<String, Value>) -> Option<Event> {
    let kind = map.get("eventType").and_then(Value::as_str)?;
    let source = map.get("sourceType").and_then(Value::as_str).unwrap_or("");
    let mut ev = Event::new(0, String::new());
    ev.component = if source.is_empty() { kind } else { source }.into();
    ev.raw_time = map
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| instant(t).ok())
        .map(|(_, at)| RawTime::Utc(at));
    push(&mut ev.fields, "event_type", kind);
    if let Some(id) = map.get("eventId").and_then(Value::as_str) {
        push(&mut ev.fields, "event_id", id);
    }
    let payload_key = payload_name(kind);
    let empty = Map::new();
    let payload = map
        .get(&payload_key)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let data = snake_object(payload);
    let verdict = match kind {
        "ACTOR_LIFECYCLE_EVENT" => actor(&latest(&data), &mut ev.fields),
        "ACTOR_DEFINITION_EVENT" => definition("actor", &data, &mut ev.fields),
        "NODE_LIFECYCLE_EVENT" => node(&latest(&data), &mut ev.fields),
        "DRIVER_JOB_LIFECYCLE_EVENT" => job(&data, &mut ev.fields),
        "DRIVER_JOB_DEFINITION_EVENT" => driver_job(&data, &mut ev.fields),
        "TASK_LIFECYCLE_EVENT" => task(&data, &mut ev.fields),
        "WORKER_LIFECYCLE_EVENT" => worker(&data, &mut ev.fields),
        _ => other(kind, &data, &mut ev.fields),
    };
    if let Some(session) = map.get("sessionName").and_then(Value::as_str) {
        push(&mut ev.fields, "session", session);
    }
    if let Some(node) = map.get("nodeId").and_then(Value::as_str) {
        ids(
            &mut ev.fields,
            &Map::from_iter([("node_id".to_string(), Value::String(node.into()))]),
            &["node_id"],
        );
    }
    let stated = match map.get("severity").and_then(Value::as_str).unwrap_or("") {
        "FATAL" => Level::Critical,
        "ERROR" => Level::Error,
        "WARNING" => Level::Warning,
        "DEBUG" => Level::Debug,
        "TRACE" => Level::Trace,
        _ => Level::Info,
    };
    ev.level = verdict.level.max(stated);
    ev.message = verdict.message;
    let message = map.get("message").and_then(Value::as_str).unwrap_or("");
    if !message.trim().is_empty() {
        ev.message = format!("{}\n{}", ev.message, message.trim());
    }
    Some(ev)
}

/// `ACTOR_LIFECYCLE_EVENT` → `actorLifecycleEvent`.
fn payload_name(kind: &str) -> String {
    let mut out = String::with_capacity(kind.len());
    for (i, word) in kind.split('_').enumerate() {
        let lower = word.to_ascii_lowercase();
        if i == 0 {
            out.push_str(&lower);
        } else {
            let mut chars = lower.chars();
            if let Some(c) = chars.next() {
                out.push(c.to_ascii_uppercase());
                out.extend(chars);
            }
        }
    }
    out
}

/// `stateTransitions` → `state_transitions`, through the whole object, so the export
/// events' readers (written for the `.proto` names) read it.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn snake_value(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(snake_object(m)),
        Value::Array(a) => Value::Array(a.iter().map(snake_value).collect()),
        other => other.clone(),
    }
}

fn snake_object(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter().map(|(k, v)| (snake(k), snake_value(v))).collect()
}

/// The object with its last state transition's fields laid over it: the state it states.
/// Empty fields of the transition (`nodeId: ""`, `pid: 0`) keep the object's own.
fn latest(data: &Map<String, Value>) -> Map<String, Value> {
    let mut out = data.clone();
    let last = data
        .get("state_transitions")
        .and_then(Value::as_array)
        .and_then(|t| t.last())
        .and_then(Value::as_object);
    if let Some(last) = last {
        for (k, v) in last {
            let blank = matches!(v, Value::String(s) if s.is_empty())
                || v.as_i64() == Some(0)
                || v.is_null();
            if !blank || !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn last_state(data: &Map<String, Value>) -> String {
    str_of(&latest(data), "state").to_string()
}

fn id_of(fields: &[(Text, Text)], key: &str) -> String {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map_or(String::from("?"), |(_, v)| v.to_string())
}

fn definition(what: &str, data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(fields, data, &["actor_id", "job_id", "placement_group_id"]);
    copy(fields, data, &["class_name", "name", "ray_namespace"]);
    let class = str_of(data, "class_name");
    let class = class.rsplit('.').next().unwrap_or(class);
    let id = id_of(fields, "actor_id");
    verdict(Level::Info, format!("{what} {class} ({id}) defined"), "")
}

fn job(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(fields, data, &["job_id"]);
    let state = last_state(data);
    push(fields, "state", &state);
    let id = id_of(fields, "job_id");
    let level = if state == "FAILED" {
        Level::Error
    } else {
        Level::Info
    };
    verdict(level, format!("job {id} {state}"), "")
}

fn task(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(fields, data, &["task_id", "job_id", "node_id", "worker_id"]);
    copy(fields, data, &["task_attempt"]);
    if let Some(pid) = data.get("worker_pid").and_then(Value::as_u64) {
        if pid > 0 {
            push(fields, "pid", &pid.to_string());
        }
    }
    let state = last_state(data);
    push(fields, "status", &state);
    let id = id_of(fields, "task_id");
    let who = format!("task {id}");
    let Some(err) = data.get("ray_error_info").and_then(Value::as_object) else {
        return verdict(Level::Info, format!("{who} {state}"), "");
    };
    let kind = str_of(err, "error_type");
    push(fields, "error_type", kind);
    let mut message = str_of(err, "error_message").to_string();
    if message.is_empty() {
        // An actor task's failure names the actor's death instead.
        if let Some((_, ctx)) = err
            .get("actor_died_error")
            .and_then(Value::as_object)
            .and_then(|c| c.iter().next())
        {
            message = str_of(ctx.as_object().unwrap_or(&Map::new()), "error_message").into();
        }
    }
    let level = if kind == "TASK_CANCELLED" {
        Level::Info
    } else {
        Level::Error
    };
    let (raised, detail) = match exception_line(&message) {
        Some(raised) if message.contains('\n') => (raised.to_string(), message.as_str()),
        _ => (
            message.lines().next().unwrap_or("").to_string(),
            message.split_once('\n').map_or("", |(_, r)| r),
        ),
    };
    let kind = if kind.is_empty() { "error" } else { kind };
    verdict(level, format!("{who} {state}: {kind}: {raised}"), detail)
}

fn worker(data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(fields, data, &["worker_id", "job_id"]);
    let now = latest(data);
    let state = str_of(&now, "state");
    push(fields, "state", state);
    let id = id_of(fields, "worker_id");
    let death = now.get("death_info").and_then(Value::as_object);
    let Some(death) = death else {
        return verdict(Level::Info, format!("worker {id} {state}"), "");
    };
    let exit = str_of(death, "exit_type");
    push(fields, "exit_type", exit);
    let detail = str_of(death, "exit_detail");
    // The actor or task the worker ran states the failure; the worker's death is its echo.
    let level = if exit.starts_with("INTENDED_") || exit.is_empty() {
        Level::Info
    } else {
        Level::Warning
    };
    verdict(level, format!("worker {id} {state}: {exit}"), detail)
}

fn other(kind: &str, data: &Map<String, Value>, fields: &mut Vec<(Text, Text)>) -> Verdict {
    ids(
        fields,
        data,
        &["actor_id", "task_id", "job_id", "node_id", "worker_id"],
    );
    copy(fields, data, &["class_name", "func_or_class_name", "state"]);
    let name = [
        str_of(data, "class_name"),
        str_of(data, "task_name"),
        str_of(data, "func_or_class_name"),
    ]
    .into_iter()
    .find(|s| !s.is_empty())
    .unwrap_or("");
    let state = last_state(data);
    let text = format!("{kind} {name} {state}");
    verdict(
        Level::Info,
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        "",
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::parse;
    use crate::event::{Event, Level, RawTime};
    use crate::parse::testing::{first_line, one_a_line};
    use crate::parse::ParseOutput;

    // Real lines: Ray 2.60.0's aggregator posting to an HTTP address during a run whose
    // task raises, whose actor `Cache` is SIGKILLed and whose actor `FeatureStore` raises in
    // its constructor, written as KubeRay's collector writes them (corpus
    // `hs-2.60.0-events-actor-failures`; machine paths and addresses rewritten).
    const NODE_EVENTS: &str =
        include_str!("../../tests/fixtures/history_server_events/ray-2.60.0-node_events.jsonl");
    const JOB_EVENTS: &str = include_str!(
        "../../tests/fixtures/history_server_events/ray-2.60.0-job_events-tasks.jsonl"
    );

    // A healthy run of the same setup: a driver whose tasks and actor all succeed.
    const HEALTHY: &str =
        include_str!("../../tests/fixtures/history_server_events/ray-2.60.0-healthy.jsonl");

    fn events(text: &str) -> Vec<Event> {
        one_a_line(parse, text)
    }

    #[test]
    fn every_line_is_a_timed_event_of_its_source() {
        for ev in events(NODE_EVENTS).iter().chain(&events(JOB_EVENTS)) {
            assert!(ev.raw_time.is_some(), "{}", ev.message);
            assert!(
                ev.component == "GCS" || ev.component == "CORE_WORKER",
                "{}",
                ev.component
            );
            assert!(ev.field("event_type").is_some());
        }
    }

    #[test]
    fn the_actor_whose_constructor_raised_died_an_error() {
        let evs = events(NODE_EVENTS);
        let dead: Vec<&Event> = evs
            .iter()
            .filter(|e| first_line(e).contains("died: its constructor raised"))
            .collect();
        assert_eq!(dead.len(), 1);
        let d = dead[0];
        assert_eq!(d.level, Level::Error);
        assert_eq!(
            first_line(d),
            "actor 7e12d5504ac4dcc7ffaab4b601000000 died: its constructor raised: ValueError: feature table 'users_v2' not found"
        );
        assert_eq!(
            d.field("actor_id"),
            Some("7e12d5504ac4dcc7ffaab4b601000000")
        );
        assert_eq!(d.field("state"), Some("DEAD"));
        assert_eq!(
            d.field("death_cause"),
            Some("creation_task_failure_context")
        );
        assert_eq!(d.field("event_type"), Some("ACTOR_LIFECYCLE_EVENT"));
        assert_eq!(
            d.field("node_id"),
            Some("3dd3b89ab0cd286ea0197617561edb01b535b2e4a9f60ee19ba7e831")
        );
        // `2026-12-06T15:34:59.081350711Z`, to the microsecond.
        assert_eq!(d.raw_time, Some(RawTime::Utc(1_796_571_299_081_350)));
        assert!(d
            .message
            .ends_with("ValueError: feature table 'users_v2' not found"));
    }

    #[test]
    fn a_sigkilled_actor_is_an_error_and_a_definition_info() {
        let evs = events(NODE_EVENTS);
        let killed = evs
            .iter()
            .find(|e| first_line(e).contains("died: WORKER_DIED"))
            .unwrap();
        assert_eq!(killed.level, Level::Error);
        assert_eq!(killed.field("exit_type"), Some("SYSTEM_ERROR"));
        let alive = evs
            .iter()
            .find(|e| first_line(e).ends_with(" ALIVE") && first_line(e).starts_with("node "))
            .unwrap();
        assert_eq!(alive.level, Level::Info);
        // A worker's death is a warning at most: its actor or task states the failure.
        for w in evs.iter().filter(|e| first_line(e).starts_with("worker ")) {
            assert!(w.level <= Level::Warning, "{}", w.message);
        }
        let ended = evs
            .iter()
            .find(|e| first_line(e).contains("INTENDED_USER_EXIT"))
            .unwrap();
        assert_eq!(ended.level, Level::Info);
    }

    #[test]
    fn failed_tasks_are_errors_finished_ones_and_the_job_info() {
        let evs = events(JOB_EVENTS);
        let raised = evs
            .iter()
            .find(|e| first_line(e).contains("RuntimeError: batch 17 has no rows"))
            .unwrap();
        assert_eq!(raised.level, Level::Error);
        assert_eq!(
            first_line(raised),
            "task c8ef45ccd0112571ffffffffffffffffffffffff01000000 FAILED: TASK_EXECUTION_EXCEPTION: RuntimeError: batch 17 has no rows"
        );
        assert_eq!(raised.field("job_id"), Some("01000000"));
        assert_eq!(raised.field("status"), Some("FAILED"));
        for e in &evs {
            let l = first_line(e);
            if l.contains(" FINISHED") || l.starts_with("job ") || l.starts_with("driver ") {
                assert_eq!(e.level, Level::Info, "{l}");
            }
        }
        assert!(evs.iter().any(|e| first_line(e) == "job 01000000 FINISHED"));
    }

    #[test]
    fn a_healthy_runs_events_are_all_info() {
        let evs = events(HEALTHY);
        assert_eq!(evs.len(), 125);
        for e in &evs {
            assert_eq!(e.level, Level::Info, "{}", e.message);
            assert!(e.raw_time.is_some());
        }
        assert!(evs.iter().any(|e| first_line(e) == "job 01000000 FINISHED"));
    }

    #[test]
    fn a_malformed_line_stays_a_record_of_its_own_text() {
        let text = "{\"eventId\":\"x\",\"eventType\":\"ACTOR_LIFECYCLE_EVENT\",\"sourceType\":\"GCS\"\nnot json at all\n";
        let mut out = ParseOutput::default();
        parse(text.as_bytes(), &mut out);
        assert_eq!(out.events.len(), 2);
        assert!(out.events.iter().all(|e| e.raw_time.is_none()));
        assert!(out.events[1].message.contains("not json at all"));
    }
}
