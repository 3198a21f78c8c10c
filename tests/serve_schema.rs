//! The Serve schema check through the binary (`src/serve_schema`): a Serve config that Ray
//! accepted but whose keys it dropped is a `serve_config_schema` cause naming each key, the
//! field it was meant to be and the default Serve used; a correct config is none.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use serde_json::Value;

/// The config of the real runs (`scripts/realrun`, scenario `serve-config-camelcase`).
const CAMEL: &str = include_str!("fixtures/serve_schema/serve-config-camelcase.yaml");

const SNAKE: &str = "proxy_location: EveryNode
http_options:
  host: 0.0.0.0
  port: 8000
applications:
  - name: echo
    route_prefix: /echo
    import_path: model_app:echo
    deployments:
      - name: Echo
        num_replicas: 2
        user_config: {thresholdValue: 3}
        ray_actor_options:
          num_cpus: 0.5
";

/// A bundle as `serve deploy` leaves it: the config file, and what `ray --version` printed.
fn deploy_bundle(dir: &Path, config: &str, version: &str) {
    std::fs::create_dir_all(dir.join("cli")).unwrap();
    std::fs::write(dir.join("serve-config.yaml"), config).unwrap();
    std::fs::write(
        dir.join("cli/01-ray.txt"),
        format!("$ ray --version\nray, version {version}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("cli/04-serve-deploy.txt"),
        "$ serve deploy serve-config.yaml\n2026-12-06 08:23:36,929\tSUCC scripts.py:262 -- \nSent deploy request successfully.\n",
    )
    .unwrap();
}

/// A RayService whose serveConfigV2 is `config`, on Ray `version`.
fn service_bundle(dir: &Path, config: &str, version: &str) {
    let indented: String = config.lines().map(|l| format!("    {l}\n")).collect();
    std::fs::write(
        dir.join("rayservice.yaml"),
        format!(
            "apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: echo\n  namespace: serve\nspec:\n  serveConfigV2: |\n{indented}  rayClusterConfig:\n    rayVersion: '{version}'\n    headGroupSpec:\n      template:\n        spec:\n          containers:\n            - name: ray-head\n              image: rayproject/ray:{version}\nstatus:\n  serviceStatus: Running\n"
        ),
    )
    .unwrap();
}

fn analyze(dir: &Path) -> Value {
    let out = common::raysift(&["analyze", "--format", "json", dir.to_str().unwrap()]);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn cause<'a>(report: &'a Value, id: &str) -> Option<&'a Value> {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
}

#[test]
fn fires_on_a_camel_case_serve_deploy_config() {
    let dir = common::scratch("serve_schema", "fires");
    deploy_bundle(&dir, CAMEL, "2.60.0");
    let report = analyze(&dir);
    let c = cause(&report, "serve_config_schema").expect("a serve_config_schema cause");
    assert_eq!(c["code"], "SRV013");
    assert_eq!(c["severity"], "error");
    let summary = c["summary"].as_str().unwrap();
    for told in [
        "Ray 2.60.0's Serve schema",
        "drops such keys without a word",
        "`numReplicas` → `num_replicas` (in applications[0].deployments[0]): Serve used the value the application's code sets, else the default `1`",
        "`routePrefix` → `route_prefix` (in applications[0]): Serve used the default `/`",
        "`rayActorOptions` → `ray_actor_options`",
        "`numCpus` → `num_cpus`",
    ] {
        assert!(summary.contains(told), "{told:?} not in {summary}");
    }
    let cited: Vec<String> = c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}:{} {}",
                e["file"].as_str().unwrap(),
                e["line"],
                e["text"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        cited,
        [
            "cli/01-ray.txt:2 ray, version 2.60.0",
            "serve-config.yaml:3 routePrefix: /echo",
            "serve-config.yaml:7 numReplicas: 2",
            "serve-config.yaml:8 rayActorOptions:",
        ]
    );
    // It is what the report is about: the first cause.
    assert_eq!(report["causes"][0]["id"], "serve_config_schema");
}

