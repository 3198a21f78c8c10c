#!/usr/bin/env python3
"""Real Ray runs that fail in a known way, packed as corpus bundles.

Each scenario installs one Ray version from the package registry into a venv (once), starts a
local head on loopback, makes it fail (or not: the benign scenarios), stops Ray, and packs the
session's whole `logs/` folder plus the CLI output a user would paste into
`corpus/run-<version>-<scenario>.tar.gz`, with the bundle's `expected` file beside it.

    python3 scripts/realrun/realrun.py --ray 2.9.3                 # every scenario on 2.9.3
    python3 scripts/realrun/realrun.py --ray 2.60.0 --scenario job-entrypoint-error
    python3 scripts/realrun/realrun.py --all                       # the whole matrix
    python3 scripts/realrun/realrun.py --list

Not part of the test suite: it needs the package registry and takes about a minute a run. The
bundles it writes are what `cargo test` checks. Paths of this machine are rewritten to the
rayproject image layout (`/home/ray/anaconda3`, `/home/ray/app`) and the host name to
`ray-head`, so that a bundle names no machine; nothing else in a log is touched.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
APPS = HERE / "apps"
VERSIONS = ["2.9.3", "2.22.0", "2.40.0", "2.60.0"]
# Ray's own default: the session's paths then read as they do on every Ray node.
TEMP = Path("/tmp/ray")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Scenario:
    name: str
    story: str
    expected: list[str]
    decisive: list[str] = field(default_factory=list)
    benign: list[str] = field(default_factory=list)
    # Per-version overrides of `expected`/`decisive`, keyed by the version's "major.minor".
    wording: dict[str, dict] = field(default_factory=dict)
    # Environment of every command of the run (`ray start` and the jobs it runs).
    env: dict[str, str] = field(default_factory=dict)


SCENARIOS: dict[str, Scenario] = {}


def scenario(name, story, expected, decisive=(), benign=(), wording=None, env=None):
    def register(fn):
        SCENARIOS[name] = Scenario(
            name, story, list(expected), list(decisive), list(benign), wording or {}, env or {}
        )
        SCENARIOS[name].run = fn
        return fn

    return register


class Run:
    """One scenario on one Ray version: the venv's CLI, the captured output, the bundle."""

    def __init__(self, version: str, work: Path, bundle: Path):
        self.version = version
        self.venv = work / f"venv-{version}"
        self.bundle = bundle
        self.cli = bundle / "cli"
        self.cli.mkdir(parents=True, exist_ok=True)
        self.step = 0
        self.env = dict(os.environ)
        self.env.update(
            {
                "PATH": f"{self.venv / 'bin'}:{os.environ.get('PATH', '')}",
                "PYTHONPATH": str(APPS),
                "RAY_USAGE_STATS_ENABLED": "0",
                "RAY_ADDRESS": "",
                "TERM": "dumb",
            }
        )
        self.env.pop("RAY_ADDRESS")

    def sh(self, *args, paste=True, check=False, timeout=600, env=None):
        """Runs a command as a user would, keeping what it printed as `cli/NN-<cmd>.txt`."""
        self.step += 1
        shown = " ".join(str(a) for a in args)
        try:
            proc = subprocess.run(
                [str(a) for a in args],
                cwd=APPS,
                env={**self.env, **(env or {})},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=timeout,
            )
            out, code = proc.stdout, proc.returncode
        except subprocess.TimeoutExpired as e:
            partial = e.stdout or ""
            if isinstance(partial, bytes):
                partial = partial.decode("utf-8", "replace")
            out, code = partial + f"^C (no answer after {timeout} s)\n", -1
        out = ANSI.sub("", out)
        if paste:
            words = []
            for a in map(str, args[:3]):
                if a.startswith("-") or "/" in a:
                    break
                words.append(a)
            slug = "-".join(words)
            slug = re.sub(r"[^A-Za-z0-9]+", "-", slug).strip("-")[:40]
            (self.cli / f"{self.step:02d}-{slug}.txt").write_text(f"$ {shown}\n{out}")
        if check and code != 0:
            raise RuntimeError(f"{shown} exited {code}:\n{out[-3000:]}")
        return out

    def start(self, env=None):
        self.sh("ray", "stop", "--force", paste=False)
        shutil.rmtree(TEMP, ignore_errors=True)
        self.sh(
            "ray", "start", "--head", "--num-cpus", "2", "--node-ip-address", "127.0.0.1",
            "--dashboard-host", "127.0.0.1", "--include-dashboard", "true",
            "--disable-usage-stats", "--temp-dir", str(TEMP),
            check=True, env=env,
        )

    def stop(self):
        self.sh("ray", "stop")

    def deploy(self, config: str, wait=("RUNNING", "DEPLOY_FAILED", "UNHEALTHY"), timeout=90):
        (self.bundle / "serve-config.yaml").write_text(config)
        path = self.bundle / "serve-config.yaml"
        self.sh("serve", "deploy", path)
        return self.serve_status(wait, timeout)

    def serve_status(self, wait=("RUNNING", "DEPLOY_FAILED", "UNHEALTHY"), timeout=90):
        """Polls `serve status` until an app reaches one of `wait`; keeps the last answer."""
        deadline = time.time() + timeout
        while True:
            out = self.sh("serve", "status", paste=False, timeout=60)
            app_states = re.findall(r"^\s{2,4}status: (\w+)", out, re.M)
            if (app_states and all(s in wait for s in app_states)) or time.time() > deadline:
                break
            time.sleep(3)
        return self.sh("serve", "status", timeout=60)

    def pid_of(self, program: str, title: str | None = None) -> int | None:
        """The process running `program` (a path's tail: `dashboard/agent.py`, `raylet/raylet`)
        itself, not one that names it among its arguments (the raylet names the agent's), or
        whose process title is `title` (newer Ray retitles its agents: `ray::DashboardAgent`)."""
        for proc in sorted(Path("/proc").iterdir(), key=lambda p: p.name):
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            head = [a.decode(errors="replace") for a in argv[:3]]
            if title and head and head[0].strip() == title:
                return int(proc.name)
            if head and (head[0].endswith(program) or (
                "python" in head[0] and any(a.endswith(program) for a in head[1:3])
            )):
                return int(proc.name)
        return None


