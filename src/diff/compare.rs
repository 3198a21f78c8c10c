//! Two analysed bundles made into the list of what changed, the change that matters most
//! first: each cause NEW has and OLD had not, at `error` or above, followed by the spec,
//! image and version changes of the kind that cause is known to follow (an `import_path`
//! after a new `bad_import_path`, a worker group's replicas after new unschedulable Serve
//! replicas); then the states that worsened, the new causes below `error`, the other version,
//! image and spec changes, the error templates seen only in NEW, the causes that went away,
//! and the objects found in one bundle only.

use std::collections::BTreeSet;

use crate::model::{Cause, Report};
use crate::open_world::templates::WILD;
use crate::open_world::Unrecognised;
use crate::rules::Severity;

use super::snapshot::{health, Key, Snapshot};
use super::{Change, Kind};

/// One analysed bundle.
pub struct Side<'a> {
    pub report: &'a Report,
    pub snap: &'a Snapshot,
}

/// What a change is about, to put it after the cause it may explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Topic {
    /// A Serve application's code and environment: `import_path`, `runtime_env`, args.
    ServeApp,
    /// How many Serve replicas and what each asks for.
    ServeScale,
    /// Container environment variables and Ray's start parameters.
    Env,
    /// How many pods, and what each asks for.
    Capacity,
    /// Memory limits and requests.
    Memory,
    /// Versions: the ones the bundle states, `rayVersion`.
    Release,
    /// Images.
    Image,
    /// Liveness and readiness probes.
    Probe,
}

/// The topics of the changes a cause of `id` is known to follow, most likely first.
fn topics_of_cause(id: &str) -> &'static [Topic] {
    use Topic::*;
    match id {
        "serve_script_error"
        | "bad_import_path"
        | "missing_dependency"
        | "runtime_env_failure"
        | "serve_config_schema"
        | "single_multi_app_mix"
        | "dependency_version_conflict"
        | "replica_health_check_failed"
        | "rayjob_entrypoint_failed" => &[ServeApp, Env, Image, Release],
        "serve_replicas_unschedulable"
        | "failed_scheduling"
        | "insufficient_resources_restart_loop"
        | "autoscaler_infeasible_request"
        | "initializing_timeout"
        | "resource_quota_exceeded"
        | "autoscaler_thrash" => &[Capacity, ServeScale],
        "image_pull_failure" | "cuda_mismatch" => &[Image, Release],
        "ray_version_incompatible"
        | "crd_version_mismatch"
        | "operator_crash"
        | "invalid_spec"
        | "gcs_ft_shared_storage_namespace"
        | "gcs_ft_redis_unreachable" => &[Release, Image, Env],
        "oom_killed" | "crash_loop" | "node_pressure_eviction" | "disk_full" => {
            &[Memory, Capacity, Image, Release]
        }
        "probe_failure" | "dashboard_agent_died_after_deploy" => &[Probe, Image, Release],
        _ => &[],
    }
}

/// The topics of a spec field (its path as shown, without `spec.`).
fn topics_of_field(path: &str) -> Vec<Topic> {
    use Topic::*;
    let p = path.to_ascii_lowercase();
    let last = p
        .rsplit(['.', ']'])
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    let mut out = Vec::new();
    if p.contains("serveconfigv2") {
        let scale = [
            "num_replicas",
            "ray_actor_options",
            "autoscaling_config",
            "max_replicas_per_node",
            "placement_group",
            "max_ongoing_requests",
            "max_concurrent_queries",
        ];
        if scale.iter().any(|s| p.contains(s)) {
            out.push(ServeScale);
        } else {
            out.push(ServeApp);
        }
    }
    if last == "image" {
        out.push(Image);
    }
    if last == "rayversion" {
        out.push(Release);
    }
    if p.contains(".env[") || p.contains("raystartparams") || p.contains("envfrom") {
        out.push(Env);
    }
    if p.contains("probe") {
        out.push(Probe);
    }
    if p.contains("resources.") && p.contains("memory") {
        out.push(Memory);
    }
    if matches!(
        last,
        "replicas" | "minreplicas" | "maxreplicas" | "numofhosts"
    ) || p.contains("resources.")
        || p.contains("nodeselector")
        || p.contains("tolerations")
        || p.contains("affinity")
    {
        out.push(Capacity);
    }
    out
}

