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

use flate2::bufread::MultiGzDecoder;

use super::path::{self, LinkRefused, Refused};
use super::sniff::{self, Magic, SNIFF_LEN};
use super::Walker;
use crate::event::days_from_civil;

/// Inflation allowed beyond `ratio` × compressed size, so that small, very compressible files
/// (a log of one repeated line) are never mistaken for a bomb.
const RATIO_SLACK: u64 = 1 << 20;

/// Compressed bytes a gzip decoder may read ahead of its output. Small, because the ratio
/// check can only count what was read: a bomb is stopped within `ratio` times this.
const GZ_INPUT_BUFFER: usize = 16 << 10;

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
        let mut inflated = Capped {
            inner: MultiGzDecoder::new(io::BufReader::with_capacity(GZ_INPUT_BUFFER, counted)),
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
        let mut stream = Cursor::new(head).chain(inflated);
        if is_tar {
            self.tar(at, &mut stream, depth);
            Gz::Tar
        } else {
            self.member(sniff::strip_gz(name), mtime, None, &mut stream, depth);
            Gz::Single
        }
    }

    /// Reads a tar stream member by member. A read error ends the archive: tar has no index,
    /// so nothing after a broken spot can be found again.
    pub(super) fn tar(&mut self, at: Option<&str>, reader: &mut dyn Read, depth: u32) {
        let label = self.label_of(at);
        let mut archive = tar::Archive::new(reader);
        let entries = match archive.entries() {
            Ok(entries) => entries,
            Err(e) => {
                self.diag(label, format!("tar stream unreadable: {e}"));
                return;
            }
        };
        let mut seen = Seen::default();
        let mut last: Option<String> = None;
        let mut offset = 0u64;
        for item in entries {
            if self.stopped {
                break;
            }
            let mut entry = match item {
                Ok(entry) => entry,
                Err(e) => {
                    let problem = match &last {
                        Some(member) => {
                            format!("tar stream broken after member {member} (byte {offset}): {e}")
                        }
                        None => format!("tar stream broken at byte {offset}: {e}"),
                    };
                    self.diag(label, problem);
                    break;
                }
            };
            // Where the next header should start: the data is padded to whole 512-byte blocks.
            if self.too_many_members(&label, &mut seen) {
                break;
            }
            offset = entry
                .raw_file_position()
                .saturating_add(entry.size())
                .next_multiple_of(512);
            let raw = entry.path_bytes().into_owned();
            let Some(rel) = self.member_name(at, &raw, false, &mut seen) else {
                continue;
            };
            let full = path::join(at, &rel);
            last = Some(full.clone());
            let header = entry.header();
            let kind = header.entry_type();
            let mtime = header.mtime().ok().and_then(|t| i64::try_from(t).ok());
            if kind.is_file() || kind.is_contiguous() || kind.is_gnu_sparse() {
                seen.files.insert(rel);
                // A sparse member's header gives its stored size, not the size it reads as.
                let exact = (!kind.is_gnu_sparse()).then(|| entry.size());
                if self.member(full, mtime, exact, &mut entry, depth) {
                    break;
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
        self.check_links(at, seen);
    }

    /// Reads a zip held in memory. A zip whose central directory is unreadable (truncated,
    /// say) is read again by its local headers, which yields the members before the damage.
    pub(super) fn zip(&mut self, at: Option<&str>, data: &[u8], depth: u32) {
        let label = self.label_of(at);
        let mut seen = Seen::default();
        match zip::ZipArchive::new(Cursor::new(data)) {
            Ok(mut archive) => {
                for index in 0..archive.len() {
                    if self.stopped {
                        break;
                    }
                    let name = archive.name_for_index(index).map_or_else(
                        || format!("{label} member #{index}"),
                        |n| path::join(at, &path::escape(n.as_bytes())),
                    );
                    if self.too_many_members(&label, &mut seen) {
                        break;
                    }
                    match archive.by_index(index) {
                        Ok(mut file) => self.zip_member(at, &mut file, depth, &mut seen),
                        Err(e) => self.diag(name, format!("unreadable zip member: {e}")),
                    }
                }
            }
            Err(e) => {
                self.diag(
                    label.clone(),
                    format!(
                        "zip central directory unreadable ({e}), reading local headers instead"
                    ),
                );
                let mut cursor = Cursor::new(data);
                while !self.stopped {
                    let broken = match zip::read::read_zipfile_from_stream(&mut cursor) {
                        Ok(Some(_)) if self.too_many_members(&label, &mut seen) => break,
                        Ok(Some(mut file)) => {
                            self.zip_member(at, &mut file, depth, &mut seen);
                            None
                        }
                        Ok(None) => break,
                        Err(e) => Some(e),
                    };
                    if let Some(e) = broken {
                        let at_byte = cursor.position();
                        self.diag(
                            label,
                            format!("zip local headers unreadable at byte {at_byte}: {e}"),
                        );
                        break;
                    }
                }
            }
        }
        self.check_links(at, seen);
    }

    fn zip_member<R: Read>(
        &mut self,
        at: Option<&str>,
        file: &mut zip::read::ZipFile<'_, R>,
        depth: u32,
        seen: &mut Seen,
    ) {
        let raw = file.name().to_owned();
        let Some(rel) = self.member_name(at, raw.as_bytes(), true, seen) else {
            return;
        };
        if file.is_dir() {
            seen.dirs.insert(rel);
            return;
        }
        if file.is_symlink() {
            // A zip symlink stores its target as the member's content.
            let mut target = Vec::new();
            match file.take(MAX_LINK_TARGET).read_to_end(&mut target) {
                Ok(_) => seen.links.push(Link {
                    path: rel,
                    target,
                    hard: false,
                }),
                Err(e) => self.diag(path::join(at, &rel), format!("unreadable symlink: {e}")),
            }
            return;
        }
        seen.files.insert(rel.clone());
        let mtime = zip_mtime(file);
        let size = file.size();
        let meter = Rc::new(Meter::default());
        meter.compressed.set(file.compressed_size());
        let mut capped = Capped {
            inner: file,
            meter,
            ratio: self.limits.max_ratio,
        };
        self.member(path::join(at, &rel), mtime, Some(size), &mut capped, depth);
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

/// A zip member's modification time: the Unix extended-timestamp field when present (it is
/// UTC), else the DOS date-time, whose zone is unknown and taken as UTC.
fn zip_mtime<R: Read>(file: &zip::read::ZipFile<'_, R>) -> Option<i64> {
    for field in file.extra_data_fields() {
        if let zip::ExtraField::ExtendedTimestamp(stamp) = field {
            if let Some(t) = stamp.mod_time() {
                return Some(i64::from(t));
            }
        }
    }
    let dt = file.last_modified()?;
    if !dt.is_valid() {
        return None;
    }
    let days = days_from_civil(
        i64::from(dt.year()),
        u32::from(dt.month()),
        u32::from(dt.day()),
    );
    let secs = i64::from(dt.hour()) * 3600 + i64::from(dt.minute()) * 60 + i64::from(dt.second());
    Some(days * 86_400 + secs)
}
