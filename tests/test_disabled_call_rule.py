"""TL504: calls from compiled code to functions under `torch.compiler.disable`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import codes, findings
from torchlint.cli import cli
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text
from torchlint.analysis.conditions import Compiled, Condition, Disabled
from torchlint.analysis.engine import analyze_text
from torchlint.settings.profile import CompileProfile

HELPERS = """
import torch
import torch._dynamo
from torch import nn
from torch.compiler import disable as no_compile


@torch.compiler.disable
def lookup(t):
    print("cache lookup", t.shape)
    return t


@torch._dynamo.disable(recursive=False)
def shallow(t):
    return t


def _slow(t):
    return t


slow = no_compile(_slow)


def rebound(t):
    return t


rebound = torch.compiler.disable(rebound)


def plain(t):
    return t


class Sub(nn.Module):
    @torch.compiler.disable
    def forward(self, t):
        return t


class Box:
    @torch.compiler.disable
    def __init__(self, t):
        self.t = t
"""

NET = """

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.fast = torch.compiler.disable(self._fast)

    def _fast(self, t):
        return t

    @torch.compiler.disable
    def record(self, t):
        print("record", t.shape)

    @staticmethod
    @torch._dynamo.disable
    def static(t):
        return t

    def forward(self, x):
        {body}
        return x
"""


def net(body: str) -> str:
    return HELPERS + NET.format(body=body)


@pytest.mark.parametrize(
    "call",
    [
        "lookup(x)",  # bare decorator
        "shallow(x)",  # decorator with arguments
        "slow(x)",  # assigned from an aliased `disable`
        "rebound(x)",  # `f = torch.compiler.disable(f)`
        "self.record(x)",  # a disabled method
        "self.static(x)",
        "Net.static(x)",
        "self.fast(x)",  # `self.fast = torch.compiler.disable(...)` in __init__
        "self.sub(x)",  # a submodule whose forward is disabled
        "Box(x)",  # a class whose __init__ is disabled
        "y = [lookup(x)]",
    ],
)
def test_flags_a_call_to_a_disabled_function(call: str) -> None:
    assert codes(net(call)) == ["TL504"]


def test_finding_points_at_the_call_and_names_it() -> None:
    source = net("y = x + lookup(x)")
    (diagnostic,) = lint_text(textwrap.dedent(source), "/project/pkg/model.py", Settings(root=Path("/project")))
    row = source.splitlines().index("        y = x + lookup(x)") + 1
    assert (diagnostic.code, diagnostic.location.row, diagnostic.location.column) == ("TL504", row, 17)
    assert diagnostic.message.startswith("`lookup()` is under `torch.compiler.disable`")
    assert "torch.library.custom_op" in diagnostic.message and "register_fake" in diagnostic.message
    assert diagnostic.gb_ids == ("GB0098", "GB0099")


def test_message_names_what_a_call_runs_when_it_differs() -> None:
    (diagnostic,) = lint_text(net("self.sub(x)"), "/project/pkg/model.py", Settings(root=Path("/project")))
    assert diagnostic.message.startswith("`self.sub()` runs `Sub.forward`, which is under")


def test_fullgraph_compile_is_said_to_fail() -> None:
    source = HELPERS + "\n\n@torch.compile(fullgraph=True)\ndef step(x):\n    return lookup(x)\n"
    (diagnostic,) = lint_text(source, "/project/pkg/model.py", Settings(root=Path("/project")))
    assert diagnostic.message.endswith("under `fullgraph=True` the compile fails")


@pytest.mark.parametrize(
    "body",
    [
        "y = plain(x)",  # not disabled
        "y = self._fast(x)",  # the wrapped method itself is not disabled
        'if not torch.compiler.is_compiling():\n            lookup(x)',  # eager only
        "y = lookup",  # named, not called
        "lookup = plain\n        y = lookup(x)",  # a local name shadows the disabled one
        "y = self.stats.lookup(x)",  # a method that shares the name
    ],
)
def test_silent_for_look_alikes(body: str) -> None:
    assert codes(net(body)) == []


def test_the_disabled_body_is_not_traced() -> None:
    # lookup() and Net.record() print, but Dynamo never traces them.
    assert codes(net("lookup(x)\n        self.record(x)")) == ["TL504", "TL504"]


def test_silent_outside_compiled_code() -> None:
    source = HELPERS + "\n\ndef train(batches):\n    for x in batches:\n        lookup(x)\n        slow(x)\n"
    assert codes(source) == []


def test_disabled_caller_is_not_checked() -> None:
    source = HELPERS + (
        "\n\n@torch.compiler.disable\ndef outer(x):\n    return lookup(x)\n\n"
        "@torch.compile\ndef step(x):\n    return outer(x)\n"
    )
    # Only the call into `outer`; its own call to `lookup` is eager.
    assert findings(source) == [("TL504", source.splitlines().index("    return outer(x)") + 1)]


def test_nested_function_of_compiled_code() -> None:
    source = HELPERS + (
        "\n\n@torch.compile\ndef step(x):\n    def inner(t):\n        return lookup(t)\n    return inner(x)\n"
    )
    assert codes(source) == ["TL504"]


# -- across files ---------------------------------------------------------------------------


MODEL = """
import torch
from torch import nn
from . import cache
from .cache import lookup, plain


