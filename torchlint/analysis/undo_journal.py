"""Containers whose every change is journaled, so that the changes made since a mark can
be read off and undone in the time they took, however much the containers hold.

The kinds of a function's names live in them: each branch of an `if` starts from what
held before it, and costs what it changes, not what the function holds.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, cast, overload

if TYPE_CHECKING:
    from _typeshed import SupportsKeysAndGetItem

_V = TypeVar("_V")
_T = TypeVar("_T")


class Absent(enum.Enum):
    """What a dict held for a key it did not have."""

    ABSENT = "absent"


ABSENT: Final = Absent.ABSENT

# What each branch changed, as read off the journal: (container, key) -> what it left there.
Changes = Mapping[tuple[int, str], object]


class Journaled(Protocol):
    """A container that journals its changes: what it holds for a key can be read, and
    put back."""

    tag: int

    def held(self, key: str) -> object: ...

    def put_back(self, key: str, before: object) -> None: ...


class Journal:
    """The changes made to an environment's containers, oldest first, so that a branch
    can be read off and undone in the time its own changes take."""

    def __init__(self) -> None:
        self.containers: list[Journaled] = []
        self._entries: list[tuple[int, str, object]] = []  # container, key, what it held before

    def add(self, container: Journaled) -> int:
        self.containers.append(container)
        return len(self.containers) - 1

    def record(self, tag: int, key: str, before: object) -> None:
        self._entries.append((tag, key, before))

    def mark(self) -> int:
        return len(self._entries)

    def changes_since(self, mark: int) -> dict[tuple[int, str], object]:
        return {(tag, key): self.containers[tag].held(key) for tag, key, _ in self._entries[mark:]}

    def undo_to(self, mark: int) -> None:
        while len(self._entries) > mark:
            tag, key, before = self._entries.pop()
            self.containers[tag].put_back(key, before)


class JournaledDict(dict[str, _V]):
    """A name -> kind dict whose every change is journaled."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        self.journal = journal
        self.tag = journal.add(self)

    def __setitem__(self, key: str, value: _V) -> None:
        self.journal.record(self.tag, key, self.get(key, ABSENT))
        dict.__setitem__(self, key, value)

    @overload
    def pop(self, key: str, /) -> _V: ...

    @overload
    def pop(self, key: str, default: _V, /) -> _V: ...

    @overload
    def pop(self, key: str, default: _T, /) -> _V | _T: ...

    def pop(self, key: str, /, *default: object) -> object:
        if key in self:
            self.journal.record(self.tag, key, dict.__getitem__(self, key))
        return dict.pop(self, key, *default)

    def update(
        self, other: SupportsKeysAndGetItem[str, _V] | Iterable[tuple[str, _V]] = (), /, **more: _V
    ) -> None:
        for key, value in dict(other, **more).items():
            self[key] = value

    def held(self, key: str) -> _V | Absent:
        return self.get(key, ABSENT)

    def left_by(self, outcomes: Iterable[Changes], key: str) -> list[_V | Absent]:
        """What each of ``outcomes`` left for ``key``."""
        before = self.held(key)
        # Under this dict's tag, the journal keeps only what the dict held.
        return cast("list[_V | Absent]", [outcome.get((self.tag, key), before) for outcome in outcomes])

    def put_back(self, key: str, before: object) -> None:
        if before is ABSENT:
            dict.pop(self, key, None)
        else:
            # The journal hands back only what this dict held for the key.
            dict.__setitem__(self, key, cast(_V, before))


class JournaledSet(set[str]):
    """A set of names whose every change is journaled."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        self.journal = journal
        self.tag = journal.add(self)

    def add(self, key: str) -> None:
        self.journal.record(self.tag, key, key in self)
        set.add(self, key)

    # set.discard takes any object; this set holds names, and its journal keys on them.
    def discard(self, key: str) -> None:  # type: ignore[override, unused-ignore]
        self.journal.record(self.tag, key, key in self)
        set.discard(self, key)

    def held(self, key: str) -> bool:
        return key in self

    def left_by(self, outcomes: Iterable[Changes], key: str) -> list[bool]:
        """Whether each of ``outcomes`` left ``key`` in the set."""
        before = self.held(key)
        # Under this set's tag, the journal keeps only whether the set held the key.
        return cast("list[bool]", [outcome.get((self.tag, key), before) for outcome in outcomes])

    def put_back(self, key: str, before: object) -> None:
        if before:
            set.add(self, key)
        else:
            set.discard(self, key)
