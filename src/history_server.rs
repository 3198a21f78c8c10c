//! The storage layout of the KubeRay History Server: what a path of a local copy of its
//! bucket (`aws s3 cp --recursive s3://BUCKET/ROOT ./copy`) says of the file.
//!
//! The History Server's collector, a sidecar of each Ray pod (KubeRay `historyserver/`),
//! uploads every file of a node's Ray session `logs/` folder as it is, and the Ray events
//! the node's aggregator posts to it, under one prefix per RayCluster. Two generations of
//! keys exist, read from KubeRay's source:
//!
//! - **v1.7** (KubeRay v1.7.0, commit 4efe66e, July 2026; `pkg/storage/clusterlogs/clusterlogs.go`
//!   `Prefix`, `LogsDir`, `NodeEventsDir`, `JobEventsDir`, `FetchedEndpointsDir`):
//!   `[ROOT/]cluster-history/raycluster/<ns>/<cluster>/…` for a RayCluster of its own, and
//!   `[ROOT/]cluster-history/<rayjob|rayservice>/<ns>/<owner>/<cluster>/…` for one a RayJob or
//!   a RayService owns; below it `<session>/<node id>/logs/<path under logs/>`,
//!   `<session>/<node id>/node_events/<node id>-<YYYY-MM-DD-HH>-<ns>.jsonl[.gz]`,
//!   `<session>/<node id>/job_events/<job id>/…` and `<session>/fetched_endpoints/restful__…`
//!   (the dashboard's answers). One empty marker per session,
//!   `[ROOT/]cluster-metadata/<kind>/<ns>_[<owner>_]<cluster>/<session>`
//!   (`pkg/storage/clustermetadata/clustermetadata.go` `EncodePath`).
//! - **v1.6** (KubeRay v1.6.x; `pkg/utils/utils.go` `GetLogDirByNameID` there):
//!   `[ROOT/]<cluster>_<ns>/<session>/logs/<node id>/<path under logs/>`,
//!   `<cluster>_<ns>/<session>/node_events/<node id>-<hour>`, `…/job_events/<job id>/…`,
//!   and the marker `[ROOT/]metadir/<cluster>_<ns>/<session>`. (v1.6 wrote its
//!   `--ray-cluster-id`, `default` unless set, where later versions write the namespace.)
//!
//! Session folders are Ray's (`session_<date>_<time>_<µs>_<pid>`); node ids are Ray's hex
//! node ids. `_` joins names because neither a namespace nor a cluster name may hold one
//! (`pkg/utils/utils.go`, `Connector`). Nothing here reads a file: the path alone decides.

use serde::Serialize;

/// The layout's name, as the inventory and the corpus spell it.
pub const LAYOUT: &str = "kuberay-history-server";

/// Which generation of the collector's keys a path follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Generation {
    /// `cluster-history/<kind>/<ns>/[<owner>/]<cluster>/<session>/<node>/logs/…` (v1.7+).
    #[serde(rename = "v1.7")]
    Hierarchical,
    /// `<cluster>_<ns>/<session>/logs/<node>/…` (v1.6).
    #[serde(rename = "v1.6")]
    Flat,
}

/// What part of a session a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// A file of a node's Ray `logs/` folder, uploaded as it is.
    Logs,
    /// Ray events of a node (`node_events/`).
    NodeEvents,
    /// Ray events of a job (`job_events/<job id>/`).
    JobEvents,
    /// The dashboard's answers the head's collector stored (`fetched_endpoints/`).
    FetchedEndpoints,
    /// The empty marker of a session (`cluster-metadata/…`, `metadir/…`).
    Marker,
}

/// The RayCluster a file belongs to, and the RayJob or RayService that owns it if the key
/// says so.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cluster {
    pub namespace: String,
    pub name: String,
    /// `("RayJob" | "RayService", name)`.
    pub owner: Option<(&'static str, String)>,
}

