//! Test fixtures: whole `kubectl describe` outputs, as `tests.rs` parses them: three
//! RayServices in different shapes, a RayCluster, several Pods one after another, and a Node
//! with its tables.

pub(super) const RAYSERVICE_V1_3: &str = r#"Name:         rayservice-sample
Namespace:    default
Labels:       <none>
Annotations:  ray.io/initializing-timeout: 5m
API Version:  ray.io/v1
Kind:         RayService
Metadata:
  Creation Timestamp:  2025-01-10T09:00:00Z
  Generation:          1
  Resource Version:    12345
  UID:                 0b8e6c2a-1111-2222-3333-444455556666
Spec:
  Ray Cluster Config:
    Head Group Spec:
      Ray Start Params:
        Dashboard - Host:  0.0.0.0
    Ray Version:           2.41.0
  Serve Config V2:         applications:
- name: fruit_app
  import_path: fruit.deployment_graph
  route_prefix: /fruit
  runtime_env:
    working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da.zip"
  deployments:
  - name: MangoStand
    num_replicas: 1

Status:
  Active Service Status:
    Application Statuses:
      fruit_app:
        Message:  Deploying app 'fruit_app' failed with exception:
Traceback (most recent call last):
  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/application_state.py", line 1027, in build_serve_application
    app = call_app_builder_with_args_if_necessary(import_attr(import_path), args)
ModuleNotFoundError: No module named 'fruit'

        Serve Deployment Statuses:
          Mango Stand:
            Message:  Deployment 'MangoStand' in application 'fruit_app' has 1 replicas that have taken more than 30s to be scheduled.
            Status:   UPDATING
        Status:       DEPLOY_FAILED
      math_app:
        Status:            RUNNING
    Ray Cluster Name:  rayservice-sample-raycluster-bwrp8
  Conditions:
    Last Transition Time:  2025-01-10T09:00:05Z
    Message:               RayService is initializing and will be marked as failed if it is not ready within 5m0s
    Observed Generation:   1
    Reason:                Initializing
    Status:                False
    Type:                  Ready
    Last Transition Time:  2025-01-10T09:00:05Z
    Message:               Active Ray cluster exists and no pending Ray cluster
    Observed Generation:   1
    Reason:                NoPendingCluster
    Status:                False
    Type:                  UpgradeInProgress
  Observed Generation:     1
  Pending Service Status:
  Service Status:          
Events:
  Type     Reason                           Age                  From                   Message
  ----     ------                           ----                 ----                   -------
  Normal   CreatedRayCluster                5m                   rayservice-controller  Created RayCluster default/rayservice-sample-raycluster-bwrp8
  Warning  FailedToUpdateServeApplications  2m10s (x12 over 4m)  rayservice-controller  Failed to update serve applications to the RayCluster default/rayservice-sample-raycluster-bwrp8: Put "http://rayservice-sample-raycluster-bwrp8-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.96.1.2:8265: connect: connection refused
"#;

pub(super) const RAYSERVICE_V0_6: &str = r#"Name:         rayservice-sample
Namespace:    default
Labels:       <none>
Annotations:  <none>
API Version:  ray.io/v1alpha1
Kind:         RayService
Status:
  Active Service Status:
    Application Statuses:
      fruit_app:
        Health Last Update Time:  2023-07-11T22:21:24Z
        Last Update Time:         2023-07-11T22:21:24Z
        Serve Deployment Statuses:
          fruit_app_DAGDriver:
            Health Last Update Time:  2023-07-11T22:21:24Z
            Last Update Time:         2023-07-11T22:21:24Z
            Status:                   HEALTHY
          fruit_app_FruitMarket:
            Health Last Update Time:  2023-07-11T22:21:24Z
            Last Update Time:         2023-07-11T22:21:24Z
            Message:                  The Deployment failed to start 3 times in a row. This may be due to a problem with its constructor or initial health check failing. See controller logs for details. Error:
ray::ServeReplica:fruit_app_FruitMarket.initialize_and_get_metadata() (pid=2541, ip=10.244.0.7, actor_id=9ba0e3e5d7c1)
  File "/home/ray/anaconda3/lib/python3.8/concurrent/futures/_base.py", line 437, in result
RuntimeError: boom
            Status:                   UNHEALTHY
        Status:                       RUNNING
    Dashboard Status:
      Health Last Update Time:  2023-07-11T22:21:24Z
      Is Healthy:               true
      Last Update Time:         2023-07-11T22:21:24Z
    Ray Cluster Name:           rayservice-sample-raycluster-6mj28
  Service Status:               Running
