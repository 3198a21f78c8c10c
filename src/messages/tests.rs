//! The catalogue on small data: loading, matching, ranking, searching.

use super::*;

const EXTRACTED: &str = r#"{"id":"ray-0000000001","project":"ray","lang":"python","component":"serve.controller","level":"error","template":"Failed to update the deployments {}.","site":"python/ray/serve/_private/application_state.py:10","versions":["2.9.3","2.40.0"]}
{"id":"ray-0000000002","project":"ray","lang":"python","component":"serve.controller","level":"error","template":"Failed to update {}","site":"python/ray/serve/_private/application_state.py:20","versions":["2.9.3"]}
{"id":"ray-0000000003","project":"ray","lang":"cpp","component":"raylet","level":"warning","template":"Some workers of the worker process({}) have not registered within the timeout. {}","site":"src/ray/raylet/worker_pool.cc:1","versions":["2.40.0"]}
"#;

const CLASSIFIED: &str = r#"
[[message]]
id = "ray-0000000001"
class = "cause"
cause = "serve_script_error"
meaning = "The controller could not bring the deployments up."
sample = "Failed to update the deployments ['app'] ."
sample_from = "formatted from source"

[[message]]
id = "ray-0000000003"
class = "benign"
why = "start-up under load"
meaning = "Workers were slow to register."
sample = "x"
sample_from = "formatted from source"
"#;

fn catalogue() -> Catalogue {
    Catalogue::from_files(&[("t.jsonl", EXTRACTED)], &[("t.toml", CLASSIFIED)])
}

#[test]
fn the_most_specific_template_is_the_best_match() {
    let c = catalogue();
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    let line = "ERROR 2024-05-01 10:00:00,000 controller 1 application_state.py:10 - Failed to update the deployments ['app'].";
    let found = c.matches(line);
    let ids: Vec<&str> = found.iter().map(|m| m.message.id.as_ref()).collect();
    assert_eq!(ids, ["ray-0000000001", "ray-0000000002"]);
    let best = c.best(line, None).map(|m| m.message);
    assert_eq!(
        best.and_then(|m| m.class.as_ref()).map(|c| &c.class),
        Some(&Class::Cause("serve_script_error".into()))
    );
}

#[test]
fn pieces_must_come_in_order_and_short_templates_match_nothing() {
    let c = catalogue();
    assert!(c.best("the deployments. Failed to", None).is_none());
    // "Failed to update {}" has 16 literal characters: usable.
    assert!(c.best("Failed to update x", None).is_some());
    assert!(!matcher::usable(&matcher::pieces("Error: {}")));
}

#[test]
fn bad_data_is_named_and_skipped() {
    let bad = Catalogue::from_files(
        &[("a.jsonl", "{\"id\": 1}\n")],
        &[("b.toml", "[[message]]\nid = \"ray-9\"\nclass = \"cause\"\nmeaning = \"m\"\nsample = \"s\"\nsample_from = \"f\"\n")],
    );
    assert!(bad.messages().is_empty());
    assert_eq!(bad.problems().len(), 2, "{:?}", bad.problems());
    assert!(bad.problems()[0].starts_with("a.jsonl:1:"));
    assert!(bad.problems()[1].contains("without a `cause`"));
}

#[test]
fn search_looks_in_text_id_component_and_meaning() {
    let c = catalogue();
    assert_eq!(c.search("REGISTERED").len(), 1);
    assert_eq!(c.search("serve.controller").len(), 2);
    assert_eq!(c.search("slow to register").len(), 1);
    assert!(c.get("ray-0000000002").is_some());
}

#[test]
fn pieces_match_on_word_boundaries_and_lines_are_normalised() {
    let c = Catalogue::from_files(
        &[(
            "t.jsonl",
            r#"{"id":"ray-0000000009","project":"ray","lang":"python","component":"ray.other","level":"exception","template":"NotFoundError: {} is \"gone\"","site":"a.py:1"}"#,
        )],
        &[],
    );
    assert!(c.best("ModuleNotFoundError: x is \"gone\"", None).is_none());
    // A pasted JSON line escapes the quotes; a wrapped one doubles the spaces.
    assert!(c
        .best(r#"{"error":"NotFoundError: x is \"gone\""}"#, None)
        .is_some());
    assert!(c.best("NotFoundError:   x is  \"gone\"", None).is_some());
    assert!(c
        .best("NotFoundError: x is \"gone\"", Some(&["kuberay"]))
        .is_none());
}

#[test]
fn a_long_template_matches_a_line_cut_short_and_ranks_above_a_short_one() {
    let c = Catalogue::from_files(
        &[(
            "t.jsonl",
            concat!(
                r#"{"id":"kuberay-0000000001","project":"kuberay","lang":"go","component":"kuberay.operator","level":"error","template":"If users specify ServiceAccountName for the head Pod, they need to create a ServiceAccount themselves. However, ServiceAccount {} is not found. Please create one. See the PR description of https://github.com/ray-project/kuberay/pull/1128 for more details.","site":"a.go:1","versions":["v1.0.0"]}"#,
                "\n",
                r#"{"id":"kuberay-0000000002","project":"kuberay","lang":"go","component":"kuberay.apiserver","level":"returned","template":"Service {} not found","site":"b.go:1","versions":["v1.0.0"]}"#,
                "\n"
            ),
        )],
        &[],
    );
    let cut = "If users specify ServiceAccountName for the head Pod, they need to create a ServiceAccount themselves. However, ServiceAccount sa is not found. Please create one.";
    let found = c.matches(cut);
    let ids: Vec<&str> = found.iter().map(|m| m.message.id.as_ref()).collect();
    assert_eq!(ids, ["kuberay-0000000001", "kuberay-0000000002"]);
    // Half the text is not enough when what matched is short.
    assert!(c
        .best("If users specify ServiceAccountName", None)
        .is_none());
}

#[test]
fn a_line_cut_inside_a_piece_counts_what_it_holds_of_it() {
    // Ray's message is one `{}` and one long piece: a line cut short in the middle of that
    // piece (a ticket's paste, a truncated event) holds none of it whole.
    let c = Catalogue::from_files(
        &[(
            "t.jsonl",
            concat!(
                r#"{"id":"ray-0000000009","project":"ray","lang":"cpp","component":"ray.other","level":"error","template":"Failed to connect to GCS within {} seconds. GCS may have been killed. It's either GCS is terminated by `ray stop` or is killed unexpectedly. If it is killed unexpectedly, see the log file gcs_server.out. The program will terminate.","site":"a.h:1","versions":["2.40.0"]}"#,
                "\n"
            ),
        )],
        &[],
    );
    let cut = "[2024-06-12 10:32:41,512 E 31 61] (raylet) gcs_rpc_client.h:554: Failed to connect to GCS within 60 seconds. GCS may have been killed. It's either GCS is terminated by `ray stop` or is killed unexpectedly.";
    let best = c.best(cut, None).map(|m| m.message.id.to_string());
    assert_eq!(best.as_deref(), Some("ray-0000000009"));
    // Cut too early, less than half the text is there: no match.
    assert!(c
        .best(
            "Failed to connect to GCS within 60 seconds. GCS may have",
            None
        )
        .is_none());
    // A line that goes on with other words after a piece's start is no cut line.
    assert!(c
        .best("Failed to connect to GCS within 60 seconds. GCS may have been killed. It's either GCS is terminated by `ray stop` or is killed unexpectedly. If it is killed expectedly, fine", None)
        .is_none());
}
