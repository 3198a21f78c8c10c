//! Grammar pieces every format shares: timestamps in each of their spellings, levels and
//! `kubectl` ages, written as small nom parsers over `&str`.
//!
//! Each function takes the input at the position where the piece must start and returns the
//! rest. None of them allocates or panics; an impossible date (`Feb 30`, year 9999) is a
//! parse failure, not a rolled-over instant.

use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::{char, one_of};
use nom::combinator::opt;
use nom::{IResult, Parser};

use crate::event::{micros_from_civil, Micros, MICROS_PER_SEC};

/// Exactly `n` ASCII digits as a number.
fn digits(n: usize) -> impl Fn(&str) -> IResult<&str, u32> {
    // By hand: every time of every line passes here, and nom's `take_while_m_n` with a
    // `parse` after it was a tenth of a full read. `n` is at most 4, so it cannot overflow.
    move |i: &str| match i.as_bytes().get(..n) {
        Some(d) if d.iter().all(u8::is_ascii_digit) => {
            let value = d.iter().fold(0u32, |v, b| v * 10 + u32::from(b - b'0'));
            Ok((&i[n..], value))
        }
        _ => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Digit,
        ))),
    }
}

/// One to nine fractional digits, scaled to microseconds.
fn fraction(i: &str) -> IResult<&str, u32> {
    let (rest, s) = take_while_m_n(1, 9, |c: char| c.is_ascii_digit()).parse(i)?;
    let mut micros = 0u32;
    for (idx, b) in s.bytes().take(6).enumerate() {
        micros += u32::from(b - b'0') * 10u32.pow(5 - idx as u32);
    }
    Ok((rest, micros))
}

/// `YYYY-MM-DD` followed by `sep` and `HH:MM:SS`, then an optional `[.,]fraction`.
/// Returns the civil time read as if it were UTC.
///
/// By hand over bytes: every timed line of every text log passes here, and nom's tuple of
/// a dozen parsers was most of a light read's parse.
pub fn date_time(i: &str) -> IResult<&str, Micros> {
    let fail = || {
        Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )))
    };
    let b = i.as_bytes();
    let Some(
        &[y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1, sep, h0, h1, b':', n0, n1, b':', s0, s1],
    ) = b.get(..19)
    else {
        return fail();
    };
    if sep != b'T' && sep != b' ' {
        return fail();
    }
    let n = |d: &[u8]| -> Option<u32> {
        d.iter().try_fold(0u32, |v, &c| {
            c.is_ascii_digit().then(|| v * 10 + u32::from(c - b'0'))
        })
    };
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) = (
        n(&[y0, y1, y2, y3]),
        n(&[m0, m1]),
        n(&[d0, d1]),
        n(&[h0, h1]),
        n(&[n0, n1]),
        n(&[s0, s1]),
    ) else {
        return fail();
    };
    // The fraction: one to nine digits after `.` or `,`, scaled to microseconds.
    let mut end = 19;
    let mut micros = 0u32;
    if matches!(b.get(19), Some(b'.' | b',')) {
        let frac = b.get(20..).unwrap_or_default();
        let digits = frac
            .iter()
            .take(9)
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 {
            const SCALE: [u32; 6] = [100_000, 10_000, 1000, 100, 10, 1];
            for (c, scale) in frac.iter().zip(SCALE).take(digits) {
                micros += u32::from(c - b'0') * scale;
            }
            end = 20 + digits;
        }
    }
    match micros_from_civil(i64::from(y), mo, d, h, mi, s, micros) {
        Some(t) => Ok((&i[end..], t)),
        None => fail(),
    }
}

/// A zone suffix: `Z`, `+0800`, `+08:00`, `-07`. Returns the offset east of UTC in seconds.
pub fn zone(i: &str) -> IResult<&str, i64> {
    if let Some(rest) = i.strip_prefix('Z') {
        return Ok((rest, 0));
    }
    let (rest, (sign, h, _, m)) =
        (one_of("+-"), digits(2), opt(char(':')), opt(digits(2))).parse(i)?;
    let secs = i64::from(h) * 3600 + i64::from(m.unwrap_or(0)) * 60;
    Ok((rest, if sign == '-' { -secs } else { secs }))
}

