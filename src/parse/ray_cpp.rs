//! Ray's C++ logs: `raylet.out|.err`, `gcs_server.out|.err`, `python-core-worker-*.log` and
//! `python-core-driver-*.log`. The spdlog text pattern is
//! `[YYYY-MM-DD HH:MM:SS,mmm L pid tid] [(component) ]file.cc:line: message[ key=value…]`
//! with a one-letter level; the JSON mode writes one object per line.
//!
//! Unprefixed lines (stack traces, OOM details, `[state-dump]` and debug-state blocks) fold
//! into the record above them. `.err` files that are plain stderr redirects also carry glog
//! headers (`F0411 07:43:44.182159  123 file.cc:12] …`), absl's failure-signal banner
//! (`*** SIGSEGV received at time=… ***`) and CPython's `Fatal Python error: …`
//! (`parse::abort`); each starts a record of its own, and its dump's lines fold into it. The
//! frame lines of an absl dump that Ray's logger writes again as records of their own
//! (`[…] logging.cc:361:     @ 0x…`) continue the logged banner's record, so one dump is one
//! record in either spelling.
//!
//! It must not resolve zones or years: Ray's stamps stay `RawTime::Naive`, glog's
//! `RawTime::NoYear`.

use crate::event::{Event, Level, Micros, RawTime, Text, MICROS_PER_SEC};
use crate::parse::abort;
use crate::parse::lines::{parse_records_keyed, Continuation};
use crate::parse::primitives::{date_time, klog_header, rsplit_once_byte, split_once_byte};
use crate::parse::ray_record::{file_line, json_record, split_word};
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

/// A record's first line in any C++ spelling, or `None` for a continuation.
pub fn head(line: &str, samples: &mut Vec<Micros>) -> Option<Event> {
    head_at(line, samples, &Detail::Full)
}

/// [`head`], building the record at `detail` (only the spdlog text is ever light).
pub fn head_at(line: &str, samples: &mut Vec<Micros>, detail: &Detail) -> Option<Event> {
    match line.as_bytes().first()? {
        b'[' => text_head(line, detail),
        b'{' => json_head(line, samples),
        b'I' | b'E' => glog_head(line),
        b'F' | b'W' => glog_head(line).or_else(|| fatal_python_head(line)),
        b'*' => signal_head(line),
        _ => None,
    }
}

/// `[2024-05-29 22:54:10,723 C 359273 359273] (raylet) placement_group_resource_manager.cc:29: Check failed: …`
fn text_head(line: &str, detail: &Detail) -> Option<Event> {
    let rest = line.strip_prefix('[')?;
    if rest.as_bytes().get(4) != Some(&b'-') {
        return None;
    }
    let (rest, local) = date_time(rest).ok()?;
    let rest = rest.strip_prefix(' ')?;
    let (level_tok, rest) = rest.split_once(' ')?;
    if level_tok.len() != 1 {
        return None;
    }
    let mut level = Level::parse(level_tok)?;
    let (pid, rest) = rest.split_once(' ')?;
    let (tid, rest) = rest.split_once(']')?;
    if !is_digits(pid) || !is_digits(tid) {
        return None;
    }
    let mut rest = rest.strip_prefix(' ').unwrap_or(rest);
    // An absl dump written again through the logger: its frame lines continue the banner's
    // record, and a banner of a request to stop is no error, whatever level Ray wrote it at.
    if let Some(msg) = abort::logged_by_signal_writer(rest) {
        if abort::absl_frame(msg) {
            return None;
        }
        if let Some((signal, _)) = abort::signal_banner(msg) {
            level = level.min(abort::signal_level(signal));
        }
    }
    let echo = echo_identity(level, pid, rest);
    let raw = RawTime::Naive(local);
    if !detail.full_at(Some(&raw), level) {
        let mut ev = Event::light(Some(raw), level);
        ev.echo_key = echo;
        return Some(ev);
    }

    let mut ev = Event::new(0, String::new());
    ev.raw_time = Some(raw);
    ev.level = level;
    ev.fields.push(("pid".into(), pid.into()));
    ev.fields.push(("tid".into(), tid.into()));
    if let Some((name, after)) = rest.strip_prefix('(').and_then(|r| r.split_once(") ")) {
        ev.component = name.into();
        rest = after;
    }
    // `file.cc:29: msg`; since Ray PR #55276 a failed check has two spaces after the colon.
    let (loc, after) = split_word(rest);
    let msg = match loc.strip_suffix(':').and_then(file_line) {
        Some((file, lineno)) => {
            ev.fields.push(("file".into(), file.into()));
            ev.fields.push(("lineno".into(), lineno.into()));
            after.trim_start_matches(' ')
        }
        None => rest,
    };
    context_fields(msg, &mut ev.fields);
    ev.message = msg.to_string();
    ev.echo_key = echo;
    Some(ev)
}

