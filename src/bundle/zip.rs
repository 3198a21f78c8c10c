//! The zip format, read directly from the archive's bytes (it is held in memory: mapped, or
//! read from a stream): where the central directory is, what each entry says about itself,
//! where its data lies, and a reader that inflates one entry and checks its size and CRC.
//!
//! Every entry is judged on its own, so that one that cannot be read (encrypted, an
//! unsupported method, a bad offset or local header, corrupt data, a bad CRC) costs only
//! itself. Entries whose bytes overlap another entry's are refused: that is how a
//! non-recursive zip bomb makes a few hundred kilobytes inflate to gigabytes. Without a usable
//! central directory the local headers are scanned for, and the scan resynchronises after a
//! bad one. Nothing here panics on any input: every read is bounds-checked.

use std::io::{self, Read};

use flate2::{Decompress, FlushDecompress, Status};

use crate::event::days_from_civil;

const LOCAL: &[u8; 4] = b"PK\x03\x04";
const CENTRAL: &[u8; 4] = b"PK\x01\x02";
const END: &[u8; 4] = b"PK\x05\x06";
const END64: &[u8; 4] = b"PK\x06\x06";
const END64_LOCATOR: &[u8; 4] = b"PK\x06\x07";
const DESCRIPTOR: &[u8; 4] = b"PK\x07\x08";

const LOCAL_LEN: usize = 30;
const CENTRAL_LEN: usize = 46;
const END_LEN: usize = 22;

/// How far from the end the end-of-central-directory record is looked for: the longest
/// comment it may carry, and as much again of junk appended after the archive.
const END_SEARCH: usize = END_LEN + 0xffff + (1 << 20);

/// Entries named in one diagnostic about overlapping entries; the rest are counted.
const NAMED_OVERLAPS: usize = 8;

/// One entry of the archive, as the central directory (or, without one, its local header)
/// describes it.
#[derive(Clone, Debug)]
pub(super) struct ZipEntry {
    /// The raw name (the Info-ZIP Unicode path when one is given and matches).
    pub name: Vec<u8>,
    flags: u16,
    method: u16,
    crc: u32,
    /// Sizes as declared; `None` when a local header defers them to a data descriptor.
    compressed: Option<u64>,
    pub size: Option<u64>,
    /// Where its local header starts.
    pub header: u64,
    /// Unix mode, when the entry was made on Unix.
    mode: Option<u32>,
    pub mtime: Option<i64>,
}

impl ZipEntry {
    pub fn is_dir(&self) -> bool {
        matches!(self.name.last(), Some(b'/' | b'\\'))
    }

    pub fn is_symlink(&self) -> bool {
        self.mode.is_some_and(|m| m & 0o170_000 == 0o120_000)
    }

    /// The declared compressed size (for the ratio check), or 0 when deferred.
    pub fn compressed(&self) -> u64 {
        self.compressed.unwrap_or(0)
    }

    /// Why this entry cannot be read at all, whatever its data holds.
    pub fn unreadable(&self) -> Option<String> {
        if self.flags & 1 != 0 || self.method == 99 {
            return Some("is encrypted, skipped".into());
        }
        if self.method != 0 && self.method != 8 {
            let name = match self.method {
                1 => " (shrink)",
                6 => " (implode)",
                9 => " (deflate64)",
                12 => " (bzip2)",
                14 => " (lzma)",
                93 => " (zstd)",
                95 => " (xz)",
                _ => "",
            };
            return Some(format!(
                "uses compression method {}{name}, which is not supported, skipped",
                self.method
            ));
        }
        None
    }
}

/// Where an entry's data lies, once its local header has been read.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    /// The local header's start.
    header: u64,
    /// The data's start and end (end = start + compressed size).
    start: u64,
    end: u64,
}

impl Span {
    /// The entry's data.
    pub fn data<'a>(&self, archive: &'a [u8]) -> &'a [u8] {
        slice(archive, self.start, self.end)
    }
}

/// `data[start..end]`, or as much of it as there is.
pub(super) fn slice(data: &[u8], start: u64, end: u64) -> &[u8] {
    let end = at_usize(end).unwrap_or(usize::MAX).min(data.len());
    let start = at_usize(start).unwrap_or(usize::MAX).min(end);
    data.get(start..end).unwrap_or_default()
}

/// Why an entry that overlaps another is refused (they are named together).
pub(super) const OVERLAP: &str = "overlaps the data of another entry, refused";

