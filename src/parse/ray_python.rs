//! Ray's Python component logs: `dashboard.log`, `dashboard_agent.log`, `monitor.log`,
//! `runtime_env_agent.log`, `runtime_env_setup-*.log`, `log_monitor.log` and the `ray start`
//! CLI output, all written with `LOGGER_FORMAT`
//! (`<asctime>\t<LEVEL> <file>:<line> -- <message>`), its stderr variant with a
//! `(<component>)` before the file, the autoscaler sidecar's `<asctime> - LEVEL - msg`, the
//! TEXT `LoggingConfig` with ` key=value` pairs appended, and the JSON encoding.
//!
//! It must not resolve zones: asctime is kept as `RawTime::Naive`; a line that also carries
//! a UTC instant (an aiohttp access stamp, `timestamp_ns`) yields a zone sample instead.

use crate::event::{Event, Level, Micros, RawTime, Text};
use crate::parse::lines::{parse_records_keyed, Continuation};
use crate::parse::primitives::{access_log_stamp, ray_asctime, rsplit_once_byte, split_once_byte};
use crate::parse::ray_record::{file_line, is_snake, json_record, set_utc_from_ns, split_word};
use crate::parse::{Detail, ParseOutput};

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    let mut samples = Vec::new();
    parse_records_keyed(input, Continuation::Fold, out, |line, detail, again| {
        // Read again, a line gives no new zone sample.
        let samples = if again { &mut Vec::new() } else { &mut samples };
        head_at(line, samples, detail)
    });
    out.zone_samples.append(&mut samples);
}

/// A record's first line in any of the Python spellings, or `None` for a continuation.
/// `samples` receives `local - utc` for lines that carry both times.
pub fn head(line: &str, samples: &mut Vec<Micros>) -> Option<Event> {
    head_at(line, samples, &Detail::Full)
}

/// [`head`], building the record at `detail` (only the text spellings are ever light).
fn head_at(line: &str, samples: &mut Vec<Micros>, detail: &Detail) -> Option<Event> {
    match line.as_bytes().first()? {
        b'{' => {
            let mut ev = json_record(line, samples)?;
            ev.component = ev.field("file").unwrap_or_default().into();
            Some(ev)
        }
        b'0'..=b'9' => text_head(line, samples, detail),
        // A driver's output interleaves the core worker's C++ records
        // (`[2025-01-25 08:22:57,421 E 759 759] core_worker.cc:496: …`) with Python's: they
        // start records of their own, never continue the Python record above them.
        b'[' if line.as_bytes().get(1).is_some_and(u8::is_ascii_digit) => {
            crate::parse::ray_cpp::head_at(line, samples, detail)
        }
        // A Python process's stderr (`dashboard.err`) holds the dumps it aborts with
        // (`parse::abort`): each starts a record, whose lines fold into it.
        b'*' => crate::parse::ray_cpp::signal_head(line),
        b'F' | b'W' => crate::parse::ray_cpp::fatal_python_head(line),
        _ => None,
    }
}

