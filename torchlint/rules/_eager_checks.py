"""Checks that only report: an `if` whose branches log, warn, print or raise, and nothing
else. Such a check can go under the `is_compiling()` guard whole, test and all (TL201, TL206)."""

from __future__ import annotations

import libcst as cst

from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, guard_statement
from torchlint.rules.tl102_logging import is_logger
from torchlint.rules.tl103_warnings import WARN_FUNCTIONS


def eager_check(statement: cst.If, ctx: RuleContext) -> FixPlan | None:
    """The guard that runs a reporting-only check in eager mode only: unsafe, as while
    compiling nothing is checked. None when a branch does anything else."""
    if not reports_only(statement, ctx):
        return None
    return guard_statement(statement, ctx.summary.module, "Check in eager mode only")


def reports_only(statement: cst.If, ctx: RuleContext) -> bool:
    """Every branch of the `if` (and of the `if`s inside it) only logs, warns, prints,
    raises or passes."""
    branches: list[cst.BaseSuite] = [statement.body]
    orelse = statement.orelse
    if isinstance(orelse, cst.If):
        return reports_only(orelse, ctx) and _block_reports_only(statement.body, ctx)
    if isinstance(orelse, cst.Else):
        branches.append(orelse.body)
    return all(_block_reports_only(branch, ctx) for branch in branches)


def _block_reports_only(block: cst.BaseSuite, ctx: RuleContext) -> bool:
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for line in lines:
        if isinstance(line, cst.If):
            if not reports_only(line, ctx):
                return False
        elif isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if not all(_reports(small, ctx) for small in line.body):
                return False
        else:
            return False
    return True


def _reports(small: cst.BaseSmallStatement, ctx: RuleContext) -> bool:
    if isinstance(small, (cst.Raise, cst.Pass)):
        return True
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return False
    func = small.value.func
    name = ctx.qualified_name(func) or ""
    if name == "builtins.print" or name in WARN_FUNCTIONS or name.startswith("logging."):
        return True
    # Every method of a logger reports (`logger.warning_once` too).
    return isinstance(func, cst.Attribute) and is_logger(func.value, ctx)
