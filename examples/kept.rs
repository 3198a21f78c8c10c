use std::collections::BTreeMap;
use std::sync::Arc;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let rules = raysift::rules::library::builtin().unwrap();
    let sieve = raysift::rules::sieve::Sieve::new(&rules);
    let cfg = raysift::load::LoadConfig {
        limits: raysift::bundle::Limits::DEFAULT,
        sieve: Some(Arc::new(sieve)),
        threads: 2,
        progress: None,
    };
    let loaded = raysift::load::load(std::path::Path::new(&path), &cfg).unwrap();
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for (fi, evs) in loaded.events.iter().enumerate() {
        for e in evs {
            let m: String = e
                .message
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .filter(|c| !c.is_ascii_digit())
                .take(70)
                .collect();
            *by.entry(format!("{} | {}", loaded.files[fi].kind.as_str(), m))
                .or_default() += 1;
        }
    }
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1));
    for (k, n) in v.iter().take(15) {
        println!("{n:>7} {k}");
    }
}
