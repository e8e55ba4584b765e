"""Fixes beyond the rule pages' Examples, proved the same way: the fixed code compiles whole
under Dynamo and gives the numbers the original gives eagerly."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_fix import CHECK, RAISES
from torchlint.config import Settings
from torchlint.engine import lint_text
from torchlint.fixing import fix_text


def _fixed(source: str) -> str:
    result = fix_text(source, lambda text: lint_text(text, "model.py", Settings(root=Path.cwd())), True, "model.py")
    assert result.fixed and result.problem is None
    return result.text


@pytest.mark.dynamo
def test_a_check_run_in_eager_mode_only_compiles_whole():
    import torch

    def load(source: str):
        namespace: dict = {}
        exec(compile(source, "model.py", "exec"), namespace)
        return namespace["Net"]()

    original, fixed = load(CHECK), load(_fixed(CHECK))
    compiled = torch.compile(fixed, backend="eager", fullgraph=True)
    x = torch.rand(4, 3)
    torch.testing.assert_close(compiled(x, pad=2), original(x, pad=2))


@pytest.mark.dynamo
def test_a_check_on_the_device_compiles_whole_and_still_fails():
    import torch

    namespace: dict = {}
    exec(compile(_fixed(RAISES), "model.py", "exec"), namespace)
    fixed = namespace["Net"]()
    compiled = torch.compile(fixed, backend="eager", fullgraph=True)
    x = torch.rand(4, 3)
    torch.testing.assert_close(compiled(x), x * 2)
    with pytest.raises(RuntimeError):
        compiled(torch.full((4, 3), float("nan")))
