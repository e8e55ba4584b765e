"""Fixes beyond the rule pages' Examples, proved the same way: the fixed code compiles whole
under Dynamo and gives the numbers the original gives eagerly."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_fix import CHECK, RAISES
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text
from torchlint.fix.fixing import fix_text


def _fixed(source: str) -> str:
    result = fix_text(source, lambda text: lint_text(text, "model.py", Settings(root=Path.cwd())), True, "model.py")
    assert result.fixed and result.problem is None
    return result.text


def _load(source: str, name: str):
    """An instance of the module class ``name`` that ``source`` defines."""
    namespace: dict = {}
    exec(compile(source, "model.py", "exec"), namespace)
    return namespace[name]()


@pytest.mark.dynamo
def test_a_check_run_in_eager_mode_only_compiles_whole():
    import torch

    original, fixed = _load(CHECK, "Net"), _load(_fixed(CHECK), "Net")
    compiled = torch.compile(fixed, backend="eager", fullgraph=True)
    x = torch.rand(4, 3)
    torch.testing.assert_close(compiled(x, pad=2), original(x, pad=2))


@pytest.mark.dynamo
def test_a_check_on_the_device_compiles_whole_and_still_fails():
    import torch

    fixed = _load(_fixed(RAISES), "Net")
    compiled = torch.compile(fixed, backend="eager", fullgraph=True)
    x = torch.rand(4, 3)
    torch.testing.assert_close(compiled(x), x * 2)
    with pytest.raises(RuntimeError):
        compiled(torch.full((4, 3), float("nan")))


# A scheduler step as diffusers writes it: the table is read at `prev_t` unless it went below
# zero, where a constant takes its place. Read as `table[prev_t]`, a 0-d index computed in the
# graph breaks there; the fix reads it through a one-element index.
INDEX_GUARD = """\
import torch


class Step(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("alphas_cumprod", torch.linspace(0.99, 0.01, 10))
        self.register_buffer("one", torch.tensor(1.0))

    def forward(self, sample: torch.Tensor, t: torch.Tensor):
        prev_t = t - 3
        alpha_prod_t_prev = self.alphas_cumprod[prev_t] if prev_t >= 0 else self.one
        return sample * alpha_prod_t_prev
"""


@pytest.mark.dynamo
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_an_index_guard_picked_with_torch_where_compiles_whole_on_both_sides_of_it(backend: str):
    import torch

    fixed_source = _fixed(INDEX_GUARD)
    assert "torch.where(prev_t >= 0, self.alphas_cumprod[prev_t.reshape(1)].squeeze(0), self.one)" in fixed_source
    original, fixed = _load(INDEX_GUARD, "Step"), _load(fixed_source, "Step")
    compiled = torch.compile(fixed, backend=backend, fullgraph=True)
    sample = torch.rand(2, 3)
    for t in (9, 3, 2, 0):
        torch.testing.assert_close(compiled(sample, torch.tensor(t)), original(sample, torch.tensor(t)))