/// What listing the archive gave: entries in order, each with where its data lies or why it
/// cannot be read, and problems of the archive as a whole.
pub(super) struct Listing {
    pub entries: Vec<(ZipEntry, Result<Span, String>)>,
    pub problems: Vec<String>,
    /// The central directory was missing or broken: the archive is read by scanning its local
    /// headers (see [`Scan`]), from this byte, after the listed entries.
    pub scan_from: Option<u64>,
    /// Where scanning stops (the central directory's start, or the end).
    pub scan_to: u64,
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    let b = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([
        b.first().copied()?,
        b.get(1).copied()?,
    ]))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = data.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

fn at_usize(at: u64) -> Option<usize> {
    usize::try_from(at).ok()
}

/// The central directory, as the end record (and its Zip64 form) describes it.
struct Directory {
    start: u64,
    size: u64,
    entries: u64,
}

/// Finds the end-of-central-directory record, searching back from the end (past a comment
/// or appended junk), and the directory it points to. A record whose directory does not start
/// with a central header is a false match (bytes of compressed data), and the search goes on.
/// An archive with data prepended (a self-extractor) has every offset shifted: the shift is
/// found from where the directory really ends, and returned.
fn find_directory(data: &[u8]) -> Option<(Directory, u64)> {
    let floor = data.len().saturating_sub(END_SEARCH);
    let mut hay = data.get(floor..)?;
    while let Some(i) = memchr::memmem::rfind(hay, END) {
        let at = floor + i;
        if let Some(found) = directory_at(data, at) {
            return Some(found);
        }
        hay = hay.get(..i)?;
    }
    None
}

/// Reads the end record at `at` and checks the directory it points to.
fn directory_at(data: &[u8], at: usize) -> Option<(Directory, u64)> {
    let entries = u64::from(u16_at(data, at + 10)?);
    let size = u64::from(u32_at(data, at + 12)?);
    let start = u64::from(u32_at(data, at + 16)?);
    let mut dir = Directory {
        start,
        size,
        entries,
    };
    let mut end_of_dir = at as u64;
    // A Zip64 locator sits just before the end record; it gives the Zip64 end record.
    if let Some(loc) = at.checked_sub(20) {
        if data.get(loc..loc + 4) == Some(END64_LOCATOR) {
            let rec = u64_at(data, loc + 8)?;
            // The Zip64 record may itself be shifted; it ends where the locator starts.
            let rec = at_usize(rec)
                .filter(|&r| data.get(r..r + 4) == Some(END64))
                .or_else(|| {
                    let r = loc.checked_sub(56)?;
                    (data.get(r..r + 4) == Some(END64)).then_some(r)
                })?;
            dir = Directory {
                entries: u64_at(data, rec + 32)?,
                size: u64_at(data, rec + 40)?,
                start: u64_at(data, rec + 48)?,
            };
            end_of_dir = rec as u64;
        }
    }
    let starts_well = |start: u64| {
        dir.entries == 0
            || at_usize(start).and_then(|s| data.get(s..s + 4)) == Some(CENTRAL.as_slice())
    };
    if dir.start.checked_add(dir.size)? <= end_of_dir && starts_well(dir.start) {
        return Some((dir, 0));
    }
    // Prepended data: the directory ends where the end record starts.
    let real_start = end_of_dir.checked_sub(dir.size)?;
    let shift = real_start.checked_sub(dir.start)?;
    if shift > 0 && starts_well(real_start) {
        dir.start = real_start;
        return Some((dir, shift));
    }
    None
}

/// Lists the archive: by its central directory when one can be found, else (or for what
/// follows where it breaks) by scanning for local headers.
pub(super) fn list(data: &[u8]) -> Listing {
    let len = data.len() as u64;
    let mut listing = Listing {
        entries: Vec::new(),
        problems: Vec::new(),
        scan_from: None,
        scan_to: len,
    };
    let Some((dir, shift)) = find_directory(data) else {
        if !data.is_empty() {
            listing.problems.push(
                "zip central directory not found (no end record), reading local headers instead"
                    .into(),
            );
            listing.scan_from = Some(0);
        }
        return listing;
    };
    let mut pos = dir.start;
    let end = dir.start.saturating_add(dir.size);
    let mut read = 0u64;
    while read < dir.entries && pos < end {
        match central_entry(data, pos, shift) {
            Some((entry, next)) => {
                let span = locate(data, &entry);
                listing.entries.push((entry, span));
                pos = next;
                read += 1;
            }
            None => break,
        }
    }
    if read < dir.entries {
        // The rest of the members are found by their local headers, after the last one the
        // directory described.
        let after = listing
            .entries
            .iter()
            .filter_map(|(_, span)| span.as_ref().ok().map(|s| s.end))
            .max()
            .unwrap_or(0);
        listing.problems.push(format!(
            "zip central directory damaged at byte {pos} after {read} of its {} entries, reading local headers after byte {after} instead",
            dir.entries
        ));
        listing.scan_from = Some(after);
        listing.scan_to = dir.start;
    }
    refuse_overlaps(&mut listing);
    listing
}

