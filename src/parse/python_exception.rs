//! The line that names a Python exception, as a traceback ends or a log prints it alone:
//! `ValueError: feature table 'users_v2' not found`,
//! `ray.exceptions.RayTaskError(ValueError): ray::f() (pid=…)`, `KeyboardInterrupt`,
//! `grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC …>`.
//!
//! One reading for every reader of exception lines (the worker parser's tracebacks, the open
//! world's failures, the event parsers' death causes, the ranking's echoes), so that what one
//! calls an exception the others do too; each reader then asks what it needs of it (a text,
//! no warnings).

/// The last part of a class name that marks a Python exception or warning class: the
/// standard library's and the common libraries' naming (`…Error`, `…Exception`, `SystemExit`,
/// `KeyboardInterrupt`, `…Failure`, `ReadTimeout`, Ray's `…Died`), and warnings.
const SUFFIXES: [&str; 8] = [
    "Error",
    "Exception",
    "Exit",
    "Interrupt",
    "Failure",
    "Timeout",
    "Died",
    "Warning",
];

/// An exception line, borrowed from the line read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raised<'a> {
    /// The class as written, dotted: `ray.exceptions.RayTaskError`.
    pub name: &'a str,
    /// The class a wrapper names in parentheses: `ValueError` of `RayTaskError(ValueError)`.
    pub wrapped: Option<&'a str>,
    /// What follows `: ` (empty when the line is the class alone), trimmed.
    pub text: &'a str,
}

impl<'a> Raised<'a> {
    /// The class without its module: `RayTaskError`.
    pub fn class(&self) -> &'a str {
        last_part(self.name)
    }

    /// The class without its module, with what it wraps: `RayTaskError(ValueError)`.
    pub fn kind(&self) -> String {
        match self.wrapped {
            Some(inner) => format!("{}({inner})", self.class()),
            None => self.class().to_string(),
        }
    }

    /// A warning (`FutureWarning: …`), printed through the same machinery but not raised.
    pub fn is_warning(&self) -> bool {
        self.class().ends_with("Warning")
    }
}

/// The exception `line` names, when it is an exception line: at its first column, a dotted
/// name whose last part is a class name of an exception or a warning (it begins with a capital,
/// or `_` and a capital, and ends in one of [`SUFFIXES`]), optionally a wrapped class in
/// parentheses, then the end of the line or `:` and the text. The scan stops at the first byte
/// a name cannot hold, so an ordinary line costs a few bytes.
pub fn raised(line: &str) -> Option<Raised<'_>> {
    let end = name_end(line);
    let name = line.get(..end)?;
    if !is_class_path(name) {
        return None;
    }
    let mut rest = line.get(end..)?;
    let mut wrapped = None;
    if let Some(inner) = rest.strip_prefix('(') {
        let close = inner.find(')')?;
        let inside = inner.get(..close)?;
        if inside.is_empty() || name_end(inside) != inside.len() {
            return None;
        }
        wrapped = Some(inside);
        rest = inner.get(close + 1..)?;
    }
    let text = match rest.strip_prefix(':') {
        Some(after) if after.is_empty() || after.starts_with([' ', '\t']) => after.trim(),
        Some(_) => return None,
        None if rest.trim().is_empty() => "",
        None => return None,
    };
    Some(Raised {
        name,
        wrapped,
        text,
    })
}

/// The exception `line` raises: an exception line ([`raised`]) that is not a warning's.
pub fn raised_error(line: &str) -> Option<Raised<'_>> {
    raised(line).filter(|r| !r.is_warning())
}

/// Where a dotted name (`[A-Za-z0-9_.]`) that starts `s` ends.
fn name_end(s: &str) -> usize {
    s.bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
        .unwrap_or(s.len())
}

fn last_part(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// `ray.exceptions.RayTaskError`: no empty part, the first not starting with a digit, the last
/// a class of the exception families.
fn is_class_path(name: &str) -> bool {
    if name.is_empty() || name.split('.').any(str::is_empty) {
        return false;
    }
    if name.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    let class = last_part(name);
    let capital = match class.as_bytes() {
        [b'_', second, ..] => second.is_ascii_uppercase(),
        [first, ..] => first.is_ascii_uppercase(),
        [] => false,
    };
    capital && SUFFIXES.iter().any(|s| class.ends_with(s))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn reads_the_exception_lines_ray_writes() {
        let r = raised("ValueError: feature table 'users_v2' not found").unwrap();
        assert_eq!(
            (r.name, r.wrapped, r.text),
            ("ValueError", None, "feature table 'users_v2' not found")
        );
        let r = raised("ray.exceptions.RayTaskError(ValueError): ray::f() (pid=1, ip=10.0.0.1)")
            .unwrap();
        assert_eq!(r.class(), "RayTaskError");
        assert_eq!(r.kind(), "RayTaskError(ValueError)");
        assert_eq!(r.text, "ray::f() (pid=1, ip=10.0.0.1)");
        let r = raised("KeyboardInterrupt").unwrap();
        assert_eq!((r.name, r.text), ("KeyboardInterrupt", ""));
        let r = raised(
            "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:",
        )
        .unwrap();
        assert_eq!(r.class(), "_InactiveRpcError");
        assert!(raised("requests.exceptions.ReadTimeout: HTTPConnectionPool(host='x')").is_some());
        assert!(raised("ray.exceptions.ActorDiedError:").is_some());
        let w = raised("FutureWarning: Tip: In future versions of Ray").unwrap();
        assert!(w.is_warning());
    }

    #[test]
    fn other_lines_are_not_exceptions() {
        for line in [
            "",
            "Traceback (most recent call last):",
            "INFO 2024-01-01 something",
            "error: lowercase",
            "  ValueError: indented, a frame's source",
            "ValueErrors are common",
            "ValueError:no space",
            "valueError: lower case class",
            "some.module: Error happened",
            "2024Error: digits first",
            "Error (x): text",
            "RayTaskError(: x",
            "ray..Error: x",
        ] {
            assert_eq!(raised(line), None, "{line:?}");
        }
    }
}
