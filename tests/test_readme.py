"""The README's set-up commands are the ones CI runs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    """The install-and-run and install-and-test commands that open the README's
    "Set-up on a fresh machine" section (the ones after them are for developers)."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set-up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    blocks = section.split("```bash\n")[1:3]
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


@pytest.mark.parametrize("command", ["check", "verify"])
def test_readme_documents_every_option(command: str) -> None:
    from torchlint.cli import cli

    readme = (ROOT / "README.md").read_text()
    for param in cli.commands[command].params:
        for flag in getattr(param, "opts", []):
            if flag.startswith("--"):
                assert f"`{flag}" in readme or f", {flag}" in readme, flag


def test_readme_documents_every_config_key() -> None:
    from torchlint.settings.config import _KEYS

    readme = (ROOT / "README.md").read_text()
    for key in _KEYS:
        assert f"\n{key} = " in readme, key


def test_readme_rules_table_lists_every_rule_with_its_ids() -> None:
    import re

    from torchlint.rules import all_rules

    readme = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| \[(TL\d{3})\]\(rules/[^)]+\) \| [^|]+ \| .+ \| ([^|]*) \|$", readme, re.MULTILINE))
    for rule in all_rules():
        assert rule.code in rows, f"README's rules table has no row for {rule.code}"
        listed = [item.strip() for item in rows[rule.code].split(",")]
        if rule.gb_ids:
            assert listed == list(rule.gb_ids), f"{rule.code}: README lists {listed}, the rule {rule.gb_ids}"
    assert set(rows) == {rule.code for rule in all_rules()}
