//! Tests of the whole parser: each fixture or snippet is parsed and every event rendered on
//! one line; every physical line must land in exactly one event (in compact JSON, in at
//! least one).

use super::fixtures::{
    EVENT_AND_POD_LIST_YAML, EVENT_LIST_JSON, RAYSERVICE_YAML, TROUBLESHOOT_PODS_JSON,
};
use super::parse;
use crate::event::{format_rfc3339, RawTime};
use crate::parse::lines::split_lines;
use crate::parse::ParseOutput;

/// One line per event: line, n_lines, time, level, kind, component, fields | message.
pub(crate) fn render(out: &ParseOutput) -> String {
    let mut s = String::new();
    for ev in &out.events {
        let time = match ev.raw_time {
            Some(RawTime::Utc(t)) => format_rfc3339(t),
            Some(RawTime::Age { secs }) => format!("age={secs}"),
            Some(other) => format!("{other:?}"),
            None => "-".to_string(),
        };
        let fields: Vec<String> = ev
            .fields
            .iter()
            .map(|(k, v)| format!("{k}={}", v.replace('\n', "⏎")))
            .collect();
        s.push_str(&format!(
            "{} {} {} {} {} {} [{}] | {}\n",
            ev.line,
            ev.n_lines,
            time,
            ev.level.as_str(),
            ev.kind,
            ev.component,
            fields.join(" "),
            ev.message.replace('\n', "⏎")
        ));
    }
    // Control bytes would make the expected strings unreadable.
    let mut s: String = s
        .chars()
        .map(|c| if c.is_control() && c != '\n' { '·' } else { c })
        .collect();
    if out.unparsed_lines > 0 {
        s.push_str(&format!("unparsed={}\n", out.unparsed_lines));
    }
    for d in &out.diagnostics {
        s.push_str(&format!("diag {d}\n"));
    }
    s
}

#[track_caller]
fn check(input: &str, expect: &str) {
    let mut out = ParseOutput::default();
    parse(input.as_bytes(), &mut out);
    let n_physical = split_lines(input.as_bytes()).count() as u32;
    if input.trim_start().starts_with(['{', '[']) {
        // Compact JSON puts several facts on one line: check coverage instead.
        let covered: std::collections::BTreeSet<u32> = out
            .events
            .iter()
            .flat_map(|e| e.line..e.line + e.n_lines)
            .collect();
        assert_eq!(
            covered,
            (1..=n_physical).collect(),
            "every line in some event"
        );
    } else {
        let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
        assert_eq!(n_counted, n_physical, "every line in exactly one event");
    }
    let got = render(&out);
    if got.trim_end() != expect.trim() {
        println!("{got}");
    }
    assert_eq!(got.trim_end(), expect.trim());
}