def serve_config(app: str, name="default", route="/", extra="", import_path=None) -> str:
    return (
        "proxy_location: EveryNode\n"
        "http_options:\n  host: 127.0.0.1\n  port: 8000\n"
        "applications:\n"
        f"  - name: {name}\n"
        f"    route_prefix: {route}\n"
        f"    import_path: {import_path or 'model_app:' + app}\n"
        f"{extra}"
    )


def curl(run: Run, path: str, times=3):
    for _ in range(times):
        run.sh("curl", "-sS", "-m", "10", f"http://127.0.0.1:8000{path}")


# ---------------------------------------------------------------- broken scenarios


@scenario(
    "serve-constructor-error",
    "`serve deploy` of app `model` whose deployment Model opens a model file that does not "
    "exist in its constructor; the app ends DEPLOY_FAILED.",
    ["serve_script_error"],
    ["FileNotFoundError: [Errno 2] No such file or directory: '/models/does-not-exist.pt'"],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("model", name="model", route="/model"))
    run.stop()


@scenario(
    "serve-missing-module",
    "`serve deploy` of app `tokenizer` whose module imports `sentencepiece`, which is not "
    "installed; the app ends DEPLOY_FAILED.",
    ["missing_dependency"],
    ["No module named 'sentencepiece'"],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("app", name="tokenizer", route="/tok", import_path="needs_module:app"))
    run.stop()


@scenario(
    "serve-bad-import-path",
    "`serve deploy` of app `search` with import_path `model_app:serach` (a typo of a variable "
    "that does not exist); the app ends DEPLOY_FAILED.",
    ["bad_import_path"],
    ["has no attribute 'serach'"],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("serach", name="search", route="/search"))
    run.stop()


@scenario(
    "serve-health-check",
    "`serve deploy` of app `ranker` whose deployment's `check_health` raises "
    "`RuntimeError: vector index connection lost` six seconds after start; replicas are "
    "marked unhealthy and replaced, again and again.",
    ["replica_health_check_failed"],
    ["vector index connection lost"],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("ranker", name="ranker", route="/rank"), wait=("NEVER",), timeout=45)
    run.stop()