/// What a path of the layout says of its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub generation: Generation,
    pub cluster: Cluster,
    /// Ray's session folder name.
    pub session: String,
    /// The Ray node id (hex); `None` for a marker and the dashboard's answers.
    pub node: Option<String>,
    pub part: Part,
}

/// What `path` (a member or file path, `/`-separated, with any prefix before the layout's
/// root) says of its file, if it follows the layout.
pub fn place(path: &str) -> Option<Place> {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    hierarchical(&segs)
        .or_else(|| metadata(&segs))
        .or_else(|| flat(&segs))
}

/// The cluster of each file of a bundle, by file index: what keeps the clusters of one
/// copy apart (a failure of one is never explained, or recovered, by a line of another).
#[derive(Clone, Debug, Default)]
pub struct Clusters(Vec<Option<Cluster>>);

impl Clusters {
    /// The clusters of `paths`, in order (a file index is its position).
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a str>) -> Clusters {
        Clusters(
            paths
                .into_iter()
                .map(|p| place(p).map(|p| p.cluster))
                .collect(),
        )
    }

    /// The cluster of file `file`, if its path says.
    pub fn of_file(&self, file: usize) -> Option<&Cluster> {
        self.0.get(file).and_then(Option::as_ref)
    }

    /// Whether files `a` and `b` are known to belong to different clusters.
    pub fn apart(&self, a: usize, b: usize) -> bool {
        matches!((self.of_file(a), self.of_file(b)), (Some(x), Some(y)) if x != y)
    }
}

/// `cluster-history/<kind>/<ns>/[<owner>/]<cluster>/<session>/…`.
fn hierarchical(segs: &[&str]) -> Option<Place> {
    (0..segs.len()).rev().find_map(|i| {
        if segs[i] != "cluster-history" {
            return None;
        }
        let kind = owner_kind(segs.get(i + 1)?)?;
        let namespace = name(segs.get(i + 2)?)?;
        let (owner, at) = match kind {
            Some(k) => (Some((k, name(segs.get(i + 3)?)?)), i + 4),
            None => (None, i + 3),
        };
        let cluster = Cluster {
            namespace,
            name: name(segs.get(at)?)?,
            owner,
        };
        let session = session(segs.get(at + 1)?)?;
        let rest = segs.get(at + 2..)?;
        let (node, part) = match rest {
            ["fetched_endpoints", _, ..] => (None, Part::FetchedEndpoints),
            [node, part, _, ..] => (Some(node_id(node)?), session_part(part)?),
            _ => return None,
        };
        Some(Place {
            generation: Generation::Hierarchical,
            cluster,
            session,
            node,
            part,
        })
    })
}

/// `cluster-metadata/<kind>/<ns>_[<owner>_]<cluster>/<session>` (v1.7) or
/// `metadir/<cluster>_<ns>/<session>` (v1.6), the last two components of the path.
fn metadata(segs: &[&str]) -> Option<Place> {
    let n = segs.len();
    let session = session(segs.get(n.checked_sub(1)?)?)?;
    let joined = segs.get(n.checked_sub(2)?)?;
    let parts: Vec<&str> = joined.split('_').collect();
    let parent = segs.get(n.checked_sub(3)?)?;
    if *parent == "metadir" {
        let [cluster, ns] = parts.as_slice() else {
            return None;
        };
        return Some(Place {
            generation: Generation::Flat,
            cluster: Cluster {
                namespace: name(ns)?,
                name: name(cluster)?,
                owner: None,
            },
            session,
            node: None,
            part: Part::Marker,
        });
    }
    if segs.get(n.checked_sub(4)?) != Some(&"cluster-metadata") {
        return None;
    }
    let cluster = match (owner_kind(parent)?, parts.as_slice()) {
        (None, [ns, cluster]) => Cluster {
            namespace: name(ns)?,
            name: name(cluster)?,
            owner: None,
        },
        (Some(kind), [ns, owner, cluster]) => Cluster {
            namespace: name(ns)?,
            name: name(cluster)?,
            owner: Some((kind, name(owner)?)),
        },
        _ => return None,
    };
    Some(Place {
        generation: Generation::Hierarchical,
        cluster,
        session,
        node: None,
        part: Part::Marker,
    })
}

