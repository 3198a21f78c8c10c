//! Parser and engine throughput in MB/s on realistic input, without extra crates:
//! `cargo bench --bench parse`. Inputs are the corpus files of each format, repeated to about
//! 16 MB, so the numbers measure the parsers on real line shapes and real mixes of healthy and
//! failing lines. Each figure is the median of several runs.

use std::path::Path;
use std::time::Instant;

use raysift::event::SourceKind;
use raysift::parse;

const TARGET_BYTES: usize = 16 << 20;
const RUNS: usize = 7;

fn corpus_file(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", path.display());
        std::process::exit(1)
    })
}

fn repeat_to_size(sample: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(TARGET_BYTES + sample.len());
    while out.len() < TARGET_BYTES {
        out.extend_from_slice(sample);
        if out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn bench(name: &str, kind: SourceKind, rel: &str) {
    let input = repeat_to_size(&corpus_file(rel));
    let mut rates = Vec::with_capacity(RUNS);
    let mut events = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = parse::parse(kind, &input);
        let secs = t.elapsed().as_secs_f64();
        events = out.events.len();
        rates.push(input.len() as f64 / 1e6 / secs);
    }
    println!(
        "{name:<28} {:>8.1} MB/s  ({} MB, {events} events)",
        median(rates),
        input.len() / 1_000_000
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    println!("parser throughput (median of {RUNS} runs, one thread)");
    bench(
        "operator (zap console 0.6)",
        SourceKind::Operator,
        "handmade-agent-died/operator-log.txt",
    );
    bench(
        "operator (zap JSON 1.1)",
        SourceKind::Operator,
        "kuberay-log-missing-module/kuberay-operator.log",
    );
    bench(
        "ray python (dashboard_agent)",
        SourceKind::DashboardAgent,
        "handmade-agent-died/head-logs/dashboard_agent.log",
    );
    bench(
        "ray c++ (gcs_server.out)",
        SourceKind::GcsServer,
        "handmade-agent-died/head-logs/gcs_server.out",
    );
    bench(
        "serve (proxy access log)",
        SourceKind::ServeProxy,
        "handmade-agent-died/head-logs/serve/http_proxy_10.244.1.7.log",
    );
    bench("serve (controller)", SourceKind::ServeController, "kuberay-log-missing-module/doc-search-raycluster-xv5sl/doc-search-raycluster-xv5sl-head-k8w2m/serve/controller_271.log");
    bench(
        "kubectl describe rayservice",
        SourceKind::DescribeRayService,
        "handmade-agent-died/rayservice-describe.txt",
    );
    bench(
        "kubectl get events",
        SourceKind::KubeEvents,
        "handmade-agent-died/events.txt",
    );
    bench("kube object (PodList JSON)", SourceKind::KubeObject, "troubleshoot-image-pull/support-bundle-2025-12-05T09_12_44/cluster-resources/pods/ray.json");
    bench(
        "kube object (YAML)",
        SourceKind::KubeObject,
        "kuberay-log-missing-module/rayservice.yaml",
    );
    engine();
}

/// The rule engine over a timeline: events per second and MB/s of message text.
fn engine() {
    use raysift::bundle::Limits;
    use raysift::load::{load, LoadConfig};
    use raysift::rules::{engine::Engine, library};
    use raysift::timeline::{build, TimeConfig};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/handmade-agent-died");
    let loaded = match load(
        &dir,
        &LoadConfig {
            limits: Limits::DEFAULT,
            threads: 1,
            sieve: None,
            progress: None,
        },
    ) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return;
        }
    };
    let tl = build(loaded, &TimeConfig { tz_override: None });
    let rules = match library::builtin() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return;
        }
    };
    let n_rules = rules.len();
    let engine = Engine::new(rules);
    // Repeat the events to a few hundred thousand.
    let mut events = Vec::new();
    while events.len() < 300_000 {
        events.extend(tl.events.iter().cloned());
    }
    let bytes: usize = events
        .iter()
        .map(|e| e.message.len() + e.fields.iter().map(|(_, v)| v.len()).sum::<usize>())
        .sum();
    let mut rates = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let findings = engine.run(&events);
        let secs = t.elapsed().as_secs_f64();
        std::hint::black_box(findings);
        rates.push(bytes as f64 / 1e6 / secs);
    }
    println!(
        "{:<28} {:>8.1} MB/s  ({} events, {} rules, {} prefilter literals)",
        "rule engine (scan + clauses)",
        median(rates),
        events.len(),
        n_rules,
        engine.n_literals()
    );
}
