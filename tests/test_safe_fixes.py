"""Safe fixes, which plain `--fix` applies: an explicit graph break deleted, unused `noqa`
codes removed. Through the command, on real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import write
from test_fix import torchlint


def _forward(body: str) -> str:
    return ("import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        y = x * 2\n" + body + "        return y\n")


GRAPH_BREAKS = {
    # deleted with its row; `pass` where it was the block's only statement
    "        torch._dynamo.graph_break()\n": "",
    "        if x.shape[0] > 1:\n            torch._dynamo.graph_break()\n":
        "        if x.shape[0] > 1:\n            pass\n",
    # two that are all their block holds leave one `pass`
    "        for _ in range(2):\n            torch._dynamo.graph_break()\n            torch._dynamo.graph_break()\n":
        "        for _ in range(2):\n            pass\n",
}

GRAPH_BREAKS_KEPT = (
    # a comment on its row, a row shared with other code, a value that is used
    "        torch._dynamo.graph_break()  # split here on purpose\n",
    "        y = y + 1; torch._dynamo.graph_break()\n",
    "        z = torch._dynamo.graph_break()\n",
)


@pytest.mark.parametrize("before", list(GRAPH_BREAKS))
def test_an_explicit_graph_break_is_deleted_by_plain_fix(project: Path, before: str) -> None:
    write(project, {"model.py": _forward(before)})
    assert torchlint("model.py", "--fix", cwd=project).returncode == 0
    assert (project / "model.py").read_text() == _forward(GRAPH_BREAKS[before])


@pytest.mark.parametrize("body", GRAPH_BREAKS_KEPT)
def test_a_graph_break_that_shares_its_row_is_left(project: Path, body: str) -> None:
    write(project, {"model.py": _forward(body)})
    torchlint("model.py", "--fix", cwd=project)
    assert (project / "model.py").read_text() == _forward(body)


NOQA = """\
import torch


@torch.compile
def step(x: torch.Tensor):
    print("step", x.shape)  # noqa: TL101, TL301
    y = x * 2  # noqa: TL101
    # noqa: TL101
    z = y + 1  # type: int  # noqa: TL301, E501
    w = z  # noqa: TL301 kept words
    return w  # noqa: TL999
"""

NOQA_FIXED = """\
import torch


@torch.compile
def step(x: torch.Tensor):
    print("step", x.shape)  # noqa: TL101
    y = x * 2
    z = y + 1  # type: int  # noqa: E501
    w = z  # kept words
    return w
"""


def test_unused_noqa_codes_are_removed_and_the_rest_kept(project: Path) -> None:
    write(project, {"model.py": NOQA})
    result = torchlint("model.py", "--fix", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "model.py").read_text() == NOQA_FIXED
    assert torchlint("model.py", "--fix", cwd=project).returncode == 0
    assert (project / "model.py").read_text() == NOQA_FIXED
