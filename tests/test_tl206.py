"""TL206: `==` and friends between lists or tuples that hold a tensor.

Every pattern below was measured on torch 2.13: the reported ones break with
*list_richcompare_nonconst* (GB6622) on the comparison's line, the silent ones compile.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers import codes, findings
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text
from torchlint.fix.fixing import fix_text

MODULE = """
import torch
import torch.nn as nn

class GlobalAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(8, 8)
        self.heads = 2
        self.kinds = ["local", "global"]

    def forward(self, x: torch.Tensor, is_global: torch.Tensor, n: int = 2):
        batch, seq, dim = x.shape
        q = self.query(x)
        scores = torch.bmm(q, q.transpose(1, 2))
        max_num = is_global.sum(dim=-1).max()
        a, c = x.sum(), x.mean()
        {body}
        return scores
"""


def in_forward(body: str) -> str:
    return MODULE.format(body=body)


def row_of(source: str, text: str) -> int:
    return next(number for number, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    "body",
    [
        'assert list(scores.size()) == [batch, max_num, seq], "wrong size"',
        "assert list(scores.size()) == [batch, max_num, seq]",
        'assert list(scores.size()) == [batch, max_num, seq], f"wrong size {scores.size()}"',
        "ok = scores.shape == (batch, max_num, seq)",
        "ok = tuple(scores.shape) == (batch, max_num, seq)",
        "ok = scores.size() == (batch, max_num, seq)",
        "ok = (batch, max_num, seq) == scores.shape",
        "ok = scores.shape[1:] == (max_num, seq)",
        "ok = [a, x.max()] == [c, x.min()]",
        "ok = [a] == [1]",
        "if [a] == [c]:\n            scores = -scores",
        "if list(scores.size()) != [batch, max_num, seq]:\n            raise ValueError('wrong size')",
        "scores = scores if list(scores.shape) == [batch, max_num, seq] else -scores",
        "ok = (1, a) < (1, 5)",
        "ok = [a] <= [c]",
        "ok = [[a]] == [[c]]",
        "ok = [a, a] == [a, c]",
        "ok = [1] == [1] == [a]",
        "expected = [batch, max_num, seq]\n        assert list(scores.size()) == expected",
        "sizes = list(scores.size())\n        assert sizes == [batch, max_num, seq]",
        "ok = list(x[0, 0]) == [1.0, 2.0]",
        "rest = [seq]\n        ok = list(scores.size()) == [batch, max_num, *rest]",
        "rest = [seq]\n        ok = list(scores.size()) == [batch, *rest, max_num]",
    ],
)
def test_flags_a_sequence_comparison_that_reaches_a_tensor(body: str) -> None:
    assert codes(in_forward(body)) == ["TL206"]


@pytest.mark.parametrize(
    "body",
    [
        # Python ints and sizes only.
        "assert list(scores.size()) == [batch, seq, seq]",
        "assert list(scores.size()) == [batch, n, seq]",
        "ok = scores.shape == q.shape",
        "ok = x.shape[1:] == (4, 8)",
        "ok = self.kinds == ['local', 'global']",
        "ok = tuple(scores.shape) == (batch, seq, seq)",
        # Decided while tracing.
        "ok = [a] == (c,)",
        "ok = scores.size() == [batch, max_num, seq]",
        "ok = [a] == [a, c]",
        "ok = [1, a] == [2, c]",
        "ok = [a] == [a]",
        "ok = (a,) == (None,)",
        "ok = (a,) == ('a',)",
        "ok = list(scores.shape) == [None, max_num, seq]",
        # Not a sequence comparison.
        "ok = a in [1.0, 2.0]",
        "ok = a == c",
        "ok = [a] is [c]",
        # An element of unknown kind.
        "ok = list(scores.size()) == [batch, self.limit, seq]",
    ],
)
def test_silent_where_dynamo_decides_the_comparison(body: str) -> None:
    assert codes(in_forward(body)) == []


def test_the_tensor_element_read_into_python_is_another_rule() -> None:
    # `int(max_num)` breaks with `.item()`; the comparison itself then holds ints.
    assert codes(in_forward("assert list(scores.size()) == [batch, int(max_num), seq]")) == ["TL303"]


def test_one_finding_with_tl201_and_tl204_around() -> None:
    # The `if` and the `assert` test the Python bool the eager comparison hands back.
    assert codes(in_forward("if [a] == [c]:\n            scores = -scores")) == ["TL206"]
    body = 'assert list(scores.size()) == [batch, max_num, seq], f"got {tuple(scores.shape)}"'
    assert codes(in_forward(body)) == ["TL206"]
    # A tensor condition next to the comparison is a second break, reported by TL201.
    both = "if [a] == [c] and a.any():\n            scores = -scores"
    assert sorted(codes(in_forward(both))) == ["TL201", "TL206"]


def test_finding_points_at_the_comparison_and_names_the_tensor() -> None:
    source = textwrap.dedent(in_forward('assert list(scores.size()) == [batch, max_num, seq], "wrong size"'))
    diagnostics = lint_text(source, "/project/pkg/model.py", Settings(root=Path("/project")))
    (found,) = diagnostics
    assert found.code == "TL206"
    assert found.location.row == row_of(source, "assert list(")
    assert found.location.column == source.splitlines()[found.location.row - 1].index("list(") + 1
    assert found.message.startswith("`==` between lists that hold a tensor (`max_num`) breaks the graph")
    assert "torch._assert_async" in found.message
    assert found.gb_ids == ("GB6622", "GB0170")
    assert "torch._assert_async" in found.suggestion


def test_message_names_the_operator_and_the_tuple() -> None:
    source = textwrap.dedent(in_forward("ok = (1, a) < (1, 5)"))
    (found,) = lint_text(source, "/project/pkg/model.py", Settings(root=Path("/project")))
    assert found.message.startswith("`<` between tuples that hold a tensor (`a`)")


def test_a_multiline_comparison_is_reported_on_its_first_line() -> None:
    body = "assert list(scores.size()) == [\n            batch,\n            max_num,\n            seq,\n        ]"
    source = in_forward(body)
    assert findings(source) == [("TL206", row_of(source, "assert list("))]


def test_under_fullgraph_the_message_says_the_compile_fails() -> None:
    source = """
    import torch

    def attend(q: torch.Tensor, is_global: torch.Tensor) -> torch.Tensor:
        scores = q @ q.transpose(-2, -1)
        max_num = is_global.sum(dim=-1).max()
        assert scores.shape[-2:] == (max_num, q.shape[-2])
        return scores

    compiled = torch.compile(attend, fullgraph=True)
    """
    text = textwrap.dedent(source)
    (found,) = lint_text(text, "/project/pkg/model.py", Settings(root=Path("/project")))
    assert found.code == "TL206"
    assert found.message.endswith("under `fullgraph=True` the compile fails")


def test_only_compiled_code_is_checked() -> None:
    source = """
    import torch

    def check_inputs(scores: torch.Tensor, is_global: torch.Tensor) -> None:
        max_num = is_global.sum(dim=-1).max()
        assert list(scores.size()) == [2, max_num, 4]
    """
    assert codes(source) == []


def test_guarded_code_is_not_checked() -> None:
    body = (
        "if not torch.compiler.is_compiling():\n"
        "            assert list(scores.size()) == [batch, max_num, seq]"
    )
    assert codes(in_forward(body)) == []


def test_shadowed_list_is_not_a_sequence() -> None:
    source = """
    import torch

    def list(values):
        return values

    @torch.compile
    def attend(scores: torch.Tensor, is_global: torch.Tensor) -> torch.Tensor:
        max_num = is_global.sum(dim=-1).max()
        ok = list(scores.size()) == [2, max_num, 4]
        return scores
    """
    assert codes(source) == []


def test_aliases_resolve() -> None:
    source = """
    import builtins
    import torch as th

    @th.compile
    def attend(scores: th.Tensor) -> th.Tensor:
        max_num = th.ones(2, 4, dtype=th.bool).sum(dim=-1).max()
        assert builtins.tuple(scores.shape) == (2, max_num, 4)
        return scores
    """
    assert codes(source) == ["TL206"]


def _fixed(body: str) -> tuple[str, list[str]]:
    """The forward's body after `--fix --unsafe-fixes`, and the codes left."""
    text = textwrap.dedent(in_forward(body.rstrip("\n")))
    settings = Settings(root=Path("/project"))
    result = fix_text(text, lambda t: lint_text(t, "/project/pkg/model.py", settings), True, "model.py")
    start = result.text.index("        a, c = x.sum(), x.mean()\n") + len("        a, c = x.sum(), x.mean()\n")
    return result.text[start:result.text.index("        return scores\n")], [d.code for d in result.left]


