//! The ranked report as GitHub-flavoured markdown, to paste into an issue or a ticket: a
//! summary table of the causes, then each cause with its evidence in fenced blocks
//! (`file:line`, time, text), symptoms, what to do and references; long evidence folds into
//! `<details>`; the bundle inventory and the diagnostics close the report.

use std::io::{self, Write};

use crate::model::{Cause, Evidence, Report};
use crate::rules::Severity;
use crate::words::count;

/// Evidence lines of one meaning shown before the rest fold into `<details>`.
const SHOWN_PER_MEANING: usize = 2;

pub fn write(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let b = &report.bundle;
    writeln!(w, "# raysift report\n")?;
    write!(
        w,
        "**Bundle:** {} — {}, {}",
        code(&b.path),
        crate::words::count(b.files as u64, "file", "files"),
        crate::words::size(b.bytes)
    )?;
    if let Some(win) = &report.window {
        write!(w, ", events from {} to {}", win.first, win.last)?;
    }
    writeln!(
        w,
        " ({} lines, {} rules).\n",
        report.inventory.lines, report.stats.rules
    )?;
    if let Some(headline) = crate::report::incomplete_headline(report) {
        writeln!(w, "> [!WARNING]\n> **{headline}**\n>")?;
        let reasons = &report.bundle.incomplete;
        for d in reasons.iter().take(crate::report::INCOMPLETE_SHOWN) {
            writeln!(w, "> - {}", inline(&d.to_string()))?;
        }
        if reasons.len() > crate::report::INCOMPLETE_SHOWN {
            writeln!(
                w,
                "> - … and {} more (see Diagnostics)",
                reasons.len() - crate::report::INCOMPLETE_SHOWN
            )?;
        }
        writeln!(w)?;
    }
    if let Some(versions) = crate::report::versions_sentence(report) {
        writeln!(w, "{}\n", inline(&versions))?;
    }
    if let Some(filter) = crate::report::filter_sentence(report) {
        writeln!(w, "{}\n", inline(&filter))?;
    }
    if let Some(zones) = crate::report::assumed_zone_sentence(report) {
        writeln!(w, "{}\n", inline(&zones))?;
    }

    // The verdict every format opens with: benign findings are listed, but they are no cause.
    if !report.causes.iter().any(|c| c.severity > Severity::Info) {
        writeln!(w, "{}\n", crate::report::no_cause_sentence(report))?;
    }
    if !report.causes.is_empty() {
        writeln!(w, "| # | Severity | Confidence | Cause | Id |")?;
        writeln!(w, "|--:|---|--:|---|---|")?;
        for c in &report.causes {
            writeln!(
                w,
                "| {} | {} | {:.2} | [{}](#{}) | {} ({}) |",
                c.rank,
                severity(c.severity),
                c.confidence,
                cell(&c.title),
                anchor(c),
                code(&c.id),
                c.code
            )?;
        }
        writeln!(w)?;
    }

    for c in &report.causes {
        write_cause(w, c)?;
    }
    if let Some(legend) = crate::report::TimeMarks::of_report(report).legend() {
        // A lone `~` would be taken for strikethrough by some renderers.
        writeln!(w, "{}\n", inline(&legend).replace('~', "\\~"))?;
    }

    write_inventory(w, report)?;
    writeln!(w, "## Diagnostics\n")?;
    if report.diagnostics.is_empty() {
        writeln!(w, "None: every file was read.")?;
    } else {
        let lines: Vec<String> = report.diagnostics.iter().map(|d| d.to_string()).collect();
        fenced(w, &lines.join("\n"))?;
    }
    Ok(())
}

fn severity(s: Severity) -> String {
    match s {
        Severity::Critical | Severity::Error => format!("**{}**", s.as_str()),
        Severity::Warning | Severity::Info => s.as_str().to_string(),
    }
}

/// The heading's anchor as GitHub derives it (`## 1. Title` → `1-title`).
fn anchor(c: &Cause) -> String {
    let heading = format!("{}. {}", c.rank, c.title);
    heading
        .to_lowercase()
        .chars()
        .filter_map(|ch| match ch {
            ' ' => Some('-'),
            '-' | '_' => Some(ch),
            _ if ch.is_alphanumeric() => Some(ch),
            _ => None,
        })
        .collect()
}

fn write_cause(w: &mut dyn Write, c: &Cause) -> io::Result<()> {
    writeln!(w, "## {}. {}\n", c.rank, c.title)?;
    let also: Vec<&str> = c
        .codes
        .iter()
        .map(String::as_str)
        .filter(|k| *k != c.code)
        .collect();
    write!(
        w,
        "{} · confidence {:.2} · {} · {}",
        severity(c.severity),
        c.confidence,
        code(&c.id),
        c.code
    )?;
    if !also.is_empty() {
        write!(w, " (also {})", also.join(", "))?;
    }
    writeln!(w, "\n\n{}\n", inline(&c.summary))?;
    if let Some(objects) = crate::report::objects_phrase(&c.objects) {
        writeln!(w, "**Concerns:** {}\n", inline(&objects))?;
    }
    if c.severity == Severity::Info {
        writeln!(w, "*Benign: no action needed.*\n")?;
    }
    if !c.evidence.is_empty() {
        writeln!(w, "### Evidence\n")?;
        write_evidence(w, &c.evidence)?;
    }
    if !c.symptoms.is_empty() {
        writeln!(w, "### Symptoms it explains\n")?;
        for s in &c.symptoms {
            writeln!(w, "#### {} ({}, {})\n", s.title, code(&s.id), s.code)?;
            writeln!(w, "{}\n", inline(&s.summary))?;
            write_evidence(w, &s.evidence)?;
        }
    }
    if !c.remediation.is_empty() {
        writeln!(w, "### What to do\n")?;
        for (i, r) in c.remediation.iter().enumerate() {
            writeln!(w, "{}. {}", i + 1, r)?;
        }
        writeln!(w)?;
    }
    if !c.references.is_empty() {
        writeln!(w, "### References\n")?;
        for r in &c.references {
            if r.starts_with("https://") || r.starts_with("http://") {
                writeln!(w, "- <{r}>")?;
            } else {
                writeln!(w, "- {r}")?;
            }
        }
        writeln!(w)?;
    }
    Ok(())
}

