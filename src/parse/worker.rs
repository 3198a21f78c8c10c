//! Raw process output: `worker-*.out|.err`, `job-driver-*.log`, the head / worker
//! container's stdout (`ray start` output), the `wait-gcs-ready` init container and RayJob
//! submitter output.
//!
//! Content is whatever the process printed. A line that parses as a Ray Python, Serve or
//! C++ head (the sibling parsers' heads), or that carries a date-time near its start, is a
//! timed record. Ray's marker lines (`:actor_name:…`) are records of their own, and the
//! actor name is copied onto every later record so that a Serve replica's stderr can be
//! attributed. Driver streaming prefixes (`(ServeReplica:app:Dep pid=4347, ip=…) `) and the
//! dedup suffix (`[repeated 99x across cluster]`) become fields. Obvious continuations
//! (indented lines, traceback framing, the final exception line, blank lines inside a
//! traceback) fold into the previous record; every other line is its own record. An abort
//! dump (`parse::abort`: CPython's faulthandler, absl's signal handler, a failed check's stack
//! trace) is one record: its head, and the lines of its shape after it.
//!
//! It must not guess times for lines that carry none, and must not fold ordinary output
//! into the record above it.

use std::borrow::Cow;

use crate::event::{Event, Level, Micros, RawTime, Text};
use crate::parse::lines::MAX_RECORD_LINES;
use crate::parse::lines::{
    cap_message, decode, split_lines, strip_colour, strip_envelope, MAX_MESSAGE_BYTES,
};
use crate::parse::{abort, generic, ray_cpp, ray_python, serve, ParseOutput};

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    let mut reader = Reader::default();
    let mut current: Option<Event> = None;
    for (no, raw) in split_lines(input) {
        let decoded = decode(raw);
        let (env, enveloped) = strip_envelope(&decoded);
        let content = strip_colour(&enveloped);
        let can_fold = current
            .as_ref()
            .is_some_and(|ev| ev.n_lines < MAX_RECORD_LINES);
        let (mut ev, unparsed) = match reader.classify(&content, can_fold, &mut out.zone_samples) {
            Line::Fold => {
                if let Some(ev) = current.as_mut() {
                    if ev.message.len() < MAX_MESSAGE_BYTES {
                        ev.push_continuation(&content);
                        cap_message(&mut ev.message);
                    } else {
                        ev.n_lines += 1;
                    }
                }
                continue;
            }
            Line::Record { ev, unparsed } => (ev, unparsed),
        };
        ev.line = no;
        ev.n_lines = 1;
        match (ev.raw_time, env.utc) {
            (None, Some(utc)) => ev.raw_time = Some(RawTime::Utc(utc)),
            (Some(RawTime::Naive(local)), Some(utc)) => out.zone_samples.push(local - utc),
            (None, None) if unparsed => out.unparsed_lines += 1,
            _ => {}
        }
        if let Some(actor) = &reader.actor_name {
            ev.fields.push(("actor_name".into(), actor.as_str().into()));
        }
        if let Some(actor) = reader.pending_actor.take() {
            reader.actor_name = Some(actor);
        }
        cap_message(&mut ev.message);
        if let Some(done) = current.replace(ev) {
            out.events.push(done);
        }
    }
    if let Some(done) = current {
        out.events.push(done);
    }
}

/// What one line is to the record stream.
enum Line {
    /// The start of a record; `unparsed` when no grammar recognised it.
    Record { ev: Event, unparsed: bool },
    /// A continuation of the previous record.
    Fold,
}

/// Where we are inside a Python traceback or an abort dump.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Traceback {
    #[default]
    Outside,
    /// After `Traceback (most recent call last):`, among the frames.
    Frames,
    /// After the exception line: blank lines and chaining text still belong to it.
    AfterException,
    /// After `Fatal Python error: …`: faulthandler's blocks of frames, blank lines between.
    Faulthandler,
    /// After absl's `*** SIGSEGV received at time=… ***`: `PC: @ …` and `@ …` frames.
    Signal,
    /// After a `Check failed: …` record: its stack trace.
    Check,
}

