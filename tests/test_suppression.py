"""`# noqa` per line and per file, and the unused ones (TL902)."""

from __future__ import annotations

from helpers import codes, findings

PRINTS = """
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        print(x){first}
        print(
            "multi-line",
            x,
        ){second}
        return x
"""


def test_line_noqa_with_and_without_codes() -> None:
    assert codes(PRINTS.format(first="  # noqa: TL101", second="")) == ["TL101"]
    assert codes(PRINTS.format(first="  # noqa", second="")) == ["TL101"]
    assert codes(PRINTS.format(first="  # NOQA:TL101,TL102", second="  # noqa")) == ["TL902"]


def test_noqa_on_first_line_of_a_multiline_statement() -> None:
    source = PRINTS.replace("        print(\n", "        print(  # noqa: TL101\n").format(first="", second="")
    assert codes(source) == ["TL101"]


def test_noqa_for_another_code_does_not_suppress() -> None:
    assert sorted(codes(PRINTS.format(first="  # noqa: TL102", second=""))) == ["TL101", "TL101", "TL902"]


def test_unused_noqa_is_reported_once_per_directive_with_its_codes() -> None:
    source = PRINTS.format(first="  # noqa: TL101, TL103, E501", second="")
    found = findings(source)
    assert ("TL902", 5) in found and ("TL101", 6) in found
    assert len(found) == 2


def test_unknown_tl_code_in_noqa_is_reported() -> None:
    assert "TL902" in codes("import torch\nx = 1  # noqa: TL999\n")


def test_file_level_noqa() -> None:
    assert codes("# torchlint: noqa\n" + PRINTS.format(first="", second="")) == []
    assert codes("# torchlint: noqa: TL101\n" + PRINTS.format(first="", second="")) == []
    assert sorted(codes("# torchlint: noqa: TL102\n" + PRINTS.format(first="", second=""))) == ["TL101", "TL101", "TL902"]


def test_noqa_inside_a_string_is_not_a_directive() -> None:
    source = PRINTS.format(first="", second="").replace('"multi-line"', '"# noqa: TL101"')
    assert codes(source) == ["TL101", "TL101"]


def test_unused_noqa_can_be_ignored() -> None:
    assert codes("import torch\nx = 1  # noqa: TL101\n", ignore=("TL902",)) == []
