#!/usr/bin/env python3
"""Lays real-run Ray logs out as a KubeRay History Server storage prefix (`corpus/hs-*.tar.gz`).

The KubeRay History Server's collector (a sidecar of every Ray pod, KubeRay `historyserver/`,
v1.7.0) uploads each node's Ray session logs to object storage; a support engineer gets a local
copy of that storage (`aws s3 cp --recursive s3://BUCKET/ROOT ./copy`). This script writes such
a copy from the `logs/` folder of real-run bundles (`corpus/run-<ver>-<scenario>.tar.gz`,
written by `scripts/realrun/realrun.py`), key for key as the collector names its objects:

    [ROOT/]cluster-history/raycluster/<namespace>/<cluster>/<session>/<node id>/logs/<file>
    [ROOT/]cluster-history/<rayjob|rayservice>/<namespace>/<owner>/<cluster>/<session>/<node id>/logs/<file>
    [ROOT/]cluster-metadata/raycluster/<namespace>_<cluster>/<session>            (empty)
    [ROOT/]cluster-metadata/<rayjob|rayservice>/<namespace>_<owner>_<cluster>/<session>  (empty)

(`pkg/storage/clusterlogs/clusterlogs.go` `Prefix`/`LogsDir`,
`pkg/storage/clustermetadata/clustermetadata.go` `EncodePath`,
`pkg/collector/logcollector/runtime/logcollector/collector.go` `processSessionLatestLogFile`:
each file of the session's `logs/` uploaded as it is, under its path relative to `logs/`.)

The session name and the node id are the run's own, read from its logs (the session folder
Ray names in them, and raylet.out's `NodeID`, which the collector uses in hex). The files are
copied byte for byte; only the run's `cli/` and Serve config, which the collector never
uploads, are left out. No dashboard endpoint snapshots (`fetched_endpoints/`) are written:
they are absent, as they are in storage when the collector could not fetch them.

Ray's events (`,EVENTS` after a spec): the file of what Ray's dashboard-agent aggregator
POSTed to the collector's `/v1/events` during the run (Ray 2.49+ with
`RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR`; one POST body, a JSON array of events, a
line). Each event is written as the collector writes it
(`pkg/collector/eventcollector/eventcollector.go` `PersistEvents`, `categorize`,
`buildEventStorageKey`): re-marshalled as Go's `json.Marshal` of a map does (keys sorted,
compact, `<` `>` `&` escaped, whole numbers without a fraction), one a line, in the order
posted, into one file a category, `node_events/` for `NODE_*` events and for events whose
payload names no job, `job_events/<job id in hex>/` for the others:

    <session>/<node id>/node_events/<node id>-<YYYY-MM-DD-HH>-<unixnano>.jsonl
    <session>/<node id>/job_events/<job id>/<node id>-<YYYY-MM-DD-HH>-<unixnano>.jsonl

the time that of the category's first event (the collector's file opens at its first write;
UTC, as in a pod), uncompressed (the collector's default).

Usage: scripts/historyserver_layout.py OUT.tar.gz TOP CLUSTER_SPEC...
  TOP           the top folder of the copy inside the archive
  CLUSTER_SPEC  RUN.tar.gz=KIND/NAMESPACE/[OWNER/]CLUSTER[,EVENTS], KIND raycluster, rayjob or
                rayservice, EVENTS a file of the aggregator's POST bodies (see above)

Example (the corpus):
  scripts/historyserver_layout.py corpus/hs-2.60.0-serve-constructor-error.tar.gz \\
      hs-2.60.0-serve-constructor-error \\
      corpus/run-2.60.0-serve-constructor-error.tar.gz=rayservice/ml-serving/model-serve/model-serve-k8vzq
  scripts/historyserver_layout.py corpus/hs-2.9.3-two-clusters.tar.gz hs-2.9.3-two-clusters \\
      corpus/run-2.9.3-healthy-serve.tar.gz=raycluster/default/echo-serve \\
      corpus/run-2.9.3-job-entrypoint-error.tar.gz=rayjob/batch/json-etl/json-etl-5xq7w
  scripts/historyserver_layout.py corpus/hs-2.60.0-events-actor-failures.tar.gz \\
      hs-2.60.0-events-actor-failures \\
      run-2.60.0-aggregator-actor-failures.tar.gz=raycluster/default/feature-etl,EVENTS
"""

import base64
import io
import json
import re
import sys
import tarfile
from datetime import datetime, timezone

SESSION = re.compile(rb"session_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_\d{6}_\d+")
NODE_ID = re.compile(rb"\bNode ?ID: ([0-9a-f]{56})\b", re.IGNORECASE)