Events:
  Type    Reason   Age                    From                   Message
  ----    ------   ----                   ----                   -------
  Normal  Running  2m15s (x29791 over 16h)  rayservice-controller  The Serve applicaton is now running and healthy.
"#;

pub(super) const RAYSERVICE_GENERATED: &str = r#"Name:         rayservice-sample
Namespace:    default
API Version:  ray.io/v1
Kind:         RayService
Spec:
  Service Unhealthy Second Threshold:      900
  Deployment Unhealthy Second Threshold:   300
  Serve Config V2:                         applications:
  - name: fruit_app
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    runtime_env:
      working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da38796123d9f9ffff59bab2792a043e95.zip"
  - name: math_app
    import_path: conditional_dag.serve_dag
    route_prefix: /calc
Status:
  Active Service Status:
    Application Statuses:
      fruit_app:
        Health Last Update Time:  2024-06-07T21:16:56Z
        Status:                   DEPLOYING
      math_app:
        Health Last Update Time:  2024-06-07T21:16:56Z
        Status:                   RUNNING
    Ray Cluster Name:             rayservice-sample-raycluster-nrqvj
  Pending Service Status:
    Ray Cluster Name:             rayservice-sample-raycluster-hnz7k
  Service Status:                 Restarting
Events:
  Type    Reason             Age  From                   Message
  ----    ------             ---  ----                   -------
  Normal  CreatedRayCluster  31m  rayservice-controller  Created RayCluster default/rayservice-sample-raycluster-hnz7k
"#;

pub(super) const RAYCLUSTER_V1_3: &str = r#"Name:         raycluster-kuberay
Namespace:    default
Labels:       app.kubernetes.io/instance=raycluster
Annotations:  <none>
API Version:  ray.io/v1
Kind:         RayCluster
Spec:
  Head Group Spec:
    Template:
      Spec:
        Containers:
          Image:  rayproject/ray:2.41.0
          Name:   ray-head
          Ports:
            Container Port:  6379
            Name:            gcs-server
            Protocol:        TCP
            Container Port:  8265
            Name:            dashboard
            Protocol:        TCP
  Suspend:  true
Status:
  Conditions:
    Last Transition Time:   2026-03-03T03:00:25Z
    Message:                RayCluster Pods are being provisioned for first time
    Reason:                 RayClusterPodsProvisioning
    Status:                 False
    Type:                   RayClusterProvisioned
    Last Transition Time:   2026-03-03T03:00:25Z
    Message:
    Reason:                 RayClusterSuspended
    Status:                 False
    Type:                   RayClusterSuspended
  Desired CPU:              0
  State:                    suspended
Events:
  Type    Reason            Age   From                   Message
  ----    ------            ----  ----                   -------
  Normal  CreatedService    43m   raycluster-controller  Created service default/raycluster-kuberay-head-svc
  Normal  CreatedHeadPod    43m   raycluster-controller  Created head Pod default/raycluster-kuberay-head-l7v7q
  Normal  CreatedWorkerPod  43m   raycluster-controller  Created worker Pod default/
"#;

pub(super) const PODS: &str = r#"Name:             rayservice-sample-raycluster-bwrp8-head-x7k2p
Namespace:        default
Priority:         0
Service Account:  default
Node:             gke-ray-pool-1-5d2a/10.128.0.9
Start Time:       Tue, 02 Jul 2024 22:16:22 +0800
Labels:           ray.io/cluster=rayservice-sample-raycluster-bwrp8
                  ray.io/node-type=head
Annotations:      <none>
Status:           Running
IP:               10.244.1.15
Controlled By:    RayCluster/rayservice-sample-raycluster-bwrp8
Init Containers:
  wait-gcs-ready:
    Image:          rayproject/ray:2.41.0
    State:          Terminated
      Reason:       Completed
      Exit Code:    0
    Ready:          True
    Restart Count:  0
Containers:
  ray-head:
    Image:          rayproject/ray:2.41.0
    Ports:          6379/TCP, 8265/TCP, 10001/TCP
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       OOMKilled
      Message:      Some Ray subprocesses exited unexpectedly:
  raylet [exit code=1]
