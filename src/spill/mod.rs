//! Events put aside on disk while a bundle streams past, then read back in timeline order.
//!
//! A streamed read hands over each file's events in file order, files interleaved, before any
//! time is final (zones, years and the capture time need the whole bundle). [`Spill`] appends
//! each event with its [`Stamp`] to two files in a temporary folder under `TMPDIR`; once the
//! bundle is read and its [`Resolution`] made, [`Spill::merge`] reads every file's events
//! back as one sorted run (a file whose times go back is first cut into sorted runs of bounded
//! size) and merges the runs by `(time, file, line)`, untimed events after the event before
//! them in their file: the order `timeline::merge` gives. The folder is removed when the spill
//! is dropped, on every path out (an error, a closed pipe, a panic).
//!
//! [`Spill::merge_refs`] hands out each event as a view ([`EventRef`]) of the record just read
//! into its run's buffer: a reader that writes the event and forgets it (the JSON timeline)
//! allocates nothing per event. [`Spill::merge`] is the same merge with each event made owned.
//!
//! A [`Spill::rendered`] keeps of each event only its line, its count of lines and the text a
//! render wrote of it on the parser threads (the JSON timeline's packed tail), read back by
//! [`Spill::merge_rendered`]; the text as a [`Delta`] against the text of the event before it
//! in its file. A stamp takes a tag byte and only the numbers it has.
//!
//! Invariant: events come back exactly as they went in (the encoding names every field of
//! `Event`, so a new field does not compile until it is written here too), but for the
//! structured fields a spill made [`Spill::keeping_fields`] does not keep, and but for what
//! a rendered spill does not keep.
//!
//! The spill's parts, one file each:
//!
//! - this file: the temporary folder, the [`Spill`] itself and what its parts share (the
//!   form of its records, blocks, marks, the event a rendered merge hands out);
//! - `writer.rs`: [`Spill::push`] and [`Spill::push_rendered`], and the pair of files being
//!   written;
//! - `record.rs`: an event as a record of the events file, read back as a view, and the
//!   LEB128 numbers records use;
//! - `stamp.rs`: a stamp as a tag byte and the numbers it has;
//! - `delta.rs`: a rendered text as what it does not share with the text before it;
//! - `reader.rs`: the reader of a run, through windows on the shared files;
//! - `merge.rs`: the runs of a merge (a file whose times go back cut into sorted runs) and
//!   the serial merge;
//! - `sliced.rs`: the merge of a rendered spill, cut into slices that threads write at once.
//!
//! [`Stamp`]: crate::resolve::Stamp
//! [`Resolution`]: crate::resolve::Resolution
//! [`EventRef`]: crate::event::EventRef
//! [`Delta`]: delta::Delta

use std::io;
use std::path::{Path, PathBuf};

use crate::event::{FileId, Timestamp};

mod delta;
mod merge;
mod reader;
mod record;
mod sliced;
mod stamp;
mod writer;

pub use sliced::RenderPlaced;

use writer::Pair;

/// A temporary folder, removed with everything in it when dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new() -> io::Result<TempDir> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("raysift-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A stretch of one file's events, contiguous in the spill files.
#[derive(Clone, Copy, Debug)]
struct Block {
    events_at: u64,
    stamps_at: u64,
    count: u64,
}

/// What a spill's records hold of each event.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// The whole event ([`record::encode_event`]).
    Whole,
    /// The event with only the structured fields whose key passes the test.
    SomeFields(fn(&str) -> bool),
    /// Its line and its count of lines, then the text a render wrote of it
    /// ([`crate::load::Render`]): read back by [`Spill::merge_rendered`].
    Rendered,
}

/// Every this many events of a file, a rendered spill notes where the next one lies
/// ([`Mark`]): where a slice of the merge starts reading the file ([`sliced`]).
const MARK_STRIDE: u64 = 32;

/// Where the `n`-th event of a file lies, for `n` a multiple of [`MARK_STRIDE`]: the file's
/// block it is in and how many of that block's records come before it, its record's and
/// its stamp's offsets, and its line.
#[derive(Clone, Copy, Debug)]
struct Mark {
    block: usize,
    within: u64,
    events_at: u64,
    stamps_at: u64,
    line: u32,
}

/// Events put aside per file, in file order.
pub struct Spill {
    dir: TempDir,
    pair: Pair,
    /// Per file `seq`: its blocks, in order.
    blocks: Vec<Vec<Block>>,
    /// Per file `seq`, in a rendered spill: its marks, one per [`MARK_STRIDE`] events.
    marks: Vec<Vec<Mark>>,
    /// Per file `seq`: its events put aside.
    counts: Vec<u64>,
    /// In a rendered spill, the text rendered of the last event put aside (of `last_seq`):
    /// one text, not one a file, so that a bundle of many files keeps no more. An event
    /// that follows one of another file is written whole.
    last_text: Vec<u8>,
    last_seq: Option<u32>,
}

impl Spill {
    pub fn new() -> io::Result<Spill> {
        Spill::create(Form::Whole)
    }

    /// A spill whose events come back with only the structured fields whose key `keep`
    /// accepts: for a reader that needs few of them (the HTML picture, which shows the
    /// fields that say why), which spares writing, reading and allocating the others.
    pub fn keeping_fields(keep: fn(&str) -> bool) -> io::Result<Spill> {
        Spill::create(Form::SomeFields(keep))
    }

    /// A spill that keeps of each event only its place in its file and the text a render
    /// wrote of it ([`Spill::push_rendered`]), read back by [`Spill::merge_rendered`]: for the
    /// JSON timeline, whose lines are written on the parser threads.
    pub fn rendered() -> io::Result<Spill> {
        Spill::create(Form::Rendered)
    }

    /// Whether the spill keeps rendered text ([`Spill::rendered`]).
    pub fn is_rendered(&self) -> bool {
        matches!(self.pair.form, Form::Rendered)
    }

    fn create(form: Form) -> io::Result<Spill> {
        let dir = TempDir::new()?;
        let pair = Pair::create(dir.path(), "spill", form)?;
        Ok(Spill {
            dir,
            pair,
            blocks: Vec::new(),
            marks: Vec::new(),
            counts: Vec::new(),
            last_text: Vec::new(),
            last_seq: None,
        })
    }
}

/// An event of a [`Spill::rendered`] as the merge hands it out: where it lies, its resolved
/// time, and the text rendered of it.
#[derive(Clone, Copy, Debug)]
pub struct Placed<'a> {
    pub ts: Option<Timestamp>,
    pub file: FileId,
    pub line: u32,
    pub n_lines: u32,
    pub rendered: &'a [u8],
}

/// The error of a record that does not decode: the spill is this process's own file, so
/// only a damaged disk or a bug gives it.
fn unreadable() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "spilled event unreadable")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_goes_with_the_spill() {
        let spill = Spill::new().ok();
        let path = spill.as_ref().map(|s| s.dir.path().to_path_buf());
        assert!(path.as_ref().is_some_and(|p| p.is_dir()));
        drop(spill);
        assert!(path.is_some_and(|p| !p.exists()));
    }
}
