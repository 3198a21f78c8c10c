"""Extract what the projects around KubeRay say about Ray objects, into the message catalogue.

Run (through the driver, or alone), one `--ecosystem-git NAME=DIR` per project, DIR a clone or
bare git dir with its tags:

    python3 scripts/catalogue/extract_ecosystem.py \\
        --ecosystem-git kueue=kueue.git --ecosystem-git codeflare=codeflare-operator.git \\
        --ecosystem-git volcano=volcano.git --ecosystem-git flyte=flyte.git \\
        --ecosystem-git aibrix=aibrix.git --ecosystem-git yunikorn=yunikorn-k8shim.git \\
        --ecosystem-git kubeflow=trainer.git \\
        --ecosystem-git k8s-apiserver=apiserver.git \\
        --ecosystem-git k8s-apimachinery=apimachinery.git

NAME is one of `PROJECTS` below; a name not given is skipped. Each project is read at its newest
release tag and at two older ones (the last patch two and six minor releases before it), with
KubeRay's Go extractor (`extract_go.py`: its tokenizer, calls, events, constants and status
messages), but only in the files that deal with Ray: the controllers, webhooks and plugins that
embed RayCluster, RayJob and RayService (paths below), and the format strings of Kueue's flavor
assigner (why a Workload has no quota yet). Components are `ecosystem.<project>`.

Kubernetes' admission denials (`admission webhook "…" denied the request`, `ValidatingAdmission
Policy '…' with binding '…' denied request`, `exceeded quota: …`, `… is forbidden: …`) are the
API server's own wording, read from its published staging repositories (`k8s.io/apiserver`,
`k8s.io/apimachinery`): only the `fmt.Sprintf`/`fmt.Errorf` formats of a few admission files
that say denied, quota, forbidden or webhook. Project `kubernetes`, component
`kubernetes.admission`.

Writes `patterns/messages/ecosystem-go.jsonl` (every project in one file) and
`patterns/messages/sources-ecosystem.toml` (project, tag, commit).
"""

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extract_go as go  # noqa: E402
from common import MESSAGES, Catalogue, version_key, write_catalogues  # noqa: E402


@dataclass(frozen=True)
class Project:
    """One git directory to read: which project it is, and which of its files to read.

    `files` are read whole, as `extract_go` reads KubeRay; of `format_files` only the format
    strings are taken (`formats`), those matching `keywords` when it is set, at `format_level`.
    Both are regexes over paths at a tag.
    """

    project: str
    files: str | None
    format_files: str | None = None
    keywords: str | None = None
    format_level: str = "returned"


RAY_PATH = r"(^|/|_)ray"
PROJECTS = {
    # Kueue's scheduler says why a Workload (a RayJob's, a RayCluster's) has no quota yet: its
    # QuotaReserved condition's message.
    "kueue": Project("kueue", r"^pkg/controller/jobs/ray\w*/|^pkg/controller/jobframework/"
                              r"validation\.go$",
                     r"^pkg/scheduler/flavorassigner/flavorassigner\.go$", None, "reason"),
    "codeflare": Project("codeflare", r"^pkg/controllers/raycluster_"),
    "volcano": Project("volcano", r"/plugins/distributed-framework/ray/"),
    "flyte": Project("flyte", r"/plugins/k8s/ray/"),
    "aibrix": Project("aibrix", r"^pkg/.*raycluster"),
    "yunikorn": Project("yunikorn", RAY_PATH),
    "kubeflow": Project("kubeflow", RAY_PATH),
    "k8s-apiserver": Project(
        "kubernetes", None,
        r"^pkg/admission/plugin/(webhook/errors/statuserror|policy/validating/dispatcher|"
        r"policy/generic/policy_dispatcher|resourcequota/controller)\.go$|"
        r"^pkg/util/webhook/error\.go$",
        r"denied|quota|forbidden|webhook"),
    "k8s-apimachinery": Project("kubernetes", None, r"^pkg/api/errors/errors\.go$", r"forbidden"),
}


def component(project: str) -> str:
    return "kubernetes.admission" if project == "kubernetes" else f"ecosystem.{project}"


def tags_to_read(repo: go.Repo) -> list[str]:
    """The newest release tag (no pre-release), and the last patch of the minor releases
    `OLDER` before it (those that exist); oldest first."""
    stable = sorted((t for t in repo.tags() if "-" not in t), key=version_key)
    if not stable:
        return []
    newest = stable[-1]
    major, minor = minor_of(newest)
    chosen = [newest]
    for back in OLDER:
        older = [t for t in stable if minor_of(t) <= (major, minor - back)]
        if older and older[-1] not in chosen:
            chosen.append(older[-1])
    return sorted(chosen, key=version_key)


OLDER = (2, 6)  # minor releases back: about six months and two years, for most of these


def minor_of(tag: str) -> tuple[int, int]:
    major, minor = (int(n) for n in re.findall(r"\d+", tag)[:2])
    return major, minor


