//! Rendering events of the timeline: aligned text for people (with the fields that explain
//! each event, `crate::explain`), one JSON object per line for programs. The JSON keys are a contract (`ts`, `ts_quality`, `file`, `line`, `n_lines`,
//! `also_in` for a record also written to a second file of its process, `source`, `level`,
//! `component`, `message`, `fields`).
//!
//! The JSON is written by hand from a borrowed view of the event (`event::EventRef`), so the
//! streamed timeline writes each event straight from the spill's record; it is byte for byte
//! what serde_json wrote of the struct it replaced (`tests/timeline_json.rs`).

use std::cell::Cell;
use std::io::{self, Write};

use crate::event::{
    Event, EventRef, Fields, FileId, Level, Micros, Rfc3339, SourceKind, Timestamp, MICROS_PER_SEC,
};
use crate::report::style::Style;
use crate::timeline::Timeline;

/// Writes one JSON object per event.
pub fn write_json(w: &mut dyn Write, tl: &Timeline, events: &[&Event]) -> io::Result<()> {
    let lines = JsonLines::new(tl);
    let mut buf = Vec::new();
    for ev in events {
        lines.push(&mut buf, &ev.view());
    }
    w.write_all(&buf)
}

/// Writes events of a timeline as JSON lines, byte for byte what serde_json wrote of the
/// struct this replaces (`tests/timeline_json.rs` holds them equal on the corpus): the keys
/// of the contract in its order, `logged_level` only when the level shown differs, the
/// fields sorted by key with the first value of a repeated key. A timeline of millions of
/// events spent more time building that struct (a `String` per time, a map per event) and
/// serialising it than reading the bundle.
pub struct JsonLines {
    /// Each file's path as a JSON string, by file id: escaped once, not once per event.
    files: Vec<Vec<u8>>,
    /// Where the kept records of mirrored ones are written again (`also_in`).
    mirrors: crate::load::mirror::Mirrors,
}

impl JsonLines {
    /// For events of `tl`'s files (as they are now: redacted, if they are to be).
    pub fn new(tl: &Timeline) -> JsonLines {
        let files = tl
            .files
            .iter()
            .map(|f| {
                let mut quoted = Vec::with_capacity(f.path.len() + 2);
                json_str(&mut quoted, &f.path);
                quoted
            })
            .collect();
        JsonLines {
            files,
            mirrors: tl.mirrors.clone(),
        }
    }

    /// Appends the JSON line of one event to `out`, newline included.
    pub fn push(&self, out: &mut Vec<u8>, ev: &EventRef<'_>) {
        self.push_head(out, ev.ts, ev.file, ev.line, ev.n_lines);
        push_tail(out, ev);
    }

    /// Appends the start of an event's JSON line: what the timeline decides of it (its time,
    /// and its file by id) and where it lies in its file, up to the `source` key
    /// ([`push_tail`] writes the rest).
    pub fn push_head(
        &self,
        out: &mut Vec<u8>,
        ts: Option<Timestamp>,
        file: FileId,
        line: u32,
        n_lines: u32,
    ) {
        out.extend_from_slice(b"{\"ts\":");
        match ts {
            Some(t) => {
                out.push(b'"');
                // Digits, `-`, `:`, `.`, `T` and `Z`: nothing to escape.
                push_rfc3339(out, t.micros);
                out.push(b'"');
            }
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"ts_quality\":");
        json_plain(out, ts.map_or("none", |t| t.quality.as_str()));
        out.extend_from_slice(b",\"file\":");
        match self.files.get(file as usize) {
            Some(quoted) => out.extend_from_slice(quoted),
            None => out.extend_from_slice(b"\"\""),
        }
        out.extend_from_slice(b",\"line\":");
        json_u32(out, line);
        out.extend_from_slice(b",\"n_lines\":");
        json_u32(out, n_lines);
        // A record its process wrote to a second file too: where the copy is (`load::mirror`).
        if let Some((other, at)) = self.mirrors.also(file, line) {
            out.extend_from_slice(b",\"also_in\":");
            let path = self
                .files
                .get(other as usize)
                .map_or(&b"\"\""[..], Vec::as_slice);
            // The quoted path, with `:line` inside its quotes.
            out.extend_from_slice(&path[..path.len().saturating_sub(1)]);
            out.push(b':');
            json_u32(out, at);
            out.push(b'"');
        }
    }
}

