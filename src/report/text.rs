//! The ranked report as text for a terminal or a ticket: each cause with its evidence, what
//! the lines mean, the symptoms it explains and what to do; benign findings last. Also the
//! one-line summary of `--quiet`.

use std::io::{self, Write};

use crate::model::{Cause, Evidence, Report};
use crate::report::style::Style;
use crate::report::timeline::NO_TIME;
use crate::report::wrap::wrap;
use crate::report::{TextOptions, TimeMarks};
use crate::rules::Severity;

pub fn write(w: &mut dyn Write, report: &Report, opts: TextOptions) -> io::Result<()> {
    let style = opts.style;
    let b = &report.bundle;
    let mut head = format!(
        "{}, {}",
        crate::words::count(b.files as u64, "file", "files"),
        crate::words::size(b.bytes)
    );
    if let Some(win) = &report.window {
        head.push_str(&format!(", {} .. {}", win.first, win.last));
    }
    for (i, line) in wrap_opt(opts, &head, 9, 9).iter().enumerate() {
        if i == 0 {
            writeln!(w, "{} {line}", style.bold("raysift:"))?;
        } else {
            writeln!(w, "         {line}")?;
        }
    }
    if let Some(versions) = crate::report::versions_sentence(report) {
        para(w, opts, "         ", "           ", &versions)?;
    }
    if let Some(headline) = crate::report::incomplete_headline(report) {
        writeln!(w)?;
        para(w, opts, "", "", &style.bold(&headline))?;
        let reasons = &report.bundle.incomplete;
        for d in reasons.iter().take(crate::report::INCOMPLETE_SHOWN) {
            para(w, opts, "  ", "    ", &d.to_string())?;
        }
        if reasons.len() > crate::report::INCOMPLETE_SHOWN {
            writeln!(
                w,
                "  … and {} more (see Diagnostics)",
                reasons.len() - crate::report::INCOMPLETE_SHOWN
            )?;
        }
    }
    if let Some(filter) = crate::report::filter_sentence(report) {
        writeln!(w)?;
        para(w, opts, "", "", &filter)?;
    }
    // After what was not read: which times are less sure than they look.
    if let Some(zones) = crate::report::assumed_zone_sentence(report) {
        writeln!(w)?;
        para(w, opts, "", "", &zones)?;
    }
    let (real, benign): (Vec<&Cause>, Vec<&Cause>) = report
        .causes
        .iter()
        .partition(|c| c.severity != Severity::Info);
    // "Recognised nothing" only when nothing was used either: a file a cause cites as
    // evidence (a pasted `kubectl get pods` table among other lines) was understood.
    let recognised = report.inventory.sources.keys().any(|k| *k != "unknown");
    if !recognised && !uses_any_file(report) {
        writeln!(
            w,
            "\nraysift recognised no KubeRay, Ray or Kubernetes file in this bundle. It found {} file{}:",
            report.inventory.files,
            if report.inventory.files == 1 { "" } else { "s" }
        )?;
        for f in report.inventory.file_list.iter().take(20) {
            writeln!(w, "  {} ({} bytes, {} lines)", f.path, f.bytes, f.lines)?;
        }
        if report.inventory.files > 20 {
            writeln!(w, "  … and {} more", report.inventory.files - 20)?;
        }
        writeln!(w, "Expected: operator logs, Ray logs (/tmp/ray/session_latest/logs), kubectl describe or get output.")?;
    }
    if real.is_empty() {
        writeln!(w)?;
        para(w, opts, "", "", &crate::report::no_cause_sentence(report))?;
    }
    let mut marks = TimeMarks::default();
    for c in &real {
        writeln!(w)?;
        write_cause(w, c, opts, &mut marks)?;
    }
    if !benign.is_empty() {
        writeln!(w, "\n{}", style.bold("Benign findings (no action needed):"))?;
        for c in &benign {
            let rank = format!("#{}", c.rank);
            let text = format!("[{}] {}", c.id, c.summary);
            let lines = wrap_opt(opts, &text, 2 + rank.len() + 1, 6);
            for (i, line) in lines.iter().enumerate() {
                if i == 0 {
                    writeln!(w, "  {} {line}", style.dim(&rank))?;
                } else {
                    writeln!(w, "      {line}")?;
                }
            }
            for e in c.evidence.iter().take(2) {
                write_evidence(w, e, opts, "      ", &mut marks)?;
            }
        }
    }
    if let Some(legend) = marks.legend() {
        writeln!(w)?;
        para(w, opts, "", "", &legend)?;
    }
    if !report.diagnostics.is_empty() {
        writeln!(
            w,
            "\n{} ({})",
            style.bold("Diagnostics"),
            report.diagnostics.len()
        )?;
        for d in &report.diagnostics {
            para(w, opts, "  ", "    ", &d.to_string())?;
        }
    }
    Ok(())
}

