//! raysift reads a KubeRay / Ray support bundle offline and explains, ranked and with
//! evidence, why the RayService, RayCluster or RayJob in it is broken.
//!
//! The pipeline, in reading order: `bundle` (open the container, yield files) → `classify`
//! (which source each file is) → `parse` (one pure parser per format) → `timeline` (one
//! merged, UTC-normalised event stream) → rules → rank → report.

pub mod analysis;
pub mod batch;
pub mod bundle;
pub mod classify;
pub mod cli;
pub mod collect;
pub mod collected;
pub mod complete;
pub mod diag;
pub mod diff;
pub mod event;
pub mod exit;
pub mod explain;
pub mod glob;
pub mod history_server;
pub mod inventory;
pub mod judge;
pub mod load;
pub mod messages;
pub mod model;
pub mod objects;
pub mod open_world;
pub mod parse;
pub mod query;
pub mod rank;
pub mod redact;
pub mod report;
pub mod report_data;
pub mod resolve;
pub mod rules;
pub mod serve_schema;
pub mod spill;
pub mod streamed;
pub mod timeline;
pub mod versions;
pub mod words;
