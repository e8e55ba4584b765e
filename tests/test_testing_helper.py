"""torchlint.testing, run against real Dynamo on model code written to real files.

torch comes from the `torch` fixture, so collecting this module does not import it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchlint.rules import all_rules, rule_by_code
from torchlint.testing import (
    GraphBreakError,
    assert_no_graph_breaks,
    check_graph_breaks,
    no_graph_breaks,
)
from torchlint.verify.breaks import Break

pytest_plugins = ["pytester"]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")

CLEAN = """
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2
"""

PRINTS = """
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        print("shape", y.shape)
        return y * 2


def step(x):
    y = x.sin()
    print("step")
    return y.cos()
"""

BRANCHES = """
import torch


def pick(x):
    if x.sum() > 0:
        return x + 1
    return x - 1
"""


def load(tmp_path: Path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"torchlint_testing_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def line_of(module, text: str) -> int:
    lines = Path(module.__file__).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def failure(fn, *args) -> GraphBreakError:
    with pytest.raises(GraphBreakError) as raised:
        assert_no_graph_breaks(fn, *args)
    return raised.value


@pytest.mark.dynamo
def test_clean_module_passes(torch, tmp_path):
    model = load(tmp_path, "clean", CLEAN).Net()
    assert assert_no_graph_breaks(model, torch.randn(2, 4)) is None
    assert no_graph_breaks(model, torch.randn(2, 4)) == []


@pytest.mark.dynamo
def test_print_in_forward_fails_with_the_finding(torch, tmp_path):
    module = load(tmp_path, "prints", PRINTS)
    error = failure(module.Net(), torch.ones(3))
    assert isinstance(error, AssertionError)
    row = line_of(module, 'print("shape"')
    assert [brk.lineno for brk in error.breaks] == [row]
    message = str(error)
    assert message.startswith("1 graph break under torch.compile:\n")
    assert f"{module.__file__}:{row}:9: TL101 " in message
    assert f"\n  help: {rule_by_code('TL101').suggestion}" in message


@pytest.mark.dynamo
def test_plain_function_is_linted_as_traced_code_and_paths_are_relative(torch, tmp_path, monkeypatch):
    module = load(tmp_path, "prints", PRINTS)
    monkeypatch.chdir(tmp_path)
    row = line_of(module, 'print("step")')
    message = str(failure(module.step, torch.ones(3)))
    # `step` is no forward and not decorated: only the run shows it is compiled.
    assert f"\nprints.py:{row}:5: TL101 " in message


@pytest.mark.dynamo
def test_break_no_rule_claims_shows_dynamo_type_and_id(torch, tmp_path):
    module = load(tmp_path, "branches", BRANCHES)
    error = failure(module.pick, torch.ones(3))
    (brk,) = error.breaks
    message = str(error)
    assert f"{module.__file__}:{line_of(module, 'if x.sum()')}:" in message
    claimed = [rule.code for rule in all_rules() if brk.gb_type in rule.gb_types]
    if claimed:
        assert any(f" {code} " in message for code in claimed)
    else:
        assert brk.gb_id and f":1: {brk.gb_id} {brk.gb_type}" in message


@pytest.mark.dynamo
@pytest.mark.usefixtures("torch")  # the module it loads imports torch
def test_rule_for_the_break_type_names_a_break_no_finding_covers(tmp_path):
    module = load(tmp_path, "clean", CLEAN)
    row = line_of(module, "return torch.relu")
    only_one = {}
    for rule in all_rules():
        for gb_type in rule.gb_types:
            only_one[gb_type] = None if gb_type in only_one else rule
    gb_type, rule = next((t, r) for t, r in only_one.items() if r is not None)
    brk = Break(module.__file__, row, gb_type, None, "why", False)
    with pytest.raises(GraphBreakError) as raised:
        check_graph_breaks([brk])
    assert f"{module.__file__}:{row}:1: {rule.code} {rule.message} (Dynamo: {gb_type})" in str(raised.value)


def test_break_without_location_or_id():
    brk = Break(None, None, "Some break no rule knows", None, "Dynamo says why", True)
    with pytest.raises(GraphBreakError) as raised:
        check_graph_breaks([brk])
    assert "\n<unknown>: DYNAMO Some break no rule knows: Dynamo says why [Dynamo skipped" in str(raised.value)
    assert check_graph_breaks([]) is None


@pytest.mark.dynamo
@pytest.mark.usefixtures("torch")  # the test it runs imports torch
def test_pytest_fixture(pytester):
    pytester.makeconftest('pytest_plugins = ["torchlint.testing"]\n')
    pytester.makepyfile(
        test_model="""
        import torch


        def add_one(x):
            return x + 1


        def noisy(x):
            print("noisy")
            return x + 1


        def test_clean(torchlint_no_graph_breaks):
            torchlint_no_graph_breaks(add_one, torch.ones(2))


        def test_noisy(torchlint_no_graph_breaks):
            torchlint_no_graph_breaks(noisy, torch.ones(2))
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*GraphBreakError: 1 graph break under torch.compile:", "*test_model.py:9:5: TL101 *"])


def test_import_does_not_import_torch():
    probe = "import sys, torchlint.testing; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
