#!/usr/bin/env bash
# Renders the HTML report of a bundle in headless Chromium and saves a screenshot, so that a
# person can look at the page as a browser draws it. Not part of `cargo test`: CI has no
# browser. Needs Debian's `chromium` package (apt-get install -y chromium).
#
# Usage: tests/browser/screenshot.sh [BUNDLE] [OUT.png] [extra raysift flags…]
# Defaults: the hand-made agent-death corpus bundle, target/report-screenshot.png;
# WINDOW=1400,6000 makes a taller page (the event table sits below the causes).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="${1:-$root/corpus/handmade-agent-died}"
png="${2:-$root/target/report-screenshot.png}"
shift $(( $# > 2 ? 2 : $# ))

browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
    echo "screenshot.sh: no chromium on PATH (apt-get install -y chromium)" >&2
    exit 2
fi

cargo build --quiet --manifest-path "$root/Cargo.toml"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
html="$work/report.html"
"$root/target/debug/raysift" analyze "$bundle" --format html --out "$html" "$@" || [ $? -eq 1 ]

# Every network feature off and a throw-away profile: the page must render from the file
# alone, and the browser must not phone home while doing so.
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --screenshot="$png" --window-size="${WINDOW:-1400,2000}" \
    "file://$html" 2>"$work/chromium.log" || {
        cat "$work/chromium.log" >&2
        exit 1
    }
echo "screenshot: $png"
