//! Tests of the bundle reader. Every container is built here, in memory or in a scratch
//! folder under the system temp dir, so the tests need no fixtures and leave nothing behind.

// Test setup (writing scratch files, building archives) has nothing to recover from.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::fs;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;
use tar::EntryType;

use super::*;

/// 2023-11-14T22:13:20Z, the mtime every built member carries.
const MTIME: u64 = 1_700_000_000;

// ---------------------------------------------------------------------------------------
// The one check, and what it renders.

/// What to walk: a path on disk, or bytes arriving as a stream (as standard input does).
enum Input<'a> {
    Path(&'a Path),
    Stream(&'a [u8]),
}

/// Walks `input` and collects the summary and entries.
fn run(input: &Input<'_>, limits: &Limits) -> (Result<WalkSummary, OpenError>, Vec<Entry>) {
    let mut entries = Vec::new();
    let mut sink = |e: Entry| entries.push(e);
    let result = match input {
        Input::Path(path) => walk(path, limits, &mut sink),
        Input::Stream(bytes) => walk_reader("stdin", &mut Cursor::new(*bytes), limits, &mut sink),
    };
    (result, entries)
}

/// One line for the container, one per entry (`path = content`, content shown when short
/// text, else as a length; `(mapped)` when memory-mapped), one per diagnostic (`! file:
/// problem`). The bundle's own path is shown as `BUNDLE`.
fn render(input: &Input<'_>, limits: &Limits) -> String {
    let (result, entries) = run(input, limits);
    let mut out = Vec::new();
    match result {
        Ok(summary) => {
            out.push(summary.container.clone());
            for e in &entries {
                let text = match std::str::from_utf8(&e.bytes) {
                    Ok(s) if s.len() <= 40 && !s.contains(|c: char| c.is_control()) => {
                        format!("{s:?}")
                    }
                    _ => format!("<{} bytes>", e.bytes.len()),
                };
                let mapped = if matches!(e.bytes, Bytes::Mapped(_)) {
                    " (mapped)"
                } else {
                    ""
                };
                out.push(format!("{} = {text}{mapped}", e.path));
            }
            for d in &summary.diagnostics {
                out.push(format!("! {}: {}", d.file, d.problem));
            }
        }
        Err(e) => out.push(format!("error: {e}")),
    }
    let mut got = out.join("\n");
    if let Input::Path(path) = input {
        got = got.replace(&path.display().to_string(), "BUNDLE");
    }
    got
}

#[track_caller]
fn check(input: Input<'_>, limits: &Limits, expect: &str) {
    let expect: Vec<&str> = expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(render(&input, limits), expect.join("\n"));
}

// ---------------------------------------------------------------------------------------
// Builders.

/// A scratch folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("raysift-bundle-{name}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    fn write(&self, rel: &str, data: &[u8]) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, data).unwrap();
        path
    }

    #[cfg(unix)]
    fn symlink(&self, rel: &str, target: &str) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// One member of a built archive. Names are raw bytes so hostile ones can be written.
enum M<'a> {
    File(&'a [u8], &'a [u8]),
    Dir(&'a [u8]),
    Symlink(&'a [u8], &'a [u8]),
    Hard(&'a [u8], &'a [u8]),
    Fifo(&'a [u8]),
}

/// A ustar header written field by field, so that `..` and absolute names (which the tar
/// crate's builder refuses) can be stored.
fn header(name: &[u8], kind: EntryType, size: u64, link: &[u8]) -> tar::Header {
    let mut h = tar::Header::new_ustar();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.as_old_mut().linkname[..link.len()].copy_from_slice(link);
    h.set_size(size);
    h.set_mode(0o644);
    h.set_mtime(MTIME);
    h.set_entry_type(kind);
    h.set_cksum();
    h
}

fn tar(members: &[M<'_>]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for m in members {
        let (h, data): (_, &[u8]) = match *m {
            M::File(name, data) => (
                header(name, EntryType::Regular, data.len() as u64, b""),
                data,
            ),
            M::Dir(name) => (header(name, EntryType::Directory, 0, b""), b""),
            M::Symlink(name, to) => (header(name, EntryType::Symlink, 0, to), b""),
            M::Hard(name, to) => (header(name, EntryType::Link, 0, to), b""),
            M::Fifo(name) => (header(name, EntryType::Fifo, 0, b""), b""),
        };
        b.append(&h, data).unwrap();
    }
    b.into_inner().unwrap()
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zip(members: &[M<'_>]) -> Vec<u8> {
    use ::zip::write::SimpleFileOptions;
    let when = ::zip::DateTime::from_date_and_time(2023, 11, 14, 22, 13, 20).unwrap();
    let opts = SimpleFileOptions::default()
        .compression_method(::zip::CompressionMethod::Deflated)
        .last_modified_time(when);
    let mut w = ::zip::ZipWriter::new(Cursor::new(Vec::new()));
    for m in members {
        match *m {
            M::File(name, data) => {
                w.start_file(String::from_utf8_lossy(name), opts).unwrap();
                w.write_all(data).unwrap();
            }
            M::Dir(name) => w
                .add_directory(String::from_utf8_lossy(name), opts)
                .unwrap(),
            M::Symlink(name, to) => w
                .add_symlink(
                    String::from_utf8_lossy(name),
                    String::from_utf8_lossy(to),
                    opts,
                )
                .unwrap(),
            M::Hard(..) | M::Fifo(_) => unreachable!("zip has no such members"),
        }
    }
    w.finish().unwrap().into_inner()
}

/// Text that compresses about as badly as real logs with ids in them, so that cutting a
/// compressed archive in half lands in its middle.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..len)
        .map(|i| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            if i % 80 == 79 {
                b'\n'
            } else {
                b'a' + ((x >> 33) % 26) as u8
            }
        })
        .collect()
}

fn limits() -> Limits {
    Limits::DEFAULT
}

// ---------------------------------------------------------------------------------------
// Containers.

#[test]
fn tar_gz() {
    let s = Scratch::new("targz");
    let data = gz(&tar(&[
        M::Dir(b"bundle/"),
        M::File(b"bundle/head/raylet.out", b"raylet line"),
        M::File(b"./bundle/operator.log", b"op"),
        M::File(b"bundle/empty.log", b""),
    ]));
    let p = s.write("b.tar.gz", &data);
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar.gz
        bundle/head/raylet.out = "raylet line"
        bundle/operator.log = "op"
        bundle/empty.log = ""
    "#,
    );
}