@scenario(
    "serve-gpu-infeasible",
    "`serve deploy` of app `gpu` whose deployment asks for one GPU on a node with none; the "
    "replica never schedules.",
    ["autoscaler_infeasible_request"],
    ["taken more than 30s to be scheduled"],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("gpu", name="gpu", route="/gpu"), wait=("NEVER",), timeout=50)
    run.stop()


@scenario(
    "serve-config-camelcase",
    "`serve deploy` of a config written in camelCase (`routePrefix`, `importPath`-style keys "
    "under deployments: `numReplicas`, `rayActorOptions`) for app `echo`.",
    ["serve_config_schema"],
    ["numReplicas"],
)
def _(run: Run):
    run.start()
    config = (
        "applications:\n"
        "  - name: echo\n"
        "    routePrefix: /echo\n"
        "    import_path: model_app:echo\n"
        "    deployments:\n"
        "      - name: Echo\n"
        "        numReplicas: 2\n"
        "        rayActorOptions:\n"
        "          numCpus: 0.5\n"
    )
    run.deploy(config)
    curl(run, "/echo?q=hi", times=1)
    run.stop()


@scenario(
    "job-entrypoint-error",
    "`ray job submit` of an entrypoint that parses a malformed JSON string and raises.",
    ["rayjob_entrypoint_failed"],
    ["json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes"],
)
def _(run: Run):
    run.start()
    run.sh("ray", "job", "submit", "--working-dir", APPS, "--", "python", "jobs.py", "parse_config")
    run.stop()


@scenario(
    "job-runtime-env-pip",
    "`ray job submit` with `runtime_env` pip `raysift-no-such-package==1.0`, a package that "
    "does not exist; the runtime env cannot be built and the job fails before it starts.",
    ["runtime_env_failure"],
    ["raysift-no-such-package"],
)
def _(run: Run):
    run.start()
    run.sh(
        "ray", "job", "submit", "--runtime-env-json",
        json.dumps({"pip": ["raysift-no-such-package==1.0"]}),
        "--", "python", "-c", "print('never')", timeout=900,
    )
    run.stop()


@scenario(
    "job-memory-killed",
    "`ray job submit` of a job whose task grows by 256 MiB every 0.2 s; Ray's memory monitor "
    "(threshold lowered for the run with RAY_memory_usage_threshold) kills the worker.",
    ["oom_killed"],
    ["low on memory"],
)
def _(run: Run):
    meminfo = dict(
        (line.split(":")[0], int(line.split()[1]))
        for line in Path("/proc/meminfo").read_text().splitlines()
    )
    total, available = meminfo["MemTotal"], meminfo["MemAvailable"]
    threshold = min(0.9, (total - available + 3 * 1024 * 1024) / total)
    run.start(env={"RAY_memory_usage_threshold": f"{threshold:.3f}"})
    run.sh("ray", "job", "submit", "--working-dir", APPS, "--", "python", "jobs.py", "memory_hog")
    run.stop()


@scenario(
    "job-worker-segfault",
    "`ray job submit` of a job whose task `decode_frame` dereferences a null pointer through "
    "ctypes; the worker dies of SIGSEGV (faulthandler's dump names the frame) and the job "
    "fails with WorkerCrashedError.",
    ["rayjob_entrypoint_failed"],
    ["in decode_frame", "Fatal Python error: Segmentation fault", "WorkerCrashedError"],
)
def _(run: Run):
    run.start()
    run.sh("ray", "job", "submit", "--working-dir", APPS, "--", "python", "jobs.py", "segfault")
    run.stop()


@scenario(
    "agent-killed",
    "`serve deploy` of a healthy app `echo` (RUNNING, answering), then the dashboard agent "
    "process is killed with SIGKILL; the raylet fate-shares with its agent and the node goes "
    "down.",
    ["dashboard_agent_died_after_deploy"],
    ["one Ray agent failed"],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("echo", name="echo", route="/echo"))
    curl(run, "/echo?q=hi")
    pid = run.pid_of("dashboard/agent.py", title="ray::DashboardAgent")
    if pid is None:
        raise RuntimeError("no dashboard agent process")
    os.kill(pid, signal.SIGKILL)
    time.sleep(15)
    run.sh("serve", "status", timeout=20)
    curl(run, "/echo?q=again", times=1)
    run.stop()


