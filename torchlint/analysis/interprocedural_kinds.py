"""The kinds that cross function boundaries within a file: what a function returns, and
what the file's calls pass to its parameters.

Both are worked out on demand, followed a few calls deep, and remembered; a cycle cuts
an answer short, and an answer a cut reached is not kept. Calls and returns a guard rules
out while compiling count for nothing, as they do for the checker and the region graph.
What other files tell comes in through ``Elsewhere``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.analysis.guards import GuardedFile, GuardEvaluator, RuledOut
from torchlint.analysis.kind_flow import KindEnv
from torchlint.analysis.kind_vocabulary import PYTHON, UNKNOWN, Kind, join_kinds
from torchlint.analysis.member_kinds import MemberKinds
from torchlint.analysis.regions import CallIndex
from torchlint.analysis.summary import ClassInfo, FileSummary, FunctionInfo

# How deep return kinds of project functions are followed.
_MAX_CALL_DEPTH = 3
# Nodes whose body is a scope of its own: not walked for the calls of the one around them.
_OWN_SCOPES = frozenset({cst.Lambda, cst.FunctionDef, cst.ClassDef})


class _Returns(NamedTuple):
    kind: Kind
    # per element, when every return is a tuple literal of one length
    elements: tuple[Kind, ...] | None = None


_UNKNOWN_RETURNS = _Returns(UNKNOWN)
# A call's argument kinds: the positional ones in order, the keyword ones by name.
_Arguments = tuple[list[Kind], dict[str, Kind]]


class Elsewhere(NamedTuple):
    """What code outside a function's own file tells its kinds."""

    # function -> {parameter: kind} that calls in other files pass
    parameters: Callable[[FunctionInfo], dict[str, Kind]] = lambda function: {}
    # (class, attribute) -> the tensor members of the objects `self.<attribute>` keeps
    held_tensors: Callable[[ClassInfo, str], frozenset[str]] = lambda owner, attribute: frozenset()
    # a call's function as the file spells it (`rms`, `misc.rms`) -> whether the function of
    # another file it names returns a tensor
    returns_tensor: Callable[[str], bool] = lambda spelled: False


