//! What a failure's life around it says, as data (`patterns/data/lifecycle.toml`, each line
//! with where its wording comes from): the lines Ray writes when someone or something asked
//! it to stop (`ray stop`, a pod deleted, `ray job stop`), and the pairs of a failure and the
//! line that tells its object recovered. `judge` keeps at `info` what died of a stop and what
//! recovered for good; the sieve keeps these lines.

use regex::Regex;
use serde::Deserialize;

use crate::event::SourceKind;

/// What a stop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every process of the node, for good.
    #[default]
    Node,
    /// One job: its driver and the workers running its tasks, for a while.
    Job,
}

#[derive(Deserialize)]
struct LifecycleFile {
    stop: Vec<StopLine>,
    #[serde(default)]
    recovery: Vec<RecoveryLine>,
    #[serde(default)]
    own_stop: Vec<OwnStopLine>,
    #[serde(default)]
    object_recovery: Vec<ObjectRecoveryLine>,
    #[serde(default)]
    object_stop: Vec<ObjectStopLine>,
    #[serde(default)]
    node_removal: Vec<NodeLine>,
    #[serde(default)]
    node_death: Vec<NodeLine>,
    #[serde(default)]
    node_return: Vec<NodeLine>,
}

/// A line naming a node: one the autoscaler asked to remove, one that died, or one that
/// registered.
#[derive(Deserialize)]
struct NodeLine {
    what: String,
    text: String,
    #[serde(default)]
    sources: Vec<String>,
    #[allow(dead_code)]
    from: String,
}

/// A line that names a node (a removal the autoscaler asked for, or a death), compiled: its
/// regex captures `node` (the Ray node id), `ip` (its address) and `instance` (the
/// provider's id), as many as the line gives.
pub struct NodeTeller {
    pub what: String,
    pub re: Regex,
    pub sources: Vec<SourceKind>,
}

/// What a line calls a node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeNames {
    /// The Ray node id (hex).
    pub node: Option<String>,
    /// Its address.
    pub ip: Option<String>,
    /// The provider's id: a KubeRay pod's name, a cloud instance id.
    pub instance: Option<String>,
}

impl NodeNames {
    /// Whether `self` (a removal's names) and `dead` (a death's) name one node, and whether
    /// by the Ray node id: the node id decides where both carry one; else an address or the
    /// provider's id given on one side as either (the fake multi-node provider names a node
    /// by its node id as "id" and "ip"; `use_node_id_as_ip` the same).
    pub fn same_node(&self, dead: &NodeNames) -> Option<bool> {
        if let (Some(a), Some(b)) = (&self.node, &dead.node) {
            return (a == b).then_some(true);
        }
        let mine = [&self.ip, &self.instance, &self.node];
        let theirs = [&dead.ip, &dead.node, &dead.instance];
        mine.iter()
            .filter_map(|n| n.as_deref())
            .any(|n| theirs.iter().filter_map(|t| t.as_deref()).any(|t| t == n))
            .then_some(false)
    }
}

impl NodeTeller {
    /// The names `ev` gives its node, if it is such a line and names one.
    pub fn names(&self, ev: &crate::event::Event) -> Option<NodeNames> {
        if !(self.sources.is_empty() || self.sources.contains(&ev.kind)) {
            return None;
        }
        let caps = self.re.captures(&ev.message)?;
        // An empty capture (`ray_id=` before the node registers) or a placeholder names none.
        let name = |k: &str| {
            caps.name(k)
                .map(|m| m.as_str())
                .filter(|v| !v.is_empty() && !matches!(*v, "None" | "null" | "-"))
                .map(str::to_string)
        };
        let names = NodeNames {
            node: name("node"),
            ip: name("ip"),
            instance: name("instance"),
        };
        (names != NodeNames::default()).then_some(names)
    }
}

fn node_tellers(lines: &[NodeLine]) -> Vec<NodeTeller> {
    lines
        .iter()
        .filter_map(|s| {
            Some(NodeTeller {
                what: s.what.clone(),
                re: Regex::new(&s.text).ok()?,
                sources: kinds(&s.sources),
            })
        })
        .collect()
}

/// The lines of a node the autoscaler asked to remove, compiled once.
pub fn node_removals() -> &'static [NodeTeller] {
    static LINES: std::sync::OnceLock<Vec<NodeTeller>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        node_tellers(
            file()
                .map(|f| f.node_removal.as_slice())
                .unwrap_or_default(),
        )
    })
}