def run_logs(run: str) -> tuple[dict[str, tuple[bytes, int]], str, str]:
    """The files under the run's `logs/` (relative path -> bytes, mtime), its session, its node."""
    files: dict[str, tuple[bytes, int]] = {}
    with tarfile.open(run, "r:gz") as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            parts = m.name.split("/")
            if len(parts) < 3 or parts[1] != "logs":
                continue
            f = tar.extractfile(m)
            if f is None:
                continue
            files["/".join(parts[2:])] = (f.read(), m.mtime)
    sessions: dict[bytes, int] = {}
    nodes: dict[bytes, int] = {}
    for data, _ in files.values():
        for s in SESSION.findall(data):
            sessions[s] = sessions.get(s, 0) + 1
    for name in ("raylet.out", "gcs_server.out"):
        if name in files:
            for n in NODE_ID.findall(files[name][0]):
                nodes[n] = nodes.get(n, 0) + 1
    if len(sessions) != 1 or len(nodes) != 1:
        sys.exit(f"{run}: expected one session and one node id, found {sessions} and {nodes}")
    return files, next(iter(sessions)).decode(), next(iter(nodes)).decode()


def keys(spec: str, session: str, node: str) -> tuple[str, str]:
    """The logs prefix and the metadata key of one cluster, as the collector names them."""
    parts = spec.split("/")
    kind = parts[0]
    if kind == "raycluster" and len(parts) == 3:
        _, ns, cluster = parts
        history = f"cluster-history/raycluster/{ns}/{cluster}"
        meta = f"cluster-metadata/raycluster/{ns}_{cluster}/{session}"
    elif kind in ("rayjob", "rayservice") and len(parts) == 4:
        _, ns, owner, cluster = parts
        history = f"cluster-history/{kind}/{ns}/{owner}/{cluster}"
        meta = f"cluster-metadata/{kind}/{ns}_{owner}_{cluster}/{session}"
    else:
        sys.exit(f"{spec}: expected KIND/NAMESPACE/[OWNER/]CLUSTER")
    return f"{history}/{session}/{node}/logs", meta


# Event types the collector files under `node_events/` (`nodeEventType`), and the payloads
# whose `jobId` files an event under `job_events/<job id>/` (`eventTypesWithJobID`).
NODE_EVENT_TYPES = ("NODE_LIFECYCLE_EVENT", "NODE_DEFINITION_EVENT")
PAYLOADS_WITH_JOB = (
    "driverJobDefinitionEvent",
    "driverJobLifecycleEvent",
    "taskDefinitionEvent",
    "taskLifecycleEvent",
    "taskProfileEvents",
    "actorTaskDefinitionEvent",
    "actorDefinitionEvent",
)


def go_value(v):
    """A decoded JSON value as Go's `interface{}` holds it: every number a float64."""
    if isinstance(v, dict):
        return {k: go_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [go_value(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    f = float(v)
    return int(f) if f.is_integer() and abs(f) < 1e21 else f


def go_marshal(event: dict) -> bytes:
    """Go's `json.Marshal` of a `map[string]interface{}`: keys sorted, compact, HTML-escaped."""
    text = json.dumps(go_value(event), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for c, e in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(c, e)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return text.encode("utf-8")


def category(event: dict) -> str:
    if event.get("eventType") in NODE_EVENT_TYPES:
        return "node_events"
    for key in PAYLOADS_WITH_JOB:
        payload = event.get(key)
        if isinstance(payload, dict) and payload.get("jobId"):
            job = str(payload["jobId"])
            try:
                job = base64.b64decode(job, validate=True).hex()
            except ValueError:
                pass
            return f"job_events/{job}"
    return "node_events"


def event_files(events: str, node: str, prefix: str) -> list[tuple[str, bytes, int]]:
    """The collector's event files of one node from a file of POST bodies."""
    lines: dict[str, list[bytes]] = {}
    first: dict[str, str] = {}
    with open(events, encoding="utf-8") as f:
        for body in f:
            if not body.strip():
                continue
            for event in json.loads(body):
                cat = category(event)
                lines.setdefault(cat, []).append(go_marshal(event))
                first.setdefault(cat, event["timestamp"])
    out = []
    for cat, rows in lines.items():
        stamp = first[cat]
        whole, _, frac = stamp.rstrip("Z").partition(".")
        at = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
        nanos = int(at.timestamp()) * 10**9 + int((frac + "000000000")[:9])
        name = f"{node}-{at.strftime('%Y-%m-%d-%H')}-{nanos}.jsonl"
        out.append((f"{prefix}/{cat}/{name}", b"".join(r + b"\n" for r in rows), nanos // 10**9))
    return out


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, top, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    members: list[tuple[str, bytes, int]] = []
    for item in specs:
        run, _, spec = item.partition("=")
        spec, _, events = spec.partition(",")
        files, session, node = run_logs(run)
        logs, meta = keys(spec, session, node)
        newest = max(m for _, m in files.values())
        members.append((f"{top}/{meta}", b"", newest))
        for rel, (data, mtime) in files.items():
            members.append((f"{top}/{logs}/{rel}", data, mtime))
        if events:
            members.extend(event_files(events, node, f"{top}/{logs.removesuffix('/logs')}"))
    members.sort()
    with tarfile.open(out, "w:gz", compresslevel=9) as tar:
        for name, data, mtime in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