class FileKinds:
    """Return and parameter kinds of the file's functions, worked out on demand and remembered."""

    def __init__(
        self,
        summary: FileSummary,
        scalars_captured: Callable[[FunctionInfo], bool] = lambda function: False,
        shapes_captured: Callable[[FunctionInfo], bool] = lambda function: False,
        elsewhere: Elsewhere = Elsewhere(),
        guarded: GuardedFile | None = None,
        index: CallIndex | None = None,
    ) -> None:
        """``scalars_captured``/``shapes_captured``: whether Dynamo captures `.item()` / data-dependent
        output shapes in a function (the compile profile, or `fullgraph=True`). ``guarded``: what
        the file's guards rule out while compiling, shared with the checker and the region graph
        (the built-in guards' answer when not given)."""
        self.summary = summary
        self.guarded = guarded if guarded is not None else GuardedFile(summary, GuardEvaluator())
        # The file's call resolver, the one regions and rules use.
        self.index = index if index is not None else CallIndex(summary)
        self.scalars_captured = scalars_captured
        self.shapes_captured = shapes_captured
        self.elsewhere = elsewhere
        self._returns: dict[FunctionInfo, _Returns] = {}
        self._in_progress: set[FunctionInfo] = set()
        # What `self.<attr>` holds in the file's classes.
        self.members = MemberKinds()
        self._call_sites: dict[FunctionInfo, list[tuple[FunctionInfo, cst.Call]]] | None = None
        # caller -> the ids of its calls that `call_sites` resolved
        self._resolved_calls: dict[FunctionInfo, set[int]] = {}
        self._arguments: dict[FunctionInfo, dict[int, _Arguments]] = {}
        self._parameters: dict[FunctionInfo, dict[str, Kind]] = {}
        self._binding: set[FunctionInfo] = set()
        # How often a cycle cut an answer short: answers worked out meanwhile are not kept.
        self._cuts = 0
        # How often the call depth limit cut an answer short. An answer worked out meanwhile is
        # kept with the depth it was asked at, and served only as deep or deeper: a question
        # from less deep, with more calls left to follow, works it out again.
        self._depth_cuts = 0
        self._cut_at: dict[tuple[str, FunctionInfo], int] = {}

    def env(self, function: FunctionInfo, depth: int = 0) -> KindEnv:
        return KindEnv(self, function, depth)

    def ruled_out(self, function: FunctionInfo) -> RuledOut:
        return self.guarded.ruled_out(function)

    def return_kind(self, function: FunctionInfo, depth: int) -> Kind:
        return self._returned(function, depth).kind

    def return_elements(self, function: FunctionInfo, depth: int) -> tuple[Kind, ...] | None:
        """The kind of each element when every return is a tuple of one length."""
        return self._returned(function, depth).elements

    def _kept(self, store: dict, kind: str, function: FunctionInfo, depth: int):
        """The answer kept for ``function``, unless a depth cut shaped it deeper than ``depth``."""
        if function not in store:
            return None
        cut_at = self._cut_at.get((kind, function))
        return store[function] if cut_at is None or depth >= cut_at else None

    def _keep(self, store: dict, kind: str, function: FunctionInfo, depth: int, answer, cuts: int, depth_cuts: int) -> None:
        if self._cuts != cuts:
            return
        store[function] = answer
        if self._depth_cuts != depth_cuts:
            self._cut_at[(kind, function)] = depth
        else:
            self._cut_at.pop((kind, function), None)

    def _depth_cut(self, depth: int) -> bool:
        if depth > _MAX_CALL_DEPTH:
            self._depth_cuts += 1
            return True
        return False

    def _returned(self, function: FunctionInfo, depth: int) -> _Returns:
        kept = self._kept(self._returns, "returns", function, depth)
        if kept is not None:
            return kept
        if self._depth_cut(depth):
            return _UNKNOWN_RETURNS
        if function in self._in_progress:
            self._cuts += 1
            return _UNKNOWN_RETURNS
        cuts, depth_cuts = self._cuts, self._depth_cuts
        self._in_progress.add(function)
        try:
            returned = _infer_returns(self.env(function, depth + 1))
        finally:
            self._in_progress.discard(function)
        self._keep(self._returns, "returns", function, depth, returned, cuts, depth_cuts)
        return returned

    # -- parameters from call sites ------------------------------------------------

    def parameter_kinds(self, function: FunctionInfo, depth: int) -> dict[str, Kind]:
        """What the file's calls of ``function`` pass to each parameter, joined over the calls.

        `self._attend(q, k, max_len)` with a tensor `max_len` makes that parameter a tensor
        even though it has no annotation.
        """
        kept = self._kept(self._parameters, "parameters", function, depth)
        if kept is not None:
            return kept
        sites = self.call_sites().get(function)
        if not sites:
            return {}
        if self._depth_cut(depth):
            return {}
        if function in self._binding:
            self._cuts += 1
            return {}
        cuts, depth_cuts = self._cuts, self._depth_cuts
        self._binding.add(function)
        try:
            passed: dict[str, list[Kind]] = {}
            for caller, call in sites:
                arguments = self._arguments_in(caller, depth).get(id(call))
                if arguments is None:
                    continue
                positional, keywords = arguments
                names = [param.name.value for param in function.positional]
                for name, kind in [*zip(names, positional), *keywords.items()]:
                    passed.setdefault(name, []).append(kind)
        finally:
            self._binding.discard(function)
        kinds = {name: join_kinds(found) for name, found in passed.items()}
        self._keep(self._parameters, "parameters", function, depth, kinds, cuts, depth_cuts)
        return kinds

    def call_sites(self) -> dict[FunctionInfo, list[tuple[FunctionInfo, cst.Call]]]:
        """Calls of the file's own functions: `helper(x)` and `self.method(x)`. A call the
        guards rule out is never made while compiling, so it passes nothing."""
        if self._call_sites is None:
            self._call_sites = {}
            for caller in self.summary.functions:
                ruled_out = self.ruled_out(caller).inside
                for call in caller.calls:
                    if id(call) in ruled_out:
                        continue
                    callee = self.callee(call, caller)
                    if callee is not None and not any(arg.star for arg in call.args):
                        self._call_sites.setdefault(callee, []).append((caller, call))
                        self._resolved_calls.setdefault(caller, set()).add(id(call))
        return self._call_sites

    def called_through_held(self, function: FunctionInfo) -> bool:
        """Whether a call here runs ``function`` on an object a module keeps."""
        return any(
            isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Attribute)
            for _, call in self.call_sites().get(function, ())
        )

    def callee(self, call: cst.Call, caller: FunctionInfo) -> FunctionInfo | None:
        """The function of this file ``call`` runs, as the region graph resolves it (nested
        and module functions, methods through the file's bases, objects a module keeps,
        an instance's forward); None for a class called, whose value is the new object
        rather than what `__init__` returns, and for code of other files."""
        if self.index.local_class(call.func, caller.scope) is not None:
            return None
        for target, _ in self.index.callees(call.func, caller):
            if isinstance(target, FunctionInfo):
                return target
        return None

    def _arguments_in(self, caller: FunctionInfo, depth: int) -> dict[int, _Arguments]:
        """The kinds of the arguments of each call in ``caller`` that runs a function of this file."""
        kept = self._kept(self._arguments, "arguments", caller, depth)
        if kept is not None:
            return kept
        if self._depth_cut(depth):
            return {}
        if caller in self._in_progress:
            self._cuts += 1
            return {}
        cuts, depth_cuts = self._cuts, self._depth_cuts
        self.call_sites()
        wanted = self._resolved_calls.get(caller, set())
        found: dict[int, _Arguments] = {}
        if wanted:
            env = self.env(caller, depth + 1)

            def visit(node: cst.CSTNode) -> bool | None:
                kind = type(node)  # exact: libcst's classes are final, and far cheaper than an ABC check
                if kind is cst.Call and id(node) in wanted:
                    found[id(node)] = (
                        [env.kind_of(arg.value) for arg in node.args if arg.keyword is None],
                        {arg.keyword.value: env.kind_of(arg.value) for arg in node.args if arg.keyword is not None},
                    )
                return kind in _OWN_SCOPES or None

            self._in_progress.add(caller)
            try:
                env.run(lambda node: walk(node, visit))
            finally:
                self._in_progress.discard(caller)
        self._keep(self._arguments, "arguments", caller, depth, found, cuts, depth_cuts)
        return found



def _infer_returns(env: KindEnv) -> _Returns:
    """What the function returns: its statements run in order, its returns joined."""
    kinds: list[Kind] = []
    tuples: list[list[Kind]] = []

    def record(node: cst.CSTNode) -> None:
        if not isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return
        for small in node.body:
            if not isinstance(small, cst.Return):
                continue
            value = small.value
            kinds.append(PYTHON if value is None else env.kind_of(value))
            if isinstance(value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                tuples.append([env.kind_of(e.value) for e in value.elements])

    env.run(record)
    if not kinds:
        return _Returns(PYTHON)
    elements = None
    if len(tuples) == len(kinds) and len({len(t) for t in tuples}) == 1:
        elements = tuple(join_kinds(column) for column in zip(*tuples))
    return _Returns(join_kinds(kinds), elements)
