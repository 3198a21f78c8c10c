//! The lines of a process's abort dump, which every parser of raw stderr (`*.err`, a worker's
//! output, a container's) shares: each dump is one record, whose first line is its head.
//!
//! - CPython's faulthandler: `Fatal Python error: Segmentation fault` (on Windows also
//!   `Windows fatal exception: access violation`), then blocks headed
//!   `Current thread 0x… (most recent call first):`, `Thread 0x… (…):` or `Stack (…):` of
//!   frames `  File "/app/jobs.py", line 57 in decode_frame` (no comma before `in`), blank
//!   lines between them and an `Extension modules: …` trailer.
//! - absl's failure signal handler (Ray's C++ core, in every process that loads it):
//!   `*** SIGSEGV received at time=1796545631 on cpu 0 ***`, `PC: @ 0x… (unknown) epoll_wait`
//!   and frames `    @ 0x… …`, the last perhaps `    @ ... and at least 8 more frames`.
//!   Ray writes the same lines again through its logger, each stamped as a record
//!   (`[… E 3015 3015] logging.cc:361: PC: @ …`): such a frame line continues the banner's
//!   record like the raw one.
//! - A failed check: `… Check failed: …`, then `*** StackTrace Information ***` (Ray) or
//!   `*** Check failure stack trace: ***` (glog) and one frame a line.
//!
//! Every test here is of one line alone, so a line is a continuation or not whatever came
//! before it (the sieve and the streamed read cut files at lines that start records).

use crate::event::Level;

/// The heads of CPython's faulthandler dumps: `Fatal Python error: <what>` (a fatal signal,
/// an abort) and, on Windows, `Windows fatal exception: <what>` (an access violation, a
/// stack overflow: the exception handler writes this head, then the same blocks of frames).
const FAULTHANDLER_HEADS: [&str; 2] = ["Fatal Python error:", "Windows fatal exception:"];

/// `Fatal Python error: Segmentation fault` → `Segmentation fault`, `Windows fatal exception:
/// access violation` → `access violation`.
pub fn fatal_python_error(line: &str) -> Option<&str> {
    FAULTHANDLER_HEADS
        .iter()
        .find_map(|head| line.strip_prefix(head))
        .filter(|rest| rest.is_empty() || rest.starts_with(' '))
        .map(str::trim)
}

/// Where the first faulthandler head stands in `text`, if one does.
pub fn faulthandler_head(text: &str) -> Option<usize> {
    FAULTHANDLER_HEADS.iter().filter_map(|h| text.find(h)).min()
}

/// A line inside a faulthandler dump after its head: blank, indented (a frame,
/// `<no Python frame>`), a block's header (`… (most recent call first):`), the
/// `Extension modules:` trailer, or the runtime state an early fatal error names.
pub fn continues_faulthandler(line: &str) -> bool {
    let t = line.trim_end();
    t.is_empty()
        || line.starts_with([' ', '\t'])
        || t.ends_with("(most recent call first):")
        || t.starts_with("Extension modules: ")
        || t.starts_with("Python runtime state: ")
        || t == "<no Python frame>"
}

/// `*** SIGSEGV received at time=1796545631 on cpu 0 ***` → (`SIGSEGV`, 1796545631). The
/// banner may stand anywhere in the line (after a logger's stamp, a driver's prefix).
pub fn signal_banner(line: &str) -> Option<(&str, i64)> {
    let at = line.find("*** SIG")?;
    let rest = &line[at + 4..];
    let (signal, after) = rest.split_once(" received at time=")?;
    if signal.len() > 12 || !signal.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let secs = after.get(..digits)?.parse::<i64>().ok()?;
    Some((signal, secs))
}

/// The banner itself, from `***` to `***`: the same text in every copy of one dump (the raw
/// one, the logger's, a driver's), which names the crash.
pub fn banner_text(line: &str) -> Option<&str> {
    let at = line.find("*** SIG")?;
    let rest = &line[at..];
    let end = rest[3..].find("***").map_or(rest.len(), |i| i + 6);
    Some(rest[..end].trim_end())
}

/// Whether a signal asks the process to stop (`ray stop`, a pod being deleted, Ctrl-C): its
/// dump tells no failure on its own.
pub fn asks_to_stop(signal: &str) -> bool {
    matches!(signal, "SIGTERM" | "SIGINT" | "SIGHUP")
}

/// The level of a signal's dump: low for a request to stop, critical for a crash.
pub fn signal_level(signal: &str) -> Level {
    if asks_to_stop(signal) {
        Level::Warning
    } else {
        Level::Critical
    }
}

/// An absl frame line: `PC: @ 0x… …`, `@ 0x… …`, `@ ... and at least 8 more frames`
/// (indented or not).
pub fn absl_frame(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.strip_prefix("PC: ").unwrap_or(t);
    t.strip_prefix('@')
        .map(str::trim_start)
        .is_some_and(|r| r.starts_with("0x") || r.starts_with("..."))
}

/// The message of a record Ray's C++ logger wrote from its failure-signal writer, after the
/// `] ` of its stamp: `[(component) ]logging.cc:<line>: <message>` → `<message>`.
pub fn logged_by_signal_writer(after_stamp: &str) -> Option<&str> {
    let rest = match after_stamp.strip_prefix('(') {
        Some(r) => r.split_once(") ").map_or(after_stamp, |(_, after)| after),
        None => after_stamp,
    };
    let rest = rest.strip_prefix("logging.cc:")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let msg = rest.get(digits..)?.strip_prefix(':')?;
    (digits > 0).then_some(msg.trim_start_matches(' '))
}

