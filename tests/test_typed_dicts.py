"""TL523: calling a TypedDict class with optional keys in compiled code."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import check, codes, write

MODEL = """
import typing
from typing import TypedDict
import torch
import typing_extensions
from typing_extensions import NotRequired

{classes}

class Model(torch.nn.Module):
    def forward(self, x):
        {body}
        return x
"""


@pytest.mark.parametrize(
    ("classes", "body"),
    [
        ("class M(TypedDict, total=False):\n    a: int", "m = M(a=1)"),
        ("class M(typing_extensions.TypedDict, total=False):\n    a: int", "m = M()"),
        ("class M(TypedDict):\n    a: int\n    b: NotRequired[int]", "m = M(a=1)"),
        ("class M(TypedDict):\n    a: typing_extensions.NotRequired[int]", "m = M(a=1)"),
        ("class B(TypedDict, total=False):\n    a: int\nclass M(B):\n    c: int", "m = M(c=1)"),
    ],
)
def test_calls_of_typed_dicts_with_optional_keys(classes: str, body: str) -> None:
    assert codes(MODEL.format(classes=classes, body=body)) == ["TL523"]


@pytest.mark.parametrize(
    ("classes", "body"),
    [
        ("class M(TypedDict):\n    a: int", "m = M(a=1)"),
        ("class M(TypedDict, total=True):\n    a: int", "m = M(a=1)"),
        ("class M(TypedDict, total=False):\n    a: int", "m: M = {'a': 1}"),
        ("class M:\n    def __init__(self, a): self.a = a", "m = M(a=1)"),
    ],
)
def test_other_calls_and_literals_stay_silent(classes: str, body: str) -> None:
    assert codes(MODEL.format(classes=classes, body=body)) == []


def test_a_class_imported_from_another_file_counts(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/runtime.py": """
                from typing import Generic, TypeVar
                from typing_extensions import TypedDict

                T = TypeVar("T")

                class Message(TypedDict, Generic[T], total=False):
                    name: str
                    value: T

                class Full(TypedDict):
                    name: str
                """,
            "pkg/primitives.py": """
                import torch
                from pkg import runtime
                from pkg.runtime import Full, Message

                @torch.compile
                def sample(x):
                    msg = Message(name="a", value=x)
                    other = runtime.Message(name="b")
                    full = Full(name="c")
                    return msg["value"]
                """,
        },
    )
    assert check("pkg/") == [("primitives.py", 7, "TL523"), ("primitives.py", 8, "TL523")]


def test_the_fix_builds_the_literal(project: Path) -> None:
    from click.testing import CliRunner

    from torchlint.cli import cli

    write(
        project,
        {
            "model.py": """
                from typing import TypedDict
                import torch

                class Message(TypedDict, total=False):
                    name: str
                    value: torch.Tensor

                @torch.compile
                def step(x):
                    msg = Message(name="a", value={"inner": x}["inner"])
                    kept = Message(dict(name="b"))
                    return msg["value"], kept
                """
        },
    )
    result = CliRunner().invoke(cli, ["check", "--fix", "model.py"])
    assert result.exit_code == 1, result.output
    text = (project / "model.py").read_text()
    assert 'msg = {"name": "a", "value": {"inner": x}["inner"]}' in text
    assert 'kept = Message(dict(name="b"))' in text  # a mapping passed positionally: no fix


def test_a_class_imported_only_for_annotations_gives_no_finding(project: Path) -> None:
    """Only a call of the class breaks: an annotation (`Unpack[Kwargs]`) is never a finding,
    not even one that waits for the project to say what the class is."""
    from torchlint.analysis.engine import analyze_text
    from torchlint.settings.config import Settings
    from torchlint.settings.profile import CompileProfile

    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/kwargs.py": """
                from typing import TypedDict

                class Kwargs(TypedDict, total=False):
                    scale: float
                """,
            "pkg/model.py": """
                import torch
                from typing_extensions import Unpack
                from pkg.kwargs import Kwargs

                class Net(torch.nn.Module):
                    def forward(self, x, **kwargs: Unpack[Kwargs]):
                        return x * 2
                """,
        },
    )
    model = project / "pkg" / "model.py"
    analysis = analyze_text(model.read_text(), str(model), Settings(root=project), CompileProfile())
    assert [p.diagnostic.code for p in analysis.pending] == []
    assert check("pkg") == []
