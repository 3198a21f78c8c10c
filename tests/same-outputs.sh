#!/usr/bin/env bash
# Writes every output of one raysift binary over the corpus into a folder, one file a run, with
# the figures that change from run to run (`generated_at`, `elapsed_ms`, `batch`'s speed)
# masked. Run it with two builds and compare the folders: a change that should not change
# behaviour leaves `diff -r` empty.
#
#   tests/same-outputs.sh target/release/raysift /tmp/before
#   (change, rebuild)
#   tests/same-outputs.sh target/release/raysift /tmp/after
#   diff -r /tmp/before /tmp/after && echo same
#
# Covers, for every corpus bundle: `analyze` in every format and with 1 and 4 threads,
# `--quiet`, `--inventory` (text, JSON), `timeline` (text, JSON; 1 and 4 threads), and
# `timeline --level warn`; then `batch` over the corpus (lines and `--summary`), `rules`,
# every `rules CODE`, `schema` and `completions`. Not part of `cargo test`: it takes a few
# minutes.
set -uo pipefail
bin=$(realpath "$1")
out=$2
cd "$(dirname "$0")/.."
mkdir -p "$out"
mask() {
    sed -E \
        -e 's/"generated_at": ?"[^"]*"/"generated_at":"-"/g' \
        -e 's/"elapsed_ms": ?[0-9]+/"elapsed_ms":0/g' \
        -e 's/ in [0-9.]+ m?s, [0-9.]+ [KMG]?B\/s/ in -/g'
}
run() { # name, then the command's arguments
    local name=$1
    shift
    "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"
    echo "exit $?" >>"$out/$name.err"
    for s in out err; do
        mask <"$out/$name.$s" >"$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name.$s"
    done
}
for b in corpus/*; do
    [[ "$b" == *.toml || "$b" == *.md ]] && continue
    n=$(basename "$b")
    for t in 1 4; do
        for f in text json markdown html; do
            run "$n.analyze.$f.t$t" analyze "$b" -f "$f" --threads "$t" --color never
        done
        run "$n.timeline.text.t$t" timeline "$b" --threads "$t" --color never
        run "$n.timeline.json.t$t" timeline "$b" -f json --threads "$t"
    done
    run "$n.analyze.quiet" analyze "$b" -q
    run "$n.inventory.text" analyze "$b" --inventory --color never
    run "$n.inventory.json" analyze "$b" --inventory -f json
    run "$n.timeline.warn" timeline "$b" --level warn --color never
done
run batch batch corpus --jobs 2
run batch.summary batch corpus --jobs 2 --summary
run rules rules
for code in $("$bin" rules | awk '{print $1}'); do
    run "rules.$code" rules "$code"
done
for s in report batch timeline; do run "schema.$s" schema "$s"; done
for s in bash zsh fish; do run "completions.$s" completions "$s"; done
echo "$(ls "$out" | wc -l) files in $out"
