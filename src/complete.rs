//! Whether a bundle was read in full: which diagnostics say that a material part of it was
//! never read (a truncated or corrupt archive, a limit that stopped reading, a member that
//! could not be read), as opposed to problems that lose nothing a report could use (a link
//! left alone, a FIFO, a long line cut, a binary file, a line a parser could not read).
//!
//! A report on an incomplete bundle says so at the top, and "no cause" there is not a clean
//! bill of health: `analyze` exits 2 when the bundle is incomplete and no cause reaches
//! `--fail-on` (README, exit codes).
//!
//! The reader (`bundle`) words its diagnostics for people; this module reads that wording.
//! The phrases below are the reader's, and `tests/complete.rs` runs truncated archives and
//! limits through the binary, so a change of wording that this module no longer recognises
//! fails a test rather than passing silently.

use crate::diag::Diagnostic;

/// Phrases of the reader's diagnostics that mean content was lost: reading stopped early,
/// a member was skipped or cut short, a stream or folder could not be read.
const LOST: [&str; 21] = [
    "reading stopped",
    // The salvaging archive readers (zip by local headers, gzip resumed at the next member).
    "bytes lost",
    "stopped at",
    "skipped to the next member",
    "is encrypted",
    "not supported",
    "runs past the end",
    "local header",
    "ends early",
    "ends inside",
    "truncated",
    "stream unreadable",
    "stream broken",
    "total size limit",
    "entry count limit",
    "entry size limit",
    "members, stopped",
    "deeper than the depth limit",
    "unreadable",
    "directory listing broken",
    "not read",
];

/// Phrases that name what is left alone on purpose, or read another way, even when a phrase
/// of [`LOST`] appears too (`unreadable symlink`; a zip's central directory unreadable,
/// `reading local headers instead`): links, special files, fallbacks that lose nothing by
/// themselves (what they then fail to read is diagnosed on its own).
const LEFT_ALONE: [&str; 7] = [
    "version-control folder",
    "symlink",
    "link target",
    "hard link",
    "is a FIFO",
    "is a device",
    "instead",
];

/// Whether a diagnostic says that part of the bundle could not be read. Diagnostics on a line
/// (a parser's, a long line cut) never do: the line itself was read.
pub fn loses_content(d: &Diagnostic) -> bool {
    if d.line.is_some() {
        return false;
    }
    let p = d.problem.as_str();
    LOST.iter().any(|k| p.contains(k)) && !LEFT_ALONE.iter().any(|k| p.contains(k))
}

/// The diagnostics that make a bundle incomplete, in their order.
pub fn reasons(diagnostics: &[Diagnostic]) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| loses_content(d))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(problem: &str) -> Diagnostic {
        Diagnostic::for_file("x", problem)
    }

    #[test]
    fn lost_content_is_told_from_what_is_left_alone() {
        for lost in [
            "reading stopped after 4532 bytes, the part read is kept: incomplete deflate stream",
            "truncated: only 10 of 20 bytes could be read, the part read is kept",
            "gzip stream unreadable: invalid gzip header",
            "tar stream broken after member a.log (byte 1024): unexpected EOF",
            "total size limit of 10240 bytes reached, stopped before this file",
            "entry count limit of 3 reached, stopped before this file",
            "larger than the entry size limit of 100 bytes, skipped",
            "archive has more than 600 members, stopped",
            "nested archive is deeper than the depth limit of 4, skipped",
            "unreadable: permission denied",
            "unreadable zip member: invalid checksum",
            "zip stream is larger than the total size limit of 5 bytes, not read",
            "gzip member at byte 9 damaged (bad CRC) after 10 inflated bytes, which are kept; resumed at the next member, byte 90 (12 compressed bytes lost)",
            "entries inflate to more than 10 times the archive's size; stopped at a.log (99 bytes), the entries after it are not read",
            "12 bytes at byte 40 are not gzip, skipped to the next member at byte 52",
            "is encrypted, skipped",
            "uses compression method 12 (bzip2), which is not supported, skipped",
            "data (10 bytes at byte 5) runs past the end of the archive (12 bytes), skipped",
            "bad local header at byte 7, skipped",
            "no local header at byte 7, skipped",
            "gzip stream ends inside a member (truncated)",
        ] {
            assert!(loses_content(&file(lost)), "{lost}");
        }
        for kept in [
            "is a FIFO, skipped",
            "is a device, skipped",
            "unreadable symlink: bad name",
            "symlink target ../x is outside the bundle, skipped",
            "hard link target a is missing from the archive, skipped",
            "absolute member path made relative",
            "member path contains `..` and could lead outside the bundle, skipped",
            "has unsupported tar entry type 'V', skipped",
            "binary content (40% control bytes in the first 4096 bytes), skipped",
            "zip central directory unreadable (no EOCD), reading local headers instead",
            "zip central directory not found (no end record), reading local headers instead",
            "zip central directory damaged at byte 9 after 2 of its 5 entries, reading local headers after byte 7 instead",
            "12 bytes after the last gzip member (from byte 40) are not gzip, ignored",
        ] {
            assert!(!loses_content(&file(kept)), "{kept}");
        }
        let cut = Diagnostic::at_line(3, "line of 9 bytes is longer than the limit: truncated");
        assert!(!loses_content(&cut));
    }
}