thread_local! {
    /// The last second [`push_rfc3339`] wrote on this thread, and its date and time up to the
    /// fraction's point: neighbours in a timeline mostly share their second.
    static LAST_SECOND: Cell<(i64, [u8; SECOND_HEAD])> = const { Cell::new((i64::MIN, [0; SECOND_HEAD])) };
}

/// `YYYY-MM-DDTHH:MM:SS.`
const SECOND_HEAD: usize = 20;

/// Appends the time as [`Rfc3339`] writes it; the part to the second is written once a
/// second, not once an event.
fn push_rfc3339(out: &mut Vec<u8>, micros: Micros) {
    let secs = micros.div_euclid(MICROS_PER_SEC);
    let frac = micros.rem_euclid(MICROS_PER_SEC);
    let head = LAST_SECOND.with(|last| {
        let (at, head) = last.get();
        if at == secs {
            return Some(head);
        }
        // A whole second is written with three zeros after its point: its head is what
        // comes before them, for a four-digit year (the first second of `Micros`' range is
        // out of it).
        let whole = Rfc3339::of(secs.checked_mul(MICROS_PER_SEC)?);
        let head: [u8; SECOND_HEAD] = whole
            .as_bytes()
            .strip_suffix(b"000Z")
            .and_then(|h| h.try_into().ok())?;
        last.set((secs, head));
        Some(head)
    });
    let Some(head) = head else {
        // A year of more or fewer than four digits.
        return out.extend_from_slice(Rfc3339::of(micros).as_bytes());
    };
    out.extend_from_slice(&head);
    let (mut v, width) = if frac % 1000 == 0 {
        (frac / 1000, 3)
    } else {
        (frac, 6)
    };
    let mut digits = [b'0'; 7];
    digits[width] = b'Z';
    for slot in digits.get_mut(..width).unwrap_or_default().iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.extend_from_slice(digits.get(..=width).unwrap_or_default());
}

/// Appends the rest of an event's JSON line after [`JsonLines::push_head`], from the `source`
/// key to the newline: what the event itself says, the same wherever and whenever it is
/// placed. So it can be written on the parser thread that built the event, and the serial
/// merge only copies it.
pub fn push_tail(out: &mut Vec<u8>, ev: &EventRef<'_>) {
    let shown = crate::explain::shown_level_of(ev.level, ev.message, ev.kind);
    out.extend_from_slice(b",\"source\":");
    json_plain(out, ev.kind.as_str());
    out.extend_from_slice(b",\"level\":");
    json_plain(out, shown.as_str());
    if shown != ev.level {
        out.extend_from_slice(b",\"logged_level\":");
        json_plain(out, ev.level.as_str());
    }
    out.extend_from_slice(b",\"component\":");
    json_str(out, ev.component);
    out.extend_from_slice(b",\"message\":");
    json_str(out, ev.message);
    out.extend_from_slice(b",\"fields\":");
    json_fields(out, ev.fields);
    out.extend_from_slice(b"}\n");
}

/// An event's tail ([`push_tail`]) packed for a spill: the parts every tail writes alike (its
/// keys, quotes and punctuation) left out, the source and levels as numbers, the field keys
/// raysift's parsers give most as numbers. Under a third of a typical tail; [`unpack_tail`]
/// writes the tail again. The JSON timeline of a large bundle goes to disk and back before
/// it is written, and what it costs there is its size.
///
/// Layout: the source's index (`SourceKind::index`); the level shown and, in the high half,
/// the level logged (`Level::index`, 15 when the same); the component and the message as
/// escaped JSON string contents, each after its length (LEB128); then to the end the fields
/// in the order the object lists them, each its key (its index in [`KNOWN_KEYS`], or
/// [`OTHER_KEY`] and the key as the message is) and its value as the message is.
pub fn pack_tail(out: &mut Vec<u8>, ev: &EventRef<'_>) {
    out.push(ev.kind.index());
    let levels = out.len();
    out.push(0);
    push_sized(out, |out| {
        json_str_contents(out, ev.component);
    });
    let mut lines = false;
    push_sized(out, |out| lines = json_str_contents(out, ev.message));
    // The level shown differs from the one logged only for a message of several lines:
    // whether it has one was seen as it was escaped.
    let shown = if lines {
        crate::explain::shown_level_of(ev.level, ev.message, ev.kind)
    } else {
        ev.level
    };
    let logged = if shown == ev.level {
        15
    } else {
        ev.level.index()
    };
    if let Some(slot) = out.get_mut(levels) {
        *slot = shown.index() | logged << 4;
    }
    pack_fields(out, ev.fields);
}

