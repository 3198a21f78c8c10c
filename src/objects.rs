//! The Kubernetes objects an event concerns: the RayService, RayCluster, RayJob, pod or node a
//! support engineer has to look at. Every cause names the objects of its evidence, and the
//! `--namespace` / `--object` filters keep the events of one object.
//!
//! Objects are read from what the event itself says, never guessed from its message text:
//! - facts and events of Kubernetes documents carry `object` = `Kind/namespace/name`
//!   (`Pod//name` when a `kubectl get` table gave no namespace);
//! - the operator's structured fields, in every KubeRay version's spelling:
//!   `RayService.name` + `RayService.namespace` (JSON, 1.1+), `RayService name` (console),
//!   `reconciler kind` / `controllerKind` with `name` and `namespace` (controller-runtime),
//!   `NamespacedName` / `ServiceName` `ns/name` (kind from the logger), plain `RayJob`,
//!   `rayCluster`, `clusterName`, `head Pod` values;
//! - a file's path, for the logs of one pod (`<ns>/<pod>/logs.txt` of a cluster-info dump,
//!   `…/<pod>/raylet.out`): a folder named like a pod the bundle lists, or like a KubeRay
//!   head or worker pod; in a copy of the KubeRay History Server's storage, the RayCluster
//!   the key names (`cluster-history/<kind>/<ns>/[<owner>/]<cluster>/…`), so that
//!   `--object RayCluster/<cluster>` keeps one cluster's files of several.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::event::Event;

/// One Kubernetes object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectRef {
    /// `RayService`, `RayCluster`, `RayJob`, `Pod`, `Node`, … (Kubernetes' spelling).
    pub kind: String,
    /// `None` for cluster-scoped objects and where the evidence did not say.
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectRef {
    fn new(kind: &str, namespace: Option<&str>, name: &str) -> Option<ObjectRef> {
        let name = name.trim();
        if !plausible_name(name) {
            return None;
        }
        Some(ObjectRef {
            kind: canonical_kind(kind),
            namespace: namespace
                .map(str::trim)
                .filter(|ns| plausible_name(ns))
                .map(str::to_string),
            name: name.to_string(),
        })
    }

    /// Ray's own objects first, then pods, nodes, the rest.
    fn rank(&self) -> u8 {
        match self.kind.as_str() {
            "RayService" => 0,
            "RayJob" => 1,
            "RayCluster" => 2,
            "Pod" => 3,
            "Node" => 4,
            _ => 5,
        }
    }

    pub fn is_ray(&self) -> bool {
        self.rank() <= 2
    }

    /// Whether `filter` (`KIND/NAME`, kind case-insensitive, `pod` or `pods`) names it.
    pub fn matches(&self, kind: &str, name: &str) -> bool {
        canonical_kind(kind) == self.kind && self.name == name
    }
}

impl fmt::Display for ObjectRef {
    /// `RayService default/fraud-scorer`, `Node ip-10-0-1-7`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The kinds raysift spells as Kubernetes does.
const KNOWN_KINDS: [&str; 19] = [
    "RayService",
    "RayCluster",
    "RayJob",
    "Pod",
    "Node",
    "Job",
    "Service",
    "ConfigMap",
    "Secret",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Namespace",
    "Lease",
    "Ingress",
    "PersistentVolumeClaim",
    "ServiceAccount",
    "Event",
];

/// Kubernetes' spelling of a kind, whatever case or plural a log or a user gave.
pub fn canonical_kind(kind: &str) -> String {
    let lower = kind.trim().to_ascii_lowercase();
    // `pods`, `ingresses`: the singular is the name itself, or without `s` or `es`.
    let singulars = [
        Some(lower.as_str()),
        lower.strip_suffix('s'),
        lower.strip_suffix("es"),
    ];
    for singular in singulars.into_iter().flatten() {
        if let Some(k) = KNOWN_KINDS
            .iter()
            .find(|k| k.eq_ignore_ascii_case(singular))
        {
            return (*k).to_string();
        }
    }
    match lower.as_str() {
        "po" => "Pod".to_string(),
        "no" => "Node".to_string(),
        "svc" => "Service".to_string(),
        "cm" => "ConfigMap".to_string(),
        "pvc" => "PersistentVolumeClaim".to_string(),
        _ => {
            let mut c = kind.trim().chars();
            match c.next() {
                Some(first) => first.to_uppercase().chain(c).collect(),
                None => String::new(),
            }
        }
    }
}

/// A DNS-1123 name (or a node's host name): what Kubernetes accepts as an object's name.
/// Placeholders (`<my serve resource name>`), empty values and JSON fragments are not names.
fn plausible_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && s.as_bytes()[0].is_ascii_alphanumeric()
}

