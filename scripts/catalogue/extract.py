"""Rebuild the extracted message catalogue: the one command (see scripts/catalogue/README.md).

    python3 scripts/catalogue/extract.py [--only python,go,cpp,ecosystem,ecosystem_python]
        [--versions V1,...]

Runs each extractor that exists (`extract_python`, `extract_go`, `extract_cpp`,
`extract_ecosystem`, `extract_ecosystem_python`, each a module beside this one with a `main(argv)`), in that order. Each
gets the whole command line and takes the flags it knows (`--versions` for Python,
`--kuberay-git` for Go, `--ray-src` and `--wheels` for C++, `--ecosystem-git NAME=DIR` for the
projects around KubeRay, `--ecosystem-wheels NAME=DIR` for vLLM and SkyPilot; see each module's docstring), ignoring the others'.
"""

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

EXTRACTORS = ("python", "go", "cpp", "ecosystem", "ecosystem_python")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=lambda s: s.split(","), default=list(EXTRACTORS),
                        help="comma-separated extractors to run "
                        "(python, go, cpp, ecosystem, ecosystem_python)")
    parser.add_argument("--versions", type=lambda s: s.split(","), default=None,
                        help="comma-separated versions to read, instead of the default spread")
    args, _ = parser.parse_known_args(argv)
    unknown = [name for name in args.only if name not in EXTRACTORS]
    if unknown:
        parser.error(f"unknown extractor {unknown}; choose from {', '.join(EXTRACTORS)}")
    return args


def main(argv: list[str]) -> None:
    args = parse(argv)
    for name in args.only:
        try:
            module = importlib.import_module(f"extract_{name}")
        except ModuleNotFoundError as e:
            if e.name != f"extract_{name}":
                raise
            print(f"== {name}: no extract_{name}.py yet, skipped")
            continue
        print(f"== {name}")
        started = time.monotonic()
        module.main(argv)
        print(f"== {name}: {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