#[derive(Default)]
struct Reader {
    /// The latest `:actor_name:` marker's value.
    actor_name: Option<String>,
    /// A marker just read; it applies from the next record on.
    pending_actor: Option<String>,
    traceback: Traceback,
}

impl Reader {
    fn classify(&mut self, line: &str, can_fold: bool, samples: &mut Vec<Micros>) -> Line {
        if can_fold {
            if let Some(next) = self.continuation(line) {
                self.traceback = next;
                return Line::Fold;
            }
        }
        let content = stream_prefix(line).map_or(line, |(_, rest)| rest);
        self.traceback = if line.starts_with("Traceback (most recent call last)") {
            Traceback::Frames
        } else if abort::fatal_python_error(content).is_some() {
            Traceback::Faulthandler
        } else if abort::signal_banner(content).is_some() {
            Traceback::Signal
        } else if content.contains("Check failed") {
            Traceback::Check
        } else {
            Traceback::Outside
        };
        let (line, repeated) = strip_repeated(line);
        let (ev, unparsed) = match stream_prefix(&line) {
            Some((prefix, rest)) => {
                let (mut ev, _) = self.record(rest, samples);
                ev.fields.splice(0..0, prefix.into_fields());
                (ev, false)
            }
            None => self.record(&line, samples),
        };
        let mut ev = ev;
        if let Some(n) = repeated {
            ev.fields.push(("repeated".into(), n.into()));
        }
        Line::Record { ev, unparsed }
    }

    /// The next traceback state when `line` continues the previous record, else `None`.
    fn continuation(&self, line: &str) -> Option<Traceback> {
        let content = stream_prefix(line).map_or(line, |(_, rest)| rest);
        let first = content.as_bytes().first().copied();
        let indented = matches!(first, Some(b' ' | b'\t'));
        let chained = content.starts_with("During handling of the above exception")
            || content.starts_with("The above exception was the direct cause");
        // An absl frame Ray's logger wrote again as a record continues the logged banner.
        if abort::logged_absl_frame(content) {
            return Some(self.traceback);
        }
        match self.traceback {
            // faulthandler's trailer is the last line it writes.
            Traceback::Faulthandler if content.starts_with("Extension modules: ") => {
                Some(Traceback::Outside)
            }
            Traceback::Faulthandler if abort::continues_faulthandler(content) => {
                Some(Traceback::Faulthandler)
            }
            Traceback::Signal if abort::absl_frame(content) => Some(Traceback::Signal),
            Traceback::Check if abort::continues_check(content) => Some(Traceback::Check),
            Traceback::Frames if first.is_none() || indented => Some(Traceback::Frames),
            Traceback::Frames if is_head(content) => None,
            // The first unindented line after the frames is the exception line.
            Traceback::Frames => Some(Traceback::AfterException),
            Traceback::AfterException if first.is_none() || indented || chained => {
                Some(Traceback::AfterException)
            }
            _ if content.starts_with("Traceback (most recent call last)") => {
                Some(Traceback::Frames)
            }
            _ if indented || chained || is_exception_line(content) => {
                Some(Traceback::AfterException)
            }
            _ if content == "Remaining processes will be killed." => Some(Traceback::Outside),
            _ => None,
        }
    }

    /// A line that starts a record: a known head, a marker, or raw output.
    fn record(&mut self, line: &str, samples: &mut Vec<Micros>) -> (Event, bool) {
        if let Some(ev) = head(line, samples) {
            return (ev, false);
        }
        if let Some(ev) = self.marker(line) {
            return (ev, false);
        }
        if let Some(ev) = known_line(line) {
            return (ev, false);
        }
        if let Some(ev) = generic::head(line) {
            return (ev, false);
        }
        let mut ev = Event::new(0, line);
        ev.level = generic::guess_level(line);
        (ev, true)
    }

    /// `:job_id:01000000`, `:actor_name:ServeReplica:app:Dep`, `:task_name:f`,
    /// `:task_attempt_start:`, `:task_attempt_end:`.
    fn marker(&mut self, line: &str) -> Option<Event> {
        let (name, value) = line.strip_prefix(':')?.split_once(':')?;
        if !matches!(
            name,
            "job_id" | "actor_name" | "task_name" | "task_attempt_start" | "task_attempt_end"
        ) {
            return None;
        }
        if name == "actor_name" {
            self.pending_actor = Some(value.to_string());
        }
        let mut ev = Event::new(0, line);
        ev.fields.push(("marker".into(), name.into()));
        ev.fields.push(("value".into(), value.into()));
        Some(ev)
    }
}

