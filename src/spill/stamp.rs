//! A stamp (what an event's time depends on: [`Stamp`]) as the stamps file holds it: a tag
//! byte, then only the numbers the tag says are there.
//!
//! Invariant: `decode_stamp` gives back exactly what `encode_stamp` wrote, and the tag
//! alone says how many bytes follow it (`stamp_rest`), so a reader takes a whole stamp at
//! once.

use std::io::{self, Read};

use super::record::Cursor;
use super::unreadable;
use crate::resolve::{Anchor, Carry, Own, Stamp};

/// A stamp is a tag byte and the numbers it says are there: most events have a time of their
/// own and carry it as their anchor, which takes 9 bytes, not the 40 of every part.
///
/// The tag's bits 0–2 say what the event's own time is (none, UTC, zone-less, year-less,
/// age); bits 3–4 what its anchor is (none, UTC, zone-less, or the same as its own time);
/// bit 5 whether it carries year-less indices, bit 6 whether an age.
const OWN_NONE: u8 = 0;
const OWN_UTC: u8 = 1;
const OWN_NAIVE: u8 = 2;
const OWN_NO_YEAR: u8 = 3;
const OWN_AGE: u8 = 4;
const ANCHOR_SHIFT: u8 = 3;
const ANCHOR_UTC: u8 = 1;
const ANCHOR_NAIVE: u8 = 2;
const ANCHOR_OWN: u8 = 3;
const HAS_NO_YEAR: u8 = 1 << 5;
const HAS_AGE: u8 = 1 << 6;
/// The most bytes a stamp takes.
pub(super) const STAMP_MAX: usize = 1 + 8 + 8 + 8 + 12;

/// Encodes `s` into `rec`, returning its length.
pub(super) fn encode_stamp(rec: &mut [u8; STAMP_MAX], s: &Stamp) -> usize {
    let mut at = 1usize;
    let mut put = |bytes: &[u8]| {
        if let Some(slot) = rec.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
        at += bytes.len();
    };
    let mut tag = match s.own {
        Own::None => OWN_NONE,
        Own::Anchor(Anchor::Utc(t)) => {
            put(&t.to_le_bytes());
            OWN_UTC
        }
        Own::Anchor(Anchor::Naive(t)) => {
            put(&t.to_le_bytes());
            OWN_NAIVE
        }
        Own::NoYear(i) => {
            put(&i.to_le_bytes());
            OWN_NO_YEAR
        }
        Own::Age(secs) => {
            put(&secs.to_le_bytes());
            OWN_AGE
        }
    };
    let anchor = match s.carry.anchor {
        None => 0,
        Some(a) if s.own == Own::Anchor(a) => ANCHOR_OWN,
        Some(Anchor::Utc(t)) => {
            put(&t.to_le_bytes());
            ANCHOR_UTC
        }
        Some(Anchor::Naive(t)) => {
            put(&t.to_le_bytes());
            ANCHOR_NAIVE
        }
    };
    tag |= anchor << ANCHOR_SHIFT;
    if let Some((lo, hi)) = s.carry.no_year {
        put(&lo.to_le_bytes());
        put(&hi.to_le_bytes());
        tag |= HAS_NO_YEAR;
    }
    if let Some((secs, before)) = s.carry.age {
        put(&secs.to_le_bytes());
        put(&before.to_le_bytes());
        tag |= HAS_AGE;
    }
    rec[0] = tag;
    at
}

/// The bytes after its tag byte a stamp of tag `tag` takes.
pub(super) fn stamp_rest(tag: u8) -> usize {
    let own = match tag & 0b111 {
        OWN_UTC | OWN_NAIVE | OWN_AGE => 8,
        OWN_NO_YEAR => 4,
        _ => 0,
    };
    let anchor = match (tag >> ANCHOR_SHIFT) & 0b11 {
        ANCHOR_UTC | ANCHOR_NAIVE => 8,
        _ => 0,
    };
    let no_year = if tag & HAS_NO_YEAR != 0 { 8 } else { 0 };
    let age = if tag & HAS_AGE != 0 { 12 } else { 0 };
    own + anchor + no_year + age
}

