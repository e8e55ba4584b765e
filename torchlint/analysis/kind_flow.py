"""The kinds of a function's names as its statements run: assignments, unpacking,
augmented assignment and `for` targets bind them, and after an `if` a name holds what
any branch that goes on may have left in it.

The walk follows the code Dynamo traces: what an `is_compiling()` guard rules out is
skipped, as the checker skips it. A name may hold an open kind (`open_kinds`): each
statement that reads one binds in both worlds, and what it binds is open on what it read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

from torchlint.parse.cst_walk import conjuncts
from torchlint.analysis.conditions import Fact, ReturnsTensorAt
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
    is_container_annotation,
    isinstance_kind,
)
from torchlint.analysis.open_kinds import EVERY, Held, World, deciding, join_held, opened
from torchlint.analysis.parameter_binding import bind_parameters
from torchlint.analysis.scopes import qualified_name
from torchlint.analysis.shape_facts import ShapeFacts
from torchlint.analysis.statement_flow import FlowEvents, walk_function
from torchlint.analysis.summary import FunctionInfo
from torchlint.analysis.undo_journal import ABSENT, Absent, Changes, Journal, JournaledDict

if TYPE_CHECKING:
    from torchlint.analysis.file_kinds import FileKinds

_T = TypeVar("_T")


class KindEnv(ExpressionKinds, ShapeFacts):
    """The kinds of one function's local names, as its statements run in order."""

    def __init__(self, file_kinds: FileKinds, function: FunctionInfo) -> None:
        self.file_kinds = file_kinds
        self.function = function
        self.scope = function.scope
        method = function.method
        self.owner = method.owner_class if method is not None else None
        self.journal = Journal()
        self.names: JournaledDict[Held] = JournaledDict(self.journal)
        self.start_shape_facts(self.journal)
        self.scalars_captured = file_kinds.scalars_captured(function)
        self.shapes_captured = file_kinds.shapes_captured(function)
        # What Dynamo never traces here: `run` skips it, and no value comes from it.
        self.ruled_out = file_kinds.ruled_out(function)
        # Which world open kinds are read in, and what was read.
        self.world = World()
        # While a statement binds in one world: name -> what it bound there (ABSENT: unbound).
        self._bound: dict[str, Kind | Absent] | None = None
        parameters = bind_parameters(function, self.owner, file_kinds.summary)
        self.self_name = parameters.self_name
        self.evidence = parameters.evidence
        self.names.update(parameters.kinds)
        # The parameters whose names still hold what the caller passed: a call that hands one
        # on hands the caller's value.
        self.pristine = {name for name in parameters.kinds if name != self.self_name}
        # What the function returns, as each `return` reached leaves it.
        self.returned: list[Held] = []
        self.returned_tuples: list[list[Held]] | None = []

    # -- the two worlds --------------------------------------------------------------

    def held_kind(self, name: str) -> Kind | None:
        """The kind ``name`` holds in the current world; None when it holds nothing yet."""
        held = self.names.get(name)
        return None if held is None else self.world.resolve(held)

    def lifted(self, evaluate: Callable[[], Kind]) -> Held:
        """The value of ``evaluate`` as both worlds see it: open on the facts that decide it
        where they differ."""
        world = self.world
        outer_holding, outer = world.holding, world.start(None)
        try:
            base = evaluate()
            read = world.read
            if not read:
                return base
            world.start(EVERY)
            up = evaluate()
            facts = read | world.read
            if up is base:
                return base

            def differs(holding: frozenset[Fact]) -> bool:
                world.start(holding)
                return evaluate() is up

            return opened(base, up, deciding(facts, differs))
        finally:
            world.holding = outer_holding
            world.read = outer | world.read

    def _bind_in_both_worlds(self, bind: Callable[[], None]) -> None:
        """Run a statement's binding in the base world, then, where it read an open kind, in
        the up world; then bind each name to what the two worlds gave it, open on the facts
        that decide it."""
        world = self.world
        outer = world.start(None)
        self._bound = {}
        try:
            bind()
            base_bound, read = self._bound, world.read
            if not read:
                self._commit(base_bound)
                return
            self._shapes_frozen = True
            world.start(EVERY)
            self._bound = {}
            bind()
            up_bound, facts = self._bound, read | world.read
            merged: dict[str, Held | Absent] = {}
            for name in base_bound.keys() | up_bound.keys():
                base = base_bound.get(name, ABSENT)
                up = up_bound.get(name, ABSENT)
                if base is ABSENT or up is ABSENT or base is up:
                    merged[name] = base if up is ABSENT else up
                    continue

                def differs(holding: frozenset[Fact], name: str = name, up: Kind | Absent = up) -> bool:
                    world.start(holding)
                    self._bound = {}
                    bind()
                    return self._bound.get(name, ABSENT) is up

                merged[name] = opened(base, up, deciding(facts, differs))
        finally:
            self._bound = None
            self._shapes_frozen = False
            world.holding = None
            world.read = outer
        self._commit(merged)

    def _commit(self, bound: Mapping[str, Held | Absent]) -> None:
        for name, value in bound.items():
            if value is ABSENT:
                self.names.pop(name, None)
            else:
                self.names[name] = value
            self.pristine.discard(name)

    def _set(self, name: str, kind: Kind) -> None:
        if self._bound is not None:
            self._bound[name] = kind
        else:
            self.names[name] = kind
            self.pristine.discard(name)

    def _unset(self, name: str) -> None:
        if self._bound is not None:
            self._bound[name] = ABSENT
        else:
            self.names.pop(name, None)
            self.pristine.discard(name)

    # -- statements ---------------------------------------------------------------

    def after_statement(self, statement: cst.CSTNode) -> None:
        """Record what a simple statement binds, and what a `return` gives."""
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                if isinstance(small, cst.Return):
                    self._record_return(small.value)
                else:
                    self._bind_in_both_worlds(partial(self._small_statement, small))

    def _record_return(self, value: cst.BaseExpression | None) -> None:
        self.returned.append(PYTHON if value is None else self.lifted(lambda: self.kind_of(value)))
        if self.returned_tuples is None:
            return
        if isinstance(value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            elements = value.elements
            self.returned_tuples.append([self.lifted(partial(self.kind_of, e.value)) for e in elements])
        else:
            self.returned_tuples = None  # not every return is a tuple literal

    def return_kind(self) -> Held:
        """What the function returns: its returns reached, joined (None when none is). A return
        annotation that names a tensor, or a container, says so outright."""
        returns = self.function.node.returns
        if returns is not None:
            annotated = annotation_kind(returns.annotation, self.function.enclosing)
            if annotated is TENSOR or is_container_annotation(returns.annotation, self.function.enclosing):
                return annotated
        return join_held(self.returned) if self.returned else PYTHON

    def return_elements(self) -> tuple[Held, ...] | None:
        """The kind of each element when every return is a tuple literal of one length."""
        tuples = self.returned_tuples
        if not tuples or len({len(t) for t in tuples}) != 1:
            return None
        return tuple(join_held(column) for column in zip(*tuples))

    def _small_statement(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.bind(target.target, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, small.value)
            elif isinstance(small.target, cst.Name):
                self._set(small.target.value, annotation_kind(small.annotation.annotation, self.scope))
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            name = small.target.value
            before = self.held_kind(name)
            self._set(name, arithmetic_kind([before if before is not None else UNKNOWN, self.kind_of(small.value)]))
            self.forget_shape_facts(name)
        elif isinstance(small, cst.Del):
            for deleted in _names_in(small.target):
                self._unset(deleted.value)

    def bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self._set(target.value, self.kind_of(value))
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
        returned = self._returned_elements(value, len(elements))
        if returned is not None:
            # `count, index = self._global_indices(mask)` where the helper returns a tuple
            for element, kind in zip(elements, returned):
                for name in _names_in(element):
                    self._set(name.value, kind if isinstance(element, cst.Name) else UNKNOWN)
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
                self._set(name.value, UNKNOWN if module_output and position > 0 else each)
                self.forget_shape_facts(name.value)

    def _returned_elements(self, value: cst.BaseExpression, count: int) -> list[Kind] | None:
        """`a, b = helper(x)`: each element's kind, where the project's functions return tuples."""
        if not isinstance(value, cst.Call) or self.kind_of(value) is TENSOR:
            return None
        targets = self.file_kinds.returning_targets(value, self.function)
        if not targets:
            return None
        world = self.world
        return [
            TENSOR if any(world.fact(ReturnsTensorAt(target, index), TENSOR, UNKNOWN) is TENSOR for target in targets)
            else UNKNOWN
            for index in range(count)
        ]

    def enter_for(self, statement: cst.For) -> None:
        self.bind_iteration(statement.target, statement.iter)

    def bind_iteration(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        def bind() -> None:
            for name, kind in self._iteration_kinds(target, iterable):
                self._set(name, kind)
                self.forget_shape_facts(name)
            self.record_iteration(target, iterable)

        self._bind_in_both_worlds(bind)

    def _iteration_kinds(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> Iterator[tuple[str, Kind]]:
        call_name = qualified_name(iterable.func, self.scope) if isinstance(iterable, cst.Call) else None
        if call_name == "builtins.range":
            for name in _names_in(target):
                yield name.value, PYTHON
            return
        if (
            call_name in ("builtins.enumerate", "builtins.zip")
            and isinstance(iterable, cst.Call)
            and isinstance(target, (cst.Tuple, cst.List))
        ):
            sources: list[cst.BaseExpression | None] = [arg.value for arg in iterable.args]
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
            self.pristine.discard(name)
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

    def merge(self, outcomes: list[Changes]) -> None:
        """Join what the branches that go on left (``outcomes``: each one's changes, over
        the kinds before the `if`, which are in place). A name no branch changed keeps
        its kind, so only the changed ones are joined."""
        for name in {name for outcome in outcomes for _, name in outcome}:
            kinds = self.names.left_by(outcomes, name)
            bound = [kind is not ABSENT for kind in kinds]
            joined = [kind for kind in kinds if kind is not ABSENT]
            if joined:
                self.names[name] = join_held(joined)
            else:
                self.names.pop(name, None)
            self.join_shape_facts(name, outcomes, bound)


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
        self.outcomes: list[Changes] = []
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
