//! The key of a repeat, for both folds: two records repeat each other when their texts are
//! the same once the words that vary from one repeat to the next are masked. The rows of huge
//! kubectl events tables (`row_fold`) and the repeated log records of a file (`load::fold`)
//! both build their keys with [`masked`]: it cuts a text into alternate runs of word and
//! separator characters, in order, and writes each run into a [`Sink`], a varying word as one
//! marker.
//!
//! What differs between the two folds is said by a [`Mask`] and a [`Sink`]. Events rows:
//! words of any script with `-`, `_` and `.`, any word holding a digit varies (a pod name, a
//! sandbox id, a count: [`DigitWords`]), appended to a key of bytes that stops past 512 bytes
//! ([`Capped`]). Log records: ASCII words with `-`, UUIDs and long hex strings vary
//! ([`Ids`]), hashed ([`Fx`]). What a fold does with its keys stays its own: `row_fold`
//! groups rows past the first 1000 of a file and adds up their kubectl counts and ages;
//! `load::fold` keeps the first three and last two of each run and counts the rest in an
//! `event::Repeat`.
//!
//! Invariant: a key depends only on the text's runs, in order, each varying word replaced
//! by one marker; runs are whole characters. The walk allocates nothing (it writes into the
//! caller's key or hash), so it costs no allocation per record.

use std::ops::ControlFlow;

use crate::parse::stamp::Fx;

/// How a fold cuts a text into words, and which words vary from one repeat to the next.
pub trait Mask {
    /// Whether characters beyond ASCII can be word characters; when not, every byte beyond
    /// ASCII is a separator and is never decoded.
    const WIDE: bool;
    /// Whether the walk tells [`Mask::varies`] if a word holds an ASCII digit.
    const DIGITS: bool;
    /// Whether the ASCII byte `b` is a word character.
    fn ascii_word(b: u8) -> bool;
    /// Whether a character beyond ASCII is a word character (asked only when [`Mask::WIDE`]).
    fn wide_word(c: char) -> bool;
    /// Whether `word` varies between repeats; `digit` says whether it holds an ASCII digit
    /// (always `false` when not [`Mask::DIGITS`]).
    fn varies(word: &[u8], digit: bool) -> bool;
}

/// Words of kubectl events rows: letters and digits of any script, `-`, `_` and `.`. A word
/// holding a digit varies (`worker-7f9c2`, `137`, each side of `0/3`).
pub struct DigitWords;

impl Mask for DigitWords {
    const WIDE: bool = true;
    const DIGITS: bool = true;

    fn ascii_word(b: u8) -> bool {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
    }

    fn wide_word(c: char) -> bool {
        c.is_alphanumeric()
    }

    fn varies(_: &[u8], digit: bool) -> bool {
        digit
    }
}

/// Words of log records: ASCII letters and digits and `-`. A UUID (`8-4-4-4-12` hex
/// digits) varies, and so does a string of 16 or more hex digits holding a digit; other
/// numbers (a counter, an exit code) do not.
pub struct Ids;

impl Mask for Ids {
    const WIDE: bool = false;
    // Only a long hex word asks, and rarely: it looks for its digit itself.
    const DIGITS: bool = false;

    fn ascii_word(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'-'
    }

    fn wide_word(_: char) -> bool {
        false
    }

    fn varies(token: &[u8], _: bool) -> bool {
        let hex = |s: &[u8]| s.iter().all(u8::is_ascii_hexdigit);
        if token.len() == 36 && is_uuid(token) {
            return true;
        }
        token.len() >= 16 && hex(token) && token.iter().any(u8::is_ascii_digit)
    }
}

/// `8-4-4-4-12` hex digits (the caller checked the length, 36).
fn is_uuid(token: &[u8]) -> bool {
    let mut parts = token.split(|&b| b == b'-');
    [8, 4, 4, 4, 12].iter().all(|&len| {
        parts
            .next()
            .is_some_and(|p| p.len() == len && p.iter().all(u8::is_ascii_hexdigit))
    }) && parts.next().is_none()
}

/// Where a masked text is written. Runs come as bytes (what a hash takes, with no check of
/// character boundaries), always whole characters.
pub trait Sink {
    /// A run of separator characters; `Break` ends the text there.
    fn separators(&mut self, run: &[u8]) -> ControlFlow<()>;
    /// A word that does not vary.
    fn word(&mut self, word: &[u8]);
    /// The marker of a word that varies.
    fn marker(&mut self);
}

/// Writes `text` into `sink`, run by run, each word that `M` says varies as one marker.
pub fn masked<M: Mask, S: Sink>(text: &str, sink: &mut S) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let (word, len) = class::<M>(text, i);
        i += len;
        if word {
            let mut digit = M::DIGITS && bytes[start].is_ascii_digit();
            while i < bytes.len() {
                let (word, len) = class::<M>(text, i);
                if !word {
                    break;
                }
                digit |= M::DIGITS && bytes[i].is_ascii_digit();
                i += len;
            }
            let run = &bytes[start..i];
            if M::varies(run, digit) {
                sink.marker();
            } else {
                sink.word(run);
            }
        } else {
            while i < bytes.len() {
                let (word, len) = class::<M>(text, i);
                if word {
                    break;
                }
                i += len;
            }
            if sink.separators(&bytes[start..i]).is_break() {
                return;
            }
        }
    }
}

