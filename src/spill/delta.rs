//! A rendered text written as a [`Delta`] against the text before it: how many bytes it
//! shares with that text at the start and at the end, and what lies between, as it is.
//!
//! Invariant: [`Delta::append`] of the text before and of the middle gives the text back,
//! and refuses a delta that reaches past the text before (a damaged spill). The shared
//! start and end are found eight bytes at a time.

/// How a rendered record's text is written: the first `prefix` and the last `suffix` bytes
/// of the text of the record before it in its file, and what lies between them as it is.
/// The events of a file repeat each other a lot (component, field values, the start and end
/// of a message): about 30 % of the rendered bytes, which the spill then never writes to
/// fresh pages of the page cache (a slow host's costliest part of the JSON timeline). A
/// file's every [`MARK_STRIDE`]-th record, where a slice of the merge may start reading, and
/// a record put aside right after another file's take nothing from the one before
/// ([`Delta::NONE`]).
///
/// [`MARK_STRIDE`]: super::MARK_STRIDE
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Delta {
    pub(super) prefix: usize,
    pub(super) suffix: usize,
}

impl Delta {
    pub(super) const NONE: Delta = Delta {
        prefix: 0,
        suffix: 0,
    };

    /// What `text` shares with `before`: the longest common start, then the longest common
    /// end of what is left of both.
    pub(super) fn of(before: &[u8], text: &[u8]) -> Delta {
        let prefix = common_start(before, text);
        let suffix = common_end(
            before.get(prefix..).unwrap_or_default(),
            text.get(prefix..).unwrap_or_default(),
        );
        Delta { prefix, suffix }
    }

    /// Appends to `out` the text written as `middle` against `before`; false when `before`
    /// is too short for it (a damaged spill).
    pub(super) fn append(self, before: &[u8], middle: &[u8], out: &mut Vec<u8>) -> bool {
        let Some(start) = before.get(..self.prefix) else {
            return false;
        };
        let Some(end) = before
            .len()
            .checked_sub(self.suffix)
            .filter(|&at| at >= self.prefix)
            .and_then(|at| before.get(at..))
        else {
            return false;
        };
        out.extend_from_slice(start);
        out.extend_from_slice(middle);
        out.extend_from_slice(end);
        true
    }
}

/// How many bytes `a` and `b` share from their start, compared eight at a time.
fn common_start(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut at = 0;
    while let (Some(x), Some(y)) = (
        a.get(at..).and_then(|a| a.first_chunk::<8>()),
        b.get(at..).and_then(|b| b.first_chunk::<8>()),
    ) {
        let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if diff != 0 {
            return at + (diff.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < n && a.get(at) == b.get(at) {
        at += 1;
    }
    at
}

/// How many bytes `a` and `b` share at their end, compared eight at a time.
fn common_end(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut same = 0;
    while let (Some(x), Some(y)) = (
        a.get(..a.len() - same).and_then(|a| a.last_chunk::<8>()),
        b.get(..b.len() - same).and_then(|b| b.last_chunk::<8>()),
    ) {
        let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if diff != 0 {
            return same + (diff.leading_zeros() / 8) as usize;
        }
        same += 8;
    }
    while same < n && a.get(a.len() - 1 - same) == b.get(b.len() - 1 - same) {
        same += 1;
    }
    same
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the naive byte-by-byte loops say `a` and `b` share at their start and end.
    fn shared_naive(a: &[u8], b: &[u8]) -> (usize, usize) {
        let start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let end = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        (start, end)
    }

    #[test]
    fn common_starts_and_ends_are_those_of_a_byte_by_byte_walk() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut byte = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Few distinct bytes, so that long shared runs are common.
            b"ab"[(seed % 2) as usize]
        };
        for len_a in 0..40 {
            for len_b in [0, 1, 7, 8, 9, 16, 17, 39] {
                let a: Vec<u8> = (0..len_a).map(|_| byte()).collect();
                let mut b: Vec<u8> = a.iter().copied().take(len_b).collect();
                b.extend((b.len()..len_b).map(|_| byte()));
                let (start, end) = shared_naive(&a, &b);
                assert_eq!(common_start(&a, &b), start, "{a:?} {b:?}");
                assert_eq!(common_end(&a, &b), end, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_text_comes_back_from_its_delta_against_the_text_before() {
        let texts: [&[u8]; 8] = [
            b"",
            b"GET /calc 200 1.4ms\x01proxy.py",
            b"GET /calc 200 10.2ms\x01proxy.py",
            b"GET /calc 200 10.2ms\x01proxy.py",
            b"GET",
            b"POST /fruit 200 16.5ms\x01proxy.py",
            b"xx",
            b"xxxx",
        ];
        for before in texts {
            for text in texts {
                let delta = Delta::of(before, text);
                assert!(delta.prefix + delta.suffix <= before.len().min(text.len()));
                let middle = &text[delta.prefix..text.len() - delta.suffix];
                let mut out = b"kept:".to_vec();
                assert!(delta.append(before, middle, &mut out));
                assert_eq!(&out[5..], text, "{before:?} {text:?}");
            }
        }
        // More than the text before holds is refused (a damaged spill).
        let too_long = Delta {
            prefix: 3,
            suffix: 2,
        };
        assert!(!too_long.append(b"abcd", b"", &mut Vec::new()));
        assert!(too_long.append(b"abcde", b"", &mut Vec::new()));
    }
}
