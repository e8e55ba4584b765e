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
    RecompileError,
    assert_no_graph_breaks,
    assert_no_recompiles,
    check_graph_breaks,
    count_recompiles,
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


@pytest.mark.dynamo
@pytest.mark.usefixtures("torch")
def test_a_failure_shows_the_breaks_not_torchs_trace_log(pytester):
    """Run as a user's suite runs, in a process of its own with pytest's log capture on: the
    failure names the break and its code, and none of torch's structured-trace debug records."""
    pytester.makepyfile(
        test_model="""
        import torch

        from torchlint.testing import assert_no_graph_breaks


        def noisy(x):
            print("noisy")
            return x + 1


        def test_noisy():
            assert_no_graph_breaks(noisy, torch.ones(2))
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_model.py:7:5: TL101 *"])
    assert "torch.__trace" not in result.stdout.str()


COUNTERS = """
import torch


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.linear(x) * self.calls


class BufferCounter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls += 1
        return self.linear(x) * self.calls


def scaled(x, scale=1.0, *, shift=0.0):
    return x * scale + shift


def tagged(x, tag):
    return x + len(tag)
"""


@pytest.mark.dynamo
def test_assert_no_recompiles_passes_where_a_value_costs_one_recompile(torch, tmp_path):
    module = load(tmp_path, "counters", COUNTERS)
    calls = [(torch.randn(2, 4),) for _ in range(10)]
    assert assert_no_recompiles(module.BufferCounter(), calls) is None
    # A float that changes every call: one recompile, then a symbol.
    count = count_recompiles(module.scaled, [((torch.ones(3),), {"scale": 0.5 + step}) for step in range(10)])
    [frame] = count.frames
    assert (frame.function, frame.compiles, frame.recompiles, frame.limit_hit) == ("scaled", 2, 1, False)
    assert count.calls == 10 and not count.compiled_nothing
    [guard] = frame.guards
    assert guard.guard == "scale == 0.5" and (guard.file, guard.line) == (str(Path(module.__file__).resolve()), line_of(module, "return x * scale"))


@pytest.mark.dynamo
def test_assert_no_recompiles_names_the_frame_its_guard_and_the_finding(torch, tmp_path):
    module = load(tmp_path, "counters", COUNTERS)
    with pytest.raises(RecompileError) as raised:
        assert_no_recompiles(module.Counter(), [torch.randn(2, 4) for _ in range(10)])
    error = raised.value
    assert isinstance(error, AssertionError)
    [frame] = error.count.recompiling(1)
    assert (frame.recompiles, frame.limit_hit) == (7, True)
    message = str(error)
    path, row = module.__file__, line_of(module, "self.calls += 1")
    assert message.startswith("1 frame recompiled more than 1 time over 10 calls under torch.compile:\n")
    assert f"\n{path}:{line_of(module, 'def forward') } in forward: 7 recompiles, recompile limit hit" in message
    assert f"\n  guard failed at {path}:{row}: self.calls == 7" in message
    if rule_by_code("TL701") is not None:
        assert f"\n  {path}:{row}:9: TL701 " in message
        assert f"\n    help: {rule_by_code('TL701').suggestion}" in message


@pytest.mark.dynamo
def test_calls_may_be_pairs_values_or_a_generator_of_the_function_and_allowed_may_be_raised(torch, tmp_path):
    module = load(tmp_path, "counters", COUNTERS)
    pairs = [((torch.ones(2),), {"shift": float(step)}) for step in range(3)]
    assert count_recompiles(module.scaled, pairs).frames[0].recompiles == 1

    def tags():
        for step in range(4):
            yield module.tagged, (torch.ones(2), "t" * (step + 1))

    count = count_recompiles(module.tagged, tags())
    assert (count.calls, count.frames[0].recompiles) == (4, 3)
    assert assert_no_recompiles(module.tagged, [(torch.ones(2), t) for t in ("a", "bb", "ccc")], allowed=2) is None
    with pytest.raises(RecompileError, match="recompiled more than 2 times over 4 calls"):
        assert_no_recompiles(module.tagged, tags(), allowed=2)


@pytest.mark.dynamo
def test_a_sequential_compiled_in_place_compiles_nothing(torch):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    model.compile(backend="eager")
    with pytest.raises(RecompileError, match="^torch.compile compiled nothing over 3 calls: every call ran eagerly") as raised:
        assert_no_recompiles(model, [torch.ones(2, 4)] * 3)
    assert raised.value.count.frames == [] and raised.value.count.compiled_nothing
    # torch.compile of the same module compiles it.
    assert assert_no_recompiles(torch.compile(model, backend="eager"), [torch.ones(2, 4)] * 3) is None


def test_import_does_not_import_torch():
    probe = "import sys, torchlint.testing; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
