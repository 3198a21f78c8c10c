//! What of an event's structured fields explains it, as `timeline` text shows it and
//! `timeline --grep` searches it.
//!
//! A structured log puts the reason for a record beside its message: the operator's
//! `Fail to reconcileServe.` carries the why in `error` and the object in
//! `RayService.namespace` / `RayService.name`. The text timeline shows those fields (and only
//! those: a stack trace, a reconcile id or an HTTP header would bury the message), and
//! `--grep` matches exactly what the text shows, so a match is always visible.
//!
//! It also owns the level `timeline` shows and selects by ([`shown_level`]): a log record
//! whose continuation lines are a failure (a traceback ending in its exception) is shown at
//! `error` whatever its head line said, and the writer's level is kept beside it.
//!
//! And it owns the two shorter accounts of an event the outputs share: the one line that says
//! why ([`shown`], `timeline --oneline` and the HTML table of events), and the text evidence
//! quotes ([`evidence_text`], every report format), where a Kubernetes event reads as its
//! type, reason and message and a YAML block scalar as its key and text.

use std::borrow::Cow;

use crate::event::{Event, Level, SourceKind, Text};

/// Fields that say why: shown, in this order, after the object.
const WHY: [&str; 7] = [
    "error",
    "err",
    "reason",
    "message",
    "msg",
    "detail",
    "exception",
];

/// Kinds whose `Kind.namespace` / `Kind.name` pair (operator logs) becomes `Kind=ns/name`.
const KINDS: [&str; 6] = [
    "RayService",
    "RayCluster",
    "RayJob",
    "rayCluster",
    "rayService",
    "rayJob",
];

/// Keys that name an object on their own.
const OBJECT_KEYS: [&str; 10] = [
    "RayService",
    "RayCluster",
    "RayJob",
    "raycluster",
    "rayjob",
    "rayservice",
    "NamespacedName",
    "namespace",
    "name",
    "pod",
];

/// Values up to this many characters (one line) go on the event's line; longer ones below it.
pub const INLINE_MAX: usize = 60;

/// The fields that explain `ev`, as (key, value) in the order shown: the object it concerns,
/// then why. Empty values, and values its message's first line already says, are left out.
pub fn shown_fields(ev: &Event) -> Vec<(String, String)> {
    let first_line = ev.message.lines().next().unwrap_or("");
    let get = |k: &str| field(ev, k);
    let mut out: Vec<(String, String)> = Vec::new();
    // A long value the line already holds is not repeated; a short one (`reason=Failed` on
    // "Failed to pull image") says something the words around it do not.
    let said = |v: &str| v == first_line || (v.len() >= 16 && first_line.contains(v));
    let push = |out: &mut Vec<(String, String)>, k: &str, v: String| {
        if !said(&v) && !out.iter().any(|(key, _)| key == k) {
            out.push((k.to_string(), v));
        }
    };
    // A Kubernetes fact (`path`/`value`) is one line of its object's own file: the object
    // would repeat on every line, so only events name theirs.
    if get("path").is_none() {
        if let Some(o) = get("object") {
            push(&mut out, "object", o.to_string());
        }
    }
    for kind in KINDS {
        let ns = get(&format!("{kind}.namespace"));
        if let Some(name) = get(&format!("{kind}.name")) {
            let v = ns.map_or_else(|| name.to_string(), |ns| format!("{ns}/{name}"));
            push(&mut out, kind, v);
        }
    }
    for k in OBJECT_KEYS {
        // `namespace` and `name` alone only when no object named it already.
        let named = matches!(k, "namespace" | "name") && !out.is_empty();
        if let (false, Some(v)) = (named, get(k)) {
            push(&mut out, k, v.to_string());
        }
    }
    for k in WHY {
        if let Some(v) = get(k) {
            push(&mut out, k, v.to_string());
        }
    }
    out
}

