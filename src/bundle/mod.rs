//! Opening a bundle and yielding its files: `.tar.gz`/`.tgz`, `.tar`, `.zip`, a directory, a
//! single file, or standard input (sniffed by magic bytes). Archives inside the bundle are
//! opened recursively up to a depth limit.
//!
//! Invariants: nothing is extracted to disk; no link or `..` path leads outside the bundle;
//! a file reached through several links is yielded once; archive members are streamed, and
//! plain files mapped (or, with [`walk_in_pieces`], streamed when larger than a piece); a line
//! longer than [`MAX_LINE_BYTES`] is cut as it is read ([`Cut`]); this module never looks at
//! what a file means (that is `classify`). Problems with single members are diagnostics; only
//! a bundle that cannot be opened at all is an [`OpenError`].

mod archive;
mod cut;
mod dir;
mod gz;
mod path;
mod sniff;
#[cfg(test)]
mod tests;
mod zip;

use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};

use crate::diag::Diagnostic;
use cut::LineCap;
pub use cut::{Cut, MAX_LINE_BYTES};
pub use sniff::archive_name;
use sniff::Magic;

/// Read size for an archive streamed from disk.
const STREAM_BUFFER: usize = 256 << 10;

/// The bytes of one file of the bundle.
pub enum Bytes {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

/// One file of the bundle, or one piece of it.
pub struct Entry {
    /// Path relative to the bundle root, `/`-separated, with control characters escaped.
    /// Members of nested archives read `outer.tar.gz/inner/path`.
    pub path: String,
    /// Modification time (seconds since the epoch) when the container records one.
    pub mtime: Option<i64>,
    pub bytes: Bytes,
    /// Which piece of the file this is; a file read whole is piece 0 and the last.
    pub piece: Piece,
    /// The lines of these bytes that were cut at [`MAX_LINE_BYTES`], in order, by offset in
    /// `bytes`.
    pub cuts: Vec<Cut>,
}

/// Spare piece buffers, handed back once a piece is parsed: reading a large bundle then
/// reuses a few warm buffers instead of faulting in fresh pages for every piece.
#[derive(Default)]
pub struct Buffers {
    spare: std::sync::Mutex<Vec<Vec<u8>>>,
}

/// Spare buffers kept at most (the rest are freed).
const SPARE_BUFFERS: usize = 4;

impl Buffers {
    /// An empty buffer with room for at least `capacity` bytes.
    pub fn take(&self, capacity: usize) -> Vec<u8> {
        let mut buf = self.take_scratch(capacity);
        buf.clear();
        buf
    }

    /// A buffer with room for at least `capacity` bytes whose bytes are scratch: its length
    /// is what its last use wrote, so that filling it again (`read_piece`) zeroes no byte
    /// twice. A reader that cleared it would have every byte zeroed again before a read
    /// (`read_to_end`), which on a 1 GB bundle cost about 0.1 s.
    pub fn take_scratch(&self, capacity: usize) -> Vec<u8> {
        let reused = self.spare.lock().ok().and_then(|mut spare| spare.pop());
        let mut buf = reused.unwrap_or_default();
        buf.reserve(capacity.saturating_sub(buf.len()));
        buf
    }