/// `<asctime>\t<LEVEL> [(<component>) ]<file>:<line> -- <message>` and the sidecar's
/// `<asctime> - <LEVEL> - <message>`. Pasted copies turn the TAB into spaces.
fn text_head(line: &str, samples: &mut Vec<Micros>, detail: &Detail) -> Option<Event> {
    // Cheap shape check before the date parser: `YYYY-MM-DD`.
    if line.as_bytes().get(4) != Some(&b'-') {
        return None;
    }
    let (rest, local) = ray_asctime(line).ok()?;
    let rest = rest.trim_start_matches([' ', '\t']);
    if let Some(sidecar) = rest.strip_prefix("- ") {
        let (level_tok, msg) = sidecar.split_once(" - ")?;
        let level = Level::parse(level_tok)?;
        let raw = RawTime::Naive(local);
        if !detail.full_at(Some(&raw), level) {
            return Some(Event::light(Some(raw), level));
        }
        let mut ev = Event::new(0, msg);
        ev.raw_time = Some(raw);
        ev.level = level;
        return Some(ev);
    }
    let (level_tok, rest) = split_word(rest);
    if !level_tok.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let level = Level::parse(level_tok)?;

    let mut rest = rest;
    let mut ray_component = None;
    if let Some(inner) = rest.strip_prefix('(') {
        if let Some((name, after)) = inner.split_once(") ") {
            ray_component = Some(name);
            rest = after;
        }
    }
    let (loc, after_loc) = split_word(rest);
    let located = (
        file_line(loc),
        after_loc.strip_prefix("-- ").or(match after_loc {
            "--" => Some(""),
            _ => None,
        }),
    );
    // aiohttp's access logger lives in `web_log.py`; a relocated one still puts the
    // bracketed stamp second.
    let is_access =
        |file: &str, msg: &str| file.starts_with("web_log") || split_word(msg).1.starts_with('[');
    // The autoscaler logs each event it reports (`event_AUTOSCALER.log`) as
    // `:event_summary:<message>`: the event and the record share an identity, with no pid
    // (the Python logger writes none), so the event is not a second record
    // (`load::mirror`).
    let echo = located
        .1
        .and_then(|msg| msg.strip_prefix(":event_summary:"))
        .map_or(0, |summary| crate::parse::ray_event::echo_key("", summary));
    let raw = RawTime::Naive(local);
    if !detail.full_at(Some(&raw), level) {
        // The whole record's time and zone samples, in the same order.
        let mut ev = Event::light(Some(raw), level);
        ev.echo_key = echo;
        if let (Some((file, _)), Some(msg)) = located {
            if let Some(ns) = timestamp_ns(msg) {
                set_utc_from_ns(&mut ev, ns, Some(local), samples);
            }
            if is_access(file, msg) {
                if let Some((_, _, sample)) = access_stamp(msg, local) {
                    samples.push(sample);
                }
            }
        }
        return Some(ev);
    }
    let mut ev = Event::new(0, String::new());
    ev.raw_time = Some(raw);
    ev.level = level;
    ev.echo_key = echo;
    match located {
        (Some((file, lineno)), Some(msg)) => {
            ev.component = file.into();
            let access = is_access(file, msg);
            // An access line's record has eight fields: one allocation, not three.
            ev.fields.reserve_exact(if access { 8 } else { 2 });
            ev.fields.push(("file".into(), file.into()));
            ev.fields.push(("lineno".into(), lineno.into()));
            if let Some(name) = ray_component {
                ev.fields.push(("ray_component".into(), name.into()));
            }
            ev.message = message_with_context(msg, local, &mut ev, samples);
            if access {
                access_fields(msg, local, &mut ev.fields, samples);
            }
        }
        // A level with no `file:line --` is still a timed record; keep the rest verbatim.
        _ => ev.message = rest.to_string(),
    }
    Some(ev)
}

/// The TEXT `LoggingConfig` appends ` key=value` pairs ending in `timestamp_ns=<digits>`.
/// Only then are trailing pairs moved into fields: an ordinary message that happens to end
/// in `x=y` is left alone. `timestamp_ns` becomes the record's UTC time and a zone sample.
fn message_with_context(
    msg: &str,
    local: Micros,
    ev: &mut Event,
    samples: &mut Vec<Micros>,
) -> String {
    let Some(ns) = timestamp_ns(msg) else {
        return msg.to_string();
    };
    let mut cut = msg.len();
    let mut pairs = Vec::new();
    while let Some((before, token)) = msg.get(..cut).and_then(|m| m.rsplit_once(' ')) {
        match token.split_once('=') {
            Some((key, value)) if is_snake(key) => {
                pairs.push((Text::from(key), Text::from(value)));
                cut = before.len();
            }
            _ => break,
        }
    }
    pairs.reverse();
    ev.fields.extend(pairs);
    set_utc_from_ns(ev, ns, Some(local), samples);
    msg.get(..cut).unwrap_or(msg).to_string()
}

/// The `timestamp_ns` the TEXT `LoggingConfig` ends a record with: the number after the
/// last ` timestamp_ns=`, when it runs to the end. Read from the end (the number's digits,
/// then the key before them): a search for the key built a searcher for every record, and
/// was a tenth of a light read's parse.
fn timestamp_ns(msg: &str) -> Option<i64> {
    const KEY: &[u8] = b" timestamp_ns=";
    let bytes = msg.as_bytes();
    let digits = bytes
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let mut start = bytes.len() - digits;
    if start > 0 && matches!(bytes.get(start - 1), Some(b'+' | b'-')) {
        start -= 1;
    }
    if !bytes.get(..start)?.ends_with(KEY) {
        return None;
    }
    msg.get(start..)?.parse::<i64>().ok()
}

