//! Mirrored records: one record that its process wrote to two files. A Ray C++ process
//! (raylet, gcs_server) logs to `<name>.out` and writes its errors again to `<name>.err`, with
//! the same time, pid, tid and text; a Python component may repeat a record of `<name>.log`
//! in its `.err` or `.out`. Such a record is one record: it is kept where its process logs
//! everything, and the copy is not an event of its own (not counted, not ranked, not shown),
//! but the kept record says where its copy is (`Mirrors::also`), and the file of copies how
//! many it holds (`FileInfo::mirrored`).
//!
//! Files mirror each other when they lie in one folder and share a stem (`raylet` of
//! `logs/raylet.out` and `logs/raylet.err`); of such files, `.log` holds the originals, then
//! `.out`, then `.err`. A record of a file is a copy when a file of its stem that comes before
//! holds a record of the same identity (`Event::mirror_key`: its first line as written, time,
//! level, pid, tid and text, hashed; only records with a time, at warning or above, have one).
//!
//! Ray's event files repeat records of its logs too: a FATAL event in
//! `<folder>/events/event_GCS.log` repeats the failed check its process logged, the GCS's
//! `RAY_NODE_REMOVED` its warning, the autoscaler's events its `:event_summary:` records. An
//! event is a copy when a log directly in `<folder>` holds a record of the same pid and first
//! line (`Event::echo_key`, `parse::ray_event::echo_key`; no time: an event has whole seconds
//! in UTC, its log record milliseconds in local time). A record thus has two identities
//! (`keys_of`): its line's, which the files of a stem compare, and the one it shares with an
//! event, which only event files are looked up by.
//!
//! Decided once a whole bundle is read, from the identities of the records of each file, one
//! list of numbers a file (a hash set a stem while deciding): the order files are read in and
//! the thread count change nothing.

use std::collections::{BTreeMap, HashMap};

use super::FileInfo;
use crate::event::{Event, FileId};

/// A record's first line and one of its identities ([`keys_of`]).
pub type Keyed = (u32, u64);

/// A record a sieved read noted before it folded: its first line, one of its identities and
/// its fold key (`windows::Sieved::keyed`).
pub type FoldedKey = (u32, u64, u64);

/// The top bit of a key: set for an event's identity (`Event::echo_key`), clear for a line's
/// (`Event::mirror_key`), so that the two never meet.
const ECHO: u64 = 1 << 63;

/// The identities of a record, as keys of the lists [`Mirrors::decide`] reads: its line's,
/// and the one it shares with an event that repeats it; none for a record that has neither.
pub fn keys_of(ev: &Event) -> impl Iterator<Item = u64> {
    let line = (ev.mirror_key != 0).then_some(ev.mirror_key & !ECHO);
    let echo = (ev.echo_key != 0).then_some(ev.echo_key | ECHO);
    line.into_iter().chain(echo)
}

fn is_echo(key: u64) -> bool {
    key & ECHO != 0
}

/// Which records copy which, as decided for a bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mirrors {
    /// Records that copy a record of another file of their process, as (file, first line);
    /// sorted.
    copies: Vec<(FileId, u32)>,
    /// Each kept record that has a copy, and that copy (the first, when there are several);
    /// sorted.
    also: Vec<((FileId, u32), (FileId, u32))>,
    /// Per file holding copies: how many, and the file of the first one's original.
    per_file: BTreeMap<FileId, (u64, FileId)>,
}

