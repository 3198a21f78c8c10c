//! The versions a bundle states, each with the event that states it: the KubeRay operator's,
//! Ray's, the Kubernetes server's, Python's and the Ray CRD versions served. One reading for
//! every reader: the report's header and `bundle.versions` (`rank`), the Serve schema check
//! (`serve_schema`, Ray versions) and the known issues' version ranges (`rules::known`).
//!
//! Where the versions come from:
//!
//! - **KubeRay**: an operator image's tag (`quay.io/kuberay/operator:v1.2.2`, in a pod's
//!   describe, YAML or JSON, or `raysift collect`'s `operator_image`); the Helm chart label
//!   `helm.sh/chart: kuberay-operator-1.1.0` (the chart sets `app.kubernetes.io/version` from an
//!   `appVersion` it does not declare, so that label says nothing); the operator's start-up
//!   line `"msg":"the operator","version:":"v1.0.0"` of KubeRay 0.6 and 1.0, which logs the
//!   `OPERATOR_VERSION` environment variable (empty unless someone set it; later releases log
//!   no version).
//! - **Ray**: `rayVersion`; a Ray image's tag (`rayproject/ray:2.41.0-py311`); `ray --version`
//!   (`ray, version 2.9.3`); the autoscaler's `Ray version: 2.9.3` (`monitor.log`); the GCS's
//!   `Ray cluster metadata ray_version=2.40.0` (`gcs_server.out`); the Serve controller's
//!   `Controller starting (version='2.22.0')`; a wheel or its metadata folder
//!   (`ray-2.9.3-cp311-…whl`, `ray-2.9.3.dist-info`); both sides of Ray's version check
//!   (`Ray cluster at … has version 2.41.0, but this process is running Ray version 2.9.3`).
//! - **Kubernetes**: `kubectl version`'s `Server Version: v1.28.3` (text) or `serverVersion`
//!   (JSON), troubleshoot's `cluster_version.json`, `raysift collect`'s
//!   `kubectl_server_version`, a node's `Kubelet Version:` / `kubeletVersion`.
//! - **Python**: `Python 3.11.7`, a wheel's `cp311` tag, a `python3.11/site-packages` path, a
//!   Ray image's `-py311` suffix.
//! - **CRDs**: each version a Ray CRD serves (`spec.versions[i].name` where `served: true`),
//!   and `raysift collect`'s `crd_versions`.
//!
//! A log line is read only when it holds one of [`LITERALS`], which the sieve keeps
//! (`rules::sieve`): every text regex here requires one of them.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use crate::event::{Event, SourceKind};

/// What a line of text that states a version holds (lower case), one of them each. The sieve
/// keeps every line that holds one, so that the sieved read sees what the full read sees.
pub const LITERALS: [&str; 11] = [
    "ray, version ",
    "ray version:",
    "ray_version=",
    "has version ",
    "controller starting (version=",
    ".dist-info",
    ".whl",
    "site-packages",
    "python 3.",
    "server version:",
    "version:\"",
];

/// A `major.minor.patch` version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// `2.41.0`, also with a leading `v`, quotes, or a suffix after the patch (`2.41.0-py311`).
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.trim().trim_matches(['"', '\'']);
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts = s.splitn(3, '.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let rest = parts.next()?;
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let patch = rest.get(..digits)?.parse().ok()?;
        Some(Version(major, minor, patch))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// What a version is the version of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Product {
    Kuberay,
    Ray,
    Kubernetes,
    Python,
    Crd,
}

impl Product {
    /// How the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Product::Kuberay => "KubeRay",
            Product::Ray => "Ray",
            Product::Kubernetes => "Kubernetes",
            Product::Python => "Python",
            Product::Crd => "CRDs served",
        }
    }
}

/// A version the bundle states, and the first event that states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stated {
    pub product: Product,
    /// As the report shows it: `1.2.2`, `3.11`, `v1.28.3-gke.100`, `rayclusters.ray.io v1`.
    pub value: String,
    /// The version, when the value is one (`major.minor.patch`).
    pub version: Option<Version>,
    pub event: usize,
}

/// Every distinct version the bundle states, by product, oldest first, each with the first
/// event that states it.
pub fn stated(events: &[Event]) -> Vec<Stated> {
    let mut seen: BTreeMap<(Product, Option<Version>, String), usize> = BTreeMap::new();
    let mut note = |product, value: String, i| {
        let version = match product {
            Product::Kubernetes | Product::Kuberay | Product::Ray => Version::parse(&value),
            Product::Python | Product::Crd => None,
        };
        seen.entry((product, version, value)).or_insert(i);
    };
    for (i, ev) in events.iter().enumerate() {
        for (product, value) in of(ev) {
            note(product, value, i);
        }
    }
    for (value, i) in crds_served(events) {
        note(Product::Crd, value, i);
    }
    seen.into_iter()
        .map(|((product, version, value), event)| Stated {
            product,
            value,
            version,
            event,
        })
        .collect()
}

