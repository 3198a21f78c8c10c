#!/usr/bin/env python3
"""Extracts the keys of Ray Serve's config schema, per Ray version, into the data file
raysift compiles in (`src/serve_schema/serve-schema.toml`).

A Serve config (`serve deploy config.yaml`, a RayService's `serveConfigV2`) is validated by
pydantic models in Ray's `ray/serve/schema.py` (`ServeDeploySchema` → `ServeApplicationSchema`
→ `DeploymentSchema` → `RayActorOptionsSchema`, …) and `ray/serve/config.py`
(`AutoscalingConfig`, …). Whether a key the model does not know is refused (`extra =
forbid`: the deploy fails with `extra fields not permitted`) or dropped without a word
(pydantic's default, `ignore`) depends on the model and the version. raysift checks every
Serve config in a bundle against the schema of the bundle's Ray version; this script gives it
the schema as data.

Usage (nothing here imports Ray or pydantic: the files are read with `ast`, never run):

    pip download ray==2.9.3 --no-deps --only-binary=:all: --python-version 3.11 \\
        --platform manylinux2014_x86_64 -d wheels/
    python3 scripts/serve_schema.py wheels/*.whl > src/serve_schema/serve-schema.toml

Each argument is a Ray wheel, or a folder holding `ray/serve/schema.py` (an unpacked wheel,
a `site-packages`). From each, the script reads `ray/_version.py` or, before 2.9,
`ray/__init__.py` (version and commit),
`ray/serve/schema.py`, `ray/serve/config.py`, `ray/serve/_private/config.py` and
`ray/serve/_private/constants.py`, and walks the models from `ServeDeploySchema` down, following
every field whose type names another model. For each model it writes the field names, a
field's default where it is simple (a literal, a constant of `constants.py`, an enum member,
an empty list or map; `required` for `Field(...)`), the model a field holds (`model`, with
`list = true` for a list of them) and the model's policy for unknown keys (`extra`: `forbid`,
`ignore` or `allow`, from `extra=Extra.forbid`, `class Config: extra = …` or `model_config =
ConfigDict(extra=…)`, inherited; pydantic's default is `ignore`).

Two defaults are Serve's own rather than the schema's, and are named with where they come
from (`from`): a `DeploymentSchema` field left at `DEFAULT.VALUE` takes the default of the
same field of `DeploymentConfig` (`_private/config.py`), or the application code's value;
and a replica's `ray_actor_options.num_cpus` is set to 1 by `ReplicaConfig` when missing.
`DeploymentConfig`'s validators that fill in a field left `None` (`if v is None: v =
DEFAULT_…`, as for `max_concurrent_queries`) give that default instead of `null`.
A `DeploymentSchema` field typed as a plain dict (`autoscaling_config` before the schema
named its model) is linked to the model `DeploymentConfig` gives the same field.

Versions whose output is the same are written as one range of minor versions (`first`,
`last`), with the versions read and their commits (`read`). Only names, defaults and where
they come from are written: no Ray code. The tests do not run this script.
"""

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

FILES = {
    "schema": "ray/serve/schema.py",
    "config": "ray/serve/config.py",
    "private_config": "ray/serve/_private/config.py",
    "constants": "ray/serve/_private/constants.py",
}
# Where a wheel says its version and commit: `_version.py` from 2.9 on, `__init__.py` before.
VERSION_FILES = ["ray/_version.py", "ray/__init__.py"]
ROOT = "ServeDeploySchema"
# The model whose defaults a `DeploymentSchema` field left at `DEFAULT.VALUE` takes.
EFFECTIVE = {"DeploymentSchema": "DeploymentConfig"}
MODEL_BASES = {"BaseModel"}
ENUM_BASES = {"Enum", "IntEnum", "StrEnum"}


def read_sources(arg):
    """{key: (path, text)} of the files of one wheel or folder, and the version file."""
    path = Path(arg)
    wanted = dict(FILES, version=VERSION_FILES[0], init=VERSION_FILES[1])
    out = {}
    if path.is_file():
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            for key, member in wanted.items():
                if member in names:
                    out[key] = (member, z.read(member).decode("utf-8"))
    else:
        for key, member in wanted.items():
            f = path / member
            if f.is_file():
                out[key] = (member, f.read_text(encoding="utf-8"))
    return out


