//! Every parser on arbitrary bytes: no panic, and every physical line ends in some event. Read
//! light (`parse::Detail`), the same records, times, levels, lines, zone samples and
//! diagnostics, and the whole records are the full parse's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use raysift::event::{Level, SourceKind};
use raysift::parse::Detail;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else { return };
    let kind = SourceKind::ALL[selector as usize % SourceKind::ALL.len()];
    let out = raysift::parse::parse(kind, input);
    let lines = raysift::parse::lines::split_lines(input).count() as u64;
    let covered: u64 = out.events.iter().map(|e| u64::from(e.n_lines)).sum();
    // Compact JSON may put several facts on one line, so only "at least" holds for objects.
    assert!(covered >= lines, "{kind}: {covered} of {lines} lines covered");
    for detail in [Detail::Light, Detail::AtLeast(Level::Warning)] {
        let light = raysift::parse::parse_detailed(kind, input, detail.clone());
        assert_eq!(light.events.len(), out.events.len(), "{kind} {detail:?}: records");
        assert_eq!(light.unparsed_lines, out.unparsed_lines, "{kind} {detail:?}");
        assert_eq!(light.zone_samples, out.zone_samples, "{kind} {detail:?}");
        assert_eq!(light.diagnostics, out.diagnostics, "{kind} {detail:?}");
        for (l, w) in light.events.iter().zip(&out.events) {
            if l.light {
                let skeleton = (w.raw_time, w.level, w.line, w.n_lines);
                assert_eq!((l.raw_time, l.level, l.line, l.n_lines), skeleton, "{kind}");
            } else {
                assert_eq!(l, w, "{kind} {detail:?}");
            }
        }
    }
});