/// The fields of a packed tail. Most events' keys are all known ones: those are ordered by
/// their rank among the known keys ([`KEY_RANK`]), not compared as strings.
fn pack_fields(out: &mut Vec<u8>, fields: Fields<'_>) {
    let mut tags = [0u8; STACK_FIELDS];
    let mut values = [""; STACK_FIELDS];
    // Each field's rank in the high byte, its place in the event in the low one: sorted as
    // numbers, equal keys keep the event's order (the first is kept) without a stable sort.
    let mut order = [0u16; STACK_FIELDS];
    let mut n = 0;
    for (k, v) in fields {
        let (Some(tag), Some(slot)) = (known_key(k), order.get_mut(n)) else {
            return pack_fields_by_name(out, fields);
        };
        let rank = KEY_RANK.get(usize::from(tag)).copied().unwrap_or(u8::MAX);
        *slot = u16::from(rank) << 8 | n as u16;
        tags[n] = tag;
        values[n] = v;
        n += 1;
    }
    let order = order.get_mut(..n).unwrap_or_default();
    // Insertion sort: a handful of numbers, often already in order.
    for i in 1..order.len() {
        let mut j = i;
        while j > 0 && order[j - 1] > order[j] {
            order.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut last = None;
    for &o in order.iter() {
        let at = usize::from(o & 0xff);
        let (Some(&tag), Some(&v)) = (tags.get(at), values.get(at)) else {
            continue;
        };
        if last != Some(tag) {
            last = Some(tag);
            out.push(tag);
            push_sized(out, |out| {
                json_str_contents(out, v);
            });
        }
    }
}

/// [`pack_fields`] for any keys: ordered as strings.
fn pack_fields_by_name(out: &mut Vec<u8>, fields: Fields<'_>) {
    with_object_fields(fields, |pairs| {
        for &(k, v) in pairs {
            match known_key(k) {
                Some(i) => out.push(i),
                None => {
                    out.push(OTHER_KEY);
                    push_sized(out, |out| {
                        json_str_contents(out, k);
                    });
                }
            }
            push_sized(out, |out| {
                json_str_contents(out, v);
            });
        }
    });
}

/// Declares [`KNOWN_KEYS`] and, for each, what [`unpack_tail`] writes before its value
/// ([`KNOWN_KEY_OPENS`]), from one list.
macro_rules! known_keys {
    ($($key:literal),* $(,)?) => {
        /// Field keys a packed tail gives by their index: those raysift's parsers give
        /// (the most frequent first), and the common ones of Ray Serve's and the KubeRay
        /// operator's structured logs. None needs escaping in JSON.
        const KNOWN_KEYS: [&str; [$($key),*].len()] = [$($key),*];

        /// `,"key":"` of each of [`KNOWN_KEYS`]: what comes before its value in the JSON
        /// object (the comma left out before the first).
        const KNOWN_KEY_OPENS: [&str; [$($key),*].len()] = [$(concat!(",\"", $key, "\":\"")),*];
    };
}

known_keys! {
    "file",
    "lineno",
    "http_method",
    "http_path",
    "http_status",
    "component_id",
    "latency_ms",
    "request_id",
    "pid",
    "tid",
    "client",
    "http_bytes",
    "user_agent",
    "reconcileID",
    "RayService.name",
    "RayService.namespace",
    "RayCluster.name",
    "RayCluster.namespace",
    "RayJob.name",
    "RayJob.namespace",
    "reason",
    "app",
    "namespace",
    "name",
    "object",
    "path",
    "value",
    "error",
    "controller",
    "controllerGroup",
    "controllerKind",
    "component_name",
    "replica",
    "deployment",
    "application",
    "route",
    "worker_id",
    "actor_id",
    "node_id",
    "job_id",
    "task_id",
    "call_method",
    "call_status",
    "actor_name",
    "marker",
    "count",
    "seconds",
    "age",
    "type",
    "source",
    "time_utc",
    "object_kind",
    "object_name",
    "first_seen_age_secs",
    "first_seen_utc",
    "event_name",
    "thread",
    "ray_component",
    "elapsed_s",
    "ip",
    "node",
    "level",
}

/// Each known key's place among the known keys sorted as strings (bytewise, as `str`
/// sorts): what orders the fields of an object whose keys are all known.
const KEY_RANK: [u8; KNOWN_KEYS.len()] = {
    const fn less(a: &[u8], b: &[u8]) -> bool {
        let mut i = 0;
        while i < a.len() && i < b.len() {
            if a[i] != b[i] {
                return a[i] < b[i];
            }
            i += 1;
        }
        a.len() < b.len()
    }
    let mut rank = [0u8; KNOWN_KEYS.len()];
    let mut i = 0;
    while i < KNOWN_KEYS.len() {
        let mut j = 0;
        while j < KNOWN_KEYS.len() {
            if less(KNOWN_KEYS[j].as_bytes(), KNOWN_KEYS[i].as_bytes()) {
                rank[i] += 1;
            }
            j += 1;
        }
        i += 1;
    }
    rank
};

/// The tag of a field key in a packed tail that is not one of [`KNOWN_KEYS`].
const OTHER_KEY: u8 = u8::MAX;

/// Slots of [`KNOWN_KEY_SLOTS`]: a power of two well above the keys' count.
const KEY_SLOTS: usize = 256;

/// Where a key's search in [`KNOWN_KEY_SLOTS`] starts: from its length and a few of its
/// bytes, the ones that tell the known keys apart.
const fn key_slot(k: &[u8]) -> usize {
    let n = k.len();
    if n == 0 {
        return 0;
    }
    let mix = n * 31 + k[0] as usize * 7 + k[n - 1] as usize * 131 + k[n / 2] as usize * 17;
    mix % KEY_SLOTS
}

/// An open-addressed table of [`KNOWN_KEYS`]: each key's index at its slot or the first free
/// one after it, [`OTHER_KEY`] in free slots.
const KNOWN_KEY_SLOTS: [u8; KEY_SLOTS] = {
    let mut slots = [OTHER_KEY; KEY_SLOTS];
    let mut i = 0;
    while i < KNOWN_KEYS.len() {
        let mut at = key_slot(KNOWN_KEYS[i].as_bytes());
        while slots[at] != OTHER_KEY {
            at = (at + 1) % KEY_SLOTS;
        }
        slots[at] = i as u8;
        i += 1;
    }
    slots
};

/// Whether two short byte strings are equal, compared in line (a key is a few bytes: a
/// call to `memcmp` for each costs more than the comparison): up to 24 bytes as at most
/// three overlapping words, or two halves, or bytes.
fn same_short(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0..4 => a == b,
        4..8 => {
            let half = |s: &[u8], at: usize| {
                s.get(at..at + 4)
                    .and_then(|w| w.try_into().ok())
                    .map_or(0, u32::from_ne_bytes)
            };
            half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4)
        }
        8..=24 => {
            let word = |s: &[u8], at: usize| {
                s.get(at..at + 8)
                    .and_then(|w| w.try_into().ok())
                    .map_or(0, u64::from_ne_bytes)
            };
            let middle = n.min(16) - 8;
            word(a, 0) == word(b, 0)
                && word(a, middle) == word(b, middle)
                && word(a, n - 8) == word(b, n - 8)
        }
        _ => a == b,
    }
}