/// A change with what it is about.
struct Found {
    change: Change,
    topics: Vec<Topic>,
}

/// What changed from `old` to `new`, most important first, and whether NEW has a cause OLD
/// had not at or above `fail_on`.
pub fn compare(old: &Side, new: &Side, fail_on: Severity) -> (Vec<Change>, bool) {
    let appeared: Vec<&Cause> = new
        .report
        .causes
        .iter()
        .filter(|c| !old.report.causes.iter().any(|o| same_cause(o, c)))
        .collect();
    let gone: Vec<&Cause> = old
        .report
        .causes
        .iter()
        .filter(|c| !new.report.causes.iter().any(|n| same_cause(c, n)))
        .collect();
    let failing = appeared
        .iter()
        .any(|c| c.severity >= fail_on && c.severity != Severity::Info);

    let mut spec: Vec<Found> = versions(old.report, new.report);
    spec.extend(images(old.snap, new.snap));
    let changed_images: BTreeSet<String> = spec
        .iter()
        .filter(|f| f.change.kind == Kind::ImageChanged)
        .map(|f| f.change.what.clone())
        .collect();
    spec.extend(specs(old.snap, new.snap, &changed_images));

    let mut out: Vec<Change> = Vec::new();
    let mut placed = vec![false; spec.len()];
    for c in appeared.iter().filter(|c| c.severity >= Severity::Error) {
        out.push(cause_change(Kind::CauseAppeared, c));
        // What the cause's own evidence quotes first (the image a pull failed on), then the
        // changes of the kinds it follows.
        let evidence: Vec<&str> = c.all_evidence().map(|e| e.text.as_str()).collect();
        let mut quoted: Vec<(usize, usize)> = spec
            .iter()
            .enumerate()
            .filter(|(i, _)| !placed[*i])
            .filter_map(|(i, f)| quoted_len(&f.change, &evidence).map(|n| (i, n)))
            .collect();
        // The longest quotation first: the image tag the pull failed on before the version
        // it holds.
        quoted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (i, _) in quoted {
            placed[i] = true;
            let mut ch = spec[i].change.clone();
            ch.explains = Some(c.id.clone());
            out.push(ch);
        }
        for topic in topics_of_cause(&c.id) {
            for (i, f) in spec.iter().enumerate() {
                if !placed[i] && f.topics.contains(topic) {
                    placed[i] = true;
                    let mut ch = f.change.clone();
                    ch.explains = Some(c.id.clone());
                    out.push(ch);
                }
            }
        }
    }
    out.extend(worsened(old.snap, new.snap));
    for c in appeared.iter().filter(|c| c.severity < Severity::Error) {
        out.push(cause_change(Kind::CauseAppeared, c));
    }
    for (i, f) in spec.into_iter().enumerate() {
        if !placed[i] {
            out.push(f.change);
        }
    }
    out.extend(templates(
        &old.report.unrecognised,
        &new.report.unrecognised,
    ));
    for c in gone {
        out.push(cause_change(Kind::CauseGone, c));
    }
    out.extend(objects(old.snap, new.snap));
    (out, failing)
}

/// Whether evidence quotes the NEW value of a change: one of its values (an image tag, a
/// version), or the module of an import path (`fraud_detector.serve` of
/// `fraud_detector.serve:app`, which `No module named 'fraud_detector.serve'` quotes).
/// The length of the longest such quotation; `None` when there is none.
fn quoted_len(change: &Change, evidence: &[&str]) -> Option<usize> {
    let new = change.new.as_ref()?;
    let old: BTreeSet<&str> = change
        .old
        .as_deref()
        .map_or_else(BTreeSet::new, |o| o.split(", ").collect());
    new.split(", ")
        .filter(|v| !old.contains(v))
        .flat_map(|v| [v, v.split(':').next().unwrap_or(v)])
        .filter(|v| v.len() >= 4 && evidence.iter().any(|e| e.contains(v)))
        .map(str::len)
        .max()
}