/// Whether [`shown`] may read a field of this key (the object, why, a fact's path and
/// value): a reader that keeps only these fields of an event shows it as the whole event.
pub fn may_show(key: &str) -> bool {
    let kind_pair = key
        .split_once('.')
        .is_some_and(|(kind, part)| KINDS.contains(&kind) && matches!(part, "name" | "namespace"));
    kind_pair
        || matches!(key, "object" | "path" | "value")
        || OBJECT_KEYS.contains(&key)
        || WHY.contains(&key)
}

/// What the text timeline shows of an event, parted so that it fits one line: the message,
/// the fields that explain it ([`shown_fields`]) short enough for the line and those longer.
/// `timeline --oneline` and the HTML table of events show the same line ([`Shown::line`]):
/// the message's first line, the short fields as `key=value`, and the first long field's
/// first line, which says why (`error: dial tcp …`); what it leaves out (a stack trace, the
/// rest of long fields) is counted ([`Shown::hidden`]) or folded away ([`Shown::left_out`]).
pub struct Shown<'e> {
    /// The message as written, every line.
    pub message: &'e str,
    /// The fields short enough for the line, in the order [`shown_fields`] gives.
    pub short: Vec<(String, String)>,
    /// The fields too long for it; the first says why.
    pub long: Vec<(String, String)>,
    /// A fact whose YAML value is a block scalar: the key that opens it and its text.
    block: Option<(&'e str, &'e str)>,
}

/// What the text timeline shows of `ev` ([`Shown`]).
pub fn shown(ev: &Event) -> Shown<'_> {
    let (short, long) = shown_fields(ev).into_iter().partition(|(_, v)| inline(v));
    Shown {
        message: &ev.message,
        short,
        long,
        block: block_scalar(ev),
    }
}

impl Shown<'_> {
    /// The line's text before its fields: the message's first line, or, for a YAML block
    /// scalar, its key and the first line of its text (`message: |-` says nothing).
    pub fn first_line(&self) -> Cow<'_, str> {
        match self.block {
            Some((head, value)) => {
                Cow::Owned(format!("{head} {}", value.lines().next().unwrap_or("")))
            }
            None => Cow::Borrowed(self.message.lines().next().unwrap_or("")),
        }
    }

    /// The lines under the line's text: the message's continuation lines, or the rest of a
    /// block scalar's text.
    fn below(&self) -> &str {
        let text = self.block.map_or(self.message, |(_, value)| value);
        text.split_once('\n').map_or("", |(_, rest)| rest)
    }

    /// Why: the first long field's key and the first line of its value.
    pub fn why(&self) -> Option<(&str, &str)> {
        let (k, v) = self.long.first()?;
        Some((k, v.lines().next().unwrap_or("")))
    }

    /// The one line: [`Shown::first_line`], the short fields as `key=value` and why as
    /// `key: line`, each key written through `key` (the terminal dims them).
    pub fn line(&self, key: impl Fn(&str) -> String) -> String {
        let mut out = self.first_line().into_owned();
        for (k, v) in &self.short {
            out.push(' ');
            out.push_str(&key(&format!("{k}=")));
            out.push_str(v);
        }
        if let Some((k, first)) = self.why() {
            out.push(' ');
            out.push_str(&key(&format!("{k}:")));
            out.push(' ');
            out.push_str(first);
        }
        out
    }

    /// How many lines the one line leaves out: those under its text, and every line of the
    /// long fields but why's first.
    pub fn hidden(&self) -> usize {
        let fields: usize = self.long.iter().map(|(_, v)| v.lines().count()).sum();
        self.below().lines().count() + fields.saturating_sub(1)
    }

    /// The lines the one line leaves out, as the full text shows them: the rest of why's
    /// value, every other long field as `key: value`, then the lines under the line's text.
    pub fn left_out(&self) -> String {
        let mut lines: Vec<Cow<'_, str>> = Vec::new();
        let mut long = self.long.iter();
        if let Some((_, why)) = long.next() {
            lines.extend(why.lines().skip(1).map(Cow::Borrowed));
        }
        for (k, v) in long {
            lines.push(Cow::Owned(format!("{k}: {v}")));
        }
        lines.extend(self.below().lines().map(Cow::Borrowed));
        lines.join("\n")
    }
}

