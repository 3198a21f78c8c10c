//! The inventory as text: what was read, how times were resolved, what went wrong.

use std::io::{self, Write};

use crate::inventory::Inventory;
use crate::report::style::Style;
use crate::words::{count, size};

pub fn write_text(w: &mut dyn Write, inv: &Inventory, style: Style) -> io::Result<()> {
    writeln!(
        w,
        "{} {}, {}, {} ({})",
        style.bold("Bundle:"),
        count(inv.files as u64, "file", "files"),
        size(inv.bytes),
        count(inv.lines, "line", "lines"),
        inv.container
    )?;
    writeln!(
        w,
        "{} {}, {}",
        style.bold("Records:"),
        inv.records_phrase(),
        count(inv.unparsed_lines, "unparsed line", "unparsed lines")
    )?;
    match &inv.window {
        Some(win) => writeln!(w, "{} {} .. {}", style.bold("Window:"), win.first, win.last)?,
        None => writeln!(w, "{} no timed events", style.bold("Window:"))?,
    }
    if let (Some(t), Some(basis)) = (&inv.capture_time, &inv.capture_basis) {
        writeln!(w, "{} {t} ({basis})", style.bold("Captured:"))?;
    }
    if let Some(c) = &inv.collected {
        writeln!(
            w,
            "{} {}",
            style.bold("Collected:"),
            crate::inventory::collected_line(c)
        )?;
    }
    if let Some(l) = &inv.layout {
        writeln!(w, "{} {}", style.bold("Layout:"), l.line())?;
    }
    writeln!(w, "\n{}", style.bold("Sources:"))?;
    for (kind, n) in &inv.sources {
        writeln!(
            w,
            "  {kind:<22} {n:>5} file{}",
            if *n == 1 { "" } else { "s" }
        )?;
    }
    if !inv.zones.is_empty() {
        writeln!(
            w,
            "\n{}",
            style.bold("Time zones of Ray logs (local time, no zone in the file):")
        )?;
        for z in &inv.zones {
            writeln!(
                w,
                "  UTC{}  {}  {} file{}: {}",
                z.offset,
                z.quality,
                z.files.len(),
                if z.files.len() == 1 { "" } else { "s" },
                z.basis
            )?;
        }
    }
    writeln!(w, "\n{}", style.bold("Files:"))?;
    for f in &inv.file_list {
        writeln!(
            w,
            "  {:<20} {:>9} lines {:>9} {} {}{}",
            f.source,
            f.lines,
            f.records(),
            if f.events.is_some() {
                "events"
            } else {
                "parsed"
            },
            f.path,
            [
                (f.unparsed_lines > 0).then(|| format!("{} unparsed", f.unparsed_lines)),
                f.mirror_note(),
            ]
            .into_iter()
            .flatten()
            .map(|note| format!("  ({note})"))
            .collect::<String>()
        )?;
    }
    if !inv.diagnostics.is_empty() {
        writeln!(
            w,
            "\n{} ({})",
            style.bold("Diagnostics"),
            inv.diagnostics.len()
        )?;
        for d in &inv.diagnostics {
            writeln!(w, "  {d}")?;
        }
    }
    Ok(())
}
