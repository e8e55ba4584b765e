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
