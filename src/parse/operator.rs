//! The KubeRay operator log (`kubectl logs deploy/kuberay-operator`): zap JSON, zap console,
//! klog lines and Go crash dumps, recognised line by line because one file mixes them.
//!
//! | KubeRay        | Record heads this parser sees                                         |
//! |----------------|-----------------------------------------------------------------------|
//! | v0.1 – v1.0.x  | zap development console: `<ts>\tINFO\t<logger>\t<msg>\t{"k": "v"}`,   |
//! |                | upper-case levels, `DEBUG\tevents` echoes, Go stacks on new lines      |
//! | v1.1 – v1.7.x  | zap production JSON, one object per line (`level`, `ts`, `logger`,    |
//! |                | `msg`, context keys); console with lower-case levels when the user     |
//! |                | picks `--log-stdout-encoder=console`                                   |
//! | < v1.3         | klog lines from client-go, unconverted: `I0411 07:43:44.182159 1 …]`  |
//! | any            | a Go runtime crash: `panic: …` / `fatal error: …` then goroutine dumps |
//! | any            | float or integer epoch stamps from a user-set `--zap-time-encoding`    |
//!
//! Lines that start no record (Go stack frames, goroutine dumps, blank lines, the rest of a
//! multi-line console message) fold into the record before them. The module owns the
//! grammar of these lines only: it does not decide what a message means (that is the rules'
//! job), does not resolve klog's missing year (the timeline's job) and does no I/O.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::diag::Diagnostic;
use crate::event::{Event, Level, Micros, RawTime, Text, MICROS_PER_SEC};
use crate::parse::generic::guess_level;
use crate::parse::lines::{cap_field, parse_records, Continuation};
use crate::parse::primitives::{date_time, find_date_time, instant, klog_header};
use crate::parse::{Detail, ParseOutput};

/// Parses one operator log file.
pub fn parse(input: &[u8], out: &mut ParseOutput) {
    let mut state = State::default();
    parse_records(input, Continuation::Fold, out, |line, detail, again| {
        state.head(line, detail, again)
    });
    if let Some(diag) = state.broken_json_diagnostic() {
        out.diagnostics.push(diag);
    }
}

/// What the parser remembers across lines: only what it needs for one summarising
/// diagnostic, so that a file full of truncated JSON yields one message, not thousands.
#[derive(Default)]
struct State {
    /// The physical line `head` is looking at. The line driver calls `head` exactly once
    /// per physical line, in order, so counting calls gives the line number.
    line_no: u32,
    n_broken_json: u32,
    first_broken: Option<(u32, String)>,
}

impl State {
    /// `again`: the line was read before, as a light record (`Detail`); it is not counted
    /// twice.
    fn head(&mut self, line: &str, detail: &Detail, again: bool) -> Option<Event> {
        if !again {
            self.line_no = self.line_no.saturating_add(1);
        }
        let first = *line.as_bytes().first()?;
        match first {
            b'{' => Some(self.json_head(line)),
            // Stack frames (`\t/go/pkg/mod/…`) are the most common non-head lines.
            b'\t' => None,
            b'0'..=b'9' => console(line, detail).or_else(|| prefixed(line)),
            b'I' | b'W' | b'E' | b'F' => klog(line).or_else(|| prefixed(line)),
            b'p' | b'f' => go_crash(line).or_else(|| prefixed(line)),
            b' ' => {
                let trimmed = line.trim_start_matches(' ');
                if trimmed.starts_with('{') {
                    Some(self.json_head(trimmed))
                } else {
                    prefixed(line)
                }
            }
            _ => prefixed(line),
        }
    }

    /// A line that starts with `{`: a zap JSON record, or a record kept as raw text when the
    /// JSON is broken (a line cut by a size limit, two writes interleaved).
    fn json_head(&mut self, line: &str) -> Event {
        match parse_object(line) {
            Ok(rec) => rec.into_event(line),
            Err(err) => {
                // Only a line that opens an object with a quoted key was clearly meant to be
                // JSON; a lone `{` is more likely a pasted fragment and not worth a warning.
                if line.starts_with("{\"") {
                    self.n_broken_json = self.n_broken_json.saturating_add(1);
                    if self.first_broken.is_none() {
                        self.first_broken = Some((self.line_no, describe_json_error(&err)));
                    }
                }
                broken_json_event(line)
            }
        }
    }

    fn broken_json_diagnostic(&self) -> Option<Diagnostic> {
        let (line, err) = self.first_broken.as_ref()?;
        let n = self.n_broken_json;
        let lines = if n == 1 { "line looks" } else { "lines look" };
        Some(Diagnostic::at_line(
            *line,
            format!(
                "{n} operator log {lines} like zap JSON but did not parse \
                 (first error: {err}); kept as raw text"
            ),
        ))
    }
}

/// serde's message without its `at line 1`, which would contradict the diagnostic's line.
fn describe_json_error(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let what = text.split(" at line ").next().unwrap_or(&text);
    format!("{what} at column {}", err.column())
}

// ---------------------------------------------------------------------------------------
// zap JSON

/// A zap record's well-known keys, pulled out of the flattened fields.
#[derive(Default)]
struct ZapRecord {
    level: Option<String>,
    ts: Option<String>,
    logger: Option<String>,
    msg: Option<String>,
    fields: Vec<(Text, Text)>,
    /// Text after the object (a lost newline glued two records together).
    trailing: Option<String>,
}

impl ZapRecord {
    fn into_event(self, line: &str) -> Event {
        let ZapRecord {
            level,
            ts,
            logger,
            msg,
            mut fields,
            trailing,
        } = self;
        let is_zap = msg.is_some() || level.is_some();
        // Without `msg` or `level` this is some other JSON document; its raw text is the
        // most useful message.
        let message = match msg {
            Some(msg) => msg,
            None if is_zap => String::new(),
            None => line.to_string(),
        };
        let mut ev = Event::new(0, message);
        if let Some(level) = level {
            match zap_level(&level) {
                Some(parsed) => ev.level = parsed,
                None => fields.push(("level".into(), level.into())),
            }
        }
        if let Some(ts) = ts {
            match stamp(&ts) {
                Some(time) => ev.raw_time = Some(time),
                None => fields.push(("ts".into(), ts.into())),
            }
        }
        ev.component = logger.unwrap_or_default().into();
        if let Some(trailing) = trailing {
            fields.push(("trailing".into(), trailing.into()));
        }
        for (_, value) in &mut fields {
            cap_field(value);
        }
        ev.fields = fields;
        ev
    }
}

/// Parses a line holding one JSON object. Text after the object is kept as `trailing`.
fn parse_object(text: &str) -> Result<ZapRecord, serde_json::Error> {
    let mut rec = ZapRecord {
        fields: Vec::with_capacity(8),
        ..ZapRecord::default()
    };
    let mut de = serde_json::Deserializer::from_str(text);
    TopLevel(&mut rec).deserialize(&mut de)?;
    if de.end().is_err() {
        // Rare (a lost newline glued two records together): find where the object ended.
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<de::IgnoredAny>();
        let _ = stream.next();
        let tail = text.get(stream.byte_offset()..).unwrap_or_default().trim();
        rec.trailing = Some(tail.to_string());
    }
    Ok(rec)
}

