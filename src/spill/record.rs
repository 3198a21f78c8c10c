//! An event as a record of the events file, and the record read back as a view
//! ([`EventRef`]) whose strings borrow the bytes read; also the LEB128 numbers records use
//! (`put_varint`) and the [`Cursor`] that decodes records and stamps.
//!
//! Invariant: `decode_event` gives back exactly what `encode_event` wrote (the encoding
//! names every field of `Event`, so a new field does not compile until it is written here
//! too), and refuses a record cut short, one whose lengths do not add up to its text, or
//! text that is not UTF-8.

use crate::event::{Event, EventRef, Fields, Level, RawTime, SourceKind};

/// Every field of the event but `file` and `ts`, which the merge sets, `repeat` (the full
/// parse does not fold), `mirror_key` and `echo_key` (mirrors are decided when the read ends). The line comes first (the merge orders by it without decoding the
/// rest), then the other numbers, the byte lengths of every string, and last the strings
/// one after the other, so that one UTF-8 check covers them all when the record is read back
/// as a view ([`decode_event`]). Of the structured fields, only those whose key `keep`
/// accepts are written.
pub(super) fn encode_event(buf: &mut Vec<u8>, ev: &Event, keep: fn(&str) -> bool) {
    let Event {
        raw_time,
        ts: _,
        file: _,
        repeat: _,
        // Mirrors are decided before the spill is read back (`load::mirror`).
        mirror_key: _,
        echo_key: _,
        light,
        line,
        n_lines,
        kind,
        level,
        component,
        message,
        fields,
    } = ev;
    put_varint(buf, (*line).into());
    put_varint(buf, (*n_lines).into());
    buf.push(kind.index());
    // The high bit marks a light event.
    buf.push(level.index() | if *light { 0x80 } else { 0 });
    match raw_time {
        None => buf.push(0),
        Some(RawTime::Utc(t)) => {
            buf.push(1);
            buf.extend_from_slice(&t.to_le_bytes());
        }
        Some(RawTime::Naive(t)) => {
            buf.push(2);
            buf.extend_from_slice(&t.to_le_bytes());
        }
        Some(RawTime::NoYear {
            month,
            day,
            micros_of_day,
        }) => {
            buf.push(3);
            buf.push(*month);
            buf.push(*day);
            buf.extend_from_slice(&micros_of_day.to_le_bytes());
        }
        Some(RawTime::Age { secs }) => {
            buf.push(4);
            buf.extend_from_slice(&secs.to_le_bytes());
        }
    }
    let kept = || fields.iter().filter(|(k, _)| keep(k));
    let len = |s: &str| (s.len() as u32).to_le_bytes();
    buf.extend_from_slice(&len(component));
    buf.extend_from_slice(&len(message));
    buf.extend_from_slice(&(kept().count() as u32).to_le_bytes());
    for (k, v) in kept() {
        buf.extend_from_slice(&len(k));
        buf.extend_from_slice(&len(v));
    }
    buf.extend_from_slice(component.as_bytes());
    buf.extend_from_slice(message.as_bytes());
    for (k, v) in kept() {
        buf.extend_from_slice(k.as_bytes());
        buf.extend_from_slice(v.as_bytes());
    }
}

/// Appends `v` in LEB128: seven bits a byte, the low ones first, the high bit set on every
/// byte but the last. A record's length, line and count of lines take a byte or three, not
/// four each.
pub(super) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// The bytes [`put_varint`] writes of `v`.
pub(super) fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A cursor over an encoded record.
pub(super) struct Cursor<'a>(pub(super) &'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    pub(super) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    }
    /// A number [`put_varint`] wrote, that fits a `u32`.
    pub(super) fn varint(&mut self) -> Option<u32> {
        let mut v = 0u64;
        for i in 0..5 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return u32::try_from(v).ok();
            }
        }
        None
    }
    pub(super) fn i64(&mut self) -> Option<i64> {
        self.take(8)
            .and_then(|b| b.try_into().ok())
            .map(i64::from_le_bytes)
    }
}

