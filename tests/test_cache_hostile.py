"""The cache under hostile conditions: an environment that changed under it, a file made
unreadable since the last run, and a cache folder that is not what torchlint made of it (a
symbolic link committed to a repository, a named pipe where a cache file was). Each runs
the real `torchlint` process; a warm run must say what a run without the cache says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import BAD_FORWARD, without_root_privileges

# Before torch 2.13 Dynamo deep-copies nothing, plain data included.
DEEPCOPY = """\
import copy

import torch


@torch.compile
def step(x):
    config = copy.deepcopy({"scale": 2.0})
    return x * config["scale"]
"""
DEEPCOPY_FINDING = "step.py:8:14: TL503"


def torchlint(
    *args: str, cwd: Path, env: dict | None = None, prefix: list[str] = (), timeout: float = 120
) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "torchlint", "check", *args],
        cwd=cwd, capture_output=True, text=True, env={**environment, "TORCHLINT_NO_SERVER": "1", **(env or {})},
        timeout=timeout,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "net.py").write_text(BAD_FORWARD)
    (folder / "step.py").write_text(DEEPCOPY)
    return folder


# --- the environment ----------------------------------------------------------------------


def _torch_installed(site: Path, version: str) -> dict:
    """An import path on which torch ``version`` is found first: its distribution metadata,
    all that torchlint reads of an installed torch. An upgrade replaces the folder."""
    for old in site.glob("torch-*.dist-info"):
        (old / "METADATA").unlink()
        old.rmdir()
    metadata = site / f"torch-{version}.dist-info"
    metadata.mkdir(parents=True)
    (metadata / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n\n")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


@pytest.mark.parametrize("named", [["step.py"], ["."]], ids=["one-file", "project"])
def test_findings_follow_an_upgrade_of_torch(project: Path, tmp_path: Path, named: list[str]) -> None:
    site = tmp_path / "site"
    old = torchlint(*named, cwd=project, env=_torch_installed(site, "2.11.0"))
    assert DEEPCOPY_FINDING in old.stdout, old.stderr
    new = torchlint(*named, cwd=project, env=_torch_installed(site, "2.13.0"))
    assert DEEPCOPY_FINDING not in new.stdout, new.stderr
    back = torchlint(*named, cwd=project, env=_torch_installed(site, "2.11.0"))
    assert DEEPCOPY_FINDING in back.stdout


# --- the files checked --------------------------------------------------------------------


@pytest.mark.parametrize("named", [["locked.py", "net.py"], ["."], ["locked.py"]], ids=["named", "folder", "alone"])
def test_a_file_made_unreadable_after_a_cached_run_is_an_error_as_without_the_cache(
    project: Path, named: list[str]
) -> None:
    (project / "locked.py").write_text(BAD_FORWARD)
    unprivileged = without_root_privileges()
    assert torchlint(*named, cwd=project, prefix=unprivileged).returncode == 1
    (project / "locked.py").chmod(0)
    cached = torchlint(*named, cwd=project, prefix=unprivileged)
    uncached = torchlint(*named, "--no-cache", cwd=project, prefix=unprivileged)
    assert "error: locked.py: permission denied" in uncached.stderr.splitlines()
    assert (cached.returncode, cached.stdout, cached.stderr) == (uncached.returncode, uncached.stdout, uncached.stderr)
