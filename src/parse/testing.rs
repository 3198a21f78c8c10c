//! Helpers of the parsers' unit tests: a parse rendered one event a line, and a check that
//! every physical line of generated input lands in exactly one event.

use crate::event::{Event, RawTime};
use crate::parse::ParseOutput;

/// The events `parse` makes of `text`, checking that each line is one record of its own (the
/// JSON-a-line parsers: Ray's export and aggregator events).
#[track_caller]
pub(crate) fn one_a_line(parse: fn(&[u8], &mut ParseOutput), text: &str) -> Vec<Event> {
    let mut out = ParseOutput::default();
    parse(text.as_bytes(), &mut out);
    assert_eq!(out.events.len(), text.lines().count(), "one record a line");
    out.events
}

/// An event's first line (its message's head).
pub(crate) fn first_line(ev: &Event) -> &str {
    ev.message.lines().next().unwrap_or("")
}

/// Renders a parse result one event per line for the parser tests of this module and its
/// siblings, and checks that every physical line landed in exactly one event.
/// Parses `input` with `parse` and compares the rendering with `expect`.
#[track_caller]
pub(crate) fn check_parse(parse: fn(&[u8], &mut ParseOutput), input: &str, expect: &str) {
    let mut out = ParseOutput::default();
    parse(input.as_bytes(), &mut out);
    assert_eq!(render(input, &out), expect);
}

pub(crate) fn render(input: &str, out: &ParseOutput) -> String {
    use crate::event::format_rfc3339;
    let physical = crate::parse::lines::split_lines(input.as_bytes()).count() as u64;
    let covered: u64 = out.events.iter().map(|e| u64::from(e.n_lines)).sum();
    assert_eq!(covered, physical, "n_lines must cover every physical line");
    let mut s = String::new();
    for ev in &out.events {
        let time = match ev.raw_time {
            None => "-".to_string(),
            Some(RawTime::Naive(t)) => format!("N{}", format_rfc3339(t)),
            Some(RawTime::Utc(t)) => format!("U{}", format_rfc3339(t)),
            Some(RawTime::NoYear {
                month,
                day,
                micros_of_day,
            }) => {
                format!("Y{month:02}-{day:02}+{micros_of_day}")
            }
            Some(RawTime::Age { secs }) => format!("A{secs}"),
        };
        let comp = if ev.component.is_empty() {
            "-"
        } else {
            &ev.component
        };
        s.push_str(&format!(
            "{}+{} {time} {} {comp}",
            ev.line,
            ev.n_lines,
            ev.level.as_str()
        ));
        if !ev.fields.is_empty() {
            let f: Vec<String> = ev.fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.push_str(&format!(" {{{}}}", f.join(" ")));
        }
        s.push_str(" | ");
        s.push_str(&ev.message.replace('\n', "⏎"));
        s.push('\n');
    }
    if out.unparsed_lines > 0 {
        s.push_str(&format!("unparsed={}\n", out.unparsed_lines));
    }
    if !out.zone_samples.is_empty() {
        s.push_str(&format!("zone={:?}\n", out.zone_samples));
    }
    s
}

/// Feeds a parser many generated files made of real heads, continuation lines, junk bytes,
/// CRLF and cut-off lines, and checks that every physical line lands in exactly one event.
pub(crate) fn assert_covers_lines(parse: fn(&[u8], &mut ParseOutput)) {
    const PIECES: [&[u8]; 21] = [
        b"2023-07-10 11:24:38,590 WARNING agent.py:531 -- Exiting with SIGTERM immediately...",
        b"2024-03-25 21:30:20,999\tINFO utils.py:76 -- Run cmd[7]",
        b"[2022-01-17 03:12:42,168 I 449 449] io_service_pool.cc:35: IOServicePool is running.",
        b"[2024-05-29 22:54:10,723 C 1 1] (raylet) a.cc:29:  Check failed: x",
        b"INFO 2024-12-30 23:47:44,173 default_HelloWorld 5w6y35rx 7bda8dd6 -- GET / 200 8.5ms",
        b"{\"levelname\": \"INFO\", \"asctime\": \"2023-08-01 10:00:00,000\", \"message\": \"a \"b\"}",
        b"{\"asctime\": \"2025-02-12 12:25:16,836\", \"levelname\": \"INFO\", \"message\": \"m\"}",
        b"Traceback (most recent call last):",
        b"  File \"a.py\", line 1, in <module>",
        b"ValueError: bad",
        b"",
        b":actor_name:ServeReplica:app:Dep",
        b"(MyActor pid=12, ip=10.0.0.2) hello [repeated 3x across cluster]",
        b"2026-03-04T07:42:11.446555630Z 2026-03-03 23:42:11,446\tINFO config.py:183 -- x",
        b"\xff\xfe\x00 junk \xc3",
        b"F0411 07:43:44.182159  123 raylet_client.cc:12] Check failed: ok",
        b"*** SIGSEGV received at time=1796545631 on cpu 0 ***",
        b"[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)",
        b"Fatal Python error: Segmentation fault",
        b"Stack (most recent call first):",
        b"  File \"/app/jobs.py\", line 53 in decode_frame",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..300 {
        let mut input = Vec::new();
        for _ in 0..(next() % 12) {
            let piece = PIECES[(next() % PIECES.len() as u64) as usize];
            // Sometimes cut a line short, sometimes end it with CRLF.
            let cut = if next() % 5 == 0 {
                (next() as usize) % (piece.len() + 1)
            } else {
                piece.len()
            };
            input.extend_from_slice(piece.get(..cut).unwrap_or(piece));
            input.extend_from_slice(if next() % 4 == 0 { b"\r\n" } else { b"\n" });
        }
        if next() % 3 == 0 {
            input.pop();
        }
        let mut out = ParseOutput::default();
        parse(&input, &mut out);
        let physical = crate::parse::lines::split_lines(&input).count() as u64;
        let covered: u64 = out.events.iter().map(|e| u64::from(e.n_lines)).sum();
        assert_eq!(covered, physical, "{:?}", String::from_utf8_lossy(&input));
    }
}
