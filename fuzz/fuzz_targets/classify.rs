//! The classifier on arbitrary names and bytes: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len().min(32));
    let (name, bytes) = data.split_at(split);
    let name = String::from_utf8_lossy(name);
    let _ = raysift::classify::classify(&name, bytes);
});
