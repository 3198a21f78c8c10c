//! Redaction end to end: secrets of every kind planted in events of every source kind, in
//! messages, components and fields, must not survive in any output format (text, JSON,
//! markdown, HTML, and the `timeline` text and JSON), and a redacted report must keep every
//! cause and evidence line. Then the binary on a real corpus bundle and on a planted bundle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use raysift::event::{Event, Level, SourceKind, Timestamp, TsQuality};
use raysift::inventory::Inventory;
use raysift::load::FileInfo;
use raysift::model::{BundleInfo, Cause, Evidence, Report, Stats, Symptom, SCHEMA};
use raysift::redact::{RedactConfig, Redactor};
use raysift::report::style::Style;
use raysift::report::TextOptions;
use raysift::report_data::{timeline_data, TimelineDataConfig};
use raysift::rules::Severity;
use raysift::timeline::Timeline;

/// Each planted line and the secret substrings that must disappear from it.
const PLANTED: &[(&str, &[&str])] = &[
    ("GET /api Authorization: Bearer s3cr3tBearerTok3nValue", &["s3cr3tBearerTok3nValue"]),
    ("calling with api_key=plantedApiKey123 and retries=3", &["plantedApiKey123"]),
    ("downloading with hf_PlantedHuggingFaceToken12345 now", &["hf_PlantedHuggingFaceToken12345"]),
    ("git token ghp_PlantedGithubToken1234567890abcd ok", &["ghp_PlantedGithubToken1234567890abcd"]),
    ("s3 client AKIAPLANTEDKEY123456 region us-west-2", &["AKIAPLANTEDKEY123456"]),
    ("aws_secret_access_key=wJalrPlantedSecretKeyEXAMPLE/K7MDENG", &["wJalrPlantedSecretKeyEXAMPLE"]),
    ("pull https://admin:UrlPassw0rd@registry.corp.example/v2/ray", &["UrlPassw0rd"]),
    ("env DB_PASSWORD=EnvPassw0rd RAY_ADDRESS=auto", &["EnvPassw0rd"]),
    ("password: YamlPassw0rd", &["YamlPassw0rd"]),
    ("  token: YamlTok3nValue", &["YamlTok3nValue"]),
    ("client_secret: \"Yaml Secr3t Phrase\"", &["Yaml Secr3t Phrase", "Secr3t"]),
    (r#"{"password": "JsonPassw0rd", "user": "ray"}"#, &["JsonPassw0rd"]),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEPlantedPrivateKeyBodyLine\n-----END RSA PRIVATE KEY-----", &["MIIEPlantedPrivateKeyBodyLine"]),
    ("Cookie: session=CookieSess10nValue; theme=dark", &["CookieSess10nValue"]),
    ("paged alice.planted@corp-mail.example about it", &["alice.planted@corp-mail.example"]),
    ("redis://:RedisPassw0rd@10.1.2.3:6379/0", &["RedisPassw0rd"]),
];

/// Host names and addresses that must vanish with `--redact-hosts`.
const HOSTS: &[&str] = &[
    "10.1.2.3",
    "ray-head.planted-ns.svc.cluster.local",
    "fd00::1234:5678",
    "registry.corp.example",
];

fn host_line() -> &'static str {
    "dial tcp 10.1.2.3:6379 via ray-head.planted-ns.svc.cluster.local and fd00::1234:5678"
}

struct Planted {
    tl: Timeline,
    report: Report,
}

