"""Runs the rules over the code Dynamo traces: compiled functions, minus guarded branches."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import libcst as cst

from torchlint.parse.cst_walk import parent_map, walk
from torchlint.settings.profile import CompileProfile
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding
from torchlint.rules.fixes import FixPlan
from torchlint.analysis.guards import NOTHING_RULED_OUT, GuardEvaluator, GuardedFile, RuledOut
from torchlint.analysis.interprocedural_kinds import Elsewhere, FileKinds
from torchlint.analysis.kind_flow import KindEnv
from torchlint.analysis.kind_vocabulary import Kind, is_data_dependent
from torchlint.analysis.path_conditions import PathConditions, path_conditions
from torchlint.project.index import ProjectFacts
from torchlint.analysis.regions import CallIndex, Regions, arguments, may_be_project
from torchlint.analysis.scopes import Scope, assigned_value, qualified_name
from torchlint.analysis.statement_flow import FlowEvents, SimpleStatements, walk_function
from torchlint.analysis.summary import ClassInfo, FileSummary, FunctionInfo


# Under `fullgraph=True` any break is an error: every finding there says so.
FULLGRAPH_NOTE = "; under `fullgraph=True` the compile fails"

class LintContext:
    """The state of the walk through one file, and the answers to what rules ask about it:
    implements ``RuleContext``, which is all that rules see of it."""

    def __init__(
        self,
        summary: FileSummary,
        regions: Regions,
        guarded: GuardedFile,
        profile: CompileProfile,
        project_facts: ProjectFacts | None = None,
        call_index: CallIndex | None = None,
    ) -> None:
        """``guarded``: what the file's guards rule out, which the walk skips and the kinds
        leave out. ``call_index``: the file's call resolver, the region graph's."""
        self.summary = summary
        self.regions = regions
        self.guarded = guarded
        self.guards = guarded.guards
        self.profile = profile
        self.project_facts = project_facts
        module_classes = project_facts.module_classes if project_facts is not None else {}
        # Resolves calls to the file's functions and classes, for regions, kinds and rules.
        self.call_index = call_index if call_index is not None else CallIndex(summary, module_classes)
        self.function: FunctionInfo | None = None
        self.statement: cst.CSTNode | None = None
        self.findings: list[Finding] = []
        self.enclosing: list[cst.CSTNode] = []
        # Nodes a rule has already dealt with (a condition's parts, an assignment's target).
        self.handled: set[int] = set()
        # What the guards leave out of the current function.
        self.ruled_out: RuledOut = NOTHING_RULED_OUT
        fullgraph = getattr(regions, "fullgraph", ())
        self.file_kinds = FileKinds(
            summary,
            scalars_captured=lambda function: profile.capture_scalar_outputs or function in fullgraph,
            shapes_captured=lambda function: profile.capture_dynamic_output_shape_ops or function in fullgraph,
            elsewhere=Elsewhere(self._passed_from_elsewhere, self._held_tensors, self._returns_tensor),
            guarded=guarded,
            index=self.call_index,
        )
        # The kinds of the current function's names, as far as the walk has come.
        self.kinds: KindEnv | None = None
        # id of a call -> the tensors it passes, by position or keyword; None: not recorded
        self.passed: dict[int, dict[int | str, Kind]] | None = None
        self._held: dict[tuple[ClassInfo, str], frozenset[str]] = {}
        self._qualified_names: dict[tuple[int, int], str | None] = {}
        # the parents of the nodes of the last function asked about, by id
        self._parents: tuple[cst.CSTNode | None, dict[int, cst.CSTNode]] = (None, {})

    def parents(self, function: FunctionInfo | None = None) -> dict[int, cst.CSTNode] | None:
        """id(node) -> its parent within ``function`` (the one walked by default); None in a
        file-wide finisher. The last function's map is kept: findings and fixes ask about many
        nodes of one function."""
        function = self.function if function is None else function
        if function is None:
            return None
        if self._parents[0] is not function.node:
            self._parents = (function.node, parent_map(function.node))
        return self._parents[1]

    def _path_conditions(self, function: FunctionInfo, node: cst.CSTNode) -> PathConditions:
        """What ``node`` runs under in ``function``: `self.training`, dtype tests, config flags."""
        owner = function.method
        return path_conditions(
            function.node.body, node, self.parents(function), self.summary.module, owner.self_name if owner else None
        )

    def _passed_from_elsewhere(self, function: FunctionInfo) -> dict[str, Kind]:
        facts = self.project_facts
        return facts.parameter_kinds.get(function.qualname, {}) if facts is not None else {}

    def _held_tensors(self, owner: ClassInfo, attribute: str) -> frozenset[str]:
        """The tensor members of what `self.<attribute>` keeps, from the classes this file and
        the rest of the project give it."""
        key = (owner, attribute)
        if key not in self._held:
            found: frozenset[str] = frozenset()
            if attribute in owner.held and self.call_index.keeps_argument(owner, attribute):
                facts = self.project_facts
                if facts is not None:
                    found = facts.held_tensors.get((owner.qualname, attribute), found)
                for cls, _ in self.call_index.held_classes(owner, attribute):
                    if isinstance(cls, ClassInfo):
                        found = found | self.file_kinds.members.tensor_members(cls)
            self._held[key] = found
        return self._held[key]

    def _returns_tensor(self, spelled: str) -> bool:
        facts = self.project_facts
        return facts is not None and spelled in facts.tensor_returns

    def record_passed(self, call: cst.Call) -> None:
        """Keep the tensors a call passes where it may run code of another file: the project
        index hands them to that code's parameters."""
        name = self.qualified_name(call.func)
        if name is not None and not may_be_project(name):
            return
        tensors = {slot: Kind.TENSOR for slot, value in arguments(call) if self.is_tensor(value)}
        if tensors:
            self.passed[id(call)] = tensors

    def short_circuits(self, node: cst.BooleanOperation) -> bool:
        """`not is_compiling() and x` while compiling: Python never evaluates `x`."""
        return self.guards.short_circuits(node, self.scope)

    def kind_of(self, node: cst.BaseExpression) -> Kind:
        return self.kinds.kind_of(node) if self.kinds is not None else Kind.UNKNOWN

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        return self.kind_of(node) is Kind.TENSOR

    def is_zero_dim(self, node: cst.BaseExpression) -> bool:
        """A 0-d tensor the graph computes (`scores.argmax()`, `idx + 1`)."""
        return self.kinds is not None and self.kinds.is_zero_dim(node)

    def is_data_dependent(self, node: cst.BaseExpression) -> bool:
        """A tensor, or a number Dynamo captured from one: Python cannot branch on either."""
        return is_data_dependent(self.kind_of(node))

    @property
    def in_fullgraph(self) -> bool:
        """Every compile site that reaches this function says `fullgraph=True`."""
        return self._compiles_fullgraph(self.function)

    def _compiles_fullgraph(self, function: FunctionInfo | None) -> bool:
        return function is not None and function in getattr(self.regions, "fullgraph", ())

    @property
    def scalars_captured(self) -> bool:
        """`.item()`-style reads become graph values instead of breaks."""
        return self.profile.capture_scalar_outputs or self.in_fullgraph

    @property
    def dynamic_shapes_captured(self) -> bool:
        """Ops with data-dependent output shapes stay in the graph."""
        return self.profile.capture_dynamic_output_shape_ops or self.in_fullgraph

    @property
    def scope(self) -> Scope:
        return self.function.scope if self.function is not None else self.summary.scope

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        # Rules ask the same of a call many times over: looked up once per node and scope.
        scope = self.scope
        key = (id(node), id(scope))
        names = self._qualified_names
        if key not in names:
            names[key] = qualified_name(node, scope)
        return names[key]

    def assigned_value(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """What a local name or a ``self.<attr>`` was assigned from, where that is known."""
        if isinstance(node, cst.Name):
            return assigned_value(node, self.scope)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            method = self.function.method if self.function is not None else None
            if method is not None and node.value.value == method.self_name:
                return method.owner_class.attribute_values.get(node.attr.value)
        return None

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
    ) -> None:
        """Record a finding at ``node``: the rule's own message and suggestion unless given,
        with the note that a `fullgraph=True` compile fails where that applies.

        ``function`` places the finding in another compiled function than the one being
        walked (a file-wide rule's finding about a caller)."""
        function = self.function if function is None else function
        text = message or rule.message
        if function is not None:
            conditions = self._path_conditions(function, node)
            if self.profile.mode == "eval" and conditions.training is True:
                return  # never runs in the mode the project compiles
            if self.profile.mode == "train" and conditions.training is False:
                return
            text += conditions.wording()
        if self._compiles_fullgraph(function):
            text += FULLGRAPH_NOTE
        self.findings.append(
            Finding(
                rule,
                node,
                node if header_only else (self.statement or node),
                text,
                suggestion if suggestion is not None else rule.suggestion,
                tuple(self.enclosing),
                related,
                gb_ids,
                header_only,
                function,
                fix,
            )
        )


