//! Lines that repeat one another but for their leading date-time: the shape of a dense
//! incident. A line that starts with a date-time (`2024-10-07T15:45:50.283Z …`, `2024-10-07
//! 15:23:45,443 …`, `[2024-10-07 15:23:45,443 …`) has a key: a hash of the line with the
//! digits of that date-time masked. Two lines with one key differ only in those digits, so the
//! sieve's verdict on one holds for the other, and a parser reads the same record from both
//! but for its time, which is the first line's shifted by the difference of their stamps.
//! UUIDs (a reconcile's id on every operator line) are masked too, and handed back, so that a
//! record read from one line can be given the other's ids.

use crate::event::{micros_from_civil, Micros};

/// What [`line_key`] tells of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineKey {
    pub key: u64,
    /// The civil time of the leading date-time, read as if UTC: only differences between
    /// two lines of one key are used.
    pub t: Micros,
    /// The line's UUIDs, in order (the first [`MAX_IDS`]).
    pub ids: [[u8; 36]; MAX_IDS],
    pub n_ids: usize,
    /// A klog stamp: `t` is in the leap year 2000, the line's own year unknown.
    pub year_less: bool,
}

impl LineKey {
    /// The line's UUIDs, or `None` when it holds more than [`MAX_IDS`].
    pub fn ids(&self) -> Option<&[[u8; 36]]> {
        self.ids.get(..self.n_ids)
    }
}

/// UUIDs a [`LineKey`] hands back; a line with more has its ids masked all the same.
pub const MAX_IDS: usize = 2;

/// The key of a line that starts with a date-time (after an optional `[`), or with a klog /
/// glog header (`E1127 12:35:38.133197`, whose year-less stamp is read as one of the leap year
/// 2000): the line with that date-time's digits and its UUIDs masked.
pub fn line_key(line: &[u8]) -> Option<LineKey> {
    if let Some((end, t)) = klog_stamp(line) {
        return Some(keyed(line, 0, end, t, true));
    }
    let skip = usize::from(line.first() == Some(&b'['));
    let b = line.get(skip..)?;
    let (end, t) = dated_stamp(b)?;
    Some(keyed(line, skip, end, t, false))
}

/// A stamp's fraction of a second: up to nine digits after `.` or `,` at `at`, as micros,
/// and where it ends; `(0, at)` when there is none.
fn fraction(b: &[u8], at: usize) -> Option<(u32, usize)> {
    if !b.get(at).is_some_and(|c| matches!(c, b'.' | b',')) {
        return Some((0, at));
    }
    let mut n = 0;
    let mut micros = 0u32;
    while let Some(v) = b.get(at + 1 + n).filter(|c| c.is_ascii_digit()) {
        if n < 6 {
            micros = micros * 10 + u32::from(v - b'0');
        }
        n += 1;
    }
    if n == 0 {
        return None;
    }
    for _ in n..6 {
        micros *= 10;
    }
    Some((micros, at + 1 + n))
}

/// The digits of `b[r]` as a number, if they are all digits.
fn num(b: &[u8], r: std::ops::Range<usize>) -> Option<u32> {
    b.get(r)?.iter().try_fold(0u32, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

/// `HH:MM:SS` at `at`: hours, minutes and seconds.
fn time_of_day(b: &[u8], at: usize) -> Option<(u32, u32, u32)> {
    let colon = |i: usize| b.get(at + i) == Some(&b':');
    if !(colon(2) && colon(5)) {
        return None;
    }
    Some((
        num(b, at..at + 2)?,
        num(b, at + 3..at + 5)?,
        num(b, at + 6..at + 8)?,
    ))
}

/// A leading `YYYY-MM-DD[T ]HH:MM:SS[.frac]`: where it ends and its civil time as if UTC.
fn dated_stamp(b: &[u8]) -> Option<(usize, Micros)> {
    let sep = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"T ")) {
        return None;
    }
    let (y, mo, d) = (num(b, 0..4)?, num(b, 5..7)?, num(b, 8..10)?);
    let (h, mi, s) = time_of_day(b, 11)?;
    let (micros, end) = fraction(b, 19)?;
    Some((
        end,
        micros_from_civil(i64::from(y), mo, d, h, mi, s, micros)?,
    ))
}

/// Whether `b` leads with a klog / glog header stamp (`E1127 12:35:38.133197`).
pub fn klog_led(b: &[u8]) -> bool {
    klog_stamp(b).is_some()
}

/// A leading klog header stamp, `Lmmdd hh:mm:ss[.frac]` with `L` one of `IWEF`: where it
/// ends and its time in the leap year 2000.
fn klog_stamp(b: &[u8]) -> Option<(usize, Micros)> {
    if !matches!(b.first(), Some(b'I' | b'W' | b'E' | b'F')) || b.get(5) != Some(&b' ') {
        return None;
    }
    let (mo, d) = (num(b, 1..3)?, num(b, 3..5)?);
    let (h, mi, s) = time_of_day(b, 6)?;
    let (micros, end) = fraction(b, 14)?;
    Some((end, micros_from_civil(2000, mo, d, h, mi, s, micros)?))
}