/// The kinds the operator names in its fields.
const RAY_KINDS: [&str; 3] = ["RayService", "RayCluster", "RayJob"];

/// The operator's name and namespace keys of a Ray object: flattened JSON context (1.1+) and
/// console keys (0.x). Matched without regard to case (`rayCluster.name`).
const RAY_NAME_KEYS: [(&str, &str, &str); 6] = [
    ("RayService", "RayService.name", "RayService.namespace"),
    ("RayCluster", "RayCluster.name", "RayCluster.namespace"),
    ("RayJob", "RayJob.name", "RayJob.namespace"),
    ("RayService", "RayService name", "RayService namespace"),
    ("RayCluster", "RayCluster name", "RayCluster namespace"),
    ("RayJob", "RayJob name", "RayJob namespace"),
];

/// Keys whose value is a RayCluster's name (KubeRay versions differ).
const CLUSTER_NAME_KEYS: [&str; 4] = [
    "clusterName",
    "cluster name",
    "healthyClusterName",
    "ActiveRayClusterName",
];

/// Keys whose value is a pod's name.
const POD_NAME_KEYS: [&str; 3] = ["head Pod", "worker Pod", "pod"];

/// The objects one event names in its own fields (not its file's path).
pub fn of_event(ev: &Event) -> Vec<ObjectRef> {
    let mut out = Vec::new();
    let field = |k: &str| ev.field(k).filter(|v| !v.is_empty());
    let field_ci = |k: &str| {
        ev.fields
            .iter()
            .find(|(key, v)| key.eq_ignore_ascii_case(k) && !v.is_empty())
            .map(|(_, v)| v.as_str())
    };
    let namespace = field("namespace");

    // Kubernetes documents and events: `Kind/namespace/name`.
    if let Some(o) = field("object") {
        out.extend(parse_kind_ns_name(o));
    }
    // Events echoed by the operator (development mode): `object.kind` …
    if let (Some(kind), Some(name)) = (field("object.kind"), field("object.name")) {
        out.extend(ObjectRef::new(kind, field("object.namespace"), name));
    }
    // JSON context `"RayService":{"name":…,"namespace":…}` flattened, or console keys.
    for (kind, name_key, ns_key) in RAY_NAME_KEYS {
        if let Some(name) = field_ci(name_key) {
            let ns = field_ci(ns_key).or(namespace);
            out.extend(ObjectRef::new(kind, ns, name));
        }
    }
    // A plain value: `"RayJob": "name"` or `"raycluster": "ns/name"`.
    for kind in RAY_KINDS {
        if let Some(v) = field_ci(kind) {
            out.extend(ns_name(kind, v, namespace));
        }
    }
    // The operator's other objects under their kind as the key, spelled as Kubernetes does
    // (`"ServiceAccount": "ns/name"`); `node` in lower case is a table column, not one.
    for kind in KNOWN_KINDS.iter().filter(|k| !RAY_KINDS.contains(k)) {
        if let Some(v) = field(kind) {
            out.extend(ns_name(kind, v, namespace));
        }
    }
    // controller-runtime: `reconciler kind` (0.x console) or `controllerKind` with the
    // request's `name` and `namespace`.
    if let Some(kind) = field("reconciler kind").or(field("controllerKind")) {
        if let Some(name) = field("name") {
            out.extend(ObjectRef::new(kind, namespace, name));
        }
    }
    // `ns/name` of the reconciled object, whose kind the logger gives.
    if let Some(kind) = logger_kind(&ev.component) {
        for key in ["NamespacedName", "ServiceName"] {
            if let Some(v) = field(key) {
                out.extend(ns_name(kind, v, namespace));
            }
        }
    }
    for key in CLUSTER_NAME_KEYS {
        if let Some(v) = field(key) {
            out.extend(ns_name("RayCluster", v, namespace));
        }
    }
    for key in POD_NAME_KEYS {
        if let Some(v) = field(key) {
            out.extend(ns_name("Pod", v, namespace));
        }
    }
    // Objects of one event share the namespace where only one of them said it.
    let shared: BTreeSet<&str> = out
        .iter()
        .filter(|o| o.kind != "Node")
        .filter_map(|o| o.namespace.as_deref())
        .collect();
    if shared.len() == 1 {
        let ns = shared.iter().next().map(|s| s.to_string());
        for o in out.iter_mut() {
            if o.namespace.is_none() && o.kind != "Node" {
                o.namespace.clone_from(&ns);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `Kind/namespace/name`, `Kind//name` or `kind/name`.
fn parse_kind_ns_name(s: &str) -> Option<ObjectRef> {
    let mut parts = s.splitn(3, '/');
    let kind = parts.next()?;
    let second = parts.next()?;
    match parts.next() {
        Some(name) => ObjectRef::new(kind, Some(second).filter(|ns| !ns.is_empty()), name),
        None => ObjectRef::new(kind, None, second),
    }
}

/// `ns/name` or a bare name.
fn ns_name(kind: &str, v: &str, namespace: Option<&str>) -> Option<ObjectRef> {
    match v.split_once('/') {
        Some((ns, name)) => ObjectRef::new(kind, Some(ns), name),
        None => ObjectRef::new(kind, namespace, v),
    }
}

/// `controllers.RayService`, `controller.rayservice`, `rayservice-controller` → `RayService`.
fn logger_kind(component: &str) -> Option<&'static str> {
    let lower = component.to_ascii_lowercase();
    RAY_KINDS
        .into_iter()
        .find(|k| lower.contains(&k.to_ascii_lowercase()))
}

/// Objects Kubernetes API errors name in their text: `pods "x" is forbidden`,
/// `rayclusters.ray.io "x" not found`, and a service account acting
/// (`system:serviceaccount:ns:name`). Read only from evidence, never from every event.
pub fn of_message(message: &str) -> Vec<ObjectRef> {
    static API_ERROR: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(
            r#"\b([a-z]+)(?:\.[a-z0-9.]+)? "([a-z0-9][a-z0-9.-]*)" (?:is forbidden|not found|already exists|is invalid)"#,
        )
        .ok()
    });
    static SERVICE_ACCOUNT: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r"\bsystem:serviceaccount:([a-z0-9][a-z0-9.-]*):([a-z0-9][a-z0-9.-]*)").ok()
    });
    let mut out = Vec::new();
    if let Some(re) = API_ERROR.as_ref() {
        for c in re.captures_iter(message).take(4) {
            let kind = canonical_kind(&c[1]);
            // Only resources whose singular Kubernetes knows (`pods`, `rayclusters`, …).
            if KNOWN_KINDS.contains(&kind.as_str()) {
                out.extend(ObjectRef::new(&kind, None, &c[2]));
            }
        }
    }
    if let Some(re) = SERVICE_ACCOUNT.as_ref() {
        for c in re.captures_iter(message).take(2) {
            out.extend(ObjectRef::new("ServiceAccount", Some(&c[1]), &c[2]));
        }
    }
    out
}

