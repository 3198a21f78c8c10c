"""Extract KubeRay's messages from its Go source, at release tags, into the message catalogue.

Run (through the driver, or alone):

    git clone --bare https://github.com/ray-project/kuberay kuberay.git
    python3 scripts/catalogue/extract_go.py --kuberay-git kuberay.git [--stats]

Needs Python 3.11+, `git` on PATH and a clone (bare or not) of KubeRay with its tags. Nothing
is checked out or copied: files are read at each tag with `git ls-tree` and
`git cat-file --batch`. Writes `patterns/messages/kuberay-go.jsonl` and
`patterns/messages/sources-go.toml`; `--stats` also prints counts per component, level and tag,
and a crude `git grep` count of the calls looked for, to judge coverage.

Tags read: the last patch of every minor release from v0.5 on, and the newest tag.

What is extracted, from non-test, non-generated .go files (no `_test.go`, `vendor/`,
`zz_generated*`, clientsets, listers, informers, apply configurations, generated protobuf,
e2e and test-support packages):

- logr errors, `X.Error(err, "msg", kv...)` on any logger, and the operator main's
  `exitOnError(err, "msg")`: level `error`, the message alone (key-value pairs are not part
  of it). `Info` is not extracted. A message held in a local variable
  (`msg := fmt.Sprintf("...")`, then `logger.Error(err, msg)`) is followed to its literal.
- klog and logrus (the history server): `Error`, `Errorf`, `ErrorS(err, "msg", kv...)`
  (error), `Warning`, `Warningf`, `Warn`, `Warnf` (warning), `Fatal`, `Fatalf`, `Exitf`,
  `Panic`, `Panicf` (fatal); the
  standard `log.Fatal(f)` and `panic("...")` are fatal too.
- Kubernetes Warning events: `Recorder.Event`/`Eventf`, old (`obj, type, reason, msg`) and
  new (`obj, related, type, reason, action, note`) signatures: level `event`, the reason
  resolved through the constants declared at the same tag. An event whose message is not a
  literal (`err.Error()`) has no template of its own: its reason constant is extracted anyway.
  Normal events are skipped.
- Status reasons and conditions: string constants of a type named like `...Reason`,
  `...Status`, `...State`, `...ConditionType`, `K8sEventType`, `EventReason`, and untyped
  constants in a block whose comment names a reason or condition: level `condition` for
  condition types, `reason` for the rest. All values are kept, ready or not.
- Error values: `fmt.Errorf`, `errors.New/Errorf/Wrap/Wrapf`, the apiserver's
  `util.New...Error`/`util.Wrap`, gRPC `status.Error(f)`: level `returned`.
- Validation details: `field.Invalid/Forbidden/Required` detail strings: level `returned`.
- Status messages the operator writes beside a reason (`rayJob.Status.Message = "..."`,
  `Message: "..."` in a condition), under `ray-operator/controllers/`: level `reason`.

Components come from the path: anything with `webhook` in it is `kuberay.webhook` (the
admission webhooks; they reuse the operator's `utils/validation.go`, whose messages stay
`kuberay.operator` because the operator's reconcile runs the same checks and emits them as
events); the rest of `ray-operator/` is `kuberay.operator`; `apiserver/` and `apiserversdk/`
are `kuberay.apiserver`; everything else (kubectl plugin, history server, dashboard, pod
pool, old `cli/`) is `kuberay.other`. Go format verbs (`%s %v %d %q %w %+v ...`) and
non-literal operands of `+` become `{}`.
"""

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MESSAGES, Catalogue, version_key  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Reading a tag

SKIP_PATH = re.compile(
    r"(_test\.go$|(^|/)vendor/|zz_generated|/client/(clientset|listers|informers|"
    r"applyconfiguration)|^proto/|/go_client/|(^|/)test(s|support)?/|(^|/)e2e\w*/|"
    r"/testutils?/|(^|/)hack/|(^|/)fake\w*(\.go$|/)|\.pb(\.gw)?\.go$|/swagger/)"
)


