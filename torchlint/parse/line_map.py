"""Which line of a text another text's line came from, when fixes moved lines about."""

from __future__ import annotations

import difflib
from collections.abc import Callable


def original_line(before: str, after: str) -> Callable[[int], int]:
    """A map from a 1-based line of ``after`` to the line of ``before`` it stands for.

    Lines the two texts share map one to one. A line in a changed block (a statement moved
    under a guard, an expression rewritten) maps to the block's line at the same position,
    or its last, so a break on a rewritten line is put on the line that was rewritten.
    """
    old, new = before.splitlines(), after.splitlines()
    blocks = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()

    def line(row: int) -> int:
        index = row - 1
        for _, i1, i2, j1, j2 in blocks:
            if j1 <= index < j2:
                if i2 > i1:
                    return i1 + min(index - j1, i2 - i1 - 1) + 1
                # Lines only inserted stand for the line they were put before.
                return min(i1, max(len(old) - 1, 0)) + 1
        return row

    return line
