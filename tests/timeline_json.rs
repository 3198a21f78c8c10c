//! The JSON timeline is written by hand (`report::timeline::JsonLines`), not by serde: it
//! must give, byte for byte, what serde_json gave of the struct it replaced, kept here as
//! the reference. Checked on every event of every corpus bundle, on strings made to trip an
//! escaper (quotes, backslashes, every control character, DEL, non-ASCII, empty) and on
//! repeated field keys, and end to end: `raysift timeline --format json` (each event's tail
//! packed on the parser threads, spilled and unpacked in the merge) prints what the
//! reference gives of the whole timeline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;

use serde::Serialize;

use raysift::event::{Event, Level, SourceKind, Timestamp, TsQuality};
use raysift::report::timeline;
use raysift::timeline::Timeline;

/// One event as JSON, as the timeline wrote it with serde.
#[derive(Serialize)]
struct EventJson<'a> {
    ts: Option<String>,
    ts_quality: &'static str,
    file: &'a str,
    line: u32,
    n_lines: u32,
    /// Where a mirrored record's copy is (`path:line`).
    #[serde(skip_serializing_if = "Option::is_none")]
    also_in: Option<String>,
    source: &'static str,
    level: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    logged_level: Option<&'static str>,
    component: &'a str,
    message: &'a str,
    fields: BTreeMap<&'a str, &'a str>,
}

impl<'a> EventJson<'a> {
    fn new(tl: &'a Timeline, ev: &'a Event) -> EventJson<'a> {
        let shown = raysift::explain::shown_level(ev);
        let mut fields = BTreeMap::new();
        for (k, v) in &ev.fields {
            fields.entry(k.as_str()).or_insert(v.as_str());
        }
        EventJson {
            ts: ev.ts.map(|t| t.rfc3339()),
            ts_quality: ev.ts.map_or("none", |t| t.quality.as_str()),
            file: tl.file(ev.file).map_or("", |f| f.path.as_str()),
            line: ev.line,
            n_lines: ev.n_lines,
            also_in: tl.mirrors.also(ev.file, ev.line).map(|(other, at)| {
                let path = tl.file(other).map_or("", |f| f.path.as_str());
                format!("{path}:{at}")
            }),
            source: ev.kind.as_str(),
            level: shown.as_str(),
            logged_level: (shown != ev.level).then(|| ev.level.as_str()),
            component: &ev.component,
            message: &ev.message,
            fields,
        }
    }
}

fn by_serde(tl: &Timeline, ev: &Event) -> String {
    let mut out = serde_json::to_string(&EventJson::new(tl, ev)).unwrap();
    out.push('\n');
    out
}