#[test]
fn plain_tar() {
    let s = Scratch::new("tar");
    let p = s.write(
        "b.tar",
        &tar(&[M::File(b"a.log", b"A"), M::File(b"d/b.log", b"B")]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        a.log = "A"
        d/b.log = "B"
    "#,
    );
}

#[test]
fn zip_archive() {
    let s = Scratch::new("zip");
    let p = s.write(
        "b.zip",
        &zip(&[
            M::Dir(b"bundle/"),
            M::File(b"bundle/dashboard.log", b"dash"),
            M::File(b"bundle/serve/controller.log", b"ctl"),
        ]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        zip
        bundle/dashboard.log = "dash"
        bundle/serve/controller.log = "ctl"
    "#,
    );
}

#[test]
fn container_decided_by_magic_not_extension() {
    let s = Scratch::new("magic");
    let p = s.write("really-a-zip.tar.gz", &zip(&[M::File(b"x.log", b"X")]));
    check(
        Input::Path(&p),
        &limits(),
        r#"
        zip
        x.log = "X"
    "#,
    );
    let p = s.write("really-a-tar.zip", &tar(&[M::File(b"y.log", b"Y")]));
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        y.log = "Y"
    "#,
    );
}

#[test]
fn single_plain_file_is_mapped() {
    let s = Scratch::new("single");
    let p = s.write("operator.log", b"2024-01-01T00:00:00Z INFO hi");
    check(
        Input::Path(&p),
        &limits(),
        r#"
        file
        operator.log = "2024-01-01T00:00:00Z INFO hi" (mapped)
    "#,
    );
    let p = s.write("empty.log", b"");
    check(
        Input::Path(&p),
        &limits(),
        r#"
        file
        empty.log = ""
    "#,
    );
}

#[test]
fn single_gzip_file() {
    let s = Scratch::new("gz");
    let p = s.write("operator.log.gz", &gz(b"decompressed"));
    check(
        Input::Path(&p),
        &limits(),
        r#"
        gzip
        operator.log = "decompressed"
    "#,
    );
}

#[test]
fn multi_member_gzip() {
    let s = Scratch::new("multigz");
    let mut data = gz(b"first ");
    data.extend(gz(b"second"));
    let p = s.write("raylet.out.gz", &data);
    check(
        Input::Path(&p),
        &limits(),
        r#"
        gzip
        raylet.out = "first second"
    "#,
    );
}

#[test]
fn directory_sorted_and_mapped() {
    let s = Scratch::new("dir");
    s.write("b/z.log", b"Z");
    s.write("b/a.log", b"A");
    s.write("a.log", b"top");
    s.write("b/sub/empty", b"");
    fs::create_dir_all(s.path("c/empty-dir")).unwrap();
    check(
        Input::Path(&s.0),
        &limits(),
        r#"
        directory
        a.log = "top" (mapped)
        b/a.log = "A" (mapped)
        b/sub/empty = ""
        b/z.log = "Z" (mapped)
    "#,
    );
}

#[test]
fn empty_directory() {
    let s = Scratch::new("emptydir");
    check(Input::Path(&s.0), &limits(), "directory");
}

#[test]
fn missing_bundle_is_an_open_error() {
    let s = Scratch::new("missing");
    let p = s.path("nope.tar.gz");
    check(
        Input::Path(&p),
        &limits(),
        "error: cannot open bundle BUNDLE: No such file or directory (os error 2)",
    );
}

#[test]
fn stream_input_sniffed() {
    let data = gz(&tar(&[M::File(b"a.log", b"A")]));
    check(
        Input::Stream(&data),
        &limits(),
        r#"
        tar.gz
        a.log = "A"
    "#,
    );
    let data = tar(&[M::File(b"a.log", b"A")]);
    check(
        Input::Stream(&data),
        &limits(),
        r#"
        tar
        a.log = "A"
    "#,
    );
    let data = zip(&[M::File(b"a.log", b"A")]);
    check(
        Input::Stream(&data),
        &limits(),
        r#"
        zip
        a.log = "A"
    "#,
    );
    check(
        Input::Stream(&gz(b"plain")),
        &limits(),
        r#"
        gzip
        stdin = "plain"
    "#,
    );
    check(
        Input::Stream(b"just a log line\n"),
        &limits(),
        r#"
        file
        stdin = <16 bytes>
    "#,
    );
    check(
        Input::Stream(b""),
        &limits(),
        r#"
        file
        stdin = ""
    "#,
    );
}

#[test]
fn stream_input_binary_garbage() {
    let garbage: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    check(
        Input::Stream(&garbage),
        &limits(),
        r#"
        file
        stdin = <3000 bytes>
    "#,
    );
}

#[test]
fn mtimes_recorded() {
    let s = Scratch::new("mtime");
    let member = [M::File(b"a.log", b"A")];
    for (name, data) in [("a.tar.gz", gz(&tar(&member))), ("a.zip", zip(&member))] {
        let p = s.write(name, &data);
        let (_, entries) = run(&Input::Path(&p), &limits());
        let times: Vec<_> = entries.iter().map(|e| e.mtime).collect();
        assert_eq!(times, [Some(MTIME as i64)], "{name}");
    }
    let p = s.write("plain.log", b"x");
    let (_, entries) = run(&Input::Path(&p), &limits());
    assert!(entries[0].mtime.is_some_and(|t| t > MTIME as i64));
}

// ---------------------------------------------------------------------------------------
// Nesting.

#[test]
fn nested_tar_gz_in_tar_gz() {
    let s = Scratch::new("nested");
    let inner = gz(&tar(&[M::File(b"logs/raylet.out", b"inner raylet")]));
    let outer = gz(&tar(&[
        M::File(b"bundle/head/a.log", b"A"),
        M::File(b"bundle/head/logs.tar.gz", &inner),
        M::File(b"bundle/head/z.log", b"Z"),
    ]));
    let p = s.write("b.tgz", &outer);
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar.gz
        bundle/head/a.log = "A"
        bundle/head/logs.tar.gz/logs/raylet.out = "inner raylet"
        bundle/head/z.log = "Z"
    "#,
    );
}

