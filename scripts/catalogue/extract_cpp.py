"""Extract the messages of Ray's C++ core (GCS, raylet, core worker, memory monitor, object store).

Writes patterns/messages/ray-cpp.jsonl (see patterns/messages/README.md) from two inputs:

--ray-src DIR   a tree holding `src/ray/...`: a Ray checkout (`git clone --depth 1 --branch
                ray-2.X`), or a tree of the files read one by one. Every .cc/.h file under
                src/ray is read, tests, mocks and fakes skipped; the component comes from the
                path (COMPONENT_DIRS, else `ray.other`). Templates and sites
                (`src/ray/...:line`) come from here. The tree's version is
                `--src-version`, else `python/ray/_version.py`, else `source` (a tree of files
                read one by one: their commits go in its SOURCES.toml, copied into
                sources-cpp.toml).
--wheels DIR    Ray wheels (`pip download ray==2.X --no-deps --only-binary :all:
                --python-version 3.11 --platform manylinux2014_x86_64 -d DIR`). The string
                literals compiled into each wheel's `raylet`, `gcs_server` and `_raylet.so` give
                the versions column: a template is in a wheel's version when every literal of
                it (six characters or more) is one of those strings or the tail of one.

What is read:
- `RAY_LOG(WARNING|ERROR|FATAL)`, `RAY_LOG_EVERY_N`/`_MS`/`_OR` at those levels, with any
  `.WithField(...)`, and the `<<` stream up to the `;`: literals joined, every other operand
  `{}` (`absl::StrCat` / `absl::StrFormat` operands expanded; a local string stream or string
  variable logged whole, `msg.str()`, is replaced by what was put in it);
- `RAY_EVENT(ERROR|FATAL|WARNING, label) << ...` the same way (event files), where a
  `RAY_LOG` carries the same words its level wins;
- `RAY_CHECK(cond) << ...` (level `check`): `Check failed: <cond> <message>`, the condition as
  written with its whitespace collapsed, as the preprocessor prints it;
- `RAY_CHECK_EQ` and the rest of the family: Ray prints its own condition,
  `(_left_ == _right_)` (2.0 to 2.3x) or `RAY_PREDICT_TRUE(_left_ == _right_)`, then
  `<left> vs <right>`: the template is `Check failed: {}(_left_ == _right_) {} vs {} <message>`;
- `RAY_CHECK_OK(expr)`: `Check failed: {}_s.ok() {}`, one entry for every site;
- `Status::IOError("...")`, `Status::Invalid(...)` and the other `Status` builders, and
  `set_error_message(...)` (the error text of an actor's or task's death cause) (level
  `returned`): the message as built, which surfaces in logs and exceptions.

Usage, from the repository root (also through extract.py):

    python3 scripts/catalogue/extract_cpp.py --ray-src target/catalogue/ray-src/TREE \
        --wheels target/catalogue/wheels

It also writes patterns/messages/sources-cpp.toml: the source tree (and its SOURCES.toml, the
commit of each file where the tree was read file by file), the wheels with their sha256, and
per file how many of its message sites each wheel holds (which release the file matches).
"""

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from bisect import bisect_left
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MESSAGES, Catalogue, sha256, version_key  # noqa: E402

COMPONENT_DIRS = [
    ("src/ray/common/memory_monitor", "memory_monitor"),
    ("src/ray/common/monitors/", "memory_monitor"),
    ("src/ray/raylet/worker_killing_policy", "memory_monitor"),
    ("src/ray/raylet/memory_monitor", "memory_monitor"),
    ("src/ray/gcs/", "gcs"),
    ("src/ray/raylet/", "raylet"),
    ("src/ray/raylet_client/", "raylet"),
    ("src/ray/core_worker/", "core_worker"),
    ("src/ray/object_manager/", "object_store"),
]
SKIPPED = re.compile(r"(_test\.cc$|_test\.h$|/tests?/|/mock|/fake_|test_util|/benchmarks?/)")
LEVELS = {"WARNING": "warning", "ERROR": "error", "FATAL": "fatal"}
BINARIES = ("ray/core/src/ray/raylet/raylet", "ray/core/src/ray/gcs/gcs_server", "ray/_raylet.so")
MIN_LITERAL_CHECKED = 6