    /// Hands a buffer back for reuse.
    pub fn give(&self, buf: Vec<u8>) {
        if buf.capacity() == 0 {
            return;
        }
        if let Ok(mut spare) = self.spare.lock() {
            if spare.len() < SPARE_BUFFERS {
                spare.push(buf);
            }
        }
    }
}

/// Reads into `buf` after its first `filled` bytes until `want` more are read or the reader
/// ends, and returns how many were read (fewer than `want`: the reader ended). `buf` grows
/// when the bytes after `filled` run out, and only those new bytes are zeroed. On an error
/// the bytes read before it are kept (`filled` counts them), as `read_to_end` keeps them.
fn read_piece(
    reader: &mut dyn Read,
    buf: &mut Vec<u8>,
    filled: &mut usize,
    want: u64,
) -> io::Result<u64> {
    let mut got = 0u64;
    while got < want {
        let left = usize::try_from(want - got).unwrap_or(usize::MAX);
        if *filled == buf.len() {
            buf.resize(*filled + left.clamp(1 << 16, 1 << 20), 0);
        }
        let end = buf.len().min(filled.saturating_add(left));
        let Some(room) = buf.get_mut(*filled..end) else {
            break;
        };
        match reader.read(room) {
            Ok(0) => break,
            Ok(n) => {
                *filled += n;
                got += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Where a piece sits in its file. Pieces of one file are yielded one after another, in
/// order, each ending at a line end (or the file's end), so that no line is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub index: u32,
    pub last: bool,
}

impl Piece {
    pub const WHOLE: Piece = Piece {
        index: 0,
        last: true,
    };
}

/// Limits that keep a hostile or huge bundle from exhausting the machine.
#[derive(Clone, Debug)]
pub struct Limits {
    pub max_total_bytes: u64,
    pub max_entry_bytes: u64,
    pub max_entries: u64,
    pub max_depth: u32,
    pub max_ratio: u64,
    /// Read version-control folders (`.git`, `.hg`, `.svn`), which a bundle kept in a
    /// checkout carries: skipped by default, as ripgrep and fd skip them (`--no-ignore`).
    pub read_vcs: bool,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_total_bytes: 64 << 30,
        max_entry_bytes: 8 << 30,
        max_entries: 200_000,
        max_depth: 4,
        max_ratio: 250,
        read_vcs: false,
    };
}

/// The bundle could not be opened at all.
#[derive(Debug)]
pub struct OpenError {
    pub path: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot open bundle {}: {}",
            self.path.display(),
            self.reason
        )
    }
}

impl std::error::Error for OpenError {}

/// What the reader learnt about the container while walking it.
#[derive(Debug, Default)]
pub struct WalkSummary {
    /// `tar.gz`, `tar`, `zip`, `directory`, `file`, `gzip`.
    pub container: String,
    pub diagnostics: Vec<Diagnostic>,
    /// The common top-level folder, when every yielded path has at least two components and
    /// all share the first one. The reader reports it but never strips it: that is the
    /// pipeline's decision.
    pub root_name: Option<String>,
    /// How many entries were yielded, and their bytes in total.
    pub entries: u64,
    pub bytes: u64,
}

/// Walks the bundle at `path` (`-` for standard input), calling `sink` for every regular
/// file in a stable order (archive order, or sorted for directories).
///
/// # Errors
///
/// Only when the bundle cannot be opened at all (missing, unreadable); every problem inside
/// it is a diagnostic in the summary.
pub fn walk(
    path: &Path,
    limits: &Limits,
    sink: &mut dyn FnMut(Entry),
) -> Result<WalkSummary, OpenError> {
    walk_in_pieces(path, limits, usize::MAX, None, sink)
}

/// Like [`walk`], but archive members and plain files larger than `piece_bytes` are yielded
/// in pieces of about that size, each ending at a line end, as they are inflated or read:
/// memory then stays flat however large a file is.
///
/// # Errors
///
/// As [`walk`].
pub fn walk_in_pieces(
    path: &Path,
    limits: &Limits,
    piece_bytes: usize,
    buffers: Option<&Buffers>,
    sink: &mut dyn FnMut(Entry),
) -> Result<WalkSummary, OpenError> {
    let stdin = path == Path::new("-");
    let label = if stdin { Path::new("stdin") } else { path };
    let mut walker = Walker::new(label, limits, sink);
    walker.piece_bytes = piece_bytes.max(1);
    walker.buffers = buffers;
    if stdin {
        let stdin = io::stdin();
        let mut lock = stdin.lock();
        walker.open_stream("stdin", &mut lock)?;
    } else {
        walker.open_path(path)?;
    }
    Ok(walker.finish())
}

/// Walks a bundle that arrives as a stream (what `walk` does for `-`), sniffing what it is
/// from its first bytes. `name` is the path a single plain file is yielded under.
///
/// # Errors
///
/// Only when the first bytes of the stream cannot be read.
pub fn walk_reader(
    name: &str,
    reader: &mut dyn Read,
    limits: &Limits,
    sink: &mut dyn FnMut(Entry),
) -> Result<WalkSummary, OpenError> {
    let mut walker = Walker::new(Path::new(name), limits, sink);
    walker.open_stream(name, reader)?;
    Ok(walker.finish())
}

/// The names of version-control folders.
const VCS_FOLDERS: [&str; 3] = [".git", ".hg", ".svn"];

/// Whether a folder of this name is a version-control folder.
fn is_vcs_folder(name: &str) -> bool {
    VCS_FOLDERS.contains(&name)
}

/// The version-control folder `path` lies in (`repo/.git` of `repo/.git/hooks/x`), if any.
fn vcs_folder(path: &str) -> Option<&str> {
    let mut end = 0;
    for part in path.split('/') {
        end += part.len();
        if is_vcs_folder(part) && end < path.len() {
            return path.get(..end);
        }
        end += 1;
    }
    None
}

/// The state of one walk: limits, counters, diagnostics and the sink. Container readers in
/// the submodules are methods on it, so every entry from any depth passes through [`emit`].
///
/// [`emit`]: Walker::emit
struct Walker<'a> {
    limits: &'a Limits,
    sink: &'a mut dyn FnMut(Entry),
    summary: WalkSummary,
    /// The bundle's own path, escaped, for problems that belong to no member.
    label: String,
    /// Set once a limit says to stop; every loop checks it.
    stopped: bool,
    root: Root,
    /// Streamed members larger than this are yielded in pieces.
    piece_bytes: usize,
    /// Where the buffers of pieces come from (and go back to once parsed).
    buffers: Option<&'a Buffers>,
    /// Lines longer than this are cut ([`MAX_LINE_BYTES`]; tests set less).
    line_bytes: usize,
    /// Version-control folders skipped, with the files skipped in each (none counted for a
    /// folder on disk, which is not walked at all).
    vcs_skipped: std::collections::BTreeMap<String, u64>,
}

