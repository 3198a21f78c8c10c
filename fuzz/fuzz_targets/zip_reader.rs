//! The zip reader on arbitrary bytes given as a `.zip` file's content (central directory,
//! local header scan, overlap check, inflation), with small limits: no panic, no hang, bounded
//! memory. A zip is read from memory, so the bytes are handed over as a stream that the
//! reader takes in whole; the magic is forced so that every input reaches the zip reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use raysift::bundle::{walk_reader, Limits};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_total_bytes: 4 << 20,
        max_entry_bytes: 1 << 20,
        max_entries: 64,
        max_depth: 2,
        max_ratio: 100,
    };
    let mut bytes = b"PK\x03\x04".to_vec();
    bytes.extend_from_slice(data);
    let mut reader = &bytes[..];
    let _ = walk_reader("fuzz.zip", &mut reader, &limits, &mut |entry| {
        std::hint::black_box(entry.bytes.len());
    });
});
