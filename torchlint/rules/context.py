"""What a rule sees: the findings it makes, and what it may ask about the code around a node.

Rules depend on this module, never on the checker that walks the code: ``RuleContext``
is the whole of what a detector or finisher may use, and the checker's ``LintContext``
implements it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import libcst as cst

from torchlint.analysis.conditions import TRUE, Condition, all_of, any_of
from torchlint.settings.profile import CompileProfile
from torchlint.rules.base import Rule
from torchlint.rules.fixes import FixPlan
from torchlint.analysis.guards import GuardEvaluator
from torchlint.analysis.kind_flow import KindEnv
from torchlint.analysis.kind_vocabulary import Kind
from torchlint.analysis.regions import CallIndex
from torchlint.analysis.scopes import Scope
from torchlint.analysis.summary import FileSummary, FunctionInfo


@dataclass(frozen=True)
class Finding:
    rule: type[Rule]
    node: cst.CSTNode
    statement: cst.CSTNode
    message: str
    suggestion: str | None
    # The loops, `try` and `with` blocks whose body holds the node, outermost first.
    enclosing: tuple[cst.CSTNode, ...] = ()
    # Other findings this one is about (the breaks inside a loop), shown as related locations.
    related: tuple[Finding, ...] = ()
    # Graph-break ids when they are not the rule's own (a TL6xx finding takes its inner break's).
    gb_ids: tuple[str, ...] | None = None
    # Report only the statement's header (`for x in xs:`), not its whole body.
    header_only: bool = False
    # The compiled function the finding is in.
    function: FunctionInfo | None = None
    # The rewrite that removes the break, when there is a mechanical one.
    fix: FixPlan | None = None
    # What must hold in the project for the finding to stand (`conditions`): the function it
    # is in compiled, open kinds it read being what it took them for.
    condition: Condition = TRUE
    # For a finding about breaks met elsewhere (TL6xx, TL524, TL525): each way it may hold. It
    # stands where one of them does, and its message is the rule's ``restate`` of those that do.
    breaks_met: tuple[BreakMet, ...] = ()
    # What the rule's ``restate`` needs besides the breaks met (the block, the function).
    restate: tuple[str, ...] = ()

    def standing(self) -> Condition:
        """Where the finding stands: its condition, and one of its breaks met where it has them."""
        if not self.breaks_met:
            return self.condition
        return all_of(self.condition, any_of(*(met.condition for met in self.breaks_met)))


@dataclass(frozen=True)
class BreakMet:
    """A break that a finding about breaks may be about: one of this file (``inner``), or a
    call (as spelled) into code the project may find breaking."""

    condition: Condition
    inner: Finding | None = None
    callee: str | None = None
    # the helper called through which ``inner`` is met, where not the function itself
    via: str | None = None


@runtime_checkable
class RuleContext(Protocol):
    """The questions a rule may ask while the checker walks one file's compiled code.

    Everything is read-only but ``handled``, the set rules share to mark nodes already
    dealt with.
    """

    # -- making a finding -------------------------------------------------------------

    def report(
        self,
        rule: type[Rule],
        node: cst.CSTNode,
        message: str | None = None,
        suggestion: str | None = None,
        *,
        related: tuple[Finding, ...] = (),
        gb_ids: tuple[str, ...] | None = None,
        header_only: bool = False,
        function: FunctionInfo | None = None,
        fix: FixPlan | None = None,
        when: Condition = TRUE,
        breaks_met: tuple[BreakMet, ...] = (),
        restate: tuple[str, ...] = (),
    ) -> None:
        """Record a finding at ``node`` (the rule's own message and suggestion unless
        given). ``function`` places it in another function than the current one; ``fix``
        is the rewrite `--fix` may apply; ``when`` is what else the project must show for it
        to stand, on top of its function being compiled. A finding about breaks met elsewhere
        gives each of them (``breaks_met``) and what its rule's ``restate`` needs (``restate``)."""
        ...

    # -- where the walk is --------------------------------------------------------------

    @property
    def summary(self) -> FileSummary:
        """The file's functions, classes and module scope."""
        ...

    @property
    def function(self) -> FunctionInfo | None:
        """The compiled function being walked; None in a file-wide finisher."""
        ...

    @property
    def statement(self) -> cst.CSTNode | None:
        """The statement holding the node being visited."""
        ...

    @property
    def scope(self) -> Scope:
        """The current function's scope, else the module's."""
        ...

    def parents(self, function: FunctionInfo | None = None) -> dict[int, cst.CSTNode] | None:
        """id(node) -> its parent, for the nodes of ``function`` (the compiled function being
        walked by default); None in a file-wide finisher."""
        ...

    @property
    def handled(self) -> set[int]:
        """Ids of nodes a rule has already dealt with (a condition's parts), to skip later."""
        ...

    # -- names and calls ----------------------------------------------------------------

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        """`torch.nn.functional.relu` for `F.relu`, as the imports spell it; None for locals."""
        ...

    def assigned_value(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """What a local name or a ``self.<attr>`` was assigned from, where that is known."""
        ...

    @property
    def call_index(self) -> CallIndex:
        """Resolves calls to the file's functions and classes."""
        ...

    @property
    def disabled(self) -> set[FunctionInfo]:
        """The file's functions under `torch.compiler.disable`."""
        ...

    @property
    def guards(self) -> GuardEvaluator:
        """Which way `is_compiling()`-style tests go while compiling."""
        ...

    def short_circuits(self, node: cst.BooleanOperation) -> bool:
        """`not is_compiling() and x` while compiling: Python never evaluates `x`."""
        ...

    # -- value kinds --------------------------------------------------------------------

    def kind_of(self, node: cst.BaseExpression) -> Kind:
        ...

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        ...

    def is_zero_dim(self, node: cst.BaseExpression) -> bool:
        """A 0-d tensor the graph computes (`scores.argmax()`, `idx + 1`)."""
        ...

    def is_data_dependent(self, node: cst.BaseExpression) -> bool:
        """A tensor, or a number Dynamo captured from one: Python cannot branch on either."""
        ...

    @property
    def kinds(self) -> KindEnv | None:
        """The current function's kinds as far as the walk has come (masks, names bound
        for a moment); None in a file-wide finisher."""
        ...

    # -- the compile profile --------------------------------------------------------------

    @property
    def profile(self) -> CompileProfile:
        """The Dynamo settings and torch release the code compiles under."""
        ...

    @property
    def in_fullgraph(self) -> bool:
        """Every compile site that reaches the current function says `fullgraph=True`. The
        project decides; a finding made on the answer holds only where the project agrees."""
        ...

    @property
    def scalars_captured(self) -> bool:
        """`.item()`-style reads become graph values instead of breaks."""
        ...

    @property
    def dynamic_shapes_captured(self) -> bool:
        """Ops with data-dependent output shapes stay in the graph."""
        ...
