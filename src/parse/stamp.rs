//! Lines that repeat one another but for their leading date-time: the shape of a dense
//! incident. A line that starts with a date-time (`2024-10-07T15:45:50.283Z …`, `2024-10-07
//! 15:23:45,443 …`, `[2024-10-07 15:23:45,443 …`) has a key: a hash of the line with the
//! digits of that date-time masked. Two lines with one key differ only in those digits, so the
//! sieve's verdict on one holds for the other, and a parser reads the same record from both
//! but for its time, which is the first line's shifted by the difference of their stamps.

use crate::event::{micros_from_civil, Micros};

/// A line's key and the civil time of its leading date-time (read as if UTC: only
/// differences between two lines of one key are used).
pub fn line_key(line: &[u8]) -> Option<(u64, Micros)> {
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
    h.write(&b[end..]);
    Some((h.finish(), t))
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
        let a = line_key(b"2023-08-25T23:19:32.009Z\tERROR\tx\tFail to reconcileServe.").unwrap();
        let b = line_key(b"2023-08-25T23:19:34.011Z\tERROR\tx\tFail to reconcileServe.").unwrap();
        assert_eq!(a.0, b.0);
        assert_eq!(b.1 - a.1, 2_002_000);
        let c = line_key(b"2023-08-25T23:19:34.011Z\tERROR\tx\tFail to reconcileServe!").unwrap();
        assert_ne!(a.0, c.0);
        // Another shape of stamp is another key.
        let d = line_key(b"2023-08-25T23:19:34Z\tERROR\tx\tFail to reconcileServe.").unwrap();
        assert_ne!(a.0, d.0);
        let e = line_key(b"[2024-10-07 15:23:45,443 I 71 71] (raylet) main.cc:1: hi").unwrap();
        let f = line_key(b"[2024-10-07 15:23:46,443 I 71 71] (raylet) main.cc:1: hi").unwrap();
        assert_eq!((e.0, f.1 - e.1), (f.0, 1_000_000));
        assert!(line_key(b"I1007 15:45:50.283 1 controller.go:1] hi").is_none());
        assert!(line_key(b"2024-13-07 15:23:45 bad month").is_none());
    }
}
