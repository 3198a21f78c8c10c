//! The results, one JSON line a bundle: the `Line` written (with its `CauseLine`s) and the
//! `Outcome` of one analysis behind it; and a results file read back, as what a previous run
//! finished (`Done`, for `--skip-done`), or opened for `--out`.
//!
//! Invariant: only a line that ends in a newline is a result: the cut last line of a killed
//! run is ignored when the file is read, and removed before `--out` appends to the same file.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::inputs::Input;
use crate::exit::{Failure, EXIT_UNREADABLE};
use crate::rules::Severity;

/// The line written for one bundle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct Line {
    pub(super) path: String,
    /// `ok` or `error`.
    pub(super) status: &'static str,
    /// What `raysift analyze` exits with: 0 no failing cause in a bundle read in full, 1 a
    /// failing cause, 2 unreadable, or incomplete with no failing cause.
    pub(super) exit: u8,
    /// The top causes, in rank order.
    pub(super) causes: Vec<CauseLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
    /// The first object the first cause concerns (`RayService default/fraud-scorer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) object: Option<String>,
    /// When the incident began: the earliest time of the first cause's evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) at: Option<String>,
    /// Whether every part of the bundle was read (false on an error line).
    pub(super) complete: bool,
    /// How many diagnostics the report has (problems with the bundle's content).
    pub(super) diagnostics: usize,
    /// The bundle's size as stored (a directory: the bytes read from it).
    pub(super) bundle_bytes: u64,
    pub(super) elapsed_ms: u64,
}

/// A cause in a line: the report's own field names and values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct CauseLine {
    pub(super) id: String,
    pub(super) severity: Severity,
    pub(super) confidence: f64,
    pub(super) title: String,
}

/// One bundle's result: its line and every cause it had (for the summary).
#[derive(Clone, Debug)]
pub(super) struct Outcome {
    pub(super) line: Line,
    pub(super) causes: Vec<(String, Severity)>,
    /// Templates of error records no rule claimed and the baseline does not know, with their
    /// counts (for the summary: the next rules to write).
    pub(super) unrecognised: Vec<(String, usize)>,
}

impl Outcome {
    pub(super) fn error(
        input: &Input,
        bundle_bytes: u64,
        started: Instant,
        error: String,
    ) -> Outcome {
        Outcome {
            line: Line {
                path: input.shown.clone(),
                status: "error",
                exit: EXIT_UNREADABLE,
                causes: Vec::new(),
                error: Some(error),
                object: None,
                at: None,
                complete: false,
                diagnostics: 0,
                bundle_bytes,
                elapsed_ms: started.elapsed().as_millis() as u64,
            },
            causes: Vec::new(),
            unrecognised: Vec::new(),
        }
    }
}

/// What a results file says is finished.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Done {
    /// Paths with an `ok` line.
    pub(super) ok: BTreeSet<String>,
    /// Bytes up to the end of the last complete line.
    pub(super) complete_len: u64,
    pub(super) len: u64,
    /// Complete lines that are not results (the cut last line is not counted).
    pub(super) bad_lines: usize,
}

#[derive(Deserialize)]
struct DoneLine {
    path: String,
    status: String,
}

/// Reads what a results file says is finished. Only lines ending in a newline count: the last
/// line of a run that was killed is cut, and ignored.
pub(super) fn parse_done(bytes: &[u8]) -> Done {
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let mut done = Done {
        complete_len: complete as u64,
        len: bytes.len() as u64,
        ..Done::default()
    };
    for line in bytes[..complete].split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<DoneLine>(line) {
            Ok(l) if l.status == "ok" => {
                done.ok.insert(l.path);
            }
            Ok(_) => {}
            Err(_) => done.bad_lines += 1,
        }
    }
    done
}

pub(super) fn read_done(path: &Path) -> Result<Done, Failure> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(parse_done(&bytes)),
        // The first run of a job: nothing is done yet.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Done::default()),
        Err(e) => Err(Failure::usage(format!(
            "--skip-done {}: {e}",
            path.display()
        ))),
    }
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Opens `--out`: created or truncated, or, when it is also the `--skip-done` file, appended
/// to after its cut last line is removed.
pub(super) fn open_out(path: &Path, append_after: Option<&Done>) -> Result<std::fs::File, Failure> {
    let fail = |e: io::Error| Failure::usage(format!("cannot write {}: {e}", path.display()));
    match append_after {
        None => std::fs::File::create(path).map_err(fail),
        Some(done) => {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(fail)?;
            if done.complete_len < done.len {
                file.set_len(done.complete_len).map_err(fail)?;
            }
            Ok(file)
        }
    }
}