/// An ISO 8601 / RFC 3339 instant with a zone: `2024-04-11T07:43:43.385Z`,
/// `2024-04-11T15:43:43.385+0800`, `2026-03-04T07:42:11.446543463Z`. Returns UTC.
pub fn instant(i: &str) -> IResult<&str, Micros> {
    let (rest, (local, off)) = (date_time, zone).parse(i)?;
    Ok((rest, local - off * MICROS_PER_SEC))
}

/// Ray's Python `asctime`: `2023-07-10 11:24:31,962` (no zone).
pub fn ray_asctime(i: &str) -> IResult<&str, Micros> {
    date_time(i)
}

/// klog / glog header without the year: `I0411 07:43:44.182159`.
/// Returns the level letter, month, day and microseconds of the day.
pub fn klog_header(i: &str) -> IResult<&str, (char, u8, u8, i64)> {
    let (rest, (lvl, mo, d, _, h, _, mi, _, s, _, f)) = (
        one_of("IWEF"),
        digits(2),
        digits(2),
        char(' '),
        digits(2),
        char(':'),
        digits(2),
        char(':'),
        digits(2),
        char('.'),
        fraction,
    )
        .parse(i)?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    let micros_of_day =
        (i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s)) * MICROS_PER_SEC + i64::from(f);
    Ok((rest, (lvl, mo as u8, d as u8, micros_of_day)))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn month_abbrev(i: &str) -> IResult<&str, u32> {
    for (idx, name) in MONTHS.iter().enumerate() {
        if let Some(rest) = i.strip_prefix(name) {
            return Ok((rest, idx as u32 + 1));
        }
    }
    Err(nom::Err::Error(nom::error::Error::new(
        i,
        nom::error::ErrorKind::Tag,
    )))
}

/// The aiohttp access-log stamp inside dashboard logs: `[10/Jul/2023:18:24:31 +0000]`.
/// Returns UTC.
pub fn access_log_stamp(i: &str) -> IResult<&str, Micros> {
    let (rest, (_, d, _, mo, _, y, _, h, _, mi, _, s, _, off, _)) = (
        char('['),
        digits(2),
        char('/'),
        month_abbrev,
        char('/'),
        digits(4),
        char(':'),
        digits(2),
        char(':'),
        digits(2),
        char(':'),
        digits(2),
        char(' '),
        zone,
        char(']'),
    )
        .parse(i)?;
    match micros_from_civil(i64::from(y), mo, d, h, mi, s, 0) {
        Some(t) => Ok((rest, t - off * MICROS_PER_SEC)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        ))),
    }
}

/// RFC 1123 with a numeric zone, as `kubectl describe pod` prints `Started:`:
/// `Tue, 02 Jul 2024 22:16:22 +0800`. Returns UTC.
pub fn rfc1123z(i: &str) -> IResult<&str, Micros> {
    let (rest, (_, _, d, _, mo, _, y, _, h, _, mi, _, s, _, off)) = (
        take_while_m_n(3, 3, |c: char| c.is_ascii_alphabetic()),
        tag(", "),
        digits(2),
        char(' '),
        month_abbrev,
        char(' '),
        digits(4),
        char(' '),
        digits(2),
        char(':'),
        digits(2),
        char(':'),
        digits(2),
        char(' '),
        zone,
    )
        .parse(i)?;
    match micros_from_civil(i64::from(y), mo, d, h, mi, s, 0) {
        Some(t) => Ok((rest, t - off * MICROS_PER_SEC)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        ))),
    }
}

