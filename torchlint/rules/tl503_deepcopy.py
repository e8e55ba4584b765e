from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import positional
from torchlint.rules._untraceable_calls import report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.kind_vocabulary import Kind

_DEEPCOPY = "copy.deepcopy"
_COPY = "copy.copy"
_REMEDY = "use `x.clone()` for a tensor, or make the copy once in `__init__`"
_COPY_REMEDY = "use `x.clone()` for a tensor, `list(xs)` or `dict(d)` for a container, or copy once in `__init__`"


def _holds_tensors(node: cst.BaseExpression, ctx: RuleContext, depth: int = 0) -> bool:
    """A tensor or a module, or a container literal holding one.

    Dynamo deep-copies plain Python objects (a config, a dict of numbers) fine; a value it
    cannot tell stays silent.
    """
    if ctx.kind_of(node) in (Kind.TENSOR, Kind.MODULE):
        return True
    if depth > 4:
        return False
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return any(_holds_tensors(element.value, ctx, depth + 1) for element in node.elements)
    if isinstance(node, cst.Dict):
        return any(
            isinstance(element, cst.DictElement) and _holds_tensors(element.value, ctx, depth + 1)
            for element in node.elements
        )
    return False


class DeepcopyInCompiledCode(Rule):
    code = "TL503"
    name = "deepcopy-in-compiled-code"
    message = (
        "`copy.deepcopy()` of a tensor or module in compiled code breaks the graph; " + _REMEDY
    )
    suggestion = (
        "`y = x.clone()` copies a tensor inside the graph; a module copy (an EMA or teacher "
        "model) belongs in `__init__` (`self.ema = copy.deepcopy(self.model)`), updated in place"
    )
    # `deepcopy` of a tensor or module: GB4198. `copy.copy` breaks on anything: a tensor
    # (GB0208), a module (GB0008), a list or dict (GB0007).
    # torch 2.11 reports a deep copy of a tensor as GB0179.
    gb_ids = ("GB4198", "GB0208", "GB0008", "GB0007", "GB0179")
    gb_types = (
        "Attempted to copy.deepcopy a tensor",
        "torch.* op returned non-Tensor",
        "Attempted to inline function marked as skipped",
        "Attempted to call function marked as skipped",
        "copy.deepcopy()",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if name == _DEEPCOPY:
            args = positional(node)
            # Before torch 2.13 Dynamo deep-copies nothing, plain data included (GB0179).
            if not args or not (ctx.profile.torch_before((2, 13)) or _holds_tensors(args[0].value, ctx)):
                return
            problem = "Dynamo cannot deep-copy tensors or modules"
            remedy = _REMEDY
        elif name == _COPY:
            problem = "Dynamo does not trace `copy.copy`"
            remedy = _COPY_REMEDY
        else:
            return
        report_call(
            type(self), node, ctx, f"`{spelled(node)}` in compiled code breaks the graph ({problem})", remedy
        )

    invalid = (
        """
        import copy

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.online = torch.nn.Linear(8, 8)

            def forward(self, x):
                target = copy.deepcopy(self.online)
                t = target(x).detach()
                return torch.cat([self.online(x), t], dim=-1)
        """,
        """
        import copy

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = copy.deepcopy(x)
            return y * 2
        """,
    )

    valid = (
        """
        import copy

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.online = torch.nn.Linear(8, 8)
                self.target = copy.deepcopy(self.online)
                self.target.requires_grad_(False)

            def forward(self, x):
                t = self.target(x).detach()
                return torch.cat([self.online(x), t], dim=-1)
        """,
        """
        import copy

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            config = copy.deepcopy({"scale": [1.0, 2.0]})
            return x.clone() * config["scale"][1]
        """,
    )
