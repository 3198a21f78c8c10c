//! The line driver every line-oriented format shares: splitting bytes into lines, stripping
//! the envelopes that collectors add around a line, and folding continuation lines into the
//! record they belong to.
//!
//! Envelopes: `kubectl logs --timestamps` (`2026-03-04T07:42:11.446543463Z `), the CRI
//! node-log format (`<ts> stdout F `), `kubectl logs --prefix` (`[pod/p/c] `) and docker's
//! json-file lines. The envelope's time is kept as the line's UTC time, and when the line
//! also carries a zone-less Ray time, the difference is a sample of the container's zone.
//!
//! Invariant: every physical line ends up in exactly one event.

use std::borrow::Cow;

use crate::event::{Event, Micros, RawTime};
use crate::parse::primitives::instant;
use crate::parse::{Detail, ParseOutput};

/// Longest record, in physical lines, before the driver starts a new one. Keeps a runaway
/// continuation (a log with no recognisable heads) from becoming one giant event.
pub const MAX_RECORD_LINES: u32 = 1000;
/// Longest message kept per event; the rest is cut with a marker.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// Splits a buffer into `(line_number, bytes)`, 1-based, without the `\n` or `\r\n`.
/// A last line without a newline is still a line.
pub fn split_lines(input: &[u8]) -> impl Iterator<Item = (u32, &[u8])> {
    let mut start = 0usize;
    let mut no = 0u32;
    std::iter::from_fn(move || {
        if start >= input.len() {
            return None;
        }
        let rest = &input[start..];
        let (line, advance) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        start += advance;
        no = no.saturating_add(1);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some((no, line))
    })
}

/// Decodes a line, replacing invalid UTF-8.
pub fn decode(line: &[u8]) -> Cow<'_, str> {
    // Checking first is several times faster than the lossy decoder on the (common) valid
    // line, which it would borrow all the same.
    match std::str::from_utf8(line) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// A line without the terminal colours a process wrote into it (every record parser and the