/// What the bundle as a whole names: the namespace of every object it names with one (to
/// complete a pod from a table or a path), and its Ray objects, so that a cause whose
/// evidence names none can still say which workload the bundle is about when it is only one.
#[derive(Debug, Default)]
pub struct BundleObjects {
    /// `(kind, name)` → namespace, where any event gave it.
    known: BTreeMap<(String, String), Option<String>>,
}

impl BundleObjects {
    pub fn of(events: &[Event]) -> BundleObjects {
        let mut all = BundleObjects::default();
        for ev in events {
            for o in of_event(ev) {
                let ns = all.known.entry((o.kind, o.name)).or_default();
                if ns.is_none() {
                    *ns = o.namespace;
                }
            }
        }
        all
    }

    /// `o` with the namespace the bundle knows for it when it had none: its own, else that
    /// of the Ray object it is named after (KubeRay names a RayService's clusters and a
    /// cluster's pods after their owner, which is always in the same namespace).
    pub fn complete(&self, mut o: ObjectRef) -> ObjectRef {
        if o.namespace.is_some() || o.kind == "Node" {
            return o;
        }
        if let Some(Some(ns)) = self.known.get(&(o.kind.clone(), o.name.clone())) {
            o.namespace = Some(ns.clone());
            return o;
        }
        o.namespace = self
            .known
            .iter()
            .filter(|((kind, name), ns)| {
                ns.is_some()
                    && RAY_KINDS.contains(&kind.as_str())
                    && o.name.len() > name.len()
                    && o.name.starts_with(name.as_str())
                    && o.name.as_bytes().get(name.len()) == Some(&b'-')
            })
            .max_by_key(|((_, name), _)| name.len())
            .and_then(|(_, ns)| ns.clone());
        o
    }