/// `<cluster>_<ns>/<session>/logs/<node id>/…`, `…/<session>/node_events/…`,
/// `…/<session>/job_events/<job id>/…`, `…/<session>/fetched_endpoints/…` (v1.6).
fn flat(segs: &[&str]) -> Option<Place> {
    (0..segs.len()).rev().find_map(|i| {
        let (cluster, ns) = segs[i].split_once('_')?;
        let cluster = Cluster {
            namespace: name(ns)?,
            name: name(cluster)?,
            owner: None,
        };
        let session = session(segs.get(i + 1)?)?;
        let (node, part) = match segs.get(i + 2..)? {
            ["logs", node, _, ..] => (Some(node_id(node)?), Part::Logs),
            ["node_events", file] => (file.split('-').next().and_then(node_id), Part::NodeEvents),
            ["job_events", _, file] => (file.split('-').next().and_then(node_id), Part::JobEvents),
            ["fetched_endpoints", _, ..] => (None, Part::FetchedEndpoints),
            _ => return None,
        };
        Some(Place {
            generation: Generation::Flat,
            cluster,
            session,
            node,
            part,
        })
    })
}

/// `raycluster` → `Some(None)`; `rayjob`, `rayservice` → their owner kind.
fn owner_kind(seg: &str) -> Option<Option<&'static str>> {
    match seg {
        "raycluster" => Some(None),
        "rayjob" => Some(Some("RayJob")),
        "rayservice" => Some(Some("RayService")),
        _ => None,
    }
}

fn session_part(seg: &str) -> Option<Part> {
    match seg {
        "logs" => Some(Part::Logs),
        "node_events" => Some(Part::NodeEvents),
        "job_events" => Some(Part::JobEvents),
        _ => None,
    }
}

/// A DNS-1123 name, as Kubernetes requires of a namespace and a cluster.
fn name(seg: &str) -> Option<String> {
    let ok = !seg.is_empty()
        && seg.len() <= 253
        && seg
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && seg.as_bytes()[0].is_ascii_alphanumeric();
    ok.then(|| seg.to_string())
}

/// Ray's session folder: `session_<YYYY-MM-DD>_<HH-MM-SS>_<µs>_<pid>`.
fn session(seg: &str) -> Option<String> {
    let rest = seg.strip_prefix("session_")?;
    let ok = rest.len() >= 19
        && rest.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && rest
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'_');
    ok.then(|| seg.to_string())
}

