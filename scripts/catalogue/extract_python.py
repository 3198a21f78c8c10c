"""Ray's Python messages: every log call at WARNING or above and every raised exception.

Reads the `.py` files of Ray wheels straight from the zip (the wheels are downloaded once into
`target/catalogue/wheels/`, never committed), parses each with `ast` (never runs it), and turns
each message into a template: literal text kept, every variable part written `{}`. Writes
`patterns/messages/ray-python.jsonl` and `patterns/messages/sources-python.toml`, and prints
what it measured (templates per component, level and version; parse failures; messages that
are wholly a variable; a coverage estimate against a plain text count of the call sites).

Entry point: `main(args)`, where `args.versions` is a list of versions or None (the default
spread). `scripts/catalogue/extract.py` is the documented command that calls it.
"""

import ast
import re
import subprocess
import sys
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MESSAGES, ROOT, Catalogue, one_line, sha256, version_key  # noqa: E402

PURELIB = re.compile(r"^ray-[^/]*\.data/purelib/")
WHEELS = ROOT / "target" / "catalogue" / "wheels"

# From 2.0 to the newest release, oldest first.
VERSIONS = [
    "2.0.1", "2.3.1", "2.5.1", "2.7.2", "2.9.3", "2.12.0", "2.22.0", "2.30.0", "2.40.0",
    "2.47.1", "2.52.1", "2.56.1", "2.60.0",
]

# Paths that are not Ray's own messages, or not in scope.
SKIP = re.compile(
    r"^ray/(cloudpickle|rllib|core/generated|serve/generated)/|/thirdparty[^/]*/|/_vendor/|"
    r"/tests?/|/test_[^/]*\.py$|/[^/]*_test\.py$|/conftest\.py$"
)

LOG_METHODS = {
    "error": "error", "exception": "error", "critical": "critical", "fatal": "critical",
    "warning": "warning", "warn": "warning",
}
CLI_ONLY = {"abort": "error", "panic": "error"}  # cli_logger prints these at error and exits
LOG_LEVEL_CONSTANTS = {"ERROR": "error", "CRITICAL": "critical", "FATAL": "critical",
                       "WARNING": "warning", "WARN": "warning"}
LOGGER_NAME = re.compile(r"^(_?\w*_)?log(ger)?$|^_?logger\w*$|^logging$", re.I)
MESSAGE_KEYWORDS = ("message", "msg", "error_message", "detail", "reason")

PERCENT = re.compile(r"%(\([^)]*\))?[-#0 +]*(\*|\d+)?(\.(\*|\d+))?[hlL]?[diouxXeEfFgGcrsa]")
FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
ALL_VARIABLE = re.compile(r"^[\s{}:.,;\-()\[\]'\"]*$")
MAX_VARIANTS = 4


def component(path: str) -> str:
    """The component of a file inside the wheel (`ray/serve/_private/replica.py`)."""
    name = path.rsplit("/", 1)[-1]
    if path.startswith("ray/serve/"):
        return serve_component(name)
    if path.startswith("ray/autoscaler/"):
        if path.startswith("ray/autoscaler/v2/"):
            return "autoscaler.v2"
        if path.startswith("ray/autoscaler/_private/"):
            return "autoscaler.v1"
        return "autoscaler"
    if path.startswith(("ray/dashboard/modules/job/", "ray/job_submission/")):
        return "job"
    if path.startswith("ray/dashboard/modules/serve/"):
        return "serve.config"
    if path.startswith("ray/dashboard/"):
        agent = name == "agent.py" or "agent" in name or path.startswith("ray/dashboard/modules/reporter/")
        return "dashboard.agent" if agent else "dashboard"
    if path.startswith(("ray/_private/runtime_env/", "ray/runtime_env/")):
        return "runtime_env"
    if path.startswith(("ray/train/", "ray/air/")):
        return "train"
    for area in ("tune", "data", "llm"):
        if path.startswith(f"ray/{area}/"):
            return area
    if path.startswith("ray/util/client/") or path == "ray/client_builder.py":
        return "client"
    if path.startswith("ray/util/state/"):
        return "dashboard"
    return core_component(path, name)


