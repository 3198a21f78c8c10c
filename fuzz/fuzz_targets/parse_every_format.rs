//! Every parser on arbitrary bytes: no panic, and every physical line ends in some event. Read
//! light (`parse::Detail`), the same records, times, levels, lines, zone samples and
//! diagnostics, and the whole records are the full parse's. A format that can be fed
//! (`parse::Feed`), fed in pieces of whole lines and drained of what is settled after each,
//! gives the whole parse's events, diagnostics and unparsed lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use raysift::event::{Level, SourceKind};
use raysift::parse::{Detail, Feed};

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
    if let Some(mut feed) = Feed::new(kind, false) {
        // Pieces of 1 to 8 lines, by the selector's high bits.
        let per = 1 + usize::from(selector >> 5);
        let mut events = Vec::new();
        let mut unparsed = 0;
        let mut start = 0;
        for (n, nl) in input
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .map(|(i, _)| i)
            .enumerate()
        {
            if (n + 1) % per == 0 {
                feed.feed(&input[start..=nl]);
                start = nl + 1;
                let settled = feed.take_settled();
                events.extend(settled.events);
                unparsed += settled.unparsed_lines;
            }
        }
        feed.feed(&input[start..]);
        let rest = feed.finish();
        events.extend(rest.events);
        unparsed += rest.unparsed_lines;
        assert_eq!(events, out.events, "{kind}: fed");
        assert_eq!(rest.diagnostics, out.diagnostics, "{kind}: fed");
        assert_eq!(unparsed, out.unparsed_lines, "{kind}: fed");
    }
});
