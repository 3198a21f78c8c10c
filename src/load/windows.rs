//! The windowed parse of a sieved stretch of a file: only the records around the sieve's hits,
//! the file's head (first time, zone evidence) and its tail (last time) are parsed.

use super::count_lines;
use std::collections::HashMap;

use super::fold::{fold_key, micros_of, raw_like, Folder, Same};
use super::mirror::{keys_of, FoldedKey};
use crate::diag::Diagnostic;
use crate::event::{Event, Micros, SourceKind};
use crate::event::{RawTime, QUIET};
use crate::parse::lines::mirror_key;
use crate::parse::stamp::{line_key, LineKey};
use crate::parse::{self, ParseOutput};
use crate::rules::sieve::{Hit, Sieve, LOOKAHEAD_LINES, LOOKBACK_LINES};

/// Lines parsed at the start of every file: the first time and the zone evidence.
pub(super) const HEAD_LINES: usize = 2000;
/// Lines parsed at the end of every file: the last time.
pub(super) const TAIL_LINES: usize = 40;

/// What the windowed parse of one stretch of a file keeps.
#[derive(Default)]
pub(super) struct Sieved {
    /// Records that hold a hit, in file order.
    pub(super) events: Vec<Event>,
    /// The first and last timed records parsed, whether or not they hold a hit.
    pub(super) first_timed: Option<Event>,
    pub(super) last_timed: Option<Event>,
    /// The earliest and the latest record of each kind of absolute time (UTC, zone-less)
    /// parsed: the bundle's window is the same as a full parse's even when a file's first
    /// lines are not its earliest (a klog line before zap's JSON ones).
    pub(super) bounds: Bounds,
    /// Records on either side of a silence in the records parsed: the incident window
    /// (`timeline::Spans`) starts after the last silence, which only these show of the lines
    /// the sieve did not keep.
    pub(super) edges: Vec<Event>,
    pub(super) diagnostics: Vec<Diagnostic>,
    pub(super) unparsed_lines: u64,
    pub(super) zone_samples: Vec<Micros>,
    /// Every hit record that may be mirrored or repeated by an event, those folded away
    /// included: its first line, each identity (`mirror::keys_of`) and its fold key.
    pub(super) keyed: Vec<FoldedKey>,
}

impl Sieved {
    /// The events to keep, in file order: the hit records and the first and last timed ones.
    pub(super) fn into_output(self) -> ParseOutput {
        let mut events = self.events;
        // A bound inside a fold is counted there already.
        let folded: Vec<(u32, u32)> = events
            .iter()
            .filter_map(|e| e.repeat.as_ref().map(|r| (e.line, r.last_line)))
            .collect();
        let inside = |ev: &Event| folded.iter().any(|&(a, b)| ev.line > a && ev.line <= b);
        events.extend(self.first_timed);
        events.extend(self.last_timed);
        events.extend(self.bounds.0.into_iter().flatten().filter(|e| !inside(e)));
        events.extend(self.edges.into_iter().filter(|e| !inside(e)));
        events.sort_by_key(|e| e.line);
        events.dedup_by(|a, b| a.line == b.line);
        ParseOutput {
            events,
            diagnostics: self.diagnostics,
            unparsed_lines: self.unparsed_lines,
            zone_samples: self.zone_samples,
            detail: Default::default(),
            finish: None,
        }
    }
}

/// The earliest and latest records by parsed time: `[earliest UTC, latest UTC, earliest
/// zone-less, latest zone-less]`.
#[derive(Default)]
pub(super) struct Bounds(pub(super) [Option<Event>; 4]);

impl Bounds {
    /// Takes `ev` where it is earlier (or later) than what is held; a tie keeps the first in
    /// file order for the earliest and the last for the latest.
    pub(super) fn note(&mut self, ev: &Event) {
        let (slot, t) = match ev.raw_time {
            Some(RawTime::Utc(t)) => (0, t),
            Some(RawTime::Naive(t)) => (2, t),
            _ => return,
        };
        let time = |e: &Option<Event>| match e.as_ref().and_then(|e| e.raw_time) {
            Some(RawTime::Utc(t) | RawTime::Naive(t)) => Some(t),
            _ => None,
        };
        if time(&self.0[slot]).is_none_or(|held| t < held) {
            self.0[slot] = Some(ev.clone());
        }
        if time(&self.0[slot + 1]).is_none_or(|held| t >= held) {
            self.0[slot + 1] = Some(ev.clone());
        }
    }

