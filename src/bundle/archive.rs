//! Archive readers: tar (plain or gzip-compressed, read as a stream), single gzip files, and
//! zip (read from memory, since its index sits at the end).
//!
//! This module owns how members are named, how links inside an archive are judged, and how a
//! decompression bomb is stopped (a meter on every inflating stream). It hands every member
//! to `Walker::member` and never writes anything to disk or looks at what a member says.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::io::{self, Cursor, Read};
use std::rc::Rc;

use super::gz::GzStream;
use super::path::{self, LinkRefused, Refused};
use super::sniff::{self, Magic, SNIFF_LEN};
use super::zip as zipfmt;
use super::Walker;

/// Inflation allowed beyond `ratio` × compressed size, so that small, very compressible files
/// (a log of one repeated line) are never mistaken for a bomb.
const RATIO_SLACK: u64 = 1 << 20;

/// Compressed bytes a gzip decoder may read ahead of its output. Small, because the ratio
/// check can only count what was read: a bomb is stopped within `ratio` times this.
const GZ_INPUT_BUFFER: usize = 16 << 10;

/// Inflation a zip may have beyond `ratio` × its own size, over all its entries: what a
/// small archive of a few very compressible logs needs, and far less than an archive whose
/// entries share their compressed bytes would take.
const ARCHIVE_SLACK: u64 = 64 << 20;

/// What a zip's entries may still inflate to.
struct ZipBudget {
    left: u64,
    /// The budget ran out: the rest of the archive is not read.
    halted: bool,
}

/// Longest symlink target read from a zip member (the target is the member's content).
const MAX_LINK_TARGET: u64 = 4096;

/// Members of any kind (files, folders, links) an archive may have per allowed entry.
const MEMBERS_PER_ENTRY: u64 = 4;

/// Links followed in a chain before giving up on it as a loop.
const MAX_LINK_HOPS: usize = 16;

/// What a gzip stream turned out to hold.
pub(super) enum Gz {
    Tar,
    Single,
    Broken,
}

/// Reads up to [`SNIFF_LEN`] bytes, enough for [`sniff::sniff`].
pub(super) fn read_head(reader: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(SNIFF_LEN);
    reader.take(SNIFF_LEN as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// Compressed bytes in and inflated bytes out of one decompression stream.
#[derive(Default)]
struct Meter {
    compressed: Cell<u64>,
    inflated: Cell<u64>,
}

/// Counts the compressed bytes a decoder pulls from its source.
struct Counted<'r> {
    inner: &'r mut dyn Read,
    meter: Rc<Meter>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let meter = &self.meter.compressed;
        meter.set(meter.get().saturating_add(n as u64));
        Ok(n)
    }
}

/// Fails a decompression stream once it has inflated more than `ratio` times what it read
/// plus [`RATIO_SLACK`]. The decoder reads its input ahead of its output, so the check errs on
/// the generous side by at most one input buffer.
struct Capped<R> {
    inner: R,
    meter: Rc<Meter>,
    ratio: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let meter = &self.meter;
        let allowed = meter
            .compressed
            .get()
            .saturating_mul(self.ratio)
            .saturating_add(RATIO_SLACK);
        let left = allowed.saturating_sub(meter.inflated.get());
        if left == 0 {
            return Err(io::Error::other(format!(
                "inflated more than {} times its compressed size, likely a decompression bomb",
                self.ratio
            )));
        }
        // Never ask for more than the allowance: a bomb then stops within one buffer of the
        // limit instead of one decoder read-ahead (tens of MiB) past it.
        let want = usize::try_from(left).map_or(buf.len(), |left| left.min(buf.len()));
        let n = self.inner.read(buf.get_mut(..want).unwrap_or_default())?;
        meter
            .inflated
            .set(meter.inflated.get().saturating_add(n as u64));
        Ok(n)
    }
}

