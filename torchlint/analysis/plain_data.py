"""torchlint's values as plain data, for the cache and for a file's findings kept as bytes
until they are resolved.

A value is written as nested tuples, lists, dicts, strings, numbers and bytes, and those are
written by `marshal` (format 0: no references and no interning, so the same value always
gives the same bytes). Each tuple starts with a tag: a plain tuple, a set, a frozenset, a
path, or one of torchlint's data classes, enumerations or named tuples, by its module's place
in a fixed list and its own place in that module. Reading back checks the type of every element and builds each class from its
fields by name, without calling anything of the class: no input, however it was made, can
run code. Sets are written sorted, so their order in a process never shows in the bytes.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import marshal
from collections.abc import Callable
from functools import lru_cache
from operator import attrgetter
from pathlib import Path, PurePath
from sys import intern
from typing import Any

# The modules whose classes a value may hold: only these are ever built from bytes.
_MODULES = (
    "torchlint.analysis.built_objects",
    "torchlint.analysis.checker",
    "torchlint.analysis.conditions",
    "torchlint.analysis.engine",
    "torchlint.analysis.guards",
    "torchlint.analysis.kind_vocabulary",
    "torchlint.analysis.open_kinds",
    "torchlint.analysis.outline",
    "torchlint.analysis.parameter_binding",
    "torchlint.analysis.path_conditions",
    "torchlint.analysis.project_hints",
    "torchlint.analysis.regions",
    "torchlint.analysis.scopes",
    "torchlint.analysis.summary",
    "torchlint.files.project_files",
    "torchlint.report.diagnostic",
    "torchlint.report.suppression",
    "torchlint.run.memo",
    "torchlint.run.run_record",
)

_TUPLE, _SET, _FROZENSET, _PATH = range(4)
_FIRST_CLASS = 16
_FORMAT = 0
_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})


class Refused(ValueError):
    """Bytes that are not a value this module wrote."""


@dataclasses.dataclass(frozen=True)
class _Class:
    tag: int
    cls: type
    kind: str  # "data", "enum" or "tuple"
    fields: tuple[str, ...]
    slots: bool


# A class's tag says its module (by its place in `_MODULES`) and its place among that
# module's classes: reading a value imports only the modules of the classes it holds.
_PER_MODULE = 256


@lru_cache(maxsize=None)
def _module_classes(index: int) -> list[_Class]:
    """The classes of ``_MODULES[index]`` that a value may hold, by qualified name."""
    name = _MODULES[index]
    module = importlib.import_module(name)
    found = sorted(
        (value for value in vars(module).values()
         if isinstance(value, type) and value.__module__ == name and _kind(value) is not None),
        key=attrgetter("__qualname__"),
    )
    assert len(found) <= _PER_MODULE, name
    classes = []
    for place, cls in enumerate(found):
        kind = _kind(cls)
        assert kind is not None
        fields = (
            tuple(f.name for f in dataclasses.fields(cls)) if kind == "data"
            else tuple(getattr(cls, "_fields", ())) if kind == "tuple" else ()
        )
        # Instances without a `__dict__` (slotted classes) are given their fields one by one.
        tag = _FIRST_CLASS + index * _PER_MODULE + place
        classes.append(_Class(tag, cls, kind, fields, cls.__dictoffset__ == 0))
    return classes


_MODULE_INDEX = {name: index for index, name in enumerate(_MODULES)}


def _class_of(cls: type) -> _Class | None:
    index = _MODULE_INDEX.get(cls.__module__)
    if index is None:
        return None
    return next((entry for entry in _module_classes(index) if entry.cls is cls), None)


def _class_tagged(tag: int) -> _Class:
    index, place = divmod(tag - _FIRST_CLASS, _PER_MODULE)
    if not 0 <= index < len(_MODULES):
        raise Refused(f"no class has the tag {tag}")
    classes = _module_classes(index)
    if place >= len(classes):
        raise Refused(f"no class has the tag {tag}")
    return classes[place]


def _kind(cls: type) -> str | None:
    if issubclass(cls, enum.Enum):
        return "enum"
    if dataclasses.is_dataclass(cls):
        return "data"
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "tuple"
    return None


# --- writing ------------------------------------------------------------------------------

_ENCODERS: dict[type, Callable[[Any], object]] = {}


def dumps(value: object) -> bytes:
    """``value`` as bytes; TypeError where it holds anything but plain data and the
    classes of `_MODULES`."""
    return marshal.dumps(_encode(value), _FORMAT)  # type: ignore[arg-type]


def _encode(value: object) -> object:
    kind = type(value)
    if kind in _PLAIN:
        return value
    encoder = _ENCODERS.get(kind)
    if encoder is None:
        encoder = _ENCODERS[kind] = _encoder_for(kind)
    return encoder(value)


def _sorted(items: list[object]) -> list[object]:
    try:
        return sorted(items)  # type: ignore[type-var]
    except TypeError:  # elements of several types: ordered by their bytes instead
        return sorted(items, key=lambda item: marshal.dumps(item, _FORMAT))  # type: ignore[arg-type]


def _encoder_for(kind: type) -> Callable[[Any], object]:
    if kind is tuple:
        return lambda value: (_TUPLE, *map(_encode, value))
    if kind is list:
        return lambda value: list(map(_encode, value))
    if kind is dict:
        return lambda value: {_encode(k): _encode(v) for k, v in value.items()}
    if kind is set:
        return lambda value: (_SET, *_sorted(list(map(_encode, value))))
    if kind is frozenset:
        return lambda value: (_FROZENSET, *_sorted(list(map(_encode, value))))
    if issubclass(kind, PurePath):
        return lambda value: (_PATH, str(value))
    entry = _class_of(kind)
    if entry is None:
        raise TypeError(f"{kind.__module__}.{kind.__qualname__} cannot be kept as plain data")
    tag = entry.tag
    if entry.kind == "enum":
        return lambda value: (tag, value.name)
    if entry.kind == "tuple":
        return lambda value: (tag, *map(_encode, value))
    if not entry.fields:
        return lambda value: (tag,)
    if len(entry.fields) == 1:
        name = entry.fields[0]
        return lambda value: (tag, _encode(getattr(value, name)))
    read = attrgetter(*entry.fields)
    return lambda value: (tag, *map(_encode, read(value)))


# --- reading ------------------------------------------------------------------------------


def loads(data: bytes | memoryview) -> Any | None:
    """The value ``data`` holds, or None where it is not one that `dumps` writes."""
    try:
        return _decode(marshal.loads(data))
    except (Refused, ValueError, EOFError, TypeError, KeyError, IndexError, RecursionError):
        return None


def _decode(value: object) -> object:
    kind = type(value)
    if kind is str:
        # marshal's format 0 gives each occurrence a string of its own: the names a project's
        # analyses repeat would each be held once per use.
        return intern(value)  # type: ignore[call-overload]
    if kind in _PLAIN:
        return value
    if kind is list:
        return [_decode(item) for item in value]  # type: ignore[attr-defined]
    if kind is dict:
        return {_decode(k): _decode(v) for k, v in value.items()}  # type: ignore[attr-defined]
    if kind is not tuple or not value or type(value[0]) is not int:  # type: ignore[index]
        raise Refused(f"{kind.__name__} is not plain data")
    tag: int = value[0]  # type: ignore[index]
    reader = _READERS.get(tag)
    if reader is None:
        reader = _READERS[tag] = _reader_for(tag)
    return reader(value[1:])  # type: ignore[index]


def _path(items: tuple[object, ...]) -> Path:
    if len(items) != 1 or type(items[0]) is not str:
        raise Refused("a path is one string")
    return Path(items[0])


_READERS: dict[int, Callable[[tuple[object, ...]], object]] = {
    _TUPLE: lambda items: tuple(map(_decode, items)),
    _SET: lambda items: set(map(_decode, items)),
    _FROZENSET: lambda items: frozenset(map(_decode, items)),
    _PATH: _path,
}


def _reader_for(tag: int) -> Callable[[tuple[object, ...]], object]:
    """What builds the class tagged ``tag`` from its fields; Refused where none is."""
    if tag < _FIRST_CLASS:
        raise Refused(f"no class has the tag {tag}")
    entry = _class_tagged(tag)
    cls, fields, count = entry.cls, entry.fields, len(entry.fields)

    def counted(items: tuple[object, ...]) -> tuple[object, ...]:
        if len(items) != count:
            raise Refused(f"{cls.__qualname__} has {count} fields")
        return tuple(map(_decode, items))

    if entry.kind == "enum":
        members = cls._member_map_  # type: ignore[attr-defined]

        def member(items: tuple[object, ...]) -> object:
            if len(items) != 1 or type(items[0]) is not str or items[0] not in members:
                raise Refused(f"not a member of {cls.__qualname__}")
            return members[items[0]]

        return member
    if entry.kind == "tuple":
        return lambda items: tuple.__new__(cls, counted(items))
    new = object.__new__
    # Built field by field, as a copy would be: neither `__init__` nor anything else of the class runs.
    if entry.slots:
        def slotted(items: tuple[object, ...]) -> object:
            built: Any = new(cls)
            for name, field_value in zip(fields, counted(items)):
                object.__setattr__(built, name, field_value)
            return built

        return slotted

    def plain(items: tuple[object, ...]) -> object:
        built: Any = new(cls)
        built.__dict__.update(zip(fields, counted(items)))
        return built

    return plain
