//! Test fixtures: whole objects as `tests.rs` parses them: a RayService in YAML, a `List`
//! holding an Event and a Pod, troubleshoot's pod list in JSON, and an `EventList` in JSON.

pub(super) const RAYSERVICE_YAML: &str = r#"apiVersion: ray.io/v1
kind: RayService
metadata:
  annotations:
    ray.io/initializing-timeout: 10m
  creationTimestamp: "2024-06-07T18:15:56Z"
  generation: 1
  managedFields:
  - apiVersion: ray.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {}
    manager: kubectl
  name: rayservice-sample
  namespace: default
spec:
  serveConfigV2: |
    applications:
      - name: fruit_app
        import_path: fruit.deployment_graph

      - name: math_app
  rayClusterConfig:
    headGroupSpec:
      rayStartParams:
        dashboard-host: 0.0.0.0   # comment
    workerGroupSpecs:
    - groupName: small-group
      replicas: 1
status:
  activeServiceStatus:
    applicationStatuses:
      fruit_app:
        message: 'Deploying app ''fruit_app'' failed with exception:

          Traceback (most recent call last):

          ModuleNotFoundError: No module named ''fruit'''
        serveDeploymentStatuses:
          FruitMarket:
            status: HEALTHY
        status: DEPLOY_FAILED
  conditions:
  - lastTransitionTime: "2024-06-07T18:16:00Z"
    message: "Serve applications\n  are failing"
    reason: InitializingTimeout
    status: "False"
    type: Ready
  - lastTransitionTime: "2024-06-07T18:16:00Z"
    message: ""
    reason: NoPendingCluster
    status: "False"
    type: UpgradeInProgress
  serviceStatus: ""
"#;

pub(super) const EVENT_AND_POD_LIST_YAML: &str = r#"apiVersion: v1
items:
- apiVersion: v1
  kind: Event
  metadata:
    name: rs-head.17d8f2a1
    namespace: default
  count: 5
  firstTimestamp: "2024-06-07T18:00:00Z"
  involvedObject:
    fieldPath: spec.containers{ray-head}
    kind: Pod
    name: rs-head
    namespace: default
  lastTimestamp: "2024-06-07T18:20:00Z"
  message: Back-off restarting failed container
  reason: BackOff
  source:
    component: kubelet
  type: Warning
- apiVersion: v1
  kind: Pod
  metadata:
    name: rs-head
    namespace: default
  status:
    phase: Running
kind: List
metadata:
  resourceVersion: ""
"#;

pub(super) const TROUBLESHOOT_PODS_JSON: &str = r#"{
  "kind": "PodList",
  "apiVersion": "v1",
  "metadata": {
    "resourceVersion": "91342"
  },
  "items": [
    {
      "metadata": {
        "name": "rs-worker-qw6wv",
        "namespace": "default",
        "labels": {
          "ray.io/cluster": "rs-raycluster-nrqvj"
        },
        "managedFields": [
          {
            "manager": "kuberay-operator",
            "fieldsV1": {"f:metadata": {}}
          }
        ]
      },
      "spec": {
        "containers": [],
        "nodeName": "gke-ray-pool-2-03899cad-ccwh"
      },
      "status": {
        "phase": "Running",
        "containerStatuses": [
          {
            "name": "ray-worker",
            "state": {
              "waiting": {
                "reason": "CrashLoopBackOff",
                "message": "back-off 5m0s restarting failed container=ray-worker pod=rs-worker-qw6wv_default(f25d)"
              }
            },
            "lastState": {
              "terminated": {
                "exitCode": 137,
                "reason": "OOMKilled",
                "startedAt": "2024-06-07T18:16:28Z"
              }
            },
            "ready": false,
            "restartCount": 5
          }
        ]
      }
    }
  ]
}
"#;

pub(super) const EVENT_LIST_JSON: &str = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "count": 293,
            "firstTimestamp": "2024-06-07T18:00:00Z",
            "involvedObject": {
                "apiVersion": "ray.io/v1",
                "kind": "RayService",
                "name": "rayservice-sample",
                "namespace": "default"
            },
            "kind": "Event",
            "lastTimestamp": "2024-06-07T21:10:00Z",
            "message": "Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-nrqvj: Put \"http://rayservice-sample-raycluster-nrqvj-head-svc.default.svc.cluster.local:8265/api/serve/applications/\": dial tcp 10.96.218.65:8265: connect: connection refused",
            "metadata": {
                "name": "rayservice-sample.17d8f2a1",
                "namespace": "default"
            },
            "reason": "FailedToUpdateServeApplications",
            "source": {
                "component": "rayservice-controller"
            },
            "type": "Warning"
        },
        {
            "apiVersion": "events.k8s.io/v1",
            "deprecatedFirstTimestamp": null,
            "eventTime": "2024-06-07T21:12:00.123456Z",
            "kind": "Event",
            "metadata": {"name": "rayservice-sample.17d8f2b9", "namespace": "default"},
            "note": "Created RayCluster default/rayservice-sample-raycluster-hnz7k",
            "reason": "CreatedRayCluster",
            "regarding": {"kind": "RayService", "name": "rayservice-sample", "namespace": "default"},
            "reportingController": "rayservice-controller",
            "series": {"count": 2, "lastObservedTime": "2024-06-07T21:15:00.000001Z"},
            "type": "Normal"
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
"#;
