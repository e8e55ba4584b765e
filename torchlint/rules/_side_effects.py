"""What the side-effect rules (TL1xx) share: how they name a call and the guard rewrite."""

from __future__ import annotations

import libcst as cst

from torchlint.semantic.scopes import dotted_name

GUARD_SUGGESTION = (
    "run it only in eager mode: `if not torch.compiler.is_compiling(): {call}(...)`, "
    "or move it out of the compiled function"
)


def shown_name(call: cst.Call) -> str:
    """How the call is spelled in the source, for messages (`logger.info`, `print`)."""
    return dotted_name(call.func) or "call"
