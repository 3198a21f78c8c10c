//! Renderers: each writes an already computed value to an `io::Write`. No computation,
//! filtering or sorting beyond layout, and never `println!`. One file per format
//! (`text.rs`, `markdown.rs`, `html.rs`; JSON is serde's), and `tests.rs` renders one
//! fixture report through all of them.

pub mod html;
pub mod inventory;
pub mod markdown;
pub mod message;
pub mod style;
pub mod text;
pub mod timeline;
pub mod wrap;

#[cfg(test)]
pub(crate) mod tests;

use style::Style;

use crate::words::count;

/// How text output is laid out for where it goes. Built by the command line.
#[derive(Clone, Copy, Debug)]
pub struct TextOptions {
    pub style: Style,
    /// Wrap prose to this many columns (a terminal); `None` writes long lines as they are.
    pub width: Option<usize>,
}

/// Objects a cause names in prose (text, markdown, HTML); the JSON has them all.
pub const OBJECTS_SHOWN: usize = 4;

/// `RayService default/fraud-scorer, Pod default/x-head-abcde and 2 more`, `None` when the
/// cause names no object.
pub fn objects_phrase(objects: &[crate::objects::ObjectRef]) -> Option<String> {
    let shown: Vec<String> = objects
        .iter()
        .take(OBJECTS_SHOWN)
        .map(ToString::to_string)
        .collect();
    let first = shown.join(", ");
    match objects.len().saturating_sub(OBJECTS_SHOWN) {
        _ if shown.is_empty() => None,
        0 => Some(first),
        more => Some(format!("{first} and {more} more")),
    }
}

/// The sentence that says a report was narrowed to some objects, `None` when it was not.
pub fn filter_sentence(report: &crate::model::Report) -> Option<String> {
    let f = report.bundle.filter.as_ref()?;
    Some(format!(
        "Only the events of {}; events that name no object are kept.",
        f.describe()
    ))
}

/// The sentence that lists the versions the bundle states, each value with the line that
/// states it (`Versions: KubeRay 1.1.1 (operator.txt:18); Ray 2.9.3 (monitor.log:4), 2.41.0
/// (pods.json:30)`); `None` when it states none. Every value is shown: two that disagree are
/// worth seeing.
pub fn versions_sentence(report: &crate::model::Report) -> Option<String> {
    let v = &report.bundle.versions;
    let products: Vec<String> = v
        .each()
        .map(|(product, shown)| {
            let values: Vec<String> = shown
                .iter()
                .map(|s| format!("{} ({}:{})", s.value, s.file, s.line))
                .collect();
            format!("{} {}", product.name(), values.join(", "))
        })
        .collect();
    (!products.is_empty()).then(|| format!("Versions: {}.", products.join("; ")))
}

/// Reasons a report lists at its top when the bundle is incomplete; the rest are counted
/// (every one is under *Diagnostics*).
pub const INCOMPLETE_SHOWN: usize = 5;

/// The sentence that opens the report of an incomplete bundle, `None` when it was read in
/// full.
pub fn incomplete_headline(report: &crate::model::Report) -> Option<String> {
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
pub fn no_cause_sentence(report: &crate::model::Report) -> String {
    if report.bundle.complete {
        format!(
            "No cause found above info: nothing in {} points to a failure.",
            count(report.inventory.lines, "line", "lines")
        )
    } else {
        format!(
            "No cause found above info in the part of the bundle that could be read ({}); the rest was not read, so this is no clean bill of health.",
            count(report.inventory.lines, "line", "lines")
        )
    }
}

/// Which marked times a report shows, so that its legend explains only the marks it uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeMarks {
    /// A time computed from a `kubectl` age (`~` before it).
    pub approximate: bool,
    /// A zone-less time read as UTC for lack of evidence (`?` after it).
    pub assumed_utc: bool,
}

impl TimeMarks {
    /// Notes the marks `e`'s time carries.
    pub fn see(&mut self, e: &crate::model::Evidence) {
        self.approximate |= e.is_approximate();
        self.assumed_utc |= e.is_assumed_utc();
    }