#[test]
fn rayservice_yaml() {
    check(
        RAYSERVICE_YAML,
        r#"
1 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayService/default/rayservice-sample] | apiVersion: ray.io/v1
2 1 - info unknown  [path=kind value=RayService object=RayService/default/rayservice-sample] | kind: RayService
3 1 - info unknown  [path=metadata object=RayService/default/rayservice-sample] | metadata:
4 1 - info unknown  [path=metadata.annotations object=RayService/default/rayservice-sample] | annotations:
5 1 - info unknown  [path=metadata.annotations.ray.io/initializing-timeout value=10m object=RayService/default/rayservice-sample] | ray.io/initializing-timeout: 10m
6 1 - info unknown  [path=metadata.creationtimestamp value=2024-06-07T18:15:56Z object=RayService/default/rayservice-sample] | creationTimestamp: "2024-06-07T18:15:56Z"
7 1 - info unknown  [path=metadata.generation value=1 object=RayService/default/rayservice-sample] | generation: 1
8 6 - info unknown  [path=metadata.managedfields object=RayService/default/rayservice-sample] | managedFields:
14 1 - info unknown  [path=metadata.name value=rayservice-sample object=RayService/default/rayservice-sample] | name: rayservice-sample
15 1 - info unknown  [path=metadata.namespace value=default object=RayService/default/rayservice-sample] | namespace: default
16 1 - info unknown  [path=spec object=RayService/default/rayservice-sample] | spec:
17 6 - info unknown  [path=spec.serveconfigv2 value=applications:⏎  - name: fruit_app⏎    import_path: fruit.deployment_graph⏎⏎  - name: math_app object=RayService/default/rayservice-sample] | serveConfigV2: |⏎    applications:⏎      - name: fruit_app⏎        import_path: fruit.deployment_graph⏎⏎      - name: math_app
23 1 - info unknown  [path=spec.rayclusterconfig object=RayService/default/rayservice-sample] | rayClusterConfig:
24 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec object=RayService/default/rayservice-sample] | headGroupSpec:
25 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams object=RayService/default/rayservice-sample] | rayStartParams:
26 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams.dashboard-host value=0.0.0.0 object=RayService/default/rayservice-sample] | dashboard-host: 0.0.0.0   # comment
27 1 - info unknown  [path=spec.rayclusterconfig.workergroupspecs object=RayService/default/rayservice-sample] | workerGroupSpecs:
28 1 - info unknown  [path=spec.rayclusterconfig.workergroupspecs[0].groupname value=small-group object=RayService/default/rayservice-sample] | - groupName: small-group
29 1 - info unknown  [path=spec.rayclusterconfig.workergroupspecs[0].replicas value=1 object=RayService/default/rayservice-sample] | replicas: 1
30 1 - info unknown  [path=status object=RayService/default/rayservice-sample] | status:
31 1 - info unknown  [path=status.activeservicestatus object=RayService/default/rayservice-sample] | activeServiceStatus:
32 1 - info unknown  [path=status.activeservicestatus.applicationstatuses object=RayService/default/rayservice-sample] | applicationStatuses:
33 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app object=RayService/default/rayservice-sample] | fruit_app:
34 5 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.message value=Deploying app 'fruit_app' failed with exception:⏎Traceback (most recent call last):⏎ModuleNotFoundError: No module named 'fruit' object=RayService/default/rayservice-sample] | message: 'Deploying app ''fruit_app'' failed with exception:⏎⏎          Traceback (most recent call last):⏎⏎          ModuleNotFoundError: No module named ''fruit'''
39 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses object=RayService/default/rayservice-sample] | serveDeploymentStatuses:
40 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruitmarket object=RayService/default/rayservice-sample] | FruitMarket:
41 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruitmarket.status value=HEALTHY object=RayService/default/rayservice-sample] | status: HEALTHY
42 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=DEPLOY_FAILED object=RayService/default/rayservice-sample] | status: DEPLOY_FAILED
43 1 - info unknown  [path=status.conditions object=RayService/default/rayservice-sample] | conditions:
44 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[0].lasttransitiontime value=2024-06-07T18:16:00Z object=RayService/default/rayservice-sample] | - lastTransitionTime: "2024-06-07T18:16:00Z"
45 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[0].message value=Serve applications⏎  are failing object=RayService/default/rayservice-sample] | message: "Serve applications\n  are failing"
46 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[0].reason value=InitializingTimeout object=RayService/default/rayservice-sample] | reason: InitializingTimeout
47 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[0].status value=False object=RayService/default/rayservice-sample] | status: "False"
48 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[0].type value=Ready object=RayService/default/rayservice-sample] | type: Ready
49 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[1].lasttransitiontime value=2024-06-07T18:16:00Z object=RayService/default/rayservice-sample] | - lastTransitionTime: "2024-06-07T18:16:00Z"
50 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[1].message value= object=RayService/default/rayservice-sample] | message: ""
51 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[1].reason value=NoPendingCluster object=RayService/default/rayservice-sample] | reason: NoPendingCluster
52 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[1].status value=False object=RayService/default/rayservice-sample] | status: "False"
53 1 2024-06-07T18:16:00.000Z info unknown  [path=status.conditions[1].type value=UpgradeInProgress object=RayService/default/rayservice-sample] | type: UpgradeInProgress
54 1 - info unknown  [path=status.servicestatus value= object=RayService/default/rayservice-sample] | serviceStatus: ""
"#,
    );
}

#[test]
fn list_with_event_and_pod() {
    check(
        EVENT_AND_POD_LIST_YAML,
        r#"
1 1 - info unknown  [path=apiversion value=v1] | apiVersion: v1
2 1 - info unknown  [path=items] | items:
3 18 2024-06-07T18:20:00.000Z warning kube_events kubelet [type=Warning reason=BackOff object=Pod/default/rs-head object_kind=Pod object_name=rs-head namespace=default count=5 field_path=spec.containers{ray-head} first_seen_utc=2024-06-07T18:00:00.000Z event_name=rs-head.17d8f2a1] | Back-off restarting failed container
21 1 - info unknown  [path=apiversion value=v1 object=Pod/default/rs-head] | - apiVersion: v1
22 1 - info unknown  [path=kind value=Pod object=Pod/default/rs-head] | kind: Pod
23 1 - info unknown  [path=metadata object=Pod/default/rs-head] | metadata:
24 1 - info unknown  [path=metadata.name value=rs-head object=Pod/default/rs-head] | name: rs-head
25 1 - info unknown  [path=metadata.namespace value=default object=Pod/default/rs-head] | namespace: default
26 1 - info unknown  [path=status object=Pod/default/rs-head] | status:
27 1 - info unknown  [path=status.phase value=Running object=Pod/default/rs-head] | phase: Running
28 1 - info unknown  [path=kind value=List] | kind: List
29 1 - info unknown  [path=metadata] | metadata:
30 1 - info unknown  [path=metadata.resourceversion value=] | resourceVersion: ""
"#,
    );
}

