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

/// Reasons a report lists at its top when the bundle is incomplete; the rest are counted
/// (every one is under *Diagnostics*).
pub const INCOMPLETE_SHOWN: usize = 5;

/// The sentence that opens the report of an incomplete bundle, `None` when it was read in
/// full.
pub fn incomplete_headline(report: &crate::rank::Report) -> Option<String> {
    let b = &report.bundle;
    if b.complete {
        return None;
    }
    let n = b.incomplete.len();
    Some(format!(
        "Incomplete bundle: part of it could not be read ({n} problem{}), so this report covers only what was read.",
        if n == 1 { "" } else { "s" }
    ))
}

/// What a report says when no cause rose above info: on an incomplete bundle, that the part
/// read shows none, which is no clean bill of health.
pub fn no_cause_sentence(report: &crate::rank::Report) -> String {
    if report.bundle.complete {
        format!(
            "No cause found above info: nothing in {} events points to a failure.",
            report.stats.events
        )
    } else {
        format!(
            "No cause found above info in the part of the bundle that could be read ({} events); the rest was not read, so this is no clean bill of health.",
            report.stats.events
        )
    }
}
