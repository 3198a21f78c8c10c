//! The versions a bundle states, read from facts and lines as real bundles hold them.

use super::*;

fn fact(path: &str, value: &str) -> Event {
    let mut ev = Event::new(1, format!("{path}: {value}"));
    ev.fields.push(("path".into(), path.into()));
    ev.fields.push(("value".into(), value.into()));
    ev
}

fn crd_fact(crd: &str, path: &str, value: &str) -> Event {
    let mut ev = fact(path, value);
    ev.fields.push((
        "object".into(),
        format!("CustomResourceDefinition/{crd}").into(),
    ));
    ev
}

/// `product value @event`, in the order [`stated`] gives them.
fn shown(events: &[Event]) -> Vec<String> {
    stated(events)
        .iter()
        .map(|s| format!("{} {} @{}", s.product.name(), s.value, s.event))
        .collect()
}

#[test]
fn ray_versions_come_from_objects_images_and_command_output() {
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
    let got: Vec<String> = ray(&stated(&events))
        .map(|(v, at)| format!("{v} @{at}"))
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
        fact("containers.app.image", "example/raylet-tools:2.9.3"),
        fact("spec.version", "2.9.3"),
        Event::new(1, "Ray version mismatch: 2.9.3".to_string()),
        Event::new(2, "kubectl version v1.29.4".to_string()),
    ];
    assert_eq!(ray(&stated(&events)).count(), 0);
}

#[test]
fn what_real_sessions_print_states_the_ray_version() {
    let lines = [
        "[2026-12-06 08:40:31,002 I 26529 26529] (gcs_server) gcs_server_main.cc:52: Ray cluster metadata ray_version=2.40.0 ray_commit=0123456789abcdef",
        "2026-12-06 08:35:59,051 controller 19933 controller.py:237 - Controller starting (version='2.22.0').",
        "Successfully installed ray-2.9.3-cp311-cp311-manylinux2014_x86_64.whl",
        "/home/ray/anaconda3/lib/python3.11/site-packages/ray-2.10.0.dist-info/METADATA",
        "RuntimeError: Ray cluster at raycluster-head-svc:6379 has version 2.41.0, but this process is running Ray version 2.9.3.",
    ];
    let events: Vec<Event> = lines.iter().map(|l| Event::new(1, l.to_string())).collect();
    assert_eq!(
        shown(&events),
        [
            "Ray 2.9.3 @2",
            "Ray 2.10.0 @3",
            "Ray 2.22.0 @1",
            "Ray 2.40.0 @0",
            "Ray 2.41.0 @4",
            "Python 3.11 @2",
        ]
    );
}

#[test]
fn the_operator_s_version_comes_from_its_image_chart_and_start_up_line() {
    let mut start = Event::new(4, "the operator".to_string());
    start.kind = SourceKind::Operator;
    start.fields.push(("version:".into(), "v1.0.0".into()));
    let mut unset = start.clone();
    unset.fields[0].1 = "".into();
    let events = vec![
        fact(
            "containers.kuberay-operator.image",
            "quay.io/kuberay/operator:v1.3.2",
        ),
        fact("spec.containers[0].image", "kuberay/operator:v0.6.0"),
        fact("metadata.labels.helm.sh/chart", "kuberay-operator-1.1.0"),
        fact("metadata.labels.helm.sh/chart", "ray-cluster-1.1.1"),
        start,
        unset,
    ];
    assert_eq!(
        shown(&events),
        [
            "KubeRay 0.6.0 @1",
            "KubeRay 1.0.0 @4",
            "KubeRay 1.1.0 @2",
            "KubeRay 1.3.2 @0"
        ]
    );
}

#[test]
fn kubernetes_python_and_crd_versions() {
    let events = vec![
        Event::new(1, "Server Version: v1.28.3-gke.100".to_string()),
        Event::new(2, "Client Version: v1.29.1".to_string()),
        fact("info.gitversion", "v1.31.4-gke.1256000"),
        fact("clientversion.gitversion", "v1.30.0"),
        fact("systeminfo.kubeletversion", "v1.27.3"),
        Event::new(3, "Python 3.11.7".to_string()),
        crd_fact("rayclusters.ray.io", "spec.versions[0].name", "v1"),
        crd_fact("rayclusters.ray.io", "spec.versions[0].served", "true"),
        crd_fact("rayclusters.ray.io", "spec.versions[1].name", "v1alpha1"),
        crd_fact("rayclusters.ray.io", "spec.versions[1].served", "false"),
        crd_fact("widgets.example.com", "spec.versions[0].name", "v1"),
        crd_fact("widgets.example.com", "spec.versions[0].served", "true"),
    ];
    assert_eq!(
        shown(&events),
        [
            "Kubernetes v1.27.3 @4",
            "Kubernetes v1.28.3-gke.100 @0",
            "Kubernetes v1.31.4-gke.1256000 @2",
            "Python 3.11.7 @5",
            "CRDs served rayclusters.ray.io v1 @6",
        ]
    );
}

#[test]
fn every_text_regex_requires_a_literal_the_sieve_keeps() {
    let lines = [
        "ray, version 2.9.3",
        "Ray version: 2.9.3",
        "ray_version=2.40.0",
        "Ray cluster at x has version 2.41.0",
        "Controller starting (version='2.22.0')",
        "ray-2.9.3.dist-info",
        "ray-2.9.3-cp311-cp311-linux_x86_64.whl",
        "python3.11/site-packages",
        "Python 3.11.7",
        "Server Version: v1.28.3",
    ];
    for line in lines {
        assert!(!of_text(line).is_empty(), "{line}");
        let lower = line.to_ascii_lowercase();
        assert!(LITERALS.iter().any(|l| lower.contains(l)), "{line}");
    }
}

#[test]
fn versions_parse_in_the_shapes_bundles_write() {
    assert_eq!(Version::parse("2.41.0"), Some(Version(2, 41, 0)));
    assert_eq!(Version::parse("'2.9.3'"), Some(Version(2, 9, 3)));
    assert_eq!(Version::parse("v2.9.3"), Some(Version(2, 9, 3)));
    assert_eq!(Version::parse("2.41.0-py311-gpu"), Some(Version(2, 41, 0)));
    assert_eq!(Version::parse("2.41"), None);
    assert_eq!(Version::parse("latest"), None);
}
