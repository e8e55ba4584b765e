"""The settings that decide what is compiled: an `entry-points` pattern that names no function
is an error naming the configuration file and key (and `--fix` keeps the `noqa` comments it
leaves unused), and `compiled = "reachable"` counts only what compile sites and entry points
reach, where `"forward"` counts every module's forward too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import write
from torchlint.run.cache import Cache
from torchlint.run.reuse import ReusedRun
from torchlint.run.runner import _project
from torchlint.run.workers import Workers
from torchlint.settings.config import ConfigResolver

# `probe` is compiled only as a configured entry point; its print is suppressed.
SAMPLER = """\
import torch


class Sampler:
    def step(self, x):
        return x * 2


def probe(x):
    print(x)  # noqa: TL101
    return x
"""

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return x
"""

TYPO = '"pkg.model.prob" matches no function in the project'


def torchlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")}
    return subprocess.run(
        [sys.executable, "-m", "torchlint", "check", *args],
        cwd=cwd, capture_output=True, text=True, env=environment, timeout=120,
    )


def entry_points(*patterns: str) -> str:
    return "[tool.torchlint]\nentry-points = [" + ", ".join(f'"{p}"' for p in patterns) + "]\n"


@pytest.fixture
def pkg(project: Path) -> Path:
    write(project, {"pkg/__init__.py": "", "pkg/model.py": SAMPLER, "pkg/net.py": NET})
    return project


def error_lines(ran: subprocess.CompletedProcess) -> list[str]:
    return [line for line in ran.stderr.splitlines() if line.startswith("error:")]


# -- entry points that name nothing ---------------------------------------------------------


def test_a_misspelt_entry_point_is_an_error_naming_the_file_and_the_key(pkg: Path) -> None:
    write(pkg, {"pyproject.toml": entry_points("pkg.model.prob", "Sampler.step")})
    ran = torchlint("pkg", cwd=pkg)
    assert ran.returncode == 2
    assert error_lines(ran) == [f"error: pyproject.toml: [tool.torchlint] entry-points: {TYPO}"]
    # Every file is still checked: the comment the typo leaves unused is reported, unfixable.
    assert ran.stdout == "pkg/model.py:10:15: TL902 unused `noqa` directive for TL101; remove it\n"
    assert ran.stderr.splitlines()[-1] == "Found 1 finding in 1 file. 1 configuration error."


def test_in_a_torchlint_toml_the_key_is_named_alone(pkg: Path) -> None:
    write(pkg, {"torchlint.toml": 'entry-points = ["pkg.model.prob"]\n'})
    ran = torchlint("pkg", cwd=pkg)
    assert ran.returncode == 2
    assert error_lines(ran) == [f"error: torchlint.toml: entry-points: {TYPO}"]


def test_entry_points_matched_by_their_end_or_by_class_are_no_error(pkg: Path) -> None:
    # `Sampler.step` ends a dotted name; `Net` names a class, which means its forward.
    write(pkg, {"pyproject.toml": entry_points("Sampler.step", "pkg.model.probe", "Net")})
    ran = torchlint("pkg", "--show-regions", cwd=pkg)
    assert ran.returncode == 0 and error_lines(ran) == []
    assert "  5: Sampler.step: entry: config entry-points (`Sampler.step`)" in ran.stdout.splitlines()
    assert torchlint("pkg", cwd=pkg).returncode == 0


def test_a_glob_is_not_a_pattern_and_the_error_says_so(pkg: Path) -> None:
    write(pkg, {"pyproject.toml": entry_points("pkg.model.*")})
    ran = torchlint("pkg", cwd=pkg)
    assert ran.returncode == 2
    assert error_lines(ran) == [
        'error: pyproject.toml: [tool.torchlint] entry-points: "pkg.model.*" matches no function in the project'
        " (entry points are dotted names matched by their end, such as `Net.forward`, not globs)"
    ]


def test_a_run_on_one_file_reads_the_project_and_reports_the_error(pkg: Path) -> None:
    write(pkg, {"pyproject.toml": entry_points("pkg.model.probe", "Net.forwrd")})
    ran = torchlint("pkg/model.py", cwd=pkg)
    assert error_lines(ran) == ['error: pyproject.toml: [tool.torchlint] entry-points: "Net.forwrd" matches no function in the project']
    # A function in a file not named still counts as matched: the project is read whole.
    write(pkg, {"pyproject.toml": entry_points("pkg.model.probe", "Net.forward")})
    ran = torchlint("pkg/model.py", cwd=pkg)
    assert ran.returncode == 0 and error_lines(ran) == []


def test_without_the_project_no_error_is_reported(pkg: Path) -> None:
    """`--no-project` reads only the named files: a pattern may name a function of another, so
    nothing is reported; the unused comment's fix is withheld all the same."""
    write(pkg, {"pyproject.toml": entry_points("pkg.model.prob", "Net.forward")})
    ran = torchlint("--no-project", "pkg/model.py", cwd=pkg)
    assert ran.returncode == 1 and error_lines(ran) == []
    assert "TL902 unused" in ran.stdout and "[*]" not in ran.stdout


def test_fix_keeps_the_noqa_a_misspelt_entry_point_leaves_unused(pkg: Path) -> None:
    write(pkg, {"pyproject.toml": entry_points("pkg.model.prob")})
    ran = torchlint("--fix", "pkg", cwd=pkg)
    assert ran.returncode == 2 and error_lines(ran) == [f"error: pyproject.toml: [tool.torchlint] entry-points: {TYPO}"]
    assert (pkg / "pkg/model.py").read_text() == SAMPLER
    # With no entry points configured, the comment is unused and `--fix` removes it.
    (pkg / "pyproject.toml").unlink()
    assert torchlint("--fix", "pkg", cwd=pkg).returncode == 0
    assert "# noqa" not in (pkg / "pkg/model.py").read_text()


