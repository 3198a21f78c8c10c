#!/usr/bin/env python3
r"""Packs the Windows Ray session of `corpus/windows-2.20.0-ray-init-in-worker.toml`.

The source is a whole Ray 2.20.0 session folder (`logs/`) that a user committed from a
Windows laptop to the public repository the `.toml` names, at the commit it names. Git
stored it with LF line ends (Git for Windows converts CRLF to LF on commit when
`core.autocrlf` is true, its installer's default), so this script restores the line ends
Ray wrote on Windows:

- CRLF on every line written through a text-mode stream: Python's `logging` handlers and
  `print` (`sys.stdout`/`sys.stderr` translate `\n` to `\r\n` on Windows), and Ray's C++
  logs (spdlog's `set_pattern` keeps its default end of line, `SPDLOG_EOL`, which is
  `"\r\n"` on `_WIN32`), the event files and the debug state dumps among them;
- LF on the lines of CPython's faulthandler dump (`Windows fatal exception: …`, `Stack (most
  recent call first):` and its frames): faulthandler writes them raw to the descriptor,
  which CPython puts in binary mode at start-up on Windows.

The user's account name in paths (`C:\Users\<name>\…`, found in the files) is replaced by
`me`; nothing else is touched.

Usage: scripts/windows_session.py SESSION_DIR OUT.tar.gz
where SESSION_DIR holds the committed `logs/` (e.g. `git archive <commit> logs | tar -x`).
"""

import io
import re
import sys
import tarfile
from pathlib import Path

FAULTHANDLER_HEAD = "Windows fatal exception:"


def restore_line_ends(text: str) -> str:
    """CRLF on every line, but LF from a faulthandler dump's head to the end of the file."""
    lines = text.split("\n")
    out = []
    raw = False
    for i, line in enumerate(lines):
        last = i + 1 == len(lines)
        raw = raw or line.startswith(FAULTHANDLER_HEAD)
        out.append(line if last else line + ("\n" if raw else "\r\n"))
    return "".join(out)


def account(files: list[Path]) -> str | None:
    r"""The account name in the session's Windows paths (`C:\Users\<name>\…`)."""
    for path in files:
        found = re.search(r"[A-Z]:\\Users\\([^\\\s]+)\\", path.read_text("utf-8"))
        if found:
            return found.group(1)
    return None


def main() -> None:
    src, dest = Path(sys.argv[1]), Path(sys.argv[2])
    name = dest.name.removesuffix(".tar.gz")
    files = sorted(p for p in (src / "logs").rglob("*") if p.is_file())
    user = account(files)
    with tarfile.open(dest, "w:gz", compresslevel=9) as tar:
        for path in files:
            text = path.read_bytes().decode("utf-8")
            if user:
                # `C:\Users\x\`, `C:/Users/x/`, and `C:\\Users\\x` in a list's repr.
                text = re.sub(rf"(Users[\\/]+){re.escape(user)}(?=[\\/])", r"\1me", text)
            data = restore_line_ends(text).encode("utf-8")
            info = tarfile.TarInfo(f"{name}/{path.relative_to(src).as_posix()}")
            info.size = len(data)
            info.mtime = 1716662911  # 2024-05-25T18:48:31Z, the session's last record
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
