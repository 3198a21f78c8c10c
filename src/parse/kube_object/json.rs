//! The JSON flattener: a tokenizer that keeps line numbers, driven by an explicit stack.
//! Every top-level value is a document; every scalar, and every empty `{}` or `[]`, becomes a
//! leaf whose message is its text from its key on. It is lenient: trailing commas and bare
//! words are accepted, and a string may hold a raw newline.
//!
//! Invariant: it never recurses; nesting deeper than `MAX_DEPTH` stops the read with an
//! error, and the caller keeps what was read and the lines after it as raw leaves.

use super::{Leaf, MAX_DEPTH};
use crate::parse::tree::{join_path, norm_key};

struct Frame {
    object: bool,
    path: String,
    key_pos: usize,
    key_line: u32,
    n: usize,
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
    line: u32,
}

/// Every top-level value is a document. On a syntax error, returns what was read and
/// the line and problem.
pub(super) fn flatten(input: &[u8]) -> (Vec<Vec<Leaf>>, Option<(u32, String)>) {
    let mut cur = Cursor {
        s: input,
        pos: 0,
        line: 1,
    };
    let mut docs = Vec::new();
    loop {
        cur.ws();
        if cur.pos >= input.len() {
            return (docs, None);
        }
        let mut leaves = Vec::new();
        let res = cur.document(&mut leaves);
        docs.push(leaves);
        if let Err(problem) = res {
            return (docs, Some((cur.line, problem)));
        }
    }
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.pos += 1;
        }
    }

    fn text(&self, from: usize) -> String {
        String::from_utf8_lossy(self.s.get(from..self.pos).unwrap_or(&[])).into_owned()
    }

    fn document(&mut self, leaves: &mut Vec<Leaf>) -> Result<(), String> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut path = String::new();
        let (mut key_pos, mut key_line) = (self.pos, self.line);
        loop {
            self.ws();
            match self.peek() {
                None => return Err("JSON ends inside a value".to_string()),
                Some(open @ (b'{' | b'[')) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(format!("JSON nested deeper than {MAX_DEPTH} levels"));
                    }
                    self.pos += 1;
                    let path = std::mem::take(&mut path);
                    let object = open == b'{';
                    stack.push(Frame {
                        object,
                        path,
                        key_pos,
                        key_line,
                        n: 0,
                    });
                }
                Some(b'"') => {
                    let value = self.string()?;
                    let message = self.text(key_pos);
                    leaves.push(Leaf::new(
                        std::mem::take(&mut path),
                        Some(value),
                        key_line,
                        message,
                    ));
                }
                Some(_) => {
                    let value = self.literal()?;
                    let message = self.text(key_pos);
                    leaves.push(Leaf::new(
                        std::mem::take(&mut path),
                        Some(value),
                        key_line,
                        message,
                    ));
                }
            }
            // Find the next value: close finished containers, read a separator and a key.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(());
                };
                self.ws();
                let close = if top.object { b'}' } else { b']' };
                if self.peek() == Some(close) {
                    self.pos += 1;
                    if let Some(done) = stack.pop() {
                        if done.n == 0 {
                            let empty = if done.object { "{}" } else { "[]" };
                            let message = self.text(done.key_pos);
                            leaves.push(Leaf::new(
                                done.path,
                                Some(empty.to_string()),
                                done.key_line,
                                message,
                            ));
                        }
                    }
                    continue;
                }
                if top.n > 0 {
                    if self.peek() != Some(b',') {
                        return Err(format!("expected `,` or `{}` in JSON", close as char));
                    }
                    self.pos += 1;
                    self.ws();
                    if self.peek() == Some(close) {
                        // A trailing comma: lenient.
                        continue;
                    }
                }
                top.n += 1;
                (key_pos, key_line) = (self.pos, self.line);
                if top.object {
                    if self.peek() != Some(b'"') {
                        return Err("expected a key in JSON object".to_string());
                    }
                    let key = self.string()?;
                    self.ws();
                    if self.peek() != Some(b':') {
                        return Err("expected `:` after a JSON key".to_string());
                    }
                    self.pos += 1;
                    path = join_path(&top.path, &norm_key(&key));
                } else {
                    path = format!("{}[{}]", top.path, top.n - 1);
                }
                break;
            }
        }
    }

    /// A number, `true`, `false`, `null` (or any bare word: lenient).
    fn literal(&mut self) -> Result<String, String> {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' | b':') {
                break;
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(format!(
                "unexpected `{}` in JSON",
                self.peek().unwrap_or(b'?') as char
            ));
        }
        Ok(self.text(start))
    }

    /// A string with its escapes resolved. Starts at the opening quote.
    fn string(&mut self) -> Result<String, String> {
        self.pos += 1;
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err("JSON string not closed".to_string());
            };
            self.pos += 1;
            match b {
                b'"' => return Ok(String::from_utf8_lossy(&buf).into_owned()),
                b'\\' => {
                    let Some(esc) = self.peek() else { continue };
                    self.pos += 1;
                    let c = match esc {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => self.unicode_escape(),
                        other => other as char,
                    };
                    let mut tmp = [0u8; 4];
                    buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
                b'\n' => {
                    // Not valid JSON, but the line count must stay right.
                    self.line += 1;
                    buf.push(b);
                }
                _ => buf.push(b),
            }
        }
    }

    /// `\uXXXX`, joining a surrogate pair; a broken escape becomes U+FFFD.
    fn unicode_escape(&mut self) -> char {
        let hex4 = |cur: &mut Self| -> Option<u32> {
            let digits = cur.s.get(cur.pos..cur.pos + 4)?;
            let v = u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()?;
            cur.pos += 4;
            Some(v)
        };
        let Some(hi) = hex4(self) else {
            return '\u{fffd}';
        };
        if (0xd800..0xdc00).contains(&hi) && self.s.get(self.pos..self.pos + 2) == Some(b"\\u") {
            self.pos += 2;
            if let Some(lo) = hex4(self) {
                let c = 0x10000 + ((hi - 0xd800) << 10) + (lo.wrapping_sub(0xdc00) & 0x3ff);
                return char::from_u32(c).unwrap_or('\u{fffd}');
            }
        }
        char::from_u32(hi).unwrap_or('\u{fffd}')
    }
}
