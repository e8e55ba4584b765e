from __future__ import annotations

from torchlint.diagnostic import Severity
from torchlint.rules.base import Rule


class UnusedNoqa(Rule):
    """Reported by the suppression step: a `# noqa: TLnnn` that suppresses nothing."""

    code = "TL902"
    name = "unused-noqa"
    message = "unused `noqa` directive; remove it, or the codes it no longer needs"
    suggestion = "delete the directive, or the codes in it that no finding uses"
    severity = Severity.WARNING
    compiled_only = False