fn planted() -> Planted {
    let mut files = Vec::new();
    let mut events = Vec::new();
    let t0 = 1_692_720_000_000_000i64;
    let mut n = 0i64;
    for (id, kind) in SourceKind::ALL.iter().enumerate() {
        // File paths carry a host and an IP too: both can be part of a log's name.
        files.push(FileInfo {
            bytes: 100,
            ..FileInfo::new(
                id as u32,
                format!(
                    "{}/node-10.1.2.3/ray-head.planted-ns.svc.cluster.local.log",
                    kind.as_str()
                ),
                *kind,
            )
        });
        let mut line = 1u32;
        let mut push = |message: &str, fields: Vec<(String, String)>, timed: bool| {
            let mut e = Event::new(line, message);
            line += message.lines().count() as u32;
            e.file = id as u32;
            e.kind = *kind;
            e.level = Level::Error;
            e.component = "worker admin@corp-mail.example".into();
            e.fields = fields
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect();
            if timed {
                n += 1;
                e.ts = Some(Timestamp {
                    micros: t0 + n * 1_000_000,
                    quality: TsQuality::Exact,
                });
            }
            events.push(e);
        };
        for (text, _) in PLANTED {
            push(
                text,
                vec![
                    ("token".to_string(), "FieldTok3nValue".to_string()),
                    (
                        "url".to_string(),
                        "https://u:FieldPassw0rd@x.example/".to_string(),
                    ),
                ],
                true,
            );
        }
        push(host_line(), Vec::new(), true);
        // A Kubernetes env entry split over two records, and a key split over lines.
        push(
            "- name: REDIS_PASSWORD",
            vec![("value".to_string(), "REDIS_PASSWORD".to_string())],
            false,
        );
        push(
            "value: SplitPassw0rd",
            vec![("value".to_string(), "SplitPassw0rd".to_string())],
            false,
        );
        push("-----BEGIN OPENSSH PRIVATE KEY-----", Vec::new(), false);
        push(
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn",
            Vec::new(),
            false,
        );
        push("SplitKeyBodyTail", Vec::new(), false);
        push("-----END OPENSSH PRIVATE KEY-----", Vec::new(), false);
    }
    let tl = Timeline {
        bundle_path: "/tmp/bundle-from-ray-head.planted-ns.svc.cluster.local.tgz".to_string(),
        container: "tar.gz".to_string(),
        files,
        events,
        diagnostics: vec![raysift::diag::Diagnostic {
            file: "operator/node-10.1.2.3/ray-head.planted-ns.svc.cluster.local.log".to_string(),
            line: Some(3),
            problem: "unparsable line \"password: YamlPassw0rd\"".to_string(),
        }],
        zones: Vec::new(),
        capture: None,
        collected: None,
        mirrors: Default::default(),
    };
    // Every single-record planted line is evidence of a cause (the split ones are context).
    let evidence: Vec<Evidence> = tl
        .events
        .iter()
        .filter(|e| e.ts.is_some())
        .map(|e| Evidence {
            file: tl.file(e.file).unwrap().path.clone(),
            line: e.line,
            ts: e.ts.map(|t| t.rfc3339()),
            ts_quality: e.ts.map_or("none", |t| t.quality.as_str()),
            source: e.kind.as_str(),
            text: e.message.clone(),
            meaning: "a planted line".to_string(),
            // Where a copy would be: a path, redacted as every path is.
            also_in: Some(format!("{}:1", tl.file(e.file).unwrap().path)),
        })
        .collect();
    let n_evidence = evidence.len();
    let cause = Cause {
        rank: 1,
        id: "dashboard_agent_died_after_deploy".to_string(),
        code: "DSH004".to_string(),
        codes: vec!["DSH004".to_string()],
        severity: Severity::Critical,
        confidence: 0.9,
        title: "Planted".to_string(),
        summary: "GETs to ray-head.planted-ns.svc.cluster.local (10.1.2.3) failed with password: YamlPassw0rd".to_string(),
        objects: vec![raysift::objects::ObjectRef {
            kind: "Node".to_string(),
            namespace: None,
            name: "ray-head.planted-ns.svc.cluster.local".to_string(),
        }],
        evidence: evidence.clone(),
        explains: vec!["x".to_string()],
        symptoms: vec![Symptom {
            id: "x".to_string(),
            code: "DSH002".to_string(),
            title: "Symptom".to_string(),
            summary: "token=SymptomTok3n".to_string(),
            evidence: evidence.get(..n_evidence.min(20)).unwrap().to_vec(),
        }],
        remediation: vec!["Fix it.".to_string()],
        references: vec!["https://docs.ray.io/".to_string()],
        known_issue: None,
    };
    let inventory = Inventory::of(&tl);
    let report = Report {
        schema: SCHEMA,
        raysift_version: "0.0.0-test",
        generated_at: "2025-01-01T00:00:00.000Z".to_string(),
        bundle: BundleInfo::of(&tl, &inventory, &[]),
        window: inventory.window.clone(),
        causes: vec![cause],
        diagnostics: tl.diagnostics.clone(),
        stats: Stats {
            events: inventory.records_parsed,
            records_held: tl.events.len() as u64,
            unparsed_lines: 0,
            elapsed_ms: 0,
            rules: 1,
        },
        inventory,
        timeline: None,
        unrecognised: Vec::new(),
    };
    Planted { tl, report }
}

