#!/usr/bin/env bash
# Degenerate input shapes: peak memory and wall time of `raysift analyze` (and the full reads) on
# bundles whose shape, not their size, is the problem. See benches/README.md.
#
#   benches/shapes.sh [SIZE_MB] [NORMAL_BUNDLE]
#
# SIZE_MB (default 200) sizes every shape. NORMAL_BUNDLE, a healthy bundle of about the same
# size (a directory or an archive), is measured too, as the reference the shapes are judged
# against. Set RAYSIFT to a built binary to skip the build, SHAPES_DIR to keep the generated
# shapes (they are written to a temporary directory and removed otherwise), COMMANDS to the
# reads to measure among `analyze timeline page inventory` (default `analyze`; `page` is
# `analyze --format html`, `inventory` is `analyze --inventory`).
#
# Needs cargo (unless RAYSIFT is set), python3, GNU tar, zip support in python3's stdlib and
# GNU time (/usr/bin/time).
set -euo pipefail

die() {
    printf 'shapes.sh: %s\n' "$*" >&2
    exit 2
}

size_mb=${1:-200}
normal=${2:-}
[[ $size_mb =~ ^[1-9][0-9]*$ ]] || die "SIZE_MB must be a positive integer, not '$size_mb'"
[[ -z $normal || -e $normal ]] || die "$normal: no such bundle"
gtime=/usr/bin/time
"$gtime" -f '%e %M' -o /dev/null true 2>/dev/null ||
    die "$gtime is missing or is not GNU time (apt-get install time)"
command -v python3 >/dev/null || die "python3 not found"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${RAYSIFT:-} ]]; then
    echo "building raysift (release)..." >&2
    (cd "$root" && cargo build --release --quiet --bin raysift)
    RAYSIFT=$root/target/release/raysift
fi
[[ -x $RAYSIFT ]] || die "$RAYSIFT: not an executable"

if [[ -n ${SHAPES_DIR:-} ]]; then
    work=$SHAPES_DIR
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/raysift-shapes.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi

echo "generating shapes of ${size_mb} MB in $work..." >&2
python3 - "$work" "$size_mb" <<'PY'
import gzip, io, os, random, sys, tarfile, zipfile

work, size = sys.argv[1], int(sys.argv[2]) * 1_000_000
rng = random.Random(7)
alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# Incompressible enough that a gzip of it is no decompression bomb: deflate looks back 32 KiB,
# the block repeats every 256 KiB.
block = bytes(rng.choice(alphabet) for _ in range(256 << 10))