    /// Joins the bounds of a later stretch of the file.
    pub(super) fn join(&mut self, later: Bounds) {
        for ev in later.0.into_iter().flatten() {
            self.note(&ev);
        }
    }
}

/// Parses a whole file through the sieve: the windows around its hits, its head and tail;
/// and the records that may be mirrored, folded ones included (`Sieved::keyed`).
pub(super) fn parse_sieved(
    kind: SourceKind,
    bytes: &[u8],
    sieve: &Sieve,
) -> (ParseOutput, Vec<FoldedKey>) {
    let hits = sieve.hits(kind, bytes);
    let mut sieved = parse_windows(kind, bytes, 0..bytes.len(), 0, &hits, true, true);
    let keyed = std::mem::take(&mut sieved.keyed);
    (sieved.into_output(), keyed)
}

/// Parses only the windows around `hits`, the sieve's hits in `text[own]` (plus the head of
/// `text` when `head`, and its tail when `tail`), and keeps the records that hold one of those
/// hits, the first and last timed records, and the zone samples of the head. `text` around
/// `own` is context from the neighbouring pieces of the file: lines there are parsed so that
/// a record that starts before `own` or runs on after it is whole, but their hits belong to
/// the neighbours; `lines_before_own` counts those before it. Line numbers are 1-based from
/// the start of `text`.
pub(super) fn parse_windows(
    kind: SourceKind,
    text: &[u8],
    own: std::ops::Range<usize>,
    lines_before_own: usize,
    hits: &[Hit],
    head: bool,
    tail: bool,
) -> Sieved {
    let hits: Vec<(usize, usize)> = hits
        .iter()
        .map(|h| (h.line + lines_before_own, h.start + own.start))
        .collect();
    // Windows as (first line index, start byte, end byte), merged.
    let mut windows: Vec<(usize, usize, usize)> = Vec::new();
    let mut push = |line: usize, from: usize, to: usize| match windows.last_mut() {
        Some(last) if from <= last.2 => last.2 = last.2.max(to),
        _ => windows.push((line, from, to)),
    };
    // Lines the head and tail windows parse anyway.
    let head_end = if head {
        forward_lines(text, 0, HEAD_LINES)
    } else {
        0
    };
    let tail_from = if tail {
        back_lines(text, text.len(), TAIL_LINES).0
    } else {
        text.len()
    };
    if head {
        push(0, 0, head_end);
    }
    // One-line records that repeat an earlier one of the piece but for their date-time are
    // not parsed (see `parse::stamp`): the first of each key is, and stands for the others.
    let mut first_of: HashMap<u64, (usize, LineKey, usize)> = HashMap::new();
    let mut sames: Vec<(usize, LineKey, usize, usize)> = Vec::new();
    for &(line, start) in &hits {
        let end = forward_lines(text, start, 1);
        if starts_record(&text[start..end]) && (end == text.len() || starts_record(&text[end..])) {
            // A one-line record: nothing before or after it belongs to it.
            if let Some(k) = line_key(&text[start..end]) {
                match first_of.entry(k.key) {
                    std::collections::hash_map::Entry::Occupied(_) => {
                        if start >= head_end && end <= tail_from && k.ids().is_some() {
                            sames.push((line, k, start, end));
                            continue;
                        }
                    }
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert((line, k, start));
                    }
                }
            }
            push(line, start, end);
            continue;
        }
        let (from, back) = back_lines(text, start, LOOKBACK_LINES);
        push(
            line - back,
            from,
            forward_lines(text, start, LOOKAHEAD_LINES + 1),
        );
    }
    if tail {
        let total = count_lines(text) as usize;
        let (from, back) = back_lines(text, text.len(), TAIL_LINES);
        // `back_lines` from the very end counts the last line as one even without a newline.
        push(total.saturating_sub(back), from, text.len());
    }
    // The records that hold a hit are those of the lines not left to an exemplar.
    let hits: Vec<(usize, usize)> = if sames.is_empty() {
        hits
    } else {
        let skipped: std::collections::HashSet<usize> = sames.iter().map(|s| s.0).collect();
        hits.into_iter()
            .filter(|(line, _)| !skipped.contains(line))
            .collect()
    };

    let mut out = Sieved::default();
    // The latest UTC and zone-less record of the windows so far.
    let mut latest: [Option<(Micros, Event)>; 2] = [None, None];
    let mut hit_iter = hits.iter().map(|&(line, _)| line).peekable();
    for (wi, &(first_line, from, to)) in windows.iter().enumerate() {
        let part = parse::parse(kind, &text[from..to]);
        let offset = first_line as u32;
        if wi == 0 && head {
            out.zone_samples.extend(&part.zone_samples);
        }
        out.unparsed_lines += part.unparsed_lines;
        // The window's first and last timed records are copied, not every timed one.
        let first_timed = part.events.iter().position(|e| e.raw_time.is_some());
        let last_timed = part.events.iter().rposition(|e| e.raw_time.is_some());
        let keeps_last = !tail || wi + 1 == windows.len();
        // The window's earliest and latest records, by the time parsed.
        let mut extremes: [Option<(Micros, usize)>; 4] = [None; 4];
        for (idx, ev) in part.events.iter().enumerate() {
            let (slot, t) = match ev.raw_time {
                Some(RawTime::Utc(t)) => (0, t),
                Some(RawTime::Naive(t)) => (2, t),
                _ => continue,
            };
            if extremes[slot].is_none_or(|(held, _)| t < held) {
                extremes[slot] = Some((t, idx));
            }
            if extremes[slot + 1].is_none_or(|(held, _)| t >= held) {
                extremes[slot + 1] = Some((t, idx));
            }
        }
        let extremes_at = extremes;
        let extremes: Vec<usize> = extremes.iter().flatten().map(|&(_, i)| i).collect();
        let mut edges = silence_edges(&part.events);
        // A silence between the previous window's latest record and this one's earliest.
        for (slot, held) in latest.iter_mut().enumerate() {
            let (Some((t, ev)), Some(&(first, idx))) =
                (held.as_ref(), extremes_at[slot * 2].as_ref())
            else {
                continue;
            };
            if first - t > QUIET {
                out.edges.push(ev.clone());
                edges.push(idx);
            }
        }
        edges.sort_unstable();
        for (idx, mut ev) in part.events.into_iter().enumerate() {
            ev.line += offset;
            // Lines of this record, as 0-based indices.
            let lo = (ev.line - 1) as usize;
            let hi = lo + ev.n_lines.max(1) as usize;
            while hit_iter.peek().is_some_and(|h| *h < lo) {
                hit_iter.next();
            }
            let holds_hit = hit_iter.peek().is_some_and(|h| *h < hi);
            if out.first_timed.is_none() && Some(idx) == first_timed {
                out.first_timed = Some(ev.clone());
            }
            if keeps_last && Some(idx) == last_timed {
                out.last_timed = Some(ev.clone());
            }
            if extremes.contains(&idx) {
                out.bounds.note(&ev);
            }
            if !holds_hit && edges.binary_search(&idx).is_ok() {
                out.edges.push(ev.clone());
            }
            for (slot, at) in [(0, 1), (1, 3)] {
                if extremes_at[at].is_some_and(|(_, i)| i == idx) {
                    latest[slot] = extremes_at[at].map(|(t, _)| (t, ev.clone()));
                }
            }
            if holds_hit {
                out.events.push(ev);
            }
        }
        for mut d in part.diagnostics {
            d.line = d.line.map(|l| l + offset);
            out.diagnostics.push(d);
        }
    }
    // Windows overlap only by merging, so events come out in file order.
    out.events.dedup_by(|a, b| a.line == b.line);
    out.events = fold_with_repeats(kind, text, out.events, &first_of, sames, &mut out.keyed);
    out
}