/// A view of an encoded record, its `file` 0 and its `ts` unset. `None` when the record is
/// not one [`encode_event`] wrote: too short, lengths that do not add up to its text, or text
/// that is not UTF-8.
pub(super) fn decode_event(bytes: &[u8]) -> Option<EventRef<'_>> {
    let mut c = Cursor(bytes);
    let line = c.varint()?;
    let n_lines = c.varint()?;
    let kind = SourceKind::ALL
        .get(c.u8()? as usize)
        .copied()
        .unwrap_or(SourceKind::Unknown);
    let level_byte = c.u8()?;
    let raw_time = match c.u8()? {
        0 => None,
        1 => Some(RawTime::Utc(c.i64()?)),
        2 => Some(RawTime::Naive(c.i64()?)),
        3 => {
            let month = c.u8()?;
            let day = c.u8()?;
            Some(RawTime::NoYear {
                month,
                day,
                micros_of_day: c.i64()?,
            })
        }
        _ => Some(RawTime::Age { secs: c.i64()? }),
    };
    let component_len = c.u32()? as usize;
    let message_len = c.u32()? as usize;
    let n = c.u32()? as usize;
    let lens = c.take(n.checked_mul(8)?)?;
    let text = std::str::from_utf8(c.0).ok()?;
    let (component, rest) = text.split_at_checked(component_len)?;
    let (message, rest) = rest.split_at_checked(message_len)?;
    let fields = Fields::Packed { lens, text: rest };
    // Every pair must fit the text, and the text end with the last one.
    let mut check = fields;
    if check.by_ref().count() != n || !matches!(check, Fields::Packed { text: "", .. }) {
        return None;
    }
    Some(EventRef {
        raw_time,
        ts: None,
        file: 0,
        line,
        n_lines,
        kind,
        level: Level::ALL
            .get(usize::from(level_byte & 0x7f))
            .copied()
            .unwrap_or(Level::Info),
        light: level_byte & 0x80 != 0,
        component,
        message,
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_stamps_come_back_as_they_went_in() {
        let mut ev = Event::new(7, "a\nb");
        ev.raw_time = Some(RawTime::NoYear {
            month: 4,
            day: 11,
            micros_of_day: 99,
        });
        ev.kind = SourceKind::ServeProxy;
        ev.level = Level::Critical;
        ev.component = "c".into();
        ev.fields.push(("k".into(), "v".into()));
        ev.fields.push(("error".into(), "e".into()));
        let mut buf = Vec::new();
        encode_event(&mut buf, &ev, |k| k == "error");
        let some = decode_event(&buf).map(|r| r.to_event());
        buf.clear();
        encode_event(&mut buf, &ev, |_| true);
        assert_eq!(decode_event(&buf).map(|r| r.to_event()), Some(ev.clone()));
        // With some of its fields, the rest still comes back as it went in.
        ev.fields.remove(0);
        assert_eq!(some, Some(ev));
    }

    #[test]
    fn a_number_comes_back_as_it_was_written_in_as_many_bytes_as_said() {
        let mut values = vec![0u64, 1, 127, 128, 255, 16_383, 16_384, u32::MAX.into()];
        values.extend((0..64).map(|b| 1u64 << b));
        for v in values {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v), "{v}");
            let mut c = Cursor(&buf);
            assert_eq!(c.varint(), u32::try_from(v).ok(), "{v}");
            if v <= u32::MAX.into() {
                assert!(c.0.is_empty());
            }
            // Cut short, it is not read.
            assert_eq!(Cursor(&buf[..buf.len() - 1]).varint(), None);
        }
    }

    #[test]
    fn a_record_is_read_back_as_a_view_of_every_string() {
        let mut ev = Event::new(u32::MAX, "message é\n\"line\"");
        ev.raw_time = Some(RawTime::Utc(-7));
        ev.component = "日本".into();
        ev.fields = vec![
            ("".into(), "".into()),
            ("k".into(), "🦀".into()),
            ("k".into(), "again".into()),
        ];
        let mut buf = Vec::new();
        encode_event(&mut buf, &ev, |_| true);
        let view = decode_event(&buf);
        assert_eq!(view.map(|r| r.line), Some(u32::MAX));
        assert_eq!(
            view.map(|r| r.fields.collect::<Vec<_>>())
                .unwrap_or_default(),
            [("", ""), ("k", "🦀"), ("k", "again")]
        );
        assert_eq!(view.map(|r| r.to_event()), Some(ev));
        // A record cut short, or whose lengths do not add up to its text, is refused.
        for cut in 0..buf.len() {
            assert!(decode_event(&buf[..cut]).is_none(), "{cut}");
        }
        let mut longer = buf.clone();
        longer.push(b'x');
        assert!(decode_event(&longer).is_none());
        // The message's length one more: the last value then lacks a byte.
        let mut bad = buf.clone();
        // The line (`u32::MAX`: five bytes) and the count of lines (one).
        let head = 5 + 1;
        let at = head + 1 + 1 + 9 + 4;
        bad[at] += 1;
        assert!(decode_event(&bad).is_none());
        // A length that cuts a character in two (the component's last).
        let mut bad = buf;
        bad[head + 1 + 1 + 9] -= 1;
        assert!(decode_event(&bad).is_none());
    }
}
