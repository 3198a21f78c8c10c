//! What Ray and KubeRay can say: every message their source can log at WARNING or above,
//! raise, or emit as a Kubernetes Warning event or status reason, as a template with its
//! component, its source line and the versions that print that wording
//! (`patterns/messages/`, made by `scripts/catalogue/extract.py`); and, for the templates that
//! have been read and judged, what a line of it means: a catalogue cause, harmless noise, or a
//! one-line meaning (`patterns/messages/classified/`, written by hand).
//!
//! The open world asks it what an unclaimed record is ([`Catalogue::best`]), `raysift explain`
//! asks it what a pasted line is ([`Catalogue::matches`]), and `raysift rules --messages`
//! searches it ([`Catalogue::search`]).
//!
//! The files are compiled in and read once, on first use. A line of them that does not parse
//! is skipped and counted ([`Catalogue::problems`]); the data's own test keeps that at zero.

mod data;
mod matcher;

use std::sync::OnceLock;

pub use data::{Class, Classified, Message, Text};
use matcher::Matcher;

include!(concat!(env!("OUT_DIR"), "/messages.rs"));

/// Every template, its classification where it has one, and the matcher over them.
pub struct Catalogue {
    messages: Vec<Message>,
    matcher: Matcher,
    problems: Vec<String>,
}

/// One template a line matched, and how much of the line its literal text covers.
#[derive(Clone, Copy, Debug)]
pub struct Match<'c> {
    pub message: &'c Message,
    /// Characters of the template's literal pieces: the more, the more specific the match.
    pub literal: usize,
}

impl Catalogue {
    /// The catalogue compiled into the binary.
    pub fn builtin() -> &'static Catalogue {
        static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
        CATALOGUE.get_or_init(|| Catalogue::from_files(EXTRACTED, CLASSIFIED))
    }

    /// A catalogue of `(file name, text)` pairs: extracted JSON lines and classified TOML.
    pub fn from_files(
        extracted: &[(&str, &'static str)],
        classified: &[(&str, &str)],
    ) -> Catalogue {
        let (messages, problems) = data::load(extracted, classified);
        let matcher = Matcher::new(&messages);
        Catalogue {
            messages,
            matcher,
            problems,
        }
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// What in the data could not be read: each names the file and line.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// Every template the line matches, the most specific first (then classified before
    /// not, then by id).
    pub fn matches(&self, line: &str) -> Vec<Match<'_>> {
        self.matches_of(line, None)
    }

    /// Every template of `projects` (`ray`, `kuberay`, `kubernetes`…; any when `None`) the
    /// line matches, the most specific first: a Ray log's line is no KubeRay message, and the
    /// other way round.
    pub fn matches_of(&self, line: &str, projects: Option<&[&str]>) -> Vec<Match<'_>> {
        let mut found: Vec<Match<'_>> = self
            .matcher
            .matching(line)
            .into_iter()
            .filter(|&(i, _)| {
                projects.is_none_or(|ps| ps.contains(&self.messages[i].project.as_ref()))
            })
            .map(|(i, literal)| Match {
                message: &self.messages[i],
                literal,
            })
            .collect();
        found.sort_by(|a, b| {
            b.literal
                .cmp(&a.literal)
                .then(b.message.class.is_some().cmp(&a.message.class.is_some()))
                .then(a.message.id.cmp(&b.message.id))
        });
        found
    }

    /// The one template of `projects` (any when `None`) that best says what the line is.
    pub fn best(&self, line: &str, projects: Option<&[&str]>) -> Option<Match<'_>> {
        self.matches_of(line, projects).into_iter().next()
    }

    /// The template with this id.
    pub fn get(&self, id: &str) -> Option<&Message> {
        self.messages
            .binary_search_by(|m| m.id.as_ref().cmp(id))
            .ok()
            .map(|i| &self.messages[i])
    }

    /// Every version of a project and language that was read (the union of the templates'
    /// versions), oldest first.
    pub fn versions_read(&self, project: &str, lang: &str) -> Vec<String> {
        let mut read: Vec<&str> = self
            .messages
            .iter()
            .filter(|m| m.project == project && m.lang == lang)
            .flat_map(|m| m.versions.iter().map(|v| v.as_ref()))
            .collect();
        read.sort_by_key(|v| version_key(v));
        read.dedup();
        read.into_iter().map(str::to_string).collect()
    }

    /// Templates whose text, id, component or meaning contains `needle` (case-insensitive),
    /// in id order.
    pub fn search(&self, needle: &str) -> Vec<&Message> {
        let needle = needle.to_lowercase();
        self.messages
            .iter()
            .filter(|m| {
                [
                    m.template.as_ref(),
                    m.id.as_ref(),
                    m.component.as_ref(),
                    m.class.as_ref().map_or("", |c| c.meaning.as_str()),
                ]
                .iter()
                .any(|s| s.to_lowercase().contains(&needle))
            })
            .collect()
    }
}

/// A version's numbers, for ordering: `v1.2.0` < `1.10.1`; a pre-release before its release.
fn version_key(v: &str) -> (Vec<u64>, bool, String) {
    let numbers = v
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .take(3)
        .map(|n| n.parse().unwrap_or(u64::MAX))
        .collect();
    let pre = ["rc", "alpha", "beta"].iter().any(|p| v.contains(p));
    (numbers, !pre, v.to_string())
}

#[cfg(test)]
mod tests;