    /// Notes the mark a time of this quality (`TsQuality::as_str`) carries.
    pub fn see_quality(&mut self, quality: &str) {
        self.approximate |= quality == crate::event::TsQuality::Approximate.as_str();
        self.assumed_utc |= quality == crate::event::TsQuality::AssumedUtc.as_str();
    }

    /// The marks of every evidence line of `evidence`.
    pub fn of<'a>(evidence: impl IntoIterator<Item = &'a crate::model::Evidence>) -> TimeMarks {
        let mut marks = TimeMarks::default();
        for e in evidence {
            marks.see(e);
        }
        marks
    }

    /// The marks of every evidence line of a report, symptoms' included.
    pub fn of_report(report: &crate::model::Report) -> TimeMarks {
        TimeMarks::of(report.causes.iter().flat_map(|c| {
            c.evidence
                .iter()
                .chain(c.symptoms.iter().flat_map(|s| s.evidence.iter()))
        }))
    }

    /// The legend line for the marks used, `None` when no time was marked.
    pub fn legend(self) -> Option<String> {
        let mut parts = Vec::new();
        if self.approximate {
            parts.push(
                "~ marks a time computed from a kubectl age (good to a minute or so, shown to the second)",
            );
        }
        if self.assumed_utc {
            parts.push(
                "? marks a time written without a zone and read as UTC for lack of evidence (set the zone with --tz)",
            );
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!("Times: {}.", parts.join("; ")))
    }
}

/// An evidence line's time as the text, markdown and HTML reports show it: `~` before a time
/// computed from a `kubectl` age, shown to the second (an age is no finer; the JSON keeps the
/// computed value), and `?` after a zone-less time read as UTC for lack of evidence. `None`
/// when the line has no time.
pub fn shown_time(e: &crate::model::Evidence) -> Option<String> {
    Some(mark_time(e.ts.as_deref()?, e.ts_quality))
}

/// Where an evidence line is: `file:line`, and `(also file:line)` when its process wrote the
/// same record to a second file (`Evidence::also_in`).
pub fn shown_place(e: &crate::model::Evidence) -> String {
    match &e.also_in {
        Some(also) => format!("{}:{} (also {also})", e.file, e.line),
        None => format!("{}:{}", e.file, e.line),
    }
}

/// A time (RFC 3339, or the time of day cut from one) marked for its quality
/// (`TsQuality::as_str`) as `shown_time` says.
pub fn mark_time(ts: &str, quality: &str) -> String {
    if quality == crate::event::TsQuality::Approximate.as_str() {
        return match ts.find('.') {
            Some(dot) if ts.ends_with('Z') => format!("~{}Z", &ts[..dot]),
            Some(dot) => format!("~{}", &ts[..dot]),
            None => format!("~{ts}"),
        };
    }
    if quality == crate::event::TsQuality::AssumedUtc.as_str() {
        return format!("{ts}?");
    }
    ts.to_string()
}

/// Files whose zone-less times were read as UTC for lack of zone evidence, shown by name.
pub const ASSUMED_ZONE_FILES_SHOWN: usize = 3;

/// The header sentence naming the files whose zone was assumed (UTC, no evidence), `None`
/// when every zone was known, inferred or given.
pub fn assumed_zone_sentence(report: &crate::model::Report) -> Option<String> {
    let files: Vec<&str> = report
        .inventory
        .zones
        .iter()
        .filter(|z| z.quality == crate::event::TsQuality::AssumedUtc.as_str())
        .flat_map(|z| z.files.iter().map(String::as_str))
        .collect();
    if files.is_empty() {
        return None;
    }
    let n = files.len();
    let mut named = files
        .iter()
        .take(ASSUMED_ZONE_FILES_SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if n > ASSUMED_ZONE_FILES_SHOWN {
        named.push_str(&format!(" and {} more", n - ASSUMED_ZONE_FILES_SHOWN));
    }
    Some(format!(
        "Zone assumed: {n} file{} write{} times without a zone and nothing in the bundle shows which, so they are read as UTC (set it with --tz): {named}.",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
    ))
}
