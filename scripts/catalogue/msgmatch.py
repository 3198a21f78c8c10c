"""How a log line matches a message template (patterns/messages/README.md, "How a line matches").

The reference for the Rust matcher in src/messages/: keep the two in step.
"""

MIN_PIECE = 3
MIN_LITERAL = 12


def pieces(template: str) -> list[str]:
    """The literal pieces of a template that a line must contain, in order."""
    out = []
    for part in template.split("{}"):
        part = part.strip()
        if len(part) >= MIN_PIECE:
            out.append(part)
    return out


def usable(template: str) -> bool:
    """Whether the template says enough to be matched against lines at all."""
    return sum(len(p) for p in pieces(template)) >= MIN_LITERAL


def normalised(line: str) -> str:
    """Runs of whitespace one space; a JSON string's escaped quotes plain."""
    return " ".join(line.replace('\\"', '"').split())


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _find(line: str, piece: str, at: int, before: bool, after: bool) -> int:
    """End of the first occurrence at or after `at` with the word boundaries asked, or -1."""
    while True:
        start = line.find(piece, at)
        if start < 0:
            return -1
        end = start + len(piece)
        ok_before = not (before and _word(piece[0]) and start > 0 and _word(line[start - 1]))
        ok_after = not (after and _word(piece[-1]) and end < len(line) and _word(line[end]))
        if ok_before and ok_after:
            return end
        at = start + 1


PARTIAL_MIN = 40
# Fewest characters of a piece a line cut short may end with and have them counted.
CUT_MIN = 12


def _cut_tail(line: str, piece: str, at: int) -> int:
    """Characters of `piece` the line ends with, from a word's start at or after `at`, when it
    is cut short inside the piece (at least CUT_MIN of them), else 0. Such a tail begins with
    the piece's first CUT_MIN characters, so only their occurrences are tried."""
    rest, head = line[at:], piece[:CUT_MIN]
    k = rest.find(head)
    while k >= 0:
        tail = rest[k:]
        if (k == 0 or not rest[k - 1].isalnum()) and CUT_MIN <= len(tail) < len(piece) \
                and piece.startswith(tail):
            return len(tail)
        k = rest.find(head, k + 1)
    return 0


def matched(template: str, line: str) -> int | None:
    """Literal characters of `template` that `line` matches, or None: every piece in order;
    or, for a long template, pieces in order holding at least PARTIAL_MIN characters and half
    its text. Where the template begins (ends) with its own text, the first (last) piece must
    not start (end) inside a word."""
    if not usable(template):
        return None
    line = normalised(line)
    ps = pieces(template)
    t = template.strip()
    start, end = not t.startswith("{}"), not t.endswith("{}")
    at, got = 0, 0
    for n, p in enumerate(ps):
        found = _find(line, p, at, start and n == 0, end and n == len(ps) - 1)
        if found >= 0:
            at, got = found, got + len(p)
        else:
            # A line cut short inside this piece ends the match: what it holds counts.
            cut = _cut_tail(line, p, at)
            if cut:
                got += cut
                break
    total = sum(len(p) for p in ps)
    return got if got == total or (got >= PARTIAL_MIN and 2 * got >= total) else None


def matches(template: str, line: str) -> bool:
    """Whether `line` matches `template` (see `matched`)."""
    return matched(template, line) is not None


if __name__ == "__main__":
    assert matches("Failed to update the deployments {}.", "ERROR 2024 controller.py:1 -- Failed to update the deployments ['a'].")
    assert not matches("Failed {}", "Failed x")
    assert not matches("a {} b {} c", "abc")
    long = "If users specify ServiceAccountName for the head Pod, they need to create one. However, {} is not found. See the PR for more."
    assert matches(long, "If users specify ServiceAccountName for the head Pod, they need to create one. However, x is not fo")
    assert not matches("NotFoundError: {}", "ModuleNotFoundError: x")
    assert matches("taken more than {}s to be scheduled", "taken more than 30s to be scheduled")
    assert matches('Issue 5: "bad" {}', 'x {"error": "Issue 5: \\"bad\\" y"}')
    print("ok")
