"""The project's facts, solved once from every file's outline: which functions are compiled,
which parameters and returns hold tensors, which functions break the graph. A finding's
condition is answered here (`holds`).

Three steps, each a fixpoint over facts that only ever become true:

1. regions (`ProjectIndex.solve`): what entry points reach, across files;
2. kinds: a parameter holds a tensor where a call passes one (or a value that is one where
   its own facts hold), or where the function hands it on to code that uses it as one; a
   function returns one where its returns are. Each is one fact implied by another, so the
   solve is a search from what holds outright, however many calls and files a tensor
   crosses;
3. breaks: a function breaks where one of its own breaks holds, or where it calls one that
   breaks. A break's condition may itself ask whether a callee breaks (a module built in
   compiled code): the search goes on until nothing new breaks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Literal

from torchlint.analysis.checker import CallRecord, FunctionKinds
from torchlint.analysis.conditions import (
    Breaks,
    Compiled,
    Condition,
    Disabled,
    EntryPoint,
    Fact,
    Fullgraph,
    HeldTensor,
    IsModule,
    OptionalKeys,
    ParamTensor,
    ReturnsCaptured,
    ReturnsTensor,
    ReturnsTensorAt,
    Target,
)
from torchlint.analysis.kind_vocabulary import CAPTURED, TENSOR, Kind
from torchlint.analysis.open_kinds import Held, is_kind_when
from torchlint.analysis.outline import FileOutline
from torchlint.analysis.regions import NESTED
from torchlint.project.index import Node, ProjectIndex

# A kind fact as the solve keys it: ("param", node, name), ("used", node, name) (the body, or
# code it hands the parameter to, uses it as a tensor), ("returns", node), ("captured", node),
# ("element", node, index), ("held", path, owner, attr, member).
Var = (
    tuple[Literal["param", "used"], Node, str]
    | tuple[Literal["returns", "captured"], Node]
    | tuple[Literal["element"], Node, int]
    | tuple[Literal["held"], str, str, str, str]
)


class Solution:
    """The solved facts of one project, answering any file's conditions."""

    def __init__(self, outlines: Iterable[FileOutline], display: Callable[[str], str] = str) -> None:
        self.index = ProjectIndex(outlines, display)
        self.index.solve()
        self.files = self.index.files
        self.compiled = self.index.compiled
        self.fullgraph = self.index.fullgraph
        self._resolved: dict[tuple[str, Target], tuple[Node, ...]] = {}
        kinds = _KindSolve(self)
        self.tensors = kinds.solve()
        # kind fact -> the fact it was implied by (None: it holds outright), for explaining one
        self.implied_by = kinds.implied_by
        self.breaks: set[Node] = set()
        self._solve_breaks()

    # -- answering conditions ----------------------------------------------------------

    def holds(self, path: str, condition: Condition) -> bool:
        """Whether ``condition``, as written in the file ``path``, holds in the project."""
        return condition.holds(lambda fact: self.fact(path, fact))

    def fact(self, path: str, fact: Fact) -> bool:
        # Dispatched on the exact type: each kind of fact is a class of its own.
        if type(fact) is Compiled:
            return any(node in self.compiled for node in self.nodes(path, fact.function))
        if type(fact) is EntryPoint:
            return any(node in self.index.entered for node in self.nodes(path, fact.function))
        if type(fact) is Fullgraph:
            nodes = self.nodes(path, fact.function)
            return bool(nodes) and all(node in self.fullgraph for node in nodes)
        if type(fact) is ParamTensor:
            return ("param", (path, fact.function), fact.param) in self.tensors
        if type(fact) is ReturnsTensor:
            return any(("returns", node) in self.tensors for node in self.nodes(path, fact.function))
        if type(fact) is ReturnsCaptured:
            return any(("captured", node) in self.tensors for node in self.nodes(path, fact.function))
        if type(fact) is ReturnsTensorAt:
            return any(("element", node, fact.index) in self.tensors for node in self.nodes(path, fact.function))
        if type(fact) is HeldTensor:
            return ("held", path, fact.owner, fact.attr, fact.member) in self.tensors
        if type(fact) is Breaks:
            return any(node in self.breaks for node in self.nodes(path, fact.function))
        if type(fact) is Disabled:
            return any(node in self.index.blocked for node in self.nodes(path, fact.function))
        if type(fact) is IsModule:
            key = self._class(path, fact.cls)
            return key is not None and self.index.module_reason(key) is not None
        if type(fact) is OptionalKeys:
            key = self._class(path, fact.cls)
            return key is not None and self.index.optional_keys(key)
        raise TypeError(f"unknown fact {fact!r}")

    def nodes(self, path: str, target: Target) -> tuple[Node, ...]:
        """The functions ``target``, as ``path`` spells it, may run."""
        key = (path, target)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = tuple(dict.fromkeys(node for node, _ in self.index.callees(path, target)))
        return found

    def _class(self, path: str, target: Target) -> tuple[str, str] | None:
        if isinstance(target, str):
            return (path, target) if target in self.files[path].classes else None
        return self.index.class_key(path, target.name, target.local)

    # -- breaks ------------------------------------------------------------------------

    def _solve_breaks(self) -> None:
        """Every function that meets a graph break when called: one of its own holds, or it
        calls one that does. Breaks only ever become true, so this ends."""
        callers: dict[Node, list[Node]] = {}
        for node in self.compiled:
            for callee, how in self.index.edges(node):
                if not how.startswith(NESTED):
                    callers.setdefault(callee, []).append(node)
        pending = [
            ((path, qualname), condition)
            for path, outline in self.files.items()
            for qualname, condition in outline.breaking.items()
        ]
        while True:
            found = [node for node, condition in pending if node not in self.breaks and self.holds(node[0], condition)]
            if not found:
                return
            queue = deque(found)
            while queue:
                node = queue.popleft()
                if node in self.breaks:
                    continue
                self.breaks.add(node)
                queue.extend(caller for caller in callers.get(node, ()) if caller not in self.breaks)
            pending = [(node, condition) for node, condition in pending if node not in self.breaks]