LOG_START = re.compile(
    r"\bRAY_(?:LOG(?:_EVERY_N|_EVERY_N_OR_DEBUG|_EVERY_MS|_EVERY_MS_OR|_IF_ERROR)?"
    r"|EVENT(?:_EVERY_MS)?)\s*\(\s*(\w+)")
STREAM_DECL = re.compile(r"\bstd::(?:o)?stringstream\s+(\w+)\s*;")
STREAM_PUT = re.compile(r"\b(\w+)\s*<<")
STRING_VAR = re.compile(
    r"\b(?:const\s+)?(?:auto|std::string)\s*&?\s*(\w+)\s*=\s*"
    r"|(?<![\w.>])(\w+)\s*=\s*(?=(?:absl::)?Str(?:Cat|Format)\s*\(|\"|\w+\.str\(\))")
CHECK_START = re.compile(r"\bRAY_CHECK(_EQ|_NE|_LE|_LT|_GE|_GT|_OK)?\s*\(")
STATUS_START = re.compile(r"\bStatus::(\w+)\s*\(|\bset_error_message\s*\(()")
STATUS_BUILDERS = {
    "IOError", "Invalid", "NotFound", "TimedOut", "Interrupted", "KeyError", "TypeError",
    "OutOfMemory", "ObjectStoreFull", "ObjectExists", "ObjectNotFound", "ObjectAlreadySealed",
    "ObjectUnknownOwner", "IntentionalSystemExit", "UnexpectedSystemExit",
    "CreationTaskError", "NotImplemented", "RedisError", "RpcError", "UnknownError",
    "OutOfDisk", "OutOfResource", "GrpcUnavailable", "GrpcUnknown", "InvalidArgument",
    "AlreadyExists", "PermissionDenied", "Disconnected", "SchedulingCancelled",
    "ChannelError", "ChannelTimeoutError", "Unauthenticated", "AuthError", "Cancelled",
}
OPS = {"_EQ": "==", "_NE": "!=", "_LE": "<=", "_LT": "<", "_GE": ">=", "_GT": ">"}
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r", "0": "\0"}


# --- reading C++ text -----------------------------------------------------------------------

