"""The kinds of a function's names as its statements run: assignments, unpacking,
augmented assignment and `for` targets bind them, and after an `if` a name holds what
any branch that goes on may have left in it.

The walk follows the code Dynamo traces: what an `is_compiling()` guard rules out is
skipped, as the checker skips it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.parse.cst_walk import conjuncts
from torchlint.analysis.expression_kinds import ExpressionKinds
from torchlint.analysis.kind_vocabulary import (
    MODULE,
    PYTHON,
    SIZE,
    TENSOR,
    UNKNOWN,
    Kind,
    annotation_kind,
    arithmetic_kind,
    isinstance_kind,
    join_kinds,
)
from torchlint.analysis.parameter_binding import bind_parameters
from torchlint.analysis.scopes import qualified_name
from torchlint.analysis.shape_facts import ShapeFacts
from torchlint.analysis.statement_flow import FlowEvents, walk_function
from torchlint.analysis.summary import FunctionInfo
from torchlint.analysis.undo_journal import ABSENT, Journal, JournaledDict

if TYPE_CHECKING:
    from torchlint.analysis.interprocedural_kinds import FileKinds


class KindEnv(ExpressionKinds, ShapeFacts):
    """The kinds of one function's local names, as its statements run in order."""

    def __init__(self, file_kinds: FileKinds, function: FunctionInfo, depth: int = 0) -> None:
        self.file_kinds = file_kinds
        self.function = function
        self.scope = function.scope
        self.depth = depth
        method = function.method
        self.owner = method.owner_class if method is not None else None
        self.journal = Journal()
        self.names: dict[str, Kind] = JournaledDict(self.journal)
        self.start_shape_facts(self.journal)
        self.scalars_captured = file_kinds.scalars_captured(function)
        self.shapes_captured = file_kinds.shapes_captured(function)
        # What Dynamo never traces here: `run` skips it, and no value comes from it.
        self.ruled_out = file_kinds.ruled_out(function)
        parameters = bind_parameters(function, self.owner, file_kinds, depth)
        self.self_name = parameters.self_name
        self.names.update(parameters.kinds)

    # -- statements ---------------------------------------------------------------

    def after_statement(self, statement: cst.CSTNode) -> None:
        """Record what a simple statement binds."""
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                self._small_statement(small)

    def _small_statement(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.bind(target.target, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, small.value)
            elif isinstance(small.target, cst.Name):
                self.names[small.target.value] = annotation_kind(small.annotation.annotation, self.scope)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            name = small.target.value
            self.names[name] = arithmetic_kind([self.names.get(name, UNKNOWN), self.kind_of(small.value)])
            self.forget_shape_facts(name)
        elif isinstance(small, cst.Del):
            for name in _names_in(small.target):
                self.names.pop(name.value, None)

    def bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.names[target.value] = self.kind_of(value)
            self.record_shape_facts(target.value, value)
            return
        if not isinstance(target, (cst.Tuple, cst.List)):
            return
        elements = [element.value for element in target.elements]
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements) and not any(
            isinstance(e, cst.StarredElement) for e in value.elements
        ):
            for element, element_value in zip(elements, value.elements):
                self.bind(element, element_value.value)
            return
        returned = self._returned_elements(value)
        if returned is not None and len(returned) == len(elements):
            # `count, index = self._global_indices(mask)` where the helper returns a tuple
            for element, kind in zip(elements, returned):
                for name in _names_in(element):
                    self.names[name.value] = kind if isinstance(element, cst.Name) else UNKNOWN
                    self.forget_shape_facts(name.value)
            return
        kind = self.kind_of(value)
        # Unpacking a tensor (`chunk`, `topk`) gives tensors; unpacking a shape gives sizes. A
        # module's tuple leads with a tensor, but what follows may be sizes
        # (`hidden, height, width = embed(x)`), so only the first is taken for one.
        each = kind if kind in (TENSOR, SIZE) else UNKNOWN
        module_output = isinstance(value, cst.Call) and self.kind_of(value.func) is MODULE
        for position, element in enumerate(elements):
            for name in _names_in(element):
                self.names[name.value] = UNKNOWN if module_output and position > 0 else each
                self.forget_shape_facts(name.value)

    def _returned_elements(self, value: cst.BaseExpression) -> tuple[Kind, ...] | None:
        if not isinstance(value, cst.Call):
            return None
        callee = self.file_kinds.callee(value, self.function)
        return self.file_kinds.return_elements(callee, self.depth) if callee is not None else None

    def enter_for(self, statement: cst.For) -> None:
        self.bind_iteration(statement.target, statement.iter)

    def bind_iteration(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        for name, kind in self._iteration_kinds(target, iterable):
            self.names[name] = kind
            self.forget_shape_facts(name)
        self.record_iteration(target, iterable)

    def _iteration_kinds(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> Iterator[tuple[str, Kind]]:
        call_name = qualified_name(iterable.func, self.scope) if isinstance(iterable, cst.Call) else None
        if call_name == "builtins.range":
            for name in _names_in(target):
                yield name.value, PYTHON
            return
        if call_name in ("builtins.enumerate", "builtins.zip") and isinstance(target, (cst.Tuple, cst.List)):
            sources = [arg.value for arg in iterable.args]
            if call_name == "builtins.enumerate" and sources:
                sources = [None, sources[0]]  # the counter, then the items
            if len(sources) == len(target.elements):
                for element, source in zip(target.elements, sources):
                    if source is None:
                        yield from ((n.value, PYTHON) for n in _names_in(element.value))
                    else:
                        yield from self._iteration_kinds(element.value, source)
                return
        kind = self.kind_of(iterable)
        each = {TENSOR: TENSOR, MODULE: MODULE, SIZE: SIZE}.get(kind, UNKNOWN)
        for name in _names_in(target):
            yield name.value, each

    # -- the walk -----------------------------------------------------------------

    def run(self, visit: Callable[[cst.CSTNode], object]) -> None:
        """Run through the body as Dynamo traces it (`statement_flow`), calling ``visit`` on
        each group of simple statements and each expression a compound statement evaluates
        itself, before what they bind is recorded."""
        walk_function(self, _Visiting(visit))

    # -- branches -----------------------------------------------------------------

    def branches(self) -> Branches:
        return Branches(self)

    def narrow(self, test: cst.BaseExpression) -> dict[str, Kind]:
        """Inside `if isinstance(x, numbers.Number):` (or one of an `and`), `x` is what the
        test says: the names narrowed, with their kinds there. Inside `if m.dtype == torch.bool:`,
        `m` is a boolean mask."""
        narrowed: dict[str, Kind] = {}
        for condition in conjuncts(test):
            masked = self._tested_boolean(condition)
            if masked is not None:
                narrowed[masked] = TENSOR
                self.masks.add(masked)
                continue
            if not (
                isinstance(condition, cst.Call)
                and len(condition.args) == 2
                and isinstance(condition.args[0].value, cst.Name)
                and qualified_name(condition.func, self.scope) == "builtins.isinstance"
            ):
                continue
            kind = isinstance_kind(condition.args[1].value, self.scope)
            if kind is not UNKNOWN:
                narrowed[condition.args[0].value.value] = kind
        for name, kind in narrowed.items():
            self.names[name] = kind
        return narrowed

    def _tested_boolean(self, condition: cst.BaseExpression) -> str | None:
        """The name `m` of a test `m.dtype == torch.bool` (or `is`)."""
        if not (isinstance(condition, cst.Comparison) and len(condition.comparisons) == 1):
            return None
        target = condition.comparisons[0]
        left = condition.left
        if (
            isinstance(target.operator, (cst.Equal, cst.Is))
            and isinstance(left, cst.Attribute)
            and left.attr.value == "dtype"
            and isinstance(left.value, cst.Name)
            and qualified_name(target.comparator, self.scope) == "torch.bool"
        ):
            return left.value.value
        return None

    def merge(self, outcomes: list[dict[tuple[int, str], object]]) -> None:
        """Join what the branches that go on left (``outcomes``: each one's changes, over
        the kinds before the `if`, which are in place). A name no branch changed keeps
        its kind, so only the changed ones are joined."""
        for name in {name for outcome in outcomes for _, name in outcome}:

            def left(container, name: str = name) -> list:
                before = container.held(name)
                return [outcome.get((container.tag, name), before) for outcome in outcomes]

            kinds = left(self.names)
            bound = [kind is not ABSENT for kind in kinds]
            joined = [kind for kind in kinds if kind is not ABSENT]
            if joined:
                self.names[name] = join_kinds(joined)
            else:
                self.names.pop(name, None)
            self.join_shape_facts(name, left, bound)


class _Visiting(FlowEvents):
    def __init__(self, visit: Callable[[cst.CSTNode], object]) -> None:
        self.visit = visit

    def simple(self, statements: cst.CSTNode) -> None:
        self.visit(statements)

    def header(self, expression: cst.CSTNode) -> None:
        self.visit(expression)


class Branches:
    """Kinds across an `if`: each branch starts from the kinds before it, and afterwards a
    name holds what any branch that goes on may have left in it.

    Each branch's changes are read from the environment's journal and undone, so an `if`
    costs what its branches change, not what the function holds."""

    def __init__(self, env: KindEnv) -> None:
        self.env = env
        self.mark = env.journal.mark()
        # What each branch that goes on changed: (container, name) -> the value it left.
        self.outcomes: list[dict[tuple[int, str], object]] = []
        # What the test of the branch now walked says of names (`isinstance`): no change of
        # the branch's own unless it binds them again.
        self.narrowed: dict[tuple[int, str], Kind] = {}

    def narrow(self, test: cst.BaseExpression) -> None:
        tag = self.env.names.tag
        self.narrowed = {(tag, name): kind for name, kind in self.env.narrow(test).items()}

    def branch_done(self, exits: bool) -> None:
        if not exits:
            changes = self.env.journal.changes_since(self.mark)
            for key, kind in self.narrowed.items():
                if changes.get(key) is kind:
                    del changes[key]
            self.outcomes.append(changes)
        self.narrowed = {}
        self.env.journal.undo_to(self.mark)

    def falls_through(self) -> None:
        self.outcomes.append({})

    def close(self) -> None:
        if self.outcomes:
            self.env.merge(self.outcomes)


def _names_in(target: cst.BaseExpression) -> Iterator[cst.Name]:
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names_in(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names_in(target.value)
