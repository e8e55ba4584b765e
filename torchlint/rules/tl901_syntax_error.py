from __future__ import annotations

from torchlint.rules.base import Rule


class SyntaxErrorRule(Rule):
    """Reported by the engine when a file does not parse; it has no detector."""

    code = "TL901"
    name = "syntax-error"
    message = "the file does not parse, so it was not checked"
    compiled_only = False
