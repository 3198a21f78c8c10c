//! The streamed full parse gives what the one-shot full parse gives: the same files, the same
//! diagnostics and, file by file, the same events, for every corpus bundle and for files large
//! enough to be parsed in many units, whatever the thread count. A light read
//! (`parse::Detail`) gives the same files, diagnostics, records, times, levels and lines,
//! and its whole records are the full parse's; and the same mirrored records (`load::mirror`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use raysift::bundle::Limits;
use raysift::event::{Event, Level};
use raysift::load::{load, stream_at, stream_rendered, DetailOf, LoadConfig, Render};
use raysift::parse::{Detail, Spans};

fn config(threads: usize) -> LoadConfig {
    LoadConfig {
        limits: Limits::DEFAULT,
        sieve: None,
        threads,
        progress: None,
    }
}

/// Events per file id, from the streamed read, and how many batches brought them.
fn streamed(
    path: &Path,
    threads: usize,
    detail_of: &DetailOf<'_>,
) -> (raysift::load::Streamed, Vec<Vec<Event>>, Vec<usize>) {
    let mut by_seq: Vec<Vec<Event>> = Vec::new();
    let mut last_seen: Vec<bool> = Vec::new();
    let mut batches_by_seq: Vec<usize> = Vec::new();
    let got = stream_at(path, &config(threads), detail_of, &mut |batch| {
        let seq = batch.seq as usize;
        if by_seq.len() <= seq {
            by_seq.resize_with(seq + 1, Vec::new);
            last_seen.resize(seq + 1, false);
            batches_by_seq.resize(seq + 1, 0);
        }
        assert!(!last_seen[seq], "{}: a batch after the last", batch.path);
        last_seen[seq] = batch.last;
        batches_by_seq[seq] += 1;
        by_seq[seq].extend(batch.events.iter().cloned());
    })
    .unwrap();
    assert!(
        last_seen.iter().all(|l| *l),
        "a file without its last batch"
    );
    let mut by_id: Vec<Vec<Event>> = vec![Vec::new(); got.files.len()];
    let mut batches = vec![0; got.files.len()];
    for (seq, mut events) in by_seq.into_iter().enumerate() {
        let id = got.ids[seq];
        for ev in &mut events {
            ev.file = id;
        }
        // Batches hand the copies of mirrored records too; the consumer leaves them out, as
        // the one-shot load does.
        events.retain(|ev| !got.mirrors.is_copy(id, ev.line));
        by_id[id as usize] = events;
        batches[id as usize] = batches_by_seq[seq];
    }
    (got, by_id, batches)
}

/// Streams `path` whole, light, whole from warning up, and whole only near `near` (UTC spans;
/// zone-less times read as UTC), each against the one-shot load. Returns how many light
/// events the three last reads gave and how many whole ones the last did.
fn assert_same(path: &Path, threads: usize, near: &[(i64, i64)]) -> (usize, usize) {
    let whole = load(path, &config(1)).unwrap();
    let spans = Spans::new(near.to_vec());
    let mut light = 0;
    let mut full_near = 0;
    let details: [&DetailOf<'_>; 4] = [
        &|_, _| Detail::Full,
        &|_, _| Detail::Light,
        &|_, _| Detail::AtLeast(Level::Warning),
        &|_, _| Detail::Near(std::sync::Arc::new(spans.zoned(0))),
    ];
    for (i, detail_of) in details.into_iter().enumerate() {
        let (got, events, _) = streamed(path, threads, detail_of);
        assert_read(path, &whole, &got, &events);
        let n_light = events.iter().flatten().filter(|e| e.light).count();
        assert!(
            i > 0 || n_light == 0,
            "{}: light events in a whole read",
            path.display()
        );
        light += n_light;
        if i == 2 {
            // Below the level and on one line, else whole.
            let wrong = events
                .iter()
                .flatten()
                .find(|e| e.light && (e.level >= Level::Warning || e.n_lines > 1));
            assert!(wrong.is_none(), "{}: {wrong:?}", path.display());
        }
        if i == 3 {
            full_near = events.iter().flatten().filter(|e| !e.light).count();
        }
    }
    (light, full_near)
}

