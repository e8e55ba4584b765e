"""A hash of plain values that is the same on every run and in every process."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import cast

_DIGEST_SIZE = 32


def digest(*parts: object) -> str:
    """A stable hash of plain values: the same on every run and in every process, whatever
    the order sets and dicts were built in (``hash()`` of a string is not)."""
    hasher = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    for part in parts:
        hasher.update(_canonical(part).encode("utf-8", "surrogatepass"))
        hasher.update(b"\0")
    return hasher.hexdigest()


_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})
# type -> the names of its fields, for a dataclass (None for any other type)
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _canonical(value: object) -> str:
    # Dispatched on the exact type first: a file's outline holds tens of thousands of values.
    kind = type(value)
    if kind in _PLAIN:
        return repr(value)
    # (`kind` is the value's exact type, so each cast below only says what it tested.)
    if kind is tuple or kind is list:
        return "(" + ",".join(map(_canonical, cast("Iterable[object]", value))) + ")"
    if kind is frozenset or kind is set:
        return "{" + ",".join(sorted(map(_canonical, cast("Iterable[object]", value)))) + "}"
    if kind is dict:
        pairs = cast("dict[object, object]", value).items()
        items = sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in pairs)
        return "{" + ",".join(items) + "}"
    if kind not in _FIELDS:
        if dataclasses.is_dataclass(kind) and not issubclass(kind, enum.Enum):
            _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
        else:
            _FIELDS[kind] = None
    names = _FIELDS[kind]
    if names is not None:
        fields = ",".join(f"{name}={_canonical(getattr(value, name))}" for name in names)
        return f"{kind.__qualname__}({fields})"
    if isinstance(value, enum.Enum):
        return f"{kind.__qualname__}.{value.name}"
    if isinstance(value, Path):
        return repr(str(value))
    if isinstance(value, tuple(_PLAIN)):
        return repr(value)
    if isinstance(value, (tuple, list)):  # a NamedTuple
        return "(" + ",".join(map(_canonical, value)) + ")"
    raise TypeError(f"no stable form for {kind.__name__}")