def done(path):
    """Whether `path` was made by an earlier run; else its folder is made. Every output is
    written under a temporary name and renamed, so an interrupted run leaves nothing half made."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return os.path.exists(path)

def part(path):
    return path + ".part"

def write_payload(f, n):
    while n > 0:
        chunk = block[: min(n, len(block))]
        f.write(chunk)
        n -= len(chunk)

def ray_log(f, n, start=0):
    """Normal Ray python log lines, n bytes or a little more."""
    i, written = start, 0
    while written < n:
        s = i // 40
        line = (
            f"2024-10-07 {8 + s // 3600 % 12:02d}:{s // 60 % 60:02d}:{s % 60:02d},{i % 1000:03d}\t"
            f"INFO http_server_head.py:{100 + i % 300} -- 10.0.{i % 7}.{i % 250}:{40000 + i % 9999} "
            f"[{i}] GET /api/serve/applications/ HTTP/1.1 200 {1000 + i % 5000} bytes 0.{i % 97:03d} s\n"
        ).encode()
        f.write(line)
        written += len(line)
        i += 1
    return i

# 1. One line of SIZE bytes and no newline, after a record head: a dashboard log gone wrong.
long_log = os.path.join(work, "long.log")
if not done(long_log):
    with open(part(long_log), "wb") as f:
        f.write(b"2024-10-07 08:00:00,000\tINFO head.py:1 -- payload ")
        write_payload(f, size - 51)
    os.replace(part(long_log), long_log)
os.makedirs(os.path.join(work, "long", "head", "logs"), exist_ok=True)
link = os.path.join(work, "long", "head", "logs", "dashboard.log")
if not os.path.exists(link):
    os.link(long_log, link)
out = os.path.join(work, "long.tar.gz")
if not done(out):
    with tarfile.open(part(out), "w:gz", compresslevel=1) as t:
        t.add(link, arcname="long/head/logs/dashboard.log")
    os.replace(part(out), out)
out = os.path.join(work, "long.zip")
if not done(out):
    with zipfile.ZipFile(part(out), "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.write(link, arcname="long/head/logs/dashboard.log")
    os.replace(part(out), out)

# 2. A line of a quarter of SIZE in the middle of a normal log.
middle = os.path.join(work, "middle", "head", "logs", "dashboard.log")
if not done(middle):
    with open(part(middle), "wb") as f:
        i = ray_log(f, size * 3 // 8)
        f.write(b"2024-10-07 09:00:00,000\tERROR head.py:2 -- response body ")
        write_payload(f, size // 4)
        f.write(b"\n")
        ray_log(f, size * 3 // 8, i)
    os.replace(part(middle), middle)

# 3. kubectl describe pod with an Events table of rows up to SIZE bytes (about 150 bytes a row).
def pod(i):
    return f"raycluster-storm-worker-{i % 4000:05x}"

REASONS = [
    ("Warning", "FailedScheduling", "default-scheduler",
     lambda i: f"0/12 nodes are available: {i % 12} Insufficient cpu, {i % 5} Insufficient memory. preemption: 0/12 nodes are available: 12 No preemption victims found for incoming pod.."),
    ("Warning", "BackOff", "kubelet",
     lambda i: f"Back-off restarting failed container ray-worker in pod {pod(i)}_default(7f1c{i % 4000:04x})"),
    ("Warning", "Unhealthy", "kubelet",
     lambda i: "Readiness probe failed: command \"bash -c wget -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success\" timed out"),
    ("Normal", "Pulled", "kubelet",
     lambda i: "Container image \"rayproject/ray:2.9.3\" already present on machine"),
    ("Normal", "Created", "kubelet", lambda i: "Created container ray-worker"),
    ("Normal", "Started", "kubelet", lambda i: "Started container ray-worker"),
    ("Normal", "Scheduled", "default-scheduler",
     lambda i: f"Successfully assigned default/{pod(i)} to ip-10-0-{i % 200}-{i % 250}.ec2.internal"),
    ("Warning", "FailedCreatePodSandBox", "kubelet",
     lambda i: f"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"{i:012x}\": plugin type=\"aws-cni\" failed (add): add cmd: failed to assign an IP address to container"),
]

def age(i):
    last = 10 + i % 3000
    first = last + i % 20000
    n = 1 + i % 40
    fmt = lambda s: f"{s}s" if s < 120 else f"{s // 60}m" if s < 10800 else f"{s // 3600}h"
    return fmt(last) if n == 1 else f"{fmt(last)} (x{n} over {fmt(first)})"

describe = os.path.join(work, "describe", "describe", "pod-raycluster-storm-head.txt")
if not done(describe):
    with open(part(describe), "w") as f:
        f.write("Name:             raycluster-storm-head-x7k2p\nNamespace:        default\n"
                "Priority:         0\nNode:             ip-10-0-1-17.ec2.internal/10.0.1.17\n"
                "Start Time:       Mon, 07 Oct 2024 08:00:00 +0000\n"
                "Labels:           ray.io/cluster=raycluster-storm\n                  ray.io/node-type=head\n"
                "Status:           Running\nIP:               10.0.1.23\n"
                "Controlled By:  RayCluster/raycluster-storm\nContainers:\n  ray-head:\n"
                "    Image:          rayproject/ray:2.9.3\n    State:          Running\n"
                "      Started:      Mon, 07 Oct 2024 08:00:05 +0000\n    Ready:          True\n"
                "    Restart Count:  0\nConditions:\n  Type              Status\n"
                "  Initialized       True \n  Ready             True \nQoS Class:        Guaranteed\n"
                "Events:\n  Type     Reason                  Age                    From               Message\n"
                "  ----     ------                  ----                   ----               -------\n")
        written, i = 0, 0
        while written < size:
            t, reason, src, msg = REASONS[i % len(REASONS)]
            row = f"  {t:<8} {reason:<23} {age(i):<22} {src:<18} {msg(i)}\n"
            f.write(row)
            written += len(row)
            i += 1
    os.replace(part(describe), describe)
out = os.path.join(work, "describe.tar.gz")
if not done(out):
    with tarfile.open(part(out), "w:gz", compresslevel=1) as t:
        t.add(os.path.join(work, "describe"), arcname="describe")
    os.replace(part(out), out)
# A zip member is mapped and read whole, not streamed: the other way in.
out = os.path.join(work, "describe.zip")
if not done(out):
    with zipfile.ZipFile(part(out), "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.write(describe, arcname="describe/pod-raycluster-storm-head.txt")
    os.replace(part(out), out)

# 4. kubectl get events -A of rows up to SIZE bytes.
events = os.path.join(work, "events", "events.txt")
if not done(events):
    with open(part(events), "w") as f:
        f.write(f"{'NAMESPACE':<10} {'LAST SEEN':<10} {'TYPE':<8} {'REASON':<23} {'OBJECT':<44} MESSAGE\n")
        written, i = 0, 0
        while written < size:
            t, reason, src, msg = REASONS[i % len(REASONS)]
            last = age(i).split(" ")[0]
            row = f"{'default':<10} {last:<10} {t:<8} {reason:<23} {'pod/' + pod(i):<44} {msg(i)}\n"
            f.write(row)
            written += len(row)
            i += 1
    os.replace(part(events), events)
PY

# run LABEL STDIN COMMAND...: one timed run, its wall time and peak RSS in a table row.
run() {
    local label=$1 input=$2
    shift 2
    "$gtime" -f '%e s %M KB' -o "$work/time.txt" "$@" <"$input" >/dev/null 2>"$work/stderr.txt" ||
        true
    printf '| %-44s | %s |\n' "$label" "$(tail -n 1 "$work/time.txt")"
}

commands=${COMMANDS:-analyze}
printf '| %-44s | %s |\n' "raysift COMMAND on" "wall, peak RSS"
printf '|%s|%s|\n' "----------------------------------------------" "----------------"
for cmd in $commands; do
    case $cmd in
    analyze | timeline) args=("$RAYSIFT" "$cmd") opts=(--format json) ;;
    page) args=("$RAYSIFT" analyze) opts=(--format html) ;;
    inventory) args=("$RAYSIFT" analyze) opts=(--inventory) ;;
    *) die "COMMANDS holds '$cmd': analyze, timeline, page or inventory" ;;
    esac
    if [[ -n $normal ]]; then
        run "$cmd: normal bundle" /dev/null "${args[@]}" "$normal" "${opts[@]}"
    fi
    run "$cmd: one long line, directory" /dev/null "${args[@]}" "$work/long" "${opts[@]}"
    run "$cmd: one long line, tar.gz" /dev/null "${args[@]}" "$work/long.tar.gz" "${opts[@]}"
    run "$cmd: one long line, zip" /dev/null "${args[@]}" "$work/long.zip" "${opts[@]}"
    run "$cmd: one long line, plain file" /dev/null "${args[@]}" "$work/long.log" "${opts[@]}"
    run "$cmd: one long line, stdin" "$work/long.log" "${args[@]}" - "${opts[@]}"
    run "$cmd: long line inside a normal log" /dev/null "${args[@]}" "$work/middle" "${opts[@]}"
    run "$cmd: describe, huge Events table, dir" /dev/null "${args[@]}" "$work/describe" "${opts[@]}"
    run "$cmd: describe, huge Events table, tar.gz" /dev/null "${args[@]}" "$work/describe.tar.gz" "${opts[@]}"
    run "$cmd: describe, huge Events table, zip" /dev/null "${args[@]}" "$work/describe.zip" "${opts[@]}"
    run "$cmd: kubectl get events, many rows" /dev/null "${args[@]}" "$work/events" "${opts[@]}"
done
