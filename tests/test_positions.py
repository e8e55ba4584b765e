"""Rows and columns as Python counts them: whatever ends the lines, whatever form feeds
the indentation holds."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

from torchlint.cli import cli
from torchlint.settings.config import Settings
from torchlint.analysis.engine import ParserLimit, syntax_error as _syntax_error
from torchlint.project.resolve import lint_text
from torchlint.report.diagnostic import Location
from torchlint.parse.positions import _occurrences, _regenerated, _spans_in_definitions, locate, parse
from torchlint.report.suppression import find_directives

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


def python_positions(text: str) -> list[tuple[int, int, int, int]]:
    """Where CPython puts the print calls: 1-based rows and columns, as diagnostics give them."""
    calls = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Call)]
    prints = [call for call in calls if isinstance(call.func, ast.Name) and call.func.id == "print"]
    return sorted((call.lineno, call.col_offset + 1, call.end_lineno, call.end_col_offset + 1) for call in prints)


def positions(diagnostics) -> list[tuple[int, int, int, int]]:
    return sorted((d.location.row, d.location.column, d.end_location.row, d.end_location.column) for d in diagnostics)


def lint(text: str):
    return lint_text(text, str(ROOT / "pkg" / "model.py"), Settings(root=ROOT))


@pytest.mark.parametrize(
    "endings",
    [["\n"], ["\r\n"], ["\r"], ["\r", "\n", "\r\n"], ["\r\n", "\r"], ["\n", "\r"]],
    ids=["lf", "crlf", "cr", "cr-lf-crlf", "crlf-cr", "lf-cr"],
)
def test_every_line_ending_counts_as_python_counts_it(endings: list[str]) -> None:
    text = joined(endings)
    (diagnostic,) = found = lint(text)
    assert positions(found) == python_positions(text) == [(7, 9, 7, 17)]
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


FORM_FEED_CLASS = "import torch\nclass M(torch.nn.Module):\n\f    def forward(self, x):\n        print(x)\n        return x\n"


@pytest.mark.parametrize(
    "text",
    [
        # A form feed on the first line of a block that holds another: libcst alone rejects these.
        FORM_FEED_CLASS,
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if self.training:\n\f            print(x)\n"
        "            print(x)\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n  \f        print(x)\n"
        "        print(x)\n        return x\n",
        # Accepted, but regenerated without the form feed, or with it on every line after it.
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        y = x\n\f        print(x)\n"
        "        return x\n",
        "import torch\n@torch.compile\ndef f(x):\n\f    print(x)\n    print(x)\n    return x\n",
        "import torch\rclass M(torch.nn.Module):\r\f    def forward(self, x):\r\f\t\f        print(x)\r        return x\r",
    ],
    ids=["class-body", "nested-if", "spaces-before", "second-statement", "first-of-several", "cr-tab"],
)
def test_form_feeds_in_indentation_parse_and_keep_their_columns(text: str) -> None:
    found = lint(text)
    assert [d.code for d in found] == ["TL101"] * len(found)
    assert positions(found) == python_positions(text)


def test_form_feeds_inside_a_string_stay_in_it() -> None:
    text = 'import torch\ns = """a\n\f    b"""\n'
    statement = parse(text).module.body[1]
    assert statement.body[0].value.evaluated_value == "a\n\f    b"


def test_a_file_python_compiles_is_no_syntax_error_even_where_libcst_alone_gives_up() -> None:
    compile(FORM_FEED_CLASS, "model.py", "exec")
    with pytest.raises(cst.ParserSyntaxError) as rejected:
        cst.parse_module(FORM_FEED_CLASS)
    # The limit is libcst's and the file is not to blame: no TL901, but an error that says
    # the file was not checked, rather than silence.
    with pytest.raises(ParserLimit, match="Python compiles it, but libcst cannot parse it"):
        _syntax_error(FORM_FEED_CLASS, "model.py", rejected.value)
    assert _syntax_error(FORM_FEED_CLASS, "model.py") is None
    broken = "def f(:\n"
    with pytest.raises(cst.ParserSyntaxError) as rejected:
        cst.parse_module(broken)
    found = _syntax_error(broken, "model.py", rejected.value)
    assert (found.code, found.location.row, found.location.column) == ("TL901", 1, 7)


def _every_node(root: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            found.append(node)
            return True

    root.visit(Collect())
    return found


STATEMENT_SHAPES = [
    "import torch\n\n\n# a comment\n@torch.compile\n@other(\n    1,\n)\ndef f(x):\n    return x\n",
    "a = 1; b = 2\n\n# two\n# lines\nclass C:\n    '''doc'''\n    x = 1\n\n\n\nif a:\n    pass\nelse:\n    b = 3\n",
    "x = (1,\n     2)\ny = '''\nnot\\tcode\n'''\nz = 3\n",
    "import torch\r\n\r\ndef f(x):\r\n    return x\r\n",
    "def f():\n\f    return 1\n\n\ndef g():\n    return 2\n",
    "# only a header\n\nx = 1  # trailing\n",
    "def f():\n    return 1\n\n\nasync def f():\n    return 2\n\n\nclass f:\n    pass\n\n\ndef f():\n    return 3\n",
    # methods of one name in several classes, a nested class, a decorated method, tabs
    "class A:\n    x = 1\n\n    def forward(self, x):\n        return x\n\n\nclass B(A):\n    class Inner:\n"
    "        def forward(self):\n            return 2\n\n    @staticmethod\n    def forward(x):\n        def forward(y):\n"
    "            return y\n        return forward(x)\n",
    "class T:\n\tdef f(self):\n\t\treturn 1\n\n\tdef g(self):\n\t\treturn 2\n",
]


def _definitions(module: cst.Module) -> list[cst.CSTNode]:
    """Every `def` and `class` in source order, as the engine hands them to locate."""
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(node)

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            found.append(node)

    module.visit(Collect())
    return found


@pytest.mark.parametrize(
    "text",
    [*STATEMENT_SHAPES, *(path.read_text(encoding="utf-8") for path in sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("*.py")))],
)
@pytest.mark.parametrize("with_order", [True, False], ids=["methods-alone", "top-level"])
def test_statements_regenerated_alone_are_placed_as_the_whole_module_places_them(text: str, with_order: bool) -> None:
    """locate regenerates only the `def`s (each method on its own, where the order of the
    module's definitions is known) and `class`es that hold a reported node, each placed by its
    header line; every node lands where regenerating the whole module puts it."""
    parsed = parse(text)
    defined = [s for s in parsed.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    methods = [m for s in defined if isinstance(s, cst.ClassDef) for m in s.body.body if isinstance(m, cst.FunctionDef)]
    wanted = {id(node) for statement in methods or defined for node in _every_node(statement)}
    occurrences = _occurrences(_definitions(parsed.module)) if with_order else {}
    alone = _spans_in_definitions(parsed, wanted, occurrences)
    assert alone is not None
    whole = _regenerated(parsed.module, parsed.module, wanted).spans
    assert {key: alone[key] for key in wanted if key in whole} == {key: whole[key] for key in wanted if key in whole}


def test_a_header_that_a_string_holds_leaves_the_statement_to_the_whole_module() -> None:
    """`def f` at the start of a line inside a string is no header: the statement cannot be
    placed by it, and locate regenerates the whole module instead."""
    text = 'x = """\ndef f(x):\n"""\n\n\ndef f(x):\n    print(x)\n'
    parsed = parse(text)
    call = parsed.module.body[1].body.body[0].body[0].value
    assert _spans_in_definitions(parsed, {id(call)}, _occurrences(_definitions(parsed.module))) is None
    assert locate(parsed, [call], _definitions(parsed.module))[id(call)] == (Location(7, 5), Location(7, 13))