    /// The pod each file's folder names, by file id: computed once per file, not per event.
    pub fn path_pods(&self, files: &[crate::load::FileInfo]) -> Vec<Option<ObjectRef>> {
        files.iter().map(|f| self.pod_of_path(&f.path)).collect()
    }

    /// The pod whose logs a file holds, from a folder of its path; in a copy of the KubeRay
    /// History Server's storage, the RayCluster its key names (`history_server`).
    pub fn pod_of_path(&self, path: &str) -> Option<ObjectRef> {
        if let Some(p) = crate::history_server::place(path) {
            return ObjectRef::new("RayCluster", Some(&p.cluster.namespace), &p.cluster.name);
        }
        let mut dirs: Vec<&str> = path.split('/').collect();
        dirs.pop();
        // The innermost folder that names a pod: `<ns>/<pod>/logs.txt`,
        // `<cluster>/<pod>/serve/controller.log`.
        dirs.iter().enumerate().rev().find_map(|(i, dir)| {
            let listed = self
                .known
                .contains_key(&("Pod".to_string(), dir.to_string()));
            if !listed && !looks_like_ray_pod(dir) {
                return None;
            }
            // A cluster-info dump keeps a pod's folder in its namespace's folder.
            let parent = i.checked_sub(1).and_then(|p| dirs.get(p)).copied();
            let ns = parent.filter(|p| self.is_namespace(p));
            ObjectRef::new("Pod", ns, dir).map(|o| self.complete(o))
        })
    }

    fn is_namespace(&self, name: &str) -> bool {
        self.known.values().any(|ns| ns.as_deref() == Some(name))
    }

    /// The one Ray object the bundle is about, when it names exactly one of the top kind
    /// present (a RayService's clusters are its own).
    pub fn only_workload(&self) -> Option<ObjectRef> {
        let ray = self
            .known
            .iter()
            .filter_map(|((kind, name), ns)| ObjectRef::new(kind, ns.as_deref(), name))
            .filter(ObjectRef::is_ray);
        let top = ray.clone().map(|o| o.rank()).min()?;
        let mut of_top = ray.filter(|o| o.rank() == top);
        let only = of_top.next()?;
        of_top.next().is_none().then_some(only)
    }
}

/// KubeRay's pod names: `<cluster>-head-<5>`, `<cluster>-worker-<group>-<5>` (and
/// `<cluster>-<group>-worker-<5>` in newer versions).
fn looks_like_ray_pod(dir: &str) -> bool {
    let Some((stem, suffix)) = dir.rsplit_once('-') else {
        return false;
    };
    plausible_name(dir)
        && suffix.len() == 5
        && suffix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && (stem.ends_with("-head") || stem.contains("-worker"))
}

/// The objects a set of evidence events concerns, Ray's first, each once: what each event
/// names in its fields and text, else the pod its file's path names (an operator line about
/// a RayService is not about the operator's pod). A pod named with and without its
/// namespace counts once, with it.
pub fn of_evidence<'a>(
    events: impl IntoIterator<Item = (&'a Event, Option<&'a ObjectRef>)>,
    bundle: &BundleObjects,
) -> Vec<ObjectRef> {
    let mut found: BTreeSet<ObjectRef> = BTreeSet::new();
    for (ev, path_pod) in events {
        let mut objs = of_event(ev);
        objs.extend(of_message(&ev.message));
        if objs.is_empty() {
            objs.extend(path_pod.cloned());
        }
        found.extend(objs.into_iter().map(|o| bundle.complete(o)));
    }
    let named: BTreeSet<(String, String)> = found
        .iter()
        .filter(|o| o.namespace.is_some())
        .map(|o| (o.kind.clone(), o.name.clone()))
        .collect();
    let mut out: Vec<ObjectRef> = found
        .into_iter()
        .filter(|o| o.namespace.is_some() || !named.contains(&(o.kind.clone(), o.name.clone())))
        .collect();
    out.sort_by(|a, b| a.rank().cmp(&b.rank()).then_with(|| a.cmp(b)));
    out
}

