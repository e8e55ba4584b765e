"""The names the project gives each file's analysis before it starts: a call of another file's
code waits for the project only under one of them (TL504, TL523)."""

from __future__ import annotations

from torchlint.analysis.project_hints import file_hints, project_hints


def _hints(*texts: str):
    return project_hints(file_hints(text) for text in texts)


def test_disabled_functions_by_decorator_and_by_assignment_with_their_classes() -> None:
    hints = _hints(
        "import torch\n\n@torch.compiler.disable\ndef lookup(t):\n    return t\n\n"
        "class Box:\n    @torch._dynamo.disable(recursive=False)\n    def __init__(self, t):\n        self.t = t\n\n"
        "fast = torch.compiler.disable(lambda t: t)\n",
        "def plain(t):\n    return t\n",
    )
    assert hints.disabled_names == {"lookup", "Box", "__init__", "fast"}


def test_aliases_carry_a_name_however_often_renamed() -> None:
    hints = _hints(
        "from torch.compiler import disable\n\n@disable\ndef fast(t):\n    return t\n",
        "from .impl import fast as quick\n",
        "from pkg import quick as quicker\nimport numpy as np\n",
    )
    assert hints.disabled_names == {"fast", "quick", "quicker"}


def test_typed_dicts_through_their_bases_in_any_file() -> None:
    hints = _hints(
        "from typing import TypedDict\n\nclass Message(TypedDict, total=False):\n    name: str\n",
        "from pkg.types import Message\n\nclass Reply(Message):\n    text: str\n\nclass Plain(object):\n    pass\n",
        "from pkg.reply import Reply as Answer\n",
    )
    assert hints.typed_dict_names == {"Message", "Reply", "Answer"}


def test_a_file_that_does_not_parse_tells_no_disabled_names() -> None:
    assert _hints("@torch.compiler.disable\ndef broken(:\n").disabled_names == frozenset()


def test_later_files_win_the_dynamo_config() -> None:
    hints = _hints(
        "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n",
        "import torch\ntorch._dynamo.config.capture_scalar_outputs = False\n",
    )
    assert hints.dynamo_config == {"capture_scalar_outputs": False}
