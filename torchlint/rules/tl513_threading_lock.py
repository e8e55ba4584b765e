from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_calls import built_by, method_receiver, report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

LOCK_CLASSES = frozenset(
    f"threading.{name}" for name in ("Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition")
)
_REMEDY = "take the lock around the call to the compiled function instead"


class ThreadingLock(Rule):
    code = "TL513"
    name = "threading-lock"
    message = (
        "a `threading` lock in compiled code breaks the graph, and `with lock:` makes Dynamo run the "
        "whole function eagerly; " + _REMEDY
    )
    suggestion = (
        "keep the lock out of the traced code: `with lock: y = compiled_model(x)` in the caller, "
        "with the lock made in `__init__` or at module level"
    )
    # Creating: GB0007 (Lock, Semaphore) or GB0156 (RLock, Condition); `acquire()` and the
    # other methods: GB0156; entering with `with`: GB0142, and the frame is skipped.
    gb_ids = ("GB0142", "GB0007", "GB0156")
    gb_types = (
        "Unsupported context manager",
        "Attempted to call function marked as skipped",
        "Unsupported method call",
    )

    def visit_With(self, node: cst.With, ctx: RuleContext) -> None:
        lock = next((item.item for item in node.items if built_by(item.item, LOCK_CLASSES, ctx)), None)
        if lock is None:
            return
        # Dynamo gives up on the frame at the first lock: one finding per `with`, and
        # `with threading.Lock():` is not reported again as a creation.
        for item in node.items:
            if built_by(item.item, LOCK_CLASSES, ctx):
                ctx.handled.add(id(item.item))
        problem = (
            "entering a `threading` lock in compiled code breaks the graph (Dynamo cannot enter a lock)"
            if ctx.in_fullgraph  # nothing is skipped: the compile fails
            else "entering a `threading` lock in compiled code makes Dynamo skip the whole function "
            "(it cannot enter a lock), so it runs eagerly"
        )
        report_call(type(self), lock, ctx, problem, _REMEDY)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if id(node) in ctx.handled:
            return
        if ctx.qualified_name(node.func) in LOCK_CLASSES:
            problem = f"creating a lock (`{spelled(node)}`) in compiled code breaks the graph"
        else:
            receiver = method_receiver(node)
            if receiver is None or isinstance(receiver, cst.Call) or built_by(receiver, LOCK_CLASSES, ctx) is None:
                return
            problem = f"`{spelled(node)}` on a `threading` lock in compiled code breaks the graph"
        report_call(type(self), node, ctx, f"{problem} (Dynamo cannot trace thread primitives)", _REMEDY)

    invalid = (
        """
        import threading

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self._lock = threading.Lock()
                self.batch_sizes = []

            def forward(self, x):
                with self._lock:
                    self.batch_sizes.append(x.shape[0])
                return torch.relu(self.proj(x))
        """,
        """
        import threading

        import torch

        _LOCK = threading.Lock()


        @torch.compile
        def step(x: torch.Tensor):
            _LOCK.acquire()
            y = x * 2
            _LOCK.release()
            return y
        """,
    )

    valid = (
        """
        import threading

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                return torch.relu(self.proj(x))


        class Server:
            def __init__(self, model):
                self.model = model
                self._lock = threading.Lock()
                self.calls = 0

            def __call__(self, x):
                with self._lock:
                    self.calls += 1
                    return self.model(x)
        """,
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                with torch.no_grad():
                    y = self.proj(x)
                return y
        """,
    )
