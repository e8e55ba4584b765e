"""TL201's display-only `torch.cond` skeleton: offered for branches that only compute tensors,
never applied by `--fix`, and, written into the code, compiled by Dynamo with `fullgraph=True`
to the same numbers as the branch it stands for."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.settings.config import Settings
from torchlint.report.diagnostic import Applicability
from torchlint.project.resolve import lint_text
from torchlint.fix.fix_edits import splice


def _model(branch: str) -> str:
    return ("import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        y = x * 2\n        z = x + 1\n" + branch + "        return y + z\n")


BRANCHES = {
    "both sides": "        if y.sum() > 0:\n            y = y * 2\n            z = torch.sin(y) + z\n"
                  "        else:\n            z = z.abs()\n",
    "no else": "        if (y * z).mean() > 1:\n            z = z - y[0] * 3\n            y = z.abs()\n",
    "one output": "        if x.max() < 0.5:\n            z = z * 2\n            z = z.exp()\n",
}

SKELETON = """\
        def true_fn(y, z):
            y = y * 2
            z = torch.sin(y) + z
            return y, z

        def false_fn(y, z):
            z = z.abs()
            return y.clone(), z

        y, z = torch.cond(y.sum() > 0, true_fn, false_fn, (y, z))
"""

NOT_OFFERED = (
    "        if y.sum() > 0:\n            print(y)\n            z = z * 2\n",
    "        if y.sum() > 0:\n            z.add_(1)\n            z = z * 2\n",
    "        if y.sum() > 0:\n            z = z * 2\n            n = 3\n",
    "        if y.sum() > 0:\n            z = z * 2\n            fresh = z + 1\n",
)


def _finding(source: str):
    found = [d for d in lint_text(source, "model.py", Settings(root=Path.cwd())) if d.code == "TL201"]
    assert len(found) == 1, found
    return found[0]


def _with_skeleton(source: str) -> str:
    """The source with the display-only fix, which `--fix` never makes, made by hand."""
    finding = _finding(source)
    assert finding.fix is not None and finding.fix.applicability is Applicability.DISPLAY_ONLY
    return splice(source, finding.fix.edits)


def test_the_skeleton_passes_what_the_branches_read_and_returns_what_they_assign():
    assert _with_skeleton(_model(BRANCHES["both sides"])) == _model(SKELETON)


def test_fix_never_applies_the_skeleton():
    finding = _finding(_model(BRANCHES["both sides"]))
    assert not finding.fixable and not finding.fix_applies(unsafe=True)


@pytest.mark.parametrize("branch", NOT_OFFERED)
def test_branches_that_do_more_than_compute_tensors_get_no_skeleton(branch: str):
    assert _finding(_model(branch)).fix is None


@pytest.mark.dynamo
@pytest.mark.parametrize("case", list(BRANCHES))
def test_the_skeleton_compiles_whole_and_gives_the_same_numbers(case: str):
    import torch

    def load(source: str):
        namespace: dict = {}
        exec(compile(source, f"<{case}>", "exec"), namespace)
        return namespace["Net"]()

    original = load(_model(BRANCHES[case]))
    rewritten = load(_with_skeleton(_model(BRANCHES[case])))
    compiled = torch.compile(rewritten, backend="eager", fullgraph=True)
    for sign in (1.0, -1.0):
        x = sign * torch.rand(4, 3)
        torch.testing.assert_close(compiled(x), original(x))