/// The index of `k` in [`KNOWN_KEYS`].
fn known_key(k: &str) -> Option<u8> {
    let mut at = key_slot(k.as_bytes());
    loop {
        let i = *KNOWN_KEY_SLOTS.get(at)?;
        let known = KNOWN_KEYS.get(usize::from(i))?;
        if same_short(known.as_bytes(), k.as_bytes()) {
            return Some(i);
        }
        at = (at + 1) % KEY_SLOTS;
    }
}

/// Writes what [`push_tail`] wrote of the event [`pack_tail`] packed into `packed`; false,
/// with nothing written, when `packed` is not such a thing.
pub fn unpack_tail(out: &mut Vec<u8>, packed: &[u8]) -> bool {
    let Some((&kind, rest)) = packed.split_first() else {
        return false;
    };
    let Some((&levels, rest)) = rest.split_first() else {
        return false;
    };
    let (Some(kind), Some(shown)) = (
        SourceKind::ALL.get(kind as usize),
        Level::ALL.get((levels & 15) as usize),
    ) else {
        return false;
    };
    let logged = Level::ALL.get((levels >> 4) as usize);
    let Some((component, rest)) = take_sized(rest) else {
        return false;
    };
    let Some((message, mut fields)) = take_sized(rest) else {
        return false;
    };
    let at = out.len();
    out.extend_from_slice(b",\"source\":");
    json_plain(out, kind.as_str());
    out.extend_from_slice(b",\"level\":");
    json_plain(out, shown.as_str());
    if let Some(logged) = logged {
        out.extend_from_slice(b",\"logged_level\":");
        json_plain(out, logged.as_str());
    }
    out.extend_from_slice(b",\"component\":\"");
    out.extend_from_slice(component);
    out.extend_from_slice(b"\",\"message\":\"");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\",\"fields\":{");
    // No comma before the first field.
    let mut skip = 1;
    while let Some((&tag, rest)) = fields.split_first() {
        let rest = match KNOWN_KEY_OPENS.get(usize::from(tag)) {
            Some(open) => {
                out.extend_from_slice(open.as_bytes().get(skip..).unwrap_or_default());
                rest
            }
            None if tag == OTHER_KEY => match take_sized(rest) {
                Some((key, rest)) => {
                    out.extend_from_slice(b",\"".get(skip..).unwrap_or_default());
                    out.extend_from_slice(key);
                    out.extend_from_slice(b"\":\"");
                    rest
                }
                None => return unwritten(out, at),
            },
            None => return unwritten(out, at),
        };
        skip = 0;
        let Some((value, rest)) = take_sized(rest) else {
            return unwritten(out, at);
        };
        out.extend_from_slice(value);
        out.push(b'"');
        fields = rest;
    }
    out.extend_from_slice(b"}}\n");
    true
}

