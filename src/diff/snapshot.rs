//! What one bundle says of its Ray objects, read from the facts of its timeline: each
//! RayService's, RayCluster's and RayJob's spec as flat fields (a RayService's `serveConfigV2`
//! read again as YAML, field by field), their states, the images the bundle runs, and the
//! other workload objects that report themselves failing (`open_world::objects::problems`).
//!
//! A field is named by its path with each list item named by its `name` (`groupName` for a
//! worker group, `type` for a condition) when it has one, and each key as the line wrote it:
//! `workerGroupSpecs[gpu-group].replicas`, `serveConfigV2.applications[chat].import_path`. So
//! a reordered list is no change, and the name says which group or application changed.
//!
//! Objects are matched across bundles by kind, namespace and *stem*: the name with the
//! random parts KubeRay and Kubernetes add (`-xk4dz`, a pod template hash) made `*`, so the
//! RayCluster a RayService made again, or a pod of the same group, is the same object.
//!
//! Invariant: nothing here fails on input; specs are small, so all of them are kept.

use std::collections::{BTreeMap, BTreeSet};

use crate::event::Event;
use crate::parse::tree::norm_key;
use crate::parse::ParseOutput;
use crate::serve_schema::config::written_key;
use crate::timeline::Timeline;

/// The kinds whose specs and states are compared.
const RAY_KINDS: [&str; 3] = ["RayService", "RayCluster", "RayJob"];

/// The characters of the random suffixes KubeRay and Kubernetes generate (no vowels, no
/// digits that look like letters).
const RANDOM: &str = "bcdfghjklmnpqrstvwxz2456789";

/// An object, matched across bundles.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub kind: String,
    pub namespace: String,
    /// The name with its generated parts made `*`.
    pub stem: String,
}

impl Key {
    pub fn new(kind: &str, namespace: Option<&str>, name: &str) -> Key {
        Key {
            kind: kind.to_string(),
            namespace: namespace.unwrap_or_default().to_string(),
            stem: stem(name),
        }
    }
}

/// One Ray object of a bundle.
#[derive(Clone, Debug, Default)]
pub struct Object {
    /// `RayService ns/name`, as the reports name it.
    pub shown: String,
    /// Spec fields (without `spec.`) and their values.
    pub spec: BTreeMap<String, String>,
    /// State fields (`status.…`) and their values.
    pub states: BTreeMap<String, String>,
}

/// What the diff compares of one bundle besides its report.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// By stem and exact name: two clusters of one RayService during an upgrade share a stem.
    pub objects: BTreeMap<(Key, String), Object>,
    /// Image repository → the tags the bundle's specs name.
    pub images: BTreeMap<String, BTreeSet<String>>,
    /// Workload objects other than Ray's that report themselves failing: shown name and state.
    pub problems: BTreeMap<Key, (String, String)>,
}

/// One fact of an object, as read.
struct Fact {
    path: String,
    message: String,
    value: Option<String>,
}

impl Snapshot {
    /// Reads the facts of `tl`.
    pub fn of(tl: &Timeline) -> Snapshot {
        Snapshot::of_events(&tl.events)
    }

