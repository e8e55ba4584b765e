from __future__ import annotations

from torchlint.report.diagnostic import Applicability, Severity
from torchlint.rules.base import Rule


class UnusedNoqa(Rule):
    """Reported by the suppression step: a `# noqa: TLnnn` that suppresses nothing."""

    code = "TL902"
    name = "unused-noqa"
    message = "unused `noqa` directive; remove it, or the codes it no longer needs"
    suggestion = "delete the directive, or the codes in it that no finding uses"
    severity = Severity.WARNING
    fixes = (Applicability.SAFE,)
    compiled_only = False

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)  # noqa: TL101
                return torch.relu(y)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            print("step", x.shape)  # noqa: TL101, TL301
            return x * 2
        """,
    )

    valid = (
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            print("step", x.shape)  # noqa: TL101
            return x * 2
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2  # noqa: E501
            return y + 1  # noqa
        """,
    )