/// What the yielded paths so far say about a common top-level folder.
enum Root {
    Unseen,
    Common(String),
    Mixed,
}

/// What reading one member gave.
enum Got {
    /// All of it.
    Full(Vec<u8>),
    /// What could be read before an error; the member is yielded anyway because the head of
    /// a log is still evidence, and the caller learns that the stream broke.
    Partial(Vec<u8>, io::Error),
    /// Nothing: a limit refused it (already diagnosed).
    Refused,
}

impl<'a> Walker<'a> {
    fn new(path: &Path, limits: &'a Limits, sink: &'a mut dyn FnMut(Entry)) -> Walker<'a> {
        Walker {
            limits,
            sink,
            summary: WalkSummary::default(),
            label: path::escape(path.as_os_str().as_encoded_bytes()).into_owned(),
            stopped: false,
            root: Root::Unseen,
            piece_bytes: usize::MAX,
            buffers: None,
            line_bytes: MAX_LINE_BYTES,
            vcs_skipped: Default::default(),
        }
    }

    fn finish(mut self) -> WalkSummary {
        for (folder, files) in std::mem::take(&mut self.vcs_skipped) {
            let what = match files {
                0 => "version-control folder, skipped (--no-ignore reads it)".to_owned(),
                n => format!(
                    "version-control folder, skipped: {} (--no-ignore reads them)",
                    crate::words::count(n, "file", "files")
                ),
            };
            self.diag(folder, what);
        }
        if let Root::Common(name) = self.root {
            self.summary.root_name = Some(name);
        }
        self.summary
    }

    /// Opens a bundle given by path: a directory, or a file whose magic decides what it is.
    fn open_path(&mut self, given: &Path) -> Result<(), OpenError> {
        let fail = |e: io::Error| OpenError {
            path: given.to_path_buf(),
            reason: e.to_string(),
        };
        // The root may itself be a link (`/tmp/ray/session_latest`); links inside are judged
        // against where it really is.
        let root = std::fs::canonicalize(given).map_err(fail)?;
        let meta = std::fs::metadata(&root).map_err(fail)?;
        if meta.is_dir() {
            self.summary.container = "directory".into();
            return dir::walk_dir(self, &root).map_err(fail);
        }
        let name = given.file_name().or_else(|| root.file_name()).map_or_else(
            || "bundle".to_owned(),
            |n| path::escape(n.as_encoded_bytes()).into_owned(),
        );
        let mut file = std::fs::File::open(&root).map_err(fail)?;
        if !meta.is_file() {
            // A FIFO or character device, as `raysift analyze <(kubectl logs ...)` gives:
            // read it as a stream, like standard input.
            return self.open_stream(&name, &mut file);
        }
        let mtime = dir::mtime(&meta);
        // A tar or gzip stream is read through, not mapped: the pages of a mapped archive
        // stay resident as it is read, and memory would grow with the bundle.
        let head = archive::read_head(&mut file).map_err(fail)?;
        // Back to the start: the streams below, and `map_file` when it has to read rather
        // than map, read from where the file stands.
        file.seek(io::SeekFrom::Start(0)).map_err(fail)?;
        let magic = sniff::sniff(&head);
        match magic {
            Magic::Gzip => {
                let mut stream = io::BufReader::with_capacity(STREAM_BUFFER, file);
                let container = match self.gzip(None, &name, mtime, &mut stream, 0) {
                    archive::Gz::Tar => "tar.gz",
                    archive::Gz::Single | archive::Gz::Broken => "gzip",
                };
                self.summary.container = container.into();
            }
            Magic::Tar => {
                let mut stream = io::BufReader::with_capacity(STREAM_BUFFER, file);
                self.summary.container = "tar".into();
                self.tar(None, &mut stream, 0);
            }
            Magic::Other => {
                self.summary.container = "file".into();
                if self.streams(meta.len()) {
                    self.plain_in_pieces(name, mtime, Some(meta.len()), &mut file);
                } else {
                    let bytes = dir::map_file(&file, meta.len(), self.read_cap()).map_err(fail)?;
                    self.emit(name, mtime, bytes);
                }
            }
            Magic::Zip => {
                let bytes = dir::map_file(&file, meta.len(), self.read_cap()).map_err(fail)?;
                let container = self.open_archive_bytes(None, &name, mtime, magic, &bytes, 0);
                self.summary.container = container.into();
            }
        }
        Ok(())
    }

    /// Opens a bundle that arrives as a stream. A tar or gzip stream is read as it comes; a
    /// zip needs its central directory at the end, so it is read into memory first.
    fn open_stream(&mut self, name: &str, reader: &mut dyn Read) -> Result<(), OpenError> {
        let head = archive::read_head(reader).map_err(|e| OpenError {
            path: PathBuf::from(name),
            reason: e.to_string(),
        })?;
        let magic = sniff::sniff(&head);
        let mut stream = io::Cursor::new(head).chain(reader);
        let name = name.to_owned();
        match magic {
            Magic::Gzip => {
                let container = match self.gzip(None, &name, None, &mut stream, 0) {
                    archive::Gz::Tar => "tar.gz",
                    archive::Gz::Single | archive::Gz::Broken => "gzip",
                };
                self.summary.container = container.into();
            }
            Magic::Tar => {
                self.summary.container = "tar".into();
                self.tar(None, &mut stream, 0);
            }
            Magic::Zip => {
                self.summary.container = "zip".into();
                let cap = self.limits.max_total_bytes;
                let mut data = Vec::new();
                let read = (&mut stream)
                    .take(cap.saturating_add(1))
                    .read_to_end(&mut data);
                if let Err(e) = read {
                    self.diag(
                        self.label.clone(),
                        format!("zip stream unreadable after {} bytes: {e}", data.len()),
                    );
                } else if data.len() as u64 > cap {
                    self.diag(
                        self.label.clone(),
                        format!("zip stream is larger than the total size limit of {cap} bytes, not read"),
                    );
                    return Ok(());
                }
                self.zip(None, &data, 0);
            }
            Magic::Other => {
                self.summary.container = "file".into();
                self.plain(name, None, None, &mut stream);
            }
        }
        Ok(())
    }

    /// Opens an archive held in memory (a mapped file, or a zip read from a stream) and
    /// returns the container name. `at` is the archive's own path when it is nested.
    fn open_archive_bytes(
        &mut self,
        at: Option<&str>,
        name: &str,
        mtime: Option<i64>,
        magic: Magic,
        data: &[u8],
        depth: u32,
    ) -> &'static str {
        let mut reader = data;
        match magic {
            Magic::Gzip => match self.gzip(at, name, mtime, &mut reader, depth) {
                archive::Gz::Tar => "tar.gz",
                archive::Gz::Single | archive::Gz::Broken => "gzip",
            },
            Magic::Tar => {
                self.tar(at, &mut reader, depth);
                "tar"
            }
            Magic::Zip => {
                self.zip(at, data, depth);
                "zip"
            }
            Magic::Other => "file",
        }
    }

    /// Whether a plain file of `len` bytes on disk is read in pieces rather than mapped: when
    /// pieces were asked for and the file spans more than one. The mapped pages of a file stay
    /// resident until all of it is parsed, so mapping would make peak memory grow with the
    /// largest file (Ray rotates its logs at 512 MB); reading costs one copy from the page
    /// cache.
    fn streams(&self, len: u64) -> bool {
        self.piece_bytes != usize::MAX && len > self.piece_bytes as u64
    }

    /// Reads one member: opens it as a nested archive when both its name and its magic say
    /// so, else reads it as a plain file. `exact` is the size its header declares. Returns
    /// true when the underlying stream broke, so a tar reader knows to stop.
    fn member(
        &mut self,
        path: String,
        mtime: Option<i64>,
        exact: Option<u64>,
        reader: &mut dyn Read,
        depth: u32,
    ) -> bool {
        if self.stopped {
            return false;
        }
        if !sniff::archive_name(&path) {
            return self.plain(path, mtime, exact, reader);
        }
        let head = match archive::read_head(reader) {
            Ok(head) => head,
            Err(e) => {
                self.diag(path, format!("unreadable: {e}"));
                return true;
            }
        };
        let magic = sniff::sniff(&head);
        let mut stream = io::Cursor::new(head).chain(reader);
        if magic == Magic::Other {
            return self.plain(path, mtime, exact, &mut stream);
        }
        if depth >= self.limits.max_depth {
            self.diag(
                path,
                format!(
                    "nested archive is deeper than the depth limit of {}, skipped",
                    self.limits.max_depth
                ),
            );
            return false;
        }
        match magic {
            Magic::Gzip => {
                self.gzip(Some(&path), &path, mtime, &mut stream, depth + 1);
            }
            Magic::Tar => self.tar(Some(&path), &mut stream, depth + 1),
            Magic::Zip | Magic::Other => match self.read_limited(&path, exact, &mut stream) {
                Got::Full(data) => self.zip(Some(&path), &data, depth + 1),
                Got::Partial(_, e) => {
                    self.diag(path, format!("nested zip unreadable: {e}"));
                    return true;
                }
                Got::Refused => {}
            },
        }
        false
    }

    /// Reads a plain member into memory and yields it. Returns true when reading failed part
    /// way (the part read is still yielded).
    fn plain(
        &mut self,
        path: String,
        mtime: Option<i64>,
        exact: Option<u64>,
        reader: &mut dyn Read,
    ) -> bool {
        if self.piece_bytes != usize::MAX {
            return self.plain_in_pieces(path, mtime, exact, reader);
        }
        let mut reader = LineCap::new(reader, self.line_bytes);
        let got = self.read_limited(&path, exact, &mut reader);
        let cuts = reader.all_cuts();
        let skipped = Cut::skipped_bytes(&cuts);
        match got {
            Got::Full(data) => {
                let got = data.len() as u64 + skipped;
                match exact {
                    Some(want) if got < want => {
                        self.diag(
                            path.clone(),
                            format!("truncated: only {got} of {want} bytes could be read, the part read is kept"),
                        );
                        self.emit_cut(path, mtime, Bytes::Owned(data), cuts);
                        true
                    }
                    _ => {
                        self.emit_cut(path, mtime, Bytes::Owned(data), cuts);
                        false
                    }
                }
            }
            Got::Partial(data, e) => {
                self.diag(
                    path.clone(),
                    format!(
                        "reading stopped after {} bytes, the part read is kept: {e}",
                        data.len() as u64 + skipped
                    ),
                );
                self.emit_cut(path, mtime, Bytes::Owned(data), cuts);
                true
            }
            Got::Refused => false,
        }
    }

    /// Reads a plain member piece by piece (see [`walk_in_pieces`]) and yields each piece as
    /// soon as it is read. Returns true when reading failed part way (the pieces read are
    /// still yielded).
    fn plain_in_pieces(
        &mut self,
        path: String,
        mtime: Option<i64>,
        exact: Option<u64>,
        reader: &mut dyn Read,
    ) -> bool {
        if !self.admit(&path, exact) {
            return false;
        }
        let cap = self.read_cap();
        self.summary.entries += 1;
        self.note_root(&path);
        // Long lines are cut before pieces are: a piece then ends at a line end within its
        // size plus one cut line, however long the lines of the file.
        let mut reader = LineCap::new(reader, self.line_bytes);
        let size = self.piece_bytes;
        let mut carry: Vec<u8> = Vec::new();
        let mut got = 0u64;
        // Bytes of cut lines skipped, for the truncation checks.
        let mut skipped = 0u64;
        let mut index = 0u32;
        let mut broken: Option<io::Error> = None;
        loop {
            // Room for the piece, the line it carried over, and one more read to a line end.
            let want = size
                .saturating_add(carry.len())
                .saturating_add(1 << 17)
                .min(64 << 20);
            // The piece is `buf[..filled]`; the bytes after it are scratch.
            let mut buf = match self.buffers {
                Some(pool) => pool.take_scratch(want),
                None => Vec::with_capacity(want),
            };
            if buf.len() < carry.len() {
                buf.resize(carry.len(), 0);
            }
            buf[..carry.len()].copy_from_slice(&carry);
            let mut filled = carry.len();
            carry.clear();
            let mut eof = false;
            // Fill to the piece size, then on to the next line end: a piece never splits a line.
            loop {
                let want = size.saturating_sub(filled).max(1 << 16) as u64;
                let want = want.min(cap.saturating_add(1).saturating_sub(got + filled as u64));
                match read_piece(&mut reader, &mut buf, &mut filled, want) {
                    Ok(n) if n < want => eof = true,
                    Ok(_) => {}
                    Err(e) => {
                        broken = Some(e);
                        eof = true;
                    }
                }
                if eof || got + filled as u64 > cap {
                    break;
                }
                if filled >= size {
                    if let Some(nl) = memchr::memrchr(b'\n', &buf[..filled]) {
                        carry.extend_from_slice(&buf[nl + 1..filled]);
                        filled = nl + 1;
                        break;
                    }
                }
            }
            buf.truncate(filled);
            let over = got + buf.len() as u64 > cap;
            if over {
                let keep = usize::try_from(cap.saturating_sub(got)).unwrap_or(buf.len());
                let cut = memchr::memrchr(b'\n', &buf[..keep.min(buf.len())]).map_or(0, |i| i + 1);
                buf.truncate(cut);
            }
            if eof {
                reader.finish();
            }
            let end = got + buf.len() as u64;
            let last = eof || over;
            let cuts = reader.take_cuts(got, if last && !over { u64::MAX } else { end });
            skipped += Cut::skipped_bytes(&cuts);
            got = end;
            self.summary.bytes += buf.len() as u64;
            (self.sink)(Entry {
                path: path.clone(),
                mtime,
                bytes: Bytes::Owned(buf),
                piece: Piece { index, last },
                cuts,
            });
            index = index.saturating_add(1);
            if over {
                self.limit_reached(&path, cap, Some(got));
                return true;
            }
            if last {
                break;
            }
        }
        let got = got + skipped;
        if let Some(e) = broken {
            self.diag(
                path,
                format!("reading stopped after {got} bytes, the part read is kept: {e}"),
            );
            return true;
        }
        if let Some(want) = exact.filter(|&want| got < want) {
            self.diag(
                path,
                format!(
                    "truncated: only {got} of {want} bytes could be read, the part read is kept"
                ),
            );
            return true;
        }
        false
    }

    /// Reads a member, never more than the entry and total limits allow plus one byte (so
    /// that a header that lies about the size cannot make us allocate without bound).
    fn read_limited(&mut self, path: &str, exact: Option<u64>, reader: &mut dyn Read) -> Got {
        if !self.admit(path, exact) {
            return Got::Refused;
        }
        let cap = self.read_cap();
        // Trust the declared size only so far: a hostile header could claim terabytes. What
        // is allocated follows the bytes that really come, beyond a first megabyte.
        let hint = exact.unwrap_or(0).min(cap).min(1 << 20);
        let mut data = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
        let result = reader.take(cap.saturating_add(1)).read_to_end(&mut data);
        if data.len() as u64 > cap {
            self.limit_reached(path, cap, None);
            return Got::Refused;
        }
        match result {
            Ok(_) => Got::Full(data),
            Err(e) => Got::Partial(data, e),
        }
    }

    /// Reports the limit a file ran into when it reached `cap` bytes: the entry size limit
    /// (the file is skipped, or only its first `kept` bytes are kept) or the total size limit
    /// (the walk stops).
    fn limit_reached(&mut self, path: &str, cap: u64, kept: Option<u64>) {
        let size = self.limits.max_entry_bytes;
        if cap == size {
            let outcome = kept.map_or_else(
                || "skipped".to_string(),
                |n| format!("only the first {n} bytes are kept"),
            );
            self.diag(
                path,
                format!("larger than the entry size limit of {size} bytes, {outcome}"),
            );
        } else {
            let total = self.limits.max_total_bytes;
            let outcome = kept.map_or_else(
                || "reached, stopped before this file".to_string(),
                |n| format!("reached inside this file, only its first {n} bytes are kept"),
            );
            self.stop(path, format!("total size limit of {total} bytes {outcome}"));
        }
    }

    /// How many bytes one more entry may have: the entry limit, or what the total allows.
    fn read_cap(&self) -> u64 {
        let left = self
            .limits
            .max_total_bytes
            .saturating_sub(self.summary.bytes);
        self.limits.max_entry_bytes.min(left)
    }

    /// Checks the limits before an entry of `len` bytes (when known) is read or yielded.
    /// Diagnoses and returns false when it must not be.
    fn admit(&mut self, path: &str, len: Option<u64>) -> bool {
        if self.stopped {
            return false;
        }
        let limits = self.limits;
        if let Some(folder) = vcs_folder(path).filter(|_| !limits.read_vcs) {
            *self.vcs_skipped.entry(folder.to_owned()).or_default() += 1;
            return false;
        }
        if self.summary.entries >= limits.max_entries {
            self.stop(
                path,
                format!(
                    "entry count limit of {} reached, stopped before this file",
                    limits.max_entries
                ),
            );
            return false;
        }
        let Some(len) = len else { return true };
        if len > limits.max_entry_bytes {
            self.diag(
                path,
                format!(
                    "larger than the entry size limit of {} bytes ({len} bytes), skipped",
                    limits.max_entry_bytes
                ),
            );
            return false;
        }
        if self.summary.bytes.saturating_add(len) > limits.max_total_bytes {
            self.stop(
                path,
                format!(
                    "total size limit of {} bytes reached, stopped before this file",
                    limits.max_total_bytes
                ),
            );
            return false;
        }
        true
    }

    /// Yields one entry, mapped or read whole, to the sink, if the limits allow it. A file
    /// with a line longer than the limit is copied with the line cut.
    fn emit(&mut self, path: String, mtime: Option<i64>, bytes: Bytes) {
        let cap = self.line_bytes;
        if cut::has_long_line(&bytes, cap) {
            let (cut, cuts) = cut::cut_lines(&bytes, cap);
            return self.emit_cut(path, mtime, Bytes::Owned(cut), cuts);
        }
        self.emit_cut(path, mtime, bytes, Vec::new());
    }

    /// Yields one entry whose long lines are already cut.
    fn emit_cut(&mut self, path: String, mtime: Option<i64>, bytes: Bytes, cuts: Vec<Cut>) {
        if !self.admit(&path, Some(bytes.len() as u64)) {
            return;
        }
        self.summary.entries += 1;
        self.summary.bytes += bytes.len() as u64;
        self.note_root(&path);
        (self.sink)(Entry {
            path,
            mtime,
            bytes,
            piece: Piece::WHOLE,
            cuts,
        });
    }

    fn note_root(&mut self, path: &str) {
        let first = path.split_once('/').map(|(first, _)| first);
        self.root = match (std::mem::replace(&mut self.root, Root::Mixed), first) {
            (Root::Unseen, Some(first)) => Root::Common(first.to_owned()),
            (Root::Common(name), Some(first)) if name == first => Root::Common(name),
            _ => Root::Mixed,
        };
    }

    fn stop(&mut self, file: &str, problem: String) {
        self.stopped = true;
        self.diag(file, problem);
    }

    fn diag(&mut self, file: impl Into<String>, problem: impl Into<String>) {
        self.summary
            .diagnostics
            .push(Diagnostic::for_file(file, problem));
    }

    /// The name problems of a whole (possibly nested) archive are filed under.
    fn label_of(&self, at: Option<&str>) -> String {
        at.map_or_else(|| self.label.clone(), str::to_owned)
    }
}
