//! Tests of the whole parser: each fixture or snippet is parsed and every event rendered on
//! one line; every physical line must land in exactly one event.

use super::fixtures::{
    NODE, PODS, RAYCLUSTER_V1_3, RAYSERVICE_GENERATED, RAYSERVICE_V0_6, RAYSERVICE_V1_3,
};
use super::parse;
use crate::event::{format_rfc3339, RawTime};
use crate::parse::lines::split_lines;
use crate::parse::ParseOutput;

/// One line per event: line, n_lines, time, level, kind, component, fields | message.
fn render(out: &ParseOutput) -> String {
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
            .filter(|(k, _)| k != "object" || !ev.fields.iter().any(|(k, _)| k == "path"))
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
    let objects: std::collections::BTreeSet<&str> = out
        .events
        .iter()
        .filter(|e| e.field("path").is_some())
        .filter_map(|e| e.field("object"))
        .collect();
    for o in objects {
        s.push_str(&format!("object {o}\n"));
    }
    if out.unparsed_lines > 0 {
        s.push_str(&format!("unparsed={}\n", out.unparsed_lines));
    }
    s.chars()
        .map(|c| if c.is_control() && c != '\n' { '·' } else { c })
        .collect()
}

#[track_caller]
fn check(input: &str, expect: &str) {
    let mut out = ParseOutput::default();
    parse(input.as_bytes(), &mut out);
    let n_physical = split_lines(input.as_bytes()).count() as u32;
    let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
    assert_eq!(n_counted, n_physical, "every line in exactly one event");
    let got = render(&out);
    if got.trim_end() != expect.trim() {
        println!("{got}");
    }
    assert_eq!(got.trim_end(), expect.trim());
}

#[test]
fn rayservice_v1_3_conditions_and_raw_multiline_values() {
    check(
        RAYSERVICE_V1_3,
        r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=metadata.labels value=<none>] | Labels:       <none>
4 1 - info unknown  [path=metadata.annotations.ray.io/initializing-timeout value=5m] | Annotations:  ray.io/initializing-timeout: 5m
5 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
6 1 - info unknown  [path=kind value=RayService] | Kind:         RayService
7 1 - info unknown  [path=metadata] | Metadata:
8 1 - info unknown  [path=metadata.creationtimestamp value=2025-01-10T09:00:00Z] | Creation Timestamp:  2025-01-10T09:00:00Z
9 1 - info unknown  [path=metadata.generation value=1] | Generation:          1
10 1 - info unknown  [path=metadata.resourceversion value=12345] | Resource Version:    12345
11 1 - info unknown  [path=metadata.uid value=0b8e6c2a-1111-2222-3333-444455556666] | UID:                 0b8e6c2a-1111-2222-3333-444455556666
12 1 - info unknown  [path=spec] | Spec:
13 1 - info unknown  [path=spec.rayclusterconfig] | Ray Cluster Config:
14 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec] | Head Group Spec:
15 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams] | Ray Start Params:
16 1 - info unknown  [path=spec.rayclusterconfig.headgroupspec.raystartparams.dashboard-host value=0.0.0.0] | Dashboard - Host:  0.0.0.0
17 1 - info unknown  [path=spec.rayclusterconfig.rayversion value=2.41.0] | Ray Version:           2.41.0
18 10 - info unknown  [path=spec.serveconfigv2 value=applications:⏎- name: fruit_app⏎  import_path: fruit.deployment_graph⏎  route_prefix: /fruit⏎  runtime_env:⏎    working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da.zip"⏎  deployments:⏎  - name: MangoStand⏎    num_replicas: 1] | Serve Config V2:         applications:⏎- name: fruit_app⏎  import_path: fruit.deployment_graph⏎  route_prefix: /fruit⏎  runtime_env:⏎    working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da.zip"⏎  deployments:⏎  - name: MangoStand⏎    num_replicas: 1
28 1 - info unknown  [path=status] | Status:
29 1 - info unknown  [path=status.activeservicestatus] | Active Service Status:
30 1 - info unknown  [path=status.activeservicestatus.applicationstatuses] | Application Statuses:
31 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app] | fruit_app:
32 6 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.message value=Deploying app 'fruit_app' failed with exception:⏎Traceback (most recent call last):⏎  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/application_state.py", line 1027, in build_serve_application⏎    app = call_app_builder_with_args_if_necessary(import_attr(import_path), args)⏎ModuleNotFoundError: No module named 'fruit'] | Message:  Deploying app 'fruit_app' failed with exception:⏎Traceback (most recent call last):⏎  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/application_state.py", line 1027, in build_serve_application⏎    app = call_app_builder_with_args_if_necessary(import_attr(import_path), args)⏎ModuleNotFoundError: No module named 'fruit'
38 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses] | Serve Deployment Statuses:
39 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.mangostand] | Mango Stand:
40 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.mangostand.message value=Deployment 'MangoStand' in application 'fruit_app' has 1 replicas that have taken more than 30s to be scheduled.] | Message:  Deployment 'MangoStand' in application 'fruit_app' has 1 replicas that have taken more than 30s to be scheduled.
41 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.mangostand.status value=UPDATING] | Status:   UPDATING
42 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=DEPLOY_FAILED] | Status:       DEPLOY_FAILED
43 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app] | math_app:
44 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app.status value=RUNNING] | Status:            RUNNING
45 1 - info unknown  [path=status.activeservicestatus.rayclustername value=rayservice-sample-raycluster-bwrp8] | Ray Cluster Name:  rayservice-sample-raycluster-bwrp8
46 1 - info unknown  [path=status.conditions] | Conditions:
47 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[0].lasttransitiontime value=2025-01-10T09:00:05Z] | Last Transition Time:  2025-01-10T09:00:05Z
48 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[0].message value=RayService is initializing and will be marked as failed if it is not ready within 5m0s] | Message:               RayService is initializing and will be marked as failed if it is not ready within 5m0s
49 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[0].observedgeneration value=1] | Observed Generation:   1
50 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[0].reason value=Initializing] | Reason:                Initializing
51 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[0].status value=False] | Status:                False
52 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[0].type value=Ready] | Type:                  Ready
53 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[1].lasttransitiontime value=2025-01-10T09:00:05Z] | Last Transition Time:  2025-01-10T09:00:05Z
54 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[1].message value=Active Ray cluster exists and no pending Ray cluster] | Message:               Active Ray cluster exists and no pending Ray cluster
55 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[1].observedgeneration value=1] | Observed Generation:   1
56 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[1].reason value=NoPendingCluster] | Reason:                NoPendingCluster
57 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[1].status value=False] | Status:                False
58 1 2025-01-10T09:00:05.000Z info unknown  [path=status.conditions[1].type value=UpgradeInProgress] | Type:                  UpgradeInProgress
59 1 - info unknown  [path=status.observedgeneration value=1] | Observed Generation:     1
60 1 - info unknown  [path=status.pendingservicestatus value=] | Pending Service Status:
61 1 - info unknown  [path=status.servicestatus value=] | Service Status:
62 3 - info unknown  [path=events] | Events:⏎Type     Reason                           Age                  From                   Message⏎----     ------                           ----                 ----                   -------
65 1 age=300 info kube_events rayservice-controller [type=Normal reason=CreatedRayCluster object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=1 age=5m first_seen_age_secs=300] | Created RayCluster default/rayservice-sample-raycluster-bwrp8
66 1 age=130 warning kube_events rayservice-controller [type=Warning reason=FailedToUpdateServeApplications object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=12 age=2m10s (x12 over 4m) first_seen_age_secs=240] | Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-bwrp8: Put "http://rayservice-sample-raycluster-bwrp8-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.96.1.2:8265: connect: connection refused
object RayService/default/rayservice-sample
"#,
    );
}