def strip_comments(text: str) -> str:
    """The text with comments blanked (newlines kept, so line numbers hold); literals kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"' or c == "'":
            j = skip_quoted(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            j = skip_raw(text, i)
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_quoted(text: str, i: int) -> int:
    """The index just past the quoted literal starting at `i`."""
    q, j = text[i], i + 1
    while j < len(text) and text[j] != q:
        j += 2 if text[j] == "\\" else 1
    return j + 1


def skip_raw(text: str, i: int) -> int:
    """The index just past the raw string `R"delim( ... )delim"` starting at `i`."""
    open_paren = text.find("(", i)
    delim = text[i + 2:open_paren]
    end = text.find(")" + delim + '"', open_paren)
    return len(text) if end < 0 else end + len(delim) + 2


def balanced(text: str, i: int) -> int:
    """Given `text[i]` an opening bracket, the index just past its match."""
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
        elif c in "\"'":
            j = skip_quoted(text, j) - 1
        j += 1
    return len(text)


def statement_end(text: str, i: int) -> int:
    """The index of the `;` ending the statement that goes on at `i` (brackets respected)."""
    j = i
    while j < len(text):
        c = text[j]
        if c == ";":
            return j
        if c in "([{":
            j = balanced(text, j)
            continue
        if c in ")]}":
            return j
        if c in "\"'":
            j = skip_quoted(text, j)
            continue
        j += 1
    return len(text)


def split_top(text: str, sep: str) -> list[str]:
    """`text` split at `sep` where it stands outside brackets and literals."""
    parts, depth, start, j = [], 0, 0, 0
    while j < len(text):
        c = text[j]
        if c in "\"'":
            j = skip_quoted(text, j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, j):
            parts.append(text[start:j])
            j += len(sep)
            start = j
            continue
        j += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


LITERAL_RUN = re.compile(r'^(?:\s*(?:u8|L)?"(?:[^"\\]|\\.)*"\s*)+$', re.S)
ONE_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)


def literal_value(operand: str) -> str | None:
    """The text of an operand made only of (adjacent) string literals, else None."""
    operand = operand.strip()
    while operand.startswith("(") and balanced(operand, 0) == len(operand):
        operand = operand[1:-1].strip()
    if operand.startswith("std::string(") and balanced(operand, len("std::string")) == len(operand):
        operand = operand[len("std::string("):-1]
    if not LITERAL_RUN.match(operand):
        return None
    return "".join(unescape(m.group(1)) for m in ONE_LITERAL.finditer(operand))


def unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), s)


FORMAT_VERB = re.compile(r"%[-+ #0]*[\d*]*(?:\.[\d*]+)?(?:hh|h|ll|l|z|j|t)?[diouxXeEfgGcsp]")


def operand_parts(operand: str, streams=None) -> list[str | None]:
    """An operand as literal pieces and `None` for each value it prints.

    `streams` resolves a local string stream (`error_message.str()`) to what was put in it.
    """
    lit = literal_value(operand)
    if lit is not None:
        return [lit]
    if streams is not None:
        built = streams(operand)
        if built is not None:
            return built
    m = re.match(r"^(?:absl::|::absl::)?(StrCat|StrFormat|StrJoin)\s*\(", operand)
    if m and balanced(operand, m.end() - 1) == len(operand):
        args = split_top(operand[m.end():-1], ",")
        if m.group(1) == "StrCat":
            return [p for a in args for p in operand_parts(a, streams)]
        if m.group(1) == "StrFormat" and args and literal_value(args[0]) is not None:
            out: list[str | None] = []
            for i, piece in enumerate(FORMAT_VERB.split(literal_value(args[0]).replace("%%", "%"))):
                if i:
                    out.append(None)
                out.append(Formatted(piece))
            return out
    if "+" in operand and ('"' in operand):
        terms = split_top(operand, "+")
        if len(terms) > 1:
            return [p for t in terms for p in operand_parts(t, streams)]
    return [None]


def stream_parts(stream: str, streams=None) -> list[str | None]:
    """The `<< a << "b"` operands of a log stream as literal pieces and values."""
    parts: list[str | None] = []
    for operand in split_top(stream, "<<")[1:]:
        if operand in ("std::endl", "std::flush", "std::boolalpha"):
            continue
        parts.extend(operand_parts(operand, streams))
    return parts


class Streams:
    """The local string streams of a file (`std::ostringstream msg; msg << ...;`).

    Ray often builds a message in a stream and logs `msg.str()`, or a string copied from
    it; what was put in the stream before the log statement is the message. A string
    variable set from literals or `absl::StrCat` (`std::string msg = ...;`) resolves too.
    """

    def __init__(self, code: str):
        self.code = code
        self.decls = [(m.start(), m.group(1)) for m in STREAM_DECL.finditer(code)]
        names = {name for _, name in self.decls}
        self.puts = []
        for m in STREAM_PUT.finditer(code):
            if m.group(1) in names and statement_start(code, m.start()):
                end = statement_end(code, m.end())
                self.puts.append((m.start(), m.group(1), code[m.end() - 2:end]))
        self.strings = []
        for m in STRING_VAR.finditer(code):
            end = statement_end(code, m.end())
            self.strings.append((m.start(), m.group(1) or m.group(2), code[m.end():end].strip()))

    def at(self, offset: int):
        """A resolver for the operands of a statement at `offset`."""
        return lambda operand: self.resolve(operand.strip(), offset)

    def resolve(self, operand: str, offset: int) -> list[str | None] | None:
        m = re.fullmatch(r"(\w+)\.str\(\)", operand)
        if m:
            return self.contents(m.group(1), offset)
        if re.fullmatch(r"\w+", operand):
            assigned = [(at, expr) for at, var, expr in self.strings
                        if var == operand and at < offset]
            if assigned:
                at, expr = assigned[-1]
                parts = operand_parts(expr, self.at(at))
                if any(p for p in parts if p):
                    return parts
        return None

    def contents(self, name: str, offset: int) -> list[str | None] | None:
        decls = [at for at, n in self.decls if n == name and at < offset]
        if not decls:
            return None
        parts: list[str | None] = []
        for at, n, stream in self.puts:
            if n == name and decls[-1] < at < offset:
                parts.extend(stream_parts(stream))
        return parts or None


def statement_start(code: str, offset: int) -> bool:
    """Whether `offset` begins a statement (after `;`, `{`, `}` or a label)."""
    before = code[:offset].rstrip()
    return not before or before[-1] in ";{}:"


def render(parts: list[str | None]) -> str:
    """A template from literal pieces and values (`{}`)."""
    text = "".join("{}" if p is None else p for p in parts)
    while "{}{}" in text:
        text = text.replace("{}{}", "{}")
    return text


class Formatted(str):
    """A piece of a format string: the binary holds the whole format, not the piece."""


def literals(parts: list[str | None]) -> list[list[str]]:
    """The literals a binary holds for these parts, each as its alternatives."""
    return [[p] for p in parts
            if p is not None and not isinstance(p, Formatted) and len(p.strip()) >= MIN_LITERAL_CHECKED]


def collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# --- messages of one file -------------------------------------------------------------------

def messages(text: str):
    """(line, level, template, literals) of every message statement in a C++ file's text."""
    code = strip_comments(text)
    line_at = LineIndex(code)
    streams = Streams(code)
    # A macro's definition is no message site: what it prints is rendered where it is called
    # (`RAY_CHECK_OK` at each call), so statements inside `#define` are left out.
    defines = [(d.start(), d.end()) for d in MACRO_DEFINITION.finditer(code)]

    def in_define(at: int) -> bool:
        i = bisect_left(defines, (at + 1,)) - 1
        return i >= 0 and defines[i][0] <= at < defines[i][1]
    # Log statements first: where a RAY_EVENT carries the same words, the log's level wins.
    starts = sorted(LOG_START.finditer(code), key=lambda m: m.group(0).startswith("RAY_EVENT"))
    for m in starts:
        level = LEVELS.get(m.group(1))
        if level is None or in_define(m.start()):
            continue
        open_paren = code.index("(", m.start())
        head_end = balanced(code, open_paren)
        end = statement_end(code, head_end)
        stream = code[head_end:end]
        while re.match(r"\s*\.\s*WithField\s*\(", stream):
            k = stream.index("(")
            stream = stream[balanced(stream, k):]
        parts = stream_parts(stream, streams.at(m.start()))
        if "EVERY_N" in m.group(0):
            parts = ["[", None, "] "] + parts
        if any(p for p in parts if p):
            yield line_at(m.start()), level, render(parts), literals(parts)
    for m in CHECK_START.finditer(code):
        if in_define(m.start()):
            continue
        kind = m.group(1) or ""
        open_paren = m.end() - 1
        args_end = balanced(code, open_paren)
        args = code[open_paren + 1:args_end - 1]
        end = statement_end(code, args_end)
        parts = stream_parts(code[args_end:end], streams.at(m.start()))
        if kind == "_OK":
            head = ["Check failed: ", None, "_s.ok() ", None]
            lits = [["_s.ok() "]]
        elif kind:
            op = OPS[kind]
            head = ["Check failed: ", None, f"(_left_ {op} _right_) ", None, " vs ", None, " "]
            lits = [[f" Check failed: (_left_ {op} _right_) ",
                     f" Check failed: RAY_PREDICT_TRUE(_left_ {op} _right_) "]]
        else:
            cond = collapse(args)
            head = [f"Check failed: {cond} "]
            lits = [[f" Check failed: {cond} "]]
        yield line_at(m.start()), "check", render(head + parts), lits + literals(parts)
    for m in STATUS_START.finditer(code):
        if in_define(m.start()) or (m.group(1) is not None and m.group(1) not in STATUS_BUILDERS):
            continue
        args_end = balanced(code, m.end() - 1)
        args = split_top(code[m.end():args_end - 1], ",")
        if not args or not args[0]:
            continue
        parts = operand_parts(args[0], streams.at(m.start()))
        if len(parts) == 1 and parts[0] is None and "<<" not in args[0]:
            continue
        if "<<" in args[0]:
            parts = stream_parts("<<" + args[0], streams.at(m.start()))
        if any(p for p in parts if p and len(p.strip()) >= 3):
            yield line_at(m.start()), "returned", render(parts), literals(parts)


