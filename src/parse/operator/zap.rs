//! What zap writes the same way in its JSON and console encodings: level names and times.
//!
//! A level is one of zap's names in either case, or `Level(-n)` for logr's verbosity. A
//! time is an ISO 8601 instant (zoned or not) or, when the operator ran with
//! `--zap-time-encoding=epoch|millis|nano`, an epoch number whose size tells its unit. Only
//! epoch instants between 2001 and 2103 count, so that a stray number is never read as a
//! time.

use crate::event::{Level, Micros, RawTime, MICROS_PER_SEC};
use crate::parse::primitives::{date_time, instant};

/// A `ts` value: an ISO string, or an epoch number rendered as text.
pub(super) fn stamp(ts: &str) -> Option<RawTime> {
    match instant(ts) {
        Ok(("", utc)) => return Some(RawTime::Utc(utc)),
        Ok(_) => return None,
        Err(_) => {}
    }
    if let Ok(("", local)) = date_time(ts) {
        return Some(RawTime::Naive(local));
    }
    epoch_stamp(ts)
}

/// Seconds, milliseconds, microseconds or nanoseconds since the epoch, told apart by size.
/// Only instants between 2001 and 2103 are accepted, so that a stray number is not a time.
pub(super) fn epoch_stamp(token: &str) -> Option<RawTime> {
    let first = *token.as_bytes().first()?;
    if !first.is_ascii_digit()
        || !token
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let micros: Micros = if let Ok(int) = token.parse::<i64>() {
        match int {
            1_000_000_000..=4_199_999_999 => int * MICROS_PER_SEC,
            1_000_000_000_000..=4_199_999_999_999 => int * 1000,
            1_000_000_000_000_000..=4_199_999_999_999_999 => int,
            1_000_000_000_000_000_000..=4_199_999_999_999_999_999 => int / 1000,
            _ => return None,
        }
    } else {
        let v: f64 = token.parse().ok()?;
        let scale = if (1e9..4.2e9).contains(&v) {
            1e6
        } else if (1e12..4.2e12).contains(&v) {
            1e3
        } else if (1e15..4.2e15).contains(&v) {
            1.0
        } else if (1e18..4.2e18).contains(&v) {
            1e-3
        } else {
            return None;
        };
        (v * scale).round() as Micros
    };
    Some(RawTime::Utc(micros))
}

/// zap's level names in either case, plus `Level(-2)` / `LEVEL(-2)`, which zap prints for
/// logr verbosity 2 and above.
pub(super) fn zap_level(token: &str) -> Option<Level> {
    if let Some(level) = Level::parse(token) {
        return Some(level);
    }
    let inner = token
        .strip_prefix("Level(")
        .or_else(|| token.strip_prefix("LEVEL("))?
        .strip_suffix(')')?;
    let n: i32 = inner.parse().ok()?;
    Some(if n < 0 { Level::Trace } else { Level::Critical })
}