/// Whether the character at byte `i` of `text` is a word character, and its length.
#[inline(always)]
fn class<M: Mask>(text: &str, i: usize) -> (bool, usize) {
    let b = text.as_bytes()[i];
    if !M::WIDE || b.is_ascii() {
        return (M::ascii_word(b), 1);
    }
    match text.get(i..).and_then(|s| s.chars().next()) {
        Some(c) => (M::wide_word(c), c.len_utf8()),
        None => (false, 1),
    }
}

/// A masked text appended to a key of UTF-8 bytes, a varying word as `#`; it stops at the
/// first separator character that brings what it appended past `cap` bytes (so the key
/// stays whole characters).
pub struct Capped<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    cap: usize,
}

impl Capped<'_> {
    pub fn new(out: &mut Vec<u8>, cap: usize) -> Capped<'_> {
        let start = out.len();
        Capped { out, start, cap }
    }
}

impl Sink for Capped<'_> {
    fn separators(&mut self, run: &[u8]) -> ControlFlow<()> {
        for (j, &b) in run.iter().enumerate() {
            self.out.push(b);
            // Checked once a character is whole: the next byte does not continue it.
            let whole = run.get(j + 1).is_none_or(|&next| next & 0xC0 != 0x80);
            if whole && self.out.len() - self.start > self.cap {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    fn word(&mut self, word: &[u8]) {
        self.out.extend_from_slice(word);
    }

    fn marker(&mut self) {
        self.out.push(b'#');
    }
}

/// A masked text hashed, each run as its bytes and a varying word as the byte `0xFF`.
impl Sink for Fx {
    fn separators(&mut self, run: &[u8]) -> ControlFlow<()> {
        self.write(run);
        ControlFlow::Continue(())
    }

    fn word(&mut self, word: &[u8]) {
        self.write(word);
    }

    fn marker(&mut self) {
        self.write_u8(0xFF);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash of the log fold's mask as first written: a byte walk, each word checked
    /// again for a UUID or a long hex string.
    fn ids_reference(text: &[u8], h: &mut Fx) {
        fn is_id(token: &[u8]) -> bool {
            let hex = |s: &[u8]| s.iter().all(u8::is_ascii_hexdigit);
            if token.len() == 36 {
                let parts: Vec<&[u8]> = token.split(|&b| b == b'-').collect();
                if parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
                    && parts.iter().all(|p| hex(p))
                {
                    return true;
                }
            }
            token.len() >= 16 && hex(token) && token.iter().any(u8::is_ascii_digit)
        }
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
        let mut i = 0;
        while i < text.len() {
            if !word(text[i]) {
                let start = i;
                while i < text.len() && !word(text[i]) {
                    i += 1;
                }
                h.write(&text[start..i]);
                continue;
            }
            let start = i;
            while i < text.len() && word(text[i]) {
                i += 1;
            }
            let token = &text[start..i];
            if is_id(token) {
                h.write_u8(0xFF);
            } else {
                h.write(token);
            }
        }
    }

    #[test]
    fn the_ids_mask_hashes_as_the_one_first_written() {
        let pieces = [
            "a",
            "Z9",
            "-",
            "_",
            ".",
            " ",
            "/",
            "7",
            "é",
            "漢",
            ":",
            "\t",
            "6f9c1d2e-8a47-4b9e-9c55-0d2e71a4b6f3",
            "6f9c1d2e-8a47-4b9e-9c55-0d2e71a4b6fz",
            "6f9c1d2e8a474b9e",
            "abcdefabcdefabcd",
            "0123456789abcdef01",
            "-6f9c1d2e-8a47-4b9e-9c55-0d2e71a4b6f3",
            "6f9c1d2e-8a47-4b9e9-c55-0d2e71a4b6f3",
        ];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..5000 {
            let mut text = String::new();
            let len = if round % 50 == 0 { 300 } else { round % 12 };
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push_str(pieces[(x % pieces.len() as u64) as usize]);
            }
            let mut shared = Fx::default();
            masked::<Ids, _>(&text, &mut shared);
            let mut reference = Fx::default();
            ids_reference(text.as_bytes(), &mut reference);
            assert_eq!(shared.finish(), reference.finish(), "{text:?}");
        }
    }

    #[test]
    fn each_mask_says_what_varies() {
        let digits = |text: &str| {
            let mut out = Vec::new();
            masked::<DigitWords, _>(text, &mut Capped::new(&mut out, 512));
            String::from_utf8(out).unwrap_or_default()
        };
        assert_eq!(digits("pod/worker-7f9c2 (x3) ok"), "pod/# (#) ok");
        let ids = |text: &str| {
            let mut h = Fx::default();
            masked::<Ids, _>(text, &mut h);
            h.finish()
        };
        assert_eq!(
            ids("req 6f9c1d2e-8a47-4b9e-9c55-0d2e71a4b6f3 failed: exit code 137"),
            ids("req 0d2e71a4-8a47-4b9e-9c55-6f9c1d2e71a4 failed: exit code 137")
        );
        assert_ne!(ids("exit code 137"), ids("exit code 1"));
    }
}
