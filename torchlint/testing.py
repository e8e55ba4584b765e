"""Fail a test when torch.compile breaks the graph.

``assert_no_graph_breaks`` runs a function or module once under ``torch.compile``
(the eager backend, so it is quick) and fails with every graph break Dynamo met,
each shown the way ``torchlint check`` shows a finding::

    import torch
    from torchlint.testing import assert_no_graph_breaks

    from mypkg.model import Net


    def test_forward_compiles_as_one_graph():
        assert_no_graph_breaks(Net(), torch.randn(8, 16))

A failure reads::

    GraphBreakError: 1 graph break under torch.compile:
    mypkg/model.py:12:9: TL101 `print()` in compiled code breaks the graph (Dynamo cannot trace the builtin); guard it with `torch.compiler.is_compiling()` or move it out
      help: run it only in eager mode: `if not torch.compiler.is_compiling(): print(...)`, or move it out of the compiled function

With pytest, the same check is also a fixture; enable it in ``conftest.py``::

    pytest_plugins = ["torchlint.testing"]


    def test_forward(torchlint_no_graph_breaks):
        torchlint_no_graph_breaks(Net(), torch.randn(8, 16))

``no_graph_breaks(fn, *args, **kwargs)`` returns the breaks (a list of
``torchlint.verify.breaks.Break``) instead of failing, and ``check_graph_breaks(breaks)``
fails on a list you already have.

``assert_no_recompiles(fn, calls)`` compiles ``fn`` once, makes the calls, and fails when a
frame compiled more than ``allowed`` times again (one by default: a value that changes costs
one recompile before Dynamo takes it as a symbol) or when nothing was compiled at all::

    def epochs(model):
        for epoch in range(10):
            model.epoch = epoch
            yield (torch.randn(8, 16),)


    def test_epochs_do_not_recompile():
        model = Net()
        assert_no_recompiles(model, epochs(model))

``calls`` holds args tuples, ``(args, kwargs)`` pairs or ``(fn, args[, kwargs])`` tuples (of
the same ``fn``), in a list or a generator, whose code between yields runs eagerly. A value
that is not a tuple is one argument. ``count_recompiles(fn, calls)`` returns the count
(``torchlint.verify.recompiles.RecompileCount``: each frame with its compiles and the guards
that failed) instead of failing. torch is imported only when a check runs.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torchlint.report.diagnostic import Diagnostic
    from torchlint.rules.base import Rule
    from torchlint.verify.breaks import Break
    from torchlint.verify.recompiles import Frame, RecompileCount

__all__ = [
    "GraphBreakError",
    "RecompileError",
    "assert_no_graph_breaks",
    "assert_no_recompiles",
    "check_graph_breaks",
    "check_recompiles",
    "count_recompiles",
    "no_graph_breaks",
]

# TL9xx codes are about torchlint itself (syntax errors, unused noqa), never about a break.
_META_FAMILY = "TL9"


class GraphBreakError(AssertionError):
    """torch.compile broke the graph; ``breaks`` holds every break Dynamo reported."""

    def __init__(self, message: str, breaks: Sequence[Break]) -> None:
        super().__init__(message)
        self.breaks = list(breaks)


def no_graph_breaks(fn: Callable, *args: Any, **kwargs: Any) -> list[Break]:
    """Run ``fn(*args, **kwargs)`` once under ``torch.compile`` and return its graph breaks."""
    from torchlint.verify.breaks import compile_and_collect

    breaks, _ = compile_and_collect(fn, args, kwargs, backend="eager")
    return breaks


def assert_no_graph_breaks(fn: Callable, *args: Any, **kwargs: Any) -> None:
    """Run ``fn(*args, **kwargs)`` under ``torch.compile``; raise ``GraphBreakError`` on any break."""
    check_graph_breaks(no_graph_breaks(fn, *args, **kwargs))


def check_graph_breaks(breaks: Sequence[Break]) -> None:
    """Raise ``GraphBreakError`` listing ``breaks``, if there are any."""
    if not breaks:
        return
    count = len(breaks)
    lines = [f"{count} graph break{'s' if count != 1 else ''} under torch.compile:"]
    lines.extend(_Explainer().explain(brk) for brk in breaks)
    raise GraphBreakError("\n".join(lines), breaks)


@dataclass(frozen=True)
class _Shown:
    code: str
    column: int
    message: str
    suggestion: str | None


class _Explainer:
    """Names each break with torchlint's finding on its line, or else with the rule for its type."""

    def __init__(self) -> None:
        self._diagnostics: dict[str, list[Diagnostic]] = {}

    def explain(self, brk: Break) -> str:
        shown = self._from_finding(brk) or self._from_rule(brk) or self._from_dynamo(brk)
        message = shown.message
        if brk.frame_skipped:
            message += " [Dynamo skipped the whole frame]"
        if brk.filename is None or brk.lineno is None:
            where = "<unknown>"
        else:
            where = f"{_display_path(brk.filename)}:{brk.lineno}:{shown.column}"
        text = f"{where}: {shown.code} {message}"
        if shown.suggestion:
            text += f"\n  help: {shown.suggestion}"
        return text

    def _from_finding(self, brk: Break) -> _Shown | None:
        if brk.filename is None or brk.lineno is None:
            return None
        covering = [
            diagnostic
            for diagnostic in self._lint(brk.filename)
            if not diagnostic.code.startswith(_META_FAMILY)
            and (diagnostic.noqa_row or diagnostic.location.row)
            <= brk.lineno
            <= diagnostic.end_location.row
        ]
        if not covering:
            return None
        from torchlint.rules import rule_by_code

        def claims(diagnostic: Diagnostic) -> bool:
            rule = rule_by_code(diagnostic.code)
            return rule is not None and brk.gb_type in rule.gb_types

        best = next((d for d in covering if claims(d)), covering[0])
        message = best.message if claims(best) else f"{best.message} {_dynamo_note(brk)}"
        return _Shown(best.code, best.location.column, message, best.suggestion)

    def _from_rule(self, brk: Break) -> _Shown | None:
        rule = _only_rule_for(brk)
        if rule is None:
            return None
        return _Shown(rule.code, 1, f"{rule.message} {_dynamo_note(brk)}", rule.suggestion)

    def _from_dynamo(self, brk: Break) -> _Shown:
        reason = " ".join(brk.reason.split())
        message = brk.gb_type if reason == brk.gb_type else f"{brk.gb_type}: {reason}"
        candidates = _rules_for(brk)
        if candidates:
            # Several rules know this kind of break; which one fits needs the static finding.
            message += f" (see {', '.join(rule.code for rule in candidates)})"
        return _Shown(brk.gb_id or "DYNAMO", 1, message, None)

    def _lint(self, filename: str) -> list[Diagnostic]:
        if filename not in self._diagnostics:
            self._diagnostics[filename] = _lint_file(filename)
        return self._diagnostics[filename]