impl Mirrors {
    /// Decides which records copy which. `files` are (id, path as shown) and `keys(id)` the
    /// identities of that file's records (any order; a record of the file at most once).
    pub fn decide<'a>(
        files: impl Iterator<Item = (FileId, &'a str)>,
        keys: impl Fn(FileId) -> &'a [Keyed],
    ) -> Mirrors {
        let files: Vec<(FileId, &str)> = files.collect();
        let mut stems: BTreeMap<&str, Vec<(u8, FileId)>> = BTreeMap::new();
        for &(id, path) in &files {
            if let Some((stem, rank)) = role(path) {
                stems.entry(stem).or_default().push((rank, id));
            }
        }
        let mut m = Mirrors::default();
        let mut first: HashMap<u64, (FileId, u32)> = HashMap::new();
        for (_, mut group) in stems {
            if group.len() < 2 {
                continue;
            }
            group.sort_unstable();
            first.clear();
            for (_, id) in group {
                let mut own: Vec<Keyed> =
                    keys(id).iter().copied().filter(|k| !is_echo(k.1)).collect();
                own.sort_unstable();
                // Copies first: a record of this file is looked up in the files before it
                // only, then this file's records join what the next files are looked up in.
                for &(line, key) in &own {
                    if let Some(&orig) = first.get(&key) {
                        m.copies.push((id, line));
                        m.also.push((orig, (id, line)));
                        let entry = m.per_file.entry(id).or_insert((0, orig.0));
                        entry.0 += 1;
                    }
                }
                for &(line, key) in &own {
                    first.entry(key).or_insert((id, line));
                }
            }
        }
        m.events_repeating_logs(&files, &keys);
        m.copies.sort_unstable();
        m.also.sort_unstable();
        m.also.dedup_by_key(|(orig, _)| *orig);
        m
    }

