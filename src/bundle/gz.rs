//! Gzip streams of one or more members, read so that a damaged member costs only itself: the
//! reader resynchronises at the next member header and reports, by byte offset, what it lost.
//!
//! A gzip member is self-contained (header, deflate data, CRC-32 and size), so the members
//! after a damaged one can be found again by their header; bytes of a member between the
//! damage and its end cannot. Nothing here panics on any input.

use std::cell::RefCell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use flate2::{Crc, Decompress, FlushDecompress, Status};

/// Longest file name or comment read from a member header.
const MAX_HEADER_TEXT: usize = 64 << 10;

enum State {
    Header,
    Body,
    Trailer,
    /// Looking for the next member header after damage.
    Resync,
    Done,
}

/// Reads the concatenated members of a gzip stream.
pub(super) struct GzStream<R> {
    input: R,
    /// Compressed bytes consumed.
    offset: u64,
    inflate: Decompress,
    crc: Crc,
    member_start: u64,
    state: State,
    first: bool,
    /// What a break in the stream does: a tar reader must learn of it (an error, once) to
    /// find its next header; a single file reads on.
    pub gaps_are_errors: bool,
    /// The damage that led to the current resynchronisation: member start, problem, bytes
    /// inflated from it.
    damage: Option<(u64, String, u64)>,
    /// Problems of the stream as a whole, for the walker to report.
    pub problems: Rc<RefCell<Vec<String>>>,
    /// A member header the resynchronisation already read.
    held: Option<Vec<u8>>,
    /// Bytes inflated from the current member.
    member_out: u64,
    /// An error to give on the next read, after the data given with it.
    pending: Option<io::Error>,
}

impl<R: BufRead> GzStream<R> {
    pub fn new(input: R) -> GzStream<R> {
        GzStream {
            input,
            offset: 0,
            inflate: Decompress::new(false),
            crc: Crc::new(),
            member_start: 0,
            state: State::Header,
            first: true,
            gaps_are_errors: false,
            damage: None,
            problems: Rc::default(),
            held: None,
            member_out: 0,
            pending: None,
        }
    }

    fn note(&self, problem: String) {
        self.problems.borrow_mut().push(problem);
    }

    fn byte(&mut self) -> io::Result<Option<u8>> {
        let mut b = [0u8];
        match self.input.read(&mut b)? {
            0 => Ok(None),
            _ => {
                self.offset += 1;
                Ok(Some(b[0]))
            }
        }
    }

    fn bytes(&mut self, n: usize) -> io::Result<Option<Vec<u8>>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            match self.byte()? {
                Some(b) => out.push(b),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// Reads a member header. `Ok(false)`: the stream ended cleanly before it.
    fn header(&mut self) -> io::Result<bool> {
        let held = self.held.take();
        self.member_start = self.offset - held.as_ref().map_or(0, |h| h.len() as u64);
        let eof = || {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "gzip stream ends inside a member header (truncated)",
            )
        };
        let fixed = match held {
            Some(held) => Some(held),
            None => self.bytes(10)?,
        };
        let Some(fixed) = fixed else {
            if self.offset == self.member_start {
                return Ok(false);
            }
            return Err(eof());
        };
        if !plausible_header(&fixed) {
            return Err(io::Error::other(format!(
                "no gzip member header at byte {}",
                self.member_start
            )));
        }
        let flags = fixed.get(3).copied().unwrap_or(0);
        if flags & 4 != 0 {
            let len = self.bytes(2)?.ok_or_else(eof)?;
            let len = u16::from_le_bytes([
                len.first().copied().unwrap_or(0),
                len.get(1).copied().unwrap_or(0),
            ]);
            self.bytes(usize::from(len))?.ok_or_else(eof)?;
        }
        for bit in [8u8, 16] {
            if flags & bit != 0 {
                let mut n = 0;
                loop {
                    match self.byte()? {
                        Some(0) => break,
                        Some(_) if n < MAX_HEADER_TEXT => n += 1,
                        Some(_) => return Err(io::Error::other("gzip header text too long")),
                        None => return Err(eof()),
                    }
                }
            }
        }
        if flags & 2 != 0 {
            self.bytes(2)?.ok_or_else(eof)?;
        }
        self.inflate.reset(false);
        self.crc.reset();
        self.member_out = 0;
        Ok(true)
    }

    /// Records damage to the current member and starts looking for the next one. Returns the
    /// error a tar reader is given, when gaps are errors.
    fn damaged(&mut self, problem: String) -> io::Result<usize> {
        self.damage = Some((self.member_start, problem.clone(), self.member_out));
        self.state = State::Resync;
        if self.gaps_are_errors {
            return Err(io::Error::other(format!(
                "gzip member at byte {} damaged: {problem}",
                self.member_start
            )));
        }
        Ok(0)
    }

