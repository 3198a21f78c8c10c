#!/usr/bin/env bash
# The commands that read every event (streamed), against text `analyze` and `gzip -dc` on the
# same .tar.gz, in interleaved rounds. See benches/README.md.
#
#   benches/full.sh BUNDLE.tar.gz [ROUNDS] [RAYSIFT]
#
# RAYSIFT defaults to the release binary cargo builds. Needs gzip and GNU time (/usr/bin/time).
set -euo pipefail

die() {
    printf 'full.sh: %s\n' "$*" >&2
    exit 2
}

[[ $# -ge 1 && $# -le 3 ]] || die "usage: benches/full.sh BUNDLE.tar.gz [ROUNDS] [RAYSIFT]"
bundle=$1
rounds=${2:-5}
[[ -f $bundle ]] || die "$bundle: not a file"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
gtime=/usr/bin/time
"$gtime" -f '%e %M' -o /dev/null true 2>/dev/null || die "$gtime is missing or is not GNU time"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -ge 3 ]]; then
    raysift=$3
else
    (cd "$root" && cargo build --release --bin raysift >&2)
    raysift=$root/target/release/raysift
fi
[[ -x $raysift ]] || die "$raysift: not an executable"

work=$(mktemp -d "${TMPDIR:-/tmp}/raysift-full.XXXXXX")
trap 'rm -rf "$work"' EXIT

keys=(analyze gzip html inventory timeline_json timeline_error)
declare -A label
label[analyze]='analyze (text)'
label[gzip]='gzip -dc'
label[html]='analyze --format html'
label[inventory]='analyze --inventory'
label[timeline_json]='timeline --format json'
label[timeline_error]='timeline --level error'

command_of() {
    case $1 in
    analyze) cmd=("$raysift" analyze "$bundle") ;;
    gzip) cmd=(gzip -dc "$bundle") ;;
    html) cmd=("$raysift" analyze "$bundle" --format html) ;;
    inventory) cmd=("$raysift" analyze "$bundle" --inventory) ;;
    timeline_json) cmd=("$raysift" timeline "$bundle" --format json) ;;
    timeline_error) cmd=("$raysift" timeline "$bundle" --level error) ;;
    esac
}

timed() {
    local key=$1 record=$2 status=0 t0 t1 wall rss user sys cmd
    command_of "$key"
    t0=${EPOCHREALTIME//[!0-9]/}
    "$gtime" -f '%e %M %U %S' -o "$work/time.out" "${cmd[@]}" >/dev/null 2>"$work/stderr" || status=$?
    t1=${EPOCHREALTIME//[!0-9]/}
    # analyze exits 1 when it finds a cause.
    ((status <= 1)) || { cat "$work/stderr" >&2; die "${label[$key]} exited with $status"; }
    read -r wall rss user sys < <(tail -n 1 "$work/time.out")
    [[ -n $t0 && -n $t1 ]] && wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
    ((record)) && echo "$wall $rss $user $sys" >>"$work/$key.times"
    return 0
}

echo "load average: $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for key in "${keys[@]}"; do timed "$key" 0; done
for ((round = 1; round <= rounds; round++)); do
    for key in "${keys[@]}"; do timed "$key" 1; done
    printf '  round %d/%d done\n' "$round" "$rounds" >&2
done

median() { sort -g -k "$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A wall rss user sys
for key in "${keys[@]}"; do
    wall[$key]=$(median "$work/$key.times" 1)
    rss[$key]=$(median "$work/$key.times" 2)
    user[$key]=$(median "$work/$key.times" 3)
    sys[$key]=$(median "$work/$key.times" 4)
done
# The ratio of two commands within each round, then their median: a round measures both
# commands in the same minute, so the ratio holds when the machine's speed drifts over the
# run (the ratio of the two medians does not).
paired() {
    paste -d ' ' "$work/$1.times" "$work/$2.times" |
        awk '{ print $1 / $5 }' | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '\n| command | median s | user s | sys s | peak RSS MB | / analyze | / gzip -dc | target |\n|---|---:|---:|---:|---:|---:|---:|---|\n'
target() {
    case $1 in
    html) echo '≤ 2.5× analyze, ≤ 200 MB' ;;
    inventory) echo '≤ 2× analyze, ≤ 150 MB' ;;
    timeline_json) echo '≤ 1.5× gzip -dc, ≤ 300 MB' ;;
    timeline_error) echo '≤ 1.0× gzip -dc, ≤ 150 MB' ;;
    esac
}
for key in "${keys[@]}"; do
    awk -v l="${label[$key]}" -v w="${wall[$key]}" -v r="${rss[$key]}" -v a="$(paired "$key" analyze)" \
        -v g="$(paired "$key" gzip)" -v t="$(target "$key")" -v u="${user[$key]}" -v s="${sys[$key]}" \
        'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f | %s |\n", l, w, u, s, r * 1024 / 1e6, a, g, t }'
done
echo
echo "Ratios: the median over the rounds of the ratio within each round (wall time)."
echo "User and system times: medians; system time that grows from one run to the next with the"
echo "same binary is the host's, not the command's (benches/README.md)."