/// Parses the central header at `pos`; returns the entry and where the next header starts.
fn central_entry(data: &[u8], pos: u64, shift: u64) -> Option<(ZipEntry, u64)> {
    let p = at_usize(pos)?;
    if data.get(p..p + 4)? != CENTRAL {
        return None;
    }
    let made_by = u16_at(data, p + 4)?;
    let flags = u16_at(data, p + 8)?;
    let method = u16_at(data, p + 10)?;
    let time = u16_at(data, p + 12)?;
    let date = u16_at(data, p + 14)?;
    let crc = u32_at(data, p + 16)?;
    let compressed = u32_at(data, p + 20)?;
    let size = u32_at(data, p + 24)?;
    let name_len = usize::from(u16_at(data, p + 28)?);
    let extra_len = usize::from(u16_at(data, p + 30)?);
    let comment_len = usize::from(u16_at(data, p + 32)?);
    let external = u32_at(data, p + 38)?;
    let offset = u32_at(data, p + 42)?;
    let name_at = p + CENTRAL_LEN;
    let name = data.get(name_at..name_at + name_len)?;
    let extra = data.get(name_at + name_len..name_at + name_len + extra_len)?;
    let next = name_at + name_len + extra_len + comment_len;
    if next > data.len() {
        return None;
    }
    let mut entry = ZipEntry {
        name: name.to_vec(),
        flags,
        method,
        crc,
        compressed: Some(u64::from(compressed)),
        size: Some(u64::from(size)),
        header: u64::from(offset),
        mode: (made_by >> 8 == 3 && external >> 16 != 0).then_some(external >> 16),
        mtime: None,
    };
    let zip64 = Wide {
        size: size == u32::MAX,
        compressed: compressed == u32::MAX,
        offset: offset == u32::MAX,
    };
    read_extra(extra, &mut entry, zip64);
    entry.header = entry.header.saturating_add(shift);
    if entry.mtime.is_none() {
        entry.mtime = dos_time(date, time);
    }
    Some((entry, next as u64))
}

/// Which fields a Zip64 extra field carries (those whose 32-bit field is all ones).
#[derive(Clone, Copy)]
struct Wide {
    size: bool,
    compressed: bool,
    offset: bool,
}

/// Reads the extra fields an entry's reading depends on: Zip64 sizes and offset, the Unix
/// extended timestamp, and the Info-ZIP Unicode path. Others are ignored, and so is a
/// malformed field (the entry keeps what its fixed fields say).
fn read_extra(extra: &[u8], entry: &mut ZipEntry, wide: Wide) {
    let mut at = 0usize;
    while let (Some(kind), Some(len)) = (u16_at(extra, at), u16_at(extra, at + 2)) {
        let start = at + 4;
        let Some(body) = extra.get(start..start + usize::from(len)) else {
            break;
        };
        match kind {
            0x0001 => {
                let mut p = 0;
                let mut next = || {
                    let v = u64_at(body, p);
                    p += 8;
                    v
                };
                if wide.size {
                    entry.size = next().or(entry.size);
                }
                if wide.compressed {
                    entry.compressed = next().or(entry.compressed);
                }
                if wide.offset {
                    entry.header = next().unwrap_or(entry.header);
                }
            }
            0x5455 if body.first().is_some_and(|flags| flags & 1 != 0) => {
                entry.mtime = u32_at(body, 1).map(i64::from).or(entry.mtime);
            }
            0x7075 => {
                // Version 1, the CRC-32 of the header's name, then the name in UTF-8; used
                // only while it still belongs to that name.
                let mut crc = flate2::Crc::new();
                crc.update(&entry.name);
                if body.first() == Some(&1) && u32_at(body, 1) == Some(crc.sum()) {
                    if let Some(name) = body.get(5..) {
                        entry.name = name.to_vec();
                    }
                }
            }
            _ => {}
        }
        at = start + usize::from(len);
    }
}