/// Folds the hit records of a piece together with the lines left to an exemplar: those
/// whose exemplar was parsed as a record of one line with its time outside its text become
/// [`Same`]s; the others are parsed after all.
fn fold_with_repeats(
    kind: SourceKind,
    text: &[u8],
    mut events: Vec<Event>,
    first_of: &HashMap<u64, (usize, LineKey, usize)>,
    sames: Vec<(usize, LineKey, usize, usize)>,
    keyed: &mut Vec<FoldedKey>,
) -> Vec<Event> {
    let mut folder = Folder::default();
    let mut repeats: Vec<Same> = Vec::with_capacity(sames.len());
    // Line key -> (fold key, the exemplar's parsed time and its stamp's time, its raw time,
    // whether it may be mirrored, its echo identity).
    #[allow(clippy::type_complexity)]
    let mut exemplars: HashMap<u64, Option<(u64, Micros, Micros, RawTime, bool, u64)>> =
        HashMap::new();
    for (line, k, start, end) in sames {
        let exemplar = *exemplars.entry(k.key).or_insert_with(|| {
            let &(ex_line, ex_k, ex_start) = first_of.get(&k.key)?;
            let ids = ex_k.ids()?;
            // The UUIDs of the exemplar must be told apart to be replaced.
            if ids.len() == 2 && ids[0] == ids[1] {
                return None;
            }
            let at = events
                .binary_search_by_key(&(ex_line as u32 + 1), |e| e.line)
                .ok()?;
            let ev = &events[at];
            // The stamp's date (a klog header's `mmdd hh:mm`): a record whose text holds it
            // would differ from its repeats in more than its time.
            let date = match ex_k.year_less {
                true => text.get(ex_start + 1..ex_start + 11)?,
                false => text.get(ex_start..ex_start + 11)?,
            };
            let date = std::str::from_utf8(date).ok()?.trim_start_matches('[');
            let date = &date[..date.len().min(10)];
            let stamp_in_text = ev.message.contains(date)
                || ev.component.contains(date)
                || ev.fields.iter().any(|(_, v)| v.contains(date));
            let raw = ev.raw_time?;
            let micros = micros_of(raw)?;
            if ev.n_lines != 1 || stamp_in_text || ev.repeat.is_some() {
                return None;
            }
            let fold_key = fold_key(ev)?;
            folder.exemplar(k.key, ev, ids);
            Some((
                fold_key,
                micros,
                ex_k.t,
                raw,
                ev.mirror_key != 0,
                ev.echo_key,
            ))
        });
        match exemplar {
            Some((fold_key, micros, ex_t, like, mirrored, echo)) => {
                let t = micros + (k.t - ex_t);
                let mirror = match mirrored {
                    true => mirror_key(&text[start..end]),
                    false => 0,
                };
                repeats.push(Same {
                    line: line as u32 + 1,
                    key: fold_key,
                    exemplar: k.key,
                    ids: k.ids,
                    raw: raw_like(like, t),
                    t,
                    mirror,
                    echo,
                });
            }
            None => {
                let mut part = parse::parse(kind, &text[start..end]);
                for ev in &mut part.events {
                    ev.line += line as u32;
                }
                events.extend(part.events);
            }
        }
    }
    events.sort_by_key(|e| e.line);
    // What may be mirrored is noted before it folds (`load::mirror`).
    let same = |s: Same, folder: &mut Folder, keyed: &mut Vec<FoldedKey>| {
        let mut ev = Event::new(s.line, "");
        (ev.mirror_key, ev.echo_key) = (s.mirror, s.echo);
        keyed.extend(keys_of(&ev).map(|k| (s.line, k, s.key)));
        folder.push_same(s);
    };
    let mut repeats = repeats.into_iter().peekable();
    for ev in events {
        while let Some(s) = repeats.next_if(|s| s.line < ev.line) {
            same(s, &mut folder, keyed);
        }
        let mut keys = keys_of(&ev).peekable();
        if keys.peek().is_none() {
            folder.push(ev);
            continue;
        }
        let fold = fold_key(&ev);
        keyed.extend(keys.map(|k| (ev.line, k, fold.unwrap_or(0))));
        folder.push_keyed(fold, ev);
    }
    for s in repeats {
        same(s, &mut folder, keyed);
    }
    folder.finish()
}

