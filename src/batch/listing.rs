//! The arguments of `raysift batch` made into the list of bundles (`list_inputs`): `*` and
//! `?` patterns the shell left alone expanded component by component, directory arguments
//! walked down (a folder is an unpacked bundle or a shelf of bundles, by the rules
//! `list_inputs` gives), and paths cleaned, sorted and kept once.
//!
//! Invariant: the list depends only on what the arguments name: not on the order the
//! directories list their files (every listing is sorted), nor on how a path is spelled (one
//! file or folder is one bundle, and a path inside a folder bundle is part of it).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::inputs::{is_archive_file, is_compressed_log, Input, Kind};
use crate::bundle::archive_name;

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// Whether one path component matches one pattern component (`*`, `?`); as in a shell, a
/// wildcard does not match a leading dot.
pub(super) fn name_matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    crate::glob::glob_match(pattern.as_bytes(), name.as_bytes())
}

/// Expands a pattern component by component, as a shell would: `*` and `?` never cross a
/// `/`. Returns the existing matches, sorted.
fn expand_glob(pattern: &str) -> Vec<PathBuf> {
    let start = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    let mut current = vec![start];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for base in &current {
            if !has_wildcard(part) {
                next.push(base.join(part));
                continue;
            }
            let listed = if base.as_os_str().is_empty() {
                Path::new(".")
            } else {
                base.as_path()
            };
            let Ok(entries) = std::fs::read_dir(listed) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if let Some(name) = name.to_str() {
                    if name_matches(part, name) {
                        next.push(base.join(name));
                    }
                }
            }
        }
        next.sort();
        current = next;
    }
    current.retain(|p| !p.as_os_str().is_empty() && p.exists());
    current
}

/// Lists the bundles the arguments name, sorted by path, each once.
///
/// A file argument is one bundle whatever its name. A directory argument is walked down, and
/// each folder met is one of three things:
///
/// 1. **An unpacked bundle** when it directly holds a *log file*: a regular file (or a link to
///    one), not named like an archive, whose content raysift recognises as a Ray, KubeRay or
///    Kubernetes source (the classification `analyze` makes of its first 16 KiB). Everything
///    under it belongs to it, archives and compressed logs included.
/// 2. Below the argument only: **an unpacked bundle** when no [archive](is_archive_file) lies
///    anywhere under it and it holds at least one file (a Troubleshoot `support-bundle-…`
///    folder keeps its files in sub-folders).
/// 3. Otherwise **a shelf**: each archive file directly in it is a bundle, each sub-folder is
///    looked at by these rules, and other files (notes, a README, results) are ignored. A
///    compressed single log (`raylet.out.1.gz`) directly on a shelf is a bundle of its own.
///
/// A directory argument that yields no bundle this way (it holds files raysift does not
/// recognise, and no sub-folder or archive) is itself one bundle, as is any directory given
/// that directly holds a log file. Links to directories are not followed. An argument that
/// does not exist and holds `*` or `?` is expanded here, each match taken as if given; anything
/// else is a bundle, whose analysis reports what is wrong with it.
///
/// Paths are cleaned before they are compared (`./a.tar.gz`, `a.tar.gz` and `d/../a.tar.gz`
/// are one, as is a bundle listed under a directory argument and given again): among several
/// spellings of one file or folder, the first by path (then by shard key) is kept. A path
/// that lies inside a folder listed as a bundle is part of it, and dropped.
pub(super) fn list_inputs(args: &[PathBuf]) -> Vec<Input> {
    let mut out = Vec::new();
    for arg in args {
        let pattern = arg.to_str().filter(|s| has_wildcard(s));
        match pattern {
            Some(p) if !arg.exists() => {
                let matches = expand_glob(p);
                if matches.is_empty() {
                    out.push(Input::broken(p.to_string(), "no file matches".to_string()));
                }
                for m in matches {
                    add_argument(&m, &mut out);
                }
            }
            _ => add_argument(arg, &mut out),
        }
    }
    out.sort_by(|a, b| a.shown.cmp(&b.shown).then(a.key.cmp(&b.key)));
    let mut seen = BTreeSet::new();
    let mut folders = BTreeSet::new();
    let mut kept = Vec::new();
    for input in out {
        let identity = std::fs::canonicalize(&input.path).unwrap_or_else(|_| input.path.clone());
        if !seen.insert((input.problem.is_some(), identity.clone())) {
            continue;
        }
        if input.kind == Kind::Folder && input.problem.is_none() {
            folders.insert(identity.clone());
        }
        kept.push((identity, input));
    }
    kept.into_iter()
        .filter(|(identity, _)| !identity.ancestors().skip(1).any(|a| folders.contains(a)))
        .map(|(_, input)| input)
        .collect()
}