/// A Ray node id as the collector names its folder: hex (28 bytes, 56 digits, in every
/// version seen; at least 16 accepted).
fn node_id(seg: &str) -> Option<String> {
    (seg.len() >= 16 && seg.bytes().all(|b| b.is_ascii_hexdigit())).then(|| seg.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const NODE: &str = "78f2a6b1bb85bae00e42f5f497b72ea88e66eeb638ac8d0c118a7f57";
    const SESSION: &str = "session_2026-12-06_09-16-56_403733_31327";

    fn cluster(ns: &str, name: &str, owner: Option<(&'static str, &str)>) -> Cluster {
        Cluster {
            namespace: ns.into(),
            name: name.into(),
            owner: owner.map(|(k, n)| (k, n.to_string())),
        }
    }

    #[test]
    fn v1_7_keys_name_cluster_owner_session_node_and_part() {
        let p = place(&format!(
            "copy/cluster-history/raycluster/default/echo-serve/{SESSION}/{NODE}/logs/raylet.out"
        ))
        .unwrap();
        assert_eq!(p.generation, Generation::Hierarchical);
        assert_eq!(p.cluster, cluster("default", "echo-serve", None));
        assert_eq!(p.session, SESSION);
        assert_eq!(p.node.as_deref(), Some(NODE));
        assert_eq!(p.part, Part::Logs);

        // A root folder (`--storage-root-dir`) and an owner.
        let p = place(&format!(
            "root/dir/cluster-history/rayjob/batch/json-etl/json-etl-5xq7w/{SESSION}/{NODE}/logs/serve/controller_1.log"
        ))
        .unwrap();
        assert_eq!(
            p.cluster,
            cluster("batch", "json-etl-5xq7w", Some(("RayJob", "json-etl")))
        );
        let p = place(&format!(
            "cluster-history/rayservice/ml/svc/svc-k8vzq/{SESSION}/{NODE}/job_events/01000000/{NODE}-2026-05-13-10-1.jsonl.gz"
        ))
        .unwrap();
        assert_eq!(p.part, Part::JobEvents);
        assert_eq!(p.cluster.owner, Some(("RayService", "svc".to_string())));
        let p = place(&format!(
            "cluster-history/raycluster/ns/c/{SESSION}/fetched_endpoints/restful__timezone"
        ))
        .unwrap();
        assert_eq!((p.part, p.node), (Part::FetchedEndpoints, None));
        let p = place(&format!(
            "cluster-history/raycluster/ns/c/{SESSION}/{NODE}/node_events/{NODE}-2026-05-13-10-1.jsonl"
        ))
        .unwrap();
        assert_eq!(p.part, Part::NodeEvents);
    }

    #[test]
    fn markers_of_both_generations() {
        let p = place(&format!(
            "copy/cluster-metadata/rayjob/batch_json-etl_json-etl-5xq7w/{SESSION}"
        ))
        .unwrap();
        assert_eq!(
            (p.generation, p.part, p.cluster),
            (
                Generation::Hierarchical,
                Part::Marker,
                cluster("batch", "json-etl-5xq7w", Some(("RayJob", "json-etl")))
            )
        );
        let p = place(&format!(
            "log/metadir/raycluster-historyserver_default/{SESSION}"
        ))
        .unwrap();
        assert_eq!(
            (p.generation, p.cluster),
            (
                Generation::Flat,
                cluster("default", "raycluster-historyserver", None)
            )
        );
    }

    #[test]
    fn v1_6_keys() {
        let p = place(&format!(
            "log/raycluster-historyserver_default/{SESSION}/logs/{NODE}/events/event_GCS.log"
        ))
        .unwrap();
        assert_eq!(p.generation, Generation::Flat);
        assert_eq!(
            p.cluster,
            cluster("default", "raycluster-historyserver", None)
        );
        assert_eq!(p.node.as_deref(), Some(NODE));
        let p = place(&format!(
            "log/raycluster-historyserver_default/{SESSION}/node_events/{NODE}-2026-01-11-19"
        ))
        .unwrap();
        assert_eq!((p.part, p.node.as_deref()), (Part::NodeEvents, Some(NODE)));
    }

    #[test]
    fn other_layouts_are_not_taken_for_it() {
        for path in [
            // A plain session folder, even under a folder with a `_`.
            &format!("ray_logs/{SESSION}/logs/events/event_GCS.log") as &str,
            &format!("tmp/ray/{SESSION}/logs/raylet.out"),
            // kubectl ray log, cluster-info dump, troubleshoot.
            "doc-search-raycluster-xv5sl/doc-search-raycluster-xv5sl-head-8v2kq/raylet.out",
            "dump/ml-serving/ray-head-abcde/logs.txt",
            "cluster-history/raycluster/default/c/not-a-session/x/logs/raylet.out",
            &format!("cluster-history/raycluster/Default/c/{SESSION}/{NODE}/logs/raylet.out"),
            &format!("cluster-history/raycluster/ns/c/{SESSION}/{NODE}/logs"),
            &format!("cluster-history/raycluster/ns/c/{SESSION}/not-hex/logs/raylet.out"),
        ] {
            assert_eq!(place(path), None, "{path}");
        }
    }
}
