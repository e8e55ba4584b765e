"""TL521: a value an `is_compiling()` guard leaves None while compiling, then used."""

from __future__ import annotations

import pytest

from helpers import findings

HEADER = """
    import torch
    from torch import nn
    from transformers.utils import is_torchdynamo_compiling


    class Stack(nn.Module):
        def forward(self, x: torch.Tensor, mask=None, bias=None):
"""


def _rows(body: str) -> list[int]:
    indented = "".join(f"            {line}\n" for line in body.strip("\n").splitlines())
    return [row for code, row in findings(HEADER + indented) if code == "TL521"]


GUARD = "if mask is None and not torch.compiler.is_compiling():\n    mask = torch.ones(x.shape[0])\n"


@pytest.mark.parametrize(
    "use",
    ["y = x * mask[:, None]", "y = mask.sum()", "y = mask()", "y = x * mask", "y = mask + 1"],
)
def test_using_the_name_as_an_object_is_reported(use: str) -> None:
    assert _rows(GUARD + use + "\nreturn y") == [11]


@pytest.mark.parametrize(
    "guard",
    [
        "if mask is None and not is_torchdynamo_compiling():\n    mask = torch.ones(x.shape[0])\n",
        "if not torch._dynamo.is_compiling() and mask is None:\n    mask = torch.ones(x.shape[0])\n",
    ],
)
def test_every_spelling_of_the_guard(guard: str) -> None:
    assert _rows(guard + "return x * mask[:, None]") == [11]


def test_only_the_first_use_is_reported() -> None:
    body = GUARD + "if x.shape[0] > 1:\n    y = mask[0]\nelse:\n    y = mask[1]\nreturn y * mask[2]"
    assert _rows(body) == [12]


@pytest.mark.parametrize(
    "use",
    [
        "y = mask[:, None] if mask is not None else x",  # checked in a conditional expression
        "y = mask is not None and mask.sum()",  # checked before use
        "if mask is not None:\n    x = x * mask[:, None]\ny = x",  # checked in an if
        "mask = torch.zeros(3)\ny = mask[0]",  # assigned again
        "y = self.combine(x, mask)",  # handed on: the callee may take None
    ],
)
def test_code_that_handles_none_is_silent(use: str) -> None:
    assert _rows(GUARD + use + "\nreturn y") == []


@pytest.mark.parametrize(
    "guard",
    [
        "if mask is None:\n    mask = torch.ones(x.shape[0])\n",  # filled when compiling too
        "if mask is None and torch.compiler.is_compiling():\n    mask = torch.ones(x.shape[0])\n",
        "if bias is None and not torch.compiler.is_compiling():\n    mask = torch.ones(x.shape[0])\n",
    ],
)
def test_guards_that_leave_nothing_none_are_silent(guard: str) -> None:
    assert _rows(guard + "return x * mask[:, None]") == []


def test_each_function_is_checked_on_its_own() -> None:
    source = HEADER + (
        "            if mask is None and not torch.compiler.is_compiling():\n"
        "                mask = torch.ones(x.shape[0])\n"
        "            return self.other(x)\n"
        "\n"
        "        def other(self, mask):\n"
        "            return mask[0]\n"
    )
    assert [row for code, row in findings(source) if code == "TL521"] == []