/// Takes back what [`unpack_tail`] wrote from `at` on, for a packed tail it cannot read.
fn unwritten(out: &mut Vec<u8>, at: usize) -> bool {
    out.truncate(at);
    false
}

/// Appends what `write` writes, after its length in LEB128: one byte is set aside for it, and
/// the text moved along in the rare case it needs more.
fn push_sized(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.push(0);
    write(out);
    let mut len = out.len() - at - 1;
    let mut prefix = [0u8; 10];
    let mut n = 0;
    loop {
        let low = (len & 0x7f) as u8;
        len >>= 7;
        prefix[n] = if len > 0 { low | 0x80 } else { low };
        n += 1;
        if len == 0 {
            break;
        }
    }
    match prefix.get(..n) {
        Some([one]) => {
            if let Some(slot) = out.get_mut(at) {
                *slot = *one;
            }
        }
        Some(more) => drop(out.splice(at..at + 1, more.iter().copied())),
        None => {}
    }
}

/// The text [`push_sized`] wrote at the start of `bytes`, and what follows it.
fn take_sized(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut len = 0usize;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        len |= usize::from(b & 0x7f).checked_shl(7 * i as u32)?;
        if b & 0x80 == 0 {
            let rest = bytes.get(i + 1..)?;
            return (len <= rest.len()).then(|| rest.split_at(len));
        }
    }
    None
}

/// A JSON string of one of raysift's own names (a level, a source kind, a time's quality):
/// lower-case letters and `_`, nothing to escape.
fn json_plain(out: &mut Vec<u8>, name: &'static str) {
    debug_assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.push(b'"');
}

/// Fields an event usually has at most: sorted on the stack, more in a `Vec`.
const STACK_FIELDS: usize = 16;

