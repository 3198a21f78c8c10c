//! Lines longer than a limit, cut as they are read. The first [`MAX_LINE_BYTES`] bytes of such
//! a line are kept; the rest of it is skipped as it streams past, never held, and the cut is
//! recorded ([`Cut`]) so that the loader can name the line in a diagnostic. A 200 MB line
//! with no newline then costs what a 1 MiB one does, in every container alike.
//!
//! Bytes only: a line is what lies between two `\n`; nothing here looks at what it says.

use std::io::{self, Read};

use crate::diag::Diagnostic;

/// Longest line kept whole, in bytes, without its newline.
///
/// Why 1 MiB: sixteen times the longest message a parser keeps (`parse::lines::
/// MAX_MESSAGE_BYTES`, 64 KiB), so every record a rule can read is whole even inside a docker
/// or CRI envelope; and half of a piece (`load`'s 2 MiB), so a piece still ends at a line end
/// within its size and memory stays that of a normal bundle. Kubernetes tools indent their
/// JSON and YAML, so a real document line is far shorter; a minified document of more than
/// 1 MiB on one line is cut like any other line (and is then no longer valid JSON).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A line longer than the limit, cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Where, in the bytes yielded, the kept head of the line ends: at its newline, or at the
    /// end of the file.
    pub at: usize,
    /// Bytes of the line kept (the limit).
    pub kept: u64,
    /// Bytes of the line skipped.
    pub skipped: u64,
}

impl Cut {
    /// The diagnostic for this cut, on `line` (1-based) of its file.
    pub fn diagnostic(&self, line: u32) -> Diagnostic {
        Diagnostic::at_line(
            line,
            format!(
                "line of {} bytes is longer than the limit of {} bytes: only its first {} bytes are read, {} bytes cut",
                self.kept + self.skipped,
                self.kept,
                self.kept,
                self.skipped
            ),
        )
    }

    /// The diagnostics for `cuts`, whose `at` are offsets in `text`, on the lines of `text`
    /// counted from `first_line` (the number of the line `text` starts with).
    pub fn diagnostics(cuts: &[Cut], text: &[u8], first_line: u32) -> Vec<Diagnostic> {
        let mut line = first_line;
        let mut from = 0usize;
        cuts.iter()
            .map(|cut| {
                let at = cut.at.clamp(from, text.len());
                let newlines = memchr::memchr_iter(b'\n', &text[from..at]).count();
                line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
                from = at;
                cut.diagnostic(line)
            })
            .collect()
    }

    /// Bytes skipped by all of `cuts`.
    pub fn skipped_bytes(cuts: &[Cut]) -> u64 {
        cuts.iter().map(|c| c.skipped).sum()
    }
}

/// A reader that passes on the bytes of `inner` with every line longer than `cap` bytes cut
/// at `cap`, and records each cut. Offsets count the bytes passed on.
pub(super) struct LineCap<R> {
    inner: R,
    cap: u64,
    /// Bytes of the current line passed on so far.
    run: u64,
    /// While the rest of a line is skipped: how many bytes of it so far.
    skipping: Option<u64>,
    /// Bytes passed on so far.
    passed: u64,
    /// Cuts, by offset in everything passed on.
    cuts: Vec<(u64, u64)>,
}

impl<R: Read> LineCap<R> {
    pub(super) fn new(inner: R, cap: usize) -> LineCap<R> {
        LineCap {
            inner,
            cap: cap as u64,
            run: 0,
            skipping: None,
            passed: 0,
            cuts: Vec::new(),
        }
    }

    /// Ends a skip that reached the end of the stream (or the point where reading stopped).
    pub(super) fn finish(&mut self) {
        if let Some(skipped) = self.skipping.take() {
            self.cuts.push((self.passed, skipped));
        }
    }

