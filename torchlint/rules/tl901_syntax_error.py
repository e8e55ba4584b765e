from __future__ import annotations

from torchlint.rules.base import Rule


class SyntaxErrorRule(Rule):
    """Reported by the engine when a file does not parse; it has no detector."""

    code = "TL901"
    name = "syntax-error"
    message = "the file does not parse, so it was not checked"
    compiled_only = False

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def forward(self, x)
                return torch.relu(x)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return torch.relu(x * (x + 1)
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor, *, scale: float = 1.0) -> torch.Tensor:
            if (width := x.shape[-1]) > 4:
                x = x[..., :4]
            return torch.relu(x) * scale * width
        """,
    )
