"""Check the hand-classified message files against the extracted catalogue.

    python3 scripts/catalogue/check_classified.py

Loads every `patterns/messages/*.jsonl` and `patterns/messages/classified/*.toml` and checks
that each `[[message]]` names an extracted id, once across all files; has a valid class and the
fields that class needs; names a cause that `src/rules/catalogue.rs` defines; carries a sample
that its template matches (`msgmatch.py`), the template being usable; and says where the sample
comes from (a corpus bundle the project ships, a thread `owner/repo#N`, or "formatted from
source"). Prints the
problems and exits non-zero if there are any; prints the counts otherwise.
"""

import json
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MESSAGES, ROOT  # noqa: E402
from msgmatch import matches, usable  # noqa: E402

CLASSES = {"cause", "benign", "meaning"}
THREAD = re.compile(r"^[\w.-]+/[\w.-]+#\d+$")
REQUIRED = ("id", "class", "meaning", "sample", "sample_from")


def extracted() -> dict[str, dict]:
    """Every extracted entry, by id."""
    entries = {}
    for path in sorted(MESSAGES.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                entries[entry["id"]] = entry
    return entries


def catalogue_ids() -> set[str]:
    """The cause ids of `src/rules/catalogue.rs`: the first string of each `(id, gloss)`."""
    text = (ROOT / "src" / "rules" / "catalogue.rs").read_text(encoding="utf-8")
    return set(re.findall(r'\(\s*"([a-z0-9_]+)",\s*"', text))


def known_source(where: str) -> bool:
    """`corpus/<bundle>` of a bundle the project ships, `owner/repo#N`, or formatted from source."""
    if where == "formatted from source" or THREAD.match(where):
        return True
    name = where.removeprefix("corpus/")
    corpus = ROOT / "corpus"
    return where.startswith("corpus/") and (
        (corpus / name).exists() or (corpus / f"{name}.tar.gz").exists())


def problems_of(message: dict, entries: dict, causes: set[str]) -> list[str]:
    """What is wrong with one classified message."""
    out = [f"no `{field}`" for field in REQUIRED if not message.get(field)]
    entry = entries.get(message.get("id", ""))
    if entry is None:
        out.append("id not in any extracted file")
    kind = message.get("class")
    if kind not in CLASSES:
        out.append(f"class {kind!r} is not one of {sorted(CLASSES)}")
    if kind == "cause" and message.get("cause") not in causes:
        out.append(f"cause {message.get('cause')!r} is not a catalogue id")
    if kind != "cause" and "cause" in message:
        out.append("`cause` is for class = cause only")
    if kind == "benign" and not message.get("why"):
        out.append("benign without `why`")
    if message.get("sample_from") and not known_source(message["sample_from"]):
        out.append(f"sample_from {message['sample_from']!r} is no corpus bundle, thread or "
                   "'formatted from source'")
    if entry is not None and message.get("sample"):
        if not usable(entry["template"]):
            out.append("template too generic to match lines")
        elif not matches(entry["template"], message["sample"]):
            out.append("sample does not match the template")
    return out


def main() -> int:
    entries, causes = extracted(), catalogue_ids()
    seen: dict[str, str] = {}
    problems, classes = [], Counter()
    for path in sorted((MESSAGES / "classified").glob("*.toml")):
        with open(path, "rb") as f:
            messages = tomllib.load(f).get("message", [])
        for i, message in enumerate(messages):
            where = f"{path.name} #{i + 1} ({message.get('id')})"
            mid = message.get("id", "")
            if mid in seen:
                problems.append(f"{where}: already classified in {seen[mid]}")
            seen[mid] = path.name
            problems += [f"{where}: {p}" for p in problems_of(message, entries, causes)]
            classes[message.get("class")] += 1
    for p in problems:
        print(p)
    print(f"{len(seen)} classified ({dict(classes)}), {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
