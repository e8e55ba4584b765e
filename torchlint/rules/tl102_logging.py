from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._side_effects import GUARD_SUGGESTION, eager_only, shown_name
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})
_LOGGER_FACTORIES = ("getLogger", "get_logger")


def _is_logger_factory(call: cst.BaseExpression, ctx: RuleContext) -> bool:
    if not isinstance(call, cst.Call):
        return False
    name = ctx.qualified_name(call.func)
    return name is not None and name.rsplit(".", 1)[-1] in _LOGGER_FACTORIES


def is_logger(receiver: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A `logging.Logger`: built by getLogger/get_logger here, or bound to one."""
    if ctx.qualified_name(receiver) == "logging.root":
        return True
    return _is_logger_factory(receiver, ctx) or _is_logger_factory(ctx.assigned_value(receiver), ctx)


class LoggingInCompiledCode(Rule):
    code = "TL102"
    name = "logging-in-compiled-code"
    message = (
        "logging call in compiled code breaks the graph (Dynamo does not trace logging); "
        "guard it with `torch.compiler.is_compiling()` or move it out"
    )
    suggestion = GUARD_SUGGESTION.format(call="logger.info")
    # The id depends on the spelling: a logger variable, the logging module's functions, or a
    # logger method called straight on `logging.getLogger(...)`. torch 2.11 reports the
    # module's functions as an unsupported method call (GB0156) instead of GB4841.
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0291", "GB4841", "GB6215", "GB0156")
    gb_types = (
        "logging.Logger method not supported for non-export cases",
        "Unsupported python_type() call",
        "Unresolved GetAttrVariable comparison",
        "Unsupported method call",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        module_function = func.attr.value in LOG_METHODS and ctx.qualified_name(func) == f"logging.{func.attr.value}"
        # Dynamo reorders the logging module's functions when told to; a Logger's methods it does not.
        if module_function and ctx.profile.reorders(f"logging.{func.attr.value}"):
            return
        # Every Logger method breaks, `isEnabledFor` and `setLevel` as much as `info`.
        if module_function or is_logger(func.value, ctx):
            shown = shown_name(node)
            ctx.report(
                type(self),
                node,
                message=f"`{shown}()` in compiled code breaks the graph (Dynamo does not trace "
                "logging); guard it with `torch.compiler.is_compiling()` or move it out",
                suggestion=GUARD_SUGGESTION.format(call=shown),
                fix=eager_only(node, ctx),
            )

    invalid = (
        """
        import logging

        import torch

        logger = logging.getLogger(__name__)


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                logger.info("y shape %s", y.shape)
                return y
        """,
        """
        import logging

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            logging.info("module level logging")
            return x * 2
        """,
    )

    valid = (
        """
        import logging

        import torch

        logger = logging.getLogger(__name__)


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                if not torch.compiler.is_compiling():
                    logger.info("y shape %s", y.shape)
                return y
        """,
        """
        import logging

        import torch

        logger = logging.getLogger(__name__)


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                logger.info("built %s", self.proj)

            def forward(self, x):
                return self.proj(x)
        """,
    )