/// The text evidence quotes of `ev`, a signal having matched its field `matched` (else its
/// message): what the record says ([`said`]), and the matched field as `key=value` after its
/// first line when that text does not hold the field's value, so that what matched shows.
pub fn evidence_text(ev: &Event, matched: Option<&(Text, Text)>) -> String {
    let text = said(ev);
    match matched {
        Some((k, v)) if !v.is_empty() && !text.contains(v.as_str()) => {
            let first_line = text.lines().next().unwrap_or("");
            format!("{first_line} {k}={v}")
        }
        _ => text.into_owned(),
    }
}

/// What a record says, as a reader would quote it: a Kubernetes event as its type, reason
/// and message ([`event_line`]); a fact whose YAML value is a block scalar as its key and its
/// text (`message: Deploying app …`), not the line that opens it (`message: |-`); any other
/// record as its message.
fn said(ev: &Event) -> Cow<'_, str> {
    if let Some(line) = event_line(ev) {
        return Cow::Owned(line);
    }
    match block_scalar(ev) {
        Some((head, value)) => Cow::Owned(format!("{head} {value}")),
        None => Cow::Borrowed(&ev.message),
    }
}

/// A Kubernetes event as `kubectl get events` would say it: its type, its reason and its
/// message (`Warning FailedCreate: pods "x" is forbidden: …`). Kubernetes events (tables,
/// describe sections, Event objects) keep their type and reason as fields beside the
/// message; the operator logs each event it records with the type as the message and the
/// reason and message as fields (`Normal {"reason": …, "message": …}`). `None` for any other
/// record, and for an event without a reason.
pub fn event_line(ev: &Event) -> Option<String> {
    let reason = field(ev, "reason")?;
    let (kind, message) = if matches!(ev.message.as_str(), "Normal" | "Warning") {
        (ev.message.as_str(), field(ev, "message").unwrap_or(""))
    } else if ev.kind == SourceKind::KubeEvents {
        (field(ev, "type").unwrap_or(""), ev.message.as_str())
    } else {
        return None;
    };
    let mut line = if kind.is_empty() {
        reason.to_string()
    } else {
        format!("{kind} {reason}")
    };
    if !message.is_empty() {
        line.push_str(": ");
        line.push_str(message);
    }
    Some(line)
}

/// A Kubernetes fact (`path`, `value`) whose YAML value is a block scalar: the head of the
/// line that opens it (`message:` of `message: |-`) and its text, the value the parser read.
fn block_scalar(ev: &Event) -> Option<(&str, &str)> {
    field(ev, "path")?;
    let value = field(ev, "value")?;
    let head = crate::parse::kube_object::block_scalar_head(ev.message.lines().next()?)?;
    Some((head, value))
}

/// The value of `ev`'s field `key`, trimmed; `None` when it is missing or blank.
fn field<'e>(ev: &'e Event, key: &str) -> Option<&'e str> {
    ev.field(key).map(str::trim).filter(|v| !v.is_empty())
}

/// The level `timeline` shows an event at and `--level` selects it by: the level its writer
/// gave it, or `error` when it is a log record below that whose text holds a whole failure
/// (a Python traceback that ends in its exception line, a Go panic, a C++ fatal check or a
/// crash's dump, not the dump of a `SIGTERM`). Ray folds a traceback printed after an INFO
/// line (an uncaught exception on stderr) into that INFO record, where `--level warning`
/// would hide it.
///
/// Only the timeline reads it: rules and the open world keep the writer's level, which tells
/// a traceback logged on purpose below ERROR (handled, then retried) from a failure.
pub fn shown_level(ev: &Event) -> Level {
    shown_level_of(ev.level, &ev.message, ev.kind)
}