/// A tar stream that can be searched for its next valid header after damage: it counts the
/// bytes it has given and takes back the bytes read past the header it finds.
struct Resync<'r> {
    inner: &'r mut dyn Read,
    back: Vec<u8>,
    back_at: usize,
    /// Bytes given so far: the tar offset of the next byte.
    offset: u64,
    /// The name in the header found by the last [`Resync::next_header`].
    found: Option<String>,
}

/// Bytes read at a time while looking for a header.
const RESYNC_CHUNK: usize = 64 << 10;

/// Errors in a row after which a stream is taken to have ended.
const RESYNC_ERRORS: u32 = 16;

impl<'r> Resync<'r> {
    fn new(inner: &'r mut dyn Read) -> Resync<'r> {
        Resync {
            inner,
            back: Vec::new(),
            back_at: 0,
            offset: 0,
            found: None,
        }
    }

    /// The name of the member whose header [`Resync::next_header`] found.
    fn named(&self) -> Option<&str> {
        self.found.as_deref()
    }

    /// Reads on to the next 512 bytes that hold a valid ustar header (magic and checksum),
    /// which the next read starts with; returns its offset, or `None` at the stream's end.
    /// The search is byte by byte: after a break in a compressed stream the blocks are no
    /// longer where they were.
    fn next_header(&mut self) -> Option<u64> {
        let mut window: Vec<u8> = Vec::with_capacity(RESYNC_CHUNK + 512);
        // Offset of window[0].
        let mut start = self.offset;
        let mut errors = 0;
        loop {
            let have = window.len();
            window.resize(have + RESYNC_CHUNK, 0);
            let got = match self.read(window.get_mut(have..).unwrap_or_default()) {
                Ok(n) => {
                    errors = 0;
                    n
                }
                Err(_) if errors < RESYNC_ERRORS => {
                    errors += 1;
                    0
                }
                Err(_) => return None,
            };
            window.truncate(have + got);
            if got == 0 && errors == 0 {
                return None;
            }
            let mut from = 0;
            // The start of a candidate header not yet read whole.
            let mut partial = usize::MAX;
            while let Some(i) = window
                .get(from..)
                .and_then(|w| memchr::memmem::find(w, b"ustar"))
            {
                let magic = from + i;
                from = magic + 1;
                let Some(block_at) = magic.checked_sub(257) else {
                    continue;
                };
                let Some(block) = window.get(block_at..block_at + 512) else {
                    // Not all of it read yet: keep it for the next round.
                    partial = block_at;
                    break;
                };
                if valid_tar_header(block) {
                    let name = block.get(..100).unwrap_or_default();
                    let name = name.split(|&b| b == 0).next().unwrap_or_default();
                    self.found = Some(path::escape(name).into_owned());
                    let rest = window.split_off(block_at);
                    let found = start + block_at as u64;
                    self.offset = found;
                    let mut back = rest;
                    back.extend_from_slice(self.back.get(self.back_at..).unwrap_or_default());
                    self.back = back;
                    self.back_at = 0;
                    return Some(found);
                }
            }
            // Keep the last 511 bytes (and any header not yet whole) for the next round.
            let keep = window.len().saturating_sub(511).min(partial);
            window.drain(..keep);
            start += keep as u64;
        }
    }
}

impl Read for Resync<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = if let Some(back) = self.back.get(self.back_at..).filter(|b| !b.is_empty()) {
            let n = back.len().min(buf.len());
            if let (Some(dst), Some(src)) = (buf.get_mut(..n), back.get(..n)) {
                dst.copy_from_slice(src);
            }
            self.back_at += n;
            if self.back_at >= self.back.len() {
                self.back.clear();
                self.back_at = 0;
            }
            n
        } else {
            self.inner.read(buf)?
        };
        self.offset += n as u64;
        Ok(n)
    }
}