#[test]
fn troubleshoot_pod_list_json() {
    check(
        TROUBLESHOOT_PODS_JSON,
        r#"
1 1 - info unknown  [] | {
2 1 - info unknown  [path=kind value=PodList] | "kind": "PodList"
3 2 - info unknown  [path=apiversion value=v1] | "apiVersion": "v1"
5 5 - info unknown  [path=metadata.resourceversion value=91342] | "resourceVersion": "91342"
10 1 - info unknown  [path=metadata.name value=rs-worker-qw6wv object=Pod/default/rs-worker-qw6wv] | "name": "rs-worker-qw6wv"
11 2 - info unknown  [path=metadata.namespace value=default object=Pod/default/rs-worker-qw6wv] | "namespace": "default"
13 10 - info unknown  [path=metadata.labels.ray.io/cluster value=rs-raycluster-nrqvj object=Pod/default/rs-worker-qw6wv] | "ray.io/cluster": "rs-raycluster-nrqvj"
23 1 - info unknown  [path=spec.containers value=[] object=Pod/default/rs-worker-qw6wv] | "containers": []
24 3 - info unknown  [path=spec.nodename value=gke-ray-pool-2-03899cad-ccwh object=Pod/default/rs-worker-qw6wv] | "nodeName": "gke-ray-pool-2-03899cad-ccwh"
27 3 - info unknown  [path=status.phase value=Running object=Pod/default/rs-worker-qw6wv] | "phase": "Running"
30 3 - info unknown  [path=status.containerstatuses[0].name value=ray-worker object=Pod/default/rs-worker-qw6wv] | "name": "ray-worker"
33 1 - info unknown  [path=status.containerstatuses[0].state.waiting.reason value=CrashLoopBackOff object=Pod/default/rs-worker-qw6wv] | "reason": "CrashLoopBackOff"
34 5 - info unknown  [path=status.containerstatuses[0].state.waiting.message value=back-off 5m0s restarting failed container=ray-worker pod=rs-worker-qw6wv_default(f25d) object=Pod/default/rs-worker-qw6wv] | "message": "back-off 5m0s restarting failed container=ray-worker pod=rs-worker-qw6wv_default(f25d)"
39 1 2024-06-07T18:16:28.000Z info unknown  [path=status.containerstatuses[0].laststate.terminated.exitcode value=137 object=Pod/default/rs-worker-qw6wv] | "exitCode": 137
40 1 2024-06-07T18:16:28.000Z info unknown  [path=status.containerstatuses[0].laststate.terminated.reason value=OOMKilled object=Pod/default/rs-worker-qw6wv] | "reason": "OOMKilled"
41 3 2024-06-07T18:16:28.000Z info unknown  [path=status.containerstatuses[0].laststate.terminated.startedat value=2024-06-07T18:16:28Z object=Pod/default/rs-worker-qw6wv] | "startedAt": "2024-06-07T18:16:28Z"
44 1 - info unknown  [path=status.containerstatuses[0].ready value=false object=Pod/default/rs-worker-qw6wv] | "ready": false
45 7 - info unknown  [path=status.containerstatuses[0].restartcount value=5 object=Pod/default/rs-worker-qw6wv] | "restartCount": 5
"#,
    );
}

#[test]
fn event_list_json() {
    check(
        EVENT_LIST_JSON,
        r#"
1 1 - info unknown  [] | {
2 3 - info unknown  [path=apiversion value=v1] | "apiVersion": "v1"
5 23 2024-06-07T21:10:00.000Z warning kube_events rayservice-controller [type=Warning reason=FailedToUpdateServeApplications object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=293 first_seen_utc=2024-06-07T18:00:00.000Z event_name=rayservice-sample.17d8f2a1] | Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-nrqvj: Put "http://rayservice-sample-raycluster-nrqvj-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.96.218.65:8265: connect: connection refused
28 13 2024-06-07T21:12:00.123456Z info kube_events rayservice-controller [type=Normal reason=CreatedRayCluster object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=2 event_name=rayservice-sample.17d8f2b9] | Created RayCluster default/rayservice-sample-raycluster-hnz7k
41 2 - info unknown  [path=kind value=List] | "kind": "List"
43 3 - info unknown  [path=metadata.resourceversion value=] | "resourceVersion": ""
"#,
    );
}

#[test]
fn typed_event_list_items_have_no_kind() {
    check(
        r#"{"kind": "EventList", "items": [
  {"metadata": {"name": "e1"}, "involvedObject": {"kind": "Pod", "name": "p"},
   "reason": "OOMKilling", "type": "Warning", "message": "Memory cgroup out of memory",
   "lastTimestamp": null, "firstTimestamp": "2024-06-07T18:00:00Z"}
]}"#,
        r#"
1 1 - info unknown  [path=kind value=EventList] | "kind": "EventList"
2 4 2024-06-07T18:00:00.000Z warning kube_events  [type=Warning reason=OOMKilling object=Pod/p object_kind=Pod object_name=p first_seen_utc=2024-06-07T18:00:00.000Z event_name=e1] | Memory cgroup out of memory
"#,
    );
}

