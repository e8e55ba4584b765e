"""The README's set-up commands are the ones CI runs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command() -> None:
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert "pytest" in command
    assert f"\n{command}\n" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("command", ["check", "verify"])
def test_readme_documents_every_option(command: str) -> None:
    from torchlint.cli import cli

    readme = (ROOT / "README.md").read_text()
    for param in cli.commands[command].params:
        for flag in getattr(param, "opts", []):
            if flag.startswith("--"):
                assert f"`{flag}" in readme or f", {flag}" in readme, flag


def test_readme_documents_every_config_key() -> None:
    from torchlint.config import _KEYS

    readme = (ROOT / "README.md").read_text()
    for key in _KEYS:
        assert f"\n{key} = " in readme, key