class Net(nn.Module):
    def forward(self, x):
        y = lookup(x)
        z = cache.lookup(y)
        return plain(z)
"""
CACHE = """
import torch


@torch.compiler.disable
def lookup(t):
    print("cache lookup")
    return t


def plain(t):
    return t
"""


def _pending_disabled(source: str) -> list[tuple[int, Condition]]:
    """(row, condition) of each TL504 the file alone finds, before the project answers."""
    settings = Settings(root=Path("/project"))
    analysis = analyze_text(source, "/project/pkg/model.py", settings, CompileProfile())
    return [(p.diagnostic.location.row, p.condition) for p in analysis.pending if p.diagnostic.code == "TL504"]


def _disabled_names(condition: Condition) -> list[str]:
    return [fact.function.name for fact in condition.facts() if isinstance(fact, Disabled)]


def test_imported_disabled_function_hangs_on_the_project() -> None:
    """Each imported function may be disabled in the other file: each call is a finding that
    stands where the project finds the function it names disabled."""
    found = _pending_disabled(MODEL)
    assert [row for row, _ in found] == [10, 11, 12]
    for _, condition in found:
        assert {type(fact) for fact in condition.facts()} == {Compiled, Disabled}
    assert [_disabled_names(condition) for _, condition in found] == [
        ["pkg.cache.lookup"], ["pkg.cache.lookup"], ["pkg.cache.plain"]
    ]


def test_imported_name_alone_is_not_enough() -> None:
    assert lint_text(MODEL, "/project/pkg/model.py", Settings(root=Path("/project"))) == []


def test_a_local_name_shadowing_a_disabled_import() -> None:
    source = MODEL.replace("        y = lookup(x)", "        lookup = plain\n        y = lookup(x)")
    # `lookup(x)` (row 11) calls the local name, not the import.
    assert [row for row, _ in _pending_disabled(source)] == [12, 13]


def test_disabled_function_of_another_linted_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, source in {"pkg/__init__.py": "", "pkg/model.py": MODEL, "pkg/cache.py": CACHE}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"))
    result = CliRunner().invoke(cli, ["check", "--output-format", "json", "--exit-zero", "pkg"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output[result.output.index("[") : result.output.rindex("]") + 1])
    assert sorted((Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in found) == [
        ("model.py", 9, "TL504"),
        ("model.py", 10, "TL504"),
    ]


def test_a_disabled_function_renamed_on_its_way_is_still_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A call waits for the project only under a name the project may bind to a disabled
    function: here `helper`, the package's alias of `fast`, and `quick`, bound by assignment."""
    monkeypatch.chdir(tmp_path)
    sources = {
        "pkg/__init__.py": "from .impl import fast as helper\nfrom .impl import quick\n",
        "pkg/impl.py": (
            "import torch\n\n\n@torch._dynamo.disable(recursive=False)\ndef fast(t):\n    return t\n\n\n"
            "def quick(t):\n    return t\n\n\nquick = torch.compiler.disable(quick)\n"
        ),
        "pkg/model.py": (
            "import torch\nfrom pkg import helper, quick\n\n\nclass Net(torch.nn.Module):\n"
            "    def forward(self, x):\n        return quick(helper(x))\n"
        ),
    }
    for name, source in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    result = CliRunner().invoke(cli, ["check", "--output-format", "json", "--exit-zero", "--no-cache", "pkg"])
    found = json.loads(result.output[result.output.index("[") : result.output.rindex("]") + 1])
    assert sorted((Path(f["filename"]).name, f["location"]["row"], f["location"]["column"], f["code"]) for f in found) == [
        ("model.py", 7, 16, "TL504"),
        ("model.py", 7, 22, "TL504"),
    ]