#[test]
fn multi_doc_yaml() {
    check(
        "# two objects
---
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
  namespace: ns
status:
  state: ready
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
status:
  conditions:
    - type: Ready
      status: 'False'
      reason: KubeletNotReady
...
",
        r#"
1 2 - info unknown  [] | # two objects
3 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayCluster/ns/rc] | apiVersion: ray.io/v1
4 1 - info unknown  [path=kind value=RayCluster object=RayCluster/ns/rc] | kind: RayCluster
5 1 - info unknown  [path=metadata object=RayCluster/ns/rc] | metadata:
6 1 - info unknown  [path=metadata.name value=rc object=RayCluster/ns/rc] | name: rc
7 1 - info unknown  [path=metadata.namespace value=ns object=RayCluster/ns/rc] | namespace: ns
8 1 - info unknown  [path=status object=RayCluster/ns/rc] | status:
9 2 - info unknown  [path=status.state value=ready object=RayCluster/ns/rc] | state: ready
11 1 - info unknown  [path=apiversion value=v1 object=Node/node-1] | apiVersion: v1
12 1 - info unknown  [path=kind value=Node object=Node/node-1] | kind: Node
13 1 - info unknown  [path=metadata object=Node/node-1] | metadata:
14 1 - info unknown  [path=metadata.name value=node-1 object=Node/node-1] | name: node-1
15 1 - info unknown  [path=status object=Node/node-1] | status:
16 1 - info unknown  [path=status.conditions object=Node/node-1] | conditions:
17 1 - info unknown  [path=status.conditions[0].type value=Ready object=Node/node-1] | - type: Ready
18 1 - info unknown  [path=status.conditions[0].status value=False object=Node/node-1] | status: 'False'
19 2 - info unknown  [path=status.conditions[0].reason value=KubeletNotReady object=Node/node-1] | reason: KubeletNotReady
"#,
    );
}

#[test]
fn troubleshoot_bare_array_yaml() {
    check(
        "- apiVersion: ray.io/v1
  kind: RayJob
  metadata:
    name: job
    namespace: default
  status:
    jobDeploymentStatus: Failed
    reason: DeadlineExceeded
- apiVersion: ray.io/v1
  kind: RayJob
  metadata: {name: job2, namespace: default}
",
        r#"
1 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayJob/default/job] | - apiVersion: ray.io/v1
2 1 - info unknown  [path=kind value=RayJob object=RayJob/default/job] | kind: RayJob
3 1 - info unknown  [path=metadata object=RayJob/default/job] | metadata:
4 1 - info unknown  [path=metadata.name value=job object=RayJob/default/job] | name: job
5 1 - info unknown  [path=metadata.namespace value=default object=RayJob/default/job] | namespace: default
6 1 - info unknown  [path=status object=RayJob/default/job] | status:
7 1 - info unknown  [path=status.jobdeploymentstatus value=Failed object=RayJob/default/job] | jobDeploymentStatus: Failed
8 1 - info unknown  [path=status.reason value=DeadlineExceeded object=RayJob/default/job] | reason: DeadlineExceeded
9 1 - info unknown  [path=apiversion value=ray.io/v1] | - apiVersion: ray.io/v1
10 1 - info unknown  [path=kind value=RayJob] | kind: RayJob
11 1 - info unknown  [path=metadata value={name: job2, namespace: default}] | metadata: {name: job2, namespace: default}
"#,
    );
}

#[test]
fn bare_array_json_compact() {
    check(
        r#"[{"kind":"RayCluster","metadata":{"name":"rc","namespace":"default"},"status":{"state":"ready","conditions":[]}}]"#,
        r#"
1 1 - info unknown  [path=kind value=RayCluster object=RayCluster/default/rc] | "kind":"RayCluster"
1 1 - info unknown  [path=metadata.name value=rc object=RayCluster/default/rc] | "name":"rc"
1 1 - info unknown  [path=metadata.namespace value=default object=RayCluster/default/rc] | "namespace":"default"
1 1 - info unknown  [path=status.state value=ready object=RayCluster/default/rc] | "state":"ready"
1 1 - info unknown  [path=status.conditions value=[] object=RayCluster/default/rc] | "conditions":[]
"#,
    );
}

