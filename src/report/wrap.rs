//! Word wrapping for terminal text: breaks at spaces only, never inside a word (a long path
//! or URL overflows rather than being cut), and never counts ANSI codes because it runs on
//! plain text before styling.

/// Splits `text` into lines of at most `first` characters for the first line and `rest`
/// for the others. Widths below 20 are raised to 20 so narrow terminals still read.
pub fn wrap(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut cur_len = 0usize;
    for word in text.split(' ') {
        let limit = if lines.is_empty() { first } else { rest }.max(20);
        let n = word.chars().count();
        if cur_len > 0 && cur_len + 1 + n > limit {
            lines.push(std::mem::take(&mut cur));
            cur_len = 0;
        }
        if cur_len > 0 {
            cur.push(' ');
            cur_len += 1;
        }
        cur.push_str(word);
        cur_len += n;
    }
    lines.push(cur);
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[track_caller]
    fn check(text: &str, first: usize, rest: usize, expect: &[&str]) {
        assert_eq!(wrap(text, first, rest), expect);
    }

    #[test]
    fn breaks_at_spaces() {
        check(
            "the quick brown fox jumps over the lazy dog again",
            20,
            25,
            &["the quick brown fox", "jumps over the lazy dog", "again"],
        );
    }

    #[test]
    fn long_words_overflow_instead_of_breaking() {
        let url = "https://example.invalid/a/very/long/path/that/does/not/fit";
        check(&format!("see {url} now"), 20, 20, &["see", url, "now"]);
    }

    #[test]
    fn empty_and_short() {
        check("", 30, 30, &[""]);
        check("short", 30, 30, &["short"]);
    }
}
