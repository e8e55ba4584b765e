"""TL6xx: a break inside a loop, a `try` body or an unmodelled `with` block skips the frame."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from helpers import findings
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text

HEADER = """
import contextlib
import torch
from torch import nn
from torch.nn.attention import sdpa_kernel


@contextlib.contextmanager
def tagged(module):
    yield module


class Timer:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Net(nn.Module):
    def forward(self, x: torch.Tensor):
"""


def forward_with(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body), " " * 8) + "        return x\n"


def _codes_by_row(source: str, **settings) -> dict[int, list[str]]:
    by_row: dict[int, list[str]] = {}
    for code, row in findings(source, **settings):
        by_row.setdefault(row, []).append(code)
    return by_row


FIRST = HEADER.count("\n") + 1  # the body's first line


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("for i in range(2):\n    print(i)\n", "TL601"),
        ("while x.shape[0] > 100:\n    x = x[: x.sum().item()]\n", "TL601"),
        ("for i in range(2):\n    if x.sum() > 0:\n        x = -x\n", "TL601"),
        ("try:\n    print(x.shape)\nexcept ValueError:\n    pass\n", "TL602"),
        ("with tagged(self):\n    print(x.shape)\n", "TL603"),
        ("with Timer():\n    print(x.shape)\n", "TL603"),
        ("with torch.no_grad(), Timer():\n    print(x.shape)\n", "TL603"),
    ],
)
def test_a_break_in_the_block_is_reported_on_the_block(body: str, code: str):
    by_row = _codes_by_row(forward_with(body))
    assert code in by_row[FIRST], by_row
    inner = [c for row, cs in by_row.items() if row > FIRST for c in cs]
    assert inner, "the inner break keeps its own finding"


@pytest.mark.parametrize(
    "body",
    [
        "for i in range(2):\n    x = x + i\n",
        "for i in range(2):\n    x = x + i\nelse:\n    print('done')\n",  # resumable
        "for v in x.tolist():\n    x = x + v\n",  # the break is in the header
        "while x.sum() > 0:\n    x = x - 1\n",  # and in the condition
        "try:\n    x = x * 2\nfinally:\n    print('f')\n",
        "try:\n    x = x * 2\nexcept ValueError:\n    print('e')\n",
        "with torch.no_grad():\n    print(x.shape)\n",
        "with torch.autocast('cpu'):\n    print(x.shape)\n",
        "with sdpa_kernel([]):\n    print(x.shape)\n",  # imported: not this file's
        "with contextlib.nullcontext():\n    print(x.shape)\n",
        "for i in range(2):\n    if not torch.compiler.is_compiling():\n        print(i)\n",
    ],
)
def test_no_frame_skip_finding_without_a_break_inside_the_body(body: str):
    by_row = _codes_by_row(forward_with(body))
    assert not {c for cs in by_row.values() for c in cs if c.startswith("TL6")}, by_row


def test_a_break_counts_for_its_innermost_block_only():
    body = "for i in range(2):\n    try:\n        print(i)\n    except ValueError:\n        pass\n"
    by_row = _codes_by_row(forward_with(body))
    assert by_row[FIRST + 1] == ["TL602"]
    assert "TL601" not in by_row.get(FIRST, [])


def test_one_finding_per_block_names_every_break():
    source = forward_with("for i in range(2):\n    print(i)\n    x = x + x.sum().item()\n")
    [loop] = [d for d in _lint(source) if d.code == "TL601"]
    assert [r.code for r in loop.related] == ["TL101", "TL301"]
    assert "and 1 more" in loop.message and "Net.forward" in loop.message
    assert loop.gb_ids == ("GB7000", "GB0059", "GB0124")
    # The finding covers the loop's header only.
    assert (loop.location.row, loop.end_location.row) == (FIRST, FIRST)
    assert loop.end_location.column == len("        for i in range(2)") + 1


def test_silent_under_fullgraph():
    source = textwrap.dedent(
        """
        import torch

        @torch.compile(fullgraph=True)
        def step(x: torch.Tensor):
            for i in range(2):
                print(i)
            return x
        """
    )
    assert [c for c, _ in findings(source)] == ["TL101"]


def test_reported_when_the_inner_rule_is_not_shown():
    """Selection filters only what is printed: the print still breaks the graph, and still
    makes Dynamo skip the frame, whether or not TL101 is shown."""
    source = forward_with("for i in range(2):\n    print(i)\n")
    shown = [code for code, _ in findings(source, ignore=("TL101",))]
    assert shown == ["TL601"]
    assert [code for code, _ in findings(source, select=("TL601",))] == ["TL601"]


def test_noqa_on_the_loop_line():
    source = forward_with("for i in range(2):  # noqa: TL601\n    print(i)\n")
    assert [c for c, _ in findings(source)] == ["TL101"]


def _lint(source: str):
    root = Path("/project")
    return lint_text(source, str(root / "pkg" / "model.py"), Settings(root=root))


def test_related_locations_in_json_and_sarif(tmp_path: Path):
    import subprocess
    import sys

    from sarif_schema import assert_valid_sarif

    path = tmp_path / "model.py"
    path.write_text(forward_with("for i in range(2):\n    print(i)\n"), encoding="utf-8")
    run = lambda fmt: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "torchlint", "check", "--output-format", fmt, str(path)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    [loop] = [d for d in json.loads(run("json").stdout) if d["code"] == "TL601"]
    assert loop["related"] == [
        {
            "code": "TL101",
            "location": {"row": FIRST + 1, "column": 13},
            "end_location": {"row": FIRST + 1, "column": 21},
            "message": loop["related"][0]["message"],
        }
    ]
    sarif = json.loads(run("sarif").stdout)
    assert_valid_sarif(sarif)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TL601"]
    [related] = result["relatedLocations"]
    assert related["physicalLocation"]["region"]["startLine"] == FIRST + 1
    assert related["message"]["text"].startswith("TL101 ")
    full = run("full").stdout
    assert f"= note: line {FIRST + 1}: TL101 " in full


def test_a_break_in_a_shared_helper_is_reported_once_at_the_helper():
    source = textwrap.dedent(
        """
        import torch
        from torch import nn

        def _log_norms(xs):
            for x in xs:
                print(x.norm())
            return xs

        class A(nn.Module):
            def forward(self, x):
                return _log_norms([x])[0]

        class B(nn.Module):
            def forward(self, x):
                return _log_norms([x, x])[1]
        """
    )
    assert findings(source) == [("TL601", 6), ("TL101", 7)]


def test_a_loop_calling_a_breaking_helper_or_submodule_skips_the_frame():
    source = textwrap.dedent(
        """
        import torch
        from torch import nn

        class Block(nn.Module):
            def forward(self, x):
                print("block")
                return x

        def _scale(x: torch.Tensor):
            return x * x.sum().item()

        def _clean(x):
            return x * 2

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                for _ in range(2):
                    x = self.block(x)
                while x.shape[0] > 8:
                    x = _scale(x)
                for _ in range(2):
                    x = _clean(x)
                return x
        """
    )
    diagnostics = _lint(source)
    loops = [d for d in diagnostics if d.code == "TL601"]
    assert [d.location.row for d in loops] == [22, 24]
    assert "in `Block.forward`, called inside this `for` loop" in loops[0].message
    assert [r.code for r in loops[1].related] == ["TL301"]
    assert loops[1].related[0].location.row == 11


def test_a_loop_calling_a_helper_in_a_fullgraph_function_is_not_a_frame_skip():
    source = textwrap.dedent(
        """
        import torch

        def _scale(x: torch.Tensor):
            return x * x.sum().item()

        @torch.compile(fullgraph=True)
        def step(x: torch.Tensor):
            for _ in range(2):
                x = _scale(x)
            return x
        """
    )
    assert [c for c, _ in findings(source)] == []


_STACKS = """
import torch
from torch import nn

class Breaking(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            x = x * 2
        return x

class Clean(nn.Module):
    def forward(self, x):
        return x.relu()

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.listed = nn.ModuleList([Breaking(), Breaking()])
        self.built = nn.ModuleList([Breaking() for _ in range(3)])
        self.chain = nn.Sequential(Breaking(), Breaking())
        self.clean = nn.ModuleList([Clean() for _ in range(3)])
        self.mixed = nn.ModuleList([Clean(), Breaking()])

    def forward(self, x):
        for layer in self.listed:
            x = layer(x)
        for layer in self.built:
            x = layer(x)
        for layer in self.chain:
            x = layer(x)
        for layer in self.clean:
            x = layer(x)
        for layer in self.mixed:
            x = layer(x)
        return x
"""


def test_a_loop_over_a_module_list_of_breaking_blocks_skips_the_frame():
    # The last loop's elements are of two classes: which one runs is not followed.
    assert findings(_STACKS) == [("TL201", 7), ("TL601", 25), ("TL601", 27), ("TL601", 29)]
