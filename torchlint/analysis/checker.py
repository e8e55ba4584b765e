"""Runs every rule over every function of one file, once, and records what the project's
solve needs from the walk: what each call into the project passes, what each function
returns.

Whether a function is compiled, and what callers pass or callees return, is the project's
to say: a finding holds where its ``condition`` does (`conditions`). A rule is written for
plain kinds; where it reads an open one (`open_kinds`), it runs in both worlds, and a
finding made in one of them only holds where the facts it read say that world is the real
one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial

import libcst as cst

from torchlint.analysis.conditions import (
    FALSE,
    TRUE,
    Compiled,
    Condition,
    Fact,
    Fullgraph,
    Target,
    all_of,
    any_of,
    negated,
)
from torchlint.analysis.file_kinds import FileKinds
from torchlint.analysis.guards import NOTHING_RULED_OUT, GuardEvaluator, GuardedFile, RuledOut
from torchlint.analysis.kind_flow import KindEnv
from torchlint.analysis.kind_vocabulary import TENSOR, Kind, is_data_dependent
from torchlint.analysis.open_kinds import EVERY, Held, OpenKind
from torchlint.analysis.path_conditions import PathConditions, path_conditions
from torchlint.analysis.regions import CallIndex, FileGraph, arguments
from torchlint.analysis.scopes import Scope, assigned_value, qualified_name
from torchlint.analysis.statement_flow import FlowEvents, SimpleStatements, walk_function
from torchlint.analysis.summary import FileSummary, FunctionInfo
from torchlint.parse.cst_walk import parent_map, walk
from torchlint.rules.base import Rule
from torchlint.rules.context import BreakMet, Finding
from torchlint.rules.fixes import FixPlan
from torchlint.settings.profile import CompileProfile

# Under `fullgraph=True` any break is an error: every finding there says so.
FULLGRAPH_NOTE = "; under `fullgraph=True` the compile fails"


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A call into the project's code: what it may run, and what it hands over."""

    targets: tuple[Target, ...]
    # (position or keyword, what is passed) for the values that are, or may be, tensors
    passed: tuple[tuple[int | str, Held], ...]
    # (position or keyword, the caller's parameter passed as it came in)
    handed: tuple[tuple[int | str, str], ...]


@dataclass(frozen=True, slots=True)
class FunctionKinds:
    """What the project's solve reads of one function's kinds."""

    returns: Held
    # per element, when every return is a tuple literal of one length
    elements: tuple[Held, ...] | None
    # parameters the body uses as only a tensor can be used
    evidence: frozenset[str]
    calls: tuple[CallRecord, ...]


@dataclass
class CheckedFile:
    findings: list[Finding] = field(default_factory=list)
    # qualified name -> what its walk found of kinds
    kinds: dict[str, FunctionKinds] = field(default_factory=dict)


