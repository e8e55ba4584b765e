from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_calls import report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# Every function of the C `time` module is skipped by Dynamo; clocks and `sleep` are the
# ones found in model code.
TIME_FUNCTIONS = frozenset(
    f"time.{name}"
    for name in (
        "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
        "process_time", "process_time_ns", "thread_time", "thread_time_ns", "sleep",
        "localtime", "gmtime", "mktime", "ctime", "asctime", "strftime", "strptime", "get_clock_info",
    )
) | {"timeit.default_timer"}


class TimeCall(Rule):
    code = "TL501"
    name = "time-call"
    message = (
        "a `time` call in compiled code breaks the graph (Dynamo skips the `time` module); "
        "time the compiled call from outside or pass the timestamp in"
    )
    suggestion = (
        "take the time around the call to the compiled function "
        "(`start = time.perf_counter(); y = model(x); elapsed = time.perf_counter() - start`), "
        "or pass a timestamp in as an argument"
    )
    gb_ids = ("GB0007",)
    gb_types = ("Attempted to call function marked as skipped",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) in TIME_FUNCTIONS:
            report_call(
                type(self),
                node,
                ctx,
                f"`{spelled(node)}` in compiled code breaks the graph (Dynamo skips the `time` module)",
                "time the compiled call from outside or pass the timestamp in",
            )

    invalid = (
        """
        import time

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.last_ms = 0.0

            def forward(self, x):
                start = time.perf_counter()
                y = torch.relu(self.proj(x))
                self.last_ms = (time.perf_counter() - start) * 1e3
                return y.sum(dim=-1)
        """,
        """
        import time

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            stamp = time.time()
            return x * 2, stamp
        """,
    )

    valid = (
        """
        import time

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = torch.relu(self.proj(x))
                return y.sum(dim=-1)


        def timed(model, x):
            start = time.perf_counter()
            y = model(x)
            return y, (time.perf_counter() - start) * 1e3
        """,
        """
        import time

        import torch


        @torch.compile
        def step(x: torch.Tensor, stamp: float):
            if not torch.compiler.is_compiling():
                stamp = time.time()
            return x * 2, stamp
        """,
    )