Handler = Callable[[cst.CSTNode, LintContext], None]


class Checker:
    def __init__(self, rules: Iterable[type[Rule]], guards: GuardEvaluator) -> None:
        self.guards = guards
        self.dispatch: dict[type, list[Handler]] = {}
        # Rules that keep state for one file reset it here, before the file is walked.
        self.starters: list[Callable[[LintContext], None]] = []
        # Rules that look at a whole function's findings once it has been walked, and at
        # the whole file's once every function has.
        self.finishers: list[Callable[[list[Finding], LintContext], None]] = []
        self.file_finishers: list[Callable[[list[Finding], LintContext], None]] = []
        for rule in rules:
            instance = rule()
            if hasattr(instance, "start_file"):
                self.starters.append(instance.start_file)
            if hasattr(instance, "finish_function"):
                self.finishers.append(instance.finish_function)
            if hasattr(instance, "finish_file"):
                self.file_finishers.append(instance.finish_file)
            for attribute in dir(rule):
                if attribute.startswith("visit_"):
                    node_type = getattr(cst, attribute[len("visit_"):])
                    self.dispatch.setdefault(node_type, []).append(getattr(instance, attribute))

    def run(
        self,
        summary: FileSummary,
        regions: Regions,
        profile: CompileProfile | None = None,
        *,
        project_facts: ProjectFacts | None = None,
        passed: dict[int, dict[int | str, Kind]] | None = None,
        returns: set[str] | None = None,
        guarded: GuardedFile | None = None,
        call_index: CallIndex | None = None,
    ) -> list[Finding]:
        """``passed``, when given, receives the tensors each compiled call passes (by the
        call's id), for the project index; ``returns``, the compiled functions that return
        a tensor. ``guarded`` and ``call_index`` lend what the
        region graph already worked out about the file's guards (it must read them with
        this checker's) and its calls."""
        if guarded is None or guarded.guards is not self.guards:
            guarded = GuardedFile(summary, self.guards)
        ctx = LintContext(summary, regions, guarded, profile or CompileProfile(), project_facts, call_index)
        ctx.passed = passed
        # With no rule enabled the walk still records what the file passes to other files:
        # their findings depend on it.
        if not self.dispatch and not self.finishers and not self.file_finishers and passed is None and returns is None:
            return ctx.findings
        for start in self.starters:
            start(ctx)
        for function in summary.functions:
            if function in regions.compiled:
                ctx.function = function
                ctx.ruled_out = guarded.ruled_out(function)
                ctx.kinds = ctx.file_kinds.env(function)
                first = len(ctx.findings)
                walk_function(ctx.kinds, _RuleWalk(self, ctx))
                for finish in self.finishers:
                    finish(ctx.findings[first:], ctx)
                if returns is not None and ctx.file_kinds.return_kind(function, 0) is Kind.TENSOR:
                    returns.add(function.qualname)
        # File-wide rules look at no function in particular.
        ctx.function, ctx.statement, ctx.kinds = None, None, None
        for finish in self.file_finishers:
            finish(list(ctx.findings), ctx)
        return ctx.findings

    # Expressions ----------------------------------------------------------------

    def _notify(self, node: cst.CSTNode, ctx: LintContext) -> None:
        for handler in self.dispatch.get(type(node), ()):
            handler(node, ctx)

    def _expression(self, root: cst.CSTNode, ctx: LintContext) -> None:
        dispatch = self.dispatch

        recording = ctx.passed is not None
        ruled_out = ctx.ruled_out

        # libcst's node classes are final: comparing types is exact, and far cheaper than
        # `isinstance` against their ABC-based classes, on every node of compiled code.
        def visit(node: cst.CSTNode) -> bool | None:
            kind = type(node)
            if kind is cst.Lambda and id(node) in ctx.summary.lambdas:
                return True  # a function of its own: checked on its own, when compiled
            handlers = dispatch.get(kind)
            if handlers:
                for handler in handlers:
                    handler(node, ctx)
            if recording and kind is cst.Call:
                ctx.record_passed(node)
            if kind is cst.BooleanOperation and node.right in ruled_out:
                self._expression(node.left, ctx)
                return True
            if kind is cst.IfExp and (node.body in ruled_out or node.orelse in ruled_out):
                self._expression(node.test, ctx)
                self._expression(node.orelse if node.body in ruled_out else node.body, ctx)
                return True
            return None

        walk(root, visit)