def files_at(repo: go.Repo, tag: str, spec: Project):
    """`(path, tokens, comments)` of the files of `spec` at `tag`."""
    pattern = re.compile("|".join(f"(?:{p})" for p in (spec.files, spec.format_files) if p), re.I)
    for path, sha in repo.go_files(tag):
        if pattern.search(path):
            src = repo.blob(sha)
            if src is not None:
                toks, comments = go.tokenize(src)
                yield path, toks, comments


FORMATTERS = {("fmt", "Sprintf"), ("fmt", "Errorf"), (".", "appendf")}


def formats(toks: list[go.Tok]):
    """Formats of `fmt.Sprintf`, `fmt.Errorf` and `x.appendf` (Kueue's scheduler status), as
    `(line, template)`."""
    for i in range(len(toks) - 3):
        if ((toks[i].text, toks[i + 2].text) in FORMATTERS or
                (toks[i + 1].text, toks[i + 2].text) in FORMATTERS) and toks[i + 3].text == "(":
            args, _ = go.call_args(toks, i + 3)
            tpl = go.template_of(args[0], True) if args else None
            if tpl:
                yield toks[i].line, tpl


def extract_files(cat: Catalogue, tag: str, spec: Project, files) -> int:
    """Add one tag's templates of one project; how many files were read."""
    comp, n = component(spec.project), 0
    for path, toks, comments in files:
        n += 1
        if spec.format_files and re.search(spec.format_files, path, re.I):
            for line, tpl in formats(toks):
                if not spec.keywords or re.search(spec.keywords, tpl, re.I):
                    cat.add(tag, comp, spec.format_level, tpl, f"{path}:{line}")
            continue
        consts = {name: value for name, value, *_ in go.constants(toks, comments)}
        for name, value, typ, line, comment in go.constants(toks, comments):
            level = go.const_level(typ, comment)
            if level:
                cat.add(tag, comp, level, value, f"{path}:{line}")
        for f in go.calls(toks, consts):
            cat.add(tag, comp, f.level, f.template, f"{path}:{f.line}", reason=f.reason)
        for f in go.status_messages(toks):
            cat.add(tag, comp, f.level, f.template, f"{path}:{f.line}")
    return n


def write_sources(read: list[tuple[str, str, str, str]]) -> Path:
    path = MESSAGES / "sources-ecosystem.toml"
    lines = ["# Versions read by scripts/catalogue/extract_ecosystem.py: release tags of each",
             "# project's repository on GitHub (Kubernetes: its staging repositories",
             "# k8s.io/apiserver and k8s.io/apimachinery), oldest first within a project.", ""]
    for project, repo_name, tag, commit in read:
        lines += ["[[source]]", f'project = "{project}"', f'repository = "{repo_name}"',
                  f'version = "{tag}"', 'how = "git tag"', f'commit = "{commit}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


REPOSITORIES = {
    "kueue": "kubernetes-sigs/kueue", "codeflare": "project-codeflare/codeflare-operator",
    "volcano": "volcano-sh/volcano", "flyte": "flyteorg/flyte", "aibrix": "vllm-project/aibrix",
    "yunikorn": "apache/yunikorn-k8shim", "kubeflow": "kubeflow/trainer",
    "k8s-apiserver": "kubernetes/apiserver", "k8s-apimachinery": "kubernetes/apimachinery",
}


def main(args: list[str] | None = None) -> None:
    """Extract and write; words meant for the other extractors are ignored."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ecosystem-git", action="append", default=[], metavar="NAME=DIR",
                    help=f"a project's git dir; NAME one of {', '.join(PROJECTS)}")
    opts, _ = ap.parse_known_args(args)
    given = dict(g.split("=", 1) for g in opts.ecosystem_git if "=" in g)
    if not given:
        print("skipped: the ecosystem needs --ecosystem-git NAME=DIR (one per project)")
        return
    catalogues: dict[str, Catalogue] = {}
    read = []
    for name, git_dir in given.items():
        spec = PROJECTS.get(name)
        if spec is None:
            print(f"  {name}: unknown, skipped (known: {', '.join(PROJECTS)})")
            continue
        repo = go.Repo(git_dir)
        cat = catalogues.setdefault(spec.project, Catalogue(spec.project, "go"))
        for tag in tags_to_read(repo):
            before = len(cat.entries)
            n = extract_files(cat, tag, spec, files_at(repo, tag, spec))
            print(f"  {name} {tag}: {n} files, {len(cat.entries) - before} new templates")
            if n:
                read.append((spec.project, REPOSITORIES[name], tag, repo.commit(tag)))
    out = write_catalogues("ecosystem-go.jsonl", catalogues.values())
    write_sources(read)
    total = sum(len(c.entries) for c in catalogues.values())
    print(f"{out.relative_to(MESSAGES.parents[1])}: {total} templates")


if __name__ == "__main__":
    main()
