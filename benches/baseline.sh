#!/usr/bin/env bash
# Prints the templates of ERROR records that no rule claims in the given healthy bundles, one
# a line, in the format of src/open_world/baseline.txt: the candidates for the baseline of
# healthy noise. Review each line before adding it: a template belongs in the baseline only
# when it is noise in a healthy cluster, never when it tells a failure.
#
#   benches/baseline.sh corpus/healthy-* GENERATED_BUNDLE...
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
for bundle in "$@"; do
    [[ "$bundle" == *.toml ]] && continue
    target/release/raysift analyze "$bundle" --format json --fail-on critical \
        | python3 -c '
import json, sys
for u in json.load(sys.stdin).get("unrecognised", []):
    if not u["known_noise"]:
        print(u["template"])
'
done | sort -u