fn assert_read(
    path: &Path,
    whole: &raysift::load::Loaded,
    got: &raysift::load::Streamed,
    events: &[Vec<Event>],
) {
    let name = path.display();
    assert_eq!(got.files.len(), whole.files.len(), "{name}: files");
    for (a, b) in got.files.iter().zip(&whole.files) {
        assert_eq!(
            (
                &a.path,
                a.kind,
                a.bytes,
                a.lines,
                a.events,
                a.unparsed_lines
            ),
            (
                &b.path,
                b.kind,
                b.bytes,
                b.lines,
                b.events,
                b.unparsed_lines
            ),
            "{name}: file info"
        );
        let mut za = a.zone_samples.clone();
        let mut zb = b.zone_samples.clone();
        za.sort_unstable();
        zb.sort_unstable();
        assert_eq!(za, zb, "{name}: zone samples of {}", a.path);
    }
    assert_eq!(got.diagnostics, whole.diagnostics, "{name}: diagnostics");
    assert_eq!(got.root_name, whole.root_name);
    assert_eq!(got.mirrors, whole.mirrors, "{name}: mirrors");
    for (id, (a, b)) in events.iter().zip(&whole.events).enumerate() {
        // A light event is the whole one without its text.
        let b: &Vec<Event> = &b
            .iter()
            .zip(a.iter().map(|x| x.light).chain(std::iter::repeat(false)))
            .map(|(y, light)| {
                let mut y = y.clone();
                if light {
                    y.component.clear();
                    y.message.clear();
                    y.fields.clear();
                    y.light = true;
                }
                y
            })
            .collect();
        if a != b {
            let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len());
            panic!(
                "{name}: events of {} differ ({} vs {}) at {at}: {:?} vs {:?}",
                whole.files[id].path,
                a.len(),
                b.len(),
                a.get(at),
                b.get(at)
            );
        }
    }
}

#[test]
fn every_corpus_bundle_streams_as_it_loads() {
    let bundles = common::corpus_bundles();
    assert!(bundles.len() > 20);
    let mut light = 0;
    for b in &bundles {
        light += assert_same(b, 2, &[]).0;
    }
    assert!(light > 0, "no light event in the corpus");
}

/// absl's dump of a signal (`parse::abort`).
const ABSL_DUMP: &str = "*** SIGSEGV received at time=1728314400 on cpu 0 ***\nPC: @     0x7f4179985ad8  (unknown)  (unknown)\n    @     0x7f417985a050  (unknown)  (unknown)\n    @ ... and at least 8 more frames\n";

/// CPython's faulthandler dump.
const FAULTHANDLER_DUMP: &str = "Fatal Python error: Segmentation fault\n\nThread 0x00007f3c6bfff6c0 (most recent call first):\n  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n\nCurrent thread 0x00007f3c8b7fe740 (most recent call first):\n  File \"/app/jobs.py\", line 53 in decode_frame\n\nExtension modules: msgpack._cmsgpack (total: 1)\n";

/// absl's dump as Ray's logger writes it again, each frame a stamped line.
fn logged_dump(m: u64, s: u64) -> String {
    [
        "*** SIGTERM received at time=1728314400 on cpu 0 ***",
        "PC: @     0x7fcca9b26f36  (unknown)  epoll_wait",
        "    @     0x7fcca9a5a050  139169624  (unknown)",
        "    @ ... and at least 8 more frames",
    ]
    .iter()
    .map(|l| format!("[2024-10-07 15:{m:02}:{s:02},500 E 71 71] logging.cc:361: {l}\n"))
    .collect()
}