class Repo:
    """A KubeRay git directory, read at tags without a work tree."""

    def __init__(self, git_dir: str):
        self.git_dir = git_dir
        self._cat = None

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", self.git_dir, *args], check=True,
                              capture_output=True, text=True).stdout

    def tags(self) -> list[str]:
        """Release tags (`v1.2.3`) and pre-releases (`v1.3.0-rc.1`), not chart or module tags."""
        tags = self.git("tag", "--list").split()
        return [t for t in tags if re.fullmatch(r"v\d+\.\d+\.\d+(-[\w.]+)?", t)]

    def commit(self, tag: str) -> str:
        return self.git("rev-parse", f"{tag}^{{commit}}").strip()

    def go_files(self, tag: str) -> list[tuple[str, str]]:
        """`(path, blob)` of every .go file to read at `tag`."""
        out = []
        for row in self.git("ls-tree", "-r", tag).splitlines():
            meta, path = row.split("\t", 1)
            if path.endswith(".go") and not SKIP_PATH.search(path):
                out.append((path, meta.split()[2]))
        return out

    def blob(self, sha: str) -> str | None:
        """The blob's text, or None when this clone lacks it (a partial mirror)."""
        if self._cat is None:
            self._cat = subprocess.Popen(["git", "--git-dir", self.git_dir, "cat-file", "--batch"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._cat.stdin.write(sha.encode() + b"\n")
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        data = self._cat.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", errors="replace")


def release_tags(all_tags: list[str]) -> list[str]:
    """The last patch of each minor release from v0.5 on, and the newest tag; oldest first."""
    last: dict[tuple[int, int], str] = {}
    for t in sorted((t for t in all_tags if "-" not in t), key=version_key):
        major, minor = (int(n) for n in re.findall(r"\d+", t)[:2])
        if (major, minor) >= (0, 5):
            last[(major, minor)] = t
    chosen = set(last.values()) | {max(all_tags, key=version_key)}
    return sorted(chosen, key=version_key)


# ---------------------------------------------------------------------------------------------
# Tokens

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:\\.|[^"\\\n])*")
  | (?P<rune>'(?:\\.|[^'\\\n])+')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>\d[\w.]*)
  | (?P<punct>.)
""", re.S | re.X)

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "a": "", "b": "",
           "f": "", "v": ""}


class Tok:
    __slots__ = ("kind", "text", "line", "value")

    def __init__(self, kind: str, text: str, line: int):
        self.kind, self.text, self.line = kind, text, line
        self.value = string_value(kind, text)

    def __repr__(self):
        return f"{self.kind}:{self.text}@{self.line}"


def string_value(kind: str, text: str) -> str | None:
    if kind == "raw":
        return text[1:-1]
    if kind == "str":
        return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(0)), text[1:-1])
    return None


def tokenize(src: str) -> tuple[list[Tok], dict[int, str]]:
    """Tokens (comments dropped) and the comment text ending on each line."""
    toks, comments, line = [], {}, 1
    for m in TOKEN.finditer(src):
        kind, text = m.lastgroup, m.group()
        if kind == "comment":
            end = line + text.count("\n")
            comments[end] = comments.get(end, "") + text
        elif kind != "ws":
            toks.append(Tok(kind, text, line))
        line += text.count("\n")
    return toks, comments


def is_string(t: Tok) -> bool:
    return t.kind in ("str", "raw")


def call_args(toks: list[Tok], open_at: int) -> tuple[list[list[Tok]], int]:
    """The arguments of the call whose `(` is at `open_at`, split at top-level commas."""
    args, cur, depth, i = [], [], 0, open_at
    while i < len(toks):
        t = toks[i]
        if t.text in "([{" and t.kind == "punct":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif t.text in ")]}" and t.kind == "punct":
            depth -= 1
            if depth == 0:
                if cur:
                    args.append(cur)
                return args, i
        if depth == 1 and t.kind == "punct" and t.text == ",":
            args.append(cur)
            cur = []
        else:
            cur.append(t)
        i += 1
    return args, i


# ---------------------------------------------------------------------------------------------
# Templates

VERB = re.compile(r"%%|%[-+# 0]*(?:\[\d+\])?(?:\d+|\*)?(?:\.(?:\d+|\*)?)?(?:\[\d+\])?[a-zA-Z]")


def format_template(fmt: str) -> str:
    """A Go format string with every verb written `{}`."""
    return VERB.sub(lambda m: "%" if m.group() == "%%" else "{}", fmt)


def split_plus(expr: list[Tok]) -> list[list[Tok]]:
    """The operands of a top-level `+` chain."""
    parts, cur, depth = [], [], 0
    for t in expr:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        if depth == 0 and t.kind == "punct" and t.text == "+":
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    return parts


def template_of(expr: list[Tok], is_format: bool) -> str | None:
    """The message an expression builds, variable parts as `{}`; None if nothing is literal.

    Operands of `+` that are string literals are kept (as a format when `is_format`), a
    `fmt.Sprintf("...", ...)` / `fmt.Sprint(...)` operand is unfolded, anything else is `{}`.
    """
    out, literal = [], False
    for part in split_plus(expr):
        if len(part) == 1 and is_string(part[0]):
            text = part[0].value
            out.append(format_template(text) if is_format else text)
            literal = True
            continue
        inner = sprintf_template(part)
        if inner is not None:
            out.append(inner)
            literal = True
        else:
            out.append("{}")
    if not literal:
        return None
    return re.sub(r"(\{\})+", "{}", "".join(out))


def sprintf_template(part: list[Tok]) -> str | None:
    if len(part) >= 4 and part[0].text == "fmt" and part[1].text == "." and part[3].text == "(":
        args, _ = call_args(part, 3)
        if part[2].text == "Sprintf" and args:
            return template_of(args[0], True)
        if part[2].text in ("Sprint", "Sprintln"):
            return sprint_template(args)
    return None


def sprint_template(args: list[list[Tok]]) -> str | None:
    """klog.Error / fmt.Sprint style: operands concatenated."""
    pieces = [template_of(a, False) or "{}" for a in args]
    if all(p == "{}" for p in pieces):
        return None
    return re.sub(r"(\{\})+", "{}", "".join(pieces))


# ---------------------------------------------------------------------------------------------
# Constants

REASON_TYPE = re.compile(r"(Reason|Status|State|ConditionType|EventType)$")


def constants(toks: list[Tok], comments: dict[int, str]):
    """Every string constant: `(name, value, type or None, line, block comment)`."""
    i = 0
    while i < len(toks):
        if toks[i].kind == "ident" and toks[i].text == "const":
            comment = comments.get(toks[i].line - 1, "")
            if i + 1 < len(toks) and toks[i + 1].text == "(":
                _, end = call_args(toks, i + 1)
                yield from const_specs(toks[i + 2:end], comment)
                i = end
            else:
                yield from const_specs(toks[i + 1:const_line_end(toks, i + 1)], comment)
        i += 1


def const_line_end(toks: list[Tok], i: int) -> int:
    line = toks[i].line if i < len(toks) else 0
    j = i
    while j < len(toks) and (toks[j].line == line or toks[j - 1].text == "+"):
        line = toks[j].line
        j += 1
    return j


def const_specs(body: list[Tok], comment: str):
    """`Name [Type] = "value"` specs of a const block (others, iota included, skipped)."""
    i = 0
    while i < len(body):
        t = body[i]
        if t.kind == "ident" and i + 1 < len(body):
            eq = i + 1
            typ = None
            if body[eq].kind == "ident":
                typ, eq = body[eq].text, eq + 1
            elif body[eq].text != "=":
                i += 1
                continue
            if eq < len(body) and body[eq].text == "=":
                end = const_line_end(body, eq + 1)
                expr = body[eq + 1:end]
                if expr and all(is_string(x) or x.text == "+" for x in expr):
                    value = "".join(x.value for x in expr if is_string(x))
                    yield t.text, value, typ, t.line, comment
                i = end
                continue
        i += 1


def const_level(typ: str | None, comment: str) -> str | None:
    """`reason` / `condition` for a status constant, None for any other constant."""
    if typ is None:
        if re.search(r"\bReason\b|\bReasons\b", comment):
            return "reason"
        if re.search(r"\bCondition", comment):
            return "condition"
        return None
    if typ in ("K8sEventType", "EventReason", "JobFailedReason") or REASON_TYPE.search(typ):
        if "Condition" in typ and "Reason" not in typ:
            return "condition"
        return "reason"
    return None


# ---------------------------------------------------------------------------------------------
# Calls

KLOG = {"Error": ("error", False), "Errorf": ("error", True), "Errorln": ("error", False),
        "Warning": ("warning", False), "Warningf": ("warning", True),
        "Warn": ("warning", False), "Warnf": ("warning", True),
        "Fatal": ("fatal", False), "Fatalf": ("fatal", True), "Exitf": ("fatal", True),
        "Panic": ("fatal", False), "Panicf": ("fatal", True)}
LEVELLED_LOGGERS = ("klog", "glog", "logrus")  # their Error takes a message, not (err, msg)
STD_LOG_FATAL = ("Fatal", "Fatalf", "Panic", "Panicf")

# Error-value constructors: final name -> (index of the message argument, is a format).
RETURNED = {
    "Errorf": (0, True), "New": (0, False), "Wrap": (1, False), "Wrapf": (1, True),
    "NewInternalServerError": (1, True), "NewNotFoundError": (1, True),
    "NewResourcesNotFoundError": (0, True), "NewInvalidInputError": (0, True),
    "NewInvalidInputErrorWithDetails": (1, False), "NewAlreadyExistError": (0, True),
    "NewBadRequestError": (1, True), "NewUnauthenticatedError": (1, True),
    "NewPermissionDeniedError": (1, True), "NewBadRequest": (0, False),
    "UsageErrorf": (1, True),
}
ERROR_PACKAGES = re.compile(r"^(fmt|\w*errors?\w*|errstd|util|status|cmdutil)$", re.I)

# field.X(path, ..., detail): final name -> index of the detail.
FIELD = {"Invalid": 2, "Forbidden": 1, "Required": 1, "NotSupported": None, "TooMany": None,
         "TooLong": None, "Duplicate": None, "NotFound": None}

WARNING_TYPES = {"EventTypeWarning", '"Warning"'}


class Found:
    __slots__ = ("level", "template", "line", "reason")

    def __init__(self, level, template, line, reason=None):
        self.level, self.template, self.line, self.reason = level, template, line, reason


def classify_call(toks: list[Tok], i: int) -> tuple[str, int, bool] | None:
    """What the call named at `toks[i]` produces: `(level, message argument, is a format)`.

    `level` is `event` for a recorder call (its arguments are read by `event`); None when the
    call is not one that makes a message.
    """
    name = toks[i].text
    dotted = toks[i - 1].text == "."
    qual = toks[i - 2].text if dotted and i >= 2 else ""
    if not dotted:
        if name == "exitOnError":  # the operator's main: logs (err, msg) and exits
            return ("error", 1, False)
        return ("fatal", 0, False) if name == "panic" else None
    before = "".join(x.text for x in toks[max(0, i - 4):i]).lower()
    if name in ("Event", "Eventf") and "recorder" in before:
        return ("event", -1, name == "Eventf")
    if qual in LEVELLED_LOGGERS and name == "ErrorS":  # klog's structured (err, msg, kv...)
        return ("error", 1, False)
    if (qual in LEVELLED_LOGGERS and name in KLOG) or (qual == "log" and name in STD_LOG_FATAL):
        level, is_fmt = KLOG[name]
        return (level, 0 if is_fmt else -1, is_fmt)  # -1: all arguments, Sprint-style
    if name == "Error" and qual == "http":
        return ("returned", 1, False)  # an HTTP error response of the apiserver's proxy
    if name == "Error" and qual not in ("t", "b", *LEVELLED_LOGGERS):
        return ("returned" if qual == "status" else "error", 1, False)
    if name in RETURNED and ERROR_PACKAGES.match(qual or "-"):
        if name == "New" and not re.search(r"err", qual, re.I):
            return None
        at, is_fmt = RETURNED[name]
        return ("returned", 1 if qual == "status" else at, is_fmt)
    if qual == "field" and FIELD.get(name) is not None:
        return ("returned", FIELD[name], False)
    return None


def calls(toks: list[Tok], consts: dict[str, str]):
    """Every message-producing call in a file's tokens."""
    local: dict[str, list[Tok]] = {}
    for i in range(1, len(toks) - 1):
        t = toks[i]
        if t.kind == "ident" and t.text == "func":
            local.clear()
        remember_local(toks, i, local)
        if t.kind != "ident" or toks[i + 1].text != "(":
            continue
        what = classify_call(toks, i)
        if what is None:
            continue
        level, at, is_fmt = what
        args, _ = call_args(toks, i + 1)
        args = [local.get(a[0].text, a) if len(a) == 1 else a for a in args]
        if level == "event":
            found = event(args, is_fmt, consts, t.line)
            if found:
                yield found
            continue
        if at < 0:
            tpl = sprint_template(args)
        elif len(args) > at and any(is_string(x) or x.text == "Sprintf" for x in args[at]):
            tpl = template_of(args[at], is_fmt)
        else:
            tpl = None
        if tpl:
            yield Found(level, tpl, t.line)


def remember_local(toks: list[Tok], i: int, local: dict[str, list[Tok]]) -> None:
    """`name := "..."` / `name = fmt.Sprintf("...", ...)`: a message built before its call."""
    t = toks[i]
    if t.kind != "ident" or i + 3 >= len(toks):
        return
    j = i + 1
    if toks[j].text == ":":
        j += 1
    if toks[j].text != "=" or toks[j + 1].text == "=" or toks[i - 1].text == ".":
        return
    start = j + 1
    end = expression_end(toks, start)
    expr = toks[start:end]
    if expr and (is_string(expr[0]) or expr[0].text == "fmt") and template_of(expr, False):
        local[t.text] = expr
    else:
        local.pop(t.text, None)


def expression_end(toks: list[Tok], j: int, field: bool = False) -> int:
    """The end of the expression starting at `j`: an unmatched closing bracket, or, outside
    brackets, the next comma for a composite literal's `field`, else the end of its line
    (unless the line ends with `+`, `,` or `(`)."""
    depth = 0
    line = toks[j].line if j < len(toks) else 0
    while j < len(toks):
        x = toks[j]
        if depth == 0 and field and x.text == ",":
            break
        if depth == 0 and not field and x.line != line and toks[j - 1].text not in ("+", ",", "("):
            break
        if x.kind == "punct" and x.text in "([{":
            depth += 1
        elif x.kind == "punct" and x.text in ")]}":
            if depth == 0:
                break
            depth -= 1
        line = x.line
        j += 1
    return j


def status_messages(toks: list[Tok]):
    """Status texts set beside a reason: `x.Status.Message = "..."`, `Message: "..."` in a
    condition. Level `reason`: they are what `status.message` and `kubectl describe` show."""
    for i in range(1, len(toks) - 2):
        t = toks[i]
        if t.kind != "ident" or t.text != "Message":
            continue
        nxt = toks[i + 1].text
        if nxt == "=" and toks[i - 1].text == "." and toks[i + 2].text != "=":
            expr = toks[i + 2:expression_end(toks, i + 2)]
        elif nxt == ":" and toks[i - 1].text in ("{", ","):
            expr = toks[i + 2:expression_end(toks, i + 2, field=True)]
        else:
            continue
        literal = expr and (is_string(expr[0]) or expr[0].text == "fmt")
        tpl = template_of(expr, False) if literal else None
        if tpl:
            yield Found("reason", tpl, t.line)


def event(args: list[list[Tok]], is_format: bool, consts: dict[str, str], line: int):
    """A Warning event's reason and message template, old or new recorder signature."""
    at = next((k for k, a in enumerate(args[:3])
               if a and (a[-1].text in WARNING_TYPES)), None)
    if at is None:
        return None
    reason_at = at + 1
    msg_at = at + 2 if at == 1 else at + 3  # new API: reason, action, note
    if len(args) <= msg_at:
        return None
    reason = resolve(args[reason_at], consts)
    tpl = template_of(args[msg_at], is_format)
    if not tpl:
        return None
    return Found("event", tpl, line, reason)


def resolve(expr: list[Tok], consts: dict[str, str]) -> str | None:
    """A reason expression's string: a literal, `X`, `pkg.X` or `string(pkg.X)`."""
    names = [x for x in expr if x.kind == "ident" and x.text != "string"]
    lits = [x for x in expr if is_string(x)]
    if lits:
        return lits[0].value
    if names:
        return consts.get(names[-1].text, names[-1].text)
    return None


# ---------------------------------------------------------------------------------------------
# Components and the walk over tags

def component(path: str) -> str:
    if "webhook" in path:
        return "kuberay.webhook"
    if path.startswith("ray-operator/"):
        return "kuberay.operator"
    if path.startswith(("apiserver/", "apiserversdk/")):
        return "kuberay.apiserver"
    return "kuberay.other"


def read_tag(repo: Repo, tag: str):
    """`(path, tokens, comments)` of every file read at `tag`; the unreadable are skipped."""
    for path, sha in repo.go_files(tag):
        src = repo.blob(sha)
        if src is not None:
            toks, comments = tokenize(src)
            yield path, toks, comments


COMPONENT_ORDER = ["kuberay.operator", "kuberay.webhook", "kuberay.apiserver", "kuberay.other"]


def extract_tag(repo: Repo, tag: str, cat: Catalogue, stats: Counter) -> None:
    """Add one tag's messages; a wording that two components share is the first one's."""
    files = sorted(read_tag(repo, tag),
                   key=lambda f: (COMPONENT_ORDER.index(component(f[0])), f[0]))
    consts: dict[str, str] = {}
    for path, toks, comments in files:
        for name, value, typ, line, comment in constants(toks, comments):
            consts.setdefault(name, value)
            level = const_level(typ, comment)
            # Status reasons and conditions are the operator's API; the history server's
            # constants are Ray's own event and task states.
            if level and path.startswith("ray-operator/"):
                add(cat, stats, tag, path, level, value, line)
    for path, toks, _ in files:
        for f in calls(toks, consts):
            add(cat, stats, tag, path, f.level, f.template, f.line, f.reason)
        if path.startswith("ray-operator/controllers/"):
            for f in status_messages(toks):
                add(cat, stats, tag, path, f.level, f.template, f.line)


def add(cat, stats, tag, path, level, template, line, reason=None):
    comp = component(path)
    cat.add(tag, comp, level, template, f"{path}:{line}", reason=reason)
    stats[(tag, comp, level, template)] += 1


def write_sources(repo: Repo, tags: list[str]) -> Path:
    path = MESSAGES / "sources-go.toml"
    lines = ["# KubeRay versions read by scripts/catalogue/extract_go.py: release tags of",
             "# ray-project/kuberay on GitHub, oldest first.", ""]
    for tag in tags:
        lines += ["[[source]]", f'project = "kuberay"', f'version = "{tag}"',
                  f'how = "git tag"', f'commit = "{repo.commit(tag)}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# Measures

CRUDE = {"Error(": r"\.Error\(", "EventTypeWarning": "EventTypeWarning", "Errorf(": r"Errorf\("}


def crude_counts(repo: Repo, tag: str) -> dict[str, int]:
    """Lines with the calls looked for, by `git grep -c`, in the files read."""
    files = [p for p, _ in repo.go_files(tag)]
    out = {}
    for name, pattern in CRUDE.items():
        r = subprocess.run(["git", "--git-dir", repo.git_dir, "grep", "-c", "-E", pattern, tag,
                            "--", *files], capture_output=True, text=True)
        out[name] = sum(int(row.rsplit(":", 1)[1]) for row in r.stdout.splitlines() if ":" in row)
    return out


def print_stats(repo: Repo, tags: list[str], cat: Catalogue, stats: Counter) -> None:
    """Templates per component and level; per tag, templates new and removed, call sites
    extracted against a crude `git grep -c` of the same calls."""
    by = Counter((e["component"], e["level"]) for e in cat.entries.values())
    print(f"{len(cat.entries)} templates")
    for (comp, level), n in sorted(by.items()):
        print(f"  {comp:18} {level:10} {n}")
    print("\ntag      templates  new  removed   sites: error event returned"
          "   grep: .Error( EventTypeWarning Errorf(")
    prev: set = set()
    for tag in tags:
        cur = {tpl for (t, _, _, tpl) in stats if t == tag}
        sites: Counter = Counter()
        for (t, _, level, _), n in stats.items():
            if t == tag:
                sites[level] += n
        crude = crude_counts(repo, tag)
        print(f"{tag:8} {len(cur):9} {len(cur - prev):4} {len(prev - cur):8}  "
              f"{sites['error']:13} {sites['event']:5} {sites['returned']:8}  "
              f"{crude['Error(']:12} {crude['EventTypeWarning']:16} {crude['Errorf(']:7}")
        prev = cur


def main(args: list[str] | None = None) -> None:
    """Extract and write. `args` are command-line words; words meant for the other
    extractors (when the driver passes one list to all of them) are ignored."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kuberay-git", help="a clone or bare git dir of KubeRay")
    ap.add_argument("--stats", action="store_true", help="print counts per component, level, tag")
    opts, _ = ap.parse_known_args(args)
    if not opts.kuberay_git:
        print("skipped: KubeRay's Go source needs --kuberay-git DIR (a clone or bare git dir)")
        return
    repo = Repo(opts.kuberay_git)
    tags = release_tags(repo.tags())
    cat = Catalogue("kuberay", "go")
    stats: Counter = Counter()
    for tag in tags:
        extract_tag(repo, tag, cat, stats)
    out = cat.write()
    write_sources(repo, tags)
    print(f"{out.relative_to(MESSAGES.parents[1])}: {len(cat.entries)} templates "
          f"from {', '.join(tags)}")
    if opts.stats:
        print_stats(repo, tags, cat, stats)


if __name__ == "__main__":
    main()