def test_a_warm_run_repeats_the_error(pkg: Path) -> None:
    write(pkg, {"pyproject.toml": entry_points("pkg.model.prob")})
    cold = torchlint("pkg", cwd=pkg)
    warm = torchlint("pkg", cwd=pkg)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert error_lines(warm) == [f"error: pyproject.toml: [tool.torchlint] entry-points: {TYPO}"]


def test_a_run_answered_from_the_last_solve_measures_the_entry_points_configured_now(pkg: Path) -> None:
    """A pattern that names nothing changes no file's outline, so the run after it is added
    reuses the last solve: the error comes from what that solve matched."""
    write(pkg, {"pyproject.toml": entry_points("pkg.model.probe")})
    cache = pkg / "cache"

    def solved() -> tuple[type, list[str]]:
        resolver = ConfigResolver()
        work = [(path, resolver.for_path(path)) for path in sorted((pkg / "pkg").glob("*.py"))]
        store = Cache(cache, "pkg")
        with Workers(1) as workers:
            project, _ = _project(work, (), workers, store, {}, False, None)
        store.save()
        return type(project), [error.message for error in project.setting_errors()]

    assert solved()[1] == []
    write(pkg, {"pyproject.toml": entry_points("pkg.model.probe", "pkg.model.prob")})
    kind, errors = solved()
    assert kind is ReusedRun
    assert errors == [f"[tool.torchlint] entry-points: {TYPO}"]


# -- compiled = "forward" | "reachable" -----------------------------------------------------

MODELS = """\
import torch
from torch import nn

FAST_STEP = 0
SLOW_STEP = 0


class Compiled(nn.Module):
    def forward(self, x):
        print(x)
        return x * FAST_STEP


class Eager(nn.Module):
    def forward(self, x):
        print(x)
        return x * SLOW_STEP


def train(fast, slow, x):
    global FAST_STEP, SLOW_STEP
    for _ in range(10):
        fast(x)
        slow(x)
        FAST_STEP += 1
        SLOW_STEP += 1
"""

TRAIN = """\
import torch

from pkg.models import Compiled, Eager, train

train(torch.compile(Compiled()), Eager(), torch.ones(2))
"""


@pytest.fixture
def two_modules(project: Path) -> Path:
    write(project, {"pkg/__init__.py": "", "pkg/models.py": MODELS, "pkg/train.py": TRAIN})
    return project


def compiled_setting(root: Path, value: str) -> None:
    write(root, {"pyproject.toml": f'[tool.torchlint]\ncompiled = "{value}"\n'})


def found(ran: subprocess.CompletedProcess) -> list[str]:
    return [line.split(" ", 2)[0] + " " + line.split(" ", 2)[1] for line in ran.stdout.splitlines()]


def test_reachable_counts_only_what_compile_sites_reach(two_modules: Path) -> None:
    compiled_setting(two_modules, "reachable")
    assert found(torchlint("pkg", cwd=two_modules)) == ["pkg/models.py:10:9: TL101", "pkg/models.py:25:9: TL702"]


def test_forward_counts_every_module_forward(two_modules: Path) -> None:
    compiled_setting(two_modules, "forward")
    everything = [
        "pkg/models.py:10:9: TL101",
        "pkg/models.py:16:9: TL101",
        "pkg/models.py:25:9: TL702",
        "pkg/models.py:26:9: TL702",
    ]
    assert found(torchlint("pkg", cwd=two_modules)) == everything
    # The default.
    (two_modules / "pyproject.toml").unlink()
    assert found(torchlint("pkg", cwd=two_modules)) == everything


def test_a_changed_setting_is_not_answered_from_the_cache(two_modules: Path) -> None:
    compiled_setting(two_modules, "forward")
    assert len(found(torchlint("pkg", cwd=two_modules))) == 4
    compiled_setting(two_modules, "reachable")
    assert len(found(torchlint("pkg", cwd=two_modules))) == 2
    compiled_setting(two_modules, "forward")
    assert len(found(torchlint("pkg", cwd=two_modules))) == 4


def test_show_regions_tells_the_two_apart(two_modules: Path) -> None:
    compiled_setting(two_modules, "forward")
    ran = torchlint("--show-regions", "pkg", cwd=two_modules)
    assert ran.stdout == (
        "pkg/models.py\n"
        "  9: Compiled.forward: entry: forward of nn.Module subclass Compiled (subclass of torch.nn.Module)\n"
        "  15: Eager.forward: entry: forward of nn.Module subclass Eager (subclass of torch.nn.Module)\n"
    )
    compiled_setting(two_modules, "reachable")
    ran = torchlint("--show-regions", "pkg", cwd=two_modules)
    assert ran.stdout == "pkg/models.py\n  9: Compiled.forward: entry: passed to torch.compile()\n"
    assert ran.stderr == "1 compiled function in 1 file.\n"


def test_reachable_follows_configured_entry_points_and_what_they_call(two_modules: Path) -> None:
    write(two_modules, {"pyproject.toml": '[tool.torchlint]\ncompiled = "reachable"\nentry-points = ["pkg.models.train"]\n'})
    ran = torchlint("--show-regions", "pkg", cwd=two_modules)
    # `train` calls objects it is handed: nothing shows which classes, so only it is compiled.
    assert "entry: config entry-points (`pkg.models.train`)" in ran.stdout
    assert "Compiled.forward: entry: passed to torch.compile()" in ran.stdout
    assert "Eager.forward" not in ran.stdout
