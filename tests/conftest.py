"""Fixtures shared by the tests, and the guard that keeps the static tier free of torch.

Tests that import torch or run Dynamo, here or in a process they start, are marked
`dynamo`, and those that run real pre-commit `hooks`; `python -m pytest -m "not dynamo and
not hooks"` runs the rest, the fast tier, without ever importing torch.
Test modules therefore import torch inside the tests that need it, never at collection.
"""

from __future__ import annotations

import compileall
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

import torchlint


def pytest_sessionstart(session: pytest.Session) -> None:
    # The commands the tests start keep what they compile in a cache folder of this session's
    # own, not the developer's (torchlint/dataclass_code.py).
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tlt-cache")
    # Many tests run the `torchlint` command in a fresh process. Where writing bytecode is
    # turned off (PYTHONDONTWRITEBYTECODE), each of those would compile every module of the
    # package again; an installed wheel ships its bytecode, and so does this checkout once
    # compiled here.
    compileall.compile_dir(Path(torchlint.__file__).parent, quiet=1)


def pytest_sessionfinish(session: pytest.Session) -> None:
    shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    if "torch" in sys.modules:
        raise pytest.UsageError(
            "collecting the tests imported torch: import it inside the `dynamo` tests that need it"
        )


@pytest.fixture(autouse=True)
def _unmarked_tests_leave_torch_alone(request: pytest.FixtureRequest):
    # Only a test that starts without torch can be caught importing it: in the static tier,
    # every test.
    watched = "torch" not in sys.modules and request.node.get_closest_marker("dynamo") is None
    yield
    if watched and "torch" in sys.modules:
        pytest.fail(f"{request.node.nodeid} imported torch; mark it `dynamo`", pytrace=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder, made the current folder (module names start under it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
