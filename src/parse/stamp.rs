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
}

impl LineKey {
    /// The line's UUIDs, or `None` when it holds more than [`MAX_IDS`].
    pub fn ids(&self) -> Option<&[[u8; 36]]> {
        self.ids.get(..self.n_ids)
    }
}

/// UUIDs a [`LineKey`] hands back; a line with more has its ids masked all the same.
pub const MAX_IDS: usize = 2;

/// The key of a line that starts with a date-time (after an optional `[`): the line with that
/// date-time's digits and its UUIDs masked.
pub fn line_key(line: &[u8]) -> Option<LineKey> {
    let skip = usize::from(line.first() == Some(&b'['));
    let b = line.get(skip..)?;
    let digit = |i: usize| {
        b.get(i)
            .filter(|c| c.is_ascii_digit())
            .map(|c| u32::from(c - b'0'))
    };
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        r.into_iter()
            .try_fold(0u32, |acc, i| Some(acc * 10 + digit(i)?))
    };
    let sep = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"T ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // A fraction of up to nine digits after `.` or `,`.
    let mut end = 19;
    let mut micros = 0u32;
    if sep(19, b".,") {
        let mut n = 0;
        while let Some(v) = digit(20 + n) {
            if n < 6 {
                micros = micros * 10 + v;
            }
            n += 1;
        }
        if n == 0 {
            return None;
        }
        for _ in n..6 {
            micros *= 10;
        }
        end = 20 + n;
    }
    let t = micros_from_civil(i64::from(y), mo, d, h, mi, s, micros)?;
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
    Some(key)
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
        assert!(line_key(b"I1007 15:45:50.283 1 controller.go:1] hi").is_none());
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