/// Large files of every line format, with what a parser carries from line to line: records
/// of many lines, tracebacks, actor markers, abort dumps, broken JSON and impossible dates.
fn big_bundle(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let logs = dir.join("head/logs");
    std::fs::create_dir_all(logs.join("serve")).unwrap();
    let mut py = String::new();
    let mut worker = String::new();
    let mut op = String::new();
    let mut cpp = String::new();
    let mut err = String::new();
    let mut serve = String::new();
    let mut i = 0u64;
    while py.len() < 7 << 20 {
        let (m, s) = (i / 60 % 60, i % 60);
        py.push_str(&format!(
            "2024-10-07 15:{m:02}:{s:02},{:03}\tINFO worker.py:12 -- step {i}\n",
            i % 1000
        ));
        if i % 97 == 0 {
            py.push_str("Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\n    f()\nValueError: boom\n\n");
        }
        if i % 1013 == 0 {
            py.push_str("2024-02-30 10:00:00,000\tINFO x.py:1 -- impossible\n");
        }
        if i % 113 == 0 {
            py.push_str(ABSL_DUMP);
            py.push_str(FAULTHANDLER_DUMP);
        }
        worker.push_str(&format!("plain output {i}\n"));
        if i % 211 == 0 {
            worker.push_str(&format!(":actor_name:Actor{i}\n"));
        }
        if i % 89 == 0 {
            worker.push_str("Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in f\nRuntimeError: bad\n");
        }
        if i % 149 == 0 {
            worker.push_str(ABSL_DUMP);
            worker.push_str(&logged_dump(m, s));
            worker.push_str(FAULTHANDLER_DUMP);
        }
        op.push_str(&format!(
            "2024-10-07T15:{m:02}:{s:02}.{:03}Z\tINFO\tcontrollers.RayCluster\treconcile {i}\n",
            i % 1000
        ));
        if i % 301 == 0 {
            op.push_str("{\"level\":\"info\",\"ts\":\"2024-10-07T15:\n");
            op.push_str(&format!(
                "I1007 15:{m:02}:{s:02}.000000       1 leader.go:1] klog {i}\n"
            ));
            op.push_str("goroutine 1 [running]:\n\t/go/pkg/mod/x.go:12\n");
        }
        cpp.push_str(&format!(
            "[2024-10-07 15:{m:02}:{s:02},{:03} I 71 71] (raylet) main.cc:1: tick {i}\n",
            i % 1000
        ));
        // Errors the raylet writes to raylet.err too, and one of the .err's own now and then.
        if i % 53 == 0 {
            let line = format!(
                "[2024-10-07 15:{m:02}:{s:02},{:03} E 71 72] (raylet) worker_pool.cc:581: Some workers of the worker process({i}) have not registered within the timeout.\n",
                i % 1000
            );
            cpp.push_str(&line);
            err.push_str(&line);
        }
        if i % 1009 == 0 {
            err.push_str(&format!(
                "[2024-10-07 15:{m:02}:{s:02},{:03} E 71 72] (raylet) node_manager.cc:9: only here {i}\n",
                i % 1000
            ));
        }
        if i % 400 == 0 {
            cpp.push_str("[state-dump] NodeManager:\n[state-dump] Pool: 3\n");
        }
        if i % 331 == 0 {
            cpp.push_str(&logged_dump(m, s));
            cpp.push_str(FAULTHANDLER_DUMP);
        }
        serve.push_str(&format!(
            "INFO 2024-10-07 15:{m:02}:{s:02},{:03} proxy 10.0.0.1 abc -- GET / 200 1.0ms\n",
            i % 1000
        ));
        i += 1;
    }
    std::fs::write(logs.join("dashboard.log"), &py).unwrap();
    std::fs::write(logs.join("worker-abc-ffffffff-12.err"), &worker).unwrap();
    std::fs::write(dir.join("kuberay-operator.log"), &op).unwrap();
    std::fs::write(logs.join("raylet.out"), &cpp).unwrap();
    std::fs::write(logs.join("raylet.err"), &err).unwrap();
    std::fs::write(logs.join("serve/proxy_10.0.0.1.log"), &serve).unwrap();
    // Nothing but continuation lines: carried whole, then cut at a piece end.
    std::fs::write(logs.join("odd.log"), "  indented\n".repeat(1 << 20)).unwrap();
}