#[test]
fn quiet_on_a_snake_case_serve_deploy_config() {
    let dir = common::scratch("serve_schema", "quiet");
    deploy_bundle(&dir, SNAKE, "2.60.0");
    let report = analyze(&dir);
    assert!(cause(&report, "serve_config_schema").is_none(), "{report}");
}

#[test]
fn a_running_service_whose_config_lost_keys_is_a_cause() {
    // KubeRay reports the service running: nothing failed, Serve dropped the keys.
    let dir = common::scratch("serve_schema", "service");
    service_bundle(&dir, CAMEL, "2.41.0");
    let report = analyze(&dir);
    let c = cause(&report, "serve_config_schema").expect("a serve_config_schema cause");
    let summary = c["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("The serveConfigV2 of RayService/serve/echo holds 3 keys that Ray 2.41.0's Serve schema does not know"),
        "{summary}"
    );
    assert_eq!(c["objects"][0]["name"], "echo", "{c}");

    let dir = common::scratch("serve_schema", "service-quiet");
    service_bundle(&dir, SNAKE, "2.41.0");
    assert!(cause(&analyze(&dir), "serve_config_schema").is_none());
}

#[test]
fn serve_that_refuses_unknown_keys_makes_it_critical() {
    let dir = common::scratch("serve_schema", "refused");
    service_bundle(&dir, CAMEL, "2.5.1");
    let report = analyze(&dir);
    let c = cause(&report, "serve_config_schema").expect("a serve_config_schema cause");
    assert_eq!(c["severity"], "critical");
    assert!(
        c["summary"]
            .as_str()
            .unwrap()
            .contains("Serve refuses such a config"),
        "{c}"
    );
}

/// What `serve deploy` of [`CAMEL`] prints with Ray 2.5.1 (the message is that version's
/// pydantic's, as its `ServeDeploySchema` gives it).
const REFUSED: &str = "$ serve deploy serve-config.yaml
Traceback (most recent call last):
  File \"/home/ray/anaconda3/bin/serve\", line 8, in <module>
    sys.exit(cli())
  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/scripts.py\", line 281, in deploy
    ServeDeploySchema.parse_obj(config)
pydantic.error_wrappers.ValidationError: 3 validation errors for ServeDeploySchema
applications -> 0 -> deployments -> 0 -> numReplicas
  extra fields not permitted (type=value_error.extra)
applications -> 0 -> deployments -> 0 -> rayActorOptions
  extra fields not permitted (type=value_error.extra)
applications -> 0 -> routePrefix
  extra fields not permitted (type=value_error.extra)
";

#[test]
fn a_refusal_the_bundle_shows_is_one_cause_with_the_keys_as_evidence() {
    let dir = common::scratch("serve_schema", "agrees");
    deploy_bundle(&dir, CAMEL, "2.5.1");
    std::fs::write(dir.join("cli/04-serve-deploy.txt"), REFUSED).unwrap();
    let report = analyze(&dir);
    let causes = report["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{report}");
    let c = &causes[0];
    assert_eq!(c["id"], "serve_config_schema");
    assert_eq!(c["severity"], "critical");
    // The refusal the bundle shows tells the cause; the check agrees and adds the keys.
    assert_eq!(c["code"], "SRV010");
    assert_eq!(c["codes"], serde_json::json!(["SRV010", "SRV013"]));
    let files: Vec<String> = c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{}:{}", e["file"].as_str().unwrap(), e["line"]))
        .collect();
    assert_eq!(
        files,
        [
            "cli/01-ray.txt:2",
            "cli/04-serve-deploy.txt:7",
            "serve-config.yaml:3",
            "serve-config.yaml:7",
            "serve-config.yaml:8",
        ]
    );
}

#[test]
fn the_rule_is_listed_and_documented() {
    let list = String::from_utf8(common::raysift(&["rules"]).stdout).unwrap();
    assert!(
        list.lines()
            .any(|l| l.starts_with("SRV013") && l.contains("serve_config_schema")),
        "{list}"
    );
    let doc = String::from_utf8(common::raysift(&["rules", "SRV013"]).stdout).unwrap();
    for h in raysift::rules::DOC_HEADINGS {
        assert!(doc.contains(h), "{h} missing from `raysift rules SRV013`");
    }
}
