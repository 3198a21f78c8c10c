//! What the `metadata.json` of a `raysift collect` bundle says of its collection: the one
//! contract between the collector that writes it (`collect`) and the reader that recognises
//! it (`resolve`, `timeline`, `inventory`). Data only, so the reader depends on no part of the
//! collector.

use crate::event::Event;

/// What the collected bundle's `metadata.json` says made it: `analyze` recognises the bundle
/// by this value of its `collector` key.
pub const COLLECTOR: &str = "raysift collect";

/// What the `metadata.json` of a `raysift collect` bundle records of its collection.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Collected {
    /// The metadata file.
    pub file: String,
    pub raysift_version: Option<String>,
    pub kubectl_client_version: Option<String>,
    pub kubectl_server_version: Option<String>,
    pub operator_image: Option<String>,
    pub crd_versions: Option<String>,
}

/// The facts of a metadata file that say how a `raysift collect` bundle was collected: the
/// fact's path and its value.
pub(crate) fn collected_fact(ev: &Event) -> Option<(&str, &str)> {
    let path = ev.field("path")?;
    matches!(
        path,
        "collector"
            | "raysift_version"
            | "kubectl_client_version"
            | "kubectl_server_version"
            | "operator_image"
            | "crd_versions"
    )
    .then(|| {
        (
            path,
            ev.field("value").unwrap_or("").trim().trim_matches('"'),
        )
    })
}

/// The collection a metadata file records, when its `collector` is `raysift collect`.
pub(crate) fn collected_from<'a>(
    file: &str,
    facts: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<Collected> {
    let mut got = Collected {
        file: file.to_string(),
        ..Collected::default()
    };
    let mut ours = false;
    for (path, value) in facts {
        let v = Some(value.to_string()).filter(|v| !v.is_empty() && v != "null");
        match path {
            "collector" => ours |= value == COLLECTOR,
            "raysift_version" => got.raysift_version = v,
            "kubectl_client_version" => got.kubectl_client_version = v,
            "kubectl_server_version" => got.kubectl_server_version = v,
            "operator_image" => got.operator_image = v,
            "crd_versions" => got.crd_versions = v,
            _ => {}
        }
    }
    ours.then_some(got)
}