class LineIndex:
    """Line number (1-based) of an offset in a text."""

    def __init__(self, text: str):
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def __call__(self, offset: int) -> int:
        return bisect_left(self.starts, offset + 1)


def component(path: str) -> str:
    for prefix, comp in COMPONENT_DIRS:
        if path.startswith(prefix):
            return comp
    return "ray.other"


def source_files(root: Path):
    """The .cc/.h files under root/src/ray, tests, mocks and fakes left out."""
    for path in sorted((root / "src" / "ray").rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.suffix in (".cc", ".h") and path.is_file() and not SKIPPED.search(rel):
            yield rel, path


def source_version(root: Path, given: str | None) -> str:
    if given:
        return given
    origin = root / "ORIGIN.toml"
    if origin.exists():
        m = re.search(r'version_file = "([^"]+)"', origin.read_text())
        if m:
            return m.group(1)
    version_py = root / "python" / "ray" / "_version.py"
    if version_py.exists():
        m = re.search(r'version\s*=\s*"([^"]+)"', version_py.read_text())
        if m:
            return m.group(1)
    return "source"


# --- the wheels -----------------------------------------------------------------------------

class WheelStrings:
    """The C strings compiled into one wheel's binaries, searchable whole or as a tail."""

    def __init__(self, wheel: Path):
        strings: set[str] = set()
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if any(name.endswith(b) for b in BINARIES):
                    for raw in z.read(name).split(b"\0"):
                        if len(raw) >= 3:
                            strings.add(raw.decode("latin-1"))
        self.exact = strings
        self.reversed = sorted(s[::-1] for s in strings)

    def has(self, literal: str) -> bool:
        if literal in self.exact:
            return True
        r = literal[::-1]
        i = bisect_left(self.reversed, r)
        return i < len(self.reversed) and self.reversed[i].startswith(r)

    def has_all(self, lits: list[list[str]]) -> bool:
        return all(any(self.has(alt) for alt in alts) for alts in lits)


def wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


# --- the run --------------------------------------------------------------------------------

# A plain text search for the error-level call sites (the coverage cross-check), and the macro
# definitions that neither it nor the extractor counts as sites.
ERROR_SITE = re.compile(r"\bRAY_LOG(?:_EVERY_N|_EVERY_MS|_EVERY_N_OR_DEBUG|_EVERY_MS_OR)?\s*\(\s*"
                        r"(?:ERROR|FATAL)\b|\bRAY_CHECK(?:_OK|_EQ|_NE|_LT|_LE|_GT|_GE)?\s*\(")
MACRO_DEFINITION = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n]*\\\n)*[^\n]*", re.M)