/// The lines of a node's death that name it, compiled once.
pub fn node_deaths() -> &'static [NodeTeller] {
    static LINES: std::sync::OnceLock<Vec<NodeTeller>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| node_tellers(file().map(|f| f.node_death.as_slice()).unwrap_or_default()))
}

/// The lines of a node registering with the GCS, naming it: a node at the address of one that
/// died registering after the death is that node back. Compiled once.
pub fn node_returns() -> &'static [NodeTeller] {
    static LINES: std::sync::OnceLock<Vec<NodeTeller>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| node_tellers(file().map(|f| f.node_return.as_slice()).unwrap_or_default()))
}

#[derive(Deserialize)]
struct OwnStopLine {
    what: String,
    text: String,
    #[serde(default)]
    sources: Vec<String>,
    within_s: u32,
    #[allow(dead_code)]
    from: String,
}

/// A line saying the SIGTERM that follows is the process's own doing, after a failure: the
/// node stop it tells within `within` is not a requested one.
pub struct OwnStop {
    pub what: String,
    pub re: Regex,
    pub sources: Vec<SourceKind>,
    /// How long after it the stop it explains may be told, in microseconds.
    pub within: i64,
}

/// The own-stop lines of the library, compiled once.
pub fn own_stops() -> &'static [OwnStop] {
    static OWN: std::sync::OnceLock<Vec<OwnStop>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        file()
            .map(|f| f.own_stop.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                Some(OwnStop {
                    re: Regex::new(&s.text).ok()?,
                    sources: kinds(&s.sources),
                    what: s.what.clone(),
                    within: i64::from(s.within_s) * crate::event::MICROS_PER_SEC,
                })
            })
            .collect()
    })
}

fn kinds(names: &[String]) -> Vec<SourceKind> {
    names
        .iter()
        .filter_map(|n| SourceKind::from_name(n))
        .collect()
}

#[derive(Deserialize)]
struct RecoveryLine {
    what: String,
    fails: String,
    recovers: String,
    /// For a failure that names no object: how soon after it the recovery must come.
    within_s: Option<u32>,
    #[allow(dead_code)]
    from: String,
}

/// A failure that its object recovers from, and the line that says it did: both regexes
/// capture the object's name as `key` (a failure may name several: `['A', 'B']`), or, where
/// the failure names no object (a worker's death), neither does and the recovery must come
/// `within` of it.
pub struct Recovery {
    pub what: String,
    pub fails: Regex,
    pub recovers: Regex,
    /// How soon after a failure without a key its recovery must come, in microseconds.
    pub within: Option<i64>,
}

/// The data file, read once.
fn file() -> Option<&'static LifecycleFile> {
    static FILE: std::sync::OnceLock<Option<LifecycleFile>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| toml::from_str(include_str!("../../patterns/data/lifecycle.toml")).ok())
        .as_ref()
}

/// The recoveries of the library, compiled once.
pub fn recoveries() -> &'static [Recovery] {
    static RECOVERIES: std::sync::OnceLock<Vec<Recovery>> = std::sync::OnceLock::new();
    RECOVERIES.get_or_init(|| {
        file()
            .map(|f| f.recovery.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|r| {
                Some(Recovery {
                    what: r.what.clone(),
                    fails: Regex::new(&r.fails).ok()?,
                    recovers: Regex::new(&r.recovers).ok()?,
                    within: r
                        .within_s
                        .map(|s| i64::from(s) * crate::event::MICROS_PER_SEC),
                })
            })
            .collect()
    })
}

/// The names a `key` capture holds: `'Echo'`, `['A', 'B']` and `A` alike.
pub fn names(key: &str) -> Vec<&str> {
    key.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '#')))
        .filter(|n| !n.is_empty())
        .collect()
}

#[derive(Deserialize)]
struct StopLine {
    what: String,
    text: String,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    scope: Scope,
    #[allow(dead_code)]
    from: String,
}

/// A line that tells a stop, compiled.
pub struct Teller {
    pub what: String,
    pub re: Regex,
    /// The kinds of file it is written to; empty: any.
    pub sources: Vec<SourceKind>,
    pub scope: Scope,
}

