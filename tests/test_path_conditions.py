"""Findings that hold only on one path: `self.training`, dtype tests, config flags, and the
profile's `mode` that drops what cannot happen in the mode the project compiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import check, write
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text

MODEL = """
import torch

class Net(torch.nn.Module):
    def forward(self, x):
        {body}
        return x
"""


def worded(body: str, **settings) -> list[tuple[str, str]]:
    """(code, what the message says about the path) of each finding in ``body``."""
    root = Path("/project")
    source = MODEL.format(body=body)
    found = lint_text(source, str(root / "pkg" / "model.py"), Settings(root=root, **settings))
    return [(d.code, d.message.partition(" (breaks only ")[2].rstrip(")")) for d in found]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("if self.training:\n            print(x)", [("TL101", "while training")]),
        ("if not self.training:\n            print(x)", [("TL101", "in eval mode")]),
        ("if self.training:\n            pass\n        else:\n            print(x)", [("TL101", "in eval mode")]),
        ("if self.training and torch.rand([]) < 0.1:\n            x = x * 0", [("TL201", "while training")]),
        ("y = x.sum().item() if self.training else 0.0", [("TL301", "while training")]),
        ("self.training and print(x)", [("TL101", "while training")]),
        ("if x.dtype == torch.float16 and not torch.isfinite(x).all():\n            x = x.float()",
         [("TL201", "when `x.dtype == torch.float16`")]),
        ("if self.config.debug:\n            print(x)", [("TL101", "when `self.config.debug`")]),
        ("if not self.config.quiet:\n            print(x)", [("TL101", "when `not self.config.quiet`")]),
        ("if self.training and self.config.debug:\n            print(x)",
         [("TL101", "while training and when `self.config.debug`")]),
        # a tensor tested first breaks whatever follows; `or` and unrelated tests say nothing
        ("if torch.rand([]) < 0.1 and self.training:\n            x = x * 0", [("TL201", "")]),
        ("if self.training or x.numel() > 3:\n            print(x)", [("TL101", "")]),
        ("if x.numel() > 3:\n            print(x)", [("TL101", "")]),
    ],
)
def test_a_finding_says_the_path_it_holds_on(body: str, expected: list) -> None:
    assert worded(body) == expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("both", ["TL101", "TL301", "TL201"]), ("eval", ["TL301", "TL201"]), ("train", ["TL101", "TL201"])],
)
def test_the_mode_drops_what_cannot_happen(mode: str, expected: list) -> None:
    body = (
        "if self.training:\n            print(x)\n        else:\n            x = x * x.sum().item()\n"
        "        if x.sum() > 0:\n            x = x - 1"
    )
    assert [code for code, _ in worded(body, mode=mode)] == expected


def test_the_mode_comes_from_the_configuration(project: Path) -> None:
    write(
        project,
        {
            "pyproject.toml": '[tool.torchlint]\nmode = "eval"\n',
            "model.py": MODEL.format(body="if self.training:\n            print(x)\n        print(x.shape)"),
        },
    )
    assert check("model.py") == [("model.py", 7, "TL101")]
