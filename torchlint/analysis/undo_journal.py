"""Containers whose every change is journaled, so that the changes made since a mark can
be read off and undone in the time they took, however much the containers hold.

The kinds of a function's names live in them: each branch of an `if` starts from what
held before it, and costs what it changes, not what the function holds.
"""

from __future__ import annotations

# What a dict held for a key it did not have.
ABSENT = object()


class Journal:
    """The changes made to an environment's containers, oldest first, so that a branch
    can be read off and undone in the time its own changes take."""

    def __init__(self) -> None:
        self.containers: list[JournaledDict | JournaledSet] = []
        self._entries: list[tuple[int, str, object]] = []  # container, key, what it held before

    def add(self, container: JournaledDict | JournaledSet) -> int:
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


class JournaledDict(dict):
    """A name -> kind dict whose every change is journaled."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        self.journal = journal
        self.tag = journal.add(self)

    def __setitem__(self, key: str, value) -> None:
        self.journal.record(self.tag, key, dict.get(self, key, ABSENT))
        dict.__setitem__(self, key, value)

    def pop(self, key: str, *default):
        if key in self:
            self.journal.record(self.tag, key, dict.__getitem__(self, key))
        return dict.pop(self, key, *default)

    def update(self, other=(), **more) -> None:
        for key, value in dict(other, **more).items():
            self[key] = value

    def held(self, key: str) -> object:
        return dict.get(self, key, ABSENT)

    def put_back(self, key: str, before: object) -> None:
        if before is ABSENT:
            dict.pop(self, key, None)
        else:
            dict.__setitem__(self, key, before)


class JournaledSet(set):
    """A set of names whose every change is journaled."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        self.journal = journal
        self.tag = journal.add(self)

    def add(self, key: str) -> None:
        self.journal.record(self.tag, key, key in self)
        set.add(self, key)

    def discard(self, key: str) -> None:
        self.journal.record(self.tag, key, key in self)
        set.discard(self, key)

    def held(self, key: str) -> bool:
        return key in self

    def put_back(self, key: str, before: object) -> None:
        if before:
            set.add(self, key)
        else:
            set.discard(self, key)
