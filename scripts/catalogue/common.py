"""What every extractor shares: ids, version order, and writing an extracted file.

See patterns/messages/README.md for the format.
"""

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = ROOT / "patterns" / "messages"

COMPONENTS = {
    "kuberay.operator", "kuberay.webhook", "kuberay.apiserver", "kuberay.other",
    "serve.controller", "serve.proxy", "serve.replica", "serve.config", "serve.other",
    "autoscaler.v1", "autoscaler.v2", "autoscaler", "dashboard", "dashboard.agent", "job",
    "gcs", "raylet", "core_worker", "runtime_env", "memory_monitor", "object_store", "train",
    "tune", "data", "llm", "client", "ray.other",
    # The controllers that embed Ray objects, and the API server's admission denials of them.
    "ecosystem.kueue", "ecosystem.codeflare", "ecosystem.volcano", "ecosystem.yunikorn",
    "ecosystem.flyte", "ecosystem.kubeflow", "ecosystem.aibrix", "kubernetes.admission",
    # The Python projects that run on Ray: their lines land in a Ray driver's or worker's log.
    "ecosystem.vllm", "ecosystem.skypilot",
}

PROJECTS = {
    "ray", "kuberay", "kueue", "codeflare", "volcano", "yunikorn", "flyte", "kubeflow", "aibrix",
    "kubernetes", "vllm", "skypilot",
}

LEVELS = {
    "critical", "fatal", "error", "warning", "exception", "check", "event", "reason",
    "condition", "returned",
}


def entry_id(project: str, template: str) -> str:
    """`<project>-` (`ray-`, `kuberay-`, `kueue-`, …) and the first 10 hex digits of the
    template's SHA-1."""
    return f"{project}-{hashlib.sha1(template.encode('utf-8')).hexdigest()[:10]}"


def version_key(v: str):
    """Sort key of a version or tag: `v1.2.0-rc.1`, `2.9.3`, `ray-2.40.0`."""
    nums = [int(n) for n in re.findall(r"\d+", v)]
    return nums + [0] * (4 - len(nums)) + [0 if re.search(r"rc|alpha|beta", v) else 1]


def sha256(path: Path) -> str:
    """The SHA-256 of a file (a wheel read), for the sources files."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def one_line(template: str) -> str:
    """A template on one line: runs of whitespace (newlines included) become one space."""
    return re.sub(r"\s+", " ", template).strip()


class Catalogue:
    """The entries of one extracted file, gathered over versions.

    `add` is called once per (version, site, template); the same template seen again merges:
    its versions grow and its site is the newest version's.
    """

    def __init__(self, project: str, lang: str):
        assert project in PROJECTS, project
        self.project = project
        self.lang = lang
        self.entries: dict[str, dict] = {}

    def add(self, version: str, component: str, level: str, template: str, site: str,
            exception: str | None = None, reason: str | None = None) -> None:
        assert component in COMPONENTS, component
        assert level in LEVELS, level
        template = one_line(template)
        if not template:
            return
        eid = entry_id(self.project, template)
        e = self.entries.get(eid)
        if e is None:
            e = {"id": eid, "project": self.project, "lang": self.lang, "component": component,
                 "level": level, "template": template, "site": site, "versions": []}
            if exception:
                e["exception"] = exception
            if reason:
                e["reason"] = reason
            self.entries[eid] = e
        if version not in e["versions"]:
            e["versions"].append(version)
            e["versions"].sort(key=version_key)
            if e["versions"][-1] == version:
                # The newest version's site, component and level win.
                e["site"], e["component"], e["level"] = site, component, level

    def write(self) -> Path:
        return write_catalogues(f"{self.project}-{self.lang}.jsonl", [self])


def write_catalogues(name: str, catalogues) -> Path:
    """Write the entries of one or more catalogues (several projects) into one extracted file,
    sorted by id."""
    entries = {eid: e for cat in catalogues for eid, e in cat.entries.items()}
    path = MESSAGES / name
    with open(path, "w", encoding="utf-8") as f:
        for eid in sorted(entries):
            f.write(json.dumps(entries[eid], ensure_ascii=False, sort_keys=False) + "\n")
    return path