/// The identity an event of Ray's event files that repeats this record carries too
/// (`ray_event::echo_key`: the pid and the message's first line, after `file.cc:line:`), so
/// that the FATAL event of a failed check, or the GCS's event of a node it removed, is not a
/// second record of it (`load::mirror`). Only warnings and worse are repeated; 0 below.
fn echo_identity(level: Level, pid: &str, rest: &str) -> u64 {
    if level < Level::Warning {
        return 0;
    }
    let rest = match rest.strip_prefix('(').and_then(|r| r.split_once(") ")) {
        Some((_, after)) => after,
        None => rest,
    };
    let (loc, after) = split_word(rest);
    let msg = match loc.strip_suffix(':').and_then(file_line) {
        Some(_) => after,
        None => rest,
    };
    crate::parse::ray_event::echo_key(pid, msg)
}

/// `WithField` context is appended as ` key=value`. Only trailing `*_id=` pairs are taken:
/// they are unambiguous, and the message itself is left whole for the rules.
fn context_fields(msg: &str, fields: &mut Vec<(Text, Text)>) {
    let Some((_, last)) = rsplit_once_byte(msg, b' ') else {
        return;
    };
    if !last.contains("_id=") {
        return;
    }
    let start = fields.len();
    for token in msg.rsplit(' ') {
        match split_once_byte(token, b'=') {
            Some((key, value))
                if key.ends_with("_id")
                    && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') =>
            {
                fields.push((key.into(), value.into()));
            }
            _ => break,
        }
    }
    if let Some(added) = fields.get_mut(start..) {
        added.reverse();
    }
}

/// `{"asctime":"…","levelname":"I","message":"…","component":"raylet","filename":"x.cc","lineno":12,…}`
fn json_head(line: &str, samples: &mut Vec<Micros>) -> Option<Event> {
    let mut ev = json_record(line, samples)?;
    if let Some(idx) = ev.fields.iter().position(|(k, _)| k == "component") {
        ev.component = ev.fields.remove(idx).1;
    }
    Some(ev)
}

/// glog / absl header in stderr: `F0411 07:43:44.182159  123 file.cc:12] Check failed: …`.
fn glog_head(line: &str) -> Option<Event> {
    let (rest, (letter, month, day, micros_of_day)) = klog_header(line).ok()?;
    let rest = rest.trim_start_matches(' ');
    let (tid, rest) = rest.split_once(' ')?;
    let (loc, msg) = rest
        .split_once("] ")
        .or_else(|| rest.strip_suffix(']').map(|l| (l, "")))?;
    let (file, lineno) = file_line(loc)?;
    let mut ev = Event::new(0, msg);
    ev.raw_time = Some(RawTime::NoYear {
        month,
        day,
        micros_of_day,
    });
    ev.level = Level::parse(letter.encode_utf8(&mut [0; 4])).unwrap_or_default();
    ev.fields.push(("tid".into(), tid.into()));
    ev.fields.push(("file".into(), file.into()));
    ev.fields.push(("lineno".into(), lineno.into()));
    Some(ev)
}

/// absl's failure signal handler: `*** SIGSEGV received at time=1712345678 on cpu 3 ***`.
/// The epoch seconds make it the one crash line with an exact time. A crash is critical; a
/// request to stop (`SIGTERM`, what `ray stop` sends) a warning.
pub fn signal_head(line: &str) -> Option<Event> {
    if !line.starts_with("*** SIG") {
        return None;
    }
    let (signal, secs) = abort::signal_banner(line)?;
    let mut ev = Event::new(0, line);
    ev.raw_time = Some(RawTime::Utc(secs.saturating_mul(MICROS_PER_SEC)));
    ev.level = abort::signal_level(signal);
    Some(ev)
}

