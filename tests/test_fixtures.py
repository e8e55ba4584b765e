"""The fixtures' `# expect:` annotations against torchlint and against TorchDynamo.

Both comparisons go both ways: a finding on a line without an annotation fails, and so
does an annotation without a finding (or without a real graph break).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from _fixture_probe import expected_findings
from _probe_process import run_probe
from torchlint.config import Settings
from torchlint.engine import lint_text

REPO = Path(__file__).resolve().parent.parent
FIXTURES = sorted((REPO / "fixtures").glob("*.py"))
PROBE = Path(__file__).resolve().parent / "_fixture_probe.py"

# The probes run in subprocesses; the test process itself never imports torch.
torch_installed = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed"
)


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
    expected = expected_findings(source)
    assert expected, "a fixture marks at least one expected finding"
    found = {(d.location.row, d.code) for d in lint_text(source, str(fixture), Settings(root=REPO))}
    assert found == expected, _difference(expected, found)


@torch_installed
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
def test_annotations_match_dynamo(fixture: Path):
    result = run_probe(PROBE, fixture)
    assert result["problems"] == [], "\n".join(result["problems"])