/// The sibling parsers' heads, chosen by the first byte so that a plain line costs little.
fn head(line: &str, samples: &mut Vec<Micros>) -> Option<Event> {
    match line.as_bytes().first()? {
        b'[' => ray_cpp::head(line, samples),
        b'{' | b'0'..=b'9' => ray_python::head(line, samples),
        b'A'..=b'Z' => serve::head(line, samples).or_else(|| ray_cpp::head(line, samples)),
        b'*' => ray_cpp::head(line, samples),
        _ => None,
    }
}

fn is_head(line: &str) -> bool {
    match line.as_bytes().first() {
        Some(b'[' | b'{' | b'0'..=b'9' | b'A'..=b'Z' | b'*' | b':') => {
            head(line, &mut Vec::new()).is_some() || line.starts_with(':')
        }
        _ => false,
    }
}

/// Lines whose meaning is known though they carry no time: `ray start`'s subprocess-death
/// banner and the `wait-gcs-ready` init container's progress.
fn known_line(line: &str) -> Option<Event> {
    if line.starts_with("Some Ray subprocesses exited unexpectedly") {
        let mut ev = Event::new(0, line);
        ev.level = Level::Error;
        return Some(ev);
    }
    // `10 seconds elapsed: Waiting for GCS to be ready.`
    if let Some((secs, rest)) = line.split_once(" seconds elapsed: ") {
        if !secs.is_empty() && secs.bytes().all(|b| b.is_ascii_digit()) {
            let mut ev = Event::new(0, line);
            if rest.starts_with("Still waiting") {
                ev.level = Level::Warning;
            }
            ev.fields.push(("elapsed_s".into(), secs.into()));
            return Some(ev);
        }
    }
    if line.starts_with("GCS is ready.") {
        return Some(Event::new(0, line));
    }
    None
}

/// `ValueError: bad`, `ray.exceptions.RayTaskError(ValueError): ray::f() …`,
/// `KeyboardInterrupt`, `FutureWarning: …` ([`super::python_exception`]).
fn is_exception_line(line: &str) -> bool {
    super::python_exception::raised(line).is_some()
}

/// Ray's log dedup: `… [repeated 99x across cluster]` (the first time followed by a hint in
/// parentheses, which is kept).
fn strip_repeated(line: &str) -> (Cow<'_, str>, Option<&str>) {
    let Some(start) = line.find(" [repeated ") else {
        return (Cow::Borrowed(line), None);
    };
    let Some(after) = line.get(start + 11..) else {
        return (Cow::Borrowed(line), None);
    };
    let Some((count, tail)) = after.split_once("x across cluster]") else {
        return (Cow::Borrowed(line), None);
    };
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return (Cow::Borrowed(line), None);
    }
    let head = line.get(..start).unwrap_or_default();
    (Cow::Owned(format!("{head}{tail}")), Some(count))
}

/// Who a streamed line came from.
struct Prefix<'a> {
    actor: Option<&'a str>,
    pid: Option<&'a str>,
    ip: Option<&'a str>,
}

impl Prefix<'_> {
    fn into_fields(self) -> Vec<(Text, Text)> {
        [("actor", self.actor), ("pid", self.pid), ("ip", self.ip)]
            .into_iter()
            .filter_map(|(key, value)| Some((Text::from(key), Text::from(value?))))
            .collect()
    }
}

/// What follows a driver's streaming prefix (`(pid=raylet) `, `(raylet, ip=…) `,
/// `(MyActor pid=1) `) on a line that has one: the line as the Ray process wrote it.
pub fn streamed_rest(line: &str) -> Option<&str> {
    stream_prefix(line).map(|(_, rest)| rest)
}

