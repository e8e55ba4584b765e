"""The README's set-up commands are the ones CI runs."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command() -> None:
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert "pytest" in command
    assert f"\n{command}\n" in (ROOT / "README.md").read_text()


def test_readme_documents_every_check_option() -> None:
    from torchlint.cli import check

    readme = (ROOT / "README.md").read_text()
    for param in check.params:
        for flag in getattr(param, "opts", []):
            if flag.startswith("--"):
                assert f"`{flag}" in readme or f", {flag}" in readme, flag