/// The key of `line`, whose stamp is `line[skip..skip + end]` at time `t`.
fn keyed(line: &[u8], skip: usize, end: usize, t: Micros, year_less: bool) -> LineKey {
    let b = &line[skip..];
    let mut h = Fx::default();
    h.write_u64(end as u64);
    h.write(&line[..skip]);
    // The date-time's separators, not its digits.
    for &c in &b[..end] {
        h.write_u8(if c.is_ascii_digit() { b'0' } else { c });
    }
    let mut key = LineKey {
        key: 0,
        t,
        ids: [[0; 36]; MAX_IDS],
        n_ids: 0,
        year_less,
    };
    let rest = &b[end..];
    let mut from = 0;
    let mut too_many = false;
    for dash in memchr::memchr_iter(b'-', rest) {
        let Some(start) = dash.checked_sub(8) else {
            continue;
        };
        if start < from || !is_uuid_at(rest, start) {
            continue;
        }
        h.write(&rest[from..start]);
        h.write_u8(0xFF);
        match key.ids.get_mut(key.n_ids) {
            Some(slot) => {
                slot.copy_from_slice(&rest[start..start + 36]);
                key.n_ids += 1;
            }
            None => too_many = true,
        }
        from = start + 36;
    }
    h.write(&rest[from..]);
    key.key = h.finish();
    if too_many {
        key.n_ids = MAX_IDS + 1;
    }
    key
}

/// A UUID (`8-4-4-4-12` hex digits) at `start`, not inside a longer word.
fn is_uuid_at(text: &[u8], start: usize) -> bool {
    let Some(u) = text.get(start..start + 36) else {
        return false;
    };
    let word = |b: Option<&u8>| b.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-');
    if start > 0 && word(text.get(start - 1)) || word(text.get(start + 36)) {
        return false;
    }
    u.iter().enumerate().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => *c == b'-',
        _ => c.is_ascii_hexdigit(),
    })
}

/// A fast, fixed-seed 64-bit hash (FxHash's multiply-rotate, eight bytes a step): keys only
/// need to differ, and the same bytes must give the same key on every run.
#[derive(Default)]
pub struct Fx(u64);

impl Fx {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }

    pub fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
    }

    pub fn write_u8(&mut self, b: u8) {
        self.add(u64::from(b) | 0x100);
    }

    pub fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lines_that_differ_in_their_stamp_share_a_key() {
        let k = |l: &[u8]| line_key(l).map(|k| (k.key, k.t)).unwrap();
        let a = k(b"2023-08-25T23:19:32.009Z\tERROR\tx\tFail to reconcileServe.");
        let b = k(b"2023-08-25T23:19:34.011Z\tERROR\tx\tFail to reconcileServe.");
        assert_eq!(a.0, b.0);
        assert_eq!(b.1 - a.1, 2_002_000);
        let c = k(b"2023-08-25T23:19:34.011Z\tERROR\tx\tFail to reconcileServe!");
        assert_ne!(a.0, c.0);
        // Another shape of stamp is another key.
        let d = k(b"2023-08-25T23:19:34Z\tERROR\tx\tFail to reconcileServe.");
        assert_ne!(a.0, d.0);
        let e = k(b"[2024-10-07 15:23:45,443 I 71 71] (raylet) main.cc:1: hi");
        let f = k(b"[2024-10-07 15:23:46,443 I 71 71] (raylet) main.cc:1: hi");
        assert_eq!((e.0, f.1 - e.1), (f.0, 1_000_000));
        // klog: the level letter is part of the key, the stamp's digits are not.
        let g = k(b"E1007 15:45:50.283 1 controller.go:1] hi");
        let h = k(b"E1008 15:45:50.283 1 controller.go:1] hi");
        assert_eq!((g.0, h.1 - g.1), (h.0, 86_400_000_000));
        assert_ne!(g.0, k(b"W1007 15:45:50.283 1 controller.go:1] hi").0);
        assert!(line_key(b"E1307 15:45:50.283 1 controller.go:1] bad month").is_none());
        assert!(line_key(b"Error 15:45:50 not a klog header").is_none());
        assert!(line_key(b"2024-13-07 15:23:45 bad month").is_none());
    }

    #[test]
    fn uuids_are_masked_and_handed_back() {
        let a = line_key(br#"2024-04-25T23:12:29.720Z {"msg":"x","reconcileID":"17eb30fd-edb5-467e-bc3b-82910187b923"}"#).unwrap();
        let b = line_key(br#"2024-04-25T23:12:31.720Z {"msg":"x","reconcileID":"c00b3547-8723-4655-b41a-bd08125760db"}"#).unwrap();
        assert_eq!(a.key, b.key);
        assert_eq!(
            b.ids(),
            Some(&[*b"c00b3547-8723-4655-b41a-bd08125760db"][..])
        );
        // Not a UUID: a longer word holding one.
        let c = line_key(br#"2024-04-25T23:12:31.720Z {"msg":"x","reconcileID":"c00b3547-8723-4655-b41a-bd08125760dbX"}"#).unwrap();
        assert_ne!(a.key, c.key);
        assert_eq!(c.n_ids, 0);
    }
}