class LintContext:
    """The state of the walk through one file, and the answers to what rules ask about it:
    implements ``RuleContext``, which is all that rules see of it."""

    def __init__(self, summary: FileSummary, graph: FileGraph, guarded: GuardedFile, profile: CompileProfile) -> None:
        self.summary = summary
        # The functions the file's own compile sites reach only with fullgraph=True: taken for
        # fullgraph ones (scalars captured, every break a failure) until the project says.
        self.local_fullgraph = graph.fullgraph_here()
        self.graph = graph
        self.guarded = guarded
        self.guards = guarded.guards
        self.profile = profile
        # Resolves calls to the file's functions and classes, for regions, kinds and rules.
        self.call_index: CallIndex = graph.index
        self.disabled = graph.disabled
        self.function: FunctionInfo | None = None
        self.statement: cst.CSTNode | None = None
        self.findings: list[Finding] = []
        self.enclosing: list[cst.CSTNode] = []
        # Nodes a rule has already dealt with (a condition's parts), one set per world.
        self._handled: tuple[set[int], set[int]] = (set(), set())
        # What the guards leave out of the current function.
        self.ruled_out: RuledOut = NOTHING_RULED_OUT
        self.file_kinds = FileKinds(
            summary,
            scalars_captured=lambda function: profile.capture_scalar_outputs or function in self.local_fullgraph,
            shapes_captured=lambda function: profile.capture_dynamic_output_shape_ops or function in self.local_fullgraph,
            guarded=guarded,
            index=self.call_index,
        )
        # The kinds of the current function's names, as far as the walk has come.
        self.kinds: KindEnv | None = None
        # The calls into the project the current function makes, with what they pass.
        self.calls: list[CallRecord] = []
        # What the rule running now was told of whether its function compiles with
        # fullgraph=True (None: it did not ask): its findings hold where the project agrees.
        self._asked_fullgraph: bool | None = None
        self._qualified_names: dict[tuple[int, int], str | None] = {}
        # the parents of the nodes of the last function asked about, by id
        self._parents: tuple[cst.CSTNode | None, dict[int, cst.CSTNode]] = (None, {})

    # -- running a rule in both worlds ------------------------------------------------

    def run_rule(self, handler: Callable[..., None], *args: object) -> None:
        """Run one detector (or finisher); where it read an open kind, run it again in the up
        world, and keep each finding with the condition under which it holds: the facts that
        alone make it appear (or, for one made only in the base world, vanish)."""
        env = self.kinds
        if env is None:
            self._run_once(handler, args, TRUE)
            return
        world = env.world
        outer = world.start(None)
        first = len(self.findings)
        try:
            self._asked_fullgraph = None
            handler(*args, self)
            read = world.read
            if not read:
                if len(self.findings) > first:  # most runs find nothing
                    self._settle(first, len(self.findings), TRUE)
                return
            base = self._take(first)
            base_fullgraph = self._asked_fullgraph
            world.start(EVERY)
            self._asked_fullgraph = None
            handler(*args, self)
            up = self._take(first)
            facts = read | world.read
            up_fullgraph = self._asked_fullgraph

            def made_with(holding: frozenset[Fact]) -> set[tuple[type[Rule], int]]:
                world.start(holding)
                probe_handled = set(self._handled[1])
                saved, self._handled = self._handled, (self._handled[0], probe_handled)
                try:
                    handler(*args, self)
                finally:
                    self._handled = saved
                return {(f.rule, id(f.node)) for f in self._take(first)}

            up_keys = {(f.rule, id(f.node)) for f in up}
            base_keys = {(f.rule, id(f.node)) for f in base}
            probes: dict[Fact, set[tuple[type[Rule], int]]] = {}

            def probe(fact: Fact) -> set[tuple[type[Rule], int]]:
                if fact not in probes:
                    probes[fact] = made_with(frozenset({fact}))
                return probes[fact]

            for finding in base:
                key = (finding.rule, id(finding.node))
                if key in up_keys:
                    self._keep(finding, TRUE, base_fullgraph)
                    continue
                killers = [fact for fact in sorted(facts, key=repr) if key not in probe(fact)] if len(facts) > 1 else []
                self._keep(finding, all_of(*(negated(f) for f in (killers or sorted(facts, key=repr)))), base_fullgraph)
            for finding in up:
                key = (finding.rule, id(finding.node))
                if key in base_keys:
                    continue
                makers = [fact for fact in sorted(facts, key=repr) if key in probe(fact)] if len(facts) > 1 else list(facts)
                condition = any_of(*makers) if makers else all_of(*sorted(facts, key=repr))
                self._keep(finding, condition, up_fullgraph)
        finally:
            world.holding = None
            world.read = outer

    def _take(self, start: int) -> list[Finding]:
        found = self.findings[start:]
        del self.findings[start:]
        return found

    def _run_once(self, handler: Callable[..., None], args: tuple[object, ...], condition: Condition) -> None:
        first = len(self.findings)
        self._asked_fullgraph = None
        handler(*args, self)
        self._settle(first, len(self.findings), condition)

    def _settle(self, start: int, end: int, condition: Condition) -> None:
        found = self.findings[start:end]
        del self.findings[start:end]
        for finding in found:
            self._keep(finding, condition, self._asked_fullgraph)

    def _keep(self, finding: Finding, condition: Condition, asked_fullgraph: bool | None) -> None:
        """A finding, with what must hold for it: its function compiled, the kinds it read
        as the world it was made in, and a fullgraph compile, or none, as the rule was told."""
        function = finding.function
        parts = [finding.condition, condition]
        if function is not None:
            parts.append(Compiled(function.qualname))
            if asked_fullgraph is not None:
                fullgraph = Fullgraph(function.qualname)
                parts.append(fullgraph if asked_fullgraph else negated(fullgraph))
        when = all_of(*parts)
        if when is not FALSE:
            self.findings.append(replace(finding, condition=when))

    @property
    def handled(self) -> set[int]:
        """Ids of nodes a rule has already dealt with, in the world it runs in now."""
        env = self.kinds
        return self._handled[1 if env is not None and env.world.holding is not None else 0]

    # -- where the walk is ---------------------------------------------------------------

    def parents(self, function: FunctionInfo | None = None) -> dict[int, cst.CSTNode] | None:
        """id(node) -> its parent within ``function`` (the one walked by default); None in a
        file-wide finisher. The last function's map is kept: findings and fixes ask about many
        nodes of one function."""
        function = self.function if function is None else function
        if function is None:
            return None
        return self._parents_in(function)

    def _parents_in(self, function: FunctionInfo) -> dict[int, cst.CSTNode]:
        if self._parents[0] is not function.node:
            self._parents = (function.node, parent_map(function.node))
        return self._parents[1]

    def _path_conditions(self, function: FunctionInfo, node: cst.CSTNode) -> PathConditions:
        """What ``node`` runs under in ``function``: `self.training`, dtype tests, config flags."""
        owner = function.method
        return path_conditions(
            function.node.body, node, self._parents_in(function), self.summary.module, owner.self_name if owner else None
        )

    @property
    def scope(self) -> Scope:
        return self.function.scope if self.function is not None else self.summary.scope

    # -- what the walk records for the project ---------------------------------------------

    def record_call(self, call: cst.Call) -> None:
        """Keep what a call into the project passes, for the solve to hand to its callees'
        parameters: the tensors (and values that may be ones), and the caller's own
        parameters handed on as they came in."""
        env, function = self.kinds, self.function
        if env is None or id(call) in self.ruled_out.inside:
            return
        assert function is not None  # the kinds are those of the function walked
        targets: tuple[Target, ...] = tuple(
            target.qualname if isinstance(target, FunctionInfo) else target
            for target, _ in self.call_index.callees(call.func, function)
        )
        if not targets:
            return
        passed = []
        handed = []
        for slot, value in arguments(call):
            if type(value) is cst.Name and value.value in env.pristine:
                handed.append((slot, value.value))
            held = env.lifted(partial(env.kind_of, value))
            if held is TENSOR or (isinstance(held, OpenKind) and TENSOR in (held.base, held.up)):
                passed.append((slot, held))
        if passed or handed:
            self.calls.append(CallRecord(targets, tuple(passed), tuple(handed)))

    # -- names and kinds ------------------------------------------------------------------

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
        """Every compile site that reaches this function says `fullgraph=True`: the project
        decides, so the walk answers as the file's own compile sites say, and a finding made on
        that answer holds only where the project agrees."""
        answer = self.function is not None and self.function in self.local_fullgraph
        self._asked_fullgraph = answer
        return answer

    @property
    def scalars_captured(self) -> bool:
        """`.item()`-style reads become graph values instead of breaks."""
        return self.profile.capture_scalar_outputs or self.in_fullgraph

    @property
    def dynamic_shapes_captured(self) -> bool:
        """Ops with data-dependent output shapes stay in the graph."""
        return self.profile.capture_dynamic_output_shape_ops or self.in_fullgraph

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
            context = self.call_index.method_context(self.function) if self.function is not None else None
            if context is not None and node.value.value == context[0].self_name:
                return context[1].attribute_values.get(node.attr.value)
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
        when: Condition = TRUE,
        breaks_met: tuple[BreakMet, ...] = (),
        restate: tuple[str, ...] = (),
    ) -> None:
        """Record a finding at ``node``: the rule's own message and suggestion unless given.

        ``function`` places the finding in another function than the one being walked (a
        file-wide rule's finding about a caller); ``when`` is what else must hold for it, on top
        of that function being compiled; ``breaks_met`` and ``restate``: see `RuleContext`."""
        function = self.function if function is None else function
        text = message or rule.message
        if function is not None:
            conditions = self._path_conditions(function, node)
            if self.profile.mode == "eval" and conditions.training is True:
                return  # never runs in the mode the project compiles
            if self.profile.mode == "train" and conditions.training is False:
                return
            text += conditions.wording(rule.effect)
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
                when,
                breaks_met,
                restate,
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

    def run(self, summary: FileSummary, graph: FileGraph, profile: CompileProfile | None = None) -> CheckedFile:
        """Every rule over every function of the file; ``graph`` lends what the region graph
        worked out about the file's guards and calls."""
        ctx = LintContext(summary, graph, graph.guarded, profile or CompileProfile())
        checked = CheckedFile()
        for start in self.starters:
            start(ctx)
        for function in summary.functions:
            if function in graph.disabled:
                continue  # never traced, whoever calls it
            ctx.function = function
            ctx.ruled_out = graph.guarded.ruled_out(function)
            ctx.kinds = env = ctx.file_kinds.env(function)
            ctx.calls = []
            ctx._handled = (set(), set())
            first = len(ctx.findings)
            walk_function(env, _RuleWalk(self, ctx))
            for finish in self.finishers:
                ctx.run_rule(finish, ctx.findings[first:])
            checked.kinds[function.qualname] = FunctionKinds(
                env.return_kind(), env.return_elements(), env.evidence, tuple(ctx.calls)
            )
        # File-wide rules look at no function in particular.
        ctx.function, ctx.statement, ctx.kinds = None, None, None
        for finish in self.file_finishers:
            ctx.run_rule(finish, list(ctx.findings))
        checked.findings = ctx.findings
        return checked

    # Expressions ----------------------------------------------------------------

    def _notify(self, node: cst.CSTNode, ctx: LintContext) -> None:
        for handler in self.dispatch.get(type(node), ()):
            ctx.run_rule(handler, node)

    def _expression(self, root: cst.CSTNode, ctx: LintContext) -> None:
        dispatch = self.dispatch
        ruled_out = ctx.ruled_out

        # libcst's node classes are final: comparing types is exact, and far cheaper than
        # `isinstance` against their ABC-based classes, on every node of compiled code.
        def visit(node: cst.CSTNode) -> bool | None:
            kind = type(node)
            if kind is cst.Lambda and id(node) in ctx.summary.lambdas:
                return True  # a function of its own: checked on its own
            handlers = dispatch.get(kind)
            if handlers:
                for handler in handlers:
                    ctx.run_rule(handler, node)
            # (`type(node)` again below, not `kind`: the type checker then knows the node's class.)
            if type(node) is cst.Call:
                ctx.record_call(node)
            if type(node) is cst.BooleanOperation and node.right in ruled_out:
                self._expression(node.left, ctx)
                return True
            if type(node) is cst.IfExp and (node.body in ruled_out or node.orelse in ruled_out):
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
