//! How a command ends: its exit code, the failure that ends it early (with the message the
//! binary prints), and writing its output whole. `cli` and `batch` both end this way; neither
//! imports the other for it.

use std::io::{self, Write};
use std::path::Path;

use crate::model::Report;

/// Exit code when a cause reaches `--fail-on`.
pub const EXIT_CAUSE: u8 = 1;

/// Exit code when the bundle could not be read at all, or the command line is wrong.
pub const EXIT_UNREADABLE: u8 = 2;

/// A failure that ends the command, with its exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
    /// The reader went away (`raysift timeline … | head`): end quietly.
    pub broken_pipe: bool,
}

impl Failure {
    /// A wrong command line or an unreadable input: exit 2 with `message`.
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: EXIT_UNREADABLE,
            broken_pipe: false,
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure {
            message: e.to_string(),
            code: EXIT_UNREADABLE,
            broken_pipe: e.kind() == io::ErrorKind::BrokenPipe,
        }
    }
}

/// What `analyze` exits with once a report is written, and what `batch` puts in a line's
/// `exit`: 1 when a cause reaches `--fail-on`; else 2 when part of the bundle could not be
/// read (no cause in the part read is not a clean bill of health); else 0.
pub fn exit_code(report: &Report, failing: bool) -> u8 {
    if failing {
        EXIT_CAUSE
    } else if !report.bundle.complete {
        EXIT_UNREADABLE
    } else {
        0
    }
}

/// Writes the output to stdout, or atomically to a file (temporary file, then rename).
pub fn emit(out: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match out {
        None => {
            let mut stdout = io::stdout().lock();
            stdout.write_all(bytes)?;
            stdout.flush()?;
        }
        Some(path) => {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tmp = dir.join(format!(".{name}.raysift-{}.tmp", std::process::id()));
            let write = || -> io::Result<()> {
                std::fs::write(&tmp, bytes)?;
                std::fs::rename(&tmp, path)
            };
            if let Err(e) = write() {
                let _ = std::fs::remove_file(&tmp);
                return Err(Failure::usage(format!(
                    "cannot write {}: {e}",
                    path.display()
                )));
            }
        }
    }
    Ok(())
}