/// [`shown_level`] of an event given by what it depends on: its level, message and kind
/// (for a writer that reads a borrowed view, `event::EventRef`).
pub fn shown_level_of(level: Level, message: &str, kind: SourceKind) -> Level {
    if level >= Level::Error
        || !message.contains('\n')
        || crate::parse::Format::of(kind).is_kubernetes()
    {
        return level;
    }
    match crate::open_world::exceptions::failure(message) {
        Some(f) if !f.cut_off && !f.requested_stop() => Level::Error,
        _ => level,
    }
}

/// Whether a value is short enough to go on the event's line.
pub fn inline(value: &str) -> bool {
    !value.contains('\n') && value.chars().count() <= INLINE_MAX
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ev(message: &str, fields: &[(&str, &str)]) -> Event {
        let mut e = Event::new(1, message.to_string());
        e.fields = fields
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        e
    }

    #[test]
    fn the_object_then_why_and_nothing_else() {
        let e = ev(
            "Fail to reconcileServe.",
            &[
                ("RayService.name", "recsys-serve"),
                ("RayService.namespace", "recsys"),
                ("error", "dial tcp 10.96.148.203:8265: i/o timeout"),
                ("reconcileID", "4b0d6e2a"),
                ("stacktrace", "github.com/…"),
            ],
        );
        assert_eq!(
            shown_fields(&e),
            vec![
                ("RayService".to_string(), "recsys/recsys-serve".to_string()),
                (
                    "error".to_string(),
                    "dial tcp 10.96.148.203:8265: i/o timeout".to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_traceback_after_an_info_line_is_shown_at_error() {
        let mut e = ev(
            "Local node IP: 10.244.2.31\nTraceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\n    main()\nValueError: cap too small",
            &[],
        );
        e.kind = crate::event::SourceKind::RayContainer;
        e.level = Level::Info;
        assert_eq!(shown_level(&e), Level::Error);
        // Cut off before its exception: the writer's level stands.
        e.message = "Local node IP\nTraceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>".into();
        assert_eq!(shown_level(&e), Level::Info);
        // A traceback quoted in a Kubernetes object's message is not a log record.
        e.message = "Message: failed\nTraceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\nValueError: x".into();
        e.kind = crate::event::SourceKind::DescribeRayService;
        assert_eq!(shown_level(&e), Level::Info);
    }

    /// absl's dump of a SIGTERM (what `ray stop` makes a Ray process print) folded into a
    /// record below error stays at its level; a crash's is shown at error.
    #[test]
    fn a_stops_dump_keeps_its_level_and_a_crashs_is_shown_at_error() {
        let mut e = ev(
            "step 8\n*** SIGTERM received at time=1796546550 on cpu 1 ***\nPC: @     0x7fadbd6ed545  (unknown)  clock_nanosleep",
            &[],
        );
        e.kind = crate::event::SourceKind::JobDriver;
        assert_eq!(shown_level(&e), Level::Info);
        e.message = e.message.replace("SIGTERM", "SIGSEGV");
        assert_eq!(shown_level(&e), Level::Error);
    }

    #[test]
    fn what_the_message_says_and_facts_objects_are_left_out() {
        let e = ev(
            "Back-off restarting failed container",
            &[
                ("reason", "BackOff"),
                ("message", "Back-off restarting failed container"),
                ("object", "pod/head-0"),
            ],
        );
        assert_eq!(
            shown_fields(&e),
            vec![
                ("object".to_string(), "pod/head-0".to_string()),
                ("reason".to_string(), "BackOff".to_string()),
            ]
        );
        let fact = ev(
            "Name:  fraud-scorer",
            &[
                ("object", "RayService/default/fraud-scorer"),
                ("path", "metadata.name"),
                ("value", "fraud-scorer"),
            ],
        );
        assert!(shown_fields(&fact).is_empty());
    }

    #[test]
    fn an_event_is_its_type_reason_and_message() {
        // As the operator logs an event it records: the type where the message goes.
        let logged = ev(
            "Warning",
            &[
                ("object.kind", "RayCluster"),
                ("reason", "PodReconciliationError"),
                ("message", "pods \"x\" is forbidden: exceeded quota"),
            ],
        );
        let said = "Warning PodReconciliationError: pods \"x\" is forbidden: exceeded quota";
        assert_eq!(event_line(&logged).as_deref(), Some(said));
        // The signal matched the message field: the line already says it.
        assert_eq!(evidence_text(&logged, logged.fields.get(2)), said);
        // A Kubernetes event keeps its message, its type and reason beside it.
        let mut table_row = ev(
            "Back-off restarting failed container",
            &[
                ("type", "Warning"),
                ("reason", "BackOff"),
                ("object", "pod/head-0"),
            ],
        );
        table_row.kind = SourceKind::KubeEvents;
        assert_eq!(
            evidence_text(&table_row, table_row.fields.get(1)),
            "Warning BackOff: Back-off restarting failed container"
        );
        // What the line does not say is still shown when it matched.
        assert_eq!(
            evidence_text(&table_row, table_row.fields.get(2)),
            "Warning BackOff: Back-off restarting failed container object=pod/head-0"
        );
        // A log record with a reason is no event.
        let record = ev("Update CR status", &[("reason", "Failed")]);
        assert_eq!(event_line(&record), None);
        assert_eq!(evidence_text(&record, None), "Update CR status");
    }

    #[test]
    fn a_yaml_block_scalar_is_its_key_and_its_text() {
        let value =
            "Deploying app 'search' failed with exception:\nTraceback (most recent call last):";
        let fact = ev(
            "message: |-\n    Deploying app 'search' failed with exception:\n    Traceback (most recent call last):",
            &[("path", "status.applicationstatuses.search.message"), ("value", value)],
        );
        let quoted = format!("message: {value}");
        assert_eq!(evidence_text(&fact, None), quoted);
        assert_eq!(evidence_text(&fact, fact.fields.get(1)), quoted);
        let shown = shown(&fact);
        assert_eq!(
            shown.line(str::to_string),
            "message: Deploying app 'search' failed with exception:"
        );
        assert_eq!(shown.hidden(), 1);
        assert_eq!(shown.left_out(), "Traceback (most recent call last):");
        // A plain scalar is quoted as written.
        let plain = ev(
            "status: DEPLOY_FAILED",
            &[("path", "status"), ("value", "DEPLOY_FAILED")],
        );
        assert_eq!(
            evidence_text(&plain, plain.fields.get(1)),
            "status: DEPLOY_FAILED"
        );
    }

    #[test]
    fn one_line_says_why_and_leaves_out_the_stack() {
        let e = ev(
            "Fail to reconcileServe.\ngithub.com/x.(*R).Reconcile\n\t/workspace/r.go:152",
            &[
                ("RayService.name", "recsys-serve"),
                ("RayService.namespace", "recsys"),
                ("error", "Failed to get Serve application statuses from the dashboard agent: dial tcp: connection refused\nsecond line"),
                ("message", "a long message that goes on and on well past the sixty characters of a line"),
                ("stacktrace", "never shown"),
            ],
        );
        let shown = shown(&e);
        assert_eq!(
            shown.line(|k| format!("<{k}>")),
            "Fail to reconcileServe. <RayService=>recsys/recsys-serve <error:> Failed to get Serve application statuses from the dashboard agent: dial tcp: connection refused"
        );
        assert_eq!(shown.hidden(), 4);
        assert_eq!(
            shown.left_out(),
            "second line\nmessage: a long message that goes on and on well past the sixty characters of a line\ngithub.com/x.(*R).Reconcile\n\t/workspace/r.go:152"
        );
        // The fields the line reads are the fields a picture keeps.
        for (k, _) in &e.fields {
            assert_eq!(may_show(k), k != "stacktrace", "{k}");
        }
    }
}
