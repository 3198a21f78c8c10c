//! The bundle reader on arbitrary bytes as standard input (tar, gzip, zip or plain, sniffed):
//! no panic, no hang, bounded memory under small limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use raysift::bundle::{walk_reader, Limits};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_total_bytes: 4 << 20,
        max_entry_bytes: 1 << 20,
        max_entries: 64,
        max_depth: 3,
        max_ratio: 100,
    };
    let mut reader = data;
    let _ = walk_reader("fuzz", &mut reader, &limits, &mut |entry| {
        let _ = raysift::parse::parse(raysift::classify::classify(&entry.path, &entry.bytes), &entry.bytes);
    });
});
