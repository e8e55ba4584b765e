"""Every rule's own cases (`invalid` and `valid` on the rule class), and what users see of them.

An invalid case gives findings of its rule and of no other (a TL6xx finding brings the break
it reports on), a valid case none of its rule. The `full` output of each rule's invalid cases
is kept in tests/__snapshots__/test_rule_examples.ambr, so a change to a message, a span, a
caret or a suggestion shows in review. After a change you mean, rewrite the snapshots with

    python -m pytest tests/test_rule_examples.py --snapshot-update

and read the diff. The static tier: nothing here imports torch.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchlint.settings.config import Settings
from torchlint.report.diagnostic import Diagnostic
from torchlint.project.resolve import lint_text
from torchlint.report import ReportContext, render
from torchlint.rules import all_rules
from torchlint.rules.base import Rule

# A fixed root and torch release, so that neither the paths shown nor the findings depend on
# the machine or on the torch installed; the cases hold on 2.13, the release the rule pages
# and the graph-break catalog were measured on.
ROOT = Path("/project")
SETTINGS = Settings(root=ROOT, target_torch="2.13")
RULES = all_rules()


def _cases(kind: str) -> list:
    return [
        pytest.param(rule, number, id=f"{rule.code}-{kind}-{number}")
        for rule in RULES
        for number in range(1, len(getattr(rule, kind)) + 1)
    ]


def _lint(rule: type[Rule], kind: str, number: int) -> tuple[str, str, list[Diagnostic]]:
    """The case's path, its source and its findings, linted as `examples/tl101_invalid_1.py`."""
    source = textwrap.dedent(getattr(rule, kind)[number - 1]).lstrip("\n")
    path = str(ROOT / "examples" / f"{rule.code.lower()}_{kind}_{number}.py")
    return path, source, lint_text(source, path, SETTINGS)


def _listing(diagnostics: list[Diagnostic]) -> list[tuple[str, int, str]]:
    return [(d.code, d.location.row, d.message) for d in diagnostics]


def test_every_rule_brings_two_cases_of_each_kind():
    counts = {rule.code: (len(rule.invalid), len(rule.valid)) for rule in RULES}
    short = {code: count for code, count in counts.items() if min(count) < 2}
    assert short == {}, "rules with fewer than two (invalid, valid) cases"


@pytest.mark.parametrize(("rule", "number"), _cases("invalid"))
def test_invalid_case_gives_its_rule_only(rule: type[Rule], number: int):
    _, _, diagnostics = _lint(rule, "invalid", number)
    inner = {related.code for d in diagnostics if d.code == rule.code for related in d.related}
    assert rule.code in {d.code for d in diagnostics}, _listing(diagnostics)
    assert {d.code for d in diagnostics} == {rule.code} | inner, _listing(diagnostics)


@pytest.mark.parametrize(("rule", "number"), _cases("valid"))
def test_valid_case_gives_none_of_its_rule(rule: type[Rule], number: int):
    _, _, diagnostics = _lint(rule, "valid", number)
    assert [d for d in diagnostics if d.code == rule.code] == [], _listing(diagnostics)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_full_output_of_the_invalid_cases(rule: type[Rule], snapshot):
    rendered = []
    for number in range(1, len(rule.invalid) + 1):
        path, source, diagnostics = _lint(rule, "invalid", number)
        rendered.append(render("full", diagnostics, ReportContext(cwd=ROOT, sources={path: source})))
    assert "".join(rendered) == snapshot
