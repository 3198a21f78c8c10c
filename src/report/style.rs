//! Terminal styling: ANSI colours when, and only when, the caller says the output is a
//! colour-capable terminal (a TTY without `NO_COLOR`).

use crate::event::Level;

/// Whether to colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub const PLAIN: Style = Style { color: false };

    /// Colour for a terminal that allows it: `NO_COLOR` (any value) turns it off.
    pub fn for_terminal(is_tty: bool) -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: is_tty && !no_color,
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn level(self, level: Level, text: &str) -> String {
        match level {
            Level::Critical => self.paint("1;31", text),
            Level::Error => self.paint("31", text),
            Level::Warning => self.paint("33", text),
            Level::Debug | Level::Trace => self.paint("2", text),
            Level::Info => text.to_string(),
        }
    }
}