def serve_component(name: str) -> str:
    """Serve's parts, by file name (the same names across versions, `_private/` or not)."""
    if name in {"controller.py", "application_state.py", "deployment_state.py",
                "deployment_scheduler.py", "autoscaling_state.py", "endpoint_state.py"}:
        return "serve.controller"
    if name.startswith(("proxy", "http_", "grpc")):
        return "serve.proxy"
    if name.startswith("replica") and "scheduler" not in name or name == "user_callable_wrapper.py":
        return "serve.replica"
    if name in {"schema.py", "config.py", "api.py", "scripts.py"} or name.startswith(("deploy", "build")):
        return "serve.config"
    return "serve.other"


def core_component(path: str, name: str) -> str:
    """The rest of `ray/`: the worker and driver, GCS clients, the memory monitor."""
    if "memory_monitor" in name:
        return "memory_monitor"
    if "gcs" in name:
        return "gcs"
    if path in {"ray/_private/worker.py", "ray/worker.py", "ray/actor.py", "ray/remote_function.py",
                "ray/exceptions.py", "ray/_private/serialization.py", "ray/serialization.py",
                "ray/runtime_context.py", "ray/_private/ray_option_utils.py",
                "ray/_private/async_compat.py", "ray/_private/function_manager.py",
                "ray/_private/utils.py", "ray/_private/signature.py", "ray/_private/internal_api.py",
                "ray/util/placement_group.py", "ray/util/scheduling_strategies.py"}:
        return "core_worker"
    return "ray.other"


def receiver_name(func: ast.Attribute) -> str:
    """`logger` of `logger.error`, `self._logger` of `self._logger.error`: the last name."""
    value = func.value
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, ast.Attribute):
        return value.attr
    return ""


def log_level(call: ast.Call) -> str | None:
    """The level of a log call at WARNING or above, or None."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    who = receiver_name(func)
    if who == "warnings" and func.attr == "warn":
        return "warning"
    if not LOGGER_NAME.match(who):
        return None
    if func.attr in LOG_METHODS:
        return LOG_METHODS[func.attr]
    if who.lower().endswith("cli_logger") and func.attr in CLI_ONLY:
        return CLI_ONLY[func.attr]
    if func.attr == "log" and call.args:
        first = call.args[0]
        if isinstance(first, ast.Attribute) and first.attr in LOG_LEVEL_CONSTANTS:
            return LOG_LEVEL_CONSTANTS[first.attr]
    return None


def exception_name(node: ast.expr | None) -> str | None:
    """The class of `raise X(...)` when it is an error or exception class."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name if name.endswith(("Error", "Exception")) else None


def percent_to_braces(text: str) -> str:
    """`%s`, `%d`, `%(name)s` become `{}`; `%%` becomes `%`."""
    return PERCENT.sub("{}", text).replace("%%", "%")


def format_to_braces(text: str) -> str:
    """`.format` fields (`{}`, `{name}`, `{0:.2f}`) become `{}`; `{{`/`}}` literal braces."""
    def one(m: re.Match) -> str:
        return {"{{": "{", "}}": "}"}.get(m.group(0), "{}")
    return FORMAT_FIELD.sub(one, text)


