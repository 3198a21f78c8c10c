//! Member paths: turning the raw bytes an archive or file system gives for a name into the
//! `/`-separated, root-relative, printable path the rest of raysift sees, and resolving link
//! targets inside an archive.
//!
//! This module owns the rules that keep a path inside the bundle (no `..`, no absolute
//! paths) and that make names safe to print (control characters escaped, invalid UTF-8
//! replaced). It does no I/O and knows nothing of containers.

use std::borrow::Cow;
use std::fmt::Write;

/// Why a member name was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// A `..` component: the name could point outside the bundle.
    DotDot,
    /// Nothing left once `.` and empty components are dropped (the archive's root itself).
    Empty,
}

/// A member name made relative and printable.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct MemberPath {
    pub path: String,
    /// The archive stored it as an absolute path; it has been made relative.
    pub was_absolute: bool,
}

/// Normalises a member name: drops `.` and empty components and a leading `/`, refuses `..`.
/// Zip writers on Windows sometimes separate with `\`, so `backslash` treats it as `/` too,
/// and a drive (`C:\Users\me\…\logs\raylet.out`) as the root of an absolute path.
pub(super) fn member_path(raw: &[u8], backslash: bool) -> Result<MemberPath, Refused> {
    let is_sep = |b: &u8| *b == b'/' || (backslash && *b == b'\\');
    let drive = backslash
        && raw.len() > 2
        && raw[0].is_ascii_alphabetic()
        && raw[1] == b':'
        && is_sep(&raw[2]);
    let raw = if drive { &raw[2..] } else { raw };
    let was_absolute = raw.first().is_some_and(is_sep);
    let mut path = String::with_capacity(raw.len());
    for component in raw.split(is_sep) {
        match component {
            b"" | b"." => {}
            b".." => return Err(Refused::DotDot),
            name => {
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(&escape(name));
            }
        }
    }
    if path.is_empty() {
        return Err(Refused::Empty);
    }
    Ok(MemberPath { path, was_absolute })
}

/// Why a link target was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LinkRefused {
    Absolute,
    Escapes,
}

/// Resolves a link target against `base` (a normalised directory path, empty for the root)
/// without touching the file system: `..` pops a component, and popping past the root means
/// the target leads outside the archive.
pub(super) fn resolve_link(base: &str, target: &[u8]) -> Result<String, LinkRefused> {
    if target.first() == Some(&b'/') {
        return Err(LinkRefused::Absolute);
    }
    let mut parts: Vec<Cow<'_, str>> = base
        .split('/')
        .filter(|c| !c.is_empty())
        .map(Cow::Borrowed)
        .collect();
    for component in target.split(|b| *b == b'/') {
        match component {
            b"" | b"." => {}
            b".." => {
                if parts.pop().is_none() {
                    return Err(LinkRefused::Escapes);
                }
            }
            name => parts.push(escape(name)),
        }
    }
    Ok(parts.join("/"))
}

/// The directory part of a normalised path: `a/b` for `a/b/c.log`, empty for `c.log`.
pub(super) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Joins a nested archive's own path and a path inside it.
pub(super) fn join(at: Option<&str>, inner: &str) -> String {
    match at {
        Some(outer) => format!("{outer}/{inner}"),
        None => inner.to_owned(),
    }
}