    /// Skips to the next plausible member header, which it leaves in `held`; false when the
    /// stream ends first.
    fn resync(&mut self) -> io::Result<bool> {
        let from = self.offset;
        let mut all_zero = true;
        let found = 'scan: loop {
            let buf = self.input.fill_buf()?;
            let Some(i) = memchr::memchr(0x1f, buf) else {
                all_zero &= buf.iter().all(|&b| b == 0);
                let n = buf.len();
                if n == 0 {
                    break 'scan false;
                }
                self.input.consume(n);
                self.offset += n as u64;
                continue;
            };
            all_zero &= buf
                .get(..i)
                .is_some_and(|skip| skip.iter().all(|&b| b == 0));
            if let Some(window) = buf.get(i..i + 10) {
                let hit = plausible_header(window);
                let step = if hit { i } else { i + 1 };
                all_zero &= hit;
                self.input.consume(step);
                self.offset += step as u64;
                if hit {
                    break 'scan true;
                }
                continue;
            }
            // A candidate cut by the end of what is buffered: go on byte by byte.
            self.input.consume(i);
            self.offset += i as u64;
            let mut win: Vec<u8> = Vec::with_capacity(10);
            loop {
                while win.len() < 10 {
                    match self.byte()? {
                        Some(b) => win.push(b),
                        None => break 'scan false,
                    }
                }
                if plausible_header(&win) {
                    self.held = Some(win);
                    break 'scan true;
                }
                all_zero = false;
                match win.iter().skip(1).position(|&b| b == 0x1f) {
                    Some(j) => {
                        win.drain(..=j);
                    }
                    None => continue 'scan,
                }
            }
        };
        let held = self.held.as_ref().map_or(0, |h| h.len() as u64);
        let at = self.offset - held;
        let skipped = at - from;
        let damage = self.damage.take();
        let problem = match (found, damage) {
            (true, Some((start, problem, out))) => format!(
                "gzip member at byte {start} damaged ({problem}) after {out} inflated bytes, which are kept; resumed at the next member, byte {at} ({} compressed bytes lost)",
                at.saturating_sub(start)
            ),
            (false, Some((start, problem, out))) => format!(
                "gzip member at byte {start} damaged ({problem}) after {out} inflated bytes, which are kept; no member follows"
            ),
            (true, None) => format!(
                "{skipped} bytes at byte {from} are not gzip, skipped to the next member at byte {at}"
            ),
            (false, None) if all_zero => return Ok(false),
            (false, None) => format!(
                "{skipped} bytes after the last gzip member (from byte {from}) are not gzip, ignored"
            ),
        };
        self.note(problem);
        Ok(found)
    }
}

/// Whether 10 bytes look like a gzip member header: magic, deflate, no reserved flags.
fn plausible_header(h: &[u8]) -> bool {
    h.len() >= 10
        && h.get(..3) == Some(&[0x1f, 0x8b, 8][..])
        && h.get(3).is_some_and(|f| f & 0xe0 == 0)
}

impl<R: BufRead> Read for GzStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.state {
                State::Done => return Ok(0),
                State::Header => match self.header() {
                    Ok(true) => {
                        self.first = false;
                        self.state = State::Body;
                    }
                    Ok(false) => {
                        self.state = State::Done;
                        return Ok(0);
                    }
                    Err(e) if self.first || e.kind() == io::ErrorKind::UnexpectedEof => {
                        self.state = State::Done;
                        return Err(e);
                    }
                    // Bytes after a member that are not a member.
                    Err(_) => self.state = State::Resync,
                },
                State::Resync => {
                    self.state = if self.resync()? {
                        State::Header
                    } else {
                        State::Done
                    };
                }
                State::Trailer => {
                    let Some(t) = self.bytes(8)? else {
                        self.state = State::Done;
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "gzip stream ends inside a member trailer (truncated)",
                        ));
                    };
                    let stored = u32::from_le_bytes([
                        t.first().copied().unwrap_or(0),
                        t.get(1).copied().unwrap_or(0),
                        t.get(2).copied().unwrap_or(0),
                        t.get(3).copied().unwrap_or(0),
                    ]);
                    if stored != self.crc.sum() {
                        self.note(format!(
                            "gzip member at byte {} fails its CRC-32 check, its data may be damaged",
                            self.member_start
                        ));
                    }
                    self.state = State::Header;
                }
                State::Body => {
                    let data = match self.input.fill_buf() {
                        Ok(data) => data,
                        Err(e) => {
                            self.state = State::Done;
                            return Err(e);
                        }
                    };
                    if data.is_empty() {
                        self.state = State::Done;
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "gzip stream ends inside a member (truncated)",
                        ));
                    }
                    let (in0, out0) = (self.inflate.total_in(), self.inflate.total_out());
                    let status = self.inflate.decompress(data, buf, FlushDecompress::None);
                    let used = usize::try_from(self.inflate.total_in() - in0).unwrap_or(0);
                    let n = usize::try_from(self.inflate.total_out() - out0).unwrap_or(0);
                    self.input.consume(used);
                    self.offset += used as u64;
                    self.crc.update(buf.get(..n).unwrap_or_default());
                    self.member_out += n as u64;
                    match status {
                        Err(e) => {
                            if let Err(gap) = self.damaged(format!("corrupt deflate data: {e}")) {
                                if n > 0 {
                                    self.pending = Some(gap);
                                    return Ok(n);
                                }
                                return Err(gap);
                            }
                        }
                        Ok(Status::StreamEnd) => self.state = State::Trailer,
                        Ok(_) if n == 0 && used == 0 => {
                            self.damaged("deflate data makes no progress".into())?;
                        }
                        Ok(_) => {}
                    }
                    if n > 0 {
                        return Ok(n);
                    }
                }
            }
        }
    }
}
