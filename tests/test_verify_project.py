"""verify's static side lints the files that ran as one project: real workers, real Dynamo on the CPU."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


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
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", "verify", "-q", "--output-format", "json", "model.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])},
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    report = json.loads(completed.stdout)
    # The print in the other file is found without taking every function that ran for compiled.
    summary = report["summary"]
    assert (summary["matched"], summary["misses"], summary["false_positives"]) == (1, 0, 0)
    [brk] = report["targets"][0]["breaks"]
    assert brk["file"] == str((tmp_path / "schedulers.py").resolve()) and brk["line"] == 3
    assert brk["matched_by"] == ["TL101"]