/// Reads the top-level object: well-known keys into their slots, everything else flattened.
struct TopLevel<'a>(&'a mut ZapRecord);

impl<'de> DeserializeSeed<'de> for TopLevel<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopLevel<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let rec = self.0;
        while let Some(Key(key)) = map.next_key()? {
            let before = rec.fields.len();
            let (slot, name) = match key.as_ref() {
                "level" => (&mut rec.level, "level"),
                "ts" => (&mut rec.ts, "ts"),
                "logger" => (&mut rec.logger, "logger"),
                "msg" => (&mut rec.msg, "msg"),
                _ => {
                    let key = key.into_owned();
                    map.next_value_seed(Flatten {
                        key,
                        out: &mut rec.fields,
                    })?;
                    continue;
                }
            };
            map.next_value_seed(Flatten {
                key: name.to_string(),
                out: &mut rec.fields,
            })?;
            // A well-known key takes its slot only when its value is a scalar (one entry
            // under the bare key) and the slot is still free; otherwise it stays a field.
            let scalar =
                rec.fields.len() == before + 1 && rec.fields.last().is_some_and(|(k, _)| k == name);
            if scalar && slot.is_none() {
                *slot = rec.fields.pop().map(|(_, v)| v.into_string());
            }
        }
        Ok(())
    }
}

/// Flattens one JSON value into `out`: nested objects under dotted keys, scalars rendered
/// without quotes, arrays as compact JSON text. Streams through serde so that no
/// `serde_json::Value` is built for the common case, and key order is kept.
struct Flatten<'a> {
    key: String,
    out: &'a mut Vec<(Text, Text)>,
}

impl Flatten<'_> {
    fn push(self, value: String) {
        self.out.push((self.key.into(), value.into()));
    }
}

impl<'de> DeserializeSeed<'de> for Flatten<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Flatten<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<(), E> {
        self.push(v);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.push("null".to_string());
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Flatten { key: prefix, out } = self;
        let mut empty = true;
        while let Some(Key(key)) = map.next_key()? {
            empty = false;
            let key = if prefix.is_empty() {
                key.into_owned()
            } else {
                let mut dotted = String::with_capacity(prefix.len() + 1 + key.len());
                dotted.push_str(&prefix);
                dotted.push('.');
                dotted.push_str(&key);
                dotted
            };
            map.next_value_seed(Flatten {
                key,
                out: &mut *out,
            })?;
        }
        // An empty object still says something (`"labels":{}`); keep it visible.
        if empty && !prefix.is_empty() {
            out.push((prefix.into(), "{}".into()));
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // Arrays are rare in operator logs; building values here keeps the code short.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<serde_json::Value>()? {
            items.push(item);
        }
        self.push(serde_json::Value::Array(items).to_string());
        Ok(())
    }
}

/// An object key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_string())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }
}

/// A line that opened like JSON but did not parse: still a record, with whatever a
/// lenient look finds.
fn broken_json_event(line: &str) -> Event {
    let mut ev = Event::new(0, line.to_string());
    ev.level = json_string_value(line, "level")
        .and_then(zap_level)
        .unwrap_or_else(|| guess_level(line));
    ev.component = json_string_value(line, "logger").unwrap_or_default().into();
    ev.raw_time = find_date_time(line, 80).map(|(idx, local)| match line.get(idx..).map(instant) {
        Some(Ok((_, utc))) => RawTime::Utc(utc),
        _ => RawTime::Naive(local),
    });
    ev
}

/// The text of `"key":"…"` near the start of a line, without unescaping.
fn json_string_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let head = line.get(..line.len().min(200)).unwrap_or(line);
    let needle = format!("\"{key}\":\"");
    let start = head.find(&needle)? + needle.len();
    let rest = line.get(start..)?;
    let end = rest.find('"')?;
    rest.get(..end)
}

// ---------------------------------------------------------------------------------------
// zap console

/// `<ts>\t<LEVEL>\t[<logger>\t]<msg>[\t{fields}]`, or the same with spaces when pasted.
/// A console line, built at `detail` (only a tab-separated one with a level is ever light).
fn console(line: &str, detail: &Detail) -> Option<Event> {
    let (rest, time) = leading_time(line)?;
    // Only a zoned ISO stamp is distinctive enough to start a record without a level
    // word; a bare number or a zone-less date may be the start of a continuation line.
    let lenient = matches!(time, Stamp::Iso(_));
    let raw = time.raw();
    let mut ev = match rest.as_bytes().first() {
        Some(b'\t') => tabbed(rest.get(1..).unwrap_or_default(), lenient, &raw, detail)?,
        Some(b' ') => spaced(rest.trim_start_matches(' '), lenient)?,
        _ => return None,
    };
    ev.raw_time = Some(raw);
    Some(ev)
}

/// How a console line's stamp was written.
enum Stamp {
    Iso(Micros),
    ZoneLess(Micros),
    Epoch(RawTime),
}

impl Stamp {
    fn raw(self) -> RawTime {
        match self {
            Stamp::Iso(utc) => RawTime::Utc(utc),
            Stamp::ZoneLess(local) => RawTime::Naive(local),
            Stamp::Epoch(time) => time,
        }
    }
}

/// The tab-separated body after the stamp written `raw`, built at `detail`.
fn tabbed(body: &str, lenient: bool, raw: &RawTime, detail: &Detail) -> Option<Event> {
    let (level_tok, after) = body.split_once('\t').unwrap_or((body, ""));
    let Some(level) = zap_level(level_tok) else {
        return lenient.then(|| stamped_text(body));
    };
    if !detail.full_at(Some(raw), level) {
        return Some(Event::light(Some(*raw), level));
    }
    // The fields object is the last column; JSON escapes tabs, so it holds none.
    let mut fields = Vec::new();
    let mut text = after;
    if let Some((head, last)) = after.rsplit_once('\t') {
        if last.starts_with('{') && flatten_object(last, &mut fields) {
            text = head;
        }
    }
    // A third column without spaces followed by a fourth is a logger name; a line with no
    // logger (`<ts>\tINFO\tattempting to acquire leader lease …`) has only the message.
    let (component, message) = match text.split_once('\t') {
        Some((logger, msg)) if !logger.is_empty() && !logger.contains(' ') => (logger, msg),
        _ => ("", text),
    };
    Some(zap_event(level, component, message, fields))
}

/// A pasted console line whose tabs became spaces: the columns are found by shape.
fn spaced(body: &str, lenient: bool) -> Option<Event> {
    let (level_tok, after) = body.split_once(' ').unwrap_or((body, ""));
    let Some(level) = zap_level(level_tok) else {
        return lenient.then(|| stamped_text(body));
    };
    let after = after.trim_start_matches(' ');
    let mut fields = Vec::new();
    let text = match trailing_object(after, &mut fields) {
        Some(head) => head.trim_end(),
        None => after,
    };
    let (component, message) = match text.split_once(' ') {
        Some((word, msg)) if looks_like_logger(word) => (word, msg.trim_start_matches(' ')),
        _ => ("", text),
    };
    Some(zap_event(level, component, message, fields))
}