/// A `kubectl` human duration (`47s`, `3m12s`, `2d3h`, `5y`) in seconds.
/// `<unknown>` and `<invalid>` are not durations.
pub fn human_duration(i: &str) -> IResult<&str, i64> {
    let mut total = 0i64;
    let mut rest = i;
    let mut any = false;
    loop {
        let n_digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if n_digits == 0 || n_digits > 9 {
            break;
        }
        let (num, after) = rest.split_at(n_digits);
        let Some(unit) = after.chars().next() else {
            break;
        };
        let mult = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'y' => 365 * 86_400,
            _ => break,
        };
        let Ok(n) = num.parse::<i64>() else { break };
        total += n * mult;
        rest = &after[1..];
        any = true;
    }
    if any {
        Ok((rest, total))
    } else {
        Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Digit,
        )))
    }
}

/// Finds the first ISO-like `YYYY-MM-DD[ T]HH:MM:SS` within the first `window` bytes of a line.
/// Used by classification and by lenient fallbacks (pasted lines with a prefix).
pub fn find_date_time(line: &str, window: usize) -> Option<(usize, Micros)> {
    let bytes = line.as_bytes();
    let limit = bytes.len().min(window);
    let mut idx = 0;
    while idx + 19 <= bytes.len() && idx < limit {
        if bytes[idx].is_ascii_digit()
            && bytes.get(idx + 4) == Some(&b'-')
            && bytes.get(idx + 7) == Some(&b'-')
            && bytes.get(idx + 13) == Some(&b':')
            && line.is_char_boundary(idx)
        {
            if let Ok((_, t)) = date_time(&line[idx..]) {
                return Some((idx, t));
            }
        }
        idx += 1;
    }
    None
}

