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


# --- the cache folder ---------------------------------------------------------------------


def _same_as_without_cache(result: subprocess.CompletedProcess, project: Path, *args: str) -> None:
    uncached = torchlint(*args, "--no-cache", cwd=project)
    assert (result.returncode, result.stdout) == (uncached.returncode, uncached.stdout), result.stderr


def _contents(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_default_cache_folder_that_is_a_symbolic_link_is_not_used(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".torchlint_cache").symlink_to(elsewhere)
    result = torchlint(".", cwd=project)
    assert "warning: .torchlint_cache is a symbolic link; the cache is not used" in result.stderr.splitlines()
    _same_as_without_cache(result, project, ".")
    assert list(elsewhere.iterdir()) == []


def test_a_default_cache_folder_that_is_a_file_is_not_used(project: Path) -> None:
    (project / ".torchlint_cache").write_text("not a folder\n")
    result = torchlint(".", cwd=project)
    assert "warning: .torchlint_cache is not a folder; the cache is not used" in result.stderr.splitlines()
    _same_as_without_cache(result, project, ".")
    assert (project / ".torchlint_cache").read_text() == "not a folder\n"


def test_a_cache_folder_named_by_the_user_is_where_its_link_leads(project: Path, tmp_path: Path) -> None:
    """The user chose the folder: a link to it is followed, and what is inside is checked
    as in any other."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    first = torchlint(".", "--cache-dir", str(tmp_path / "link"), cwd=project)
    assert "warning" not in first.stderr
    _same_as_without_cache(first, project, ".")
    assert (tmp_path / "link").is_symlink() and list(real.glob("*/*.entry"))
    written = _contents(real)
    again = torchlint(".", "--cache-dir", str(tmp_path / "link"), cwd=project)
    assert again.stdout == first.stdout and _contents(real) == written


def test_markers_that_are_links_are_replaced_not_written_through(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file\n")
    folder = project / ".torchlint_cache"
    folder.mkdir()
    (folder / ".gitignore").symlink_to(outside)
    (folder / "CACHEDIR.TAG").symlink_to(tmp_path / "missing.txt")
    _same_as_without_cache(torchlint(".", cwd=project), project, ".")
    assert outside.read_text() == "the user's file\n" and not (tmp_path / "missing.txt").exists()
    for marker in (".gitignore", "CACHEDIR.TAG"):
        assert not (folder / marker).is_symlink() and (folder / marker).is_file()
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"


def _fingerprint_folder(project: Path) -> Path:
    (found,) = [path for path in (project / ".torchlint_cache").iterdir() if path.is_dir()]
    return found


def test_a_fingerprint_folder_that_is_a_link_is_neither_read_nor_written_through(project: Path, tmp_path: Path) -> None:
    torchlint(".", cwd=project)
    inside = _fingerprint_folder(project)
    outside = tmp_path / "outside"
    inside.rename(outside)
    inside.symlink_to(outside)
    before = _contents(outside)
    (project / "net.py").write_text(BAD_FORWARD.replace("x.shape", "x.dtype"))
    _same_as_without_cache(torchlint(".", cwd=project), project, ".")
    assert _contents(outside) == before
    assert not inside.is_symlink() and list(inside.glob("*.entry"))


def _cache_files_of(project: Path, suffix: str) -> list[Path]:
    """The cache files of one kind after a run: the record, or every entry. Where the entries
    are asked for, the record is removed, so the next run reads the entries."""
    torchlint(".", cwd=project)
    folder = _fingerprint_folder(project)
    if suffix == ".entry":
        for record in folder.glob("*.record"):
            record.unlink()
    found = sorted(folder.glob(f"*{suffix}"))
    assert found
    return found


@pytest.mark.parametrize("suffix", [".entry", ".record"])
def test_a_named_pipe_in_place_of_a_cache_file_is_not_waited_on(project: Path, suffix: str) -> None:
    for cache_file in _cache_files_of(project, suffix):
        cache_file.unlink()
        os.mkfifo(cache_file)
    _same_as_without_cache(torchlint(".", cwd=project, timeout=30), project, ".")


@pytest.mark.parametrize("suffix", [".entry", ".record"])
def test_a_cache_file_that_is_a_link_is_not_read_through(project: Path, tmp_path: Path, suffix: str) -> None:
    # Read through, a link would wait on the pipe.
    os.mkfifo(tmp_path / "pipe")
    links = _cache_files_of(project, suffix)
    for cache_file in links:
        cache_file.unlink()
        cache_file.symlink_to(tmp_path / "pipe")
    _same_as_without_cache(torchlint(".", cwd=project, timeout=30), project, ".")
    assert (tmp_path / "pipe").exists()
    # The record is written again; an entry the run did not need may stay a link, unread.
    assert not any(cache_file.is_symlink() for cache_file in links if cache_file.suffix == ".record")
