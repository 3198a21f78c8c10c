//! Directory bundles and plain files on disk: walking a folder in sorted order, judging
//! symlinks against the canonical root, and memory-mapping regular files (or reading them in
//! pieces, when pieces were asked for and a file is larger than one).
//!
//! This module is the only place that maps files (and so the only `unsafe` in raysift). It
//! never opens anything that is not a regular file, so a FIFO or device in a bundle cannot
//! block the walk, and it never follows a link: a file reached through a link is read once,
//! as itself.

use std::fs::{self, DirEntry, File, FileType, Metadata};
use std::io::{self, Read};
use std::path::Path;
use std::time::UNIX_EPOCH;

use super::sniff::{self, Magic};
use super::{path, Bytes, Walker};

/// Walks `root` (already canonical) depth first, children sorted by name. An error reading
/// the root itself is returned; errors below it are diagnostics.
pub(super) fn walk_dir(w: &mut Walker<'_>, root: &Path) -> io::Result<()> {
    let first = children(w, root, "")?;
    // An explicit stack rather than recursion: a hostile bundle could nest folders deeply
    // enough to overflow the thread's stack.
    let mut stack = vec![(first.into_iter(), String::new())];
    while !w.stopped {
        let Some((siblings, prefix)) = stack.last_mut() else {
            break;
        };
        let Some(child) = siblings.next() else {
            stack.pop();
            continue;
        };
        let name = path::escape(child.file_name().as_encoded_bytes()).into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let kind = match child.file_type() {
            Ok(kind) => kind,
            Err(e) => {
                w.diag(rel, format!("unreadable: {e}"));
                continue;
            }
        };
        if kind.is_dir()
            && !w.limits.read_vcs
            && super::is_vcs_folder(&child.file_name().to_string_lossy())
        {
            w.vcs_skipped.entry(rel).or_default();
        } else if kind.is_dir() {
            if let Ok(grandchildren) = children(w, &child.path(), &rel) {
                stack.push((grandchildren.into_iter(), rel));
            }
        } else if kind.is_file() {
            plain_file(w, &child.path(), rel);
        } else if kind.is_symlink() {
            symlink(w, root, &child.path(), &rel);
        } else {
            w.diag(rel, format!("is {}, skipped", special(kind)));
        }
    }
    Ok(())
}

/// The entries of one directory sorted by name. A failure to list it is diagnosed (and
/// returned, so the root's failure can become an `OpenError`).
fn children(w: &mut Walker<'_>, dir: &Path, rel: &str) -> io::Result<Vec<DirEntry>> {
    let listing = fs::read_dir(dir).inspect_err(|e| {
        if !rel.is_empty() {
            w.diag(rel, format!("unreadable directory: {e}"));
        }
    })?;
    let mut entries = Vec::new();
    for entry in listing {
        match entry {
            Ok(entry) => entries.push(entry),
            Err(e) => w.diag(rel, format!("directory listing broken: {e}")),
        }
    }
    entries.sort_by_cached_key(DirEntry::file_name);
    Ok(entries)
}

/// Yields a regular file, or opens it as a nested archive when its name and magic say so.
fn plain_file(w: &mut Walker<'_>, full: &Path, rel: String) {
    let is_archive_name = sniff::archive_name(&rel);
    let file = match File::open(full) {
        Ok(file) => file,
        Err(e) => return w.diag(rel, format!("unreadable: {e}")),
    };
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return w.diag(rel, format!("unreadable: {e}")),
    };
    let mtime = mtime(&meta);
    // A large log is read in pieces, like an archive member, rather than mapped.
    if !is_archive_name && w.streams(meta.len()) {
        let mut file = file;
        w.plain_in_pieces(rel, mtime, Some(meta.len()), &mut file);
        return;
    }
    // Refuse an oversized plain file before mapping or reading any of it.
    if !is_archive_name && !w.admit(&rel, Some(meta.len())) {
        return;
    }
    let bytes = match map_file(&file, meta.len(), w.read_cap()) {
        Ok(bytes) => bytes,
        Err(e) => return w.diag(rel, format!("unreadable: {e}")),
    };
    let magic = sniff::sniff(&bytes);
    if !is_archive_name || magic == Magic::Other {
        return w.emit(rel, mtime, bytes);
    }
    if w.limits.max_depth == 0 {
        return w.diag(
            rel,
            "nested archive is deeper than the depth limit of 0, skipped",
        );
    }
    w.open_archive_bytes(Some(&rel), &rel, mtime, magic, &bytes, 1);
}

/// Judges a symlink without following it: a target inside the bundle is (or will be) read
/// as itself; one outside, or one that cannot be resolved, is diagnosed.
fn symlink(w: &mut Walker<'_>, root: &Path, full: &Path, rel: &str) {
    let shown = fs::read_link(full).map_or_else(
        |_| "?".to_owned(),
        |t| path::escape(t.as_os_str().as_encoded_bytes()).into_owned(),
    );
    match fs::canonicalize(full) {
        Ok(target) if target.starts_with(root) => {}
        Ok(_) => w.diag(
            rel,
            format!("symlink target {shown} is outside the bundle, skipped"),
        ),
        Err(e) => w.diag(
            rel,
            format!("symlink target {shown} cannot be resolved ({e}), skipped"),
        ),
    }
}

/// Names a file type that is neither file, directory nor link.
fn special(kind: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    let _ = kind;
    "not a regular file"
}

/// The modification time of a file, in seconds since the epoch.
pub(super) fn mtime(meta: &Metadata) -> Option<i64> {
    let modified = meta.modified().ok()?;
    match modified.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).ok(),
        Err(before) => i64::try_from(before.duration().as_secs()).ok().map(|s| -s),
    }
}

/// The bytes of a regular file: mapped, or read when mapping is impossible. A file that
/// reports size 0 is read rather than mapped (mapping 0 bytes fails, and some file systems
/// report 0 for files that do have content); reads stop one byte past `cap`, so the caller's
/// limit check sees an oversized file without it being read whole.
pub(super) fn map_file(file: &File, len: u64, cap: u64) -> io::Result<Bytes> {
    if len > 0 {
        if let Ok(map) = map(file) {
            return Ok(Bytes::Mapped(map));
        }
    }
    let mut data = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut data)?;
    Ok(Bytes::Owned(data))
}

#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<memmap2::Mmap> {
    // SAFETY: the map is read-only and lives no longer than the `Bytes` that owns it, but the
    // file can still change under it: if another process truncates the file while it is
    // mapped (a live log rotated with copy-and-truncate, say), reading the lost pages raises
    // SIGBUS and ends the process. A bundle is normally a static copy, and Ray rotates its
    // logs by renaming, so we accept that risk for the speed and flat memory of mapping.
    unsafe { memmap2::Mmap::map(file) }
}