fn all_secrets(hosts: bool) -> Vec<&'static str> {
    let mut all: Vec<&str> = PLANTED
        .iter()
        .flat_map(|(_, s)| s.iter().copied())
        .collect();
    all.extend([
        "FieldTok3nValue",
        "FieldPassw0rd",
        "admin@corp-mail.example",
        "SplitPassw0rd",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
        "SplitKeyBodyTail",
        "SymptomTok3n",
    ]);
    if hosts {
        all.extend(HOSTS);
    }
    all
}

/// Renders the report in every format and the timeline in both, all redacted.
fn outputs(hosts: bool) -> (Vec<(&'static str, String)>, Report) {
    let Planted { mut tl, mut report } = planted();
    report.timeline = Some(timeline_data(&tl, &report, &TimelineDataConfig::HTML));
    let mut r = Redactor::new(RedactConfig { hosts });
    report.redact(&mut r);
    let mut out = Vec::new();
    let render = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut buf = Vec::new();
        f(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    };
    let opts = TextOptions {
        style: Style::PLAIN,
        width: Some(80),
    };
    out.push((
        "text",
        render(&|w| raysift::report::text::write(w, &report, opts)),
    ));
    out.push(("json", serde_json::to_string_pretty(&report).unwrap()));
    out.push((
        "markdown",
        render(&|w| raysift::report::markdown::write(w, &report)),
    ));
    out.push((
        "html",
        render(&|w| raysift::report::html::write(w, &report)),
    ));

    let mut events = tl.events.clone();
    let mut r = Redactor::new(RedactConfig { hosts });
    raysift::load::FileInfo::redact_all(&mut tl.files, &mut r);
    r.events(&mut events);
    let refs: Vec<&Event> = events.iter().collect();
    out.push((
        "timeline text",
        render(&|w| raysift::report::timeline::write_text(w, &tl, &refs, Style::PLAIN, false)),
    ));
    out.push((
        "timeline json",
        render(&|w| raysift::report::timeline::write_json(w, &tl, &refs)),
    ));
    (out, report)
}

#[track_caller]
fn assert_clean(outputs: &[(&str, String)], secrets: &[&str]) {
    let mut leaks = Vec::new();
    for (format, text) in outputs {
        for s in secrets {
            if text.contains(s) {
                leaks.push(format!("{format}: {s}"));
            }
        }
    }
    assert!(leaks.is_empty(), "secrets survived:\n{}", leaks.join("\n"));
}

#[test]
fn no_planted_secret_survives_any_format() {
    let (outs, _) = outputs(false);
    assert_clean(&outs, &all_secrets(false));
    // Without --redact-hosts, hosts stay readable.
    assert!(outs.iter().all(|(_, t)| t.contains("10.1.2.3")));
}

#[test]
fn no_host_survives_with_redact_hosts() {
    let (outs, _) = outputs(true);
    assert_clean(&outs, &all_secrets(true));
    for (format, text) in &outs {
        // Numbering starts wherever the traversal first meets a host (the bundle path in a
        // report), so only the shape is checked here.
        assert!(text.contains("host-"), "{format} has no host pseudonym");
        assert!(text.contains("ip-1"), "{format} has no IP pseudonym");
    }
}

#[test]
fn the_planted_fixture_really_plants() {
    // Without the redactor every secret is in every report format: the test above is not
    // passing for want of input.
    let Planted { tl, mut report } = planted();
    report.timeline = Some(timeline_data(&tl, &report, &TimelineDataConfig::HTML));
    let json = serde_json::to_string(&report).unwrap();
    for s in all_secrets(true) {
        // Fields and components are not part of a report, only of the timeline.
        if s == "SymptomTok3n" || s.starts_with("admin@") || s.starts_with("Field") {
            continue;
        }
        assert!(json.contains(&s.replace('"', "\\\"")), "{s} not planted");
    }
}

#[test]
fn redacted_json_keeps_every_cause_and_evidence_line() {
    let Planted { report: plain, .. } = planted();
    let (outs, _) = outputs(true);
    let json = &outs.iter().find(|(f, _)| *f == "json").unwrap().1;
    let v: serde_json::Value = serde_json::from_str(json).expect("redacted JSON parses");
    assert_eq!(v["schema"], "raysift.report/v1");
    let causes = v["causes"].as_array().unwrap();
    assert_eq!(causes.len(), plain.causes.len());
    for (c, p) in causes.iter().zip(&plain.causes) {
        assert_eq!(c["id"], p.id.as_str());
        let ev = c["evidence"].as_array().unwrap();
        assert_eq!(ev.len(), p.evidence.len());
        for (e, pe) in ev.iter().zip(&p.evidence) {
            assert_eq!(e["line"], pe.line);
            assert_eq!(e["meaning"], pe.meaning.as_str());
        }
        assert_eq!(
            c["symptoms"][0]["evidence"].as_array().unwrap().len(),
            p.symptoms[0].evidence.len()
        );
    }
}

#[test]
fn pseudonyms_are_stable_within_a_report() {
    let (outs, report) = outputs(true);
    // The same file path reads the same in the evidence, the inventory and the table.
    let first = &report.causes[0].evidence[0].file;
    assert!(report.inventory.file_list.iter().any(|f| &f.path == first));
    let rows = &report.timeline.as_ref().unwrap().rows;
    assert!(rows.iter().any(|r| &r.file == first));
    // And the same run twice gives the same bytes.
    let (again, _) = outputs(true);
    assert_eq!(outs, again);
}

fn scratch(name: &str) -> common::Scratch {
    common::scratch("redact", name)
}

#[test]
fn binary_redacts_hosts_of_a_real_bundle_in_every_format() {
    let bundle = common::root().join("corpus/handmade-agent-died");
    let b = bundle.to_str().unwrap();
    let secrets = [
        "10.96.118.42",
        "10.244.1.7",
        "fraud-scorer-raycluster-w7k9t-head-svc.default.svc.cluster.local",
    ];
    for format in ["text", "json", "markdown", "html"] {
        let out = common::raysift(&["analyze", b, "--format", format, "--redact-hosts"]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        for s in secrets {
            assert!(!text.contains(s), "{format}: {s} survived");
        }
        assert!(text.contains("ip-1") && text.contains("host-1"), "{format}");
    }
    // Same causes and evidence counts as without redaction.
    let plain = common::raysift(&["analyze", b, "--format", "json"]);
    let red = common::raysift(&["analyze", b, "--format", "json", "--redact-hosts"]);
    let p: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    let r: serde_json::Value = serde_json::from_slice(&red.stdout).unwrap();
    let shape = |v: &serde_json::Value| -> Vec<(String, usize)> {
        v["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_string(),
                    c["evidence"].as_array().unwrap().len(),
                )
            })
            .collect()
    };
    assert_eq!(shape(&p), shape(&r));
    assert!(p.get("timeline").is_none() && r.get("timeline").is_none());
}

