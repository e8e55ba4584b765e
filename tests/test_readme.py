"""The README's set-up commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    """The install-and-run and install-and-test commands of the README's "From a checkout"
    section (the reference in docs/ is checked by tests/test_docs.py)."""
    readme = (ROOT / "README.md").read_text()
    section = re.split(r"\n##+ ", readme.split("\n### From a checkout\n", 1)[1], maxsplit=1)[0]
    blocks = section.split("```bash\n")[1:]
    assert len(blocks) == 2, "the README's `From a checkout` section shows the install and the test command"
    return [block.split("\n```", 1)[0].strip() for block in blocks]


def test_ci_runs_the_readme_test_command() -> None:
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert "pytest" in command
    assert command == _setup_commands()[-1]


def test_ci_runs_both_setup_commands_word_for_word_in_a_new_venv() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    lines = [line.strip() for line in script.splitlines()]
    assert "python -m venv" in script and "--system-site-packages" not in script
    install, test = _setup_commands()
    assert any(line.startswith(install) for line in lines), install
    assert test in lines