@scenario(
    "raylet-killed",
    "`serve deploy` of a healthy app `echo` (RUNNING, answering), then the raylet process is "
    "killed with SIGKILL (as the kernel's OOM killer would); the GCS marks the node dead.",
    ["node_died"],
    ["marked dead because the detector has missed too many heartbeats", "is dead because the health check failed"],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("echo", name="echo", route="/echo"))
    curl(run, "/echo?q=hi")
    pid = run.pid_of("raylet/raylet")
    if pid is None:
        raise RuntimeError("no raylet process")
    os.kill(pid, signal.SIGKILL)
    time.sleep(40)
    run.sh("serve", "status", timeout=20)
    curl(run, "/echo?q=again", times=1)
    run.stop()


# ---------------------------------------------------------------- benign scenarios


@scenario(
    "healthy-serve",
    "`serve deploy` of a healthy app `echo`, three requests answered, `ray stop`.",
    [],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("echo", name="echo", route="/echo"))
    curl(run, "/echo?q=hi")
    run.stop()


@scenario("healthy-job", "`ray job submit` of a job that succeeds, `ray stop`.", [])
def _(run: Run):
    run.start()
    run.sh("ray", "job", "submit", "--working-dir", APPS, "--", "python", "jobs.py", "healthy")
    run.stop()


@scenario(
    "replica-killed-replaced",
    "`serve deploy` of a healthy app `echo`; one replica's process is killed with SIGKILL; "
    "Serve replaces it and requests are answered again.",
    [],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("echo", name="echo", route="/echo"))
    curl(run, "/echo?q=before", times=1)
    run.sh("python", "kill_replica.py")
    time.sleep(10)
    run.serve_status(wait=("RUNNING",), timeout=60)
    curl(run, "/echo?q=after")
    run.stop()


@scenario(
    "job-stopped-by-user",
    "`ray job submit --no-wait` of a long job, then `ray job stop` by its user.",
    [],
)
def _(run: Run):
    run.start()
    out = run.sh(
        "ray", "job", "submit", "--no-wait", "--working-dir", APPS, "--",
        "python", "jobs.py", "long_running",
    )
    job = re.search(r"raysubmit_\w+", out)
    time.sleep(12)
    if job:
        run.sh("ray", "job", "stop", job.group(0))
        time.sleep(3)
        run.sh("ray", "job", "status", job.group(0))
    run.stop()


@scenario(
    "serve-shutdown",
    "`serve deploy` of a healthy app `echo`, then `serve shutdown -y`, then `ray stop`.",
    [],
)
def _(run: Run):
    run.start()
    run.deploy(serve_config("echo", name="echo", route="/echo"))
    curl(run, "/echo?q=hi", times=1)
    run.sh("serve", "shutdown", "-y")
    time.sleep(3)
    run.stop()


# ---------------------------------------------------------------- export events
# Ray 2.40 and later write `logs/export_events/event_EXPORT_<TYPE>.log` (one JSON object a
# line: actors, nodes, driver and submission jobs, tasks) when this variable is set.

EXPORT = {"RAY_enable_export_api_write": "1"}


@scenario(
    "export-actor-failures",
    "with `RAY_enable_export_api_write=1` (Ray's export events on), `ray job submit` of a job "
    "whose task raises, whose other task's worker exits with `os._exit(3)`, whose actor `Cache` "
    "is killed with SIGKILL, and whose actor `FeatureStore` raises in its constructor; the "
    "driver fails on FeatureStore's death and the job ends FAILED.",
    ["actor_constructor_error", "rayjob_entrypoint_failed"],
    ["feature table 'users_v2' not found"],
    env=EXPORT,
)
def _(run: Run):
    run.start()
    run.sh("ray", "job", "submit", "--working-dir", APPS, "--", "python", "jobs.py", "actor_failures")
    run.stop()