/// The Ray versions of [`stated`].
pub fn ray(stated: &[Stated]) -> impl Iterator<Item = (Version, usize)> + '_ {
    stated
        .iter()
        .filter(|s| s.product == Product::Ray)
        .filter_map(|s| Some((s.version?, s.event)))
}

/// What one event states (a CRD's served versions need two facts: [`crds_served`]).
fn of(ev: &Event) -> Vec<(Product, String)> {
    if let (Some(path), Some(value)) = (ev.field("path"), ev.field("value")) {
        return of_fact(path, value.trim().trim_matches(['"', '\''])).collect();
    }
    if ev.kind == SourceKind::Operator && ev.message == "the operator" {
        let stated = ev.field("version:").and_then(Version::parse);
        return stated
            .map(|v| (Product::Kuberay, v.to_string()))
            .into_iter()
            .collect();
    }
    let lower = ev.message.to_ascii_lowercase();
    if !LITERALS.iter().any(|l| lower.contains(l)) {
        return Vec::new();
    }
    of_text(&ev.message)
}

/// What a fact (a leaf of a Kubernetes object, a metadata file's key) states.
fn of_fact<'a>(path: &str, value: &'a str) -> impl Iterator<Item = (Product, String)> + 'a {
    let last = path.rsplit('.').next().unwrap_or(path);
    let mut out: Vec<(Product, String)> = Vec::new();
    match last {
        "rayversion" => out.extend(Version::parse(value).map(|v| (Product::Ray, v.to_string()))),
        _ if last.ends_with("image") => out.extend(of_image(value)),
        "gitversion" if !path.contains("client") => out.push((Product::Kubernetes, value.into())),
        "kubeletversion" | "kubectl_server_version" if !value.is_empty() => {
            out.push((Product::Kubernetes, value.into()));
        }
        "crd_versions" if !value.is_empty() => out.push((Product::Crd, value.into())),
        _ if path.contains("helm.sh/chart") => {
            let chart = value
                .strip_prefix("kuberay-operator-")
                .and_then(Version::parse);
            out.extend(chart.map(|v| (Product::Kuberay, v.to_string())));
        }
        _ => {}
    }
    out.into_iter()
}

/// What an image reference states: KubeRay's operator, or Ray (and the Python of its tag).
fn of_image(image: &str) -> Vec<(Product, String)> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?:^|/)(?:(?P<op>kuberay/operator)|ray(?:-ml|-llm)?):v?(?P<v>\d+\.\d+\.\d+)(?:\S*?-py3(?P<py>\d+))?",
        )
        .ok()
    });
    let Some(c) = re.as_ref().and_then(|re| re.captures(image)) else {
        return Vec::new();
    };
    let Some(v) = c.name("v").and_then(|v| Version::parse(v.as_str())) else {
        return Vec::new();
    };
    if c.name("op").is_some() {
        return vec![(Product::Kuberay, v.to_string())];
    }
    let mut out = vec![(Product::Ray, v.to_string())];
    out.extend(
        c.name("py")
            .map(|p| (Product::Python, format!("3.{}", p.as_str()))),
    );
    out
}

/// The regexes of a line of text, each with the product its `v` capture is the version of.
fn text_regexes() -> &'static [(Product, Regex)] {
    static RES: OnceLock<Vec<(Product, Regex)>> = OnceLock::new();
    RES.get_or_init(|| {
        let v = r"v?(?P<v>\d+\.\d+\.\d+)\b";
        let py = r"(?P<v>3\.\d+(?:\.\d+)?)\b";
        [
            (
                Product::Ray,
                format!(r"(?i)\bray(?:, version | version: ?){v}"),
            ),
            (Product::Ray, format!(r"\bray_version={v}")),
            (Product::Ray, format!(r"Ray cluster at \S+ has version {v}")),
            (
                Product::Ray,
                format!(r"this process is running Ray version {v}"),
            ),
            (
                Product::Ray,
                format!(r"Controller starting \(version='{v}'\)"),
            ),
            (
                Product::Ray,
                format!(r"\bray-{v}(?:\.dist-info|-cp\d+-\S*\.whl)"),
            ),
            (
                Product::Kubernetes,
                r"Server Version: (?P<v>v\d+\.\d+\.\d+\S*)".to_string(),
            ),
            (
                Product::Kubernetes,
                r#"Server Version: version\.Info\{.*?GitVersion:"(?P<v>v[^"]+)""#.into(),
            ),
            (Product::Python, format!(r"\bPython {py}")),
            (
                Product::Python,
                r"\bpython3\.(?P<v>\d+)/site-packages".into(),
            ),
            (Product::Python, r"-cp3(?P<v>\d+)-\S*\.whl".into()),
        ]
        .into_iter()
        .filter_map(|(p, re)| Some((p, Regex::new(&re).ok()?)))
        .collect()
    })
}

