"""Small helpers shared by the tests: lint a snippet the way the engine lints a file."""

from __future__ import annotations

import textwrap
from pathlib import Path

from torchlint.config import Settings
from torchlint.engine import lint_text


def findings(source: str, **settings) -> list[tuple[str, int]]:
    """(code, row) of every finding in ``source`` (dedented)."""
    text = textwrap.dedent(source)
    root = Path("/project")
    diagnostics = lint_text(text, str(root / "pkg" / "model.py"), Settings(root=root, **settings))
    return [(d.code, d.location.row) for d in diagnostics]


def codes(source: str, **settings) -> list[str]:
    return [code for code, _ in findings(source, **settings)]
