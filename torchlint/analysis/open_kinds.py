"""Kinds that hang on facts about other code, and the two worlds they are read in.

A file is analysed once, before the project is solved, so what a caller passes or a callee
returns is not known while its functions are walked. Such a value is an ``OpenKind``: the
kind it has where none of its facts holds (``base``), and the kind it has where one does
(``up``, a tensor where a parameter or a return turns out to be one).

Kind inference and rules are written for plain kinds. Each step that reads an open kind runs
twice: once in the base world, where every open kind is its ``base``, and, when it read one,
once more in the up world, where every open kind is its ``up``. ``World`` says which world a
step runs in and gathers the facts it read; a value that comes out different in the two
worlds is open on those facts, and a finding made in one world only holds where they do
(or do not). Reading every fact as true at once is the approximation: a value open on two
facts is taken to be what it is when either holds.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, TypeGuard, Union

from torchlint.analysis.conditions import Fact
from torchlint.analysis.kind_vocabulary import Kind, join_kinds


@dataclass(frozen=True, slots=True)
class OpenKind:
    """``up`` where any of ``facts`` holds, ``base`` elsewhere (the two differ)."""

    base: Kind
    up: Kind
    facts: frozenset[Fact]


# What a name holds: a kind, or one that hangs on facts.
Held = Union[Kind, OpenKind]


def opened(base: Kind, up: Kind, facts: Iterable[Fact]) -> Held:
    """``base`` and ``up`` as one value: a plain kind where they agree."""
    found = frozenset(facts)
    return base if base is up or not found else OpenKind(base, up, found)


class _Every(enum.Enum):
    """Stands for the up world's facts: every one of them."""

    EVERY = "every"

    def __repr__(self) -> str:
        return "EVERY"


EVERY: Final = _Every.EVERY


class World:
    """Which facts are read as holding now (none: the base world; ``EVERY``: the up world; or
    a few, to find which of them a value or a finding hangs on), and the facts read since
    ``start``."""

    __slots__ = ("holding", "read")

    def __init__(self) -> None:
        self.holding: frozenset[Fact] | _Every | None = None
        self.read: set[Fact] = set()

    @property
    def up(self) -> bool:
        return self.holding is not None

    def resolve(self, held: Held) -> Kind:
        if type(held) is Kind:
            return held
        self.read.update(held.facts)
        holding = self.holding
        if holding is None:
            return held.base
        if holding is EVERY or not holding.isdisjoint(held.facts):
            return held.up
        return held.base

    def fact(self, fact: Fact, up: Kind, base: Kind) -> Kind:
        """The kind a value of ``fact`` has now: ``up`` where the fact is read as holding."""
        self.read.add(fact)
        holding = self.holding
        return up if holding is EVERY or (holding is not None and fact in holding) else base

    def start(self, holding: frozenset[Fact] | _Every | None) -> set[Fact]:
        """Enter a world with nothing read yet; what was read before is handed back."""
        before = self.read
        self.holding = holding
        self.read = set()
        return before


def deciding(facts: set[Fact], differs: Callable[[frozenset[Fact]], bool]) -> frozenset[Fact]:
    """Of the facts a step read, those that alone make it come out as in the up world
    (``differs`` runs the step with only the given facts holding). Where none does alone,
    it takes them together: all of them."""
    if len(facts) < 2:
        return frozenset(facts)
    alone = frozenset(fact for fact in facts if differs(frozenset({fact})))
    return alone or frozenset(facts)


def join_held(values: Iterable[Held]) -> Held:
    """One value for values that may each be the one, world by world."""
    values = list(values)
    if _all_plain(values):
        return join_kinds(values)
    base = join_kinds(value.base if isinstance(value, OpenKind) else value for value in values)
    up = join_kinds(value.up if isinstance(value, OpenKind) else value for value in values)
    facts = frozenset().union(*(value.facts for value in values if isinstance(value, OpenKind)))
    return opened(base, up, facts)


def _all_plain(values: list[Held]) -> TypeGuard[list[Kind]]:
    """No value hangs on a fact."""
    return all(type(value) is Kind for value in values)


def is_kind_when(held: Held, kind: Kind) -> tuple[bool, frozenset[Fact]]:
    """(always ``kind``, or the facts any one of which makes it that)."""
    if type(held) is Kind:
        return held is kind, frozenset()
    if held.base is kind:
        return True, frozenset()
    return False, held.facts if held.up is kind else frozenset()
