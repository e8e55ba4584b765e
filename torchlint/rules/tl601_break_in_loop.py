from __future__ import annotations

import libcst as cst

from torchlint.checker import Finding
from torchlint.rules._frame_skips import breaks_by_block, describe, gb_ids_of
from torchlint.rules.base import Rule


class BreakInLoop(Rule):
    code = "TL601"
    name = "break-in-loop"
    message = "a graph break inside a loop makes Dynamo skip the whole function, which then runs eagerly"
    suggestion = (
        "fix the break inside the loop (the related finding says how); where it must stay, move the "
        "loop into a helper so that only the helper runs eagerly"
    )
    gb_ids = ("GB7000",)
    gb_types = ("graph break in loop",)

    def finish_function(self, findings: list[Finding], ctx) -> None:
        for block, inner in breaks_by_block(findings, ctx):
            if isinstance(block, (cst.For, cst.While)):
                keyword = "`for`" if isinstance(block, cst.For) else "`while`"
                ctx.report(
                    type(self),
                    block,
                    describe(inner, f"inside this {keyword} loop", ctx.function.qualname),
                    related=tuple(inner),
                    gb_ids=gb_ids_of(self.gb_ids, inner),
                    header_only=True,
                )
