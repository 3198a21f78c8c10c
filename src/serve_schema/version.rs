//! The Ray versions a bundle states: a RayCluster's, RayService's or RayJob's `rayVersion`, the
//! tag of a Ray image (`rayproject/ray:2.41.0-py311`), the output of `ray --version` (`ray,
//! version 2.9.3`) and the autoscaler's start-up line (`Ray version: 2.9.3`, `monitor.log`).
//!
//! The two lines of text are read in every kind of file, so the sieve keeps them
//! (`rules::sieve::VERSION_LITERALS`): each regex here requires one of those literals.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;

use super::data::Version;
use crate::event::Event;

/// A version the bundle states, and the first event that states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stated {
    pub version: Version,
    pub event: usize,
}

/// `ray, version 2.9.3` (`ray --version`) and `Ray version: 2.9.3` (the autoscaler's monitor).
fn text_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?i)\bray(?:, version | version: ?)v?(\d+\.\d+\.\d+)\b").ok())
        .as_ref()
}

/// A Ray image's tag: the repository's last part is `ray`, `ray-ml` or `ray-llm`.
fn image_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?:^|/)ray(?:-ml|-llm)?:(\d+\.\d+\.\d+)").ok())
        .as_ref()
}

/// The version one event states, if any.
fn of(ev: &Event) -> Option<Version> {
    if let Some(path) = ev.field("path") {
        let last = path.rsplit('.').next().unwrap_or(path);
        let value = ev.field("value")?;
        return match last {
            "rayversion" => Version::parse(value),
            "image" => image_regex()?
                .captures(value.trim())
                .and_then(|c| Version::parse(c.get(1)?.as_str())),
            _ => None,
        };
    }
    let lower = ev.message.to_ascii_lowercase();
    if !crate::rules::sieve::VERSION_LITERALS
        .iter()
        .any(|l| lower.contains(l))
    {
        return None;
    }
    text_regex()?
        .captures(&ev.message)
        .and_then(|c| Version::parse(c.get(1)?.as_str()))
}

/// Every distinct version the bundle states, oldest first, each with the first event that
/// states it.
pub fn stated(events: &[Event]) -> Vec<Stated> {
    let mut seen: BTreeMap<Version, usize> = BTreeMap::new();
    for (i, ev) in events.iter().enumerate() {
        if let Some(v) = of(ev) {
            seen.entry(v).or_insert(i);
        }
    }
    seen.into_iter()
        .map(|(version, event)| Stated { version, event })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fact(path: &str, value: &str) -> Event {
        let mut ev = Event::new(1, format!("{path}: {value}"));
        ev.fields.push(("path".into(), path.into()));
        ev.fields.push(("value".into(), value.into()));
        ev
    }

    #[test]
    fn versions_come_from_objects_images_and_command_output() {
        let events = vec![
            fact("spec.rayclusterconfig.rayversion", "2.41.0"),
            fact("spec.rayversion", "'2.9.3'"),
            fact(
                "containers.ray-head.image",
                "rayproject/ray:2.22.0-py311-gpu",
            ),
            fact(
                "spec.headgroupspec.template.spec.containers[0].image",
                "docker.io/rayproject/ray-ml:2.40.0",
            ),
            Event::new(2, "ray, version 2.60.0".to_string()),
            Event::new(
                3,
                "2026-12-06 08:23:28,266\tINFO monitor.py:689 -- Ray version: 2.9.3".to_string(),
            ),
        ];
        let got: Vec<String> = stated(&events)
            .iter()
            .map(|s| format!("{} @{}", s.version, s.event))
            .collect();
        assert_eq!(
            got,
            [
                "2.9.3 @1",
                "2.22.0 @2",
                "2.40.0 @3",
                "2.41.0 @0",
                "2.60.0 @4"
            ]
        );
    }

    #[test]
    fn other_versions_are_not_ray_s() {
        let events = vec![
            fact(
                "containers.kuberay-operator.image",
                "quay.io/kuberay/operator:v1.3.2",
            ),
            fact("containers.app.image", "example/raylet-tools:2.9.3"),
            fact("spec.version", "2.9.3"),
            Event::new(1, "Ray version mismatch: 2.9.3".to_string()),
            Event::new(2, "kubectl version v1.29.4".to_string()),
        ];
        assert!(stated(&events).is_empty());
    }
}
