//! The Serve schema check on configs built here: keys as Serve's schema knows them per
//! version, the fields they were meant to be, and the finding.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::event::SourceKind;
use crate::parse::ParseOutput;

/// The config of the real runs (`scripts/realrun`, scenario `serve-config-camelcase`).
const CAMEL: &str = include_str!("../../tests/fixtures/serve_schema/serve-config-camelcase.yaml");

const SNAKE: &str = "proxy_location: EveryNode
http_options:
  host: 0.0.0.0
  port: 8000
applications:
  - name: echo
    route_prefix: /echo
    import_path: model_app:echo
    runtime_env:
      env_vars: {modelName: x, numThreads: '2'}
      pip: [torch]
    args: {modelPath: /m}
    deployments:
      - name: Echo
        num_replicas: 2
        user_config: {thresholdValue: 3, nestedThing: {camelKey: 1}}
        autoscaling_config: {min_replicas: 1, max_replicas: 3}
        ray_actor_options:
          num_cpus: 0.5
          resources: {customThing: 1}
";

/// The events of a config file as the loader gives them (file 0).
fn file_events(text: &str) -> Vec<Event> {
    let mut out = ParseOutput::default();
    crate::parse::kube_object::parse(text.as_bytes(), &mut out);
    for ev in &mut out.events {
        ev.kind = SourceKind::KubeObject;
        ev.file = 0;
    }
    out.events
}

fn says(line: &str) -> Event {
    let mut ev = Event::new(1, line.to_string());
    ev.file = 1;
    ev
}

fn service(config: &str, version: &str) -> Vec<Event> {
    let fact = |path: &str, value: &str| {
        let mut ev = Event::new(1, format!("{path}: {value}"));
        ev.kind = SourceKind::KubeObject;
        ev.file = 2;
        for (k, v) in [
            ("path", path),
            ("value", value),
            ("object", "RayService/shop/fruit-stand"),
        ] {
            ev.fields.push((k.into(), v.into()));
        }
        ev
    };
    vec![
        fact("spec.rayclusterconfig.rayversion", version),
        fact("spec.serveconfigv2", config),
    ]
}

fn schema_of(version: &str) -> Schema<'static> {
    let all = data::ranges();
    Schema {
        ranges: vec![data::range_of(all, data::Version::parse(version).unwrap()).unwrap()],
        all,
    }
}

fn unknown_in(text: &str, version: &str) -> Vec<Unknown> {
    let configs = config::configs(&file_events(text));
    assert_eq!(configs.len(), 1, "not read as a Serve config");
    unknown_keys(&schema_of(version), &configs[0].root)
}

#[test]
fn camel_case_becomes_snake_case() {
    for (camel, snake_case) in [
        ("numReplicas", "num_replicas"),
        ("routePrefix", "route_prefix"),
        ("rayActorOptions", "ray_actor_options"),
        ("numGPUs", "num_gpus"),
        ("numGpus", "num_gpus"),
        ("HTTPOptions", "http_options"),
        ("grpcOptions", "grpc_options"),
        ("healthCheckPeriodS", "health_check_period_s"),
        ("num-replicas", "num_replicas"),
        ("import_path", "import_path"),
    ] {
        assert_eq!(snake(camel), snake_case, "{camel}");
    }
}

#[test]
fn a_key_is_meant_as_its_snake_case_or_nearest_field() {
    let names = [
        "name",
        "num_replicas",
        "max_ongoing_requests",
        "ray_actor_options",
    ];
    assert_eq!(meant("numReplicas", &names), Some("num_replicas"));
    assert_eq!(meant("NumReplicas", &names), Some("num_replicas"));
    assert_eq!(meant("numreplicas", &names), Some("num_replicas"));
    assert_eq!(meant("num_replica", &names), Some("num_replicas"));
    assert_eq!(
        meant("max_ongoing_request", &names),
        Some("max_ongoing_requests")
    );
    assert_eq!(meant("rayActorOption", &names), Some("ray_actor_options"));
    assert_eq!(meant("version", &names), None);
    assert_eq!(meant("nam", &names), Some("name"));
    assert_eq!(meant("x", &names), None);
}

