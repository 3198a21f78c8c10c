//! Terminal styling: ANSI colours when, and only when, `--color` and the environment allow
//! them: `--color always|never` decides; else `NO_COLOR` turns colour off, `CLICOLOR_FORCE`
//! turns it on in a pipe (`| less -R`), and otherwise a terminal gets colour.

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
        Style::choose(None, is_tty)
    }

    /// `forced` is `--color always` (`Some(true)`) or `never` (`Some(false)`); with `auto`
    /// (`None`), `NO_COLOR` wins over `CLICOLOR_FORCE` (as anstream and most tools order
    /// them), which wins over whether the output is a terminal.
    pub fn choose(forced: Option<bool>, is_tty: bool) -> Style {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
        let color = match forced {
            Some(c) => c,
            None if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => false,
            None if set("CLICOLOR_FORCE") => true,
            None => is_tty,
        };
        Style { color }
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
