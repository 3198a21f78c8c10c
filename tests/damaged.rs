//! Damaged archives through the binary: a zip whose unreadable entries sit between good
//! bundles still reports every good bundle's cause, names every bad entry, and exits 1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::io::Write;
use std::path::Path;

/// Files under `dir`, as (path relative to it, bytes), sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn u32_le(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
}

/// The offsets of a zip member's local and central headers.
/// A zip of `members`, each deflated.
fn deflated_zip(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in members {
        w.start_file(name.as_str(), opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn headers(data: &[u8], name: &str) -> (usize, usize) {
    let mut pos = 0;
    loop {
        let i = pos
            + data[pos..]
                .windows(4)
                .position(|w| w == b"PK\x01\x02")
                .unwrap();
        let n = usize::from(u16::from_le_bytes([data[i + 28], data[i + 29]]));
        if &data[i + 46..i + 46 + n] == name.as_bytes() {
            return (u32_le(data, i + 42) as usize, i);
        }
        pos = i + 1;
    }
}

#[test]
fn a_zip_with_unreadable_entries_between_good_bundles() {
    let corpus = common::root().join("corpus");
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    for (rel, data) in files(&corpus.join("handmade-agent-died")) {
        members.push((format!("agent-died/{rel}"), data));
    }
    let restart = corpus.join("handmade-restart-loop");
    let read = |p: &Path| std::fs::read(p).unwrap();
    let bad = [
        (
            "broken/encrypted.txt",
            read(&restart.join("operator-log.txt")),
        ),
        ("broken/bzip2.txt", read(&restart.join("events.txt"))),
        // A bad CRC: the data is still analysed, and this file decides a cause.
        (
            "broken/describe-head-pod.txt",
            read(&corpus.join("handmade-head-image-pull/describe-head-pod.txt")),
        ),
        ("broken/offset.txt", read(&restart.join("pods.txt"))),
        (
            "broken/deflate.txt",
            read(&restart.join("rayservice-describe.txt")),
        ),
    ];
    for (name, data) in &bad {
        members.push(((*name).to_owned(), data.clone()));
    }
    for (rel, data) in files(&corpus.join("handmade-probe-wget-missing")) {
        members.push((format!("probe/{rel}"), data));
    }
    let mut z = deflated_zip(&members);
    let (l, c) = headers(&z, "broken/encrypted.txt");
    z[l + 6] |= 1;
    z[c + 8] |= 1;
    let (l, c) = headers(&z, "broken/bzip2.txt");
    z[l + 8] = 12;
    z[c + 10] = 12;
    let (l, c) = headers(&z, "broken/describe-head-pod.txt");
    z[l + 14] ^= 0xff;
    z[c + 16] ^= 0xff;
    let (_, c) = headers(&z, "broken/offset.txt");
    let past = (z.len() as u32 + 4096).to_le_bytes();
    z[c + 42..c + 46].copy_from_slice(&past);
    let (l, _) = headers(&z, "broken/deflate.txt");
    // The first deflate block gets the reserved block type.
    z[l + 30 + "broken/deflate.txt".len()] = 0b111;

    let dir = std::env::temp_dir().join(format!("raysift-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bundle.zip");
    std::fs::write(&path, &z).unwrap();
    let out = common::raysift(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let causes: Vec<&str> = v["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in [
        "dashboard_agent_died_after_deploy",
        "probe_failure",
        "image_pull_failure",
    ] {
        assert!(causes.contains(&id), "{id} missing from {causes:?}");
    }
    let problems: Vec<String> = common::diagnostics(&out.stdout)
        .into_iter()
        .map(|(file, _, problem)| format!("{file}: {problem}"))
        .collect();
    for (name, word) in [
        ("broken/encrypted.txt", "encrypted"),
        ("broken/bzip2.txt", "compression method 12"),
        ("broken/describe-head-pod.txt", "bad CRC-32"),
        ("broken/offset.txt", "points past the end"),
        ("broken/deflate.txt", "corrupt deflate data"),
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(name) && p.contains(word)),
            "{name}: {word} not in {problems:#?}"
        );
    }
}

/// A zip whose middle entry's headers claim almost 4 GiB for a few lines: through the binary,
/// every entry is read (the liar named, the one after it analysed), and the cause the last
/// entry holds is found. The budget counts real bytes, not claims.
#[test]
fn a_zip_entry_that_lies_about_its_size_does_not_end_the_read() {
    let corpus = common::root().join("corpus");
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    members.push((
        "a/notes.log".to_owned(),
        b"2024-01-01 00:00:00,000\tINFO x.py:1 -- hello\n".to_vec(),
    ));
    members.push((
        "b/liar.log".to_owned(),
        b"2024-01-01 00:00:01,000\tINFO x.py:1 -- liar\n".to_vec(),
    ));
    for (rel, data) in files(&corpus.join("handmade-probe-wget-missing")) {
        members.push((format!("probe/{rel}"), data));
    }
    let mut z = deflated_zip(&members);
    let (l, c) = headers(&z, "b/liar.log");
    let claim = 0xF000_0000u32.to_le_bytes();
    z[l + 22..l + 26].copy_from_slice(&claim);
    z[c + 24..c + 28].copy_from_slice(&claim);
    let dir = std::env::temp_dir().join(format!("raysift-liar-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bundle.zip");
    std::fs::write(&p, &z).unwrap();
    let p = p.to_str().unwrap();
    let inv = common::raysift(&["analyze", p, "--inventory", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&inv.stdout).unwrap();
    let listed: Vec<&str> = v["file_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), members.len(), "{listed:?}");
    let said = v["diagnostics"].to_string();
    assert!(said.contains("liar.log"), "the liar is named: {said}");
    assert!(
        !said.contains("the entries after it are not read"),
        "{said}"
    );
    let report = common::raysift(&["analyze", p, "--format", "json"]);
    let r: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let first = r["causes"][0]["id"].as_str().unwrap_or("");
    let want = std::fs::read_to_string(corpus.join("handmade-probe-wget-missing.toml")).unwrap();
    assert!(
        want.contains(&format!("\"{first}\"")),
        "first cause {first}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dense incident in every record format Ray and KubeRay write: one line logged again and
/// again, 20,000 times a file, in a tar.gz. Every format folds, so what the analysis holds
/// (`stats.records_held`, a folded run counting once) stays a few records a file, however
/// many lines the storm has, while every line is still counted.
#[test]
fn a_storm_folds_in_every_record_format() {
    const LINES: usize = 20_000;
    let stamp = |i: usize| {
        let (s, ms) = (i / 1000, i % 1000);
        (format!("10:{:02}:{:02}", s / 60 % 60, s % 60), ms)
    };
    type Line = fn(&str, usize) -> String;
    let formats: [(&str, Line); 6] = [
        ("kuberay-operator-klog.log", |t, ms| {
            format!("E1127 {t}.{ms:03}197       1 reflector.go:147] pkg/mod/k8s.io/client-go@v0.29.6/tools/cache/reflector.go:229: Failed to watch *v1.Endpoints: failed to list *v1.Endpoints: endpoints is forbidden: User \"system:serviceaccount:kuberay:kuberay-operator\" cannot list resource \"endpoints\" in API group \"\" at the cluster scope")
        }),
        ("kuberay-operator.log", |t, ms| {
            format!("{{\"level\":\"error\",\"ts\":\"2024-11-27T{t}.{ms:03}Z\",\"logger\":\"controllers.RayCluster\",\"msg\":\"Reconciler error\",\"error\":\"endpoints is forbidden: User \\\"system:serviceaccount:kuberay:kuberay-operator\\\" cannot list resource \\\"endpoints\\\" in API group \\\"\\\" at the cluster scope\"}}")
        }),
        ("operator-console.log", |t, ms| {
            format!("2024-11-27T{t}.{ms:03}Z\tERROR\tcontroller.rayservice\tFail to reconcileServe.\t{{\"error\": \"Put \\\"http://raycluster-head-svc.default.svc.cluster.local:52365/api/serve/applications/\\\": dial tcp 10.96.0.12:52365: connect: connection refused\"}}")
        }),
        ("logs/dashboard_agent.log", |t, ms| {
            format!("2024-11-27 {t},{ms:03}\tERROR scripts.py:1131 -- Some Ray subprocesses exited unexpectedly: raylet [exit code=1]")
        }),
        ("logs/raylet.out", |t, ms| {
            format!("[2024-11-27 {t},{ms:03} E 31 61] (raylet) gcs_rpc_client.h:554: Failed to connect to GCS within 60 seconds. GCS may have been killed.")
        }),
        ("logs/serve/controller_283.log", |t, ms| {
            format!("ERROR 2024-11-27 {t},{ms:03} controller 26801 -- Exception in Replica(id='3k10qflr', deployment='Model', app='model'), the replica will be stopped.")
        }),
    ];
    let dir = std::env::temp_dir().join(format!("raysift-storms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("storm.tar.gz");
    {
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&p).unwrap(),
            flate2::Compression::fast(),
        );
        let mut tar = tar::Builder::new(gz);
        for (name, line) in formats {
            let mut text = String::new();
            for i in 0..LINES {
                let (t, ms) = stamp(i);
                text.push_str(&line(&t, ms));
                text.push('\n');
            }
            let mut h = tar::Header::new_gnu();
            h.set_size(text.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, format!("storm/{name}"), text.as_bytes())
                .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap();
    }
    let out = common::raysift(&["analyze", p.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stats = &v["stats"];
    let files = formats.len() as u64;
    assert!(
        stats["events"].as_u64().unwrap() >= files * LINES as u64,
        "every line counts: {stats}"
    );
    assert!(
        stats["records_held"].as_u64().unwrap() <= files * 12,
        "a storm is held as its folds: {stats}"
    );
    for f in v["inventory"]["file_list"].as_array().unwrap() {
        assert_eq!(f["records_parsed"], LINES as u64, "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
