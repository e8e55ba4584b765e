"""What one file's kind inference shares between its functions: the file's call resolver,
what its guards rule out, what its classes' attributes hold, and whether Dynamo captures
scalars and data-dependent shapes in a function.

Kinds do not cross a function's borders here: a parameter holds what the project's callers
pass, and a call gives what its callee returns, as open kinds (`open_kinds`) the project's
solve decides. So each function is walked once, in any order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.conditions import Target
from torchlint.analysis.guards import GuardedFile, GuardEvaluator, RuledOut
from torchlint.analysis.member_kinds import MemberKinds
from torchlint.analysis.regions import CONSTRUCT, CallIndex, Ref
from torchlint.analysis.summary import FileSummary, FunctionInfo

if TYPE_CHECKING:
    from torchlint.analysis.kind_flow import KindEnv

# Refs whose call runs no function that returns the value (a class built).
_NOT_RETURNING = frozenset({CONSTRUCT})


class FileKinds:
    def __init__(
        self,
        summary: FileSummary,
        scalars_captured: Callable[[FunctionInfo], bool] = lambda function: False,
        shapes_captured: Callable[[FunctionInfo], bool] = lambda function: False,
        guarded: GuardedFile | None = None,
        index: CallIndex | None = None,
    ) -> None:
        """``scalars_captured``/``shapes_captured``: whether Dynamo captures `.item()` / data-dependent
        output shapes in a function (the compile profile). ``guarded``: what the file's guards rule
        out while compiling, shared with the checker and the region graph (the built-in guards'
        answer when not given)."""
        self.summary = summary
        self.guarded = guarded if guarded is not None else GuardedFile(summary, GuardEvaluator())
        # The file's call resolver, the one regions and rules use.
        self.index = index if index is not None else CallIndex(summary)
        self.scalars_captured = scalars_captured
        self.shapes_captured = shapes_captured
        # What `self.<attr>` holds in the file's classes.
        self.members = MemberKinds()
        self._targets: dict[tuple[int, int], tuple[Target, ...]] = {}

    def env(self, function: FunctionInfo) -> KindEnv:
        from torchlint.analysis.kind_flow import KindEnv

        return KindEnv(self, function)

    def ruled_out(self, function: FunctionInfo) -> RuledOut:
        return self.guarded.ruled_out(function)

    def returning_targets(self, call: cst.Call, caller: FunctionInfo) -> tuple[Target, ...]:
        """The functions whose return ``call`` gives, as the region graph resolves them: this
        file's by qualified name, the others' as Refs. None for a class built, whose value is the
        new object rather than what `__init__` returns."""
        key = (id(call), id(caller))
        found = self._targets.get(key)
        if found is None:
            if self.index.local_class(call.func, caller.scope) is not None:
                found = ()
            else:
                found = tuple(
                    target.qualname if isinstance(target, FunctionInfo) else target
                    for target, _ in self.index.callees(call.func, caller)
                    if not (isinstance(target, Ref) and target.kind in _NOT_RETURNING)
                )
            self._targets[key] = found
        return found