/// `--namespace` and `--object`: keep the events of one namespace or one object (and the
/// objects KubeRay names after it: a RayService's RayClusters, their pods and services).
///
/// An event is judged by the objects it names, else by the pod folder of its file's path. An
/// event that names none, in a file that names no pod, is kept: a filter drops only what is
/// known to concern something else (the operator's start-up lines, a head log collected
/// without its pod's name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Filter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The kind (spelled as Kubernetes does) and name; `Kind/name` in JSON.
    #[serde(
        rename = "object",
        skip_serializing_if = "Option::is_none",
        serialize_with = "kind_slash_name"
    )]
    target: Option<(String, String)>,
}

fn kind_slash_name<S: serde::Serializer>(
    target: &Option<(String, String)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match target {
        Some((kind, name)) => s.serialize_str(&format!("{kind}/{name}")),
        None => s.serialize_none(),
    }
}

/// What a filter says of one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It names an object the filter keeps.
    Named,
    /// It names nothing the filter can judge.
    Unknown,
    /// It names only other objects.
    Other,
}

/// Kinds `--object` accepts.
const FILTER_KINDS: [&str; 6] = [
    "RayService",
    "RayCluster",
    "RayJob",
    "Pod",
    "Node",
    "Service",
];

impl Filter {
    /// `None` when neither flag was given; an error names the flag and what it expects.
    pub fn new(namespace: Option<&str>, object: Option<&str>) -> Result<Option<Filter>, String> {
        if namespace.is_none() && object.is_none() {
            return Ok(None);
        }
        // `KIND/NAMESPACE/NAME`, as the report prints an object, names the namespace too.
        let mut namespace = namespace.map(str::to_string);
        let mut object = object.map(str::to_string);
        if let Some(o) = object.clone() {
            if let [kind, ns, name] = o.splitn(3, '/').collect::<Vec<_>>().as_slice() {
                if let Some(given) = namespace.as_deref().filter(|given| given != ns) {
                    return Err(format!(
                        "--object {o:?} names namespace {ns:?} but --namespace {given:?}"
                    ));
                }
                namespace = Some((*ns).to_string());
                object = Some(format!("{kind}/{name}"));
            }
        }
        let (namespace, object) = (namespace.as_deref(), object.as_deref());
        let namespace = match namespace {
            Some(ns) if plausible_name(ns) => Some(ns.to_string()),
            Some(ns) => {
                return Err(format!(
                "--namespace {ns:?}: expected a namespace name (lower case letters, digits, '-')"
            ))
            }
            None => None,
        };
        let target = match object {
            None => None,
            Some(o) => {
                let bad = || {
                    format!(
                        "--object {o:?}: expected KIND/NAME or KIND/NAMESPACE/NAME, KIND one of {} (e.g. rayservice/fraud-scorer)",
                        FILTER_KINDS.join(", ")
                    )
                };
                let (kind, name) = o.split_once('/').ok_or_else(bad)?;
                let kind = canonical_kind(kind);
                if !FILTER_KINDS.contains(&kind.as_str()) || !plausible_name(name) {
                    return Err(bad());
                }
                Some((kind, name.to_string()))
            }
        };
        Ok(Some(Filter { namespace, target }))
    }

    /// `RayService fraud-scorer in namespace default`, for report headers.
    pub fn describe(&self) -> String {
        let object = self.target.as_ref().map(|(kind, name)| {
            if RAY_KINDS.contains(&kind.as_str()) {
                format!("{kind} {name} and the objects named after it")
            } else {
                format!("{kind} {name}")
            }
        });
        match (object, &self.namespace) {
            (Some(o), Some(ns)) => format!("{o}, in namespace {ns}"),
            (Some(o), None) => o,
            (None, Some(ns)) => format!("namespace {ns}"),
            (None, None) => String::new(),
        }
    }

    /// What the filter says of `ev`, read from `path`, with nothing else of the bundle known
    /// (a streamed read).
    pub fn judge(&self, ev: &Event, path: &str) -> Verdict {
        let mut objs = of_event(ev);
        if objs.is_empty() {
            // Nothing of the bundle known: only KubeRay's own pod names are recognised.
            objs.extend(BundleObjects::default().pod_of_path(path));
        }
        self.judge_objects(&objs)
    }

    /// What the filter says of `ev`, whose file's pod folder names `path_pod`
    /// ([`BundleObjects::path_pods`]), with namespaces completed from the rest of the bundle.
    pub fn judge_in(
        &self,
        ev: &Event,
        path_pod: Option<&ObjectRef>,
        bundle: &BundleObjects,
    ) -> Verdict {
        let mut objs = of_event(ev);
        if objs.is_empty() {
            objs.extend(path_pod.cloned());
        }
        let objs: Vec<ObjectRef> = objs.into_iter().map(|o| bundle.complete(o)).collect();
        self.judge_objects(&objs)
    }