/// The stop lines of the library, compiled once.
pub fn tellers() -> &'static [Teller] {
    static TELLERS: std::sync::OnceLock<Vec<Teller>> = std::sync::OnceLock::new();
    TELLERS.get_or_init(|| {
        file()
            .map(|f| f.stop.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                Some(Teller {
                    re: Regex::new(&s.text).ok()?,
                    sources: kinds(&s.sources),
                    what: s.what.clone(),
                    scope: s.scope,
                })
            })
            .collect()
    })
}

/// One side of a Kubernetes recovery, as written in the data file.
#[derive(Deserialize)]
struct SideLine {
    /// The kind of the object whose name is the key (`Pod`, `Node`, `RayJob`, …).
    kind: String,
    #[serde(default)]
    sources: Vec<String>,
    text: Option<String>,
    #[serde(default)]
    fields: std::collections::BTreeMap<String, String>,
    /// A regex over the object's name capturing the key (`key`); default: the whole name.
    name: Option<String>,
    /// A condition of the object's status that is `status` (`Ready=True`): a describe's
    /// `conditions[Ready]` or the `status` leaf of a YAML/JSON condition whose `type` is it.
    condition: Option<String>,
    /// The least level of the record (`warning`).
    min_level: Option<String>,
    /// A line a healthy object writes on every reconcile: the sieve does not keep it.
    #[serde(default)]
    every_reconcile: bool,
}

#[derive(Deserialize)]
struct ObjectRecoveryLine {
    what: String,
    fails: Vec<SideLine>,
    recovers: Vec<SideLine>,
    #[allow(dead_code)]
    from: String,
}

#[derive(Deserialize)]
struct ObjectStopLine {
    what: String,
    /// The kind of what was stopped: `Pod` (one pod) or `RayCluster` (its pods too).
    kind: String,
    #[serde(default)]
    sources: Vec<String>,
    /// Captures the stopped object's name as `key`, unless `key_field` names the field
    /// that holds it.
    text: String,
    key_field: Option<String>,
    #[serde(default)]
    fields: std::collections::BTreeMap<String, String>,
    #[allow(dead_code)]
    from: String,
}

/// One side of a Kubernetes recovery, compiled: which records it is, and which object's
/// name (the key) each one is about.
pub struct Side {
    pub kind: String,
    pub sources: Vec<SourceKind>,
    pub text: Option<Regex>,
    pub fields: Vec<(String, Regex)>,
    pub name: Option<Regex>,
    /// `(type, status)` of a status condition.
    pub condition: Option<(String, String)>,
    pub min_level: Option<crate::event::Level>,
    /// Written on every reconcile of a healthy object: too many lines for the sieve to keep.
    pub every_reconcile: bool,
}

impl Side {
    fn compile(s: &SideLine) -> Option<Side> {
        let condition = match &s.condition {
            Some(c) => {
                let (t, v) = c.split_once('=')?;
                Some((t.to_string(), v.to_string()))
            }
            None => None,
        };
        Some(Side {
            kind: s.kind.clone(),
            sources: kinds(&s.sources),
            text: s.text.as_deref().map(Regex::new).transpose().ok()?,
            fields: s
                .fields
                .iter()
                .map(|(k, v)| Some((k.clone(), Regex::new(v).ok()?)))
                .collect::<Option<_>>()?,
            name: s.name.as_deref().map(Regex::new).transpose().ok()?,
            condition,
            min_level: match &s.min_level {
                Some(l) => Some(crate::event::Level::parse(l)?),
                None => None,
            },
            every_reconcile: s.every_reconcile,
        })
    }

    /// Whether `ev` is a record of this side, its condition aside (which needs the
    /// record's neighbours): source, level, text and fields.
    pub fn matches(&self, ev: &crate::event::Event) -> bool {
        (self.sources.is_empty() || self.sources.contains(&ev.kind))
            && self.min_level.is_none_or(|l| ev.level >= l)
            && self.text.as_ref().is_none_or(|re| re.is_match(&ev.message))
            && self
                .fields
                .iter()
                .all(|(k, re)| ev.field(k).is_some_and(|v| re.is_match(v)))
    }

    /// The key of an object name: what `name` captures, or the name itself.
    pub fn key_of<'n>(&self, name: &'n str) -> Option<&'n str> {
        match &self.name {
            None => Some(name),
            Some(re) => Some(re.captures(name)?.name("key")?.as_str()),
        }
    }
}