#[test]
fn nested_zip_in_tar() {
    let s = Scratch::new("zipintar");
    let inner = zip(&[M::File(b"serve/replica.log", b"rep")]);
    let p = s.write(
        "b.tar",
        &tar(&[M::File(b"pod/session.zip", &inner), M::File(b"pod/x", b"X")]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        pod/session.zip/serve/replica.log = "rep"
        pod/x = "X"
    "#,
    );
}

#[test]
fn gz_member_decompressed_with_suffix_dropped() {
    let s = Scratch::new("gzmember");
    let p = s.write(
        "b.tar",
        &tar(&[M::File(b"logs/raylet.out.gz", &gz(b"raylet"))]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        logs/raylet.out = "raylet"
    "#,
    );
}

#[test]
fn archive_magic_needs_archive_name_and_vice_versa() {
    let s = Scratch::new("names");
    let jar = zip(&[M::File(b"A.class", b"x")]);
    let p = s.write(
        "b.tar",
        &tar(&[
            M::File(b"lib/app.jar", &jar),
            M::File(b"fake.gz", b"not gzip"),
        ]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        lib/app.jar = <115 bytes>
        fake.gz = "not gzip"
    "#,
    );
}

#[test]
fn nested_archives_in_directory() {
    let s = Scratch::new("dirnested");
    s.write(
        "head/logs.tar.gz",
        &gz(&tar(&[M::File(b"raylet.out", b"R")])),
    );
    s.write("head/old.log.gz", &gz(b"rotated"));
    s.write("head/x.zip", &zip(&[M::File(b"y", b"Y")]));
    check(
        Input::Path(&s.0),
        &limits(),
        r#"
        directory
        head/logs.tar.gz/raylet.out = "R"
        head/old.log = "rotated"
        head/x.zip/y = "Y"
    "#,
    );
}

#[test]
fn depth_limit() {
    let s = Scratch::new("depth");
    let deepest = gz(&tar(&[M::File(b"deep.log", b"D")]));
    let middle = gz(&tar(&[
        M::File(b"m.log", b"M"),
        M::File(b"deeper.tar.gz", &deepest),
    ]));
    let outer = gz(&tar(&[
        M::File(b"o.log", b"O"),
        M::File(b"middle.tar.gz", &middle),
    ]));
    let p = s.write("b.tar.gz", &outer);
    let one = Limits {
        max_depth: 1,
        ..limits()
    };
    check(
        Input::Path(&p),
        &one,
        r#"
        tar.gz
        o.log = "O"
        middle.tar.gz/m.log = "M"
        ! middle.tar.gz/deeper.tar.gz: nested archive is deeper than the depth limit of 1, skipped
    "#,
    );
    let zero = Limits {
        max_depth: 0,
        ..limits()
    };
    check(
        Input::Path(&p),
        &zero,
        r#"
        tar.gz
        o.log = "O"
        ! middle.tar.gz: nested archive is deeper than the depth limit of 0, skipped
    "#,
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar.gz
        o.log = "O"
        middle.tar.gz/m.log = "M"
        middle.tar.gz/deeper.tar.gz/deep.log = "D"
    "#,
    );
}

// ---------------------------------------------------------------------------------------
// Links and hostile paths.

#[test]
fn tar_links_to_members_are_duplicates() {
    let s = Scratch::new("links");
    // The troubleshoot layout: `all-logs/` links come before the files they point at.
    let p = s.write(
        "b.tar.gz",
        &gz(&tar(&[
            M::Symlink(
                b"sb/all-logs/head/ray-head.log",
                b"../../cluster-resources/pods/logs/default/head/ray-head.log",
            ),
            M::Symlink(b"sb/all-logs/dir", b"../cluster-resources"),
            M::File(
                b"sb/cluster-resources/pods/logs/default/head/ray-head.log",
                b"head log",
            ),
            M::Hard(
                b"sb/hard.log",
                b"sb/cluster-resources/pods/logs/default/head/ray-head.log",
            ),
            M::Symlink(b"sb/chain.log", b"all-logs/head/ray-head.log"),
        ])),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar.gz
        sb/cluster-resources/pods/logs/default/head/ray-head.log = "head log"
    "#,
    );
}

#[test]
fn tar_links_outside_or_missing() {
    let s = Scratch::new("badlinks");
    let p = s.write(
        "b.tar",
        &tar(&[
            M::File(b"sb/a.log", b"A"),
            M::Symlink(b"sb/up.log", b"../../x.log"),
            M::Symlink(b"sb/abs.log", b"/etc/passwd"),
            M::Symlink(b"sb/gone.log", b"nowhere.log"),
            M::Hard(b"sb/hard-gone.log", b"sb/missing.log"),
            M::Symlink(b"sb/loop1", b"loop2"),
            M::Symlink(b"sb/loop2", b"loop1"),
        ]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        sb/a.log = "A"
        ! sb/up.log: symlink target ../../x.log is outside the bundle, skipped
        ! sb/abs.log: symlink target /etc/passwd is absolute, skipped
        ! sb/gone.log: symlink target nowhere.log is missing from the archive, skipped
        ! sb/hard-gone.log: hard link target sb/missing.log is missing from the archive, skipped
        ! sb/loop1: symlink target loop2 is part of a link loop, skipped
        ! sb/loop2: symlink target loop1 is part of a link loop, skipped
    "#,
    );
}

#[test]
fn zip_symlinks() {
    let s = Scratch::new("ziplinks");
    let p = s.write(
        "b.zip",
        &zip(&[
            M::File(b"real.log", b"R"),
            M::Symlink(b"dup.log", b"real.log"),
            M::Symlink(b"out.log", b"../out.log"),
        ]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        zip
        real.log = "R"
        ! out.log: symlink target ../out.log is outside the bundle, skipped
    "#,
    );
}

#[test]
fn dot_dot_and_absolute_members() {
    let s = Scratch::new("hostile");
    let p = s.write(
        "b.tar",
        &tar(&[
            M::File(b"../escape.log", b"E"),
            M::File(b"a/../../b.log", b"E"),
            M::File(b"/abs/one.log", b"1"),
            M::File(b"/abs/two.log", b"2"),
            M::File(b"ok.log", b"ok"),
        ]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        abs/one.log = "1"
        abs/two.log = "2"
        ok.log = "ok"
        ! ../escape.log: member path contains `..` and could lead outside the bundle, skipped
        ! a/../../b.log: member path contains `..` and could lead outside the bundle, skipped
        ! abs/one.log: absolute member path made relative
    "#,
    );
}

#[test]
fn control_characters_in_names_escaped() {
    let s = Scratch::new("ctrl");
    let p = s.write(
        "b.tar",
        &tar(&[
            M::File(b"evil\n! fake: diagnostic.log", b"x"),
            M::File(b"\x1b[31mred.log", b"y"),
            M::File(b"bad\xffutf8.log", b"z"),
        ]),
    );
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        evil\n! fake: diagnostic.log = "x"
        \x1b[31mred.log = "y"
        bad�utf8.log = "z"
    "#,
    );
}

#[cfg(unix)]
#[test]
fn control_characters_in_directory_names_escaped() {
    let s = Scratch::new("ctrldir");
    s.write("new\nline.log", b"n");
    s.write("tab\there.log", b"t");
    check(
        Input::Path(&s.0),
        &limits(),
        r#"
        directory
        new\nline.log = "n" (mapped)
        tab\there.log = "t" (mapped)
    "#,
    );
}

#[test]
fn tar_special_members() {
    let s = Scratch::new("tarfifo");
    let p = s.write("b.tar", &tar(&[M::Fifo(b"pipe"), M::File(b"a", b"A")]));
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        a = "A"
        ! pipe: is a FIFO, skipped
    "#,
    );
}

#[cfg(unix)]
#[test]
fn directory_symlinks() {
    let s = Scratch::new("dirlinks");
    let outside = Scratch::new("dirlinks-outside");
    outside.write("secret.log", b"S");
    s.write("bundle/real/ray-head.log", b"H");
    s.symlink("bundle/all-logs/ray-head.log", "../real/ray-head.log");
    s.symlink("bundle/linked-dir", "real");
    s.symlink(
        "bundle/out.log",
        &outside.path("secret.log").display().to_string(),
    );
    s.symlink("bundle/out-dir", &outside.0.display().to_string());
    s.symlink("bundle/dangling.log", "nowhere.log");
    let root = s.path("bundle");
    let got =
        render(&Input::Path(&root), &limits()).replace(&outside.0.display().to_string(), "OUTSIDE");
    let expect = [
        "directory",
        r#"real/ray-head.log = "H" (mapped)"#,
        "! dangling.log: symlink target nowhere.log cannot be resolved (No such file or directory (os error 2)), skipped",
        "! out-dir: symlink target OUTSIDE is outside the bundle, skipped",
        "! out.log: symlink target OUTSIDE/secret.log is outside the bundle, skipped",
    ];
    assert_eq!(got, expect.join("\n"));
}

#[cfg(unix)]
#[test]
fn root_may_be_a_symlink() {
    let s = Scratch::new("rootlink");
    s.write("session_2024-01-01_00-00-00_000000_1/logs/raylet.out", b"R");
    s.symlink("session_latest", "session_2024-01-01_00-00-00_000000_1");
    s.symlink(
        "session_2024-01-01_00-00-00_000000_1/logs/latest.out",
        "raylet.out",
    );
    check(
        Input::Path(&s.path("session_latest")),
        &limits(),
        r#"
        directory
        logs/raylet.out = "R" (mapped)
    "#,
    );
}

#[cfg(unix)]
#[test]
fn fifo_in_directory_does_not_block() {
    let s = Scratch::new("fifo");
    s.write("a.log", b"A");
    let made = std::process::Command::new("mkfifo")
        .arg(s.path("pipe"))
        .status();
    if !made.is_ok_and(|st| st.success()) {
        return; // No mkfifo here: nothing to check.
    }
    let start = Instant::now();
    check(
        Input::Path(&s.0),
        &limits(),
        r#"
        directory
        a.log = "A" (mapped)
        ! pipe: is a FIFO, skipped
    "#,
    );
    assert!(start.elapsed().as_secs() < 2);
}

#[cfg(unix)]
#[test]
fn unreadable_file_is_a_diagnostic() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("unreadable");
    s.write("a.log", b"A");
    let p = s.write("secret.log", b"S");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::File::open(&p).is_ok() {
        return; // Running as root: permissions do not apply.
    }
    check(
        Input::Path(&s.0),
        &limits(),
        r#"
        directory
        a.log = "A" (mapped)
        ! secret.log: unreadable: Permission denied (os error 13)
    "#,
    );
}

// ---------------------------------------------------------------------------------------
// Corruption.

#[test]
fn truncated_tar_gz_yields_early_members() {
    let s = Scratch::new("trunc");
    let (a, b, c, d) = (
        noise(20_000, 1),
        noise(20_000, 2),
        noise(20_000, 3),
        noise(20_000, 4),
    );
    let full = gz(&tar(&[
        M::File(b"a.log", &a),
        M::File(b"b.log", &b),
        M::File(b"c.log", &c),
        M::File(b"d.log", &d),
    ]));
    // Random letters compress to about 60%, so three quarters of the stream hold a, b and
    // part of c.
    let p = s.write("b.tar.gz", &full[..full.len() * 3 / 4]);
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    assert_eq!(entries[0].path, "a.log");
    assert_eq!(&entries[0].bytes[..], &a[..]);
    assert_eq!(entries[1].path, "b.log");
    assert_eq!(&entries[1].bytes[..], &b[..]);
    // The member being read when the stream ended is kept, cut short, and named.
    assert_eq!(entries.len(), 3);
    assert!(entries[2].bytes.len() < c.len());
    assert_eq!(summary.diagnostics.len(), 1);
    let problem = &summary.diagnostics[0];
    assert_eq!(problem.file, "c.log");
    assert!(
        problem.problem.starts_with("reading stopped after"),
        "{problem}"
    );
}

#[test]
fn truncated_plain_tar() {
    let s = Scratch::new("trunctar");
    let full = tar(&[
        M::File(b"a.log", &noise(3000, 1)),
        M::File(b"b.log", &noise(3000, 2)),
    ]);
    // The cut falls inside b.log's data.
    let p = s.write("b.tar", &full[..512 * 9 + 100]);
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        a.log = <3000 bytes>
        b.log = <612 bytes>
        ! b.log: truncated: only 612 of 3000 bytes could be read, the part read is kept
    "#,
    );
    // The cut falls inside b.log's header.
    let p = s.write("c.tar", &full[..512 * 7 + 100]);
    check(
        Input::Path(&p),
        &limits(),
        r#"
        tar
        a.log = <3000 bytes>
        ! BUNDLE: tar stream broken after member a.log (byte 3584): failed to read entire block
    "#,
    );
}

#[test]
fn garbage_gzip() {
    let s = Scratch::new("badgz");
    let p = s.write("b.tar.gz", b"\x1f\x8bthis is not deflate at all");
    let got = render(&Input::Path(&p), &limits());
    assert!(
        got.starts_with("gzip\n! BUNDLE: gzip stream unreadable: "),
        "{got}"
    );
}

#[test]
fn truncated_zip_falls_back_to_local_headers() {
    let s = Scratch::new("trunczip");
    let full = zip(&[
        M::File(b"a.log", &noise(5000, 1)),
        M::File(b"b.log", &noise(5000, 2)),
        M::File(b"c.log", &noise(5000, 3)),
    ]);
    let p = s.write("b.zip", &full[..full.len() * 2 / 3]);
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    let paths: Vec<_> = entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(&paths[..2], ["a.log", "b.log"]);
    assert_eq!(entries[0].bytes.len(), 5000);
    let problems: Vec<_> = summary
        .diagnostics
        .iter()
        .map(|d| d.problem.as_str())
        .collect();
    assert!(
        problems[0].starts_with("zip central directory not found"),
        "{problems:?}"
    );
    assert!(problems.len() >= 2, "{problems:?}");
}

#[test]
fn zip_with_corrupt_member_keeps_the_others() {
    let s = Scratch::new("zipcrc");
    let mut data = zip(&[
        M::File(b"a.log", b"AAAA"),
        M::File(b"b.log", &noise(2000, 9)),
        M::File(b"c.log", b"CCCC"),
    ]);
    // Flip a byte inside b.log's compressed data (after its 30-byte header and name).
    let at = data.windows(5).position(|w| w == b"b.log").unwrap() + 5 + 50;
    data[at] ^= 0xff;
    let p = s.write("b.zip", &data);
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    let paths: Vec<_> = entries.iter().map(|e| e.path.as_str()).collect();
    assert!(
        paths.contains(&"a.log") && paths.contains(&"c.log"),
        "{paths:?}"
    );
    assert!(
        summary.diagnostics.iter().any(|d| d.file == "b.log"),
        "{:?}",
        summary.diagnostics
    );
}

// ---------------------------------------------------------------------------------------
// Limits.

#[test]
fn entry_count_limit() {
    let s = Scratch::new("count");
    let p = s.write(
        "b.tar",
        &tar(&[
            M::File(b"a", b"A"),
            M::File(b"b", b"B"),
            M::File(b"c", b"C"),
        ]),
    );
    check(
        Input::Path(&p),
        &Limits {
            max_entries: 2,
            ..limits()
        },
        r#"
        tar
        a = "A"
        b = "B"
        ! c: entry count limit of 2 reached, stopped before this file
    "#,
    );
}

#[test]
fn members_that_are_never_yielded_are_still_bounded() {
    let s = Scratch::new("members");
    let dirs: Vec<Vec<u8>> = (0..6).map(|i| format!("d{i}/").into_bytes()).collect();
    let mut members: Vec<M<'_>> = dirs.iter().map(|d| M::Dir(d)).collect();
    members.push(M::File(b"late.log", b"L"));
    let p = s.write("b.tar", &tar(&members));
    check(
        Input::Path(&p),
        &Limits {
            max_entries: 1,
            ..limits()
        },
        r#"
        tar
        ! BUNDLE: archive has more than 4 members, stopped
    "#,
    );
}

#[test]
fn entry_size_limit() {
    let s = Scratch::new("size");
    let p = s.write(
        "b.tar",
        &tar(&[M::File(b"big", b"0123456789"), M::File(b"small", b"01")]),
    );
    let small = Limits {
        max_entry_bytes: 5,
        ..limits()
    };
    check(
        Input::Path(&p),
        &small,
        r#"
        tar
        small = "01"
        ! big: larger than the entry size limit of 5 bytes (10 bytes), skipped
    "#,
    );
    // A gzip member declares no size: the limit is found while reading it.
    let p = s.write(
        "c.tar",
        &tar(&[
            M::File(b"big.log.gz", &gz(b"0123456789")),
            M::File(b"small", b"01"),
        ]),
    );
    check(
        Input::Path(&p),
        &small,
        r#"
        tar
        small = "01"
        ! big.log: larger than the entry size limit of 5 bytes, skipped
    "#,
    );
    s.write("dir/big", b"0123456789");
    s.write("dir/small", b"01");
    check(
        Input::Path(&s.path("dir")),
        &small,
        r#"
        directory
        small = "01" (mapped)
        ! big: larger than the entry size limit of 5 bytes (10 bytes), skipped
    "#,
    );
}

#[test]
fn total_size_limit() {
    let s = Scratch::new("total");
    let p = s.write(
        "b.tar",
        &tar(&[
            M::File(b"a", b"0123"),
            M::File(b"b", b"4567"),
            M::File(b"c", b"89"),
        ]),
    );
    check(
        Input::Path(&p),
        &Limits {
            max_total_bytes: 6,
            ..limits()
        },
        r#"
        tar
        a = "0123"
        ! b: total size limit of 6 bytes reached, stopped before this file
    "#,
    );
}

/// 200 MiB of zeros as a multi-member gzip: one compressed MiB repeated, so the bomb is built
/// in a millisecond and never held inflated.
fn zero_bomb(prefix: &[u8]) -> Vec<u8> {
    let mib = gz(&vec![0u8; 1 << 20]);
    let mut out = gz(prefix);
    for _ in 0..200 {
        out.extend_from_slice(&mib);
    }
    out
}

#[test]
fn gzip_bomb_hits_ratio_limit_fast() {
    let s = Scratch::new("bomb");
    let p = s.write("operator.log.gz", &zero_bomb(b""));
    let tight = Limits {
        max_ratio: 10,
        ..limits()
    };
    let start = Instant::now();
    let (result, entries) = run(&Input::Path(&p), &tight);
    let summary = result.unwrap();
    assert!(start.elapsed().as_millis() < 1000, "{:?}", start.elapsed());
    assert_eq!(entries.len(), 1);
    assert!(
        entries[0].bytes.len() < 2 << 20,
        "{}",
        entries[0].bytes.len()
    );
    assert_eq!(summary.diagnostics.len(), 1);
    assert!(
        summary.diagnostics[0]
            .problem
            .contains("decompression bomb"),
        "{:?}",
        summary.diagnostics
    );
}

#[test]
fn tar_gz_bomb_hits_ratio_limit_fast() {
    let s = Scratch::new("tarbomb");
    // A tar header announcing 200 MiB, then the zeros, all one gzip stream.
    let h = header(b"zeros.log", EntryType::Regular, 200 << 20, b"");
    let p = s.write("b.tar.gz", &zero_bomb(h.as_bytes()));
    let tight = Limits {
        max_ratio: 10,
        ..limits()
    };
    let start = Instant::now();
    let (result, entries) = run(&Input::Path(&p), &tight);
    let summary = result.unwrap();
    assert!(start.elapsed().as_millis() < 1000, "{:?}", start.elapsed());
    assert!(entries.iter().map(|e| e.bytes.len()).sum::<usize>() < 2 << 20);
    assert_eq!(summary.diagnostics.len(), 1, "{:?}", summary.diagnostics);
    assert_eq!(summary.diagnostics[0].file, "zeros.log");
    assert!(summary.diagnostics[0]
        .problem
        .contains("decompression bomb"));
}

#[test]
fn lying_zip_size_is_bounded_by_the_entry_limit() {
    // Both headers claim 1 byte for a member that inflates to 1000: reading stops at the
    // declared size, whatever the data holds, and says so.
    let s = Scratch::new("liar");
    let mut data = zip(&[M::File(b"a.log", &[b'x'; 1000]), M::File(b"b.log", b"B")]);
    let local = data.windows(4).position(|w| w == b"PK\x03\x04").unwrap();
    data[local + 22..local + 26].copy_from_slice(&1u32.to_le_bytes());
    let central = data.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    data[central + 24..central + 28].copy_from_slice(&1u32.to_le_bytes());
    let p = s.write("b.zip", &data);
    check(
        Input::Path(&p),
        &Limits {
            max_entry_bytes: 100,
            ..limits()
        },
        r#"
        zip
        a.log = "x"
        b.log = "B"
        ! a.log: reading stopped after 1 bytes, the part read is kept: holds more than the 1 bytes its header declares
    "#,
    );
}

// ---------------------------------------------------------------------------------------
// Same content, every container.

#[test]
fn same_entries_from_tar_gz_zip_and_directory() {
    let s = Scratch::new("same");
    let files: [(&str, Vec<u8>); 4] = [
        ("rc/head/raylet.out", noise(3000, 1)),
        ("rc/head/serve/controller.log", noise(500, 2)),
        ("rc/worker/raylet.out", noise(100, 3)),
        ("rc/operator.log", b"".to_vec()),
    ];
    let members: Vec<M<'_>> = files
        .iter()
        .map(|(n, d)| M::File(n.as_bytes(), d))
        .collect();
    s.write("b.tar.gz", &gz(&tar(&members)));
    s.write("b.zip", &zip(&members));
    for (name, data) in &files {
        s.write(&format!("dir/{name}"), data);
    }
    let set = |p: PathBuf| {
        let (result, entries) = run(&Input::Path(&p), &limits());
        let summary = result.unwrap();
        assert!(summary.diagnostics.is_empty());
        assert_eq!(summary.root_name.as_deref(), Some("rc"));
        let mut set: Vec<(String, Vec<u8>)> = entries
            .into_iter()
            .map(|e| (e.path, e.bytes.to_vec()))
            .collect();
        set.sort();
        set
    };
    let from_tar = set(s.path("b.tar.gz"));
    assert_eq!(from_tar.len(), 4);
    assert_eq!(from_tar, set(s.path("b.zip")));
    assert_eq!(from_tar, set(s.path("dir")));
}

// ---------------------------------------------------------------------------------------
// Pieces.

/// Walks a stream in pieces of `size` bytes; returns the summary and the pieces.
fn pieces(data: &[u8], limits: &Limits, size: usize) -> (WalkSummary, Vec<Entry>) {
    let mut entries = Vec::new();
    let mut sink = |e: Entry| entries.push(e);
    let mut walker = Walker::new(Path::new("stdin"), limits, &mut sink);
    walker.piece_bytes = size;
    let opened = walker.open_stream("stdin", &mut Cursor::new(data));
    assert!(opened.is_ok());
    let summary = walker.finish();
    (summary, entries)
}

#[test]
fn members_stream_in_pieces_that_end_at_line_ends() {
    let log: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("2024-01-01 00:00:00,000\tINFO x.py:1 -- line {i}\n").into_bytes())
        .chain(b"no newline at the end".iter().copied())
        .collect();
    let data = gz(&tar(&[
        M::File(b"b/raylet.out", &log),
        M::File(b"b/small.log", b"one\n"),
    ]));
    let (summary, got) = pieces(&data, &limits(), 100_000);
    assert_eq!(summary.entries, 2);
    assert_eq!(summary.bytes, log.len() as u64 + 4);
    let big: Vec<&Entry> = got.iter().filter(|e| e.path == "b/raylet.out").collect();
    assert!(big.len() > 5, "{} pieces", big.len());
    let mut joined = Vec::new();
    for (i, e) in big.iter().enumerate() {
        assert_eq!(e.piece.index as usize, i);
        assert_eq!(e.piece.last, i + 1 == big.len());
        if !e.piece.last {
            assert_eq!(e.bytes.last(), Some(&b'\n'));
            assert!(e.bytes.len() <= 100_000);
        }
        joined.extend_from_slice(&e.bytes);
    }
    assert_eq!(joined, log);
    let small: Vec<&Entry> = got.iter().filter(|e| e.path == "b/small.log").collect();
    assert_eq!(small.len(), 1);
    assert_eq!(
        small[0].piece,
        Piece {
            index: 0,
            last: true
        }
    );
}

#[test]
fn a_member_over_the_size_limit_keeps_its_first_lines() {
    let log = b"aaaa\n".repeat(1000);
    let data = gz(&tar(&[M::File(b"b/raylet.out", &log)]));
    let limits = Limits {
        max_entry_bytes: 4000,
        ..limits()
    };
    // The header declares the size: refused before any piece is read.
    let (summary, got) = pieces(&data, &limits, 1000);
    assert!(got.is_empty());
    assert_eq!(summary.diagnostics.len(), 1);
    // A gzip stream declares none: the pieces up to the limit are kept, cut at a line end.
    let data = gz(&log);
    let (summary, got) = pieces(&data, &limits, 1000);
    let kept: usize = got.iter().map(|e| e.bytes.len()).sum();
    assert_eq!(kept, 4000);
    assert!(got.last().is_some_and(|e| e.piece.last));
    assert!(summary.diagnostics[0]
        .problem
        .contains("only the first 4000 bytes"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_file_that_reports_no_size_is_read_from_its_start() {
    // Files of /proc report size 0, so they are read rather than mapped: after the sniff of
    // their head, the read must start over.
    let (result, entries) = run(&Input::Path(Path::new("/proc/version")), &limits());
    assert!(result.is_ok());
    assert_eq!(entries.len(), 1);
    assert!(entries[0].bytes.starts_with(b"Linux version"));
}

#[test]
fn plain_files_larger_than_a_piece_are_read_in_pieces() {
    let log: Vec<u8> = (0..5_000)
        .flat_map(|i| format!("2024-01-01 00:00:00,000\tINFO x.py:1 -- line {i}\n").into_bytes())
        .collect();
    let s = Scratch::new("plain-pieces");
    s.write("dir/big.log", &log);
    s.write("dir/small.log", b"one\n");
    let walk = |path: &Path| {
        let mut entries = Vec::new();
        let mut sink = |e: Entry| entries.push((e.path, e.piece, e.bytes.to_vec()));
        let summary = walk_in_pieces(path, &limits(), 50_000, None, &mut sink);
        assert!(summary.is_ok_and(|s| s.diagnostics.is_empty()));
        entries
    };
    for (bundle, name) in [
        (s.path("dir"), "big.log"),
        (s.path("dir/big.log"), "big.log"),
    ] {
        let got = walk(&bundle);
        let big: Vec<_> = got.iter().filter(|(p, _, _)| p == name).collect();
        assert!(big.len() > 2, "{}: {} pieces", bundle.display(), big.len());
        let mut joined = Vec::new();
        for (i, (_, piece, bytes)) in big.iter().enumerate() {
            assert_eq!(piece.index as usize, i);
            assert_eq!(piece.last, i + 1 == big.len());
            assert_eq!(bytes.last(), Some(&b'\n'));
            joined.extend_from_slice(bytes);
        }
        assert_eq!(joined, log);
    }
    // A file that fits in a piece is yielded whole.
    let got = walk(&s.path("dir"));
    let small: Vec<_> = got.iter().filter(|(p, _, _)| p == "small.log").collect();
    assert_eq!(small.len(), 1);
    assert_eq!(small[0].1, Piece::WHOLE);
}

// ---------------------------------------------------------------------------------------
// Long lines.

/// Walks `path` (or, with `None`, `stream`) with pieces of `piece` bytes and lines cut at
/// `line` bytes; returns the container, the bytes of `name` joined, and its cuts by offset in
/// them.
fn cut_walk(
    path: Option<&Path>,
    stream: &[u8],
    piece: usize,
    line: usize,
    name: &str,
) -> (String, Vec<u8>, Vec<Cut>, Vec<Diagnostic>) {
    let mut entries = Vec::new();
    let mut sink = |e: Entry| entries.push(e);
    let limits = limits();
    let mut walker = Walker::new(Path::new("b"), &limits, &mut sink);
    walker.piece_bytes = piece;
    walker.line_bytes = line;
    let opened = match path {
        Some(path) => walker.open_path(path),
        None => walker.open_stream("stdin", &mut Cursor::new(stream)),
    };
    assert!(opened.is_ok());
    let summary = walker.finish();
    let (mut bytes, mut cuts) = (Vec::new(), Vec::new());
    for e in entries
        .into_iter()
        .filter(|e| e.path.ends_with(name) || e.path == "stdin")
    {
        cuts.extend(e.cuts.iter().map(|c| Cut {
            at: c.at + bytes.len(),
            ..*c
        }));
        bytes.extend_from_slice(&e.bytes);
    }
    (summary.container, bytes, cuts, summary.diagnostics)
}

#[test]
fn long_lines_are_cut_alike_in_every_container_and_piece_size() {
    // Line 3 is 5000 bytes, line 5 (the last, with no newline) 300; the limit is 100.
    let mut log = b"2024-01-01 00:00:00,000\tINFO x.py:1 -- one\nshort two\n".to_vec();
    log.extend(std::iter::repeat_n(b'x', 5000));
    log.extend_from_slice(b"\nfour\n");
    log.extend(std::iter::repeat_n(b'y', 300));
    let mut want = b"2024-01-01 00:00:00,000\tINFO x.py:1 -- one\nshort two\n".to_vec();
    want.extend(std::iter::repeat_n(b'x', 100));
    want.extend_from_slice(b"\nfour\n");
    want.extend(std::iter::repeat_n(b'y', 100));
    let want_cuts = vec![
        Cut {
            at: 153,
            kept: 100,
            skipped: 4900,
        },
        Cut {
            at: want.len(),
            kept: 100,
            skipped: 200,
        },
    ];

    let s = Scratch::new("long-lines");
    let name = "b/head/dashboard.log";
    s.write(&format!("dir/{name}"), &log);
    s.write("dashboard.log", &log);
    s.write("b.tar.gz", &gz(&tar(&[M::File(name.as_bytes(), &log)])));
    s.write("b.zip", &zip(&[M::File(name.as_bytes(), &log)]));
    s.write("dashboard.log.gz", &gz(&log));
    let mut seen = Vec::new();
    for piece in [usize::MAX, 64, 1000, 4000] {
        for (path, stream) in [
            (Some(s.path("dir")), &b""[..]),
            (Some(s.path("dashboard.log")), &b""[..]),
            (Some(s.path("b.tar.gz")), &b""[..]),
            (Some(s.path("b.zip")), &b""[..]),
            (Some(s.path("dashboard.log.gz")), &b""[..]),
            (None, &log[..]),
        ] {
            let (container, bytes, cuts, diags) =
                cut_walk(path.as_deref(), stream, piece, 100, "dashboard.log");
            let at = format!("{container}, pieces of {piece}");
            assert_eq!(bytes, want, "{at}");
            assert_eq!(cuts, want_cuts, "{at}");
            assert!(diags.is_empty(), "{at}: {diags:?}");
            let lines: Vec<_> = Cut::diagnostics(&cuts, &bytes, 1)
                .into_iter()
                .map(|d| d.line)
                .collect();
            assert_eq!(lines, vec![Some(3), Some(5)], "{at}");
            seen.push(container);
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen, vec!["directory", "file", "gzip", "tar.gz", "zip"]);
}

#[test]
fn a_file_that_is_one_long_line_is_never_held_whole() {
    // A stream of one 3 MB line: the reader yields its head alone.
    let line = vec![b'z'; 3 << 20];
    let mut sizes = Vec::new();
    let limits = limits();
    let mut sink = |e: Entry| sizes.push((e.bytes.len(), e.cuts));
    let mut walker = Walker::new(Path::new("b"), &limits, &mut sink);
    walker.piece_bytes = 4096;
    walker.line_bytes = 1000;
    assert!(walker.open_stream("stdin", &mut Cursor::new(&line)).is_ok());
    let summary = walker.finish();
    assert!(summary.diagnostics.is_empty());
    assert_eq!(
        sizes,
        vec![(
            1000,
            vec![Cut {
                at: 1000,
                kept: 1000,
                skipped: (3 << 20) - 1000
            }]
        )]
    );
}

// ---------------------------------------------------------------------------------------
// Damaged and hostile archives: every readable entry is read, every unreadable one named.

fn u32_le(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
}

/// The offsets of a zip member's local and central headers.
fn zip_headers(data: &[u8], name: &[u8]) -> (usize, usize) {
    let mut pos = 0;
    loop {
        let i = pos
            + data[pos..]
                .windows(4)
                .position(|w| w == b"PK\x01\x02")
                .unwrap();
        let n = usize::from(u16::from_le_bytes([data[i + 28], data[i + 29]]));
        if &data[i + 46..i + 46 + n] == name {
            return (u32_le(data, i + 42) as usize, i);
        }
        pos = i + 1;
    }
}

/// A zip with good entries around five that cannot be read, each in its own way.
fn damaged_zip() -> Vec<u8> {
    let (enc, method, crc, deflate) = (
        noise(3000, 11),
        noise(3000, 12),
        noise(3000, 13),
        noise(30_000, 14),
    );
    let offset = noise(3000, 15);
    let mut data = zip(&[
        M::File(b"a.log", b"AAAA"),
        M::File(b"enc.log", &enc),
        M::File(b"method.log", &method),
        M::File(b"crc.log", &crc),
        M::File(b"offset.log", &offset),
        M::File(b"deflate.log", &deflate),
        M::File(b"z.log", b"ZZZZ"),
    ]);
    let (l, c) = zip_headers(&data, b"enc.log");
    data[l + 6] |= 1;
    data[c + 8] |= 1;
    let (l, c) = zip_headers(&data, b"method.log");
    data[l + 8] = 12;
    data[c + 10] = 12;
    let (l, c) = zip_headers(&data, b"crc.log");
    data[l + 14] ^= 0xff;
    data[c + 16] ^= 0xff;
    let (_, c) = zip_headers(&data, b"offset.log");
    let past = (data.len() as u32 + 1000).to_le_bytes();
    data[c + 42..c + 46].copy_from_slice(&past);
    let (l, _) = zip_headers(&data, b"deflate.log");
    for b in &mut data[l + 30 + 11 + 100..l + 30 + 11 + 140] {
        *b = 0xff;
    }
    data
}

#[test]
fn zip_entries_that_cannot_be_read_cost_only_themselves() {
    let s = Scratch::new("damagedzip");
    let p = s.write("b.zip", &damaged_zip());
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    let paths: Vec<_> = entries.iter().map(|e| e.path.as_str()).collect();
    // The bad CRC's data and the corrupt stream's head are still read.
    assert_eq!(paths, ["a.log", "crc.log", "deflate.log", "z.log"]);
    assert_eq!(&entries[0].bytes[..], b"AAAA");
    assert_eq!(entries[1].bytes.len(), 3000);
    assert_eq!(&entries[3].bytes[..], b"ZZZZ");
    let problems: Vec<String> = summary
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.file, d.problem))
        .collect();
    let expect = [
        "enc.log: is encrypted, skipped",
        "method.log: uses compression method 12 (bzip2), which is not supported, skipped",
        "crc.log: reading stopped after 3000 bytes, the part read is kept: bad CRC-32",
        "offset.log: local header offset ",
        "deflate.log: reading stopped after ",
    ];
    assert_eq!(problems.len(), expect.len(), "{problems:#?}");
    for (got, want) in problems.iter().zip(expect) {
        assert!(got.starts_with(want), "{got} / {want}");
    }
}

#[test]
fn zip_without_its_directory_is_scanned_past_bad_entries() {
    let s = Scratch::new("nocdzip");
    let mut data = damaged_zip();
    let cd = data.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    data.truncate(cd);
    let p = s.write("b.zip", &data);
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    let paths: Vec<_> = entries.iter().map(|e| e.path.as_str()).collect();
    // Without the directory the offset is not known to be bad: that entry reads.
    assert_eq!(
        paths,
        ["a.log", "crc.log", "offset.log", "deflate.log", "z.log"]
    );
    let named: Vec<&str> = summary
        .diagnostics
        .iter()
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(
        named,
        ["BUNDLE", "enc.log", "method.log", "crc.log", "deflate.log"].map(|n| if n == "BUNDLE" {
            p.to_str().unwrap()
        } else {
            n
        })
    );
    assert!(summary.diagnostics[0]
        .problem
        .starts_with("zip central directory not found"));
}

#[test]
fn zip_found_behind_a_comment_and_junk() {
    let s = Scratch::new("junkzip");
    let mut data = zip(&[M::File(b"a.log", b"A"), M::File(b"b.log", b"B")]);
    // A comment in the end record, then junk after it.
    let n = data.len();
    data[n - 2..].copy_from_slice(&5u16.to_le_bytes());
    data.extend_from_slice(b"hello");
    data.extend_from_slice(&noise(5000, 3));
    let p = s.write("b.zip", &data);
    check(
        Input::Path(&p),
        &limits(),
        r#"
        zip
        a.log = "A"
        b.log = "B"
    "#,
    );
}

/// A zip whose `n` entries overlap the way David Fifield's non-recursive bomb's do: each
/// entry's data quotes the next entry's local header in a stored deflate block, then goes on
/// with that entry's data, down to one shared kernel of `kernel` inflated bytes.
fn overlap_bomb(n: usize, kernel: usize) -> Vec<u8> {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), Compression::best());
    enc.write_all(&vec![b'a'; kernel]).unwrap();
    let k = enc.finish().unwrap();
    let mut crc = flate2::Crc::new();
    crc.update(&vec![b'a'; kernel]);
    let names: Vec<Vec<u8>> = (0..n).map(|i| format!("{i:04}.log").into_bytes()).collect();
    let local = |name: &[u8], crc: u32, csize: u32, usize_: u32| {
        let mut h = Vec::new();
        h.extend_from_slice(b"PK\x03\x04");
        h.extend_from_slice(&[20, 0, 0, 0, 8, 0, 0, 0, 0x21, 0]);
        for v in [crc, csize, usize_] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(name);
        h
    };
    let mut headers = vec![Vec::new(); n];
    let mut info = vec![(0u32, 0u32, 0u32); n];
    let (mut csize, mut usize_) = (k.len() as u32, kernel as u32);
    for i in (0..n).rev() {
        let h = local(&names[i], crc.sum(), csize, usize_);
        info[i] = (crc.sum(), csize, usize_);
        let mut quoted = flate2::Crc::new();
        quoted.update(&h);
        quoted.combine(&crc);
        crc = quoted;
        usize_ += h.len() as u32;
        csize += 5 + h.len() as u32;
        headers[i] = h;
    }
    let mut body = Vec::new();
    let mut offsets = Vec::new();
    for i in 0..n {
        offsets.push(body.len() as u32);
        body.extend_from_slice(&headers[i]);
        if let Some(next) = headers.get(i + 1) {
            let len = next.len() as u16;
            body.push(0);
            body.extend_from_slice(&len.to_le_bytes());
            body.extend_from_slice(&(!len).to_le_bytes());
        }
    }
    body.extend_from_slice(&k);
    let mut cd = Vec::new();
    for i in 0..n {
        let (crc, csize, usize_) = info[i];
        cd.extend_from_slice(b"PK\x01\x02");
        cd.extend_from_slice(&[20, 0, 20, 0, 0, 0, 8, 0, 0, 0, 0x21, 0]);
        for v in [crc, csize, usize_] {
            cd.extend_from_slice(&v.to_le_bytes());
        }
        cd.extend_from_slice(&(names[i].len() as u16).to_le_bytes());
        cd.extend_from_slice(&[0; 12]);
        cd.extend_from_slice(&offsets[i].to_le_bytes());
        cd.extend_from_slice(&names[i]);
    }
    let mut out = body;
    let cd_at = out.len() as u32;
    out.extend_from_slice(&cd);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&(cd.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

#[test]
fn overlapping_zip_entries_are_refused() {
    let s = Scratch::new("overlap");
    let p = s.write("bomb.zip", &overlap_bomb(20, 1 << 20));
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    assert!(entries.is_empty(), "{} entries", entries.len());
    assert_eq!(summary.diagnostics.len(), 1, "{:?}", summary.diagnostics);
    assert_eq!(
        summary.diagnostics[0].problem,
        "20 entries share bytes with other entries (overlapping entries, the shape of a zip \
         bomb), none of them is read: 0000.log, 0001.log, 0002.log, 0003.log, 0004.log, \
         0005.log, 0006.log, 0007.log and 12 more"
    );
}

#[test]
fn a_zip_inflates_to_at_most_its_ratio_in_all() {
    // 80 entries of 1 MiB of zeros: each is within the per-entry allowance (its ratio plus
    // one MiB), but all of them together are past what the archive may inflate to.
    let s = Scratch::new("zipbudget");
    let zeros = vec![0u8; 1 << 20];
    let names: Vec<String> = (0..80).map(|i| format!("{i:02}.log")).collect();
    let members: Vec<M<'_>> = names
        .iter()
        .map(|n| M::File(n.as_bytes(), &zeros))
        .collect();
    let p = s.write("b.zip", &zip(&members));
    let tight = Limits {
        max_ratio: 10,
        ..limits()
    };
    let (result, entries) = run(&Input::Path(&p), &tight);
    let summary = result.unwrap();
    assert!(
        entries.len() >= 60 && entries.len() < 70,
        "{}",
        entries.len()
    );
    let total: usize = entries.iter().map(|e| e.bytes.len()).sum();
    assert!(total <= (64 << 20) + 10 * 100_000, "{total}");
    // The entry the budget ran out in is read up to it and named; then the archive stops.
    assert_eq!(summary.diagnostics.len(), 2, "{:?}", summary.diagnostics);
    assert!(
        summary.diagnostics[0]
            .problem
            .contains("the archive's inflation budget ran out inside this entry"),
        "{:?}",
        summary.diagnostics
    );
    assert!(
        summary.diagnostics[1]
            .problem
            .starts_with("entries inflate to more than 10 times the archive's size; stopped at "),
        "{:?}",
        summary.diagnostics
    );
}

#[test]
fn tar_resynchronises_after_a_damaged_header() {
    let s = Scratch::new("badheader");
    let mut data = tar(&[
        M::File(b"a.log", &noise(3000, 1)),
        M::File(b"b.log", &noise(3000, 2)),
        M::File(b"c.log", &noise(3000, 3)),
    ]);
    // b.log's header is at 3584: damage its size field, so its checksum fails.
    data[3584 + 124] = b'9';
    let p = s.write("b.tar", &data);
    let expect = r#"
        tar
        a.log = <3000 bytes>
        c.log = <3000 bytes>
        ! BUNDLE: tar stream broken after member a.log (byte 3584): archive header checksum mismatch; resumed at the next valid header, byte 7168, member c.log (3584 bytes skipped)
    "#;
    check(Input::Path(&p), &limits(), expect);
    // A header zeroed (a hole in a damaged copy) is not the archive's end either.
    let mut holed = data.clone();
    holed[3584..4096].fill(0);
    let p = s.write("holed.tar", &holed);
    let (_, entries) = run(&Input::Path(&p), &limits());
    let paths: Vec<_> = entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["a.log", "c.log"]);
    // Compressed, the same.
    let p = s.write("b.tar.gz", &gz(&data));
    check(
        Input::Path(&p),
        &limits(),
        &expect.replace("tar\n", "tar.gz\n"),
    );
}

/// Damages a gzip member: its first deflate block gets the reserved block type, which no
/// decoder can read (overwritten bytes elsewhere may still decode, to a bad CRC).
fn damage_member(member: &mut [u8]) {
    member[10] = 0b111;
}

#[test]
fn multi_member_gzip_keeps_the_members_around_a_damaged_one() {
    let s = Scratch::new("gzmembers");
    let (one, two, three) = (noise(20_000, 1), noise(20_000, 2), noise(20_000, 3));
    let mut middle = gz(&two);
    damage_member(&mut middle);
    let first = gz(&one);
    let mut data = first.clone();
    data.extend_from_slice(&middle);
    data.extend(gz(&three));
    let p = s.write("raylet.out.gz", &data);
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    assert_eq!(entries.len(), 1);
    let got = &entries[0].bytes[..];
    assert!(
        got.starts_with(&one) && got.ends_with(&three),
        "{} {:?}",
        got.len(),
        summary.diagnostics
    );
    assert_eq!(summary.diagnostics.len(), 1, "{:?}", summary.diagnostics);
    let problem = &summary.diagnostics[0].problem;
    let at = first.len();
    let next = at + middle.len();
    assert!(
        problem.starts_with(&format!("gzip member at byte {at} damaged (")),
        "{problem}"
    );
    assert!(
        problem.ends_with(&format!(
            "resumed at the next member, byte {next} ({} compressed bytes lost)",
            middle.len()
        )),
        "{problem}"
    );
}

#[test]
fn tar_gz_with_a_damaged_gzip_member_keeps_the_members_after_it() {
    let s = Scratch::new("targzmembers");
    let files: Vec<(String, Vec<u8>)> = (0..6)
        .map(|i| (format!("f{i}.log"), noise(20_000, i)))
        .collect();
    let members: Vec<M<'_>> = files
        .iter()
        .map(|(n, d)| M::File(n.as_bytes(), d))
        .collect();
    let t = tar(&members);
    // Three gzip members, split at arbitrary bytes; the middle one damaged.
    let (k1, k2) = (45_000, 80_000);
    let mut data = gz(&t[..k1]);
    let mut middle = gz(&t[k1..k2]);
    damage_member(&mut middle);
    data.extend_from_slice(&middle);
    data.extend(gz(&t[k2..]));
    let p = s.write("b.tar.gz", &data);
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    let whole: Vec<&str> = entries
        .iter()
        .filter(|e| {
            files
                .iter()
                .any(|(n, d)| *n == e.path && d[..] == e.bytes[..])
        })
        .map(|e| e.path.as_str())
        .collect();
    // f0 and f1 lie in the first member; f4 and f5 in the last.
    assert_eq!(
        whole,
        ["f0.log", "f1.log", "f4.log", "f5.log"],
        "{:?}",
        summary.diagnostics
    );
    let text: Vec<String> = summary
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.file, d.problem))
        .collect();
    assert!(
        text.iter()
            .any(|t| t.contains("gzip member at byte") && t.contains("resumed at the next member")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("resumed at the next valid header")),
        "{text:#?}"
    );
}

/// A reader that hands out a few bytes at a time, is interrupted now and then, and can fail
/// after some bytes.
struct Trickle {
    data: Vec<u8>,
    at: usize,
    calls: usize,
    fail_at: Option<usize>,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls % 5 == 0 {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        if self.fail_at.is_some_and(|f| self.at >= f) {
            return Err(io::Error::other("disk on fire"));
        }
        let n = buf
            .len()
            .min(7 + self.calls % 13)
            .min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[test]
fn a_piece_is_read_into_a_dirty_buffer_as_read_to_end_would_read_it() {
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    for (scratch, filled, want) in [
        (0, 0, 150_000u64),
        (300_000, 10, 150_000),
        (70_000, 3, 500_000),
    ] {
        let mut buf = vec![0xAAu8; scratch];
        buf.resize(buf.len().max(filled), 0xBB);
        let mut filled_now = filled;
        let mut r = Trickle {
            data: data.clone(),
            at: 0,
            calls: 0,
            fail_at: None,
        };
        let n = read_piece(&mut r, &mut buf, &mut filled_now, want).unwrap();
        let expect = want.min(data.len() as u64);
        assert_eq!(n, expect);
        assert_eq!(filled_now, filled + n as usize);
        assert_eq!(&buf[filled..filled_now], &data[..n as usize]);
        assert!(buf[..filled].iter().all(|&b| b == 0xAA || b == 0xBB));
    }
    // A failure keeps what was read before it.
    let mut buf = Vec::new();
    let mut filled = 0;
    let mut r = Trickle {
        data: data.clone(),
        at: 0,
        calls: 0,
        fail_at: Some(1000),
    };
    assert!(read_piece(&mut r, &mut buf, &mut filled, 5000).is_err());
    assert!(filled >= 1000);
    assert_eq!(&buf[..filled], &data[..filled]);
}

#[test]
fn pieces_of_reused_buffers_hold_the_file_and_nothing_else() {
    // Lines of many lengths, pieces far smaller than the file, and a pool whose buffers come
    // back dirty with an earlier piece's bytes.
    let mut text = Vec::new();
    for i in 0..20_000u32 {
        text.extend_from_slice(format!("{i:06} {}\n", "x".repeat((i % 97) as usize)).as_bytes());
    }
    let data = gz(&tar(&[M::File(b"b/raylet.out", &text)]));
    let s = Scratch::new("dirty-pieces");
    s.write("b.tar.gz", &data);
    let pool = Buffers::default();
    let mut got = Vec::new();
    let mut pieces = 0;
    let mut sink = |e: Entry| {
        let b = e.bytes.to_vec();
        assert!(b.ends_with(b"\n"));
        got.extend_from_slice(&b);
        pieces += 1;
        if let Bytes::Owned(b) = e.bytes {
            pool.give(b);
        }
    };
    let summary = walk_in_pieces(
        &s.path("b.tar.gz"),
        &limits(),
        16 << 10,
        Some(&pool),
        &mut sink,
    );
    assert!(summary.is_ok_and(|s| s.diagnostics.is_empty()));
    assert!(pieces > 10, "{pieces} pieces");
    assert_eq!(got, text);
}

#[test]
fn a_zip_entry_that_claims_gigabytes_is_read_and_the_next_entries_too() {
    // The middle entry's headers claim almost 4 GiB (far past the archive's inflation budget)
    // for 1000 bytes: it is read up to what it holds and named, and the entry after it is
    // still read. The budget is what entries really inflate to, not what they claim.
    let s = Scratch::new("claims-gigabytes");
    let mut data = zip(&[
        M::File(b"a.log", b"A"),
        M::File(b"b.log", &[b'x'; 1000]),
        M::File(b"c.log", b"C"),
    ]);
    let claim = 0xF000_0000u32.to_le_bytes();
    let locals: Vec<usize> = data
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x03\x04")
        .map(|(i, _)| i)
        .collect();
    data[locals[1] + 22..locals[1] + 26].copy_from_slice(&claim);
    let centrals: Vec<usize> = data
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x01\x02")
        .map(|(i, _)| i)
        .collect();
    data[centrals[1] + 24..centrals[1] + 28].copy_from_slice(&claim);
    let p = s.write("b.zip", &data);
    let (result, entries) = run(&Input::Path(&p), &limits());
    let summary = result.unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        names,
        ["a.log", "b.log", "c.log"],
        "{:?}",
        summary.diagnostics
    );
    assert_eq!(entries[1].bytes.len(), 1000);
    assert!(
        summary
            .diagnostics
            .iter()
            .all(|d| !d.problem.contains("the entries after it are not read")),
        "{:?}",
        summary.diagnostics
    );
    assert!(
        summary
            .diagnostics
            .iter()
            .any(|d| d.file.ends_with("b.log")),
        "the liar is named: {:?}",
        summary.diagnostics
    );
}

#[test]
fn version_control_folders_are_found_at_any_depth() {
    use super::vcs_folder;
    assert_eq!(
        vcs_folder("repo/.git/hooks/pre-commit.sample"),
        Some("repo/.git")
    );
    assert_eq!(vcs_folder(".hg/store/data"), Some(".hg"));
    assert_eq!(vcs_folder("a/b/.svn/entries"), Some("a/b/.svn"));
    // A worktree's `.git` file, and names that only look alike, are read.
    assert_eq!(vcs_folder("repo/.git"), None);
    assert_eq!(vcs_folder("repo/.github/workflows/ci.yml"), None);
    assert_eq!(vcs_folder("logs/raylet.out"), None);
}
