//! Recognising containers: magic bytes decide what a blob is, and a name only says whether a
//! member of a bundle is meant to be opened as an archive at all.
//!
//! This module looks at the first bytes of a blob and at names; it reads nothing itself and
//! must not look at what a log file says (that is `classify`).

/// How many leading bytes [`sniff`] needs to see every magic it knows (tar's sits at 257).
pub(super) const SNIFF_LEN: usize = 512;

/// What a blob's first bytes say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Magic {
    Gzip,
    Tar,
    Zip,
    Other,
}

/// Reads the magic bytes: gzip `1f 8b`, POSIX and GNU tar `ustar` at offset 257, zip
/// `PK 03 04` (or `PK 05 06`, the end record an empty zip starts with).
pub(super) fn sniff(head: &[u8]) -> Magic {
    if head.starts_with(&[0x1f, 0x8b]) {
        Magic::Gzip
    } else if head.get(257..262) == Some(b"ustar") {
        Magic::Tar
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Magic::Zip
    } else {
        Magic::Other
    }
}

/// Whether a member's name says it is an archive to open (`.tar.gz`, `.tgz`, `.tar`, `.zip`,
/// `.gz`, without case). Both name and magic must agree before a member is opened, so that a
/// `.jar` or a log that happens to start with `PK` stays a plain file; `batch` takes the
/// files so named for bundles, and a single file so named whose content is no archive is
/// refused.
pub fn archive_name(path: &str) -> bool {
    [".gz", ".tgz", ".tar", ".zip"]
        .iter()
        .any(|ext| ends_with_ignore_case(path, ext))
}

/// The name a single gzip-compressed file is yielded under: `.gz` dropped, `.tgz` turned into
/// `.tar`; other names are kept as they are.
pub(super) fn strip_gz(path: &str) -> String {
    let stem = |n: usize| {
        path.get(..path.len().saturating_sub(n))
            .filter(|s| !s.is_empty() && !s.ends_with('/'))
    };
    if ends_with_ignore_case(path, ".gz") {
        if let Some(stem) = stem(3) {
            return stem.to_owned();
        }
    } else if ends_with_ignore_case(path, ".tgz") {
        if let Some(stem) = stem(4) {
            return format!("{stem}.tar");
        }
    }
    path.to_owned()
}

fn ends_with_ignore_case(path: &str, ext: &str) -> bool {
    path.len()
        .checked_sub(ext.len())
        .and_then(|start| path.as_bytes().get(start..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case(ext.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders the magic of `head` and what the name rules make of `name`.
    #[track_caller]
    fn check(head: &[u8], name: &str, expect: &str) {
        let got = format!(
            "{:?} {} {}",
            sniff(head),
            archive_name(name),
            strip_gz(name)
        );
        assert_eq!(got, expect);
    }

    fn tar_head(magic: &[u8]) -> Vec<u8> {
        let mut head = vec![0u8; 512];
        if let Some(slot) = head.get_mut(257..257 + magic.len()) {
            slot.copy_from_slice(magic);
        }
        head
    }

    #[test]
    fn gzip() {
        check(
            &[0x1f, 0x8b, 8, 0],
            "operator.log.gz",
            "Gzip true operator.log",
        );
    }

    #[test]
    fn tar_posix_and_gnu() {
        check(&tar_head(b"ustar\x0000"), "b.tar", "Tar true b.tar");
        check(&tar_head(b"ustar  \x00"), "b.TAR", "Tar true b.TAR");
    }

    #[test]
    fn zip_and_empty_zip() {
        check(b"PK\x03\x04rest", "b.zip", "Zip true b.zip");
        check(b"PK\x05\x06", "b.Zip", "Zip true b.Zip");
    }

    #[test]
    fn other() {
        check(
            b"2024-01-01 INFO hello",
            "raylet.out",
            "Other false raylet.out",
        );
        check(b"", "", "Other false ");
        check(b"\x1f", "x.tgz", "Other true x.tar");
        check(&tar_head(b"usta"), "bundle.tar.gz", "Other true bundle.tar");
    }

    #[test]
    fn names_are_not_stripped_to_nothing() {
        check(b"", ".gz", "Other true .gz");
        check(b"", "dir/.gz", "Other true dir/.gz");
        check(b"", "raylet.out.GZ", "Other true raylet.out");
        check(b"", "日志.gz", "Other true 日志");
    }
}