/// Whether any cause or symptom cites a line of the bundle as evidence.
fn uses_any_file(report: &Report) -> bool {
    report
        .causes
        .iter()
        .any(|c| !c.evidence.is_empty() || c.symptoms.iter().any(|s| !s.evidence.is_empty()))
}

/// One line for scripts and prompts: the top cause and the first object it concerns
/// (`[RayService default/fraud-scorer]`), or that there is none; on an incomplete
/// bundle, followed by `; incomplete bundle: ` and the first reason.
pub fn write_summary_line(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut incomplete = String::new();
    if let Some(first) = report.bundle.incomplete.first() {
        incomplete = format!("; incomplete bundle: {first}");
        let more = report.bundle.incomplete.len() - 1;
        if more > 0 {
            incomplete.push_str(&format!(" (and {more} more)"));
        }
    }
    match report.causes.iter().find(|c| c.severity != Severity::Info) {
        Some(c) => writeln!(
            w,
            "#{} {} {} ({}, confidence {:.2}): {}{}{incomplete}",
            c.rank,
            c.severity.as_str(),
            c.id,
            c.code,
            c.confidence,
            c.title,
            c.objects
                .first()
                .map_or(String::new(), |o| format!(" [{o}]"))
        ),
        None => {
            let benign = report.causes.len();
            writeln!(
                w,
                "no cause ({} lines, {} benign finding{}){incomplete}",
                report.inventory.lines,
                benign,
                if benign == 1 { "" } else { "s" }
            )
        }
    }
}

fn severity_label(s: Severity, style: Style) -> String {
    let text = s.as_str().to_ascii_uppercase();
    match s {
        Severity::Critical => style.level(crate::event::Level::Critical, &text),
        Severity::Error => style.level(crate::event::Level::Error, &text),
        Severity::Warning => style.level(crate::event::Level::Warning, &text),
        Severity::Info => text,
    }
}

/// Wraps to the terminal width when there is one (`first_indent` is what precedes the first
/// line, `indent` the width of the others' indent); otherwise one line.
fn wrap_opt(opts: TextOptions, text: &str, first_indent: usize, indent: usize) -> Vec<String> {
    match opts.width {
        Some(width) => wrap(
            text,
            width.saturating_sub(first_indent),
            width.saturating_sub(indent),
        ),
        None => vec![text.to_string()],
    }
}

/// A paragraph: `first` before the first line, `rest` before the others.
fn para(
    w: &mut dyn Write,
    opts: TextOptions,
    first: &str,
    rest: &str,
    text: &str,
) -> io::Result<()> {
    for (i, line) in wrap_opt(opts, text, first.chars().count(), rest.chars().count())
        .iter()
        .enumerate()
    {
        writeln!(w, "{}{line}", if i == 0 { first } else { rest })?;
    }
    Ok(())
}