/// Makes a name printable: invalid UTF-8 becomes U+FFFD, and control characters and the
/// bidirectional overrides (which can make a name read backwards in a terminal) are written
/// as escapes, so that a hostile name cannot forge report lines or terminal sequences.
pub(super) fn escape(raw: &[u8]) -> Cow<'_, str> {
    let text = String::from_utf8_lossy(raw);
    if !text.chars().any(needs_escape) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Writing to a String cannot fail.
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders every operation of this module on one input: `member_path` with and without
    /// backslash separators, and `resolve_link` from the base `a/b`.
    #[track_caller]
    fn check(raw: &[u8], expect: &str) {
        let show = |r: Result<MemberPath, Refused>| match r {
            Ok(m) if m.was_absolute => format!("abs:{}", m.path),
            Ok(m) => m.path,
            Err(e) => format!("{e:?}"),
        };
        let link = match resolve_link("a/b", raw) {
            Ok(p) => p,
            Err(e) => format!("{e:?}"),
        };
        let got = format!(
            "{} | {} | {link}",
            show(member_path(raw, false)),
            show(member_path(raw, true))
        );
        assert_eq!(got, expect);
    }

    #[test]
    fn plain() {
        check(
            b"logs/raylet.out",
            "logs/raylet.out | logs/raylet.out | a/b/logs/raylet.out",
        );
    }

    #[test]
    fn dot_slash_prefix() {
        check(
            b"./bundle/x.log",
            "bundle/x.log | bundle/x.log | a/b/bundle/x.log",
        );
    }

    #[test]
    fn doubled_and_trailing_slashes() {
        check(
            b"bundle//pods/",
            "bundle/pods | bundle/pods | a/b/bundle/pods",
        );
    }

    #[test]
    fn absolute() {
        check(b"/etc/passwd", "abs:etc/passwd | abs:etc/passwd | Absolute");
    }

    #[test]
    fn dot_dot_anywhere() {
        check(b"a/../b", "DotDot | DotDot | a/b/b");
        check(b"../../x.log", "DotDot | DotDot | x.log");
        check(b"../../../x.log", "DotDot | DotDot | Escapes");
    }

    #[test]
    fn troubleshoot_all_logs_link() {
        let target = b"../../cluster-resources/pods/logs/default/head/ray-head.log";
        let got = resolve_link("support-bundle/all-logs/head", target);
        assert_eq!(
            got,
            Ok("support-bundle/cluster-resources/pods/logs/default/head/ray-head.log".into())
        );
        assert_eq!(
            parent("support-bundle/all-logs/head/ray-head.log"),
            "support-bundle/all-logs/head"
        );
        assert_eq!(parent("top.log"), "");
    }

    #[test]
    fn root_only() {
        check(b"./", "Empty | Empty | a/b");
        check(b"", "Empty | Empty | a/b");
    }

    #[test]
    fn backslashes_only_split_for_zip() {
        check(
            b"logs\\raylet.out",
            "logs\\raylet.out | logs/raylet.out | a/b/logs\\raylet.out",
        );
        check(b"\\abs\\x", "\\abs\\x | abs:abs/x | a/b/\\abs\\x");
        // A zip made on Windows from a session's folder: its drive is the root.
        check(
            b"C:\\Temp\\ray\\logs\\raylet.out",
            "C:\\Temp\\ray\\logs\\raylet.out | abs:Temp/ray/logs/raylet.out | a/b/C:\\Temp\\ray\\logs\\raylet.out",
        );
        check(b"C:x", "C:x | C:x | a/b/C:x");
    }

    #[test]
    fn control_characters_escaped() {
        check(b"evil\n.log", "evil\\n.log | evil\\n.log | a/b/evil\\n.log");
        check(
            b"\x1b[31mred\r\t",
            "\\x1b[31mred\\r\\t | \\x1b[31mred\\r\\t | a/b/\\x1b[31mred\\r\\t",
        );
        check(
            "x\u{202e}gol.exe".as_bytes(),
            "x\\u{202e}gol.exe | x\\u{202e}gol.exe | a/b/x\\u{202e}gol.exe",
        );
        check(
            "c1\u{85}".as_bytes(),
            "c1\\u{85} | c1\\u{85} | a/b/c1\\u{85}",
        );
    }

    #[test]
    fn invalid_utf8_lossy() {
        check(
            b"bad\xff\xfe.log",
            "bad\u{fffd}\u{fffd}.log | bad\u{fffd}\u{fffd}.log | a/b/bad\u{fffd}\u{fffd}.log",
        );
    }

    #[test]
    fn unicode_kept() {
        check(
            "日志/raylet.out".as_bytes(),
            "日志/raylet.out | 日志/raylet.out | a/b/日志/raylet.out",
        );
    }

    #[test]
    fn join_nested() {
        assert_eq!(
            join(Some("outer.tar.gz"), "in/x.log"),
            "outer.tar.gz/in/x.log"
        );
        assert_eq!(join(None, "in/x.log"), "in/x.log");
    }
}
