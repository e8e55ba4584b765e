from __future__ import annotations

import libcst as cst

from torchlint.rules._changing_values import entry_condition, input_size, passed_parameter
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class LoopOverChangingInt(Rule):
    code = "TL703"
    name = "loop-over-changing-int"
    effect = "recompiles"
    message = (
        "a loop over `range()` of a number the caller passes is unrolled into the graph, so every "
        "new value recompiles; loop over a fixed count, or keep the count in a tensor"
    )
    suggestion = (
        "make the count a constant (an attribute set in `__init__`), vectorize the loop, or mark the "
        "size dynamic where a size drives it and work on whole tensors instead of per-index slices"
    )

    def visit_For(self, node: cst.For, ctx: RuleContext) -> None:
        call = node.iter
        if not (isinstance(call, cst.Call) and ctx.qualified_name(call.func) == "builtins.range" and call.args):
            return
        bound = call.args[1].value if len(call.args) > 1 else call.args[0].value
        parameter = passed_parameter(bound, ctx)
        if parameter is not None:
            what = f"`{parameter}`, a number the caller passes"
        else:
            sized = input_size(bound, ctx)
            if sized is None:
                return
            what = f"a size of the input `{sized}`"
        message = (
            f"this loop runs `range()` over {what}: Dynamo unrolls it and guards on the exact value, "
            "so every new value recompiles (up to `recompile_limit`, then the code runs eagerly)"
        )
        ctx.report(type(self), node, message, header_only=True, when=entry_condition(ctx))

    invalid = (
        """
        import torch


        @torch.compile
        def smooth(x, passes):
            for _ in range(passes):
                x = (x + x.roll(1, -1)) / 2
            return x
        """,
        """
        import torch


        class Decoder(torch.nn.Module):
            def forward(self, tokens):
                out = []
                for i in range(tokens.shape[1]):
                    out.append(tokens[:, i] * 2)
                return torch.stack(out, 1)


        decoder = torch.compile(Decoder())
        """,
    )

    valid = (
        """
        import torch


        class Stack(torch.nn.Module):
            def __init__(self, depth=4):
                super().__init__()
                self.depth = depth
                self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(depth))

            def forward(self, x):
                for i in range(self.depth):
                    x = self.layers[i](x)
                for _ in range(3):
                    x = x * 0.5
                return x
        """,
        """
        import torch


        class Heads(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.randn(4, 8))

            def forward(self, x, steps):
                for row in range(self.weight.shape[0]):
                    x = x + self.weight[row]
                return x * steps
        """,
    )