/// The indices of `events` (one window's records) that the incident window may start or end
/// at: the records on either side of a silence longer
/// than [`QUIET`](crate::event::QUIET), by the time parsed (UTC and zone-less times apart). Sorted.
fn silence_edges(events: &[Event]) -> Vec<usize> {
    let mut edges = Vec::new();
    for utc in [true, false] {
        let mut times: Vec<(Micros, usize)> = events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match e.raw_time {
                Some(RawTime::Utc(t)) if utc => Some((t, i)),
                Some(RawTime::Naive(t)) if !utc => Some((t, i)),
                _ => None,
            })
            .collect();
        times.sort_unstable();
        for pair in times.windows(2) {
            if let [(a, i), (b, j)] = pair {
                if b - a > QUIET {
                    edges.extend([*i, *j]);
                }
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Whether the line at the start of `text` surely begins a record of its own, in any format:
/// it leads with a date-time (`2024-10-07 15:23:45`, `2024-10-07T15:45:50`, `[2024-…` of
/// Ray's C++ logs, `INFO 2024-…` of Serve's) or is a JSON object, once a `kubectl logs
/// --timestamps` stamp is set aside. A continuation line (a traceback, a Go stack, a CRI
/// partial line, a Docker JSON envelope) never does, so a hit on a line that starts a record
/// and is followed by one that does too is a record of one line. Nor does a frame of an absl
/// dump that Ray's logger wrote again (`[2026-… E 1 1] logging.cc:361:     @ 0x…`): stamped
/// like a record, it continues the logged banner's (`parse::abort`).
pub(super) fn starts_record(text: &[u8]) -> bool {
    let line = &text[..memchr::memchr(b'\n', text).unwrap_or(text.len())];
    let inner = strip_kubectl_stamp(line);
    if inner.starts_with(b"{\"") {
        return !inner.starts_with(b"{\"log\"");
    }
    if crate::parse::abort::logged_absl_frame_bytes(inner) {
        return false;
    }
    if crate::parse::stamp::klog_led(inner) {
        return true;
    }
    let inner = inner.strip_prefix(b"[").unwrap_or(inner);
    // A level word before the date (`INFO 2024-…`).
    let level_end = inner
        .iter()
        .position(|b| !b.is_ascii_uppercase())
        .unwrap_or(inner.len());
    let inner = match inner.get(level_end) {
        Some(b' ') if level_end >= 4 => &inner[level_end + 1..],
        _ => inner,
    };
    date_time_led(inner)
}

/// `YYYY-MM-DD` then `T` or a space, then `HH:`.
pub(super) fn date_time_led(b: &[u8]) -> bool {
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && matches!(b.get(10), Some(b'T' | b' '))
        && digits(11..13)
        && b.get(13) == Some(&b':')
}

/// The line after a `kubectl logs --timestamps` stamp (`2024-10-07T15:45:50.283123456Z `, an
/// RFC 3339 time ending in `Z` or an offset, then one space); the line itself when it has
/// none.
pub(super) fn strip_kubectl_stamp(line: &[u8]) -> &[u8] {
    if !date_time_led(line) || line.get(10) != Some(&b'T') {
        return line;
    }
    let Some(space) = line.iter().take(40).position(|&b| b == b' ' || b == b'\t') else {
        return line;
    };
    let stamp = &line[..space];
    let zoned =
        stamp.ends_with(b"Z") || stamp.len() > 6 && matches!(stamp[stamp.len() - 6], b'+' | b'-');
    if line[space] == b' ' && zoned {
        &line[space + 1..]
    } else {
        line
    }
}

/// Walks back from `pos` (a line start, or the end of `text`) over up to `n` lines; returns
/// the start of the line reached and how many lines were stepped over.
pub(super) fn back_lines(text: &[u8], pos: usize, n: usize) -> (usize, usize) {
    let mut at = pos;
    let mut stepped = 0;
    // From the end of a text that does not end in a newline, the unterminated last line
    // is the first one stepped over.
    while stepped < n && at > 0 {
        let search_end = if at == text.len() && text.last() != Some(&b'\n') {
            at
        } else {
            at - 1
        };
        at = memchr::memrchr(b'\n', &text[..search_end]).map_or(0, |i| i + 1);
        stepped += 1;
    }
    (at, stepped)
}

/// The byte after the `n`th line end from `pos`, or the end of `text`.
pub(super) fn forward_lines(text: &[u8], pos: usize, n: usize) -> usize {
    memchr::memchr_iter(b'\n', &text[pos..])
        .nth(n.saturating_sub(1))
        .map_or(text.len(), |i| pos + i + 1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn repeated_lines_read_from_an_exemplar_keep_their_own_time_and_ids() {
        use crate::rules::sieve::Hit;
        let mut text = String::new();
        for i in 0..40u32 {
            text.push_str(&format!(
                "2024-04-25T23:{:02}:{:02}.720Z\tERROR\tcontrollers.RayService\tFail to reconcileServe.\t{{\"error\": \"refused\", \"reconcileID\": \"{:08x}-edb5-467e-bc3b-82910187b923\"}}\n",
                i / 60,
                i % 60,
                i
            ));
        }
        let bytes = text.as_bytes();
        let hits: Vec<Hit> = (0..40)
            .map(|line| Hit {
                line,
                start: bytes
                    .split(|&b| b == b'\n')
                    .take(line)
                    .map(|l| l.len() + 1)
                    .sum(),
            })
            .collect();
        let out = parse_windows(
            SourceKind::Operator,
            bytes,
            0..bytes.len(),
            0,
            &hits,
            false,
            false,
        );
        let full = parse::parse(SourceKind::Operator, bytes).events;
        assert_eq!(out.events.iter().map(Event::weight).sum::<u64>(), 40);
        for ev in &out.events {
            let mut ev = ev.clone();
            ev.repeat = None;
            assert_eq!(
                Some(&ev),
                full.get(ev.line as usize - 1),
                "line {}",
                ev.line
            );
        }
    }
}