/// The aiohttp access line: `<client> [10/Jul/2023:18:24:31 +0000] "GET /p HTTP/1.1" 200
/// 13940 "-" "Go-http-client/1.1"`.
fn access_fields(
    msg: &str,
    local: Micros,
    fields: &mut Vec<(Text, Text)>,
    samples: &mut Vec<Micros>,
) {
    let Some((client, rest, sample)) = access_stamp(msg, local) else {
        return;
    };
    samples.push(sample);
    fields.push(("client".into(), client.into()));
    let Some(rest) = rest.strip_prefix(" \"") else {
        return;
    };
    // The request ends at its closing quote, before the status.
    let Some(end) = rest.as_bytes().windows(2).position(|w| w == b"\" ") else {
        return;
    };
    let (request, rest) = (
        rest.get(..end).unwrap_or_default(),
        rest.get(end + 2..).unwrap_or_default(),
    );
    let mut parts = request.split(' ');
    if let (Some(method), Some(path)) = (parts.next(), parts.next()) {
        fields.push(("http_method".into(), method.into()));
        fields.push(("http_path".into(), path.into()));
    }
    let mut nums = rest.split(' ');
    if let Some(status) = nums.next() {
        fields.push(("http_status".into(), status.into()));
    }
    if let Some(bytes) = nums.next() {
        fields.push(("http_bytes".into(), bytes.into()));
    }
    if let Some(ua) = rest
        .strip_suffix('"')
        .and_then(|r| rsplit_once_byte(r, b'"'))
        .map(|(_, ua)| ua)
    {
        fields.push(("user_agent".into(), ua.into()));
    }
}