    /// The cuts whose line ends before `end` (an offset in what was passed on), with offsets
    /// made relative to `start`, taken out of the reader.
    pub(super) fn take_cuts(&mut self, start: u64, end: u64) -> Vec<Cut> {
        let n = self.cuts.iter().take_while(|&&(at, _)| at < end).count();
        self.cuts
            .drain(..n)
            .map(|(at, skipped)| Cut {
                at: usize::try_from(at.saturating_sub(start)).unwrap_or(usize::MAX),
                kept: self.cap,
                skipped,
            })
            .collect()
    }

    /// Every cut so far, offsets from the start of the stream.
    pub(super) fn all_cuts(&mut self) -> Vec<Cut> {
        self.finish();
        self.take_cuts(0, u64::MAX)
    }

    /// Cuts `buf` (bytes just read) in place; returns how many bytes are left at its start.
    fn filter(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len();
        let cap = self.cap;
        let (mut r, mut w) = (0usize, 0usize);
        // Moves `len` bytes at `r` down to `w`.
        let keep = |buf: &mut [u8], r: &mut usize, w: &mut usize, len: usize| {
            if *w != *r {
                buf.copy_within(*r..*r + len, *w);
            }
            *r += len;
            *w += len;
        };
        while r < n {
            if let Some(skipped) = self.skipping.as_mut() {
                match memchr::memchr(b'\n', &buf[r..]) {
                    Some(i) => {
                        *skipped += i as u64;
                        self.cuts.push((self.passed + w as u64, *skipped));
                        self.skipping = None;
                        self.run = 0;
                        // The newline ends the kept head of the line.
                        r += i;
                    }
                    None => {
                        *skipped += (n - r) as u64;
                        r = n;
                    }
                }
                continue;
            }
            // A stretch of at most `cap` bytes: only its first line can grow past the limit
            // (it goes on from before), every other line in it is shorter.
            let len = (n - r).min(usize::try_from(cap.max(1)).unwrap_or(usize::MAX));
            let stretch = &buf[r..r + len];
            let first = memchr::memchr(b'\n', stretch);
            let fits = match first {
                Some(i) => self.run + i as u64 <= cap,
                None => self.run + len as u64 <= cap,
            };
            if fits {
                self.run = match memchr::memrchr(b'\n', stretch) {
                    Some(last) => (len - last - 1) as u64,
                    None => self.run + len as u64,
                };
                keep(buf, &mut r, &mut w, len);
            } else {
                let room = usize::try_from(cap - self.run.min(cap)).unwrap_or(0);
                keep(buf, &mut r, &mut w, room);
                self.run = cap;
                self.skipping = Some(0);
            }
        }
        w
    }
}

impl<R: Read> Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let n = self.inner.read(buf)?;
            if n == 0 {
                self.finish();
                return Ok(0);
            }
            let kept = self.filter(buf.get_mut(..n).unwrap_or_default());
            if kept > 0 {
                self.passed += kept as u64;
                return Ok(kept);
            }
        }
    }
}

/// Whether `bytes` hold a line longer than `cap` bytes. Such a line holds a position that is a
/// multiple of `cap`, so only the lines around those positions are looked at: a mapped file is
/// checked without being read.
pub(super) fn has_long_line(bytes: &[u8], cap: usize) -> bool {
    let step = cap.max(1);
    let mut m = step;
    while m < bytes.len() {
        let lo = m.saturating_sub(cap + 1);
        let start = memchr::memrchr(b'\n', &bytes[lo..m]).map_or(lo, |i| lo + i + 1);
        if m - start > cap {
            return true;
        }
        let end = start + cap + 1;
        if end <= bytes.len() && memchr::memchr(b'\n', &bytes[m..end]).is_none() {
            return true;
        }
        m += step;
    }
    false
}

