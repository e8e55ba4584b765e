"""What the TL5xx call rules share: which call built a value, and how a finding is worded.

These rules match a call by the callee's qualified name (`time.perf_counter`,
`torch.manual_seed`) or by what its receiver was built from (`self._lock` assigned
`threading.Lock()` in `__init__`, a handle from `ctypes.CDLL(...)`).
"""

from __future__ import annotations

import libcst as cst

from torchlint.rules._side_effects import shown_name
from torchlint.rules.context import RuleContext
from torchlint.analysis.scopes import lookup_scope


def built_by(node: cst.BaseExpression | None, names: frozenset[str], ctx: RuleContext) -> cst.Call | None:
    """The call to one of ``names`` that made ``node``: the node itself, or what the local
    name, module global or ``self.<attr>`` was assigned from."""
    if node is None:
        return None
    for value in (node, ctx.assigned_value(node)):
        if isinstance(value, cst.Call) and ctx.qualified_name(value.func) in names:
            return value
    return None


def method_receiver(node: cst.Call) -> cst.BaseExpression | None:
    """``obj`` in ``obj.method(...)``."""
    return node.func.value if isinstance(node.func, cst.Attribute) else None


def report_call(
    rule, node: cst.CSTNode, ctx: RuleContext, problem: str, remedy: str, suggestion: str | None = None
) -> None:
    """Report ``<problem>; <remedy>``."""
    ctx.report(rule, node, f"{problem}; {remedy}", suggestion)


def spelled(node: cst.Call) -> str:
    """The call as the source spells it, for messages: `time.perf_counter()`."""
    return f"{shown_name(node)}()"


def module_level(spelled: str, ctx: RuleContext) -> bool:
    """Whether the first name of ``spelled`` (`lookup`, `cache.lookup`) is bound at the module's
    top level, where the project index names imports; a local of the same name is something else."""
    return lookup_scope(ctx.scope, spelled.split(".", 1)[0]) is ctx.summary.scope