#[test]
fn rayservice_v0_6_application_statuses() {
    check(
        RAYSERVICE_V0_6,
        r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=metadata.labels value=<none>] | Labels:       <none>
4 1 - info unknown  [path=metadata.annotations value=<none>] | Annotations:  <none>
5 1 - info unknown  [path=apiversion value=ray.io/v1alpha1] | API Version:  ray.io/v1alpha1
6 1 - info unknown  [path=kind value=RayService] | Kind:         RayService
7 1 - info unknown  [path=status] | Status:
8 1 - info unknown  [path=status.activeservicestatus] | Active Service Status:
9 1 - info unknown  [path=status.activeservicestatus.applicationstatuses] | Application Statuses:
10 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app] | fruit_app:
11 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
12 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
13 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses] | Serve Deployment Statuses:
14 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver] | fruit_app_DAGDriver:
15 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
16 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
17 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_dagdriver.status value=HEALTHY] | Status:                   HEALTHY
18 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket] | fruit_app_FruitMarket:
19 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
20 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
21 4 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.message value=The Deployment failed to start 3 times in a row. This may be due to a problem with its constructor or initial health check failing. See controller logs for details. Error:⏎ray::ServeReplica:fruit_app_FruitMarket.initialize_and_get_metadata() (pid=2541, ip=10.244.0.7, actor_id=9ba0e3e5d7c1)⏎  File "/home/ray/anaconda3/lib/python3.8/concurrent/futures/_base.py", line 437, in result⏎RuntimeError: boom] | Message:                  The Deployment failed to start 3 times in a row. This may be due to a problem with its constructor or initial health check failing. See controller logs for details. Error:⏎ray::ServeReplica:fruit_app_FruitMarket.initialize_and_get_metadata() (pid=2541, ip=10.244.0.7, actor_id=9ba0e3e5d7c1)⏎  File "/home/ray/anaconda3/lib/python3.8/concurrent/futures/_base.py", line 437, in result⏎RuntimeError: boom
25 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.servedeploymentstatuses.fruit_app_fruitmarket.status value=UNHEALTHY] | Status:                   UNHEALTHY
26 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=RUNNING] | Status:                       RUNNING
27 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.dashboardstatus] | Dashboard Status:
28 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.dashboardstatus.healthlastupdatetime value=2023-07-11T22:21:24Z] | Health Last Update Time:  2023-07-11T22:21:24Z
29 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.dashboardstatus.ishealthy value=true] | Is Healthy:               true
30 1 2023-07-11T22:21:24.000Z info unknown  [path=status.activeservicestatus.dashboardstatus.lastupdatetime value=2023-07-11T22:21:24Z] | Last Update Time:         2023-07-11T22:21:24Z
31 1 - info unknown  [path=status.activeservicestatus.rayclustername value=rayservice-sample-raycluster-6mj28] | Ray Cluster Name:           rayservice-sample-raycluster-6mj28
32 1 - info unknown  [path=status.servicestatus value=Running] | Service Status:               Running
33 3 - info unknown  [path=events] | Events:⏎Type    Reason   Age                    From                   Message⏎----    ------   ----                   ----                   -------
36 1 age=135 info kube_events rayservice-controller [type=Normal reason=Running object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=29791 age=2m15s (x29791 over 16h) first_seen_age_secs=57600] | The Serve applicaton is now running and healthy.
object RayService/default/rayservice-sample
"#,
    );
}