/// A failure of a Kubernetes object (a pod, a node, a RayJob, a RayService) and the records
/// that say the same object is back: the key is the object's name, read from what the record
/// names (`objects::of_event`), not from its text.
pub struct ObjectRecovery {
    pub what: String,
    pub fails: Vec<Side>,
    pub recovers: Vec<Side>,
}

/// The Kubernetes recoveries of the library, compiled once.
pub fn object_recoveries() -> &'static [ObjectRecovery] {
    static OBJECT: std::sync::OnceLock<Vec<ObjectRecovery>> = std::sync::OnceLock::new();
    OBJECT.get_or_init(|| {
        file()
            .map(|f| f.object_recovery.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|r| {
                Some(ObjectRecovery {
                    what: r.what.clone(),
                    fails: r.fails.iter().map(Side::compile).collect::<Option<_>>()?,
                    recovers: r
                        .recovers
                        .iter()
                        .map(Side::compile)
                        .collect::<Option<_>>()?,
                })
            })
            .collect()
    })
}

/// A line that tells Kubernetes or KubeRay deleted an object on purpose (a scale-in, a
/// RayCluster torn down after its job or replaced by an upgrade), naming it.
pub struct ObjectStop {
    pub what: String,
    /// `Pod` or `RayCluster`.
    pub kind: String,
    pub sources: Vec<SourceKind>,
    /// Captures the object's name as `key`, unless `key_field` holds it.
    pub re: Regex,
    pub key_field: Option<String>,
    pub fields: Vec<(String, Regex)>,
}

impl ObjectStop {
    /// The name of the object `ev` says was deleted, if it is such a line.
    pub fn stopped<'e>(&self, ev: &'e crate::event::Event) -> Option<&'e str> {
        if !(self.sources.is_empty() || self.sources.contains(&ev.kind)) {
            return None;
        }
        if !self
            .fields
            .iter()
            .all(|(k, re)| ev.field(k).is_some_and(|v| re.is_match(v)))
        {
            return None;
        }
        let caps = self.re.captures(&ev.message)?;
        match &self.key_field {
            Some(k) => ev.field(k).filter(|v| !v.is_empty()),
            None => Some(caps.name("key")?.as_str()),
        }
    }
}

