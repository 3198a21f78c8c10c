//! Literal extraction for the prefilter: from a regex, a set of strings one of which every
//! match must contain. Deliberately conservative: when in doubt it returns nothing, and the
//! signal's regexes then run on every event of its sources.

/// Minimum useful literal length; shorter ones would make the prefilter match everything.
const MIN_LITERAL: usize = 3;

/// The literals one of which every match of `pattern` contains, lower-cased. Empty when no
/// such set could be derived (the caller must then treat every event as a candidate).
pub fn required_literals(pattern: &str) -> Vec<String> {
    let branches = split_top_level_alternation(pattern);
    let mut out = Vec::new();
    for branch in branches {
        match longest_literal(branch) {
            Some(lit) if lit.len() >= MIN_LITERAL => out.push(lit.to_lowercase()),
            _ => return Vec::new(),
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Splits on `|` outside groups and classes. A pattern with a group that contains `|` is
/// still fine: the group is simply not a literal.
fn split_top_level_alternation(pattern: &str) -> Vec<&str> {
    let bytes = pattern.as_bytes();
    let (mut depth, mut in_class, mut escaped) = (0i32, false, false);
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' => escaped = true,
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'(' if !in_class => depth += 1,
            b')' if !in_class => depth -= 1,
            b'|' if !in_class && depth == 0 => {
                parts.push(&pattern[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&pattern[start..]);
    parts
}

/// The longest run of literal characters at the top level of a branch (outside groups and
/// classes), honouring quantifiers: a character followed by `?`, `*` or `{0` is optional and
/// ends the run without being part of it.
fn longest_literal(branch: &str) -> Option<String> {
    let chars: Vec<char> = branch.chars().collect();
    let mut best = String::new();
    let mut run = String::new();
    let mut i = 0;
    let mut depth = 0i32;
    let flush = |run: &mut String, best: &mut String| {
        if run.len() > best.len() {
            *best = run.clone();
        }
        run.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        // Skip inline flags such as (?i) at the start.
        if c == '(' {
            flush(&mut run, &mut best);
            // A group: skip to its matching parenthesis; its content is not required as a
            // literal unless we can prove it (we cannot cheaply), so treat it as a break.
            let mut d = 0;
            let mut escaped = false;
            let mut in_class = false;
            while i < chars.len() {
                let g = chars[i];
                if escaped {
                    escaped = false;
                } else if g == '\\' {
                    escaped = true;
                } else if g == '[' && !in_class {
                    in_class = true;
                } else if g == ']' && in_class {
                    in_class = false;
                } else if g == '(' && !in_class {
                    d += 1;
                } else if g == ')' && !in_class {
                    d -= 1;
                    if d == 0 {
                        break;
                    }
                }
                i += 1;
            }
            i += 1;
            // A quantifier after the group does not matter: the group was never in the run.
            while i < chars.len() && matches!(chars[i], '?' | '*' | '+') {
                i += 1;
            }
            let _ = depth;
            depth = 0;
            continue;
        }
        let (lit, width) = match c {
            '\\' => match chars.get(i + 1) {
                Some(&e) if e.is_ascii_alphanumeric() => (None, 2), // \d \s \w \b …: not literal
                Some(&e) => (Some(e), 2),
                None => (None, 1),
            },
            '[' => {
                // A class: skip it.
                let mut j = i + 1;
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    if chars[j] == '\\' {
                        j += 1;
                    }
                    j += 1;
                }
                (None, j + 1 - i)
            }
            '.' | '^' | '$' | '+' | '*' | '?' | '{' | '}' | ')' | '|' => (None, 1),
            other => (Some(other), 1),
        };
        let next = chars.get(i + width).copied();
        let optional = matches!(next, Some('?') | Some('*'))
            || (next == Some('{') && chars.get(i + width + 1) == Some(&'0'));
        match lit {
            Some(l) if !optional => {
                run.push(l);
                // `+` after a literal: the literal is required once, but the run ends.
                if next == Some('+') || next == Some('{') {
                    flush(&mut run, &mut best);
                }
            }
            _ => flush(&mut run, &mut best),
        }
        i += width;
    }
    flush(&mut run, &mut best);
    (!best.is_empty()).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(pattern: &str, expect: &[&str]) {
        assert_eq!(required_literals(pattern), expect, "pattern {pattern:?}");
    }

    #[test]
    fn literals() {
        check(
            r"connect: connection refused",
            &["connect: connection refused"],
        );
        check(r"dial tcp [^ ]+: i/o timeout", &[": i/o timeout"]);
        check(r"(?i)Exiting with SIGTERM", &["exiting with sigterm"]);
        check(r"OOMKilled|exit code 137", &["exit code 137", "oomkilled"]);
        check(r"https?://x", &["http"]);
        check(
            r"replicas that have taken more than \d+s to be scheduled",
            &["replicas that have taken more than "],
        );
        check(r"a|b", &[]);
        check(r"\d+", &[]);
        check(r"Fail(ed)? to create", &[" to create"]);
        check(
            r#""PUT /api/serve/applications/ HTTP/1\.1" 200"#,
            &["\"put /api/serve/applications/ http/1.1\" 200"],
        );
    }
}
