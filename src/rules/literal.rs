//! Literal extraction for the prefilter: from a regex, a set of strings one of which every
//! match must contain. Deliberately conservative: when in doubt it returns nothing, and the
//! signal's regexes then run on every event of its sources.
//!
//! A branch's candidates are its runs of literal characters (each a one-element set) and its
//! non-optional groups (the set their own branches require, found recursively); the candidate
//! whose weakest member is longest wins. Inline flag groups (`(?i)`, `(?s)`) are skipped.

/// Minimum useful literal length; shorter ones would make the prefilter match everything.
const MIN_LITERAL: usize = 3;
/// A required group with more members than this is not split into alternatives.
const MAX_GROUP_SPLIT: usize = 8;
/// Groups nested deeper than this are not looked into.
const MAX_DEPTH: usize = 8;

/// The literals one of which every match of `pattern` contains, lower-cased. Empty when no
/// such set could be derived (the caller must then treat every event as a candidate).
pub fn required_literals(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = alternation(&chars, 0).unwrap_or_default();
    for l in &mut out {
        *l = l.to_lowercase();
    }
    out.sort();
    out.dedup();
    out
}

/// The set required by an alternation: every branch must give one.
fn alternation(chars: &[char], depth: usize) -> Option<Vec<String>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut out = Vec::new();
    for branch in split_top_level(chars) {
        let set = branch_set(branch, depth)?;
        out.extend(set);
    }
    (!out.is_empty()).then_some(out)
}

/// The characters from `from` on that shape groups (`(`, `)` and `|` outside classes and
/// escapes), each with the group depth after it.
fn structure(chars: &[char], from: usize) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let (mut depth, mut in_class, mut escaped) = (0i32, false, false);
    chars
        .iter()
        .enumerate()
        .skip(from)
        .filter_map(move |(i, &c)| {
            if escaped {
                escaped = false;
                return None;
            }
            match c {
                '\\' => escaped = true,
                '[' if !in_class => in_class = true,
                ']' if in_class => in_class = false,
                '(' | ')' | '|' if !in_class => {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    return Some((i, c, depth));
                }
                _ => {}
            }
            None
        })
}

/// Splits on `|` outside groups and classes.
fn split_top_level(chars: &[char]) -> Vec<&[char]> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c, depth) in structure(chars, 0) {
        if c == '|' && depth == 0 {
            parts.push(&chars[start..i]);
            start = i + 1;
        }
    }
    parts.push(&chars[start..]);
    parts
}

/// Index just past the group that opens at `open` (the matching `)`), or the end.
fn group_end(chars: &[char], open: usize) -> usize {
    structure(chars, open)
        .find(|&(_, c, depth)| c == ')' && depth == 0)
        .map_or(chars.len(), |(i, ..)| i + 1)
}

/// Is the element ending at `end` made optional by the quantifier after it?
/// The width of a counted repetition (`{3}`, `{1,200}`, `{0,}`) at `at`, if one starts there.
fn counted_repetition(chars: &[char], at: usize) -> Option<usize> {
    if chars.get(at) != Some(&'{') {
        return None;
    }
    let mut j = at + 1;
    let digits = |j: &mut usize| {
        let from = *j;
        while chars.get(*j).is_some_and(char::is_ascii_digit) {
            *j += 1;
        }
        *j > from
    };
    if !digits(&mut j) {
        return None;
    }
    if chars.get(j) == Some(&',') {
        j += 1;
        digits(&mut j);
    }
    (chars.get(j) == Some(&'}')).then_some(j + 1 - at)
}

fn optional_after(chars: &[char], end: usize) -> bool {
    match chars.get(end) {
        Some('?') | Some('*') => true,
        Some('{') => chars.get(end + 1) == Some(&'0'),
        _ => false,
    }
}

/// The best required set of one branch (a sequence of elements).
fn branch_set(chars: &[char], depth: usize) -> Option<Vec<String>> {
    branch_set_and_runs(chars, depth).0
}

