//! Rendering events of the timeline: aligned text for people (with the fields that explain
//! each event, `crate::explain`), one JSON object per line for programs. The JSON keys are a contract (`ts`, `ts_quality`, `file`, `line`, `n_lines`,
//! `source`, `level`, `component`, `message`, `fields`).

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::event::Event;
use crate::report::style::Style;
use crate::timeline::Timeline;

/// One event as JSON.
#[derive(Serialize)]
pub struct EventJson<'a> {
    pub ts: Option<String>,
    pub ts_quality: &'static str,
    pub file: &'a str,
    pub line: u32,
    pub n_lines: u32,
    pub source: &'static str,
    /// The level shown (`explain::shown_level`).
    pub level: &'static str,
    /// The level the writer gave the record, only when `level` differs from it (a traceback
    /// folded into an INFO record is shown at `error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logged_level: Option<&'static str>,
    pub component: &'a str,
    pub message: &'a str,
    pub fields: BTreeMap<&'a str, &'a str>,
}

impl<'a> EventJson<'a> {
    pub fn new(tl: &'a Timeline, ev: &'a Event) -> EventJson<'a> {
        let shown = crate::explain::shown_level(ev);
        let mut fields = BTreeMap::new();
        for (k, v) in &ev.fields {
            fields.entry(k.as_str()).or_insert(v.as_str());
        }
        EventJson {
            ts: ev.ts.map(|t| t.rfc3339()),
            ts_quality: ev.ts.map_or("none", |t| t.quality.as_str()),
            file: tl.file(ev.file).map_or("", |f| f.path.as_str()),
            line: ev.line,
            n_lines: ev.n_lines,
            source: ev.kind.as_str(),
            level: shown.as_str(),
            logged_level: (shown != ev.level).then(|| ev.level.as_str()),
            component: &ev.component,
            message: &ev.message,
            fields,
        }
    }
}

/// Writes one JSON object per event.
pub fn write_json(w: &mut dyn Write, tl: &Timeline, events: &[&Event]) -> io::Result<()> {
    for ev in events {
        serde_json::to_writer(&mut *w, &EventJson::new(tl, ev))?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes aligned text: time, file:line, source, level, component, message, then the fields
/// that explain the event (`explain::shown_fields`): short ones on the line as `key=value`,
/// long ones indented below it as `key: value`. Continuation lines are indented under the
/// message.
pub fn write_text(
    w: &mut dyn Write,
    tl: &Timeline,
    events: &[&Event],
    style: Style,
) -> io::Result<()> {
    for ev in events {
        let ts = ev.ts.map_or_else(|| "-".to_string(), |t| t.rfc3339());
        let place = format!(
            "{}:{}",
            tl.file(ev.file).map_or("?", |f| f.path.as_str()),
            ev.line
        );
        let shown = crate::explain::shown_level(ev);
        let level = format!("{:<8}", shown.as_str().to_ascii_uppercase());
        let mut lines = ev.message.lines();
        let first = lines.next().unwrap_or("");
        let component = if ev.component.is_empty() {
            String::new()
        } else {
            format!("{} ", style.dim(&format!("[{}]", ev.component)))
        };
        let fields = crate::explain::shown_fields(ev);
        let mut on_line = String::new();
        for (k, v) in fields.iter().filter(|(_, v)| crate::explain::inline(v)) {
            on_line.push(' ');
            on_line.push_str(&style.dim(&format!("{k}=")));
            on_line.push_str(v);
        }
        writeln!(
            w,
            "{:<24} {} {} {}{}{}{}",
            ts,
            style.dim(&place),
            style.dim(ev.kind.as_str()),
            style.level(shown, &level),
            component,
            first,
            on_line
        )?;
        for (k, v) in fields.iter().filter(|(_, v)| !crate::explain::inline(v)) {
            let mut value = v.lines();
            writeln!(
                w,
                "    {} {}",
                style.dim(&format!("{k}:")),
                value.next().unwrap_or("")
            )?;
            for more in value {
                writeln!(w, "      {more}")?;
            }
        }
        for more in lines {
            writeln!(w, "    {more}")?;
        }
    }
    Ok(())
}