/// The fields as a JSON object: sorted by key, the first value of a repeated key kept (what
/// a map filled with `or_insert` gave).
fn json_fields(out: &mut Vec<u8>, fields: Fields<'_>) {
    out.push(b'{');
    with_object_fields(fields, |pairs| {
        for (i, &(k, v)) in pairs.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json_str(out, k);
            out.push(b':');
            json_str(out, v);
        }
    });
    out.push(b'}');
}

/// Calls `write` with the fields as the JSON object lists them: sorted by key, the first
/// value of a repeated key kept.
fn with_object_fields(fields: Fields<'_>, write: impl FnOnce(&[(&str, &str)])) {
    let mut stack = [("", ""); STACK_FIELDS];
    let mut n = 0;
    let mut more: Vec<(&str, &str)> = Vec::new();
    for pair in fields {
        match stack.get_mut(n) {
            Some(slot) if more.is_empty() => {
                *slot = pair;
                n += 1;
            }
            _ => {
                if more.is_empty() {
                    more.extend_from_slice(&stack);
                }
                more.push(pair);
            }
        }
    }
    let pairs = if more.is_empty() {
        stack.get_mut(..n).unwrap_or_default()
    } else {
        &mut more[..]
    };
    // Stable: of equal keys, the first in the event's order comes first.
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let mut kept = pairs.len();
    if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
        let mut last: Option<&str> = None;
        kept = 0;
        for i in 0..pairs.len() {
            let k = pairs[i].0;
            if last != Some(k) {
                pairs.swap(kept, i);
                kept += 1;
                last = Some(k);
            }
        }
    }
    write(pairs.get(..kept).unwrap_or_default());
}

/// What each byte is written as inside a JSON string, as serde_json escapes it: 0 for
/// itself, else the letter after the backslash (`u` for `\u00XX`). Only `"`, `\` and the
/// control characters below 0x20 are escaped; not `/`, DEL or anything beyond ASCII.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// A JSON string: `s` quoted, escaped as serde_json escapes it ([`ESCAPE`]).
fn json_str(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    json_str_contents(out, s);
    out.push(b'"');
}

/// What is between the quotes of [`json_str`]. Returns whether `s` holds a newline.
fn json_str_contents(out: &mut Vec<u8>, s: &str) -> bool {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let mut newline = false;
    // Bytes before `start` are written.
    let mut start = 0;
    while let Some(i) = next_escaped(bytes, start) {
        let b = bytes.get(i).copied().unwrap_or(0);
        newline |= b == b'\n';
        let esc = ESCAPE[b as usize];
        out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
        out.push(b'\\');
        out.push(esc);
        if esc == b'u' {
            out.extend_from_slice(&[b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 0xf) as usize]]);
        }
        start = i + 1;
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    newline
}