#[test]
fn rayservice_generated_serve_config() {
    check(
        RAYSERVICE_GENERATED,
        r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
4 1 - info unknown  [path=kind value=RayService] | Kind:         RayService
5 1 - info unknown  [path=spec] | Spec:
6 1 - info unknown  [path=spec.serviceunhealthysecondthreshold value=900] | Service Unhealthy Second Threshold:      900
7 1 - info unknown  [path=spec.deploymentunhealthysecondthreshold value=300] | Deployment Unhealthy Second Threshold:   300
8 9 - info unknown  [path=spec.serveconfigv2 value=applications:⏎  - name: fruit_app⏎    import_path: fruit.deployment_graph⏎    route_prefix: /fruit⏎    runtime_env:⏎      working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da38796123d9f9ffff59bab2792a043e95.zip"⏎  - name: math_app⏎    import_path: conditional_dag.serve_dag⏎    route_prefix: /calc] | Serve Config V2:                         applications:⏎  - name: fruit_app⏎    import_path: fruit.deployment_graph⏎    route_prefix: /fruit⏎    runtime_env:⏎      working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da38796123d9f9ffff59bab2792a043e95.zip"⏎  - name: math_app⏎    import_path: conditional_dag.serve_dag⏎    route_prefix: /calc
17 1 - info unknown  [path=status] | Status:
18 1 - info unknown  [path=status.activeservicestatus] | Active Service Status:
19 1 - info unknown  [path=status.activeservicestatus.applicationstatuses] | Application Statuses:
20 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app] | fruit_app:
21 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.healthlastupdatetime value=2024-06-07T21:16:56Z] | Health Last Update Time:  2024-06-07T21:16:56Z
22 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.fruit_app.status value=DEPLOYING] | Status:                   DEPLOYING
23 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app] | math_app:
24 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app.healthlastupdatetime value=2024-06-07T21:16:56Z] | Health Last Update Time:  2024-06-07T21:16:56Z
25 1 - info unknown  [path=status.activeservicestatus.applicationstatuses.math_app.status value=RUNNING] | Status:                   RUNNING
26 1 - info unknown  [path=status.activeservicestatus.rayclustername value=rayservice-sample-raycluster-nrqvj] | Ray Cluster Name:             rayservice-sample-raycluster-nrqvj
27 1 - info unknown  [path=status.pendingservicestatus] | Pending Service Status:
28 1 - info unknown  [path=status.pendingservicestatus.rayclustername value=rayservice-sample-raycluster-hnz7k] | Ray Cluster Name:             rayservice-sample-raycluster-hnz7k
29 1 - info unknown  [path=status.servicestatus value=Restarting] | Service Status:                 Restarting
30 3 - info unknown  [path=events] | Events:⏎Type    Reason             Age  From                   Message⏎----    ------             ---  ----                   -------
33 1 age=1860 info kube_events rayservice-controller [type=Normal reason=CreatedRayCluster object=RayService/default/rayservice-sample object_kind=RayService object_name=rayservice-sample namespace=default count=1 age=31m first_seen_age_secs=1860] | Created RayCluster default/rayservice-sample-raycluster-hnz7k
object RayService/default/rayservice-sample
"#,
    );
}

#[test]
fn raycluster_conditions_list_without_markers() {
    check(
        RAYCLUSTER_V1_3,
        r#"
1 1 - info unknown  [path=metadata.name value=raycluster-kuberay] | Name:         raycluster-kuberay
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:    default
3 1 - info unknown  [path=metadata.labels.app.kubernetes.io/instance value=raycluster] | Labels:       app.kubernetes.io/instance=raycluster
4 1 - info unknown  [path=metadata.annotations value=<none>] | Annotations:  <none>
5 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
6 1 - info unknown  [path=kind value=RayCluster] | Kind:         RayCluster
7 1 - info unknown  [path=spec] | Spec:
8 1 - info unknown  [path=spec.headgroupspec] | Head Group Spec:
9 1 - info unknown  [path=spec.headgroupspec.template] | Template:
10 1 - info unknown  [path=spec.headgroupspec.template.spec] | Spec:
11 1 - info unknown  [path=spec.headgroupspec.template.spec.containers] | Containers:
12 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].image value=rayproject/ray:2.41.0] | Image:  rayproject/ray:2.41.0
13 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].name value=ray-head] | Name:   ray-head
14 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports] | Ports:
15 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[0].containerport value=6379] | Container Port:  6379
16 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[0].name value=gcs-server] | Name:            gcs-server
17 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[0].protocol value=TCP] | Protocol:        TCP
18 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[1].containerport value=8265] | Container Port:  8265
19 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[1].name value=dashboard] | Name:            dashboard
20 1 - info unknown  [path=spec.headgroupspec.template.spec.containers[0].ports[1].protocol value=TCP] | Protocol:        TCP
21 1 - info unknown  [path=spec.suspend value=true] | Suspend:  true
22 1 - info unknown  [path=status] | Status:
23 1 - info unknown  [path=status.conditions] | Conditions:
24 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[0].lasttransitiontime value=2026-03-03T03:00:25Z] | Last Transition Time:   2026-03-03T03:00:25Z
25 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[0].message value=RayCluster Pods are being provisioned for first time] | Message:                RayCluster Pods are being provisioned for first time
26 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[0].reason value=RayClusterPodsProvisioning] | Reason:                 RayClusterPodsProvisioning
27 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[0].status value=False] | Status:                 False
28 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[0].type value=RayClusterProvisioned] | Type:                   RayClusterProvisioned
29 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[1].lasttransitiontime value=2026-03-03T03:00:25Z] | Last Transition Time:   2026-03-03T03:00:25Z
30 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[1].message value=] | Message:
31 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[1].reason value=RayClusterSuspended] | Reason:                 RayClusterSuspended
32 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[1].status value=False] | Status:                 False
33 1 2026-03-03T03:00:25.000Z info unknown  [path=status.conditions[1].type value=RayClusterSuspended] | Type:                   RayClusterSuspended
34 1 - info unknown  [path=status.desiredcpu value=0] | Desired CPU:              0
35 1 - info unknown  [path=status.state value=suspended] | State:                    suspended
36 3 - info unknown  [path=events] | Events:⏎Type    Reason            Age   From                   Message⏎----    ------            ----  ----                   -------
39 1 age=2580 info kube_events raycluster-controller [type=Normal reason=CreatedService object=RayCluster/default/raycluster-kuberay object_kind=RayCluster object_name=raycluster-kuberay namespace=default count=1 age=43m first_seen_age_secs=2580] | Created service default/raycluster-kuberay-head-svc
40 1 age=2580 info kube_events raycluster-controller [type=Normal reason=CreatedHeadPod object=RayCluster/default/raycluster-kuberay object_kind=RayCluster object_name=raycluster-kuberay namespace=default count=1 age=43m first_seen_age_secs=2580] | Created head Pod default/raycluster-kuberay-head-l7v7q
41 1 age=2580 info kube_events raycluster-controller [type=Normal reason=CreatedWorkerPod object=RayCluster/default/raycluster-kuberay object_kind=RayCluster object_name=raycluster-kuberay namespace=default count=1 age=43m first_seen_age_secs=2580] | Created worker Pod default/
object RayCluster/default/raycluster-kuberay
"#,
    );
}