def _lint_file(filename: str) -> list[Diagnostic]:
    from torchlint.settings.config import Settings
    from torchlint.parse.deep_stack import run_with_deep_stack
    from torchlint.project.resolve import lint_text

    path = Path(filename)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    cwd = Path.cwd().resolve()
    resolved = path.resolve()
    root = cwd if resolved.is_relative_to(cwd) else resolved.parent
    # Only lines Dynamo traced are looked up, so every function may count as compiled code,
    # also where torchlint alone would not have guessed it runs under torch.compile.
    settings = Settings(root=root, entry_points=_function_names(text))
    try:
        return run_with_deep_stack(lambda: lint_text(text, str(resolved), settings))
    except Exception:  # noqa: BLE001 - a lint failure must not hide the breaks themselves
        return []


def _function_names(text: str) -> tuple[str, ...]:
    """Dotted names (``Class.method``, ``outer.inner``) of every function in ``text``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    names: list[str] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    names.append(name)
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return tuple(names)


def _rules_for(brk: Break) -> list[type[Rule]]:
    from torchlint.rules import all_rules

    rules = [rule for rule in all_rules() if brk.gb_type in rule.gb_types]
    narrowed = [rule for rule in rules if brk.gb_id in rule.gb_ids]
    return narrowed or rules


def _only_rule_for(brk: Break) -> type[Rule] | None:
    rules = _rules_for(brk)
    return rules[0] if len(rules) == 1 else None


def _dynamo_note(brk: Break) -> str:
    return f"(Dynamo: {brk.gb_type}, {brk.gb_id})" if brk.gb_id else f"(Dynamo: {brk.gb_type})"


def _display_path(filename: str) -> str:
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd().resolve()))
    except (OSError, ValueError):
        return filename


# -- recompiles ------------------------------------------------------------------------


class RecompileError(AssertionError):
    """torch.compile compiled a frame again too often, or compiled nothing; ``count`` holds
    every frame it compiled."""

    def __init__(self, message: str, count: RecompileCount) -> None:
        super().__init__(message)
        self.count = count


def _one_call(fn: Callable, item: Any) -> tuple[Callable, tuple, dict]:
    if isinstance(item, tuple) and len(item) in (2, 3) and item[0] is fn:
        return fn, tuple(item[1]), dict(item[2]) if len(item) == 3 else {}
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], (tuple, list)) and isinstance(item[1], dict):
        return fn, tuple(item[0]), dict(item[1])
    if isinstance(item, tuple):
        return fn, item, {}
    return fn, (item,), {}


def count_recompiles(fn: Callable, calls: Iterable[Any], *, backend: str = "eager") -> RecompileCount:
    """Compile ``fn`` once (unless it is compiled already), make ``calls`` in order, and count
    what Dynamo compiled, from a fresh Dynamo."""
    from torchlint.verify.recompiles import Compiler, RecompileCount, counting_compiles

    made = 0
    with counting_compiles() as frames:
        compiler = Compiler(backend, None)
        for callee, args, kwargs in (_one_call(fn, item) for item in calls):
            compiler(callee)(*args, **kwargs)
            made += 1
    return RecompileCount(frames, made)


def assert_no_recompiles(fn: Callable, calls: Iterable[Any], *, allowed: int = 1, backend: str = "eager") -> None:
    """Raise ``RecompileError`` when a frame of ``fn`` recompiles more than ``allowed`` times
    over ``calls``, hits the recompile limit, or when nothing is compiled at all."""
    caller = sys._getframe(1).f_code.co_filename
    files = [caller, *([calls.gi_code.co_filename] if hasattr(calls, "gi_code") else [])]
    check_recompiles(count_recompiles(fn, calls, backend=backend), allowed=allowed, files=files)


def check_recompiles(count: RecompileCount, *, allowed: int = 1, files: Sequence[str] = ()) -> None:
    """Raise ``RecompileError`` for a count that recompiles more than ``allowed`` times in a frame
    or compiled nothing. ``files``: where the calls were made, whose findings may name the cause
    (a hook added after compile, `.compile()` of a torch.nn module)."""
    from torchlint.verify.recompile_compare import COMPILED_NOTHING, target_event

    explainer = _RecompileExplainer()
    if count.compiled_nothing:
        lines = [f"torch.compile compiled nothing over {counted_calls(count.calls)}: every call ran eagerly"]
        for file in dict.fromkeys(files):
            lines += explainer.findings(target_event("", COMPILED_NOTHING, file))
        raise RecompileError("\n".join(lines), count)
    frames = count.recompiling(allowed)
    if not frames:
        return
    times = "time" if allowed == 1 else "times"
    noun = "frame" if len(frames) == 1 else "frames"
    lines = [f"{len(frames)} {noun} recompiled more than {allowed} {times} over {counted_calls(count.calls)} under torch.compile:"]
    for frame in frames:
        lines += explainer.frame(frame)
    raise RecompileError("\n".join(lines), count)


def counted_calls(calls: int) -> str:
    return f"{calls} call" + ("" if calls == 1 else "s")


class _RecompileExplainer:
    """Shows a frame, the guards that made it compile again, and torchlint's findings there."""

    def __init__(self) -> None:
        self._diagnostics: dict[str, list[Diagnostic]] = {}

    def frame(self, frame: Frame) -> list[str]:
        from torchlint.verify.recompile_compare import frame_event

        where = f"{_display_path(frame.file)}:{frame.first_line}" if frame.file else "<unknown>"
        text = f"{where} in {frame.function}: {frame.recompiles} recompiles"
        if frame.limit_hit:
            text += ", recompile limit hit (the calls after it ran eagerly)"
        lines = [text]
        # The latest failure at each place the guards name.
        shown: dict[tuple, Any] = {}
        for guard in frame.guards:
            shown[(guard.file, guard.line) if guard.line else (None, guard.guard)] = guard
        for guard in list(shown.values())[-3:]:
            site = f" at {_display_path(guard.file)}:{guard.line}" if guard.file and guard.line else ""
            lines.append(f"  guard failed{site}: {guard.guard}")
        return lines + self.findings(frame_event("", frame.as_json()))

    def findings(self, event: dict) -> list[str]:
        from torchlint.verify.recompile_compare import finding_json, is_recompile_code, matches

        files = {event["file"], *(file for file, _ in event["sites"]), (event["frame"] or {}).get("file")} - {None}
        lines = []
        for file in sorted(files):
            for diagnostic in self._lint(file):
                if is_recompile_code(diagnostic.code) and matches(finding_json(diagnostic), event):
                    location = f"{_display_path(diagnostic.path)}:{diagnostic.location.row}:{diagnostic.location.column}"
                    lines.append(f"  {location}: {diagnostic.code} {diagnostic.message}")
                    if diagnostic.suggestion:
                        lines.append(f"    help: {diagnostic.suggestion}")
        return lines

    def _lint(self, filename: str) -> list[Diagnostic]:
        if filename not in self._diagnostics:
            self._diagnostics[filename] = _lint_file(filename) if os.path.isfile(filename) else []
        return self._diagnostics[filename]


try:
    import pytest
except ImportError:  # the helpers above work without pytest
    pytest = None

if pytest is not None:

    @pytest.fixture
    def torchlint_no_graph_breaks() -> Callable[..., None]:
        """``assert_no_graph_breaks``, for tests that enable ``pytest_plugins = ["torchlint.testing"]``."""
        return assert_no_graph_breaks

    @pytest.fixture
    def torchlint_no_recompiles() -> Callable[..., None]:
        """``assert_no_recompiles``, for tests that enable ``pytest_plugins = ["torchlint.testing"]``."""
        return assert_no_recompiles
