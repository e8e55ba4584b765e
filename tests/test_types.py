"""The analysis, the project's solve, the API rules are written against and the language server type-check under
`mypy --strict`, with the configuration in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
STRICT_TARGETS = (
    "torchlint/analysis",
    "torchlint/project",
    "torchlint/rules/base.py",
    "torchlint/rules/context.py",
    "torchlint/server",
    "torchlint/parse/incremental.py",
)


def test_the_analysis_and_the_rule_api_pass_mypy_strict(tmp_path_factory: pytest.TempPathFactory) -> None:
    # A cache of its own: a run starts cold and leaves nothing in the repository.
    cache = tmp_path_factory.mktemp("mypy-cache")
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), *STRICT_TARGETS]
    result = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, f"{' '.join(command[2:])} failed:\n{result.stdout}{result.stderr}"
