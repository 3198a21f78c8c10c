//! Sessions written on Windows read like their Linux forms, end to end through the binary: the
//! real Ray 2.20 session of `corpus/windows-2.20.0-ray-init-in-worker` (CRLF line ends, `C:\…`
//! paths, faulthandler's Windows dump) gives its cause with the user's frame, and the same
//! session with LF line ends, or zipped with Windows member names, gives the same causes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::path::Path;

use serde_json::Value;

const BUNDLE: &str = "windows-2.20.0-ray-init-in-worker";

/// The bundle's files as (path inside the archive, bytes), as shipped.
fn session() -> Vec<(String, Vec<u8>)> {
    let path = common::root()
        .join("corpus")
        .join(format!("{BUNDLE}.tar.gz"));
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
    let mut archive = tar::Archive::new(gz);
    let mut files = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        files.push((name, bytes));
    }
    files
}

fn write_dir(root: &Path, files: &[(String, Vec<u8>)]) {
    for (name, bytes) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// `\r\n` → `\n`.
fn lf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (i, &b) in bytes.iter().enumerate() {
        if !(b == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            out.push(b);
        }
    }
    out
}

fn analyze(path: &Path) -> Value {
    let out = common::raysift(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// What a report concludes, without where the bundle lay: each cause's id, severity and
/// summary, and its evidence as (path from `logs/` on, line, text).
fn conclusions(report: &Value) -> Vec<String> {
    let from_logs = |file: &str| file.find("logs/").map_or(file, |i| &file[i..]).to_string();
    let mut out = Vec::new();
    for cause in report["causes"].as_array().unwrap() {
        out.push(format!(
            "{} {} {}",
            cause["id"], cause["severity"], cause["summary"]
        ));
        for ev in cause["evidence"].as_array().unwrap() {
            out.push(format!(
                "  {}:{} {}",
                from_logs(ev["file"].as_str().unwrap_or_default()),
                ev["line"],
                ev["text"]
            ));
        }
    }
    out
}

#[test]
fn the_windows_session_names_the_users_frame() {
    let dir = common::scratch("windows", "crlf");
    let files = session();
    assert!(
        files
            .iter()
            .any(|(_, b)| b.windows(2).any(|w| w == b"\r\n")),
        "the bundle keeps Ray's CRLF line ends"
    );
    write_dir(&dir, &files);
    let report = analyze(&dir);
    let first = &report["causes"][0];
    assert_eq!(first["id"], "component_exception", "{first:#}");
    let summary = first["summary"].as_str().unwrap();
    // faulthandler's Windows dump, read like `Fatal Python error:`: the user's module that
    // called `ray.init()` inside the worker.
    assert!(
        summary.contains("Windows fatal exception: access violation at src/main.py:21 in <module>"),
        "{summary}"
    );
    // A Windows frame inside Ray is Ray's, shortened like a Linux one.
    assert!(
        summary.contains("at psutil/__init__.py:546 in as_dict"),
        "{summary}"
    );
    assert!(!summary.contains("C:\\"), "{summary}");
}

#[test]
fn crlf_and_lf_give_the_same_report() {
    let files = session();
    let crlf = common::scratch("windows", "same-crlf");
    let unix = common::scratch("windows", "same-lf");
    write_dir(&crlf, &files);
    let lf_files: Vec<(String, Vec<u8>)> = files.iter().map(|(n, b)| (n.clone(), lf(b))).collect();
    write_dir(&unix, &lf_files);
    let (a, b) = (analyze(&crlf), analyze(&unix));
    assert_eq!(conclusions(&a), conclusions(&b));
    assert_eq!(
        a["inventory"]["records_parsed"],
        b["inventory"]["records_parsed"]
    );
    // Every event, as the JSON timeline gives it.
    let timeline = |dir: &Path| {
        let out = common::raysift(&["timeline", dir.to_str().unwrap(), "-f", "json"]);
        String::from_utf8(out.stdout).unwrap()
    };
    let (ta, tb) = (timeline(&crlf), timeline(&unix));
    assert!(ta.lines().count() > 1000, "{}", ta.lines().count());
    assert_eq!(ta, tb);
}

/// A zip made on Windows: `\` between folders and the drive in every member name.
#[test]
fn a_zip_with_windows_member_names_reads_like_the_folder() {
    let files = session();
    let dir = common::scratch("windows", "zip");
    write_dir(&dir.join("plain"), &files);
    let zip_path = dir.join("session.zip");
    let mut z = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    for (name, bytes) in &files {
        let inner = name.split_once('/').map_or(name.as_str(), |(_, rest)| rest);
        let windows = format!(
            "C:\\Users\\me\\AppData\\Local\\Temp\\ray\\session_2024-05-25_19-44-06_621398_9536\\{}",
            inner.replace('/', "\\")
        );
        z.start_file(windows, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap();
    let zipped = analyze(&zip_path);
    let plain = analyze(&dir.join("plain"));
    // The drive is the root of an absolute name, made relative like `/…`.
    for f in zipped["inventory"]["file_list"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap_or_default();
        assert!(path.starts_with("Users/me/AppData/"), "{path}");
    }
    assert_eq!(conclusions(&zipped), conclusions(&plain));
    let kinds = |r: &Value| -> Vec<String> {
        r["inventory"]["file_list"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let path = f["path"].as_str().unwrap_or_default();
                let from = path.find("logs/").unwrap_or(0);
                format!("{} {}", &path[from..], f["source"])
            })
            .collect()
    };
    let zipped_kinds = kinds(&zipped);
    assert!(
        zipped_kinds.contains(&"logs/raylet.out \"raylet\"".to_string()),
        "{zipped_kinds:?}"
    );
    let mut a = zipped_kinds;
    let mut b = kinds(&plain);
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

/// Every parser reads a file with CRLF line ends exactly as with LF: each file of every
/// directory bundle of the corpus (operator logs, describes, YAML and JSON objects, tables,
/// events, Ray's C++ and Python logs, Serve's, workers' output …), parsed as what it is
/// classified as, both ways.
#[test]
fn every_parser_reads_crlf_like_lf() {
    let corpus = common::root().join("corpus");
    let mut kinds = std::collections::BTreeSet::new();
    let mut files = 0;
    for bundle in std::fs::read_dir(&corpus).unwrap().flatten() {
        if !bundle.path().is_dir() {
            continue;
        }
        for (rel, path) in common::files_under(&bundle.path()) {
            let unix = lf(&std::fs::read(&path).unwrap());
            let mut crlf = Vec::with_capacity(unix.len() * 21 / 20);
            for &b in &unix {
                if b == b'\n' {
                    crlf.push(b'\r');
                }
                crlf.push(b);
            }
            let kind = raysift::classify::classify(&rel, &unix);
            assert_eq!(
                raysift::classify::classify(&rel, &crlf),
                kind,
                "{rel} classified"
            );
            let (a, b) = (
                raysift::parse::parse(kind, &unix),
                raysift::parse::parse(kind, &crlf),
            );
            assert_eq!(
                format!("{:?}", a.events),
                format!("{:?}", b.events),
                "{rel} ({})",
                kind.as_str()
            );
            assert_eq!(a.unparsed_lines, b.unparsed_lines, "{rel}");
            assert_eq!(a.zone_samples, b.zone_samples, "{rel}");
            assert_eq!(
                format!("{:?}", a.diagnostics),
                format!("{:?}", b.diagnostics),
                "{rel}"
            );
            kinds.insert(kind.as_str());
            files += 1;
        }
    }
    assert!(kinds.len() >= 15, "{files} files, kinds: {kinds:?}");
}