def export_tree(spec: str, dest: Path) -> Path:
    """`GITDIR@REF`: the `src/ray` and `python/ray/_version.py` of REF in the (bare) clone GITDIR,
    written under `dest` once (`git archive`, no checkout); the tree's directory."""
    git_dir, _, ref = spec.rpartition("@")
    if not git_dir or not ref:
        raise SystemExit(f"--ray-git/--ray-fork takes GITDIR@REF, not {spec!r}")
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", f"{ref}^{{commit}}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    tree = dest / commit[:12]
    if not (tree / "src" / "ray").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", commit,
                                  "src/ray"], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
    version = "source"
    # Ray writes its version in python/ray/_version.py from 2.3, in __init__.py before.
    for name in ("python/ray/_version.py", "python/ray/__init__.py"):
        text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{name}"],
                              capture_output=True, text=True).stdout
        m = re.search(r'^(?:__)?version(?:__)?\s*=\s*"([^"]+)"', text, re.M)
        if m:
            version = m.group(1)
            break
    (tree / "ORIGIN.toml").write_text(f'ref = "{ref}"\ncommit = "{commit}"\n'
                                      f'version_file = "{version}"\n')
    return tree


class Tree:
    """One source tree read: where it comes from, its version, and whether that version is
    trusted (a release of Ray's own history) or only what the wheels confirm (a fork's snapshot,
    whose messages may differ from the release it names, or the file-by-file tree)."""

    def __init__(self, root: Path, version: str, trusted: bool, origin: str):
        self.root, self.version, self.trusted, self.origin = root, version, trusted, origin


