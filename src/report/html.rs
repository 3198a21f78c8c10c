//! The ranked report as one self-contained HTML page: inline CSS, an inline SVG picture of
//! the incident timeline (events per source over time, warnings and errors, each cause's
//! evidence marked), the causes with their evidence, a filterable table of the events around
//! the evidence (a few lines of inline script), the inventory and the diagnostics.
//!
//! Invariant: the page loads nothing: no `src=`, stylesheet link, `url()` or `@import` names
//! any address; references are plain `<a href>` links a reader may follow. It prints
//! readably (filters hidden, colours kept light). Layout only: the numbers come from
//! `report_data`.

use std::collections::BTreeSet;
use std::io::{self, Write};

use crate::model::{Cause, Evidence, Report};
use crate::model::{Lane, TimelineData};
use crate::report::mark_time;
use crate::rules::Severity;
use crate::words::count;

const STYLE: &str = r#"
:root { --fg:#1d2330; --muted:#5d6677; --line:#d9dde5; --bg:#fff; --soft:#f5f7fa;
  --crit:#b3261e; --err:#c0392b; --warn:#b9770e; --info:#2e6da4; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 1320px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; } h3 { font-size: 15px; margin: 16px 0 6px; }
h4 { font-size: 13px; margin: 10px 0 4px; color: var(--muted); font-weight: 600; }
.meta { color: var(--muted); margin: 0; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 8px 10px;
  overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: 4px 0 10px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: anywhere; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; }
.sev { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff; font-size: 12px;
  font-weight: 600; text-transform: uppercase; }
.sev-critical { background: var(--crit); } .sev-error { background: var(--err); }
.sev-warning { background: var(--warn); } .sev-info { background: #7f8c8d; }
.cause { border-left: 4px solid var(--line); padding: 2px 0 2px 14px; margin: 18px 0; }
.cause.critical { border-color: var(--crit); } .cause.error { border-color: var(--err); }
.cause.warning { border-color: var(--warn); }
.ev-place a { color: var(--muted); }
.picture svg { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
.legend { margin: 8px 0; padding-left: 0; list-style: none; font-size: 13px; }
.legend li { break-inside: avoid; margin: 2px 0; }
.tag { display: inline-block; min-width: 26px; text-align: center; border-radius: 9px; color: #fff;
  font-size: 11px; font-weight: 700; padding: 0 5px; margin-right: 4px; }
.filters { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
.filters input[type=search] { width: 320px; padding: 4px 6px; }
#events { table-layout: fixed; }
#events th.when { width: 8.5em; } #events th.src { width: 8em; } #events th.lvl { width: 5.5em; }
#events th.where { width: 14em; } #events th.marks { width: 6.5em; }
#events td { overflow-wrap: anywhere; word-break: break-word; }
#events td.msg { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px;
  white-space: pre-wrap; }
#events td.msg details { margin-top: 2px; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
#events td.msg details pre { margin: 2px 0 0; padding: 4px 6px; overflow-x: visible; }
#events tr.evidence td { background: #fff6e0; }
#events td.lvl-error, #events td.lvl-critical { color: var(--err); font-weight: 600; }
#events td.lvl-warning { color: var(--warn); }
#events td.when { white-space: nowrap; }
#events td.when, #events td.where { font-size: 12px; color: var(--muted); }
.note { color: var(--muted); font-size: 13px; }
.incomplete { border: 1px solid var(--warn); border-left-width: 4px; background: #fff6e0;
  border-radius: 4px; padding: 8px 12px; margin: 10px 0; }
.incomplete ul { margin: 4px 0 0; padding-left: 20px; }
details summary { cursor: pointer; color: var(--muted); }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  .filters, .noprint { display: none; }
  .cause, .picture, tr { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
  #events tr[hidden] { display: table-row; }
  pre { white-space: pre-wrap; }
}
"#;

const SCRIPT: &str = r#"
(function () {
  var q = document.getElementById('q'), lvl = document.getElementById('lvl'),
      src = document.getElementById('src'), only = document.getElementById('only'),
      count = document.getElementById('count');
  if (!q) return;
  var rows = Array.prototype.slice.call(document.querySelectorAll('#events tbody tr'));
  var order = { trace: 0, debug: 1, info: 2, warning: 3, error: 4, critical: 5 };
  function apply() {
    var text = q.value.toLowerCase(), min = order[lvl.value] || 0, s = src.value, n = 0;
    rows.forEach(function (r) {
      var ok = (!text || r.textContent.toLowerCase().indexOf(text) >= 0) &&
        (order[r.getAttribute('data-level')] || 0) >= min &&
        (!s || r.getAttribute('data-source') === s) &&
        (!only.checked || r.className.indexOf('evidence') >= 0);
      r.hidden = !ok;
      if (ok) n++;
    });
    count.textContent = n + ' of ' + rows.length + ' events shown';
  }
  [q, lvl, src, only].forEach(function (el) {
    el.addEventListener('input', apply);
    el.addEventListener('change', apply);
  });
  apply();
})();
"#;

/// Marker colours by cause rank; benign causes are grey.
const CAUSE_COLOURS: [&str; 6] = [
    "#b3261e", "#6c3483", "#1f618d", "#b9770e", "#117a65", "#7b241c",
];
const BENIGN_COLOUR: &str = "#8a949e";

// Geometry of the picture, in SVG user units.
const LABEL_W: f64 = 170.0;
const PLOT_W: f64 = 1100.0;
const LANE_H: f64 = 34.0;
const TOP: f64 = 26.0;
const AXIS_H: f64 = 30.0;

pub fn write(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let title = match report.causes.iter().find(|c| c.severity != Severity::Info) {
        Some(c) => format!("raysift: {}", c.title),
        None if !report.bundle.complete => {
            "raysift: no cause found (incomplete bundle)".to_string()
        }
        None => "raysift: no cause found".to_string(),
    };
    writeln!(w, "<!DOCTYPE html>")?;
    writeln!(w, "<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">")?;
    writeln!(
        w,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(w, "<title>{}</title>", esc(&title))?;
    writeln!(w, "<style>{STYLE}</style>\n</head>\n<body>")?;

    let b = &report.bundle;
    writeln!(w, "<header>\n<h1>raysift report</h1>")?;
    write!(
        w,
        "<p class=\"meta\"><span class=\"mono\">{}</span> · {}, {} · {}",
        esc(&b.path),
        count(b.files as u64, "file", "files"),
        crate::words::size(b.bytes),
        count(report.stats.events, "event", "events")
    )?;
    if let Some(win) = &report.window {
        write!(w, " · {} … {}", esc(&win.first), esc(&win.last))?;
    }
    writeln!(w, "</p>")?;
    if let Some(headline) = crate::report::incomplete_headline(report) {
        writeln!(
            w,
            "<div class=\"incomplete\" role=\"alert\"><strong>{}</strong>\n<ul>",
            esc(&headline)
        )?;
        let reasons = &report.bundle.incomplete;
        for d in reasons.iter().take(crate::report::INCOMPLETE_SHOWN) {
            writeln!(w, "<li class=\"mono\">{}</li>", esc(&d.to_string()))?;
        }
        if reasons.len() > crate::report::INCOMPLETE_SHOWN {
            writeln!(
                w,
                "<li>… and {} more (see Diagnostics)</li>",
                reasons.len() - crate::report::INCOMPLETE_SHOWN
            )?;
        }
        writeln!(w, "</ul></div>")?;
    }
    if let Some(versions) = crate::report::versions_sentence(report) {
        writeln!(w, "<p class=\"note\">{}</p>", esc(&versions))?;
    }
    if let Some(filter) = crate::report::filter_sentence(report) {
        writeln!(w, "<p class=\"note\">{}</p>", esc(&filter))?;
    }
    if let Some(zones) = crate::report::assumed_zone_sentence(report) {
        writeln!(w, "<p class=\"note\">{}</p>", esc(&zones))?;
    }
    writeln!(w, "</header>")?;

    write_summary(w, report)?;
    if let Some(t) = &report.timeline {
        write_picture(w, report, t)?;
    }
    let rows: BTreeSet<(&str, u32)> = report
        .timeline
        .iter()
        .flat_map(|t| t.rows.iter().map(|r| (r.file.as_str(), r.line)))
        .collect();
    if !report.causes.is_empty() {
        writeln!(w, "<section id=\"causes\">\n<h2>Causes</h2>")?;
        for c in &report.causes {
            write_cause(w, c, &rows)?;
        }
        // The picture's markers and the table's rows show times too.
        let mut marks = crate::report::TimeMarks::of_report(report);
        if let Some(t) = &report.timeline {
            for q in t.markers.iter().map(|m| m.ts_quality) {
                marks.see_quality(q);
            }
            for r in t.rows.iter().filter(|r| r.ts.is_some()) {
                marks.see_quality(r.ts_quality);
            }
        }
        if let Some(legend) = marks.legend() {
            writeln!(w, "<p class=\"note\">{}</p>", esc(&legend))?;
        }
        writeln!(w, "</section>")?;
    }
    if let Some(t) = &report.timeline {
        write_events(w, t)?;
    }
    write_inventory(w, report)?;
    writeln!(w, "<script>{SCRIPT}</script>\n</body>\n</html>")?;
    Ok(())
}

fn write_summary(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    writeln!(w, "<section id=\"summary\">\n<h2>Summary</h2>")?;
    // The verdict every format opens with: benign findings are listed, but they are no cause.
    if !report.causes.iter().any(|c| c.severity > Severity::Info) {
        let sentence = crate::report::no_cause_sentence(report);
        writeln!(w, "<p class=\"verdict\">{}</p>", esc(&sentence))?;
    }
    if report.causes.is_empty() {
        writeln!(w, "</section>")?;
        return Ok(());
    }
    writeln!(
        w,
        "<table>\n<thead><tr><th class=\"num\">#</th><th>Severity</th><th class=\"num\">Confidence</th><th>Cause</th><th>Id</th></tr></thead>\n<tbody>"
    )?;
    for c in &report.causes {
        writeln!(
            w,
            "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{:.2}</td><td><a href=\"#cause-{}\">{}</a></td><td><code>{}</code> {}</td></tr>",
            c.rank,
            severity_badge(c.severity),
            c.confidence,
            c.rank,
            esc(&c.title),
            esc(&c.id),
            esc(&c.code)
        )?;
    }
    writeln!(w, "</tbody>\n</table>\n</section>")
}

fn severity_badge(s: Severity) -> String {
    format!(
        "<span class=\"sev sev-{}\">{}</span>",
        s.as_str(),
        s.as_str()
    )
}

fn cause_colour(rank: usize, benign: bool) -> &'static str {
    if benign {
        return BENIGN_COLOUR;
    }
    CAUSE_COLOURS
        .get(rank.saturating_sub(1) % CAUSE_COLOURS.len())
        .copied()
        .unwrap_or(BENIGN_COLOUR)
}

fn write_picture(w: &mut dyn Write, report: &Report, t: &TimelineData) -> io::Result<()> {
    writeln!(
        w,
        "<section id=\"timeline\" class=\"picture\">\n<h2>Incident timeline</h2>"
    )?;
    if t.lanes.is_empty() {
        writeln!(
            w,
            "<p class=\"note\">No event in the bundle has a time.</p>\n</section>"
        )?;
        return Ok(());
    }
    writeln!(
        w,
        "<p class=\"note\">Events per source over time ({} buckets of {}); darker bars are warnings and errors; lines mark each cause's evidence. Times are UTC.</p>",
        t.buckets,
        human_ms(t.bucket_ms)
    )?;
    let n_lanes = t.lanes.len() as f64;
    let height = TOP + n_lanes * LANE_H + AXIS_H;
    let width = LABEL_W + PLOT_W + 20.0;
    let bw = PLOT_W / t.buckets.max(1) as f64;
    writeln!(
        w,
        "<svg viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" aria-label=\"Events per source over time, with the evidence of each cause marked\">"
    )?;
    writeln!(
        w,
        "<style>text{{font:12px system-ui,sans-serif;fill:#1d2330}} .lab{{font-size:11px}} .tick{{font-size:10px;fill:#5d6677}}</style>"
    )?;
    for (i, lane) in t.lanes.iter().enumerate() {
        let y0 = TOP + i as f64 * LANE_H;
        write_lane(w, lane, y0, bw)?;
    }
    // Markers: a line through the lane of the evidence's source, labelled once per label.
    let mut labelled: BTreeSet<&str> = BTreeSet::new();
    for m in &t.markers {
        let Some(lane) = t.lanes.iter().position(|l| l.source == m.source) else {
            continue;
        };
        let x = LABEL_W + (m.bucket as f64 + 0.5) * bw;
        let y0 = TOP + lane as f64 * LANE_H;
        let colour = cause_colour(m.cause_rank, m.benign);
        writeln!(
            w,
            "<a href=\"#{}\"><line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"2\"><title>{} {} {}:{} — {}</title></line></a>",
            row_id(&m.file, m.line),
            y0 + 2.0,
            y0 + LANE_H - 2.0,
            esc(&m.label),
            esc(&mark_time(&m.ts, m.ts_quality)),
            esc(&m.file),
            m.line,
            esc(&m.meaning)
        )?;
        if labelled.insert(&m.label) {
            writeln!(
                w,
                "<g><circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"9\" fill=\"{colour}\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" style=\"fill:#fff;font-size:10px;font-weight:700\">{}</text></g>",
                y0 + 9.0,
                y0 + 12.5,
                esc(&m.label)
            )?;
        }
    }
    // Axis: times of day, with the date when the window spans more than one day.
    let axis_y = TOP + n_lanes * LANE_H;
    let spans_days = t.start.get(..10) != t.end.get(..10);
    writeln!(
        w,
        "<line x1=\"{LABEL_W}\" y1=\"{axis_y:.1}\" x2=\"{:.1}\" y2=\"{axis_y:.1}\" stroke=\"#5d6677\"/>",
        LABEL_W + PLOT_W
    )?;
    for tick in &t.ticks {
        let x = LABEL_W + tick.bucket as f64 * bw;
        let label = tick_label(&tick.label, spans_days);
        let anchor = if tick.bucket == 0 {
            "start"
        } else if tick.bucket >= t.buckets {
            "end"
        } else {
            "middle"
        };
        writeln!(
            w,
            "<line x1=\"{x:.1}\" y1=\"{axis_y:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#5d6677\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
            axis_y + 5.0,
            axis_y + 18.0,
            esc(&label)
        )?;
    }
    writeln!(
        w,
        "<text class=\"tick\" x=\"4\" y=\"{:.1}\">{}</text>",
        axis_y + 18.0,
        esc(t.start.get(..10).unwrap_or(&t.start))
    )?;
    writeln!(w, "</svg>")?;
    if t.outside > 0 {
        writeln!(
            w,
            "<p class=\"meta\">{} outside the incident window (objects' ages, a start-up before hours of silence) not drawn.</p>",
            count(t.outside, "timed event", "timed events")
        )?;
    }

    // Legend: the first line of each label, in time order, reads as the story.
    let mut firsts: Vec<&crate::model::Marker> = Vec::new();
    for m in &t.markers {
        if !firsts.iter().any(|f| f.label == m.label) {
            firsts.push(m);
        }
    }
    firsts.sort_by(|a, b| (&a.ts, a.cause_rank).cmp(&(&b.ts, b.cause_rank)));
    if !firsts.is_empty() {
        writeln!(w, "<ol class=\"legend\">")?;
        for m in firsts {
            let n = t.markers.iter().filter(|x| x.label == m.label).count();
            let title = report
                .causes
                .iter()
                .find(|c| c.rank == m.cause_rank)
                .map_or("", |c| c.title.as_str());
            writeln!(
                w,
                "<li><span class=\"tag\" style=\"background:{}\">{}</span><span class=\"mono\">{}</span> {} — {}{} <span class=\"note\">(#{} {})</span></li>",
                cause_colour(m.cause_rank, m.benign),
                esc(&m.label),
                esc(&mark_time(m.ts.get(11..23).unwrap_or(&m.ts), m.ts_quality)),
                esc(m.source),
                esc(&m.meaning),
                if n > 1 { format!(" ×{n}") } else { String::new() },
                m.cause_rank,
                esc(title)
            )?;
        }
        writeln!(w, "</ol>")?;
    }
    writeln!(w, "</section>")
}

fn write_lane(w: &mut dyn Write, lane: &Lane, y0: f64, bw: f64) -> io::Result<()> {
    writeln!(
        w,
        "<rect x=\"0\" y=\"{y0:.1}\" width=\"{:.0}\" height=\"{LANE_H}\" fill=\"{}\"/>",
        LABEL_W + PLOT_W,
        if (y0 - TOP) as i64 / LANE_H as i64 % 2 == 0 {
            "#f7f9fb"
        } else {
            "#ffffff"
        }
    )?;
    writeln!(
        w,
        "<text class=\"lab\" x=\"6\" y=\"{:.1}\">{}</text><text class=\"tick\" x=\"6\" y=\"{:.1}\">{} event{}, {} warn+</text>",
        y0 + 14.0,
        esc(lane.source),
        y0 + 27.0,
        lane.total,
        if lane.total == 1 { "" } else { "s" },
        lane.total_warn
    )?;
    let max = lane.all.iter().copied().max().unwrap_or(0).max(1) as f64;
    // Square-root scale: one event in a bucket stays visible next to a burst of thousands.
    let h = |n: u32| -> f64 { (f64::from(n) / max).sqrt() * (LANE_H - 6.0) };
    for (i, (&all, &warn)) in lane.all.iter().zip(&lane.warn).enumerate() {
        if all == 0 {
            continue;
        }
        let x = LABEL_W + i as f64 * bw;
        let base = y0 + LANE_H - 3.0;
        let ha = h(all);
        writeln!(
            w,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{ha:.1}\" fill=\"#9db4cc\"><title>{all} event{}, {warn} warning+</title></rect>",
            base - ha,
            (bw - 1.0).max(1.0),
            if all == 1 { "" } else { "s" }
        )?;
        if warn > 0 {
            let hw = h(warn);
            writeln!(
                w,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{hw:.1}\" fill=\"#d35400\" pointer-events=\"none\"/>",
                base - hw,
                (bw - 1.0).max(1.0)
            )?;
        }
    }
    Ok(())
}

fn human_ms(ms: f64) -> String {
    if ms >= 60_000.0 {
        format!("{:.1} min", ms / 60_000.0)
    } else if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

fn write_cause(w: &mut dyn Write, c: &Cause, rows: &BTreeSet<(&str, u32)>) -> io::Result<()> {
    writeln!(
        w,
        "<article class=\"cause {}\" id=\"cause-{}\">",
        c.severity.as_str(),
        c.rank
    )?;
    writeln!(
        w,
        "<h3>#{} {} {}</h3>",
        c.rank,
        severity_badge(c.severity),
        esc(&c.title)
    )?;
    writeln!(
        w,
        "<p class=\"meta\">confidence {:.2} · <code>{}</code> · {}</p>",
        c.confidence,
        esc(&c.id),
        esc(&c.codes.join(", "))
    )?;
    writeln!(w, "<p>{}</p>", esc(&c.summary))?;
    if let Some(objects) = crate::report::objects_phrase(&c.objects) {
        writeln!(w, "<p class=\"objects\">Concerns: {}</p>", esc(&objects))?;
    }
    if c.severity == Severity::Info {
        writeln!(w, "<p class=\"note\">Benign: no action needed.</p>")?;
    }
    write_evidence(w, &c.evidence, rows)?;
    if !c.symptoms.is_empty() {
        writeln!(w, "<h4>Symptoms it explains</h4>\n<ul>")?;
        for s in &c.symptoms {
            writeln!(
                w,
                "<li><strong>{}</strong> (<code>{}</code>): {}",
                esc(&s.title),
                esc(&s.id),
                esc(&s.summary)
            )?;
            write_evidence(w, &s.evidence, rows)?;
            writeln!(w, "</li>")?;
        }
        writeln!(w, "</ul>")?;
    }
    if !c.remediation.is_empty() {
        writeln!(w, "<h4>What to do</h4>\n<ol>")?;
        for r in &c.remediation {
            writeln!(w, "<li>{}</li>", esc(r))?;
        }
        writeln!(w, "</ol>")?;
    }
    if !c.references.is_empty() {
        writeln!(w, "<h4>References</h4>\n<ul>")?;
        for r in &c.references {
            if r.starts_with("https://") || r.starts_with("http://") {
                writeln!(w, "<li><a href=\"{0}\">{0}</a></li>", esc(r))?;
            } else {
                writeln!(w, "<li>{}</li>", esc(r))?;
            }
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</article>")
}

fn write_evidence(
    w: &mut dyn Write,
    evidence: &[Evidence],
    rows: &BTreeSet<(&str, u32)>,
) -> io::Result<()> {
    let mut last: Option<&str> = None;
    for e in evidence {
        if last != Some(e.meaning.as_str()) {
            if last.is_some() {
                writeln!(w, "</pre>")?;
            }
            if !e.meaning.is_empty() {
                writeln!(w, "<h4>{}</h4>", esc(&e.meaning))?;
            }
            write!(w, "<pre>")?;
            last = Some(&e.meaning);
        }
        let place = format!("{}:{}", e.file, e.line);
        let mut place = if rows.contains(&(e.file.as_str(), e.line)) {
            format!(
                "<a href=\"#{}\">{}</a>",
                row_id(&e.file, e.line),
                esc(&place)
            )
        } else {
            esc(&place)
        };
        if let Some(also) = &e.also_in {
            place.push_str(&format!(" (also {})", esc(also)));
        }
        writeln!(
            w,
            "<span class=\"ev-place\">{place}  {}</span>\n{}",
            esc(crate::report::shown_time(e)
                .as_deref()
                .unwrap_or("(no time)")),
            esc(&e.text)
        )?;
    }
    if last.is_some() {
        writeln!(w, "</pre>")?;
    }
    Ok(())
}

fn write_events(w: &mut dyn Write, t: &TimelineData) -> io::Result<()> {
    writeln!(
        w,
        "<section id=\"events-section\">\n<h2>Events around the evidence</h2>"
    )?;
    if t.rows.is_empty() {
        writeln!(
            w,
            "<p class=\"note\">No evidence to show events around.</p>\n</section>"
        )?;
        return Ok(());
    }
    let sources: BTreeSet<&str> = t.rows.iter().map(|r| r.source).collect();
    writeln!(w, "<div class=\"filters\">")?;
    writeln!(
        w,
        "<input type=\"search\" id=\"q\" placeholder=\"Filter: text, file, component…\" aria-label=\"Filter events\">"
    )?;
    writeln!(w, "<label>Level <select id=\"lvl\"><option value=\"\">any</option><option value=\"info\">info+</option><option value=\"warning\">warning+</option><option value=\"error\">error+</option></select></label>")?;
    write!(
        w,
        "<label>Source <select id=\"src\"><option value=\"\">any</option>"
    )?;
    for s in &sources {
        write!(w, "<option>{}</option>", esc(s))?;
    }
    writeln!(w, "</select></label>")?;
    writeln!(
        w,
        "<label><input type=\"checkbox\" id=\"only\"> evidence only</label> <span id=\"count\" class=\"note\"></span>\n</div>"
    )?;
    if t.rows_capped {
        writeln!(
            w,
            "<p class=\"note\">The table holds the first {} events; every evidence line is kept.</p>",
            t.rows.len()
        )?;
    }
    // A fixed layout: the columns take the widths the header gives them, and a long token
    // wraps in its cell instead of widening the table past the page.
    writeln!(w, "<table id=\"events\">\n<thead><tr><th class=\"when\">Time (UTC)</th><th class=\"src\">Source</th><th class=\"lvl\">Level</th><th class=\"where\">Where</th><th>Message</th><th class=\"marks\">Evidence</th></tr></thead>\n<tbody>")?;
    for r in &t.rows {
        let class = if r.evidence.is_empty() {
            ""
        } else {
            " class=\"evidence\""
        };
        let component = if r.component.is_empty() {
            String::new()
        } else {
            format!("[{}] ", esc(&r.component))
        };
        writeln!(
            w,
            "<tr id=\"{}\"{class} data-level=\"{}\" data-source=\"{}\"><td class=\"when\">{}</td><td>{}</td><td class=\"lvl-{}\">{}</td><td class=\"where\">{}:{}</td><td class=\"msg\">{component}{}{}</td><td>{}</td></tr>",
            row_id(&r.file, r.line),
            r.level,
            esc(r.source),
            esc(&r.ts.as_deref().map_or("-".to_string(), |t| mark_time(
                t.get(11..).unwrap_or(t),
                r.ts_quality
            ))),
            breakable(r.source),
            r.level,
            r.level,
            breakable(&r.file),
            r.line,
            esc(&r.text),
            folded(&r.more),
            esc(&r.evidence.join(" "))
        )?;
    }
    writeln!(w, "</tbody>\n</table>\n</section>")
}

/// What a row's line leaves out (a stack trace, the rest of a long field), folded behind a
/// toggle that works without script; nothing when it leaves out nothing.
fn folded(more: &str) -> String {
    if more.is_empty() {
        return String::new();
    }
    let lines = count(more.lines().count() as u64, "more line", "more lines");
    format!(
        "<details><summary>{lines}</summary><pre>{}</pre></details>",
        esc(more)
    )
}

fn write_inventory(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let inv = &report.inventory;
    writeln!(w, "<section id=\"inventory\">\n<h2>Bundle inventory</h2>")?;
    writeln!(
        w,
        "<p>{} ({}), {}, {}, {}.",
        count(inv.files as u64, "file", "files"),
        esc(&inv.container),
        count(inv.lines, "line", "lines"),
        esc(&inv.records_phrase()),
        count(inv.unparsed_lines, "unparsed line", "unparsed lines")
    )?;
    if let (Some(t), Some(basis)) = (&inv.capture_time, &inv.capture_basis) {
        write!(w, " Captured {} ({}).", esc(t), esc(basis))?;
    }
    if let Some(c) = &inv.collected {
        write!(
            w,
            " Collected: {}.",
            esc(&crate::inventory::collected_line(c))
        )?;
    }
    if let Some(l) = &inv.layout {
        write!(w, " Layout: {}.", esc(&l.line()))?;
    }
    writeln!(w, "</p>")?;
    if !inv.zones.is_empty() {
        writeln!(w, "<h4>Time zones of Ray logs</h4>\n<ul>")?;
        for z in &inv.zones {
            writeln!(
                w,
                "<li>UTC{} ({}), {} file{}: {}</li>",
                esc(&z.offset),
                esc(z.quality),
                z.files.len(),
                if z.files.len() == 1 { "" } else { "s" },
                esc(&z.basis)
            )?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(
        w,
        "<details><summary>{}</summary>\n<table>\n<thead><tr><th>File</th><th>Source</th><th class=\"num\">Lines</th><th class=\"num\">{}</th><th class=\"num\">Unparsed</th></tr></thead>\n<tbody>",
        count(inv.file_list.len() as u64, "file", "files"),
        inv.records_heading()
    )?;
    for f in &inv.file_list {
        writeln!(
            w,
            "<tr><td class=\"mono\">{}{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&f.path),
            f.mirror_note()
                .map_or(String::new(), |n| format!(" ({})", esc(&n))),
            esc(f.source),
            f.lines,
            f.records(),
            f.unparsed_lines
        )?;
    }
    writeln!(w, "</tbody>\n</table>\n</details>")?;
    writeln!(w, "<h2>Diagnostics</h2>")?;
    if report.diagnostics.is_empty() {
        writeln!(w, "<p>None: every file was read.</p>")?;
    } else {
        writeln!(w, "<ul>")?;
        for d in &report.diagnostics {
            writeln!(w, "<li class=\"mono\">{}</li>", esc(&d.to_string()))?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>")
}

/// The id of the table row of `file:line`: letters and digits kept, everything else
/// hex-escaped, so that ids are unique and valid in a URL fragment.
pub(crate) fn row_id(file: &str, line: u32) -> String {
    let mut id = String::from("ev-");
    for ch in file.chars() {
        if ch.is_ascii_alphanumeric() {
            id.push(ch);
        } else {
            id.push_str(&format!("_{:x}", u32::from(ch)));
        }
    }
    id.push('-');
    id.push_str(&line.to_string());
    id
}

/// HTML-escapes a name for element content, with a place to break the line after each `/`
/// and `_`: a narrow column then wraps a path or a source kind between its parts.
fn breakable(name: &str) -> String {
    esc(name).replace('/', "/<wbr>").replace('_', "_<wbr>")
}

/// HTML-escapes text for element content and quoted attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// An axis label of an RFC 3339 time: `HH:MM:SS`, or `MM-DD HH:MM` on an axis that spans
/// days.
fn tick_label(rfc3339: &str, spans_days: bool) -> String {
    let part = |r: std::ops::Range<usize>| rfc3339.get(r).unwrap_or(rfc3339);
    match spans_days {
        true => format!("{} {}", part(5..10), part(11..16)),
        false => part(11..19).to_string(),
    }
}

#[cfg(test)]
mod axis_tests {
    use super::tick_label;

    #[test]
    fn an_axis_over_days_shows_the_date() {
        let t = "2024-06-10T07:41:14.120Z";
        assert_eq!(tick_label(t, false), "07:41:14");
        assert_eq!(tick_label(t, true), "06-10 07:41");
    }
}