/// Evidence grouped by meaning (consecutive lines with the same meaning form one group).
fn write_evidence(w: &mut dyn Write, evidence: &[Evidence]) -> io::Result<()> {
    let mut groups: Vec<(&str, Vec<&Evidence>)> = Vec::new();
    for e in evidence {
        match groups.last_mut() {
            Some((m, list)) if *m == e.meaning => list.push(e),
            _ => groups.push((&e.meaning, vec![e])),
        }
    }
    for (meaning, list) in groups {
        if !meaning.is_empty() {
            writeln!(w, "*{}*\n", inline(meaning))?;
        }
        let (shown, folded) = list.split_at(list.len().min(SHOWN_PER_MEANING));
        fenced(w, &evidence_block(shown))?;
        if !folded.is_empty() {
            writeln!(
                w,
                "<details><summary>{} more line{}</summary>\n",
                folded.len(),
                if folded.len() == 1 { "" } else { "s" }
            )?;
            fenced(w, &evidence_block(folded))?;
            writeln!(w, "</details>\n")?;
        }
    }
    Ok(())
}

fn evidence_block(list: &[&Evidence]) -> String {
    let mut out = String::new();
    for e in list {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!(
            "{}  {}\n",
            crate::report::shown_place(e),
            crate::report::shown_time(e)
                .as_deref()
                .unwrap_or("(no time)")
        ));
        for line in e.text.lines() {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn write_inventory(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let inv = &report.inventory;
    writeln!(w, "## Bundle inventory\n")?;
    writeln!(
        w,
        "{} ({}), {}, {}, {}.",
        count(inv.files as u64, "file", "files"),
        inv.container,
        count(inv.lines, "line", "lines"),
        inv.records_phrase(),
        count(inv.unparsed_lines, "unparsed line", "unparsed lines")
    )?;
    if let (Some(t), Some(basis)) = (&inv.capture_time, &inv.capture_basis) {
        writeln!(w, "Captured {t} ({}).", inline(basis))?;
    }
    if let Some(c) = &inv.collected {
        writeln!(
            w,
            "Collected: {}.",
            inline(&crate::inventory::collected_line(c))
        )?;
    }
    if let Some(l) = &inv.layout {
        writeln!(w, "Layout: {}.", inline(&l.line()))?;
    }
    writeln!(w)?;
    if !inv.sources.is_empty() {
        writeln!(w, "| Source | Files |")?;
        writeln!(w, "|---|--:|")?;
        for (kind, n) in &inv.sources {
            writeln!(w, "| {kind} | {n} |")?;
        }
        writeln!(w)?;
    }
    if !inv.zones.is_empty() {
        writeln!(
            w,
            "Time zones of Ray logs (local time, no zone in the file):\n"
        )?;
        for z in &inv.zones {
            writeln!(
                w,
                "- UTC{} ({}), {} file{}: {}",
                z.offset,
                z.quality,
                z.files.len(),
                if z.files.len() == 1 { "" } else { "s" },
                inline(&z.basis)
            )?;
        }
        writeln!(w)?;
    }
    if !inv.file_list.is_empty() {
        writeln!(
            w,
            "<details><summary>{}</summary>\n",
            count(inv.file_list.len() as u64, "file", "files")
        )?;
        writeln!(
            w,
            "| File | Source | Lines | {} | Unparsed |",
            inv.records_heading()
        )?;
        writeln!(w, "|---|---|--:|--:|--:|")?;
        for f in &inv.file_list {
            let path = match f.mirror_note() {
                Some(note) => format!("{} ({})", code(&f.path), inline(&note)),
                None => code(&f.path),
            };
            writeln!(
                w,
                "| {} | {} | {} | {} | {} |",
                path,
                f.source,
                f.lines,
                f.records(),
                f.unparsed_lines
            )?;
        }
        writeln!(w, "\n</details>\n")?;
    }
    Ok(())
}

/// A fenced block whose fence is longer than any run of backticks in the text.
fn fenced(w: &mut dyn Write, text: &str) -> io::Result<()> {
    let fence = "`".repeat((longest_backtick_run(text) + 1).max(3));
    writeln!(w, "{fence}text\n{}\n{fence}\n", text.trim_end_matches('\n'))
}

/// Inline code that survives backticks in the text and sits safely in a table cell.
fn code(text: &str) -> String {
    let text = text.replace('\n', " ").replace('|', "\\|");
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

fn longest_backtick_run(text: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    for ch in text.chars() {
        if ch == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// Text in a table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    inline(text).replace('|', "\\|")
}

/// Text in running prose: one line, and no raw HTML (bundle text is not markup).
fn inline(text: &str) -> String {
    text.replace('\n', " ")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
