//! Renderers: each writes an already computed value to an `io::Write`. No computation,
//! filtering or sorting beyond layout, and never `println!`. One file per format
//! (`text.rs`, `markdown.rs`, `html.rs`; JSON is serde's), and `tests.rs` renders one
//! fixture report through all of them.

pub mod html;
pub mod inventory;
pub mod markdown;
pub mod style;
pub mod text;
pub mod timeline;
pub mod wrap;

#[cfg(test)]
pub(crate) mod tests;

use style::Style;

/// How text output is laid out for where it goes. Built by the command line.
#[derive(Clone, Copy, Debug)]
pub struct TextOptions {
    pub style: Style,
    /// Wrap prose to this many columns (a terminal); `None` writes long lines as they are.
    pub width: Option<usize>,
}
