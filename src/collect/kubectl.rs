//! Runs one `kubectl` command with a deadline: its standard output captured up to a byte
//! bound (the rest read and counted, never held), its standard error kept for the record, and
//! the process killed when the deadline passes. Nothing here knows what a command means.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Most bytes of a command's standard error kept for `metadata.json`.
const MAX_STDERR: usize = 16 * 1024;

/// How long the output of a killed command is waited for: a child of the command (a shell's
/// `sleep`) can hold the pipes open after the command itself is gone.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Exited with this code (0: success).
    Exit(i32),
    /// Ended by a signal, not by the deadline.
    Signalled,
    /// Killed at the deadline.
    TimedOut,
    /// Could not be started (the message says why).
    NotStarted(String),
}

impl Status {
    pub fn ok(&self) -> bool {
        *self == Status::Exit(0)
    }
}

/// What one command gave.
#[derive(Debug)]
pub struct Outcome {
    pub status: Status,
    /// Standard output, up to the bound.
    pub stdout: Vec<u8>,
    /// Bytes of standard output past the bound, read and dropped.
    pub dropped: u64,
    /// Standard error, up to `MAX_STDERR` bytes, as text.
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs `program args…` with standard input closed, for at most `timeout`, keeping at most
/// `max_stdout` bytes of its output.
pub fn run(program: &str, args: &[String], timeout: Duration, max_stdout: u64) -> Outcome {
    let started = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                status: Status::NotStarted(format!("cannot run {program}: {e}")),
                stdout: Vec::new(),
                dropped: 0,
                stderr: String::new(),
                elapsed: started.elapsed(),
            }
        }
    };
    let out = reader(child.stdout.take(), max_stdout);
    let err = reader(child.stderr.take(), MAX_STDERR as u64);
    let status = wait_until(&mut child, started + timeout);
    // A killed command's pipes close with it, unless a child of its own still holds them.
    let grace = if status == Status::TimedOut {
        DRAIN_GRACE
    } else {
        timeout.max(DRAIN_GRACE)
    };
    let (stdout, dropped) = out.recv_timeout(grace).unwrap_or_default();
    let (stderr, _) = err.recv_timeout(DRAIN_GRACE).unwrap_or_default();
    Outcome {
        status,
        stdout,
        dropped,
        stderr: String::from_utf8_lossy(&stderr).trim_end().to_string(),
        elapsed: started.elapsed(),
    }
}

/// Reads a pipe to its end on a thread of its own: the first `max` bytes kept, the rest
/// counted. The result arrives on the channel (never, if the pipe is never closed).
fn reader(pipe: Option<impl Read + Send + 'static>, max: u64) -> mpsc::Receiver<(Vec<u8>, u64)> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        thread::spawn(move || {
            let mut kept = Vec::new();
            let _ = (&mut pipe).take(max).read_to_end(&mut kept);
            let dropped = io_count(&mut pipe);
            let _ = tx.send((kept, dropped));
        });
    } else {
        let _ = tx.send((Vec::new(), 0));
    }
    rx
}

fn io_count(pipe: &mut impl Read) -> u64 {
    std::io::copy(pipe, &mut std::io::sink()).unwrap_or(0)
}

/// Waits for the child until `deadline`, polling (a few milliseconds at first, then less
/// often); kills it at the deadline.
fn wait_until(child: &mut Child, deadline: Instant) -> Status {
    let mut pause = Duration::from_millis(2);
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return st.code().map_or(Status::Signalled, Status::Exit),
            Ok(None) => {}
            Err(e) => return Status::NotStarted(format!("cannot wait for kubectl: {e}")),
        }
        let now = Instant::now();
        if now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Status::TimedOut;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn sh(script: &str, timeout_ms: u64, max: u64) -> Outcome {
        run(
            "sh",
            &["-c".to_string(), script.to_string()],
            Duration::from_millis(timeout_ms),
            max,
        )
    }

    #[test]
    fn output_status_and_stderr() {
        let o = sh("printf 'a\\nb\\n'; echo oops >&2; exit 3", 10_000, 1 << 20);
        assert_eq!(o.status, Status::Exit(3));
        assert_eq!(o.stdout, b"a\nb\n");
        assert_eq!(o.stderr, "oops");
        assert_eq!(o.dropped, 0);
    }

    #[test]
    fn output_past_the_bound_is_counted_not_kept() {
        let o = sh("printf 0123456789", 10_000, 4);
        assert!(o.status.ok());
        assert_eq!(o.stdout, b"0123");
        assert_eq!(o.dropped, 6);
    }

    #[test]
    fn a_hang_is_cut_at_the_deadline() {
        let o = sh("echo started; exec sleep 30", 300, 1 << 20);
        assert_eq!(o.status, Status::TimedOut);
        assert_eq!(o.stdout, b"started\n");
    }

    #[test]
    fn a_missing_program_is_not_started() {
        let o = run("raysift-no-such-program", &[], Duration::from_secs(1), 10);
        assert!(matches!(o.status, Status::NotStarted(_)));
    }
}
