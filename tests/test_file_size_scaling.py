"""A file's check costs time in proportion to its size: a name reassigned on every line
of a long function must not make each lookup of what it held scan the earlier lines, nor
a long `elif` chain make each of its blocks pass through every `elif` before it."""

from __future__ import annotations

import time
from pathlib import Path

import libcst as cst

from torchlint.config import Settings
from torchlint.cst_walk import nested_blocks
from torchlint.deep_stack import run_with_deep_stack
from torchlint.engine import lint_text

# With a scan per lookup the four times larger file cost 6.5 times more per line here;
# linear steps about 1.3 times (garbage collection over a larger heap, noise).
_MAX_PER_LINE_GROWTH = 3.0


def _one_name_forward(steps: int) -> str:
    """One `forward` whose every `sorted` asks what `h` held before it."""
    step = "        h = x + {}\n        h = sorted(h, key=lambda row: row)\n"
    body = "".join(step.format(i) for i in range(steps))
    return (
        "import torch\nfrom torch import nn\n\n\nclass Deep(nn.Module):\n    def forward(self, x):\n"
        f"        h = x\n{body}        print(h)\n        return h\n"
    )


def _seconds_per_line(text: str) -> float:
    root = Path("/project")
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        diagnostics = lint_text(text, str(root / "model.py"), Settings(root=root))
        best = min(best, time.process_time() - start)
    assert [d.code for d in diagnostics] == ["TL101"]  # the `print`: the whole file was checked
    return best / text.count("\n")


def test_a_name_reassigned_on_every_line_costs_linear_time() -> None:
    small = _seconds_per_line(_one_name_forward(1_000))
    large = _seconds_per_line(_one_name_forward(4_000))
    assert large / small < _MAX_PER_LINE_GROWTH, f"per-line cost grew {large / small:.2f}x for a 4x larger file"


def _seconds_per_block(branches: int) -> float:
    chain = cst.parse_module("if n == -1:\n    pass\n" + "".join(f"elif n == {i}:\n    pass\n" for i in range(branches)))
    statement = chain.body[0]

    def blocks() -> float:
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            count = sum(1 for _ in nested_blocks(statement))
            best = min(best, time.process_time() - start)
        assert count == branches + 1
        return best

    return run_with_deep_stack(blocks) / (branches + 1)


def test_a_long_elif_chain_yields_its_blocks_in_linear_time() -> None:
    small = _seconds_per_block(1_000)
    large = _seconds_per_block(8_000)
    # One generator per `elif`, each handing on the blocks of those after it, made the
    # eight times longer chain cost about eight times more per block.
    assert large / small < _MAX_PER_LINE_GROWTH, f"per-block cost grew {large / small:.2f}x for an 8x longer chain"
