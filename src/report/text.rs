//! The ranked report as text for a terminal or a ticket: each cause with its evidence, what
//! the lines mean, the symptoms it explains and what to do; benign findings last.

use std::io::{self, Write};

use crate::rank::{Cause, Evidence, Report};
use crate::report::style::Style;
use crate::rules::Severity;

pub fn write(w: &mut dyn Write, report: &Report, style: Style) -> io::Result<()> {
    let b = &report.bundle;
    write!(
        w,
        "{} {} files, {:.1} MB",
        style.bold("raysift:"),
        b.files,
        b.bytes as f64 / 1e6
    )?;
    if let Some(win) = &report.window {
        write!(w, ", {} .. {}", win.first, win.last)?;
    }
    writeln!(w)?;
    let (real, benign): (Vec<&Cause>, Vec<&Cause>) = report
        .causes
        .iter()
        .partition(|c| c.severity != Severity::Info);
    let recognised = report.inventory.sources.keys().any(|k| *k != "unknown");
    if !recognised {
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
    } else if real.is_empty() {
        writeln!(
            w,
            "\nNo cause found above info: nothing in {} events points to a failure.",
            report.stats.events
        )?;
    }
    for c in &real {
        writeln!(w)?;
        write_cause(w, c, style)?;
    }
    if !benign.is_empty() {
        writeln!(w, "\n{}", style.bold("Benign findings (no action needed):"))?;
        for c in &benign {
            writeln!(
                w,
                "  {} [{}] {}",
                style.dim(&format!("#{}", c.rank)),
                c.id,
                c.summary
            )?;
            for e in c.evidence.iter().take(2) {
                write_evidence(w, e, style, "      ")?;
            }
        }
    }
    if !report.diagnostics.is_empty() {
        writeln!(
            w,
            "\n{} ({})",
            style.bold("Diagnostics"),
            report.diagnostics.len()
        )?;
        for d in &report.diagnostics {
            writeln!(w, "  {d}")?;
        }
    }
    Ok(())
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

fn write_cause(w: &mut dyn Write, c: &Cause, style: Style) -> io::Result<()> {
    writeln!(
        w,
        "{} {} {}  {}",
        style.bold(&format!("#{}", c.rank)),
        severity_label(c.severity, style),
        style.bold(&c.title),
        style.dim(&format!(
            "[{} {} confidence {:.2}]",
            c.id, c.code, c.confidence
        ))
    )?;
    writeln!(w, "   {}", c.summary)?;
    if !c.evidence.is_empty() {
        writeln!(w, "   {}", style.bold("Evidence:"))?;
        let mut last_meaning = "";
        for e in &c.evidence {
            if e.meaning != last_meaning && !e.meaning.is_empty() {
                writeln!(w, "     {}", style.dim(&format!("— {}", e.meaning)))?;
                last_meaning = &e.meaning;
            }
            write_evidence(w, e, style, "     ")?;
        }
    }
    if !c.symptoms.is_empty() {
        writeln!(w, "   {}", style.bold("Explains these symptoms:"))?;
        for s in &c.symptoms {
            writeln!(w, "     - {} [{}]: {}", s.title, s.id, s.summary)?;
            for e in s.evidence.iter().take(2) {
                write_evidence(w, e, style, "         ")?;
            }
        }
    }
    if !c.remediation.is_empty() {
        writeln!(w, "   {}", style.bold("What to do:"))?;
        for (i, r) in c.remediation.iter().enumerate() {
            writeln!(w, "     {}. {}", i + 1, r)?;
        }
    }
    if !c.references.is_empty() {
        writeln!(
            w,
            "   {} {}",
            style.bold("References:"),
            c.references.join(" , ")
        )?;
    }
    Ok(())
}

fn write_evidence(w: &mut dyn Write, e: &Evidence, style: Style, indent: &str) -> io::Result<()> {
    let ts = e.ts.as_deref().unwrap_or("-");
    let mut lines = e.text.lines();
    writeln!(
        w,
        "{indent}{} {} {}",
        style.dim(&format!("{}:{}", e.file, e.line)),
        style.dim(ts),
        lines.next().unwrap_or("")
    )?;
    for more in lines.take(6) {
        writeln!(w, "{indent}    {more}")?;
    }
    Ok(())
}
