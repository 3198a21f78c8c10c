#!/usr/bin/env bash
# End to end: `raysift analyze` on a .tar.gz bundle and on its extracted directory, against
# the floors and peers it is measured by, in interleaved rounds. See benches/README.md.
#
#   benches/e2e.sh BUNDLE.tar.gz [ROUNDS]
#
# Needs cargo, GNU tar, gzip and GNU time (/usr/bin/time). Optional: rg (ripgrep) for the
# directory comparison, python3 for the check of BUNDLE.tar.gz.expected.json.
set -euo pipefail

die() {
    printf 'e2e.sh: %s\n' "$*" >&2
    exit 2
}

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
    exit 2
}

[[ $# -ge 1 && $# -le 2 ]] || usage
bundle=$1
rounds=${2:-5}
[[ -f $bundle ]] || die "$bundle: not a file"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
bundle=$(cd "$(dirname "$bundle")" && pwd)/$(basename "$bundle")
gtime=/usr/bin/time
"$gtime" -f '%e %M' -o /dev/null true 2>/dev/null ||
    die "$gtime is missing or is not GNU time (apt-get install time)"
for tool in cargo tar gzip awk; do
    command -v "$tool" >/dev/null || die "$tool not found"
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

work=$(mktemp -d "${TMPDIR:-/tmp}/raysift-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The executable cargo reports for target NAME, from JSON messages on standard input.
executable_of() {
    grep '"executable":"' | grep -F "\"name\":\"$1\"" |
        sed -E 's/.*"executable":"([^"]*)".*/\1/' | tail -n 1
}

echo "building raysift (release) and the floor bench..." >&2
raysift=$(cargo build --release --bin raysift --message-format=json-render-diagnostics |
    executable_of raysift)
floor=$(cargo bench --no-run --bench floor --message-format=json-render-diagnostics |
    executable_of floor)
[[ -x $raysift ]] || die "cannot find the raysift binary cargo built"
[[ -x $floor ]] || die "cannot find the floor bench binary cargo built"

echo "extracting $(basename "$bundle")..." >&2
dir=$work/extracted
mkdir "$dir"
tar -xzf "$bundle" -C "$dir" || die "$bundle: not a tar.gz that GNU tar can extract"
bytes=$(find "$dir" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%d", s }')
files=$(find "$dir" -type f | wc -l)
((bytes > 0)) || die "$bundle: no content after extraction"

"$floor" literals >"$work/literals.txt"
rg_args=(-c -i -F --no-ignore --hidden --no-messages)
while IFS= read -r lit; do
    rg_args+=(-e "$lit")
done <"$work/literals.txt"
have_rg=0
if command -v rg >/dev/null; then
    have_rg=1
else
    echo "e2e.sh: rg (ripgrep) is not installed: skipping (e) and the analyze dir / rg ratio" >&2
    echo "        (apt-get install ripgrep, or cargo install ripgrep)" >&2
fi

# The commands, by key: label, then the command line.
keys=(analyze_tgz gzip floor analyze_dir)
((have_rg)) && keys+=(rg)
declare -A label
label[analyze_tgz]='(a) raysift analyze BUNDLE.tar.gz --format json'
label[gzip]='(b) gzip -dc BUNDLE.tar.gz'
label[floor]='(c) floor: inflate + untar + split lines'
label[analyze_dir]='(d) raysift analyze DIR --format json'
n_literals=$(wc -l <"$work/literals.txt")
label[rg]="(e) rg -c -i -F -e LITERAL (x$n_literals) DIR"

# The command line of KEY, into the array `cmd`.
command_of() {
    case $1 in
    analyze_tgz) cmd=("$raysift" analyze "$bundle" --format json) ;;
    gzip) cmd=(gzip -dc "$bundle") ;;
    floor) cmd=("$floor" "$bundle") ;;
    analyze_dir) cmd=("$raysift" analyze "$dir" --format json) ;;
    rg) cmd=(rg "${rg_args[@]}" -- "$dir") ;;
    esac
}