@scenario(
    "export-raylet-killed",
    "with `RAY_enable_export_api_write=1` (Ray's export events on), `ray job submit --no-wait` "
    "of a long job, then the raylet process is killed with SIGKILL (as the kernel's OOM killer "
    "would); the GCS marks the node dead.",
    ["node_died"],
    ["marked dead because the detector has missed too many heartbeats", "is dead because the health check failed"],
    env=EXPORT,
)
def _(run: Run):
    run.start()
    run.sh(
        "ray", "job", "submit", "--no-wait", "--working-dir", APPS, "--",
        "python", "jobs.py", "long_running",
    )
    time.sleep(10)
    pid = run.pid_of("raylet/raylet")
    if pid is None:
        raise RuntimeError("no raylet process")
    os.kill(pid, signal.SIGKILL)
    time.sleep(40)
    run.stop()


@scenario(
    "healthy-export-job",
    "with `RAY_enable_export_api_write=1` (Ray's export events on), `ray job submit` of a job "
    "that succeeds (ten tasks and an actor that adds their results), `ray stop`.",
    [],
    env=EXPORT,
)
def _(run: Run):
    run.start()
    run.sh(
        "ray", "job", "submit", "--working-dir", APPS, "--", "python", "jobs.py", "healthy_actors"
    )
    run.stop()


# ---------------------------------------------------------------- packing


def ensure_venv(version: str, work: Path) -> None:
    venv = work / f"venv-{version}"
    if (venv / "bin" / "ray").exists():
        return
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run(
        [venv / "bin" / "pip", "install", "-q", f"ray[serve,default]=={version}"], check=True
    )


def machine_ips() -> list[str]:
    out = subprocess.run(["hostname", "-I"], stdout=subprocess.PIPE, text=True).stdout
    return [ip for ip in out.split() if ip != "127.0.0.1"]


def rewrite(text: str, work: Path, version: str) -> str:
    """Names no machine: this venv, the apps folder, the host name and its addresses."""
    venv = str(work / f"venv-{version}")
    text = text.replace(venv, "/home/ray/anaconda3")
    # A venv reached through a link names its real place too.
    text = text.replace(str((work / f"venv-{version}").resolve()), "/home/ray/anaconda3")
    text = text.replace(sys.base_prefix, "/home/ray/anaconda3")
    text = text.replace(str(APPS), "/home/ray/app")
    text = text.replace(str(work / "bundles"), "/home/ray")
    text = text.replace(str(ROOT), "/home/ray/raysift")
    # Other processes of the machine, in the memory monitor's table of the top ones.
    text = text.replace(str(Path.home()) + "/", "/home/ray/")
    text = text.replace(str(ROOT.parent) + "/", "/home/ray/")
    host = socket.gethostname()
    if host and host not in ("localhost",):
        text = re.sub(rf"\b{re.escape(host)}\b", "ray-head", text)
    for ip in machine_ips():
        text = re.sub(rf"\b{re.escape(ip)}\b", "10.244.0.5", text)
    return text


def pack(bundle: Path, work: Path, version: str, out: Path) -> None:
    """Copies the session's logs whole, rewrites machine names, writes `<name>.tar.gz`."""
    logs = TEMP / "session_latest" / "logs"
    if logs.is_dir() and not (bundle / "logs").exists():
        shutil.copytree(logs, bundle / "logs", symlinks=False)
    name = bundle.name
    with tarfile.open(out / f"{name}.tar.gz", "w:gz", compresslevel=9) as tar:
        for path in sorted(bundle.rglob("*")):
            if not path.is_file():
                continue
            data = path.read_bytes()
            try:
                data = rewrite(data.decode("utf-8"), work, version).encode("utf-8")
            except UnicodeDecodeError:
                pass
            inner = rewrite(str(path.relative_to(bundle)), work, version)
            info = tarfile.TarInfo(f"{name}/{inner}")
            info.size = len(data)
            info.mtime = int(path.stat().st_mtime)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