/// `bytes` with every line longer than `cap` cut, and the cuts.
pub(super) fn cut_lines(bytes: &[u8], cap: usize) -> (Vec<u8>, Vec<Cut>) {
    let mut reader = LineCap::new(bytes, cap);
    let mut out = Vec::with_capacity(bytes.len().min(cap.saturating_mul(4)));
    // Reading from a slice cannot fail.
    let _ = reader.read_to_end(&mut out);
    let cuts = reader.all_cuts();
    (out, cuts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `input` through a [`LineCap`] in reads of `chunk` bytes.
    fn through(input: &[u8], cap: usize, chunk: usize) -> (Vec<u8>, Vec<Cut>) {
        let mut reader = LineCap::new(input, cap);
        let mut out = Vec::new();
        let mut buf = vec![0u8; chunk];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
        let cuts = reader.all_cuts();
        (out, cuts)
    }

    fn cut(at: usize, kept: u64, skipped: u64) -> Cut {
        Cut { at, kept, skipped }
    }

    #[test]
    fn long_lines_are_cut_at_the_limit_whatever_the_reads() {
        let input = b"short\n0123456789abcdef\nmid\nXXXXXXXXX\n123456789";
        for chunk in [1, 2, 3, 5, 7, 8, 64] {
            let (out, cuts) = through(input, 8, chunk);
            assert_eq!(
                out, b"short\n01234567\nmid\nXXXXXXXX\n12345678",
                "reads of {chunk}"
            );
            assert_eq!(
                cuts,
                vec![cut(14, 8, 8), cut(27, 8, 1), cut(36, 8, 1)],
                "reads of {chunk}"
            );
            let diags = Cut::diagnostics(&cuts, &out, 1);
            let lines: Vec<_> = diags.iter().map(|d| d.line).collect();
            assert_eq!(lines, vec![Some(2), Some(4), Some(5)]);
        }
        // A line of exactly the limit is whole; `\r\n` counts its `\r`.
        let (out, cuts) = through(b"12345678\n1234567\r\n", 8, 4);
        assert_eq!(out, b"12345678\n1234567\r\n");
        assert!(cuts.is_empty());
    }

    #[test]
    fn a_stream_that_is_one_line_keeps_its_head() {
        let input = vec![b'z'; 100_000];
        let (out, cuts) = through(&input, 1000, 4096);
        assert_eq!(out.len(), 1000);
        assert_eq!(cuts, vec![cut(1000, 1000, 99_000)]);
        assert_eq!(
            cuts[0].diagnostic(1).problem,
            "line of 100000 bytes is longer than the limit of 1000 bytes: only its first 1000 bytes are read, 99000 bytes cut"
        );
        let (whole, whole_cuts) = cut_lines(&input, 1000);
        assert_eq!((whole, whole_cuts), (out, cuts));
    }

    #[test]
    fn cuts_are_taken_by_piece() {
        let input = b"aaaaaaaaaaaa\nb\ncccccccccccc\n";
        let mut reader = LineCap::new(&input[..], 4);
        let mut out = Vec::new();
        let _ = reader.read_to_end(&mut out);
        assert_eq!(out, b"aaaa\nb\ncccc\n");
        // The second piece starts at byte 5 (`b\n…`).
        assert_eq!(reader.take_cuts(0, 5), vec![cut(4, 4, 8)]);
        assert_eq!(reader.take_cuts(5, 12), vec![cut(6, 4, 8)]);
        assert!(reader.all_cuts().is_empty());
    }

    #[test]
    fn long_lines_are_found_without_reading_everything() {
        for cap in [1, 3, 8, 10] {
            for len in 0..40 {
                for at in 0..40 {
                    // A line of `len` bytes at `at`, among lines of `cap` bytes.
                    let mut text = Vec::new();
                    while text.len() < at {
                        text.extend(std::iter::repeat_n(b'a', cap.min(at - text.len())));
                        text.push(b'\n');
                    }
                    text.extend(std::iter::repeat_n(b'L', len));
                    for end in [false, true] {
                        let mut text = text.clone();
                        if end {
                            text.push(b'\n');
                            text.extend(std::iter::repeat_n(b'b', cap));
                        }
                        assert_eq!(
                            has_long_line(&text, cap),
                            len > cap,
                            "cap {cap}, line of {len} at {at}, more after: {end}"
                        );
                        assert_eq!(cut_lines(&text, cap).1.is_empty(), len <= cap);
                    }
                }
            }
        }
    }
}