/// Reads the next stamp from `r`.
pub(super) fn read_stamp(r: &mut impl Read) -> io::Result<Stamp> {
    let mut rec = [0u8; STAMP_MAX];
    r.read_exact(&mut rec[..1])?;
    let len = 1 + stamp_rest(rec[0]);
    r.read_exact(rec.get_mut(1..len).unwrap_or_default())?;
    decode_stamp(rec.get(..len).unwrap_or_default()).ok_or_else(unreadable)
}

/// The stamp [`encode_stamp`] wrote in `rec`; `None` when `rec` is not one.
pub(super) fn decode_stamp(rec: &[u8]) -> Option<Stamp> {
    let mut c = Cursor(rec);
    let tag = c.u8()?;
    let own = match tag & 0b111 {
        OWN_NONE => Own::None,
        OWN_UTC => Own::Anchor(Anchor::Utc(c.i64()?)),
        OWN_NAIVE => Own::Anchor(Anchor::Naive(c.i64()?)),
        OWN_NO_YEAR => Own::NoYear(c.u32()?),
        OWN_AGE => Own::Age(c.i64()?),
        _ => return None,
    };
    let anchor = match (tag >> ANCHOR_SHIFT) & 0b11 {
        ANCHOR_UTC => Some(Anchor::Utc(c.i64()?)),
        ANCHOR_NAIVE => Some(Anchor::Naive(c.i64()?)),
        ANCHOR_OWN => match own {
            Own::Anchor(a) => Some(a),
            _ => return None,
        },
        _ => None,
    };
    let no_year = match tag & HAS_NO_YEAR {
        0 => None,
        _ => Some((c.u32()?, c.u32()?)),
    };
    let age = match tag & HAS_AGE {
        0 => None,
        _ => Some((c.i64()?, c.u32()?)),
    };
    c.0.is_empty().then_some(Stamp {
        own,
        carry: Carry {
            anchor,
            no_year,
            age,
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_kind_of_stamp_comes_back_as_it_went_in_and_the_common_one_is_short() {
        let owns = [
            Own::None,
            Own::Anchor(Anchor::Utc(-7)),
            Own::Anchor(Anchor::Naive(i64::MAX)),
            Own::NoYear(u32::MAX),
            Own::Age(-3),
        ];
        let anchors = [
            None,
            Some(Anchor::Utc(-7)),
            Some(Anchor::Naive(i64::MAX)),
            Some(Anchor::Utc(i64::MIN)),
        ];
        let mut stream = Vec::new();
        let mut all = Vec::new();
        for own in owns {
            for anchor in anchors {
                for no_year in [None, Some((2, 9))] {
                    for age in [None, Some((-3, 4))] {
                        let stamp = Stamp {
                            own,
                            carry: Carry {
                                anchor,
                                no_year,
                                age,
                            },
                        };
                        let mut rec = [0u8; STAMP_MAX];
                        let n = encode_stamp(&mut rec, &stamp);
                        assert_eq!(decode_stamp(&rec[..n]), Some(stamp));
                        // A stamp cut short, or followed by more, is not one.
                        assert_eq!(decode_stamp(&rec[..n - 1]), None);
                        stream.extend_from_slice(&rec[..n]);
                        all.push(stamp);
                    }
                }
            }
        }
        let mut r = &stream[..];
        for stamp in all {
            assert_eq!(read_stamp(&mut r).unwrap(), stamp);
        }
        assert!(r.is_empty());
        // An event with a time of its own, carried as its anchor: a tag and the time.
        let common = Stamp {
            own: Own::Anchor(Anchor::Utc(1)),
            carry: Carry {
                anchor: Some(Anchor::Utc(1)),
                no_year: None,
                age: None,
            },
        };
        assert_eq!(encode_stamp(&mut [0u8; STAMP_MAX], &common), 9);
    }
}
