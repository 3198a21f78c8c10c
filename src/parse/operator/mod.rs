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
//!
//! The parser's parts, one file each:
//!
//! - this file: the entry point, the choice of a line's record head by its first byte, the
//!   count of JSON lines that did not parse (one diagnostic for all of them), and lines
//!   pasted behind a multiplexer's prefix;
//! - `json.rs`: a zap JSON line, flattened into an event (and the raw text of a broken one);
//! - `console.rs`: a zap console line, tab- or space-separated;
//! - `zap.rs`: the level names and time stamps zap writes in both encodings;
//! - `go.rs`: what Go itself writes rather than zap: klog lines and runtime crash heads;
//! - `tests.rs`: the test harness all the parts' tests share, and the tests of whole files.

mod console;
mod go;
mod json;
#[cfg(test)]
mod tests;
mod zap;

use crate::diag::Diagnostic;
use crate::event::Event;
use crate::parse::lines::{parse_records, Continuation};
use crate::parse::{Detail, ParseOutput};

use console::console;
use go::{go_crash, klog};
use json::{broken_json_event, parse_object};

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
