//! The diff as text: one line a change, numbered, the one that matters most first; the
//! changes placed under a new cause (of the kind it follows) indented beneath it. A diff with
//! no change is the one line `no difference`.

use std::io::{self, Write};

use super::{Change, Diff, Kind};

/// Longest value shown on a line; the JSON holds it whole.
const MAX_VALUE: usize = 100;

/// Writes `diff` as text.
pub fn text(out: &mut impl Write, diff: &Diff) -> io::Result<()> {
    if diff.same {
        return writeln!(out, "no difference");
    }
    let n = diff.changes.len();
    let new_causes = diff
        .changes
        .iter()
        .filter(|c| {
            c.kind == Kind::CauseAppeared && c.severity.is_some_and(|s| s.as_str() != "info")
        })
        .count();
    write!(out, "{n} difference{}", if n == 1 { "" } else { "s" })?;
    match new_causes {
        0 => writeln!(out, ", no new cause")?,
        1 => writeln!(out, ", 1 new cause")?,
        k => writeln!(out, ", {k} new causes")?,
    }
    for (which, b) in [("OLD", &diff.old), ("NEW", &diff.new)] {
        let causes = if b.causes.is_empty() {
            "no cause".to_string()
        } else {
            b.causes.join(", ")
        };
        write!(out, "  {which}  {}  ({causes})", b.path)?;
        if !b.complete {
            write!(out, "  [read in part]")?;
        }
        writeln!(out)?;
    }
    writeln!(out)?;
    let mut number = 0;
    for c in &diff.changes {
        if c.explains.is_some() {
            writeln!(out, "    ↳ {}", line(c))?;
        } else {
            number += 1;
            writeln!(out, "{number:>2}. {}", line(c))?;
            if c.kind == Kind::CauseAppeared || c.kind == Kind::CauseGone {
                if let Some(t) = &c.title {
                    writeln!(out, "    {t}")?;
                }
            }
        }
    }
    Ok(())
}

/// A change on one line.
pub fn line(c: &Change) -> String {
    let object = c.object.as_deref().unwrap_or("");
    let values = format!("{} → {}", value(c.old.as_deref()), value(c.new.as_deref()));
    let severity = c.severity.map_or("", |s| s.as_str());
    match c.kind {
        Kind::CauseAppeared => with_object(format!("new cause [{severity}] {}", c.what), object),
        Kind::CauseGone => with_object(format!("cause gone [{severity}] {}", c.what), object),
        Kind::StateWorsened if c.what == "state" => {
            format!(
                "worse: {object}: {} (no failure in OLD)",
                value(c.new.as_deref())
            )
        }
        Kind::StateWorsened => format!("worse: {object} {}: {values}", c.what),
        Kind::VersionChanged => format!("{} version: {values}", c.what),
        Kind::ImageChanged => format!("image {}: {values}", c.what),
        Kind::SpecChanged => format!("spec of {object}: {}: {values}", c.what),
        Kind::TemplateAppeared => format!(
            "new {} template ({}×): {}",
            c.level.unwrap_or("error"),
            c.count.unwrap_or(0),
            cut(&c.what)
        ),
        Kind::ObjectAppeared => format!("new object: {object}"),
        Kind::ObjectGone => format!("object gone: {object}"),
    }
}

fn with_object(head: String, object: &str) -> String {
    if object.is_empty() {
        head
    } else {
        format!("{head} on {object}")
    }
}

fn value(v: Option<&str>) -> String {
    match v {
        None => "(none)".to_string(),
        Some(v) => cut(v),
    }
}

/// A value's first line, cut to [`MAX_VALUE`] characters.
fn cut(v: &str) -> String {
    let first = v.lines().next().unwrap_or("");
    let more = first.len() < v.trim_end().len();
    let mut s: String = first.chars().take(MAX_VALUE).collect();
    if more || first.chars().count() > MAX_VALUE {
        s.push_str(" …");
    }
    s
}
