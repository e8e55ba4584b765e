"""What a finding needs from the rest of the project, as facts its file cannot know alone.

A file is analysed once, on its own. Where a rule's answer depends on code elsewhere (is this
function compiled, does this callee return a tensor, what do callers pass here, does this
helper break the graph), the rule does not wait for it: its finding carries a ``Condition``
over ``Fact`` atoms, and the project's solve answers them (`torchlint.project`). A fact names
code as the file spells it: a function or class of the file by its qualified name, anything
else by a `Ref` the project resolves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Union

from torchlint.analysis.regions import Ref

# A function or class: one of this file by its qualified name, or a Ref out of it.
Target = Union[str, Ref]


class Condition:
    """A formula over facts; ``holds`` asks a function that answers each fact."""

    __slots__ = ()

    def holds(self, fact: Callable[[Fact], bool]) -> bool:
        raise NotImplementedError

    def facts(self) -> Iterable[Fact]:
        """Every fact the formula mentions."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class _Constant(Condition):
    value: bool

    def holds(self, fact: Callable[[Fact], bool]) -> bool:
        return self.value

    def facts(self) -> Iterable[Fact]:
        return ()

    def __repr__(self) -> str:
        return "TRUE" if self.value else "FALSE"


TRUE = _Constant(True)
FALSE = _Constant(False)


@dataclass(frozen=True, slots=True)
class Fact(Condition):
    """One fact about the project. Subclasses name what it is about."""

    def holds(self, fact: Callable[[Fact], bool]) -> bool:
        return fact(self)

    def facts(self) -> Iterable[Fact]:
        return (self,)


@dataclass(frozen=True, slots=True)
class Compiled(Fact):
    """Dynamo traces the function: an entry point reaches it."""

    function: Target


@dataclass(frozen=True, slots=True)
class EntryPoint(Fact):
    """Dynamo starts a frame at the function: a compile site names it (or the module whose
    forward it is), or the configuration does. Its parameters hold what the caller's code
    passes from one call to the next; a helper's hold what compiled code hands it."""

    function: Target


@dataclass(frozen=True, slots=True)
class Fullgraph(Fact):
    """Every compile site that reaches the function says `fullgraph=True`."""

    function: Target


@dataclass(frozen=True, slots=True)
class ParamTensor(Fact):
    """The parameter holds a tensor: a caller passes one, or code it is handed to uses it as one."""

    function: str  # a function of this file, by its qualified name
    param: str


@dataclass(frozen=True, slots=True)
class ReturnsTensor(Fact):
    """Calling the target gives a tensor (a function, or an instance whose forward is called)."""

    function: Target


@dataclass(frozen=True, slots=True)
class ReturnsCaptured(Fact):
    """Calling the target gives a number Dynamo captured from a tensor (`bool(t.sum() > 0)`
    where scalars are captured): fine in arithmetic, a break in a branch."""

    function: Target


@dataclass(frozen=True, slots=True)
class ReturnsTensorAt(Fact):
    """The function returns a tuple whose element ``index`` is a tensor."""

    function: Target
    index: int


@dataclass(frozen=True, slots=True)
class HeldTensor(Fact):
    """`self.<attr>.<member>` of the class (one of this file) is a tensor: `self.<attr>` keeps an
    object given to `__init__` whose class sets ``member`` to one."""

    owner: str
    attr: str
    member: str


@dataclass(frozen=True, slots=True)
class IsModule(Fact):
    """The class is an `nn.Module`, through its bases in any file."""

    cls: Target


@dataclass(frozen=True, slots=True)
class Breaks(Fact):
    """Calling the target meets a graph break: its own, or in what it calls (a class: its
    `__init__`)."""

    function: Target


@dataclass(frozen=True, slots=True)
class Disabled(Fact):
    """The function is under `torch.compiler.disable`."""

    function: Target


@dataclass(frozen=True, slots=True)
class OptionalKeys(Fact):
    """The class is a TypedDict with an optional key (building one breaks the graph)."""

    cls: Target


@dataclass(frozen=True, slots=True)
class AllOf(Condition):
    items: frozenset[Condition]

    def holds(self, fact: Callable[[Fact], bool]) -> bool:
        return all(item.holds(fact) for item in self.items)

    def facts(self) -> Iterable[Fact]:
        for item in self.items:
            yield from item.facts()


@dataclass(frozen=True, slots=True)
class AnyOf(Condition):
    items: frozenset[Condition]

    def holds(self, fact: Callable[[Fact], bool]) -> bool:
        return any(item.holds(fact) for item in self.items)

    def facts(self) -> Iterable[Fact]:
        for item in self.items:
            yield from item.facts()


@dataclass(frozen=True, slots=True)
class Not(Condition):
    item: Condition

    def holds(self, fact: Callable[[Fact], bool]) -> bool:
        return not self.item.holds(fact)

    def facts(self) -> Iterable[Fact]:
        return self.item.facts()


def all_of(*conditions: Condition) -> Condition:
    items: set[Condition] = set()
    for condition in conditions:
        if condition is FALSE:
            return FALSE
        if isinstance(condition, AllOf):
            items.update(condition.items)
        elif condition is not TRUE:
            items.add(condition)
    if not items:
        return TRUE
    return next(iter(items)) if len(items) == 1 else AllOf(frozenset(items))


def any_of(*conditions: Condition) -> Condition:
    items: set[Condition] = set()
    for condition in conditions:
        if condition is TRUE:
            return TRUE
        if isinstance(condition, AnyOf):
            items.update(condition.items)
        elif condition is not FALSE:
            items.add(condition)
    if not items:
        return FALSE
    return next(iter(items)) if len(items) == 1 else AnyOf(frozenset(items))


def negated(condition: Condition) -> Condition:
    if condition is TRUE:
        return FALSE
    if condition is FALSE:
        return TRUE
    if isinstance(condition, Not):
        return condition.item
    return Not(condition)
