//! What a bundle to analyse is: an `Input` (the path opened, the path shown, the key its
//! shard is chosen by, what it is on disk, or why it cannot even be tried), its `Kind` as
//! `--dry-run` names it (an archive is a file named like one that is not a `.gz` holding a
//! single log), and the `--shard` that keeps it or not ([`Shard`]).
//!
//! Invariant: a key's shard is FNV-1a 64 of its bytes modulo the count of shards, fixed by
//! the hash's definition, so a re-listing, another machine or another build splits the same
//! way.

use std::io;
use std::path::{Path, PathBuf};

use crate::bundle::archive_name;

/// One bundle to analyse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Input {
    pub(super) path: PathBuf,
    /// The path as given or listed: the line's `path` and what `--skip-done` compares.
    pub(super) shown: String,
    /// What `--shard` hashes: the path relative to the directory argument it was found
    /// under, else the path as given.
    pub(super) key: String,
    /// Why it cannot even be tried (a pattern that matches nothing, a directory that cannot
    /// be listed).
    pub(super) problem: Option<String>,
    pub(super) kind: Kind,
}

/// What a bundle is on disk, as `--dry-run` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A file named like an archive (`.tar.gz`, `.tgz`, `.tar`, `.zip`, a `.gz` holding a tar).
    Archive,
    /// An unpacked bundle.
    Folder,
    /// Any other file (a single log, compressed or not).
    File,
    /// Nothing there (or a pattern that matched nothing, a directory that cannot be listed).
    Missing,
}

impl Kind {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Kind::Archive => "archive",
            Kind::Folder => "folder",
            Kind::File => "file",
            Kind::Missing => "missing",
        }
    }

    fn of(path: &Path) -> Kind {
        match std::fs::metadata(path) {
            Err(_) => Kind::Missing,
            Ok(m) if m.is_dir() => Kind::Folder,
            Ok(_) if is_archive_file(path) => Kind::Archive,
            Ok(_) => Kind::File,
        }
    }
}

impl Input {
    pub(super) fn given(path: &Path) -> Input {
        let shown = path.display().to_string();
        Input {
            path: path.to_path_buf(),
            key: shown.clone(),
            shown,
            problem: None,
            kind: Kind::of(path),
        }
    }

    /// A bundle found under a directory argument, `key` its path relative to the argument.
    pub(super) fn found(path: PathBuf, key: String, kind: Kind) -> Input {
        Input {
            shown: path.display().to_string(),
            path,
            key,
            problem: None,
            kind,
        }
    }

    pub(super) fn broken(shown: String, problem: String) -> Input {
        Input {
            path: PathBuf::from(&shown),
            key: shown.clone(),
            shown,
            problem: Some(problem),
            kind: Kind::Missing,
        }
    }
}

/// `--shard I/N`: keep the bundles whose key hashes to `I` modulo `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parses `I/N` (0-based `I`, as a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`).
    ///
    /// # Errors
    ///
    /// A message for the user when the text is not `I/N` with `N ≥ 1` and `I < N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let usage = |why: &str| format!("--shard {s:?}: {why}");
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| usage("expected I/N, such as 0/4 (shard I of N, counted from 0)"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| usage("I must be a whole number (is JOB_COMPLETION_INDEX set?)"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| usage("N must be a whole number"))?;
        if count == 0 {
            return Err(usage("N must be at least 1"));
        }
        if index >= count {
            return Err(usage(&format!(
                "I must be below N: shards are numbered 0 to {}",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    pub fn keeps(&self, key: &str) -> bool {
        fnv1a64(key.as_bytes()) % self.count == self.index
    }
}

/// FNV-1a, 64 bits: fixed by its definition, so shards agree across machines, Rust versions
/// and raysift releases (std's hashers promise none of that).
pub(super) fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(PRIME);
    }
    hash
}

/// Whether a file is an archive to the walk: named like one (`bundle::archive_name`) and not a
/// `.gz` whose content is one compressed file rather than a tar (`raylet.out.1.gz`).
pub(super) fn is_archive_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    archive_name(&name) && !is_compressed_log(path)
}

/// A `*.gz` (not `*.tar.gz`) that is gzip and whose first 512 inflated bytes are not a tar
/// header (`ustar` at 257). A file that is not gzip at all is not one: it stays an archive,
/// whose line says it is none.
pub(super) fn is_compressed_log(path: &Path) -> bool {
    use std::io::Read;
    let lower = path.to_string_lossy().to_ascii_lowercase();
    if !lower.ends_with(".gz") || lower.ends_with(".tar.gz") {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut magic = [0u8; 2];
    let mut head = io::BufReader::new(file);
    if head.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut inflated = Vec::with_capacity(512);
    let mut decoder = flate2::read::GzDecoder::new(file).take(512);
    // A damaged stream keeps what inflated before the damage.
    let _ = decoder.read_to_end(&mut inflated);
    inflated.get(257..262) != Some(b"ustar")
}
