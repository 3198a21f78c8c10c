//! Shell-style patterns of names: `*` matches any run of characters, `?` one. What `--source`
//! (the rules' `sources` and `timeline --source`) and `batch`'s quoted patterns match with.

/// Glob over a file's path, its name, or its source kind. `*` matches any run of characters,
/// `?` one character.
pub fn source_matches(glob: &str, path: &str, kind: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    glob_match(glob.as_bytes(), path.as_bytes())
        || glob_match(glob.as_bytes(), name.as_bytes())
        || glob_match(glob.as_bytes(), kind.as_bytes())
}

/// Whether `pattern` matches the whole of `text`.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matcher with one backtrack point: linear in practice, no recursion.
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                while pattern.get(p) == Some(&b'*') {
                    p += 1;
                }
                star = Some((p, t));
            }
            Some(&c) if c == b'?' || Some(&c) == text.get(t) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}