/// The objects a cause concerns, matched across bundles.
fn cause_keys(c: &Cause) -> BTreeSet<Key> {
    c.objects
        .iter()
        .map(|o| Key::new(&o.kind, o.namespace.as_deref(), &o.name))
        .collect()
}

/// One cause in both bundles: the same catalogue id, on an object both name (or either names
/// none).
fn same_cause(a: &Cause, b: &Cause) -> bool {
    if a.id != b.id {
        return false;
    }
    let (ka, kb) = (cause_keys(a), cause_keys(b));
    ka.is_empty() || kb.is_empty() || !ka.is_disjoint(&kb)
}

fn cause_change(kind: Kind, c: &Cause) -> Change {
    Change {
        object: c.objects.first().map(ToString::to_string),
        severity: Some(c.severity),
        title: Some(c.title.clone()),
        ..Change::new(kind, c.id.clone())
    }
}

/// Versions the bundles state (`bundle.versions`), product by product.
fn versions(old: &Report, new: &Report) -> Vec<Found> {
    let mut out = Vec::new();
    let old_each: Vec<_> = old.bundle.versions.each().collect();
    for (product, shown) in new.bundle.versions.each() {
        let values = |s: &[crate::versions::Shown]| -> Vec<String> {
            let set: BTreeSet<&str> = s.iter().map(|v| v.value.as_str()).collect();
            set.into_iter().map(str::to_string).collect()
        };
        let now = values(shown);
        let before = old_each
            .iter()
            .find(|(p, _)| *p == product)
            .map(|(_, s)| values(s))
            .unwrap_or_default();
        if now == before || now.is_empty() || before.is_empty() {
            continue;
        }
        let mut ch = Change::new(Kind::VersionChanged, product.name().to_string());
        ch.old = Some(before.join(", "));
        ch.new = Some(now.join(", "));
        out.push(Found {
            change: ch,
            topics: vec![Topic::Release],
        });
    }
    out
}

/// The images of each repository, where they differ.
fn images(old: &Snapshot, new: &Snapshot) -> Vec<Found> {
    let mut out = Vec::new();
    for (repo, tags) in &new.images {
        let Some(before) = old.images.get(repo) else {
            continue;
        };
        if before == tags {
            continue;
        }
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        let mut ch = Change::new(Kind::ImageChanged, repo.clone());
        ch.old = Some(join(before));
        ch.new = Some(join(tags));
        out.push(Found {
            change: ch,
            topics: vec![Topic::Image],
        });
    }
    out
}

/// The repository of an image value.
fn repo_of(image: &str) -> &str {
    let image = image.trim().trim_matches('"');
    let image = image.split('@').next().unwrap_or(image);
    let image = match image.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => r,
        _ => image,
    };
    let image = image.strip_prefix("docker.io/").unwrap_or(image);
    image.strip_prefix("library/").unwrap_or(image)
}

/// The spec fields of each Ray object in both bundles that differ (an image whose repository's
/// change is already told is not told again per field).
fn specs(old: &Snapshot, new: &Snapshot, changed_images: &BTreeSet<String>) -> Vec<Found> {
    let mut out = Vec::new();
    for (key, now) in &new.objects {
        let Some(before) = old.counterpart(new, key) else {
            continue;
        };
        let fields: BTreeSet<&String> = before.spec.keys().chain(now.spec.keys()).collect();
        for field in fields {
            let (a, b) = (before.spec.get(field), now.spec.get(field));
            if a == b {
                continue;
            }
            let is_image = field.ends_with(".image") || field == "image";
            if is_image
                && [a, b]
                    .iter()
                    .flatten()
                    .all(|v| changed_images.contains(repo_of(v)))
            {
                continue;
            }
            let mut ch = Change::new(Kind::SpecChanged, field.clone());
            ch.object = Some(now.shown.clone());
            ch.old = a.cloned();
            ch.new = b.cloned();
            out.push(Found {
                change: ch,
                topics: topics_of_field(field),
            });
        }
    }
    out
}