def expected_file(sc: Scenario, version: str, bundle: Path, work: Path) -> str:
    minor = ".".join(version.split(".")[:2])
    over = sc.wording.get(minor, {})
    expected = over.get("expected", sc.expected)
    decisive = over.get("decisive", sc.decisive)
    found = []
    for d in decisive:
        for path in bundle.rglob("*"):
            if path.is_file():
                try:
                    if d in path.read_text(errors="replace"):
                        found.append(d)
                        break
                except OSError:
                    pass
    lines = [
        'layout = "ray-session-logs"',
        'kuberay = "none"',
        f'ray = "{version}"',
        'container_tz = "UTC"',
        f'scenario = "{sc.name}"',
        'description = """A real run (scripts/realrun/realrun.py, scenario `'
        + sc.name + "`) of Ray " + version
        + " (pip `ray[serve,default]`, Python 3.11) on one machine in UTC, no KubeRay: "
        + "`ray start --head --num-cpus 2` on loopback, then "
        + sc.story.replace('"""', "'")
        + " The session's `logs/` folder is whole; `cli/` holds what each command printed; "
        + "machine paths were rewritten to the rayproject image layout and the host name to "
        + '`ray-head`."""',
        f"expected = {json.dumps(expected)}",
        f"benign = {json.dumps(sc.benign)}",
        f"decisive = {json.dumps(found)}",
    ]
    missing = [d for d in decisive if d not in found]
    if missing:
        lines.append(f"# not in this run's files (check the scenario): {json.dumps(missing)}")
    return "\n".join(lines) + "\n"


def repack(version: str, name: str, work: Path, out: Path) -> None:
    """Packs an earlier run again (after a change of the rewriting or of `expected`)."""
    bundle = work / "bundles" / f"run-{version}-{name}"
    if not (bundle / "logs").is_dir():
        print(f"{bundle.name}: not run yet", flush=True)
        return
    pack(bundle, work, version, out)
    (out / f"{bundle.name}.toml").write_text(expected_file(SCENARIOS[name], version, bundle, work))


def run_one(version: str, name: str, work: Path, out: Path) -> None:
    sc = SCENARIOS[name]
    ensure_venv(version, work)
    bundle = work / "bundles" / f"run-{version}-{name}"
    shutil.rmtree(bundle, ignore_errors=True)
    run = Run(version, work, bundle)
    run.env.update(sc.env)
    run.sh("ray", "--version")
    started = time.time()
    try:
        sc.run(run)
    except Exception as e:  # noqa: BLE001  (one failed run must not stop the matrix)
        print(f"{bundle.name}: the scenario failed: {e}", flush=True)
        return
    finally:
        run.sh("ray", "stop", "--force", paste=False)
    pack(bundle, work, version, out)
    (out / f"{bundle.name}.toml").write_text(expected_file(sc, version, bundle, work))
    size = (out / f"{bundle.name}.tar.gz").stat().st_size
    print(f"{bundle.name}: {time.time() - started:.0f} s, {size // 1024} KiB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ray", action="append", help="Ray version (repeatable)")
    ap.add_argument("--all", action="store_true", help=f"every version: {', '.join(VERSIONS)}")
    ap.add_argument("--scenario", action="append", help="scenario name (repeatable); default all")
    ap.add_argument("--list", action="store_true", help="list the scenarios and stop")
    ap.add_argument(
        "--repack", action="store_true",
        help="pack the runs already made again (new rewriting or expected file), run nothing",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "corpus", help="where bundles go")
    ap.add_argument("--work", type=Path, default=ROOT / "target" / "realrun", help="venvs, runs")
    args = ap.parse_args()
    if args.list:
        for sc in SCENARIOS.values():
            print(f"{sc.name:28} {' '.join(sc.expected) or '(benign)'}")
        return
    versions = VERSIONS if args.all else (args.ray or [])
    if not versions:
        ap.error("name a version with --ray, or --all")
    names = args.scenario or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(unknown)}; see --list")
    args.work.mkdir(parents=True, exist_ok=True)
    for version in versions:
        for name in names:
            if args.repack:
                repack(version, name, args.work.resolve(), args.out.resolve())
            else:
                run_one(version, name, args.work.resolve(), args.out.resolve())


if __name__ == "__main__":
    main()
