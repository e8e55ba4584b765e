"""Scopes and qualified names: what a name in the source refers to.

A small resolver of our own (libcst's scope and qualified-name providers cost several
times the parse): imports and aliases give qualified names such as
``torch.compiler.is_compiling``; a name bound any other way is a local value; a name
bound nowhere is a builtin.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

BUILTIN_NAMES = frozenset(dir(builtins))


class ScopeKind(enum.Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"


@dataclass(eq=False)
class Scope:
    kind: ScopeKind
    parent: Scope | None = None
    # local name -> qualified name, from import statements
    imports: dict[str, str] = field(default_factory=dict)
    # every other name bound in this scope
    bindings: set[str] = field(default_factory=set)
    # local name -> the expression last assigned to it on its own (`x = <expr>`)
    assignments: dict[str, cst.BaseExpression] = field(default_factory=dict)
    # names declared `global` / `nonlocal`: they live in another scope
    declared_elsewhere: set[str] = field(default_factory=set)
    # modules of `from <module> import *`, as written
    star_imports: list[str] = field(default_factory=list)

    def bind(self, name: str) -> None:
        self.bindings.add(name)

    def visible_scopes(self) -> Iterator[Scope]:
        """This scope, then the scopes its code can see (class bodies are invisible to methods)."""
        yield self
        scope = self.parent
        while scope is not None:
            if scope.kind is not ScopeKind.CLASS:
                yield scope
            scope = scope.parent

    def module(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _bound_in(scope: Scope, name: str) -> bool:
    return name in scope.imports or name in scope.bindings


def lookup_scope(scope: Scope, name: str) -> Scope | None:
    """The scope that binds ``name`` as seen from ``scope``, or None for builtins/unknown."""
    if name in scope.declared_elsewhere:
        module = scope.module()
        return module if _bound_in(module, name) else None
    for candidate in scope.visible_scopes():
        if _bound_in(candidate, name):
            return candidate
    return None


def qualified_name(node: cst.BaseExpression, scope: Scope, _depth: int = 0) -> str | None:
    """The qualified name an expression refers to, or None when it is a local value.

    ``F.softmax`` gives ``torch.nn.functional.softmax`` after ``import torch.nn.functional
    as F``; a builtin gives ``builtins.print``; ``x = torch.nn`` makes ``x`` an alias.
    """
    if _depth > 8:  # alias chains such as `a = b; b = a`
        return None
    # Types are compared exactly (libcst's classes are final): cheaper than an ABC isinstance.
    if type(node) is cst.Attribute:
        base = qualified_name(node.value, scope, _depth + 1)
        return f"{base}.{node.attr.value}" if base is not None else None
    if type(node) is not cst.Name:
        return None
    name = node.value
    owner = lookup_scope(scope, name)
    if owner is None:
        return f"builtins.{name}" if name in BUILTIN_NAMES else None
    if name in owner.imports:
        return owner.imports[name]
    alias = owner.assignments.get(name)
    if isinstance(alias, (cst.Name, cst.Attribute)):
        return qualified_name(alias, owner, _depth + 1)
    return None


def assigned_value(node: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
    """The expression a plain name was last assigned from, through `a = b` aliases."""
    value = None
    for _ in range(8):  # bounded: `a = b; b = a` must end
        if not isinstance(node, cst.Name):
            return value
        owner = lookup_scope(scope, node.value)
        if owner is None or node.value not in owner.assignments:
            return value
        value = node = owner.assignments[node.value]
        scope = owner
    return value


def package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def absolute(name: str, package: str) -> str | None:
    """`.layers.helper` from package `pkg` is `pkg.layers.helper`; None above the top."""
    if not name.startswith("."):
        return name
    rest = name.lstrip(".")
    levels = len(name) - len(rest)
    parts = package.split(".") if package else []
    if levels - 1 > len(parts):
        return None
    base = parts[: len(parts) - (levels - 1)]
    joined = ".".join(base + ([rest] if rest else []))
    return joined or None