/// The states of Ray objects that got worse, and the other workload objects that fail in NEW
/// and did not in OLD.
fn worsened(old: &Snapshot, new: &Snapshot) -> Vec<Change> {
    let mut out = Vec::new();
    for (key, now) in &new.objects {
        let before = old.counterpart(new, key);
        for (field, value) in &now.states {
            let Some(h_new) = health(field, value) else {
                continue;
            };
            let was = before.and_then(|b| b.states.get(field));
            let worse = match was.and_then(|w| health(field, w)) {
                Some(h_old) => h_new < h_old,
                None => h_new == 0,
            };
            if worse {
                let mut ch = Change::new(Kind::StateWorsened, field.clone());
                ch.object = Some(now.shown.clone());
                ch.old = was.cloned();
                ch.new = Some(value.clone());
                out.push(ch);
            }
        }
    }
    for (key, (shown, state)) in &new.problems {
        if old.problems.contains_key(key) {
            continue;
        }
        let mut ch = Change::new(Kind::StateWorsened, "state".to_string());
        ch.object = Some(shown.clone());
        ch.new = Some(state.clone());
        out.push(ch);
    }
    out
}

/// Tokens of a template's text.
fn tokens(text: &str) -> Vec<&str> {
    text.split(' ').filter(|t| !t.is_empty()).collect()
}

/// Whether two templates are one, as the open world groups records: the same number of
/// tokens, the same lead token, and at least half of them agreeing (a mask agrees with
/// anything).
fn similar(a: &str, b: &str) -> bool {
    let (ta, tb) = (tokens(a), tokens(b));
    if ta.len() != tb.len() || ta.first() != tb.first() {
        return false;
    }
    let agree = ta
        .iter()
        .zip(&tb)
        .filter(|(x, y)| x == y || **x == WILD || **y == WILD)
        .count();
    agree * 2 >= ta.len()
}

/// Error templates no rule claimed that NEW has and OLD has not, most frequent first.
fn templates(old: &[Unrecognised], new: &[Unrecognised]) -> Vec<Change> {
    let mut found: Vec<&Unrecognised> = new
        .iter()
        .filter(|t| t.is_unexplained_error())
        .filter(|t| !old.iter().any(|o| similar(&o.template, &t.template)))
        .collect();
    found.sort_by(|a, b| b.count.cmp(&a.count).then(a.template.cmp(&b.template)));
    found
        .into_iter()
        .map(|t| {
            let mut ch = Change::new(Kind::TemplateAppeared, t.template.clone());
            ch.count = Some(t.count);
            ch.level = Some(t.level);
            ch
        })
        .collect()
}

/// Ray objects found in one bundle only.
fn objects(old: &Snapshot, new: &Snapshot) -> Vec<Change> {
    let mut out = Vec::new();
    for (key, o) in &new.objects {
        if old.counterpart(new, key).is_none() {
            let mut ch = Change::new(Kind::ObjectAppeared, key.0.kind.clone());
            ch.object = Some(o.shown.clone());
            out.push(ch);
        }
    }
    for (key, o) in &old.objects {
        if new.counterpart(old, key).is_none() {
            let mut ch = Change::new(Kind::ObjectGone, key.0.kind.clone());
            ch.object = Some(o.shown.clone());
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_one_when_half_their_tokens_agree() {
        assert!(similar(
            "Failed to connect to <*> port 8000",
            "Failed to connect to <*> port <*>"
        ));
        assert!(!similar("Failed to connect", "Could not connect"));
        assert!(!similar("a b c d", "a x y z"));
    }

    #[test]
    fn fields_have_topics() {
        assert_eq!(
            topics_of_field("serveConfigV2.applications[chat].import_path"),
            vec![Topic::ServeApp]
        );
        assert_eq!(
            topics_of_field("rayClusterConfig.workerGroupSpecs[gpu].replicas"),
            vec![Topic::Capacity]
        );
        assert!(topics_of_field(
            "rayClusterConfig.headGroupSpec.template.spec.containers[ray-head].image"
        )
        .contains(&Topic::Image));
    }
}
