"""A fact crosses a project as far as its calls go: a tensor handed down a chain of 60 modules.

`pkg/m0.py` holds a module whose `forward` hands a tensor (`torch.relu(x)`) to `f1` of
`pkg/m1.py`, each `fK` hands its parameter on to `fK+1` of the next module, and `f59` of the
last one branches on it: `if x > 0:`. Two facts have to cross all 60 files for TL201 to be
reported there: `f59` is compiled (called from compiled code, 59 calls away from `forward`),
and its `x` is a tensor (passed by compiled callers, hop by hop). When `forward` passes an
int instead, `x > 0` is a plain comparison and nothing is reported: the finding is the
chain's doing, not something the last file says alone (a parameter with no annotation is no
tensor by itself).

Two shapes of chain: every module imports torch, or only `m0` does (the others never mention
torch, so they are parsed only once compiled code is found to call into them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import run_in_process
from torchlint.files.discovery import discover
from torchlint.run.cache import Cache
from torchlint.run.memo import Memo
from torchlint.run.project_run import ProjectRun
from torchlint.run.workers import Workers
from torchlint.settings.config import ConfigResolver

LENGTH = 60
LAST = LENGTH - 1
BRANCH = "    if x > 0:"

FORWARD = """\
import torch
from torch import nn

from pkg.m1 import f1


class Net(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return f1({argument})
"""


def _link(index: int, imports_torch: bool) -> str:
    head = "import torch\n\n" if imports_torch else ""
    if index < LAST:
        following = index + 1
        return f"{head}from pkg.m{following} import f{following}\n\n\ndef f{index}(x):\n    return f{following}(x)\n"
    return f"{head}def f{index}(x):\n{BRANCH}\n        return x * 2\n    return x\n"


def write_chain(root: Path, argument: str, imports_torch: bool, int_from: int | None = None) -> int:
    """The package under ``root``; the row of the branch in the last module. ``int_from``:
    the module whose function hands the next one a 0 instead of its parameter."""
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "m0.py").write_text(FORWARD.format(argument=argument))
    for index in range(1, LENGTH):
        text = _link(index, imports_torch)
        if index == int_from:
            text = text.replace(f"return f{index + 1}(x)", f"return f{index + 1}(0)")
            assert "(0)" in text
        (package / f"m{index}.py").write_text(text)
    last = (package / f"m{LAST}.py").read_text().splitlines()
    return last.index(BRANCH) + 1


def found(root: Path, *paths: str) -> list[tuple[Path, int, str]]:
    """(file, row, code) of every finding of `torchlint check PATHS` run in ``root``."""
    ran = run_in_process("check", *paths, "--output-format", "json", "--exit-zero", "--no-cache", cwd=root)
    assert ran.returncode == 0, ran.stderr
    return [(Path(f["filename"]), f["location"]["row"], f["code"]) for f in json.loads(ran.stdout)]


SHAPES = pytest.mark.parametrize("imports_torch", [True, False], ids=["every-module-imports-torch", "only-m0-imports-torch"])


@SHAPES
def test_a_tensor_passed_down_60_modules_breaks_where_the_last_branches_on_it(tmp_path: Path, imports_torch: bool):
    row = write_chain(tmp_path, "y", imports_torch)
    assert found(tmp_path, "pkg") == [(tmp_path / "pkg" / f"m{LAST}.py", row, "TL201")]


@SHAPES
def test_an_int_passed_down_the_same_chain_breaks_nowhere(tmp_path: Path, imports_torch: bool):
    write_chain(tmp_path, "3", imports_torch)
    assert found(tmp_path, "pkg") == []


def test_an_int_handed_on_halfway_down_the_chain_breaks_nowhere(tmp_path: Path):
    # `f30` hands `f31` a 0: `f31` to `f59` are still compiled, but their `x` is no tensor.
    # The kind is followed hop by hop, not taken from the chain's first call.
    write_chain(tmp_path, "y", imports_torch=True, int_from=LENGTH // 2)
    assert found(tmp_path, "pkg") == []
    regions = run_in_process("check", "--show-regions", "--no-cache", "pkg", cwd=tmp_path)
    assert f"f{LAST}: called from pkg.m{LAST - 1}.f{LAST - 1}" in regions.stdout


@SHAPES
def test_naming_only_the_last_module_reports_the_same_finding(tmp_path: Path, imports_torch: bool):
    # `pkg` is the top package of `pkg/m59.py` (no configuration file): its project, read whole
    # though only the last file is named and reported.
    row = write_chain(tmp_path, "y", imports_torch)
    assert found(tmp_path, f"pkg/m{LAST}.py") == [(tmp_path / "pkg" / f"m{LAST}.py", row, "TL201")]


def test_naming_only_the_last_module_of_the_int_chain_reports_nothing(tmp_path: Path):
    write_chain(tmp_path, "3", imports_torch=False)
    assert found(tmp_path, f"pkg/m{LAST}.py") == []


def test_a_chain_of_skipped_modules_is_parsed_at_once_not_one_solve_per_hop(tmp_path: Path):
    # `m1` to `m59` never mention torch or `forward`: the text test skips them. The first solve
    # finds compiled code calling into `m1`; `m1` and every skipped module it imports, however
    # far down, are then parsed together, and the project is solved once more.
    write_chain(tmp_path, "y", imports_torch=False)
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        resolver = ConfigResolver(cwd=tmp_path)
        files = discover(["pkg"], resolver, force_exclude=False).files
        with Workers(1) as workers:
            memo = Memo(workers, Cache(None), {})
            project = ProjectRun([(path, resolver.for_path(path)) for path in files], memo, keep_sources=False)
    finally:
        os.chdir(before)
    assert project.solves == 2
    assert len(project.parsed_on_demand) == LAST