/// Whether a 512-byte block is a ustar header whose checksum holds.
fn valid_tar_header(block: &[u8]) -> bool {
    if block.len() != 512 || block.get(257..262) != Some(b"ustar") {
        return false;
    }
    let Some(field) = block.get(148..156) else {
        return false;
    };
    let digits: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|&b| b == b' ')
        .take_while(u8::is_ascii_digit)
        .collect();
    let Some(stored) = std::str::from_utf8(&digits)
        .ok()
        .and_then(|d| u32::from_str_radix(d, 8).ok())
    else {
        return false;
    };
    let sum: u32 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                u32::from(b' ')
            } else {
                u32::from(b)
            }
        })
        .sum();
    sum == stored
}

/// What one archive holds, kept until its end so that links can be judged whatever order
/// the link and its target come in.
#[derive(Default)]
struct Seen {
    /// Members of any kind met so far; see [`Walker::too_many_members`].
    members: u64,
    files: HashSet<String>,
    dirs: HashSet<String>,
    links: Vec<Link>,
    noted_absolute: bool,
}

struct Link {
    /// The link's own normalised path inside the archive.
    path: String,
    target: Vec<u8>,
    /// Tar hard-link targets are relative to the archive root, symlink targets to the link's
    /// directory.
    hard: bool,
}

/// Where following a link led.
enum Followed {
    Inside,
    Refused(LinkRefused),
    Missing,
    Loop,
}