def trees_of(opts) -> list[Tree]:
    dest = Path(opts.trees_dir)
    trees = []
    for spec, trusted in [(s, True) for s in opts.ray_git or []] + \
            [(s, False) for s in opts.ray_fork or []]:
        root = export_tree(spec, dest)
        # Named by ref and commit: several forks have a `master`.
        trees.append(Tree(root, source_version(root, None), trusted,
                          f"{spec.rpartition('@')[2]}@{root.name}"))
    if opts.ray_src is not None:
        v = source_version(opts.ray_src, opts.src_version)
        trees.append(Tree(opts.ray_src, v, v != "source", str(opts.ray_src)))
    return trees


def main(args=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ray-src", type=Path)
    ap.add_argument("--src-version")
    ap.add_argument("--ray-git", action="append",
                    help="GITDIR@REF: a release tag or branch of Ray's history (repeatable)")
    ap.add_argument("--ray-fork", action="append",
                    help="GITDIR@REF: a fork's snapshot; only what a wheel confirms (repeatable)")
    ap.add_argument("--trees-dir", default="target/catalogue/ray-trees")
    ap.add_argument("--wheels", type=Path)
    ap.add_argument("--keep", type=Path,
                    help="a previous ray-cpp.jsonl: its entries read file by file (version "
                         "`source`) that no tree gives are kept as they are")
    opts, _ = ap.parse_known_args(args)
    kept = []
    if opts.keep is not None and opts.keep.exists():
        kept = [json.loads(line) for line in opts.keep.read_text().splitlines() if line.strip()]
    trees = trees_of(opts)
    if not trees:
        print("skipped: Ray's C++ source needs --ray-git GITDIR@REF, --ray-fork GITDIR@REF or "
              "--ray-src DIR (a tree with src/ray/...)")
        return 0

    # (tree, component, level, template, site, literals) of every message site of every tree.
    found = []
    files: dict[str, int] = {}
    for tree in trees:
        n = 0
        # Coverage, per component: error-level sites (ERROR, FATAL, checks) a plain text search
        # finds, against those the extractor rendered.
        searched: dict[str, int] = {}
        rendered: dict[str, int] = {}
        for rel, path in source_files(tree.root):
            comp = component(rel)
            n += 1
            text = path.read_text(errors="replace")
            code = MACRO_DEFINITION.sub("", strip_comments(text))
            searched[comp] = searched.get(comp, 0) + len(ERROR_SITE.findall(code))
            for line, level, template, lits in messages(text):
                found.append((tree, comp, level, template, f"{rel}:{line}", lits))
                if level in ("error", "fatal", "check") and not rel.endswith("common/status.h"):
                    rendered[comp] = rendered.get(comp, 0) + 1
        files[tree.origin] = n
        cover = ", ".join(f"{c} {rendered.get(c, 0)}/{searched[c]}" for c in sorted(searched))
        print(f"{tree.origin} ({tree.version}): {n} files; error-level sites rendered/found by "
              f"text search: {cover}", file=sys.stderr)

    wheels = sorted(opts.wheels.glob("ray-*.whl"), key=lambda w: version_key(wheel_version(w))) \
        if opts.wheels else []
    cat = Catalogue("ray", "cpp")
    # Per file, how many of its checkable message sites each wheel has: which release
    # the file read is closest to.
    per_file: dict[str, dict[str, list[int]]] = {}
    for wheel in wheels:
        v = wheel_version(wheel)
        strings = WheelStrings(wheel)
        n = 0
        for tree, comp, level, template, site, lits in found:
            if not lits:
                continue
            counts = per_file.setdefault(f"{tree.origin}:{site.rsplit(':', 1)[0]}", {}) \
                .setdefault(v, [0, 0])
            counts[1] += 1
            if strings.has_all(lits):
                cat.add(v, comp, level, template, site)
                counts[0] += 1
                n += 1
        print(f"{v}: {n} of {len(found)} message sites compiled in", file=sys.stderr)
    for tree, comp, level, template, site, lits in found:
        # A trusted tree is the release it names; a fork's message counts only where a wheel
        # has it (added above), or, with no literal to check, under the fork's own label.
        if tree.trusted or not lits:
            cat.add(tree.version if tree.trusted else "source", comp, level, template, site)
    n_kept = 0
    for entry in kept:
        if "source" in entry["versions"] and entry["id"] not in cat.entries:
            cat.entries[entry["id"]] = entry
            n_kept += 1
    if kept:
        print(f"{n_kept} entries kept from {opts.keep}", file=sys.stderr)
    out = cat.write()
    write_sources(trees, files, wheels, per_file)
    print(f"{sum(files.values())} files, {len(found)} message sites, {len(cat.entries)} "
          f"templates -> {out.relative_to(MESSAGES.parents[1])}", file=sys.stderr)
    return 0


def write_sources(trees: list[Tree], files: dict[str, int], wheels: list[Path],
                  per_file: dict[str, dict[str, list[int]]]) -> None:
    """sources-cpp.toml: the source trees read, the wheels checked, and per file how many of
    its message sites (those with a literal of six characters or more) each wheel holds."""
    lines = ["# What patterns/messages/ray-cpp.jsonl was extracted from (scripts/catalogue/extract_cpp.py).", ""]
    for tree in trees:
        lines += ["[[tree]]", f'version = "{tree.version}"',
                  f'trusted = {"true" if tree.trusted else "false"}', f"files = {files[tree.origin]}"]
        origin = tree.root / "ORIGIN.toml"
        if origin.exists():
            lines += [origin.read_text().strip()]
        manifest = tree.root / "SOURCES.toml"
        if manifest.exists():
            lines += ["", manifest.read_text().strip()]
        lines.append("")
    for wheel in wheels:
        lines += ["[[wheel]]", f'version = "{wheel_version(wheel)}"', f'file = "{wheel.name}"',
                  f'sha256 = "{sha256(wheel)}"',
                  'read = ["ray/core/src/ray/raylet/raylet", "ray/core/src/ray/gcs/gcs_server", '
                  '"ray/_raylet.so"]', ""]
    lines += ["# Entries read file by file earlier and given by no tree are kept (--keep): their "
              "files are", "# in sources-cpp-by-file.toml.", ""]
    if per_file:
        lines += ["# Message sites of each file (tree ref:path) found compiled into each wheel "
                  "(found/checked)."]
        lines += ["[compiled_in]"]
        for path in sorted(per_file):
            cells = ", ".join(f'"{v}" = "{a}/{b}"' for v, (a, b) in per_file[path].items())
            lines.append(f'"{path}" = {{ {cells} }}')
    (MESSAGES / "sources-cpp.toml").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