# Highest exit status that still means success: analyze exits 1 when it finds a cause, rg
# when nothing matches.
ok_status() {
    case $1 in
    analyze_tgz | analyze_dir | rg) echo 1 ;;
    *) echo 0 ;;
    esac
}

# One timed run of KEY; appends "wall_seconds peak_kb" to $work/KEY.times unless told not to.
timed() {
    local key=$1 record=$2 status=0 out t0 t1 wall rss cmd
    command_of "$key"
    # gzip's output is the whole bundle: only the others are kept (analyze's for the check).
    out=$work/$key.stdout
    [[ $key == gzip ]] && out=/dev/null
    t0=${EPOCHREALTIME//[!0-9]/}
    "$gtime" -f '%e %M' -o "$work/time.out" "${cmd[@]}" >"$out" 2>"$work/$key.stderr" ||
        status=$?
    t1=${EPOCHREALTIME//[!0-9]/}
    if ((status > $(ok_status "$key"))); then
        cat "$work/$key.stderr" >&2
        die "${label[$key]} exited with status $status"
    fi
    read -r wall rss < <(tail -n 1 "$work/time.out")
    # Microseconds from the shell's clock when it has one; GNU time's %e has 10 ms steps.
    if [[ -n $t0 && -n $t1 ]]; then
        wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e6 }')
    fi
    ((record)) && echo "$wall $rss" >>"$work/$key.times"
    return 0
}

# Other work on the machine moves every number: say how busy it was.
load=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo unknown)

echo "warm-up, then $rounds interleaved rounds of: ${keys[*]}" >&2
for key in "${keys[@]}"; do
    timed "$key" 0
done
for ((round = 1; round <= rounds; round++)); do
    for key in "${keys[@]}"; do
        timed "$key" 1
    done
    printf '  round %d/%d done\n' "$round" "$rounds" >&2
done

# median / min / max of column COL of FILE.
stats() {
    sort -g -k "$2,$2" "$1" | awk -v c="$2" '
        { v[NR] = $c }
        END {
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%s %s %s\n", m, v[1], v[NR]
        }'
}

declare -A med
printf '\n## raysift end to end: %s\n\n' "$(basename "$bundle")"
printf -- '- bundle: %s bytes compressed, %s bytes in %s files uncompressed\n' \
    "$(wc -c <"$bundle" | tr -d ' ')" "$bytes" "$files"
printf -- '- raysift %s; %s CPUs; rounds: %s, interleaved, after one warm-up round\n' \
    "$(git -C "$root" describe --always --dirty 2>/dev/null || echo '(no git)')" \
    "$(getconf _NPROCESSORS_ONLN)" "$rounds"
printf -- '- load average (1, 5, 15 min) before the runs: %s\n' "$load"
rg_version='rg not installed'
((have_rg)) && rg_version=$(rg --version | sed -n 1p)
printf -- '- %s; %s\n\n' "$(gzip --version | sed -n 1p)" "$rg_version"
lines=$(sed -nE 's/.*lines=([0-9]+).*/\1/p' "$work/floor.stdout")
if ((have_rg)); then
    hits=$(awk -F: '{ s += $NF } END { printf "%d", s }' "$work/rg.stdout")
    printf -- '- %s of %s lines hold one of the %s prefilter literals (any one; the sieve may need several)\n\n' \
        "$hits" "$lines" "$n_literals"
fi
echo '| command | median s | min s | max s | median peak RSS MB | MB/s |'
echo '|---|---:|---:|---:|---:|---:|'
for key in "${keys[@]}"; do
    read -r m lo hi < <(stats "$work/$key.times" 1)
    read -r rss _ _ < <(stats "$work/$key.times" 2)
    med[$key]=$m
    awk -v l="${label[$key]}" -v m="$m" -v lo="$lo" -v hi="$hi" -v rss="$rss" -v b="$bytes" \
        'BEGIN { printf "| %s | %.3f | %.3f | %.3f | %.1f | %.0f |\n", l, m, lo, hi, rss * 1024 / 1e6, b / 1e6 / m }'
