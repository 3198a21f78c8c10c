//! The rule library: the built-in patterns compiled into the binary, plus user pattern
//! directories (`--patterns DIR`), which add rules or override built-in ones by code.

use std::path::Path;

use crate::rules::loader::{check_rule, load_rule, load_rule_trusted, LoadError};
use crate::rules::Rule;

include!(concat!(env!("OUT_DIR"), "/patterns.rs"));

/// The built-in rules, in code order. Their sample lines are not run here: the test suite
/// runs them (`builtin_checked`), and they cannot change after the build.
pub fn builtin() -> Result<Vec<Rule>, LoadError> {
    builtin_with(load_rule_trusted)
}

/// The built-in rules with every sample line checked.
pub fn builtin_checked() -> Result<Vec<Rule>, LoadError> {
    builtin_with(load_rule)
}

fn builtin_with(load: fn(&str, &str) -> Result<Rule, LoadError>) -> Result<Vec<Rule>, LoadError> {
    use rayon::prelude::*;
    // Reading the files (their regexes are compiled on first use, `Pattern`) is most of what
    // is left of start-up: spread it over the cores. The first error in library order is the
    // one reported.
    let loaded: Vec<Result<Rule, LoadError>> = BUILTIN_PATTERNS
        .par_iter()
        .map(|(name, text)| load(&format!("patterns/{name}"), text))
        .collect();
    let mut rules = loaded
        .into_iter()
        .collect::<Result<Vec<Rule>, LoadError>>()?;
    check_unique(&rules)?;
    rules.sort_by(|a, b| a.code.cmp(&b.code));
    Ok(rules)
}

/// Loads a pattern directory (every `*.toml` in it, sorted by name) or a single pattern
/// file, and reports every problem of every file (each with its file, key and line), not
/// only the first: a directory with no pattern file, a file that cannot be read, each file's
/// own problems ([`check_rule`]), a file whose name does not start with its rule's code, and
/// codes used twice.
pub fn load_dir(path: &Path) -> Result<Vec<Rule>, Vec<LoadError>> {
    let problem = |origin: String, problem: String| LoadError {
        origin,
        key: String::new(),
        line: None,
        problem,
    };
    let shown = path.display().to_string();
    let mut paths: Vec<_> = if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        std::fs::read_dir(path)
            .map_err(|e| {
                vec![problem(
                    shown.clone(),
                    format!("cannot read pattern directory: {e}"),
                )]
            })?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect()
    };
    if paths.is_empty() {
        return Err(vec![problem(
            shown,
            "no pattern file (*.toml) in this directory".into(),
        )]);
    }
    paths.sort();
    let mut rules = Vec::with_capacity(paths.len());
    let mut problems = Vec::new();
    for p in paths {
        let origin = p.display().to_string();
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) => {
                problems.push(problem(origin, format!("cannot read: {e}")));
                continue;
            }
        };
        let file_name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut own: Vec<LoadError> = check_file_name(&origin, &file_name, &text)
            .into_iter()
            .collect();
        match check_rule(&origin, &text) {
            Ok(rule) => rules.push(rule),
            Err(e) => own.extend(e),
        }
        // In the order of the file (stable: problems of one key keep their order).
        own.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
        problems.extend(own);
    }
    problems.extend(duplicate_codes(&rules));
    if problems.is_empty() {
        Ok(rules)
    } else {
        Err(problems)
    }
}

/// A pattern file is named `<CODE>-<name>.toml`: its name starts with its rule's code.
fn check_file_name(origin: &str, file_name: &str, text: &str) -> Option<LoadError> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let code = table.get("code")?.as_str()?;
    let (line, _) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with("code"))?;
    (!file_name.starts_with(&format!("{code}-"))).then(|| LoadError {
        origin: origin.to_string(),
        key: "code".into(),
        line: Some(line + 1),
        problem: format!(
            "the file name must start with the rule's code: {code}-<name>.toml, not {file_name}"
        ),
    })
}

/// Built-in rules with user rules added; a user rule replaces the built-in one of the same code.
pub fn with_overrides(mut base: Vec<Rule>, user: Vec<Rule>) -> Vec<Rule> {
    for rule in user {
        match base.iter().position(|r| r.code == rule.code) {
            Some(i) => base[i] = rule,
            None => base.push(rule),
        }
    }
    base.sort_by(|a, b| a.code.cmp(&b.code));
    base
}

fn check_unique(rules: &[Rule]) -> Result<(), LoadError> {
    match duplicate_codes(rules).into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Each rule whose code an earlier rule already uses.
fn duplicate_codes(rules: &[Rule]) -> Vec<LoadError> {
    let mut out = Vec::new();
    for (i, b) in rules.iter().enumerate() {
        if let Some(a) = rules.iter().take(i).find(|a| a.code == b.code) {
            out.push(LoadError {
                origin: b.origin.clone(),
                key: "code".into(),
                line: None,
                problem: format!("code {} is already used by {}", a.code, a.origin),
            });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    /// The samples `builtin` does not run at start-up hold for every built-in rule.
    #[test]
    fn every_builtin_sample_holds() {
        if let Err(e) = super::builtin_checked() {
            panic!("{e}");
        }
    }

    /// Start-up compiles no built-in regex: each waits for a line to ask (`Pattern`), and
    /// the checked library (`builtin_checked`, as `--patterns` loads a user's) compiles all.
    #[test]
    fn builtin_regexes_wait_for_their_first_line_and_checked_ones_do_not() {
        let patterns = |rules: &[crate::rules::Rule]| -> Vec<(bool, String)> {
            rules
                .iter()
                .flat_map(|r| &r.signals)
                .flat_map(|s| {
                    s.text
                        .iter()
                        .chain(&s.not_text)
                        .chain(s.fields.iter().map(|(_, p)| p))
                })
                .map(|p| (p.is_compiled(), p.as_str().to_string()))
                .collect()
        };
        let (Ok(lazy), Ok(checked)) = (super::builtin(), super::builtin_checked()) else {
            panic!("the built-in library loads");
        };
        let (lazy, checked) = (patterns(&lazy), patterns(&checked));
        assert!(lazy.len() > 500, "{} regexes", lazy.len());
        assert!(lazy.iter().all(|(compiled, _)| !compiled));
        assert!(checked.iter().all(|(compiled, _)| *compiled));
        let sources = |v: &[(bool, String)]| v.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>();
        assert_eq!(sources(&lazy), sources(&checked));
    }

    /// The built-in files follow the naming rule `check-patterns` holds user files to.
    #[test]
    fn every_builtin_file_is_named_after_its_code() {
        for (name, text) in super::BUILTIN_PATTERNS {
            let file_name = name.rsplit('/').next().unwrap_or(name);
            if let Some(e) = super::check_file_name(name, file_name, text) {
                panic!("{e}");
            }
        }
    }
}
