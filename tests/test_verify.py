"""`torchlint verify` end to end: real workers, real TorchDynamo on the CPU.

Most runs go through the command in this process, on warm workers shared by the module
(`verify_pool`): each is still a run of its own, with its own targets, static findings,
report and exit code, as `torchlint verify` gives a run of several files. The runs that
kill their workers, and those that check how the command fails, are real processes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import BREAK_UNDER_A_WITH, dynamo_workers
from torchlint.cli import cli
from torchlint.rules import rule_by_code
from torchlint.verify.compare import expectations
from torchlint.verify.pool import WorkerPool
from torchlint.verify.targets import declares_targets, parse_target_argument

REPO = Path(__file__).resolve().parent.parent
# The checkout first, then whatever the caller put on the path (the packages torchlint needs may be there).
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


@pytest.fixture(scope="module")
def verify_pool():
    """Warm verify workers (one per core, see `dynamo_workers`) for every in-process run here."""
    with WorkerPool(dynamo_workers(), env=ENV) as pool:
        yield pool


def verify_process(*arguments: str, cwd: Path = REPO, timeout: int = 600) -> subprocess.CompletedProcess:
    """`torchlint verify -q ARGUMENTS` in a process of its own, with workers of its own."""
    return subprocess.run(
        [sys.executable, "-m", "torchlint", "verify", "-q", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
    )


def verify(pool: WorkerPool, *arguments: str, cwd: Path = REPO):
    """`torchlint verify -q ARGUMENTS` run from ``cwd`` in this process, on ``pool``'s workers;
    the result has exit_code, stdout and stderr."""
    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["verify", "-q", *arguments], obj={"verify_pool": pool})
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def verify_json(pool: WorkerPool, *arguments: str, cwd: Path = REPO, expect_exit: int = 0) -> dict:
    result = verify(pool, "--output-format", "json", *arguments, cwd=cwd)
    assert result.exit_code == expect_exit, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout)


def write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


# -- the convention ------------------------------------------------------------------


def test_target_argument_names_one_target():
    assert parse_target_argument("models/net.py::block") == (Path("models/net.py"), "block")
    assert parse_target_argument("models/") == (Path("models/"), None)


def test_declaring_files_are_found_by_text(tmp_path):
    declares = write(tmp_path / "a.py", "def torchlint_targets():\n    return {}\n")
    plain = write(tmp_path / "b.py", "def targets():\n    return {}\n")
    assert declares_targets(declares) and not declares_targets(plain)


def test_expectations_come_from_comments_only():
    source = 's = "# expect: TL101"\nprint(s)  # expect: TL101, TL102\n'
    assert expectations(source) == {2: {"TL101", "TL102"}}


# -- against Dynamo --------------------------------------------------------------------


@needs_torch
@pytest.mark.dynamo
def test_fixtures_agree_with_dynamo(verify_pool):
    report = verify_json(verify_pool, "fixtures/", "--jobs", "2")
    summary = report["summary"]
    assert summary["errors"] == 0
    assert summary["targets"] >= 10
    assert summary["misses"] == 0 and summary["false_positives"] == 0
    assert summary["matched"] > 10
    assert report["annotations"] == []
    for target in report["targets"]:
        assert target["status"] == "ok", target["error"]
        assert target["outputs_match"], target["id"]
        for brk in target["breaks"]:
            # Every break lands in the fixture, and its type is one the matching rule names.
            assert brk["file"].startswith(str(REPO / "fixtures")), brk
            claimed = {t for code in brk["matched_by"] for t in rule_by_code(code).gb_types}
            assert brk["gb_type"] in claimed, (target["id"], brk)
    # The `torchlint verify fixtures/` examples of the README and docs/verify.md show these totals.
    shown = (
        f"overall: {summary['breaks']} breaks, {summary['findings']} findings, {summary['matched']} matched, "
        f"{summary['false_positives']} false positives, {summary['misses']} missed"
    )
    for page in (REPO / "README.md", REPO / "docs" / "verify.md"):
        assert shown in page.read_text(encoding="utf-8"), page


@needs_torch
@pytest.mark.dynamo
def test_one_target_by_name_and_the_text_table(verify_pool):
    completed = verify(verify_pool, "fixtures/transformer_block.py::attention")
    assert completed.exit_code == 0, completed.stderr
    assert "fixtures/transformer_block.py::attention" in completed.stdout
    assert "fixtures/transformer_block.py::block" not in completed.stdout
    assert "precision 1.00, recall 1.00" in completed.stdout


MODEL_WITH_LOOP = """\
    import logging

    import torch
    from torch import nn


    class Looped(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            logging.info("start")
            for _ in range(2):
                print("step")
                x = x + 1
            return x


    def torchlint_targets():
        return {"looped": (Looped(), (torch.ones(2),))}
"""


@needs_torch
@pytest.mark.dynamo
def test_breaks_are_blamed_on_user_lines_even_after_an_empty_graph_and_in_loops(verify_pool, tmp_path):
    write(tmp_path / "model.py", MODEL_WITH_LOOP)
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    breaks = {brk["line"]: brk for brk in report["targets"][0]["breaks"]}
    # logging.info is blamed inside the logging module; verify walks out to the caller.
    assert breaks[9]["file"] == str((tmp_path / "model.py").resolve())
    assert breaks[9]["matched_by"] == ["TL102"]
    # The print follows an empty graph and sits in a loop: explain() alone misses it.
    # The print is matched by its own rule first, then by the loop it makes Dynamo skip.
    assert breaks[11]["matched_by"] == ["TL101", "TL601"]
    assert breaks[11]["gb_id"] and breaks[11]["gb_id"].startswith("GB")
    assert report["targets"][0]["fullgraph"]["ok"] is False


@needs_torch
@pytest.mark.dynamo
def test_disagreement_exits_one_and_names_the_line(verify_pool, tmp_path):
    write(
        tmp_path / "model.py",
        """\
        import torch


        @torch.compile
        def double(x: torch.Tensor) -> torch.Tensor:
            y = x * 2  # expect: TL101
            return y


        def torchlint_targets():
            return {"double": (double, (torch.ones(2),))}
        """,
    )
    report = verify_json(verify_pool, "model.py", cwd=tmp_path, expect_exit=1)
    [problem] = report["annotations"]
    assert problem["line"] == 6 and problem["expected"] == ["TL101"] and problem["static"] == []
    assert problem["ran"] and not problem["dynamo"]


@needs_torch
@pytest.mark.dynamo
def test_findings_on_lines_that_never_ran_are_not_false_positives(verify_pool, tmp_path):
    write(
        tmp_path / "model.py",
        """\
        import torch


        @torch.compile
        def scale(x: torch.Tensor, verbose: bool = False) -> torch.Tensor:
            if verbose:
                print("scaling")
            return x * 3


        def torchlint_targets():
            return {"quiet": (scale, (torch.ones(2),))}
        """,
    )
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    assert report["summary"]["findings"] == 0 and report["summary"]["false_positives"] == 0


@needs_torch
@pytest.mark.dynamo
def test_a_caller_skipped_for_a_break_in_its_loop_leaves_its_later_lines_unjudged(verify_pool, tmp_path):
    # `step` breaks inside `solve`'s loop: Dynamo gives up on `solve`, whose `.item()` then
    # runs eagerly and is never traced. Its finding is neither confirmed nor refuted.
    write(
        tmp_path / "model.py",
        """\
        import torch


        def step(y):
            if y.sum() > 0:
                return y * 0.5
            return y


        @torch.compile
        def solve(y):
            for _ in range(3):
                y = step(y)
            total = y.sum().item()
            return y, total


        def torchlint_targets():
            return {"solve": (solve, (torch.ones(2),))}
        """,
    )
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    [brk] = report["targets"][0]["breaks"]
    assert brk["line"] == 5 and brk["frame_skipped"]
    assert brk["skipped_at"] == [[str((tmp_path / "model.py").resolve()), 13]]
    assert report["summary"]["false_positives"] == 0
    assert report["summary"]["findings"] == report["summary"]["matched"] == 2  # the branch, the loop it skips


@needs_torch
@pytest.mark.dynamo
def test_a_break_under_a_generator_context_manager_leaves_the_rest_of_its_function_unjudged(verify_pool, tmp_path):
    targets = '\n\ndef torchlint_targets():\n    return {"solve": (solve, (torch.ones(2),))}\n'
    (tmp_path / "model.py").write_text(BREAK_UNDER_A_WITH + targets)
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    [brk] = report["targets"][0]["breaks"]
    assert brk["line"] == 12 and brk["frame_skipped"]
    assert brk["skipped_at"] == [[str((tmp_path / "model.py").resolve()), 19]]
    assert report["summary"]["false_positives"] == 0
    assert report["summary"]["findings"] == report["summary"]["matched"] == 1


@needs_torch
@pytest.mark.dynamo
def test_compile_profile_from_config_reaches_dynamo(verify_pool, tmp_path):
    write(
        tmp_path / "model.py",
        """\
        import torch
        from torch import nn


        class Scale(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x * x.sum().item()


        def torchlint_targets():
            return {"scale": (Scale(), (torch.ones(3),))}
        """,
    )
    default = verify(verify_pool, "--output-format", "json", "model.py", cwd=tmp_path)
    assert json.loads(default.stdout)["summary"]["breaks"] == 1
    write(tmp_path / "pyproject.toml", "[tool.torchlint]\ncapture-scalar-outputs = true\n")
    assert verify_json(verify_pool, "model.py", cwd=tmp_path)["summary"]["breaks"] == 0


@needs_torch
@pytest.mark.dynamo
def test_crashing_and_hanging_targets_are_errors_and_the_run_goes_on(tmp_path):
    write(
        tmp_path / "model.py",
        """\
        import os
        import time

        import torch


        def crash(x):
            os._exit(3)


        def hang(x):
            time.sleep(600)


        def fine(x):
            return x + 1


        def torchlint_targets():
            x = torch.ones(2)
            return {"crash": (crash, (x,)), "hang": (hang, (x,)), "fine": (fine, (x,))}
        """,
    )
    completed = verify_process("--output-format", "json", "--timeout", "20", "model.py", cwd=tmp_path)
    assert completed.returncode == 2
    report = json.loads(completed.stdout)
    status = {target["id"].rpartition("::")[2]: target for target in report["targets"]}
    assert "crashed" in status["crash"]["error"]
    assert "timed out" in status["hang"]["error"]
    assert status["fine"]["status"] == "ok"


@needs_torch
@pytest.mark.dynamo
def test_target_that_raises_is_reported_with_its_traceback(verify_pool, tmp_path):
    write(
        tmp_path / "model.py",
        """\
        def broken(x):
            raise ValueError("no such layer")


        def torchlint_targets():
            return {"broken": (broken, (1,))}
        """,
    )
    completed = verify(verify_pool, "model.py", cwd=tmp_path)
    assert completed.exit_code == 2
    assert "error in model.py::broken: ValueError: no such layer" in completed.stdout


@needs_torch
@pytest.mark.dynamo
def test_inductor_backend_compares_outputs_with_eager(verify_pool, tmp_path):
    write(
        tmp_path / "model.py",
        """\
        import torch


        def gelu_mlp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.gelu(x @ w).sum(dim=-1)


        def torchlint_targets():
            torch.manual_seed(0)
            return {"mlp": (gelu_mlp, (torch.randn(4, 8), torch.randn(8, 8)))}
        """,
    )
    report = verify_json(verify_pool, "--backend", "inductor", "model.py", cwd=tmp_path)
    [target] = report["targets"]
    assert target["outputs_match"] is True and target["fullgraph"]["ok"] is True


@needs_torch
@pytest.mark.dynamo
def test_numpy_outputs_are_compared_by_value(verify_pool, tmp_path):
    # An agent's `predict` returns numpy actions: equal arrays match, and an array that
    # differs does not.
    write(
        tmp_path / "model.py",
        """\
        import numpy as np
        import torch


        def act(x: torch.Tensor):
            return (x * 2).numpy(), None


        def drifts(x: torch.Tensor):
            return np.array([1.0, 2.0]) + float(torch.compiler.is_compiling())


        def torchlint_targets():
            return {"act": (act, (torch.ones(3),)), "drifts": (drifts, (torch.ones(1),))}
        """,
    )
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    matched = {target["id"].rpartition("::")[2]: target["outputs_match"] for target in report["targets"]}
    assert matched == {"act": True, "drifts": False}


@needs_torch
@pytest.mark.dynamo
def test_cuda_asked_for_without_cuda_is_a_clear_error(verify_pool):
    with verify_pool.worker() as worker:
        if worker.has_cuda:
            pytest.skip("this machine has CUDA")
    completed = verify_process("--device", "cuda", "fixtures/", timeout=300)
    assert completed.returncode == 2
    assert "sees no CUDA device" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_no_targets_is_a_usage_error(tmp_path):
    write(tmp_path / "plain.py", "x = 1\n")
    completed = verify_process("plain.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert "no targets" in completed.stderr


def test_missing_path_is_an_error(tmp_path):
    completed = verify_process("nowhere.py::block", cwd=tmp_path)
    assert completed.returncode == 2
    assert "nowhere.py" in completed.stderr


@needs_torch
@pytest.mark.dynamo
def test_an_object_from_another_file_given_to_the_module(verify_pool, tmp_path: Path) -> None:
    write(
        tmp_path / "schedulers.py",
        """\
        class Scheduler:
            def step(self, x):
                print("stepping")
                return x * 0.5
        """,
    )
    write(
        tmp_path / "model.py",
        """\
        import torch

        from schedulers import Scheduler


        class Loop(torch.nn.Module):
            def __init__(self, scheduler):
                super().__init__()
                self.scheduler = scheduler

            def forward(self, x):
                return self.scheduler.step(x + 1)


        def torchlint_targets():
            return {"loop": (Loop(Scheduler()), (torch.randn(3),))}
        """,
    )
    # The worker puts the target's folder first on the path, so `from schedulers import ...` resolves.
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    # The print in the other file is found without taking every function that ran for compiled.
    summary = report["summary"]
    assert (summary["matched"], summary["misses"], summary["false_positives"]) == (1, 0, 0)
    [brk] = report["targets"][0]["breaks"]
    assert brk["file"] == str((tmp_path / "schedulers.py").resolve()) and brk["line"] == 3
    assert brk["matched_by"] == ["TL101"]


@needs_torch
@pytest.mark.dynamo
def test_traced_regions_separate_rule_misses_from_region_misses(verify_pool, tmp_path):
    # The scheduler reaches `forward` from a factory: torchlint does not follow what a function
    # returns into a constructor, so the print in `step` is a region miss, which the traced view
    # (every function that ran) finds.
    write(
        tmp_path / "model.py",
        """
        import torch


        class Scheduler:
            def step(self, x):
                print("stepping")
                return x * 0.5


        class Loop(torch.nn.Module):
            def __init__(self, scheduler):
                super().__init__()
                self.scheduler = scheduler

            def forward(self, x):
                return self.scheduler.step(x + 1)


        def make_scheduler():
            return Scheduler()


        def torchlint_targets():
            return {"loop": (Loop(make_scheduler()), (torch.randn(3),))}
        """,
    )
    report = verify_json(verify_pool, "model.py", cwd=tmp_path, expect_exit=1)
    assert report["summary"]["misses"] == 1 and report["summary"]["matched"] == 0
    traced = report["traced_regions"]
    assert traced["summary"]["misses"] == 0 and traced["summary"]["matched"] == 1
    assert traced["summary"]["recall"] == 1.0
    text = verify(verify_pool, "model.py", cwd=tmp_path).stdout
    assert "with every function that ran taken as compiled: 1 matched" in text


@needs_torch
@pytest.mark.dynamo
def test_numpy_and_random_draws_are_seeded_alike_before_each_run(verify_pool, tmp_path):
    # The draws run eagerly at a break in both runs; seeded alike, they give the same numbers.
    write(
        tmp_path / "model.py",
        """\
        import random

        import numpy as np
        import torch


        def jitter(x: torch.Tensor) -> torch.Tensor:
            scale = np.random.beta(0.4, 0.4, x.shape[0])
            return x * torch.as_tensor(scale, dtype=x.dtype) + random.random()


        def torchlint_targets():
            return {"jitter": (jitter, (torch.ones(3),))}
        """,
    )
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    [target] = report["targets"]
    assert len(target["breaks"]) == 2 and target["outputs_match"] is True


@needs_torch
@pytest.mark.dynamo
@pytest.mark.parametrize(("mode", "breaks"), [("both", 1), ("eval", 0), ("train", 1)])
def test_verify_runs_modules_in_the_profiles_mode(verify_pool, tmp_path, mode, breaks):
    write(tmp_path / "pyproject.toml", f'[tool.torchlint]\nmode = "{mode}"\n')
    write(
        tmp_path / "model.py",
        """\
        import torch


        class Net(torch.nn.Module):
            def forward(self, x):
                if self.training:
                    print("training step")
                return x * 2


        def torchlint_targets():
            return {"net": (Net(), (torch.ones(3),))}
        """,
    )
    report = verify_json(verify_pool, "model.py", cwd=tmp_path, expect_exit=0)
    [target] = report["targets"]
    assert len(target["breaks"]) == breaks


@needs_torch
@pytest.mark.dynamo
def test_a_target_name_that_is_not_declared_names_the_files_targets(verify_pool, tmp_path: Path) -> None:
    write(
        tmp_path / "targets.py",
        """\
        import torch


        def net(x):
            return x + 1


        def torchlint_targets():
            return {"net": (net, (torch.ones(2),)), "step": (net, (torch.ones(3),))}
        """,
    )
    result = verify(verify_pool, "targets.py::nte", cwd=tmp_path)
    assert result.exit_code == 2
    assert "targets.py: no target `nte`; did you mean `net`? (its targets: net, step)" in result.stderr
    assert "Traceback" not in result.stderr and "KeyError" not in result.stderr
    assert verify(verify_pool, "targets.py::net", cwd=tmp_path).exit_code == 0


@needs_torch
@pytest.mark.dynamo
def test_random_draws_match_and_a_clock_reads_as_nondeterministic(verify_pool, tmp_path: Path) -> None:
    write(
        tmp_path / "noisy.py",
        """\
        import random
        import time

        import torch


        def drop(x):
            return torch.nn.functional.dropout(x, 0.5, training=True) + torch.randn_like(x) + random.random()


        def clocked(x):
            return x * (time.perf_counter_ns() % 997)


        def torchlint_targets():
            return {"drop": (drop, (torch.ones(64),)), "clocked": (clocked, (torch.ones(4),))}
        """,
    )
    result = verify(verify_pool, "--output-format", "json", "noisy.py", cwd=tmp_path)
    by_name = {target["id"].rpartition("::")[2]: target for target in json.loads(result.stdout)["targets"]}
    assert by_name["drop"]["outputs_match"] is True and by_name["drop"]["nondeterministic"] is None
    assert by_name["clocked"]["outputs_match"] is False and by_name["clocked"]["nondeterministic"] is True
    text = verify(verify_pool, "noisy.py", cwd=tmp_path).stdout
    assert "outputs differ from eager (so does eager run again: nondeterministic)" in text


@needs_torch
@pytest.mark.dynamo
def test_the_fullgraph_column_gives_the_cause_and_the_users_line(verify_pool, tmp_path: Path) -> None:
    write(
        tmp_path / "sampler.py",
        """\
        import torch

        torch._dynamo.config.capture_scalar_outputs = True


        def sample(logits, p):
            top_p = p.item()
            if top_p > 0.99:
                return logits
            return logits * 2


        def torchlint_targets():
            return {"sample": (sample, (torch.ones(4), torch.tensor(0.5)))}
        """,
    )
    row = next(line for line in verify(verify_pool, "sampler.py", cwd=tmp_path).stdout.splitlines() if "::sample" in line)
    assert "fails (UserError: " in row and "data-dependent" in row and row.endswith("at sampler.py:8 (if top_p > 0.99:))"), row