/// `s` split around its first `b`, an ASCII byte: `str::split_once` for one ASCII byte,
/// a plain scan rather than a char searcher (which calls `memcmp` at every candidate). The
/// hot paths of the line parsers split short words this way.
pub(crate) fn split_once_byte(s: &str, b: u8) -> Option<(&str, &str)> {
    debug_assert!(b.is_ascii());
    let i = s.bytes().position(|c| c == b)?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// `s` split around its last `b`, an ASCII byte ([`split_once_byte`] from the end).
pub(crate) fn rsplit_once_byte(s: &str, b: u8) -> Option<(&str, &str)> {
    debug_assert!(b.is_ascii());
    let i = s.bytes().rposition(|c| c == b)?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// Whether `s` holds the byte `b`.
pub(crate) fn has_byte(s: &str, b: u8) -> bool {
    s.bytes().any(|c| c == b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::format_rfc3339;

    #[test]
    fn byte_splits_are_the_char_splits_of_an_ascii_byte() {
        for s in [
            "",
            " ",
            "a b c",
            "é ü:x",
            "no-space",
            "a:b:c",
            "日本 語",
            "x=1 y=2",
        ] {
            for b in [b' ', b':', b'='] {
                let c = char::from(b);
                assert_eq!(split_once_byte(s, b), s.split_once(c), "{s:?} {c:?}");
                assert_eq!(rsplit_once_byte(s, b), s.rsplit_once(c), "{s:?} {c:?}");
                assert_eq!(has_byte(s, b), s.contains(c), "{s:?} {c:?}");
            }
        }
    }

    fn utc(r: IResult<&str, Micros>) -> String {
        match r {
            Ok((rest, t)) => format!("{} rest={rest:?}", format_rfc3339(t)),
            Err(_) => "error".to_string(),
        }
    }

    /// `date_time` as nom combinators, the way it was written before it was written by hand.
    fn date_time_by_nom(i: &str) -> IResult<&str, Micros> {
        let (rest, (y, _, mo, _, d, _, h, _, mi, _, s)) = (
            digits(4),
            char('-'),
            digits(2),
            char('-'),
            digits(2),
            one_of("T "),
            digits(2),
            char(':'),
            digits(2),
            char(':'),
            digits(2),
        )
            .parse(i)?;
        let (rest, frac) = opt((one_of(".,"), fraction)).parse(rest)?;
        let micros = frac.map_or(0, |(_, f)| f);
        match micros_from_civil(i64::from(y), mo, d, h, mi, s, micros) {
            Some(t) => Ok((rest, t)),
            None => Err(nom::Err::Error(nom::error::Error::new(
                i,
                nom::error::ErrorKind::Verify,
            ))),
        }
    }

    #[test]
    fn date_time_reads_what_the_combinators_read() {
        let seeds = [
            "2024-10-07 15:23:43,585\tINFO x",
            "2024-10-07T15:23:43.123456789Z",
            "2024-10-07T15:23:43.1234567891Z",
            "2024-02-29 00:00:00",
            "2023-02-29 00:00:00",
            "2024-12-31T23:59:60.5",
            "2024-13-01 00:00:00",
            "2024-10-07x15:23:43",
            "2024-10-07 15:23:43.",
            "2024-10-07 15:23:43,x",
            "2024-10-07 15:23:4",
            "2024-10-07 15:23:43é",
            "é024-10-07 15:23:43",
            "",
        ];
        let mut cases: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
        // Every seed with each byte position replaced by characters that matter here.
        for seed in seeds {
            for (at, _) in seed.char_indices() {
                for c in ['0', '9', '-', ':', ' ', 'T', '.', ',', 'a', 'é'] {
                    let mut s = seed.to_string();
                    s.replace_range(
                        at..at + seed[at..].chars().next().map_or(0, char::len_utf8),
                        &c.to_string(),
                    );
                    cases.push(s);
                }
                cases.push(seed[..at].to_string());
            }
        }
        for case in &cases {
            assert_eq!(
                date_time(case).ok(),
                date_time_by_nom(case).ok(),
                "{case:?}"
            );
        }
    }

    #[test]
    fn instants() {
        assert_eq!(
            utc(instant("2024-04-11T07:43:43.385Z\tINFO")),
            "2024-04-11T07:43:43.385Z rest=\"\\tINFO\""
        );
        assert_eq!(
            utc(instant("2024-04-11T15:43:43.385+0800 x")),
            "2024-04-11T07:43:43.385Z rest=\" x\""
        );
        assert_eq!(
            utc(instant("2026-03-04T07:42:11.446543463Z 2026")),
            "2026-03-04T07:42:11.446543Z rest=\" 2026\""
        );
        assert_eq!(
            utc(instant("2023-07-11T22:21:24Z")),
            "2023-07-11T22:21:24.000Z rest=\"\""
        );
        assert_eq!(utc(instant("2024-02-30T00:00:00Z")), "error");
    }

    #[test]
    fn ray_times() {
        assert_eq!(
            utc(ray_asctime("2023-07-10 11:24:31,962\tINFO")),
            "2023-07-10T11:24:31.962Z rest=\"\\tINFO\""
        );
    }

    #[test]
    fn access_log() {
        assert_eq!(
            utc(access_log_stamp("[10/Jul/2023:18:24:31 +0000] \"GET")),
            "2023-07-10T18:24:31.000Z rest=\" \\\"GET\""
        );
    }

    #[test]
    fn rfc1123() {
        assert_eq!(
            utc(rfc1123z("Tue, 02 Jul 2024 22:16:22 +0800")),
            "2024-07-02T14:16:22.000Z rest=\"\""
        );
    }

    #[test]
    fn klog() {
        let r = klog_header("I0411 07:43:44.182159       1 leaderelection.go:250] x");
        assert!(matches!(r, Ok((_, ('I', 4, 11, _)))));
    }

    #[test]
    fn ages() {
        assert_eq!(human_duration("3m12s").map(|r| r.1), Ok(192));
        assert_eq!(human_duration("47s (x2 over 3m)").map(|r| r.1), Ok(47));
        assert_eq!(
            human_duration("2d3h").map(|r| r.1),
            Ok(2 * 86_400 + 3 * 3600)
        );
        assert!(human_duration("<unknown>").is_err());
    }
}
