"""A file's check costs work in proportion to its size: a name reassigned on every line
of a long function must not make each lookup of what it held scan the earlier lines, nor
a long `elif` chain make each of its blocks pass through every `elif` before it.

Work is counted as the lines of the modules in question that run, which is the same on
every machine and under any load; the seconds are measured in bench/bench_scaling.py."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import libcst as cst

from torchlint.parse import cst_walk
from torchlint.settings.config import Settings
from torchlint.parse.cst_walk import nested_blocks
from torchlint.project.resolve import lint_text
from torchlint.rules import _untraceable_values
from torchlint.analysis import (
    expression_kinds,
    file_kinds,
    kind_flow,
    kind_vocabulary,
    member_kinds,
    parameter_binding,
    shape_facts,
    undo_journal,
)

# The value-kind inference, whose every part runs for each statement.
_KIND_MODULES = (
    kind_vocabulary,
    undo_journal,
    shape_facts,
    expression_kinds,
    parameter_binding,
    kind_flow,
    member_kinds,
    file_kinds,
)

# Linear steps do the same work per line of input at any size; a scan per lookup does
# four times as much per line in a four times larger file.
_MAX_PER_LINE_GROWTH = 1.5


def _executed_lines(work: Callable[[], object], *modules: ModuleType) -> int:
    """The lines of ``modules`` that ``work()`` executes (other code runs untraced)."""
    executed = 0
    filenames = {module.__file__ for module in modules}

    def count_lines(frame, event, arg):
        nonlocal executed
        executed += event == "line"
        return count_lines

    def in_module(frame, event, arg):
        return count_lines if frame.f_code.co_filename in filenames else None

    sys.settrace(in_module)
    try:
        work()
    finally:
        sys.settrace(None)
    return executed


def _one_name_forward(steps: int) -> str:
    """One `forward` whose every `sorted` asks what `h` held before it."""
    step = "        h = x + {}\n        h = sorted(h, key=lambda row: row)\n"
    body = "".join(step.format(i) for i in range(steps))
    return (
        "import torch\nfrom torch import nn\n\n\nclass Deep(nn.Module):\n    def forward(self, x=None):\n"
        f"        h = x\n{body}        print(h)\n        return h\n"
    )


def _work_per_line(text: str, *modules: ModuleType) -> float:
    """The lines of ``modules`` that linting ``text`` runs, per line of ``text``."""
    root = Path("/project")
    found: list = []
    lint = lambda: found.extend(lint_text(text, str(root / "model.py"), Settings(root=root)))  # noqa: E731
    executed = _executed_lines(lint, *modules)
    assert [d.code for d in found] == ["TL101"]  # the `print`: the whole file was checked
    return executed / text.count("\n")


def test_a_name_reassigned_on_every_line_costs_linear_time() -> None:
    small = _work_per_line(_one_name_forward(250), _untraceable_values)
    large = _work_per_line(_one_name_forward(1_000), _untraceable_values)
    assert large / small < _MAX_PER_LINE_GROWTH, f"per-line cost grew {large / small:.2f}x for a 4x larger file"


def _work_per_block(branches: int) -> float:
    chain = cst.parse_module("if n == -1:\n    pass\n" + "".join(f"elif n == {i}:\n    pass\n" for i in range(branches)))
    statement = chain.body[0]
    blocks: list = []
    executed = _executed_lines(lambda: blocks.extend(nested_blocks(statement)), cst_walk)
    assert len(blocks) == branches + 1
    return executed / (branches + 1)


def test_a_long_elif_chain_yields_its_blocks_in_linear_time() -> None:
    small = _work_per_block(500)
    large = _work_per_block(4_000)
    # One generator per `elif`, each handing on the blocks of those after it, made the
    # eight times longer chain cost eight times more per block.
    assert large / small < _MAX_PER_LINE_GROWTH, f"per-block cost grew {large / small:.2f}x for an 8x longer chain"


def _many_names_and_ifs(count: int) -> str:
    """A `forward` that binds a new name and tests it in an `if`, over and over."""
    body = "".join(f"        a{i} = x + {i}\n        if a{i}.shape[0] > 1:\n            y = a{i}\n" for i in range(count))
    return (
        "import torch\nfrom torch import nn\n\n\nclass Wide(nn.Module):\n    def forward(self, x):\n"
        f"        y = x\n{body}        print(y)\n        return y\n"
    )


def test_an_if_costs_what_its_branches_change_not_every_name_the_function_holds() -> None:
    # Copying and joining every known name at each `if` made the four times larger
    # function cost about four times more per line.
    small = _work_per_line(_many_names_and_ifs(150), *_KIND_MODULES)
    large = _work_per_line(_many_names_and_ifs(600), *_KIND_MODULES)
    assert large / small < _MAX_PER_LINE_GROWTH, f"per-line cost grew {large / small:.2f}x for a 4x larger file"