done

# Per-round ratios A/B, one per line.
round_ratios() {
    paste -d ' ' "$work/$1.times" "$work/$2.times" | awk '{ printf "%.6f\n", $1 / $3 }'
}

echo
echo '| ratio | target | ratio of medians | median of per-round ratios | met |'
echo '|---|---:|---:|---:|:---:|'
ratio_row() {
    local a=$1 b=$2 name=$3 target=$4 per
    round_ratios "$a" "$b" >"$work/ratios"
    read -r per _ _ < <(stats "$work/ratios" 1)
    awk -v n="$name" -v t="$target" -v a="${med[$a]}" -v b="${med[$b]}" -v p="$per" \
        'BEGIN { r = a / b; printf "| %s | <= %s | %.2f | %.2f | %s |\n", n, t, r, p, (r <= t ? "yes" : "no") }'
}
ratio_row analyze_tgz gzip 'analyze tar.gz / gzip -dc' 0.5
ratio_row analyze_tgz floor 'analyze tar.gz / floor (stretch)' 1.3
if ((have_rg)); then
    ratio_row analyze_dir rg 'analyze dir / rg' 2.0
else
    echo '| analyze dir / rg | <= 2.0 | rg not installed | | |'
fi

# The answer key a bundle generator may write beside the bundle.
expected=$bundle.expected.json
status=0
if [[ -f $expected ]]; then
    if command -v python3 >/dev/null; then
        echo
        python3 - "$expected" "$work/analyze_tgz.stdout" "$work/analyze_dir.stdout" <<'PY' || status=1
import json
import sys

# Planted incident pattern (gen_bundle.py) -> the catalogue id raysift should report. An
# incident's own "cause_id" field, when a generator writes one, wins.
CAUSE_OF_PATTERN = {
    "serve_api_put_io_timeout": "network_policy_timeout",
    "serve_api_connection_refused_after_put": "dashboard_agent_died_after_deploy",
    "serve_app_deploy_failed_import_error": "bad_import_path",
    "ray_memory_monitor_oom_kill": "oom_killed",
    "insufficient_resources_raycluster_restart": "insufficient_resources_restart_loop",
    "container_oomkilled": "oom_killed",
}


def reported(path):
    """Every cause id and code in an analyze JSON report, symptoms included."""
    with open(path, encoding="utf-8") as fh:
        report = json.load(fh)
    ids = set()
    for cause in report.get("causes", []):
        for c in [cause] + cause.get("symptoms", []):
            ids.add(c.get("id"))
            ids.add(c.get("code"))
            ids.update(c.get("codes", []))
    return ids


with open(sys.argv[1], encoding="utf-8") as fh:
    incidents = json.load(fh).get("incidents", [])
inputs = {"tar.gz": reported(sys.argv[2]), "dir": reported(sys.argv[3])}
missing = 0
print("| incident | pattern | expected cause | tar.gz | dir |")
print("|---|---|---|:---:|:---:|")
for inc in incidents:
    want = inc.get("cause_id") or CAUSE_OF_PATTERN.get(inc.get("pattern", ""))
    cells = []
    for ids in inputs.values():
        found = want is not None and want in ids
        missing += not found
        cells.append("found" if found else "**MISSING**")
    shown = want or "(no mapping for this pattern)"
    print(f"| {inc.get('id')} | {inc.get('pattern')} | {shown} | {cells[0]} | {cells[1]} |")
if missing:
    print(f"\n{missing} expected cause(s) missing (tar.gz and dir counted separately)")
    sys.exit(1)
print(f"\nall {len(incidents)} planted incidents found in both reports")
PY
    else
        echo "e2e.sh: python3 not found: skipping the check against $(basename "$expected")" >&2
    fi
fi
exit "$status"