/// The driver's streaming prefix: `(ServeReplica:default:Hello pid=4347, ip=10.0.0.1) `,
/// `(pid=runtime_env, ip=…) `, `(raylet) `, `(raylet, ip=…) `. Without a pid the name must
/// be a Ray process, so that ordinary output in parentheses is not taken for one.
fn stream_prefix(line: &str) -> Option<(Prefix<'_>, &str)> {
    let body = line.strip_prefix('(')?;
    let (inner, rest) = body.split_once(") ")?;
    if inner.len() > 200 {
        return None;
    }
    let mut parts = inner.split(", ");
    let first = parts.next()?;
    let (actor, pid) = match first.strip_prefix("pid=") {
        Some(pid) => (None, Some(pid)),
        None => match first.split_once(" pid=") {
            Some((actor, pid)) => (Some(actor), Some(pid)),
            None => (Some(first), None),
        },
    };
    let mut ip = None;
    for part in parts {
        ip = Some(part.strip_prefix("ip=")?);
    }
    let ray_process = actor.is_some_and(|a| RAY_PROCESSES.iter().any(|p| a.starts_with(p)));
    if pid.is_none() && !ray_process {
        return None;
    }
    Some((Prefix { actor, pid, ip }, rest))
}

const RAY_PROCESSES: [&str; 7] = [
    "raylet",
    "gcs_server",
    "autoscaler",
    "monitor",
    "dashboard",
    "runtime_env",
    "log_monitor",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, expect: &str) {
        crate::parse::testing::check_parse(parse, input, expect);
    }

    #[test]
    fn markers_attribute_later_records() {
        check(
            ":job_id:01000000\n:actor_name:ServeReplica:default:Hello\nloading model weights...\nINFO 2024-12-30 23:47:44,173 default_Hello 5w6y35rx -- hi",
            "1+1 - info - {marker=job_id value=01000000} | :job_id:01000000\n\
             2+1 - info - {marker=actor_name value=ServeReplica:default:Hello} | :actor_name:ServeReplica:default:Hello\n\
             3+1 - info - {actor_name=ServeReplica:default:Hello} | loading model weights...\n\
             4+1 N2024-12-30T23:47:44.173Z info default_Hello {component_id=5w6y35rx actor_name=ServeReplica:default:Hello} | hi\n\
             unparsed=1\n",
        );
        check(
            ":task_name:f\n:task_attempt_start:\n:task_attempt_end:",
            "1+1 - info - {marker=task_name value=f} | :task_name:f\n\
             2+1 - info - {marker=task_attempt_start value=} | :task_attempt_start:\n\
             3+1 - info - {marker=task_attempt_end value=} | :task_attempt_end:\n",
        );
    }

    #[test]
    fn traceback_folds_into_the_print_above() {
        check(
            "starting\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    f()\nValueError: bad\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 3\nray.exceptions.RayTaskError(ValueError): ray::f() (pid=1, ip=10.0.0.1)\nnext print",
            "1+11 - info - | starting⏎Traceback (most recent call last):⏎  File \"a.py\", line 1, in <module>⏎    f()⏎ValueError: bad⏎⏎During handling of the above exception, another exception occurred:⏎⏎Traceback (most recent call last):⏎  File \"a.py\", line 3⏎ray.exceptions.RayTaskError(ValueError): ray::f() (pid=1, ip=10.0.0.1)\n\
             12+1 - info - | next print\n\
             unparsed=2\n",
        );
    }

    #[test]
    fn traceback_at_start_of_file_is_its_own_record() {
        check(
            "Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 'x'\n",
            "1+3 - info - | Traceback (most recent call last):⏎  File \"a.py\"⏎KeyError: 'x'\nunparsed=1\n",
        );
    }

    #[test]
    fn head_ends_traceback() {
        check(
            "ERROR 2024-01-01 00:00:00,000 default_A 1 -- boom\nTraceback (most recent call last):\n  File \"a.py\"\nINFO 2024-01-01 00:00:01,000 default_A 1 -- ok",
            "1+3 N2024-01-01T00:00:00.000Z error default_A {component_id=1} | boom⏎Traceback (most recent call last):⏎  File \"a.py\"\n\
             4+1 N2024-01-01T00:00:01.000Z info default_A {component_id=1} | ok\n",
        );
    }

    #[test]
    fn blank_lines_outside_tracebacks_stand_alone() {
        check(
            "a\n\nb",
            "1+1 - info - | a\n2+1 - info - | \n3+1 - info - | b\nunparsed=3\n",
        );
    }

    #[test]
    fn driver_streaming_prefixes() {
        check(
            "(ServeReplica:default:HelloWorld pid=4347) INFO 2024-12-30 23:47:44,173 default_HelloWorld 5w6y35rx -- GET / 200 8.5ms",
            "1+1 N2024-12-30T23:47:44.173Z info default_HelloWorld {actor=ServeReplica:default:HelloWorld pid=4347 component_id=5w6y35rx http_method=GET http_path=/ http_status=200 latency_ms=8.5} | GET / 200 8.5ms\n",
        );
        check(
            "(pid=runtime_env, ip=192.168.1.100) 2023-08-14 16:31:37,265\tINFO runtime_env_agent.py:338 -- Creating runtime env: x",
            "1+1 N2023-08-14T16:31:37.265Z info runtime_env_agent.py {pid=runtime_env ip=192.168.1.100 file=runtime_env_agent.py lineno=338} | Creating runtime env: x\n",
        );
        check(
            "(raylet) [2021-11-17 10:43:46,668 E 99870 16327337] agent_manager.cc:190: Failed to create runtime env: x",
            "1+1 N2021-11-17T10:43:46.668Z error - {actor=raylet pid=99870 tid=16327337 file=agent_manager.cc lineno=190} | Failed to create runtime env: x\n",
        );
        check(
            "(MyActor pid=12, ip=10.0.0.2) hello\n(MyActor pid=12, ip=10.0.0.2)   indented",
            "1+2 - info - {actor=MyActor pid=12 ip=10.0.0.2} | hello⏎(MyActor pid=12, ip=10.0.0.2)   indented\n",
        );
        // Ordinary output in parentheses is not a prefix.
        check(
            "(base) ray@head:~$ ls",
            "1+1 - info - | (base) ray@head:~$ ls\nunparsed=1\n",
        );
    }

    #[test]
    fn dedup_suffix() {
        check(
            "(Worker pid=9) oom warning [repeated 99x across cluster] (Ray deduplicates logs by default.)",
            "1+1 - warning - {actor=Worker pid=9 repeated=99} | oom warning (Ray deduplicates logs by default.)\n",
        );
        check(
            "x [repeated many across cluster]",
            "1+1 - info - | x [repeated many across cluster]\nunparsed=1\n",
        );
    }

    #[test]
    fn ray_start_output() {
        check(
            "2022-03-16 11:28:26,348 SUCC scripts.py:640 -- --------------------\nLocal node IP: 10.244.0.7\nSome Ray subprocesses exited unexpectedly:\n  raylet [exit code=1]\nRemaining processes will be killed.",
            "1+1 N2022-03-16T11:28:26.348Z info scripts.py {file=scripts.py lineno=640} | --------------------\n\
             2+1 - info - | Local node IP: 10.244.0.7\n\
             3+3 - error - | Some Ray subprocesses exited unexpectedly:⏎  raylet [exit code=1]⏎Remaining processes will be killed.\n\
             unparsed=1\n",
        );
    }

    #[test]
    fn wait_gcs_ready() {
        check(
            "10 seconds elapsed: Waiting for GCS to be ready.\n125 seconds elapsed: Still waiting for GCS to be ready. For troubleshooting, refer to the FAQ.\nGCS is ready.",
            "1+1 - info - {elapsed_s=10} | 10 seconds elapsed: Waiting for GCS to be ready.\n\
             2+1 - warning - {elapsed_s=125} | 125 seconds elapsed: Still waiting for GCS to be ready. For troubleshooting, refer to the FAQ.\n\
             3+1 - info - | GCS is ready.\n",
        );
    }

    #[test]
    fn generic_dates_and_kubelet_prefix() {
        check(
            "Job submitted at 2024-01-01 10:00:00 ok",
            "1+1 N2024-01-01T10:00:00.000Z info - | Job submitted at 2024-01-01 10:00:00 ok\n",
        );
        check(
            "2026-03-04T07:42:11.446555630Z plain print\n2026-03-04T07:42:12.000000000Z   indented",
            "1+2 U2026-03-04T07:42:11.446555Z info - | plain print⏎  indented\n",
        );
    }

    #[test]
    fn cpp_and_json_heads_in_worker_err() {
        check(
            "[2024-01-01 00:00:00,000 E 5 6] core_worker.cc:1: Unhandled error\n{\"asctime\": \"2024-01-01 00:00:01,000\", \"levelname\": \"INFO\", \"message\": \"m\", \"filename\": \"t.py\", \"lineno\": 2}",
            "1+1 N2024-01-01T00:00:00.000Z error - {pid=5 tid=6 file=core_worker.cc lineno=1} | Unhandled error\n\
             2+1 N2024-01-01T00:00:01.000Z info t.py {file=t.py lineno=2} | m\n",
        );
    }

    /// Ray 2.9.3, a task that dereferenced a null pointer: its `worker-*.err` holds absl's
    /// dump of the SIGSEGV, the same through Ray's logger, then CPython's faulthandler dump.
    /// Each is one record.
    #[test]
    fn a_segfaulted_workers_dumps_are_one_record_each() {
        check(
            ":job_id:02000000\n\
             :task_name:decode_frame\n\
             *** SIGSEGV received at time=1796545631 on cpu 0 ***\n\
             PC: @     0x7f4179985ad8  (unknown)  (unknown)\n\
             \x20   @     0x7f417985a050  (unknown)  (unknown)\n\
             [2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: *** SIGSEGV received at time=1796545631 on cpu 0 ***\n\
             [2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)\n\
             [2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)\n\
             Fatal Python error: Segmentation fault\n\
             \n\
             Stack (most recent call first):\n\
             \x20 File \"/home/ray/anaconda3/lib/python3.11/ctypes/__init__.py\", line 519 in string_at\n\
             \x20 File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 53 in decode_frame\n\
             \x20 File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/worker.py\", line 847 in main_loop\n\
             \x20 File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/workers/default_worker.py\", line 282 in <module>\n\
             \n\
             Extension modules: msgpack._cmsgpack, google._upb._message, psutil._psutil_linux, psutil._psutil_posix, setproctitle, yaml._yaml (total: 6)\n\
             \n\
             after",
            "1+1 - info - {marker=job_id value=02000000} | :job_id:02000000\n\
             2+1 - info - {marker=task_name value=decode_frame} | :task_name:decode_frame\n\
             3+3 U2026-12-06T08:27:11.000Z critical - | *** SIGSEGV received at time=1796545631 on cpu 0 ***⏎PC: @     0x7f4179985ad8  (unknown)  (unknown)⏎    @     0x7f417985a050  (unknown)  (unknown)\n\
             6+3 N2026-12-06T08:27:11.608Z error - {pid=3015 tid=3015 file=logging.cc lineno=361} | *** SIGSEGV received at time=1796545631 on cpu 0 ***⏎[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)⏎[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)\n\
             9+9 - critical - | Fatal Python error: Segmentation fault⏎⏎Stack (most recent call first):⏎  File \"/home/ray/anaconda3/lib/python3.11/ctypes/__init__.py\", line 519 in string_at⏎  File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 53 in decode_frame⏎  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/worker.py\", line 847 in main_loop⏎  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/workers/default_worker.py\", line 282 in <module>⏎⏎Extension modules: msgpack._cmsgpack, google._upb._message, psutil._psutil_linux, psutil._psutil_posix, setproctitle, yaml._yaml (total: 6)\n\
             18+1 - info - | \n\
             19+1 - info - | after\n\
             unparsed=2\n",
        );
    }

    /// Ray 2.9.3, the driver's log of the same crash (`job-driver-*.log`, corpus
    /// `run-2.9.3-job-worker-segfault`): Ray colours the streamed prefix, which hid it; the
    /// colour codes go, the prefix is read and the dump is a record again.
    #[test]
    fn a_coloured_stream_prefix_is_read() {
        check(
            "2026-12-06 08:27:09,788\tINFO worker.py:1715 -- Connected to Ray cluster. View the dashboard at \x1b[1m\x1b[32mhttp://127.0.0.1:8265 \x1b[39m\x1b[22m\n\
             \x1b[36m(decode_frame pid=3015)\x1b[0m *** SIGSEGV received at time=1796545631 on cpu 0 ***\n\
             \x1b[36m(decode_frame pid=3015)\x1b[0m PC: @     0x7f4179985ad8  (unknown)  (unknown)\n\
             \x1b[33m(raylet)\x1b[0m A worker died or was killed while executing a task by an unexpected system error.",
            "1+1 N2026-12-06T08:27:09.788Z info worker.py {file=worker.py lineno=1715} | Connected to Ray cluster. View the dashboard at http://127.0.0.1:8265 \n\
             2+2 U2026-12-06T08:27:11.000Z critical - {actor=decode_frame pid=3015} | *** SIGSEGV received at time=1796545631 on cpu 0 ***⏎(decode_frame pid=3015) PC: @     0x7f4179985ad8  (unknown)  (unknown)\n\
             4+1 - error - {actor=raylet} | A worker died or was killed while executing a task by an unexpected system error.\n",
        );
    }

    /// Ray 2.20.0 on Windows (corpus `windows-2.20.0-ray-init-in-worker`): the worker's `.err`
    /// with CRLF from Python's logging, then faulthandler's Windows dump with LF.
    #[test]
    fn a_windows_faulthandler_dump_is_one_record() {
        check(
            ":job_id:01000000\r\n\
             2024-05-25 19:44:09,709\tINFO worker.py:1740 -- Started a local Ray instance.\r\n\
             Windows fatal exception: access violation\n\
             \n\
             Stack (most recent call first):\n\
             \x20 File \"C:\\Users\\me\\venv\\lib\\site-packages\\ray\\_private\\worker.py\", line 2362 in connect\n\
             \x20 File \"C:\\Users\\me\\bridge-robot\\src\\main.py\", line 21 in <module>\n",
            "1+1 - info - {marker=job_id value=01000000} | :job_id:01000000\n\
             2+1 N2024-05-25T19:44:09.709Z info worker.py {file=worker.py lineno=1740} | Started a local Ray instance.\n\
             3+5 - critical - | Windows fatal exception: access violation⏎⏎Stack (most recent call first):⏎  File \"C:\\Users\\me\\venv\\lib\\site-packages\\ray\\_private\\worker.py\", line 2362 in connect⏎  File \"C:\\Users\\me\\bridge-robot\\src\\main.py\", line 21 in <module>\n",
        );
    }

    /// Ray 2.40.0, `ray job stop`: the driver's output ends in absl's dump of the SIGTERM
    /// (its last frame line `@ ... and at least 3 more frames`), raw and through the logger;
    /// each is one record, at warning. The threads of a faulthandler dump are one record too.
    #[test]
    fn a_stopped_drivers_dumps_and_a_dump_of_every_thread() {
        check(
            "step 8\n\
             *** SIGTERM received at time=1796546550 on cpu 1 ***\n\
             PC: @     0x7fadbd6ed545  (unknown)  clock_nanosleep\n\
             \x20   @     0x7fadbd65a050   42576776  (unknown)\n\
             \x20   @ ... and at least 3 more frames\n\
             [2026-12-06 08:42:30,360 E 29699 29699] logging.cc:447: *** SIGTERM received at time=1796546550 on cpu 1 ***\n\
             [2026-12-06 08:42:30,361 E 29699 29699] logging.cc:447: PC: @     0x7fadbd6ed545  (unknown)  clock_nanosleep\n\
             [2026-12-06 08:42:30,361 E 29699 29699] logging.cc:447:     @     0x7fadbd65a050   42576776  (unknown)\n\
             [2026-12-06 08:42:30,361 E 29699 29699] logging.cc:447:     @ ... and at least 3 more frames",
            "1+1 - info - | step 8\n\
             2+4 U2026-12-06T08:42:30.000Z warning - | *** SIGTERM received at time=1796546550 on cpu 1 ***⏎PC: @     0x7fadbd6ed545  (unknown)  clock_nanosleep⏎    @     0x7fadbd65a050   42576776  (unknown)⏎    @ ... and at least 3 more frames\n\
             6+4 N2026-12-06T08:42:30.360Z warning - {pid=29699 tid=29699 file=logging.cc lineno=447} | *** SIGTERM received at time=1796546550 on cpu 1 ***⏎[2026-12-06 08:42:30,361 E 29699 29699] logging.cc:447: PC: @     0x7fadbd6ed545  (unknown)  clock_nanosleep⏎[2026-12-06 08:42:30,361 E 29699 29699] logging.cc:447:     @     0x7fadbd65a050   42576776  (unknown)⏎[2026-12-06 08:42:30,361 E 29699 29699] logging.cc:447:     @ ... and at least 3 more frames\n\
             unparsed=1\n",
        );
        check(
            "Fatal Python error: Aborted\n\nThread 0x00007f3c6bfff6c0 (most recent call first):\n  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n\nCurrent thread 0x00007f3c8b7fe740 (most recent call first):\n  File \"/app/model.py\", line 12 in load\n\nExtension modules: numpy.core._multiarray_umath (total: 1)\nnext",
            "1+9 - critical - | Fatal Python error: Aborted⏎⏎Thread 0x00007f3c6bfff6c0 (most recent call first):⏎  File \"/usr/lib/python3.11/threading.py\", line 324 in wait⏎⏎Current thread 0x00007f3c8b7fe740 (most recent call first):⏎  File \"/app/model.py\", line 12 in load⏎⏎Extension modules: numpy.core._multiarray_umath (total: 1)\n\
             10+1 - info - | next\n\
             unparsed=1\n",
        );
    }

    /// A glog check failure on a worker's stderr: the check and its stack trace.
    #[test]
    fn a_failed_check_and_its_stack_are_one_record() {
        check(
            "F0411 07:43:44.182159  123 raylet_client.cc:12] Check failed: ok\n*** Check failure stack trace: ***\n    @     0x7f0 google::LogMessage::Fail()\n/usr/lib/raylet(+0xb3e0fa) [0x55d5]\nnext",
            "1+4 Y04-11+27824182159 critical - {tid=123 file=raylet_client.cc lineno=12} | Check failed: ok⏎*** Check failure stack trace: ***⏎    @     0x7f0 google::LogMessage::Fail()⏎/usr/lib/raylet(+0xb3e0fa) [0x55d5]\n\
             5+1 - info - | next\n\
             unparsed=1\n",
        );
    }

    #[test]
    fn exception_lines() {
        assert!(is_exception_line("ValueError: bad"));
        assert!(is_exception_line(
            "ray.exceptions.RayTaskError(ValueError): ray::f()"
        ));
        assert!(is_exception_line("KeyboardInterrupt"));
        assert!(!is_exception_line("Traceback (most recent call last):"));
        assert!(!is_exception_line("INFO 2024-01-01"));
        assert!(!is_exception_line("error: lowercase"));
        assert!(!is_exception_line(""));
    }

    #[test]
    fn every_line_lands_in_one_event() {
        crate::parse::testing::assert_covers_lines(parse);
    }

    #[test]
    fn nasty_inputs() {
        check("", "");
        check("\r\n\r\n", "1+1 - info - | \n2+1 - info - | \nunparsed=2\n");
        let mut out = ParseOutput::default();
        parse(b"caf\xe9\n\x00\xff\n  \xfe", &mut out);
        assert_eq!(out.events.len(), 2);
        assert_eq!(out.events[1].n_lines, 2);
        let giant = "y".repeat(300_000);
        let mut out = ParseOutput::default();
        parse(giant.as_bytes(), &mut out);
        assert!(out.events[0].message.len() < 70_000);
    }

    #[test]
    fn runaway_indentation_is_cut_into_records() {
        let input = format!("head\n{}", "  x\n".repeat(1500));
        let mut out = ParseOutput::default();
        parse(input.as_bytes(), &mut out);
        let lines: u32 = out.events.iter().map(|e| e.n_lines).sum();
        assert_eq!(lines, 1501);
        assert_eq!(out.events[0].n_lines, MAX_RECORD_LINES);
    }
}