/// The path without `.` components, and with `a/..` removed where that names the same file
/// (it does not when `a` is a link): what is shown, compared and hashed.
pub(super) fn clean_path(path: &Path) -> PathBuf {
    let mut plain = PathBuf::new();
    let mut lexical = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                plain.push("..");
                match lexical.components().next_back() {
                    Some(Component::Normal(_)) => {
                        lexical.pop();
                    }
                    Some(Component::RootDir | Component::Prefix(_)) => {}
                    _ => lexical.push(".."),
                }
            }
            other => {
                plain.push(other.as_os_str());
                lexical.push(other.as_os_str());
            }
        }
    }
    let dot = |p: PathBuf| {
        if p.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            p
        }
    };
    let (plain, lexical) = (dot(plain), dot(lexical));
    if plain == lexical {
        return plain;
    }
    match (
        std::fs::canonicalize(&plain),
        std::fs::canonicalize(&lexical),
    ) {
        (Ok(a), Ok(b)) if a == b => lexical,
        (Err(_), Err(_)) => lexical,
        _ => plain,
    }
}

fn add_argument(arg: &Path, out: &mut Vec<Input>) {
    let arg = clean_path(arg);
    if !arg.is_dir() {
        out.push(Input::given(&arg));
        return;
    }
    let before = out.len();
    let listed = walk(&arg, "", out);
    if listed && out.len() == before {
        out.push(Input::given(&arg));
    }
}

/// What a directory entry is, to the walk.
enum Entry {
    /// A tar, zip or gzipped tar (or a file named like one that is none: its line says so).
    Archive(PathBuf),
    /// A `.gz` that holds one compressed file rather than a tar.
    CompressedLog(PathBuf),
    /// Any other regular file.
    Plain(PathBuf),
    Folder(PathBuf),
}

/// A directory's entries, in name order; `None` when it cannot be listed (reported in `out`).
fn entries(dir: &Path, out: &mut Vec<Input>) -> Option<Vec<(String, Entry)>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            out.push(Input::broken(
                dir.display().to_string(),
                format!("cannot list directory: {e}"),
            ));
            return None;
        }
    };
    let mut got = Vec::new();
    for entry in listing {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                out.push(Input::broken(
                    dir.display().to_string(),
                    format!("cannot list directory: {e}"),
                ));
                continue;
            }
        };
        // Under `.`, `x` rather than `./x`: the path is shown, and compared with others.
        let path = if dir == Path::new(".") {
            PathBuf::from(entry.file_name())
        } else {
            entry.path()
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let entry = if kind.is_dir() {
            Entry::Folder(path)
        } else if kind.is_file() || kind.is_symlink() && path.is_file() {
            if !archive_name(&name) {
                Entry::Plain(path)
            } else if is_compressed_log(&path) {
                Entry::CompressedLog(path)
            } else {
                Entry::Archive(path)
            }
        } else {
            continue;
        };
        got.push((name, entry));
    }
    got.sort_by(|a, b| a.0.cmp(&b.0));
    Some(got)
}

/// Whether a plain file's first 16 KiB are recognisably a Ray, KubeRay or Kubernetes source.
fn is_log_file(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(crate::classify::SNIFF_BYTES);
    if file
        .take(crate::classify::SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    // By content alone: names decide too much on their own (`…-operator-….toml` is named like
    // an operator log), and a folder with logs nearly always has one that its content gives away.
    crate::classify::classify("unnamed", &head) != crate::event::SourceKind::Unknown
}

/// Whether an archive lies anywhere under `dir`, and whether any file does. Unlistable
/// folders count as holding nothing (the walk reports them when it gets there).
fn scan(dir: &Path) -> (bool, bool) {
    let mut files = false;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() || kind.is_symlink() && path.is_file() {
                if is_archive_file(&path) {
                    return (true, true);
                }
                files = true;
            }
        }
    }
    (false, files)
}

/// Walks `dir` (`rel` is `dir` relative to the argument; empty for the argument itself),
/// adding the bundles it finds by the rules of [`list_inputs`]. `false` when `dir` itself
/// cannot be listed.
fn walk(dir: &Path, rel: &str, out: &mut Vec<Input>) -> bool {
    let Some(listing) = entries(dir, out) else {
        return false;
    };
    let folder = |out: &mut Vec<Input>| {
        if rel.is_empty() {
            out.push(Input::given(dir));
        } else {
            out.push(Input::found(
                dir.to_path_buf(),
                rel.to_string(),
                Kind::Folder,
            ));
        }
    };
    let holds_log = listing
        .iter()
        .any(|(_, e)| matches!(e, Entry::Plain(p) if is_log_file(p)));
    if holds_log {
        folder(out);
        return true;
    }
    if !rel.is_empty() {
        let (archives, files) = scan(dir);
        if !archives {
            if files {
                folder(out);
            }
            return true;
        }
    }
    for (name, entry) in listing {
        let key = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        match entry {
            Entry::Archive(path) => out.push(Input::found(path, key, Kind::Archive)),
            Entry::CompressedLog(path) => out.push(Input::found(path, key, Kind::File)),
            Entry::Folder(path) => {
                walk(&path, &key, out);
            }
            Entry::Plain(_) => {}
        }
    }
    true
}