/// A frame line of an absl dump as Ray's logger wrote it again, a stamped record of its own
/// (`[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @ 0x7f4…`): it continues the
/// banner's record.
pub fn logged_absl_frame(line: &str) -> bool {
    line.starts_with('[')
        && line
            .split_once("] ")
            .and_then(|(_, rest)| logged_by_signal_writer(rest))
            .is_some_and(absl_frame)
}

/// [`logged_absl_frame`] of raw bytes.
pub fn logged_absl_frame_bytes(line: &[u8]) -> bool {
    line.first() == Some(&b'[')
        && memchr::memmem::find(line, b"logging.cc:").is_some()
        && logged_absl_frame(&crate::parse::lines::decode(line))
}

/// The lines after a failed check: `*** StackTrace Information ***` or `*** Check failure
/// stack trace: ***`, indented frames, and Ray's frames at the line start
/// (`/…/_raylet.so(+0xfe93da) [0x7fb185be93da] ray::operator<<()`,
/// `/…/_raylet.so(_ZN3ray6RayLogD1Ev+0x37) [0x7fb185beb137] ray::RayLog::~RayLog()`,
/// `unknown`).
pub fn continues_check(line: &str) -> bool {
    let t = line.trim_end();
    t == "*** StackTrace Information ***"
        || t == "*** Check failure stack trace: ***"
        || line.starts_with([' ', '\t'])
        || t == "unknown"
        || t.contains("(+0x")
        || t.contains(") [0x")
        || t.ends_with(']') && t.contains(" [0x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faulthandler_lines() {
        assert_eq!(
            fatal_python_error("Fatal Python error: Segmentation fault"),
            Some("Segmentation fault")
        );
        assert_eq!(fatal_python_error("Fatal Python error"), None);
        // Windows: what a worker's `.err` held when `ray.init()` ran inside it (Ray 2.20).
        assert_eq!(
            fatal_python_error("Windows fatal exception: access violation"),
            Some("access violation")
        );
        assert_eq!(fatal_python_error("Windows fatal exceptions: x"), None);
        assert_eq!(
            faulthandler_head("x\nWindows fatal exception: code 0xc0000005\n"),
            Some(2)
        );
        for line in [
            "",
            "Stack (most recent call first):",
            "Current thread 0x00007f3c8b7fe740 (most recent call first):",
            "Thread 0x00007f3c6bfff6c0 (most recent call first):",
            "  File \"/home/ray/app/jobs.py\", line 53 in decode_frame",
            "  <no Python frame>",
            "Extension modules: msgpack._cmsgpack, google._upb._message, psutil._psutil_linux (total: 15)",
            "Python runtime state: initialized",
        ] {
            assert!(continues_faulthandler(line), "{line:?}");
        }
        assert!(!continues_faulthandler(
            "[2026-12-06 08:27:11,608 E 3015 3015] x.cc:1: y"
        ));
        assert!(!continues_faulthandler(":task_name:decode_frame"));
    }

    #[test]
    fn absl_lines() {
        let banner = "*** SIGSEGV received at time=1796545631 on cpu 0 ***";
        assert_eq!(signal_banner(banner), Some(("SIGSEGV", 1796545631)));
        assert_eq!(
            banner_text(&format!(
                "[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: {banner}"
            )),
            Some(banner)
        );
        assert_eq!(signal_banner("*** SIGNAL received at time=x ***"), None);
        assert_eq!(signal_level("SIGTERM"), Level::Warning);
        assert_eq!(signal_level("SIGSEGV"), Level::Critical);
        for line in [
            "PC: @     0x7fcca9b26f36  (unknown)  epoll_wait",
            "    @     0x7fcca9a5a050  139169624  (unknown)",
            "    @ ... and at least 8 more frames",
        ] {
            assert!(absl_frame(line), "{line:?}");
        }
        assert!(!absl_frame("@home: hello"));
        let logged = "[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361:     @     0x7f417985a050  (unknown)  (unknown)";
        assert!(logged_absl_frame(logged));
        assert!(logged_absl_frame_bytes(logged.as_bytes()));
        assert!(logged_absl_frame(
            "[2026-12-06 08:27:11,608 E 3015 3015] (raylet) logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)"
        ));
        // The banner itself starts the record; other records of the writer too.
        assert!(!logged_absl_frame(
            "[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: *** SIGSEGV received at time=1796545631 on cpu 0 ***"
        ));
        assert!(!logged_absl_frame(
            "[2026-12-06 08:27:11,608 E 3015 3015] core_worker.cc:361:     @ 0x1"
        ));
    }

    #[test]
    fn check_lines() {
        for line in [
            "*** StackTrace Information ***",
            "/usr/lib/raylet(+0xb3e0fa) [0x55d5]",
            "ray::operator<<() [0x7f4]",
            // Ray 2.9.3, a worker's failed check.
            "/home/ray/anaconda3/lib/python3.11/site-packages/ray/_raylet.so(_ZN3ray6RayLogD1Ev+0x37) [0x7fb185beb137] ray::RayLog::~RayLog()",
            "/home/ray/anaconda3/lib/python3.11/site-packages/ray/_raylet.so(+0x8391ff) [0x7fb1854391ff] make_fcontext",
            "    @     0x7f0 google::LogMessage::Fail()",
            "unknown",
        ] {
            assert!(continues_check(line), "{line:?}");
        }
        assert!(!continues_check("next print"));
    }
}
