from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from torchlint.analysis.conditions import Compiled, any_of
from torchlint.analysis.scopes import lookup_scope
from torchlint.analysis.summary import FileSummary, FunctionInfo
from torchlint.rules._rebinding import is_int_literal, reads, small_statements
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext

_REMEDY = (
    "pass the value to the compiled function as an argument (an int argument that changes costs "
    "one recompile, then stays symbolic), or keep it in a 0-d tensor"
)


def _int_keys(value: cst.BaseExpression | None) -> set[str]:
    """The keys of a dict literal whose values are ints: `{"epoch": 0, "lr": 0.1}` -> {"epoch"}."""
    if not isinstance(value, cst.Dict):
        return set()
    return {
        element.key.evaluated_value
        for element in value.elements
        if isinstance(element, cst.DictElement)
        and isinstance(element.key, cst.SimpleString)
        and isinstance(element.key.evaluated_value, str)
        and is_int_literal(element.value)
    }


def _item_key(node: cst.BaseExpression) -> tuple[str, str] | None:
    """`STATE["epoch"]` -> ("STATE", "epoch")."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1):
        return None
    index = node.slice[0].slice
    if not (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)):
        return None
    key = index.value.evaluated_value
    return (node.value.value, key) if isinstance(key, str) else None


class IntGlobalRebound(Rule):
    code = "TL702"
    name = "int-global-rebound"
    effect = "recompiles"
    message = (
        "an int global read in compiled code is a constant of the graph: rebinding it between calls "
        "recompiles on every new value; " + _REMEDY
    )
    suggestion = _REMEDY

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        summary = ctx.summary
        module = summary.scope
        ints = {name for name, value in module.assignments.items() if is_int_literal(value)}
        items = {(name, key) for name, value in module.assignments.items() for key in _int_keys(value)}
        if not ints and not items:
            return
        rebinds = list(_rebinds(summary, ints, items))
        if not rebinds:
            return
        rebinding = {id(node) for node, _ in rebinds}
        for node, what in rebinds:
            uses = _uses(summary, what, rebinding)
            readers = sorted({use.function.qualname for use in uses if use.function is not None})
            if not readers:
                continue
            shown = what if isinstance(what, str) else f'{what[0]}["{what[1]}"]'
            message = (
                f"`{shown}` holds an int that compiled code reads, a constant of the graph: rebinding it "
                "between calls makes every call recompile (up to `recompile_limit`, then the code runs eagerly)"
            )
            ctx.report(
                type(self), node, message, related=tuple(uses), when=any_of(*(Compiled(r) for r in readers))
            )


def _rebinds(
    summary: FileSummary, ints: set[str], items: set[tuple[str, str]]
) -> Iterator[tuple[cst.CSTNode, str | tuple[str, str]]]:
    """The statements that give an int global (or an int item of a global dict) a new value
    while the program runs: in a function that declares it `global`, or in a loop."""
    module = summary.scope
    for function, scope, statement in small_statements(summary):
        node = statement.node
        if isinstance(node, cst.AugAssign):
            targets, value = [node.target], None
        elif isinstance(node, cst.Assign):
            targets, value = [t.target for t in node.targets], node.value
        else:
            continue
        if value is not None and is_int_literal(value) and not statement.in_loop:
            continue  # setting a fixed number once
        for target in targets:
            if isinstance(target, cst.Name) and target.value in ints:
                rebinds_global = function is not None and target.value in scope.declared_elsewhere
                if rebinds_global or (function is None and statement.in_loop):
                    yield node, target.value
            item = _item_key(target)
            if item is not None and item in items and lookup_scope(scope, item[0]) is module:
                if function is not None or statement.in_loop:
                    yield node, item


def _uses(summary: FileSummary, what: str | tuple[str, str], rebinding: set[int]) -> list[Finding]:
    """Where the functions of the file read the global (or the dict item), the statements that
    rebind it and `global` declarations left out."""
    module = summary.scope

    def is_read(node: cst.CSTNode, function: FunctionInfo) -> bool:
        if isinstance(what, str):
            return type(node) is cst.Name and node.value == what and lookup_scope(function.scope, what) is module
        return type(node) is cst.Subscript and _item_key(node) == what

    shown = what if isinstance(what, str) else f'{what[0]}["{what[1]}"]'
    def skipped(node: cst.CSTNode) -> bool:
        return id(node) in rebinding or type(node) is cst.Global

    return reads(IntGlobalRebound, summary.functions, lambda _: shown, is_read, skipped)


IntGlobalRebound.invalid = (
    """
    import torch

    STEP = 0


    @torch.compile
    def warmup_scale(x):
        return x * min(1.0, (STEP + 1) / 100)


    def train(batches):
        global STEP
        for batch in batches:
            warmup_scale(batch)
            STEP += 1
    """,
    """
    import torch

    STATE = {"epoch": 0, "lr": 0.1}


    class Model(torch.nn.Module):
        def forward(self, x):
            return x * (STATE["epoch"] + 1)


    def train(model, batches):
        for epoch, batch in enumerate(batches):
            STATE["epoch"] = epoch
            model(batch)
    """,
)

IntGlobalRebound.valid = (
    """
    import torch

    SCALE = 0.5
    DEPTH = 4
    STATE = {"lr": 0.1}


    @torch.compile
    def step(x, lr):
        for _ in range(DEPTH):
            x = x * SCALE * STATE["lr"]
        return x * lr


    def train(batches):
        global SCALE
        for i, batch in enumerate(batches):
            SCALE = 1.0 / (i + 1)
            STATE["lr"] = 0.1 / (i + 1)
            step(batch, i)
    """,
    """
    import torch

    SEED = 0


    class Model(torch.nn.Module):
        def forward(self, x):
            return x + SEED


    def main(model, x):
        global SEED
        SEED = 1
        return model(x)
    """,
)