/// A DOS date and time (zone unknown, taken as UTC), when valid.
fn dos_time(date: u16, time: u16) -> Option<i64> {
    let year = 1980 + i64::from(date >> 9);
    let month = u32::from((date >> 5) & 0xf);
    let day = u32::from(date & 0x1f);
    let hour = i64::from(time >> 11);
    let minute = i64::from((time >> 5) & 0x3f);
    let second = i64::from(time & 0x1f) * 2;
    if !(1..=12).contains(&month) || day == 0 || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Reads an entry's local header and works out where its data lies.
fn locate(data: &[u8], entry: &ZipEntry) -> Result<Span, String> {
    let len = data.len() as u64;
    let header = entry.header;
    if header.saturating_add(LOCAL_LEN as u64) > len {
        return Err(format!(
            "local header offset {header} points past the end of the archive ({len} bytes), skipped"
        ));
    }
    let h = at_usize(header).ok_or("local header offset out of range, skipped")?;
    if data.get(h..h + 4) != Some(LOCAL.as_slice()) {
        return Err(format!("no local header at byte {header}, skipped"));
    }
    let (Some(name_len), Some(extra_len)) = (u16_at(data, h + 26), u16_at(data, h + 28)) else {
        return Err(format!("bad local header at byte {header}, skipped"));
    };
    let start = header + LOCAL_LEN as u64 + u64::from(name_len) + u64::from(extra_len);
    let Some(compressed) = entry.compressed else {
        return Err(format!("bad local header at byte {header}, skipped"));
    };
    let end = start.saturating_add(compressed);
    if end > len {
        return Err(format!(
            "data ({compressed} bytes at byte {start}) runs past the end of the archive ({len} bytes), skipped"
        ));
    }
    Ok(Span { header, start, end })
}

/// Refuses every entry whose bytes (local header and data) overlap another entry's. Entries
/// that overlap, directly or through others, form one group, and every entry of a group of
/// more than one is refused: no honest writer lets two entries share bytes.
fn refuse_overlaps(listing: &mut Listing) {
    let mut spans: Vec<(u64, u64, usize)> = listing
        .entries
        .iter()
        .enumerate()
        .filter_map(|(i, (_, span))| {
            span.as_ref()
                .ok()
                .map(|s| (s.header, s.end.max(s.header + 1), i))
        })
        .collect();
    spans.sort_unstable();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group: Vec<usize> = Vec::new();
    let mut group_end = 0u64;
    for (start, end, i) in spans {
        if group.is_empty() || start >= group_end {
            if group.len() > 1 {
                groups.push(std::mem::take(&mut group));
            }
            group.clear();
            group_end = end;
        } else {
            group_end = group_end.max(end);
        }
        group.push(i);
    }
    if group.len() > 1 {
        groups.push(group);
    }
    if groups.is_empty() {
        return;
    }
    let mut refused: Vec<usize> = groups.into_iter().flatten().collect();
    refused.sort_unstable();
    for &i in &refused {
        if let Some((_, span)) = listing.entries.get_mut(i) {
            *span = Err(OVERLAP.into());
        }
    }
    let names: Vec<String> = refused
        .iter()
        .take(NAMED_OVERLAPS)
        .filter_map(|&i| listing.entries.get(i))
        .map(|(e, _)| super::path::escape(&e.name).into_owned())
        .collect();
    let more = refused.len().saturating_sub(NAMED_OVERLAPS);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    listing.problems.push(format!(
        "{} entries share bytes with other entries (overlapping entries, the shape of a zip bomb), none of them is read: {}{more}",
        refused.len(),
        names.join(", ")
    ));
}

/// What the entry's data is judged by before reading it.
pub(super) fn check(entry: &ZipEntry, span: &Result<Span, String>) -> Result<Span, String> {
    if let Some(why) = entry.unreadable() {
        return Err(why);
    }
    span.clone()
}

/// Scanning for local headers, for an archive without a usable central directory. Each
/// header found is read; after its data the scan goes on from where the data ended, and after
/// a bad header from the byte after its signature, so that one damaged entry never hides the
/// ones behind it.
pub(super) struct Scan {
    pub pos: u64,
    pub to: u64,
}

/// One step of a [`Scan`].
pub(super) enum Found {
    /// An entry, with where its data starts and (when its header says) ends.
    Entry(ZipEntry, u64, Option<u64>),
    /// A bad local header at this byte.
    Bad(u64, String),
}

impl Scan {
    /// The next local header at or after `pos`, before `to`.
    pub fn next(&mut self, data: &[u8]) -> Option<Found> {
        let to = at_usize(self.to)?.min(data.len());
        let from = at_usize(self.pos)?;
        let hay = data.get(from..to)?;
        let at = from + memchr::memmem::find(hay, LOCAL)?;
        let header = at as u64;
        // Resynchronise after this signature unless the entry says where it ends.
        self.pos = header + 4;
        let parsed = (|| {
            let flags = u16_at(data, at + 6)?;
            let method = u16_at(data, at + 8)?;
            let time = u16_at(data, at + 10)?;
            let date = u16_at(data, at + 12)?;
            let crc = u32_at(data, at + 14)?;
            let compressed = u32_at(data, at + 18)?;
            let size = u32_at(data, at + 22)?;
            let name_len = usize::from(u16_at(data, at + 26)?);
            let extra_len = usize::from(u16_at(data, at + 28)?);
            let name = data.get(at + LOCAL_LEN..at + LOCAL_LEN + name_len)?;
            let extra_at = at + LOCAL_LEN + name_len;
            let extra = data.get(extra_at..extra_at + extra_len)?;
            let deferred = flags & 8 != 0 && compressed == 0;
            let mut entry = ZipEntry {
                name: name.to_vec(),
                flags,
                method,
                crc,
                compressed: (!deferred).then_some(u64::from(compressed)),
                size: (!deferred).then_some(u64::from(size)),
                header,
                mode: None,
                mtime: None,
            };
            read_extra(
                extra,
                &mut entry,
                Wide {
                    size: size == u32::MAX,
                    compressed: compressed == u32::MAX,
                    offset: false,
                },
            );
            if entry.mtime.is_none() {
                entry.mtime = dos_time(date, time);
            }
            Some((entry, (extra_at + extra_len) as u64))
        })();
        let Some((mut entry, start)) = parsed else {
            return Some(Found::Bad(header, "local header runs past the end".into()));
        };
        if entry.compressed.is_none() && entry.method == 0 {
            // Stored data does not say where it ends: its descriptor, whose size is the
            // distance to it, does.
            stored_end(data, start, to, &mut entry);
        }
        let end = match entry.compressed {
            Some(c) => {
                // Data cut short (a truncated archive) is read as far as it goes: the
                // reader then says where it broke, and the head of a log is still evidence.
                let end = start.saturating_add(c).min(self.to.max(start));
                self.pos = end;
                Some(end)
            }
            None => None,
        };
        Some(Found::Entry(entry, start, end))
    }

    /// Moves past an entry whose data (deferred sizes) was found to end at `end`: past its
    /// data descriptor too, when one follows.
    pub fn resume_after(&mut self, data: &[u8], end: u64) {
        let mut pos = end;
        if let Some(e) = at_usize(end) {
            if data.get(e..e + 4) == Some(DESCRIPTOR.as_slice()) {
                pos += 4;
            }
        }
        // A descriptor holds a CRC and two sizes of 4 bytes (8 in Zip64): skipping 12 keeps
        // the scan before any following header either way.
        self.pos = self.pos.max(pos + 12).min(self.to);
    }
}

/// Finds the data descriptor that ends a stored entry with deferred sizes: the first one
/// whose compressed size is its distance from the data's start.
fn stored_end(data: &[u8], start: u64, to: usize, entry: &mut ZipEntry) {
    let Some(from) = at_usize(start) else { return };
    let mut pos = from;
    while let Some(i) = data
        .get(pos..to)
        .and_then(|hay| memchr::memmem::find(hay, DESCRIPTOR))
    {
        let at = pos + i;
        let distance = (at - from) as u64;
        if u32_at(data, at + 8).map(u64::from) == Some(distance) {
            entry.compressed = Some(distance);
            entry.size = Some(distance);
            entry.crc = u32_at(data, at + 4).unwrap_or(entry.crc);
            return;
        }
        pos = at + 1;
    }
}

/// Reads one entry's data: stored or deflated, never more than its declared size (nor, for
/// deferred sizes, than `budget`), checking the size and CRC at its end. A CRC or size
/// mismatch is an error after all the data has been given, so what was read is still used.
pub(super) struct EntryReader<'a> {
    input: &'a [u8],
    pos: usize,
    inflate: Option<Decompress>,
    crc: flate2::Crc,
    expect_crc: u32,
    /// The declared size, when known.
    want: Option<u64>,
    /// Most bytes this reader may give (what is left of the archive's inflation budget).
    budget: u64,
    pub out: u64,
    /// Set when the budget, not the data, ended the entry.
    pub over_budget: bool,
    /// The data has ended; the next read checks size and CRC.
    ended: bool,
    /// An error to report on the next read, after the data given with it.
    pending: Option<String>,
    done: bool,
}

