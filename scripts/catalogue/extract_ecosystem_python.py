"""What the Python projects that run on Ray say when Ray fails them, into the message catalogue.

Run (through the driver, or alone), one `--ecosystem-wheels NAME=DIR` per project, DIR a folder
holding that project's wheels, one per version to read:

    pip download vllm==0.6.3 --no-deps --only-binary :all: --python-version 3.12 \\
        --platform manylinux1_x86_64 -d wheels/vllm          # and 0.9.2, 0.19.1
    pip download skypilot==0.6.0 --no-deps -d wheels/skypilot  # and 0.9.3, 0.14.1
    python3 scripts/catalogue/extract_ecosystem_python.py \\
        --ecosystem-wheels vllm=wheels/vllm --ecosystem-wheels skypilot=wheels/skypilot

NAME is one of `PROJECTS` below; a name not given is skipped. The `.py` files are read from each
wheel's zip and parsed with `ast` (never imported or run), with Ray's own Python extractor
(`extract_python.py`: log calls at WARNING or above, raised exceptions, the text exception
classes build, every variable part `{}`), but only in the files that deal with Ray:

- **vLLM** (project `vllm`, component `ecosystem.vllm`): its Ray executors and Ray utilities
  (`vllm/executor/ray_*.py`, `vllm/v1/executor/ray_*.py`, `vllm/ray/`, the Ray communicator,
  the Ray tokenizer group) whole; of its configuration, argument parsing, engine start-up,
  platforms, distributed state and worker wrapper (the base of `RayWorkerWrapper`), only the
  messages that name Ray, a placement group or distributed execution.
- **SkyPilot** (project `skypilot`, component `ecosystem.skypilot`): the job table its skylet
  keeps on the head (`sky/skylet/job_lib.py`) and its instance set-up (`ray start` on each
  node, `sky/provision/instance_setup.py`) whole; of its Ray backend, backend utilities, log
  library and provisioner, only the messages that name Ray, a placement group or a job.

A vLLM or SkyPilot line lands in a Ray driver's or worker's log (vLLM's engine is the driver,
its `RayWorkerWrapper` actors the workers; SkyPilot's job runs as a Ray job on its head), so
raysift matches them as it matches Ray's own templates.

Writes `patterns/messages/ecosystem-python.jsonl` (both projects in one file) and
`patterns/messages/sources-ecosystem-python.toml` (project, version, wheel, SHA-256).
"""

import argparse
import ast
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extract_python as py  # noqa: E402
from common import MESSAGES, Catalogue, sha256, version_key, write_catalogues  # noqa: E402


@dataclass(frozen=True)
class Project:
    """One project's wheels: which files to read whole, and which only for the messages that
    match `keywords`. Both are regexes over paths inside the wheel."""

    project: str
    files: str
    keyword_files: str
    keywords: str


PROJECTS = {
    "vllm": Project(
        "vllm",
        r"^vllm/(.*/)?ray[^/]*\.py$|^vllm/ray/",
        r"^vllm/(config|config/parallel|engine/arg_utils|engine/llm_engine|v1/engine/core|"
        r"v1/engine/utils|v1/executor/abstract|executor/executor_base|distributed/parallel_state|"
        r"platforms/\w+|utils|utils/system_utils|worker/worker_base|v1/worker/worker_base)\.py$",
        r"\bRay\b|\bray\b|[Pp]lacement[ _][Gg]roup|distributed execution"),
    "skypilot": Project(
        "skypilot",
        r"^sky/skylet/job_lib\.py$|^sky/provision/instance_setup\.py$",
        r"^sky/backends/(cloud_vm_ray_backend|backend_utils)\.py$|^sky/skylet/log_lib\.py$|"
        r"^sky/provision/provisioner\.py$",
        r"\bRay\b|\bray\b|[Pp]lacement[ _][Gg]roup|\b[Jj]ob\b"),
}

SKIP = re.compile(r"/tests?/|/test_[^/]*\.py$|/[^/]*_test\.py$|/conftest\.py$|/_vendor/")


