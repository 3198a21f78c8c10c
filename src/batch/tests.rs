//! The tests of `raysift batch`'s parts, in the order of the parts: the shard hash and
//! `--shard`; the listing (patterns, the walk over scratch folders under the temporary
//! directory, cleaned paths); a results file with a cut last line; the job runner (input
//! order whatever the jobs, a panic as an error line, a failing writer); the summary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::inputs::{fnv1a64, Input, Kind, Shard};
use super::listing::{clean_path, list_inputs, name_matches};
use super::results::{parse_done, Line, Outcome};
use super::run_jobs;
use super::summary::Tally;
use crate::bundle::archive_name;
use crate::rules::Severity;

#[test]
fn fnv1a64_known_values() {
    // The published FNV-1a 64 test vectors.
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn shard_parsing() {
    assert_eq!(Shard::parse("0/1"), Ok(Shard { index: 0, count: 1 }));
    assert_eq!(Shard::parse("3/4"), Ok(Shard { index: 3, count: 4 }));
    for bad in ["4/4", "0/0", "1", "/4", "a/4", "1/b", "-1/4", ""] {
        let err = Shard::parse(bad).unwrap_err();
        assert!(err.starts_with("--shard"), "{bad}: {err}");
    }
    assert!(Shard::parse("4/4").unwrap_err().contains("0 to 3"));
}

#[test]
fn shards_partition_the_keys() {
    let keys: Vec<String> = (0..200).map(|i| format!("incident-{i}.tar.gz")).collect();
    let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
    let mut sizes = [0usize; 3];
    for k in &keys {
        let owners: Vec<usize> = (0..3).filter(|&i| shards[i].keeps(k)).collect();
        assert_eq!(owners.len(), 1, "{k}");
        sizes[owners[0]] += 1;
    }
    assert!(sizes.iter().all(|&n| n > 40), "{sizes:?}");
    // Fixed by FNV-1a's definition, whatever the machine or the build.
    assert_eq!(fnv1a64(b"incident-0.tar.gz"), 0xecc4_22be_8e1a_83e6);
    assert!(Shard { index: 0, count: 3 }.keeps("incident-0.tar.gz"));
}

#[test]
fn glob_components() {
    assert!(name_matches("*.tar.gz", "a.tar.gz"));
    assert!(name_matches("incident-??.zip", "incident-07.zip"));
    assert!(!name_matches("incident-??.zip", "incident-7.zip"));
    assert!(!name_matches("*.tar.gz", "a.tar.gz.part"));
    assert!(!name_matches("*", ".hidden.tar.gz"));
    assert!(name_matches(".*", ".hidden.tar.gz"));
    assert!(name_matches("*", "x"));
    assert!(archive_name("X.TGZ"));
    assert!(!archive_name("results.ndjson"));
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("raysift-batch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn listing_searches_directories_and_expands_patterns() {
    let root = scratch("list");
    for f in [
        "b.tar.gz",
        "a.zip",
        "notes.txt",
        "2024/c.tgz",
        "2024/deep/d.gz",
        ".hidden.tar",
    ] {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"x").unwrap();
    }
    std::fs::create_dir_all(root.join("extracted/logs")).unwrap();
    std::fs::write(root.join("extracted/logs/raylet.out"), b"x").unwrap();
    let r = root.display().to_string();
    let got = list_inputs(std::slice::from_ref(&root));
    let keys: Vec<&str> = got.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            ".hidden.tar",
            "2024/c.tgz",
            "2024/deep/d.gz",
            "a.zip",
            "b.tar.gz",
            "extracted"
        ]
    );
    assert_eq!(got[1].shown, format!("{r}/2024/c.tgz"));
    // A directory holding an unpacked bundle in a sub-folder lists it; a pattern is
    // expanded like a shell would; one that matches nothing is an input that cannot be tried.
    let got = list_inputs(&[
        root.join("extracted"),
        PathBuf::from(format!("{r}/*.tar.gz")),
        PathBuf::from(format!("{r}/*/*.t?z")),
        PathBuf::from(format!("{r}/nothing-*.zip")),
    ]);
    let shown: Vec<(String, String, bool)> = got
        .iter()
        .map(|i| {
            (
                i.shown.replace(&r, "R"),
                i.key.replace(&r, "R"),
                i.problem.is_some(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, p: bool| (a.to_string(), b.to_string(), p);
    assert_eq!(
        shown,
        [
            s("R/2024/c.tgz", "R/2024/c.tgz", false),
            s("R/b.tar.gz", "R/b.tar.gz", false),
            s("R/extracted/logs", "logs", false),
            s("R/nothing-*.zip", "R/nothing-*.zip", true),
        ]
    );
    let _ = std::fs::remove_dir_all(&root);
}

const RAY_LINE: &str = "[2024-05-01 10:00:00,123 I 1 2] (raylet) main.cc:1: Raylet started.\n";

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

#[test]
fn walking_tells_unpacked_bundles_from_shelves() {
    let root = scratch("walk");
    let log = RAY_LINE.as_bytes();
    // Side files on the shelf, including a previous run's results.
    put(&root, "README.md", b"# Incidents\n\nOne folder each.\n");
    put(&root, "expected.toml", b"expected = [\"a_cause\"]\n");
    put(&root, "notes.txt", b"ask about the upgrade\n");
    put(
        &root,
        "results.ndjson",
        b"{\"path\":\"x.tar.gz\",\"status\":\"ok\",\"exit\":0,\"causes\":[]}\n",
    );
    // Files at the top, an archive and a rotated log among them: one bundle.
    put(&root, "flat/raylet.out", log);
    put(&root, "flat/raylet.out.1.gz", &gzip(log));
    put(&root, "flat/more.tar.gz", b"x");
    // Files only in sub-folders, a rotated log there too.
    put(&root, "nested/head-logs/gcs_server.out", log);
    put(&root, "nested/head-logs/gcs_server.out.1.gz", &gzip(log));
    put(&root, "nested/worker-logs/raylet.out", log);
    // A wrapper around one bundle.
    put(
        &root,
        "wrapped/support-bundle/cluster-info/version.json",
        b"{}",
    );
    put(
        &root,
        "wrapped/support-bundle/all-logs/op/operator.log",
        log,
    );
    // A shelf below the shelf, with an archive, a gzipped tar, a lone compressed log.
    put(&root, "2024/a.tar.gz", b"x");
    let mut tar = vec![0u8; 512];
    tar[257..262].copy_from_slice(b"ustar");
    put(&root, "2024/b.gz", &gzip(&tar));
    put(&root, "2024/single.log.gz", &gzip(log));
    put(&root, "2024/c/raylet.out", log);
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let got: Vec<(String, &str)> = list_inputs(std::slice::from_ref(&root))
        .iter()
        .map(|i| (i.key.clone(), i.kind.as_str()))
        .collect();
    let want = [
        ("2024/a.tar.gz", "archive"),
        ("2024/b.gz", "archive"),
        ("2024/c", "folder"),
        ("2024/single.log.gz", "file"),
        ("flat", "folder"),
        ("nested", "folder"),
        ("wrapped", "folder"),
    ]
    .map(|(k, v)| (k.to_string(), v));
    assert_eq!(got, want);
    // Parts of a listed bundle, given too, are not analysed again.
    let again = list_inputs(&[
        root.join("nested/head-logs"),
        root.join("flat/raylet.out"),
        root.clone(),
        root.join("2024/c/raylet.out"),
    ]);
    let keys: Vec<&str> = again.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(
        keys,
        want.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()
    );
    // Given itself, a bundle with a log file at the top is one bundle; one with its files
    // only in sub-folders is a shelf of them.
    let given = |b: &str| -> Vec<(PathBuf, Kind)> {
        list_inputs(&[root.join(b)])
            .into_iter()
            .map(|i| (i.path, i.kind))
            .collect()
    };
    assert_eq!(given("flat"), [(root.join("flat"), Kind::Folder)]);
    assert_eq!(
        given("wrapped"),
        [(root.join("wrapped/support-bundle"), Kind::Folder)]
    );
    assert_eq!(
        given("nested"),
        [
            (root.join("nested/head-logs"), Kind::Folder),
            (root.join("nested/worker-logs"), Kind::Folder)
        ]
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn paths_are_cleaned_before_they_are_compared() {
    let root = scratch("clean");
    put(&root, "a.tar.gz", b"x");
    std::fs::create_dir_all(root.join("d")).unwrap();
    let r = root.display().to_string();
    assert_eq!(clean_path(Path::new("./a/./b//c")), PathBuf::from("a/b/c"));
    assert_eq!(clean_path(Path::new(".")), PathBuf::from("."));
    assert_eq!(clean_path(Path::new("/..")), PathBuf::from("/"));
    assert_eq!(clean_path(Path::new("../x")), PathBuf::from("../x"));
    let got = list_inputs(&[
        PathBuf::from(format!("{r}/./a.tar.gz")),
        PathBuf::from(format!("{r}/d/../a.tar.gz")),
        root.clone(),
        PathBuf::from(format!("{r}//a.tar.gz")),
    ]);
    let shown: Vec<&str> = got.iter().map(|i| i.shown.as_str()).collect();
    assert_eq!(shown, [format!("{r}/a.tar.gz")]);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn done_lines_tolerate_a_cut_last_line() {
    let text = concat!(
        "{\"path\":\"a.tar.gz\",\"status\":\"ok\",\"exit\":1}\n",
        "{\"path\":\"b.tar.gz\",\"status\":\"error\",\"exit\":2}\n",
        "not json\n",
        "\n",
        "{\"path\":\"c.tar.gz\",\"status\":\"ok\"}\n",
        "{\"path\":\"d.tar.gz\",\"sta"
    );
    let done = parse_done(text.as_bytes());
    let ok: Vec<&str> = done.ok.iter().map(String::as_str).collect();
    assert_eq!(ok, ["a.tar.gz", "c.tar.gz"]);
    assert_eq!(done.bad_lines, 1);
    assert_eq!(done.len, text.len() as u64);
    assert_eq!(
        done.complete_len as usize,
        text.len() - "{\"path\":\"d.tar.gz\",\"sta".len()
    );
    // A complete last line without its newline is treated as cut too.
    let done = parse_done(b"{\"path\":\"a\",\"status\":\"ok\"}");
    assert!(done.ok.is_empty());
    assert_eq!(done.complete_len, 0);
}

fn ok_outcome(input: &Input) -> Outcome {
    Outcome {
        line: Line {
            path: input.shown.clone(),
            status: "ok",
            exit: 0,
            causes: Vec::new(),
            error: None,
            object: None,
            at: None,
            complete: true,
            diagnostics: 0,
            bundle_bytes: 1,
            elapsed_ms: 0,
        },
        causes: vec![("some_cause".to_string(), Severity::Error)],
        unrecognised: vec![("Lease lost for worker <*>".to_string(), 3)],
    }
}

#[test]
fn jobs_emit_in_input_order_and_a_panic_is_an_error_line() {
    let inputs: Vec<Input> = (0..40)
        .map(|i| Input::given(Path::new(&format!("b{i:02}.tar.gz"))))
        .collect();
    for jobs in [1, 3, 64] {
        let mut seen = Vec::new();
        let mut completed = 0;
        run_jobs(
            &inputs,
            jobs,
            |input| {
                // Later inputs finish first, so order must come from the emitter.
                let n: u64 = input.shown[1..3].parse().unwrap();
                std::thread::sleep(Duration::from_millis((40 - n) / 8));
                if input.shown == "b07.tar.gz" {
                    panic!("a bug in one bundle's analysis");
                }
                ok_outcome(input)
            },
            |_| completed += 1,
            |o| {
                seen.push(o.line);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(completed, 40);
        let paths: Vec<&str> = seen.iter().map(|l| l.path.as_str()).collect();
        let want: Vec<&str> = inputs.iter().map(|i| i.shown.as_str()).collect();
        assert_eq!(paths, want, "jobs {jobs}");
        let bad = &seen[7];
        assert_eq!((bad.status, bad.exit), ("error", 2));
        assert!(
            bad.error
                .as_deref()
                .unwrap()
                .contains("panicked: a bug in one bundle's analysis"),
            "{bad:?}"
        );
        assert!(seen.iter().filter(|l| l.status == "ok").count() == 39);
    }
}

#[test]
fn a_failing_writer_stops_the_run() {
    let inputs: Vec<Input> = (0..100)
        .map(|i| Input::given(Path::new(&format!("b{i:03}.zip"))))
        .collect();
    let analysed = AtomicUsize::new(0);
    let mut emitted = 0;
    let err = run_jobs(
        &inputs,
        2,
        |input| {
            analysed.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(2));
            ok_outcome(input)
        },
        |_| {},
        |_| {
            emitted += 1;
            if emitted == 3 {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            } else {
                Ok(())
            }
        },
    )
    .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    assert!(analysed.load(Ordering::Relaxed) < 20);
}

#[test]
fn summary_counts_bundles_per_cause() {
    let mut t = Tally::default();
    let input = Input::given(Path::new("a.tar.gz"));
    let mut o = ok_outcome(&input);
    o.causes = vec![
        ("b_cause".to_string(), Severity::Warning),
        ("a_cause".to_string(), Severity::Error),
        ("z_benign".to_string(), Severity::Info),
    ];
    t.add(&o);
    o.causes = vec![
        ("b_cause".to_string(), Severity::Critical),
        ("z_benign".to_string(), Severity::Info),
    ];
    t.add(&o);
    o.causes = vec![("z_benign".to_string(), Severity::Info)];
    t.add(&o);
    // Two bundles whose lines list no cause.
    o.causes = Vec::new();
    t.add(&o);
    t.add(&o);
    t.add(&Outcome::error(
        &Input::given(Path::new("x.tar.gz")),
        7,
        Instant::now(),
        "not an archive".to_string(),
    ));
    let mut buf = Vec::new();
    t.write(&mut buf, 2, Duration::from_secs(1)).unwrap();
    let text = String::from_utf8(buf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The gravest first: the benign id seen in the most bundles comes after the actionable
    // ones; `first` counts the bundles each cause led; the bundles with no cause have their
    // own row.
    assert_eq!(
        lines[..5],
        [
            "cause       severity  first  bundles",
            "b_cause     critical      2        2",
            "a_cause     error         0        1",
            "z_benign    info          1        3",
            "(no cause)  -             -        2",
        ]
    );
    assert!(text.contains("failed bundles\n  x.tar.gz: not an archive\n"));
    // The same unrecognised template in five bundles, three records each.
    assert!(text.contains(
        "unrecognised errors (bundles, records, template)\n      5       15  Lease lost for worker <*>\n"
    ));
    assert!(text.contains("6 bundles: 5 ok, 1 error, 2 skipped as done; 12 bytes in 1.0 s"));
}
