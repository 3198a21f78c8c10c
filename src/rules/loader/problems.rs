//! The problems of a pattern file. A [`LoadError`] names the file, the key
//! (`signal[1].text[0]`), the line when known and what is wrong; `Problems` gathers those of
//! one file so that one run reports them all, and then gives each the line of its key, found
//! by walking the key's path in a span-keeping parse of the file (`toml_edit`).
//!
//! Invariant: a problem's line is that of its key or, for a key the file does not have (a
//! missing one), that of its nearest table; none when not even the key's first part is in
//! the file.

/// A pattern file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub origin: String,
    pub key: String,
    /// The line of the key (or of the syntax error) in the file, from 1, when known.
    pub line: Option<usize>,
    pub problem: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.problem)
    }
}

impl std::error::Error for LoadError {}

/// The problems of one file, gathered so that one run reports them all.
pub(super) struct Problems<'a> {
    pub(super) origin: &'a str,
    pub(super) list: Vec<LoadError>,
}

impl Problems<'_> {
    pub(super) fn add(&mut self, key: impl Into<String>, problem: impl Into<String>) {
        self.list.push(LoadError {
            origin: self.origin.to_string(),
            key: key.into(),
            line: None,
            problem: problem.into(),
        });
    }

    /// The problems, each given the line of its key in `text`.
    pub(super) fn into_lines(self, text: &str) -> Vec<LoadError> {
        let doc = toml_edit::ImDocument::parse(text).ok();
        self.list
            .into_iter()
            .map(|mut e| {
                if e.line.is_none() {
                    e.line = doc.as_ref().and_then(|d| key_line(text, d, &e.key));
                }
                e
            })
            .collect()
    }
}

/// The line (from 1) of a problem's key in the file: `signal[1].text[0]` is the line of the
/// second `[[signal]]`'s first `text` regex; a key that is not in the file (a missing one)
/// gives the line of its nearest table, or the first line at the top.
fn key_line(text: &str, doc: &toml_edit::ImDocument<&str>, key: &str) -> Option<usize> {
    use toml_edit::{Item, Table, TableLike, Value};
    enum Node<'a> {
        Item(&'a Item),
        Table(&'a Table),
        Value(&'a Value),
    }
    let mut node = Node::Table(doc.as_table());
    let mut span: Option<std::ops::Range<usize>> = None;
    for part in key.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let table: Option<&dyn TableLike> = match &node {
            Node::Item(i) => i.as_table_like(),
            Node::Table(t) => Some(*t as &dyn TableLike),
            Node::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
        };
        let Some((k, item)) = table.and_then(|t| t.get_key_value(name)) else {
            break;
        };
        span = k.span().or_else(|| item.span()).or(span);
        node = Node::Item(item);
        let Some(i) = index else { continue };
        match item {
            Item::ArrayOfTables(a) => match a.get(i) {
                Some(t) => {
                    span = t.span().or(span);
                    node = Node::Table(t);
                }
                None => break,
            },
            Item::Value(Value::Array(a)) => match a.get(i) {
                Some(v) => {
                    span = v.span().or(span);
                    node = Node::Value(v);
                }
                None => break,
            },
            _ => break,
        }
    }
    // A top-level key that is not in the file: the file's first line.
    let start = span.map_or(0, |s| s.start);
    Some(text.get(..start).map_or(1, |t| t.matches('\n').count() + 1))
}
