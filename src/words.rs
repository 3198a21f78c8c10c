//! Numbers as words a reader expects: `1 file`, `3 files`, `4.5 MB`. Every output that counts
//! something says it this way.

/// `1 file`, `3 files`: a count with its noun in the right number.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A size for people: `0 bytes`, `840 bytes`, `12.3 kB`, `4.5 MB`, `1.2 GB` (decimal units, as
/// the MB/s figures), never `0.0 MB` for a small bundle.
pub fn size(bytes: u64) -> String {
    const UNITS: [(&str, f64); 3] = [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    for (unit, scale) in UNITS {
        if bytes as f64 >= scale {
            return format!("{:.1} {unit}", bytes as f64 / scale);
        }
    }
    count(bytes, "byte", "bytes")
}

#[cfg(test)]
mod words_tests {
    #[test]
    fn counts_and_sizes_read_as_words() {
        assert_eq!(super::count(1, "file", "files"), "1 file");
        assert_eq!(super::count(0, "file", "files"), "0 files");
        assert_eq!(super::size(0), "0 bytes");
        assert_eq!(super::size(1), "1 byte");
        assert_eq!(super::size(840), "840 bytes");
        assert_eq!(super::size(39_289), "39.3 kB");
        assert_eq!(super::size(4_500_000), "4.5 MB");
        assert_eq!(super::size(1_200_000_000), "1.2 GB");
    }
}