fn write_cause(
    w: &mut dyn Write,
    c: &Cause,
    opts: TextOptions,
    marks: &mut TimeMarks,
) -> io::Result<()> {
    let style = opts.style;
    let rank = format!("#{}", c.rank);
    let tag = format!("[{} {} confidence {:.2}]", c.id, c.code, c.confidence);
    let head_len = rank.len() + c.severity.as_str().len() + c.title.chars().count() + tag.len() + 4;
    match opts.width {
        Some(width) if head_len > width => {
            // Too long for one line: the title wraps, the tag goes below it.
            let first = rank.len() + c.severity.as_str().len() + 2;
            for (i, line) in wrap(
                &c.title,
                width.saturating_sub(first),
                width.saturating_sub(3),
            )
            .iter()
            .enumerate()
            {
                if i == 0 {
                    writeln!(
                        w,
                        "{} {} {}",
                        style.bold(&rank),
                        severity_label(c.severity, style),
                        style.bold(line)
                    )?;
                } else {
                    writeln!(w, "   {}", style.bold(line))?;
                }
            }
            writeln!(w, "   {}", style.dim(&tag))?;
        }
        _ => writeln!(
            w,
            "{} {} {}  {}",
            style.bold(&rank),
            severity_label(c.severity, style),
            style.bold(&c.title),
            style.dim(&tag)
        )?,
    }
    para(w, opts, "   ", "   ", &c.summary)?;
    if let Some(objects) = crate::report::objects_phrase(&c.objects) {
        para(w, opts, "   ", "   ", &format!("Concerns: {objects}"))?;
    }
    if !c.evidence.is_empty() {
        writeln!(w, "   {}", style.bold("Evidence:"))?;
        let mut last_meaning = "";
        // A message repeated word for word is shown once, with how many times and when.
        let mut i = 0;
        while i < c.evidence.len() {
            let e = &c.evidence[i];
            let same = c.evidence[i..]
                .iter()
                .take_while(|o| o.text == e.text && o.meaning == e.meaning)
                .count();
            i += same;
            if e.meaning != last_meaning && !e.meaning.is_empty() {
                for (i, line) in wrap_opt(opts, &e.meaning, 7, 7).iter().enumerate() {
                    let line = if i == 0 {
                        format!("— {line}")
                    } else {
                        format!("  {line}")
                    };
                    writeln!(w, "     {}", style.dim(&line))?;
                }
                last_meaning = &e.meaning;
            }
            write_evidence(w, e, opts, "     ", marks)?;
            if same > 1 {
                let last = &c.evidence[i - 1];
                marks.see(last);
                let span = match (
                    crate::report::shown_time(e),
                    crate::report::shown_time(last),
                ) {
                    (None, None) => String::new(),
                    (first, last) => {
                        let when = |t: Option<String>| t.unwrap_or_else(|| NO_TIME.to_string());
                        format!(", {} – {}", when(first), when(last))
                    }
                };
                let note = format!("(×{same}{span}; the last at {}:{})", last.file, last.line);
                for line in wrap_opt(opts, &note, 9, 9) {
                    writeln!(w, "         {}", style.dim(&line))?;
                }
            }
        }
    }
    if !c.symptoms.is_empty() {
        writeln!(w, "   {}", style.bold("Explains these symptoms:"))?;
        for s in &c.symptoms {
            para(
                w,
                opts,
                "     - ",
                "       ",
                &format!("{} [{}]: {}", s.title, s.id, s.summary),
            )?;
            for e in s.evidence.iter().take(2) {
                write_evidence(w, e, opts, "         ", marks)?;
            }
        }
    }
    if !c.remediation.is_empty() {
        writeln!(w, "   {}", style.bold("What to do:"))?;
        for (i, r) in c.remediation.iter().enumerate() {
            para(w, opts, &format!("     {}. ", i + 1), "        ", r)?;
        }
    }
    if !c.references.is_empty() {
        let text = c.references.join(" , ");
        for (i, line) in wrap_opt(opts, &text, 15, 5).iter().enumerate() {
            if i == 0 {
                writeln!(w, "   {} {line}", style.bold("References:"))?;
            } else {
                writeln!(w, "     {line}")?;
            }
        }
    }
    Ok(())
}

fn write_evidence(
    w: &mut dyn Write,
    e: &Evidence,
    opts: TextOptions,
    indent: &str,
    marks: &mut TimeMarks,
) -> io::Result<()> {
    let style = opts.style;
    marks.see(e);
    let ts = crate::report::shown_time(e).unwrap_or_else(|| NO_TIME.to_string());
    let ts = ts.as_str();
    let place = crate::report::shown_place(e);
    let mut lines = e.text.lines();
    let first = lines.next().unwrap_or("");
    let prefix_len = indent.chars().count() + place.chars().count() + ts.chars().count() + 2;
    let cont = format!("{indent}    ");
    let room = opts
        .width
        .map_or(usize::MAX, |w| w.saturating_sub(prefix_len));
    if room < 30 {
        // A long place leaves no room: the text starts on the next line.
        writeln!(w, "{indent}{} {}", style.dim(&place), style.dim(ts))?;
        para(w, opts, &cont, &cont, first)?;
        for more in lines {
            para(w, opts, &cont, &cont, more)?;
        }
        return Ok(());
    }
    let wrapped = wrap_opt(opts, first, prefix_len, cont.chars().count());
    for (i, line) in wrapped.iter().enumerate() {
        if i == 0 {
            writeln!(w, "{indent}{} {} {line}", style.dim(&place), style.dim(ts))?;
        } else {
            writeln!(w, "{cont}{line}")?;
        }
    }
    for more in lines {
        para(w, opts, &cont, &cont, more)?;
    }
    Ok(())
}
