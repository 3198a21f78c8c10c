//! Known issues and the versions a bundle states, through the binary (`src/rules/known.rs`,
//! `src/versions/`): the same lines name a known issue when the bundle's version is in its
//! range, do not when it is outside, and offer it at lower confidence when the bundle states
//! no version; `bundle.versions` names each version with the line that states it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use serde_json::Value;

/// The KIS001 fixture (the operator's `Restart RayCluster` record, KubeRay 0.6.0), with the
/// operator's image at `tag`, or without the operator's describe when `tag` is `None`.
fn restart_bundle(dir: &Path, tag: Option<&str>) {
    let fixture = common::root().join("tests/fixtures/rules/KIS001/fires");
    for name in ["operator-log.txt", "operator-pod-describe.txt"] {
        let text = std::fs::read_to_string(fixture.join(name)).unwrap();
        match (name, tag) {
            ("operator-pod-describe.txt", None) => {}
            ("operator-pod-describe.txt", Some(tag)) => {
                std::fs::write(dir.join(name), text.replace("v0.6.0", tag)).unwrap();
            }
            _ => std::fs::write(dir.join(name), text).unwrap(),
        }
    }
}

fn analyze(dir: &Path) -> Value {
    let out = common::raysift(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = common::schema_errors("report", &report);
    assert!(errors.is_empty(), "{errors:#?}");
    report
}

/// The cause that carries KIS001, if any.
fn kis001(report: &Value) -> Option<&Value> {
    report["causes"].as_array().unwrap().iter().find(|c| {
        c["codes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|code| code == "KIS001")
    })
}

#[test]
fn a_version_in_range_names_the_known_issue() {
    let dir = common::scratch("known", "in-range");
    restart_bundle(&dir, Some("v0.6.0"));
    let report = analyze(&dir);
    let cause = kis001(&report).expect("KIS001 is claimed");
    assert_eq!(
        cause["known_issue"],
        serde_json::json!({
            "tracker": "ray-project/kuberay",
            "number": 1277,
            "fixed_in": "KubeRay 1.1.0",
            "affects": "KubeRay <1.1.0",
            "claim": "in_range",
        })
    );
    let summary = cause["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(
            "This is ray-project/kuberay#1277, fixed in KubeRay 1.1.0: upgrade, or raise"
        ),
        "{summary}"
    );
    let kuberay = &report["bundle"]["versions"]["kuberay"];
    assert_eq!(
        kuberay,
        &serde_json::json!([{"value": "0.6.0", "file": "operator-pod-describe.txt", "line": 8}])
    );
    let text = common::raysift(&["analyze", dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Versions: KubeRay 0.6.0 (operator-pod-describe.txt:8)."),
        "{text}"
    );
}

#[test]
fn a_version_out_of_range_does_not_claim_it() {
    let dir = common::scratch("known", "out-of-range");
    restart_bundle(&dir, Some("v1.2.2"));
    let report = analyze(&dir);
    assert!(kis001(&report).is_none(), "{report:#}");
}

#[test]
fn an_unknown_version_offers_it_at_lower_confidence() {
    let (known, unknown) = (
        common::scratch("known", "claimed"),
        common::scratch("known", "unknown"),
    );
    restart_bundle(&known, Some("v0.6.0"));
    restart_bundle(&unknown, None);
    let (known, unknown) = (analyze(&known), analyze(&unknown));
    let cause = kis001(&unknown).expect("KIS001 is offered");
    assert_eq!(cause["known_issue"]["claim"], "version_unknown");
    let summary = cause["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("This may be ray-project/kuberay#1277 (it affects KubeRay <1.1.0; the bundle states no version of it)"),
        "{summary}"
    );
    let confidence = |r: &Value| kis001(r).unwrap()["confidence"].as_f64().unwrap();
    assert!(confidence(&unknown) < confidence(&known));
}

/// A real session's own lines state its Ray version, each source with its line.
#[test]
fn a_real_session_states_its_ray_and_python_versions() {
    let bundle = common::root().join("corpus/run-2.22.0-healthy-serve.tar.gz");
    let report = analyze(&bundle);
    let versions = &report["bundle"]["versions"];
    let values = |p: &str| -> Vec<String> {
        versions[p]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["value"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(values("ray"), ["2.22.0"]);
    assert_eq!(values("python"), ["3.11"]);
    assert!(values("kuberay").is_empty());
}

/// The known issues from KubeRay's tracker (KIS025–KIS044, KIS053–KIS066): each `fires` fixture
/// states the operator's version in `operator-describe.txt`; the table gives that version, one
/// outside the issue's range (the release that fixed it, or one before it began), and the
/// issue's number.
const KUBERAY_TRACKER: &[(&str, u64, &str, &[&str])] = &[
    ("KIS025", 2125, "v1.1.1", &["v1.2.0", "v0.6.0"]),
    ("KIS026", 2210, "v1.1.1", &["v1.2.2", "v0.5.0"]),
    ("KIS027", 688, "v0.3.0", &["v0.4.0"]),
    ("KIS028", 1212, "v0.5.0", &["v0.6.0", "v0.2.0"]),
    ("KIS029", 922, "v0.4.0", &["v1.1.0"]),
    ("KIS030", 1706, "v1.0.0", &["v1.1.0", "v0.5.0"]),
    ("KIS031", 2428, "v1.2.2", &["v1.3.0", "v1.2.1"]),
    ("KIS032", 538, "v0.3.0", &["v0.4.0", "v0.2.0"]),
    ("KIS033", 1414, "v0.6.0", &["v1.0.0", "v0.5.0"]),
    ("KIS034", 856, "v0.4.0", &["v0.5.0"]),
    ("KIS035", 2151, "v1.1.0", &["v1.2.0", "v0.3.0"]),
    ("KIS036", 2264, "v1.1.1", &["v1.2.0", "v0.2.0"]),
    ("KIS037", 3980, "v1.4.2", &["v1.5.0", "v1.3.2"]),
    ("KIS038", 1125, "v0.5.0", &["v0.6.0", "v0.2.0"]),
    ("KIS053", 3250, "v1.3.2", &["v1.4.0"]),
    ("KIS054", 1038, "v0.5.0", &["v0.5.2", "v0.2.0"]),
    ("KIS055", 1668, "v1.0.0", &["v1.1.0", "v0.2.0"]),
    ("KIS056", 2268, "v1.1.1", &["v1.2.0", "v0.3.0"]),
    ("KIS057", 4721, "v1.6.1", &["v1.6.2", "v0.6.0"]),
    ("KIS058", 645, "v0.3.0", &["v0.4.0"]),
    ("KIS059", 4473, "v1.5.2", &["v1.6.0", "v1.4.2"]),
];

/// `code`'s fires fixture, copied to `dir` with the operator's tag `stated` replaced by `tag`,
/// or without the operator's describe when `tag` is `None`.
fn kuberay_fixture(dir: &Path, code: &str, stated: &str, tag: Option<&str>) {
    let fixture = common::root()
        .join("tests/fixtures/rules")
        .join(code)
        .join("fires");
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        match (name.as_str(), tag) {
            ("operator-describe.txt", None) => {}
            ("operator-describe.txt", Some(tag)) => {
                assert!(text.contains(stated), "{code}: {name} states {stated}");
                std::fs::write(dir.join(&name), text.replace(stated, tag)).unwrap();
            }
            _ => std::fs::write(dir.join(&name), text).unwrap(),
        }
    }
}

/// The cause that carries `code`, if any.
fn carrying<'a>(report: &'a Value, code: &str) -> Option<&'a Value> {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["codes"].as_array().unwrap().iter().any(|k| k == code))
}

#[test]
fn kuberay_tracker_known_issues_follow_the_stated_version() {
    for &(code, number, stated, outside) in KUBERAY_TRACKER {
        let dir = common::scratch("known", &format!("{code}-in"));
        kuberay_fixture(&dir, code, stated, Some(stated));
        let report = analyze(&dir);
        let cause = carrying(&report, code).unwrap_or_else(|| panic!("{code} fires: {report:#}"));
        assert_eq!(cause["known_issue"]["number"], number, "{code}");
        assert_eq!(cause["known_issue"]["claim"], "in_range", "{code}");

        for tag in outside {
            let dir = common::scratch("known", &format!("{code}-out-{tag}"));
            kuberay_fixture(&dir, code, stated, Some(tag));
            let report = analyze(&dir);
            assert!(
                carrying(&report, code).is_none(),
                "{code} is claimed with KubeRay {tag}: {report:#}"
            );
        }

        let dir = common::scratch("known", &format!("{code}-unknown"));
        kuberay_fixture(&dir, code, stated, None);
        let report = analyze(&dir);
        let cause = carrying(&report, code).unwrap_or_else(|| panic!("{code} offered: {report:#}"));
        assert_eq!(cause["known_issue"]["claim"], "version_unknown", "{code}");
    }
}

/// The KIS046 fixture (Ray 1.12.0 parsing cgroup v2's `max`, ray-project/ray#23951: a Ray known
/// issue whose range is one release), with `ray --version`'s line at `version`, or without it.
fn cgroup_bundle(dir: &Path, version: Option<&str>) {
    let fixture = common::root().join("tests/fixtures/rules/KIS046/fires");
    let text = std::fs::read_to_string(fixture.join("colab-output.txt")).unwrap();
    std::fs::write(dir.join("colab-output.txt"), text).unwrap();
    if let Some(v) = version {
        std::fs::write(dir.join("ray-version.txt"), format!("ray, version {v}\n")).unwrap();
    }
}

/// A Ray known issue follows the Ray version the bundle states: claimed on the one release it
/// affects, not claimed on the release that fixed it, offered when no version is stated.
#[test]
fn a_ray_known_issue_follows_the_stated_ray_version() {
    let (affected, fixed, unknown) = (
        common::scratch("known", "ray-affected"),
        common::scratch("known", "ray-fixed"),
        common::scratch("known", "ray-unknown"),
    );
    cgroup_bundle(&affected, Some("1.12.0"));
    cgroup_bundle(&fixed, Some("1.12.1"));
    cgroup_bundle(&unknown, None);
    let (affected, fixed, unknown) = (analyze(&affected), analyze(&fixed), analyze(&unknown));
    let cause = carrying(&affected, "KIS046").expect("KIS046 is claimed on 1.12.0");
    assert_eq!(
        cause["known_issue"],
        serde_json::json!({
            "tracker": "ray-project/ray",
            "number": 23951,
            "fixed_in": "Ray 1.12.1",
            "affects": "Ray >=1.12.0, <1.12.1",
            "claim": "in_range",
        })
    );
    assert_eq!(cause["id"], "ray_start_failure");
    assert!(carrying(&fixed, "KIS046").is_none(), "{fixed:#}");
    let offered = carrying(&unknown, "KIS046").expect("KIS046 is offered");
    assert_eq!(offered["known_issue"]["claim"], "version_unknown");
    assert!(
        offered["confidence"].as_f64().unwrap() < cause["confidence"].as_f64().unwrap(),
        "{unknown:#}"
    );
}

/// The known issues from Ray's tracker (KIS039, KIS042–KIS043, KIS045–KIS052, KIS060–KIS061, KIS067–KIS076: Ray's core; KIS062–KIS063, KIS077 on: Ray's libraries and their dependencies): each `fires` fixture states the Ray
/// version in `ray-version.txt` (`ray, version X`); the table gives that version, versions
/// outside the issue's range (the release that fixed it, or one before it began), and the
/// issue's number.
const RAY_TRACKER: &[(&str, u64, &str, &[&str])] = &[
    ("KIS045", 56747, "2.51.1", &["2.53.0"]),
    ("KIS046", 23951, "1.12.0", &["1.12.1", "1.11.0"]),
    ("KIS047", 38257, "2.9.3", &["2.10.0", "1.11.0"]),
    ("KIS048", 34196, "2.2.0", &["2.10.0"]),
    ("KIS049", 47711, "2.35.0", &["2.41.0", "2.2.0"]),
    ("KIS050", 64710, "2.56.0", &["2.56.1", "2.43.0"]),
    ("KIS051", 48513, "2.39.0", &["2.40.0", "1.11.0"]),
    ("KIS052", 30929, "2.2.0", &["2.3.0"]),
    ("KIS060", 54846, "2.48.0", &["2.49.0", "2.52.1"]),
    ("KIS061", 23423, "1.11.0", &["2.1.0", "2.2.0"]),
    ("KIS062", 13622, "1.1.0", &["1.2.0", "1.13.0"]),
    ("KIS063", 46076, "2.24.0", &["2.56.0", "2.60.0"]),
    ("KIS067", 25638, "1.12.1", &["2.0.0"]),
    ("KIS068", 27160, "1.13.0", &["2.0.0", "1.12.1"]),
    ("KIS069", 50868, "2.44.1", &["2.45.0", "2.9.3"]),
    ("KIS070", 59219, "2.52.1", &["2.54.0", "2.9.3"]),
    ("KIS071", 60412, "2.53.0", &["2.54.0", "2.9.3"]),
    ("KIS072", 61382, "2.54.1", &["2.55.0", "2.52.1"]),
    ("KIS073", 60566, "2.54.1", &["2.55.0", "2.9.3"]),
    ("KIS074", 49613, "2.40.0", &["2.41.0", "1.11.0"]),
    ("KIS075", 26064, "1.13.0", &["2.0.0", "1.11.0"]),
    ("KIS076", 34172, "2.3.1", &["2.4.0", "1.13.0"]),
    ("KIS081", 42842, "2.9.1", &["2.10.0", "1.13.0"]),
    ("KIS082", 40401, "2.7.1", &["2.8.0", "2.6.3"]),
    ("KIS083", 41139, "2.8.1", &["2.9.0", "1.13.0"]),
    ("KIS084", 64245, "2.56.1", &["2.57.0", "2.42.1"]),
    ("KIS085", 37765, "2.6.3", &["2.7.0", "2.5.1"]),
    ("KIS086", 64006, "2.55.1", &["2.56.0", "2.54.1"]),
    ("KIS087", 37656, "2.6.1", &["2.6.2", "2.5.1"]),
    ("KIS088", 21000, "1.10.0", &["1.11.0"]),
    ("KIS089", 56491, "2.49.2", &["2.50.0", "2.6.3"]),
    ("KIS077", 57803, "2.53.0", &["2.54.0", "2.55.0"]),
    ("KIS078", 64275, "2.55.1", &["2.57.0", "2.42.1"]),
    ("KIS079", 64766, "2.56.0", &["2.56.1", "2.55.1"]),
    ("KIS042", 56157, "2.47.1", &["2.50.0", "2.46.0"]),
    ("KIS039", 65507, "2.57.1", &["2.59.0", "2.56.0"]),
    ("KIS043", 36231, "2.5.0", &["2.5.1", "2.4.0"]),
    ("KIS080", 52975, "2.46.0", &["2.47.0", "2.45.0"]),
    ("KIS090", 36319, "2.6.0", &["2.6.1", "2.4.0"]),
];

/// `code`'s fires fixture, copied to `dir` with its `ray-version.txt` stating `version`, or
/// without that file when `version` is `None`.
fn ray_fixture(dir: &Path, code: &str, stated: &str, version: Option<&str>) {
    let fixture = common::root().join(format!("tests/fixtures/rules/{code}/fires"));
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        match (name.as_str(), version) {
            ("ray-version.txt", None) => {}
            ("ray-version.txt", Some(v)) => {
                assert_eq!(text.trim(), format!("ray, version {stated}"), "{code}");
                std::fs::write(dir.join(&name), format!("ray, version {v}\n")).unwrap();
            }
            _ => std::fs::write(dir.join(&name), text).unwrap(),
        }
    }
}

