"""Rules see the checker only through ``RuleContext``: what they ask is what it lists."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import libcst as cst

from torchlint.analysis.checker import Checker, LintContext
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.guards import GuardEvaluator
from torchlint.analysis.regions import FileGraph
from torchlint.analysis.summary import summarize

RULES = Path(__file__).resolve().parent.parent / "torchlint" / "rules"


def _rule_modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(), str(path))) for path in sorted(RULES.glob("*.py"))]


def _protocol_members() -> set[str]:
    return {name for name in vars(RuleContext) if not name.startswith("_")}


def test_no_rule_module_imports_the_checker() -> None:
    offenders = []
    for path, tree in _rule_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            if any(module == "torchlint.analysis.checker" or module.startswith("torchlint.analysis.checker.") for module in modules):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_the_protocol_lists_exactly_what_rules_read_from_ctx() -> None:
    read: set[str] = set()
    written = []
    for path, tree in _rule_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ctx":
                read.add(node.attr)
                if not isinstance(node.ctx, ast.Load):
                    written.append(f"{path.name}:{node.lineno} ctx.{node.attr}")
    assert written == [], "rules ask the context; they do not set it"
    assert read == _protocol_members()


def test_every_ctx_parameter_of_a_rule_is_typed_as_rule_context() -> None:
    untyped = []
    for path, tree in _rule_modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg == "ctx" and ast.unparse(arg.annotation or ast.Constant(None)) != "RuleContext":
                        untyped.append(f"{path.name}:{node.lineno} {node.name}")
    assert untyped == []


class _Recorder(Rule):
    code = "TL999"
    name = "recorder"
    message = "seen"
    seen: list[RuleContext] = []

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        self.seen.append(ctx)


def _compiled_file(source: str):
    summary = summarize(cst.parse_module(textwrap.dedent(source)), "pkg.model")
    return summary, FileGraph(summary)


COMPILED_CALLS = """
    import torch

    @torch.compile
    def f(x):
        return x.sum() + x.mean()
"""


def test_the_checker_hands_rules_a_rule_context() -> None:
    _Recorder.seen = []
    Checker([_Recorder], GuardEvaluator()).run(*_compiled_file(COMPILED_CALLS))
    assert _Recorder.seen
    assert all(isinstance(ctx, RuleContext) for ctx in _Recorder.seen)


class _PerFile(Rule):
    code = "TL998"
    name = "per-file"
    message = "seen"
    events: list[str] = []

    def start_file(self, ctx: RuleContext) -> None:
        self.events.append("start")

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        self.events.append("call")


def test_start_file_runs_once_per_file_before_its_walk() -> None:
    _PerFile.events = []
    checker = Checker([_PerFile], GuardEvaluator())
    checker.run(*_compiled_file(COMPILED_CALLS))
    checker.run(*_compiled_file(COMPILED_CALLS))
    assert _PerFile.events == ["start", "call", "call", "start", "call", "call"]


def test_lint_context_methods_take_what_the_protocol_says() -> None:
    for name in _protocol_members():
        declared = inspect.getattr_static(RuleContext, name)
        if not inspect.isfunction(declared):
            continue
        implemented = inspect.getattr_static(LintContext, name)
        assert list(inspect.signature(implemented).parameters.values()) == list(
            inspect.signature(declared).parameters.values()
        ), name
