"""One walk through a function's statements, in the order Dynamo traces them.

What an `is_compiling()` guard rules out is skipped (a ruled-out branch, and what follows a
branch that always exits while compiling). The kinds of names follow the walk: simple
statements bind them, `for` binds its target, each branch of an `if` starts from the kinds
before it, and after the `if` a name holds what any branch that goes on may have left in
it. Kind inference and the checker both walk this way; each says what it does at each step
through `FlowEvents`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.parse.cst_walk import compound_headers
from torchlint.analysis.guards import RuledOut, always_exits

if TYPE_CHECKING:
    from torchlint.analysis.kind_flow import KindEnv

# Statements whose body is a block of the frame (`with`, loops, `try`): rules ask what
# encloses a statement.
FRAME_BLOCKS = (cst.For, cst.While, cst.Try, cst.TryStar, cst.With)
SimpleStatements = cst.SimpleStatementLine | cst.SimpleStatementSuite


class FlowEvents:
    """What a walk tells its user, in order; each step does nothing unless overridden."""

    def simple(self, statements: SimpleStatements) -> None:
        """Simple statements run, before what they bind is recorded."""

    def compound(self, statement: cst.BaseCompoundStatement) -> None:
        """A compound statement starts, before the expressions of its header (a nested
        `def` or `class` is defined here; its body is not walked)."""

    def header(self, expression: cst.CSTNode) -> None:
        """An expression a compound statement evaluates itself: a test, an iterable, a
        `for` target, a context manager, a match subject, an exception type."""

    def handler(self, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> None:
        """An `except` clause starts, before its exception type."""

    def enter_frame_block(self, statement: cst.BaseCompoundStatement) -> None:
        """The body of a loop, `try` or `with` starts."""

    def leave_frame_block(self, statement: cst.BaseCompoundStatement) -> None:
        """The body of a loop, `try` or `with` ended."""


def walk_function(env: KindEnv, events: FlowEvents) -> None:
    """Walk ``env``'s function from its first statement, keeping ``env``'s kinds."""
    _Flow(env, env.ruled_out, events).suite(env.function.node.body)


class _Flow:
    def __init__(self, env: KindEnv, ruled_out: RuledOut, events: FlowEvents) -> None:
        self.env = env
        self.ruled_out = ruled_out
        self.events = events

    def suite(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.SimpleStatementSuite):
            self.simple(suite)
            return
        assert isinstance(suite, cst.IndentedBlock)  # the only other suite
        for statement in suite.body:
            if statement in self.ruled_out:
                break  # after a branch that always exits while compiling
            self.statement(statement)

    def simple(self, statements: SimpleStatements) -> None:
        self.events.simple(statements)
        self.env.after_statement(statements)

    def statement(self, statement: cst.BaseStatement) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            self.simple(statement)
            return
        assert isinstance(statement, cst.BaseCompoundStatement)  # the only other statement
        self.events.compound(statement)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return  # a function of its own, walked when it is compiled
        if isinstance(statement, cst.If):
            self.if_(statement)
            return
        for expression in compound_headers(statement):
            self.events.header(expression)
        if isinstance(statement, cst.For):
            self.env.enter_for(statement)
        if isinstance(statement, cst.Match):
            for case in statement.cases:
                self.suite(case.body)
            return
        self.blocks(statement)

    def blocks(self, statement: cst.BaseCompoundStatement) -> None:
        frame_block = isinstance(statement, FRAME_BLOCKS)
        if frame_block:
            self.events.enter_frame_block(statement)
        try:
            self.suite(statement.body)
        finally:
            if frame_block:
                self.events.leave_frame_block(statement)
        for handler in getattr(statement, "handlers", ()):
            self.events.handler(handler)
            if handler.type is not None:
                self.events.header(handler.type)
            self.suite(handler.body)
        for name in ("orelse", "finalbody"):
            block = getattr(statement, name, None)
            if block is not None:
                self.suite(block.body)

    def if_(self, statement: cst.If) -> None:
        self.events.header(statement.test)
        branches = self.env.branches()
        if statement.body not in self.ruled_out:
            branches.narrow(statement.test)
            self.suite(statement.body)
            branches.branch_done(always_exits(statement.body))
        orelse = statement.orelse
        if orelse is not None and orelse not in self.ruled_out:
            if isinstance(orelse, cst.If):
                self.events.compound(orelse)
                self.if_(orelse)
                branches.branch_done(always_exits(cst.IndentedBlock(body=[orelse])))
            else:
                self.suite(orelse.body)
                branches.branch_done(always_exits(orelse.body))
        elif orelse is None and self.ruled_out.verdict(statement) is not True:
            branches.falls_through()
        branches.close()
