//! Diagnostics: content problems found while reading a bundle. They are data, shown in the
//! report; they never stop a run. Only an unopenable bundle is an error (`bundle::OpenError`).

use serde::Serialize;

/// One problem with the bundle's content, named by file and, when known, line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Diagnostic {
    /// Path of the file inside the bundle (empty while a parser is still running; the
    /// pipeline fills it in).
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub problem: String,
}

impl Diagnostic {
    pub fn at_line(line: u32, problem: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: String::new(),
            line: Some(line),
            problem: problem.into(),
        }
    }

    pub fn for_file(file: impl Into<String>, problem: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            line: None,
            problem: problem.into(),
        }
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.problem),
            None => write!(f, "{}: {}", self.file, self.problem),
        }
    }
}