    pub fn of_events(events: &[Event]) -> Snapshot {
        let mut snap = Snapshot::default();
        let mut facts: BTreeMap<(Key, String), (String, Vec<Fact>)> = BTreeMap::new();
        for ev in events {
            let (Some(object), Some(path)) = (ev.field("object"), ev.field("path")) else {
                continue;
            };
            let value = ev.field("value").filter(|v| !v.trim().is_empty());
            if let Some(v) = value {
                if last_step(path) == "image" && !path.starts_with("status") {
                    let (repo, tag) = split_image(v);
                    snap.images.entry(repo).or_default().insert(tag);
                }
            }
            let Some((kind, ns, name)) = split_object(object) else {
                continue;
            };
            if !RAY_KINDS.contains(&kind)
                || !(path.starts_with("spec") || path.starts_with("status"))
            {
                continue;
            }
            let key = (Key::new(kind, ns, name), name.to_string());
            let shown = match ns {
                Some(ns) => format!("{kind} {ns}/{name}"),
                None => format!("{kind} {name}"),
            };
            let entry = facts.entry(key).or_insert_with(|| (shown, Vec::new()));
            if path.ends_with("serveconfigv2") {
                if let Some(parsed) = value.and_then(|v| serve_config(path, v)) {
                    entry.1.push(Fact {
                        path: path.to_string(),
                        message: ev.message.clone(),
                        value: None,
                    });
                    entry.1.extend(parsed);
                    continue;
                }
            }
            entry.1.push(Fact {
                path: path.to_string(),
                message: ev.message.clone(),
                value: value.map(str::to_string),
            });
        }
        for (key, (shown, facts)) in facts {
            snap.objects.insert(key, object_of(shown, &facts));
        }
        for p in crate::open_world::objects::problems(events) {
            let Some((kind, ns, name)) = split_object(&p.object) else {
                continue;
            };
            if RAY_KINDS.contains(&kind) {
                continue;
            }
            let shown = match ns {
                Some(ns) => format!("{kind} {ns}/{name}"),
                None => format!("{kind} {name}"),
            };
            snap.problems
                .entry(Key::new(kind, ns, name))
                .or_insert((shown, p.state));
        }
        snap
    }

    /// The object of this bundle that is `name` of `key` in another: the one of that exact
    /// name, else the only one of that stem when the other bundle has only one too.
    pub fn counterpart(&self, other: &Snapshot, key: &(Key, String)) -> Option<&Object> {
        if let Some(o) = self.objects.get(key) {
            return Some(o);
        }
        let of_stem = |s: &Snapshot| s.objects.iter().filter(|((k, _), _)| *k == key.0).count();
        if of_stem(self) != 1 || of_stem(other) != 1 {
            return None;
        }
        self.objects
            .iter()
            .find(|((k, _), _)| *k == key.0)
            .map(|(_, o)| o)
    }
}

/// `Kind/ns/name` or `Kind/name`.
fn split_object(object: &str) -> Option<(&str, Option<&str>, &str)> {
    let mut parts = object.splitn(3, '/');
    let kind = parts.next().filter(|k| !k.is_empty())?;
    let second = parts.next().filter(|s| !s.is_empty())?;
    match parts.next() {
        Some(name) if !name.is_empty() => Some((kind, Some(second), name)),
        Some(_) => None,
        None => Some((kind, None, second)),
    }
}