/// An access line's client, the text after its stamp, and its zone sample.
fn access_stamp(msg: &str, local: Micros) -> Option<(&str, &str, Micros)> {
    let (client, rest) = split_once_byte(msg, b' ')?;
    let (rest, utc) = access_log_stamp(rest).ok()?;
    // The stamp has whole seconds (and is the request's start); cut asctime to whole
    // seconds too so that the sample is the zone offset, not offset plus a fraction.
    Some((client, rest, local.div_euclid(1_000_000) * 1_000_000 - utc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::testing::assert_covers_lines;

    #[track_caller]
    fn check(input: &str, expect: &str) {
        crate::parse::testing::check_parse(parse, input, expect);
    }

    #[test]
    fn timestamp_ns_is_the_number_after_the_last_key_when_it_runs_to_the_end() {
        let by_search = |msg: &str| -> Option<i64> {
            let (_, ns) = msg.rsplit_once(" timestamp_ns=")?;
            ns.parse::<i64>().ok()
        };
        let cases = [
            "Started. job_id=01000000 worker_id=abc node_id=def timestamp_ns=1711402220999123456",
            "x timestamp_ns=-42",
            "x timestamp_ns=+42",
            "x timestamp_ns=+-42",
            "x timestamp_ns=",
            "x timestamp_ns=12 y",
            "timestamp_ns=12",
            " timestamp_ns=12",
            "a timestamp_ns=1 timestamp_ns=2",
            "a timestamp_ns=1 timestamp_ns=x2",
            "a timestamp_ns=99999999999999999999",
            "took 12",
            "",
            "x timestamp_ns=١٢",
            "é timestamp_ns=7",
        ];
        for msg in cases {
            assert_eq!(timestamp_ns(msg), by_search(msg), "{msg:?}");
        }
        assert_eq!(timestamp_ns(cases[0]), Some(1_711_402_220_999_123_456));
    }

    #[test]
    fn logger_format_with_tab() {
        check(
            "2024-03-25 21:30:20,999\tINFO utils.py:76 -- Run cmd[7] ['/tmp/x/bin/python', '-m', 'pip']",
            "1+1 N2024-03-25T21:30:20.999Z info utils.py {file=utils.py lineno=76} | Run cmd[7] ['/tmp/x/bin/python', '-m', 'pip']\n",
        );
    }

    #[test]
    fn a_drivers_core_worker_records_start_records_of_their_own() {
        // A driver's output as pasted in TinyZero issue 7 (a Ray 2.x driver).
        let input = "2025-01-25 08:22:27,169 INFO worker.py:1841 -- Started a local Ray instance.\n[2025-01-25 08:22:57,421 E 759 759] core_worker.cc:496: Failed to register worker to Raylet: IOError: [RayletClient] Unable to register worker with raylet. Failed to read data from the socket: End of file worker_id=01000000ffffffffffffffffffffffffffffffffffffffffffffffff";
        let mut out = ParseOutput::default();
        parse(input.as_bytes(), &mut out);
        assert_eq!(out.events.len(), 2);
        assert_eq!(out.events[1].level, Level::Error);
        assert!(out.events[1]
            .message
            .starts_with("Failed to register worker"));
    }

    #[test]
    fn logger_format_pasted_with_spaces() {
        check(
            "2023-07-10 11:24:38,590 WARNING agent.py:531 -- Exiting with SIGTERM immediately...",
            "1+1 N2023-07-10T11:24:38.590Z warning agent.py {file=agent.py lineno=531} | Exiting with SIGTERM immediately...\n",
        );
        check(
            "2023-05-06 10:48:19,492 WARNING utils.py:1445 -- Unable to connect to GCS at http://127.0.0.1:8265. Check that (1) Ray GCS with matching version started successfully",
            "1+1 N2023-05-06T10:48:19.492Z warning utils.py {file=utils.py lineno=1445} | Unable to connect to GCS at http://127.0.0.1:8265. Check that (1) Ray GCS with matching version started successfully\n",
        );
    }

    #[test]
    fn runtime_env_error() {
        check(
            "2024-03-14 07:11:52,501\tERROR runtime_env_agent.py:377 -- Failed to create runtime env {\"_ray_commit\": \"2bd3e20b\", \"working_dir\": \"gs://x.zip\"}",
            "1+1 N2024-03-14T07:11:52.501Z error runtime_env_agent.py {file=runtime_env_agent.py lineno=377} | Failed to create runtime env {\"_ray_commit\": \"2bd3e20b\", \"working_dir\": \"gs://x.zip\"}\n",
        );
    }

    #[test]
    fn succ_level_from_ray_start() {
        check(
            "2022-03-16 11:28:26,348 SUCC scripts.py:641 -- Ray runtime started.",
            "1+1 N2022-03-16T11:28:26.348Z info scripts.py {file=scripts.py lineno=641} | Ray runtime started.\n",
        );
    }

    #[test]
    fn stderr_variant_names_the_component() {
        check(
            "2024-01-01 00:00:01,000\tERROR (dashboard_agent) agent.py:12 -- boom",
            "1+1 N2024-01-01T00:00:01.000Z error agent.py {file=agent.py lineno=12 ray_component=dashboard_agent} | boom\n",
        );
    }

    #[test]
    fn autoscaler_sidecar_duplicate_form() {
        check(
            "2026-03-03 23:42:11,446 - INFO - Listing pods for RayCluster rayservice-sample\n2026-03-03 23:42:11,446\tINFO cloud_provider.py:496 -- Listing pods for RayCluster rayservice-sample",
            "1+1 N2026-03-03T23:42:11.446Z info - | Listing pods for RayCluster rayservice-sample\n\
             2+1 N2026-03-03T23:42:11.446Z info cloud_provider.py {file=cloud_provider.py lineno=496} | Listing pods for RayCluster rayservice-sample\n",
        );
    }

    #[test]
    fn kubelet_timestamp_prefix_gives_zone_sample() {
        check(
            "2026-03-04T07:42:11.446555630Z 2026-03-03 23:42:11,446\tINFO config.py:183 -- Calculating hashes for file mounts and ray commands.",
            "1+1 N2026-03-03T23:42:11.446Z info config.py {file=config.py lineno=183} | Calculating hashes for file mounts and ray commands.\n\
             zone=[-28800000555]\n",
        );
    }

    #[test]
    fn access_line_in_dashboard_log() {
        check(
            "2023-07-10 11:24:31,962 INFO web_log.py:206 -- 10.244.0.5 [10/Jul/2023:18:24:31 +0000] \"GET /api/serve/applications/ HTTP/1.1\" 200 13940 \"-\" \"Go-http-client/1.1\"",
            "1+1 N2023-07-10T11:24:31.962Z info web_log.py {file=web_log.py lineno=206 client=10.244.0.5 http_method=GET http_path=/api/serve/applications/ http_status=200 http_bytes=13940 user_agent=Go-http-client/1.1} | 10.244.0.5 [10/Jul/2023:18:24:31 +0000] \"GET /api/serve/applications/ HTTP/1.1\" 200 13940 \"-\" \"Go-http-client/1.1\"\n\
             zone=[-25200000000]\n",
        );
    }

    #[test]
    fn text_logging_config_pairs() {
        check(
            "2025-02-12 12:25:16,836 INFO test-log-config.py:11 -- This is a Ray task name=__main__ job_id=01000000 task_name=f timestamp_ns=1739391916836884000",
            "1+1 U2025-02-12T20:25:16.836884Z info test-log-config.py {file=test-log-config.py lineno=11 name=__main__ job_id=01000000 task_name=f timestamp_ns=1739391916836884000} | This is a Ray task\n\
             zone=[-28800000000]\n",
        );
    }

    #[test]
    fn pair_lookalike_without_timestamp_ns_stays_in_message() {
        check(
            "2024-01-01 00:00:00,000\tINFO x.py:1 -- set threshold=0.95",
            "1+1 N2024-01-01T00:00:00.000Z info x.py {file=x.py lineno=1} | set threshold=0.95\n",
        );
    }

    #[test]
    fn json_encoding() {
        check(
            r#"{"asctime": "2025-02-12 12:25:16,836", "levelname": "INFO", "message": "This is a Ray task", "filename": "test-log-config.py", "lineno": 11, "job_id": "01000000", "timestamp_ns": 1739391916836884000}"#,
            "1+1 U2025-02-12T20:25:16.836884Z info test-log-config.py {file=test-log-config.py job_id=01000000 lineno=11 timestamp_ns=1739391916836884000} | This is a Ray task\n\
             zone=[-28800000000]\n",
        );
    }

    #[test]
    fn json_with_exception_and_nested_extra() {
        check(
            r#"{"asctime": "2025-02-12 12:25:16,836", "levelname": "ERROR", "message": "failed", "filename": "a.py", "lineno": 3, "exc_text": "Traceback (most recent call last):\n  File \"a.py\"\nValueError: x", "userCtx": {"a b": 1}}"#,
            "1+1 N2025-02-12T12:25:16.836Z error a.py {file=a.py lineno=3 user_ctx.a_b=1} | failed⏎Traceback (most recent call last):⏎  File \"a.py\"⏎ValueError: x\n",
        );
    }

    #[test]
    fn traceback_folds_into_record() {
        check(
            "2024-01-01 00:00:00,000\tERROR agent.py:1 -- Failed\nTraceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: bad\n\n2024-01-01 00:00:01,000\tINFO agent.py:2 -- next",
            "1+5 N2024-01-01T00:00:00.000Z error agent.py {file=agent.py lineno=1} | Failed⏎Traceback (most recent call last):⏎  File \"x.py\", line 1, in <module>⏎ValueError: bad⏎\n\
             6+1 N2024-01-01T00:00:01.000Z info agent.py {file=agent.py lineno=2} | next\n",
        );
    }

    /// Ray 2.22.0's `dashboard.err` after `ray stop`: the raylet's message about the
    /// autoscaler, then absl's dump of the dashboard's SIGTERM, raw and through the logger.
    /// The dumps start records of their own instead of folding into the message above.
    #[test]
    fn abort_dumps_on_a_python_components_stderr_are_records() {
        check(
            "\x1b[33m(raylet)\x1b[0m The autoscaler failed with the following error:\n\
             Terminated with signal 15\n\
             \x20 File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/autoscaler/_private/monitor.py\", line 438, in _run\n\
             \x20   time.sleep(AUTOSCALER_UPDATE_INTERVAL_S)\n\
             \n\
             *** SIGTERM received at time=1796546137 on cpu 0 ***\n\
             PC: @     0x7f0a86926f36  (unknown)  epoll_wait\n\
             \x20   @     0x7f0a8685a050  134508376  (unknown)\n\
             [2026-12-06 08:35:37,157 E 18313 18313] logging.cc:365: *** SIGTERM received at time=1796546137 on cpu 0 ***\n\
             [2026-12-06 08:35:37,157 E 18313 18313] logging.cc:365: PC: @     0x7f0a86926f36  (unknown)  epoll_wait\n\
             Fatal Python error: Segmentation fault\n\
             \n\
             Current thread 0x00007f0a86a4e740 (most recent call first):\n\
             \x20 File \"/app/model.py\", line 12 in load",
            "1+5 - info - | (raylet) The autoscaler failed with the following error:⏎Terminated with signal 15⏎  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/autoscaler/_private/monitor.py\", line 438, in _run⏎    time.sleep(AUTOSCALER_UPDATE_INTERVAL_S)⏎\n\
             6+3 U2026-12-06T08:35:37.000Z warning - | *** SIGTERM received at time=1796546137 on cpu 0 ***⏎PC: @     0x7f0a86926f36  (unknown)  epoll_wait⏎    @     0x7f0a8685a050  134508376  (unknown)\n\
             9+2 N2026-12-06T08:35:37.157Z warning - {pid=18313 tid=18313 file=logging.cc lineno=365} | *** SIGTERM received at time=1796546137 on cpu 0 ***⏎[2026-12-06 08:35:37,157 E 18313 18313] logging.cc:365: PC: @     0x7f0a86926f36  (unknown)  epoll_wait\n\
             11+4 - critical - | Fatal Python error: Segmentation fault⏎⏎Current thread 0x00007f0a86a4e740 (most recent call first):⏎  File \"/app/model.py\", line 12 in load\n\
             unparsed=1\n",
        );
    }

    #[test]
    fn autoscaler_status_block_folds() {
        check(
            "2024-06-07 18:18:15,798\tINFO autoscaler.py:1 -- status\n======== Autoscaler status: 2024-06-07 18:18:15.798000 ========\nNode status\n Active:",
            "1+4 N2024-06-07T18:18:15.798Z info autoscaler.py {file=autoscaler.py lineno=1} | status⏎======== Autoscaler status: 2024-06-07 18:18:15.798000 ========⏎Node status⏎ Active:\n",
        );
    }

    #[test]
    fn level_without_location_is_still_a_record() {
        check(
            "2024-01-01 00:00:00,000 INFO plain message",
            "1+1 N2024-01-01T00:00:00.000Z info - | plain message\n",
        );
    }

    #[test]
    fn leading_garbage_is_raw_and_counted() {
        check("garbage\nmore", "1+2 - info - | garbage⏎more\nunparsed=1\n");
    }

    #[test]
    fn nasty_inputs() {
        check("", "");
        check("\n\n", "1+2 - info - | ⏎\nunparsed=1\n");
        check(
            "2024-01-01 00:00:00,000\tINFO a.py:1 -- crlf\r\n  tail\r\n",
            "1+2 N2024-01-01T00:00:00.000Z info a.py {file=a.py lineno=1} | crlf⏎  tail\n",
        );
        // Truncated mid-stamp, impossible dates and a lowercase level are not heads.
        check(
            "2024-01-01 00:0",
            "1+1 - info - | 2024-01-01 00:0\nunparsed=1\n",
        );
        check(
            "2024-02-30 00:00:00,000\tINFO a.py:1 -- x",
            "1+1 - info - | 2024-02-30 00:00:00,000\tINFO a.py:1 -- x\nunparsed=1\n",
        );
        check(
            "2024-01-01 00:00:00,000 info a.py:1 -- x",
            "1+1 - info - | 2024-01-01 00:00:00,000 info a.py:1 -- x\nunparsed=1\n",
        );
        check("{\"levelname\": ", "1+1 - info - | \n");
        check("{not json", "1+1 - info - | {not json\nunparsed=1\n");
    }

    #[test]
    fn invalid_utf8_and_binary() {
        let mut out = ParseOutput::default();
        parse(
            b"2024-01-01 00:00:00,000\tINFO a.py:1 -- caf\xe9\n\x00\xff\xfe",
            &mut out,
        );
        assert_eq!(out.events.len(), 1);
        assert_eq!(out.events[0].n_lines, 2);
        assert_eq!(out.events[0].message, "caf\u{fffd}\n\0\u{fffd}\u{fffd}");
    }

    #[test]
    fn giant_line_is_capped() {
        let input = format!(
            "2024-01-01 00:00:00,000\tINFO a.py:1 -- {}",
            "x".repeat(200_000)
        );
        let mut out = ParseOutput::default();
        parse(input.as_bytes(), &mut out);
        assert_eq!(out.events.len(), 1);
        assert!(out.events[0].message.len() < 70_000);
    }

    #[test]
    fn every_line_lands_in_one_event() {
        assert_covers_lines(parse);
    }

    #[test]
    fn file_line_tokens() {
        assert_eq!(file_line("agent.py:531"), Some(("agent.py", "531")));
        assert_eq!(file_line("node_manager.cc:12:"), None);
        assert_eq!(file_line("http://x.y:80"), None);
        assert_eq!(file_line("noext:1"), None);
        assert_eq!(file_line("a.py:"), None);
    }
}