impl Walker<'_> {
    /// Reads a gzip stream. A tar inside is read member by member; anything else is one file,
    /// yielded under `name` with `.gz` dropped. `at` is the stream's own path when nested (the
    /// prefix of its tar members).
    pub(super) fn gzip(
        &mut self,
        at: Option<&str>,
        name: &str,
        mtime: Option<i64>,
        reader: &mut dyn Read,
        depth: u32,
    ) -> Gz {
        let meter = Rc::new(Meter::default());
        let counted = Counted {
            inner: reader,
            meter: Rc::clone(&meter),
        };
        let gz = GzStream::new(io::BufReader::with_capacity(GZ_INPUT_BUFFER, counted));
        let problems = Rc::clone(&gz.problems);
        let mut inflated = Capped {
            inner: gz,
            meter,
            ratio: self.limits.max_ratio,
        };
        let head = match read_head(&mut inflated) {
            Ok(head) => head,
            Err(e) => {
                self.diag(self.label_of(at), format!("gzip stream unreadable: {e}"));
                return Gz::Broken;
            }
        };
        let is_tar = sniff::sniff(&head) == Magic::Tar;
        // A tar reader must learn of a break to look for its next header.
        inflated.inner.gaps_are_errors = is_tar;
        let mut stream = Cursor::new(head).chain(inflated);
        let got = if is_tar {
            self.tar(at, &mut stream, depth);
            Gz::Tar
        } else {
            self.member(sniff::strip_gz(name), mtime, None, &mut stream, depth);
            Gz::Single
        };
        let label = self.label_of(at);
        for problem in problems.take() {
            self.diag(label.clone(), problem);
        }
        got
    }

    /// Reads a tar stream member by member. A damaged header, or a break in the stream under
    /// it (a damaged gzip member), does not end the archive: the reader looks for the next
    /// valid header (tar headers carry a checksum) and reads on from there, naming what was
    /// lost and where.
    pub(super) fn tar(&mut self, at: Option<&str>, reader: &mut dyn Read, depth: u32) {
        let label = self.label_of(at);
        let mut src = Resync::new(reader);
        let mut seen = Seen::default();
        let mut last: Option<String> = None;
        loop {
            let broke = self.tar_run(at, &label, &mut src, depth, &mut seen, &mut last);
            let Some((byte, problem)) = broke else { break };
            let after = match &last {
                Some(member) => format!("after member {member} "),
                None => String::new(),
            };
            match src.next_header() {
                Some(next) => {
                    let name = src
                        .named()
                        .map_or_else(String::new, |n| format!(", member {n}"));
                    self.diag(
                        label.clone(),
                        format!(
                            "tar stream broken {after}(byte {byte}): {problem}; resumed at the next valid header, byte {next}{name} ({} bytes skipped)",
                            next.saturating_sub(byte)
                        ),
                    );
                }
                None => {
                    // A stream that simply ended inside a member is already named by it.
                    if !problem.is_empty() {
                        self.diag(
                            label.clone(),
                            format!("tar stream broken {after}(byte {byte}): {problem}"),
                        );
                    }
                    break;
                }
            }
        }
        self.check_links(at, seen);
    }

    /// Reads members from where `src` stands until the archive ends (`None`) or breaks: then
    /// where (the byte of the bad header, or where the stream broke) and why (empty when a
    /// member's read broke, which the member's own diagnostic tells).
    fn tar_run(
        &mut self,
        at: Option<&str>,
        label: &str,
        src: &mut Resync<'_>,
        depth: u32,
        seen: &mut Seen,
        last: &mut Option<String>,
    ) -> Option<(u64, String)> {
        let base = src.offset;
        // Where the next header should start: the data is padded to whole 512-byte blocks.
        let mut next = base;
        let mut archive = tar::Archive::new(&mut *src);
        // A zeroed block is a hole in a damaged copy as often as the archive's end.
        archive.set_ignore_zeros(true);
        let entries = match archive.entries() {
            Ok(entries) => entries,
            Err(e) => return Some((base, e.to_string())),
        };
        for item in entries {
            if self.stopped {
                return None;
            }
            let mut entry = match item {
                Ok(entry) => entry,
                Err(e) => return Some((next, e.to_string())),
            };
            if self.too_many_members(label, seen) {
                return None;
            }
            next = base.saturating_add(
                entry
                    .raw_file_position()
                    .saturating_add(entry.size())
                    .next_multiple_of(512),
            );
            let raw = entry.path_bytes().into_owned();
            let Some(rel) = self.member_name(at, &raw, false, seen) else {
                continue;
            };
            let full = path::join(at, &rel);
            *last = Some(full.clone());
            let header = entry.header();
            let kind = header.entry_type();
            let mtime = header.mtime().ok().and_then(|t| i64::try_from(t).ok());
            if kind.is_file() || kind.is_contiguous() || kind.is_gnu_sparse() {
                seen.files.insert(rel);
                // A sparse member's header gives its stored size, not the size it reads as.
                let exact = (!kind.is_gnu_sparse()).then(|| entry.size());
                let data_at = base.saturating_add(entry.raw_file_position());
                if self.member(full, mtime, exact, &mut entry, depth) {
                    return Some((data_at, String::new()));
                }
            } else if kind.is_symlink() || kind.is_hard_link() {
                let target = entry
                    .link_name_bytes()
                    .map(std::borrow::Cow::into_owned)
                    .unwrap_or_default();
                seen.links.push(Link {
                    path: rel,
                    target,
                    hard: kind.is_hard_link(),
                });
            } else if kind.is_dir() {
                seen.dirs.insert(rel);
            } else if kind.is_fifo() {
                self.diag(full, "is a FIFO, skipped");
            } else if kind.is_character_special() || kind.is_block_special() {
                self.diag(full, "is a device, skipped");
            } else if !(kind.is_pax_global_extensions()
                || kind.is_pax_local_extensions()
                || kind.is_gnu_longname()
                || kind.is_gnu_longlink())
            {
                let code = path::escape(&[kind.as_byte()]).into_owned();
                self.diag(
                    full,
                    format!("has unsupported tar entry type '{code}', skipped"),
                );
            }
        }
        None
    }

    /// Reads a zip held in memory, entry by entry: an entry that cannot be read is named with
    /// the reason and costs only itself (see `zip.rs`). Without a usable central directory the
    /// local headers are scanned for. What all its entries inflate to is bounded by the
    /// ratio limit times the archive's own size, plus [`ARCHIVE_SLACK`].
    pub(super) fn zip(&mut self, at: Option<&str>, data: &[u8], depth: u32) {
        let label = self.label_of(at);
        let mut seen = Seen::default();
        let listing = zipfmt::list(data);
        for problem in &listing.problems {
            self.diag(label.clone(), problem.clone());
        }
        let mut budget = ZipBudget {
            left: (data.len() as u64)
                .saturating_mul(self.limits.max_ratio)
                .saturating_add(ARCHIVE_SLACK),
            halted: false,
        };
        for (entry, span) in &listing.entries {
            if self.stopped || budget.halted || self.too_many_members(&label, &mut seen) {
                break;
            }
            match zipfmt::check(entry, span) {
                Ok(span) => {
                    let input = span.data(data);
                    self.zip_entry(at, &label, entry, input, depth, &mut seen, &mut budget);
                }
                // Named, all together, in the archive's problems.
                Err(why) if why == zipfmt::OVERLAP => {}
                Err(why) => self.diag(zip_name(at, entry), why),
            }
        }
        if let Some(from) = listing.scan_from {
            let mut scan = zipfmt::Scan {
                pos: from,
                to: listing.scan_to,
            };
            while !self.stopped && !budget.halted {
                let Some(found) = scan.next(data) else { break };
                let (entry, start, end) = match found {
                    zipfmt::Found::Entry(entry, start, end) => (entry, start, end),
                    zipfmt::Found::Bad(byte, why) => {
                        self.diag(
                            label.clone(),
                            format!("bad zip local header at byte {byte} ({why}), scanning on"),
                        );
                        continue;
                    }
                };
                if self.too_many_members(&label, &mut seen) {
                    break;
                }
                if let Some(why) = entry.unreadable() {
                    self.diag(zip_name(at, &entry), why);
                    continue;
                }
                let input = zipfmt::slice(data, start, end.unwrap_or(scan.to));
                let consumed =
                    self.zip_entry(at, &label, &entry, input, depth, &mut seen, &mut budget);
                if let (None, Some(used)) = (end, consumed) {
                    scan.resume_after(data, start.saturating_add(used));
                }
            }
        }
        self.check_links(at, seen);
    }

    /// Reads one zip entry whose data is `input`. Returns how many bytes of `input` its data
    /// took, when it was read through to its end.
    #[allow(clippy::too_many_arguments)]
    fn zip_entry(
        &mut self,
        at: Option<&str>,
        label: &str,
        entry: &zipfmt::ZipEntry,
        input: &[u8],
        depth: u32,
        seen: &mut Seen,
        budget: &mut ZipBudget,
    ) -> Option<u64> {
        let rel = self.member_name(at, &entry.name, true, seen)?;
        if entry.is_dir() {
            seen.dirs.insert(rel);
            return None;
        }
        let mut reader = zipfmt::EntryReader::new(entry, input, budget.left);
        if entry.is_symlink() {
            // A zip symlink stores its target as the member's content.
            let mut target = Vec::new();
            match (&mut reader).take(MAX_LINK_TARGET).read_to_end(&mut target) {
                Ok(_) => seen.links.push(Link {
                    path: rel,
                    target,
                    hard: false,
                }),
                Err(e) => self.diag(path::join(at, &rel), format!("unreadable symlink: {e}")),
            }
            budget.left = budget.left.saturating_sub(reader.out);
            return None;
        }
        let full = path::join(at, &rel);
        // The budget holds what an entry really inflates to, never what its header claims: a
        // header that lies about its size is read, named, and the entries after it too.
        seen.files.insert(rel);
        let meter = Rc::new(Meter::default());
        // Deferred sizes: the data may take up to all of `input`.
        let compressed = entry
            .size
            .map_or(input.len() as u64, |_| entry.compressed());
        meter.compressed.set(compressed);
        let mut capped = Capped {
            inner: &mut reader,
            meter,
            ratio: self.limits.max_ratio,
        };
        self.member(full.clone(), entry.mtime, entry.size, &mut capped, depth);
        budget.left = budget.left.saturating_sub(reader.out);
        if reader.over_budget {
            self.halt_zip(label, &full, budget, reader.out);
            return None;
        }
        Some(reader.consumed())
    }

    /// Stops reading a zip whose entries would inflate past its budget.
    fn halt_zip(&mut self, label: &str, member: &str, budget: &mut ZipBudget, size: u64) {
        budget.halted = true;
        self.diag(
            label,
            format!(
                "entries inflate to more than {} times the archive's size; stopped at {member} ({size} bytes), the entries after it are not read",
                self.limits.max_ratio
            ),
        );
    }

    /// Stops an archive with far more members than the entry limit allows files. Links and
    /// folders are never yielded, so without this an archive of millions of them (tiny once
    /// compressed) would be walked, and remembered for the link check, without bound.
    fn too_many_members(&mut self, label: &str, seen: &mut Seen) -> bool {
        seen.members += 1;
        let most = self.limits.max_entries.saturating_mul(MEMBERS_PER_ENTRY);
        if seen.members <= most {
            return false;
        }
        self.diag(
            label,
            format!("archive has more than {most} members, stopped"),
        );
        true
    }

    /// Normalises a member name, diagnosing names refused or made relative.
    fn member_name(
        &mut self,
        at: Option<&str>,
        raw: &[u8],
        backslash: bool,
        seen: &mut Seen,
    ) -> Option<String> {
        match path::member_path(raw, backslash) {
            Ok(member) => {
                // Archives made with `tar -P` have every member absolute: say it once.
                if member.was_absolute && !seen.noted_absolute {
                    seen.noted_absolute = true;
                    self.diag(
                        path::join(at, &member.path),
                        "absolute member path made relative",
                    );
                }
                Some(member.path)
            }
            Err(Refused::DotDot) => {
                self.diag(
                    path::join(at, &path::escape(raw)),
                    "member path contains `..` and could lead outside the bundle, skipped",
                );
                None
            }
            Err(Refused::Empty) => None,
        }
    }

    /// Judges every link of one archive now that all its members are known. A link is never
    /// yielded: one whose target is a member is a duplicate (the file is read once, as
    /// itself); anything else is diagnosed.
    fn check_links(&mut self, at: Option<&str>, seen: Seen) {
        if seen.links.is_empty() {
            return;
        }
        let mut dirs = seen.dirs;
        for file in &seen.files {
            let mut dir = path::parent(file);
            while !dir.is_empty() && dirs.insert(dir.to_owned()) {
                dir = path::parent(dir);
            }
        }
        let by_path: HashMap<&str, &Link> =
            seen.links.iter().map(|l| (l.path.as_str(), l)).collect();
        for link in &seen.links {
            let what = if link.hard { "hard link" } else { "symlink" };
            let target = path::escape(&link.target);
            let problem = match follow(link, &seen.files, &dirs, &by_path) {
                Followed::Inside => continue,
                Followed::Refused(LinkRefused::Absolute) => "is absolute",
                Followed::Refused(LinkRefused::Escapes) => "is outside the bundle",
                Followed::Missing => "is missing from the archive",
                Followed::Loop => "is part of a link loop",
            };
            self.diag(
                path::join(at, &link.path),
                format!("{what} target {target} {problem}, skipped"),
            );
        }
    }
}

/// Follows a link, through other links of the same archive, to a member or a directory.
fn follow(
    link: &Link,
    files: &HashSet<String>,
    dirs: &HashSet<String>,
    links: &HashMap<&str, &Link>,
) -> Followed {
    let mut current = link;
    for _ in 0..MAX_LINK_HOPS {
        let base = if current.hard {
            ""
        } else {
            path::parent(&current.path)
        };
        let resolved = match path::resolve_link(base, &current.target) {
            Ok(resolved) => resolved,
            Err(refused) => return Followed::Refused(refused),
        };
        // A link to a directory is not followed, but it is no problem either.
        if files.contains(&resolved) || dirs.contains(&resolved) || resolved.is_empty() {
            return Followed::Inside;
        }
        match links.get(resolved.as_str()) {
            Some(next) => current = next,
            None => return Followed::Missing,
        }
    }
    Followed::Loop
}

/// A zip entry's name for a diagnostic.
fn zip_name(at: Option<&str>, entry: &zipfmt::ZipEntry) -> String {
    path::join(at, &path::escape(&entry.name))
}