/// A name with the parts KubeRay and Kubernetes generate made `*`: a five-character suffix
/// of their alphabet (`-xk4dz`), a pod template hash (`-66d8f5c9b7`).
pub fn stem(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let generated = matches!(part.len(), 5 | 9 | 10)
                && part.chars().all(|c| RANDOM.contains(c))
                && part.chars().any(|c| c.is_ascii_digit());
            if generated {
                "*"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// An image as repository and tag (or digest): `docker.io/rayproject/ray:2.41.0` →
/// (`rayproject/ray`, `2.41.0`); no tag is `latest`.
fn split_image(image: &str) -> (String, String) {
    let image = image.trim().trim_matches('"');
    let (repo, tag) = match image.rsplit_once('@') {
        Some((r, d)) => (r, d.to_string()),
        None => match image.rsplit_once(':') {
            Some((r, t)) if !t.contains('/') => (r, t.to_string()),
            _ => (image, "latest".to_string()),
        },
    };
    let repo = repo.strip_prefix("docker.io/").unwrap_or(repo);
    let repo = repo.strip_prefix("library/").unwrap_or(repo);
    (repo.to_string(), tag)
}

fn last_step(path: &str) -> &str {
    let cut = path.rfind(['.', ']']).map_or(0, |i| i + 1);
    &path[cut..]
}

/// A `serveConfigV2` string read as YAML: its facts, under the fact's path; `None` when it
/// holds no key.
fn serve_config(path: &str, text: &str) -> Option<Vec<Fact>> {
    let mut out = ParseOutput::default();
    crate::parse::kube_object::parse(text.as_bytes(), &mut out);
    let facts: Vec<Fact> = out
        .events
        .iter()
        .filter_map(|ev| {
            let sub = ev.field("path")?;
            let joined = if sub.starts_with('[') {
                format!("{path}{sub}")
            } else {
                format!("{path}.{sub}")
            };
            Some(Fact {
                path: joined,
                message: ev.message.clone(),
                value: ev.field("value").map(str::to_string),
            })
        })
        .collect();
    (!facts.is_empty()).then_some(facts)
}

/// One step of a normalised path.
enum Step<'a> {
    Key(&'a str),
    Index(&'a str),
}

/// The steps of a normalised path (`a.b[0].c`).
fn steps(path: &str) -> Vec<(usize, Step<'_>)> {
    let mut out = Vec::new();
    let mut i = 0;
    let bytes = path.as_bytes();
    while i < bytes.len() {
        match bytes[i] {
            b'.' => i += 1,
            b'[' => {
                let end = path[i..].find(']').map_or(path.len(), |e| i + e);
                out.push((end + 1, Step::Index(&path[i + 1..end])));
                i = end + 1;
            }
            _ => {
                let end = path[i..].find(['.', '[']).map_or(path.len(), |e| i + e);
                out.push((end, Step::Key(&path[i..end])));
                i = end;
            }
        }
    }
    out
}

/// The keys that name a list item.
fn names_item(list: &str, key: &str) -> bool {
    match key {
        "name" | "groupname" => true,
        "type" => list.ends_with("conditions"),
        _ => false,
    }
}

/// An object's spec and states from its facts.
fn object_of(shown: String, facts: &[Fact]) -> Object {
    // List items named by a key of theirs, and each key as the line wrote it.
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    let mut written: BTreeMap<&str, String> = BTreeMap::new();
    for f in facts {
        let st = steps(&f.path);
        if let Some((_, Step::Key(last))) = st.last() {
            written.insert(&f.path, written_key(&f.message, last));
            if st.len() >= 2 {
                if let (Some(v), (item_end, Step::Index(_))) = (&f.value, &st[st.len() - 2]) {
                    let list = f.path[..*item_end].rsplit_once('[').map_or("", |(l, _)| l);
                    if names_item(list, last) {
                        names.insert(&f.path[..*item_end], v.as_str());
                    }
                }
            }
        }
    }
    let shown_path = |path: &str| -> String {
        let mut out = String::new();
        for (end, step) in steps(path) {
            let prefix = &path[..end];
            match step {
                Step::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(written.get(prefix).map_or(k, String::as_str));
                }
                Step::Index(i) => {
                    out.push('[');
                    out.push_str(names.get(prefix).copied().unwrap_or(i));
                    out.push(']');
                }
            }
        }
        out
    };
    let mut obj = Object {
        shown,
        ..Object::default()
    };
    for f in facts {
        let Some(value) = f.value.as_deref().map(str::trim) else {
            continue;
        };
        if value.is_empty() || value == "{}" || value == "[]" {
            continue;
        }
        let st = steps(&f.path);
        // A name that names its item is in the item's own name already.
        if let [.., (item_end, Step::Index(_)), (_, Step::Key(last))] = st.as_slice() {
            if names.contains_key(&f.path[..*item_end]) && names_item("", last) {
                continue;
            }
            if names.contains_key(&f.path[..*item_end]) && *last == "type" {
                continue;
            }
        }
        let shown = shown_path(&f.path);
        if let Some(rest) = shown.strip_prefix("spec.").or(shown.strip_prefix("Spec.")) {
            obj.spec.insert(rest.to_string(), value.to_string());
        } else if f.path.starts_with("status") && is_state(&f.path) {
            obj.states.insert(shown, value.to_string());
        }
    }
    obj
}

/// Whether a status field says how an object or a part of it is.
fn is_state(path: &str) -> bool {
    let last = last_step(path);
    matches!(
        last,
        "status" | "state" | "jobstatus" | "jobdeploymentstatus" | "servicestatus"
    ) && !path.contains("lastupdatetime")
}

/// How good a state is: 2 healthy or done, 1 on its way or unknown, 0 failing; `None` for a
/// condition that says nothing of health.
pub fn health(path: &str, value: &str) -> Option<u8> {
    if let Some(at) = path.find("conditions[") {
        let ty = path[at + 11..].split(']').next().unwrap_or("");
        let ty = norm_key(ty);
        if !(ty.contains("ready") || ty.contains("provisioned") || ty.contains("available")) {
            return None;
        }
        return Some(match value {
            "True" => 2,
            "False" => 0,
            _ => 1,
        });
    }
    let v = value.to_ascii_lowercase();
    const GOOD: [&str; 8] = [
        "running",
        "healthy",
        "ready",
        "succeeded",
        "complete",
        "completed",
        "available",
        "true",
    ];
    if GOOD.contains(&v.as_str()) {
        Some(2)
    } else if ["fail", "unhealthy", "error", "backoff", "timeout", "false"]
        .iter()
        .any(|w| v.contains(w))
    {
        Some(0)
    } else {
        Some(1)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn generated_parts_of_names_are_stemmed() {
        assert_eq!(stem("llm-chat-xk4dz"), "llm-chat-*");
        assert_eq!(
            stem("llm-chat-xk4dz-gpu-group-worker-9fwtl"),
            "llm-chat-*-gpu-group-worker-*"
        );
        assert_eq!(
            stem("kuberay-operator-66d8f5c9b7-n4x2p"),
            "kuberay-operator-*-*"
        );
        assert_eq!(stem("doc-search"), "doc-search");
        assert_eq!(stem("fraud-guard"), "fraud-guard");
    }

    #[test]
    fn objects_match_by_name_then_by_their_only_stem() {
        let snap = |names: &[&str]| Snapshot {
            objects: names
                .iter()
                .map(|n| {
                    let key = (Key::new("RayCluster", Some("ray"), n), n.to_string());
                    let o = Object {
                        shown: n.to_string(),
                        ..Object::default()
                    };
                    (key, o)
                })
                .collect(),
            ..Snapshot::default()
        };
        let key = |n: &str| (Key::new("RayCluster", Some("ray"), n), n.to_string());
        let old = snap(&["chat-xk4dz"]);
        let new = snap(&["chat-b7q2m"]);
        // Made again under another name: the same cluster.
        let found = old.counterpart(&new, &key("chat-b7q2m"));
        assert_eq!(found.map(|o| o.shown.as_str()), Some("chat-xk4dz"));
        // Two of one stem (an upgrade's active and pending clusters): only the exact name.
        let upgrading = snap(&["chat-xk4dz", "chat-b7q2m"]);
        let found = upgrading.counterpart(&old, &key("chat-xk4dz"));
        assert_eq!(found.map(|o| o.shown.as_str()), Some("chat-xk4dz"));
        assert!(old.counterpart(&upgrading, &key("chat-b7q2m")).is_none());
    }

    #[test]
    fn images_split_into_repository_and_tag() {
        assert_eq!(
            split_image("docker.io/rayproject/ray:2.41.0-py311"),
            ("rayproject/ray".to_string(), "2.41.0-py311".to_string())
        );
        assert_eq!(
            split_image("localhost:5000/ray"),
            ("localhost:5000/ray".to_string(), "latest".to_string())
        );
        assert_eq!(
            split_image("quay.io/kuberay/operator:v1.5.1"),
            ("quay.io/kuberay/operator".to_string(), "v1.5.1".to_string())
        );
    }

    #[test]
    fn states_have_a_health() {
        assert_eq!(health("status.x.status", "RUNNING"), Some(2));
        assert_eq!(health("status.x.status", "DEPLOY_FAILED"), Some(0));
        assert_eq!(health("status.x.status", "DEPLOYING"), Some(1));
        assert_eq!(health("status.conditions[Ready].status", "False"), Some(0));
        assert_eq!(
            health("status.conditions[UpgradeInProgress].status", "False"),
            None
        );
    }
}