#[test]
fn fires_on_the_camel_case_config_of_the_real_runs() {
    let found = unknown_in(CAMEL, "2.60.0");
    let told: Vec<String> = found
        .iter()
        .map(|u| {
            format!(
                "{} {} {} -> {:?}",
                u.at,
                u.model,
                u.key,
                u.meant
                    .as_ref()
                    .map(|m| (&m.field, &m.default, m.code_may_set))
            )
        })
        .collect();
    assert_eq!(
        told,
        [
            "applications[0] ServeApplicationSchema routePrefix -> Some((\"route_prefix\", Some(\"/\"), false))",
            "applications[0].deployments[0] DeploymentSchema numReplicas -> Some((\"num_replicas\", Some(\"1\"), true))",
            "applications[0].deployments[0] DeploymentSchema rayActorOptions -> Some((\"ray_actor_options\", None, true))",
        ]
    );
    assert!(found.iter().all(|u| !u.refused));
    let actor = &found[2];
    assert_eq!(
        actor.inside,
        [("numCpus".to_string(), Some("num_cpus".to_string()))]
    );
    assert_eq!(
        actor.meant.as_ref().unwrap().inside_defaults,
        [("num_cpus".to_string(), "1".to_string())]
    );
    // Each key is cited by its own line.
    let events = file_events(CAMEL);
    let lines: Vec<u32> = found.iter().map(|u| events[u.event].line).collect();
    assert_eq!(lines, [3, 7, 8]);
}

#[test]
fn quiet_on_a_snake_case_config_with_camel_case_inside_free_fields() {
    for v in ["2.5.1", "2.9.3", "2.22.0", "2.40.0", "2.60.0"] {
        let found = unknown_in(SNAKE, v);
        // Only the keys of the config itself are checked, never those inside user_config,
        // runtime_env, args or resources.
        assert!(found.is_empty(), "{v}: {found:?}");
    }
    // Applications take `args` since Ray 2.5.
    let found = unknown_in(SNAKE, "2.4.0");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].key, "args");
    assert_eq!(found[0].known_in.as_deref(), Some("2.5–2.60"));
}

#[test]
fn serve_2_4_to_2_6_refuses_what_later_versions_drop() {
    let found = unknown_in(CAMEL, "2.5.1");
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|u| u.refused), "{found:?}");
    let found = unknown_in(CAMEL, "2.7.2");
    assert!(found.iter().all(|u| !u.refused), "{found:?}");
    // `logging_config` refuses in every version that has it.
    let found = unknown_in(
        "applications:\n  - name: a\n    import_path: m:a\n    logging_config:\n      logLevel: DEBUG\n",
        "2.60.0",
    );
    assert_eq!(found.len(), 1);
    assert!(found[0].refused);
    assert_eq!(found[0].meant.as_ref().unwrap().field, "log_level");
}

#[test]
fn a_field_of_other_versions_is_named_so() {
    let found = unknown_in(
        "applications:\n  - name: a\n    import_path: m:a\n    deployments:\n      - name: D\n        max_concurrent_queries: 10\n",
        "2.60.0",
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].meant, None);
    assert_eq!(found[0].known_in.as_deref(), Some("2.4–2.32"));
    // The same key is known to 2.9.
    assert!(unknown_in(
        "applications:\n  - name: a\n    import_path: m:a\n    deployments:\n      - name: D\n        max_concurrent_queries: 10\n",
        "2.9.3",
    )
    .is_empty());
}

#[test]
fn a_misspelt_key_beside_the_right_one_changes_nothing() {
    let text = "applications:\n  - name: a\n    import_path: m:a\n    route_prefix: /a\n    routePrefix: /a\n";
    assert!(unknown_in(text, "2.60.0").is_empty());
    // Where Serve refuses it, it still matters.
    assert_eq!(unknown_in(text, "2.5.1").len(), 1);
}

#[test]
fn a_dropped_key_that_held_the_default_changed_nothing() {
    let text = "applications:\n  - name: a\n    import_path: m:a\n    routePrefix: /\n    deployments:\n      - name: D\n        numReplicas: 1.0\n";
    let found = unknown_in(text, "2.60.0");
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(|u| u.harmless), "{found:?}");
    let mut events = file_events(text);
    events.push(says("ray, version 2.60.0"));
    let got = check(&events, 0);
    assert_eq!(got.rules[0].severity, Severity::Warning);
    assert!(
        got.findings[0]
            .summary
            .contains("`routePrefix` → `route_prefix` (in applications[0]): Serve used the default `/`, the value written, so nothing changed"),
        "{}",
        got.findings[0].summary
    );
    // One key that mattered makes it an error.
    let text = text.replace("numReplicas: 1.0", "numReplicas: 3");
    let mut events = file_events(&text);
    events.push(says("ray, version 2.60.0"));
    assert_eq!(check(&events, 0).rules[0].severity, Severity::Error);
}

#[test]
fn a_required_field_written_otherwise_is_missing() {
    let found = unknown_in(
        "applications:\n  - name: a\n    importPath: m:a\n",
        "2.60.0",
    );
    assert_eq!(found.len(), 1);
    let m = found[0].meant.as_ref().unwrap();
    assert!(m.required);
    assert_eq!(m.field, "import_path");
}

