//! The floor under `raysift analyze` on a `.tar.gz`: inflate, untar and split lines, and
//! nothing else, with the crates raysift reads bundles with (flate2 on zlib-rs, tar, memchr).
//! Whatever `analyze` does beyond this loop is the price of understanding the bundle.
//!
//! ```sh
//! cargo bench --bench floor -- BUNDLE.tar.gz   # one line: bytes, lines, entries, seconds, MB/s
//! cargo bench --bench floor -- literals        # the prefilter's literals, one per line
//! ```
//!
//! Without an argument (as plain `cargo bench` runs it) it prints how to use it and exits 0.
//! `benches/e2e.sh` runs the built binary directly.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use flate2::bufread::MultiGzDecoder;
use raysift::rules::library;
use raysift::rules::sieve::Sieve;

/// Decompressed data is read in blocks of this size: small reads cost inflate speed.
const BLOCK: usize = 1 << 20;
/// Compressed input buffer.
const GZ_INPUT: usize = 64 << 10;

const USAGE: &str = "usage: cargo bench --bench floor -- BUNDLE.tar.gz | literals
  BUNDLE.tar.gz  inflate, untar and split the lines of every member; print bytes, lines,
                 entries, seconds and MB/s (10^6 bytes of member content per second)
  literals       print the prefilter literals of the built-in rules, one per line";

#[derive(Default)]
struct Counts {
    /// Bytes of member content (uncompressed).
    bytes: u64,
    lines: u64,
    /// Regular files in the archive.
    entries: u64,
    /// Longest line in bytes: keeps the per-line loop from being folded into a count.
    longest: usize,
}

impl Counts {
    /// One block of whole lines, each ending in `\n`.
    fn lines_of(&mut self, block: &[u8]) {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', block) {
            self.longest = self.longest.max(end - start);
            self.lines += 1;
            start = end + 1;
        }
    }

    /// The last line of a member, when it has no `\n`.
    fn last_line(&mut self, line: &[u8]) {
        if !line.is_empty() {
            self.longest = self.longest.max(line.len());
            self.lines += 1;
        }
    }
}

/// `read` that retries when interrupted.
fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Streams the tar.gz once: every regular member is read in blocks of `BLOCK` bytes, cut
/// after its last full line; the partial line moves to the front of the next block.
fn walk(path: &Path) -> io::Result<Counts> {
    let file = File::open(path)?;
    let inflate = MultiGzDecoder::new(BufReader::with_capacity(GZ_INPUT, file));
    let mut archive = tar::Archive::new(inflate);
    let mut buf = vec![0u8; BLOCK];
    let mut counts = Counts::default();
    for entry in archive.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        counts.entries += 1;
        let mut carry = 0;
        loop {
            let n = read_some(&mut entry, &mut buf[carry..])?;
            if n == 0 {
                counts.last_line(&buf[..carry]);
                break;
            }
            counts.bytes += n as u64;
            let filled = carry + n;
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(last) => {
                    counts.lines_of(&buf[..=last]);
                    buf.copy_within(last + 1..filled, 0);
                    carry = filled - last - 1;
                }
                // One line longer than the block: let the block grow until it ends.
                None if filled == buf.len() => {
                    buf.resize(buf.len() * 2, 0);
                    carry = filled;
                }
                None => carry = filled,
            }
        }
        if buf.len() > BLOCK {
            buf.truncate(BLOCK);
            buf.shrink_to_fit();
        }
    }
    Ok(counts)
}

fn literals() -> ExitCode {
    let rules = match library::builtin() {
        Ok(rules) => rules,
        Err(e) => {
            eprintln!("floor: the built-in rules do not load: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = Sieve::new(&rules)
        .literals()
        .iter()
        .try_for_each(|lit| writeln!(out, "{lit}"))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("floor: {e}");
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

fn floor(path: &Path) -> ExitCode {
    let start = Instant::now();
    let counts = match walk(path) {
        Ok(counts) => counts,
        Err(e) => {
            eprintln!("floor: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let secs = start.elapsed().as_secs_f64();
    println!(
        "bytes={} lines={} entries={} secs={secs:.3} MB/s={:.1}",
        counts.bytes,
        counts.lines,
        counts.entries,
        counts.bytes as f64 / 1e6 / secs
    );
    std::hint::black_box(counts.longest);
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    // `cargo bench` adds `--bench`; it is not ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.as_slice() {
        [] => {
            println!("floor: nothing to measure without a bundle\n{USAGE}");
            ExitCode::SUCCESS
        }
        [flag] if flag == "-h" || flag == "--help" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        [mode] if mode == "literals" => literals(),
        [path] if !path.starts_with('-') => floor(Path::new(path)),
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
