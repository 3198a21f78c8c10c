//! Text nobody recognised: every line is its own event. A date-time near the start of the
//! line and a level word are picked up when present, so that unknown files still join the
//! timeline.

use crate::event::{Event, Level, RawTime};
use crate::parse::lines::{parse_records, Continuation};
use crate::parse::primitives::{find_date_time, instant};
use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    parse_records(input, Continuation::Separate, out, |line, _, _| head(line));
}

/// A line with a date-time in its first 40 bytes.
pub fn head(line: &str) -> Option<Event> {
    let (idx, local) = find_date_time(line, 40)?;
    let mut ev = Event::new(0, line.to_string());
    ev.raw_time = Some(match instant(&line[idx..]) {
        Ok((_, utc)) => RawTime::Utc(utc),
        Err(_) => RawTime::Naive(local),
    });
    ev.level = guess_level(line);
    Some(ev)
}

/// The first level word in the line, else `Info`.
pub fn guess_level(line: &str) -> Level {
    let head = line.get(..line.len().min(80)).unwrap_or(line);
    for word in head.split(|c: char| !c.is_ascii_alphabetic()) {
        if word.len() >= 4 {
            if let Some(level) = Level::parse(word) {
                return level;
            }
        }
    }
    Level::Info
}
