"""Small helpers shared by the tests: lint a snippet the way the engine lints a file, or
a project of files on disk through the CLI."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from click.testing import CliRunner

from torchlint.cli import cli
from torchlint.settings.config import ConfigResolver, Settings
from torchlint.project.resolve import lint_text
from torchlint.run.cache import Cache
from torchlint.run.runner import _project
from torchlint.run.workers import Workers

# A module whose forward prints: one TL101 at 7:9.
BAD_FORWARD = """import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        print("x", x.shape)
        return x
"""


class SharedLog:
    """Values appended from this process or from the worker processes it starts (forked
    with the spy that appends in place), read back in order of appending."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("")

    def append(self, value: object) -> None:
        # One write of one line with O_APPEND: lines from several processes never interleave.
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(descriptor, (json.dumps(value) + "\n").encode())
        finally:
            os.close(descriptor)

    def values(self) -> list:
        return [json.loads(line) for line in self.path.read_text().splitlines()]


def dynamo_workers() -> int:
    """How many warm torch workers a module of dynamo tests keeps: one per core, at most four.
    Each costs a torch import and about 400 MB; past a few, they save less than they cost."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores, 4)


def findings(source: str, **settings) -> list[tuple[str, int]]:
    """(code, row) of every finding in ``source`` (dedented)."""
    text = textwrap.dedent(source)
    root = Path("/project")
    diagnostics = lint_text(text, str(root / "pkg" / "model.py"), Settings(root=root, **settings))
    return [(d.code, d.location.row) for d in diagnostics]


def codes(source: str, **settings) -> list[str]:
    return [code for code, _ in findings(source, **settings)]


def write(root: Path, files: dict[str, str]) -> None:
    """Write each file (dedented) under ``root``, making its folders."""
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"))


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_in_process(*args: str, cwd: Path) -> Ran:
    """The `torchlint` command with ``args``, run in ``cwd`` in this process: the real
    command and files, without the half second of imports a fresh process costs. Settings
    from the environment are left out, as a test's own must be."""
    unset = {name: None for name in os.environ if name.startswith("TORCHLINT_")}
    before = os.getcwd()
    os.chdir(cwd)  # contextlib.chdir is Python 3.11's; torchlint supports 3.10
    try:
        result = CliRunner().invoke(cli, list(args), env=unset, catch_exceptions=False)
    finally:
        os.chdir(before)
    return Ran(result.exit_code, result.stdout, result.stderr)


def check(*args: str) -> list[tuple[str, int, str]]:
    """(file, row, code) of every finding of `torchlint check ARGS`."""
    result = CliRunner().invoke(cli, ["check", "--output-format", "json", "--exit-zero", *args])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    return sorted((Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in found)


def indexed_regions(paths: list[Path]) -> set[str]:
    """The compiled functions the project's solve finds over ``paths``, by qualified name."""
    resolver = ConfigResolver()
    work = [(path, resolver.for_path(path)) for path in paths]
    with Workers(1) as workers:
        project, _ = _project(work, (), workers, Cache(None), {}, False, None)
    return {qualname for (_, qualname) in project.solution.compiled}


def without_root_privileges() -> list[str]:
    """A command prefix under which file modes hold: as root, drop the capabilities that
    let root read any file (util-linux's setpriv); nothing for other users."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv, which drops root's right to read any file")
    capabilities = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={capabilities}", f"--bounding-set={capabilities}"]


# `report` breaks while `quiet()` is active: Dynamo cannot resume under that context manager
# and runs the rest of `solve` eagerly, so its `.item()` (line 20) is never traced.
BREAK_UNDER_A_WITH = """\
import contextlib

import torch


@contextlib.contextmanager
def quiet():
    yield


def report(y):
    print("stepped")
    return y


@torch.compile
def solve(y):
    with quiet():
        y = report(y * 2)
    total = y.sum().item()
    return y, total
"""