#[test]
fn pods_concatenated_oomkilled_crashloop_evicted() {
    check(
        PODS,
        r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample-raycluster-bwrp8-head-x7k2p] | Name:             rayservice-sample-raycluster-bwrp8-head-x7k2p
2 1 - info unknown  [path=metadata.namespace value=default] | Namespace:        default
3 1 - info unknown  [path=priority value=0] | Priority:         0
4 1 - info unknown  [path=serviceaccount value=default] | Service Account:  default
5 1 - info unknown  [path=node value=gke-ray-pool-1-5d2a/10.128.0.9] | Node:             gke-ray-pool-1-5d2a/10.128.0.9
6 1 - info unknown  [path=starttime value=Tue, 02 Jul 2024 22:16:22 +0800 time_utc=2024-07-02T14:16:22.000Z] | Start Time:       Tue, 02 Jul 2024 22:16:22 +0800
7 1 - info unknown  [path=metadata.labels.ray.io/cluster value=rayservice-sample-raycluster-bwrp8] | Labels:           ray.io/cluster=rayservice-sample-raycluster-bwrp8
8 1 - info unknown  [path=metadata.labels.ray.io/node-type value=head] | ray.io/node-type=head
9 1 - info unknown  [path=metadata.annotations value=<none>] | Annotations:      <none>
10 1 - info unknown  [path=status value=Running] | Status:           Running
11 1 - info unknown  [path=ip value=10.244.1.15] | IP:               10.244.1.15
12 1 - info unknown  [path=controlledby value=RayCluster/rayservice-sample-raycluster-bwrp8] | Controlled By:    RayCluster/rayservice-sample-raycluster-bwrp8
13 1 - info unknown  [path=initcontainers] | Init Containers:
14 1 - info unknown  [path=initcontainers.wait-gcs-ready] | wait-gcs-ready:
15 1 - info unknown  [path=initcontainers.wait-gcs-ready.image value=rayproject/ray:2.41.0] | Image:          rayproject/ray:2.41.0
16 1 - info unknown  [path=initcontainers.wait-gcs-ready.state value=Terminated] | State:          Terminated
17 1 - info unknown  [path=initcontainers.wait-gcs-ready.state.reason value=Completed] | Reason:       Completed
18 1 - info unknown  [path=initcontainers.wait-gcs-ready.state.exitcode value=0] | Exit Code:    0
19 1 - info unknown  [path=initcontainers.wait-gcs-ready.ready value=True] | Ready:          True
20 1 - info unknown  [path=initcontainers.wait-gcs-ready.restartcount value=0] | Restart Count:  0
21 1 - info unknown  [path=containers] | Containers:
22 1 - info unknown  [path=containers.ray-head] | ray-head:
23 1 - info unknown  [path=containers.ray-head.image value=rayproject/ray:2.41.0] | Image:          rayproject/ray:2.41.0
24 1 - info unknown  [path=containers.ray-head.ports value=6379/TCP, 8265/TCP, 10001/TCP] | Ports:          6379/TCP, 8265/TCP, 10001/TCP
25 1 - info unknown  [path=containers.ray-head.state value=Waiting] | State:          Waiting
26 1 - info unknown  [path=containers.ray-head.state.reason value=CrashLoopBackOff] | Reason:       CrashLoopBackOff
27 1 2024-07-02T14:24:13.000Z info unknown  [path=containers.ray-head.laststate value=Terminated] | Last State:     Terminated
28 1 2024-07-02T14:24:13.000Z info unknown  [path=containers.ray-head.laststate.reason value=OOMKilled] | Reason:       OOMKilled
29 4 2024-07-02T14:24:13.000Z info unknown  [path=containers.ray-head.laststate.message value=Some Ray subprocesses exited unexpectedly:⏎  raylet [exit code=1]⏎Remaining processes will be killed.] | Message:      Some Ray subprocesses exited unexpectedly:⏎  raylet [exit code=1]⏎Remaining processes will be killed.
33 1 2024-07-02T14:24:13.000Z info unknown  [path=containers.ray-head.laststate.exitcode value=137] | Exit Code:    137
34 1 2024-07-02T14:24:13.000Z info unknown  [path=containers.ray-head.laststate.started value=Tue, 02 Jul 2024 22:20:01 +0800 time_utc=2024-07-02T14:20:01.000Z] | Started:      Tue, 02 Jul 2024 22:20:01 +0800
35 1 2024-07-02T14:24:13.000Z info unknown  [path=containers.ray-head.laststate.finished value=Tue, 02 Jul 2024 22:24:13 +0800 time_utc=2024-07-02T14:24:13.000Z] | Finished:     Tue, 02 Jul 2024 22:24:13 +0800
36 1 - info unknown  [path=containers.ray-head.ready value=False] | Ready:          False
37 1 - info unknown  [path=containers.ray-head.restartcount value=5] | Restart Count:  5
38 1 - info unknown  [path=containers.ray-head.limits] | Limits:
39 1 - info unknown  [path=containers.ray-head.limits.memory value=2Gi] | memory:  2Gi
40 1 - info unknown  [path=containers.ray-head.liveness value=exec [bash -c wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success && wget --tries 1 -T 2 -q -O- http://localhost:8265/api/gcs_healthz | grep success] delay=30s timeout=5s period=5s #success=1 #failure=120] | Liveness:   exec [bash -c wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success && wget --tries 1 -T 2 -q -O- http://localhost:8265/api/gcs_healthz | grep success] delay=30s timeout=5s period=5s #success=1 #failure=120
41 1 - info unknown  [path=containers.ray-head.environment value=<none>] | Environment:  <none>
42 2 - info unknown  [path=conditions] | Conditions:⏎Type              Status
44 1 - info unknown  [path=conditions[Initialized] value=True col.type=Initialized col.status=True] | Initialized       True
45 1 - info unknown  [path=conditions[Ready] value=False col.type=Ready col.status=False] | Ready             False
46 1 - info unknown  [path=conditions[ContainersReady] value=False col.type=ContainersReady col.status=False] | ContainersReady   False
47 1 - info unknown  [path=conditions[PodScheduled] value=True col.type=PodScheduled col.status=True] | PodScheduled      True
48 1 - info unknown  [path=qosclass value=Burstable] | QoS Class:        Burstable
49 3 - info unknown  [path=events] | Events:⏎Type     Reason     Age                   From               Message⏎----     ------     ----                  ----               -------
52 1 age=1320 info kube_events default-scheduler [type=Normal reason=Scheduled object=Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p object_kind=Pod object_name=rayservice-sample-raycluster-bwrp8-head-x7k2p namespace=default count=1 age=22m first_seen_age_secs=1320] | Successfully assigned default/rayservice-sample-raycluster-bwrp8-head-x7k2p to gke-ray-pool-1-5d2a
53 1 age=146 warning kube_events kubelet [type=Warning reason=BackOff object=Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p object_kind=Pod object_name=rayservice-sample-raycluster-bwrp8-head-x7k2p namespace=default count=87 age=2m26s (x87 over 20m) first_seen_age_secs=1200 field_path=spec.containers{ray-head}] | spec.containers{ray-head}: Back-off restarting failed container ray-head in pod rayservice-sample-raycluster-bwrp8-head-x7k2p_default(3f1c)
54 2 - info kube_events kubelet [type=Normal reason=Killing object=Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p object_kind=Pod object_name=rayservice-sample-raycluster-bwrp8-head-x7k2p namespace=default count=1 age=<unknown> source=kubelet, node-1] | Stopping container ray-head
56 1 - info unknown  [path=metadata.name value=rayservice-sample-raycluster-bwrp8-worker-small-zt9q4] | Name:                      rayservice-sample-raycluster-bwrp8-worker-small-zt9q4
57 1 - info unknown  [path=metadata.namespace value=default] | Namespace:                 default
58 1 - info unknown  [path=status value=Terminating (lasts 3m)] | Status:                    Terminating (lasts 3m)
59 1 - info unknown  [path=terminationgraceperiod value=30s] | Termination Grace Period:  30s
60 1 - info unknown  [path=reason value=Evicted] | Reason:                    Evicted
61 1 - info unknown  [path=message value=The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi.] | Message:                   The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi.
62 1 - info unknown  [path=ip value=] | IP:
63 1 - info unknown  [path=containers] | Containers:
64 1 - info unknown  [path=containers.ray-worker] | ray-worker:
65 1 - info unknown  [path=containers.ray-worker.state value=Terminated] | State:          Terminated
66 1 - info unknown  [path=containers.ray-worker.state.reason value=ContainerStatusUnknown] | Reason:       ContainerStatusUnknown
67 1 - info unknown  [path=containers.ray-worker.state.exitcode value=137] | Exit Code:    137
68 1 - info unknown  [path=qosclass value=BestEffort] | QoS Class:                 BestEffort
69 1 - info unknown  [path=tolerations[0] value=node.kubernetes.io/not-ready:NoExecute op=Exists for 300s] | Tolerations:               node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
70 1 - info unknown  [path=tolerations[1] value=node.kubernetes.io/unreachable:NoExecute op=Exists for 300s] | node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
71 1 - info unknown  [path=events value=<none>] | Events:                    <none>
object Pod/default/rayservice-sample-raycluster-bwrp8-head-x7k2p
object Pod/default/rayservice-sample-raycluster-bwrp8-worker-small-zt9q4
"#,
    );
}

#[test]
fn node_tables() {
    check(
        NODE,
        r#"
1 1 - info unknown  [path=metadata.name value=gke-ray-pool-2-03899cad-ccwh] | Name:               gke-ray-pool-2-03899cad-ccwh
2 1 - info unknown  [path=roles value=<none>] | Roles:              <none>
3 1 - info unknown  [path=metadata.labels.cloud.google.com/gke-nodepool value=ray-pool-2] | Labels:             cloud.google.com/gke-nodepool=ray-pool-2
4 1 - info unknown  [path=metadata.labels.kubernetes.io/hostname value=gke-ray-pool-2-03899cad-ccwh] | kubernetes.io/hostname=gke-ray-pool-2-03899cad-ccwh
5 1 - info unknown  [path=metadata.annotations.node.alpha.kubernetes.io/ttl value=0] | Annotations:        node.alpha.kubernetes.io/ttl: 0
6 1 - info unknown  [path=creationtimestamp value=Fri, 07 Jun 2024 15:02:11 +0000 time_utc=2024-06-07T15:02:11.000Z] | CreationTimestamp:  Fri, 07 Jun 2024 15:02:11 +0000
7 1 - info unknown  [path=taints[0] value=node.kubernetes.io/not-ready:NoSchedule] | Taints:             node.kubernetes.io/not-ready:NoSchedule
8 1 - info unknown  [path=taints[1] value=node.kubernetes.io/unreachable:NoExecute] | node.kubernetes.io/unreachable:NoExecute
9 1 - info unknown  [path=unschedulable value=false] | Unschedulable:      false
10 1 - info unknown  [path=lease] | Lease:
11 1 - info unknown  [path=lease.holderidentity value=gke-ray-pool-2-03899cad-ccwh] | HolderIdentity:  gke-ray-pool-2-03899cad-ccwh
12 1 - info unknown  [path=lease.renewtime value=Fri, 07 Jun 2024 21:10:03 +0000 time_utc=2024-06-07T21:10:03.000Z] | RenewTime:       Fri, 07 Jun 2024 21:10:03 +0000
13 3 - info unknown  [path=conditions] | Conditions:⏎Type             Status   LastHeartbeatTime                 LastTransitionTime                Reason                    Message⏎----             ------   -----------------                 ------------------                ------                    -------
16 1 2024-06-07T21:12:45.000Z info unknown  [path=conditions[MemoryPressure] value=Unknown col.type=MemoryPressure col.status=Unknown col.lastheartbeattime=Fri, 07 Jun 2024 21:10:03 +0000 col.lasttransitiontime=Fri, 07 Jun 2024 21:12:45 +0000 col.reason=NodeStatusUnknown col.message=Kubelet stopped posting node status.] | MemoryPressure   Unknown  Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:12:45 +0000   NodeStatusUnknown         Kubelet stopped posting node status.
17 1 2024-06-07T21:09:40.000Z info unknown  [path=conditions[Ready] value=False col.type=Ready col.status=False col.lastheartbeattime=Fri, 07 Jun 2024 21:10:03 +0000 col.lasttransitiontime=Fri, 07 Jun 2024 21:09:40 +0000 col.reason=KubeletNotReady col.message=container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized] | Ready            False    Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:09:40 +0000   KubeletNotReady           container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
18 1 - info unknown  [path=addresses] | Addresses:
19 1 - info unknown  [path=addresses.internalip value=10.128.0.13] | InternalIP:  10.128.0.13
20 1 - info unknown  [path=addresses.hostname value=gke-ray-pool-2-03899cad-ccwh] | Hostname:    gke-ray-pool-2-03899cad-ccwh
21 1 - info unknown  [path=capacity] | Capacity:
22 1 - info unknown  [path=capacity.cpu value=8] | cpu:                8
23 1 - info unknown  [path=capacity.memory value=32880784Ki] | memory:             32880784Ki
24 1 - info unknown  [path=capacity.pods value=110] | pods:               110
25 1 - info unknown  [path=allocatable] | Allocatable:
26 1 - info unknown  [path=allocatable.cpu value=7910m] | cpu:                7910m
27 1 - info unknown  [path=allocatable.memory value=29094544Ki] | memory:             29094544Ki
28 1 - info unknown  [path=systeminfo] | System Info:
29 1 - info unknown  [path=systeminfo.kernelversion value=6.1.75+] | Kernel Version:             6.1.75+
30 1 - info unknown  [path=systeminfo.kubeletversion value=v1.29.4-gke.1043002] | Kubelet Version:            v1.29.4-gke.1043002
31 1 - info unknown  [path=podcidr value=10.244.3.0/24] | PodCIDR:                      10.244.3.0/24
32 3 - info unknown  [path=non-terminatedpods value=(2 in total)] | Non-terminated Pods:          (2 in total)⏎Namespace                   Name                                                          CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age⏎---------                   ----                                                          ------------  ----------  ---------------  -------------  ---
35 1 - info unknown  [path=non-terminatedpods[default/rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv] value=rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv col.namespace=default col.name=rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv col.cpurequests=4 (50%) col.cpulimits=4 (50%) col.memoryrequests=8Gi (28%) col.memorylimits=8Gi (28%) col.age=3h2m] | default                     rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv   4 (50%)       4 (50%)     8Gi (28%)        8Gi (28%)      3h2m
36 1 - info unknown  [path=non-terminatedpods[kube-system/kube-proxy-gke-ray-pool-2-03899cad-ccwh] value=kube-proxy-gke-ray-pool-2-03899cad-ccwh col.namespace=kube-system col.name=kube-proxy-gke-ray-pool-2-03899cad-ccwh col.cpurequests=100m (1%) col.cpulimits=0 (0%) col.memoryrequests=0 (0%) col.memorylimits=0 (0%) col.age=6h8m] | kube-system                 kube-proxy-gke-ray-pool-2-03899cad-ccwh                       100m (1%)     0 (0%)      0 (0%)           0 (0%)         6h8m
37 4 - info unknown  [path=allocatedresources] | Allocated resources:⏎(Total limits may be over 100 percent, i.e., overcommitted.)⏎Resource           Requests     Limits⏎--------           --------     ------
41 1 - info unknown  [path=allocatedresources[cpu] value=4100m (51%) col.resource=cpu col.requests=4100m (51%) col.limits=4 (50%)] | cpu                4100m (51%)  4 (50%)
42 1 - info unknown  [path=allocatedresources[memory] value=8Gi (28%) col.resource=memory col.requests=8Gi (28%) col.limits=8Gi (28%)] | memory             8Gi (28%)    8Gi (28%)
43 3 - info unknown  [path=events] | Events:⏎Type    Reason        Age  From             Message⏎----    ------        ---  ----             -------
46 1 age=540 info kube_events node-controller [type=Normal reason=NodeNotReady object=Node/gke-ray-pool-2-03899cad-ccwh object_kind=Node object_name=gke-ray-pool-2-03899cad-ccwh count=1 age=9m first_seen_age_secs=540] | Node gke-ray-pool-2-03899cad-ccwh status is now: NodeNotReady
object Node/gke-ray-pool-2-03899cad-ccwh
"#,
    );
}

#[test]
fn events_section_shapes() {
    check(
            "Name:  x
Events:
  Type     Reason            Age                  From               Message
  ----     ------            ----                 ----               -------
  Warning  FailedScheduling  2m26s (x5 over 22m)  default-scheduler  0/3 nodes are available: 3 Insufficient cpu
  Normal   Pulled            <invalid>            kubelet            Container image \"rayproject/ray:2.9.3\" already present on machine",
            r#"
1 1 - info unknown  [path=metadata.name value=x] | Name:  x
2 3 - info unknown  [path=events] | Events:⏎Type     Reason            Age                  From               Message⏎----     ------            ----                 ----               -------
5 1 age=146 warning kube_events default-scheduler [type=Warning reason=FailedScheduling object_name=x count=5 age=2m26s (x5 over 22m) first_seen_age_secs=1320] | 0/3 nodes are available: 3 Insufficient cpu
6 1 - info kube_events kubelet [type=Normal reason=Pulled object_name=x count=1 age=<invalid>] | Container image "rayproject/ray:2.9.3" already present on machine
"#,
        );
    check(
        "Name:  x\nEvents:  <none>\n",
        r#"
1 1 - info unknown  [path=metadata.name value=x] | Name:  x
2 1 - info unknown  [path=events value=<none>] | Events:  <none>
"#,
    );
}

#[test]
fn long_annotation_below_its_key() {
    check(
        r#"Name:         rayservice-sample
Annotations:  kubectl.kubernetes.io/last-applied-configuration:
                {"apiVersion":"ray.io/v1","kind":"RayService","metadata":{"annotations":{},"name":"rayservice-sample"}}
              ray.io/initializing-timeout: 10m
API Version:  ray.io/v1
"#,
        r#"
1 1 - info unknown  [path=metadata.name value=rayservice-sample] | Name:         rayservice-sample
2 2 - info unknown  [path=metadata.annotations.kubectl.kubernetes.io/last-applied-configuration value={"apiVersion":"ray.io/v1","kind":"RayService","metadata":{"annotations":{},"name":"rayservice-sample"}}] | Annotations:  kubectl.kubernetes.io/last-applied-configuration:⏎                {"apiVersion":"ray.io/v1","kind":"RayService","metadata":{"annotations":{},"name":"rayservice-sample"}}
4 1 - info unknown  [path=metadata.annotations.ray.io/initializing-timeout value=10m] | ray.io/initializing-timeout: 10m
5 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
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
        "\u{0}\u{1}garbage: \u{2}\n\u{7f}",
        r#"
1 2 - info unknown  [path=··garbage value=·⏎·] | ··garbage: ·⏎·
"#,
    );
    check(
        "Name:  a\r\nStatus:\r\n  State:  ready\r\n",
        r#"
1 1 - info unknown  [path=metadata.name value=a] | Name:  a
2 1 - info unknown  [path=status] | Status:
3 1 - info unknown  [path=status.state value=ready] | State:  ready
"#,
    );
    check(
        "not a describe\n  at all\nName:\n",
        r#"
1 1 - info unknown  [] | not a describe
2 1 - info unknown  [] | at all
3 1 - info unknown  [path=metadata.name value=] | Name:
unparsed=2
"#,
    );
    // Truncated in the middle of a table and of a multi-line value.
    check(
        "Name:  a\nKind:  RayService\nStatus:\n  Message:  line one\nline two",
        r#"
1 1 - info unknown  [path=metadata.name value=a] | Name:  a
2 1 - info unknown  [path=kind value=RayService] | Kind:  RayService
3 1 - info unknown  [path=status] | Status:
4 2 - info unknown  [path=status.message value=line one⏎line two] | Message:  line one⏎line two
object RayService/a
"#,
    );
    check(
        "Name:  a\nConditions:\n  Type  Status\n  Rea",
        r#"
1 1 - info unknown  [path=metadata.name value=a] | Name:  a
2 2 - info unknown  [path=conditions] | Conditions:⏎Type  Status
4 1 - info unknown  [path=conditions[Rea] value= col.type=Rea col.status=] | Rea
"#,
    );
    let mut out = ParseOutput::default();
    parse(b"Name:  \xff\xfe\nStatus:  \xc3\n", &mut out);
    assert_eq!(out.events.len(), 2);
    let giant = format!(
        "Name:  a\nKind:  X\nSpec:\n  Config:  {}\n{}",
        "y".repeat(100_000),
        "z\n".repeat(100_000)
    );
    let mut out = ParseOutput::default();
    parse(giant.as_bytes(), &mut out);
    assert!(out.events.iter().all(|e| e.message.len() < 70_000));
    assert_eq!(out.events.iter().map(|e| e.n_lines).sum::<u32>(), 100_004);
    let deep: String = (0..500)
        .map(|d| format!("{}K{d}:\n", "  ".repeat(d)))
        .collect();
    let mut out = ParseOutput::default();
    parse(deep.as_bytes(), &mut out);
    assert_eq!(out.events.len(), 500);
}
/// Every prefix of every fixture (cut anywhere, even inside a UTF-8 sequence) parses
/// without panicking and keeps each physical line in exactly one event.
#[test]
fn truncated_fixtures_keep_every_line() {
    for fixture in [
        RAYSERVICE_V1_3,
        RAYSERVICE_V0_6,
        RAYSERVICE_GENERATED,
        RAYCLUSTER_V1_3,
        PODS,
        NODE,
    ] {
        let bytes = fixture.as_bytes();
        for cut in (0..bytes.len()).step_by(3) {
            let input = bytes.get(..cut).unwrap_or(bytes);
            let mut out = ParseOutput::default();
            parse(input, &mut out);
            let n_physical = split_lines(input).count() as u32;
            let n_counted: u32 = out.events.iter().map(|e| e.n_lines).sum();
            assert_eq!(n_counted, n_physical, "cut at {cut}");
        }
    }
}

/// Issue 31: a RayJob's status takes its `End Time` (the generic describer prints RFC 3339
/// times), a running container's state its `Started`; an init container waiting has no time
/// of its own and borrows none. Real lines.
#[test]
fn rayjob_status_and_container_states_take_their_own_time() {
    check(
        r#"Name:         daily-report
Namespace:    batch
API Version:  ray.io/v1
Kind:         RayJob
Status:
  End Time:               2025-02-03T06:04:46Z
  Job Deployment Status:  Complete
  Job Status:             SUCCEEDED
  Start Time:             2025-02-03T06:00:00Z
Events:                   <none>
Name:             forecast-head-p7w2c
Namespace:        analytics
Start Time:       Wed, 15 Jan 2025 14:00:06 +0000
Status:           Running
Init Containers:
  wait-gcs-ready:
    State:          Waiting
      Reason:       PodInitializing
Containers:
  ray-head:
    State:          Running
      Started:      Wed, 15 Jan 2025 14:22:35 +0000
    Last State:     Terminated
      Reason:       Error
      Exit Code:    143
      Started:      Wed, 15 Jan 2025 14:11:26 +0000
      Finished:     Wed, 15 Jan 2025 14:22:03 +0000
    Ready:          False
QoS Class:        Guaranteed
"#,
        r#"
1 1 - info unknown  [path=metadata.name value=daily-report] | Name:         daily-report
2 1 - info unknown  [path=metadata.namespace value=batch] | Namespace:    batch
3 1 - info unknown  [path=apiversion value=ray.io/v1] | API Version:  ray.io/v1
4 1 - info unknown  [path=kind value=RayJob] | Kind:         RayJob
5 1 2025-02-03T06:04:46.000Z info unknown  [path=status] | Status:
6 1 2025-02-03T06:04:46.000Z info unknown  [path=status.endtime value=2025-02-03T06:04:46Z] | End Time:               2025-02-03T06:04:46Z
7 1 2025-02-03T06:04:46.000Z info unknown  [path=status.jobdeploymentstatus value=Complete] | Job Deployment Status:  Complete
8 1 2025-02-03T06:04:46.000Z info unknown  [path=status.jobstatus value=SUCCEEDED] | Job Status:             SUCCEEDED
9 1 2025-02-03T06:04:46.000Z info unknown  [path=status.starttime value=2025-02-03T06:00:00Z] | Start Time:             2025-02-03T06:00:00Z
10 1 - info unknown  [path=events value=<none>] | Events:                   <none>
11 1 - info unknown  [path=metadata.name value=forecast-head-p7w2c] | Name:             forecast-head-p7w2c
12 1 - info unknown  [path=metadata.namespace value=analytics] | Namespace:        analytics
13 1 - info unknown  [path=starttime value=Wed, 15 Jan 2025 14:00:06 +0000 time_utc=2025-01-15T14:00:06.000Z] | Start Time:       Wed, 15 Jan 2025 14:00:06 +0000
14 1 - info unknown  [path=status value=Running] | Status:           Running
15 1 - info unknown  [path=initcontainers] | Init Containers:
16 1 - info unknown  [path=initcontainers.wait-gcs-ready] | wait-gcs-ready:
17 1 - info unknown  [path=initcontainers.wait-gcs-ready.state value=Waiting] | State:          Waiting
18 1 - info unknown  [path=initcontainers.wait-gcs-ready.state.reason value=PodInitializing] | Reason:       PodInitializing
19 1 - info unknown  [path=containers] | Containers:
20 1 - info unknown  [path=containers.ray-head] | ray-head:
21 1 2025-01-15T14:22:35.000Z info unknown  [path=containers.ray-head.state value=Running] | State:          Running
22 1 2025-01-15T14:22:35.000Z info unknown  [path=containers.ray-head.state.started value=Wed, 15 Jan 2025 14:22:35 +0000 time_utc=2025-01-15T14:22:35.000Z] | Started:      Wed, 15 Jan 2025 14:22:35 +0000
23 1 2025-01-15T14:22:03.000Z info unknown  [path=containers.ray-head.laststate value=Terminated] | Last State:     Terminated
24 1 2025-01-15T14:22:03.000Z info unknown  [path=containers.ray-head.laststate.reason value=Error] | Reason:       Error
25 1 2025-01-15T14:22:03.000Z info unknown  [path=containers.ray-head.laststate.exitcode value=143] | Exit Code:    143
26 1 2025-01-15T14:22:03.000Z info unknown  [path=containers.ray-head.laststate.started value=Wed, 15 Jan 2025 14:11:26 +0000 time_utc=2025-01-15T14:11:26.000Z] | Started:      Wed, 15 Jan 2025 14:11:26 +0000
27 1 2025-01-15T14:22:03.000Z info unknown  [path=containers.ray-head.laststate.finished value=Wed, 15 Jan 2025 14:22:03 +0000 time_utc=2025-01-15T14:22:03.000Z] | Finished:     Wed, 15 Jan 2025 14:22:03 +0000
28 1 - info unknown  [path=containers.ray-head.ready value=False] | Ready:          False
29 1 - info unknown  [path=qosclass value=Guaranteed] | QoS Class:        Guaranteed
object Pod/analytics/forecast-head-p7w2c
object RayJob/batch/daily-report
"#,
    );
}
