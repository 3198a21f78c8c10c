//! Every parser on arbitrary bytes: no panic, and every physical line ends in some event.
#![no_main]

use libfuzzer_sys::fuzz_target;
use raysift::event::SourceKind;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else { return };
    let kind = SourceKind::ALL[selector as usize % SourceKind::ALL.len()];
    let out = raysift::parse::parse(kind, input);
    let lines = raysift::parse::lines::split_lines(input).count() as u64;
    let covered: u64 = out.events.iter().map(|e| u64::from(e.n_lines)).sum();
    // Compact JSON may put several facts on one line, so only "at least" holds for objects.
    assert!(covered >= lines, "{kind}: {covered} of {lines} lines covered");
});