#[test]
fn files_of_many_units_stream_as_they_load() {
    let dir = std::env::temp_dir().join(format!("raysift-stream-{}", std::process::id()));
    big_bundle(&dir);
    // Zone-less times of the big bundle are read as UTC: 15:10 to 15:20 on its day.
    let day = 1_728_259_200_000_000i64; // 2024-10-07T00:00:00Z
    let near = [(
        day + (15 * 60 + 10) * 60_000_000,
        day + (15 * 60 + 20) * 60_000_000,
    )];
    for threads in [1, 3] {
        let (light, full_near) = assert_same(&dir, threads, &near);
        assert!(
            light > 1000 && full_near > 1000,
            "{light} light, {full_near} whole"
        );
    }
    // The raylet's errors in raylet.err are copies of those in raylet.out, but its own.
    let whole = load(&dir, &config(2)).unwrap();
    let err = whole
        .files
        .iter()
        .find(|f| f.path.ends_with("raylet.err"))
        .unwrap();
    assert!(err.mirrored > 1000, "{}", err.mirrored);
    assert!(err.events > 0 && err.events < 200, "{}", err.events);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a render writes on the parser threads is handed over with each event as delivered:
/// also where delivery changed the event after it was rendered (the actor marker of a worker
/// file parsed in many units), and nothing for a light event. A render whose consumer does
/// not read the text once rendered gets the same, and the events come without their text
/// but for a worker log's, which delivery may change.
#[test]
fn each_event_comes_with_what_the_render_wrote_of_it_as_delivered() {
    let dir = std::env::temp_dir().join(format!("raysift-render-{}", std::process::id()));
    big_bundle(&dir);
    let render: fn(&Event, &mut Vec<u8>) = |ev, out| {
        let fields: Vec<String> = ev.fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.extend_from_slice(
            format!("{}|{}|{}", ev.kind, ev.message, fields.join(",")).as_bytes(),
        );
    };
    let mut checked = 0usize;
    let mut actors = [0usize; 2];
    let mut without_text = 0usize;
    let mut written: std::collections::HashMap<(String, u32), Vec<u8>> = Default::default();
    let some_light = |_: &str, _: raysift::event::SourceKind| Detail::AtLeast(Level::Warning);
    for keeps_text in [true, false] {
        for threads in [1, 3] {
            let hook = Render {
                write: render,
                keeps_text,
            };
            stream_rendered(
                &dir,
                &config(threads),
                &some_light,
                Some(&hook),
                &mut |batch| {
                    for (i, ev) in batch.events.iter().enumerate() {
                        let got = batch.rendered.get(i);
                        let at = format!("{}:{}", batch.path, ev.line);
                        if ev.light {
                            assert!(got.is_empty(), "{at}");
                            continue;
                        }
                        actors[usize::from(!keeps_text)] +=
                            usize::from(ev.field("actor_name").is_some());
                        let key = (batch.path.to_string(), ev.line);
                        if keeps_text {
                            let mut want = Vec::new();
                            render(ev, &mut want);
                            assert_eq!(got, &want[..], "{at}");
                            written.insert(key, want);
                            checked += 1;
                        } else {
                            assert_eq!(Some(got), written.get(&key).map(|w| &w[..]), "{at}");
                            without_text += usize::from(ev.message.is_empty());
                        }
                    }
                },
            )
            .unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        checked > 1000 && actors[0] > 100 && actors[1] == actors[0] && without_text > 1000,
        "{checked} events, {actors:?} with an actor, {without_text} without text"
    );
}

/// A bundle named by `RAYSIFT_STREAM_BUNDLE` (a generated one, say): `cargo test --release
/// --test stream -- --ignored`.
#[test]
#[ignore]
fn a_named_bundle_streams_as_it_loads() {
    if let Some(path) = std::env::var_os("RAYSIFT_STREAM_BUNDLE") {
        assert_same(Path::new(&path), 2, &[]);
    }
}

/// A describe of one huge `Events:` table and a `kubectl get events` table past the size at
/// which they are fed as they arrive (8 MiB), each with a line cut at the line limit past it,
/// in a directory, a tar.gz and a zip: the streamed read hands their events on in many
/// batches, and they are the one-shot load's, file infos and diagnostics too.
#[test]
fn huge_kubernetes_documents_stream_in_batches_as_they_load() {
    use std::io::Write;
    let scratch = common::scratch("stream", "huge-kubernetes");
    let dir = scratch.join("bundle");
    std::fs::create_dir_all(&dir).unwrap();
    let mut describe = String::from(
        "Name:         ray-head\nNamespace:    default\nStart Time:   Mon, 07 Oct 2024 08:00:00 \
         +0000\nIP:           10.0.1.23\nContainers:\n  ray-head:\n    Image:  rayproject/ray:2.9.3\n\
         QoS Class:    Guaranteed\nEvents:\n  Type     Reason   Age   From     Message\n  ----     \
         ------   ----  ----     -------\n",
    );
    let mut table = String::from("LAST SEEN  TYPE     REASON   OBJECT          MESSAGE\n");
    let long = "x".repeat(raysift::bundle::MAX_LINE_BYTES + 100);
    let mut i = 0u64;
    while describe.len() <= 12 << 20 {
        let pod = format!("pod/w-{:05}", i % 40_000);
        let message = if i == 120_000 {
            &long
        } else {
            "Back-off restarting"
        };
        describe.push_str(&format!(
            "  Warning  BackOff  {}s  kubelet  {message} {pod}\n",
            i % 90
        ));
        if i % 1000 == 7 {
            describe.push('\n');
            table.push('\n');
        }
        table.push_str(&format!(
            "{}s  Warning  BackOff  {pod}  {message} {}\n",
            i % 90,
            i % 3
        ));
        i += 1;
    }
    describe.push_str("Extra:   after the table\n");
    std::fs::write(dir.join("describe-head.txt"), &describe).unwrap();
    std::fs::write(dir.join("events.txt"), &table).unwrap();
    let tgz = scratch.join("bundle.tar.gz");
    let zip = scratch.join("bundle.zip");
    {
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&tgz).unwrap(),
            flate2::Compression::fast(),
        );
        let mut b = tar::Builder::new(gz);
        b.append_dir_all("bundle", &dir).unwrap();
        b.into_inner().unwrap().finish().unwrap();
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zip).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for name in ["describe-head.txt", "events.txt"] {
            z.start_file(format!("bundle/{name}"), opts).unwrap();
            z.write_all(&std::fs::read(dir.join(name)).unwrap())
                .unwrap();
        }
        z.finish().unwrap();
    }
    for path in [&dir, &tgz, &zip] {
        let whole = load(path, &config(1)).unwrap();
        let (got, events, batches) = streamed(path, 2, &|_, _| Detail::Full);
        assert_read(path, &whole, &got, &events);
        // A batch a piece (2 MiB), the 8 MiB gathered before the feed starts too.
        assert!(
            batches.iter().all(|&n| n >= 5),
            "{}: {batches:?}",
            path.display()
        );
        let cuts = got.diagnostics.iter().filter(|d| d.line.is_some()).count();
        assert_eq!(cuts, 2, "{}: {:?}", path.display(), got.diagnostics);
    }
}