GUARDED = {
    # an assert of several rows, with a formatted message
    'assert list(scores.size()) == [\n            batch,\n            max_num,\n            seq,\n        ], f"size {scores.size()}"\n':
        '        if not torch.compiler.is_compiling():\n'
        '            assert list(scores.size()) == [\n                batch,\n                max_num,\n                seq,\n'
        '            ], f"size {scores.size()}"\n',
    # a comparison that is only part of the assert's test
    'assert x.ndim == 3 and list(scores.size()) == [batch, max_num, seq]\n':
        '        if not torch.compiler.is_compiling():\n'
        '            assert x.ndim == 3 and list(scores.size()) == [batch, max_num, seq]\n',
    # an `if` that only raises or warns
    'if list(scores.size()) != [batch, max_num, seq]:\n            raise ValueError("wrong size")\n':
        '        if not torch.compiler.is_compiling():\n'
        '            if list(scores.size()) != [batch, max_num, seq]:\n                raise ValueError("wrong size")\n',
}


@pytest.mark.parametrize("body", GUARDED)
def test_a_check_on_the_comparison_runs_in_eager_mode_only(body: str) -> None:
    assert _fixed(body) == (GUARDED[body], [])


@pytest.mark.parametrize("body", [
    # the comparison's value is kept, or the `if` does more than report
    "ok = list(scores.size()) == [batch, max_num, seq]\n",
    "if list(scores.size()) != [batch, max_num, seq]:\n            scores = scores * 2\n",
    # the assert shares its line
    "assert list(scores.size()) == [batch, max_num, seq]; q = q * 2\n",
    # an `elif` cannot be guarded alone
    "if n > 3:\n            pass\n        elif list(scores.size()) != [batch, max_num, seq]:\n            raise ValueError\n",
])
def test_other_comparisons_keep_their_finding_without_a_fix(body: str) -> None:
    text = textwrap.dedent(in_forward(body))
    found = [d for d in lint_text(text, "/project/pkg/model.py", Settings(root=Path("/project"))) if d.code == "TL206"]
    assert found and all(d.fix is None for d in found)