Remaining processes will be killed.

      Exit Code:    137
      Started:      Tue, 02 Jul 2024 22:20:01 +0800
      Finished:     Tue, 02 Jul 2024 22:24:13 +0800
    Ready:          False
    Restart Count:  5
    Limits:
      memory:  2Gi
    Liveness:   exec [bash -c wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success && wget --tries 1 -T 2 -q -O- http://localhost:8265/api/gcs_healthz | grep success] delay=30s timeout=5s period=5s #success=1 #failure=120
    Environment:  <none>
Conditions:
  Type              Status
  Initialized       True 
  Ready             False 
  ContainersReady   False 
  PodScheduled      True 
QoS Class:        Burstable
Events:
  Type     Reason     Age                   From               Message
  ----     ------     ----                  ----               -------
  Normal   Scheduled  22m                   default-scheduler  Successfully assigned default/rayservice-sample-raycluster-bwrp8-head-x7k2p to gke-ray-pool-1-5d2a
  Warning  BackOff    2m26s (x87 over 20m)  kubelet            spec.containers{ray-head}: Back-off restarting failed container ray-head in pod rayservice-sample-raycluster-bwrp8-head-x7k2p_default(3f1c)
  Normal   Killing    <unknown>             kubelet, node-1    Stopping container ray-head

Name:                      rayservice-sample-raycluster-bwrp8-worker-small-zt9q4
Namespace:                 default
Status:                    Terminating (lasts 3m)
Termination Grace Period:  30s
Reason:                    Evicted
Message:                   The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi.
IP:                        
Containers:
  ray-worker:
    State:          Terminated
      Reason:       ContainerStatusUnknown
      Exit Code:    137
QoS Class:                 BestEffort
Tolerations:               node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                           node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
Events:                    <none>
"#;

pub(super) const NODE: &str = r#"Name:               gke-ray-pool-2-03899cad-ccwh
Roles:              <none>
Labels:             cloud.google.com/gke-nodepool=ray-pool-2
                    kubernetes.io/hostname=gke-ray-pool-2-03899cad-ccwh
Annotations:        node.alpha.kubernetes.io/ttl: 0
CreationTimestamp:  Fri, 07 Jun 2024 15:02:11 +0000
Taints:             node.kubernetes.io/not-ready:NoSchedule
                    node.kubernetes.io/unreachable:NoExecute
Unschedulable:      false
Lease:
  HolderIdentity:  gke-ray-pool-2-03899cad-ccwh
  RenewTime:       Fri, 07 Jun 2024 21:10:03 +0000
Conditions:
  Type             Status   LastHeartbeatTime                 LastTransitionTime                Reason                    Message
  ----             ------   -----------------                 ------------------                ------                    -------
  MemoryPressure   Unknown  Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:12:45 +0000   NodeStatusUnknown         Kubelet stopped posting node status.
  Ready            False    Fri, 07 Jun 2024 21:10:03 +0000   Fri, 07 Jun 2024 21:09:40 +0000   KubeletNotReady           container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
Addresses:
  InternalIP:  10.128.0.13
  Hostname:    gke-ray-pool-2-03899cad-ccwh
Capacity:
  cpu:                8
  memory:             32880784Ki
  pods:               110
Allocatable:
  cpu:                7910m
  memory:             29094544Ki
System Info:
  Kernel Version:             6.1.75+
  Kubelet Version:            v1.29.4-gke.1043002
PodCIDR:                      10.244.3.0/24
Non-terminated Pods:          (2 in total)
  Namespace                   Name                                                          CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age
  ---------                   ----                                                          ------------  ----------  ---------------  -------------  ---
  default                     rayservice-sample-raycluster-nrqvj-small-group-worker-qw6wv   4 (50%)       4 (50%)     8Gi (28%)        8Gi (28%)      3h2m
  kube-system                 kube-proxy-gke-ray-pool-2-03899cad-ccwh                       100m (1%)     0 (0%)      0 (0%)           0 (0%)         6h8m
Allocated resources:
  (Total limits may be over 100 percent, i.e., overcommitted.)
  Resource           Requests     Limits
  --------           --------     ------
  cpu                4100m (51%)  4 (50%)
  memory             8Gi (28%)    8Gi (28%)
Events:
  Type    Reason        Age  From             Message
  ----    ------        ---  ----             -------
  Normal  NodeNotReady  9m   node-controller  Node gke-ray-pool-2-03899cad-ccwh status is now: NodeNotReady
"#;
