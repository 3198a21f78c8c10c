//! Reading the catalogue's files: the extracted JSON lines and the classified TOML tables
//! (`patterns/messages/README.md` is the format).

use std::borrow::Cow;

use serde::Deserialize;

/// Text of the compiled-in data, borrowed from it where JSON escapes nothing: some 8,000
/// templates' fields as owned strings were 7 MB of a run's peak.
pub type Text = Cow<'static, str>;

/// One template: a wording that some versions of Ray or KubeRay print.
#[derive(Clone, Debug)]
pub struct Message {
    pub id: Text,
    pub project: Text,
    pub lang: Text,
    pub component: Text,
    /// `critical`, `fatal`, `error`, `warning`, `exception`, `check`, `event`, `reason`,
    /// `condition` or `returned`.
    pub level: Text,
    /// The wording, every variable part written `{}`.
    pub template: Text,
    pub exception: Option<String>,
    pub reason: Option<String>,
    /// `path:line` in the project's repository.
    pub site: Text,
    /// The versions read that have this wording, oldest first (borrowed too: some 9,000
    /// templates name some 80,000 versions).
    pub versions: Vec<Text>,
    /// How it has been judged, when it has been.
    pub class: Option<Classified>,
}

/// A line of an extracted file, as written; its strings borrowed from the text.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    project: Cow<'a, str>,
    #[serde(borrow)]
    lang: Cow<'a, str>,
    #[serde(borrow)]
    component: Cow<'a, str>,
    #[serde(borrow)]
    level: Cow<'a, str>,
    #[serde(borrow)]
    template: Cow<'a, str>,
    #[serde(default)]
    exception: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(borrow)]
    site: Cow<'a, str>,
    #[serde(default, borrow)]
    versions: Vec<Cow<'a, str>>,
}

impl From<Line<'static>> for Message {
    fn from(l: Line<'static>) -> Message {
        Message {
            id: l.id,
            project: l.project,
            lang: l.lang,
            component: l.component,
            level: l.level,
            template: l.template,
            exception: l.exception,
            reason: l.reason,
            site: l.site,
            versions: l.versions,
            class: None,
        }
    }
}

/// What a template means, as judged by hand.
#[derive(Clone, Debug, PartialEq)]
pub struct Classified {
    pub class: Class,
    /// What happened, and what to look at next.
    pub meaning: String,
    /// A line the template matches, and where it comes from.
    pub sample: String,
    pub sample_from: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Class {
    /// A line of it decides a catalogue cause.
    Cause(String),
    /// Harmless: noise, or a normal shut-down or scale-down path; why.
    Benign(String),
    /// Neither: the meaning is what there is to say.
    Meaning,
}

impl Class {
    pub fn as_str(&self) -> &str {
        match self {
            Class::Cause(_) => "cause",
            Class::Benign(_) => "benign",
            Class::Meaning => "meaning",
        }
    }
}

/// A `[[message]]` table of a classified file, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    class: String,
    #[serde(default)]
    cause: Option<String>,
    meaning: String,
    #[serde(default)]
    why: Option<String>,
    sample: String,
    sample_from: String,
}

#[derive(Deserialize)]
struct ClassifiedFile {
    #[serde(default)]
    message: Vec<Entry>,
}

/// Every template, sorted by id with duplicates dropped, each with its classification; and
/// what could not be read, each naming its file (and line).
pub(super) fn load(
    extracted: &[(&str, &'static str)],
    classified: &[(&str, &str)],
) -> (Vec<Message>, Vec<String>) {
    let mut problems = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    for (file, text) in extracted {
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Line<'static>>(line) {
                Ok(m) => messages.push(m.into()),
                Err(e) => problems.push(format!("{file}:{}: {e}", n + 1)),
            }
        }
    }
    messages.sort_by(|a, b| a.id.cmp(&b.id));
    messages.dedup_by(|a, b| a.id == b.id);
    for (file, text) in classified {
        let entries = match toml::from_str::<ClassifiedFile>(text) {
            Ok(f) => f.message,
            Err(e) => {
                problems.push(format!("{file}: {e}"));
                continue;
            }
        };
        for entry in entries {
            let id = entry.id.clone();
            match classify(entry) {
                Ok(c) => match messages.binary_search_by(|m| m.id.as_ref().cmp(id.as_str())) {
                    Ok(i) if messages[i].class.is_some() => {
                        problems.push(format!("{file}: {id} is classified twice"));
                    }
                    Ok(i) => messages[i].class = Some(c),
                    Err(_) => problems.push(format!("{file}: {id} is no extracted template")),
                },
                Err(why) => problems.push(format!("{file}: {id}: {why}")),
            }
        }
    }
    (messages, problems)
}

/// A table's judgement, checked: a cause names its id, a benign one says why.
fn classify(e: Entry) -> Result<Classified, String> {
    let class = match (e.class.as_str(), e.cause, e.why) {
        ("cause", Some(cause), _) => Class::Cause(cause),
        ("cause", None, _) => return Err("class = \"cause\" without a `cause`".into()),
        ("benign", _, Some(why)) => Class::Benign(why),
        ("benign", _, None) => return Err("class = \"benign\" without a `why`".into()),
        ("meaning", _, _) => Class::Meaning,
        (other, _, _) => return Err(format!("unknown class {other:?}")),
    };
    Ok(Classified {
        class,
        meaning: e.meaning,
        sample: e.sample,
        sample_from: e.sample_from,
    })
}
