#!/usr/bin/env python3
"""Grow a corpus bundle into a dense incident: one error logged on every reconcile for days.

    python3 benches/storm.py corpus/handmade-agent-died --mb 400 --out /tmp/storm400.tar.gz

The lines of FILE (default: operator-log.txt) that match --match (default: refused Serve API
calls) are taken with the lines that share their time (one reconcile's worth), then appended
again and again to FILE, each round --every-ms later than the one before, until FILE reaches
--mb megabytes. Times are rewritten where operator logs put them: an RFC 3339 stamp at the
start of the line. The other files are copied unchanged; the bundle's expected cause is the
original's, now with hundreds of thousands of lines of evidence. Standard library only.
"""

import argparse
import datetime as dt
import io
import os
import re
import sys
import tarfile

STAMP = re.compile(rb"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)")


def parse_stamp(raw: bytes) -> dt.datetime:
    text = raw.decode().rstrip("Z")
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in text else "%Y-%m-%dT%H:%M:%S"
    return dt.datetime.strptime(text, fmt)


class Storm(io.RawIOBase):
    """FILE's text, then rounds of its last reconcile's matching lines, made as they are read
    (a 2 GB file is never held)."""

    def __init__(self, text: bytes, pattern: bytes, target: int, every_ms: int):
        lines = text.splitlines(keepends=True)
        hits = [l for l in lines if re.search(pattern, l) and STAMP.match(l)]
        if not hits:
            sys.exit(f"storm.py: no stamped line matches {pattern!r}")
        last = STAMP.match(hits[-1]).group(1)
        self.block = [l[len(last):] for l in lines if l.startswith(last)]
        self.when = parse_stamp(last)
        self.every = dt.timedelta(milliseconds=every_ms)
        per_round = sum(24 + len(rest) for rest in self.block)
        self.rounds = max(0, -(-(target - len(text)) // per_round))
        self.size = len(text) + self.rounds * per_round
        self.pending = text

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        while not self.pending and self.rounds > 0:
            chunk = []
            for _ in range(min(self.rounds, 256)):
                self.when += self.every
                stamp = self.when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3].encode() + b"Z"
                chunk.extend(stamp + rest for rest in self.block)
                self.rounds -= 1
            self.pending = b"".join(chunk)
        n = min(len(buf), len(self.pending))
        buf[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", help="a bundle directory (e.g. corpus/handmade-agent-died)")
    ap.add_argument("--out", required=True, help="the .tar.gz to write")
    ap.add_argument("--mb", type=int, default=400, help="size of the grown file (10^6 bytes)")
    ap.add_argument("--file", default="operator-log.txt", help="the file to grow")
    ap.add_argument("--match", default="connection refused", help="regex of the repeated lines")
    ap.add_argument("--every-ms", type=int, default=2000, help="time between two rounds")
    args = ap.parse_args()
    name = os.path.basename(os.path.normpath(args.bundle))
    with tarfile.open(args.out, "w:gz", compresslevel=6) as tar:
        for root, _, files in sorted(os.walk(args.bundle)):
            for f in sorted(files):
                path = os.path.join(root, f)
                rel = os.path.relpath(path, args.bundle)
                data = open(path, "rb").read()
                info = tarfile.TarInfo(f"{name}/{rel}")
                info.mtime = 0
                if rel == args.file:
                    storm = Storm(data, args.match.encode(), args.mb * 10**6, args.every_ms)
                    info.size = storm.size
                    tar.addfile(info, io.BufferedReader(storm, 1 << 20))
                else:
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