#[test]
fn bundle_metadata() {
    check(
        r#"{
  "collected_at": "2024-06-07T21:19:09.000Z",
  "namespace": "default",
  "kuberay_operator_image": "quay.io/kuberay/operator:v1.1.1"
}"#,
        r#"
1 1 - info unknown  [] | {
2 1 - info unknown  [path=collected_at value=2024-06-07T21:19:09.000Z] | "collected_at": "2024-06-07T21:19:09.000Z"
3 1 - info unknown  [path=namespace value=default] | "namespace": "default"
4 2 - info unknown  [path=kuberay_operator_image value=quay.io/kuberay/operator:v1.1.1] | "kuberay_operator_image": "quay.io/kuberay/operator:v1.1.1"
"#,
    );
    check(
        "apiVersion: troubleshoot.sh/v1beta2
kind: SupportBundle
spec:
  versionNumber: 0.72.0
",
        r#"
1 1 - info unknown  [path=apiversion value=troubleshoot.sh/v1beta2] | apiVersion: troubleshoot.sh/v1beta2
2 1 - info unknown  [path=kind value=SupportBundle] | kind: SupportBundle
3 1 - info unknown  [path=spec] | spec:
4 1 - info unknown  [path=spec.versionnumber value=0.72.0] | versionNumber: 0.72.0
"#,
    );
}

