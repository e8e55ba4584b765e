"""`is_compiling()` guards: code Dynamo does not trace because of them.

A test is evaluated as Dynamo sees it while compiling: the guard calls are True, `not`,
`and` and `or` combine as usual, anything else is unknown. The branch such a test rules
out is never traced, and neither is the rest of a block after a branch that always
returns while compiling (`if is_compiling(): return x`).

`GuardedFile` works out once per function what that leaves out; the checker skips it, and
the compiled-region graph follows no call made there, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.parse.cst_walk import compound_headers, walk
from torchlint.analysis.scopes import Scope, assigned_value, qualified_name

if TYPE_CHECKING:
    from torchlint.analysis.summary import FileSummary, FunctionInfo

GUARD_FUNCTIONS = frozenset(
    {
        "torch.compiler.is_compiling",
        "torch.compiler.is_dynamo_compiling",
        "torch._dynamo.is_compiling",
        "torch._dynamo.external_utils.is_compiling",
        "torch._utils.is_compiling",
    }
)
# Tests that are False while Dynamo traces: it is neither TorchScript nor the JIT tracer.
FALSE_WHILE_COMPILING = frozenset({"torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state"})
_FALSE_LAST_PARTS = frozenset(name.rpartition(".")[2] for name in FALSE_WHILE_COMPILING)
# Helpers other libraries export under these names (transformers, accelerate, kornia, ...).
GUARD_NAMES = frozenset({"is_torchdynamo_compiling", "is_dynamo_compiling", "is_compiling"})


# What a name holding a guard's value may have been assigned from (names are followed by
# `assigned_value` itself, which bounds alias chains).
_GUARD_SHAPES = (cst.Call, cst.BooleanOperation, cst.UnaryOperation)
_MAX_DEPTH = 16


class GuardEvaluator:
    def __init__(self, extra_guards: tuple[str, ...] = ()) -> None:
        self.qualified = GUARD_FUNCTIONS | {g for g in extra_guards if "." in g}
        self.bare = GUARD_NAMES | {g for g in extra_guards if "." not in g}
        # What a guard's name ends in: `x.view()` is told apart without resolving `x`.
        self.last_parts = self.bare | {g.rpartition(".")[2] for g in self.qualified}

    def is_guard_call(self, node: cst.BaseExpression, scope: Scope) -> bool:
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute) and node.func.attr.value not in self.last_parts:
            return False
        name = qualified_name(node.func, scope)
        if name is None:
            return False
        return name in self.qualified or name.rsplit(".", 1)[-1] in self.bare

    def is_false_while_compiling(self, node: cst.BaseExpression, scope: Scope) -> bool:
        """`torch.jit.is_scripting()` and the like."""
        return (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _FALSE_LAST_PARTS
            and qualified_name(node.func, scope) in FALSE_WHILE_COMPILING
        )

    def decides(self, node: cst.BaseExpression, scope: Scope) -> bool:
        """A call whose value while compiling is known: a guard, or one of the tests above."""
        return self.is_guard_call(node, scope) or self.is_false_while_compiling(node, scope)

    def when_compiling(self, test: cst.BaseExpression, scope: Scope, _depth: int = 0) -> bool | None:
        """The value of ``test`` while Dynamo traces, where the guards decide it."""
        if _depth > _MAX_DEPTH:
            return None  # `flag = flag or other`: give up rather than chase the name
        if self.is_guard_call(test, scope):
            return True
        if self.is_false_while_compiling(test, scope):
            return False
        if isinstance(test, cst.Name):
            # `is_tracing = torch.jit.is_tracing() or is_torchdynamo_compiling()`
            value = assigned_value(test, scope)
            return self.when_compiling(value, scope, _depth + 1) if isinstance(value, _GUARD_SHAPES) else None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.when_compiling(test.expression, scope, _depth + 1)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left = self.when_compiling(test.left, scope, _depth + 1)
            right = self.when_compiling(test.right, scope, _depth + 1)
            if isinstance(test.operator, cst.And):
                if left is False or right is False:
                    return False
                return True if left and right else None
            if left is True or right is True:
                return True
            return False if left is False and right is False else None
        return None

    def short_circuits(self, node: cst.BooleanOperation, scope: Scope) -> bool:
        """`not is_compiling() and x` while compiling: Python never evaluates `x`."""
        return self.when_compiling(node.left, scope) is isinstance(node.operator, cst.Or)


def always_exits(body: cst.BaseSuite) -> bool:
    """Whether a block ends in `return` or `raise` on every path through its last statement."""
    statements: Sequence[cst.BaseStatement | cst.BaseSuite]
    if isinstance(body, cst.IndentedBlock):
        statements = body.body
    else:
        statements = [body]
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    if isinstance(last, cst.SimpleStatementSuite):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    if isinstance(last, cst.If) and last.orelse is not None:
        orelse = last.orelse
        other = orelse.body if isinstance(orelse, cst.Else) else None
        if isinstance(orelse, cst.If):
            return always_exits(last.body) and always_exits(cst.IndentedBlock(body=[orelse]))
        return always_exits(last.body) and other is not None and always_exits(other)
    return False


@dataclass(frozen=True)
class RuledOut:
    """What of one function Dynamo never traces while compiling."""

    # ids of the outermost parts left out: an `if`'s block or its `else`/`elif`, the
    # statements of a block after a branch that always exits, the operand that `and`, `or`
    # or `x if c else y` never evaluates.
    parts: frozenset[int] = frozenset()
    # ids of the calls, defs and lambdas inside those parts
    inside: frozenset[int] = frozenset()
    # id of an `if` -> its test's value while compiling, where the guards decide it
    verdicts: Mapping[int, bool] = field(default_factory=dict)

    def __contains__(self, node: cst.CSTNode) -> bool:
        return id(node) in self.parts

    def verdict(self, statement: cst.If) -> bool | None:
        return self.verdicts.get(id(statement))


NOTHING_RULED_OUT = RuledOut()


class GuardedFile:
    """What the guards rule out in each function of one file, worked out on first use."""

    def __init__(self, summary: FileSummary, guards: GuardEvaluator) -> None:
        self.summary = summary
        self.guards = guards
        self._found: dict[FunctionInfo, RuledOut] = {}
        self._has_guards: bool | None = None

    def ruled_out(self, function: FunctionInfo) -> RuledOut:
        if self._has_guards is None:
            # Most files call no guard at all: they are spared a walk of each function.
            self._has_guards = any(self.guards.decides(call, scope) for call, scope, _ in self.summary.calls)
        if not self._has_guards:
            return NOTHING_RULED_OUT
        found = self._found.get(function)
        if found is None:
            walker = _Walker(self.guards, function.scope, self.summary.lambdas)
            walker.suite(function.node.body)
            found = self._found[function] = walker.result()
        return found


class _Walker:
    """Goes through a function body as the checker does, keeping what the guards leave out."""

    def __init__(self, guards: GuardEvaluator, scope: Scope, own_lambdas: Container[int]) -> None:
        self.guards = guards
        self.scope = scope
        # Lambdas that are functions of their own: their code is ruled out in their own walk.
        self.own_lambdas = own_lambdas
        self.parts: list[cst.CSTNode] = []
        self.verdicts: dict[int, bool] = {}

    def result(self) -> RuledOut:
        if not self.parts and not self.verdicts:
            return NOTHING_RULED_OUT
        return RuledOut(frozenset(map(id, self.parts)), _inside(self.parts), self.verdicts)

    def suite(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self.expression(small)
            return
        for position, statement in enumerate(suite.body):
            if not self.statement(statement):
                self.parts.extend(suite.body[position + 1 :])
                return

    def statement(self, statement: cst.CSTNode) -> bool:
        """False when Dynamo never traces the statements after this one."""
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.expression(small)
            return True
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return True  # a function of its own
        if isinstance(statement, cst.If):
            return self.if_(statement)
        for header in _headers(statement):
            self.expression(header)
        for block in _blocks(statement):
            self.suite(block)
        return True

    def if_(self, statement: cst.If) -> bool:
        self.expression(statement.test)
        verdict = self.guards.when_compiling(statement.test, self.scope)
        if verdict is not None:
            self.verdicts[id(statement)] = verdict
        body, orelse = statement.body, statement.orelse
        if verdict is False:
            self.parts.append(body)
        else:
            self.suite(body)
        if orelse is not None:
            if verdict is True:
                self.parts.append(orelse)
            elif isinstance(orelse, cst.If):
                # What follows is cut off only if the branch before the `elif` cannot reach it either.
                if not self.if_(orelse) and (verdict is False or always_exits(body)):
                    return False
            else:
                self.suite(orelse.body)
        if verdict is True and always_exits(body):
            return False
        if verdict is False and isinstance(orelse, cst.Else) and always_exits(orelse.body):
            return False
        return True

    def expression(self, root: cst.CSTNode) -> None:
        # Exact types: libcst's classes are final, and far cheaper to compare than an ABC check.
        def visit(node: cst.CSTNode) -> bool | None:
            if type(node) is cst.Lambda and id(node) in self.own_lambdas:
                return True
            if type(node) is cst.BooleanOperation and self.guards.short_circuits(node, self.scope):
                self.parts.append(node.right)
                self.expression(node.left)
                return True
            if type(node) is cst.IfExp:
                verdict = self.guards.when_compiling(node.test, self.scope)
                if verdict is not None:
                    self.parts.append(node.orelse if verdict else node.body)
                    self.expression(node.test)
                    self.expression(node.body if verdict else node.orelse)
                    return True
            return None

        walk(root, visit)


def _headers(statement: cst.CSTNode) -> list[cst.CSTNode]:
    """The expressions a compound statement evaluates outside its blocks, as the checker reads them."""
    headers = compound_headers(statement)
    return headers or [handler.type for handler in getattr(statement, "handlers", ()) if handler.type is not None]


def _blocks(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    """A compound statement's blocks, each walked on its own (an `if` is not one of these)."""
    if isinstance(statement, cst.Match):
        return [case.body for case in statement.cases]
    body = getattr(statement, "body", None)
    found = [body] if isinstance(body, cst.BaseSuite) else []
    found += [handler.body for handler in getattr(statement, "handlers", ())]
    for name in ("orelse", "finalbody"):
        block = getattr(statement, name, None)
        if block is not None:
            found.append(block.body)
    return found


def _inside(parts: list[cst.CSTNode]) -> frozenset[int]:
    found: set[int] = set()

    def visit(node: cst.CSTNode) -> bool | None:
        if isinstance(node, (cst.Call, cst.Lambda)):
            found.add(id(node))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            found.add(id(node))
            return True  # what a def holds belongs to it
        return None

    for part in parts:
        walk(part, visit)
    return frozenset(found)
