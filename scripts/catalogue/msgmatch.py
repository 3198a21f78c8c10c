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


def matches(template: str, line: str) -> bool:
    """Whether `line` matches `template`: every piece, in order."""
    if not usable(template):
        return False
    at = 0
    for p in pieces(template):
        found = line.find(p, at)
        if found < 0:
            return False
        at = found + len(p)
    return True


if __name__ == "__main__":
    assert matches("Failed to update the deployments {}.", "ERROR 2024 controller.py:1 -- Failed to update the deployments ['a'].")
    assert not matches("Failed {}", "Failed x")
    assert not matches("a {} b {} c", "abc")
    print("ok")