impl<'a> EntryReader<'a> {
    /// `input` is the entry's data (for deferred sizes: everything from its start).
    pub fn new(entry: &ZipEntry, input: &'a [u8], budget: u64) -> EntryReader<'a> {
        EntryReader {
            input,
            pos: 0,
            inflate: (entry.method == 8).then(|| Decompress::new(false)),
            crc: flate2::Crc::new(),
            expect_crc: entry.crc,
            want: entry.size,
            budget,
            out: 0,
            over_budget: false,
            ended: false,
            pending: None,
            done: false,
        }
    }

    /// Compressed bytes consumed so far (for deferred sizes: where the data ended).
    pub fn consumed(&self) -> u64 {
        match &self.inflate {
            Some(d) => d.total_in(),
            None => self.pos as u64,
        }
    }

    /// Checks the end of the data against what the headers declared.
    fn finish(&mut self) -> io::Result<usize> {
        self.done = true;
        if let Some(want) = self.want.filter(|&w| w != self.out) {
            return Err(io::Error::other(format!(
                "inflates to {} bytes, not the {want} its header declares",
                self.out
            )));
        }
        let sum = self.crc.sum();
        // Deferred sizes come with a CRC in the data descriptor, which is not read.
        if self.want.is_some() && sum != self.expect_crc {
            return Err(io::Error::other(format!(
                "bad CRC-32 (header {:08x}, data {sum:08x}), the data may be damaged",
                self.expect_crc
            )));
        }
        Ok(0)
    }

    /// Produces up to `buf.len()` bytes; returns how many and whether the data ended.
    fn produce(&mut self, buf: &mut [u8]) -> io::Result<(usize, bool)> {
        let rest = self.input.get(self.pos..).unwrap_or_default();
        match &mut self.inflate {
            None => {
                let n = rest.len().min(buf.len());
                if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
                    dst.copy_from_slice(src);
                }
                self.pos += n;
                Ok((n, self.pos >= self.input.len()))
            }
            Some(inflate) => {
                let (before_in, before_out) = (inflate.total_in(), inflate.total_out());
                let status = inflate
                    .decompress(rest, buf, FlushDecompress::None)
                    .map_err(|e| io::Error::other(format!("corrupt deflate data: {e}")))?;
                let n = usize::try_from(inflate.total_out() - before_out).unwrap_or(0);
                let used = usize::try_from(inflate.total_in() - before_in).unwrap_or(0);
                self.pos = self.pos.saturating_add(used);
                match status {
                    Status::StreamEnd => Ok((n, true)),
                    _ if n == 0 && used == 0 => Err(io::Error::other(
                        "deflate data ends early (truncated or corrupt)",
                    )),
                    _ => Ok((n, false)),
                }
            }
        }
    }
}