class Module:
    """What a module defines that a message can be built from: string constants and the
    functions that return a message (`get_message(...)`)."""

    def __init__(self, tree: ast.AST):
        self.constants = string_assignments(tree)
        self.builders: dict[str, list[tuple[ast.expr, "Renderer"]]] = defaultdict(list)
        functions = [fn for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
        names = Counter(fn.name for fn in functions)
        for fn in functions:
            if names[fn.name] == 1:  # a name defined twice (methods of two classes) is ambiguous
                inner = Renderer(string_assignments(fn), self)
                for node in walk_own(fn):
                    if isinstance(node, ast.Return) and node.value is not None and is_stringy(node.value):
                        self.builders[fn.name].append((node.value, inner))


class Renderer:
    """Templates of a message expression, with the string variables of its function in view."""

    def __init__(self, assignments: dict[str, list[tuple[int, ast.expr]]], module: Module | None):
        self.assignments = assignments
        self.module = module

    def render(self, node: ast.expr, line: int, depth: int = 0) -> list[str]:
        """Every template the expression can produce (a few at most)."""
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else ["{}"]
        if isinstance(node, ast.JoinedStr):
            return ["".join(self.fstring_part(v) for v in node.values)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.combine(self.render(node.left, line, depth), self.render(node.right, line, depth))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return [percent_to_braces(t) for t in self.render(node.left, line, depth)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            return [format_to_braces(t) for t in self.render(node.func.value, line, depth)]
        if isinstance(node, ast.IfExp):
            return (self.render(node.body, line, depth) + self.render(node.orelse, line, depth))[:MAX_VARIANTS]
        if isinstance(node, ast.Name) and depth == 0:
            return self.variable(node.id, line) or ["{}"]
        if isinstance(node, ast.Call) and depth == 0:
            return self.built(node) or ["{}"]
        return ["{}"]

    def fstring_part(self, value: ast.expr) -> str:
        """An f-string's literal text as is, each `{field}` as `{}`."""
        if isinstance(value, ast.Constant):
            return str(value.value)
        return "{}"

    def variable(self, name: str, line: int) -> list[str]:
        """The templates a string variable was given before `line` in the same function, or
        as a module constant."""
        out = []
        for at, value in self.assignments.get(name, []):
            if at < line and is_stringy(value):
                out.extend(self.render(value, at, depth=1))
        if not out and self.module is not None and self.assignments is not self.module.constants:
            for at, value in self.module.constants.get(name, []):
                if is_stringy(value):
                    out.extend(self.render(value, at, depth=1))
        return out[-MAX_VARIANTS:]

    def built(self, call: ast.Call) -> list[str]:
        """The messages a function of the same module returns (`X.get_message(...)`)."""
        func = call.func
        name = ""
        if isinstance(func, ast.Name):
            name = func.id
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id != "self":
            name = func.attr  # `RayOutOfMemoryError.get_message(...)`, not `self.x()`
        if self.module is None or name not in self.module.builders:
            return []
        out = []
        for value, inner in self.module.builders[name]:
            out.extend(inner.render(value, value.lineno, depth=1))
        return out[:MAX_VARIANTS]

    @staticmethod
    def combine(left: list[str], right: list[str]) -> list[str]:
        """`a + b` when either side can be several templates (a few at most)."""
        return [a + b for a in left for b in right][:MAX_VARIANTS]


def is_stringy(node: ast.expr) -> bool:
    """Whether an expression is built from string literals (so it has text to keep)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return is_stringy(node.left) or is_stringy(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return is_stringy(node.func.value) or isinstance(node.func.value, ast.Name)
    if isinstance(node, ast.IfExp):
        return is_stringy(node.body) or is_stringy(node.orelse)
    return False


def string_assignments(scope: ast.AST) -> dict[str, list[tuple[int, ast.expr]]]:
    """`name = <string expression>` in one function (not in the functions nested in it)."""
    found = defaultdict(list)
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id].append((node.lineno, node.value))
        stack.extend(ast.iter_child_nodes(node))
    for v in found.values():
        v.sort(key=lambda a: a[0])
    return found


def raised_message(call: ast.Call) -> ast.expr | None:
    """The argument of an exception that holds its message: the first string, or the first."""
    for arg in call.args:
        if is_stringy(arg):
            return arg
    return message_node(call)


def message_node(call: ast.Call, skip_first: bool = False) -> ast.expr | None:
    """The argument of a call that holds its message."""
    args = call.args[1:] if skip_first else call.args
    if args and not isinstance(args[0], ast.Starred):
        return args[0]
    for kw in call.keywords:
        if kw.arg in MESSAGE_KEYWORDS:
            return kw.value
    return None


class Stats:
    """What one extraction counted, per version."""

    def __init__(self):
        self.files = Counter()
        self.parse_failures = Counter()
        self.sites = Counter()          # (version, component, level) -> sites with a template
        self.all_variable = Counter()   # version -> messages that are wholly a variable
        self.no_message = Counter()     # version -> raises with no message at all
        self.grep_sites = Counter()     # (version, component) -> lines the text count finds
        self.grep_found = Counter()     # (version, component) -> of those, lines with a template
        self.templates = defaultdict(set)  # version -> templates present


# A plain text count of error-level call sites, to estimate what the parse misses.
GREP = re.compile(r"\b\w*log(ger)?\.(error|exception|critical|fatal)\(|\braise \w+(Error|Exception)\(")


def messages_of(tree: ast.AST):
    """(line, level, exception class, message node, lazy %-args?, renderer) for every message."""
    module = Module(tree)
    scopes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes:
        renderer = Renderer(module.constants if scope is tree else string_assignments(scope), module)
        for node in walk_own(scope):
            if isinstance(node, ast.Raise):
                cls = exception_name(node.exc)
                if cls:
                    yield node.lineno, "exception", cls, raised_message(node.exc), False, renderer
            elif isinstance(node, ast.Call):
                level = log_level(node)
                if level:
                    skip = isinstance(node.func, ast.Attribute) and node.func.attr == "log"
                    lazy = len(node.args) > (2 if skip else 1)
                    yield node.lineno, level, None, message_node(node, skip), lazy, renderer
            for value in status_message_values(node):
                yield value.lineno, "error", None, value, False, renderer
    yield from class_messages(tree, module)


FAILED_STATUS = re.compile(r"FAIL|UNHEALTHY|ERROR")


def status_message_values(node: ast.AST) -> list[ast.expr]:
    """The strings that travel with a failure status: Serve's application and deployment status
    messages (`return ApplicationStatus.DEPLOY_FAILED, f"..."`, `handle_transition(trigger=
    ...REPLICA_STARTUP_FAILED, message=...)`). The controller logs them at ERROR when the
    status changes, and they are what `serve status` and a RayService's status show."""
    if isinstance(node, ast.Tuple):
        parts = list(node.elts)
    elif isinstance(node, ast.Call):
        parts = list(node.args) + [kw.value for kw in node.keywords]
    else:
        return []
    if not any(is_failure_status(p) for p in parts):
        return []
    return [p for p in parts if is_stringy(p) or isinstance(p, ast.Name)]


def is_failure_status(node: ast.expr) -> bool:
    """`ApplicationStatus.DEPLOY_FAILED`, `DeploymentStatusInternalTrigger.HEALTH_CHECK_FAILED`."""
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id.endswith(("Status", "Trigger"))
            and bool(FAILED_STATUS.search(node.attr)))


def class_messages(tree: ast.AST, module: "Module"):
    """The text an exception class builds for itself (`ray/exceptions.py`: `ActorDiedError`,
    `ObjectLostError`...): what its methods return, pass to `super().__init__`, or keep in a
    variable named like a message."""
    for cls in ast.walk(tree):
        if not (isinstance(cls, ast.ClassDef) and cls.name.endswith(("Error", "Exception"))):
            continue
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            renderer = Renderer(string_assignments(fn), module)
            for node in walk_own(fn):
                for value in own_message_values(node):
                    if is_stringy(value):
                        yield value.lineno, "exception", cls.name, value, False, renderer


def own_message_values(node: ast.AST) -> list[ast.expr]:
    """A return value, a `super().__init__` argument, or a value of a variable named like a
    message, inside an exception class."""
    if isinstance(node, ast.Return) and node.value is not None:
        return [node.value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__":
        return node.args[:1]
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        named = [t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in targets]
        if any(re.search(r"msg|message|error|str", n, re.I) for n in named):
            return [node.value]
    return []


def walk_own(scope: ast.AST):
    """The nodes of a scope, not descending into the functions defined in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(ast.iter_child_nodes(node))


def read_wheel(version: str, wheel: Path, catalogue: Catalogue, stats: Stats) -> None:
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(z.namelist()):
            path = PURELIB.sub("", name)  # 2.0's wheel keeps ray/ under ray-2.0.1.data/purelib/
            if not path.endswith(".py") or not path.startswith("ray/") or SKIP.search(path):
                continue
            source = z.read(name).decode("utf-8", errors="replace")
            read_module(version, path, source, catalogue, stats)


def read_module(version: str, path: str, source: str, catalogue: Catalogue, stats: Stats) -> None:
    comp = component(path)
    stats.files[version] += 1
    grep_lines = {n for n, text in enumerate(source.splitlines(), 1) if GREP.search(text)}
    stats.grep_sites[(version, comp)] += len(grep_lines)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        stats.parse_failures[version] += 1
        return
    for line, level, cls, node, lazy, renderer in messages_of(tree):
        if node is None:
            stats.no_message[version] += 1
            continue
        rendered = renderer.render(node, line)
        if lazy:  # `logger.error("... %s", x)`: the arguments fill the %-fields
            rendered = [percent_to_braces(t) for t in rendered]
        templates = [t for t in rendered if not ALL_VARIABLE.match(t)]
        if not templates:
            stats.all_variable[version] += 1
            continue
        stats.sites[(version, comp, level)] += 1
        if line in grep_lines:
            stats.grep_found[(version, comp)] += 1
            grep_lines.discard(line)
        for t in dict.fromkeys(templates):
            catalogue.add(version, comp, level, t, f"python/{path}:{line}", exception=cls)
            stats.templates[version].add(one_line(t))


def wheel_for(version: str) -> Path:
    """The cached wheel of a version, downloaded first if it is not there."""
    found = sorted(WHEELS.glob(f"ray-{version}-*.whl"))
    if found:
        return found[0]
    WHEELS.mkdir(parents=True, exist_ok=True)
    # Older releases have no wheel for the newest Pythons: try the newest first.
    for python in ("3.11", "3.10", "3.9"):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"ray=={version}", "--no-deps",
             "--only-binary", ":all:", "--python-version", python,
             "--platform", "manylinux2014_x86_64", "-d", str(WHEELS), "-q"],
            capture_output=True, text=True)
        found = sorted(WHEELS.glob(f"ray-{version}-*.whl"))
        if done.returncode == 0 and found:
            return found[0]
    raise SystemExit(f"no wheel for ray {version}")


def write_sources(wheels: dict[str, Path]) -> Path:
    path = MESSAGES / "sources-python.toml"
    lines = ["# The Ray versions read for ray-python.jsonl: one wheel from the package registry each,",
             "# read from the zip with `ast` (scripts/catalogue/extract_python.py).", ""]
    for version, wheel in wheels.items():
        lines += ["[[version]]", f'version = "{version}"', 'how = "wheel"',
                  f'wheel = "{wheel.name}"', f'sha256 = "{sha256(wheel)}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def report(catalogue: Catalogue, stats: Stats, versions: list[str]) -> None:
    """Print what was measured: per version, per component and level, and coverage."""
    print(f"ray-python: {len(catalogue.entries)} templates from {len(versions)} versions")
    print("\nversion   files  parse-fail  templates  new  removed  all-variable  no-message  coverage")
    previous: set[str] = set()
    for v in versions:
        now = stats.templates[v]
        print(f"{v:8} {stats.files[v]:6} {stats.parse_failures[v]:11} {len(now):10} "
              f"{len(now - previous):4} {len(previous - now):8} {stats.all_variable[v]:13} "
              f"{stats.no_message[v]:11} {coverage(stats, v):8.1f} %")
        previous = now
    by = Counter((e["component"], e["level"]) for e in catalogue.entries.values())
    levels = ["critical", "error", "warning", "exception"]
    print("\ncomponent          " + "".join(f"{lv:>10}" for lv in levels) + "     total")
    for comp in sorted({c for c, _ in by}):
        row = [by[(comp, lv)] for lv in levels]
        print(f"{comp:18} " + "".join(f"{n:10}" for n in row) + f"{sum(row):10}")
    print_matrix(catalogue, versions)
    newest = versions[-1]
    print(f"\ncoverage in {newest}: of the lines a text search finds "
          "(`log.error|exception|critical(`, `raise XError(`), those with a template")
    for comp in sorted({c for (v, c) in stats.grep_sites if v == newest}):
        got, grep = stats.grep_found[(newest, comp)], stats.grep_sites[(newest, comp)]
        if grep:
            print(f"  {comp:18} {got:5} / {grep:5}  {100 * got / grep:5.1f} %")


def print_matrix(catalogue: Catalogue, versions: list[str]) -> None:
    """Templates per component in each version (a template counts in every version that has it)."""
    per = Counter((comp, v) for e in catalogue.entries.values() for comp in [e["component"]]
                  for v in e["versions"])
    print("\ncomponent          " + "".join(f"{v:>8}" for v in versions))
    for comp in sorted({c for c, _ in per}):
        print(f"{comp:18} " + "".join(f"{per[(comp, v)]:8}" for v in versions))


def coverage(stats: Stats, version: str, comp: str | None = None) -> float:
    """Of the lines a text search finds as error sites, the share that gave a template."""
    keys = [k for k in stats.grep_sites if k[0] == version and comp in (None, k[1])]
    grep = sum(stats.grep_sites[k] for k in keys)
    return 100 * sum(stats.grep_found[k] for k in keys) / grep if grep else 0.0


def main(argv: list[str] | None = None) -> None:
    """Read the versions (`--versions V1,V2`, or the default spread) and write the files.
    Flags meant for the other extractors are ignored."""
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=lambda s: s.split(","), default=None)
    args, _ = parser.parse_known_args(argv)
    versions = sorted(args.versions or VERSIONS, key=version_key)
    catalogue, stats, wheels = Catalogue("ray", "python"), Stats(), {}
    for version in versions:
        wheels[version] = wheel_for(version)
        read_wheel(version, wheels[version], catalogue, stats)
    print(f"wrote {catalogue.write().relative_to(ROOT)} and {write_sources(wheels).relative_to(ROOT)}")
    report(catalogue, stats, versions)


if __name__ == "__main__":
    main()