/// What a line of text states.
fn of_text(text: &str) -> Vec<(Product, String)> {
    let mut out = Vec::new();
    for (product, re) in text_regexes() {
        for c in re.captures_iter(text) {
            let Some(v) = c.name("v").map(|m| m.as_str()) else {
                continue;
            };
            let value = match product {
                Product::Python if !v.starts_with("3.") => format!("3.{v}"),
                Product::Ray => match Version::parse(v) {
                    Some(v) => v.to_string(),
                    None => continue,
                },
                _ => v.to_string(),
            };
            out.push((*product, value));
        }
    }
    out
}

/// The versions each Ray CRD serves (`rayclusters.ray.io v1`), each with the event that names
/// the version: `spec.versions[i].name` of an object whose `spec.versions[i].served` is true.
fn crds_served(events: &[Event]) -> Vec<(String, usize)> {
    let mut names: BTreeMap<(&str, &str), (&str, usize)> = BTreeMap::new();
    let mut served: Vec<(&str, &str)> = Vec::new();
    for (i, ev) in events.iter().enumerate() {
        let (Some(object), Some(path), Some(value)) =
            (ev.field("object"), ev.field("path"), ev.field("value"))
        else {
            continue;
        };
        let Some(crd) = object.strip_prefix("CustomResourceDefinition/") else {
            continue;
        };
        if !crd.ends_with(".ray.io") {
            continue;
        }
        if let Some(at) = path
            .strip_suffix(".name")
            .filter(|p| p.starts_with("spec.versions["))
        {
            names.entry((crd, at)).or_insert((value, i));
        } else if let Some(at) = path.strip_suffix(".served") {
            if value.trim() == "true" {
                served.push((crd, at));
            }
        }
    }
    served
        .into_iter()
        .filter_map(|key| {
            let (name, i) = names.get(&key)?;
            Some((
                format!("{} {}", key.0, name.trim().trim_matches(['"', '\''])),
                *i,
            ))
        })
        .collect()
}

/// A version as the report shows it: its value and the line that states it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Shown {
    pub value: String,
    pub file: String,
    pub line: u32,
}

/// The versions of the report's `bundle.versions`: each product's distinct values, oldest
/// first, each with the first line that states it. Several values of one product are all
/// shown: sources that disagree are evidence too (a worker on another Ray than the head).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Versions {
    pub kuberay: Vec<Shown>,
    pub ray: Vec<Shown>,
    pub kubernetes: Vec<Shown>,
    pub python: Vec<Shown>,
    pub crds: Vec<Shown>,
}

impl Versions {
    /// The versions `stated` holds, each located by `at` (an event's file and line).
    pub fn of(stated: &[Stated], at: impl Fn(usize) -> (String, u32)) -> Versions {
        let mut v = Versions::default();
        for s in stated {
            let (file, line) = at(s.event);
            let shown = Shown {
                value: s.value.clone(),
                file,
                line,
            };
            v.of_mut(s.product).push(shown);
        }
        v
    }

    fn of_mut(&mut self, product: Product) -> &mut Vec<Shown> {
        match product {
            Product::Kuberay => &mut self.kuberay,
            Product::Ray => &mut self.ray,
            Product::Kubernetes => &mut self.kubernetes,
            Product::Python => &mut self.python,
            Product::Crd => &mut self.crds,
        }
    }

    /// Each product with its values, in report order; products with none left out.
    pub fn each(&self) -> impl Iterator<Item = (Product, &[Shown])> {
        [
            (Product::Kuberay, &self.kuberay),
            (Product::Ray, &self.ray),
            (Product::Kubernetes, &self.kubernetes),
            (Product::Python, &self.python),
            (Product::Crd, &self.crds),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(p, v)| (p, v.as_slice()))
    }

    pub fn is_empty(&self) -> bool {
        self.each().next().is_none()
    }

    /// Every shown version's strings, for redaction.
    pub fn strings_mut(&mut self) -> impl Iterator<Item = &mut String> {
        [
            &mut self.kuberay,
            &mut self.ray,
            &mut self.kubernetes,
            &mut self.python,
            &mut self.crds,
        ]
        .into_iter()
        .flatten()
        .flat_map(|s| [&mut s.value, &mut s.file])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