fn zap_event(level: Level, component: &str, message: &str, fields: Vec<(Text, Text)>) -> Event {
    let mut ev = Event::new(0, message.to_string());
    ev.level = level;
    ev.component = component.into();
    ev.fields = fields;
    for (_, value) in &mut ev.fields {
        cap_field(value);
    }
    ev
}

/// A stamped line with no level column: still a record, as other frameworks print it.
fn stamped_text(body: &str) -> Event {
    let mut ev = Event::new(0, body.to_string());
    ev.level = guess_level(body);
    ev
}

/// Flattens `text` into `fields` if it is exactly one JSON object.
fn flatten_object(text: &str, fields: &mut Vec<(Text, Text)>) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    let before = fields.len();
    let ok = Flatten {
        key: String::new(),
        out: fields,
    }
    .deserialize(&mut de)
    .is_ok()
        && de.end().is_ok();
    if !ok {
        fields.truncate(before);
    }
    ok
}

/// Finds a fields object that ends the line (after a space) and flattens it; returns the
/// text before it.
fn trailing_object<'a>(text: &'a str, fields: &mut Vec<(Text, Text)>) -> Option<&'a str> {
    if !text.ends_with('}') {
        return None;
    }
    let mut from = 0;
    // A few tries: the message itself may contain ` {"` before the real fields.
    for _ in 0..4 {
        let idx = from + text.get(from..)?.find(" {\"")?;
        let candidate = text.get(idx + 1..)?;
        if flatten_object(candidate, fields) {
            return text.get(..idx);
        }
        from = idx + 1;
    }
    None
}

/// Logger names are dotted or dashed identifiers (`controllers.RayService`,
/// `raycluster-controller`), or one of the few bare ones KubeRay uses.
fn looks_like_logger(word: &str) -> bool {
    let charset = word
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/'));
    let shaped = word.contains(['.', '-']) || matches!(word, "setup" | "events");
    !word.is_empty()
        && charset
        && shaped
        && word.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
}

/// The time that opens a console line: an ISO 8601 instant, or an epoch number when the
/// operator ran with `--zap-time-encoding=epoch|millis|nano`.
fn leading_time(line: &str) -> Option<(&str, Stamp)> {
    if let Ok((rest, utc)) = instant(line) {
        return Some((rest, Stamp::Iso(utc)));
    }
    if let Ok((rest, local)) = date_time(line) {
        return Some((rest, Stamp::ZoneLess(local)));
    }
    let end = line.find(['\t', ' ']).unwrap_or(line.len());
    let token = line.get(..end)?;
    let epoch = epoch_stamp(token)?;
    Some((line.get(end..)?, Stamp::Epoch(epoch)))
}

/// A `ts` value: an ISO string, or an epoch number rendered as text.
fn stamp(ts: &str) -> Option<RawTime> {
    match instant(ts) {
        Ok(("", utc)) => return Some(RawTime::Utc(utc)),
        Ok(_) => return None,
        Err(_) => {}
    }
    if let Ok(("", local)) = date_time(ts) {
        return Some(RawTime::Naive(local));
    }
    epoch_stamp(ts)
}

/// Seconds, milliseconds, microseconds or nanoseconds since the epoch, told apart by size.
/// Only instants between 2001 and 2103 are accepted, so that a stray number is not a time.
fn epoch_stamp(token: &str) -> Option<RawTime> {
    let first = *token.as_bytes().first()?;
    if !first.is_ascii_digit()
        || !token
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let micros: Micros = if let Ok(int) = token.parse::<i64>() {
        match int {
            1_000_000_000..=4_199_999_999 => int * MICROS_PER_SEC,
            1_000_000_000_000..=4_199_999_999_999 => int * 1000,
            1_000_000_000_000_000..=4_199_999_999_999_999 => int,
            1_000_000_000_000_000_000..=4_199_999_999_999_999_999 => int / 1000,
            _ => return None,
        }
    } else {
        let v: f64 = token.parse().ok()?;
        let scale = if (1e9..4.2e9).contains(&v) {
            1e6
        } else if (1e12..4.2e12).contains(&v) {
            1e3
        } else if (1e15..4.2e15).contains(&v) {
            1.0
        } else if (1e18..4.2e18).contains(&v) {
            1e-3
        } else {
            return None;
        };
        (v * scale).round() as Micros
    };
    Some(RawTime::Utc(micros))
}

/// zap's level names in either case, plus `Level(-2)` / `LEVEL(-2)`, which zap prints for
/// logr verbosity 2 and above.
fn zap_level(token: &str) -> Option<Level> {
    if let Some(level) = Level::parse(token) {
        return Some(level);
    }
    let inner = token
        .strip_prefix("Level(")
        .or_else(|| token.strip_prefix("LEVEL("))?
        .strip_suffix(')')?;
    let n: i32 = inner.parse().ok()?;
    Some(if n < 0 { Level::Trace } else { Level::Critical })
}

// ---------------------------------------------------------------------------------------
// klog, Go crashes, prefixed pastes

/// `I0411 07:43:44.182159       1 leaderelection.go:250] msg`.
fn klog(line: &str) -> Option<Event> {
    let (rest, (letter, month, day, micros_of_day)) = klog_header(line).ok()?;
    let body = rest.strip_prefix(' ')?.trim_start_matches(' ');
    let n_digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let (thread, after) = body.split_at(n_digits);
    let mut fields = Vec::new();
    let message = match after.strip_prefix(' ').and_then(|a| {
        a.split_once("] ")
            .or_else(|| a.strip_suffix(']').map(|s| (s, "")))
    }) {
        Some((source, msg)) if n_digits > 0 && !source.contains(' ') => {
            fields.push(("source".into(), source.into()));
            fields.push(("thread".into(), thread.into()));
            msg
        }
        _ => body,
    };
    let mut ev = Event::new(0, message.to_string());
    ev.raw_time = Some(RawTime::NoYear {
        month,
        day,
        micros_of_day,
    });
    ev.level = match letter {
        'I' => Level::Info,
        'W' => Level::Warning,
        'E' => Level::Error,
        _ => Level::Critical,
    };
    ev.component = "klog".into();
    ev.fields = fields;
    Some(ev)
}

/// The first line of a Go runtime crash. The `[signal …]`, goroutine and frame lines after
/// it are not heads, so they fold into this record.
fn go_crash(line: &str) -> Option<Event> {
    if !(line.starts_with("panic: ") || line.starts_with("fatal error: ")) {
        return None;
    }
    let mut ev = Event::new(0, line.to_string());
    ev.level = Level::Critical;
    Some(ev)
}