#[test]
fn the_finding_names_keys_fields_and_defaults() {
    let mut events = file_events(CAMEL);
    events.push(says("ray, version 2.60.0"));
    let got = check(&events, 40);
    assert_eq!(got.rules.len(), 1);
    let rule = &got.rules[0];
    assert_eq!(rule.id, "serve_config_schema");
    assert_eq!(rule.code.as_str(), "SRV013");
    assert_eq!(rule.severity, Severity::Error);
    let f = &got.findings[0];
    assert_eq!(f.rule, 40);
    assert_eq!(f.confidence, 0.8);
    assert_eq!(
        f.summary,
        "A Serve config file holds 3 keys that Ray 2.60.0's Serve schema does not know; Serve drops \
         such keys without a word and deploys the rest: `routePrefix` → `route_prefix` (in \
         applications[0]): Serve used the default `/`; `numReplicas` → `num_replicas` (in \
         applications[0].deployments[0]): Serve used the value the application's code sets, \
         else the default `1`; `rayActorOptions` → `ray_actor_options` (in \
         applications[0].deployments[0]; inside it `numCpus` → `num_cpus`): Serve used the \
         value the application's code sets, else the defaults (num_cpus `1`)"
    );
    // The three lines, then the version line.
    let cited: Vec<(u32, usize)> = f
        .evidence
        .iter()
        .map(|e| (events[e.event].line, e.signal))
        .collect();
    assert_eq!(cited, [(3, 0), (7, 0), (8, 0), (1, 1)]);
    // The signal's regex finds each key's line, for the evidence to show it.
    let re = rule.signals[0].text[0].regex().unwrap();
    for line in [
        "    routePrefix: /echo",
        "        numReplicas: 2",
        "- \"rayActorOptions\": {}",
    ] {
        assert!(re.is_match(line), "{line}");
    }
    assert!(!re.is_match("    route_prefix: /echo"));
}

#[test]
fn without_a_version_the_newest_schema_is_assumed() {
    let got = check(&file_events(CAMEL), 0);
    let f = &got.findings[0];
    assert_eq!(f.confidence, 0.6);
    assert!(
        f.summary
            .contains("that Ray 2.60 (the newest known: the bundle states no Ray version)'s"),
        "{}",
        f.summary
    );
}

#[test]
fn a_service_s_config_is_checked_against_its_ray_version() {
    let got = check(&service(CAMEL, "2.5.1"), 0);
    let f = &got.findings[0];
    assert_eq!(got.rules[0].severity, Severity::Critical);
    assert_eq!(got.rules[0].explains, ["initializing_timeout"]);
    assert!(
        f.summary.starts_with(
            "The serveConfigV2 of RayService/shop/fruit-stand holds 3 keys that Ray 2.5.1's Serve schema does not know; Serve refuses such a config"
        ),
        "{}",
        f.summary
    );
    // Both events: the config (three keys, one fact) and the version.
    assert_eq!(f.evidence.len(), 2);
}

#[test]
fn versions_that_disagree_are_all_given_the_benefit_of_the_doubt() {
    // 2.9 knows `max_concurrent_queries`, 2.60 does not: with both stated, it is known.
    let text = "applications:\n  - name: a\n    import_path: m:a\n    deployments:\n      - name: D\n        max_concurrent_queries: 10\n";
    let mut events = file_events(text);
    events.push(says("ray, version 2.60.0"));
    assert_eq!(check(&events, 0).findings.len(), 1);
    events.push(says("Ray version: 2.9.3"));
    assert!(check(&events, 0).findings.is_empty());
}

#[test]
fn ray_before_2_4_is_not_checked() {
    let mut events = file_events(CAMEL);
    events.push(says("ray, version 2.3.1"));
    assert!(check(&events, 0).findings.is_empty());
}

#[test]
fn quiet_on_what_is_no_multi_application_config() {
    for text in [
        // `serve status`.
        "proxies:\n  abc: HEALTHY\napplications:\n  echo:\n    status: RUNNING\ntarget_capacity: null\n",
        // A single-application config.
        "import_path: m:app\nroutePrefix: /\n",
        // A Kubernetes object with an applications list.
        "apiVersion: v1\nkind: ConfigMap\napplications:\n  - numReplicas: 2\n",
        // Not YAML at all.
        "applications: [\n  - {{{\n",
        "",
    ] {
        assert!(check(&file_events(text), 0).findings.is_empty(), "{text}");
        assert!(check(&service(text, "2.60.0"), 0).findings.is_empty(), "{text}");
    }
}

#[test]
fn a_listed_rule_documents_the_check() {
    let r = listed_rule();
    assert_eq!(r.code.as_str(), CODE);
    assert!(crate::rules::catalogue::is_known(&r.id));
    for heading in [
        "## What it detects",
        "## Why it matters",
        "## Evidence shown",
        "## Remediation",
        "## References",
    ] {
        assert!(r.doc.contains(heading), "{heading}");
    }
    // No pattern file takes the code.
    assert!(crate::rules::library::builtin()
        .unwrap()
        .iter()
        .all(|r| r.code.as_str() != CODE));
}