/// CPython's faulthandler: `Fatal Python error: Segmentation fault` (`Windows fatal exception:
/// access violation` on Windows), without a time.
pub fn fatal_python_head(line: &str) -> Option<Event> {
    abort::fatal_python_error(line)?;
    let mut ev = Event::new(0, line);
    ev.level = Level::Critical;
    Some(ev)
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, expect: &str) {
        crate::parse::testing::check_parse(parse, input, expect);
    }

    #[test]
    fn plain_lines_from_ray_1x() {
        check(
            "[2022-01-17 03:12:42,168 I 449 449] io_service_pool.cc:35: IOServicePool is running with 1 io_service.\n\
             [2022-01-17 03:12:42,170 I 449 449] gcs_init_data.cc:42: Loading job table data.",
            "1+1 N2022-01-17T03:12:42.168Z info - {pid=449 tid=449 file=io_service_pool.cc lineno=35} | IOServicePool is running with 1 io_service.\n\
             2+1 N2022-01-17T03:12:42.170Z info - {pid=449 tid=449 file=gcs_init_data.cc lineno=42} | Loading job table data.\n",
        );
    }

    #[test]
    fn warning_from_driver() {
        check(
            "[2023-10-24 03:59:58,924 W 8 8] global_state_accessor.cc:401: Some processes that the driver needs to connect to have not registered with GCS, so retrying. Have you run 'ray start' on this node?",
            "1+1 N2023-10-24T03:59:58.924Z warning - {pid=8 tid=8 file=global_state_accessor.cc lineno=401} | Some processes that the driver needs to connect to have not registered with GCS, so retrying. Have you run 'ray start' on this node?\n",
        );
    }

    #[test]
    fn component_and_oom_detail_continuation() {
        check(
            "[2023-05-27 13:36:07,742 W 114781 114781] (gcs_server) gcs_worker_manager.cc:55: Reporting worker exit, worker id = 1c42, node id = ffff, address = , exit_type = NODE_OUT_OF_MEMORY, exit_detail = Task was killed due to the node running low on memory.\n\
             Memory on the node (IP: 10.97.37.135, ID: 50ee) where the task was running was 14.67GB / 15.44GB (0.95015), which exceeds the memory usage threshold of 0.95. Ray killed this worker",
            "1+2 N2023-05-27T13:36:07.742Z warning gcs_server {pid=114781 tid=114781 file=gcs_worker_manager.cc lineno=55} | Reporting worker exit, worker id = 1c42, node id = ffff, address = , exit_type = NODE_OUT_OF_MEMORY, exit_detail = Task was killed due to the node running low on memory.⏎Memory on the node (IP: 10.97.37.135, ID: 50ee) where the task was running was 14.67GB / 15.44GB (0.95015), which exceeds the memory usage threshold of 0.95. Ray killed this worker\n",
        );
    }

    #[test]
    fn gcs_connect_failure() {
        check(
            "[2025-12-19 15:55:39,521 E 3044 30260] rpc_client.h:203: Failed to connect to GCS within 60 seconds. GCS may have been killed. The program will terminate.",
            "1+1 N2025-12-19T15:55:39.521Z error - {pid=3044 tid=30260 file=rpc_client.h lineno=203} | Failed to connect to GCS within 60 seconds. GCS may have been killed. The program will terminate.\n",
        );
        check(
            "[2026-03-01 22:48:01,851 W 6578 6578] rpc_client.h:153: Failed to connect to GCS at address 10.0.0.1:6379 within 5 seconds.",
            "1+1 N2026-03-01T22:48:01.851Z warning - {pid=6578 tid=6578 file=rpc_client.h lineno=153} | Failed to connect to GCS at address 10.0.0.1:6379 within 5 seconds.\n",
        );
    }

    #[test]
    fn check_failed_with_stack_trace() {
        check(
            "[2024-05-29 22:54:10,723 C 359273 359273] (raylet) placement_group_resource_manager.cc:29:  Check failed: x == y\n\
             *** StackTrace Information ***\n\
             /usr/lib/raylet(+0xb3e0fa) [0x55d5]\n\
             \n\
             [2024-05-29 22:54:11,000 I 1 1] (raylet) main.cc:1: next",
            "1+4 N2024-05-29T22:54:10.723Z critical raylet {pid=359273 tid=359273 file=placement_group_resource_manager.cc lineno=29} | Check failed: x == y⏎*** StackTrace Information ***⏎/usr/lib/raylet(+0xb3e0fa) [0x55d5]⏎\n\
             5+1 N2024-05-29T22:54:11.000Z info raylet {pid=1 tid=1 file=main.cc lineno=1} | next\n",
        );
    }

    #[test]
    fn state_dump_folds() {
        check(
            "[2024-06-07 18:16:56,543 I 39 39] (gcs_server) gcs_server.cc:165: Gcs Debug state:\n\
             \n\
             GcsNodeManager: \n\
             - RegisterNode request count: 0\n\
             [state-dump] NodeManager:",
            "1+5 N2024-06-07T18:16:56.543Z info gcs_server {pid=39 tid=39 file=gcs_server.cc lineno=165} | Gcs Debug state:⏎⏎GcsNodeManager: ⏎- RegisterNode request count: 0⏎[state-dump] NodeManager:\n",
        );
    }

    #[test]
    fn trailing_context_ids() {
        check(
            "[2025-01-01 00:00:00,000 I 1 2] (raylet) worker_pool.cc:10: Started worker process with pid 1234 worker_id=abcd job_id=01000000",
            "1+1 N2025-01-01T00:00:00.000Z info raylet {pid=1 tid=2 file=worker_pool.cc lineno=10 worker_id=abcd job_id=01000000} | Started worker process with pid 1234 worker_id=abcd job_id=01000000\n",
        );
    }

    #[test]
    fn json_mode() {
        check(
            r#"{"asctime":"2024-01-02 03:04:05,123","levelname":"I","message":"Started","component":"raylet","filename":"node_manager.cc","lineno":12,"node_id":"ab"}"#,
            "1+1 N2024-01-02T03:04:05.123Z info raylet {file=node_manager.cc lineno=12 node_id=ab} | Started\n",
        );
    }

    #[test]
    fn glog_and_absl_crash_output_in_err() {
        check(
            "F0411 07:43:44.182159  123 raylet_client.cc:12] Check failed: ok\n\
             *** Check failure stack trace: ***\n\
             \x20   @     0x7f0 google::LogMessage::Fail()\n\
             *** SIGABRT received at time=1712821424 on cpu 3 ***\n\
             PC: @     0x7f1 (unknown)  raise",
            "1+3 Y04-11+27824182159 critical - {tid=123 file=raylet_client.cc lineno=12} | Check failed: ok⏎*** Check failure stack trace: ***⏎    @     0x7f0 google::LogMessage::Fail()\n\
             4+2 U2024-04-11T07:43:44.000Z critical - | *** SIGABRT received at time=1712821424 on cpu 3 ***⏎PC: @     0x7f1 (unknown)  raise\n",
        );
    }

    /// Ray 2.9.3's `dashboard.err` after `ray stop`: absl's dump of the SIGTERM, then the
    /// same through Ray's logger, each frame a stamped line, with the raylet's message
    /// streamed in between. Each copy is one record, at warning: a request to stop.
    #[test]
    fn a_sigterm_dump_and_its_copy_through_the_logger_are_one_record_each() {
        check(
            "*** SIGTERM received at time=1796545250 on cpu 0 ***\n\
             PC: @     0x7f19f6d26f36  (unknown)  epoll_wait\n\
             \x20   @     0x7f19f6c5a050  103206744  (unknown)\n\
             \x20   @     0x7f19f5d14e80  (unknown)  (unknown)\n\
             \x20   @     0x7f19f7256240  (unknown)  (unknown)\n\
             [2026-12-06 08:20:50,628 E 27411 27411] logging.cc:361: *** SIGTERM received at time=1796545250 on cpu 0 ***\n\
             [2026-12-06 08:20:50,628 E 27411 27411] logging.cc:361: PC: @     0x7f19f6d26f36  (unknown)  epoll_wait\n\
             [2026-12-06 08:20:50,628 E 27411 27411] logging.cc:361:     @     0x7f19f6c5a050  103206744  (unknown)\n\
             \x1b[33m(raylet)\x1b[0m The autoscaler failed with the following error:\n\
             Terminated with signal 15\n\
             [2026-12-06 08:20:50,630 E 27411 27411] logging.cc:361:     @     0x7f19f5d14e80  (unknown)  (unknown)\n\
             [2026-12-06 08:20:50,631 E 27411 27411] logging.cc:361:     @ ... and at least 8 more frames\n\
             [2026-12-06 08:20:51,000 I 27411 27411] core_worker.cc:1: next",
            "1+5 U2026-12-06T08:20:50.000Z warning - | *** SIGTERM received at time=1796545250 on cpu 0 ***⏎PC: @     0x7f19f6d26f36  (unknown)  epoll_wait⏎    @     0x7f19f6c5a050  103206744  (unknown)⏎    @     0x7f19f5d14e80  (unknown)  (unknown)⏎    @     0x7f19f7256240  (unknown)  (unknown)\n\
             6+7 N2026-12-06T08:20:50.628Z warning - {pid=27411 tid=27411 file=logging.cc lineno=361} | *** SIGTERM received at time=1796545250 on cpu 0 ***⏎[2026-12-06 08:20:50,628 E 27411 27411] logging.cc:361: PC: @     0x7f19f6d26f36  (unknown)  epoll_wait⏎[2026-12-06 08:20:50,628 E 27411 27411] logging.cc:361:     @     0x7f19f6c5a050  103206744  (unknown)⏎(raylet) The autoscaler failed with the following error:⏎Terminated with signal 15⏎[2026-12-06 08:20:50,630 E 27411 27411] logging.cc:361:     @     0x7f19f5d14e80  (unknown)  (unknown)⏎[2026-12-06 08:20:50,631 E 27411 27411] logging.cc:361:     @ ... and at least 8 more frames\n\
             13+1 N2026-12-06T08:20:51.000Z info - {pid=27411 tid=27411 file=core_worker.cc lineno=1} | next\n",
        );
    }

    /// A crash's dump keeps its level, through the logger (`E`) or raw (critical); a
    /// faulthandler dump in a `.err` read as C++ is a record of its own (Ray 2.9.3, a task
    /// that dereferenced a null pointer).
    #[test]
    fn a_segfault_dump_and_faulthandlers_are_records_of_their_own() {
        check(
            "[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: *** SIGSEGV received at time=1796545631 on cpu 0 ***\n\
             [2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)\n\
             [2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)\n\
             Fatal Python error: Segmentation fault\n\
             \n\
             Stack (most recent call first):\n\
             \x20 File \"/home/ray/anaconda3/lib/python3.11/ctypes/__init__.py\", line 519 in string_at\n\
             \x20 File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 53 in decode_frame\n\
             \n\
             Extension modules: msgpack._cmsgpack, google._upb._message (total: 2)",
            "1+3 N2026-12-06T08:27:11.608Z error - {pid=3015 tid=3015 file=logging.cc lineno=361} | *** SIGSEGV received at time=1796545631 on cpu 0 ***⏎[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)⏎[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)\n\
             4+7 - critical - | Fatal Python error: Segmentation fault⏎⏎Stack (most recent call first):⏎  File \"/home/ray/anaconda3/lib/python3.11/ctypes/__init__.py\", line 519 in string_at⏎  File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 53 in decode_frame⏎⏎Extension modules: msgpack._cmsgpack, google._upb._message (total: 2)\n",
        );
    }

    #[test]
    fn stderr_without_heads_is_one_raw_record() {
        check(
            "Traceback (most recent call last):\n  File \"x\"\nE: not a glog line",
            "1+3 - info - | Traceback (most recent call last):⏎  File \"x\"⏎E: not a glog line\nunparsed=1\n",
        );
    }

    #[test]
    fn near_misses_are_not_heads() {
        // Two-letter level, missing tid, bad date, and a truncated line.
        check(
            "[2024-01-01 00:00:00,000 IN 1 1] a.cc:1: x",
            "1+1 - info - | [2024-01-01 00:00:00,000 IN 1 1] a.cc:1: x\nunparsed=1\n",
        );
        check(
            "[2024-01-01 00:00:00,000 I 1] a.cc:1: x",
            "1+1 - info - | [2024-01-01 00:00:00,000 I 1] a.cc:1: x\nunparsed=1\n",
        );
        check(
            "[2024-13-01 00:00:00,000 I 1 1] a.cc:1: x",
            "1+1 - info - | [2024-13-01 00:00:00,000 I 1 1] a.cc:1: x\nunparsed=1\n",
        );
        check(
            "[2024-01-01 00:00:00,0",
            "1+1 - info - | [2024-01-01 00:00:00,0\nunparsed=1\n",
        );
    }

    #[test]
    fn head_without_location_keeps_rest() {
        check(
            "[2024-01-01 00:00:00,000 E 1 1] something odd",
            "1+1 N2024-01-01T00:00:00.000Z error - {pid=1 tid=1} | something odd\n",
        );
    }

    #[test]
    fn every_line_lands_in_one_event() {
        crate::parse::testing::assert_covers_lines(parse);
    }

    #[test]
    fn nasty_inputs() {
        check("", "");
        check("\r\n", "1+1 - info - | \nunparsed=1\n");
        let mut out = ParseOutput::default();
        parse(
            b"[2024-01-01 00:00:00,000 I 1 1] a.cc:1: \xff\xfe\n\x00\x01",
            &mut out,
        );
        assert_eq!(out.events.len(), 1);
        assert_eq!(out.events[0].n_lines, 2);
    }
}