/// The Kubernetes stop lines of the library, compiled once.
pub fn object_stops() -> &'static [ObjectStop] {
    static STOPS: std::sync::OnceLock<Vec<ObjectStop>> = std::sync::OnceLock::new();
    STOPS.get_or_init(|| {
        file()
            .map(|f| f.object_stop.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                Some(ObjectStop {
                    what: s.what.clone(),
                    kind: s.kind.clone(),
                    sources: kinds(&s.sources),
                    re: Regex::new(&s.text).ok()?,
                    key_field: s.key_field.clone(),
                    fields: s
                        .fields
                        .iter()
                        .map(|(k, v)| Some((k.clone(), Regex::new(v).ok()?)))
                        .collect::<Option<_>>()?,
                })
            })
            .collect()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_the_data_compiles() {
        let file: LifecycleFile =
            toml::from_str(include_str!("../../patterns/data/lifecycle.toml"))
                .unwrap_or_else(|e| panic!("lifecycle.toml: {e}"));
        assert_eq!(tellers().len(), file.stop.len());
        assert_eq!(recoveries().len(), file.recovery.len());
        assert_eq!(own_stops().len(), file.own_stop.len());
        assert_eq!(object_recoveries().len(), file.object_recovery.len());
        assert_eq!(object_stops().len(), file.object_stop.len());
        assert_eq!(node_removals().len(), file.node_removal.len());
        assert_eq!(node_deaths().len(), file.node_death.len());
        assert_eq!(node_returns().len(), file.node_return.len());
        for t in node_removals()
            .iter()
            .chain(node_deaths())
            .chain(node_returns())
        {
            assert!(
                ["node", "ip", "instance"]
                    .iter()
                    .any(|k| t.re.capture_names().any(|n| n == Some(*k))),
                "{}: names the node",
                t.what
            );
        }
        for r in &file.object_recovery {
            for side in r.fails.iter().chain(&r.recovers) {
                for n in &side.sources {
                    assert!(
                        SourceKind::from_name(n).is_some(),
                        "{}: unknown source {n}",
                        r.what
                    );
                }
                assert!(
                    side.text.is_some()
                        || !side.fields.is_empty()
                        || side.condition.is_some()
                        || side.min_level.is_some() && !side.sources.is_empty(),
                    "{}: a side says which records it is",
                    r.what
                );
            }
        }
        for s in object_stops() {
            assert!(
                s.key_field.is_some() || s.re.capture_names().any(|n| n == Some("key")),
                "{}: captures the object's name",
                s.what
            );
            assert!(
                matches!(s.kind.as_str(), "Pod" | "RayCluster"),
                "{}",
                s.what
            );
        }
        for s in &file.stop {
            assert!(!s.what.is_empty() && !s.from.is_empty());
            for n in &s.sources {
                assert!(SourceKind::from_name(n).is_some(), "unknown source {n}");
            }
        }
        for r in recoveries() {
            let keyed =
                [&r.fails, &r.recovers].map(|re| re.capture_names().any(|n| n == Some("key")));
            assert!(
                keyed == [true, true] || keyed == [false, false] && r.within.is_some(),
                "{}: both regexes capture a key, or neither and within_s is set",
                r.what
            );
        }
    }

    fn ev(kind: SourceKind, message: &str, fields: &[(&str, &str)]) -> crate::event::Event {
        let mut e = crate::event::Event::new(1, message);
        e.kind = kind;
        e.fields = fields
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        e
    }

    fn stopped(e: &crate::event::Event) -> Option<(String, String)> {
        object_stops()
            .iter()
            .find_map(|s| Some((s.kind.clone(), s.stopped(e)?.to_string())))
    }

    /// KubeRay's deletions on purpose, in their real wording (events of the corpus's
    /// autoscaling and upgrade bundles, the operator's `Deleting pod` of its replicas
    /// fight), name what they deleted.
    #[test]
    fn deletions_on_purpose_name_what_they_deleted() {
        let scale_in = ev(
            SourceKind::KubeEvents,
            "Deleted pod analytics/feature-etl-cpu-pool-worker-7hk2x",
            &[("reason", "DeletedWorkerPod")],
        );
        assert_eq!(
            stopped(&scale_in),
            Some((
                "Pod".into(),
                "analytics/feature-etl-cpu-pool-worker-7hk2x".into()
            ))
        );
        let upgrade = ev(
            SourceKind::KubeEvents,
            "Deleted the RayCluster search/query-rewriter-k2m8d",
            &[("reason", "DeletedRayCluster")],
        );
        assert_eq!(
            stopped(&upgrade),
            Some(("RayCluster".into(), "search/query-rewriter-k2m8d".into()))
        );
        let operator = ev(
            SourceKind::Operator,
            "Deleting pod",
            &[
                ("namespace", "etl"),
                ("name", "nightly-etl-worker-cpu-group-qzc8r"),
            ],
        );
        assert_eq!(
            stopped(&operator),
            Some(("Pod".into(), "nightly-etl-worker-cpu-group-qzc8r".into()))
        );
        let created = ev(
            SourceKind::KubeEvents,
            "Created worker Pod analytics/feature-etl-cpu-pool-worker-7hk2x",
            &[("reason", "CreatedWorkerPod")],
        );
        assert_eq!(stopped(&created), None);
    }

    /// The sides of the Kubernetes recoveries on real lines: a probe failure of a pod is a
    /// failure, a NodeReady row a recovery, a RayJob's operator line SUCCEEDED a recovery.
    #[test]
    fn sides_match_real_lines() {
        let side = |what: &str, fails: bool, e: &crate::event::Event| {
            object_recoveries()
                .iter()
                .filter(|r| r.what == what)
                .flat_map(|r| if fails { &r.fails } else { &r.recovers })
                .any(|s| s.matches(e))
        };
        let probe = ev(
            SourceKind::KubeEvents,
            "Readiness probe failed: bash: line 1: wget: command not found",
            &[("reason", "Unhealthy")],
        );
        assert!(side("the pod became Ready", true, &probe));
        let kill = ev(
            SourceKind::KubeEvents,
            "Container ray-head failed liveness probe, will be restarted",
            &[("reason", "Killing")],
        );
        assert!(side("the pod became Ready", true, &kill));
        let started = ev(SourceKind::KubeEvents, "Started container ray-head", &[]);
        assert!(!side("the pod became Ready", false, &started));
        let node = ev(
            SourceKind::KubeEvents,
            "Node ip-10-1-77-140.us-west-2.compute.internal status is now: NodeNotReady",
            &[("reason", "NodeNotReady")],
        );
        assert!(side("the node became Ready again", true, &node));
        let ready = ev(
            SourceKind::KubeEvents,
            "Node gke-ml-prod-ray-gpu-9c4d7e21-m2xk status is now: NodeReady",
            &[("reason", "NodeReady")],
        );
        assert!(side("the node became Ready again", false, &ready));
        let job = ev(
            SourceKind::Operator,
            "RayJob",
            &[
                ("JobDeploymentStatus", "Complete"),
                ("JobStatus", "SUCCEEDED"),
                ("RayJob.name", "daily-features"),
            ],
        );
        assert!(side("the RayJob SUCCEEDED", false, &job));
        let running = ev(
            SourceKind::Operator,
            "RayJob",
            &[("JobStatus", "RUNNING"), ("RayJob.name", "daily-features")],
        );
        assert!(!side("the RayJob SUCCEEDED", false, &running));
        // A submitter pod `<job>-<5>` is keyed by its Job's name.
        let submitter = object_recoveries()
            .iter()
            .find(|r| r.what == "the submitter's Job completed")
            .and_then(|r| r.fails.first())
            .unwrap();
        assert_eq!(submitter.key_of("daily-report-7fk2w"), Some("daily-report"));
    }

    /// The operator's calls to the dashboard, on real lines of the corpus's operator logs
    /// (KubeRay v0.6.0 console, v1.0.0-era console, v1.1.1 JSON), read by the operator's
    /// parser: each failure is a failure side of its call's pair, each success a recovery
    /// side of the same pair and of no other call's.
    #[test]
    fn failed_and_successful_calls_on_real_operator_lines() {
        // Line `n` (from 1) of a corpus operator log, as the operator's parser reads it.
        let line = |log: &str, n: usize| {
            let text = log.lines().nth(n - 1).unwrap();
            let out = crate::parse::parse(SourceKind::Operator, text.as_bytes());
            let mut e = out.events.into_iter().next().unwrap();
            // The loader sets the kind of the file's events.
            e.kind = SourceKind::Operator;
            e
        };
        let retry =
            include_str!("../../corpus/handmade-rayjob-submitter-retry/kuberay-operator.log");
        let mobilenet =
            include_str!("../../corpus/handmade-mobilenet-missing-tensorflow/operator-log.txt");
        let summarizer =
            include_str!("../../corpus/healthy-rayservice-handmade/kuberay-operator.log");
        let pair = |what: &str, fails: bool, e: &crate::event::Event| {
            object_recoveries()
                .iter()
                .filter(|r| r.what == what)
                .flat_map(|r| if fails { &r.fails } else { &r.recovers })
                .any(|s| s.matches(e))
        };
        let job = "a later call got the Ray job's info";
        let serve = "a later call got the Serve applications' statuses";
        let put = "a later Serve config PUT went through";
        // v1.1.1 JSON: `Failed to get job info` (does not exist yet), then `GetJobInfo`.
        let job_failed = line(retry, 15);
        assert_eq!(job_failed.message, "Failed to get job info");
        assert!(pair(job, true, &job_failed));
        assert!(!pair(serve, true, &job_failed) && !pair(put, true, &job_failed));
        let job_got = line(retry, 20);
        assert_eq!(job_got.message, "GetJobInfo");
        assert!(pair(job, false, &job_got) && !pair(job, true, &job_got));
        // v0.6.0 console: the PUT refused, then `Cached Serve config …`.
        let put_refused = line(mobilenet, 76);
        assert_eq!(put_refused.message, "fail to update deployment");
        assert!(pair(put, true, &put_refused) && !pair(serve, true, &put_refused));
        let put_cached = line(mobilenet, 121);
        assert!(pair(put, false, &put_cached) && !pair(serve, false, &put_cached));
        // The same message with the config about to be PUT is no success.
        let put_tried = line(mobilenet, 75);
        assert_eq!(put_tried.message, "updateServeDeployment");
        assert!(!pair(put, false, &put_tried));
        // v1.0-era console: `Fail to reconcileServe.` with the PUT's error, and the Serve
        // statuses read later.
        let reconcile = line(summarizer, 90);
        assert!(pair(put, true, &reconcile) && !pair(serve, true, &reconcile));
        let statuses = line(summarizer, 234);
        assert_eq!(statuses.message, "getAndCheckServeStatus");
        assert!(pair(serve, false, &statuses) && !pair(put, false, &statuses));
    }

    fn named(tellers: &[NodeTeller], e: &crate::event::Event) -> Option<NodeNames> {
        tellers.iter().find_map(|t| t.names(e))
    }

    /// The autoscaler's removal and the GCS's death of a node, in their real wording (real
    /// runs of Ray's fake multi-node autoscaler, 2.40.0; the raylet killed, 2.22.0), name
    /// the same node: the fake provider gives the node id as the node's "ip".
    #[test]
    fn a_removal_and_a_death_name_their_node() {
        let removal = ev(
            SourceKind::Autoscaler,
            "StandardAutoscaler: Terminating the node with id fffffffffffffffffffffffffffffffffffffffffffffffffff00001 and ip fffffffffffffffffffffffffffffffffffffffffffffffffff00001. (idle)",
            &[],
        );
        let removed = named(node_removals(), &removal).unwrap();
        assert_eq!(
            removed.instance.as_deref(),
            Some("fffffffffffffffffffffffffffffffffffffffffffffffffff00001")
        );
        let death = ev(
            SourceKind::GcsServer,
            "The node with node id: fffffffffffffffffffffffffffffffffffffffffffffffffff00001 and address: 10.244.0.5 and node name: 10.244.0.5 has been marked dead because the detector has missed too many heartbeats from it. This can happen when a \t(1) raylet crashes unexpectedly (OOM, preempted node, etc.) ",
            &[],
        );
        let dead = named(node_deaths(), &death).unwrap();
        assert_eq!(dead.ip.as_deref(), Some("10.244.0.5"));
        assert_eq!(removed.same_node(&dead), Some(false));
        // A KubeRay worker: the pod's name and its address (the corpus's autoscaling bundle).
        let pod = ev(
            SourceKind::Autoscaler,
            "StandardAutoscaler: Terminating the node with id feature-etl-cpu-pool-worker-7hk2x and ip 10.52.2.9. (idle)",
            &[],
        );
        let pod = named(node_removals(), &pod).unwrap();
        assert_eq!(pod.same_node(&dead), None);
        let there = NodeNames {
            ip: Some("10.52.2.9".into()),
            node: Some("b7d04e2a".into()),
            instance: None,
        };
        assert_eq!(pod.same_node(&there), Some(false));
        // The thread's older wording (`and ip:`), and the health check's.
        let old = ev(
            SourceKind::JobDriver,
            "The node with node id: 40d7709d4275bb0784e227591eceeeb9a8604fb30e5a28e4c90d9c04 and ip: 192.168.77.252 has been marked dead because the detector has missed too many heartbeats from it. This can happen when a raylet crashes unexpectedly or has lagging heartbeats.",
            &[],
        );
        assert_eq!(
            named(node_deaths(), &old).unwrap().ip.as_deref(),
            Some("192.168.77.252")
        );
        let health = ev(
            SourceKind::GcsServer,
            "Node cb5f618ffa8ea32d896cc599cad31aa8173745737378ee3174a85e9f is dead because the health check failed.",
            &[],
        );
        let health = named(node_deaths(), &health).unwrap();
        assert_eq!(
            health.node.as_deref(),
            Some("cb5f618ffa8ea32d896cc599cad31aa8173745737378ee3174a85e9f")
        );
        // Where both carry a Ray node id, it decides: another node at a reused address is
        // not the one removed.
        let v2 = NodeNames {
            node: Some("fffffffffffffffffffffffffffffffffffffffffffffffffff00001".into()),
            ip: Some("10.244.0.5".into()),
            instance: None,
        };
        assert_eq!(v2.same_node(&health), None);
        assert_eq!(v2.same_node(&dead), Some(true));
        // The summariser names no node; a node that only drained names none either.
        let summary = ev(
            SourceKind::Autoscaler,
            ":event_summary:Removing 1 nodes of type ray.worker.batch (idle).",
            &[],
        );
        assert_eq!(named(node_removals(), &summary), None);
    }

    #[test]
    fn a_key_names_one_object_or_several() {
        assert_eq!(names("'Echo'"), ["Echo"]);
        assert_eq!(names("['Echo', 'Ranker_2']"), ["Echo", "Ranker_2"]);
        assert_eq!(names("search"), ["search"]);
    }
}
