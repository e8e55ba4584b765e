"""Rows and columns as Python counts them, whatever ends the lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.cli import cli
from torchlint.config import Settings
from torchlint.engine import lint_text
from torchlint.suppression import find_directives

ROOT = Path("/project")
# No empty lines: a `\r` ending one and a `\n` ending the next would make one `\r\n`.
LINES = [
    "import torch",
    "# one",
    "# two",
    "# three",
    "class M(torch.nn.Module):",
    "    def forward(self, x):",
    "        print(x)",
    "        return x",
]


def joined(endings: list[str]) -> str:
    """LINES, line i ended by endings[i % len(endings)]."""
    return "".join(line + endings[i % len(endings)] for i, line in enumerate(LINES))


def python_position(text: str) -> tuple[int, int, int, int]:
    """Where CPython puts the print call: 1-based rows and columns, as diagnostics give them."""
    (call,) = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Call)]
    return call.lineno, call.col_offset + 1, call.end_lineno, call.end_col_offset + 1


def lint(text: str):
    return lint_text(text, str(ROOT / "pkg" / "model.py"), Settings(root=ROOT))


@pytest.mark.parametrize(
    "endings",
    [["\n"], ["\r\n"], ["\r"], ["\r", "\n", "\r\n"], ["\r\n", "\r"], ["\n", "\r"]],
    ids=["lf", "crlf", "cr", "cr-lf-crlf", "crlf-cr", "lf-cr"],
)
def test_every_line_ending_counts_as_python_counts_it(endings: list[str]) -> None:
    text = joined(endings)
    (diagnostic,) = lint(text)
    start, end = diagnostic.location, diagnostic.end_location
    found = (start.row, start.column, end.row, end.column)
    assert found == python_position(text) == (7, 9, 7, 17)
    assert diagnostic.noqa_row == 7


@pytest.mark.parametrize("endings", [["\r"], ["\n", "\r"], ["\r", "\r\n"]], ids=["cr", "lf-cr", "cr-crlf"])
def test_noqa_rows_follow_the_same_line_endings(endings: list[str]) -> None:
    text = joined(endings).replace("print(x)", "print(x)  # noqa: TL101")
    assert lint(text) == []
    # An unused one is reported on its own row and column.
    text = joined(endings).replace("return x", "return x  # noqa: TL101")
    assert sorted((d.code, d.location.row, d.location.column) for d in lint(text)) == [("TL101", 7, 9), ("TL902", 8, 19)]


def test_noqa_rows_when_tokenize_rejects_the_file() -> None:
    # An unterminated string makes tokenize give up after the comment; the plain scan of
    # lines that replaces it must not split at the form feed (str.splitlines would) and must
    # end lines at a lone `\r`.
    text = "a = 1\x0c\rb = 2  # noqa: TL101\r'''"
    (directive,) = find_directives(text)
    assert (directive.row, directive.column) == (2, 8)


@pytest.mark.parametrize("endings", [["\r"], ["\r\n", "\r", "\n"]], ids=["cr", "mixed"])
def test_full_output_shows_the_reported_line(project: Path, endings: list[str]) -> None:
    (project / "model.py").write_bytes(joined(endings).encode())
    result = CliRunner().invoke(cli, ["check", "--output-format", "full", "--exit-zero", "model.py"])
    lines = result.output.splitlines()
    assert lines[0].startswith("model.py:7:9: TL101")
    assert lines[1:6] == [
        "  |",
        "6 |     def forward(self, x):",
        "7 |         print(x)",
        "  |         ^^^^^^^^ TL101",
        "8 |         return x",
    ]