/// worker parser read it so; the raw line stays at its `file:line`): Ray colours the prefix of the
/// lines it streams to a driver (`\x1b[36m(MyActor pid=123)\x1b[0m …`, `\x1b[33m(raylet)\x1b[0m`)
/// and the address in `View the dashboard at \x1b[1m\x1b[32mhttp://…`. Every control sequence
/// (`ESC [`, parameters, one final letter) goes; a line without `ESC` is borrowed as it is.
pub fn strip_colour(line: &str) -> Cow<'_, str> {
    if memchr::memchr(0x1b, line.as_bytes()).is_none() {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b';')
            .count();
        match after.as_bytes().get(params) {
            Some(b) if b.is_ascii_alphabetic() => rest = &after[params + 1..],
            // Not a control sequence after all: kept as written.
            _ => {
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// What a collector wrapped around a line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Envelope {
    /// The collector's UTC time for the line.
    pub utc: Option<Micros>,
}

/// Strips the collector envelope from a line; returns it with the content.
pub fn strip_envelope(line: &str) -> (Envelope, Cow<'_, str>) {
    let mut rest = line;
    let mut env = Envelope::default();
    // `kubectl logs --prefix`: `[pod/<pod>/<container>] `.
    if rest.starts_with("[pod/") {
        if let Some(end) = rest.find("] ") {
            rest = &rest[end + 2..];
        }
    }
    // Docker json-file: {"log":"…\n","stream":"stdout","time":"…"}.
    if rest.starts_with("{\"log\":") {
        if let Ok(doc) = serde_json::from_str::<DockerLine>(rest) {
            env.utc = doc
                .time
                .as_deref()
                .and_then(|t| instant(t).ok())
                .map(|r| r.1);
            let text = doc.log.trim_end_matches('\n').to_string();
            return (env, Cow::Owned(text));
        }
    }
    // kubelet prefix: RFC 3339 with nine fractional digits (RFC3339NanoFixed), then a space.
    // Nine digits tell it apart from the operator's own millisecond stamps.
    if rest.len() > 31
        && rest.as_bytes()[0].is_ascii_digit()
        && rest.as_bytes().get(19) == Some(&b'.')
    {
        let frac_digits = rest.as_bytes()[20..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if frac_digits == 9 {
            if let Ok((after, t)) = instant(rest) {
                if let Some(content) = after.strip_prefix(' ') {
                    env.utc = Some(t);
                    rest = strip_cri(content);
                }
            }
        }
    }
    (env, Cow::Borrowed(rest))
}

/// CRI node-log lines carry `stdout F ` / `stderr P ` after the time.
fn strip_cri(content: &str) -> &str {
    for stream in ["stdout ", "stderr "] {
        if let Some(after) = content.strip_prefix(stream) {
            if let Some(text) = after
                .strip_prefix("F ")
                .or_else(|| after.strip_prefix("P "))
            {
                return text;
            }
            if after == "F" || after == "P" {
                return "";
            }
        }
    }
    content
}

#[derive(serde::Deserialize)]
struct DockerLine {
    log: String,
    #[serde(default)]
    time: Option<String>,
}

/// What to do with a line the grammar does not recognise as a record's first line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// Fold it into the previous record (tracebacks, Go stacks, glog continuations).
    Fold,
    /// Every line is its own record (raw stdout).
    Separate,
}

/// Runs a line grammar over a buffer. `head` parses a record's first line at the output's
/// [`Detail`], or returns `None` for a line that is not one. Lines that are not heads are
/// folded or kept on their own, per `policy`; a line that stands alone with no time is
/// counted as unparsed. A light record's continuation lines are counted, not joined, unless
/// the detail builds a continued record whole: then `head` reads its first line `again`, and
/// must not count what it counted the first time (zone samples).
pub fn parse_records(
    input: &[u8],
    policy: Continuation,
    out: &mut ParseOutput,
    head: impl FnMut(&str, &Detail, bool) -> Option<Event>,
) {
    records(input, policy, out, false, head);
}

/// [`parse_records`] for the logs of a Ray process that may write a record to two files
/// (`raylet.out` and `raylet.err`): each record that [`may_be_mirrored`] gets its
/// [`mirror_key`] (`load::mirror`). The other formats never do, and pay nothing.
pub fn parse_records_keyed(
    input: &[u8],
    policy: Continuation,
    out: &mut ParseOutput,
    head: impl FnMut(&str, &Detail, bool) -> Option<Event>,
) {
    records(input, policy, out, true, head);
}

fn records(
    input: &[u8],
    policy: Continuation,
    out: &mut ParseOutput,
    keyed: bool,
    mut head: impl FnMut(&str, &Detail, bool) -> Option<Event>,
) {
    let detail = out.detail.clone();
    let mut current: Option<Event> = None;
    // The first line of `current`.
    let mut current_head: &[u8] = &[];
    let mut bad_times = BadTimes::default();
    for (no, raw) in split_lines(input) {
        let decoded = decode(raw);
        let (env, enveloped) = strip_envelope(&decoded);
        let content = strip_colour(&enveloped);
        if let Some(mut ev) = head(&content, &detail, false) {
            current_head = raw;
            ev.line = no;
            ev.n_lines = 1;
            match (ev.raw_time, env.utc) {
                (None, Some(utc)) => ev.raw_time = Some(RawTime::Utc(utc)),
                (Some(RawTime::Naive(local)), Some(utc)) => out.zone_samples.push(local - utc),
                _ => {}
            }
            if keyed && may_be_mirrored(&ev) {
                ev.mirror_key = mirror_key(raw);
            }
            cap_message(&mut ev.message);
            if let Some(done) = current.replace(ev) {
                out.push_event(done);
            }
            continue;
        }
        bad_times.check(no, &content);
        let folds = policy == Continuation::Fold
            && current
                .as_ref()
                .is_some_and(|ev| ev.n_lines < MAX_RECORD_LINES);
        if folds {
            if let Some(ev) = current.as_mut() {
                if ev.light && detail.whole_when_continued() {
                    let decoded = decode(current_head);
                    let (_, enveloped) = strip_envelope(&decoded);
                    let first = strip_colour(&enveloped);
                    if let Some(mut whole) = head(&first, &Detail::Full, true) {
                        // The time as the first reading settled it (envelope, zone).
                        whole.line = ev.line;
                        whole.n_lines = ev.n_lines;
                        whole.raw_time = ev.raw_time;
                        whole.mirror_key = ev.mirror_key;
                        cap_message(&mut whole.message);
                        *ev = whole;
                    }
                }
                if !ev.light && ev.message.len() < MAX_MESSAGE_BYTES {
                    ev.push_continuation(&content);
                    cap_message(&mut ev.message);
                } else {
                    ev.n_lines += 1;
                }
            }
            continue;
        }
        let raw_time = env.utc.map(RawTime::Utc);
        // Built whole when it may be continued and built again: `head` does not read it.
        let whole = detail.full_at(raw_time.as_ref(), crate::event::Level::Info)
            || detail.whole_when_continued();
        let mut ev = if whole {
            let mut ev = Event::new(no, content.into_owned());
            cap_message(&mut ev.message);
            ev
        } else {
            let mut ev = Event::light(None, crate::event::Level::Info);
            ev.line = no;
            ev
        };
        ev.raw_time = raw_time;
        if raw_time.is_none() {
            out.unparsed_lines += 1;
        }
        if let Some(done) = current.replace(ev) {
            out.push_event(done);
        }
    }
    if let Some(done) = current {
        out.push_event(done);
    }
    bad_times.report(out);
}

/// Whether a record may be written to two files of its process, and is looked for in the
/// other (`load::mirror`): a C++ process writes its warnings and worse (`.err` takes only
/// errors) to both its `.out` and its `.err`; a record without a time cannot be told from
/// another that says the same.
pub fn may_be_mirrored(ev: &Event) -> bool {
    ev.raw_time.is_some() && ev.level >= crate::event::Level::Warning
}

/// The identity of a record that may be mirrored ([`Event::mirror_key`]): a hash of its first
/// line as written (time, level, pid, tid and text), without its line end; never 0.
pub fn mirror_key(first_line: &[u8]) -> u64 {
    let line = first_line.strip_suffix(b"\n").unwrap_or(first_line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut h = crate::parse::stamp::Fx::default();
    h.write(line);
    h.finish().max(1)
}

/// Lines that start like a record but whose date-time is impossible (`2024-02-30`, year 9999,
/// `25:00`): kept as text, and reported once per file.
#[derive(Default)]
struct BadTimes {
    count: u64,
    first: Option<(u32, String)>,
}

impl BadTimes {
    fn check(&mut self, no: u32, content: &str) {
        let text = content.strip_prefix('[').unwrap_or(content);
        let b = text.as_bytes();
        let shaped = b.len() >= 19
            && b[..4].iter().all(u8::is_ascii_digit)
            && b[4] == b'-'
            && b[7] == b'-'
            && b[13] == b':'
            && b[16] == b':';
        if shaped && crate::parse::primitives::date_time(text).is_err() {
            self.count += 1;
            if self.first.is_none() {
                let snippet: String = text.chars().take(23).collect();
                self.first = Some((no, snippet));
            }
        }
    }

    fn report(self, out: &mut ParseOutput) {
        if let Some((line, snippet)) = self.first {
            out.diagnostics.push(crate::diag::Diagnostic::at_line(
                line,
                format!(
                    "{} line(s) start with an impossible date-time such as {snippet:?}; kept as text without a time",
                    self.count
                ),
            ));
        }
    }
}

/// [`cap_message`] for a field's value.
pub fn cap_field(value: &mut crate::event::Text) {
    if value.len() <= MAX_MESSAGE_BYTES {
        return;
    }
    let mut long = std::mem::take(value).into_string();
    cap_message(&mut long);
    *value = long.into();
}

/// Cuts a message longer than [`MAX_MESSAGE_BYTES`] at a character boundary, with a marker.
pub fn cap_message(message: &mut String) {
    if message.len() <= MAX_MESSAGE_BYTES {
        return;
    }
    let mut cut = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    let dropped = message.len() - cut;
    message.truncate(cut);
    message.push_str(&format!(" …[{dropped} bytes cut]"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_envelope(line: &str, expect: &str) {
        let (env, content) = strip_envelope(line);
        let got = format!(
            "{} | {content}",
            env.utc
                .map(crate::event::format_rfc3339)
                .unwrap_or_default()
        );
        assert_eq!(got, expect);
    }

    #[test]
    fn colours_go() {
        assert_eq!(strip_colour("plain"), "plain");
        assert_eq!(
            strip_colour("\x1b[36m(MyActor pid=123)\x1b[0m hello"),
            "(MyActor pid=123) hello"
        );
        assert_eq!(
            strip_colour("at \x1b[1m\x1b[32m127.0.0.1:8266 \x1b[39m\x1b[22m"),
            "at 127.0.0.1:8266 "
        );
        // Not a control sequence: kept.
        assert_eq!(strip_colour("a \x1b[ b \x1b"), "a \x1b[ b \x1b");
    }

    #[test]
    fn envelopes() {
        check_envelope(
            "2026-03-04T07:42:11.446555630Z 2026-03-03 23:42:11,446\tINFO config.py:183 -- Calculating hashes",
            "2026-03-04T07:42:11.446555Z | 2026-03-03 23:42:11,446\tINFO config.py:183 -- Calculating hashes",
        );
        check_envelope(
            "2016-10-06T00:17:09.669794202Z stdout P log content 1",
            "2016-10-06T00:17:09.669794Z | log content 1",
        );
        check_envelope(
            r#"{"log":"content 1\n","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}"#,
            "2016-10-20T18:39:20.576064Z | content 1",
        );
        check_envelope(
            "[pod/raycluster-head-abc/ray-head] 2024-01-01 00:00:00,000\tINFO x.py:1 -- hi",
            " | 2024-01-01 00:00:00,000\tINFO x.py:1 -- hi",
        );
        // The operator's own stamp has three digits and a TAB: not an envelope.
        check_envelope(
            "2024-04-11T07:43:43.385Z\tINFO\tsetup\tstarting manager",
            " | 2024-04-11T07:43:43.385Z\tINFO\tsetup\tstarting manager",
        );
    }

    #[test]
    fn impossible_dates_are_diagnostics() {
        let mut out = ParseOutput::default();
        let input = "2024-02-30 10:00:00,000\tINFO x.py:1 -- a\n9999-01-01 00:00:00,000\tINFO x.py:1 -- b\n";
        parse_records(
            input.as_bytes(),
            Continuation::Separate,
            &mut out,
            |_, _, _| None,
        );
        assert_eq!(out.events.len(), 2);
        assert_eq!(out.diagnostics.len(), 1);
        let d = &out.diagnostics[0];
        assert_eq!(d.line, Some(1));
        assert!(
            d.problem
                .starts_with("2 line(s) start with an impossible date-time"),
            "{}",
            d.problem
        );
    }

    #[test]
    fn lines_keep_count() {
        let got: Vec<_> = split_lines(b"a\r\nb\n\nc")
            .map(|(n, l)| (n, l.to_vec()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, b"a".to_vec()),
                (2, b"b".to_vec()),
                (3, b"".to_vec()),
                (4, b"c".to_vec())
            ]
        );
    }
}