class _KindSolve:
    """Kind facts as implications of one fact by another: a search from what holds outright."""

    def __init__(self, solution: Solution) -> None:
        self.solution = solution
        self.index = solution.index
        # fact -> the facts it implies
        self.implies: dict[Var, list[Var]] = {}
        self.true: set[Var] = set()
        self.implied_by: dict[Var, Var | None] = {}

    def solve(self) -> set[Var]:
        for path, outline in self.solution.files.items():
            for qualname, kinds in outline.kinds.items():
                self._function((path, qualname), kinds)
            self._held(path, outline)
        found: set[Var] = set()
        queue: deque[tuple[Var, Var | None]] = deque((var, None) for var in self.true)
        while queue:
            var, parent = queue.popleft()
            if var in found:
                continue
            found.add(var)
            self.implied_by[var] = parent
            queue.extend((head, var) for head in self.implies.get(var, ()) if head not in found)
        return found

    def _when(self, path: str, held: Held, head: Var, kind: Kind = TENSOR) -> None:
        """``head`` holds where ``held`` is of ``kind``: outright, or where one of its facts does."""
        always, facts = is_kind_when(held, kind)
        if always:
            self.true.add(head)
            return
        for fact in facts:
            for var in self._vars(path, fact):
                self.implies.setdefault(var, []).append(head)

    def _vars(self, path: str, fact: Fact) -> list[Var]:
        """The solve's facts that make a kind fact of ``path`` hold (any one of them)."""
        if type(fact) is ParamTensor:
            return [("param", (path, fact.function), fact.param)]
        if type(fact) is ReturnsTensor:
            return [("returns", node) for node in self.solution.nodes(path, fact.function)]
        if type(fact) is ReturnsCaptured:
            return [("captured", node) for node in self.solution.nodes(path, fact.function)]
        if type(fact) is ReturnsTensorAt:
            return [("element", node, fact.index) for node in self.solution.nodes(path, fact.function)]
        if type(fact) is HeldTensor:
            return [("held", path, fact.owner, fact.attr, fact.member)]
        return []

    def _function(self, node: Node, kinds: FunctionKinds) -> None:
        path = node[0]
        self._when(path, kinds.returns, ("returns", node))
        self._when(path, kinds.returns, ("captured", node), CAPTURED)
        for position, element in enumerate(kinds.elements or ()):
            self._when(path, element, ("element", node, position))
        parameters = self.solution.files[path].parameters.get(node[1])
        for name in parameters.positional + tuple(parameters.open) if parameters is not None else ():
            # A parameter the body, or what it is handed to, uses as a tensor is one.
            self.implies.setdefault(("used", node, name), []).append(("param", node, name))
        for name in kinds.evidence:
            self.true.add(("used", node, name))
        # What a caller passes counts where Dynamo traces the call: in compiled code. (Measured
        # on the real-code benchmark, counting every caller gave tensors to parameters that
        # only eager code fills with them.)
        if node in self.solution.compiled:
            for call in kinds.calls:
                self._call(node, call)

    def _call(self, caller: Node, call: CallRecord) -> None:
        path = caller[0]
        for target in call.targets:
            for callee in self.solution.nodes(path, target):
                parameters = self.solution.files[callee[0]].parameters.get(callee[1])
                if parameters is None:
                    continue
                for slot, held in call.passed:
                    name = parameters.named(slot)
                    if name is not None:
                        self._when(path, held, ("param", callee, name))
                for slot, own in call.handed:
                    name = parameters.named(slot)
                    if name is not None:
                        self.implies.setdefault(("used", callee, name), []).append(("used", caller, own))

    def _held(self, path: str, outline: FileOutline) -> None:
        """`self.<attr>.<member>` of a class of ``path`` is a tensor where the project's
        constructions give `self.<attr>` an object whose class sets ``member`` to one."""
        for owner, attr_members in self.index.held_tensors(path).items():
            qualname, attr = owner
            for member in attr_members:
                self.true.add(("held", path, qualname, attr, member))
