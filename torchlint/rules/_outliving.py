"""Whether a value a compiled function makes outlives its graph: the function returns or yields
it, or a value computed from it, or takes gradients with it. Dynamo ends the graph at each of
those with the value alive."""

from __future__ import annotations

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.rules.context import RuleContext
from torchlint.analysis.summary import target_names

_GRADIENT_CALLS = frozenset(
    {
        "torch.autograd.grad",
        "torch.autograd.backward",
        "torch.autograd.functional.jacobian",
        "torch.autograd.functional.hessian",
        "torch.autograd.functional.vjp",
        "torch.autograd.functional.jvp",
        "torch.func.vjp",
        "torch.func.jvp",
    }
)


def outlives_the_graph(name: str, ctx: RuleContext) -> bool:
    """Whether the compiled function returns or yields ``name`` or a value computed from it, or
    hands one to a call that takes gradients (`torch.autograd.grad`, `.backward()`)."""
    function = ctx.function
    if function is None:
        return False
    names = _derived(name, function.node)
    found = False

    def visit(node: cst.CSTNode) -> bool:
        nonlocal found
        if isinstance(node, (cst.Return, cst.Yield)) and node.value is not None:
            found = found or _reads(node.value, names)
        elif isinstance(node, cst.Call) and (
            ctx.qualified_name(node.func) in _GRADIENT_CALLS
            or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward")
        ):
            found = found or _reads(node, names)
        return found

    walk(function.node, visit)
    return found


def _reads(node: cst.CSTNode, names: set[str]) -> bool:
    """Whether ``node`` reads one of ``names`` other than through `.detach()`, which keeps no
    link to it."""
    found = False

    def visit(child: cst.CSTNode) -> bool:
        nonlocal found
        if isinstance(child, cst.Call) and isinstance(child.func, cst.Attribute) and child.func.attr.value == "detach":
            return True
        found = found or (isinstance(child, cst.Name) and child.value in names)
        return found

    walk(node, visit)
    return found


def _derived(name: str, body: cst.CSTNode) -> set[str]:
    """``name`` and the names assigned from it, directly or through others."""
    assignments: list[cst.Assign] = []
    walk(body, lambda node: assignments.append(node) if isinstance(node, cst.Assign) else None)
    names = {name}
    grown = True
    while grown:
        grown = False
        for assign in assignments:
            if not _reads(assign.value, names):
                continue
            for target in assign.targets:
                new = set(target_names(target.target)) - names
                if new:
                    names |= new
                    grown = True
    return names
