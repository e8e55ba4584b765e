"""Words for what torchlint tells people."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 file`, `2 files` (``plural`` where an `s` does not make it: `fixes`)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