impl Read for EntryReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(problem) = self.pending.take() {
            self.done = true;
            return Err(io::Error::other(problem));
        }
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.ended {
            return self.finish();
        }
        // The most this entry may give, and one byte more to learn whether it holds more.
        let allowed = self.want.map_or(self.budget, |w| w.min(self.budget));
        let room = allowed.saturating_add(1).saturating_sub(self.out);
        let room = usize::try_from(room).map_or(buf.len(), |r| r.min(buf.len()));
        let Some(buf) = buf.get_mut(..room) else {
            return Ok(0);
        };
        let (n, ended) = match self.produce(buf) {
            Ok(got) => got,
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        let keep = usize::try_from(allowed.saturating_sub(self.out)).map_or(n, |k| k.min(n));
        self.crc.update(buf.get(..keep).unwrap_or_default());
        self.out += keep as u64;
        if keep < n {
            let problem = if self.want.is_some_and(|w| w <= self.budget) {
                format!("holds more than the {} bytes its header declares", self.out)
            } else {
                self.over_budget = true;
                "the archive's inflation budget ran out inside this entry".to_owned()
            };
            if keep == 0 {
                self.done = true;
                return Err(io::Error::other(problem));
            }
            self.pending = Some(problem);
            return Ok(keep);
        }
        self.ended = ended;
        if ended && n == 0 {
            return self.finish();
        }
        Ok(n)
    }
}
