//! What Ray's log parsers share (`ray_python`, `ray_cpp`, `serve`): the JSON record reader of
//! every generation (Ray core's `JSONFormatter`, Serve's JSON, the C++ JSON mode), the words of
//! a text head (`file:line`, the first word), and the UTC instant a record carries beside its
//! naive asctime.
//!
//! It must not resolve zones: asctime stays `RawTime::Naive`; a record that also carries a UTC
//! instant (`timestamp_ns`) yields a zone sample instead.

use serde_json::{Map, Value};

use crate::event::{Event, Level, Micros, RawTime, Text};
use crate::parse::primitives::{has_byte, ray_asctime, rsplit_once_byte, split_once_byte};

/// Splits off the first space-separated word.
pub(crate) fn split_word(s: &str) -> (&str, &str) {
    split_once_byte(s, b' ').unwrap_or((s, ""))
}

/// `agent.py:531` → (`agent.py`, `531`): a base name with a dot, a colon, digits.
pub(crate) fn file_line(token: &str) -> Option<(&str, &str)> {
    let (file, line) = rsplit_once_byte(token, b':')?;
    let ok = !file.is_empty()
        && has_byte(file, b'.')
        && !has_byte(file, b'/')
        && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit());
    ok.then_some((file, line))
}

pub(crate) fn is_snake(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A JSON log record from any Ray generation: Python `JSONFormatter` (`asctime, levelname,
/// message, filename, lineno, …, timestamp_ns`), Serve's JSON (both the serialized and the
/// invalid template era), and the C++ JSON mode. Time is `timestamp_ns` (UTC) when present,
/// else asctime (naive). `filename` becomes field `file`; every other key is a field, nested
/// objects flattened with dots. `component` is left to the caller.
pub(crate) fn json_record(line: &str, samples: &mut Vec<Micros>) -> Option<Event> {
    let start = line.trim_start();
    if !start.starts_with('{') {
        return None;
    }
    let Ok(map) = serde_json::from_str::<Map<String, Value>>(start) else {
        return lenient_json_record(start);
    };
    if !map.contains_key("levelname") && !map.contains_key("asctime") {
        return None;
    }
    let mut ev = Event::new(0, String::new());
    let mut local = None;
    let mut ns = None;
    let mut exc_text = None;
    for (key, value) in map {
        match key.as_str() {
            "asctime" => {
                local = value
                    .as_str()
                    .and_then(|s| ray_asctime(s).ok())
                    .map(|r| r.1)
            }
            "levelname" => {
                ev.level = value.as_str().and_then(Level::parse).unwrap_or_default();
            }
            "message" => ev.message = scalar(value),
            "exc_text" => exc_text = Some(scalar(value)),
            "filename" => ev.fields.push(("file".into(), scalar(value).into())),
            _ => {
                if key == "timestamp_ns" {
                    ns = value.as_i64();
                }
                flatten(snake(&key), value, &mut ev.fields, 0);
            }
        }
    }
    if let Some(exc) = exc_text.filter(|e| !e.is_empty()) {
        ev.message.push('\n');
        ev.message.push_str(&exc);
    }
    ev.raw_time = local.map(RawTime::Naive);
    if let Some(ns) = ns {
        set_utc_from_ns(&mut ev, ns, local, samples);
    }
    Some(ev)
}

/// Serve's template-era JSON (≈2.5–2.8) pasted the message in unescaped, so a quote in it
/// breaks the object. Read `"key": "value"` pairs up to `message`, whose value is the rest
/// of the line without the closing `"}`.
fn lenient_json_record(line: &str) -> Option<Event> {
    if !(line.starts_with("{\"levelname\"") || line.starts_with("{\"asctime\"")) {
        return None;
    }
    let mut ev = Event::new(0, String::new());
    let mut rest = line.get(1..)?;
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some((key, after)) = rest.strip_prefix('"').and_then(|r| r.split_once('"')) else {
            break;
        };
        let Some(after) = after.trim_start().strip_prefix(':') else {
            break;
        };
        let after = after.trim_start();
        if key == "message" {
            let body = after.strip_prefix('"').unwrap_or(after);
            let body = body.strip_suffix("\"}").unwrap_or(body);
            ev.message = body.to_string();
            break;
        }
        let Some((value, after)) = after.strip_prefix('"').and_then(|r| r.split_once('"')) else {
            break;
        };
        match key {
            "levelname" => ev.level = Level::parse(value).unwrap_or_default(),
            "asctime" => {
                ev.raw_time = ray_asctime(value).ok().map(|r| RawTime::Naive(r.1));
            }
            "filename" => ev.fields.push(("file".into(), value.into())),
            _ => ev.fields.push((snake(key).into(), value.into())),
        }
        rest = after;
    }
    Some(ev)
}

/// A JSON value as field text: strings bare, everything else as compact JSON.
fn scalar(value: Value) -> String {
    match value {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Nested objects become dotted keys; arrays stay compact JSON. Depth is bounded so that a
/// pathological document cannot recurse without end.
fn flatten(key: String, value: Value, fields: &mut Vec<(Text, Text)>, depth: u8) {
    match value {
        Value::Object(map) if depth < 4 => {
            for (k, v) in map {
                flatten(format!("{key}.{}", snake(&k)), v, fields, depth + 1);
            }
        }
        other => fields.push((key.into(), scalar(other).into())),
    }
}

/// User-supplied keys (`extra={...}`) may be camelCase or contain spaces.
fn snake(key: &str) -> String {
    if is_snake(key) {
        return key.to_string();
    }
    let mut out = String::with_capacity(key.len() + 4);
    for (i, c) in key.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out
}

/// Prefers the zoned `timestamp_ns` over the naive asctime, and records their difference.
pub(crate) fn set_utc_from_ns(
    ev: &mut Event,
    ns: i64,
    local: Option<Micros>,
    samples: &mut Vec<Micros>,
) {
    let utc = ns.div_euclid(1000);
    ev.raw_time = Some(RawTime::Utc(utc));
    if let Some(local) = local {
        // asctime is the same instant cut to milliseconds; cut the UTC one the same way so
        // that the sample is a clean offset.
        samples.push(local - utc.div_euclid(1000) * 1000);
    }
}