def version_of(sources):
    text = sources.get("version", ("", ""))[1] + "\n" + sources.get("init", ("", ""))[1]
    version = re.search(r'^(?:__)?version(?:__)? = "([^"]+)"', text, re.M)
    commit = re.search(r'^(?:__)?commit(?:__)? = "([0-9a-f]+)"', text, re.M)
    return (version.group(1) if version else None, commit.group(1) if commit else "")


class Module:
    """One file: its classes and module-level assignments."""

    def __init__(self, path, text):
        self.path = path
        self.tree = ast.parse(text)
        self.text = text
        self.classes = {}
        self.assigns = {}
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.assigns[t.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.value is not None:
                    self.assigns[node.target.id] = node.value


class Schema:
    def __init__(self, sources):
        self.modules = {k: Module(*sources[k]) for k in FILES if k in sources}
        self.classes = {}
        for m in self.modules.values():
            for name, node in m.classes.items():
                self.classes.setdefault(name, (m, node))

    def base_names(self, node):
        return [ast.unparse(b).split(".")[-1] for b in node.bases]

    def is_model(self, name, seen=()):
        if name not in self.classes or name in seen:
            return False
        _, node = self.classes[name]
        for b in self.base_names(node):
            if b in MODEL_BASES or self.is_model(b, seen + (name,)):
                return True
        return False

    def enum_value(self, cls, member):
        if cls not in self.classes:
            return None
        _, node = self.classes[cls]
        if not any(b in ENUM_BASES for b in self.base_names(node)):
            return None
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == member for t in stmt.targets
            ):
                return literal(stmt.value)
        return None

    def extra(self, name, seen=()):
        """The model's policy for unknown keys, inherited; pydantic's default is `ignore`."""
        if name not in self.classes or name in seen:
            return "ignore"
        _, node = self.classes[name]
        for kw in node.keywords:
            if kw.arg == "extra":
                return extra_word(kw.value)
        for stmt in node.body:
            if isinstance(stmt, ast.ClassDef) and stmt.name == "Config":
                for s in stmt.body:
                    if isinstance(s, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "extra" for t in s.targets
                    ):
                        return extra_word(s.value)
            target = assigned_name(stmt)
            if target == "model_config" and isinstance(stmt.value, ast.Call):
                for kw in stmt.value.keywords:
                    if kw.arg == "extra":
                        return extra_word(kw.value)
        for b in self.base_names(node):
            if self.is_model(b):
                return self.extra(b, seen + (name,))
        return "ignore"

    def fields(self, name, seen=()):
        """[(field name, annotation node, value node)] of a model, its bases' first."""
        if name not in self.classes or name in seen:
            return []
        _, node = self.classes[name]
        out = []
        for b in self.base_names(node):
            if self.is_model(b):
                out.extend(self.fields(b, seen + (name,)))
        for stmt in node.body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            fname = stmt.target.id
            ann = ast.unparse(stmt.annotation)
            if fname.startswith("_") or fname == "model_config" or "ClassVar" in ann:
                continue
            out = [f for f in out if f[0] != fname]
            out.append((fname, stmt.annotation, stmt.value))
        return out

    def models_in(self, annotation):
        """The models an annotation names, and whether it is a list of one."""
        names = [
            n.id if isinstance(n, ast.Name) else n.attr
            for n in ast.walk(annotation)
            if isinstance(n, (ast.Name, ast.Attribute))
        ]
        models = [n for n in names if self.is_model(n)]
        is_list = bool(re.match(r"^(Optional\[)?(List|list|Sequence)\[", ast.unparse(annotation)))
        return models, is_list

    def constant(self, name, depth=0):
        """The value of a module-level constant, where it is simple."""
        if depth > 4:
            return None
        for key in ("constants", "schema", "config", "private_config"):
            m = self.modules.get(key)
            if m and name in m.assigns:
                return self.value(m.assigns[name], depth + 1)
        return None

    def value(self, node, depth=0):
        """A default as text (`None` when it is not simple); `required` for `...`."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return "required"
        lit = literal(node)
        if lit is not None:
            return lit
        if isinstance(node, ast.Name):
            return self.constant(node.id, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "DEFAULT":
                return None
            return self.enum_value(node.value.id, node.attr) or node.attr
        if isinstance(node, ast.Lambda):
            return self.value(node.body, depth)
        if isinstance(node, ast.Call):
            fn = ast.unparse(node.func)
            if fn.split(".")[-1] == "Field":
                return self.field_default(node, depth)
            # `int(os.environ.get("X", 8000))`, `get_env_float("X", 1.0)`: the default given.
            if fn in ("int", "float", "str", "bool") and node.args:
                return self.value(node.args[0], depth)
            if "environ.get" in fn or fn.startswith("get_env"):
                if len(node.args) >= 2:
                    return self.value(node.args[1], depth)
                for kw in node.keywords:
                    if kw.arg == "default":
                        return self.value(kw.value, depth)
        return None

    def field_default(self, call, depth=0):
        for kw in call.keywords:
            if kw.arg == "default":
                return self.value(kw.value, depth)
            if kw.arg == "default_factory":
                f = kw.value
                if isinstance(f, ast.Name) and f.id in ("list", "dict", "set"):
                    return {"list": "[]", "dict": "{}", "set": "[]"}[f.id]
                return self.value(f, depth)
        if call.args:
            return self.value(call.args[0], depth)
        return None

    def is_default_sentinel(self, node):
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "Field":
            for kw in node.keywords:
                if kw.arg == "default":
                    return ast.unparse(kw.value) == "DEFAULT.VALUE"
            return bool(call_args(node)) and ast.unparse(node.args[0]) == "DEFAULT.VALUE"
        return node is not None and ast.unparse(node) == "DEFAULT.VALUE"

    def filled_in(self, model):
        """{field: default node} a model's validators fill in when the field is `None`:
        `@validator("f", always=True)` whose body reads `if v is None: v = DEFAULT_…`."""
        out = {}
        if model not in self.classes:
            return out
        _, node = self.classes[model]
        for fn in node.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            fields = [
                d.args[0].value
                for d in fn.decorator_list
                if isinstance(d, ast.Call)
                and ast.unparse(d.func).split(".")[-1] in ("validator", "field_validator")
                and d.args
                and isinstance(d.args[0], ast.Constant)
            ]
            if len(fields) != 1:
                continue
            for stmt in ast.walk(fn):
                if (
                    isinstance(stmt, ast.If)
                    and re.fullmatch(r"\w+ is None", ast.unparse(stmt.test))
                    and stmt.body
                    and isinstance(stmt.body[0], ast.Assign)
                ):
                    out[fields[0]] = stmt.body[0].value
                    break
        return out

    def replica_num_cpus(self):
        m = self.modules.get("private_config")
        if not m:
            return None
        hit = re.search(r'ray_actor_options\["num_cpus"\]\s*=\s*(\d+(?:\.\d+)?)', m.text)
        return hit.group(1) if hit else None

    def walk(self):
        """{model: {file, extra, fields}} of every model reachable from the root."""
        out = {}
        todo = [ROOT]
        while todo:
            name = todo.pop()
            if name in out or name not in self.classes:
                continue
            module, _ = self.classes[name]
            effective = EFFECTIVE.get(name)
            eff_fields = {f[0]: f for f in self.fields(effective)} if effective else {}
            eff_module = self.classes[effective][0].path if effective in self.classes else ""
            eff_filled = self.filled_in(effective) if effective else {}
            fields = []
            for fname, ann, val in self.fields(name):
                entry = {"name": fname}
                default = None
                source = None
                if self.is_default_sentinel(val) and fname in eff_fields:
                    default = self.value(eff_fields[fname][2])
                    if default == "null" and fname in eff_filled:
                        default = self.value(eff_filled[fname]) or default
                    source = f"{eff_module} {effective}"
                else:
                    default = self.value(val)
                if name == "RayActorOptionsSchema" and fname == "num_cpus":
                    cpus = self.replica_num_cpus()
                    if cpus is not None:
                        default = cpus
                        source = f"{FILES['private_config']} ReplicaConfig"
                if default is not None:
                    entry["default"] = default
                    if source:
                        entry["from"] = source
                models, is_list = self.models_in(ann)
                if not models and fname in eff_fields:
                    models, is_list = self.models_in(eff_fields[fname][1])
                    if models:
                        entry["model_from"] = f"{eff_module} {effective}"
                if models:
                    entry["model"] = models[0]
                    if is_list:
                        entry["list"] = True
                    todo.append(models[0])
                fields.append(entry)
            out[name] = {"file": module.path, "extra": self.extra(name), "fields": fields}
        return out


def call_args(node):
    return getattr(node, "args", [])


def assigned_name(stmt):
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        t = stmt.targets[0]
        return t.id if isinstance(t, ast.Name) else None
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return None


def extra_word(node):
    text = ast.unparse(node)
    for word in ("forbid", "ignore", "allow"):
        if word in text:
            return word
    return "ignore"


def literal(node):
    """A literal default as the text a YAML config would hold, else `None`."""
    try:
        v = ast.literal_eval(node)
    except Exception:
        return None
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple, set)) and not v:
        return "[]"
    if isinstance(v, dict) and not v:
        return "{}"
    return None


def minor(version):
    parts = version.split(".")
    return ".".join(parts[:2])


def vkey(version):
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.]", version))


def toml_str(s):
    return json.dumps(s, ensure_ascii=False)


def main(args):
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    read = []
    for arg in args:
        sources = read_sources(arg)
        version, commit = version_of(sources)
        if version is None or "schema" not in sources:
            print(f"{arg}: no Ray version or no ray/serve/schema.py, skipped", file=sys.stderr)
            continue
        models = Schema(sources).walk()
        if ROOT not in models:
            print(f"{arg}: Ray {version} has no {ROOT} (no multi-application config), skipped",
                  file=sys.stderr)
            continue
        read.append((version, commit, models))
    read.sort(key=lambda r: vkey(r[0]))
    ranges = []
    for version, commit, models in read:
        same = ranges and json.dumps(ranges[-1]["models"], sort_keys=True) == json.dumps(
            models, sort_keys=True
        )
        if same:
            ranges[-1]["read"].append(f"{version} {commit}")
            ranges[-1]["last"] = minor(version)
        else:
            ranges.append({
                "first": minor(version),
                "last": minor(version),
                "read": [f"{version} {commit}"],
                "models": models,
            })
    out = []
    out.append("# Ray Serve's config schema, per range of Ray minor versions: the keys each model of a")
    out.append("# Serve config knows, their defaults where simple, and whether the model refuses")
    out.append("# (`forbid`) or drops (`ignore`, `allow`) a key it does not know.")
    out.append("#")
    out.append("# Written by scripts/serve_schema.py from the Ray wheels named in each range's `read`")
    out.append("# (version and commit), reading " + ", ".join(FILES.values()) + ";")
    out.append("# do not edit by hand. Field names, defaults and where they come from only: no Ray code.")
    for r in ranges:
        out.append("")
        out.append("[[range]]")
        out.append(f"first = {toml_str(r['first'])}")
        out.append(f"last = {toml_str(r['last'])}")
        out.append("read = [" + ", ".join(toml_str(v) for v in r["read"]) + "]")
        for name in sorted(r["models"], key=lambda n: (n != ROOT, n)):
            m = r["models"][name]
            out.append("")
            out.append(f"[range.models.{name}]")
            out.append(f"file = {toml_str(m['file'])}")
            out.append(f"extra = {toml_str(m['extra'])}")
            out.append("fields = [")
            for f in m["fields"]:
                parts = [f"name = {toml_str(f['name'])}"]
                for key in ("default", "from", "model", "model_from"):
                    if key in f:
                        parts.append(f"{key} = {toml_str(f[key])}")
                if f.get("list"):
                    parts.append("list = true")
                out.append("  { " + ", ".join(parts) + " },")
            out.append("]")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