    /// Ray's event files repeat a failure its processes logged: a FATAL event is a copy of the
    /// fatal record of the same process (the same identity, `ray_event::fatal_key`) in the
    /// folder that holds the `events/` folder.
    fn events_repeating_logs<'a>(
        &mut self,
        files: &[(FileId, &'a str)],
        keys: &impl Fn(FileId) -> &'a [Keyed],
    ) {
        let mut in_dir: BTreeMap<&str, Vec<FileId>> = BTreeMap::new();
        for &(id, path) in files {
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            in_dir.entry(dir).or_default().push(id);
        }
        let mut events: Vec<(FileId, &str)> = files
            .iter()
            .filter_map(|&(id, path)| Some((id, event_file_session(path)?)))
            .collect();
        events.sort_unstable();
        // A copy of a line (a raylet.err record) is no original: its kept record is.
        let copies: std::collections::HashSet<(FileId, u32)> =
            self.copies.iter().copied().collect();
        let mut logged: BTreeMap<&str, HashMap<u64, (FileId, u32)>> = BTreeMap::new();
        for (id, dir) in events {
            let firsts = logged.entry(dir).or_insert_with(|| {
                let mut firsts = HashMap::new();
                let mut ids = in_dir.get(dir).cloned().unwrap_or_default();
                ids.sort_unstable();
                for f in ids {
                    let mut own: Vec<Keyed> = keys(f)
                        .iter()
                        .copied()
                        .filter(|&(line, key)| is_echo(key) && !copies.contains(&(f, line)))
                        .collect();
                    own.sort_unstable();
                    for (line, key) in own {
                        firsts.entry(key).or_insert((f, line));
                    }
                }
                firsts
            });
            for &(line, key) in keys(id).iter().filter(|k| is_echo(k.1)) {
                if let Some(&orig) = firsts.get(&key) {
                    self.copies.push((id, line));
                    self.also.push((orig, (id, line)));
                    let entry = self.per_file.entry(id).or_insert((0, orig.0));
                    entry.0 += 1;
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.copies.is_empty()
    }

    /// Whether the record of `file` at `line` copies a record of another file.
    pub fn is_copy(&self, file: FileId, line: u32) -> bool {
        self.copies.binary_search(&(file, line)).is_ok()
    }

    /// Where the kept record of `file` at `line` is written again, if anywhere.
    pub fn also(&self, file: FileId, line: u32) -> Option<(FileId, u32)> {
        let i = self
            .also
            .binary_search_by_key(&(file, line), |(orig, _)| *orig)
            .ok()?;
        Some(self.also[i].1)
    }

    /// How many records of `file` are copies, and the file of their originals.
    pub fn of_file(&self, file: FileId) -> Option<(u64, FileId)> {
        self.per_file.get(&file).copied()
    }

    /// Every copy, as (file, first line), sorted.
    pub fn copies(&self) -> &[(FileId, u32)] {
        &self.copies
    }

    /// The same decisions with every file id mapped by `id_of`.
    pub fn renumbered(self, id_of: impl Fn(FileId) -> FileId) -> Mirrors {
        let at = |(f, l): (FileId, u32)| (id_of(f), l);
        let mut m = Mirrors {
            copies: self.copies.into_iter().map(at).collect(),
            also: self.also.into_iter().map(|(a, b)| (at(a), at(b))).collect(),
            per_file: self
                .per_file
                .into_iter()
                .map(|(f, (n, of))| (id_of(f), (n, id_of(of))))
                .collect(),
        };
        m.copies.sort_unstable();
        m.also.sort_unstable();
        m
    }
}

/// Decides the mirrors of a bundle read with its events kept (`load`), removes the copies
/// from `events` (one list a file id) and counts them in `files`. `keyed` holds, a file id,
/// the records a sieved read folded away (`windows::Sieved::keyed`): a fold of a file of
/// copies loses the copies it counts, and goes when it counts nothing else.
pub(super) fn settle(
    files: &mut [FileInfo],
    events: &mut [Vec<Event>],
    keyed: &mut [Vec<FoldedKey>],
) -> Mirrors {
    let mut keys: Vec<Vec<Keyed>> = vec![Vec::new(); files.len()];
    for f in files.iter() {
        let id = f.id as usize;
        if role(&f.path).is_none() {
            continue;
        }
        let (Some(evs), Some(folded), Some(own)) =
            (events.get(id), keyed.get_mut(id), keys.get_mut(id))
        else {
            continue;
        };
        folded.sort_unstable();
        folded.dedup_by_key(|k| (k.0, k.1));
        own.extend(folded.iter().map(|&(line, key, _)| (line, key)));
        own.extend(
            evs.iter()
                .flat_map(|e| keys_of(e).map(move |k| (e.line, k))),
        );
        own.sort_unstable();
        own.dedup();
    }
    let mirrors = Mirrors::decide(files.iter().map(|f| (f.id, f.path.as_str())), |id| {
        keys.get(id as usize).map_or(&[], Vec::as_slice)
    });
    if mirrors.is_empty() {
        return mirrors;
    }
    for f in files.iter_mut() {
        let Some((n, of)) = mirrors.of_file(f.id) else {
            continue;
        };
        let id = f.id as usize;
        let (Some(evs), Some(folded)) = (events.get_mut(id), keyed.get(id)) else {
            continue;
        };
        evs.retain_mut(|ev| match ev.repeat.as_deref_mut() {
            None => !mirrors.is_copy(f.id, ev.line),
            Some(r) => {
                let copies = folded_copies(folded, ev.line, r.last_line, |line| {
                    mirrors.is_copy(f.id, line)
                });
                r.count = r.count.saturating_sub(copies);
                if r.count < 2 {
                    let alone = r.count == 1;
                    ev.repeat = None;
                    return alone;
                }
                true
            }
        });
        f.events = evs.iter().map(Event::weight).sum();
        f.mirrored = n;
        f.mirror_of = Some(of);
    }
    mirrors
}

/// How many of the records a fold from `first` to `last` (first lines) stands for are copies:
/// `folded` (sorted by line) holds each record that may be mirrored with its fold key, and a
/// fold stands for every record of its key between its first and its last.
fn folded_copies(
    folded: &[FoldedKey],
    first: u32,
    last: u32,
    is_copy: impl Fn(u32) -> bool,
) -> u64 {
    let from = folded.partition_point(|k| k.0 < first);
    let Some(&(_, _, fold)) = folded.get(from).filter(|k| k.0 == first) else {
        return 0;
    };
    let mut lines: Vec<u32> = folded[from..]
        .iter()
        .take_while(|k| k.0 <= last)
        .filter(|k| k.2 == fold && is_copy(k.0))
        .map(|k| k.0)
        .collect();
    // A record may be noted under both its identities.
    lines.dedup();
    lines.len() as u64
}

/// A file's stem (its path without `.log`, `.out` or `.err`) and its place among the files of
/// that stem: `.log` first, then `.out`, then `.err`. `None` for any other name.
pub fn role(path: &str) -> Option<(&str, u8)> {
    let (stem, ext) = path.rsplit_once('.')?;
    let rank = match ext {
        "log" => 0,
        "out" => 1,
        "err" => 2,
        _ => return None,
    };
    let name = stem.rsplit('/').next().unwrap_or(stem);
    (!name.is_empty()).then_some((stem, rank))
}

/// Whether a file at `path` may hold copies of another file's records (an `.out` or `.err`,
/// or an event file).
pub fn may_hold_copies(path: &str) -> bool {
    role(path).is_some_and(|(_, rank)| rank > 0) || event_file_session(path).is_some()
}

/// Of a Ray event file (`<dir>/events/event_RAYLET.log`), the folder of the logs it may
/// repeat (`<dir>`, empty at the top of the bundle).
pub fn event_file_session(path: &str) -> Option<&str> {
    let (dir, name) = path.rsplit_once('/')?;
    if !(name.starts_with("event_") && name.ends_with(".log")) {
        return None;
    }
    match dir.rsplit_once('/') {
        Some((session, "events")) => Some(session),
        None if dir == "events" => Some(""),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_in_err_that_out_holds_is_a_copy_of_it() {
        let files = [
            (0, "logs/gcs_server.out"),
            (1, "logs/raylet.err"),
            (2, "logs/raylet.out"),
            (3, "other/raylet.err"),
        ];
        let keys: Vec<Vec<Keyed>> = vec![
            vec![(5, 7)],
            vec![(1, 7), (2, 8), (3, 9)],
            vec![(10, 8), (20, 9), (30, 7)],
            vec![(1, 8)],
        ];
        let m = Mirrors::decide(files.into_iter(), |id| &keys[id as usize]);
        // The gcs record shares a key but not a stem; `other/` is another folder; the err
        // record 1 has key 7, which raylet.out holds at line 30.
        assert_eq!(m.copies(), &[(1, 1), (1, 2), (1, 3)]);
        assert_eq!(m.also(2, 10), Some((1, 2)));
        assert_eq!(m.also(2, 30), Some((1, 1)));
        assert_eq!(m.also(0, 5), None);
        assert!(m.is_copy(1, 3) && !m.is_copy(2, 20) && !m.is_copy(3, 1));
        assert_eq!(m.of_file(1), Some((3, 2)));
        assert_eq!(m.of_file(2), None);
    }

    #[test]
    fn log_comes_before_out_and_err_and_a_file_never_copies_itself() {
        let files = [
            (0, "dashboard.err"),
            (1, "dashboard.log"),
            (2, "dashboard.out"),
        ];
        let keys: Vec<Vec<Keyed>> = vec![
            vec![(1, 1), (2, 2)],
            vec![(4, 1), (5, 1)],
            vec![(1, 1), (2, 3), (3, 3)],
        ];
        let m = Mirrors::decide(files.into_iter(), |id| &keys[id as usize]);
        // The .log's two records of one key are both its own; the .out's second and third
        // are its own too; key 1 is a copy in .out and .err; key 2 of .err is its own.
        assert_eq!(m.copies(), &[(0, 1), (2, 1)]);
        assert_eq!(m.also(1, 4), Some((0, 1)));
        assert_eq!(m.of_file(0), Some((1, 1)));
    }

    #[test]
    fn a_fatal_event_repeats_the_fatal_record_of_its_session_folder() {
        let files = [
            (0, "a/logs/events/event_RAYLET.log"),
            (1, "a/logs/raylet.out"),
            (2, "b/logs/raylet.out"),
            (3, "b/logs/events/event_RAYLET.log"),
            (4, "events/event_GCS.log"),
        ];
        let e = |k: u64| k | ECHO;
        let keys: Vec<Vec<Keyed>> = vec![
            vec![(1, e(50)), (2, e(60)), (3, 80)],
            vec![(9, e(50)), (9, 80)],
            vec![(7, e(60))],
            vec![(1, e(70))],
            vec![(1, e(60))],
        ];
        let m = Mirrors::decide(files.into_iter(), |id| &keys[id as usize]);
        // Node a's event repeats its raylet's fatal record; key 60 is node b's, not a's; a
        // line's identity (80) is never an event's.
        assert_eq!(m.copies(), &[(0, 1)]);
        assert_eq!(m.also(1, 9), Some((0, 1)));
        assert_eq!(event_file_session("events/event_GCS.0.log"), Some(""));
        assert_eq!(event_file_session("a/logs/event_GCS.log"), None);
    }

    fn file(id: FileId, path: &str) -> FileInfo {
        FileInfo::new(id, path.to_string(), crate::event::SourceKind::Raylet)
    }

    fn keyed_event(line: u32, key: u64) -> Event {
        let mut e = Event::new(line, "x");
        e.raw_time = Some(crate::event::RawTime::Naive(i64::from(line)));
        e.mirror_key = key;
        e
    }

    #[test]
    fn a_fold_of_copies_loses_the_copies_it_counts() {
        let mut files = vec![file(0, "logs/raylet.err"), file(1, "logs/raylet.out")];
        // The .err: lines 1-5 folded into line 1 (five records of one fold key), line 6 on
        // its own; the .out holds three of the fold's records and line 6's.
        let mut fold = keyed_event(1, 101);
        let mut repeat = crate::event::Repeat::single(1, crate::event::RawTime::Naive(1), 1);
        repeat.count = 5;
        repeat.last_line = 5;
        fold.repeat = Some(Box::new(repeat));
        let mut events = vec![
            vec![fold, keyed_event(6, 106)],
            vec![
                keyed_event(10, 101),
                keyed_event(11, 102),
                keyed_event(12, 103),
                keyed_event(20, 106),
            ],
        ];
        let mut keyed = vec![
            vec![
                (1, 101, 9),
                (2, 102, 9),
                (3, 103, 9),
                (4, 104, 9),
                (5, 105, 9),
                (6, 106, 7),
            ],
            Vec::new(),
        ];
        let m = settle(&mut files, &mut events, &mut keyed);
        assert_eq!(m.copies(), &[(0, 1), (0, 2), (0, 3), (0, 6)]);
        assert_eq!(events[0].len(), 1);
        assert_eq!(events[0][0].weight(), 2);
        assert_eq!(events[1].len(), 4);
        assert_eq!(
            (files[0].events, files[0].mirrored, files[0].mirror_of),
            (2, 4, Some(1))
        );
        assert_eq!(files[1].mirrored, 0);
        assert_eq!(m.also(1, 20), Some((0, 6)));
    }

    #[test]
    fn roles_by_name() {
        assert_eq!(role("logs/raylet.out"), Some(("logs/raylet", 1)));
        assert_eq!(role("logs/dashboard.log"), Some(("logs/dashboard", 0)));
        assert_eq!(role("logs/raylet.err"), Some(("logs/raylet", 2)));
        assert_eq!(role("logs/raylet.out.1"), None);
        assert_eq!(role("logs/.err"), None);
        assert!(may_hold_copies("a/b.err") && !may_hold_copies("a/b.log"));
    }
}
