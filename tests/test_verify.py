"""`torchlint verify` end to end: real workers, real TorchDynamo on the CPU."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchlint.rules import rule_by_code
from torchlint.verify.compare import expectations
from torchlint.verify.targets import declares_targets, parse_target_argument

REPO = Path(__file__).resolve().parent.parent

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def verify(*arguments: str, cwd: Path = REPO, timeout: int = 600, importable: bool = False) -> subprocess.CompletedProcess:
    """``importable``: the target's folder is on the path, so its files import each other."""
    path = [str(REPO), str(cwd)] if importable else [str(REPO)]
    return subprocess.run(
        [sys.executable, "-m", "torchlint", "verify", "-q", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
    )


def verify_json(*arguments: str, cwd: Path = REPO, expect_exit: int = 0, importable: bool = False) -> dict:
    completed = verify("--output-format", "json", *arguments, cwd=cwd, importable=importable)
    assert completed.returncode == expect_exit, completed.stdout[-3000:] + completed.stderr[-3000:]
    return json.loads(completed.stdout)


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
def test_fixtures_agree_with_dynamo():
    report = verify_json("fixtures/", "--jobs", "2")
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


@needs_torch
def test_one_target_by_name_and_the_text_table():
    completed = verify("fixtures/transformer_block.py::attention")
    assert completed.returncode == 0, completed.stderr
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
def test_breaks_are_blamed_on_user_lines_even_after_an_empty_graph_and_in_loops(tmp_path):
    write(tmp_path / "model.py", MODEL_WITH_LOOP)
    report = verify_json("model.py", cwd=tmp_path)
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
def test_disagreement_exits_one_and_names_the_line(tmp_path):
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
    report = verify_json("model.py", cwd=tmp_path, expect_exit=1)
    [problem] = report["annotations"]
    assert problem["line"] == 6 and problem["expected"] == ["TL101"] and problem["static"] == []
    assert problem["ran"] and not problem["dynamo"]


@needs_torch
def test_findings_on_lines_that_never_ran_are_not_false_positives(tmp_path):
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
    report = verify_json("model.py", cwd=tmp_path)
    assert report["summary"]["findings"] == 0 and report["summary"]["false_positives"] == 0


@needs_torch
def test_compile_profile_from_config_reaches_dynamo(tmp_path):
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
    default = verify("--output-format", "json", "model.py", cwd=tmp_path)
    assert json.loads(default.stdout)["summary"]["breaks"] == 1
    write(tmp_path / "pyproject.toml", "[tool.torchlint]\ncapture-scalar-outputs = true\n")
    assert verify_json("model.py", cwd=tmp_path)["summary"]["breaks"] == 0


@needs_torch
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
    completed = verify("--output-format", "json", "--timeout", "20", "model.py", cwd=tmp_path)
    assert completed.returncode == 2
    report = json.loads(completed.stdout)
    status = {target["id"].rpartition("::")[2]: target for target in report["targets"]}
    assert "crashed" in status["crash"]["error"]
    assert "timed out" in status["hang"]["error"]
    assert status["fine"]["status"] == "ok"


@needs_torch
def test_target_that_raises_is_reported_with_its_traceback(tmp_path):
    write(
        tmp_path / "model.py",
        """\
        def broken(x):
            raise ValueError("no such layer")


        def torchlint_targets():
            return {"broken": (broken, (1,))}
        """,
    )
    completed = verify("model.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert "error in model.py::broken: ValueError: no such layer" in completed.stdout


@needs_torch
def test_inductor_backend_compares_outputs_with_eager(tmp_path):
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
    report = verify_json("--backend", "inductor", "model.py", cwd=tmp_path)
    [target] = report["targets"]
    assert target["outputs_match"] is True and target["fullgraph"]["ok"] is True


@needs_torch
def test_cuda_asked_for_without_cuda_is_a_clear_error(tmp_path):
    probe = [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"]
    if subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "True":
        pytest.skip("this machine has CUDA")
    completed = verify("--device", "cuda", "fixtures/", timeout=300)
    assert completed.returncode == 2
    assert "sees no CUDA device" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_no_targets_is_a_usage_error(tmp_path):
    write(tmp_path / "plain.py", "x = 1\n")
    completed = verify("plain.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert "no targets" in completed.stderr


def test_missing_path_is_an_error(tmp_path):
    completed = verify("nowhere.py::block", cwd=tmp_path)
    assert completed.returncode == 2
    assert "nowhere.py" in completed.stderr


@needs_torch
@needs_torch
def test_an_object_from_another_file_given_to_the_module(tmp_path: Path) -> None:
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
    report = verify_json("model.py", cwd=tmp_path, importable=True)
    # The print in the other file is found without taking every function that ran for compiled.
    summary = report["summary"]
    assert (summary["matched"], summary["misses"], summary["false_positives"]) == (1, 0, 0)
    [brk] = report["targets"][0]["breaks"]
    assert brk["file"] == str((tmp_path / "schedulers.py").resolve()) and brk["line"] == 3
    assert brk["matched_by"] == ["TL101"]


def test_traced_regions_separate_rule_misses_from_region_misses(tmp_path):
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
    report = verify_json("model.py", cwd=tmp_path, expect_exit=1)
    assert report["summary"]["misses"] == 1 and report["summary"]["matched"] == 0
    traced = report["traced_regions"]
    assert traced["summary"]["misses"] == 0 and traced["summary"]["matched"] == 1
    assert traced["summary"]["recall"] == 1.0
    text = verify("model.py", cwd=tmp_path).stdout
    assert "with every function that ran taken as compiled: 1 matched" in text