class _RuleWalk(FlowEvents):
    """The rules' view of the walk: each statement and expression Dynamo traces goes to the
    rules that asked for its kind of node, with the kinds as they are at that point."""

    def __init__(self, checker: Checker, ctx: LintContext) -> None:
        self.checker = checker
        self.ctx = ctx

    def simple(self, statements: SimpleStatements) -> None:
        # A one-line suite (`if c: x()`) is part of its compound statement, not one of its own.
        if isinstance(statements, cst.SimpleStatementLine):
            self._at(statements)
        for small in statements.body:
            self.checker._expression(small, self.ctx)

    def compound(self, statement: cst.BaseStatement) -> None:
        self._at(statement)

    def _at(self, statement: cst.BaseStatement) -> None:
        self.ctx.statement = statement
        self.checker._notify(statement, self.ctx)

    def header(self, expression: cst.CSTNode) -> None:
        self.checker._expression(expression, self.ctx)

    def handler(self, handler: cst.CSTNode) -> None:
        self.ctx.statement = handler

    def enter_frame_block(self, statement: cst.BaseCompoundStatement) -> None:
        self.ctx.enclosing.append(statement)

    def leave_frame_block(self, statement: cst.BaseCompoundStatement) -> None:
        self.ctx.enclosing.pop()