#[test]
fn ray_tracker_known_issues_follow_the_stated_version() {
    for &(code, number, stated, outside) in RAY_TRACKER {
        let dir = common::scratch("known", &format!("{code}-in"));
        ray_fixture(&dir, code, stated, Some(stated));
        let report = analyze(&dir);
        let cause = carrying(&report, code).unwrap_or_else(|| panic!("{code} fires: {report:#}"));
        assert_eq!(cause["known_issue"]["tracker"], "ray-project/ray", "{code}");
        assert_eq!(cause["known_issue"]["number"], number, "{code}");
        assert_eq!(cause["known_issue"]["claim"], "in_range", "{code}");

        for v in outside {
            let dir = common::scratch("known", &format!("{code}-out-{v}"));
            ray_fixture(&dir, code, stated, Some(v));
            let report = analyze(&dir);
            assert!(
                carrying(&report, code).is_none(),
                "{code} is claimed with Ray {v}: {report:#}"
            );
        }

        let dir = common::scratch("known", &format!("{code}-unknown"));
        ray_fixture(&dir, code, stated, None);
        let report = analyze(&dir);
        let cause = carrying(&report, code).unwrap_or_else(|| panic!("{code} offered: {report:#}"));
        assert_eq!(cause["known_issue"]["claim"], "version_unknown", "{code}");
    }
}
