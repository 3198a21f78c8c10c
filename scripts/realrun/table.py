#!/usr/bin/env python3
"""The real-run matrix as raysift reads it: version × scenario, the first cause and whether it
is the expected one. Runs the release binary on every `corpus/run-*.tar.gz`.

    cargo build --release && python3 scripts/realrun/table.py [--corpus DIR] [--markdown]
"""

import argparse
import json
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def first_cause(binary: Path, bundle: Path) -> tuple[str, str]:
    out = subprocess.run(
        [binary, "analyze", bundle, "--format", "json"], stdout=subprocess.PIPE, text=True
    ).stdout
    try:
        causes = json.loads(out).get("causes", [])
    except json.JSONDecodeError:
        return ("(no report)", "")
    real = [c for c in causes if c["severity"] != "info"]
    if not real:
        return ("—", "")
    return (real[0]["id"], real[0]["severity"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpus")
    ap.add_argument("--binary", type=Path, default=ROOT / "target" / "release" / "raysift")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows: dict[str, dict[str, str]] = {}
    versions: list[str] = []
    right = total = 0
    for toml in sorted(args.corpus.glob("run-*.toml")):
        meta = tomllib.loads(toml.read_text())
        version, scenario = meta["ray"], meta["scenario"]
        bundle = toml.with_suffix(".tar.gz")
        got, severity = first_cause(args.binary, bundle)
        want = meta["expected"][0] if meta["expected"] else "—"
        ok = got == want
        right += ok
        total += 1
        mark = "" if ok else " ✗"
        cell = f"{got}{' ' + severity if severity else ''}{mark}"
        rows.setdefault(scenario, {})[version] = cell
        if version not in versions:
            versions.append(version)
        if not args.markdown:
            print(f"{version:8} {scenario:26} want {want:34} got {cell}")
    versions.sort(key=lambda v: tuple(int(x) for x in v.split(".")))
    if args.markdown:
        print("| scenario | " + " | ".join(versions) + " |")
        print("|---|" + "---|" * len(versions))
        for scenario, cells in rows.items():
            print(f"| {scenario} | " + " | ".join(cells.get(v, "") for v in versions) + " |")
    print(f"\n{right}/{total} first causes as expected")


if __name__ == "__main__":
    main()
