from __future__ import annotations

import libcst as cst

from torchlint.rules._changing_values import entry_condition, passed_parameter
from torchlint.rules._setup_code import CompileSite, compile_sites
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# Tensor ops whose Python-number keyword inductor bakes into the kernel as a constant.
_SCALAR_KEYWORDS = {
    "alpha": frozenset({"add", "add_", "sub", "sub_", "torch.add", "torch.sub"}),
    "value": frozenset({"addcmul", "addcmul_", "addcdiv", "addcdiv_", "torch.addcmul", "torch.addcdiv"}),
    "weight": frozenset({"lerp", "lerp_", "torch.lerp"}),
}
# Where the scalar may come positionally: `t.lerp_(end, weight)`, `torch.lerp(start, end, weight)`.
_SCALAR_POSITIONS = {"lerp": 1, "lerp_": 1, "torch.lerp": 2}
def _named_backend(site: CompileSite) -> str | None:
    """The backend a compile site names (`backend="eager"`); None for the default, inductor."""
    node = site.node.decorator if isinstance(site.node, cst.Decorator) else site.node
    if not isinstance(node, cst.Call):
        return None  # a bare `@torch.compile`
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "backend":
            value = arg.value
            return value.evaluated_value if isinstance(value, cst.SimpleString) else "?"
    return None


class FloatScalarUnderInductor(Rule):
    code = "TL708"
    name = "float-scalar-under-inductor"
    effect = "recompiles"
    message = (
        "a Python float the caller passes as a scalar argument (`alpha=`, `value=`, a `lerp` weight) is a constant of the "
        "inductor kernel, so every new value recompiles; pass a tensor or multiply instead"
    )
    suggestion = (
        "fold the scalar into the tensor arithmetic (`p.add_(g * -lr)`, `p.addcdiv_(a * -lr, b)`) or "
        "keep it in a 0-d tensor (`lr = torch.tensor(0.01)`), as `torch.optim` does with `capturable`"
    )
    backends = ("inductor",)
    _other_backend = False

    def start_file(self, ctx: RuleContext) -> None:
        # Where every compile site of the file names another backend, nothing bakes the scalar in.
        backends = [_named_backend(site) for site in compile_sites(ctx.summary, ctx.call_index)]
        self._other_backend = bool(backends) and all(b not in (None, "inductor") for b in backends)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if self._other_backend:
            return
        op = _op_name(node, ctx)
        for position, arg in enumerate(node.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword is None and op is not None and _SCALAR_POSITIONS.get(op) == position:
                keyword = "weight"
            if keyword not in _SCALAR_KEYWORDS or op not in _SCALAR_KEYWORDS[keyword]:
                continue
            parameter = passed_parameter(arg.value, ctx, items=True)
            if parameter is None or isinstance(arg.value, (cst.Integer, cst.Float)):
                continue
            message = (
                f"`{keyword}=` takes a Python number the caller passes (through `{parameter}`): inductor makes it a "
                "constant of the kernel, so every new value recompiles (up to `recompile_limit`)"
            )
            ctx.report(type(self), arg, message, when=entry_condition(ctx))

    invalid = (
        """
        import torch


        @torch.compile
        def sgd_step(param, grad, lr: float):
            param.add_(grad, alpha=-lr)
            return param
        """,
        """
        import torch


        @torch.compile
        def adam_update(param, exp_avg, denom, group):
            param.addcdiv_(exp_avg, denom, value=-group["lr"])
            return param
        """,
        """
        import torch


        @torch.compile
        def sgd_step(param, grad, lr: float):
            param.add_(grad, alpha=-lr)
            return param


        probe = torch.compile(torch.nn.Identity(), backend="eager")
        """,
    )

    valid = (
        """
        import torch


        @torch.compile
        def sgd_step(param, grad, lr: torch.Tensor):
            param.add_(grad * -lr)
            return param.add_(grad, alpha=0.5)
        """,
        """
        import torch


        @torch.compile(backend="eager")
        def sgd_step(param, grad, lr: float):
            param.add_(grad, alpha=-lr)
            return param
        """,
    )


def _op_name(node: cst.Call, ctx: RuleContext) -> str | None:
    """`add_` for `t.add_(...)`, `torch.add` for `torch.add(...)`: with these keywords, only a
    tensor's methods go by these names."""
    name = ctx.qualified_name(node.func)
    if name is not None and name.startswith("torch."):
        return name
    func = node.func
    return func.attr.value if isinstance(func, cst.Attribute) else None