/// The best required set of a branch, and every literal run at its top level (all of which
/// every match contains).
fn branch_set_and_runs(chars: &[char], depth: usize) -> (Option<Vec<String>>, Vec<String>) {
    let mut runs: Vec<String> = Vec::new();
    let mut best: Option<Vec<String>> = None;
    let mut consider = |set: Vec<String>, best: &mut Option<Vec<String>>| {
        if let [one] = set.as_slice() {
            if one.len() >= MIN_LITERAL {
                runs.push(one.clone());
            }
        }
        let weakest = |s: &Vec<String>| s.iter().map(String::len).min().unwrap_or(0);
        if set.is_empty() || weakest(&set) < MIN_LITERAL {
            return;
        }
        let better = match best {
            None => true,
            Some(b) => {
                (weakest(&set), std::cmp::Reverse(set.len()))
                    > (weakest(b), std::cmp::Reverse(b.len()))
            }
        };
        if better {
            *best = Some(set);
        }
    };
    let mut run = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '(' {
            consider(vec![std::mem::take(&mut run)], &mut best);
            let end = group_end(chars, i);
            let inner_start = i + 1;
            let inner_end = end.saturating_sub(1).max(inner_start);
            let inner = &chars[inner_start..inner_end];
            // Inline flags `(?i)`, `(?s)`, `(?m)`: no content. Named and non-capturing groups:
            // skip the prefix.
            let content: Option<&[char]> = match inner {
                ['?', rest @ ..] => {
                    if matches!(rest.first(), Some('P') | Some('<')) {
                        // A named group: `(?P<name>…)` or `(?<name>…)`.
                        rest.iter()
                            .position(|&x| x == '>')
                            .map(|gt| &rest[gt + 1..])
                    } else {
                        // Flags, then `:` (a non-capturing group) or nothing (a flag group).
                        let flags = rest
                            .iter()
                            .take_while(|x| x.is_ascii_alphabetic() || **x == '-')
                            .count();
                        match rest.get(flags) {
                            Some(':') => Some(&rest[flags + 1..]),
                            None => Some(&[][..]),
                            Some(_) => None,
                        }
                    }
                }
                _ => Some(inner),
            };
            if !optional_after(chars, end) {
                if let Some(set) = content.and_then(|c| alternation(c, depth + 1)) {
                    consider(set, &mut best);
                }
            }
            i = end;
            while i < chars.len() && matches!(chars[i], '?' | '*' | '+') {
                i += 1;
            }
            if let Some(w) = counted_repetition(chars, i) {
                i += w;
            }
            continue;
        }
        // A counted repetition (`{1,200}`) repeats what came before; its digits are not text.
        if let Some(w) = counted_repetition(chars, i) {
            consider(vec![std::mem::take(&mut run)], &mut best);
            i += w;
            continue;
        }
        let (lit, width) = match c {
            '\\' => match chars.get(i + 1) {
                Some(&e) if e.is_ascii_alphanumeric() => (None, 2),
                Some(&e) => (Some(e), 2),
                None => (None, 1),
            },
            '[' => {
                let mut j = i + 1;
                if chars.get(j) == Some(&'^') {
                    j += 1;
                }
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
        let optional = optional_after(chars, i + width);
        match lit {
            Some(l) if !optional => {
                run.push(l);
                if matches!(chars.get(i + width), Some('+') | Some('{')) {
                    consider(vec![std::mem::take(&mut run)], &mut best);
                }
            }
            _ => consider(vec![std::mem::take(&mut run)], &mut best),
        }
        i += width;
    }
    consider(vec![run], &mut best);
    (best, runs)
}

/// Whether a pattern matches some letters without regard to case (an `(?i)` flag anywhere):
/// its literals are then lower-cased and must be looked for case-insensitively.
pub fn folds_case(pattern: &str) -> bool {
    pattern.contains("(?i")
}

/// For the raw-line sieve: the alternatives of `pattern`, each a list of literals that every
/// match of that alternative contains together, as written (lower-cased when the pattern
/// [folds case](folds_case)). Empty when some alternative
/// has no literal. A line that holds every literal of one alternative is a candidate; this
/// is sharper than one literal when the longest literal is common (`/api/serve/`) and the
/// telling one is short (`" 404`).
pub fn required_conjunctions(pattern: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = pattern.chars().collect();
    // A pattern written to span lines may find its literals on different physical lines:
    // then one literal per alternative is all that can be asked of a line. (`(?m)` only
    // moves `^` and `$` to line ends; it does not let a match cross one.)
    let multi_line = pattern.contains("\\n") || pattern.contains("(?s");
    let fold = folds_case(pattern);
    let case = |l: &str| {
        if fold {
            l.to_lowercase()
        } else {
            l.to_string()
        }
    };
    if multi_line {
        let mut lits = alternation(&chars, 0).unwrap_or_default();
        lits.sort();
        lits.dedup();
        return lits.iter().map(|l| vec![case(l)]).collect();
    }
    let mut out = Vec::new();
    for branch in split_top_level(&chars) {
        let (best, runs) = branch_set_and_runs(branch, 0);
        if !runs.is_empty() {
            let base: Vec<String> = runs.iter().map(|r| case(r)).collect();
            match best {
                // A required group (`(context deadline exceeded|request canceled)`) sharpens
                // the runs: one alternative per member of the group.
                Some(set) if set.len() > 1 && set.len() <= MAX_GROUP_SPLIT => {
                    for member in set {
                        let mut alt = base.clone();
                        alt.push(case(&member));
                        out.push(alt);
                    }
                }
                _ => out.push(base),
            }
            continue;
        }
        match best {
            Some(set) => out.extend(set.into_iter().map(|l| vec![case(&l)])),
            None => return Vec::new(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(pattern: &str, expect: &[&str]) {
        assert_eq!(required_literals(pattern), expect, "pattern {pattern:?}");
    }

    #[test]
    fn counted_repetitions_are_not_text() {
        check(r"Health check for .{1,200} failed:", &["health check for "]);
        check(r"(ab|cd){2}xyz", &["xyz"]);
        check(r"timeout: [^\n]{0,100}", &["timeout: "]);
        assert_eq!(
            required_conjunctions(r"Health check for .{1,200} failed: x"),
            vec![vec![
                "Health check for ".to_string(),
                " failed: x".to_string()
            ]]
        );
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

    #[test]
    fn conjunctions() {
        assert_eq!(
            required_conjunctions(
                r#""(PUT|GET) /api/serve/(applications|deployments)/[^" ]* HTTP/1\.[01]" 404\b"#
            ),
            vec![vec![
                " /api/serve/".to_string(),
                " HTTP/1.".to_string(),
                "\" 404".to_string()
            ]]
        );
        assert_eq!(
            required_conjunctions(r"(?P<c>Foo|Barbaz) fail|x"),
            Vec::<Vec<String>>::new()
        );
        assert_eq!(
            required_conjunctions(r"(?P<c>Foo|Barbaz)"),
            vec![vec!["Foo".to_string()], vec!["Barbaz".to_string()]]
        );
        assert_eq!(
            required_conjunctions(r"(?i)(?P<c>Foo|Barbaz)"),
            vec![vec!["foo".to_string()], vec!["barbaz".to_string()]]
        );
        // A required group splits the runs into one alternative per member.
        assert_eq!(
            required_conjunctions(r"GET /api/x: (context deadline exceeded|request canceled)"),
            vec![
                vec![
                    "GET /api/x: ".to_string(),
                    "context deadline exceeded".to_string()
                ],
                vec!["GET /api/x: ".to_string(), "request canceled".to_string()],
            ]
        );
    }

    #[test]
    fn groups_are_looked_into() {
        check(
            r"(?P<c>KubeletHasDiskPressure|KubeletHasInsufficientMemory)",
            &["kubelethasdiskpressure", "kubelethasinsufficientmemory"],
        );
        check(r"^(?P<c>(Disk|Memory|PID)Pressure)\s+True\b", &["pressure"]);
        check(
            r"(?s)(?:Deploying app \x27|The deployment failed to start \d+)",
            &["deploying app ", "the deployment failed to start "],
        );
        check(
            r"(?m)^[ \t]*-?(?P<key>importPath|routePrefix)\x22?:",
            &["importpath", "routeprefix"],
        );
        check(r"(optional)?x", &[]);
        check(r"(?i)(ab|cd)", &[]);
    }
}
