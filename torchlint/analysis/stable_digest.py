"""A hash of plain values that is the same on every run and in every process."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from pathlib import Path

_DIGEST_SIZE = 32


def digest(*parts: object) -> str:
    """A stable hash of plain values: the same on every run and in every process, whatever
    the order sets and dicts were built in (``hash()`` of a string is not)."""
    hasher = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    for part in parts:
        hasher.update(_canonical(part).encode("utf-8", "surrogatepass"))
        hasher.update(b"\0")
    return hasher.hexdigest()


def _canonical(value: object) -> str:
    if isinstance(value, (str, int, float, bool, type(None), bytes)):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, Path):
        return repr(str(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ",".join(f"{f.name}={_canonical(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__qualname__}({fields})"
    if isinstance(value, dict):
        items = sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_canonical(item) for item in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canonical(item) for item in value) + ")"
    raise TypeError(f"no stable form for {type(value).__name__}")
