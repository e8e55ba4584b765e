from __future__ import annotations

import libcst as cst

from torchlint.rules._numpy_api import TRACED, TRACED_FFT, TRACED_LINALG, TRACED_RANDOM
from torchlint.rules._untraceable_calls import report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# The submodules Dynamo maps onto `torch._numpy`, and what each implements.
_TRACED_BY_MODULE = {
    "numpy": TRACED,
    "numpy.random": TRACED_RANDOM,
    "numpy.linalg": TRACED_LINALG,
    "numpy.fft": TRACED_FFT,
}
_SKIPPED_MODULE = "numpy.testing."
# What torch offers in place of the untraced functions code reaches for most.
_TORCH_COUNTERPARTS = {
    "numpy.isin": "`torch.isin`",
    "numpy.in1d": "`torch.isin`",
    "numpy.digitize": "`torch.bucketize`",
    "numpy.nanmean": "`torch.nanmean`",
    "numpy.nansum": "`torch.nansum`",
    "numpy.nanmedian": "`torch.nanmedian`",
    "numpy.insert": "`torch.cat` of the pieces",
    "numpy.lexsort": "stable `torch.argsort` per key, last key first",
    "numpy.random.beta": "`torch.distributions.Beta(a, b).sample()`",
    "numpy.random.gamma": "`torch.distributions.Gamma(shape, rate).sample()`",
    "numpy.random.binomial": "`torch.distributions.Binomial(n, p).sample()`",
    "numpy.random.poisson": "`torch.poisson`",
    "numpy.random.permutation": "`torch.randperm`",
    "numpy.random.default_rng": "a `torch.Generator` made outside the compiled function",
    "numpy.testing.assert_allclose": "`torch.testing.assert_close` outside the compiled function",
    "numpy.testing.assert_almost_equal": "`torch.testing.assert_close` outside the compiled function",
}
_OUTSIDE = "call it outside the compiled function and pass the result in"


def untraced_numpy(name: str | None, trace_numpy: bool) -> str | None:
    """Why Dynamo cannot trace a call to ``name``, or None when it can (or it is no NumPy call)."""
    if name is None or not (name == "numpy" or name.startswith("numpy.")):
        return None
    if not trace_numpy:
        return "`trace_numpy` is off, so Dynamo traces no NumPy call"
    if name.startswith(_SKIPPED_MODULE):
        return "Dynamo skips `numpy.testing`"
    module, _, function = name.rpartition(".")
    traced = _TRACED_BY_MODULE.get(module)
    if traced is None or function in traced:
        return None  # other submodules: not measured
    return "`torch._numpy`, through which Dynamo traces NumPy, has no counterpart for it"


class UntraceableNumpyCall(Rule):
    code = "TL522"
    name = "untraceable-numpy-call"
    message = (
        "a NumPy function Dynamo cannot trace (one `torch._numpy` does not implement, such as `np.insert` or "
        "`np.random.beta`, or any of `numpy.testing`) breaks the graph; use its torch counterpart or "
        + _OUTSIDE
    )
    suggestion = (
        "use the torch counterpart (`torch.isin` for `np.isin`, `torch.bucketize` for `np.digitize`, "
        "`torch.distributions.Beta(a, b).sample()` for `np.random.beta`), or " + _OUTSIDE
    )
    gb_ids = ("GB0294", "GB0293", "GB0007")
    gb_types = (
        "attempted to trace numpy function unsupported by PyTorch",
        "attempted to trace numpy function with config.trace_numpy=False",
        "Attempted to call function marked as skipped",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        why = untraced_numpy(name, ctx.profile.trace_numpy)
        if why is None:
            return
        counterpart = _TORCH_COUNTERPARTS.get(name)
        remedy = f"use {counterpart}, or {_OUTSIDE}" if counterpart else _OUTSIDE
        report_call(type(self), node, ctx, f"`{spelled(node)}` in compiled code breaks the graph ({why})", remedy)

    invalid = (
        """
        import numpy as np
        import torch


        class Mixup(torch.nn.Module):
            def forward(self, x):
                lam = torch.as_tensor(np.random.beta(0.4, 0.4, x.shape[0]), dtype=x.dtype)
                return lam[:, None] * x + (1 - lam[:, None]) * x.flip(0)
        """,
        """
        import numpy as np
        import torch


        @torch.compile
        def keep(labels: torch.Tensor, allowed):
            return torch.as_tensor(np.isin(labels.numpy(), allowed))
        """,
    )

    valid = (
        """
        import numpy as np
        import torch


        class Mixup(torch.nn.Module):
            def forward(self, x):
                lam = torch.distributions.Beta(0.4, 0.4).sample((x.shape[0],))
                return lam[:, None] * x + (1 - lam[:, None]) * x.flip(0) + np.pi * 0
        """,
        """
        import numpy as np
        import torch


        @torch.compile
        def norm(x: torch.Tensor):
            return torch.as_tensor(np.linalg.norm(np.clip(x.numpy(), -1.0, 1.0)))
        """,
    )
