//! The rule library: the built-in patterns compiled into the binary, plus user pattern
//! directories (`--patterns DIR`), which add rules or override built-in ones by code.

use std::path::Path;

use crate::rules::loader::{load_rule, load_rule_trusted, LoadError};
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
    // Compiling some 700 case-insensitive regexes is most of raysift's start-up: spread it
    // over the cores. The first error in library order is the one reported.
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

/// Loads every `*.toml` in a directory, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Rule>, LoadError> {
    let io_err = |e: std::io::Error| LoadError {
        origin: dir.display().to_string(),
        key: String::new(),
        problem: format!("cannot read pattern directory: {e}"),
    };
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(io_err)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut rules = Vec::with_capacity(paths.len());
    for p in paths {
        let origin = p.display().to_string();
        let text = std::fs::read_to_string(&p).map_err(|e| LoadError {
            origin: origin.clone(),
            key: String::new(),
            problem: format!("cannot read: {e}"),
        })?;
        rules.push(load_rule(&origin, &text)?);
    }
    check_unique(&rules)?;
    Ok(rules)
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
    for (i, a) in rules.iter().enumerate() {
        if let Some(b) = rules.iter().skip(i + 1).find(|b| b.code == a.code) {
            return Err(LoadError {
                origin: b.origin.clone(),
                key: "code".into(),
                problem: format!("code {} is already used by {}", a.code, a.origin),
            });
        }
    }
    Ok(())
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
}
