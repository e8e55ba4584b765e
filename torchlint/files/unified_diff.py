"""`--diff`'s output: a unified diff of a file's bytes, which `patch` applies to the file.

Lines are split where `patch` splits them, after each \\n and nowhere else: a form feed,
\\x85 or U+2028 ends a line for `str.splitlines` but neither for patch nor for Python, and
patch reads a file whose lines end in a lone \\r as one line. The bytes are those of the
file, in its encoding and with its byte order mark, so that the context matches the disk.
"""

from __future__ import annotations

import difflib
import re

_PATCH_LINE = re.compile(rb"[^\n]*\n|[^\n]+")
# What diff and git print after a last line that has no line end, and patch expects.
_NO_NEWLINE = b"\\ No newline at end of file\n"


def unified_diff(before: bytes, after: bytes, name: bytes) -> bytes:
    """The diff from ``before`` to ``after``, naming the file ``name`` on both sides; empty
    when they are the same."""
    lines = difflib.diff_bytes(difflib.unified_diff, _PATCH_LINE.findall(before), _PATCH_LINE.findall(after), name, name)
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith(b"\n"):
            out.append(b"\n" + _NO_NEWLINE)
    return b"".join(out)
