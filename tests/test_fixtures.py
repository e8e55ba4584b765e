"""The fixtures' `# expect:` annotations against torchlint.

Both ways: a finding on a line without an annotation fails, and so does an annotation
without a finding. The comparison with TorchDynamo is `torchlint verify fixtures/`
(tests/test_verify.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text
from torchlint.verify.compare import expectations

REPO = Path(__file__).resolve().parent.parent
FIXTURES = sorted((REPO / "fixtures").glob("*.py"))


def _difference(expected: set, found: set) -> str:
    return (
        f"annotated but not reported: {sorted(expected - found)}\n"
        f"reported but not annotated: {sorted(found - expected)}"
    )


def test_there_are_fixtures():
    assert len(FIXTURES) >= 3


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
def test_fixture_declares_targets_without_torchlint(fixture: Path):
    tree = ast.parse(fixture.read_text(encoding="utf-8"))
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "torchlint_targets" in functions
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "torchlint" not in imported, "a fixture's targets must not need torchlint"


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
def test_annotations_match_torchlint(fixture: Path):
    source = fixture.read_text(encoding="utf-8")
    expected = {(row, code) for row, codes in expectations(source).items() for code in codes}
    assert expected, "a fixture marks at least one expected finding"
    found = {(d.location.row, d.code) for d in lint_text(source, str(fixture), Settings(root=REPO))}
    assert found == expected, _difference(expected, found)