def component(project: str) -> str:
    return f"ecosystem.{project}"


def wheel_version(wheel: Path) -> str:
    """`0.9.2` of `vllm-0.9.2-cp38-abi3-manylinux1_x86_64.whl`."""
    return wheel.name.split("-")[1]


def read_wheel(cat: Catalogue, spec: Project, wheel: Path) -> tuple[int, int]:
    """Add one wheel's templates; how many files were read and how many templates they gave."""
    version, comp = wheel_version(wheel), component(spec.project)
    whole, keyed = re.compile(spec.files), re.compile(spec.keyword_files)
    keywords = re.compile(spec.keywords)
    files = found = 0
    with zipfile.ZipFile(wheel) as z:
        for path in sorted(z.namelist()):
            if not path.endswith(".py") or SKIP.search(path):
                continue
            every = bool(whole.search(path))
            if not every and not keyed.search(path):
                continue
            source = z.read(path).decode("utf-8", errors="replace")
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError, RecursionError):
                print(f"  {path}: does not parse, skipped")
                continue
            files += 1
            for line, level, cls, node, lazy, renderer in py.messages_of(tree):
                if node is None:
                    continue
                rendered = renderer.render(node, line)
                if lazy:
                    rendered = [py.percent_to_braces(t) for t in rendered]
                for t in dict.fromkeys(t for t in rendered if not py.ALL_VARIABLE.match(t)):
                    if every or keywords.search(t):
                        cat.add(version, comp, level, t, f"{path}:{line}", exception=cls)
                        found += 1
    return files, found


def write_sources(read: list[tuple[str, str, Path]]) -> Path:
    path = MESSAGES / "sources-ecosystem-python.toml"
    lines = ["# Versions read by scripts/catalogue/extract_ecosystem_python.py: one wheel from the",
             "# package registry each (pip download NAME==V --no-deps), read from the zip with `ast`.",
             ""]
    for project, version, wheel in read:
        lines += ["[[source]]", f'project = "{project}"', f'version = "{version}"',
                  'how = "wheel"', f'wheel = "{wheel.name}"', f'sha256 = "{sha256(wheel)}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def main(args: list[str] | None = None) -> None:
    """Extract and write; words meant for the other extractors are ignored."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ecosystem-wheels", action="append", default=[], metavar="NAME=DIR",
                    help=f"a folder of a project's wheels; NAME one of {', '.join(PROJECTS)}")
    opts, _ = ap.parse_known_args(args)
    given = dict(g.split("=", 1) for g in opts.ecosystem_wheels if "=" in g)
    if not given:
        print("skipped: vLLM and SkyPilot need --ecosystem-wheels NAME=DIR (one per project)")
        return
    catalogues: dict[str, Catalogue] = {}
    read = []
    for name, folder in given.items():
        spec = PROJECTS.get(name)
        if spec is None:
            print(f"  {name}: unknown, skipped (known: {', '.join(PROJECTS)})")
            continue
        cat = catalogues.setdefault(spec.project, Catalogue(spec.project, "python"))
        wheels = sorted(Path(folder).glob(f"{name}-*.whl"), key=lambda w: version_key(wheel_version(w)))
        for wheel in wheels:
            before = len(cat.entries)
            files, found = read_wheel(cat, spec, wheel)
            print(f"  {name} {wheel_version(wheel)}: {files} files, {found} messages, "
                  f"{len(cat.entries) - before} new templates")
            read.append((spec.project, wheel_version(wheel), wheel))
    out = write_catalogues("ecosystem-python.jsonl", catalogues.values())
    write_sources(read)
    for cat in catalogues.values():
        by = {}
        for e in cat.entries.values():
            by[e["level"]] = by.get(e["level"], 0) + 1
        print(f"  {cat.project}: {len(cat.entries)} templates {dict(sorted(by.items()))}")
    print(f"{out.relative_to(MESSAGES.parents[1])}: "
          f"{sum(len(c.entries) for c in catalogues.values())} templates")


if __name__ == "__main__":
    main()