    fn judge_objects(&self, objs: &[ObjectRef]) -> Verdict {
        if objs.is_empty() {
            return Verdict::Unknown;
        }
        let ns = match &self.namespace {
            None => Verdict::Named,
            Some(want) => {
                if objs.iter().any(|o| o.namespace.as_ref() == Some(want)) {
                    Verdict::Named
                } else if objs.iter().all(|o| o.namespace.is_none()) {
                    Verdict::Unknown
                } else {
                    Verdict::Other
                }
            }
        };
        let object = match &self.target {
            None => Verdict::Named,
            Some((kind, name)) => {
                let after = format!("{name}-");
                let owns = RAY_KINDS.contains(&kind.as_str());
                if objs.iter().any(|o| {
                    (&o.kind == kind && &o.name == name) || (owns && o.name.starts_with(&after))
                }) {
                    Verdict::Named
                } else {
                    Verdict::Other
                }
            }
        };
        match (ns, object) {
            (Verdict::Other, _) | (_, Verdict::Other) => Verdict::Other,
            (Verdict::Named, Verdict::Named) => Verdict::Named,
            _ => Verdict::Unknown,
        }
    }

    pub fn keeps(&self, ev: &Event, path: &str) -> bool {
        self.judge(ev, path) != Verdict::Other
    }