/// Where the first byte at or after `from` that needs escaping is: eight bytes at a time (a
/// log's text seldom holds one), the last few one by one.
fn next_escaped(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let rest = bytes.get(at..)?;
        let Some(word) = rest.first_chunk::<8>() else {
            return rest
                .iter()
                .position(|&b| ESCAPE[b as usize] != 0)
                .map(|i| at + i);
        };
        let marks = escaped_marks(u64::from_le_bytes(*word));
        if marks != 0 {
            return Some(at + (marks.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
}

/// The high bit of each byte of `word` (little-endian) that is below 0x20, a `"` or a `\`,
/// and maybe of bytes after such a byte, never before it: the zero-byte test of the
/// bit-twiddling folklore, whose borrow only runs towards higher bytes. So the lowest mark
/// is always a byte to escape, and a word without marks holds none.
fn escaped_marks(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x;
    let control = below(word, 0x20);
    let quote = below(word ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(word ^ (ONES * u64::from(b'\\')), 1);
    (control | quote | backslash) & HIGH
}

/// A number as JSON writes it: its decimal digits.
fn json_u32(out: &mut Vec<u8>, mut v: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

/// What the time column says of an event without a time (a `-` read like a list item).
pub const NO_TIME: &str = "(no time)";

/// Writes aligned text: time, file:line, source, level, component, message, then the fields
/// that explain the event (`explain::shown`): short ones on the line as `key=value`, long
/// ones indented below it as `key: value`. Continuation lines are indented under the
/// message. `oneline`: one line an event (`explain::Shown::line`), the first long field's
/// first line on it as `key: value` and the lines left out counted (`(+12 lines)`).
pub fn write_text(
    w: &mut dyn Write,
    tl: &Timeline,
    events: &[&Event],
    style: Style,
    oneline: bool,
) -> io::Result<()> {
    let dim = |s: &str| style.dim(s);
    for ev in events {
        // Marked as `analyze` marks them: `~` an age-derived time (to the second), `?` a
        // zone-less one read as UTC.
        let ts = ev.ts.map_or_else(
            || NO_TIME.to_string(),
            |t| crate::report::mark_time(&t.rfc3339(), t.quality.as_str()),
        );
        let place = format!(
            "{}:{}",
            tl.file(ev.file).map_or("?", |f| f.path.as_str()),
            ev.line
        );
        let level = crate::explain::shown_level(ev);
        let component = if ev.component.is_empty() {
            String::new()
        } else {
            format!("{} ", style.dim(&format!("[{}]", ev.component)))
        };
        let head = format!(
            "{:<24} {} {} {}{}",
            ts,
            style.dim(&place),
            style.dim(ev.kind.as_str()),
            style.level(
                level,
                &format!("{:<8}", level.as_str().to_ascii_uppercase())
            ),
            component,
        );
        let shown = crate::explain::shown(ev);
        // A record its process wrote to a second file too: where the copy is.
        let also = tl
            .mirrors
            .also(ev.file, ev.line)
            .map_or(String::new(), |(f, at)| {
                let path = tl.file(f).map_or("?", |f| f.path.as_str());
                format!(" {}{path}:{at}", style.dim("also_in="))
            });
        if oneline {
            let hidden = shown.hidden();
            let more = if hidden == 0 {
                String::new()
            } else {
                let n = crate::words::count(hidden as u64, "line", "lines");
                format!(" {}", style.dim(&format!("(+{n})")))
            };
            writeln!(w, "{head}{}{also}{more}", shown.line(dim))?;
            continue;
        }
        let mut lines = shown.message.lines();
        write!(w, "{head}{}", lines.next().unwrap_or(""))?;
        for (k, v) in &shown.short {
            write!(w, " {}{v}", style.dim(&format!("{k}=")))?;
        }
        write!(w, "{also}")?;
        writeln!(w)?;
        for (k, v) in &shown.long {
            let mut value = v.lines();
            writeln!(
                w,
                "    {} {}",
                style.dim(&format!("{k}:")),
                value.next().unwrap_or("")
            )?;
            for more in value {
                writeln!(w, "      {more}")?;
            }
        }
        for more in lines {
            writeln!(w, "    {more}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::event::{SourceKind, TsQuality};

    fn by_serde(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    fn by_hand(s: &str) -> String {
        let mut out = Vec::new();
        json_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_character_to_escape_is_escaped_wherever_it_lies_in_a_word() {
        let specials = ['"', '\\', '\n', '\u{0}', '\u{1f}', '\u{7f}', '/', 'é', '🦀'];
        for len in 0..40 {
            for at in 0..len {
                for c in specials {
                    let mut s: String = "abcdefgh".chars().cycle().take(len).collect();
                    s.replace_range(at..at + 1, &c.to_string());
                    assert_eq!(by_hand(&s), by_serde(&s), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn random_text_is_escaped_as_serde_escapes_it() {
        let alphabet: Vec<char> = (0u8..0x80)
            .map(char::from)
            .chain(['é', '日', '🦀', '\u{2028}', '\u{80}', '\u{ffff}'])
            .collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 64) as usize;
            // Mostly plain letters, like a log line, with a few of anything.
            let s: String = (0..len)
                .map(|i| {
                    let r = x.rotate_left(i as u32 * 7);
                    if r % 5 == 0 {
                        alphabet[(r >> 8) as usize % alphabet.len()]
                    } else {
                        'a'
                    }
                })
                .collect();
            assert_eq!(by_hand(&s), by_serde(&s), "{s:?}");
        }
    }

    #[test]
    fn the_lowest_mark_of_a_word_is_its_first_byte_to_escape() {
        for word in [
            *b"abcdefgh",
            *b"~!#$%&'(",
            [0x20; 8],
            [0x7f; 8],
            [0xff; 8],
            [0x80; 8],
        ] {
            assert_eq!(escaped_marks(u64::from_le_bytes(word)), 0, "{word:?}");
        }
        let escaped: Vec<u8> = (0u8..0x20).chain([b'"', b'\\']).collect();
        for &b in &escaped {
            for at in 0..8 {
                // Whatever follows it, escaped or not.
                for after in [b'a', 0x00, 0x1f, b'"', 0xff] {
                    let mut word = [b'a'; 8];
                    word[at] = b;
                    for w in word.iter_mut().skip(at + 1) {
                        *w = after;
                    }
                    let marks = escaped_marks(u64::from_le_bytes(word));
                    assert_eq!(marks.trailing_zeros() / 8, at as u32, "{word:?}");
                }
            }
        }
    }

    #[test]
    fn a_time_is_written_as_rfc3339_writes_it_whatever_the_second_before() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let day = 86_400 * MICROS_PER_SEC;
        let mut times = vec![0, -1, 1, 999, 1000, MICROS_PER_SEC - 1, -MICROS_PER_SEC];
        // Around 2024, the same second again and again, then anywhere in the years a log may
        // hold, and years of other widths.
        let base = 19_998 * day;
        for _ in 0..2000 {
            let r = next();
            let t = base + (r % (3 * MICROS_PER_SEC as u64)) as i64;
            times.push(t);
            times.push(t - t.rem_euclid(1000));
            times.push((r % (200 * 365 * day as u64)) as i64 - 50 * 365 * day);
        }
        times.extend([-719_529 * day, 2_932_897 * day, 2_932_896 * day + 5]);
        times.extend([i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1]);
        for t in times {
            let mut out = Vec::new();
            push_rfc3339(&mut out, t);
            assert_eq!(out, Rfc3339::of(t).as_bytes(), "{t}");
        }
    }

    #[test]
    fn short_strings_are_equal_exactly_when_every_byte_is() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).map(|b| b'a' + b % 26).collect();
            assert!(same_short(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 1;
                assert!(!same_short(&a, &b), "{n} {at}");
            }
            assert!(!same_short(&a, &a[..n.saturating_sub(1)]) || n == 0);
        }
    }

    #[test]
    fn every_known_key_is_found_at_its_index_and_no_other_key_is() {
        for (i, k) in KNOWN_KEYS.iter().enumerate() {
            assert_eq!(known_key(k), Some(i as u8), "{k}");
            assert_eq!(by_hand(k), format!("\"{k}\""), "{k} needs escaping");
            assert!(!KNOWN_KEYS[..i].contains(k), "{k} twice");
        }
        assert!(KNOWN_KEYS.len() < usize::from(OTHER_KEY));
        let mut sorted = KNOWN_KEYS.to_vec();
        sorted.sort();
        for (i, k) in KNOWN_KEYS.iter().enumerate() {
            assert_eq!(sorted[usize::from(KEY_RANK[i])], *k);
        }
        for k in [
            "",
            "fil",
            "files",
            "File",
            "lineno ",
            "http_statu",
            "RayService",
            "名前",
        ] {
            assert_eq!(known_key(k), None, "{k}");
        }
    }

    #[test]
    fn raysift_names_need_no_escaping() {
        let levels = Level::ALL;
        let qualities = [
            TsQuality::Exact,
            TsQuality::InferredZone,
            TsQuality::GivenZone,
            TsQuality::AssumedUtc,
            TsQuality::Approximate,
        ];
        let names = SourceKind::ALL
            .iter()
            .map(|k| k.as_str())
            .chain(levels.iter().map(|l| l.as_str()))
            .chain(qualities.iter().map(|q| q.as_str()))
            .chain(["none"]);
        for name in names {
            let mut out = Vec::new();
            json_plain(&mut out, name);
            assert_eq!(String::from_utf8(out).unwrap(), by_serde(name));
        }
    }
}