#[test]
fn binary_redacts_a_planted_bundle_in_timeline_output() {
    let dir = scratch("planted");
    let mut operator = String::new();
    let mut agent = String::new();
    for (i, (text, _)) in PLANTED.iter().enumerate() {
        let one_line = text.replace('\n', " ");
        operator.push_str(&format!(
            "2023-08-22T16:0{}:00.000Z\tINFO\tcontrollers.RayService\t{one_line}\n",
            i % 10
        ));
        agent.push_str(&format!(
            "2023-08-22 09:0{}:00,000\tINFO agent.py:1 -- {one_line}\n",
            i % 10
        ));
    }
    std::fs::write(dir.join("kuberay-operator.log"), operator).unwrap();
    std::fs::create_dir_all(dir.join("head/logs")).unwrap();
    std::fs::write(dir.join("head/logs/dashboard_agent.log"), agent).unwrap();
    std::fs::write(
        dir.join("pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: head\nspec:\n  containers:\n  - name: ray-head\n    env:\n    - name: DB_PASSWORD\n      value: SplitPassw0rd\n    - name: API_TOKEN\n      value: \"QuotedTok3n\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("secret.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  config.json: eyJhdXRocyI6eyJyZWdpc3RyeSI6e319fQ==\n  plain: aHVudGVyMg==\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let mut secrets = all_secrets(false);
    secrets.retain(|s| {
        !s.starts_with("Field")
            && *s != "SymptomTok3n"
            && !s.starts_with("admin@")
            && !s.starts_with("b3Bl")
            && *s != "SplitKeyBodyTail"
    });
    secrets.extend(["QuotedTok3n", "aHVudGVyMg==", "eyJhdXRocyI6"]);
    for format in ["text", "json"] {
        let plain = common::raysift(&["timeline", d, "--format", format]);
        let plain = String::from_utf8_lossy(&plain.stdout);
        assert!(plain.contains("SplitPassw0rd") && plain.contains("EnvPassw0rd"));
        let out = common::raysift(&["timeline", d, "--format", format, "--redact"]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_clean(&[("timeline", text.clone())], &secrets);
        // Redaction changes text, never the number of records.
        assert_eq!(plain.lines().count(), text.lines().count(), "{format}");
    }
}

#[test]
fn binary_keeps_ray_ids_as_ids_on_every_line_with_redact_hosts() {
    let dir = scratch("ray-ids");
    let node = "5f1c0a9d3b7e4f2a8c6d1e0b9a7f3c5d2e4b6a8c0d1e3f5a7b9c2d4e";
    let actor = "a1b2c3d4e5f60718293a4b5c01000000";
    let log = format!(
        "2023-08-22 09:01:00,000\tINFO gcs_server.py:1 -- node: {node} registered at 10.244.1.7\n\
         2023-08-22 09:02:00,000\tWARNING gcs_server.py:1 -- Raylet {node} is dead; node_id={node}\n\
         2023-08-22 09:03:00,000\tERROR gcs_server.py:1 -- actor {actor} died with node={node} host=worker-7.corp\n"
    );
    std::fs::write(dir.join("gcs_server.log"), &log).unwrap();
    let d = dir.to_str().unwrap();
    let out = common::raysift(&["timeline", d, "--redact-hosts"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // Three events, then the legend of the `?` their zone-less times carry.
    assert_eq!(
        text.lines().filter(|l| l.starts_with("20")).count(),
        3,
        "{text}"
    );
    // Every occurrence of an id is kept, on every line; the hosts beside them are not.
    assert_eq!(text.matches(node).count(), 4, "{text}");
    assert_eq!(text.matches(actor).count(), 1, "{text}");
    assert!(
        !text.contains("10.244.1.7") && !text.contains("worker-7.corp"),
        "{text}"
    );
    assert!(text.contains("ip-1") && text.contains("host-1"), "{text}");
    assert!(
        !text.contains("host-2"),
        "an id took a host pseudonym: {text}"
    );
}