    /// Why the filter is refused when no event of the bundle names what it asks for: the
    /// events left would be those that name no object, and a typo must not read as the
    /// object's diagnosis.
    pub fn nothing_named(&self) -> String {
        format!(
            "no event names {}; check the spelling against the objects the bundle names \
             (`raysift analyze BUNDLE` lists those of each cause)",
            self.describe()
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::event::{Level, SourceKind};

    fn ev(component: &str, fields: &[(&str, &str)]) -> Event {
        let mut e = Event::new(1, "msg");
        e.kind = SourceKind::Operator;
        e.level = Level::Info;
        e.component = component.into();
        e.fields = fields
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        e
    }

    fn shown(objs: &[ObjectRef]) -> Vec<String> {
        objs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn operator_fields_of_every_version_name_the_object() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);
        let cases: [Case; 6] = [
            // 1.1+ JSON context.
            (
                "controllers.RayService",
                &[
                    ("RayService.name", "stable-diffusion-tpu"),
                    ("RayService.namespace", "default"),
                ],
                &["RayService default/stable-diffusion-tpu"],
            ),
            // 0.x console, controller-runtime's request.
            (
                "controller.rayservice",
                &[
                    ("reconciler group", "ray.io"),
                    ("reconciler kind", "RayService"),
                    ("name", "rayservice-sample"),
                    ("namespace", "default"),
                ],
                &["RayService default/rayservice-sample"],
            ),
            // `ServiceName`, whose kind the logger gives.
            (
                "controllers.RayService",
                &[("ServiceName", "ml-serving/vision-api")],
                &["RayService ml-serving/vision-api"],
            ),
            // Plain `RayJob` and `rayCluster` values sharing one `namespace`.
            (
                "controllers.RayJob",
                &[
                    ("RayJob", "nightly-embeddings"),
                    ("rayCluster", "nightly-embeddings-raycluster-v9tfl"),
                    ("namespace", "batch"),
                ],
                &[
                    "RayCluster batch/nightly-embeddings-raycluster-v9tfl",
                    "RayJob batch/nightly-embeddings",
                ],
            ),
            // Events the operator echoes in development mode.
            (
                "events",
                &[
                    ("object.kind", "ConfigMap"),
                    ("object.namespace", "ray-system"),
                    ("object.name", "ray-operator-leader"),
                ],
                &["ConfigMap ray-system/ray-operator-leader"],
            ),
            // Another kind under its own name as the key.
            (
                "controllers.RayCluster",
                &[
                    ("ServiceAccount", "data-processing/foo"),
                    ("error", "ServiceAccount \"foo\" not found"),
                ],
                &["ServiceAccount data-processing/foo"],
            ),
        ];
        for (component, fields, want) in cases {
            assert_eq!(shown(&of_event(&ev(component, fields))), want, "{fields:?}");
        }
    }

    #[test]
    fn kubernetes_facts_and_tables_name_their_object() {
        let e = ev(
            "",
            &[("object", "Pod/default/raycluster-kuberay-head-ldg9f")],
        );
        assert_eq!(
            shown(&of_event(&e)),
            ["Pod default/raycluster-kuberay-head-ldg9f"]
        );
        let e = ev(
            "",
            &[("object", "Node/ip-10-1-77-140.us-west-2.compute.internal")],
        );
        assert_eq!(
            shown(&of_event(&e)),
            ["Node ip-10-1-77-140.us-west-2.compute.internal"]
        );
        let e = ev(
            "",
            &[(
                "object",
                "Pod//rayservice-sample-raycluster-tp744-head-fpsz9",
            )],
        );
        assert_eq!(
            shown(&of_event(&e)),
            ["Pod rayservice-sample-raycluster-tp744-head-fpsz9"]
        );
    }

    #[test]
    fn placeholders_and_fragments_are_not_names() {
        let e = ev(
            "controllers.RayService",
            &[
                ("RayCluster", "<my serve resource name>-raycluster-9hxh9"),
                ("ActiveRayClusterName", ""),
            ],
        );
        assert!(of_event(&e).is_empty());
    }

    #[test]
    fn pod_folders_in_paths_name_the_pod() {
        let facts = [ev(
            "",
            &[("object", "Pod/recsys/recsys-raycluster-8wq4n-head-b9k2x")],
        )];
        let bundle = BundleObjects::of(&facts);
        assert_eq!(
            bundle
                .pod_of_path("cluster-dump/recsys/recsys-raycluster-8wq4n-head-b9k2x/logs.txt")
                .map(|o| o.to_string()),
            Some("Pod recsys/recsys-raycluster-8wq4n-head-b9k2x".to_string())
        );
        // Not listed, but named as KubeRay names its pods.
        assert_eq!(
            bundle
                .pod_of_path("ranker-q2w7z/ranker-q2w7z-worker-cpu-t8m3d/raylet.out")
                .map(|o| o.to_string()),
            Some("Pod ranker-q2w7z-worker-cpu-t8m3d".to_string())
        );
        assert_eq!(bundle.pod_of_path("head-logs/raylet.out"), None);
        // A pod no table lists takes the namespace of the Ray object it is named after.
        let owned = [ev(
            "",
            &[
                ("RayService.name", "ranker"),
                ("RayService.namespace", "shop"),
            ],
        )];
        assert_eq!(
            BundleObjects::of(&owned)
                .pod_of_path("ranker-q2w7z/ranker-q2w7z-worker-cpu-t8m3d/raylet.out")
                .map(|o| o.to_string()),
            Some("Pod shop/ranker-q2w7z-worker-cpu-t8m3d".to_string())
        );
        assert_eq!(
            bundle.pod_of_path("recsys-raycluster-8wq4n-head-b9k2x"),
            None
        );
    }

    #[test]
    fn the_only_workload_is_the_top_kind_when_it_is_one() {
        let one = [
            ev(
                "",
                &[("RayService.name", "a"), ("RayService.namespace", "x")],
            ),
            ev(
                "",
                &[
                    ("RayCluster.name", "a-raycluster-1"),
                    ("RayCluster.namespace", "x"),
                ],
            ),
        ];
        assert_eq!(
            BundleObjects::of(&one)
                .only_workload()
                .map(|o| o.to_string()),
            Some("RayService x/a".to_string())
        );
        let two = [
            ev(
                "",
                &[("RayService.name", "a"), ("RayService.namespace", "x")],
            ),
            ev(
                "",
                &[("RayService.name", "b"), ("RayService.namespace", "x")],
            ),
        ];
        assert_eq!(BundleObjects::of(&two).only_workload(), None);
    }

    #[test]
    fn api_errors_and_service_accounts_name_their_object() {
        let shown_msg = |m: &str| shown(&of_message(m));
        assert_eq!(
            shown_msg(
                r#"pods "raycluster-complete-head-x2x9l" is forbidden: error looking up service account ray-system/my-sa: serviceaccount "my-sa" not found"#
            ),
            ["Pod raycluster-complete-head-x2x9l", "ServiceAccount my-sa"]
        );
        assert_eq!(
            shown_msg(
                r#"endpoints is forbidden: User "system:serviceaccount:kuberay:kuberay-operator" cannot list resource "endpoints""#
            ),
            ["ServiceAccount kuberay/kuberay-operator"]
        );
        assert_eq!(
            shown_msg(r#"rayclusters.ray.io "feature-etl" not found"#),
            ["RayCluster feature-etl"]
        );
        // A word in quotes is not an object unless an API error names its resource.
        assert!(shown_msg(r#"the value "abc" is fine"#).is_empty());
    }

    #[test]
    fn filters_keep_an_object_and_what_is_named_after_it() {
        let f = Filter::new(None, Some("rayservice/fraud-scorer"))
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"object": "RayService/fraud-scorer"})
        );
        let svc = ev(
            "controllers.RayService",
            &[
                ("RayService.name", "fraud-scorer"),
                ("RayService.namespace", "default"),
            ],
        );
        let other = ev(
            "controllers.RayService",
            &[
                ("RayService.name", "recsys"),
                ("RayService.namespace", "default"),
            ],
        );
        let pod = ev(
            "",
            &[(
                "object",
                "Pod/default/fraud-scorer-raycluster-w7k9t-head-x2x9l",
            )],
        );
        let nothing = ev("setup", &[]);
        assert_eq!(f.judge(&svc, "operator.log"), Verdict::Named);
        assert_eq!(f.judge(&pod, "pods.json"), Verdict::Named);
        assert_eq!(f.judge(&other, "operator.log"), Verdict::Other);
        assert_eq!(f.judge(&nothing, "operator.log"), Verdict::Unknown);
        // A line naming nothing is judged by the pod folder of its file.
        assert_eq!(
            f.judge(
                &nothing,
                "default/recsys-raycluster-8wq4n-head-b9k2x/raylet.out"
            ),
            Verdict::Other
        );
        assert_eq!(
            f.judge(
                &nothing,
                "fraud-scorer-raycluster-w7k9t-head-x2x9l/raylet.out"
            ),
            Verdict::Named
        );
        let ns = Filter::new(Some("ml"), None).unwrap().unwrap();
        assert_eq!(ns.judge(&svc, "operator.log"), Verdict::Other);
        assert_eq!(ns.judge(&nothing, "operator.log"), Verdict::Unknown);
        assert!(Filter::new(None, Some("widget/x")).is_err());
        assert!(Filter::new(None, Some("fraud-scorer")).is_err());
        assert!(Filter::new(Some("Not A Namespace"), None).is_err());
        assert_eq!(Filter::new(None, None), Ok(None));
        // `KIND/NAMESPACE/NAME`, as the report prints an object, is the two flags in one.
        assert_eq!(
            Filter::new(None, Some("RayCluster/batch/json-etl-5xq7w")),
            Filter::new(Some("batch"), Some("RayCluster/json-etl-5xq7w"))
        );
        assert!(Filter::new(Some("batch"), Some("RayCluster/batch/json-etl-5xq7w")).is_ok());
        assert!(Filter::new(Some("default"), Some("RayCluster/batch/json-etl-5xq7w")).is_err());
    }

    #[test]
    fn a_history_server_key_names_its_cluster() {
        let nothing = BundleObjects::default();
        let path = "copy/cluster-history/rayjob/batch/json-etl/json-etl-5xq7w/\
                    session_2026-12-06_08-23-58_143912_32131/\
                    24eb7237035484a410a14812d63667e0e8c96cea74db8a2183e7eee6/logs/raylet.out";
        assert_eq!(
            nothing.pod_of_path(path).map(|o| o.to_string()).as_deref(),
            Some("RayCluster batch/json-etl-5xq7w")
        );
        let ev = ev("", &[]);
        for (object, verdict) in [
            ("raycluster/json-etl-5xq7w", Verdict::Named),
            ("rayjob/json-etl", Verdict::Named),
            ("raycluster/echo-serve", Verdict::Other),
        ] {
            let f = Filter::new(None, Some(object)).unwrap().unwrap();
            assert_eq!(f.judge(&ev, path), verdict, "{object}");
        }
    }

    #[test]
    fn kinds_are_spelled_as_kubernetes_spells_them() {
        assert_eq!(canonical_kind("pods"), "Pod");
        assert_eq!(canonical_kind("rayservice"), "RayService");
        assert_eq!(canonical_kind("rayclusters"), "RayCluster");
        assert_eq!(canonical_kind("svc"), "Service");
        assert_eq!(canonical_kind("widget"), "Widget");
        assert_eq!(canonical_kind("ingresses"), "Ingress");
        assert_eq!(canonical_kind("Ingress"), "Ingress");
    }
}
