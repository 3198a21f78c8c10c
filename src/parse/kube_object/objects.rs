//! From leaves to events: cuts a flattened document into its objects and writes one event
//! per leaf. A list (`kind: List`, a typed `*List`, or `items` with no kind; a bare array)
//! gives one object per element, a typed list's items taking its kind. Each leaf becomes a
//! fact whose `path` is relative to its object and whose `object` is `Kind/namespace/name`;
//! the leaves of an `Event` object (core/v1 or events.k8s.io/v1) become one Kubernetes
//! Event record instead; the leaves under `metadata.managedFields` are dropped, so their
//! lines fold into the event before them. A fact of a container's state, a condition or a
//! status takes that block's own time (`block_time`).

use std::collections::HashMap;

use super::Leaf;
use crate::event::{format_rfc3339, Event, RawTime};
use crate::parse::block_time::BlockTimes;
use crate::parse::primitives::instant;
use crate::parse::tree::{fact, object_id, EventRecord};

/// Which object of the document a path belongs to, and the path relative to it.
fn group_of(path: &str, list_mode: bool) -> (Option<usize>, &str) {
    let indexed = if path.starts_with('[') {
        Some(path)
    } else if list_mode {
        path.strip_prefix("items").filter(|r| r.starts_with('['))
    } else {
        None
    };
    let Some(rest) = indexed.and_then(|r| r.strip_prefix('[')) else {
        return (None, path);
    };
    let Some((idx, after)) = rest.split_once(']') else {
        return (None, path);
    };
    let Ok(idx) = idx.parse::<usize>() else {
        return (None, path);
    };
    (Some(idx), after.strip_prefix('.').unwrap_or(after))
}

#[derive(Default)]
struct Ident {
    kind: String,
    namespace: String,
    name: String,
}

pub(super) fn emit_doc(doc: Vec<Leaf>, events: &mut Vec<Event>, unparsed: &mut u64) {
    let root_kind = doc
        .iter()
        .find(|l| l.path == "kind")
        .and_then(|l| l.value.as_deref());
    let list_mode = root_kind.is_none_or(|k| k.ends_with("List"))
        && doc.iter().any(|l| l.path.starts_with("items["));
    // Items of a typed list (`PodList`, `EventList`) carry no kind of their own.
    let item_kind = root_kind
        .and_then(|k| k.strip_suffix("List"))
        .filter(|k| !k.is_empty())
        .unwrap_or("");
    let mut idents: HashMap<Option<usize>, Ident> = HashMap::new();
    for leaf in &doc {
        let (group, rel) = group_of(&leaf.path, list_mode);
        if list_mode && group.is_none() {
            continue;
        }
        let ident = idents.entry(group).or_insert_with(|| Ident {
            kind: item_kind.to_string(),
            ..Ident::default()
        });
        let value = leaf.value.clone().unwrap_or_default();
        match rel {
            "kind" => ident.kind = value,
            "metadata.namespace" => ident.namespace = value,
            "metadata.name" => ident.name = value,
            _ => {}
        }
    }
    let objects: HashMap<Option<usize>, String> = idents
        .iter()
        .filter_map(|(g, i)| object_id(&i.kind, &i.namespace, &i.name).map(|o| (*g, o)))
        .collect();
    let times = block_times(&doc, &idents, list_mode);
    let mut idx = 0;
    while let Some(leaf) = doc.get(idx) {
        if leaf.raw {
            *unparsed += 1;
            events.push(Event::new(leaf.line, leaf.message.clone()));
            idx += 1;
            continue;
        }
        let (group, rel) = group_of(&leaf.path, list_mode);
        if rel.starts_with("metadata.managedfields.") || rel.starts_with("metadata.managedfields[")
        {
            // Skipped: the lines fold into the previous event.
            idx += 1;
            continue;
        }
        let is_event = idents.get(&group).is_some_and(|i| i.kind == "Event")
            && !(list_mode && group.is_none());
        if is_event {
            let end = doc
                .iter()
                .skip(idx)
                .position(|l| l.raw || group_of(&l.path, list_mode).0 != group)
                .map_or(doc.len(), |n| idx + n);
            let values: HashMap<&str, &str> = doc
                .get(idx..end)
                .unwrap_or(&[])
                .iter()
                .filter_map(|l| Some((group_of(&l.path, list_mode).1, l.value.as_deref()?)))
                .collect();
            events.push(record(&values).into_event(leaf.line, 1));
            idx = end.max(idx + 1);
            continue;
        }
        let object = objects.get(&group).map(String::as_str);
        let mut ev = fact(
            leaf.line,
            1,
            leaf.message.clone(),
            rel,
            leaf.value.clone(),
            object,
        );
        ev.raw_time = times.get(&group).and_then(|t| t.of(rel)).map(RawTime::Utc);
        events.push(ev);
        idx += 1;
    }
}

/// The times of each object of the document, from its leaves (`block_time`).
fn block_times(
    doc: &[Leaf],
    idents: &HashMap<Option<usize>, Ident>,
    list_mode: bool,
) -> HashMap<Option<usize>, BlockTimes> {
    let mut times: HashMap<Option<usize>, BlockTimes> = HashMap::new();
    for leaf in doc.iter().filter(|l| !l.raw) {
        let Some(value) = leaf.value.as_deref() else {
            continue;
        };
        let (group, rel) = group_of(&leaf.path, list_mode);
        times
            .entry(group)
            .or_insert_with(|| BlockTimes::new(idents.get(&group).map_or("", |i| &i.kind)))
            .note(rel, value);
    }
    times
}

/// A core/v1 or events.k8s.io/v1 Event object as a record.
fn record(values: &HashMap<&str, &str>) -> EventRecord {
    let get = |keys: &[&str]| -> String {
        keys.iter()
            .filter_map(|k| values.get(k))
            .find(|v| !v.is_empty() && **v != "null")
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    let time_of = |key: &str| -> Option<i64> {
        let v = values.get(key)?;
        match instant(v) {
            Ok(("", t)) => Some(t),
            _ => None,
        }
    };
    let kind = get(&["involvedobject.kind", "regarding.kind"]);
    let namespace = get(&["involvedobject.namespace", "regarding.namespace"]);
    let name = get(&["involvedobject.name", "regarding.name"]);
    let time = [
        "lasttimestamp",
        "deprecatedlasttimestamp",
        "eventtime",
        "series.lastobservedtime",
    ]
    .iter()
    .chain(["firsttimestamp", "deprecatedfirsttimestamp"].iter())
    .find_map(|k| time_of(k));
    let mut rec = EventRecord {
        event_type: get(&["type"]),
        reason: get(&["reason"]),
        message: get(&["message", "note"]),
        component: get(&[
            "source.component",
            "reportingcomponent",
            "reportingcontroller",
            "deprecatedsource.component",
        ]),
        object: object_id(&kind, &namespace, &name).unwrap_or_default(),
        object_kind: kind,
        object_name: name,
        namespace,
        field_path: get(&["involvedobject.fieldpath", "regarding.fieldpath"]),
        time: time.map(RawTime::Utc),
        ..EventRecord::default()
    };
    let count = get(&["count", "series.count", "deprecatedcount"]);
    rec.count = (!count.is_empty()).then_some(count);
    if let Some(first) = time_of("firsttimestamp").or(time_of("deprecatedfirsttimestamp")) {
        rec.extra
            .push(("first_seen_utc".into(), format_rfc3339(first).into()));
    }
    rec.extra
        .push(("event_name".into(), get(&["metadata.name"]).into()));
    rec
}