#[test]
fn yaml_scalars() {
    check(
        r#"a: plain text # comment
b: "esc \"q\" \t tab \u00e9"
c: 'it''s'
d: >-
  folded
  text

  para
e: |+
  keep

f: &anchor !!str tagged
g: *anchor
h: [a, "b, c",
  d]
i: {x: 1}
j:
k: null
l:
  value on next line
  continued
"m n": quoted key
long: "Failed to pull image: rpc error: code
  = Unknown desc \
  = x"
"#,
        r#"
1 1 - info unknown  [path=a value=plain text] | a: plain text # comment
2 1 - info unknown  [path=b value=esc "q" · tab é] | b: "esc \"q\" \t tab \u00e9"
3 1 - info unknown  [path=c value=it's] | c: 'it''s'
4 5 - info unknown  [path=d value=folded text⏎para] | d: >-⏎  folded⏎  text⏎⏎  para
9 3 - info unknown  [path=e value=keep] | e: |+⏎  keep
12 1 - info unknown  [path=f value=tagged] | f: &anchor !!str tagged
13 1 - info unknown  [path=g value=*anchor] | g: *anchor
14 2 - info unknown  [path=h value=[a, "b, c", d]] | h: [a, "b, c",⏎  d]
16 1 - info unknown  [path=i value={x: 1}] | i: {x: 1}
17 1 - info unknown  [path=j value=] | j:
18 1 - info unknown  [path=k value=null] | k: null
19 3 - info unknown  [path=l value=value on next line continued] | l:⏎value on next line⏎  continued
22 1 - info unknown  [path=mn value=quoted key] | "m n": quoted key
23 3 - info unknown  [path=long value=Failed to pull image: rpc error: code = Unknown desc = x] | long: "Failed to pull image: rpc error: code⏎  = Unknown desc \⏎  = x"
"#,
    );
}

#[test]
fn nasty_inputs() {
    check("", "");
    check(
        "\n\n",
        r#"
1 2 - info unknown  [] | 
"#,
    );
    check(
        "\u{0}\u{1}\u{2}garbage\nmore: x\n",
        r#"
1 1 - info unknown  [] | ···garbage
2 1 - info unknown  [path=more value=x] | more: x
unparsed=1
"#,
    );
    check(
        "a: 1\r\nb:\r\n  - x\r\n",
        r#"
1 1 - info unknown  [path=a value=1] | a: 1
2 1 - info unknown  [path=b] | b:
3 1 - info unknown  [path=b[0] value=x] | - x
"#,
    );
    check(
        "  - a\nb: 1\n  c: 2\n",
        r#"
1 1 - info unknown  [path= value=a] | - a
2 2 - info unknown  [path=b value=1 c: 2] | b: 1⏎  c: 2
"#,
    );
    check(
        "{\"a\": [1, 2,\n",
        r#"
1 1 - info unknown  [path=a[0] value=1] | 1
1 1 - info unknown  [path=a[1] value=2] | 2
diag :1: JSON ends inside a value
"#,
    );
    check(
        "{\"a\": \"x\"} trailing\n{\"b\": 1}\n",
        r#"
1 1 - info unknown  [path=a value=x] | "a": "x"
1 1 - info unknown  [path= value=trailing] | trailing
2 1 - info unknown  [path=b value=1] | "b": 1
"#,
    );
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    check(
        &deep,
        r#"
1 1 - info unknown  [] | [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
unparsed=1
diag :1: JSON nested deeper than 256 levels
"#,
    );
    let deep_yaml: String = (0..300)
        .map(|d| format!("{}k{d}:\n", " ".repeat(d)))
        .collect();
    let mut out = ParseOutput::default();
    parse(deep_yaml.as_bytes(), &mut out);
    assert_eq!(out.events.len(), 300);
    let mut out = ParseOutput::default();
    parse(b"a: \xff\xfe\nb: \"\xc3\"\n", &mut out);
    assert_eq!(out.events.len(), 2);
    let giant = format!("{{\"a\": \"{}\"}}", "y".repeat(300_000));
    let mut out = ParseOutput::default();
    parse(giant.as_bytes(), &mut out);
    assert!(out.events.iter().all(|e| e.message.len() < 70_000));
    assert!(out
        .events
        .iter()
        .all(|e| e.field("value").map_or(0, str::len) < 70_000));
}
/// Every prefix of every fixture (cut anywhere, even inside a UTF-8 sequence) parses
/// without panicking and keeps each physical line in exactly one event.
#[test]
fn truncated_fixtures_keep_every_line() {
    for fixture in [
        RAYSERVICE_YAML,
        EVENT_AND_POD_LIST_YAML,
        TROUBLESHOOT_PODS_JSON,
        EVENT_LIST_JSON,
    ] {
        let bytes = fixture.as_bytes();
        for cut in (0..bytes.len()).step_by(3) {
            let input = bytes.get(..cut).unwrap_or(bytes);
            let mut out = ParseOutput::default();
            parse(input, &mut out);
            let n_physical = split_lines(input).count() as u32;
            let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
            if input.trim_ascii_start().starts_with(b"{") {
                assert!(n_counted >= n_physical, "cut at {cut}");
            } else {
                assert_eq!(n_counted, n_physical, "cut at {cut}");
            }
        }
    }
}

#[test]
fn the_head_of_a_line_that_opens_a_block_scalar_is_its_key() {
    use super::block_scalar_head;
    assert_eq!(block_scalar_head("message: |-"), Some("message:"));
    assert_eq!(
        block_scalar_head("    message: >+2  # folded"),
        Some("message:")
    );
    assert_eq!(block_scalar_head("- script: |"), Some("- script:"));
    assert_eq!(block_scalar_head("\"note\": !!str |"), Some("\"note\":"));
    // A plain value, a key with its value below, a line that is no key.
    assert_eq!(block_scalar_head("message: a | b"), None);
    assert_eq!(block_scalar_head("message:"), None);
    assert_eq!(block_scalar_head("|-"), None);
}

/// Issue 31: a container's state and a condition take their own time (`finishedAt`, else
/// `startedAt`; `lastTransitionTime`), exact; a block without a time stays untimed, and
/// nothing is borrowed from the container or condition beside it. Real troubleshoot lines.
#[test]
fn states_and_conditions_take_their_own_time() {
    check(
        r#"{
  "kind": "PodList",
  "items": [
    {
      "metadata": {
        "name": "analytics-cluster-head-7x2kp",
        "namespace": "data"
      },
      "status": {
        "phase": "Running",
        "startTime": "2024-06-12T10:00:02Z",
        "conditions": [
          {
            "type": "Ready",
            "status": "False",
            "lastProbeTime": null,
            "lastTransitionTime": "2024-06-12T10:31:41Z"
          },
          {
            "type": "PodScheduled",
            "status": "True"
          }
        ],
        "containerStatuses": [
          {
            "name": "ray-head",
            "restartCount": 1,
            "state": {
              "running": {
                "startedAt": "2024-06-12T10:31:43Z"
              }
            },
            "lastState": {
              "terminated": {
                "exitCode": 137,
                "reason": "OOMKilled",
                "startedAt": "2024-06-12T10:00:04Z",
                "finishedAt": "2024-06-12T10:31:40Z"
              }
            }
          },
          {
            "name": "autoscaler",
            "state": {
              "waiting": {
                "reason": "CrashLoopBackOff"
              }
            },
            "lastState": {
              "terminated": {
                "exitCode": 1,
                "reason": "Error"
              }
            }
          }
        ]
      }
    }
  ]
}"#,
        r#"
1 1 - info unknown  [] | {
2 4 - info unknown  [path=kind value=PodList] | "kind": "PodList"
6 1 - info unknown  [path=metadata.name value=analytics-cluster-head-7x2kp object=Pod/data/analytics-cluster-head-7x2kp] | "name": "analytics-cluster-head-7x2kp"
7 3 - info unknown  [path=metadata.namespace value=data object=Pod/data/analytics-cluster-head-7x2kp] | "namespace": "data"
10 1 - info unknown  [path=status.phase value=Running object=Pod/data/analytics-cluster-head-7x2kp] | "phase": "Running"
11 3 - info unknown  [path=status.starttime value=2024-06-12T10:00:02Z object=Pod/data/analytics-cluster-head-7x2kp] | "startTime": "2024-06-12T10:00:02Z"
14 1 2024-06-12T10:31:41.000Z info unknown  [path=status.conditions[0].type value=Ready object=Pod/data/analytics-cluster-head-7x2kp] | "type": "Ready"
15 1 2024-06-12T10:31:41.000Z info unknown  [path=status.conditions[0].status value=False object=Pod/data/analytics-cluster-head-7x2kp] | "status": "False"
16 1 2024-06-12T10:31:41.000Z info unknown  [path=status.conditions[0].lastprobetime value=null object=Pod/data/analytics-cluster-head-7x2kp] | "lastProbeTime": null
17 3 2024-06-12T10:31:41.000Z info unknown  [path=status.conditions[0].lasttransitiontime value=2024-06-12T10:31:41Z object=Pod/data/analytics-cluster-head-7x2kp] | "lastTransitionTime": "2024-06-12T10:31:41Z"
20 1 - info unknown  [path=status.conditions[1].type value=PodScheduled object=Pod/data/analytics-cluster-head-7x2kp] | "type": "PodScheduled"
21 5 - info unknown  [path=status.conditions[1].status value=True object=Pod/data/analytics-cluster-head-7x2kp] | "status": "True"
26 1 - info unknown  [path=status.containerstatuses[0].name value=ray-head object=Pod/data/analytics-cluster-head-7x2kp] | "name": "ray-head"
27 3 - info unknown  [path=status.containerstatuses[0].restartcount value=1 object=Pod/data/analytics-cluster-head-7x2kp] | "restartCount": 1
30 5 2024-06-12T10:31:43.000Z info unknown  [path=status.containerstatuses[0].state.running.startedat value=2024-06-12T10:31:43Z object=Pod/data/analytics-cluster-head-7x2kp] | "startedAt": "2024-06-12T10:31:43Z"
35 1 2024-06-12T10:31:40.000Z info unknown  [path=status.containerstatuses[0].laststate.terminated.exitcode value=137 object=Pod/data/analytics-cluster-head-7x2kp] | "exitCode": 137
36 1 2024-06-12T10:31:40.000Z info unknown  [path=status.containerstatuses[0].laststate.terminated.reason value=OOMKilled object=Pod/data/analytics-cluster-head-7x2kp] | "reason": "OOMKilled"
37 1 2024-06-12T10:31:40.000Z info unknown  [path=status.containerstatuses[0].laststate.terminated.startedat value=2024-06-12T10:00:04Z object=Pod/data/analytics-cluster-head-7x2kp] | "startedAt": "2024-06-12T10:00:04Z"
38 5 2024-06-12T10:31:40.000Z info unknown  [path=status.containerstatuses[0].laststate.terminated.finishedat value=2024-06-12T10:31:40Z object=Pod/data/analytics-cluster-head-7x2kp] | "finishedAt": "2024-06-12T10:31:40Z"
43 3 - info unknown  [path=status.containerstatuses[1].name value=autoscaler object=Pod/data/analytics-cluster-head-7x2kp] | "name": "autoscaler"
46 5 - info unknown  [path=status.containerstatuses[1].state.waiting.reason value=CrashLoopBackOff object=Pod/data/analytics-cluster-head-7x2kp] | "reason": "CrashLoopBackOff"
51 1 - info unknown  [path=status.containerstatuses[1].laststate.terminated.exitcode value=1 object=Pod/data/analytics-cluster-head-7x2kp] | "exitCode": 1
52 9 - info unknown  [path=status.containerstatuses[1].laststate.terminated.reason value=Error object=Pod/data/analytics-cluster-head-7x2kp] | "reason": "Error"
"#,
    );
}

/// Issue 31: `kubectl get -o yaml` of a RayJob: its status takes its `endTime` (else its
/// `startTime`); a RayCluster's status its `lastUpdateTime`, but not its conditions, which
/// keep their own or none.
#[test]
fn custom_resource_statuses_take_their_own_time() {
    check(
        r#"apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: finetune-resnet
  namespace: ml-train
status:
  endTime: "2024-10-21T04:00:01Z"
  jobDeploymentStatus: Failed
  jobStatus: RUNNING
  reason: DeadlineExceeded
  startTime: "2024-10-21T02:00:01Z"
---
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: feature-etl
  namespace: analytics
status:
  conditions:
  - lastTransitionTime: "2025-04-14T02:00:24Z"
    reason: HeadPodRunningAndReady
    status: "True"
    type: HeadPodReady
  - reason: RayClusterPodsProvisioning
    status: "False"
    type: RayClusterProvisioned
  lastUpdateTime: "2025-04-14T02:08:16Z"
  state: failed
"#,
        r#"
1 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayJob/ml-train/finetune-resnet] | apiVersion: ray.io/v1
2 1 - info unknown  [path=kind value=RayJob object=RayJob/ml-train/finetune-resnet] | kind: RayJob
3 1 - info unknown  [path=metadata object=RayJob/ml-train/finetune-resnet] | metadata:
4 1 - info unknown  [path=metadata.name value=finetune-resnet object=RayJob/ml-train/finetune-resnet] | name: finetune-resnet
5 1 - info unknown  [path=metadata.namespace value=ml-train object=RayJob/ml-train/finetune-resnet] | namespace: ml-train
6 1 2024-10-21T04:00:01.000Z info unknown  [path=status object=RayJob/ml-train/finetune-resnet] | status:
7 1 2024-10-21T04:00:01.000Z info unknown  [path=status.endtime value=2024-10-21T04:00:01Z object=RayJob/ml-train/finetune-resnet] | endTime: "2024-10-21T04:00:01Z"
8 1 2024-10-21T04:00:01.000Z info unknown  [path=status.jobdeploymentstatus value=Failed object=RayJob/ml-train/finetune-resnet] | jobDeploymentStatus: Failed
9 1 2024-10-21T04:00:01.000Z info unknown  [path=status.jobstatus value=RUNNING object=RayJob/ml-train/finetune-resnet] | jobStatus: RUNNING
10 1 2024-10-21T04:00:01.000Z info unknown  [path=status.reason value=DeadlineExceeded object=RayJob/ml-train/finetune-resnet] | reason: DeadlineExceeded
11 2 2024-10-21T04:00:01.000Z info unknown  [path=status.starttime value=2024-10-21T02:00:01Z object=RayJob/ml-train/finetune-resnet] | startTime: "2024-10-21T02:00:01Z"
13 1 - info unknown  [path=apiversion value=ray.io/v1 object=RayCluster/analytics/feature-etl] | apiVersion: ray.io/v1
14 1 - info unknown  [path=kind value=RayCluster object=RayCluster/analytics/feature-etl] | kind: RayCluster
15 1 - info unknown  [path=metadata object=RayCluster/analytics/feature-etl] | metadata:
16 1 - info unknown  [path=metadata.name value=feature-etl object=RayCluster/analytics/feature-etl] | name: feature-etl
17 1 - info unknown  [path=metadata.namespace value=analytics object=RayCluster/analytics/feature-etl] | namespace: analytics
18 1 2025-04-14T02:08:16.000Z info unknown  [path=status object=RayCluster/analytics/feature-etl] | status:
19 1 2025-04-14T02:08:16.000Z info unknown  [path=status.conditions object=RayCluster/analytics/feature-etl] | conditions:
20 1 2025-04-14T02:00:24.000Z info unknown  [path=status.conditions[0].lasttransitiontime value=2025-04-14T02:00:24Z object=RayCluster/analytics/feature-etl] | - lastTransitionTime: "2025-04-14T02:00:24Z"
21 1 2025-04-14T02:00:24.000Z info unknown  [path=status.conditions[0].reason value=HeadPodRunningAndReady object=RayCluster/analytics/feature-etl] | reason: HeadPodRunningAndReady
22 1 2025-04-14T02:00:24.000Z info unknown  [path=status.conditions[0].status value=True object=RayCluster/analytics/feature-etl] | status: "True"
23 1 2025-04-14T02:00:24.000Z info unknown  [path=status.conditions[0].type value=HeadPodReady object=RayCluster/analytics/feature-etl] | type: HeadPodReady
24 1 - info unknown  [path=status.conditions[1].reason value=RayClusterPodsProvisioning object=RayCluster/analytics/feature-etl] | - reason: RayClusterPodsProvisioning
25 1 - info unknown  [path=status.conditions[1].status value=False object=RayCluster/analytics/feature-etl] | status: "False"
26 1 - info unknown  [path=status.conditions[1].type value=RayClusterProvisioned object=RayCluster/analytics/feature-etl] | type: RayClusterProvisioned
27 1 2025-04-14T02:08:16.000Z info unknown  [path=status.lastupdatetime value=2025-04-14T02:08:16Z object=RayCluster/analytics/feature-etl] | lastUpdateTime: "2025-04-14T02:08:16Z"
28 1 2025-04-14T02:08:16.000Z info unknown  [path=status.state value=failed object=RayCluster/analytics/feature-etl] | state: failed
"#,
    );
}
