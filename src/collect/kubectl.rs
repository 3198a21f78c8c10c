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

/// Which part of an output longer than its bound is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The first bytes (a tar stream, an object: only a beginning can be read).
    Head,
    /// The last bytes, from the first line end in them (a log: the end is where it failed).
    Tail,
}

/// Runs `program args…` with standard input closed, for at most `timeout`, keeping at most
/// `max_stdout` bytes of its output (which ones: `keep`).
pub fn run(
    program: &str,
    args: &[String],
    timeout: Duration,
    max_stdout: u64,
    keep: Keep,
) -> Outcome {
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
    let out = reader(child.stdout.take(), max_stdout, keep);
    let err = reader(child.stderr.take(), MAX_STDERR as u64, Keep::Head);
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

/// Reads a pipe to its end on a thread of its own, keeping at most `max` bytes (the first or
/// the last) and counting the rest. The result arrives on the channel (never, if the pipe is
/// never closed).
fn reader(
    pipe: Option<impl Read + Send + 'static>,
    max: u64,
    keep: Keep,
) -> mpsc::Receiver<(Vec<u8>, u64)> {
    let (tx, rx) = mpsc::channel();
    match pipe {
        Some(mut pipe) => {
            thread::spawn(move || {
                let got = match keep {
                    Keep::Head => head(&mut pipe, max),
                    Keep::Tail => tail(&mut pipe, max),
                };
                let _ = tx.send(got);
            });
        }
        None => {
            let _ = tx.send((Vec::new(), 0));
        }
    }
    rx
}

fn head(pipe: &mut impl Read, max: u64) -> (Vec<u8>, u64) {
    let mut kept = Vec::new();
    let _ = pipe.take(max).read_to_end(&mut kept);
    let dropped = std::io::copy(pipe, &mut std::io::sink()).unwrap_or(0);
    (kept, dropped)
}

/// The last `max` bytes of the stream from the first line start in them (the whole stream
/// when it fits), and how many bytes came before. Holds at most about 1.25 × `max`.
fn tail(pipe: &mut impl Read, max: u64) -> (Vec<u8>, u64) {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let mut kept: Vec<u8> = Vec::new();
    let mut dropped = 0u64;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => kept.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
        // Cut back once a quarter more than the bound is held: memory stays near the bound.
        if kept.len() > max.saturating_add(max / 4).max(1 << 20) {
            let cut = kept.len() - max;
            kept.drain(..cut);
            dropped += cut as u64;
        }
    }
    if kept.len() > max {
        let mut cut = kept.len() - max;
        // Start at a whole line (unless the cut already falls on one).
        if kept.get(cut - 1) != Some(&b'\n') {
            if let Some(nl) = kept[cut..].iter().position(|&b| b == b'\n') {
                cut += nl + 1;
            }
        }
        kept.drain(..cut);
        dropped += cut as u64;
    }
    (kept, dropped)
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
            Keep::Head,
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
    fn a_log_past_the_bound_keeps_its_last_whole_lines() {
        let o = run(
            "sh",
            &[
                "-c".to_string(),
                "printf 'one\\ntwo\\nthree\\n'".to_string(),
            ],
            Duration::from_secs(10),
            8,
            Keep::Tail,
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), "three\n");
        assert_eq!(o.dropped, 8);
        let mut big = std::io::Cursor::new(b"x\n".repeat(2_000_000));
        let (kept, dropped) = tail(&mut big, 10);
        assert_eq!(kept, b"x\nx\nx\nx\nx\n");
        assert_eq!(dropped, 4_000_000 - 10);
    }

    #[test]
    fn a_hang_is_cut_at_the_deadline() {
        let o = sh("echo started; exec sleep 30", 300, 1 << 20);
        assert_eq!(o.status, Status::TimedOut);
        assert_eq!(o.stdout, b"started\n");
    }

    #[test]
    fn a_missing_program_is_not_started() {
        let o = run(
            "raysift-no-such-program",
            &[],
            Duration::from_secs(1),
            10,
            Keep::Head,
        );
        assert!(matches!(o.status, Status::NotStarted(_)));
    }
}