/// A line pasted through a multiplexer (stern: `<pod> <container> <line>`): up to three
/// words, then a JSON record or a console line. Only a strict match counts, since a
/// continuation line may also contain `{"`.
fn prefixed(line: &str) -> Option<Event> {
    let mut idx = 0;
    for _ in 0..3 {
        let space = idx + line.get(idx..)?.find(' ')?;
        let prefix = line.get(..space)?;
        if prefix.is_empty() || prefix.contains('\t') {
            return None;
        }
        let rest = line.get(space..)?.trim_start_matches(' ');
        let mut ev = if rest.starts_with("{\"") {
            parse_object(rest)
                .ok()
                .filter(|rec| rec.level.is_some() && rec.trailing.is_none())
                .map(|rec| rec.into_event(rest))
        } else if rest.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            console(rest, &Detail::Full)
        } else {
            None
        };
        if let Some(ev) = ev.as_mut() {
            ev.fields.push(("prefix".into(), prefix.into()));
        }
        if ev.is_some() {
            return ev;
        }
        idx = line.len() - rest.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{format_rfc3339, RawTime};
    use crate::parse::lines::split_lines;

    fn render_time(t: Option<RawTime>) -> String {
        match t {
            None => "-".to_string(),
            Some(RawTime::Utc(m)) => format_rfc3339(m),
            Some(RawTime::Naive(m)) => format!("naive:{}", format_rfc3339(m)),
            Some(RawTime::NoYear {
                month,
                day,
                micros_of_day,
            }) => {
                let secs = micros_of_day / MICROS_PER_SEC;
                let frac = micros_of_day % MICROS_PER_SEC;
                let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
                format!("--{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{frac:06}")
            }
            Some(RawTime::Age { secs }) => format!("age:{secs}s"),
        }
    }

    fn esc(s: &str) -> String {
        s.replace('\n', "\\n")
            .replace('\t', "\\t")
            .replace('\r', "\\r")
    }

    fn render(out: &ParseOutput) -> String {
        let mut lines = Vec::new();
        for ev in &out.events {
            let fields: Vec<String> = ev
                .fields
                .iter()
                .map(|(k, v)| format!("{k}={}", esc(v)))
                .collect();
            let component = if ev.component.is_empty() {
                "-"
            } else {
                &ev.component
            };
            let mut line = format!(
                "{}+{} {} {} {} {{{}}}",
                ev.line,
                ev.n_lines,
                render_time(ev.raw_time),
                ev.level.as_str(),
                component,
                fields.join("; "),
            );
            if !ev.message.is_empty() {
                line.push(' ');
                line.push_str(&esc(&ev.message));
            }
            lines.push(line);
        }
        for d in &out.diagnostics {
            lines.push(format!("! {}: {}", d.line.unwrap_or(0), d.problem));
        }
        if out.unparsed_lines > 0 {
            lines.push(format!("unparsed={}", out.unparsed_lines));
        }
        lines.join("\n")
    }

    fn run(input: &[u8]) -> ParseOutput {
        let mut out = ParseOutput::default();
        parse(input, &mut out);
        let total: u32 = out.events.iter().map(|e| e.n_lines).sum();
        assert_eq!(
            total as usize,
            split_lines(input).count(),
            "a line was dropped"
        );
        out
    }

    #[track_caller]
    fn check(input: &str, expect: &str) {
        let got = render(&run(input.as_bytes()));
        let expect = expect.trim_start_matches('\n').trim_end();
        assert_eq!(got, expect, "\n--- got:\n{got}\n");
    }

    // ---- zap console (KubeRay v0.1 – v1.0), real lines from FORMATS.md §3.3

    #[test]
    fn console_restart_raycluster() {
        check(
            "2023-07-11T02:14:58.109Z\tINFO\tcontrollers.RayService\tRestart RayCluster\t{\"appName\": \"fruit_app\", \"restart reason\": \"The status of the serve application fruit_app has not been RUNNING for more than 300.000000 seconds. Hence, KubeRay operator labels the RayCluster unhealthy and will prepare a new RayCluster.\"}",
            r#"
1+1 2023-07-11T02:14:58.109Z info controllers.RayService {appName=fruit_app; restart reason=The status of the serve application fruit_app has not been RUNNING for more than 300.000000 seconds. Hence, KubeRay operator labels the RayCluster unhealthy and will prepare a new RayCluster.} Restart RayCluster
"#,
        );
    }

    #[test]
    fn console_debug_with_nested_timestamp_text() {
        check(
            "2023-10-30T07:32:07.020Z\tDEBUG\tcontrollers.RayService\treconcileRayCluster\t{\"delete Ray cluster\": \"<my serve resource name>-raycluster-9hxh9\", \"reason\": \"Deletion timestamp 2023-10-30 07:19:35.381769854 +0000 UTC m=+143.794313515 for RayCluster <my serve resource name>-raycluster-9hxh9 has passed. Deleting cluster immediately.\"}",
            r#"
1+1 2023-10-30T07:32:07.020Z debug controllers.RayService {delete Ray cluster=<my serve resource name>-raycluster-9hxh9; reason=Deletion timestamp 2023-10-30 07:19:35.381769854 +0000 UTC m=+143.794313515 for RayCluster <my serve resource name>-raycluster-9hxh9 has passed. Deleting cluster immediately.} reconcileRayCluster
"#,
        );
    }

    #[test]
    fn console_event_echo_as_quoted_in_docs() {
        // The documented line elides parts with `...`, which is not JSON: the text is kept.
        check(
            "2023-04-02T13:49:13.338Z\tDEBUG\tevents\tNormal\t{\"object\": {\"kind\":\"ConfigMap\",\"namespace\":\"ray-system\",\"name\":\"ray-operator-leader\",...}, \"reason\": \"LeaderElection\", \"message\": \"kuberay-operator-5b9d578847-g5sx2_f84cb3d3-... became leader\"}",
            r#"
1+1 2023-04-02T13:49:13.338Z debug events {} Normal\t{"object": {"kind":"ConfigMap","namespace":"ray-system","name":"ray-operator-leader",...}, "reason": "LeaderElection", "message": "kuberay-operator-5b9d578847-g5sx2_f84cb3d3-... became leader"}
"#,
        );
    }

    #[test]
    fn console_event_echo() {
        check(
            "2023-04-02T13:49:13.338Z\tDEBUG\tevents\tNormal\t{\"object\": {\"kind\":\"ConfigMap\",\"namespace\":\"ray-system\",\"name\":\"ray-operator-leader\",\"apiVersion\":\"v1\"}, \"reason\": \"LeaderElection\", \"message\": \"kuberay-operator-5b9d578847-g5sx2_f84cb3d3 became leader\"}",
            r#"
1+1 2023-04-02T13:49:13.338Z debug events {object.kind=ConfigMap; object.namespace=ray-system; object.name=ray-operator-leader; object.apiVersion=v1; reason=LeaderElection; message=kuberay-operator-5b9d578847-g5sx2_f84cb3d3 became leader} Normal
"#,
        );
    }

    #[test]
    fn console_starting_workers() {
        check(
            "2024-01-31T10:54:43.879Z\tINFO\tcontroller.raycluster-controller\tStarting workers\t{\"reconciler group\": \"ray.io\", \"reconciler kind\": \"RayCluster\", \"worker count\": 1}",
            r#"
1+1 2024-01-31T10:54:43.879Z info controller.raycluster-controller {reconciler group=ray.io; reconciler kind=RayCluster; worker count=1} Starting workers
"#,
        );
    }

    #[test]
    fn console_error_with_go_stack() {
        check(
            "2022-06-15T21:44:44.203Z\tERROR\tcontroller.rayservice\tReconciler error\t{\"reconciler group\": \"ray.io\", \"reconciler kind\": \"RayService\", \"name\": \"rayservice-sample\", \"namespace\": \"default\", \"error\": \"Put \\\"http://rayservice-sample-raycluster-9jdv6-head-svc.default.svc.cluster.local:8265/api/serve/deployments/\\\": dial tcp 10.100.36.128:8265: connect: connection refused\"}
sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem
\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266
2022-06-15T21:44:45.001Z\tINFO\tcontroller.rayservice\tnext",
            r#"
1+3 2022-06-15T21:44:44.203Z error controller.rayservice {reconciler group=ray.io; reconciler kind=RayService; name=rayservice-sample; namespace=default; error=Put "http://rayservice-sample-raycluster-9jdv6-head-svc.default.svc.cluster.local:8265/api/serve/deployments/": dial tcp 10.100.36.128:8265: connect: connection refused} Reconciler error\nsigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem\n\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266
4+1 2022-06-15T21:44:45.001Z info controller.rayservice {} next
"#,
        );
    }

    #[test]
    fn console_serve_api_errors() {
        // FORMATS.md §3.4: the Go net/http error inside the fields, v1.0 on port 52365.
        check(
            "2024-02-01T10:00:00.000Z\tERROR\tcontrollers.RayService\tFail to reconcileServe.\t{\"ServiceName\": \"default/rayservice-sample\", \"error\": \"Get \\\"http://rayservice-sample-raycluster-rqlsl-head-svc.default.svc.cluster.local:52365/api/serve/applications/\\\": dial tcp 10.96.7.154:52365: connect: connection refused\"}
2024-02-01T10:00:01.000Z\tERROR\tcontrollers.RayService\tFail to reconcileServe.\t{\"error\": \"UpdateDeployments fail: 404 Not Found 404: Not Found\"}",
            r#"
1+1 2024-02-01T10:00:00.000Z error controllers.RayService {ServiceName=default/rayservice-sample; error=Get "http://rayservice-sample-raycluster-rqlsl-head-svc.default.svc.cluster.local:52365/api/serve/applications/": dial tcp 10.96.7.154:52365: connect: connection refused} Fail to reconcileServe.
2+1 2024-02-01T10:00:01.000Z error controllers.RayService {error=UpdateDeployments fail: 404 Not Found 404: Not Found} Fail to reconcileServe.
"#,
        );
    }

    #[test]
    fn console_without_logger() {
        check(
            "2024-06-07T18:39:03.043Z\tINFO\tattempting to acquire leader lease default/ray-operator-leader...
2024-06-07T18:39:08.210Z\tINFO\tStarting EventSource\t{\"controller\": \"raycluster-controller\", \"source\": \"kind source: *v1.Pod\"}
2024-06-07T18:39:08.211Z\tINFO\treconcilePods\t{\"replicas\": 3}
2024-06-07T18:47:03.877Z\tERROR\tReconciler error\t{\"controller\": \"raycluster-controller\", \"RayCluster\": {\"name\": \"rc\", \"namespace\": \"default\"}, \"error\": \"Operation cannot be fulfilled\"}",
            r#"
1+1 2024-06-07T18:39:03.043Z info - {} attempting to acquire leader lease default/ray-operator-leader...
2+1 2024-06-07T18:39:08.210Z info - {controller=raycluster-controller; source=kind source: *v1.Pod} Starting EventSource
3+1 2024-06-07T18:39:08.211Z info - {replicas=3} reconcilePods
4+1 2024-06-07T18:47:03.877Z error - {controller=raycluster-controller; RayCluster.name=rc; RayCluster.namespace=default; error=Operation cannot be fulfilled} Reconciler error
"#,
        );
    }

    #[test]
    fn console_production_lowercase_levels() {
        check(
            "2024-05-01T08:00:00.123Z\tinfo\tcontrollers.RayCluster\treconcilePods\t{\"RayCluster\": {\"name\": \"rc\", \"namespace\": \"ns\"}}
2024-05-01T08:00:00.124Z\twarn\tcontrollers.RayCluster\tslow\t{}
2024-05-01T08:00:00.125Z\tdpanic\tsetup\tboom",
            r#"
1+1 2024-05-01T08:00:00.123Z info controllers.RayCluster {RayCluster.name=rc; RayCluster.namespace=ns} reconcilePods
2+1 2024-05-01T08:00:00.124Z warning controllers.RayCluster {} slow
3+1 2024-05-01T08:00:00.125Z error setup {} boom
"#,
        );
    }

    #[test]
    fn console_offset_and_nanos() {
        check(
            "2024-04-11T15:43:43.385+0800\tINFO\tsetup\tstarting manager
2024-04-11T07:43:43.385123456Z\tINFO\tsetup\tnano stamp",
            r#"
1+1 2024-04-11T07:43:43.385Z info setup {} starting manager
2+1 2024-04-11T07:43:43.385123Z info setup {} nano stamp
"#,
        );
    }

    #[test]
    fn console_verbosity_levels() {
        check(
            "2024-05-01T08:00:00.000Z\tLEVEL(-2)\tcontrollers.RayCluster\tvery chatty
2024-05-01T08:00:00.001Z\tPANIC\tsetup\tgiving up",
            r#"
1+1 2024-05-01T08:00:00.000Z trace controllers.RayCluster {} very chatty
2+1 2024-05-01T08:00:00.001Z critical setup {} giving up
"#,
        );
    }

    #[test]
    fn console_pasted_with_spaces() {
        check(
            "2023-07-11T02:14:58.109Z  INFO  controllers.RayService  Restart RayCluster  {\"appName\": \"fruit_app\"}
2024-06-07T18:39:03.043Z INFO attempting to acquire leader lease default/ray-operator-leader...
2024-06-07T18:39:08.300Z INFO Starting Controller {\"controller\": \"rayjob\"}
2024-06-07T18:39:08.400Z ERROR setup message with {\"inline\": 1} text",
            r#"
1+1 2023-07-11T02:14:58.109Z info controllers.RayService {appName=fruit_app} Restart RayCluster
2+1 2024-06-07T18:39:03.043Z info - {} attempting to acquire leader lease default/ray-operator-leader...
3+1 2024-06-07T18:39:08.300Z info - {controller=rayjob} Starting Controller
4+1 2024-06-07T18:39:08.400Z error setup {} message with {"inline": 1} text
"#,
        );
    }

    #[test]
    fn console_multiline_message_folds() {
        check(
            "2024-01-01T00:00:00.000Z\tINFO\tcontrollers.RayService\tActive RayCluster config doesn't match goal config.
* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D
* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A\t{\"RayService\": {\"name\": \"s\", \"namespace\": \"d\"}}",
            r#"
1+3 2024-01-01T00:00:00.000Z info controllers.RayService {} Active RayCluster config doesn't match goal config.\n* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D\n* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A\t{"RayService": {"name": "s", "namespace": "d"}}
"#,
        );
    }

    #[test]
    fn console_truncated_fields() {
        check(
            "2024-01-01T00:00:00.000Z\tERROR\tcontrollers.RayService\tReconciler error\t{\"error\": \"Put \\\"http://x:8265/api/se",
            r#"
1+1 2024-01-01T00:00:00.000Z error controllers.RayService {} Reconciler error\t{"error": "Put \"http://x:8265/api/se
"#,
        );
    }

    #[test]
    fn stamped_line_without_level() {
        check("2024-01-01T00:00:00.000Z\tsomething else entirely\n2024-01-01T00:00:01Z W0000 warning text", r#"
1+1 2024-01-01T00:00:00.000Z info - {} something else entirely
2+1 2024-01-01T00:00:01.000Z warning - {} W0000 warning text
"#);
    }

    #[test]
    fn epoch_console_stamps() {
        check(
            "1.7140879497204812e+09\tinfo\tsetup\tepoch seconds
1714087949720.4812\tinfo\tsetup\tepoch millis
300 seconds elapsed
1000000000 bytes is a number, not a time
2023-10-30 07:19:35 is a zone-less date, not a record",
            r#"
1+1 2024-04-25T23:32:29.720481Z info setup {} epoch seconds
2+4 2024-04-25T23:32:29.720481Z info setup {} epoch millis\n300 seconds elapsed\n1000000000 bytes is a number, not a time\n2023-10-30 07:19:35 is a zone-less date, not a record
"#,
        );
    }

    // ---- zap JSON (KubeRay v1.1+), real lines from FORMATS.md §3.3

    #[test]
    fn json_reconciling_ingress() {
        check(
            r#"{"level":"info","ts":"2024-04-25T23:12:29.720Z","logger":"controllers.RayCluster","msg":"Reconciling Ingress","RayCluster":{"name":"ray-py311-raycluster-jc9qt","namespace":"ray"},"reconcileID":"17eb30fd-edb5-467e-bc3b-82910187b923"}"#,
            r#"
1+1 2024-04-25T23:12:29.720Z info controllers.RayCluster {RayCluster.name=ray-py311-raycluster-jc9qt; RayCluster.namespace=ray; reconcileID=17eb30fd-edb5-467e-bc3b-82910187b923} Reconciling Ingress
"#,
        );
    }

    #[test]
    fn json_without_logger() {
        check(
            r#"{"level":"info","ts":"2024-04-11T07:43:43.785Z","msg":"starting server","kind":"health probe","addr":"[::]:8082"}"#,
            r#"
1+1 2024-04-11T07:43:43.785Z info - {kind=health probe; addr=[::]:8082} starting server
"#,
        );
    }

    #[test]
    fn json_multiline_message() {
        check(
            r#"{"level":"info","ts":"2024-08-20T03:10:38.257Z","logger":"controllers.RayService","msg":"Active RayCluster config doesn't match goal config. RayService operator should prepare a new Ray cluster.\n* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D\n* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A","RayService":{"name":"stable-diffusion-tpu","namespace":"default"},"reconcileID":"fc484444-80db-44d8-8652-38e4dff60878"}"#,
            r#"
1+1 2024-08-20T03:10:38.257Z info controllers.RayService {RayService.name=stable-diffusion-tpu; RayService.namespace=default; reconcileID=fc484444-80db-44d8-8652-38e4dff60878} Active RayCluster config doesn't match goal config. RayService operator should prepare a new Ray cluster.\n* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D\n* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A
"#,
        );
    }

    #[test]
    fn json_truncated_panic_line() {
        // Quoted cut short in FORMATS.md; a log cut by a size limit looks the same.
        check(
            r#"{"level":"error","ts":"2025-06-04T20:45:21.874Z","logger":"controllers.RayJob","msg":"Observed a panic","RayJob":{"name":"v6e-16-job","namespace":"hyperkube"},"reconcileID":"c00b3547-8723-4655-b41a-bd08125760db","panic":"runtime error: ..."#,
            r#"
1+1 2025-06-04T20:45:21.874Z error controllers.RayJob {} {"level":"error","ts":"2025-06-04T20:45:21.874Z","logger":"controllers.RayJob","msg":"Observed a panic","RayJob":{"name":"v6e-16-job","namespace":"hyperkube"},"reconcileID":"c00b3547-8723-4655-b41a-bd08125760db","panic":"runtime error: ...
! 1: 1 operator log line looks like zap JSON but did not parse (first error: EOF while parsing a string at column 239); kept as raw text
"#,
        );
    }

    #[test]
    fn json_panic_with_stack() {
        check(
            r#"{"level":"error","ts":"2025-06-04T20:45:21.874Z","logger":"controllers.RayJob","msg":"Observed a panic","RayJob":{"name":"j","namespace":"h"},"reconcileID":"c00b","panic":"runtime error: invalid memory address or nil pointer dereference","panicGoValue":"\"invalid memory address or nil pointer dereference\"","stacktrace":"goroutine 412 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic()\n\t/go/pkg/mod/k8s.io/apimachinery@v0.29.6/pkg/util/runtime/runtime.go:75"}"#,
            r#"
1+1 2025-06-04T20:45:21.874Z error controllers.RayJob {RayJob.name=j; RayJob.namespace=h; reconcileID=c00b; panic=runtime error: invalid memory address or nil pointer dereference; panicGoValue="invalid memory address or nil pointer dereference"; stacktrace=goroutine 412 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic()\n\t/go/pkg/mod/k8s.io/apimachinery@v0.29.6/pkg/util/runtime/runtime.go:75} Observed a panic
"#,
        );
    }

    #[test]
    fn json_error_with_stacktrace_field() {
        check(
            r#"{"level":"error","ts":"2024-05-01T01:02:03.004Z","logger":"controllers.RayService","msg":"Failed to get Serve application statuses","error":"Get \"http://rs-raycluster-x-head-svc.default.svc.cluster.local:8265/api/serve/applications/\": dial tcp 10.0.0.1:8265: i/o timeout","stacktrace":"github.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile\n\t/workspace/controllers/ray/rayservice_controller.go:198"}"#,
            r#"
1+1 2024-05-01T01:02:03.004Z error controllers.RayService {error=Get "http://rs-raycluster-x-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.0.0.1:8265: i/o timeout; stacktrace=github.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile\n\t/workspace/controllers/ray/rayservice_controller.go:198} Failed to get Serve application statuses
"#,
        );
    }

    #[test]
    fn json_value_shapes() {
        check(
            r#"{"level":"debug","ts":"2024-05-01T00:00:00Z","msg":"shapes","n":-3,"f":1.5,"big":18446744073709551615,"ok":true,"nil":null,"list":[1,"a",{"k":"v"}],"empty":{},"deep":{"a":{"b":{"c":"d"}}}}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z debug - {n=-3; f=1.5; big=18446744073709551615; ok=true; nil=null; list=[1,"a",{"k":"v"}]; empty={}; deep.a.b.c=d} shapes
"#,
        );
    }

    #[test]
    fn json_odd_well_known_keys() {
        // `msg` as an object, an unknown level and a `ts` that is no time stay fields.
        check(
            r#"{"level":"loud","ts":"yesterday","msg":{"a":1},"logger":"x"}
{"level":"info","msg":"first","msg":"second"}
{"some":"other document"}
{}"#,
            r#"
1+1 - info x {msg.a=1; level=loud; ts=yesterday}
2+1 - info - {msg=second} first
3+1 - info - {some=other document} {"some":"other document"}
4+1 - info - {} {}
"#,
        );
    }

    #[test]
    fn json_epoch_and_offset_stamps() {
        check(
            r#"{"level":"info","ts":1714087949.7204812,"msg":"epoch seconds"}
{"level":"info","ts":1714087949720,"msg":"epoch millis"}
{"level":"info","ts":1714087949720481200,"msg":"epoch nanos"}
{"level":"info","ts":"2024-04-11T15:43:43.385+0800","msg":"offset"}
{"level":"info","ts":42,"msg":"not a time"}"#,
            r#"
1+1 2024-04-25T23:32:29.720481Z info - {} epoch seconds
2+1 2024-04-25T23:32:29.720Z info - {} epoch millis
3+1 2024-04-25T23:32:29.720481Z info - {} epoch nanos
4+1 2024-04-11T07:43:43.385Z info - {} offset
5+1 - info - {ts=42} not a time
"#,
        );
    }

    #[test]
    fn json_verbosity_level() {
        check(
            r#"{"level":"Level(-2)","ts":"2024-05-01T00:00:00.000Z","msg":"v2"}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z trace - {} v2
"#,
        );
    }

    #[test]
    fn json_trailing_text() {
        check(
            r#"{"level":"info","ts":"2024-05-01T00:00:00.000Z","msg":"a"}{"level":"info","msg":"b"}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z info - {trailing={"level":"info","msg":"b"}} a
"#,
        );
    }

    #[test]
    fn broken_json_lines_make_one_diagnostic() {
        check(
            r#"{"level":"info","ts":"2024-05-01T00:00:00.000Z","msg":"ok"}
{"level":"warn","ts":"2024-05-01T00:00:01.000Z","logger":"controllers.RayService","msg":"cut
{"level":"error","ts":"2024-05-01T00:00:02.000Z","msg":"also cut","error":"x
{
{"msg": no quotes}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z info - {} ok
2+1 2024-05-01T00:00:01.000Z warning controllers.RayService {} {"level":"warn","ts":"2024-05-01T00:00:01.000Z","logger":"controllers.RayService","msg":"cut
3+1 2024-05-01T00:00:02.000Z error - {} {"level":"error","ts":"2024-05-01T00:00:02.000Z","msg":"also cut","error":"x
4+1 - info - {} {
5+1 - info - {} {"msg": no quotes}
! 2: 3 operator log lines look like zap JSON but did not parse (first error: EOF while parsing a string at column 92); kept as raw text
"#,
        );
    }

    #[test]
    fn json_with_leading_spaces() {
        check(
            r#"   {"level":"info","ts":"2024-05-01T00:00:00.000Z","msg":"indented"}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z info - {} indented
"#,
        );
    }

    // ---- klog (KubeRay < v1.3)

    #[test]
    fn klog_leader_election() {
        check(
            "I0402 13:48:57.637519       1 leaderelection.go:248] attempting to acquire leader lease ray-system/ray-operator-leader...",
            r#"
1+1 --04-02T13:48:57.637519 info klog {source=leaderelection.go:248; thread=1} attempting to acquire leader lease ray-system/ray-operator-leader...
"#,
        );
    }

    #[test]
    fn klog_reflector_rbac() {
        check(
            "W1127 12:42:08.725162       1 reflector.go:539] pkg/mod/k8s.io/client-go@v0.29.6/tools/cache/reflector.go:229: failed to list *v1.Endpoints: endpoints is forbidden: User \"system:serviceaccount:kuberay:kuberay-operator\" cannot list resource \"endpoints\" in API group \"\" at the cluster scope",
            r#"
1+1 --11-27T12:42:08.725162 warning klog {source=reflector.go:539; thread=1} pkg/mod/k8s.io/client-go@v0.29.6/tools/cache/reflector.go:229: failed to list *v1.Endpoints: endpoints is forbidden: User "system:serviceaccount:kuberay:kuberay-operator" cannot list resource "endpoints" in API group "" at the cluster scope
"#,
        );
    }

    #[test]
    fn klog_observed_panic_with_goroutine_dump() {
        check(
            "E0411 07:50:01.000001       1 runtime.go:78] Observed a panic: \"invalid memory address or nil pointer dereference\" (runtime error: invalid memory address or nil pointer dereference)
goroutine 312 [running]:
k8s.io/apimachinery/pkg/util/runtime.logPanic({0x1a2b3c0?, 0x2c5d6e0})
\t/go/pkg/mod/k8s.io/apimachinery@v0.23.0/pkg/util/runtime/runtime.go:74 +0x99

F0411 07:50:02.5       7 main.go:1] fatal
I0411 07:50:03.000000 odd layout",
            r#"
1+5 --04-11T07:50:01.000001 error klog {source=runtime.go:78; thread=1} Observed a panic: "invalid memory address or nil pointer dereference" (runtime error: invalid memory address or nil pointer dereference)\ngoroutine 312 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic({0x1a2b3c0?, 0x2c5d6e0})\n\t/go/pkg/mod/k8s.io/apimachinery@v0.23.0/pkg/util/runtime/runtime.go:74 +0x99\n
6+1 --04-11T07:50:02.500000 critical klog {source=main.go:1; thread=7} fatal
7+1 --04-11T07:50:03.000000 info klog {} odd layout
"#,
        );
    }

    #[test]
    fn klog_lookalikes_are_not_heads() {
        check(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\tstart
I1345 07:50:03.000000       1 x.go:1] month 13
Everything is fine
E0411",
            r#"
1+4 2024-01-01T00:00:00.000Z info setup {} start\nI1345 07:50:03.000000       1 x.go:1] month 13\nEverything is fine\nE0411
"#,
        );
    }

    // ---- Go runtime crash

    #[test]
    fn go_runtime_panic() {
        check(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\tstarting manager
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1b2c3d4]

goroutine 241 [running]:
github.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile(0xc0004a2000, {0x2a1b2c0, 0xc000d1e000})
\t/workspace/controllers/ray/rayservice_controller.go:130 +0x1a4
exit status 2
fatal error: concurrent map writes",
            r#"
1+1 2024-01-01T00:00:00.000Z info setup {} starting manager
2+7 - critical - {} panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1b2c3d4]\n\ngoroutine 241 [running]:\ngithub.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile(0xc0004a2000, {0x2a1b2c0, 0xc000d1e000})\n\t/workspace/controllers/ray/rayservice_controller.go:130 +0x1a4\nexit status 2
9+1 - critical - {} fatal error: concurrent map writes
"#,
        );
    }

    // ---- envelopes and pastes

    #[test]
    fn kubectl_timestamps_prefix() {
        check(
            "2024-04-25T23:12:29.720581234Z {\"level\":\"info\",\"ts\":\"2024-04-25T23:12:29.720Z\",\"logger\":\"controllers.RayCluster\",\"msg\":\"Reconciling Ingress\"}
2024-04-25T23:12:29.721581234Z 2023-07-11T02:14:58.109Z\tINFO\tcontrollers.RayService\tRestart RayCluster\t{\"appName\": \"fruit_app\"}
2024-04-25T23:12:29.722581234Z sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem
2024-04-25T23:12:29.723581234Z \t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266",
            r#"
1+1 2024-04-25T23:12:29.720Z info controllers.RayCluster {} Reconciling Ingress
2+3 2023-07-11T02:14:58.109Z info controllers.RayService {appName=fruit_app} Restart RayCluster\nsigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem\n\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266
"#,
        );
    }

    #[test]
    fn kubectl_prefix_flag() {
        check(
            "[pod/kuberay-operator-5b9d578847-g5sx2/kuberay-operator] {\"level\":\"info\",\"ts\":\"2024-04-25T23:12:29.720Z\",\"msg\":\"m\"}",
            r#"
1+1 2024-04-25T23:12:29.720Z info - {} m
"#,
        );
    }

    #[test]
    fn stern_prefix() {
        check(
            "kuberay-operator-5b9d578847-g5sx2 kuberay-operator {\"level\":\"error\",\"ts\":\"2024-04-25T23:12:29.720Z\",\"logger\":\"controllers.RayService\",\"msg\":\"Reconciler error\",\"error\":\"boom\"}
kuberay-operator-5b9d578847-g5sx2 kuberay-operator 2023-07-11T02:14:58.109Z\tINFO\tsetup\tstarting manager
a continuation that mentions {\"level\":\"info\"} inside
some text {\"level\":\"info\",\"msg\":\"x\"} with more text",
            r#"
1+1 2024-04-25T23:12:29.720Z error controllers.RayService {error=boom; prefix=kuberay-operator-5b9d578847-g5sx2 kuberay-operator} Reconciler error
2+3 2023-07-11T02:14:58.109Z info setup {prefix=kuberay-operator-5b9d578847-g5sx2 kuberay-operator} starting manager\na continuation that mentions {"level":"info"} inside\nsome text {"level":"info","msg":"x"} with more text
"#,
        );
    }

    // ---- nasty inputs

    #[test]
    fn empty_input() {
        check("", "");
    }

    #[test]
    fn blank_lines() {
        check(
            "\n\n2024-01-01T00:00:00.000Z\tERROR\tsetup\tx\nframe\n\n\n",
            r#"
1+2 - info - {} \n
3+4 2024-01-01T00:00:00.000Z error setup {} x\nframe\n\n
unparsed=1
"#,
        );
    }

    #[test]
    fn continuation_before_any_head() {
        check(
            "\t/go/pkg/mod/x.go:1\nsigs.k8s.io/y()\n2024-01-01T00:00:00.000Z\tINFO\tsetup\tx",
            r#"
1+2 - info - {} \t/go/pkg/mod/x.go:1\nsigs.k8s.io/y()
3+1 2024-01-01T00:00:00.000Z info setup {} x
unparsed=1
"#,
        );
    }

    #[test]
    fn crlf_line_ends() {
        check(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\tstart\t{\"a\": \"b\"}\r\n{\"level\":\"info\",\"ts\":\"2024-01-01T00:00:01.000Z\",\"msg\":\"json\"}\r\nframe\r\n",
            r#"
1+1 2024-01-01T00:00:00.000Z info setup {a=b} start
2+2 2024-01-01T00:00:01.000Z info - {} json\nframe
"#,
        );
    }

    #[test]
    fn truncated_lines() {
        check("2024-01-01T00:00:00.000Z\tINF\n2024-01-01T00:00:00\n2024-01-01T00:\nI0411 07:4\n{\"level\":\"in", r#"
1+4 2024-01-01T00:00:00.000Z info - {} INF\n2024-01-01T00:00:00\n2024-01-01T00:\nI0411 07:4
5+1 - info - {} {"level":"in
! 5: 1 operator log line looks like zap JSON but did not parse (first error: EOF while parsing a string at column 12); kept as raw text
"#);
    }

    #[test]
    fn invalid_utf8() {
        let mut input = b"2024-01-01T00:00:00.000Z\tINFO\tsetup\tbad \xff\xfe bytes\n".to_vec();
        input.extend_from_slice(
            b"{\"level\":\"info\",\"ts\":\"2024-01-01T00:00:01.000Z\",\"msg\":\"\xc3\x28\"}\n",
        );
        assert_eq!(
            render(&run(&input)),
            "1+1 2024-01-01T00:00:00.000Z info setup {} bad \u{fffd}\u{fffd} bytes\n\
             2+1 2024-01-01T00:00:01.000Z info - {} \u{fffd}("
        );
    }

    #[test]
    fn binary_garbage() {
        let input: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let out = run(&input);
        assert!(out
            .events
            .iter()
            .all(|e| e.raw_time.is_none() || e.n_lines >= 1));
    }

    #[test]
    fn giant_lines_are_capped() {
        let big = "x".repeat(200_000);
        let input = format!(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\t{big}\t{{\"k\": \"{big}\"}}\n{{\"level\":\"info\",\"msg\":\"{big}\",\"f\":\"{big}\"}}\n"
        );
        let out = run(input.as_bytes());
        assert_eq!(out.events.len(), 2);
        for ev in &out.events {
            assert!(ev.message.len() < 70_000, "message not capped");
            for (_, v) in &ev.fields {
                assert!(v.len() < 70_000, "field not capped");
            }
        }
    }

    #[test]
    fn deeply_nested_json_is_kept() {
        let input = format!("{}{}", "{\"a\":".repeat(200), "1");
        let out = run(input.as_bytes());
        assert_eq!(out.events.len(), 1);
        assert_eq!(out.diagnostics.len(), 1);
    }

    #[test]
    fn every_line_lands_in_one_event() {
        // Property: whatever the mix, the events' n_lines add up to the physical lines.
        let pieces: [&str; 14] = [
            "2024-01-01T00:00:00.000Z\tERROR\tsetup\tx\t{\"a\": 1}",
            "{\"level\":\"info\",\"ts\":\"2024-01-01T00:00:00Z\",\"msg\":\"m\"}",
            "{\"level\":\"info\",\"ts\":",
            "I0411 07:43:44.182159       1 leaderelection.go:250] msg",
            "panic: runtime error: boom",
            "goroutine 1 [running]:",
            "\t/go/src/x.go:12 +0x1",
            "",
            "\r",
            "pod container {\"level\":\"warn\",\"msg\":\"p\"}",
            "2026-03-04T07:42:11.446543463Z 2024-01-01T00:00:00.000Z\tINFO\tx\ty",
            "[pod/p/c] E0101 00:00:00.000000 1 a.go:1] e",
            "\u{0}\u{1}garbage\u{7f}",
            "1714087949.5\tinfo\tsetup\tepoch",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..300 {
            let mut input = String::new();
            for _ in 0..(seed % 23) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                input.push_str(pieces[(seed % pieces.len() as u64) as usize]);
                input.push_str(if seed % 5 == 0 { "\r\n" } else { "\n" });
            }
            if seed % 3 == 0 {
                input.pop();
            }
            run(input.as_bytes());
        }
    }
}
