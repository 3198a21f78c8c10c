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

use crate::event::{Event, Level, SourceKind};

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
    let get = |k: &str| {
        ev.fields
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    };
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

/// The level `timeline` shows an event at and `--level` selects it by: the level its writer
/// gave it, or `error` when it is a log record below that whose text holds a whole failure
/// (a Python traceback that ends in its exception line, a Go panic, a C++ fatal check). Ray
/// folds a traceback printed after an INFO line (an uncaught exception on stderr) into that
/// INFO record, where `--level warning` would hide it.
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
        Some(f) if !f.cut_off => Level::Error,
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
}