/// The line written by hand; written again from the event's tail packed as the streamed
/// timeline spills it (`pack_tail`, `unpack_tail`), it must be the same.
fn by_hand(tl: &Timeline, ev: &Event) -> String {
    let mut out = Vec::new();
    raysift::report::timeline::write_json(&mut out, tl, &[ev]).unwrap();
    let mut packed = Vec::new();
    timeline::pack_tail(&mut packed, &ev.view());
    let mut unpacked = Vec::new();
    timeline::JsonLines::new(tl).push_head(&mut unpacked, ev.ts, ev.file, ev.line, ev.n_lines);
    assert!(timeline::unpack_tail(&mut unpacked, &packed));
    assert_eq!(
        String::from_utf8_lossy(&unpacked),
        String::from_utf8_lossy(&out)
    );
    // Cut anywhere, a packed tail is refused, or read as a shorter tail whose fields object
    // is cut: never read past its end.
    for cut in 0..packed.len() {
        let mut partial = Vec::new();
        if timeline::unpack_tail(&mut partial, &packed[..cut]) {
            assert!(partial.len() < unpacked.len());
        } else {
            assert!(partial.is_empty());
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn every_corpus_event_is_written_as_serde_wrote_it() {
    let mut events = 0;
    let mut logged_levels = 0;
    for bundle in common::corpus_bundles() {
        let tl = common::timeline(&bundle, 2);
        for ev in &tl.events {
            let want = by_serde(&tl, ev);
            assert_eq!(by_hand(&tl, ev), want, "{}", bundle.display());
            events += 1;
            logged_levels += usize::from(want.contains("\"logged_level\""));
        }
    }
    // The corpus has events of every shape, a traceback shown above its level among them.
    assert!(events > 10_000, "{events} events");
    assert!(logged_levels > 0);
}

/// Strings an escaper can get wrong.
fn tricky() -> Vec<String> {
    let mut all: Vec<String> = vec![
        String::new(),
        "\"".into(),
        "\\".into(),
        "\\\"".into(),
        "\"quoted\" and \\back\\slashed\\".into(),
        "a/b</script>".into(),
        "\u{7f}".into(),
        "tab\there\r\nnew line\u{8}\u{c}".into(),
        "\u{0}\u{1}\u{1f}".into(),
        "é ü 日本語 🦀 \u{2028}\u{2029}".into(),
        "\u{feff}bom".into(),
        "x".repeat(70_000),
    ];
    // Every ASCII character alone, and all of them in one string.
    all.extend((0u8..0x80).map(|b| char::from(b).to_string()));
    all.push((0u8..0x80).map(char::from).collect());
    all
}

#[test]
fn tricky_strings_are_escaped_as_serde_escapes_them() {
    let tl = common::timeline(&common::root().join("corpus/handmade-agent-died"), 1);
    let strings = tricky();
    for s in &strings {
        let mut ev = Event::new(7, s.clone());
        ev.component = s.into();
        ev.fields = vec![(s.into(), s.into()), ("k".into(), s.into())];
        assert_eq!(by_hand(&tl, &ev), by_serde(&tl, &ev), "{s:?}");
    }
    // All of them as fields of one event: more than fit on the stack, keys repeated (the first
    // value stays), the empty key among them.
    let mut ev = Event::new(1, "many fields");
    for (i, s) in strings.iter().enumerate() {
        ev.fields.push((s.into(), format!("first {i}").into()));
        ev.fields.push((format!("k{}", i % 7).into(), s.into()));
    }
    for (i, s) in strings.iter().enumerate().rev() {
        ev.fields.push((s.into(), format!("later {i}").into()));
    }
    assert_eq!(by_hand(&tl, &ev), by_serde(&tl, &ev));
}

#[test]
fn repeated_keys_keep_their_first_value() {
    let tl = common::timeline(&common::root().join("corpus/handmade-agent-died"), 1);
    // Keys of no parser; keys raysift's parsers give (packed by their number); both.
    let key_sets = [
        ["b", "a", "ab", "a.b", "é", "B", "", "b"],
        [
            "lineno",
            "file",
            "RayService.name",
            "RayService",
            "file",
            "pid",
            "tid",
            "lineno",
        ],
        [
            "file",
            "fil",
            "files",
            "lineno",
            "file",
            "a",
            "http_path",
            "http_path.",
        ],
    ];
    for keys in key_sets {
        for n in [0, 1, 2, 15, 16, 17, 40] {
            let mut ev = Event::new(3, "m");
            for i in 0..n {
                // Unsorted, with prefixes of one another and repeats on both sides of the
                // sixteenth field.
                let key = keys[i % 8];
                ev.fields.push((key.into(), format!("v{i}").into()));
            }
            let got = by_hand(&tl, &ev);
            assert_eq!(got, by_serde(&tl, &ev), "{n} fields of {keys:?}");
        }
    }
}

#[test]
fn times_levels_and_kinds_are_written_as_serde_wrote_them() {
    let tl = common::timeline(&common::root().join("corpus/handmade-agent-died"), 1);
    let traceback = "Task failed\nTraceback (most recent call last):\n  File \"x.py\", line 1, in \
                     <module>\nValueError: boom";
    let times = [
        None,
        Some(0),
        Some(-1),
        Some(1_728_314_576_894_000),
        Some(1_712_821_424_182_159),
        Some(i64::MIN),
        Some(i64::MAX),
        Some(253_402_300_800_000_000), // the year 10000
    ];
    for (i, t) in times.into_iter().enumerate() {
        for kind in SourceKind::ALL {
            for level in [Level::Trace, Level::Info, Level::Warning, Level::Critical] {
                let mut ev = Event::new(u32::MAX - i as u32, traceback);
                ev.n_lines = 5;
                ev.kind = kind;
                ev.level = level;
                ev.file = (i % tl.files.len().max(1)) as u32;
                ev.ts = t.map(|micros| Timestamp {
                    micros,
                    quality: TsQuality::InferredZone,
                });
                assert_eq!(by_hand(&tl, &ev), by_serde(&tl, &ev), "{t:?} {kind:?}");
            }
        }
    }
}

#[test]
fn the_streamed_json_timeline_is_the_whole_timeline_as_serde_wrote_it() {
    for bundle in common::corpus_bundles() {
        let tl = common::timeline(&bundle, 1);
        let want: String = tl.events.iter().map(|ev| by_serde(&tl, ev)).collect();
        let got = common::raysift(&["timeline", bundle.to_str().unwrap(), "--format", "json"]);
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            want,
            "{}",
            bundle.display()
        );
    }
}
