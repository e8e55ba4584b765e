"""TypedDict classes with optional keys: calling one is a graph break, a dict literal is not.

A class has optional keys when it says `total=False`, marks a key `NotRequired[...]`, or
inherits from a class of the same file that has them. A base in another file is the
project index's to judge (`ProjectIndex.optional_key_dicts`).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchlint.analysis.scopes import qualified_name
from torchlint.analysis.summary import ClassInfo

_TYPED_DICT = frozenset({"typing.TypedDict", "typing_extensions.TypedDict"})
_NOT_REQUIRED = frozenset({"typing.NotRequired", "typing_extensions.NotRequired"})


def has_optional_keys(info: ClassInfo, local_bases: Callable[[ClassInfo], list[ClassInfo]]) -> bool:
    """Whether ``info`` is a TypedDict with an optional key, by its own body and its bases in
    the same file (``local_bases``)."""
    return _has_optional_keys(info, local_bases, frozenset())


def _has_optional_keys(
    info: ClassInfo, local_bases: Callable[[ClassInfo], list[ClassInfo]], seen: frozenset[ClassInfo]
) -> bool:
    if info in seen:
        return False
    scope = info.enclosing
    if any(qualified_name(base, scope) in _TYPED_DICT for base in info.bases):
        if any(_is_false(arg) for arg in info.node.keywords if arg.keyword and arg.keyword.value == "total"):
            return True
        if any(_not_required(statement, info) for statement in info.node.body.body):
            return True
    return any(_has_optional_keys(base, local_bases, seen | {info}) for base in local_bases(info))


def _is_false(arg: cst.Arg) -> bool:
    return isinstance(arg.value, cst.Name) and arg.value.value == "False"


def _not_required(statement: cst.CSTNode, info: ClassInfo) -> bool:
    """`key: NotRequired[int]` in the class body."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.AnnAssign) and isinstance(small.annotation.annotation, cst.Subscript):
            if qualified_name(small.annotation.annotation.value, info.scope) in _NOT_REQUIRED:
                return True
    return False
