from __future__ import annotations

import libcst as cst

from torchlint.checker import Finding
from torchlint.rules._frame_skips import breaks_by_block, describe, gb_ids_of
from torchlint.rules.base import Rule


class BreakInContextManager(Rule):
    code = "TL603"
    name = "break-in-context-manager"
    message = (
        "a graph break inside a `with` block of a user-defined context manager makes Dynamo skip the "
        "whole function, which then runs eagerly"
    )
    suggestion = (
        "fix the break inside the `with` block (the related finding says how), or move the breaking "
        "call out of the block"
    )
    gb_ids = ("GB0066",)
    gb_types = ("Graph break under GenericContextWrappingVariable",)

    def finish_function(self, findings: list[Finding], ctx) -> None:
        for block, inner in breaks_by_block(findings, ctx):
            if isinstance(block, cst.With):
                ctx.report(
                    type(self),
                    block,
                    describe(inner, "inside this `with` block", ctx.function.qualname),
                    related=tuple(inner),
                    gb_ids=gb_ids_of(self.gb_ids, inner),
                    header_only=True,
                )
